use std::time::Instant;
const TYPICAL: &str = "cd src && git status --short | grep '\\.rs$' | head -n 20 && cargo test -p cox-core -- --nocapture";
fn main() {
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
    let n = 20000;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(p.parse(TYPICAL, None));
    }
    println!("parse only: {:?}", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        let tree = p.parse(TYPICAL, None).unwrap();
        let mut c = tree.walk();
        let mut k = 0;
        loop {
            k += 1;
            if c.goto_first_child() {
                continue;
            }
            while !c.goto_next_sibling() {
                if !c.goto_parent() {
                    break;
                }
            }
            if c.depth() == 0 {
                break;
            }
        }
        std::hint::black_box(k);
    }
    println!("parse+cursor walk: {:?}", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(cox_bash::split(TYPICAL));
    }
    println!("split: {:?}", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
        std::hint::black_box(p);
    }
    println!("parser creation: {:?}", t.elapsed() / n);
}
