//! `cox-headless`: only `cox run -p` (or `cox-headless -p`), with the
//! smallest dependency tree (no terminal UI, MCP or telemetry crates). For
//! scripts, CI and containers.

fn main() {
    std::process::exit(cox_cli::args::headless_main(
        cox_cli::providers::any_provider,
    ));
}
