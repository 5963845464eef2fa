//! A hook's answer on stdout after exit code 0, read with Claude Code's
//! fields.
//!
//! Stdout that starts with `{` is a JSON answer and must be one: a hook
//! that prints a broken object is a failed hook (a warning and an absence),
//! never read as plain text by accident. Any other stdout is plain text,
//! which is context for the model at `UserPromptSubmit`, `SessionStart`
//! and `SubagentStart`,
//! and only shown elsewhere. A field of the wrong type fails the hook the
//! same way, naming the field: guessing what a hook meant could turn a
//! refusal into an allow.
//!
//! The fields: `continue`, `stopReason`, `suppressOutput`,
//! `systemMessage`, `decision` (`approve` or `block`) with `reason`, and
//! `hookSpecificOutput` with `permissionDecision` (`allow`, `deny`,
//! `ask`), `permissionDecisionReason`, `updatedInput`,
//! `additionalContext`, and a `PermissionRequest`'s `decision` (`behavior`
//! `allow` or `deny`, `updatedInput`, `message`, `interrupt`).

use cox_protocol::hook::{HookDecision, HookEvent, HookOutput};
use serde_json::{Map, Value};

/// Reads `stdout` of a hook of `event` that exited 0.
///
/// # Errors
/// Stdout is not UTF-8, or is a JSON answer that does not parse or has a
/// field of the wrong type: one line saying which.
pub fn parse(event: HookEvent, stdout: &[u8]) -> Result<HookOutput, String> {
    let text = std::str::from_utf8(stdout)
        .map_err(|_| "printed bytes that are not UTF-8 text".to_owned())?;
    let trimmed = text.trim();
    let mut output = HookOutput {
        stdout: text.to_owned(),
        ..HookOutput::default()
    };
    if !trimmed.starts_with('{') {
        if !trimmed.is_empty()
            && matches!(
                event,
                HookEvent::UserPromptSubmit | HookEvent::SessionStart | HookEvent::SubagentStart
            )
        {
            output.context = Some(trimmed.to_owned());
        }
        return Ok(output);
    }
    let value: Value = serde_json::from_str(trimmed)
        .map_err(|err| format!("printed JSON that does not parse ({err})"))?;
    let Value::Object(object) = value else {
        return Err("printed JSON that is not an object".to_owned());
    };
    read(event, &object, &mut output)?;
    Ok(output)
}

/// Fills `output` from the answer's fields.
fn read(
    event: HookEvent,
    object: &Map<String, Value>,
    output: &mut HookOutput,
) -> Result<(), String> {
    if let Some(proceed) = boolean(object, "continue")? {
        output.proceed = proceed;
    }
    output.stop_reason = string(object, "stopReason")?;
    output.suppress_output = boolean(object, "suppressOutput")?.unwrap_or(false);
    output.system_message = string(object, "systemMessage")?;
    output.reason = string(object, "reason")?;
    if let Some(decision) = string(object, "decision")? {
        output.decision = match decision.as_str() {
            "approve" | "allow" => Some(HookDecision::Allow),
            "block" | "deny" => Some(HookDecision::Deny),
            other => {
                return Err(format!(
                    "answered decision `{other}`, which is neither `approve` nor `block`"
                ));
            }
        };
    }
    let Some(specific) = object.get("hookSpecificOutput") else {
        return Ok(());
    };
    let Value::Object(specific) = specific else {
        return Err("answered a hookSpecificOutput that is not an object".to_owned());
    };
    if let Some(name) = string(specific, "hookEventName")?
        && name != event.as_str()
    {
        return Err(format!(
            "answered hookSpecificOutput for {name} to a {event} hook"
        ));
    }
    if let Some(decision) = string(specific, "permissionDecision")? {
        output.decision = Some(match decision.as_str() {
            "allow" => HookDecision::Allow,
            "deny" => HookDecision::Deny,
            "ask" => HookDecision::Ask,
            other => {
                return Err(format!(
                    "answered permissionDecision `{other}`, which is not allow, deny or ask"
                ));
            }
        });
    }
    if let Some(reason) = string(specific, "permissionDecisionReason")? {
        output.reason = Some(reason);
    }
    if let Some(input) = specific.get("updatedInput") {
        output.updated_input = Some(input_object(input)?);
    }
    output.context = string(specific, "additionalContext")?;
    if let Some(decision) = specific.get("decision") {
        permission_request(decision, output)?;
    }
    Ok(())
}

/// A `PermissionRequest` answer: `{behavior, updatedInput, message,
/// interrupt}`.
fn permission_request(decision: &Value, output: &mut HookOutput) -> Result<(), String> {
    let Value::Object(decision) = decision else {
        return Err("answered a hookSpecificOutput.decision that is not an object".to_owned());
    };
    output.decision = match string(decision, "behavior")?.as_deref() {
        Some("allow") => Some(HookDecision::Allow),
        Some("deny") => Some(HookDecision::Deny),
        Some(other) => {
            return Err(format!(
                "answered decision.behavior `{other}`, which is neither allow nor deny"
            ));
        }
        None => return Err("answered a decision without a behavior".to_owned()),
    };
    if let Some(input) = decision.get("updatedInput") {
        output.updated_input = Some(input_object(input)?);
    }
    if let Some(message) = string(decision, "message")? {
        output.reason = Some(message);
    }
    output.interrupt = boolean(decision, "interrupt")?.unwrap_or(false);
    Ok(())
}

fn input_object(value: &Value) -> Result<Value, String> {
    if value.is_object() {
        Ok(value.clone())
    } else {
        Err("answered an updatedInput that is not an object".to_owned())
    }
}

fn string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(format!("answered a `{key}` that is not a string")),
    }
}

fn boolean(object: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(value)) => Ok(Some(*value)),
        Some(_) => Err(format!("answered a `{key}` that is not true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_context_only_where_it_counts() {
        let out = parse(HookEvent::UserPromptSubmit, b"the branch is main\n").unwrap();
        assert_eq!(out.context.as_deref(), Some("the branch is main"));
        let out = parse(HookEvent::PreToolUse, b"checked\n").unwrap();
        assert_eq!(out.context, None);
        assert_eq!(out.decision, None);
        assert!(out.proceed);
    }

    #[test]
    fn claude_code_answers_are_read() {
        let out = parse(
            HookEvent::PreToolUse,
            br#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
                "permissionDecisionReason":"no rm"},"suppressOutput":true}"#,
        )
        .unwrap();
        assert_eq!(out.decision, Some(HookDecision::Deny));
        assert_eq!(out.reason.as_deref(), Some("no rm"));
        assert!(out.suppress_output);
        let out = parse(
            HookEvent::Stop,
            br#"{"decision":"block","reason":"tests fail","continue":true}"#,
        )
        .unwrap();
        assert_eq!(out.decision, Some(HookDecision::Deny));
        let out = parse(
            HookEvent::PermissionRequest,
            br#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest",
                "decision":{"behavior":"deny","message":"no","interrupt":true}}}"#,
        )
        .unwrap();
        assert_eq!(out.decision, Some(HookDecision::Deny));
        assert!(out.interrupt);
        let out = parse(
            HookEvent::Stop,
            br#"{"continue":false,"stopReason":"done"}"#,
        )
        .unwrap();
        assert!(!out.proceed);
        assert_eq!(out.stop_reason.as_deref(), Some("done"));
    }

    #[test]
    fn broken_answers_fail_and_say_why() {
        for (bytes, says) in [
            (&b"{not json"[..], "does not parse"),
            (b"{\"continue\": \"no\"}", "`continue`"),
            (b"{\"decision\": \"maybe\"}", "`maybe`"),
            (b"\xff\xfe", "UTF-8"),
            (
                b"{\"hookSpecificOutput\":{\"permissionDecision\":\"yes\"}}",
                "`yes`",
            ),
            (
                b"{\"hookSpecificOutput\":{\"hookEventName\":\"Stop\"}}",
                "for Stop",
            ),
        ] {
            let err = parse(HookEvent::PreToolUse, bytes).unwrap_err();
            assert!(err.contains(says), "{err}");
        }
    }
}
