//! The peer: the same App operator as a kube-rs `Controller`, compiled
//! natively, against the same in-memory API server as rekon. Its reconcile
//! makes the calls the `app` module makes (a JSON patch adding the finalizer,
//! server-side apply of the Deployment and the Service, a merge patch of
//! the status when it changes), built by the same functions of the `app`
//! crate, so the two differ only in what runs around the logic.
//!
//! Like the `app` module (its manifest's `generation_changed` primary
//! predicate), it reconciles an App when its generation changes, not on
//! its own status writes: the watch stream of Apps is filtered with
//! `predicates::generation`, as kube-rs documents for
//! `Controller::for_stream`. The two then run the same reconciles, and
//! their CPU per reconcile compares like for like.
//!
//! A deleted App is cleaned up as the `app` module cleans it up: its
//! Deployment and Service deleted (already gone is no error), a `CleanedUp`
//! Event recorded through kube-rs's `Recorder` (which folds repeats of an
//! object's Event with the same reason into a series), the finalizer
//! removed by a JSON patch.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::{WatchStreamExt as _, predicates, reflector, watcher};
use serde_json::{Value, json};

/// What the field manager of the peer's writes is called.
const FIELD_MANAGER: &str = "kubers-app";

/// The reconciles the controller ran.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicU64>);

impl Counter {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

struct Context {
    client: kube::Client,
    apps: ApiResource,
    reconciles: Counter,
    recorder: Recorder,
}

#[derive(Debug)]
struct Failed(String);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failed {}

impl From<kube::Error> for Failed {
    fn from(e: kube::Error) -> Failed {
        Failed(e.to_string())
    }
}

/// Starts the controller (concurrency `concurrency`) on the current
/// runtime; it runs until the process ends.
pub fn start(client: kube::Client, concurrency: u16, reconciles: Counter) {
    let apps = ApiResource::from_gvk(&GroupVersionKind::gvk("demo.rekon.dev", "v1", "App"));
    let reporter = Reporter {
        controller: FIELD_MANAGER.to_string(),
        instance: None,
    };
    let context = Arc::new(Context {
        client: client.clone(),
        apps: apps.clone(),
        reconciles,
        recorder: Recorder::new(client.clone(), reporter),
    });
    let writer = reflector::store::Writer::new(apps.clone());
    let reader = writer.as_reader();
    let primaries = watcher(
        Api::<DynamicObject>::all_with(client.clone(), &apps),
        watcher::Config::default(),
    )
    .default_backoff()
    .reflect(writer)
    .applied_objects()
    .predicate_filter(predicates::generation, Default::default());
    let controller = Controller::for_stream_with(primaries, reader, apps)
        .owns(
            Api::<Deployment>::all(client.clone()),
            watcher::Config::default(),
        )
        .owns(Api::<Service>::all(client), watcher::Config::default())
        .with_config(Config::default().concurrency(concurrency));
    tokio::spawn(
        controller
            .run(reconcile, error_policy, context)
            .for_each(|_| async {}),
    );
}

fn error_policy(_: Arc<DynamicObject>, _: &Failed, _: Arc<Context>) -> Action {
    Action::requeue(Duration::from_millis(100))
}

async fn reconcile(app: Arc<DynamicObject>, ctx: Arc<Context>) -> Result<Action, Failed> {
    ctx.reconciles.0.fetch_add(1, Ordering::Relaxed);
    let object = serde_json::to_value(app.as_ref()).map_err(|e| Failed(e.to_string()))?;
    let ns = app.metadata.namespace.clone().unwrap_or_default();
    let name = app.metadata.name.clone().unwrap_or_default();
    let apps: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &ns, &ctx.apps);
    let holds = app
        .metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|f| f == app::FINALIZER));
    if app.metadata.deletion_timestamp.is_some() {
        if holds {
            finalize(&app, &ns, &name, &apps, &ctx).await?;
        }
        return Ok(Action::await_change());
    }
    if !holds {
        let mut ops = vec![json!({"op": "test", "path": "/metadata/resourceVersion",
            "value": app.metadata.resource_version})];
        ops.push(if app.metadata.finalizers.is_some() {
            json!({"op": "add", "path": "/metadata/finalizers/-", "value": app::FINALIZER})
        } else {
            json!({"op": "add", "path": "/metadata/finalizers", "value": [app::FINALIZER]})
        });
        let patch: json_patch::Patch =
            serde_json::from_value(Value::Array(ops)).map_err(|e| Failed(e.to_string()))?;
        apps.patch(&name, &PatchParams::default(), &Patch::Json::<()>(patch))
            .await?;
    }
    let spec: app::AppSpec = serde_json::from_value(object["spec"].clone())
        .map_err(|e| Failed(format!("invalid spec: {e}")))?;
    let current: app::AppStatus =
        serde_json::from_value(object["status"].clone()).unwrap_or_default();
    let generation = app.metadata.generation;
    let owner = json!({"apiVersion": "demo.rekon.dev/v1", "kind": "App", "name": name,
        "uid": app.metadata.uid, "controller": true, "blockOwnerDeletion": true});
    let apply = PatchParams::apply(FIELD_MANAGER).force();
    let deployments: Api<Deployment> = Api::namespaced(ctx.client.clone(), &ns);
    let applied = deployments
        .patch(
            &name,
            &apply,
            &Patch::Apply(app::deployment(&ns, &name, &spec, &owner)),
        )
        .await?;
    let services: Api<Service> = Api::namespaced(ctx.client.clone(), &ns);
    services
        .patch(
            &name,
            &apply,
            &Patch::Apply(app::service(&ns, &name, &spec, &owner)),
        )
        .await?;
    let ready = applied.status.and_then(|s| s.ready_replicas).unwrap_or(0);
    let status = app::desired_status(current.clone(), generation, spec.replicas, ready);
    if status != current {
        apps.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await?;
    }
    Ok(Action::await_change())
}

/// Cleans up behind a deleted App, as the `app` module does.
async fn finalize(
    app: &DynamicObject,
    ns: &str,
    name: &str,
    apps: &Api<DynamicObject>,
    ctx: &Context,
) -> Result<(), Failed> {
    let gone = |result: Result<_, kube::Error>| match result {
        Ok(_) => Ok("was present"),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok("already gone"),
        Err(error) => Err(Failed::from(error)),
    };
    let params = kube::api::DeleteParams::default();
    let deployment = gone(
        Api::<Deployment>::namespaced(ctx.client.clone(), ns)
            .delete(name, &params)
            .await
            .map(|_| ()),
    )?;
    let service = gone(
        Api::<Service>::namespaced(ctx.client.clone(), ns)
            .delete(name, &params)
            .await
            .map(|_| ()),
    )?;
    let event = Event {
        type_: EventType::Normal,
        reason: "CleanedUp".into(),
        note: Some(format!(
            "deleted Deployment ({deployment}) and Service ({service}) {name}"
        )),
        action: "Finalize".into(),
        secondary: None,
    };
    let reference = k8s_openapi::api::core::v1::ObjectReference {
        api_version: Some("demo.rekon.dev/v1".into()),
        kind: Some("App".into()),
        name: Some(name.to_string()),
        namespace: Some(ns.to_string()),
        uid: app.metadata.uid.clone(),
        ..Default::default()
    };
    // Best effort, as the module's Events are.
    let _ = ctx.recorder.publish(&event, &reference).await;
    let finalizers = app.metadata.finalizers.clone().unwrap_or_default();
    let Some(index) = finalizers.iter().position(|f| f == app::FINALIZER) else {
        return Ok(());
    };
    let path = format!("/metadata/finalizers/{index}");
    let ops = json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": app.metadata.resource_version},
        {"op": "test", "path": path, "value": app::FINALIZER},
        {"op": "remove", "path": path},
    ]);
    let patch: json_patch::Patch =
        serde_json::from_value(ops).map_err(|e| Failed(e.to_string()))?;
    match apps
        .patch(name, &PatchParams::default(), &Patch::Json::<()>(patch))
        .await
    {
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        other => other.map(|_| ()).map_err(Failed::from),
    }
}
