//! What discovery says of a resource that both the host and the embedded
//! API server must compute alike.

use base64::Engine as _;
use sha2::Digest as _;

/// A resource's `storageVersionHash` in discovery: the first 8 bytes of
/// the SHA-256 of `group/version/kind` of its storage version, base64
/// (Kubernetes' `discovery.StorageVersionHash`). It changes when the
/// storage version does, which is how a client learns that the API server
/// writes objects in a new version.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = sha2::Sha256::digest(format!("{group}/{version}/{kind}"));
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_storage_version_hash_is_the_api_servers() {
        // As kube-apiserver 1.36 publishes them.
        assert_eq!(
            storage_version_hash("apps", "v1", "Deployment"),
            "8aSe+NMegvE="
        );
        assert_ne!(
            storage_version_hash("demo.rekon.dev", "v1", "App"),
            storage_version_hash("demo.rekon.dev", "v2", "App")
        );
    }
}
