//! The field selectors a Pod list or watch takes: core/v1's Pod labels
//! (`pkg/apis/core/v1/conversion.go`, with `spec.host`, the old name of
//! `spec.nodeName`) and the Pod's field set (`ToSelectableFields` in
//! `pkg/registry/core/pod/strategy.go`).

use serde_json::Value;

use crate::apis::strategy::Selectable;
use crate::machinery::object::text_at;
use crate::meta::selector::{FieldSet, Refusal, object_meta_fields};

/// The Pod's field selectors.
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("metadata.namespace", "metadata.namespace"),
        ("spec.nodeName", "spec.nodeName"),
        ("spec.restartPolicy", "spec.restartPolicy"),
        ("spec.schedulerName", "spec.schedulerName"),
        ("spec.serviceAccountName", "spec.serviceAccountName"),
        ("spec.hostNetwork", "spec.hostNetwork"),
        ("status.phase", "status.phase"),
        ("status.podIP", "status.podIP"),
        // Taken, but no field of the set: it matches only "".
        ("status.podIPs", "status.podIPs"),
        ("status.nominatedNodeName", "status.nominatedNodeName"),
        ("spec.host", "spec.nodeName"),
    ],
    refusal: Refusal::NotSupported,
    fields,
};

/// The Pod's field set, from the internal Pod core/v1 converts to: the
/// service account's old field when its name is empty, `hostNetwork`
/// `false` when unset, and the first pod IP (`status.podIP`, else the
/// first of `status.podIPs`).
fn fields(pod: &Value) -> FieldSet {
    let mut set = object_meta_fields(pod);
    let text = |pointer: &str| text_at(pod, pointer).to_string();
    let service_account = match text_at(pod, "/spec/serviceAccountName") {
        "" => text("/spec/serviceAccount"),
        name => name.to_string(),
    };
    let host_network = pod
        .pointer("/spec/hostNetwork")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let pod_ip = match text_at(pod, "/status/podIP") {
        "" => text("/status/podIPs/0/ip"),
        ip => ip.to_string(),
    };
    set.extend([
        ("spec.nodeName".to_string(), text("/spec/nodeName")),
        (
            "spec.restartPolicy".to_string(),
            text("/spec/restartPolicy"),
        ),
        (
            "spec.schedulerName".to_string(),
            text("/spec/schedulerName"),
        ),
        ("spec.serviceAccountName".to_string(), service_account),
        ("spec.hostNetwork".to_string(), host_network.to_string()),
        ("status.phase".to_string(), text("/status/phase")),
        ("status.podIP".to_string(), pod_ip),
        (
            "status.nominatedNodeName".to_string(),
            text("/status/nominatedNodeName"),
        ),
    ]);
    set
}
