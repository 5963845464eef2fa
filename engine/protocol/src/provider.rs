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
use std::sync::Arc;

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
    /// An image that belongs to the tool result just before it (a
    /// provider that cannot put images in a tool result sends it after
    /// the results, in a user message).
    Image(crate::types::Image),
    /// A step of the provider's own tool (its web search) inside the
    /// model's answer: sent back as it came to the provider that made it,
    /// left out for any other.
    Server(crate::types::ServerBlock),
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

/// What a call is for, and so which model serves it: the tier router maps
/// each tier to a (provider, model) pair from config.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Summaries and compaction: fast and inexpensive.
    Cheap,
    /// Main turns.
    #[default]
    Code,
    /// Architect mode: the strongest model, at a price the user consented to.
    Think,
}

impl Tier {
    /// Every tier, cheapest first.
    pub const ALL: [Tier; 3] = [Tier::Cheap, Tier::Code, Tier::Think];

    /// The name config and the ledger use.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Cheap => "cheap",
            Tier::Code => "code",
            Tier::Think => "think",
        }
    }
}

/// How hard a model should think, where it can be told. The router clamps
/// the asked effort to what the serving model supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    Low,
    Medium,
    High,
    Xhigh,
}

impl Effort {
    /// Every effort, lowest first.
    pub const ALL: [Effort; 4] = [Effort::Low, Effort::Medium, Effort::High, Effort::Xhigh];

    /// The name config, flags and the ledger use.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::Xhigh => "xhigh",
        }
    }

    /// Parses a name as [`Effort::as_str`] spells it.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

/// What the core asks a model for, independent of any wire format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The model the session was started with; the tier router replaces it
    /// with the tier's model.
    pub model: String,
    /// What the call is for.
    #[serde(default)]
    pub tier: Tier,
    /// The effort asked for; the router clamps it to the model, and a
    /// provider leaves it out of the wire request when it is `None`.
    #[serde(default)]
    pub effort: Option<Effort>,
    /// A model the person switched to (`/model`): the router sends the
    /// call to it instead of the tier's model, on the tier's provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_override: Option<String>,
    pub system: SystemParts,
    /// Sorted by name so the bytes are the same from call to call.
    pub tools: Vec<ToolSpec>,
    /// The conversation, shared with the session: each message with its
    /// history, the list with the next request's, so building a request
    /// of a long session costs what changed since the last one, not the
    /// length of the conversation.
    pub messages: Arc<Vec<Arc<Message>>>,
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
    /// A tool call the output limit cut off before its input was whole:
    /// it must not run. Comes before `Done(ModelStop::MaxTokens)`.
    ToolUseCut {
        id: CallId,
        name: String,
    },
    Usage(Usage),
    /// A step of the provider's own tool (its web search), whole.
    Server(crate::types::ServerBlock),
    /// The pages the text just streamed cites.
    Citations(Vec<crate::types::Source>),
    /// The response is complete.
    Done(ModelStop),
    /// Which provider, model and effort serve this call; a router sends it
    /// first, so usage is booked against what actually answered.
    Routed {
        provider: String,
        model: String,
        effort: Option<Effort>,
    },
    /// The call failed in a way worth trying again, and will be tried again
    /// after `delay_ms`. When `discarded` is true the failed attempt had
    /// already streamed part of an answer: everything it streamed since the
    /// call began (text, thinking, tool calls) is void, and the next attempt
    /// starts the answer again.
    Retrying {
        attempt: u32,
        of: u32,
        delay_ms: u64,
        reason: String,
        discarded: bool,
    },
}

/// Why a provider call failed.
///
/// Most failures are what a server said, or what the adapter saw of the
/// connection, as the one line the user reads: the message is the payload.
/// A failure with an error value behind it keeps that value as its
/// `source()` (see [`crate::error`]); its message already says the root
/// cause. Two values are equal when they are the same variant with the same
/// fields, a source by its message.
#[derive(Clone, Debug, thiserror::Error)]
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
    /// The provider's HTTP client could not be built, before any request.
    #[error(
        "{provider}: cannot build the HTTP client: {}",
        crate::error::root(source.as_ref())
    )]
    Client {
        /// The provider's name (`anthropic`, `openai`).
        provider: String,
        source: std::sync::Arc<dyn std::error::Error + Send + Sync>,
    },
}

impl PartialEq for ProviderError {
    fn eq(&self, other: &Self) -> bool {
        use ProviderError as E;
        match (self, other) {
            (E::ContextLength(a), E::ContextLength(b))
            | (E::Failed(a), E::Failed(b))
            | (E::Scenario(a), E::Scenario(b)) => a == b,
            (
                E::Retryable {
                    message: a,
                    retry_after_ms: wait_a,
                },
                E::Retryable {
                    message: b,
                    retry_after_ms: wait_b,
                },
            ) => a == b && wait_a == wait_b,
            (
                E::Client {
                    provider: a,
                    source: cause_a,
                },
                E::Client {
                    provider: b,
                    source: cause_b,
                },
            ) => a == b && cause_a.to_string() == cause_b.to_string(),
            _ => false,
        }
    }
}

impl Eq for ProviderError {}

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
    /// Whether the cheap tier reaches a model of its own, other than the
    /// main tier's. The session asks it for side jobs it can do without
    /// (the session's title) only then: a single model, or a scripted
    /// replay that must see exactly the calls it was written for, gets no
    /// such call.
    fn has_cheap_tier(&self) -> bool {
        false
    }
    /// The model `tier`'s calls go to, when this provider routes tiers (a
    /// surface shows it before a person agrees to the think tier's price).
    fn tier_model(&self, _tier: Tier) -> Option<&str> {
        None
    }
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
    fn has_cheap_tier(&self) -> bool {
        (**self).has_cheap_tier()
    }
    fn tier_model(&self, tier: Tier) -> Option<&str> {
        (**self).tier_model(tier)
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
