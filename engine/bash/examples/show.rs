fn main() {
    for line in std::env::args().skip(1) {
        let s = cox_bash::split(&line);
        println!(
            "=== {line:?}  opaque={:?} risk={:?}",
            s.opaque.as_ref().map(|o| o.to_string()),
            cox_bash::line_risk(&s)
        );
        for c in &s.commands {
            println!("   {:?} {:?} {:?}", c.text, c.words, c.risk);
        }
    }
}
