//! `cox-sandbox-exec`: the sandbox helper alone, installed beside `cox`.
//!
//! cox starts it (inside bwrap, or alone under Landlock) to apply seccomp,
//! Landlock and supervision and then run one confined command. It links
//! nothing but the sandbox adapter, so it starts faster than `cox`, whose
//! relocations dominate a cold start (0.4 MB and 500 relocations against
//! 11.6 MB and 24,000). Run by hand, it says what it is and exits 2.

fn main() {
    cox_sandbox::helper::run_if_asked();
    eprintln!(
        "cox-sandbox-exec: an internal helper of cox (run as `cox-sandbox-exec {} SPEC -- PROGRAM [ARGS…]`); not for direct use",
        cox_sandbox::helper::HELPER_ARG
    );
    std::process::exit(2);
}
