//! The `app` reconciler run natively against the in-memory cluster.

use app::{AppReconciler, FINALIZER, app_kind};
use rekon_sdk::k8s_openapi::api::apps::v1::Deployment;
use rekon_sdk::k8s_openapi::api::core::v1::Service;
use rekon_sdk::prelude::*;
use rekon_sdk::testing::{FakeCluster, Verb};

const CRD: &str = include_str!("../manifests/crd.yaml");
const EXAMPLE: &str = include_str!("../manifests/example.yaml");

fn cluster() -> FakeCluster {
    let cluster = FakeCluster::from_yaml(CRD).expect("the CRD is valid");
    cluster.seed_yaml(EXAMPLE).expect("the example is valid");
    cluster
}

fn app(cluster: &FakeCluster) -> Value {
    cluster
        .object(&app_kind(), Some("default"), "web")
        .expect("the App exists")
}

#[test]
fn creates_deployment_and_service_with_server_side_apply_and_owner_refs() {
    let cluster = cluster();
    let action = cluster
        .reconcile::<AppReconciler>(Some("default"), "web")
        .expect("reconciles");
    assert_eq!(action, Action::Done);

    let writes = cluster.writes();
    let summary: Vec<(String, String, bool)> = writes
        .iter()
        .map(|w| (format!("{:?}", w.verb), w.kind.kind.clone(), w.status))
        .collect();
    assert_eq!(writes.len(), 4, "writes: {summary:?}");
    assert!(
        writes.iter().all(|w| w.result.is_ok()),
        "writes: {writes:?}"
    );
    // 1. the finalizer, 2-3. the children by server-side apply, 4. status.
    assert_eq!(writes[0].verb, Verb::JsonPatch);
    assert!(writes[0].is("App", "web"));
    for (w, kind) in writes[1..3].iter().zip(["Deployment", "Service"]) {
        assert!(w.is(kind, "web"), "{w:?}");
        assert_eq!(
            w.verb,
            Verb::Apply {
                field_manager: "rekon-app".into(),
                force: true
            }
        );
    }
    assert!(writes[3].is("App", "web") && writes[3].status);

    let uid = app(&cluster)["metadata"]["uid"]
        .as_str()
        .expect("uid")
        .to_owned();
    let deployment: Deployment = cluster
        .get(Some("default"), "web")
        .expect("Deployment created");
    assert_eq!(deployment.spec.replicas, Some(2));
    let container = &deployment
        .spec
        .template
        .spec
        .as_ref()
        .expect("pod spec")
        .containers[0];
    assert_eq!(container.image.as_deref(), Some("nginx:1.27"));
    assert_eq!(
        container.ports.as_ref().expect("ports")[0].container_port,
        8080
    );
    let owner = &deployment
        .metadata
        .owner_references
        .as_ref()
        .expect("owner")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
        ("App", "web", uid.as_str())
    );
    assert_eq!(owner.controller, Some(true));
    assert_eq!(owner.block_owner_deletion, Some(true));

    let service: Service = cluster
        .get(Some("default"), "web")
        .expect("Service created");
    let port = &service
        .spec
        .as_ref()
        .expect("spec")
        .ports
        .as_ref()
        .expect("ports")[0];
    assert_eq!(port.port, 8080);
    assert_eq!(
        service.metadata.owner_references.as_ref().expect("owner")[0].uid,
        uid
    );
}

#[test]
fn writes_status_with_observed_generation_and_ready_condition() {
    let cluster = cluster();
    cluster
        .reconcile::<AppReconciler>(Some("default"), "web")
        .expect("reconciles");
    let app = app(&cluster);
    assert!(api::has_finalizer(&app, FINALIZER));
    let status = &app["status"];
    assert_eq!(status["observedGeneration"], app["metadata"]["generation"]);
    assert_eq!(status["readyReplicas"], 0);
    assert_eq!(status["replicas"], 2);
    let ready = &status["conditions"][0];
    assert_eq!(ready["type"], "Ready");
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "Progressing");
    assert_eq!(ready["message"], "0/2 replicas ready");
}

#[test]
fn reports_ready_once_the_deployment_is_and_is_idempotent() {
    let cluster = cluster();
    cluster
        .reconcile::<AppReconciler>(Some("default"), "web")
        .expect("reconciles");
    let first_transition = app(&cluster)["status"]["conditions"][0]["lastTransitionTime"].clone();

    // The Deployment controller reports two ready pods.
    let mut deployment = cluster
        .object(&Gvk::of::<Deployment>(), Some("default"), "web")
        .expect("Deployment");
    deployment["status"] = json!({"replicas": 2, "readyReplicas": 2});
    cluster.seed(deployment).expect("status stored");

    cluster.take_writes();
    cluster
        .reconcile::<AppReconciler>(Some("default"), "web")
        .expect("reconciles");
    let status = app(&cluster)["status"].clone();
    assert_eq!(status["readyReplicas"], 2);
    assert_eq!(status["conditions"][0]["status"], "True");
    assert_eq!(status["conditions"][0]["reason"], "Available");
    assert!(!first_transition.is_null());

    // Nothing changed since: no status write, only the (no-op) applies.
    cluster.take_writes();
    cluster
        .reconcile::<AppReconciler>(Some("default"), "web")
        .expect("reconciles");
    let writes = cluster.writes();
    assert_eq!(writes.len(), 2, "{writes:?}");
    assert!(writes.iter().all(|w| w.is_apply()));
}

#[test]
fn spec_change_is_applied_to_the_deployment() {
    let cluster = cluster();
    cluster
        .reconcile::<AppReconciler>(Some("default"), "web")
        .expect("reconciles");
    let mut changed = app(&cluster);
    changed["spec"]["replicas"] = json!(5);
    changed["spec"]["image"] = json!("nginx:1.28");
    cluster.seed(changed).expect("App updated");
    cluster
        .reconcile::<AppReconciler>(Some("default"), "web")
        .expect("reconciles");
    let deployment: Deployment = cluster.get(Some("default"), "web").expect("Deployment");
    assert_eq!(deployment.spec.replicas, Some(5));
    let app = app(&cluster);
    assert_eq!(
        app["status"]["observedGeneration"],
        app["metadata"]["generation"]
    );
    assert_eq!(app["status"]["replicas"], 5);
}

#[test]
fn deletion_cleans_up_records_an_event_and_releases_the_finalizer() {
    let cluster = cluster();
    cluster
        .reconcile::<AppReconciler>(Some("default"), "web")
        .expect("reconciles");
    cluster
        .delete(&app_kind(), Some("default"), "web")
        .expect("deletion requested");
    assert!(
        api::is_deleting(&app(&cluster)),
        "the finalizer holds the App"
    );

    cluster.take_writes();
    cluster
        .reconcile::<AppReconciler>(Some("default"), "web")
        .expect("finalizes");
    let writes = cluster.writes();
    assert!(writes[0].is("Deployment", "web") && writes[0].verb == Verb::Delete);
    assert!(writes[1].is("Service", "web") && writes[1].verb == Verb::Delete);
    assert!(writes[2].is("App", "web") && writes[2].verb == Verb::JsonPatch);
    assert_eq!(writes.len(), 3);

    let events = cluster.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].reason, "CleanedUp");
    assert_eq!(events[0].event_type, EventType::Normal);

    assert!(cluster.get::<Deployment>(Some("default"), "web").is_none());
    assert!(cluster.get::<Service>(Some("default"), "web").is_none());
    assert!(
        cluster
            .object(&app_kind(), Some("default"), "web")
            .is_none(),
        "with the finalizer gone the App is deleted"
    );

    // The App is gone: a last request is a no-op.
    cluster.take_writes();
    let action = cluster
        .reconcile::<AppReconciler>(Some("default"), "web")
        .expect("no-op");
    assert_eq!(action, Action::Done);
    assert!(cluster.writes().is_empty());
}

const NO_IMAGE: &str = "apiVersion: demo.rekon.dev/v1\nkind: App\nmetadata: {name: bad, namespace: default}\nspec: {replicas: 1}\n";

#[test]
fn an_app_without_image_is_refused_by_the_schema() {
    let cluster = FakeCluster::from_yaml(CRD).expect("CRD");
    let refused = cluster.seed_yaml(NO_IMAGE).expect_err("image is required");
    assert_eq!(refused.code, 422, "{refused}");
    assert!(
        refused.message.contains("spec.image: Required value"),
        "{refused}"
    );
}

#[test]
fn invalid_spec_is_a_permanent_error() {
    // An App stored before the CRD required an image (the server keeps it
    // when its CRD changes) reaches the reconciler as it is.
    let older_crd = CRD.replacen("            required:\n            - image\n", "", 1);
    assert_ne!(older_crd, CRD);
    let cluster = FakeCluster::from_yaml(&older_crd).expect("CRD");
    cluster.seed_yaml(NO_IMAGE).expect("App");
    cluster
        .seed_yaml(CRD)
        .expect("the CRD now requires an image");
    let err = cluster
        .reconcile::<AppReconciler>(Some("default"), "bad")
        .expect_err("image is required");
    assert!(!err.retry);
    assert!(err.message.contains("image"), "{}", err.message);
    assert!(
        cluster.get::<Deployment>(Some("default"), "bad").is_none(),
        "nothing is created for an invalid App"
    );
    let bad = cluster
        .object(&app_kind(), Some("default"), "bad")
        .expect("App");
    let ready = &bad["status"]["conditions"][0];
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "InvalidSpec");
    assert!(
        ready["message"]
            .as_str()
            .is_some_and(|m| m.contains("image"))
    );
    assert_eq!(cluster.events()[0].reason, "InvalidSpec");
    assert_eq!(cluster.events()[0].event_type, EventType::Warning);

    // Reconciling again does not repeat the status write or the Event.
    cluster.take_writes();
    cluster
        .reconcile::<AppReconciler>(Some("default"), "bad")
        .expect_err("still invalid");
    assert!(cluster.writes().is_empty(), "{:?}", cluster.writes());
    assert_eq!(cluster.events().len(), 1);
}

#[test]
fn manifest_declares_owned_kinds_finalizer_and_permissions() {
    let m = AppReconciler::manifest();
    assert_eq!(m.name, "app");
    assert_eq!(m.primary, app_kind());
    let owned: Vec<Gvk> = m.owns.iter().map(|o| o.kind.clone()).collect();
    assert_eq!(owned, vec![Gvk::of::<Deployment>(), Gvk::of::<Service>()]);
    assert_eq!(m.finalizer.as_deref(), Some(FINALIZER));
    assert!(m.allows(
        &Gvk::of::<Deployment>(),
        Verbs::PATCH | Verbs::DELETE,
        Some("x")
    ));
    assert!(m.allows(&app_kind(), Verbs::PATCH, Some("x")));
    assert!(!m.allows(&app_kind(), Verbs::DELETE, Some("x")));
}

mod webhooks {
    //! The App's webhooks, natively: what `kubectl apply` would meet.
    use super::*;
    use app::webhook::{to_v1, to_v2};
    use rekon_sdk::webhook::AdmissionRequest;

    fn new_app(spec: Value) -> Value {
        json!({"apiVersion": "demo.rekon.dev/v1", "kind": "App",
               "metadata": {"name": "web", "namespace": "default"}, "spec": spec})
    }

    #[test]
    fn validation_refuses_a_missing_image_and_replicas_out_of_range() {
        let cluster = FakeCluster::new();
        let ok = cluster.validate::<AppReconciler>(&AdmissionRequest::create(new_app(
            json!({"image": "nginx:1.27", "replicas": 100}),
        )));
        assert!(ok.allowed, "{ok:?}");
        assert!(ok.warnings.is_empty());
        let bad = cluster.validate::<AppReconciler>(&AdmissionRequest::create(new_app(
            json!({"replicas": 101}),
        )));
        assert!(!bad.allowed);
        assert_eq!(bad.code, Some(422));
        assert_eq!(
            bad.message.as_deref(),
            Some("spec.image is required; spec.replicas must be between 0 and 100, not 101")
        );
        let negative = AdmissionRequest::update(
            new_app(json!({"image": "nginx"})),
            new_app(json!({"image": "nginx", "replicas": -1})),
        );
        assert!(!cluster.validate::<AppReconciler>(&negative).allowed);
        let latest = cluster.validate::<AppReconciler>(&AdmissionRequest::create(new_app(
            json!({"image": "nginx:latest"}),
        )));
        assert!(latest.allowed);
        assert_eq!(latest.warnings.len(), 1, "{latest:?}");
        // Deleting is never refused.
        let delete = AdmissionRequest::delete(new_app(json!({})));
        assert!(cluster.validate::<AppReconciler>(&delete).allowed);
    }

    #[test]
    fn defaulting_fills_replicas_and_port_and_keeps_what_is_set() {
        let cluster = FakeCluster::new();
        let (verdict, changed) = cluster.mutate::<AppReconciler>(&AdmissionRequest::create(
            new_app(json!({"image": "nginx"})),
        ));
        assert!(verdict.allowed);
        assert_eq!(
            changed.expect("defaults were filled")["spec"],
            json!({"image": "nginx", "replicas": 1, "port": 80})
        );
        let (_, unchanged) = cluster.mutate::<AppReconciler>(&AdmissionRequest::create(new_app(
            json!({"image": "nginx", "replicas": 0, "port": 8080}),
        )));
        assert_eq!(unchanged, None, "nothing to default: no patch");
    }

    #[test]
    fn conversion_goes_to_v2_and_back_without_loss() {
        let cluster = FakeCluster::new();
        let v1 = new_app(json!({"image": "nginx", "replicas": 2, "port": 8080}));
        let v2 = cluster
            .convert::<AppReconciler>(vec![v1.clone()], "demo.rekon.dev/v2")
            .expect("converts");
        assert_eq!(v2[0]["apiVersion"], "demo.rekon.dev/v2");
        assert_eq!(
            v2[0]["spec"],
            json!({"replicas": 2, "container": {"image": "nginx", "port": 8080}})
        );
        let back = cluster
            .convert::<AppReconciler>(v2, "demo.rekon.dev/v1")
            .expect("converts back");
        assert_eq!(back[0], v1);
        assert_eq!(to_v1(to_v2(v1.clone())), v1);
        let unknown = cluster.convert::<AppReconciler>(vec![v1], "demo.rekon.dev/v3");
        assert!(unknown.unwrap_err().contains("no version"));
    }
}

/// `manifests/crd.yaml` is the CRD the Rust types make (`app::crd()`);
/// `REKON_UPDATE_CRDS=1 cargo test -p app` rewrites it.
#[test]
fn checked_in_crd_is_the_generated_one() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests/crd.yaml");
    if let Err(diff) = rekon_sdk::crd::check_file(&app::crd(), path) {
        panic!("{diff}");
    }
}
