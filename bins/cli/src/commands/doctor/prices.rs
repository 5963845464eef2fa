//! The two checks over the model catalog: price rows gone stale, and
//! configured models the catalog cannot price. Both are pure: the month,
//! the config and the variables are passed in.

use cox_protocol::catalog::Catalog;
use cox_protocol::provider::Tier;

use super::{Row, Status};
use crate::config::ModelConfig;

/// A price row older than this many months is reported stale.
const STALE_MONTHS: i64 = 6;

/// `YYYY-MM` as a count of months.
pub(super) fn month_index(text: &str) -> Option<i64> {
    let (year, month) = text.split_once('-')?;
    if year.len() != 4 || month.len() != 2 {
        return None;
    }
    let year: i64 = year.parse().ok()?;
    let month: i64 = month.parse().ok()?;
    (1..=12).contains(&month).then_some(year * 12 + month - 1)
}

pub(super) fn month_text(index: i64) -> String {
    format!(
        "{:04}-{:02}",
        index.div_euclid(12),
        index.rem_euclid(12) + 1
    )
}

/// Price rows checked more than [`STALE_MONTHS`] before `this_month`, in one
/// row. A row without prices has nothing to go stale.
pub fn stale_prices(catalog: &Catalog, models: &ModelConfig, this_month: &str) -> Row {
    const NAME: &str = "price dates";
    let Some(now) = month_index(this_month) else {
        return Row::new(
            Status::Warn,
            NAME,
            format!("cannot read today's month from {this_month}"),
        );
    };
    let cutoff = now - STALE_MONTHS;
    let priced: Vec<_> = catalog
        .models()
        .iter()
        .filter(|m| m.prices.is_some())
        .collect();
    let stale: Vec<String> = priced
        .iter()
        .filter_map(|row| {
            let when = match row.prices_as_of.as_deref() {
                None => "undated".to_owned(),
                Some(text) => match month_index(text) {
                    Some(month) if month >= cutoff => return None,
                    Some(_) => text.to_owned(),
                    None => format!("{text}, not YYYY-MM"),
                },
            };
            let from = if models.models.iter().any(|m| m.id == row.id) {
                ", your [models]"
            } else {
                ""
            };
            Some(format!("{} ({when}{from})", row.id))
        })
        .collect();
    let cutoff = month_text(cutoff);
    if stale.is_empty() {
        return Row::new(
            Status::Ok,
            NAME,
            format!(
                "{} price row{}, all checked {cutoff} or later",
                priced.len(),
                if priced.len() == 1 { "" } else { "s" }
            ),
        );
    }
    Row::new(
        Status::Warn,
        NAME,
        format!(
            "{} price row{} older than {cutoff}: {}; costs may be wrong",
            stale.len(),
            if stale.len() == 1 { "" } else { "s" },
            stale.join(", ")
        ),
    )
}

/// The models the config routes to (each `[tiers]` model, and the default
/// models of the providers in use), warning for any the catalog cannot
/// price. `local_openai`: the OpenAI-compatible server is not OpenAI's, so
/// it has no default models.
pub fn unpriced_models(
    models: &ModelConfig,
    catalog: &Catalog,
    vars: &dyn Fn(&str) -> Option<String>,
    local_openai: bool,
) -> Row {
    const NAME: &str = "model prices";
    let mut wanted: Vec<(String, String)> = Vec::new();
    let mut want = |id: &str, from: String| {
        if !wanted.iter().any(|(w, _)| w == id) {
            wanted.push((id.to_owned(), from));
        }
    };
    for (tier, config) in &models.tiers {
        if let Some(model) = &config.model {
            want(model, format!("[tiers.{}]", tier.tier().as_str()));
        }
    }
    let key_set = |provider: &str, usual: &str| {
        let name = models
            .providers
            .get(provider)
            .and_then(|p| p.api_key_env.as_deref())
            .unwrap_or(usual);
        vars(name).is_some()
    };
    let named = |provider: &str| {
        models.providers.contains_key(provider)
            || models
                .tiers
                .values()
                .any(|t| t.provider.as_deref() == Some(provider))
    };
    let mut in_use = Vec::new();
    if key_set("anthropic", "ANTHROPIC_API_KEY") || named("anthropic") {
        in_use.push("anthropic");
    }
    if !local_openai && (key_set("openai", "OPENAI_API_KEY") || named("openai")) {
        in_use.push("openai");
    }
    for provider in in_use {
        for tier in Tier::ALL {
            let own = models
                .tiers
                .iter()
                .any(|(name, t)| name.tier() == tier && t.model.is_some());
            if let (false, Some(model)) =
                (own, cox_providers::catalog::default_model(provider, tier))
            {
                want(model, format!("{provider}'s {} default", tier.as_str()));
            }
        }
    }
    let missing: Vec<String> = wanted
        .iter()
        .filter_map(|(id, from)| match catalog.get(id) {
            None => Some(format!("{id} ({from}) has no catalog row")),
            Some(row) if row.prices.is_none() => Some(format!("{id} ({from}) has no prices")),
            Some(_) => None,
        })
        .collect();
    if wanted.is_empty() {
        return Row::new(Status::Ok, NAME, "no model configured yet");
    }
    if missing.is_empty() {
        let ids: Vec<&str> = wanted.iter().map(|(id, _)| id.as_str()).collect();
        return Row::new(
            Status::Ok,
            NAME,
            format!("every configured model is priced: {}", ids.join(", ")),
        );
    }
    Row::new(
        Status::Warn,
        NAME,
        format!(
            "{}: costs will be recorded as 0, estimated; add prices under [models.\"<id>\"]",
            missing.join("; ")
        ),
    )
}
