use std::ops::ControlFlow;
fn main() {
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
    let inputs: Vec<(&str, String)> = vec![
        ("typical", "cd src && git status --short | grep '\\.rs$' | head -n 20 && cargo test -p cox-core -- --nocapture".into()),
        ("chain", "ls -la && ".repeat(10_000) + "true"),
        ("nul1k", "\0".repeat(1000)),
        ("nul10k", "\0".repeat(10000)),
        ("subst", "$(".repeat(50_000)),
        ("quotes", "'".repeat(100_001)),
        ("mixed", "a\u{0}b; c\u{7f}d; é日本 | 🦀".repeat(3_000)),
        ("evals", "eval ".repeat(20_000)),
        ("shc", "sh -c \"".repeat(10_000)),
        ("script", include_str!("../src/walk.rs").to_string()),
        ("bracey", "{ ( [ $( ` ' \" ".repeat(5000)),
    ];
    for (name, s) in inputs {
        let mut calls = 0u64;
        let mut cb = |_: &tree_sitter::ParseState| {
            calls += 1;
            ControlFlow::Continue(())
        };
        let t = std::time::Instant::now();
        let bytes = s.as_bytes();
        let tree = p.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or_default(),
            None,
            Some(tree_sitter::ParseOptions::new().progress_callback(&mut cb)),
        );
        println!(
            "{name}: len {} calls {} ({:.3}/byte) {:?} ok={}",
            s.len(),
            calls,
            calls as f64 / s.len() as f64,
            t.elapsed(),
            tree.is_some()
        );
    }
}
