fn main() {
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
    for c in [
        '\u{1}', '\r', '\u{7f}', '\u{feff}', '\u{2028}', 'é', '\u{b}', '\u{c}', '\u{1b}', '\\',
        '$', '<', '`', '\u{0}',
    ] {
        for pat in [
            c.to_string(),
            format!("a{c}"),
            format!("<<{c}\n"),
            format!("$'{c}"),
        ] {
            let s = pat.repeat(5000);
            let t = std::time::Instant::now();
            let tree = p.parse(&s, None);
            let e = t.elapsed();
            if e.as_millis() > 20 {
                println!("{:?}: {:?} ok={}", pat, e, tree.is_some());
            }
        }
    }
    println!("done");
}
