//! Prints tree-sitter-bash's syntax tree for a line, and the split of it:
//! `cargo run -p cox-bash --example tree -- 'echo | nohup 2>/dev/null rm x'`.
//! A debugging aid for the walk: what the grammar made of the line.

fn main() {
    let line = std::env::args().nth(1).unwrap_or_default();
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        eprintln!("tree-sitter-bash did not load");
        std::process::exit(1);
    }
    let Some(tree) = parser.parse(&line, None) else {
        eprintln!("no tree");
        std::process::exit(1);
    };
    print(tree.root_node(), &line, 0, None);
    println!("{:#?}", cox_bash::split(&line));
}

fn print(node: tree_sitter::Node<'_>, src: &str, depth: usize, field: Option<&str>) {
    let text = src.get(node.byte_range()).unwrap_or_default();
    let field = field.map(|f| format!("{f}: ")).unwrap_or_default();
    println!(
        "{:indent$}{field}{} {text:?}",
        "",
        node.kind(),
        indent = depth * 2
    );
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            let name = cursor.field_name();
            print(cursor.node(), src, depth + 1, name);
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
}
