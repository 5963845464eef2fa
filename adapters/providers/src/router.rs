//! The tier router: cheap, code and think each map to a provider and a
//! model, and the router is itself a [`Provider`], so the session stays
//! generic over one provider type.
//!
//! For each call it takes the route of the request's tier, puts the route's
//! model in the request, clamps the effort (the request's, else the
//! route's) to what the model's catalog row supports, and caps the output
//! limit at the row's. A model without a row is sent the effort as asked.
//! The stream it returns starts with [`StreamEvent::Routed`], so the usage
//! that follows is booked against what actually served the call.

use std::sync::Arc;

use cox_protocol::catalog::{Catalog, ModelInfo};
use cox_protocol::provider::{Effort, ProviderError, Request, StreamEvent, Tier};
use cox_protocol::{CancelToken, Provider};
use futures::{Stream, StreamExt};

/// Where one tier's calls go.
#[derive(Debug)]
pub struct Route<P> {
    pub provider: Arc<P>,
    pub model: String,
    /// The effort this tier asks for when the request names none.
    pub effort: Option<Effort>,
    /// The model's catalog row, when cox has one.
    pub info: Option<ModelInfo>,
}

impl<P> Clone for Route<P> {
    fn clone(&self) -> Self {
        Self {
            provider: Arc::clone(&self.provider),
            model: self.model.clone(),
            effort: self.effort,
            info: self.info.clone(),
        }
    }
}

/// Three routes, and the tier main turns run on.
#[derive(Debug)]
pub struct Router<P> {
    cheap: Route<P>,
    code: Route<P>,
    think: Route<P>,
    main: Tier,
    /// Rows for a model the person switches to (`/model`).
    catalog: Catalog,
}

impl<P: Provider> Router<P> {
    /// A router over these routes; `main` is the tier whose model
    /// [`Provider::model`] reports (`code`, or `think` in architect mode).
    #[must_use]
    pub fn new(cheap: Route<P>, code: Route<P>, think: Route<P>, main: Tier) -> Self {
        Self {
            cheap,
            code,
            think,
            main,
            catalog: Catalog::default(),
        }
    }

    /// The same router, clamping and capping a model switched to with
    /// these rows.
    #[must_use]
    pub fn with_catalog(mut self, catalog: Catalog) -> Self {
        self.catalog = catalog;
        self
    }

    /// The route a tier's calls take.
    #[must_use]
    pub fn route(&self, tier: Tier) -> &Route<P> {
        match tier {
            Tier::Cheap => &self.cheap,
            Tier::Code => &self.code,
            Tier::Think => &self.think,
        }
    }

    /// The request as `route` sends it, and the effort it carries.
    fn prepare(&self, route: &Route<P>, mut request: Request) -> Request {
        // A model the person switched to replaces the tier's; its row, when
        // the catalog has one, clamps and caps it as the tier's would.
        let info = match request.model_override.take() {
            Some(model) if model != route.model => {
                let info = self.catalog.get(&model);
                request.model = model;
                info
            }
            _ => {
                request.model.clone_from(&route.model);
                route.info.as_ref()
            }
        };
        let asked = request.effort.or(route.effort);
        request.effort = match info {
            Some(info) => info.clamp_effort(asked),
            None => asked,
        };
        if let Some(info) = info {
            request.max_output_tokens = request.max_output_tokens.min(info.max_output);
        }
        request
    }
}

impl<P: Provider> Provider for Router<P> {
    fn name(&self) -> &str {
        self.route(self.main).provider.name()
    }

    fn model(&self) -> &str {
        &self.route(self.main).model
    }

    /// Whether the cheap route goes to another model, or another provider,
    /// than the main tier's.
    fn has_cheap_tier(&self) -> bool {
        let main = self.route(self.main);
        !Arc::ptr_eq(&self.cheap.provider, &main.provider) || self.cheap.model != main.model
    }

    fn tier_model(&self, tier: Tier) -> Option<&str> {
        Some(&self.route(tier).model)
    }

    fn stream(
        &self,
        request: Request,
        cancel: CancelToken,
    ) -> impl Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static {
        let route = self.route(request.tier);
        let request = self.prepare(route, request);
        let routed = StreamEvent::Routed {
            provider: route.provider.name().to_owned(),
            model: request.model.clone(),
            effort: request.effort,
        };
        futures::stream::once(std::future::ready(Ok(routed)))
            .chain(route.provider.stream(request, cancel))
    }
}
