//! Which message an (apiVersion, kind) is: an index over the descriptors
//! of k8s-rs-pb, built on first use.
//!
//! The descriptors are those k8s-rs-pb compiles into its generated modules,
//! copied out of its sources into `k8s-v1.35.pb` (a FileDescriptorSet, by
//! `descriptors.py`) and linked here as dynamic descriptors. The crate's
//! own `file_descriptor()` functions cannot be called: each lists itself
//! among its imports (`super::v1::file_descriptor()` in `api/apps/v1`, for
//! every file of every version of 0.5.0), so the first call waits forever
//! on its own initialisation.

use std::collections::HashMap;
use std::sync::LazyLock;

use protobuf::Message as _;
use protobuf::descriptor::FileDescriptorSet;
use protobuf::reflect::{FileDescriptor, MessageDescriptor};

/// The messages of every file, and `runtime.Unknown`.
struct Index {
    /// Top-level messages keyed `<label>.<version>.<Name>` by the last two
    /// labels of their package: `apps.v1.Deployment` for
    /// `api.apps.v1.Deployment`, `meta.v1.Status` for
    /// `apimachinery.pkg.apis.meta.v1.Status`.
    kinds: HashMap<String, MessageDescriptor>,
    /// The envelope of every body.
    unknown: MessageDescriptor,
}

static INDEX: LazyLock<Index> = LazyLock::new(|| {
    let set = FileDescriptorSet::parse_from_bytes(include_bytes!("k8s-v1.35.pb"))
        .expect("the embedded descriptor set is a FileDescriptorSet");
    let files = FileDescriptor::new_dynamic_fds(set.file, &[])
        .expect("the embedded descriptor set has every file its files import");
    let mut kinds = HashMap::new();
    let mut unknown = None;
    for file in &files {
        let labels: Vec<&str> = file.package().rsplitn(3, '.').collect();
        let [version, label, ..] = labels[..] else {
            continue;
        };
        for message in file.messages() {
            if message.full_name() == "apimachinery.pkg.runtime.Unknown" {
                unknown = Some(message.clone());
            }
            kinds.insert(format!("{label}.{version}.{}", message.name()), message);
        }
    }
    let unknown = unknown.expect("the embedded descriptor set has runtime.Unknown");
    Index { kinds, unknown }
});

/// The descriptor of `runtime.Unknown`, the envelope.
pub(super) fn unknown() -> &'static MessageDescriptor {
    &INDEX.unknown
}

/// The message of `kind` in `api_version`, if it is a built-in kind.
pub(super) fn find(api_version: &str, kind: &str) -> Option<&'static MessageDescriptor> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let label = group_label(group)?;
    if version.is_empty() || version.contains('.') || kind.is_empty() {
        return None;
    }
    INDEX
        .kinds
        .get(&format!("{label}.{version}.{kind}"))
        .or_else(|| {
            // Go registers the option types, Status and WatchEvent of meta/v1
            // in every group version (`metav1.AddToGroupVersion`).
            let shared = kind.ends_with("Options") || matches!(kind, "Status" | "WatchEvent");
            shared
                .then(|| INDEX.kinds.get(&format!("meta.v1.{kind}")))
                .flatten()
        })
}

/// The package label of a built-in API group: `core` for the legacy group,
/// else the first DNS label (`rbac.authorization.k8s.io` -> `rbac`). Groups
/// that are not Kubernetes' own have none, so that `apps.example.com`
/// is not taken for `apps`.
fn group_label(group: &str) -> Option<&str> {
    Some(match group {
        "" => "core",
        "rbac.authorization.k8s.io" => "rbac",
        "flowcontrol.apiserver.k8s.io" => "flowcontrol",
        // The packages of these are not named after their first label.
        "internal.apiserver.k8s.io" => "apiserverinternal",
        "custom.metrics.k8s.io" => "custom_metrics",
        "external.metrics.k8s.io" => "external_metrics",
        _ if !group.contains('.') => group,
        _ => group.strip_suffix(".k8s.io").filter(|l| !l.contains('.'))?,
    })
}

/// Every message of `name`, in any package: for the tests of the tables
/// that name fields by message.
#[cfg(test)]
pub(super) fn messages_named(name: &str) -> Vec<&'static MessageDescriptor> {
    INDEX.kinds.values().filter(|m| m.name() == name).collect()
}
