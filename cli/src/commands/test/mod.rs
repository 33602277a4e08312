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
//! - `roundTrip: false` on a case: its objects' conversion round trips
//!   are not checked (by default each object of a kind the module
//!   converts goes to every other served version and back, and must come
//!   back as it was).
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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use rekon_host::{Engine, Module};

use crate::common::{load, say};
use crate::global::{Global, engine};
use cases::{Case, CasesFile};
use running::{RealRun, run_case};

mod cases;
mod checks;
mod render;
mod roundtrip;
mod running;

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
