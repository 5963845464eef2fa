const TYPICAL: &str = "cd src && git status --short | grep '\\.rs$' | head -n 20 && cargo test -p cox-core -- --nocapture";
fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
    for _ in 0..2000 {
        if mode == "parse" {
            std::hint::black_box(p.parse(std::hint::black_box(TYPICAL), None));
        } else {
            std::hint::black_box(cox_bash::split(std::hint::black_box(TYPICAL)));
        }
    }
}
