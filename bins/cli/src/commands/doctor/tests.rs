//! The decisions of `cox doctor`, with the month and the variables pinned.

use std::collections::BTreeMap;

use cox_protocol::catalog::{Catalog, ModelInfo, Prices};

use super::prices::{month_index, month_text};
use super::*;
use crate::config::{ProviderConfig, TierConfig};

fn vars(set: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let set: BTreeMap<String, String> = set
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| set.get(name).cloned()
}

fn row(id: &str, prices: bool, as_of: Option<&str>) -> ModelInfo {
    ModelInfo {
        id: id.to_owned(),
        provider: "openai".to_owned(),
        context_window: 1000,
        max_output: 100,
        prices: prices.then(Prices::default),
        prices_as_of: as_of.map(str::to_owned),
        efforts: Vec::new(),
        web_search: false,
    }
}

#[test]
fn months_count_across_years() {
    assert_eq!(
        month_index("2026-11").map(month_text),
        Some("2026-11".into())
    );
    assert_eq!(month_text(month_index("2026-03").unwrap() - 6), "2025-09");
    for bad in ["2026-13", "2026-00", "26-11", "2026/11", "2026-1", ""] {
        assert_eq!(month_index(bad), None, "{bad}");
    }
}

#[test]
fn a_key_is_reported_by_length_only() {
    let secret = "sk-ant-api03-DISTINCTIVE";
    let row = api_keys(
        &ModelConfig::default(),
        &vars(&[("ANTHROPIC_API_KEY", secret)]),
    );
    assert_eq!(
        row,
        Row {
            status: Status::Ok,
            check: "api keys".into(),
            detail: "ANTHROPIC_API_KEY set (24 characters); OPENAI_API_KEY not set".into(),
        }
    );
}

#[test]
fn no_key_and_no_base_url_warns_and_a_base_url_alone_is_enough() {
    assert_eq!(
        api_keys(&ModelConfig::default(), &vars(&[])).status,
        Status::Warn
    );
    let local = api_keys(
        &ModelConfig::default(),
        &vars(&[("OPENAI_BASE_URL", "http://localhost:11434/v1")]),
    );
    assert_eq!(local.status, Status::Ok);
    assert!(!local.detail.contains("localhost"), "{}", local.detail);
}

#[test]
fn api_key_env_is_honoured_and_a_pasted_key_is_not_echoed() {
    let mut models = ModelConfig::default();
    models.providers.insert(
        "openai".into(),
        ProviderConfig {
            api_key_env: Some("MY_OPENAI_KEY".into()),
            ..ProviderConfig::default()
        },
    );
    models.providers.insert(
        "anthropic".into(),
        ProviderConfig {
            api_key_env: Some("sk-ant-PASTED-KEY".into()),
            ..ProviderConfig::default()
        },
    );
    let row = api_keys(&models, &vars(&[("MY_OPENAI_KEY", "abc")]));
    assert_eq!(row.status, Status::Warn);
    assert!(
        row.detail
            .contains("MY_OPENAI_KEY (for openai) set (3 characters)"),
        "{}",
        row.detail
    );
    assert!(!row.detail.contains("PASTED"), "{}", row.detail);
    assert!(row.detail.contains("[providers.anthropic] api_key_env"));
}

#[test]
fn stale_rows_are_summarised_in_one_row() {
    let mut models = ModelConfig::default();
    models.models.push(row("mine", true, Some("2020-01")));
    let catalog = Catalog::new(vec![
        row("fresh", true, Some("2026-05")),
        row("old", true, Some("2026-04")),
        row("undated", true, None),
        row("unpriced", false, Some("2019-01")),
        row("mine", true, Some("2020-01")),
    ]);
    assert_eq!(
        stale_prices(&catalog, &models, "2026-11"),
        Row {
            status: Status::Warn,
            check: "price dates".into(),
            detail: "3 price rows older than 2026-05: old (2026-04), undated (undated), \
                     mine (2020-01, your [models]); costs may be wrong"
                .into(),
        }
    );
    let fresh = Catalog::new(vec![row("fresh", true, Some("2026-05"))]);
    assert_eq!(
        stale_prices(&fresh, &models, "2026-11").detail,
        "1 price row, all checked 2026-05 or later"
    );
}

#[test]
fn the_shipped_catalog_prices_every_default_model() {
    let models = ModelConfig::default();
    let catalog = full_catalog(&models);
    let keys = vars(&[("ANTHROPIC_API_KEY", "x"), ("OPENAI_API_KEY", "y")]);
    let row = unpriced_models(&models, &catalog, &keys, false);
    assert_eq!(row.status, Status::Ok, "{}", row.detail);
    assert!(row.detail.contains("claude-sonnet-5"), "{}", row.detail);
    assert!(row.detail.contains("gpt-5-mini"), "{}", row.detail);
    let none = unpriced_models(&models, &catalog, &vars(&[]), false);
    assert_eq!(none.detail, "no model configured yet");
}

#[test]
fn a_tier_model_without_a_row_or_prices_warns() {
    let mut models = ModelConfig::default();
    models.tiers.insert(
        crate::config::TierName::Code,
        TierConfig {
            model: Some("mystery".into()),
            ..TierConfig::default()
        },
    );
    models.tiers.insert(
        crate::config::TierName::Cheap,
        TierConfig {
            model: Some("local".into()),
            ..TierConfig::default()
        },
    );
    models.models.push(row("local", false, None));
    let catalog = full_catalog(&models);
    let row = unpriced_models(&models, &catalog, &vars(&[]), true);
    assert_eq!(
        row,
        Row {
            status: Status::Warn,
            check: "model prices".into(),
            detail: "local ([tiers.cheap]) has no prices; mystery ([tiers.code]) has no \
                     catalog row: costs will be recorded as 0, estimated; add prices under \
                     [models.\"<id>\"]"
                .into(),
        }
    );
}

#[test]
fn the_table_aligns_its_columns() {
    let rows = [
        Row::new(Status::Ok, "api keys", "x"),
        Row::new(Status::Fail, "cox.db", "y\nz"),
    ];
    assert_eq!(table(&rows), "ok    api keys  x\nfail  cox.db    y; z");
}

#[test]
fn the_uid_outside_is_read_from_the_namespace_map() {
    let root_started = "0\ncaps 0000000000000000\nmap 0 65534 1\nmap 1 1 65533\n";
    assert_eq!(outside_uid(root_started, "0").as_deref(), Some("65534"));
    assert_eq!(outside_uid(root_started, "1000").as_deref(), Some("1000"));
    let user = "1000\nmap 1000 1000 1\n";
    assert_eq!(outside_uid(user, "1000").as_deref(), Some("1000"));
    let host = "0\nmap 0 0 4294967295\n";
    assert_eq!(outside_uid(host, "0").as_deref(), Some("0"));
    assert_eq!(outside_uid("0\n", "0"), None);
    assert_eq!(outside_uid(user, "?"), None);
}
