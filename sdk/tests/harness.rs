//! The SDK's helpers and native harness, against the shared object store.

use rekon_sdk::k8s_openapi::api::apps::v1::Deployment;
use rekon_sdk::k8s_openapi::api::core::v1::{ConfigMap, Secret};
use rekon_sdk::prelude::*;
use rekon_sdk::testing::{FakeCluster, Verb};

const FIXTURES: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata:
  name: one
  namespace: apps
  labels: {tier: web}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: two
  namespace: apps
  labels: {tier: db}
---
apiVersion: widgets.example.com/v1
kind: Widget
metadata: {name: w, namespace: apps, finalizers: [other.example.com/keep]}
spec: {size: 3}
status: {phase: Ready}
"#;

fn widget() -> Gvk {
    Gvk::new("widgets.example.com", "v1", "Widget")
}

#[test]
fn fixtures_create_namespaces_register_custom_kinds_and_keep_status() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    assert!(
        cluster
            .object(&Gvk::new("", "v1", "Namespace"), None, "apps")
            .is_some()
    );
    let w = cluster
        .object(&widget(), Some("apps"), "w")
        .expect("custom kind served without a CRD");
    assert_eq!(w["spec"]["size"], 3);
    assert_eq!(w["status"]["phase"], "Ready");
    // The two and the namespace's root CA, as a cluster makes it.
    let names: Vec<String> = cluster
        .list(&Gvk::of::<ConfigMap>(), Some("apps"))
        .iter()
        .map(|c| {
            c["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["kube-root-ca.crt", "one", "two"]);
    assert!(cluster.writes().is_empty(), "seeding is not a write");
}

#[test]
fn typed_helpers_read_and_write_through_the_store() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    cluster.run(|| {
        let one = api::get::<ConfigMap>(Some("apps"), "one")
            .expect("get")
            .expect("exists");
        assert_eq!(one.data.expect("data")["k"], "v");
        assert!(
            api::get::<ConfigMap>(Some("apps"), "nope")
                .expect("get")
                .is_none()
        );

        let web = api::list::<ConfigMap>(Some("apps"), Some("tier=web")).expect("list");
        assert_eq!(web.len(), 1);

        // A Deployment the server takes: a selector its template matches, a
        // container with an image.
        let d: Deployment = rekon_sdk::serde_json::from_value(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "apps"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "d"}},
                "template": {"metadata": {"labels": {"app": "d"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
        }))
        .expect("a Deployment");
        let applied = api::apply(&d, true).expect("apply creates");
        assert_eq!(applied.spec.replicas, Some(2));
        assert!(applied.metadata.uid.is_some());

        let patched: Deployment = api::patch_status(
            Some("apps"),
            "d",
            &json!({"status": {"replicas": 2, "readyReplicas": 2}}),
        )
        .expect("status patch");
        assert_eq!(patched.status.and_then(|s| s.ready_replicas), Some(2));

        assert!(api::delete::<Deployment>(Some("apps"), "d").expect("delete"));
        assert!(!api::delete::<Deployment>(Some("apps"), "d").expect("already gone"));
    });
    let verbs: Vec<Verb> = cluster.writes().into_iter().map(|w| w.verb).collect();
    assert_eq!(
        verbs,
        vec![
            Verb::Apply {
                field_manager: "rekon-test".into(),
                force: true
            },
            Verb::MergePatch,
            Verb::Delete,
            Verb::Delete
        ]
    );
    assert!(cluster.writes()[1].status);
    assert!(
        cluster.writes()[3]
            .result
            .as_ref()
            .is_err_and(ApiError::is_not_found)
    );
}

#[test]
fn finalizers_are_added_and_removed_without_clobbering_others() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    let read = cluster.object(&widget(), Some("apps"), "w").expect("w");
    cluster.run(|| {
        let added = api::add_finalizer(&read, "mine.example.com/f").expect("added");
        assert_eq!(
            added["metadata"]["finalizers"],
            json!(["other.example.com/keep", "mine.example.com/f"])
        );
        // Adding twice is a no-op (no write).
        api::add_finalizer(&added, "mine.example.com/f").expect("no-op");
        // So is ensuring it on an object that carries it: the object comes
        // back as it was.
        let ensured = api::ensure_finalizer(added.clone(), "mine.example.com/f").expect("no-op");
        assert_eq!(ensured, added);

        // A stale read cannot remove anything: 409, retried.
        let stale = api::remove_finalizer(&read, "other.example.com/keep")
            .expect_err("the object changed since `read`");
        assert!(stale.is_conflict(), "{stale}");
        assert!(Error::from(stale).retry);

        let removed = api::remove_finalizer(&added, "mine.example.com/f").expect("removed");
        assert_eq!(
            removed["metadata"]["finalizers"],
            json!(["other.example.com/keep"])
        );
    });
    assert_eq!(cluster.writes().len(), 3, "add, failed remove, remove");
}

#[test]
fn owner_references_mark_the_controller() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    let w = cluster.object(&widget(), Some("apps"), "w").expect("w");
    let r = api::controller_ref_to(&w).expect("has a uid");
    assert_eq!(r.api_version, "widgets.example.com/v1");
    assert_eq!(r.kind, "Widget");
    assert_eq!(r.name, "w");
    assert_eq!(Some(r.uid.as_str()), w["metadata"]["uid"].as_str());
    assert_eq!(
        (r.controller, r.block_owner_deletion),
        (Some(true), Some(true))
    );
}

struct Snoop;

impl Reconciler for Snoop {
    fn manifest() -> Manifest {
        Manifest::new("snoop", Gvk::of::<ConfigMap>())
    }

    fn reconcile(req: Request) -> Result<Action, Error> {
        let err = api::get::<Secret>(Some("apps"), "token").expect_err("not declared");
        api::log(Level::Info, "denied", &[("code", &err.code.to_string())]);
        match req.reason {
            Reason::Deleted => Ok(Action::Done),
            _ => Err(err.into()),
        }
    }
}

#[test]
fn calls_outside_the_manifest_are_forbidden() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    cluster
        .seed_yaml("apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: apps}\n")
        .expect("secret");
    let err = cluster
        .reconcile::<Snoop>(Some("apps"), "one")
        .expect_err("forbidden");
    assert!(err.message.starts_with("403 Forbidden"), "{}", err.message);
    assert!(!err.retry, "retrying cannot fix a permission");
    assert_eq!(
        cluster.logs()[0].fields,
        vec![("code".into(), "403".into())]
    );

    // A missing primary is reconciled with reason Deleted and no object.
    assert_eq!(
        cluster.reconcile::<Snoop>(Some("apps"), "gone"),
        Ok(Action::Done)
    );
}

#[test]
fn calls_outside_a_cluster_fail_cleanly() {
    let err = api::get::<ConfigMap>(Some("apps"), "one").expect_err("no cluster");
    assert_eq!(err.code, 500);
    assert!(err.message.contains("FakeCluster"));
}

#[test]
fn recording_can_be_turned_off_for_benchmarks() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    cluster.set_recording(false);
    cluster.run(|| {
        api::patch::<ConfigMap>(
            Some("apps"),
            "one",
            &PatchType::Merge,
            &json!({"data": {"k": "w"}}),
        )
        .expect("patched");
    });
    assert!(cluster.writes().is_empty());
    let one: ConfigMap = cluster.get(Some("apps"), "one").expect("one");
    assert_eq!(
        one.data.expect("data")["k"],
        "w",
        "the write still happened"
    );
}

#[test]
fn events_are_best_effort_and_a_bad_reason_is_only_logged() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    let target = ObjectRef::new(Gvk::of::<ConfigMap>(), Some("apps"), "one");
    cluster.run(|| {
        api::event(&target, EventType::Normal, "Synced", "all good");
        api::event(&target, EventType::Warning, "", "no reason given");
        api::event(&target, EventType::Warning, &"R".repeat(129), "too long");
    });
    let events = cluster.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].reason, "Synced");
    let warnings: Vec<String> = cluster
        .logs()
        .into_iter()
        .filter(|l| l.level == Level::Warn)
        .map(|l| l.message)
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("not recorded"), "{warnings:?}");
}

#[test]
fn a_namespace_being_deleted_refuses_new_objects_recognisably() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    cluster.run(|| {
        api::delete_dyn(&Gvk::new("", "v1", "Namespace"), None, "apps").expect("deleting");
        let copy = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "late", "namespace": "apps"},
        });
        let error = api::apply_value(&copy, true).expect_err("refused");
        assert!(error.is_namespace_terminating(), "{error}");
        assert!(!ApiError::new(403, "Forbidden", "no").is_namespace_terminating());
    });
}

/// A reconciler declaring an index on ConfigMaps by their `tier` label,
/// that records what `list_by_index` finds.
struct ByTier;

impl Reconciler for ByTier {
    fn manifest() -> Manifest {
        Manifest::new("by-tier", Gvk::of::<ConfigMap>()).index(
            "tier",
            Gvk::of::<ConfigMap>(),
            IndexKey::Label("tier".into()),
        )
    }

    fn reconcile(_: Request) -> Result<Action, Error> {
        let web: Vec<ConfigMap> = api::list_by_index("tier", "web", Some("apps"))?;
        let names: Vec<String> = web.into_iter().filter_map(|c| c.metadata.name).collect();
        api::log(Level::Info, &names.join(","), &[]);
        match api::list_by_index::<Value>("undeclared", "web", None) {
            Err(e) if e.code == 400 => Ok(Action::Done),
            other => Err(Error::permanent(format!(
                "an undeclared index answered {other:?}"
            ))),
        }
    }
}

#[test]
fn list_by_index_answers_with_the_manifests_indexes() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    cluster
        .reconcile::<ByTier>(Some("apps"), "one")
        .expect("reconciles");
    let logs = cluster.logs();
    assert_eq!(
        logs.first().map(|l| l.message.as_str()),
        Some("one"),
        "{logs:?}"
    );
}

mod webhooks {
    //! The harness runs webhooks as the host does: reads work, writes and
    //! Events are refused with 403.
    use rekon_sdk::prelude::*;
    use rekon_sdk::testing::FakeCluster;
    use rekon_sdk::webhook::{AdmissionRequest, Denied, Validation, Webhook, Webhooks};

    struct Writer;

    impl Webhook for Writer {
        fn webhooks() -> Webhooks {
            Webhooks::new()
        }

        fn validate_create(request: &AdmissionRequest) -> Validation {
            let namespace: Option<Value> =
                api::get_as(&Gvk::new("", "v1", "Namespace"), None, "default")
                    .map_err(|e| Denied::new(e.message))?;
            let target = ObjectRef::new(
                Gvk::new("", "v1", "ConfigMap"),
                Some("default"),
                &request.name,
            );
            match api::patch_dyn(&target, &PatchType::Merge, &json!({"data": {"x": "y"}})) {
                Ok(_) => Ok(Vec::new()),
                Err(e) => Err(Denied::new(format!(
                    "{} {} (namespace read: {})",
                    e.code,
                    e.reason,
                    namespace.is_some()
                ))),
            }
        }
    }

    #[test]
    fn a_webhook_reads_but_cannot_write() {
        let cluster = FakeCluster::from_yaml(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n",
        )
        .unwrap();
        let request = AdmissionRequest::create(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default"}}));
        assert_eq!(request.resource, "configmaps");
        let verdict = cluster.validate::<Writer>(&request);
        assert!(!verdict.allowed);
        assert_eq!(
            verdict.message.as_deref(),
            Some("403 Forbidden (namespace read: true)")
        );
        assert!(cluster.successful_writes().is_empty());
    }
}

#[test]
fn a_refused_finalizer_patch_is_the_refusal_not_a_conflict() {
    // The server refuses a new finalizer on an object being deleted (422
    // with its cause, as a real one does), which no retry can mend: the
    // helper says so instead of calling it a conflict.
    let cluster = FakeCluster::from_yaml(
        r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.widgets.example.com}
spec:
  group: widgets.example.com
  names: {kind: Gizmo, plural: gizmos}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: widgets.example.com/v1
kind: Gizmo
metadata:
  name: g
  namespace: apps
  finalizers: [other.example.com/keep]
  deletionTimestamp: "2026-01-01T00:00:00Z"
spec: {size: 3}
"#,
    )
    .expect("fixtures");
    let read = cluster
        .object(
            &Gvk::new("widgets.example.com", "v1", "Gizmo"),
            Some("apps"),
            "g",
        )
        .expect("g");
    cluster.run(|| {
        let refused = api::add_finalizer(&read, "mine.example.com/f").expect_err("refused");
        assert_eq!(refused.code, 422, "{refused}");
        assert!(!refused.is_conflict(), "{refused}");
        assert!(
            refused
                .message
                .contains("no new finalizers can be added if the object is being deleted"),
            "{refused}"
        );
        assert!(!Error::from(refused).retry);
    });
}
