//! Images and files in: `cox run --image FILE`, `@path` in a prompt, and
//! the request bytes both wire formats carry them in (loopback servers);
//! a mention the rules refuse is not attached, and says so; a file that is
//! not the image its name says is a one-line error before anything runs.

mod common;

use common::{Env, anthropic_final_text, openai_final_text, serve, stderr};
use serde_json::Value;

/// A 1×1 PNG: within every limit, so it is sent as its own bytes.
const DOT: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0xf8, 0xcf, 0x50,
    0x0f, 0x00, 0x03, 0x86, 0x01, 0x80, 0x5a, 0x34, 0x7d, 0x6b, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// The same bytes as base64 (what the request must carry).
const DOT_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn anthropic_run(env: &Env, args: &[&str]) -> (std::process::Output, Vec<String>) {
    let (url, server) = serve(vec![("200 OK", anthropic_final_text())]);
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "--output-format", "json"])
        .args(args)
        .output()
        .unwrap();
    (out, server.join().unwrap())
}

#[test]
fn an_image_flag_sends_the_image_in_the_anthropic_format() {
    let env = Env::new();
    std::fs::write(env.work.path().join("dot.png"), DOT).unwrap();
    let (out, bodies) = anthropic_run(&env, &["-p", "what is this", "--image", "dot.png"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body: Value = serde_json::from_str(&bodies[0]).unwrap();
    let content = &body["messages"][0]["content"];
    assert_eq!(content[0]["type"], "text");
    assert_eq!(content[0]["text"], "what is this");
    assert_eq!(content[1]["type"], "image");
    assert_eq!(
        content[1]["source"],
        serde_json::json!({"type": "base64", "media_type": "image/png", "data": DOT_BASE64})
    );
}

#[test]
fn a_mentioned_image_and_text_file_are_attached_and_a_refused_one_is_not() {
    let env = Env::new();
    std::fs::write(env.work.path().join("dot.png"), DOT).unwrap();
    std::fs::write(env.work.path().join("notes.txt"), "the cache is cold\n").unwrap();
    std::fs::write(env.work.path().join("secret.txt"), "hunter2\n").unwrap();
    let (out, bodies) = anthropic_run(
        &env,
        &[
            "-p",
            "see @dot.png, @notes.txt and @secret.txt; ping @someone",
            "--disallowedTools",
            "Read(secret.txt)",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body: Value = serde_json::from_str(&bodies[0]).unwrap();
    let content = body["messages"][0]["content"].as_array().unwrap();
    let text = content[0]["text"].as_str().unwrap();
    assert!(text.starts_with("see @dot.png, @notes.txt and @secret.txt; ping @someone"));
    assert!(
        text.contains("<file path=\"notes.txt\">\nthe cache is cold\n"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "a denied file was attached");
    assert_eq!(content[1]["source"]["data"], DOT_BASE64);
    assert!(
        stderr(&out).contains("@secret.txt was not attached"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_openai_compatible_server_is_told_of_the_image_instead() {
    let env = Env::new();
    std::fs::write(env.work.path().join("dot.png"), DOT).unwrap();
    let (url, server) = serve(vec![("200 OK", openai_final_text())]);
    let out = env
        .cox()
        .env("OPENAI_API_KEY", "k")
        .env("OPENAI_BASE_URL", format!("{url}/v1"))
        .env("COX_PROVIDER", "openai")
        .args([
            "run",
            "-p",
            "what is this",
            "--image",
            "dot.png",
            "--model",
            "local-model",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = server.join().unwrap();
    let body: Value = serde_json::from_str(&bodies[0]).unwrap();
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    let text = user["content"].as_str().unwrap();
    assert!(
        text.starts_with("what is this\n[1 image(s) came with this message"),
        "{text}"
    );
    assert!(
        !bodies[0].contains(DOT_BASE64),
        "no image bytes to a text-only server"
    );
}

#[test]
fn a_file_that_is_not_the_image_its_name_says_is_refused_before_anything_runs() {
    let env = Env::new();
    std::fs::write(env.work.path().join("fake.png"), "just text\n").unwrap();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("hello"))
        .args(["run", "-p", "what is this", "--image", "fake.png"])
        .output()
        .unwrap();
    common::assert_one_line_error(
        &out,
        "--image fake.png: fake.png is not a PNG, JPEG, GIF or WebP image",
    );
    assert!(env.rollouts().is_empty(), "no session started");
}

#[test]
fn image_is_for_headless_runs() {
    let env = Env::new();
    let out = env.cox().args(["--image", "x.png"]).output().unwrap();
    common::assert_one_line_error(&out, "--image is for headless runs");
}

#[test]
fn read_shows_an_image_to_the_model_over_the_binary() {
    let env = Env::new();
    std::fs::write(env.work.path().join("dot.png"), DOT).unwrap();
    std::fs::write(env.work.path().join("fake.png"), "not an image\n").unwrap();
    let scenario = env.work.path().join("read_image.toml");
    std::fs::write(
        &scenario,
        format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\ninput = {{ path = \"dot.png\" }}\n\n\
             [[turn]]\n[[turn.tool_call]]\nname = \"read\"\ninput = {{ path = \"fake.png\" }}\n\
             [turn.expect]\ntool_result_contains = \"[image dot.png: 1×1 PNG\"\n\
             request_contains = [\"{DOT_BASE64}\"]\n\n\
             [[turn]]\ntext = \"A dot.\"\n[turn.expect]\n\
             tool_result_contains = \"fake.png is not a PNG, JPEG, GIF or WebP image\"\n"
        ),
    )
    .unwrap();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "look at the dot", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["result"], "A dot.");
}

#[test]
fn an_ask_rule_on_read_and_a_pipe_keep_a_mention_out_and_nothing_hangs() {
    let env = Env::new();
    std::fs::write(env.work.path().join("notes.txt"), "the cache is cold\n").unwrap();
    let fifo = env.work.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // A pipe would never end: not attached, and the run goes on.
    let (out, _) = anthropic_run(&env, &["-p", "see @pipe"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("@pipe was not attached: it is not a regular file"),
        "{err}"
    );
    // A bare `Read` ask rule asks for every read: nothing is attached
    // without asking.
    std::fs::write(
        env.home.path().join("config.toml"),
        "[permissions]\nask = [\"Read\"]\n",
    )
    .unwrap();
    let (out, bodies) = anthropic_run(&env, &["-p", "see @notes.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !bodies[0].contains("the cache is cold"),
        "an ask rule covers it"
    );
    assert!(
        stderr(&out).contains("@notes.txt was not attached"),
        "{}",
        stderr(&out)
    );
}
