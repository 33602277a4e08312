//! Builds the example guests once for wasm32-wasip2 (profile `guest`) and
//! hands their paths to the crate through `cargo:rustc-env`.
//!
//! The guests are built by a child `cargo build` with its own target
//! directory (`<workspace>/target/guests`, or `REKON_GUESTS_TARGET_DIR`), so
//! it never waits on the lock of the build that runs this script.
//!
//! The JavaScript and Python guests are not built here: their tools come
//! from npm and PyPI, and a build script that reaches registries (and runs
//! again under clippy, rust-analyzer...) is fragile. `make guests-other`
//! builds them (`make test` and CI run it first); this script only hands
//! their paths on (`<workspace>/target/guests/{js,py}`, or
//! `REKON_OTHER_GUESTS_DIR`), and the crate says how to build them when a
//! test asks for one that is missing.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";

/// (env var suffix, package, file stem of the .wasm).
const GUESTS: [(&str, &str, &str); 4] = [
    ("APP", "app", "app"),
    ("CONFIGMAP_SYNC", "configmap-sync", "configmap_sync"),
    ("MISBEHAVE", "misbehave", "misbehave"),
    ("TENANT", "tenant", "tenant"),
];

/// Guests in other languages, built by `make guests-other`: (env var
/// suffix, path under the guests directory).
const OTHER_GUESTS: [(&str, &str); 2] = [
    ("CONFIGMAP_SYNC_JS", "js/configmap_sync_js.wasm"),
    ("CONFIGMAP_SYNC_PY", "py/configmap_sync_py.wasm"),
];

/// Environment cargo sets for build scripts (or users set for the outer
/// build) that would change what the child build does.
const CLEARED_ENV: &[&str] = &[
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_TARGET_DIR",
    "RUSTC_WORKSPACE_WRAPPER",
    "CLIPPY_ARGS",
    "CLIPPY_CONF_DIR",
    "CARGO_PRIMARY_PACKAGE",
    "TARGET",
    "HOST",
    "OUT_DIR",
    "PROFILE",
    "OPT_LEVEL",
    "DEBUG",
    "NUM_JOBS",
    "RUSTC_LINKER",
    "__CARGO_FIX_PLZ",
];

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir
        .parent()
        .and_then(Path::parent)
        .expect("this crate lives at <workspace>/tests/artifacts")
        .to_path_buf();

    for path in [
        "guests/app/src",
        "guests/app/Cargo.toml",
        "guests/configmap-sync/src",
        "guests/configmap-sync/Cargo.toml",
        "guests/misbehave/src",
        "guests/misbehave/Cargo.toml",
        "guests/tenant/src",
        "guests/tenant/Cargo.toml",
        "sdk/src",
        "sdk/Cargo.toml",
        "sdk/macros/src",
        "sdk/macros/Cargo.toml",
        "wit",
        "Cargo.toml",
        "Cargo.lock",
        ".cargo/config.toml",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
    println!("cargo:rerun-if-env-changed=REKON_GUESTS_TARGET_DIR");
    println!("cargo:rerun-if-env-changed=REKON_OTHER_GUESTS_DIR");

    let other = env::var_os("REKON_OTHER_GUESTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target").join("guests"));
    for (var, path) in OTHER_GUESTS {
        println!(
            "cargo:rustc-env=REKON_GUEST_{var}={}",
            other.join(path).display()
        );
    }

    let target_dir = env::var_os("REKON_GUESTS_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target").join("guests"));
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());

    ensure_target(&cargo);

    let mut cmd = Command::new(&cargo);
    cmd.current_dir(&workspace)
        .arg("build")
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .args(["--target", TARGET, "--profile", "guest"]);
    for (_, package, _) in GUESTS {
        cmd.args(["-p", package]);
    }
    for var in CLEARED_ENV {
        cmd.env_remove(var);
    }
    // Feature and cfg variables of this build script's own package.
    for (key, _) in env::vars_os() {
        if let Some(key) = key.to_str()
            && (key.starts_with("CARGO_FEATURE_") || key.starts_with("CARGO_CFG_"))
        {
            cmd.env_remove(key);
        }
    }
    // After the removals above, which include the parent's CARGO_TARGET_DIR.
    cmd.env("CARGO_TARGET_DIR", &target_dir);
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", Path::new(&cargo).display()));
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        panic!(
            "building the guests for {TARGET} failed ({}); the child cargo's output is above. \
             Command: {cmd:?}",
            output.status
        );
    }

    let out = target_dir.join(TARGET).join("guest");
    for (var, _, stem) in GUESTS {
        let wasm = out.join(format!("{stem}.wasm"));
        assert!(
            wasm.is_file(),
            "the guest build succeeded but {} is missing",
            wasm.display()
        );
        println!("cargo:rustc-env=REKON_GUEST_{var}={}", wasm.display());
    }
}

/// Installs the wasm32-wasip2 standard library with rustup if it is
/// missing, so `cargo test` on a fresh machine sets itself up.
fn ensure_target(cargo: &std::ffi::OsStr) {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(sysroot) = &sysroot
        && sysroot.join("lib/rustlib").join(TARGET).is_dir()
    {
        return;
    }
    let _ = cargo;
    eprintln!("the {TARGET} target is not installed: running `rustup target add {TARGET}`");
    match Command::new("rustup")
        .args(["target", "add", TARGET])
        .output()
    {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "`rustup target add {TARGET}` failed ({}): {}\nInstall the target by hand to build the test guests.",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!(
            "the {TARGET} target is missing and rustup cannot be run ({e}); \
             install the target (`rustup target add {TARGET}`) to build the test guests"
        ),
    }
}
