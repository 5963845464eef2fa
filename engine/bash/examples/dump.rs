fn dump(n: tree_sitter::Node<'_>, src: &[u8], depth: usize, field: Option<&str>) {
    let text = n.utf8_text(src).unwrap_or("?");
    let short: String = text.chars().take(40).collect();
    println!(
        "{}{}{}{} {:?}",
        "  ".repeat(depth),
        field.map(|f| format!("{f}: ")).unwrap_or_default(),
        n.kind(),
        if n.is_missing() { " MISSING" } else { "" },
        short
    );
    let mut c = n.walk();
    for (i, ch) in n.children(&mut c).enumerate() {
        dump(ch, src, depth + 1, n.field_name_for_child(i as u32));
    }
}
fn main() {
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
    for line in std::env::args().skip(1) {
        println!("=== {line:?}");
        let t = p.parse(&line, None).unwrap();
        dump(t.root_node(), line.as_bytes(), 0, None);
    }
}
