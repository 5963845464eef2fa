//! Choosing the model provider at run time.
//!
//! The session is generic over one provider type; a binary that can talk to
//! several picks among them here, and [`AnyProvider`] is itself one
//! `Provider` (the only run-time choice in the loop is this enum's match).
//!
//! The choice, first match wins: `--provider`/`COX_PROVIDER`; else a
//! scenario means the scripted provider; else `ANTHROPIC_API_KEY` means
//! Anthropic. With none of them, one line says what to set.

use anyhow::{Result, bail};
use cox_anthropic::AnthropicProvider;
use cox_protocol::provider::{ProviderError, Request, StreamEvent};
use cox_protocol::{CancelToken, Provider};
use cox_scripted::ScriptedProvider;
use futures::Stream;
use futures::future::Either;

use crate::ProviderChoice;

/// The model main turns run on when none is named.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-5";

/// One of the providers this build has.
#[derive(Debug)]
pub enum AnyProvider {
    Scripted(ScriptedProvider),
    Anthropic(AnthropicProvider),
}

impl Provider for AnyProvider {
    fn name(&self) -> &str {
        match self {
            AnyProvider::Scripted(p) => p.name(),
            AnyProvider::Anthropic(p) => p.name(),
        }
    }

    fn model(&self) -> &str {
        match self {
            AnyProvider::Scripted(p) => p.model(),
            AnyProvider::Anthropic(p) => p.model(),
        }
    }

    fn stream(
        &self,
        request: Request,
        cancel: CancelToken,
    ) -> impl Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static {
        match self {
            AnyProvider::Scripted(p) => Either::Left(p.stream(request, cancel)),
            AnyProvider::Anthropic(p) => Either::Right(p.stream(request, cancel)),
        }
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Builds the provider the flags and the environment ask for.
///
/// # Errors
/// An unknown provider name, a missing key, a missing or bad scenario: one
/// line naming what to set.
pub fn any_provider(choice: &ProviderChoice) -> Result<AnyProvider> {
    let name = match choice.provider.as_deref() {
        Some(name) => name.to_owned(),
        None if choice.scenario.is_some() => "scripted".to_owned(),
        None if var("ANTHROPIC_API_KEY").is_some() => "anthropic".to_owned(),
        None => bail!(
            "no model provider is configured: set ANTHROPIC_API_KEY, or run the offline demo with \
             COX_PROVIDER=scripted COX_SCENARIO=tests/scenarios/hello.toml"
        ),
    };
    match name.as_str() {
        "scripted" => crate::scripted_provider(choice).map(AnyProvider::Scripted),
        "anthropic" => {
            let Some(key) = var("ANTHROPIC_API_KEY") else {
                bail!("the anthropic provider needs ANTHROPIC_API_KEY");
            };
            let base = var("ANTHROPIC_BASE_URL")
                .unwrap_or_else(|| cox_anthropic::provider::DEFAULT_BASE_URL.to_owned());
            let model = choice
                .model
                .clone()
                .unwrap_or_else(|| DEFAULT_ANTHROPIC_MODEL.to_owned());
            let provider = AnthropicProvider::new(&base, &key, &model)?;
            Ok(AnyProvider::Anthropic(provider))
        }
        other => bail!("unknown provider `{other}` (this build has: anthropic, scripted)"),
    }
}
