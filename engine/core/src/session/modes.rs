//! The permission mode, main tier and model in force, and `SetMode`.
//!
//! What a `SetMode` leaves is said in a `ModeChanged` event; the
//! conversation's fold keeps the last one, so a resumed session goes on in
//! it. Until one, the session's configuration stands.

use cox_protocol::provider::Tier;
use cox_protocol::types::{Event, NoticeLevel, PermissionMode, Submission};
use futures::Stream;

use super::Driver;
use crate::world::World;

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// The permission mode and main tier in force.
    pub(super) fn current_mode(&self) -> (PermissionMode, Tier) {
        let (mode, tier) = match self.out.history.mode() {
            Some((mode, tier, _)) => (*mode, *tier),
            None => (self.fixed.config.permission_mode, self.fixed.config.tier),
        };
        if mode == PermissionMode::BypassPermissions && self.fixed.config.bypass_refused.is_some() {
            return (PermissionMode::Default, tier);
        }
        (mode, tier)
    }

    /// The model main turns were switched to (`/model`), if any.
    pub(super) fn switched_model(&self) -> Option<String> {
        self.out
            .history
            .mode()
            .and_then(|(_, _, model)| model.clone())
    }

    /// Applies a `SetMode` and says so.
    pub(super) fn set_mode(
        &mut self,
        permission_mode: Option<PermissionMode>,
        tier: Option<Tier>,
        model: Option<String>,
    ) {
        let (mode, main) = self.current_mode();
        let permission_mode = match (permission_mode, &self.fixed.config.bypass_refused) {
            (Some(PermissionMode::BypassPermissions), Some(why)) => {
                self.out.emit(Event::Notice {
                    level: NoticeLevel::Warn,
                    text: format!(
                        "bypassPermissions is turned off here ({why}); the mode stays {mode}"
                    ),
                });
                None
            }
            (asked, _) => asked,
        };
        let model = model
            .filter(|m| !m.trim().is_empty())
            .map(|m| m.trim().to_owned())
            .or_else(|| self.switched_model());
        self.out.emit(Event::ModeChanged {
            permission_mode: permission_mode.unwrap_or(mode),
            tier: tier.unwrap_or(main),
            model,
        });
    }
}
