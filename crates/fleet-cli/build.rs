//! Lays out the release binary's code in the order a session first runs it.
//!
//! A process's resident memory counts every page of code the kernel maps for it, and it maps
//! code around each fault (64 KiB, more with large page-cache folios). The linker otherwise
//! scatters the few thousand functions a session runs across 37 MB of text, so a trivial `-p`
//! turn kept ~23 MB of code resident. `link-order.txt` (made by `scripts/link-order.sh` from
//! callgrind runs of the common paths) lists those functions; LLD's `--symbol-ordering-file`
//! puts them first, and the same turn keeps ~12 MB. Symbols the file names that no longer
//! exist are ignored, so a stale file only costs memory, never correctness. Names carry a hash
//! of their crate's dependency graph: a workspace crate that gains or loses a dependency renames
//! its symbols and its dependents', so rerun the script after such a change
//! (`scripts/link-order.sh --check` says how many listed names the binary lacks).
//!
//! Only release builds with LLD (Rust's default linker on x86_64 Linux since 1.90) get it:
//! GNU ld does not know the option. `FLEET_NO_LINK_ORDER=1` turns it off for another linker.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=FLEET_NO_LINK_ORDER");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let lld_by_default = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "x86_64")
        && std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|o| o == "linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "gnu");
    let opted_out = std::env::var_os("FLEET_NO_LINK_ORDER").is_some_and(|v| v != "0");
    let other_linker = std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .is_ok_and(|flags| flags.contains("-fuse-ld") || flags.contains("linker"));
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else {
        return;
    };
    let order = dir.join("link-order.txt");
    if release && lld_by_default && !opted_out && !other_linker && order.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
