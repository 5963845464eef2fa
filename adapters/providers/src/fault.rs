//! What a provider's error says, read the same way for every wire format:
//! whether it is worth another try, and the one line a person sees.
//!
//! Gateways (LiteLLM, OpenRouter and others) relay an upstream's failure
//! in their own words: an in-stream error object whose `type` is theirs
//! (`throttling_error`) but whose `code` is the upstream's HTTP status
//! (`"429"`). So a fault is transient when either names a transient
//! condition: the status 429 or any 5xx (529 included), or, when there is
//! no numeric code, one of the types the providers use for rate limits,
//! overloads and internal errors.
//! Messages are flattened to one line (error bodies carry newlines and
//! stack traces) and capped, so a log line or a stderr line stays one line.

/// Error types and codes that mean "try again later".
const TRANSIENT: &[&str] = &[
    "rate_limit_error",
    "rate_limit_exceeded",
    "rate_limited",
    "throttling_error",
    "throttled",
    "overloaded_error",
    "overloaded",
    "api_error",
    "server_error",
    "internal_server_error",
    "internal_error",
    "service_unavailable",
    "service_unavailable_error",
    "timeout",
    "timeout_error",
];

/// The longest message kept, in characters.
const MAX_CHARS: usize = 400;

/// Whether an error with this type and code (either may be empty) is
/// worth another try. A numeric code decides alone.
#[must_use]
pub fn is_transient(kind: &str, code: &str) -> bool {
    // A status says it all: a 4xx other than 429 is not worth another
    // try, whatever the type says.
    if let Ok(status) = code.trim().parse::<u16>() {
        return status == 429 || (500..600).contains(&status);
    }
    [kind, code]
        .iter()
        .any(|word| TRANSIENT.contains(&word.trim().to_ascii_lowercase().as_str()))
}

/// `text` on one line: every run of whitespace (newlines included) becomes
/// one space, the ends are trimmed, and more than [`MAX_CHARS`] characters
/// are cut with an ellipsis.
#[must_use]
pub fn one_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len().min(MAX_CHARS * 4));
    let mut chars = 0;
    for word in text.split_whitespace() {
        if chars > 0 {
            line.push(' ');
            chars += 1;
        }
        for c in word.chars() {
            if chars >= MAX_CHARS {
                return format!("{}…", line.trim_end());
            }
            line.push(c);
            chars += 1;
        }
    }
    line
}

/// Whether an error field says something: gateways fill absent ones with
/// the text `None` or `null`.
#[must_use]
pub fn present(field: &str) -> bool {
    !matches!(field.trim(), "" | "None" | "null")
}

/// A JSON `code` as text: `"429"`, `429` and `"rate_limit_exceeded"` alike.
#[must_use]
pub fn code_text(code: &serde_json::Value) -> String {
    match code {
        serde_json::Value::String(code) => code.trim().to_owned(),
        serde_json::Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn statuses_and_types_alike() {
        for (kind, code) in [
            ("throttling_error", "429"),
            ("", "429"),
            ("None", "500"),
            ("", "529"),
            ("", "503"),
            ("rate_limit_exceeded", ""),
            ("overloaded_error", ""),
            ("Internal_Server_Error", ""),
            ("whatever", "rate_limit_exceeded"),
        ] {
            assert!(is_transient(kind, code), "{kind:?} {code:?}");
        }
        for (kind, code) in [
            ("api_error", "400"),
            ("server_error", "401"),
            ("invalid_request_error", "400"),
            ("authentication_error", "401"),
            ("", "404"),
            ("", ""),
            ("", "4290"),
            ("context_length_exceeded", ""),
        ] {
            assert!(!is_transient(kind, code), "{kind:?} {code:?}");
        }
    }

    #[test]
    fn messages_become_one_capped_line() {
        assert_eq!(
            one_line("  litellm.RateLimitError:\n  slow down\r\n\tplease  "),
            "litellm.RateLimitError: slow down please"
        );
        let long = "word ".repeat(200);
        let line = one_line(&long);
        assert!(line.ends_with('…'));
        assert!(line.chars().count() <= MAX_CHARS + 1);
        assert!(!line.contains('\n'));
        // A word ending exactly at the cap, then more: still capped.
        let exact = format!("{} more words", "x".repeat(MAX_CHARS));
        assert_eq!(one_line(&exact), format!("{}…", "x".repeat(MAX_CHARS)));
        let fits = "é".repeat(MAX_CHARS);
        assert_eq!(one_line(&fits), fits, "nothing cut when it fits");
    }

    #[test]
    fn codes_read_as_text() {
        assert_eq!(code_text(&json!("429")), "429");
        assert_eq!(code_text(&json!(503)), "503");
        assert_eq!(code_text(&json!(null)), "");
    }
}
