//! `rekon test CASES.yaml...`: runs a module's reconcile against test cases
//! written in YAML, for modules in any language, and prints each failure
//! as a diff.
//!
//! Each case runs one reconcile on a fresh in-memory cluster (the store of
//! `rekon reconcile` and `rekon dev`), with the production limits (the
//! memory cap and CPU deadline of the global flags, as `rekon run`), then
//! checks what the cluster holds and what the reconcile did.
//!
//! ```yaml
//! module: ../../target/guests/wasm32-wasip2/guest/configmap_sync.wasm  # relative to this file
//! cases:
//!   - name: copies the source into a listed namespace
//!     objects:                  # the cluster beforehand: whole objects
//!       - {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
//!     request:                  # what is reconciled
//!       object:                 # the object, added to the cluster...
//!         apiVersion: v1
//!         kind: ConfigMap
//!         metadata: {name: shared, namespace: default}
//!       # ref: {apiVersion: v1, kind: ConfigMap, namespace: default, name: shared}
//!       #                       # ...or one listed in `objects`, or one that is gone
//!       reason: updated         # default: as a live host picks it (below)
//!       deleting: true          # sets metadata.deletionTimestamp (at `time`)
//!       time: 2026-01-01T00:00:00Z  # the guest's wall clock, standing still; default: now
//!     expect:
//!       result: done            # or {requeueAfter: 30s}, or {error: "part of the message", retry: true}
//!       present:                # objects that must exist: a subset of each must match
//!         - {apiVersion: v1, kind: ConfigMap, metadata: {name: shared, namespace: team-a}, data: {region: eu}}
//!       absent:                 # objects that must not exist
//!         - {apiVersion: v1, kind: ConfigMap, metadata: {name: shared, namespace: team-b}}
//!       events:                 # Events recorded during the reconcile, in any order
//!         - {type: Warning, reason: CopyConflict, message: "part of the message"}
//!       refused:                # host calls that failed, in any order
//!         - {verb: delete, kind: Secret, code: 403}
//! ```
//!
//! - `request`: exactly one of `object` (added to the cluster after
//!   `objects`) and `ref` (`apiVersion`, `kind`, `namespace`, `name`: an
//!   object listed in `objects`, or one absent from the cluster).
//! - `objects` and `request.object`: a namespaced object given no
//!   namespace is in `default`, and so is one of a kind the cluster does
//!   not serve (a custom kind is registered as namespaced on first sight;
//!   list its CustomResourceDefinition first for a cluster-scoped one).
//! - `reason` (`added`, `updated`, `deleted`, `finalizing`,
//!   `owned-changed`, `watched-changed`, `requeued`, `retry`, `resync`,
//!   `module-reloaded`, `manual`); by default, as a live host picks it:
//!   `deleted` when the object is absent, `finalizing` when it has a
//!   deletionTimestamp and still carries the module's finalizer, else
//!   `updated`. `reason: deleted` sends no object (an `object:` is then not
//!   added to the cluster).
//! - `deleting: true` sets `metadata.deletionTimestamp` to `time` on the
//!   object (`object`, or the `objects` entry `ref` names). As in
//!   Kubernetes, an object being deleted that has no finalizers is gone:
//!   it is not added to the cluster.
//! - `time`: the guest's wall clock (WASI `wall-clock`: `SystemTime::now()`,
//!   `Date.now()`, `time.time()`) stands still at that RFC 3339 time during
//!   the reconcile. The monotonic clock runs as usual.
//! - `expect.result`: `done`, `{requeueAfter: 30s}` (units `ms`, `s`, `m`,
//!   `h`), or `{error: TEXT}` (the error's message contains TEXT; add
//!   `retry: true|false` to check whether it is retried). Omitted: any
//!   result but an error.
//! - `expect.present`: each object (named by apiVersion, kind,
//!   metadata.name and metadata.namespace) must exist, and every other
//!   field given must match: maps partially (only the keys given), lists
//!   element by element (same length), scalars equal; `null` matches an
//!   absent field.
//! - `expect.events` and `expect.refused`: each entry must match a
//!   different recorded one, as a subset (`message` as a part of the
//!   message). An Event is `{type, reason, message, regarding: {apiVersion,
//!   kind, namespace, name}}`; a refused call is `{verb, apiVersion, kind,
//!   namespace, name, code, reason, message}`, `verb` the host call (`get`,
//!   `list`, `create`, `replace`, `patch`, `replace-status`, `patch-status`,
//!   `delete`, `record-event`): any call that failed, except a read of an
//!   object that does not exist (a 404 on `get` or `list`, which is how the
//!   cluster says "absent"). An empty list (`events: []`) means none at all.
//!
//! Real mode (`--kube-assets DIR`, else `KUBEBUILDER_ASSETS`; `--embedded`
//! keeps the in-memory server): the cases run on one real kube-apiserver +
//! etcd for the whole run ([`super::real`]), each file's module with its
//! CRDs installed and its conversions served, objects created as given
//! (an object being deleted is marked at the server's time, not `time`),
//! and what a case made cleaned up after it.
//!
//! Output: `ok   NAME` or `FAIL NAME` per case, then each failure (what
//! differs, `- expected` / `+ actual`, and the host calls the reconcile
//! made), then `N passed, M failed`. Exit code 0 when every case passes, 1
//! when one fails, 2 when a cases file or module cannot be used, 130
//! when interrupted (a real server is stopped first).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::{Context as _, anyhow, bail};
use chrono::{DateTime, SecondsFormat, Utc};
use rekon_host::contract::{Action, ObjectRef, Reason, Request};
use rekon_host::names::object_ref_of;
use rekon_host::runtime::{CallRecord, DispatchOptions, Outcome, ReconcileError};
use rekon_host::{Cluster, Engine, Module};
use rekon_offline::MemoryCluster;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::reconcile::{finalizing, settle_target};
use crate::common::{load, say};
use crate::global::{Global, engine};

/// `rekon test CASES.yaml... [--module MODULE.wasm] [--case TEXT]`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Files of test cases (YAML; see `rekon test --help` and the README).
    #[arg(required = true, value_name = "CASES.yaml")]
    files: Vec<PathBuf>,
    /// Test this module instead of the one each file names (`module:`).
    #[arg(long, value_name = "MODULE.wasm")]
    module: Option<PathBuf>,
    /// Run only the cases whose name contains this text.
    #[arg(long = "case", value_name = "TEXT")]
    case: Option<String>,
    #[command(flatten)]
    server: super::real::ServerArgs,
}

/// Exit code when a cases file or a module cannot be used.
const BAD_INPUT: u8 = 2;

/// Exit code when interrupted (128 + SIGINT, as a shell reports it).
const INTERRUPTED: u8 = 130;

/// How long an object expected absent may take to go on a real server.
const ABSENT_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Most host calls listed under a failure.
const MAX_CALLS_SHOWN: usize = 40;

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    // Ctrl-C or SIGTERM drops the run, and with it a real API server
    // (its processes stopped, its data removed).
    let stop = crate::common::signals()?;
    let result = tokio::select! {
        result = run_files(global, args) => result,
        () = stop => {
            eprintln!("rekon test: interrupted");
            return Ok(ExitCode::from(INTERRUPTED));
        }
    };
    match result {
        Ok(code) => Ok(code),
        Err(error) => {
            eprintln!("error: {error:#}");
            Ok(ExitCode::from(BAD_INPUT))
        }
    }
}

async fn run_files(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    let mut files = Vec::new();
    for path in &args.files {
        files.push(CasesFile::read(path, args.module.as_deref())?);
    }
    let selected = |case: &Case| args.case.as_ref().is_none_or(|t| case.name.contains(t));
    if !files.iter().flat_map(|f| &f.cases).any(selected) {
        bail!(
            "no case to run: {}",
            match &args.case {
                Some(text) => format!("no case name contains {text:?}"),
                None => "the files hold no case".to_string(),
            }
        );
    }
    let engine = engine(global)?;
    let real = RealRun::start(args).await?;
    let mut modules: HashMap<PathBuf, Module> = HashMap::new();
    let mut failures = Vec::new();
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        if files.len() > 1 {
            say(format!("# {}", file.path.display()))?;
        }
        let module = match modules.get(&file.module) {
            Some(module) => module,
            None => {
                let module = load_module(&engine, &file.module, &file.path).await?;
                modules.entry(file.module.clone()).or_insert(module)
            }
        };
        let _serving = real.install(module, &file.path).await?;
        for case in file.cases.iter().filter(|c| selected(c)) {
            let backend = real.backend(module).await?;
            let report = run_case(module, case, &backend).await;
            real.clean(case, report.as_ref().ok())
                .await
                .with_context(|| {
                    format!(
                        "{}: cleaning up after case {:?}",
                        file.path.display(),
                        case.name
                    )
                })?;
            let report =
                report.with_context(|| format!("{}: case {:?}", file.path.display(), case.name))?;
            if report.failures.is_empty() {
                passed += 1;
                say(format!("ok   {}", case.name))?;
            } else {
                failed += 1;
                say(format!("FAIL {}", case.name))?;
                failures.push((file, case, report));
            }
        }
    }
    for (file, case, report) in &failures {
        say("")?;
        say(format!("--- FAIL {}  ({})", case.name, file.path.display()))?;
        for failure in &report.failures {
            say(failure.trim_end())?;
        }
        say("  host calls:")?;
        for line in &report.calls {
            say(format!("    {line}"))?;
        }
    }
    say("")?;
    say(format!("{passed} passed, {failed} failed"))?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn load_module(engine: &Engine, module: &Path, file: &Path) -> anyhow::Result<Module> {
    load(engine, module)
        .await
        .with_context(|| format!("the module of {}", file.display()))
}

// ----- the cases file -----

/// A cases file, read and checked.
struct CasesFile {
    path: PathBuf,
    module: PathBuf,
    cases: Vec<Case>,
}

/// One case, checked.
struct Case {
    name: String,
    objects: Vec<Value>,
    request: CaseRequest,
    expect: Expect,
}

/// What a case reconciles.
struct CaseRequest {
    target: Target,
    reason: Option<Reason>,
    deleting: bool,
    time: Option<DateTime<Utc>>,
}

enum Target {
    /// An object added to the cluster.
    Object(Value),
    /// An object named: in `objects`, or absent.
    Ref(ObjectRef),
}

/// What a case expects.
struct Expect {
    result: ExpectedResult,
    present: Vec<(ObjectRef, Value)>,
    absent: Vec<ObjectRef>,
    events: Option<Vec<Value>>,
    refused: Option<Vec<Value>>,
}

enum ExpectedResult {
    /// Anything but an error (`result` omitted).
    NotError,
    Done,
    RequeueAfter(u64),
    Error {
        message: String,
        retry: Option<bool>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    module: Option<PathBuf>,
    cases: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: String,
    #[serde(default)]
    objects: Vec<Value>,
    request: Value,
    #[serde(default)]
    expect: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequest {
    object: Option<Value>,
    #[serde(rename = "ref")]
    reference: Option<RawRef>,
    reason: Option<String>,
    #[serde(default)]
    deleting: bool,
    time: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawRef {
    api_version: String,
    kind: String,
    namespace: Option<String>,
    name: String,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    result: Option<Value>,
    #[serde(default)]
    present: Vec<Value>,
    #[serde(default)]
    absent: Vec<Value>,
    events: Option<Vec<ExpectedEvent>>,
    refused: Option<Vec<ExpectedRefusal>>,
}

/// An Event a case expects: the fields given must match.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct ExpectedEvent {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    type_: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    regarding: Option<Value>,
}

/// A refused host call a case expects: the fields given must match.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectedRefusal {
    #[serde(skip_serializing_if = "Option::is_none")]
    verb: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

impl CasesFile {
    /// Reads and checks `path`; `module` overrides the module it names.
    fn read(path: &Path, module: Option<&Path>) -> anyhow::Result<CasesFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let raw: RawFile = serde_yaml::from_str(&text)
            .with_context(|| format!("{} is not a cases file", path.display()))?;
        let module = match (module, raw.module) {
            (Some(module), _) => module.to_path_buf(),
            (None, Some(relative)) => path
                .parent()
                .unwrap_or_else(|| Path::new(""))
                .join(relative),
            (None, None) => bail!(
                "{} names no module: add `module: PATH` (relative to the file) or pass --module",
                path.display()
            ),
        };
        let mut cases = Vec::new();
        for (index, case) in raw.cases.into_iter().enumerate() {
            let label = match case["name"].as_str() {
                Some(name) => format!("{}: case {:?}", path.display(), name),
                None => format!("{}: case {}", path.display(), index + 1),
            };
            cases.push(Case::parse(case).with_context(|| label)?);
        }
        let mut names = std::collections::HashSet::new();
        if let Some(twice) = cases.iter().find(|c| !names.insert(&c.name)) {
            bail!("{}: two cases are named {:?}", path.display(), twice.name);
        }
        Ok(CasesFile {
            path: path.to_path_buf(),
            module,
            cases,
        })
    }
}

impl Case {
    fn parse(value: Value) -> anyhow::Result<Case> {
        let raw: RawCase = serde_json::from_value(value)?;
        if raw.name.trim().is_empty() {
            bail!("the name is empty");
        }
        let request: RawRequest = serde_json::from_value(raw.request).context("request")?;
        let expect: RawExpect = match raw.expect {
            Some(expect) => serde_json::from_value(expect).context("expect")?,
            None => RawExpect::default(),
        };
        for (index, object) in raw.objects.iter().enumerate() {
            identity(object).with_context(|| format!("objects[{index}]"))?;
        }
        let target = match (request.object, request.reference) {
            (Some(object), None) => {
                identity(&object).context("request.object")?;
                Target::Object(object)
            }
            (None, Some(r)) => Target::Ref(
                object_ref_of(&json!({
                    "apiVersion": r.api_version,
                    "kind": r.kind,
                    "metadata": {"name": r.name, "namespace": r.namespace},
                }))
                .context("request.ref needs apiVersion, kind and name")?,
            ),
            _ => bail!("request needs one of `object` (an object) and `ref` (a reference)"),
        };
        let reason = request
            .reason
            .as_deref()
            .map(|r| {
                rekon_host::contract::reason_of(r).with_context(|| {
                    format!(
                        "request.reason: unknown reason {r:?} (one of {})",
                        rekon_host::contract::REASONS
                            .map(rekon_host::contract::reason_name)
                            .join(", ")
                    )
                })
            })
            .transpose()?;
        let time = request
            .time
            .as_deref()
            .map(|t| {
                DateTime::parse_from_rfc3339(t)
                    .map(|t| t.with_timezone(&Utc))
                    .with_context(|| {
                        format!("request.time: {t:?} is not an RFC 3339 time such as 2026-01-01T00:00:00Z")
                    })
            })
            .transpose()?;
        let named = |list: Vec<Value>, what: &str| -> anyhow::Result<Vec<(ObjectRef, Value)>> {
            list.into_iter()
                .enumerate()
                .map(|(index, object)| {
                    let target =
                        identity(&object).with_context(|| format!("expect.{what}[{index}]"))?;
                    Ok((target, object))
                })
                .collect()
        };
        Ok(Case {
            name: raw.name,
            objects: raw.objects,
            request: CaseRequest {
                target,
                reason,
                deleting: request.deleting,
                time,
            },
            expect: Expect {
                result: match &expect.result {
                    None => ExpectedResult::NotError,
                    Some(value) => expected_result(value).context("expect.result")?,
                },
                present: named(expect.present, "present")?,
                absent: named(expect.absent, "absent")?
                    .into_iter()
                    .map(|(target, _)| target)
                    .collect(),
                events: expect.events.map(to_values).transpose()?,
                refused: expect.refused.map(to_values).transpose()?,
            },
        })
    }
}

fn to_values<T: Serialize>(list: Vec<T>) -> anyhow::Result<Vec<Value>> {
    list.iter().map(|e| Ok(serde_json::to_value(e)?)).collect()
}

/// The reference an object is named by (apiVersion, kind, metadata.name,
/// metadata.namespace).
fn identity(object: &Value) -> anyhow::Result<ObjectRef> {
    object_ref_of(object).ok_or_else(|| {
        anyhow!(
            "an object needs apiVersion, kind and metadata.name, got {}",
            flow(object)
        )
    })
}

fn expected_result(value: &Value) -> anyhow::Result<ExpectedResult> {
    const FORMS: &str = "write `done`, `{requeueAfter: 30s}` or `{error: \"part of the message\"}`";
    let map = match value {
        Value::String(s) if s == "done" => return Ok(ExpectedResult::Done),
        Value::Object(map) => map,
        other => bail!("{} is not a result: {FORMS}", flow(other)),
    };
    if let Some(after) = map.get("requeueAfter") {
        if map.len() > 1 {
            bail!("requeueAfter stands alone: {FORMS}");
        }
        let ms = after.as_str().and_then(duration_ms).with_context(|| {
            format!(
                "requeueAfter: {} is not a duration such as 30s, 1500ms or 2m",
                flow(after)
            )
        })?;
        return Ok(ExpectedResult::RequeueAfter(ms));
    }
    if let Some(message) = map.get("error") {
        let message = message
            .as_str()
            .with_context(|| format!("error: {} is not text", flow(message)))?;
        let retry = match map.get("retry") {
            None => None,
            Some(Value::Bool(retry)) => Some(*retry),
            Some(other) => bail!("retry: {} is not true or false", flow(other)),
        };
        if let Some(extra) = map
            .keys()
            .find(|k| !["error", "retry"].contains(&k.as_str()))
        {
            bail!("unknown field {extra:?} beside error");
        }
        return Ok(ExpectedResult::Error {
            message: message.to_string(),
            retry,
        });
    }
    bail!("{} is not a result: {FORMS}", flow(value))
}

/// `30s`, `1500ms`, `2m`, `1h`, `1m30s` in milliseconds.
fn duration_ms(text: &str) -> Option<u64> {
    let mut total: u64 = 0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit())?;
        let number: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return None,
        };
        total = total.checked_add(number.checked_mul(factor)?)?;
        rest = &rest[unit_len..];
    }
    Some(total)
}

/// A delay as a person writes it: `30s`, `2m`, `1500ms`.
fn format_ms(ms: u64) -> String {
    match ms {
        0 => "0s".to_string(),
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

// ----- running a case -----

/// What a case found wrong (empty: it passed), and the host calls made.
struct Report {
    failures: Vec<String>,
    calls: Vec<String>,
    /// The kinds the reconcile's calls reached (`apiVersion`, `kind`):
    /// what a real server is cleaned of after the case.
    touched: BTreeSet<(String, String)>,
}

/// Where a case runs: a fresh in-memory cluster, or the real API server
/// of the run.
enum Backend {
    Memory(MemoryCluster),
    Real(Arc<super::real::Direct>),
}

impl Backend {
    /// The cluster the guest's calls reach.
    fn cluster(&self) -> Arc<dyn Cluster> {
        match self {
            Backend::Memory(cluster) => Arc::new(cluster.clone()),
            Backend::Real(direct) => direct.cluster(),
        }
    }

    /// The reference of `document`, its namespace settled as the server
    /// serves its kind.
    async fn settle(&self, document: &mut Value) -> Option<ObjectRef> {
        match self {
            Backend::Memory(cluster) => settle_target(cluster, document),
            Backend::Real(direct) => direct.settle(document).await,
        }
    }

    /// Adds an object as given.
    async fn seed(&self, object: Value) -> anyhow::Result<Value> {
        match self {
            Backend::Memory(cluster) => cluster.seed(object).map_err(|e| anyhow!("{}", e.message)),
            Backend::Real(direct) => direct.seed(object).await,
        }
    }

    /// Whether answers may lag (a real server's garbage collector).
    fn eventual(&self) -> bool {
        match self {
            Backend::Memory(_) => false,
            Backend::Real(_) => true,
        }
    }
}

/// The real API server of a run, when there is one (`--kube-assets` or
/// `KUBEBUILDER_ASSETS`): one for every case of every file, each case
/// cleaned up after.
struct RealRun {
    real: Option<(super::real::Real, Arc<super::real::Direct>)>,
}

impl RealRun {
    async fn start(args: &Args) -> anyhow::Result<RealRun> {
        let Some(assets) = args.server.assets() else {
            return Ok(RealRun { real: None });
        };
        let real = super::real::Real::start(&assets).await?;
        let direct = Arc::new(super::real::Direct::new(real.client("test").await?));
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
    async fn install(&self, module: &Module, file: &Path) -> anyhow::Result<Serving> {
        if let Some((_, direct)) = &self.real {
            let crds = module.crds().await.context("the CRDs the module ships")?;
            direct
                .install_crds(crds, "rekon-test")
                .await
                .with_context(|| format!("the module of {}", file.display()))?;
            let task = super::real::serve_conversions(direct.clone(), module)
                .await
                .with_context(|| format!("the module of {}", file.display()))?;
            return Ok(Serving(task));
        }
        let _ = (module, file);
        Ok(Serving(None))
    }

    /// Where the next case runs.
    async fn backend(&self, module: &Module) -> anyhow::Result<Backend> {
        if let Some((_, direct)) = &self.real {
            return Ok(Backend::Real(direct.clone()));
        }
        Ok(Backend::Memory(crate::memory::cluster_of(module).await?))
    }

    /// Takes away what `case` left on the real server.
    async fn clean(&self, case: &Case, report: Option<&Report>) -> anyhow::Result<()> {
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
struct Serving(Option<tokio::task::JoinHandle<()>>);

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(task) = &self.0 {
            task.abort();
        }
    }
}

/// The kinds the calls reached (`apiVersion`, `kind`).
fn touched(calls: &[CallRecord]) -> BTreeSet<(String, String)> {
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

async fn run_case(module: &Module, case: &Case, backend: &Backend) -> anyhow::Result<Report> {
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
fn set_deleting(object: &mut Value, at: &Value) {
    if object["metadata"]["deletionTimestamp"].is_null() {
        object["metadata"]["deletionTimestamp"] = at.clone();
    }
}

/// An object being deleted without finalizers: Kubernetes has removed it.
fn gone(object: &Value) -> bool {
    let finalizers = object["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    !object["metadata"]["deletionTimestamp"].is_null() && !finalizers
}

/// Whether two references name the same object, a missing namespace
/// counting as `default` (a cluster-scoped kind has none on either side).
fn same_object(a: &ObjectRef, b: &ObjectRef) -> bool {
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
async fn settled(backend: &Backend, target: &ObjectRef) -> ObjectRef {
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
async fn read(cluster: &dyn Cluster, target: &ObjectRef) -> anyhow::Result<Option<Value>> {
    match cluster.get(target).await {
        Ok(text) => Ok(Some(serde_json::from_str(&text)?)),
        Err(error) if error.code == 404 => Ok(None),
        Err(error) => bail!("cannot read {}: {}", describe(target), error.message),
    }
}

fn api_version(target: &ObjectRef) -> String {
    if target.kind.group.is_empty() {
        target.kind.version.clone()
    } else {
        format!("{}/{}", target.kind.group, target.kind.version)
    }
}

/// `ConfigMap team-a/shared`, `Deployment.apps default/web`, `Namespace team-a`.
fn describe(target: &ObjectRef) -> String {
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

// ----- the checks -----

fn check_result(
    expected: &ExpectedResult,
    actual: &Result<Action, ReconcileError>,
) -> Option<String> {
    let fits = match (expected, actual) {
        (ExpectedResult::NotError, Ok(_)) => true,
        (ExpectedResult::Done, Ok(Action::Done)) => true,
        (ExpectedResult::RequeueAfter(e), Ok(Action::RequeueAfter(a))) => e == a,
        (ExpectedResult::Error { message, retry }, Err(error)) => {
            error.to_string().contains(message.as_str())
                && retry.is_none_or(|retry| retry == error.retry())
        }
        _ => false,
    };
    if fits {
        return None;
    }
    let expected = match expected {
        ExpectedResult::NotError => "done or requeueAfter (not an error)".to_string(),
        ExpectedResult::Done => "done".to_string(),
        ExpectedResult::RequeueAfter(ms) => format!("{{requeueAfter: {}}}", format_ms(*ms)),
        ExpectedResult::Error { message, retry } => {
            let mut e = json!({ "error": message });
            if let Some(retry) = retry {
                e["retry"] = json!(retry);
            }
            flow(&e)
        }
    };
    let actual = match actual {
        Ok(Action::Done) => "done".to_string(),
        Ok(Action::RequeueAfter(ms)) => format!("{{requeueAfter: {}}}", format_ms(*ms)),
        Err(error) => flow(&json!({ "error": error.to_string(), "retry": error.retry() })),
    };
    Some(format!(
        "  result (- expected, + actual):\n  - {expected}\n  + {actual}"
    ))
}

async fn check_present(
    backend: &Backend,
    target: &ObjectRef,
    expected: &Value,
) -> anyhow::Result<Option<String>> {
    let target = settled(backend, target).await;
    let cluster = backend.cluster();
    let Some(actual) = read(&*cluster, &target).await? else {
        let mut names: Vec<String> = cluster
            .list(&target.kind, target.namespace.as_deref(), None)
            .await
            .unwrap_or_default()
            .iter()
            .filter_map(|o| serde_json::from_str::<Value>(o).ok())
            .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        names.sort();
        let place = target
            .namespace
            .as_deref()
            .map_or_else(String::new, |ns| format!(" in {ns}"));
        let there = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        };
        return Ok(Some(format!(
            "  present {}: missing (no such object; {}s{place}: {there})",
            describe(&target),
            target.kind.kind
        )));
    };
    let shown = project(expected, &actual);
    if shown == *expected {
        return Ok(None);
    }
    let mut out = format!(
        "  present {} differs (- expected, + actual):\n",
        describe(&target)
    );
    for line in rekon_rules::diff_lines(&yaml(expected), &yaml(&shown), 3) {
        out.push_str("    ");
        out.push_str(&line);
        out.push('\n');
    }
    Ok(Some(out))
}

async fn check_absent(backend: &Backend, target: &ObjectRef) -> anyhow::Result<Option<String>> {
    let target = settled(backend, target).await;
    let cluster = backend.cluster();
    // A real server's garbage collector and namespace controller remove
    // objects a moment after what caused it: give them that moment.
    let deadline = std::time::Instant::now() + ABSENT_WAIT;
    let actual = loop {
        let Some(actual) = read(&*cluster, &target).await? else {
            return Ok(None);
        };
        if !backend.eventual() || std::time::Instant::now() > deadline {
            break actual;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let metadata = &actual["metadata"];
    let note = if metadata["deletionTimestamp"].is_null() {
        String::new()
    } else {
        format!(
            " (being deleted, waiting on its finalizers {})",
            flow(&metadata["finalizers"])
        )
    };
    Ok(Some(format!(
        "  absent {}: it exists{note}",
        describe(&target)
    )))
}

/// Checks recorded entries (Events, refused calls) against the expected
/// ones: each expected entry matches a different recorded one; an empty
/// list expects none.
fn check_entries(field: &str, noun: &str, expected: &[Value], actual: &[Value]) -> Option<String> {
    let recorded = || {
        let mut out = format!("    recorded {noun}s:");
        if actual.is_empty() {
            out.push_str(" none");
        }
        for entry in actual {
            out.push_str("\n    + ");
            out.push_str(&flow(entry));
        }
        out
    };
    if expected.is_empty() {
        return (!actual.is_empty()).then(|| format!("  {field}: expected none\n{}", recorded()));
    }
    let owners = assign(expected, actual);
    let missing: Vec<&Value> = expected
        .iter()
        .enumerate()
        .filter(|(i, _)| !owners.contains(&Some(*i)))
        .map(|(_, e)| e)
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut out = format!("  {field}: not recorded (- expected, + recorded):");
    for entry in missing {
        out.push_str("\n    - ");
        out.push_str(&flow(entry));
    }
    out.push('\n');
    out.push_str(&recorded());
    Some(out)
}

/// Matches expected entries to recorded ones, each recorded entry used at
/// most once (augmenting paths: an early expectation gives way when a
/// later one fits nothing else). For each recorded entry, the expected
/// entry it stands for.
fn assign(expected: &[Value], actual: &[Value]) -> Vec<Option<usize>> {
    let fits: Vec<Vec<usize>> = expected
        .iter()
        .map(|e| {
            (0..actual.len())
                .filter(|&j| entry_matches(e, &actual[j]))
                .collect()
        })
        .collect();
    fn augment(
        i: usize,
        fits: &[Vec<usize>],
        owners: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for &j in &fits[i] {
            if !seen[j] {
                seen[j] = true;
                if owners[j].is_none_or(|k| augment(k, fits, owners, seen)) {
                    owners[j] = Some(i);
                    return true;
                }
            }
        }
        false
    }
    let mut owners = vec![None; actual.len()];
    for i in 0..expected.len() {
        augment(i, &fits, &mut owners, &mut vec![false; actual.len()]);
    }
    owners
}

/// An expected entry against a recorded one: `message` is a part of the
/// recorded message, every other field given matches as in `present`.
fn entry_matches(expected: &Value, actual: &Value) -> bool {
    let Some(fields) = expected.as_object() else {
        return false;
    };
    fields.iter().all(|(key, want)| {
        let got = actual.get(key).unwrap_or(&Value::Null);
        match (key.as_str(), want, got) {
            ("message", Value::String(part), Value::String(message)) => message.contains(part),
            _ => project(want, got) == *want,
        }
    })
}

/// `actual` cut to the shape of `expected`: maps keep only the keys
/// expected (a key expected `null` and absent shows as `null`), lists keep
/// every element (each cut by the expected element at its place), numbers
/// equal in value show as expected. `expected` matches `actual` exactly
/// when the result equals `expected`; otherwise the two render as a diff.
fn project(expected: &Value, actual: &Value) -> Value {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => Value::Object(
            want.iter()
                .filter_map(|(key, w)| match got.get(key) {
                    Some(g) => Some((key.clone(), project(w, g))),
                    None if w.is_null() => Some((key.clone(), Value::Null)),
                    None => None,
                })
                .collect(),
        ),
        (Value::Array(want), Value::Array(got)) => Value::Array(
            got.iter()
                .enumerate()
                .map(|(i, g)| want.get(i).map_or_else(|| g.clone(), |w| project(w, g)))
                .collect(),
        ),
        (Value::Number(w), Value::Number(g)) if w.as_f64() == g.as_f64() => expected.clone(),
        _ => actual.clone(),
    }
}

/// The Events the reconcile recorded: `{type, reason, message, regarding}`.
fn events(outcome: &Outcome) -> Vec<Value> {
    outcome
        .calls
        .iter()
        .filter(|c| c.call == "record-event" && c.result.get("ok").is_some())
        .map(|c| {
            json!({
                "type": enum_name(&c.args["type"]),
                "reason": c.args["reason"],
                "message": c.args["message"],
                "regarding": c.args["regarding"],
            })
        })
        .collect()
}

/// The calls that failed, but for reads of what does not exist:
/// `{verb, apiVersion, kind, namespace, name, code, reason, message}`.
fn refused(outcome: &Outcome) -> Vec<Value> {
    outcome
        .calls
        .iter()
        .filter_map(|c| {
            let error = c.result.get("error")?;
            let read = matches!(c.call, "get" | "list" | "list-by-index");
            if read && error["code"] == 404 {
                return None;
            }
            let about = if c.call == "record-event" {
                &c.args["regarding"]
            } else {
                &c.args
            };
            let name = about
                .get("name")
                .or_else(|| c.args.pointer("/object/metadata/name"))
                .cloned()
                .unwrap_or(Value::Null);
            let mut entry = json!({
                "verb": c.call,
                "apiVersion": about["apiVersion"],
                "kind": about["kind"],
                "namespace": about["namespace"],
                "name": name,
                "code": error["code"],
                "reason": error["reason"],
                "message": error["message"],
            });
            if let Some(fields) = entry.as_object_mut() {
                fields.retain(|_, v| !v.is_null());
            }
            Some(entry)
        })
        .collect()
}

/// `Warning` out of `EventType::Warning` (how call records spell the WIT
/// enums).
fn enum_name(value: &Value) -> Value {
    match value.as_str() {
        Some(text) => json!(text.rsplit("::").next().unwrap_or(text)),
        None => value.clone(),
    }
}

/// One line per host call: `patch ConfigMap team-a/shared -> ok`.
fn call_lines(calls: &[CallRecord]) -> Vec<String> {
    let mut lines: Vec<String> = calls.iter().take(MAX_CALLS_SHOWN).map(call_line).collect();
    if calls.len() > MAX_CALLS_SHOWN {
        lines.push(format!("... and {} more", calls.len() - MAX_CALLS_SHOWN));
    }
    if lines.is_empty() {
        lines.push("none".to_string());
    }
    lines
}

fn call_line(call: &CallRecord) -> String {
    let args = &call.args;
    if call.call == "log" {
        let fields: String = args["fields"]
            .as_object()
            .map(|f| f.iter().map(|(k, v)| format!(" {k}={}", flow(v))).collect())
            .unwrap_or_default();
        let level = enum_name(&args["level"]);
        return format!(
            "log {}: {}{fields}",
            level.as_str().unwrap_or_default(),
            args["message"].as_str().unwrap_or_default()
        );
    }
    let about = if call.call == "record-event" {
        &args["regarding"]
    } else {
        args
    };
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let name = about
        .get("name")
        .or_else(|| args.pointer("/object/metadata/name"))
        .map(text);
    let mut line = format!("{} {}", call.call, text(&about["kind"]));
    match (about["namespace"].as_str(), name) {
        (Some(ns), Some(name)) => line.push_str(&format!(" {ns}/{name}")),
        (None, Some(name)) => line.push_str(&format!(" {name}")),
        (Some(ns), None) => line.push_str(&format!(" in {ns}")),
        (None, None) => {}
    }
    if let Some(selector) = args["labelSelector"].as_str() {
        line.push_str(&format!(" -l {selector}"));
    }
    if call.call == "record-event" {
        line.push_str(&format!(
            " {} {}",
            text(&enum_name(&args["type"])),
            text(&args["reason"])
        ));
    }
    match call.result.get("error") {
        Some(error) => line.push_str(&format!(
            " -> {} {}: {}",
            error["code"],
            text(&error["reason"]),
            text(&error["message"])
        )),
        None => line.push_str(" -> ok"),
    }
    line
}

// ----- rendering -----

/// A value as block YAML.
fn yaml(value: &Value) -> String {
    serde_yaml::to_string(value).unwrap_or_else(|_| format!("{value}\n"))
}

/// A value as one line of flow YAML: `{type: Warning, reason: X}`.
fn flow(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", plain(k), flow(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        Value::String(text) => plain(text),
        other => other.to_string(),
    }
}

/// A string as flow YAML: bare when it reads back as the same string,
/// quoted otherwise.
fn plain(text: &str) -> String {
    let bare = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || " -_./".contains(c))
        && !text.starts_with([' ', '-'])
        && !text.ends_with(' ')
        && serde_yaml::from_str::<Value>(text).ok() == Some(json!(text));
    if bare {
        text.to_string()
    } else {
        Value::String(text.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subset_matches_and_a_difference_shows_as_a_line_diff() {
        let actual = json!({"metadata": {"name": "x", "uid": "1"}, "data": {"a": "1", "b": "2"},
            "list": [{"k": 1, "extra": true}, {"k": 2}]});
        let subset = json!({"data": {"a": "1"}, "list": [{"k": 1.0}, {"k": 2}]});
        assert_eq!(project(&subset, &actual), subset);
        let wrong = json!({"data": {"a": "9"}, "gone": null});
        let shown = project(&wrong, &actual);
        assert_eq!(shown, json!({"data": {"a": "1"}, "gone": null}));
        let diff = rekon_rules::diff_lines(&yaml(&wrong), &yaml(&shown), 3);
        assert_eq!(
            diff,
            vec!["  data:", "-   a: '9'", "+   a: '1'", "  gone: null"]
        );
    }

    #[test]
    fn a_long_diff_keeps_three_lines_of_context() {
        let expected = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
        let actual = "a\nb\nc\nd\nE\nf\ng\nh\ni\n";
        let diff = rekon_rules::diff_lines(expected, actual, 3);
        assert_eq!(
            diff,
            vec![
                "  ...", "  b", "  c", "  d", "- e", "+ E", "  f", "  g", "  h", "  ..."
            ]
        );
    }

    #[test]
    fn each_expected_entry_takes_a_different_recorded_one() {
        let recorded = [
            json!({"type": "Normal", "reason": "Synced", "message": "copied to team-a"}),
            json!({"type": "Normal", "reason": "Synced", "message": "copied to team-b"}),
        ];
        // The first expectation fits both; the second only the first entry.
        let expected = [json!({"reason": "Synced"}), json!({"message": "team-a"})];
        assert_eq!(assign(&expected, &recorded), vec![Some(1), Some(0)]);
        let three = [
            json!({"reason": "Synced"}),
            json!({"reason": "Synced"}),
            json!({"reason": "Synced"}),
        ];
        let owners = assign(&three, &recorded);
        assert_eq!(owners.iter().flatten().count(), 2);
    }

    #[test]
    fn durations_read_and_print_as_people_write_them() {
        assert_eq!(duration_ms("30s"), Some(30_000));
        assert_eq!(duration_ms("1m30s"), Some(90_000));
        assert_eq!(duration_ms("1500ms"), Some(1500));
        assert_eq!(duration_ms("2h"), Some(7_200_000));
        assert_eq!(duration_ms("30"), None);
        assert_eq!(duration_ms("s"), None);
        assert_eq!(format_ms(30_000), "30s");
        assert_eq!(format_ms(120_000), "2m");
        assert_eq!(format_ms(1500), "1500ms");
    }

    #[test]
    fn flow_yaml_quotes_only_what_needs_it() {
        assert_eq!(
            flow(&json!({"type": "Warning", "message": "a: b", "code": 403, "on": "true"})),
            r#"{type: Warning, message: "a: b", code: 403, on: "true"}"#
        );
    }
}
