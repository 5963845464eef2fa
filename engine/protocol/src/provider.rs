//! The provider-neutral request and the stream a model answers with.
//!
//! The core assembles a [`Request`] in cache-stable order (tool schemas,
//! then the system prompt, then instruction files, then the volatile block,
//! then the history) and a [`Provider`] turns it into a stream of
//! [`StreamEvent`]s. Adapters translate to and from each wire format; the
//! core never sees one.
//!
//! A provider assembles a tool call's streamed JSON itself and reports the
//! call once, whole, in [`StreamEvent::ToolUse`]. It must stop promptly when
//! the cancellation token it was given fires.

use std::future::Future;

use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cancel::CancelToken;
use crate::ids::CallId;
use crate::types::Usage;

/// One tool as the model is told about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object for the input.
    pub input_schema: Value,
}

/// Who said a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// One block of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    Thinking {
        text: String,
    },
    ToolUse {
        id: CallId,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: CallId,
        content: String,
        is_error: bool,
    },
}

/// One message of the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message with one text block.
    #[must_use]
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }
}

/// The system prompt in its four parts, stable bytes first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemParts {
    /// cox's own system prompt: versioned, never dated.
    pub prompt: String,
    /// Instruction files and the skills index; empty when there are none.
    pub instructions: String,
    /// What changes from call to call: date, cwd, branch. Never cached.
    pub volatile: String,
}

/// What the core asks a model for, independent of any wire format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The tier's model, as the router resolved it.
    pub model: String,
    pub system: SystemParts,
    /// Sorted by name so the bytes are the same from call to call.
    pub tools: Vec<ToolSpec>,
    pub messages: Vec<Message>,
    pub max_output_tokens: u32,
}

/// Why the model stopped this response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelStop {
    EndTurn,
    ToolUse,
    MaxTokens,
}

/// One thing the model stream reports.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ThinkingDelta(String),
    /// A whole tool call; its input JSON already assembled.
    ToolUse {
        id: CallId,
        name: String,
        input: Value,
    },
    Usage(Usage),
    /// The response is complete.
    Done(ModelStop),
    /// The call failed in a way worth trying again, and will be tried again
    /// after `delay_ms`; nothing of the failed attempt was streamed.
    Retrying {
        attempt: u32,
        of: u32,
        delay_ms: u64,
        reason: String,
    },
}

/// Why a provider call failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The request was larger than the model's context window.
    #[error("context length exceeded: {0}")]
    ContextLength(String),
    /// The provider refused or failed; retries (if any) are exhausted.
    #[error("{0}")]
    Failed(String),
    /// A failure worth trying again (rate limit, overload, a server error,
    /// a dropped connection), with the wait the server asked for.
    #[error("{message}")]
    Retryable {
        message: String,
        retry_after_ms: Option<u64>,
    },
    /// A scripted scenario's expectation did not hold, or it ran out.
    #[error("{0}")]
    Scenario(String),
}

/// A language model, or a router over several.
///
/// `stream` returns at once; connection failures arrive as the stream's first
/// item. The stream ends after [`StreamEvent::Done`] or an error, and ends
/// early (without `Done`) when `cancel` fires.
pub trait Provider: Send + Sync {
    /// The provider's name as the ledger records it (`anthropic`, `scripted`).
    fn name(&self) -> &str;
    /// The model main turns run on.
    fn model(&self) -> &str;
    /// Streams one response.
    fn stream(
        &self,
        request: Request,
        cancel: CancelToken,
    ) -> impl Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static;
}

/// Providers behind a shared reference are providers too.
impl<P: Provider> Provider for std::sync::Arc<P> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn model(&self) -> &str {
        (**self).model()
    }
    fn stream(
        &self,
        request: Request,
        cancel: CancelToken,
    ) -> impl Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static {
        (**self).stream(request, cancel)
    }
}

/// A boxed future, for the traits that are used as trait objects.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;
