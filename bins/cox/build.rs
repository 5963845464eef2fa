//! Links the `cox` and `cox-headless` binaries (the latter points its
//! `build` here) for a lean start on Linux/glibc.
//!
//! Packed relative relocations: a position-independent executable carries
//! one relocation entry per pointer the loader must fix up at start (about
//! half a megabyte of them here, read on every run). `-z
//! pack-relative-relocs` stores them as a bitmap (DT_RELR) that glibc 2.36
//! and later applies, so each start reads and dirties less memory while the
//! binary stays position-independent. Linkers that know the option (GNU ld
//! 2.38+, lld) honour it; GNU ld warns about and skips a `-z` keyword it
//! does not know.
//!
//! The start's functions side by side: the kernel maps code in 64 KB
//! windows around each page touched, so the ~2.4 MB a headless turn runs,
//! spread by the compiler over most of the text, would map most of it.
//! `startup-order.txt` (made by `benches/startup-order.sh`) lists them, and
//! a release build on x86_64 Linux, linked by rust-lld as the toolchain
//! does there by default, places them first in that order. Names the file
//! has and the binary no longer does are skipped silently: a stale list
//! costs RSS, never a build. A build that names another linker
//! (`-C linker…` in RUSTFLAGS) does without it.
//!
//! Stripped at link time: the release profile keeps symbols (`strip =
//! false`), since the names the list holds carry each crate's build hash,
//! which the profile is part of; so the copy `startup-order.sh` profiles
//! (`COX_KEEP_SYMBOLS=1`, nothing stripped) must come from the very same
//! profile, and the release binaries are stripped here instead.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let own_linker = std::env::var("CARGO_ENCODED_RUSTFLAGS").is_ok_and(|f| f.contains("linker"));
    println!("cargo:rerun-if-changed=../cox/startup-order.txt");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=COX_KEEP_SYMBOLS");
    if release && os == "linux" && std::env::var_os("COX_KEEP_SYMBOLS").is_none() {
        println!("cargo:rustc-link-arg-bins=-Wl,--strip-all");
    }
    if os == "linux" && env == "gnu" && arch == "x86_64" && release && !own_linker {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        // `cox-headless` builds with this script from its own folder.
        let order = std::path::Path::new(&dir).join("../cox/startup-order.txt");
        if order.is_file() {
            println!(
                "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
                order.display()
            );
            println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
        }
    }
}
