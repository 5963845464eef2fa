//! The tier router over real providers on loopback: each tier reaches its
//! own provider and model, the effort is clamped to the model's catalog
//! row, the output limit capped, and the stream names what served it.

mod support;

use std::sync::Arc;

use cox_protocol::provider::{
    Effort, Message, ProviderError, Request, StreamEvent, SystemParts, Tier,
};
use cox_protocol::{CancelToken, Provider};
use cox_providers::router::Route;
use cox_providers::{AnthropicProvider, OpenAiProvider, Router, catalog};
use futures::StreamExt;
use futures::future::Either;
use support::{Answer, anthropic_hello, openai_hello, serve};

/// Two wire formats behind one type, as a binary would have them.
enum Either2 {
    Anthropic(AnthropicProvider),
    OpenAi(OpenAiProvider),
}

impl Provider for Either2 {
    fn name(&self) -> &str {
        match self {
            Either2::Anthropic(p) => p.name(),
            Either2::OpenAi(p) => p.name(),
        }
    }
    fn model(&self) -> &str {
        match self {
            Either2::Anthropic(p) => p.model(),
            Either2::OpenAi(p) => p.model(),
        }
    }
    fn stream(
        &self,
        request: Request,
        cancel: CancelToken,
    ) -> impl futures::Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static {
        match self {
            Either2::Anthropic(p) => Either::Left(p.stream(request, cancel)),
            Either2::OpenAi(p) => Either::Right(p.stream(request, cancel)),
        }
    }
}

fn request(tier: Tier, effort: Option<Effort>) -> Request {
    Request {
        model: "whatever the session started with".into(),
        tier,
        effort,
        model_override: None,
        system: SystemParts {
            prompt: "You are cox.".into(),
            ..SystemParts::default()
        },
        tools: Vec::new(),
        messages: std::sync::Arc::new(vec![std::sync::Arc::new(Message::user_text("hi"))]),
        max_output_tokens: 100_000,
    }
}

#[tokio::test]
async fn each_tier_reaches_its_own_provider_and_model() {
    let anthropic = serve(vec![
        Answer::sse(anthropic_hello()),
        Answer::sse(anthropic_hello()),
    ])
    .await;
    let openai = serve(vec![Answer::sse(openai_hello())]).await;
    let catalog = catalog::shipped();
    let claude = Arc::new(Either2::Anthropic(
        AnthropicProvider::new(&anthropic.url, "k", "claude-sonnet-5").unwrap(),
    ));
    let gpt = Arc::new(Either2::OpenAi(
        OpenAiProvider::new(&openai.url, None, "gpt-5-mini").unwrap(),
    ));
    let route = |provider: &Arc<Either2>, model: &str, effort| Route {
        provider: Arc::clone(provider),
        model: model.to_owned(),
        effort,
        info: catalog.get(model).cloned(),
    };
    let router = Router::new(
        route(&gpt, "gpt-5-mini", None),
        route(&claude, "claude-sonnet-5", Some(Effort::Medium)),
        route(&claude, "claude-opus-4-5", None),
        Tier::Code,
    );
    assert_eq!(
        (router.name(), router.model()),
        ("anthropic", "claude-sonnet-5")
    );

    let cheap: Vec<_> = router
        .stream(request(Tier::Cheap, None), CancelToken::new())
        .collect()
        .await;
    assert_eq!(
        cheap[0],
        Ok(StreamEvent::Routed {
            provider: "openai".into(),
            model: "gpt-5-mini".into(),
            effort: None
        })
    );
    assert!(matches!(cheap.last(), Some(Ok(StreamEvent::Done(_)))));

    let code: Vec<_> = router
        .stream(request(Tier::Code, None), CancelToken::new())
        .collect()
        .await;
    assert!(
        matches!(
            &code[0],
            Ok(StreamEvent::Routed {
                effort: Some(Effort::Medium),
                ..
            })
        ),
        "the tier's own effort when the request names none"
    );

    // xhigh asked of a model that stops at high: clamped down.
    let think: Vec<_> = router
        .stream(
            request(Tier::Think, Some(Effort::Xhigh)),
            CancelToken::new(),
        )
        .collect()
        .await;
    assert_eq!(
        think[0],
        Ok(StreamEvent::Routed {
            provider: "anthropic".into(),
            model: "claude-opus-4-5".into(),
            effort: Some(Effort::High)
        })
    );

    let sent_openai = openai.bodies();
    assert_eq!(sent_openai[0]["model"], "gpt-5-mini");
    assert_eq!(
        sent_openai[0]["max_tokens"], 100_000,
        "under gpt-5-mini's 128k"
    );
    assert!(sent_openai[0].get("reasoning_effort").is_none());
    let sent_anthropic = anthropic.bodies();
    assert_eq!(sent_anthropic[0]["model"], "claude-sonnet-5");
    assert_eq!(sent_anthropic[0]["output_config"]["effort"], "medium");
    assert_eq!(sent_anthropic[1]["model"], "claude-opus-4-5");
    assert_eq!(sent_anthropic[1]["output_config"]["effort"], "high");
    assert_eq!(
        sent_anthropic[1]["max_tokens"], 64_000,
        "capped at the model's output limit"
    );
}

#[tokio::test]
async fn a_model_without_a_row_gets_the_effort_as_asked() {
    let openai = serve(vec![Answer::sse(openai_hello())]).await;
    let local = Arc::new(Either2::OpenAi(
        OpenAiProvider::new(&openai.url, None, "qwen3-coder").unwrap(),
    ));
    let route = || Route {
        provider: Arc::clone(&local),
        model: "qwen3-coder".into(),
        effort: None,
        info: None,
    };
    let router = Router::new(route(), route(), route(), Tier::Code);
    let events: Vec<_> = router
        .stream(request(Tier::Code, Some(Effort::Low)), CancelToken::new())
        .collect()
        .await;
    assert!(matches!(events.last(), Some(Ok(StreamEvent::Done(_)))));
    let body = &openai.bodies()[0];
    assert_eq!(body["reasoning_effort"], "low");
    assert_eq!(body["max_tokens"], 100_000);
}

#[tokio::test]
async fn a_model_the_person_switched_to_replaces_the_tiers() {
    let anthropic = serve(vec![Answer::sse(anthropic_hello())]).await;
    let claude = Arc::new(Either2::Anthropic(
        AnthropicProvider::new(&anthropic.url, "k", "claude-sonnet-5").unwrap(),
    ));
    let catalog = catalog::shipped();
    let route = || Route {
        provider: Arc::clone(&claude),
        model: "claude-sonnet-5".into(),
        effort: None,
        info: catalog.get("claude-sonnet-5").cloned(),
    };
    let router =
        Router::new(route(), route(), route(), Tier::Code).with_catalog(catalog::shipped());
    let mut req = request(Tier::Code, Some(Effort::Xhigh));
    req.model_override = Some("claude-opus-4-5".into());
    let events: Vec<_> = router.stream(req, CancelToken::new()).collect().await;
    assert!(
        matches!(&events[0], Ok(StreamEvent::Routed { model, .. }) if model == "claude-opus-4-5")
    );
    assert_eq!(anthropic.bodies()[0]["model"], "claude-opus-4-5");
}

#[test]
fn the_cheap_tier_counts_as_its_own_only_on_another_model_or_provider() {
    let claude = Arc::new(Either2::Anthropic(
        AnthropicProvider::new("http://127.0.0.1:9", "k", "claude-sonnet-5").unwrap(),
    ));
    let local = Arc::new(Either2::OpenAi(
        OpenAiProvider::new("http://127.0.0.1:9/v1", None, "claude-sonnet-5").unwrap(),
    ));
    let route = |provider: &Arc<Either2>, model: &str| Route {
        provider: Arc::clone(provider),
        model: model.into(),
        effort: None,
        info: None,
    };
    let main = || route(&claude, "claude-sonnet-5");
    let one_model = Router::new(main(), main(), main(), Tier::Code);
    assert!(!one_model.has_cheap_tier(), "one model serves every tier");
    let haiku = Router::new(
        route(&claude, "claude-haiku-4-5"),
        main(),
        main(),
        Tier::Code,
    );
    assert!(haiku.has_cheap_tier());
    let elsewhere = Router::new(route(&local, "claude-sonnet-5"), main(), main(), Tier::Code);
    assert!(elsewhere.has_cheap_tier(), "another provider");
    // In architect mode the main tier is think: cheap is compared with it.
    let architect = Router::new(
        main(),
        main(),
        route(&claude, "claude-opus-4-5"),
        Tier::Think,
    );
    assert!(architect.has_cheap_tier());
}
