//! Modules shipped as ConfigMaps: the format `rekon pack` writes, the
//! ConfigMap source reads and `rekon check` accepts.
//!
//! A module is one **manifest** ConfigMap, labelled `rekon.dev/module:
//! <name>`, annotated `rekon.dev/digest: sha256:<hex>` (the digest of the
//! uncompressed component) and `rekon.dev/encoding: none|gzip|zstd`. A
//! module that fits holds it in `binaryData["module.wasm"]`. A bigger one
//! (the API server refuses objects over about 1 MiB) is split: the manifest
//! lists its parts in `rekon.dev/parts: "<cm>,<cm>,..."`, and each **part**
//! ConfigMap (same label, plus `rekon.dev/part-of: <manifest>` and the same
//! digest annotation) holds one slice of the encoded bytes in
//! `binaryData["part"]`. The host loads a module only when every part is
//! there with the manifest's digest — never a mix of two versions' parts —
//! and the decoded bytes have that digest.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};

use base64::Engine as _;
use serde_json::{Value, json};

/// How the manifest says its version runs (rollout, canary, policy,
/// recording): see each annotation.
pub use super::{
    ABORT_ERROR_RATE_ANNOTATION, ABORT_ON_DIFFERENCE_ANNOTATION, CANARY_ANNOTATION,
    MIN_SOAK_ANNOTATION, PROMOTE_AFTER_ANNOTATION, RECORD_ANNOTATION, ROLLOUT_ANNOTATION,
    STEPS_ANNOTATION,
};

/// The label every module ConfigMap (manifest or part) carries.
pub const MODULE_LABEL: &str = "rekon.dev/module";
/// The digest of the uncompressed component: `sha256:<hex>`.
pub const DIGEST_ANNOTATION: &str = "rekon.dev/digest";
/// How the bytes are encoded: `none`, `gzip` or `zstd`.
pub const ENCODING_ANNOTATION: &str = "rekon.dev/encoding";
/// On a manifest: its parts, in order.
pub const PARTS_ANNOTATION: &str = "rekon.dev/parts";
/// On a part: the manifest it belongs to.
pub const PART_OF_ANNOTATION: &str = "rekon.dev/part-of";
/// The largest slice of bytes in one ConfigMap: 180 KiB, 240 KiB once in
/// base64, so that `kubectl apply` (client-side), which copies the whole
/// object into the annotation `kubectl.kubernetes.io/last-applied-configuration`,
/// stays under the API server's 256 KiB limit on a object's annotations.
/// With `kubectl apply --server-side` (no such copy), parts may be up to
/// about 700 KiB (`rekon pack --part-size`): the API server refuses objects
/// over about 1 MiB.
pub const DEFAULT_PART_SIZE: usize = 180 << 10;

/// Why ConfigMaps do not make a module.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PackError {
    /// A part named by the manifest is not there (yet).
    #[error("part {part:?} of module ConfigMap {manifest:?} is missing")]
    MissingPart {
        /// The manifest ConfigMap.
        manifest: String,
        /// The missing part.
        part: String,
    },
    /// A part belongs to another version of the module.
    #[error(
        "part {part:?} belongs to another version ({found}) than module ConfigMap {manifest:?} ({expected})"
    )]
    MixedParts {
        /// The manifest ConfigMap.
        manifest: String,
        /// The part.
        part: String,
        /// The manifest's digest.
        expected: String,
        /// The part's digest.
        found: String,
    },
    /// The decoded bytes do not have the announced digest.
    #[error(
        "module ConfigMap {manifest:?}: the content's digest is {found}, the annotation says {expected}"
    )]
    DigestMismatch {
        /// The manifest ConfigMap.
        manifest: String,
        /// The annotation.
        expected: String,
        /// The content's.
        found: String,
    },
    /// The ConfigMap is not a well-formed module ConfigMap.
    #[error("module ConfigMap {manifest:?}: {reason}")]
    Malformed {
        /// The manifest ConfigMap.
        manifest: String,
        /// What is wrong.
        reason: String,
    },
}

impl PackError {
    /// A short, bounded label for metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            PackError::MissingPart { .. } => "missing_part",
            PackError::MixedParts { .. } => "mixed_parts",
            PackError::DigestMismatch { .. } => "digest_mismatch",
            PackError::Malformed { .. } => "malformed",
        }
    }
}

/// How `rekon pack` encodes a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// As is.
    None,
    /// gzip (RFC 1952).
    Gzip,
    /// zstd.
    Zstd,
}

impl Encoding {
    fn name(self) -> &'static str {
        match self {
            Encoding::None => "none",
            Encoding::Gzip => "gzip",
            Encoding::Zstd => "zstd",
        }
    }
}

/// The ConfigMaps of one module: a manifest, and parts when the encoded
/// module is bigger than `part_size` (the parts first, the manifest last).
pub fn pack(
    bytes: &[u8],
    name: &str,
    namespace: &str,
    encoding: Encoding,
    part_size: usize,
) -> Result<Vec<Value>, std::io::Error> {
    let digest = format!("sha256:{}", crate::runtime::digest(bytes));
    let encoded = match encoding {
        Encoding::None => bytes.to_vec(),
        Encoding::Gzip => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            encoder.write_all(bytes)?;
            encoder.finish()?
        }
        Encoding::Zstd => zstd::encode_all(bytes, 19)?,
    };
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let labels = json!({ MODULE_LABEL: name });
    let mut annotations =
        json!({ DIGEST_ANNOTATION: digest, ENCODING_ANNOTATION: encoding.name() });
    if encoded.len() <= part_size {
        return Ok(vec![json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": { "name": name, "namespace": namespace, "labels": labels, "annotations": annotations },
            "binaryData": { "module.wasm": b64(&encoded) },
        })]);
    }
    let chunks: Vec<&[u8]> = encoded.chunks(part_size.max(1)).collect();
    let part_names: Vec<String> = (0..chunks.len())
        .map(|i| format!("{name}-part-{i}"))
        .collect();
    annotations[PARTS_ANNOTATION] = json!(part_names.join(","));
    // The parts first, the manifest last: `kubectl apply -f` writes them in
    // this order, so a watching host finds the new version complete.
    let mut documents = Vec::new();
    for (part, chunk) in part_names.iter().zip(chunks) {
        documents.push(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": part, "namespace": namespace, "labels": labels,
                "annotations": { DIGEST_ANNOTATION: digest, PART_OF_ANNOTATION: name },
            },
            "binaryData": { "part": b64(chunk) },
        }));
    }
    documents.push(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": name, "namespace": namespace, "labels": labels, "annotations": annotations },
    }));
    Ok(documents)
}

fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object["metadata"]["annotations"][key].as_str()
}

fn name_of(object: &Value) -> String {
    object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn namespace_of(object: &Value) -> String {
    object["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default")
        .to_string()
}

/// The parts of earlier versions of `manifest`'s module among
/// `configmaps`: they name it as theirs, it does not list them, and they
/// carry another digest (a version with fewer parts left them behind).
pub(crate) fn stale_parts(manifest: &Value, configmaps: &[Value]) -> Vec<String> {
    let name = name_of(manifest);
    let namespace = namespace_of(manifest);
    let digest = annotation(manifest, DIGEST_ANNOTATION).unwrap_or_default();
    let listed: Vec<&str> = annotation(manifest, PARTS_ANNOTATION)
        .map(|parts| parts.split(',').map(str::trim).collect())
        .unwrap_or_default();
    configmaps
        .iter()
        .filter(|c| annotation(c, PART_OF_ANNOTATION) == Some(name.as_str()))
        .filter(|c| namespace_of(c) == namespace)
        .filter(|c| annotation(c, DIGEST_ANNOTATION) != Some(digest))
        .map(name_of)
        .filter(|part| !listed.contains(&part.as_str()))
        .collect()
}

/// Whether a module ConfigMap is a manifest (not a part).
pub fn is_manifest(object: &Value) -> bool {
    annotation(object, PART_OF_ANNOTATION).is_none()
}

/// The module of a manifest ConfigMap, from it and the ConfigMaps of its
/// namespace (`configmaps` may hold others: they are ignored).
pub fn assemble(manifest: &Value, configmaps: &[Value]) -> Result<Vec<u8>, PackError> {
    let name = name_of(manifest);
    let malformed = |reason: &str| PackError::Malformed {
        manifest: name.clone(),
        reason: reason.to_string(),
    };
    let digest = annotation(manifest, DIGEST_ANNOTATION)
        .ok_or_else(|| malformed(&format!("no {DIGEST_ANNOTATION} annotation")))?;
    let decode = |object: &Value, key: &str| -> Result<Vec<u8>, PackError> {
        let text = object["binaryData"][key].as_str().ok_or_else(|| {
            malformed(&format!("no binaryData[{key:?}] in {:?}", name_of(object)))
        })?;
        let cleaned: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        base64::engine::general_purpose::STANDARD
            .decode(cleaned)
            .map_err(|e| malformed(&format!("binaryData[{key:?}] is not base64: {e}")))
    };
    let encoded = match annotation(manifest, PARTS_ANNOTATION) {
        None => decode(manifest, "module.wasm")?,
        Some(parts) => {
            let namespace = namespace_of(manifest);
            let by_name: BTreeMap<String, &Value> = configmaps
                .iter()
                .filter(|c| namespace_of(c) == namespace)
                .map(|c| (name_of(c), c))
                .collect();
            let mut encoded = Vec::new();
            for part in parts.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let object = by_name.get(part).ok_or_else(|| PackError::MissingPart {
                    manifest: name.clone(),
                    part: part.to_string(),
                })?;
                let found = annotation(object, DIGEST_ANNOTATION).unwrap_or("none");
                if found != digest || annotation(object, PART_OF_ANNOTATION) != Some(name.as_str())
                {
                    return Err(PackError::MixedParts {
                        manifest: name.clone(),
                        part: part.to_string(),
                        expected: digest.to_string(),
                        found: found.to_string(),
                    });
                }
                encoded.extend(decode(object, "part")?);
            }
            encoded
        }
    };
    let bytes = decompress(&encoded).map_err(|e| malformed(&format!("cannot decompress: {e}")))?;
    let found = format!("sha256:{}", crate::runtime::digest(&bytes));
    if found != digest {
        return Err(PackError::DigestMismatch {
            manifest: name,
            expected: digest.to_string(),
            found,
        });
    }
    Ok(bytes)
}

/// Decompresses gzip or zstd, recognised by their magic bytes; anything
/// else is returned as is.
fn decompress(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    match bytes {
        [0x1f, 0x8b, ..] => {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(bytes).read_to_end(&mut out)?;
            Ok(out)
        }
        [0x28, 0xb5, 0x2f, 0xfd, ..] => zstd::decode_all(bytes),
        _ => Ok(bytes.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_configmap_fits_client_side_apply() {
        // Incompressible bytes: the worst case for the part count.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let bytes: Vec<u8> = (0..(1 << 20))
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let documents = pack(
            &bytes,
            "big",
            "rekon-system",
            Encoding::Zstd,
            DEFAULT_PART_SIZE,
        )
        .unwrap();
        assert!(documents.len() > 5, "{} ConfigMaps", documents.len());
        for document in &documents {
            // kubectl apply copies the object into this annotation; all of
            // an object's annotations together may take 256 KiB.
            let copy = serde_json::to_string(document).unwrap();
            let annotations: usize = document["metadata"]["annotations"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| k.len() + v.as_str().unwrap().len())
                .sum();
            let total =
                "kubectl.kubernetes.io/last-applied-configuration".len() + copy.len() + annotations;
            assert!(
                total < 256 << 10,
                "{} takes {total} bytes of annotations",
                name_of(document)
            );
        }
    }

    #[test]
    fn parts_an_earlier_version_left_behind_are_stale() {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let three = pack(&bytes, "big", "ns", Encoding::None, 70_000).unwrap();
        let one = pack(&bytes[..60_000], "big", "ns", Encoding::None, 70_000).unwrap();
        assert_eq!((three.len(), one.len()), (4, 1));
        let manifest_of = |documents: &[Value]| documents.last().unwrap().clone();
        // The three-part version whole: nothing stale.
        assert!(stale_parts(&manifest_of(&three), &three).is_empty());
        // The one-ConfigMap version over it: every old part is stale.
        let mut cluster: Vec<Value> = three[..3].to_vec();
        cluster.push(manifest_of(&one));
        assert_eq!(
            stale_parts(&manifest_of(&one), &cluster),
            ["big-part-0", "big-part-1", "big-part-2"]
        );
        // A part of the manifest's own digest is not, listed or not.
        let four = pack(&bytes, "big", "ns", Encoding::None, 60_000).unwrap();
        let mut arriving = three.clone();
        arriving.push(four[3].clone());
        assert!(stale_parts(&manifest_of(&three), &arriving).is_empty());
        let mut other_namespace = three[0].clone();
        other_namespace["metadata"]["namespace"] = json!("elsewhere");
        assert!(stale_parts(&manifest_of(&one), &[other_namespace]).is_empty());
    }

    fn module() -> Vec<u8> {
        // Compressible but not trivially: a wasm-like header and noise.
        let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
        let mut x: u32 = 7;
        for _ in 0..300_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            bytes.push((x >> 24) as u8 % 16);
        }
        bytes
    }

    #[test]
    fn every_encoding_round_trips_whole_and_in_parts() {
        let bytes = module();
        for encoding in [Encoding::None, Encoding::Gzip, Encoding::Zstd] {
            for part_size in [DEFAULT_PART_SIZE, 40_000] {
                let documents = pack(&bytes, "big", "ns", encoding, part_size).unwrap();
                let manifest = documents.iter().find(|d| is_manifest(d)).unwrap();
                assert_eq!(
                    assemble(manifest, &documents).unwrap(),
                    bytes,
                    "{encoding:?} {part_size}"
                );
            }
        }
        let split = pack(&bytes, "big", "ns", Encoding::None, 40_000).unwrap();
        assert!(split.len() > 5, "split into parts");
    }

    #[test]
    fn missing_and_mixed_parts_and_bad_digests_are_refused() {
        let bytes = module();
        let documents = pack(&bytes, "big", "ns", Encoding::Gzip, 20_000).unwrap();
        let manifest = documents.last().unwrap().clone();
        assert!(is_manifest(&manifest), "the manifest comes last");
        let missing: Vec<Value> = documents
            .iter()
            .filter(|d| name_of(d) != "big-part-1")
            .cloned()
            .collect();
        assert!(
            matches!(assemble(&manifest, &missing), Err(PackError::MissingPart { part, .. }) if part == "big-part-1")
        );

        let mut other = bytes.clone();
        other[100] ^= 1;
        let newer = pack(&other, "big", "ns", Encoding::Gzip, 20_000).unwrap();
        let mut mixed = documents.clone();
        mixed[2] = newer[2].clone();
        assert!(matches!(
            assemble(&manifest, &mixed),
            Err(PackError::MixedParts { .. })
        ));

        let mut lying = pack(&bytes, "small", "ns", Encoding::Zstd, DEFAULT_PART_SIZE)
            .unwrap()
            .remove(0);
        lying["metadata"]["annotations"][DIGEST_ANNOTATION] =
            json!(format!("sha256:{}", "0".repeat(64)));
        assert!(matches!(
            assemble(&lying, &[]),
            Err(PackError::DigestMismatch { .. })
        ));
    }
}
