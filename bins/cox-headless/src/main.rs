//! `cox-headless`: only `cox run -p` (or `cox-headless -p`), with the
//! smallest dependency tree (no terminal UI, MCP or telemetry crates). For
//! scripts, CI and containers.

fn main() {
    // A confined command's last step runs before anything else starts.
    cox_cli::sandbox::run_helper_if_asked();
    std::process::exit(cox_cli::headless_main(cox_cli::providers::any_provider));
}
