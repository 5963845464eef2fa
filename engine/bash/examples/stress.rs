fn main() {
    let which: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let inputs: Vec<String> = vec![
        "ls -la && ".repeat(10_000) + "true",
        "\0".repeat(100_000),
        "$(".repeat(50_000),
        "'".repeat(100_001),
        "a\u{0}b; c\u{7f}d; é日本 | 🦀".repeat(3_000),
        "eval ".repeat(20_000),
        "sh -c \"".repeat(10_000),
    ];
    let t = std::time::Instant::now();
    let s = cox_bash::split(&inputs[which]);
    println!(
        "{which}: {} commands, {:?}, {:?}",
        s.commands.len(),
        s.opaque,
        t.elapsed()
    );
}
