//! What cox knows about a model: its window, its output limit, its prices
//! and the efforts it takes.
//!
//! The rows are data (shipped with the provider adapters, overridable in
//! config); this module holds their shape and the two pure computations
//! every user of a row needs: clamping an effort to what the model supports,
//! and pricing a call's usage. A model without a price row is costed 0 and
//! marked estimated, never dropped.

use serde::{Deserialize, Serialize};

use crate::provider::Effort;
use crate::types::Usage;

/// US dollars per million tokens (and per web search).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// Per search of the provider's server-side web search.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub web_search: f64,
}

fn is_zero(price: &f64) -> bool {
    *price == 0.0
}

/// One model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// The model id the provider's API takes (in config, the table's key).
    #[serde(default)]
    pub id: String,
    /// The provider that serves it (`anthropic`, `openai`).
    pub provider: String,
    /// Input plus output tokens the model can attend to.
    pub context_window: u64,
    /// The most output tokens one response may have.
    pub max_output: u32,
    /// Per-MTok prices; `None` when unknown (a local model, a new one).
    #[serde(default)]
    pub prices: Option<Prices>,
    /// When the prices were last checked, `YYYY-MM`.
    #[serde(default)]
    pub prices_as_of: Option<String>,
    /// The efforts the model takes, lowest first; empty when it takes none.
    #[serde(default)]
    pub efforts: Vec<Effort>,
    /// The model can search the web on its provider's side (Anthropic's
    /// `web_search` server tool, OpenAI's search models); `[tools]
    /// web_search = true` turns it on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub web_search: bool,
}

/// A call's cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    pub usd: f64,
    /// No price row: `usd` is 0, not the truth.
    pub estimated: bool,
}

impl ModelInfo {
    /// The effort to send for `asked`: `asked` itself when the model takes
    /// it, else the highest supported effort below it, else the lowest
    /// supported one. `None` when nothing was asked or the model takes no
    /// effort at all.
    #[must_use]
    pub fn clamp_effort(&self, asked: Option<Effort>) -> Option<Effort> {
        let asked = asked?;
        if self.efforts.contains(&asked) {
            return Some(asked);
        }
        self.efforts
            .iter()
            .copied()
            .filter(|e| *e < asked)
            .max()
            .or_else(|| self.efforts.iter().copied().min())
    }
}

/// What `usage` costs on `model` (`None`: no row for the model).
#[must_use]
pub fn cost(model: Option<&ModelInfo>, usage: &Usage) -> Cost {
    let Some(prices) = model.and_then(|m| m.prices) else {
        return Cost {
            usd: 0.0,
            estimated: true,
        };
    };
    let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
    Cost {
        usd: per(usage.input_tokens, prices.input)
            + per(usage.output_tokens, prices.output)
            + per(usage.cache_read_tokens, prices.cache_read)
            + per(usage.cache_write_tokens, prices.cache_write)
            + usage.web_searches as f64 * prices.web_search,
        estimated: false,
    }
}

/// The models cox knows, later rows overriding earlier ones with the same
/// id (config over the shipped data).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog {
    models: Vec<ModelInfo>,
}

impl Catalog {
    /// A catalog of these rows.
    #[must_use]
    pub fn new(models: Vec<ModelInfo>) -> Self {
        let mut catalog = Self::default();
        for model in models {
            catalog.insert(model);
        }
        catalog
    }

    /// Adds a row, replacing one with the same id.
    pub fn insert(&mut self, model: ModelInfo) {
        match self.models.iter_mut().find(|m| m.id == model.id) {
            Some(row) => *row = model,
            None => self.models.push(model),
        }
    }

    /// The row for `id`.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<&ModelInfo> {
        self.models.iter().find(|m| m.id == id)
    }

    /// Every row, in the order they were first added.
    #[must_use]
    pub fn models(&self) -> &[ModelInfo] {
        &self.models
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(efforts: Vec<Effort>) -> ModelInfo {
        ModelInfo {
            id: "m".into(),
            provider: "p".into(),
            context_window: 200_000,
            max_output: 64_000,
            prices: Some(Prices {
                input: 3.0,
                output: 15.0,
                cache_read: 0.3,
                cache_write: 3.75,
                web_search: 0.0,
            }),
            prices_as_of: None,
            efforts,
            web_search: false,
        }
    }

    #[test]
    fn effort_is_clamped_down_then_up() {
        use Effort::*;
        let m = model(vec![Low, Medium, High]);
        assert_eq!(m.clamp_effort(Some(Xhigh)), Some(High));
        assert_eq!(m.clamp_effort(Some(Medium)), Some(Medium));
        assert_eq!(m.clamp_effort(None), None);
        let m = model(vec![High, Xhigh]);
        assert_eq!(m.clamp_effort(Some(Low)), Some(High), "below the lowest");
        assert_eq!(m.clamp_effort(Some(Medium)), Some(High));
        let m = model(vec![]);
        assert_eq!(m.clamp_effort(Some(High)), None, "the model takes none");
    }

    #[test]
    fn cost_uses_every_column_and_marks_unknown_models() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 2_000_000,
            cache_write_tokens: 0,
            web_searches: 0,
        };
        let c = cost(Some(&model(vec![])), &usage);
        assert!((c.usd - (3.0 + 1.5 + 0.6)).abs() < 1e-9);
        assert!(!c.estimated);
        let c = cost(None, &usage);
        assert_eq!(c.usd, 0.0);
        assert!(c.estimated);
    }

    #[test]
    fn later_rows_override() {
        let mut a = model(vec![]);
        let mut b = a.clone();
        b.context_window = 1_000_000;
        a.id = "a".into();
        let catalog = Catalog::new(vec![b.clone(), a, b.clone()]);
        assert_eq!(catalog.models().len(), 2);
        assert_eq!(catalog.get("m").unwrap().context_window, 1_000_000);
    }
}
