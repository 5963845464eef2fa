//! `cox_core::redact::scrub`: each shape and its near misses, then three
//! properties over generated text, checked against an independent oracle
//! (the regex crate, which the engine itself does not use):
//! no secret survives, text without a shape comes back borrowed and
//! unchanged, and scrubbing twice changes nothing more.

use std::borrow::Cow;

use cox_core::redact::{REDACTED, may_hold_secret, rollout_copy, scrub};
use cox_protocol::types::{Event, ToolResult};
use proptest::prelude::*;
use regex::Regex;

/// One regex per shape; a match anywhere in scrubbed text is a leak. The
/// word-start rules are spelled as "start or a non-alphanumeric before",
/// since the regex crate has no look-behind.
fn leaks(text: &str) -> Vec<String> {
    let shapes = [
        r"(?:^|[^A-Za-z0-9])sk-[A-Za-z0-9_-]{16}",
        r"(?i:(?:^|[^a-z0-9])bearer)[ \t]+[A-Za-z0-9._~+/=-]{8}",
        r"AKIA[A-Z0-9]{16}",
        r"ghp_[A-Za-z0-9]{30}",
        r"-----BEGIN [^\n]*?-----",
    ];
    shapes
        .iter()
        .flat_map(|shape| {
            Regex::new(shape)
                .unwrap()
                .find_iter(text)
                .map(|m| m.as_str().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn assert_borrowed(text: &str) {
    let out = scrub(text);
    assert!(
        matches!(out, Cow::Borrowed(_)),
        "{text:?} was changed to {out:?}"
    );
    assert_eq!(out, text);
}

// ---- each shape ----

#[test]
fn api_keys_are_redacted_whole() {
    for key in [
        "sk-abcdefghijklmnop",
        "sk-ant-api03-AbCdEf_0123456789-xyz",
        "sk-proj-0123456789abcdefABCDEF",
    ] {
        assert_eq!(scrub(key), REDACTED, "{key}");
        assert_eq!(
            scrub(&format!("export OPENAI_API_KEY={key}\n")),
            "export OPENAI_API_KEY=«redacted»\n"
        );
        assert_eq!(scrub(&format!("\"{key}\"")), "\"«redacted»\"");
    }
}

#[test]
fn bearer_tokens_keep_the_word_and_lose_the_token() {
    assert_eq!(
        scrub("Authorization: Bearer eyJhbGciOi.J9.abc_def"),
        "Authorization: Bearer «redacted»"
    );
    assert_eq!(
        scrub("authorization: bearer\t\tabc+/=~-.12345"),
        "authorization: bearer\t\t«redacted»"
    );
    assert_eq!(scrub("BEARER 12345678;"), "BEARER «redacted»;");
}

#[test]
fn aws_access_key_ids_are_redacted() {
    assert_eq!(
        scrub("aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"),
        "aws_access_key_id = «redacted»\n"
    );
    // A longer run goes whole: no tail is left behind.
    assert_eq!(scrub("xAKIAIOSFODNN7EXAMPLE42"), "x«redacted»");
}

#[test]
fn github_tokens_are_redacted() {
    let token = format!("ghp_{}", "a1B2".repeat(9));
    assert_eq!(
        scrub(&format!("GH_TOKEN={token} gh pr list")),
        "GH_TOKEN=«redacted» gh pr list"
    );
}

#[test]
fn pem_blocks_are_redacted_from_begin_through_end() {
    let text = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nq2+abc==\n-----END RSA PRIVATE KEY-----\nafter\n";
    assert_eq!(scrub(text), "key:\n«redacted»\nafter\n");
    // As a JSON file holds one: the line breaks are escapes.
    let json = r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----\n", "x": 1}"#;
    assert_eq!(scrub(json), r#"{"private_key": "«redacted»\n", "x": 1}"#);
}

#[test]
fn a_pem_block_ends_at_the_end_with_its_own_label() {
    let text = "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END CERTIFICATE-----\nBBBB\n-----END OPENSSH PRIVATE KEY-----\ntail";
    assert_eq!(scrub(text), "«redacted»\ntail");
}

#[test]
fn an_unterminated_pem_block_is_redacted_to_the_end() {
    assert_eq!(
        scrub("see\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\nmore lines"),
        "see\n«redacted»"
    );
}

#[test]
fn several_secrets_and_adjacent_ones() {
    let text = format!(
        "a sk-{k} b Bearer {t} c AKIAABCDEFGHIJKLMNOP d ghp_{g}",
        k = "x".repeat(20),
        t = "t".repeat(10),
        g = "g".repeat(30)
    );
    assert_eq!(
        scrub(&text),
        "a «redacted» b Bearer «redacted» c «redacted» d «redacted»"
    );
    // A key right behind another secret is still a secret.
    let glued = format!("AKIAABCDEFGHIJKLMNOPsk-{}", "k".repeat(16));
    assert_eq!(scrub(&glued), "«redacted»«redacted»");
}

// ---- near misses ----

#[test]
fn near_misses_are_left_alone() {
    for text in [
        "",
        "plain text, nothing to see",
        "task-1234 and disk-usage and ask-me-anything-please-now",
        "mask-wearing-recommendations-2024",
        "sk-short",
        "sk-abcdefghijklmno",             // 15 chars after sk-
        "Bearer",                         // the word alone
        "Bearer abc1234",                 // 7 chars
        "the bearer of bad news",         // short words
        "Bearer\nabcdefghijkl",           // a line break is not the gap
        "unbearer abcdefghijkl",          // not a word of its own
        "AKIAIOSFODNN7EXAMPL",            // 15 after AKIA
        "akiaiosfodnn7example",           // lower case
        "ghp_abcdefghijklmnopqrstuvwxyz", // 26
        "-----BEGIN",
        "-----BEGIN RSA PRIVATE KEY\n-----",
        "-----END RSA PRIVATE KEY-----",
        "naïve café — «quoted» ✓",
    ] {
        assert_borrowed(text);
    }
}

#[test]
fn only_scrubbed_events_get_a_rollout_copy() {
    let secret = format!("token ghp_{}", "Z".repeat(36));
    let done = Event::ToolCallDone {
        call_id: "c1".into(),
        result: ToolResult::ok(secret.clone()).with_bytes(7),
    };
    let Some(Event::ToolCallDone { call_id, result }) = rollout_copy(&done) else {
        panic!("the result holds a secret");
    };
    assert_eq!(call_id.as_str(), "c1");
    assert_eq!(result.visible, "token «redacted»");
    assert_eq!(result.bytes, Some(7), "only the text changes");
    assert!(
        rollout_copy(&Event::TextDelta {
            text: format!("Bearer {}", "x".repeat(12))
        })
        .is_some()
    );
    assert!(
        rollout_copy(&Event::ToolCallOutput {
            call_id: "c1".into(),
            chunk: "all fine".into()
        })
        .is_none()
    );
    // Thinking is model input: it is not scrubbed for the rollout.
    assert!(rollout_copy(&Event::ThinkingDelta { text: secret }).is_none());
}

// ---- properties ----

/// One secret of some shape, and the part of it that must not survive
/// (the token alone for `Bearer`, whose word stays).
fn secret() -> impl Strategy<Value = (String, String)> {
    let key = ("sk-|sk-ant-|sk-proj-", "[A-Za-z0-9_-]{16,60}")
        .prop_map(|(p, body)| (format!("{p}{body}"), body));
    let bearer = (
        "Bearer|bearer|BEARER",
        "[ \t]{1,3}",
        "[A-Za-z0-9._~+/=-]{8,60}",
    )
        .prop_map(|(word, gap, token)| (format!("{word}{gap}{token}"), token));
    let aws = "[A-Z0-9]{16}".prop_map(|body| (format!("AKIA{body}"), format!("AKIA{body}")));
    let github =
        "[A-Za-z0-9]{30,40}".prop_map(|body| (format!("ghp_{body}"), format!("ghp_{body}")));
    let pem = (
        "RSA PRIVATE KEY|PRIVATE KEY|OPENSSH PRIVATE KEY|EC PRIVATE KEY",
        "[A-Za-z0-9+/=\n]{20,200}",
        any::<bool>(),
    )
        .prop_map(|(label, body, closed)| {
            let end = if closed {
                format!("\n-----END {label}-----")
            } else {
                String::new()
            };
            let block = format!("-----BEGIN {label}-----\n{body}{end}");
            (block, body)
        });
    prop_oneof![key, bearer, aws, github, pem]
}

/// What may sit right around a secret: never a letter or digit on the
/// left (a key glued to a word is not a key), anything on the right.
fn separator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![" ", "\n", "\t", "=", ":", "\"", "'", "(", ",", ""])
}

/// Text that cannot hold a shape: no `s`, `b`, capitals, `_` or `-` in the
/// alphabet, and prose pieces that come close.
fn clean_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-rt-z0-9 .,:;\n\t]{0,40}",
        prop::sample::select(vec![
            "ask-me anything",
            "disk-space is low",
            "task-1234 is done",
            "use a Bearer token.",
            "the bearer of bad news",
            "Bearer\n",
            "sk-short",
            "AKIA1234",
            "ghp_abc",
            "-----BEGIN alone\n",
            "«redacted»",
            "naïve café ✓",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.join(" "))
}

/// Secrets, clean text and arbitrary strings, glued every which way
/// (adjacent secrets included).
fn mixed_text() -> impl Strategy<Value = String> {
    let part = prop_oneof![any::<String>(), secret().prop_map(|(s, _)| s), clean_text()];
    (
        prop::collection::vec(part, 0..6),
        prop::collection::vec(separator(), 6),
    )
        .prop_map(|(parts, glue)| {
            parts
                .iter()
                .zip(&glue)
                .flat_map(|(part, glue)| [part.as_str(), *glue])
                .collect()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn no_secret_survives(
        before in any::<String>(),
        left in separator(),
        (secret, core) in secret(),
        right in separator(),
        after in any::<String>(),
    ) {
        // Keep the left neighbour of the secret a non-alphanumeric.
        let left = if left.is_empty() && before.ends_with(|c: char| c.is_ascii_alphanumeric()) {
            " "
        } else {
            left
        };
        let text = format!("{before}{left}{secret}{right}{after}");
        let out = scrub(&text);
        prop_assert!(matches!(out, Cow::Owned(_)));
        prop_assert!(!out.contains(core.as_str()), "{core:?} survived in {out:?}");
        prop_assert_eq!(leaks(&out), Vec::<String>::new());
    }

    #[test]
    fn arbitrary_text_leaves_nothing_shaped(text in any::<String>()) {
        prop_assert_eq!(leaks(&scrub(&text)), Vec::<String>::new());
    }

    #[test]
    fn text_without_a_shape_comes_back_borrowed(text in clean_text()) {
        prop_assert_eq!(leaks(&text), Vec::<String>::new(), "the generator made a shape");
        let out = scrub(&text);
        prop_assert!(matches!(out, Cow::Borrowed(_)), "{:?} became {:?}", text, out);
        prop_assert_eq!(out, text.as_str());
    }

    #[test]
    fn scrubbing_twice_changes_nothing_more(text in mixed_text()) {
        let once = scrub(&text).into_owned();
        let twice = scrub(&once);
        prop_assert!(matches!(twice, Cow::Borrowed(_)), "{:?} -> {:?}", once, twice);
        prop_assert_eq!(twice, once.as_str());
    }

    #[test]
    fn the_cheap_test_never_misses_a_secret_even_in_json(text in mixed_text()) {
        if matches!(scrub(&text), Cow::Owned(_)) {
            prop_assert!(may_hold_secret(text.as_bytes()));
            let json = serde_json::to_string(&text).unwrap();
            prop_assert!(may_hold_secret(json.as_bytes()), "{}", json);
        }
    }
}

#[test]
fn what_a_hook_printed_reaches_the_rollout_scrubbed() {
    use cox_protocol::hook::{HookEvent, HookOutcome};
    let event = Event::HookRan {
        hook: "user:SessionStart:1".into(),
        event: HookEvent::SessionStart,
        duration_ms: 3,
        outcome: HookOutcome::Ok,
        message: None,
        context: Some("key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789".into()),
        output: Some("plain".into()),
    };
    let Some(Event::HookRan {
        context, output, ..
    }) = cox_core::redact::rollout_copy(&event)
    else {
        panic!("a secret in a hook's context must be scrubbed");
    };
    assert_eq!(context.as_deref(), Some("key is «redacted»"));
    assert_eq!(output.as_deref(), Some("plain"));
}
