//! The example guests, built once for `wasm32-wasip2` with the `guest`
//! profile by this crate's build script, for tests and benchmarks.
//!
//! ```no_run
//! let bytes = std::fs::read(rekon_test_artifacts::APP).expect("built by the build script");
//! assert!(bytes.starts_with(b"\0asm"));
//! ```
//!
//! The build script rebuilds them only when the guests, the SDK or the WIT
//! change. It installs the `wasm32-wasip2` target with rustup if missing.
//!
//! The guests in other languages ([`CONFIGMAP_SYNC_JS`],
//! [`CONFIGMAP_SYNC_PY`]) are built by `make guests-other` (which `make
//! test` runs first), not by the build script: pass their paths through
//! [`built`], which fails with the command to run when one is missing.
#![deny(missing_docs)]

/// Absolute path of `app.wasm` (the App operator: Deployment, Service, status, finalizer).
pub const APP: &str = env!("REKON_GUEST_APP");

/// Absolute path of `configmap_sync.wasm` (copies labelled ConfigMaps across namespaces).
pub const CONFIGMAP_SYNC: &str = env!("REKON_GUEST_CONFIGMAP_SYNC");

/// Absolute path of `misbehave.wasm` (traps, panics, loops, ... on command).
pub const MISBEHAVE: &str = env!("REKON_GUEST_MISBEHAVE");

/// Absolute path of `tenant.wasm` (a cluster-scoped Tenant: Namespace,
/// ResourceQuota, RoleBinding, StatefulSet and Job).
pub const TENANT: &str = env!("REKON_GUEST_TENANT");

/// Absolute path of `app.wasm` built for `rekon:reconciler@0.1.0`: kept
/// in this crate (`v0.1.0/`), never rebuilt, so the host is always tested
/// against what users built for the first version of the contract.
pub const APP_V0_1: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/v0.1.0/app.wasm");

/// Absolute path of `configmap_sync.wasm` built for
/// `rekon:reconciler@0.1.0` (kept, as [`APP_V0_1`]).
pub const CONFIGMAP_SYNC_V0_1: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/v0.1.0/configmap_sync.wasm");

/// Absolute path of `app.wasm` built for `rekon:reconciler@0.2.0` (kept
/// in `v0.2.0/`, never rebuilt, as [`APP_V0_1`]).
pub const APP_V0_2: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/v0.2.0/app.wasm");

/// Absolute path of `configmap_sync.wasm` built for
/// `rekon:reconciler@0.2.0` (kept, as [`APP_V0_1`]).
pub const CONFIGMAP_SYNC_V0_2: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/v0.2.0/configmap_sync.wasm");

/// Absolute path of `app.wasm` built for `rekon:reconciler@0.3.0` (world
/// `operator`: its webhooks too; kept in `v0.3.0/`, never rebuilt, as
/// [`APP_V0_1`]).
pub const APP_V0_3: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/v0.3.0/app.wasm");

/// Absolute path of `configmap_sync.wasm` built for
/// `rekon:reconciler@0.3.0` (kept, as [`APP_V0_1`]).
pub const CONFIGMAP_SYNC_V0_3: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/v0.3.0/configmap_sync.wasm");

/// Absolute path of `configmap_sync_js.wasm`: `configmap-sync` in
/// JavaScript (componentize-js). Built by `make guests-other`.
pub const CONFIGMAP_SYNC_JS: &str = env!("REKON_GUEST_CONFIGMAP_SYNC_JS");

/// Absolute path of `configmap_sync_py.wasm`: `configmap-sync` in Python
/// (componentize-py). Built by `make guests-other`.
pub const CONFIGMAP_SYNC_PY: &str = env!("REKON_GUEST_CONFIGMAP_SYNC_PY");

/// Guests in other languages: (module name as in its manifest, absolute
/// path of the `.wasm`, the script that builds it).
pub fn others() -> &'static [(&'static str, &'static str, &'static str)] {
    &[
        (
            "configmap-sync-js",
            CONFIGMAP_SYNC_JS,
            "guests/configmap-sync-js/build.sh",
        ),
        (
            "configmap-sync-py",
            CONFIGMAP_SYNC_PY,
            "guests/configmap-sync-py/build.sh",
        ),
    ]
}

/// Returns `path` if the guest is built; otherwise panics with how to build
/// it (for the guests in other languages, which `cargo` does not build).
pub fn built(path: &'static str) -> &'static str {
    if std::path::Path::new(path).is_file() {
        return path;
    }
    let script = others()
        .iter()
        .find(|(_, p, _)| *p == path)
        .map_or("make guests-other", |(_, _, script)| script);
    panic!(
        "{path} is missing: build it with `make guests-other` (or `bash {script}`) \
         from the workspace root; it needs node/npm and python3 and installs \
         componentize-js and componentize-py itself"
    )
}

/// Every guest: (module name as in its manifest, absolute path of the `.wasm`).
pub fn all() -> &'static [(&'static str, &'static str)] {
    &[
        ("app", APP),
        ("configmap-sync", CONFIGMAP_SYNC),
        ("misbehave", MISBEHAVE),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_guest_is_a_component() {
        for (name, path) in super::all() {
            let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{name}: {path}: {e}"));
            // Component binaries: magic, then layer 1 (version 0x0d).
            assert_eq!(
                &bytes[..8],
                b"\0asm\x0d\0\x01\0",
                "{name} is not a component"
            );
        }
    }

    #[test]
    fn every_other_language_guest_is_built_and_a_component() {
        for (name, path, _) in super::others() {
            let bytes =
                std::fs::read(super::built(path)).unwrap_or_else(|e| panic!("{name}: {path}: {e}"));
            assert_eq!(
                &bytes[..8],
                b"\0asm\x0d\0\x01\0",
                "{name} is not a component"
            );
        }
    }
}
