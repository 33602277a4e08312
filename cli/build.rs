//! Link options of the `rekon` executable.
//!
//! Its functions are laid out in the order `host/rekon.order.gz` gives
//! (`tools/order.sh` records it from a running host): the code `rekon run`
//! runs while it starts, reconciles and idles sits together, so it fills few
//! pages, and the kernel, which maps 64 KiB of code around each page a
//! process touches, maps little that never runs. Only for the target it was
//! recorded on and with Rust's default linker there (lld), which takes it;
//! functions it does not name (after a dependency or toolchain upgrade) are
//! laid out after it, as without it.
//!
//! Its relative relocations are packed (`DT_RELR`, `-z pack-relative-relocs`)
//! when it is built for the glibc it runs on and that glibc is 2.36 or newer
//! (the container image carries the build machine's own, see
//! `tools/image.sh`): the dynamic loader then reads a few KiB at start where
//! it read the 2.9 MiB `.rela.dyn` table, which stayed resident for the
//! whole life of the process.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target == host && target.ends_with("-linux-gnu") && glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bin=rekon=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=rekon.order.gz");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    if target == "x86_64-unknown-linux-gnu"
        && default_linker()
        && let Some(order) = function_order()
    {
        println!("cargo:rustc-link-arg-bin=rekon=-Wl,--symbol-ordering-file={order}");
        println!("cargo:rustc-link-arg-bin=rekon=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the executable links with Rust's default linker for the target
/// (no linker configured, none chosen in the flags).
fn default_linker() -> bool {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    std::env::var_os("RUSTC_LINKER").is_none() && !flags.contains("link")
}

/// `rekon.order.gz` unpacked into the build's output directory (with the
/// system's `gzip`; without it, no order).
fn function_order() -> Option<String> {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").ok()?;
    let packed = std::path::Path::new(&manifest).join("rekon.order.gz");
    let file = std::fs::File::open(&packed).ok()?;
    let output = Command::new("gzip").arg("-dc").stdin(file).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let out = std::path::Path::new(&std::env::var("OUT_DIR").ok()?).join("rekon.order");
    std::fs::write(&out, output.stdout).ok()?;
    Some(out.display().to_string())
}

/// Whether the build machine's glibc (`getconf GNU_LIBC_VERSION`, "glibc
/// 2.36") is at least `major.minor`.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}
