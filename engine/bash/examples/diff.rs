fn main() {
    let pieces = [
        "ls",
        "git",
        "status",
        "-n",
        "20",
        "--flag=x",
        "a.b",
        "~/x",
        "%1",
        "^a",
        "@b",
        "+c",
        ":d",
        ",e",
        "''",
        "'a  b'",
        "\"c  d\"",
        "x'y'z\"w\"",
        "-",
        "--",
        "0",
        "time",
        "nohup",
        "timeout",
        "5",
        "sh",
        "-c",
        "'rm x'",
        "eval",
        "xargs",
        "-0",
        "rm",
        "-rf",
        "sudo",
        "find",
        "-exec",
        "\\;",
        "env",
        "A=1",
        "LANG=C",
        "if",
        "then",
        "fi",
        "in",
        "done",
        "export",
        "=",
        "a=b",
        "command",
        "-v",
        "read",
        "PATH",
        " ",
        " ",
        " ",
        "  ",
        "\t",
        ";",
        "&&",
        "||",
        "|",
        "&",
        "\n",
        " ; ",
        " && ",
        " | ",
        "'",
        "\"",
        "x",
        "~",
        "%",
        "^",
        ":",
        ",",
        "+",
        "@",
        ".",
        "/",
        "_",
    ];
    let mut seed: u64 = 0x1234_5678;
    let mut rnd = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..2000000 {
        let k = rnd(10);
        let line: String = (0..k).map(|_| pieces[rnd(pieces.len())]).collect();
        let a = cox_bash::split(&line);
        let b = cox_bash::split_tree_sitter(&line);
        if a != b && line.len() < 30 && seen.len() < 40 {
            if seen.insert(line.clone()) {
                println!(
                    "{line:?}\n  fast {:?} {:?}\n  ts   {:?} {:?}",
                    a.commands.iter().map(|c| &c.text).collect::<Vec<_>>(),
                    a.opaque,
                    b.commands.iter().map(|c| &c.text).collect::<Vec<_>>(),
                    b.opaque
                );
            }
        }
    }
}
