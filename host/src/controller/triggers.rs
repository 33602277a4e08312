//! Triggers: which primary objects a change concerns, and why. Pure
//! functions of a change and the manifest; nothing here waits or writes.

use crate::contract::{Gvk, Mapping, Predicate, Reason};
use crate::informer::Cached;
use crate::names::split_api_version;

/// A primary object: namespace (none when cluster-scoped) and name.
pub(crate) type Key = (Option<String>, String);

/// How an informer's changes map to primary keys.
#[derive(Clone, Debug)]
pub(crate) enum Role {
    /// The primary kind: an object maps to itself.
    Primary,
    /// An owned kind: to its controller owner of the primary kind.
    Owned,
    /// A watched kind: through the manifest's mapping.
    Watched(Mapping),
}

/// The primary kind as the triggers need it.
pub(crate) struct Primary<'a> {
    pub kind: &'a Gvk,
    pub namespaced: bool,
}

/// The primary objects a change of `object` concerns. `all_primaries`
/// lists every primary (for the `all-primaries` mapping only).
pub(crate) fn keys(
    role: &Role,
    object: &Cached,
    primary: &Primary<'_>,
    all_primaries: impl FnOnce() -> Vec<Key>,
) -> Vec<Key> {
    let key = |namespace: Option<&str>, name: &str| -> Key {
        (
            namespace.filter(|_| primary.namespaced).map(str::to_string),
            name.to_string(),
        )
    };
    let by_owner = || {
        object
            .owners
            .iter()
            .filter(|o| {
                o.controller
                    && o.kind == primary.kind.kind
                    && split_api_version(&o.api_version).0 == primary.kind.group
            })
            .map(|o| key(object.namespace(), &o.name))
            .collect()
    };
    match role {
        Role::Primary => vec![key(object.namespace(), object.name())],
        Role::Owned | Role::Watched(Mapping::OwnerReference) => by_owner(),
        Role::Watched(Mapping::Label(label)) => match object.label(label) {
            Some(value) => match value.split_once('/') {
                Some((ns, name)) => vec![key(Some(ns), name)],
                None => vec![key(object.namespace(), value)],
            },
            None => Vec::new(),
        },
        Role::Watched(Mapping::SameName) => vec![key(object.namespace(), object.name())],
        Role::Watched(Mapping::AllPrimaries) => all_primaries(),
    }
}

/// Whether an update from `old` to `new` passes a source's predicates:
/// any of them, or every update when there are none. Deletion starting
/// always passes (appearing and disappearing are not updates: they pass).
pub(crate) fn passes(predicates: &[Predicate], old: &Cached, new: &Cached) -> bool {
    if predicates.is_empty() || (new.deleting && !old.deleting) {
        return true;
    }
    predicates.iter().any(|predicate| match predicate {
        Predicate::GenerationChanged => old.generation != new.generation,
        Predicate::LabelsChanged => !old.labels().eq(new.labels()),
        Predicate::AnnotationsChanged => old.annotations_digest != new.annotations_digest,
        Predicate::ResourceVersionChanged => old.resource_version() != new.resource_version(),
    })
}

/// Why a change queues its primaries: the change itself for the primary
/// kind, `owned-changed` or `watched-changed` for the others.
pub(crate) fn change_reason(role: &Role, primary_reason: Reason) -> Reason {
    match role {
        Role::Primary => primary_reason,
        Role::Owned => Reason::OwnedChanged,
        Role::Watched(_) => Reason::WatchedChanged,
    }
}

/// The reason a reconcile says, from why its key was queued and what the
/// cache holds now: `deleted` when the object is gone, `finalizing` while
/// it is being deleted and still carries the module's finalizer, `added`
/// when it was deleted and created again before its reconcile.
pub(crate) fn request_reason(
    queued: Reason,
    object: Option<&Cached>,
    finalizer: Option<&str>,
) -> Reason {
    match object {
        None => Reason::Deleted,
        Some(object) if object.deleting && finalizer.is_some_and(|f| object.has_finalizer(f)) => {
            Reason::Finalizing
        }
        Some(_) if queued == Reason::Deleted => Reason::Added,
        Some(_) => queued,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::informer::cached::tests::{cached_object, config_maps};
    use serde_json::json;

    fn app_kind() -> Gvk {
        Gvk {
            group: "demo.rekon.dev".into(),
            version: "v1".into(),
            kind: "App".into(),
        }
    }

    fn object(metadata: serde_json::Value) -> Cached {
        cached_object(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}),
            &config_maps(),
        )
    }

    fn key(ns: Option<&str>, name: &str) -> Key {
        (ns.map(str::to_string), name.to_string())
    }

    fn no_primaries() -> Vec<Key> {
        panic!("only all-primaries lists the primaries")
    }

    #[test]
    fn predicates_pass_what_they_name_and_deletion_always() {
        let base = json!({"name": "a", "namespace": "n", "resourceVersion": "1",
            "generation": 1, "labels": {"tier": "fe"}, "annotations": {"note": "x"}});
        let with = |changes: serde_json::Value| {
            let mut metadata = base.clone();
            metadata["resourceVersion"] = json!("2");
            for (k, v) in changes.as_object().unwrap() {
                metadata[k] = v.clone();
            }
            object(metadata)
        };
        let old = object(base.clone());
        let status_only = with(json!({}));
        let spec = with(json!({"generation": 2}));
        let relabelled = with(json!({"labels": {"tier": "be"}}));
        let annotated = with(json!({"annotations": {"note": "y"}}));
        let deleting = with(json!({"deletionTimestamp": "2026-11-24T00:00:00Z"}));
        use Predicate::*;
        let cases: &[(&[Predicate], &Cached, bool)] = &[
            (&[], &status_only, true),
            (&[ResourceVersionChanged], &status_only, true),
            (&[GenerationChanged], &status_only, false),
            (&[GenerationChanged], &spec, true),
            (&[GenerationChanged], &relabelled, false),
            (&[LabelsChanged], &relabelled, true),
            (&[LabelsChanged], &annotated, false),
            (&[AnnotationsChanged], &annotated, true),
            (&[GenerationChanged, LabelsChanged], &relabelled, true),
            (&[GenerationChanged, LabelsChanged], &annotated, false),
            (&[GenerationChanged], &deleting, true),
        ];
        for (i, (predicates, new, expected)) in cases.iter().enumerate() {
            assert_eq!(
                passes(predicates, &old, new),
                *expected,
                "case {i}: {predicates:?}"
            );
        }
    }

    #[test]
    fn each_role_and_mapping_finds_its_primaries() {
        let kind = app_kind();
        let primary = Primary {
            kind: &kind,
            namespaced: true,
        };
        let owned = object(json!({
            "name": "web-config", "namespace": "prod",
            "labels": {"app": "web", "target": "other/api"},
            "ownerReferences": [
                {"apiVersion": "demo.rekon.dev/v1", "kind": "App", "name": "web", "uid": "1", "controller": true},
                {"apiVersion": "demo.rekon.dev/v1", "kind": "App", "name": "not-controller", "uid": "2"},
                {"apiVersion": "other.dev/v1", "kind": "App", "name": "other-group", "uid": "3", "controller": true},
            ],
        }));
        let cases: Vec<(&str, Role, Vec<Key>)> = vec![
            (
                "primary",
                Role::Primary,
                vec![key(Some("prod"), "web-config")],
            ),
            (
                "owned: the controller owner of the primary kind",
                Role::Owned,
                vec![key(Some("prod"), "web")],
            ),
            (
                "watched by owner reference",
                Role::Watched(Mapping::OwnerReference),
                vec![key(Some("prod"), "web")],
            ),
            (
                "label with a name",
                Role::Watched(Mapping::Label("app".into())),
                vec![key(Some("prod"), "web")],
            ),
            (
                "label with namespace/name",
                Role::Watched(Mapping::Label("target".into())),
                vec![key(Some("other"), "api")],
            ),
            (
                "label absent",
                Role::Watched(Mapping::Label("missing".into())),
                vec![],
            ),
            (
                "same name",
                Role::Watched(Mapping::SameName),
                vec![key(Some("prod"), "web-config")],
            ),
        ];
        for (case, role, expected) in cases {
            assert_eq!(
                keys(&role, &owned, &primary, no_primaries),
                expected,
                "{case}"
            );
        }
        let all = keys(
            &Role::Watched(Mapping::AllPrimaries),
            &owned,
            &primary,
            || vec![key(Some("a"), "1"), key(Some("b"), "2")],
        );
        assert_eq!(all, vec![key(Some("a"), "1"), key(Some("b"), "2")]);
    }

    #[test]
    fn a_cluster_scoped_primary_has_no_namespace_in_its_key() {
        let kind = app_kind();
        let primary = Primary {
            kind: &kind,
            namespaced: false,
        };
        let child = object(json!({"name": "c", "namespace": "tenant", "labels": {"owner": "t1"}}));
        assert_eq!(
            keys(
                &Role::Watched(Mapping::Label("owner".into())),
                &child,
                &primary,
                no_primaries
            ),
            vec![key(None, "t1")]
        );
    }

    #[test]
    fn changes_of_owned_and_watched_kinds_say_so() {
        for reason in [Reason::Added, Reason::Updated, Reason::Deleted] {
            assert_eq!(change_reason(&Role::Primary, reason), reason);
            assert_eq!(change_reason(&Role::Owned, reason), Reason::OwnedChanged);
            assert_eq!(
                change_reason(&Role::Watched(Mapping::SameName), reason),
                Reason::WatchedChanged
            );
        }
    }

    #[test]
    fn the_request_reason_follows_what_the_cache_holds() {
        let live = object(json!({"name": "a", "namespace": "n", "finalizers": ["f"]}));
        let deleting = object(json!({
            "name": "a", "namespace": "n", "finalizers": ["f"],
            "deletionTimestamp": "2026-11-23T00:00:00Z",
        }));
        let cases = [
            ("gone", Reason::Updated, None, Some("f"), Reason::Deleted),
            (
                "deleting with the finalizer",
                Reason::Updated,
                Some(&deleting),
                Some("f"),
                Reason::Finalizing,
            ),
            (
                "deleting, another finalizer",
                Reason::Updated,
                Some(&deleting),
                Some("g"),
                Reason::Updated,
            ),
            (
                "deleted then created again",
                Reason::Deleted,
                Some(&live),
                Some("f"),
                Reason::Added,
            ),
            (
                "as queued",
                Reason::OwnedChanged,
                Some(&live),
                None,
                Reason::OwnedChanged,
            ),
        ];
        for (case, queued, object, finalizer, expected) in cases {
            assert_eq!(
                request_reason(queued, object, finalizer),
                expected,
                "{case}"
            );
        }
    }
}
