//! `configmap-sync`: copies ConfigMaps across namespaces.
//!
//! A source is a ConfigMap labelled `rekon.dev/sync=true` with the
//! annotation `rekon.dev/sync-to: "ns-a,ns-b"`. The reconciler keeps a copy
//! (same name, same `data` and `binaryData`) in each listed namespace that
//! exists, by server-side apply; it removes copies from namespaces no
//! longer listed, and all of them when the source is deleted or unlabelled
//! (the finalizer `rekon.dev/sync-cleanup` guarantees it sees the deletion).
//! It watches Namespaces (not owned) so that a copy appears as soon as a
//! listed namespace is created. A ConfigMap of the same name that is not a
//! copy is never overwritten: a `CopyConflict` Warning Event says so.
//! A namespace being deleted is skipped like an absent one, and cleanup
//! that finds a copy already gone goes on: deleting a namespace that holds
//! sources or copies never waits on this reconciler.
//!
//! Objects are read and written as JSON: decoding or encoding whole
//! k8s-openapi types (`ObjectMeta` with its timestamps and managed fields)
//! would double the component's size for no gain here.

use rekon_sdk::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use rekon_sdk::prelude::{
    Action, Error, EventType, Gvk, Level, Manifest, Mapping, Reconciler, Request, Value, Verbs,
    Watch, api, json,
};

/// The label marking a source ConfigMap (value `true`).
pub const SYNC_LABEL: &str = "rekon.dev/sync";
/// The annotation listing the target namespaces, comma-separated.
pub const TARGETS_ANNOTATION: &str = "rekon.dev/sync-to";
/// The finalizer put on sources.
pub const FINALIZER: &str = "rekon.dev/sync-cleanup";
/// Label on copies: the source's namespace.
pub const FROM_NAMESPACE_LABEL: &str = "rekon.dev/synced-from-namespace";
/// Label on copies: the source's name.
pub const FROM_NAME_LABEL: &str = "rekon.dev/synced-from-name";

/// The `configmap-sync` reconciler.
pub struct ConfigMapSync;

#[rekon_sdk::reconciler(webhook)]
impl Reconciler for ConfigMapSync {
    fn manifest() -> Manifest {
        let configmap = Gvk::of::<ConfigMap>();
        Manifest::new("configmap-sync", configmap.clone())
            .version(env!("CARGO_PKG_VERSION"))
            .finalizer(FINALIZER)
            // Copies live in any namespace: create, patch and delete them.
            .allow(configmap, Verbs::ALL, &[])
            // A listed namespace appearing must bring its copy: every
            // source is looked at again (non-sources return at once).
            .watches(Watch::new(Gvk::of::<Namespace>(), Mapping::AllPrimaries))
    }

    fn reconcile(req: Request) -> Result<Action, Error> {
        let Some(source) = req.json()? else {
            return Ok(Action::Done);
        };
        let is_source = source["metadata"]["labels"][SYNC_LABEL] == "true";
        if !is_source && !api::has_finalizer(&source, FINALIZER) {
            return Ok(Action::Done); // not ours: the common, cheap case
        }
        let ns = req.namespace();
        let name = req.name();
        if !is_source || api::is_deleting(&source) {
            let removed = delete_copies(ns, name, &[])?;
            if removed > 0 {
                api::info(&format!("removed {removed} copies of {ns}/{name}"));
            }
            api::remove_finalizer(&source, FINALIZER)?;
            return Ok(Action::Done);
        }
        let source = api::ensure_finalizer(source, FINALIZER)?;
        let targets = targets(&source, ns);
        let mut synced = Vec::new();
        for target in &targets {
            // A namespace that does not exist yet, or is being deleted,
            // gets no copy (a deleted namespace takes its copy with it).
            match api::get_as::<Value>(&Gvk::of::<Namespace>(), None, target)? {
                None => {
                    api::log(
                        Level::Info,
                        "target namespace does not exist yet",
                        &[("namespace", target)],
                    );
                    continue;
                }
                Some(namespace) if api::is_deleting(&namespace) => continue,
                Some(_) => {}
            }
            if let Some(existing) =
                api::get_as::<Value>(&Gvk::of::<ConfigMap>(), Some(target), name)?
                && !is_copy_of(&existing, ns, name)
            {
                api::event(
                    &req.target,
                    EventType::Warning,
                    "CopyConflict",
                    &format!("{target}/{name} exists and is not a copy: left alone"),
                );
                continue;
            }
            match api::apply_value(&copy(&source, ns, name, target), true) {
                Ok(_) => synced.push(target.as_str()),
                // Its deletion started after the read above.
                Err(e) if e.is_namespace_terminating() => continue,
                Err(e) => return Err(e.into()),
            }
        }
        delete_copies(ns, name, &synced)?;
        Ok(Action::Done)
    }
}

/// The target namespaces named by the source's annotation, trimmed,
/// deduplicated, without the source's own namespace.
pub fn targets(source: &Value, own_namespace: &str) -> Vec<String> {
    let mut out: Vec<String> = source["metadata"]["annotations"][TARGETS_ANNOTATION]
        .as_str()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|ns| !ns.is_empty() && *ns != own_namespace)
        .map(str::to_owned)
        .collect();
    out.sort();
    out.dedup();
    out
}

fn is_copy_of(existing: &Value, ns: &str, name: &str) -> bool {
    let labels = &existing["metadata"]["labels"];
    labels[FROM_NAMESPACE_LABEL] == ns && labels[FROM_NAME_LABEL] == name
}

/// The apply intent of the copy of `ns/name` in `target`.
pub fn copy(source: &Value, ns: &str, name: &str, target: &str) -> Value {
    let mut copy = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": target,
            "labels": {FROM_NAMESPACE_LABEL: ns, FROM_NAME_LABEL: name},
        },
    });
    for key in ["data", "binaryData"] {
        if let Some(v) = source.get(key).filter(|v| !v.is_null()) {
            copy[key] = v.clone();
        }
    }
    copy
}

/// Deletes the copies of `ns/name` outside `keep`; returns how many.
fn delete_copies(ns: &str, name: &str, keep: &[&str]) -> Result<usize, Error> {
    let selector = format!("{FROM_NAMESPACE_LABEL}={ns},{FROM_NAME_LABEL}={name}");
    let mut removed = 0;
    for copy in api::list_as::<Value>(&Gvk::of::<ConfigMap>(), None, Some(&selector))? {
        let Some(copy_ns) = copy["metadata"]["namespace"].as_str() else {
            continue;
        };
        if keep.contains(&copy_ns) {
            continue;
        }
        if api::delete::<ConfigMap>(Some(copy_ns), name)? {
            removed += 1;
        }
    }
    Ok(removed)
}

/// The webhook: a source must name the namespaces it is copied to.
pub mod webhook {
    use rekon_sdk::k8s_openapi::api::core::v1::ConfigMap;
    use rekon_sdk::prelude::Gvk;
    use rekon_sdk::webhook::{
        AdmissionRequest, Denied, FailurePolicy, Operation, Validation, Webhook, WebhookSpec,
        Webhooks,
    };

    use super::{ConfigMapSync, SYNC_LABEL, TARGETS_ANNOTATION};

    impl Webhook for ConfigMapSync {
        fn webhooks() -> Webhooks {
            Webhooks::new().validating(
                WebhookSpec::new("validate-sources", Gvk::of::<ConfigMap>())
                    .operations([Operation::Create, Operation::Update])
                    .object_selector(format!("{SYNC_LABEL}=true"))
                    .failure_policy(FailurePolicy::Ignore),
            )
        }

        fn validate_create(request: &AdmissionRequest) -> Validation {
            validate_source(request)
        }

        fn validate_update(request: &AdmissionRequest) -> Validation {
            validate_source(request)
        }
    }

    /// Whether `name` can be a namespace's name (a DNS label).
    fn namespace_name(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= 63
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !name.starts_with('-')
            && !name.ends_with('-')
    }

    /// A source names at least one namespace, each a valid name; naming
    /// its own namespace is allowed with a warning (it is skipped).
    pub fn validate_source(request: &AdmissionRequest) -> Validation {
        let source = request.object.clone().unwrap_or_default();
        let listed: Vec<&str> = source["metadata"]["annotations"][TARGETS_ANNOTATION]
            .as_str()
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|ns| !ns.is_empty())
            .collect();
        if listed.is_empty() {
            return Err(Denied::invalid(format!(
                "{TARGETS_ANNOTATION} must name at least one namespace"
            )));
        }
        if let Some(bad) = listed.iter().find(|ns| !namespace_name(ns)) {
            return Err(Denied::invalid(format!(
                "{TARGETS_ANNOTATION}: {bad:?} is not a namespace name"
            )));
        }
        let own = request.namespace.as_deref().unwrap_or_default();
        Ok(if listed.contains(&own) {
            vec![format!(
                "{TARGETS_ANNOTATION} lists the source's own namespace {own}: it is skipped"
            )]
        } else {
            Vec::new()
        })
    }
}
