//! Running a case: a fresh cluster (or the real server's), the objects
//! seeded, the request reconciled, the outcome kept.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::{Context as _, anyhow, bail};
use chrono::{SecondsFormat, Utc};
use rekon_host::contract::{ObjectRef, Reason, Request};
use rekon_host::runtime::{CallRecord, DispatchOptions};
use rekon_host::{Cluster, Module};
use rekon_offline::MemoryCluster;
use serde_json::{Value, json};

use crate::commands::reconcile::{finalizing, settle_target};

use super::Args;
use super::cases::{Case, Target, identity};
use super::checks::{
    call_lines, check_absent, check_entries, check_present, check_result, events, refused,
};

/// What a case found wrong (empty: it passed), and the host calls made.
pub(super) struct Report {
    pub(super) failures: Vec<String>,
    pub(super) calls: Vec<String>,
    /// The kinds the reconcile's calls reached (`apiVersion`, `kind`):
    /// what a real server is cleaned of after the case.
    pub(super) touched: BTreeSet<(String, String)>,
}

/// Where a case runs: a fresh in-memory cluster, or the real API server
/// of the run.
pub(super) enum Backend {
    Memory(MemoryCluster),
    Real(Arc<crate::commands::real::Direct>),
}

impl Backend {
    /// The cluster the guest's calls reach.
    pub(super) fn cluster(&self) -> Arc<dyn Cluster> {
        match self {
            Backend::Memory(cluster) => Arc::new(cluster.clone()),
            Backend::Real(direct) => direct.cluster(),
        }
    }

    /// The reference of `document`, its namespace settled as the server
    /// serves its kind.
    pub(super) async fn settle(&self, document: &mut Value) -> Option<ObjectRef> {
        match self {
            Backend::Memory(cluster) => settle_target(cluster, document),
            Backend::Real(direct) => direct.settle(document).await,
        }
    }

    /// Adds an object as given.
    pub(super) async fn seed(&self, object: Value) -> anyhow::Result<Value> {
        match self {
            Backend::Memory(cluster) => cluster.seed(object).map_err(|e| anyhow!("{}", e.message)),
            Backend::Real(direct) => direct.seed(object).await,
        }
    }

    /// Whether answers may lag (a real server's garbage collector).
    pub(super) fn eventual(&self) -> bool {
        match self {
            Backend::Memory(_) => false,
            Backend::Real(_) => true,
        }
    }
}

/// The real API server of a run, when there is one (`--kube-assets` or
/// `KUBEBUILDER_ASSETS`): one for every case of every file, each case
/// cleaned up after.
pub(super) struct RealRun {
    pub(super) real: Option<(
        crate::commands::real::Real,
        Arc<crate::commands::real::Direct>,
    )>,
}

impl RealRun {
    pub(super) async fn start(args: &Args) -> anyhow::Result<RealRun> {
        let Some(assets) = args.server.assets() else {
            return Ok(RealRun { real: None });
        };
        let real = crate::commands::real::Real::start(&assets).await?;
        let direct = Arc::new(crate::commands::real::Direct::new(
            real.client("test").await?,
        ));
        direct.remember_what_is_there().await?;
        eprintln!(
            "rekon test: on a real API server ({}; ready in {:.1} s) on {}",
            real.what,
            real.took.as_secs_f64(),
            real.cluster.url()
        );
        Ok(RealRun {
            real: Some((real, direct)),
        })
    }

    /// Installs the CRDs `module` ships on the real server, and serves
    /// its conversions to it until the guard is dropped.
    pub(super) async fn install(&self, module: &Module, file: &Path) -> anyhow::Result<Serving> {
        if let Some((_, direct)) = &self.real {
            let crds = module.crds().await.context("the CRDs the module ships")?;
            direct
                .install_crds(crds, "rekon-test")
                .await
                .with_context(|| format!("the module of {}", file.display()))?;
            let task = crate::commands::real::serve_conversions(direct.clone(), module)
                .await
                .with_context(|| format!("the module of {}", file.display()))?;
            return Ok(Serving(task));
        }
        let _ = (module, file);
        Ok(Serving(None))
    }

    /// Where the next case runs.
    pub(super) async fn backend(&self, module: &Module) -> anyhow::Result<Backend> {
        if let Some((_, direct)) = &self.real {
            return Ok(Backend::Real(direct.clone()));
        }
        Ok(Backend::Memory(crate::memory::cluster_of(module).await?))
    }

    /// Takes away what `case` left on the real server.
    pub(super) async fn clean(&self, case: &Case, report: Option<&Report>) -> anyhow::Result<()> {
        if let Some((_, direct)) = &self.real {
            let mut kinds = report.map(|r| r.touched.clone()).unwrap_or_default();
            let mut add = |object: &Value| {
                if let (Some(api_version), Some(kind)) =
                    (object["apiVersion"].as_str(), object["kind"].as_str())
                {
                    kinds.insert((api_version.to_string(), kind.to_string()));
                }
            };
            case.objects.iter().for_each(&mut add);
            case.expect.present.iter().for_each(|(_, o)| add(o));
            match &case.request.target {
                Target::Object(object) => add(object),
                Target::Ref(target) => {
                    add(&json!({"apiVersion": api_version(target), "kind": target.kind.kind}))
                }
            }
            for target in &case.expect.absent {
                add(&json!({"apiVersion": api_version(target), "kind": target.kind.kind}));
            }
            direct.clean(&kinds).await?;
        }
        let _ = (case, report);
        Ok(())
    }
}

/// A module's conversion server for the real API server, stopped when
/// dropped.
pub(super) struct Serving(Option<tokio::task::JoinHandle<()>>);

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(task) = &self.0 {
            task.abort();
        }
    }
}

/// The kinds the calls reached (`apiVersion`, `kind`).
pub(super) fn touched(calls: &[CallRecord]) -> BTreeSet<(String, String)> {
    let mut kinds = BTreeSet::new();
    for call in calls {
        for about in [&call.args, &call.args["object"], &call.args["regarding"]] {
            if let (Some(api_version), Some(kind)) =
                (about["apiVersion"].as_str(), about["kind"].as_str())
            {
                kinds.insert((api_version.to_string(), kind.to_string()));
            }
        }
    }
    kinds
}

pub(super) async fn run_case(
    module: &Module,
    case: &Case,
    backend: &Backend,
) -> anyhow::Result<Report> {
    let request = &case.request;
    let cluster = backend.cluster();
    let now = request.time.unwrap_or_else(Utc::now);
    let deletion = json!(now.to_rfc3339_opts(SecondsFormat::Secs, true));
    let mut objects = case.objects.clone();
    if let (Target::Ref(target), true) = (&request.target, request.deleting) {
        let listed = objects
            .iter_mut()
            .find(|o| identity(o).is_ok_and(|r| same_object(&r, target)))
            .with_context(|| {
                format!(
                    "request.deleting with request.ref: {} must be listed in objects",
                    describe(target)
                )
            })?;
        set_deleting(listed, &deletion);
    }
    for (index, mut object) in objects.into_iter().enumerate() {
        backend.settle(&mut object).await;
        if !gone(&object) {
            backend
                .seed(object)
                .await
                .with_context(|| format!("cannot add objects[{index}]"))?;
        }
    }
    let explicitly_deleted = matches!(request.reason, Some(Reason::Deleted));
    let (target, object) = match &request.target {
        Target::Object(object) => {
            let mut object = object.clone();
            if request.deleting {
                set_deleting(&mut object, &deletion);
            }
            let target = backend
                .settle(&mut object)
                .await
                .context("request.object")?;
            let object = if explicitly_deleted || gone(&object) {
                None
            } else {
                Some(
                    backend
                        .seed(object)
                        .await
                        .context("cannot add request.object")?,
                )
                .filter(|o| !o.is_null())
            };
            (target, object)
        }
        Target::Ref(target) => {
            let target = settled(backend, target).await;
            let object = match read(&*cluster, &target).await? {
                Some(_) if explicitly_deleted => None,
                found => found,
            };
            (target, object)
        }
    };
    let (target, object) = crate::memory::as_primary(module, &*cluster, target, object).await?;
    let reason = request.reason.unwrap_or(match &object {
        None => Reason::Deleted,
        Some(object) if finalizing(module, object) => Reason::Finalizing,
        Some(_) => Reason::Updated,
    });
    let request = Request {
        target,
        object: object.as_ref().map(Value::to_string),
        reason,
        attempt: 0,
    };
    let options = DispatchOptions {
        record: true,
        wall_clock: case.request.time.map(SystemTime::from),
        ..DispatchOptions::default()
    };
    let outcome = module.reconcile(cluster.clone(), &request, options).await;
    let mut failures = Vec::new();
    if case.round_trip {
        let mut given: Vec<&Value> = case.objects.iter().collect();
        if let Target::Object(object) = &case.request.target {
            given.push(object);
        }
        failures.extend(super::roundtrip::round_trips(module, cluster.clone(), &given).await);
    }
    failures.extend(check_result(&case.expect.result, &outcome.result));
    for (target, expected) in &case.expect.present {
        failures.extend(check_present(backend, target, expected).await?);
    }
    for target in &case.expect.absent {
        failures.extend(check_absent(backend, target).await?);
    }
    if let Some(expected) = &case.expect.events {
        failures.extend(check_entries(
            "events",
            "Event",
            expected,
            &events(&outcome),
        ));
    }
    if let Some(expected) = &case.expect.refused {
        failures.extend(check_entries(
            "refused",
            "refused call",
            expected,
            &refused(&outcome),
        ));
    }
    Ok(Report {
        failures,
        calls: call_lines(&outcome.calls),
        touched: touched(&outcome.calls),
    })
}

/// Sets `metadata.deletionTimestamp` unless one is given.
pub(super) fn set_deleting(object: &mut Value, at: &Value) {
    if object["metadata"]["deletionTimestamp"].is_null() {
        object["metadata"]["deletionTimestamp"] = at.clone();
    }
}

/// An object being deleted without finalizers: Kubernetes has removed it.
pub(super) fn gone(object: &Value) -> bool {
    let finalizers = object["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    !object["metadata"]["deletionTimestamp"].is_null() && !finalizers
}

/// Whether two references name the same object, a missing namespace
/// counting as `default` (a cluster-scoped kind has none on either side).
pub(super) fn same_object(a: &ObjectRef, b: &ObjectRef) -> bool {
    let namespace = |r: &ObjectRef| r.namespace.clone().unwrap_or_else(|| "default".into());
    (
        &a.kind.group,
        &a.kind.version,
        &a.kind.kind,
        &a.name,
        namespace(a),
    ) == (
        &b.kind.group,
        &b.kind.version,
        &b.kind.kind,
        &b.name,
        namespace(b),
    )
}

/// `target` with its namespace settled as the cluster serves its kind.
pub(super) async fn settled(backend: &Backend, target: &ObjectRef) -> ObjectRef {
    let mut document = json!({
        "apiVersion": api_version(target),
        "kind": target.kind.kind,
        "metadata": {"name": target.name, "namespace": target.namespace},
    });
    backend
        .settle(&mut document)
        .await
        .unwrap_or_else(|| target.clone())
}

/// The object `target` names, `None` if absent.
pub(super) async fn read(
    cluster: &dyn Cluster,
    target: &ObjectRef,
) -> anyhow::Result<Option<Value>> {
    match cluster.get(target).await {
        Ok(text) => Ok(Some(serde_json::from_str(&text)?)),
        Err(error) if error.code == 404 => Ok(None),
        Err(error) => bail!("cannot read {}: {}", describe(target), error.message),
    }
}

pub(super) fn api_version(target: &ObjectRef) -> String {
    if target.kind.group.is_empty() {
        target.kind.version.clone()
    } else {
        format!("{}/{}", target.kind.group, target.kind.version)
    }
}

/// `ConfigMap team-a/shared`, `Deployment.apps default/web`, `Namespace team-a`.
pub(super) fn describe(target: &ObjectRef) -> String {
    let kind = if target.kind.group.is_empty() {
        target.kind.kind.clone()
    } else {
        format!("{}.{}", target.kind.kind, target.kind.group)
    };
    match &target.namespace {
        Some(ns) => format!("{kind} {ns}/{}", target.name),
        None => format!("{kind} {}", target.name),
    }
}
