//! The call ids of a subagent's events, as its parent says them.
//!
//! A child session numbers its calls as its model does, and two children
//! (or a child and its parent) may well use the same ids (`call_0`,
//! `toolu_1_1`). So every call id in a child's events is said as
//! `<child session>/<id>`, in its own children's events too (a
//! grandchild's reads `<child>/<grandchild>/<id>`): each is unique in the
//! parent's stream, and an `Approve` naming one tells the parent which
//! child it is for. Invariant: [`untag`] undoes [`tagged`] for the child
//! that was tagged, and only for it.

use cox_protocol::types::Event;
use cox_protocol::{CallId, SessionId};

fn tag(id: &CallId, child: &SessionId) -> CallId {
    CallId::from(format!("{child}/{id}"))
}

/// `event` of child `child`, its call ids made `<child>/<id>`.
#[must_use]
pub fn tagged(event: Event, child: &SessionId) -> Event {
    match event {
        Event::ToolCallRequested { mut call } => {
            call.id = tag(&call.id, child);
            Event::ToolCallRequested { call }
        }
        Event::ApprovalRequired { call_id, reason } => Event::ApprovalRequired {
            call_id: tag(&call_id, child),
            reason,
        },
        Event::ToolCallOutput { call_id, chunk } => Event::ToolCallOutput {
            call_id: tag(&call_id, child),
            chunk,
        },
        Event::ToolCallDone { call_id, result } => Event::ToolCallDone {
            call_id: tag(&call_id, child),
            result,
        },
        Event::Checkpoint {
            turn,
            call_id,
            files,
        } => Event::Checkpoint {
            turn,
            call_id: tag(&call_id, child),
            files,
        },
        Event::Subagent {
            call_id,
            session_id,
            event,
        } => Event::Subagent {
            call_id: tag(&call_id, child),
            session_id,
            event: Box::new(tagged(*event, child)),
        },
        other => other,
    }
}

/// The call an event asks a person about, however deep in subagents.
#[must_use]
pub fn asked(event: &Event) -> Option<&CallId> {
    match event {
        Event::ApprovalRequired { call_id, .. } => Some(call_id),
        Event::Subagent { event, .. } => asked(event),
        _ => None,
    }
}

/// The child's own id for `id`, when `id` is one of `child`'s.
#[must_use]
pub fn untag(id: &CallId, child: &SessionId) -> Option<CallId> {
    id.as_str()
        .strip_prefix(&format!("{child}/"))
        .map(CallId::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::types::ToolResult;

    #[test]
    fn a_child_s_ids_are_its_own_even_in_its_children_s_events() {
        let child = SessionId::generate();
        let grandchild = SessionId::generate();
        let deep = Event::Subagent {
            call_id: "a1".into(),
            session_id: grandchild,
            event: Box::new(Event::ApprovalRequired {
                call_id: format!("{grandchild}/c1").into(),
                reason: "r".into(),
            }),
        };
        let said = tagged(deep, &child);
        let asked_about = asked(&said).unwrap().clone();
        assert_eq!(asked_about.as_str(), format!("{child}/{grandchild}/c1"));
        // The parent passes `<grandchild>/c1` down to the child, which
        // passes `c1` down to the grandchild.
        let to_child = untag(&asked_about, &child).unwrap();
        assert_eq!(untag(&to_child, &grandchild).unwrap().as_str(), "c1");
        assert!(untag(&asked_about, &grandchild).is_none());
        let done = tagged(
            Event::ToolCallDone {
                call_id: "c1".into(),
                result: ToolResult::ok("x"),
            },
            &child,
        );
        assert!(
            matches!(done, Event::ToolCallDone { call_id, .. } if call_id.as_str() == format!("{child}/c1"))
        );
    }
}
