fn main() {
    for c in "_-./:,%+@^~=".chars() {
        for pat in [
            format!("ls{c}"),
            format!("ls{c}x"),
            format!("{c}x"),
            format!("ls {c}"),
            format!("ls x{c}"),
            format!("ls x{c}y"),
            format!("ls {c}y"),
            format!("{c}"),
            format!("{c} a"),
            format!("ls{c} a"),
        ] {
            let a = cox_bash::split(&pat);
            let b = cox_bash::split_tree_sitter(&pat);
            if a != b {
                println!(
                    "{pat:?}: fast {:?} / ts {:?} {:?}",
                    a.commands.iter().map(|c| &c.text).collect::<Vec<_>>(),
                    b.commands.iter().map(|c| &c.text).collect::<Vec<_>>(),
                    b.opaque
                );
            }
        }
    }
}
