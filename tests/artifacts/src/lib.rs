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
#![deny(missing_docs)]

/// Absolute path of `app.wasm` (the App operator: Deployment, Service, status, finalizer).
pub const APP: &str = env!("REKON_GUEST_APP");

/// Absolute path of `configmap_sync.wasm` (copies labelled ConfigMaps across namespaces).
pub const CONFIGMAP_SYNC: &str = env!("REKON_GUEST_CONFIGMAP_SYNC");

/// Absolute path of `misbehave.wasm` (traps, panics, loops, ... on command).
pub const MISBEHAVE: &str = env!("REKON_GUEST_MISBEHAVE");

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
}
