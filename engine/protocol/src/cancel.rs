//! The cancellation token shared by everything one turn starts.
//!
//! One token per turn reaches the provider stream and every running tool;
//! cancelling it is how `Interrupt` works. Children let a caller cancel a part
//! (one tool) without cancelling the whole turn.

pub use tokio_util::sync::CancellationToken as CancelToken;
