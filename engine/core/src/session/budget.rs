//! The `[budget]` check before a model call: the spend so far plus the
//! last call's cost (the best guess at the next one's) must stay under
//! each cap. A ledger that cannot be read is said, and the cap is not
//! enforced for that call.

use cox_protocol::Store;
use cox_protocol::types::NoticeLevel;

use super::Fixed;
use crate::world::World;

impl<W: World> Fixed<W> {
    /// Why the next model call may not be made, when a cap would be crossed
    /// by it; `say` reports a ledger that cannot be read.
    pub(super) async fn over_budget(
        &self,
        mut say: impl FnMut(NoticeLevel, String),
    ) -> Option<String> {
        let caps = self.config.budget;
        if caps.session_usd.is_none() && caps.monthly_usd.is_none() {
            return None;
        }
        let spend = match self.world.store().spend_async(self.config.id).await {
            Ok(spend) => spend,
            Err(err) => {
                say(
                    NoticeLevel::Warn,
                    format!("the spend so far cannot be read, so [budget] is not enforced: {err}"),
                );
                return None;
            }
        };
        let next = spend.last_call_usd;
        let check = |cap: Option<f64>, spent: f64, what: &str| {
            let cap = cap?;
            (spent + next >= cap).then(|| {
                format!(
                    "stopping before the next model call: the {what} budget is ${cap:.2} and ${spent:.4} is spent \
                     (the last call cost ${next:.4}); raise [budget] {} to go on",
                    if what == "session" { "session_usd" } else { "monthly_usd" }
                )
            })
        };
        check(caps.session_usd, spend.session_usd, "session")
            .or_else(|| check(caps.monthly_usd, spend.month_usd, "monthly"))
    }
}
