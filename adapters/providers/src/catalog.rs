//! The model catalog cox ships: `catalog.toml`, compiled in.
//!
//! Its rows are [`cox_protocol::catalog::ModelInfo`]s; config may add or
//! replace rows. The shipped file is checked by a test, so parsing it at
//! run time cannot fail in a released build.

use cox_protocol::catalog::{Catalog, ModelInfo};
use cox_protocol::provider::Tier;
use serde::Deserialize;

/// The shipped rows, as TOML.
pub const SHIPPED: &str = include_str!("../catalog.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    model: Vec<ModelInfo>,
}

/// The shipped catalog.
#[must_use]
pub fn shipped() -> Catalog {
    parse(SHIPPED).unwrap_or_default()
}

/// Parses a catalog file.
///
/// # Errors
/// The text is not a catalog: the TOML error, one line.
pub fn parse(text: &str) -> Result<Catalog, String> {
    let file: File = toml::from_str(text).map_err(|e| e.message().to_owned())?;
    Ok(Catalog::new(file.model))
}

/// The model each tier runs on when config names none, per provider.
#[must_use]
pub fn default_model(provider: &str, tier: Tier) -> Option<&'static str> {
    Some(match (provider, tier) {
        ("anthropic", Tier::Cheap) => "claude-haiku-4-5",
        ("anthropic", Tier::Code) => "claude-sonnet-5",
        ("anthropic", Tier::Think) => "claude-opus-4-5",
        ("openai", Tier::Cheap) => "gpt-5-mini",
        ("openai", Tier::Code | Tier::Think) => "gpt-5.1",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_catalog_parses_and_covers_the_defaults() {
        let catalog = parse(SHIPPED).expect("catalog.toml parses");
        assert!(catalog.models().len() >= 10);
        for provider in ["anthropic", "openai"] {
            for tier in Tier::ALL {
                let id = default_model(provider, tier).unwrap();
                let row = catalog.get(id).unwrap_or_else(|| panic!("{id} has a row"));
                assert_eq!(row.provider, provider);
                assert!(row.prices.is_some(), "{id} is priced");
            }
        }
        for row in catalog.models() {
            let mut sorted = row.efforts.clone();
            sorted.sort();
            assert_eq!(sorted, row.efforts, "{}: efforts lowest first", row.id);
            assert!(u64::from(row.max_output) < row.context_window, "{}", row.id);
        }
    }
}
