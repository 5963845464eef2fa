//! What the model gets of a tool's result. The output is archived first,
//! whole; a big one is shown as head and tail around a marker, and a
//! read-only call repeating an earlier one with the same output within the
//! dedup window is answered `unchanged since #<id>`. A result of a call
//! that never ran (refused, unknown) and `expand`'s own (already archived)
//! are kept as they are.

use cox_protocol::Archive;
use cox_protocol::archive::ArchiveMeta;
use cox_protocol::types::{Event, Risk, Submission, ToolCall, ToolResult};
use futures::Stream;

use super::Driver;
use crate::context;
use crate::own_tools::OwnTool;
use crate::tool_set::Entry;
use crate::world::World;

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// `result` as the model gets it; what could not be archived is said
    /// in `notices`.
    pub(super) async fn shape_result(
        &mut self,
        call: &ToolCall,
        mut result: ToolResult,
        notices: &mut Vec<String>,
    ) -> ToolResult {
        let fixed = self.fixed;
        notices.append(&mut result.notices);
        let expand = matches!(
            fixed.tools().get(&call.name),
            Some(Entry::Own(OwnTool::Expand))
        );
        if result.denied || expand {
            return result;
        }
        let meta = ArchiveMeta {
            session: fixed.config.id,
            call: Some(call.id.clone()),
        };
        let kept = fixed
            .world
            .archive()
            .put_async(meta, result.visible.as_bytes().to_vec())
            .await;
        let id = match kept {
            Ok(id) => id,
            Err(err) => {
                // Lossless beats small: the model gets the whole output.
                notices.push(format!("the output of {} was not archived: {err}", call.id));
                return result;
            }
        };
        let history = &self.out.history;
        let turn = history.turns();
        let window = fixed.config.context.dedup_window_turns;
        if call.risk == Risk::ReadOnly && result.ok && window > 0 {
            let input = call.input.to_string();
            let earlier =
                self.state
                    .seen
                    .check(&call.name, &input, &result.visible, turn, window, &id);
            // Only point back at an output the model is still sent whole: not
            // one already shown as a pointer, nor one summarised away.
            let after = fixed.config.context.microcompact_after_turns;
            let first_kept = history.compaction().and_then(|c| {
                history
                    .turn_starts()
                    .iter()
                    .find(|(_, index)| *index >= c.until)
                    .map(|(turn, _)| *turn)
            });
            if let Some((earlier, seen_in)) = earlier
                && (after == 0 || turn.saturating_sub(seen_in) < after)
                && first_kept.is_none_or(|first| seen_in >= first)
            {
                result.visible = context::unchanged(&earlier);
                result.archive = Some(earlier);
                return result;
            }
        }
        result.visible = context::view(&result.visible, &id);
        result.archive = Some(id);
        result
    }
}
