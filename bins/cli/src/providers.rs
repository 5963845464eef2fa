//! Choosing the model provider and the tier routes at run time.
//!
//! The session is generic over one provider type; a binary that can talk to
//! several picks among them here. [`AnyProvider`] is one `Provider` (the
//! only run-time choice in the loop is this enum's match), the tier router
//! sits over it, and the cassette recorder over that.
//!
//! The main provider, first match wins: `--provider`/`COX_PROVIDER`; a
//! scenario means scripted; `[tiers.code] provider` in the user's config;
//! `ANTHROPIC_API_KEY` means anthropic; `OPENAI_API_KEY` or
//! `OPENAI_BASE_URL` means openai. With none of them, one line says what to
//! set and how to run the offline demo instead.
//!
//! Each tier's route: its `[tiers.<tier>]` provider (else the main one) and
//! model (else the provider's default for the tier); `--model` names the
//! main tier's model. A local OpenAI-compatible server has no default
//! model, so one must be named.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};
use cox_protocol::catalog::Catalog;
use cox_protocol::provider::{ProviderError, Request, StreamEvent, Tier};
use cox_protocol::{CancelToken, Provider};
use cox_providers::cassette::Recorder;
use cox_providers::router::Route;
use cox_providers::{AnthropicProvider, OpenAiProvider, Router, catalog};
use cox_scripted::ScriptedProvider;
use futures::Stream;
use futures::future::Either;

use crate::config::{ModelConfig, TierName};

/// The model main turns run on when none is named (Anthropic).
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-5";

/// What the flags, the environment and the user's config say about the
/// provider.
#[derive(Debug, Clone, Default)]
pub struct ProviderChoice {
    /// `--provider`, else `COX_PROVIDER`.
    pub provider: Option<String>,
    /// `--model`, else `COX_MODEL`, else the managed settings' or
    /// `--settings`' `model`: the main tier's model, over `[tiers]`.
    pub model: Option<String>,
    /// `model` of the person's own Claude Code settings: the main tier's
    /// model where `[tiers]` names none.
    pub settings_model: Option<String>,
    /// `--scenario`, else `COX_SCENARIO`.
    pub scenario: Option<PathBuf>,
    /// `--record`: where the cassette goes.
    pub record: Option<PathBuf>,
    /// The tier main turns run on.
    pub main_tier: Tier,
    /// `[core]`, `[tiers]`, `[providers]`, `[models]` of the user's config.
    pub models: ModelConfig,
    /// A subagent's: the `description` of the agent call that runs it
    /// (the scripted provider plays that `[[agent]]`'s script).
    pub agent: Option<String>,
    /// Offer the provider's own web search, to the models that have one
    /// (`[tools] web_search` and the rules agree).
    pub web_search: bool,
}

/// What a session of `cox run` talks to.
pub type SessionProvider = Recorder<Router<AnyProvider>>;

/// One of the providers this build has.
#[derive(Debug)]
pub enum AnyProvider {
    Scripted(ScriptedProvider),
    Anthropic(AnthropicProvider),
    OpenAi(OpenAiProvider),
}

impl Provider for AnyProvider {
    fn name(&self) -> &str {
        match self {
            AnyProvider::Scripted(p) => p.name(),
            AnyProvider::Anthropic(p) => p.name(),
            AnyProvider::OpenAi(p) => p.name(),
        }
    }

    fn model(&self) -> &str {
        match self {
            AnyProvider::Scripted(p) => p.model(),
            AnyProvider::Anthropic(p) => p.model(),
            AnyProvider::OpenAi(p) => p.model(),
        }
    }

    fn has_cheap_tier(&self) -> bool {
        match self {
            AnyProvider::Scripted(p) => p.has_cheap_tier(),
            AnyProvider::Anthropic(p) => p.has_cheap_tier(),
            AnyProvider::OpenAi(p) => p.has_cheap_tier(),
        }
    }

    fn stream(
        &self,
        request: Request,
        cancel: CancelToken,
    ) -> impl Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static {
        match self {
            AnyProvider::Scripted(p) => Either::Left(Either::Left(p.stream(request, cancel))),
            AnyProvider::Anthropic(p) => Either::Left(Either::Right(p.stream(request, cancel))),
            AnyProvider::OpenAi(p) => Either::Right(p.stream(request, cancel)),
        }
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The line said when nothing names a provider.
#[must_use]
pub fn no_provider() -> String {
    format!(
        "no model provider is configured: set ANTHROPIC_API_KEY (or OPENAI_API_KEY, or \
         OPENAI_BASE_URL for a local server), or run the offline demo with COX_PROVIDER=scripted \
         COX_SCENARIO={}",
        demo_scenario()
    )
}

/// The bundled demo scenario: its full path where this binary was built
/// from a checkout that is still there, else where it is in one.
fn demo_scenario() -> String {
    let built =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenarios/hello.toml");
    match built.canonicalize() {
        Ok(path) => path.display().to_string(),
        Err(_) => "tests/scenarios/hello.toml (in a cox checkout)".to_owned(),
    }
}

/// Builds the provider the flags, the config and the environment ask for.
///
/// # Errors
/// An unknown provider name, a missing key or model, a missing or bad
/// scenario, a cassette that cannot be created: one line naming what to set.
pub fn any_provider(choice: &ProviderChoice) -> Result<SessionProvider> {
    let config = &choice.models;
    let code_config = config.tiers.get(&TierName::Code);
    let main = match choice.provider.as_deref() {
        Some(name) => name.to_owned(),
        None if choice.scenario.is_some() => "scripted".to_owned(),
        None => match code_config.and_then(|t| t.provider.clone()) {
            Some(name) => name,
            None if var("ANTHROPIC_API_KEY").is_some() => "anthropic".to_owned(),
            None if var("OPENAI_API_KEY").is_some() || var("OPENAI_BASE_URL").is_some() => {
                "openai".to_owned()
            }
            None => bail!("{}", no_provider()),
        },
    };
    let router = if main == "scripted" {
        let scripted = Arc::new(AnyProvider::Scripted(scripted_provider(choice)?));
        let model = scripted.model().to_owned();
        let route = |_| Route {
            provider: Arc::clone(&scripted),
            model: model.clone(),
            effort: None,
            info: None,
        };
        Router::new(route(()), route(()), route(()), choice.main_tier)
    } else {
        routes(choice, &main)?
    };
    match &choice.record {
        Some(path) => Recorder::recording(router, path).map_err(|e| anyhow::anyhow!("{e}")),
        None => Ok(Recorder::passthrough(router)),
    }
}

/// The three routes over real providers, `main` serving any tier config
/// does not send elsewhere.
fn routes(choice: &ProviderChoice, main: &str) -> Result<Router<AnyProvider>> {
    let config = &choice.models;
    let catalog = full_catalog(config);
    let mut built: BTreeMap<String, Arc<AnyProvider>> = BTreeMap::new();
    // The main tier first: a tier with no model of its own on a local
    // server runs on the main tier's model.
    let mut main_model: Option<String> = None;
    let mut routes: BTreeMap<Tier, Route<AnyProvider>> = BTreeMap::new();
    let order = std::iter::once(choice.main_tier)
        .chain(Tier::ALL.into_iter().filter(|t| *t != choice.main_tier));
    for tier in order {
        let tier_config = config
            .tiers
            .get(&TierName::from_tier(tier))
            .cloned()
            .unwrap_or_default();
        // `--provider`/`COX_PROVIDER` names the main tier's provider, over
        // the config's.
        let provider_name = match (&choice.provider, tier == choice.main_tier) {
            (Some(_), true) => main.to_owned(),
            _ => tier_config
                .provider
                .clone()
                .unwrap_or_else(|| main.to_owned()),
        };
        let main_tier = tier == choice.main_tier;
        let flag_model = main_tier.then(|| choice.model.clone()).flatten();
        let settings_model = main_tier.then(|| choice.settings_model.clone()).flatten();
        // Claude Code's aliases name a tier's model, as cox routes it.
        let alias = |model: String| unalias(model, &provider_name, config);
        let local = provider_name == "openai" && is_local_openai(config);
        let fallback = if local {
            None
        } else {
            catalog::default_model(&provider_name, tier).map(str::to_owned)
        };
        let model = match flag_model
            .or(tier_config.model.clone())
            .or(settings_model)
            .filter(|m| !m.trim().is_empty())
            .map(alias)
            .or(fallback)
            .or_else(|| {
                (provider_name == main)
                    .then(|| main_model.clone())
                    .flatten()
            }) {
            Some(model) => model,
            None if local => bail!(
                "openai: OPENAI_BASE_URL points at {}, whose models cox does not know: name the \
                 model with --model (or [tiers.{}] model in your config)",
                openai_base(config),
                tier.as_str()
            ),
            None => bail!(
                "unknown provider `{provider_name}` for the {} tier (this build has: \
                 anthropic, openai, scripted)",
                tier.as_str()
            ),
        };
        if tier == choice.main_tier {
            main_model = Some(model.clone());
        }
        let provider = match built.get(&provider_name) {
            Some(p) => Arc::clone(p),
            None => {
                let search = choice.web_search && catalog.get(&model).is_some_and(|m| m.web_search);
                let p = Arc::new(build(&provider_name, &model, config, search)?);
                built.insert(provider_name.clone(), Arc::clone(&p));
                p
            }
        };
        routes.insert(
            tier,
            Route {
                provider,
                info: catalog.get(&model).cloned(),
                model,
                effort: tier_config.effort,
            },
        );
    }
    let mut take = |tier| {
        routes
            .remove(&tier)
            .ok_or_else(|| anyhow::anyhow!("no route for the {} tier", tier.as_str()))
    };
    Ok(Router::new(
        take(Tier::Cheap)?,
        take(Tier::Code)?,
        take(Tier::Think)?,
        choice.main_tier,
    )
    .with_catalog(catalog))
}

/// `model`, or the model the tier an alias names runs on with
/// `provider`: `[tiers]` of the config, else the provider's default for
/// that tier; an alias with neither stays as written.
#[must_use]
pub fn unalias(model: String, provider: &str, config: &ModelConfig) -> String {
    match alias_tier(&model) {
        Some(aliased) => config
            .tiers
            .get(&TierName::from_tier(aliased))
            .and_then(|t| t.model.clone())
            .or_else(|| catalog::default_model(provider, aliased).map(str::to_owned))
            .unwrap_or(model),
        None => model,
    }
}

/// The tier one of Claude Code's model aliases names (`sonnet`,
/// `opus`, `haiku`, with or without a `[1m]` mark).
#[must_use]
pub fn alias_tier(model: &str) -> Option<Tier> {
    match model.trim().trim_end_matches("[1m]") {
        "sonnet" => Some(Tier::Code),
        "opus" => Some(Tier::Think),
        "haiku" => Some(Tier::Cheap),
        _ => None,
    }
}

/// The shipped catalog with the user's `[models]` rows over it.
#[must_use]
pub fn full_catalog(config: &ModelConfig) -> Catalog {
    let mut catalog: Catalog = catalog::shipped();
    for row in &config.models {
        catalog.insert(row.clone());
    }
    catalog
}

impl TierName {
    pub(crate) fn from_tier(tier: Tier) -> Self {
        match tier {
            Tier::Cheap => TierName::Cheap,
            Tier::Code => TierName::Code,
            Tier::Think => TierName::Think,
        }
    }
}

/// A base URL must be an http(s) URL; say which setting holds it if not.
fn check_url(url: &str, setting: &str) -> Result<()> {
    let ok = (url.starts_with("http://") || url.starts_with("https://"))
        && url.split("://").nth(1).is_some_and(|rest| !rest.is_empty());
    if !ok {
        bail!("the base URL `{url}` ({setting}) is not an http:// or https:// URL");
    }
    Ok(())
}

fn openai_base(config: &ModelConfig) -> String {
    var("OPENAI_BASE_URL")
        .or_else(|| {
            config
                .providers
                .get("openai")
                .and_then(|p| p.base_url.clone())
        })
        .unwrap_or_else(|| cox_providers::openai::DEFAULT_BASE_URL.to_owned())
}

/// Whether the OpenAI-compatible base URL is a server other than OpenAI's.
pub(crate) fn is_local_openai(config: &ModelConfig) -> bool {
    !openai_base(config).contains("api.openai.com")
}

/// One provider instance; `model` is what it reports as its own (the
/// router puts each call's model in the request).
fn build(name: &str, model: &str, config: &ModelConfig, web_search: bool) -> Result<AnyProvider> {
    let settings = config.providers.get(name).cloned().unwrap_or_default();
    let retry = settings.retry();
    match name {
        "anthropic" => {
            let key_var = settings
                .api_key_env
                .unwrap_or_else(|| "ANTHROPIC_API_KEY".to_owned());
            let Some(key) = var(&key_var) else {
                bail!(
                    "the anthropic provider needs an API key: set {key_var}, or run the offline \
                     demo with COX_PROVIDER=scripted COX_SCENARIO={}",
                    demo_scenario()
                );
            };
            let base = var("ANTHROPIC_BASE_URL")
                .or(settings.base_url)
                .unwrap_or_else(|| cox_providers::anthropic::DEFAULT_BASE_URL.to_owned());
            check_url(
                &base,
                "ANTHROPIC_BASE_URL or [providers.anthropic] base_url",
            )?;
            Ok(AnyProvider::Anthropic(
                AnthropicProvider::new(&base, &key, model)?
                    .with_retry(retry)
                    .with_web_search(web_search),
            ))
        }
        "openai" => {
            let key_var = settings
                .api_key_env
                .unwrap_or_else(|| "OPENAI_API_KEY".to_owned());
            let key = var(&key_var);
            let base = openai_base(config);
            check_url(&base, "OPENAI_BASE_URL or [providers.openai] base_url")?;
            if key.is_none() && !is_local_openai(config) {
                bail!(
                    "the openai provider needs an API key for {base}: set {key_var}, or point \
                     OPENAI_BASE_URL at a local server"
                );
            }
            Ok(AnyProvider::OpenAi(
                OpenAiProvider::new(&base, key.as_deref(), model)?
                    .with_retry(retry)
                    .with_web_search(web_search),
            ))
        }
        "scripted" => {
            bail!("the scripted provider serves every tier or none: use --provider scripted")
        }
        other => bail!("unknown provider `{other}` (this build has: anthropic, openai, scripted)"),
    }
}

/// Builds the scripted provider from a [`ProviderChoice`]: the one provider
/// every binary has. Errors name the variable to set.
pub fn scripted_provider(choice: &ProviderChoice) -> Result<cox_scripted::ScriptedProvider> {
    let Some(path) = &choice.scenario else {
        bail!(
            "the scripted provider needs a scenario: set COX_SCENARIO=<file.toml> or pass --scenario <file.toml>"
        );
    };
    let mut scenario = cox_scripted::Scenario::load(path)?;
    if let Some(description) = &choice.agent {
        scenario = scenario.agent(description).ok_or_else(|| {
            anyhow::anyhow!(
                "scenario {}: no [[agent]] scripts the subagent {description:?}",
                path.display()
            )
        })?;
    }
    // `--model` (or COX_MODEL) names the model the scenario plays, so it
    // prices and reports as that model.
    if let Some(model) = &choice.model {
        scenario = scenario.played_as(model.clone());
    }
    Ok(cox_scripted::ScriptedProvider::new(scenario))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_aliases_name_the_tiers_model() {
        let mut config = ModelConfig::default();
        assert_eq!(
            unalias("opus".into(), "anthropic", &config),
            catalog::default_model("anthropic", Tier::Think).unwrap_or_default()
        );
        assert_eq!(
            unalias("haiku".into(), "anthropic", &config),
            catalog::default_model("anthropic", Tier::Cheap).unwrap_or_default()
        );
        assert_eq!(
            unalias("sonnet[1m]".into(), "anthropic", &config),
            catalog::default_model("anthropic", Tier::Code).unwrap_or_default()
        );
        // The config's [tiers] first; a model's own name as it is.
        config.tiers.insert(
            TierName::Think,
            crate::config::TierConfig {
                model: Some("my-think".into()),
                ..Default::default()
            },
        );
        assert_eq!(unalias("opus".into(), "anthropic", &config), "my-think");
        assert_eq!(
            unalias("claude-x-1".into(), "anthropic", &config),
            "claude-x-1"
        );
        // No default and no [tiers]: as written.
        assert_eq!(unalias("haiku".into(), "nowhere", &config), "haiku");
    }
}
