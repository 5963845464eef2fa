//! Links the `cox` and `cox-headless` binaries (the latter points its
//! `build` here) with packed relative relocations on Linux/glibc.
//!
//! A position-independent executable carries one relocation entry per
//! pointer the loader must fix up at start (about half a megabyte of them
//! here, read on every run). `-z pack-relative-relocs` stores them as a
//! bitmap (DT_RELR) that glibc 2.36 and later applies, so each start reads
//! and dirties less memory while the binary stays position-independent.
//! Linkers that know the option (GNU ld 2.38+, lld) honour it; GNU ld
//! warns about and skips a `-z` keyword it does not know.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
