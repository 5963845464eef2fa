//! `cox-scripted`: `cox run` with the scripted provider only. Deterministic
//! and offline: it replays a TOML scenario (`--scenario` or `COX_SCENARIO`)
//! through the real session, tools and rollout.

fn main() {
    std::process::exit(cox_cli::headless_main(
        cox_cli::providers::scripted_provider,
    ));
}
