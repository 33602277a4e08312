//! `misbehave`: a reconciler that misbehaves on command, to test the host's
//! runtime limits. It reconciles ConfigMaps; the annotation
//! `misbehave.rekon.dev/mode` on the ConfigMap (or a label with that key,
//! or else the ConfigMap's name) picks what it does — see [`Mode`].

use rekon_sdk::k8s_openapi::api::core::v1::{ConfigMap, Secret};
use rekon_sdk::prelude::{
    Action, ApiError, Error, Gvk, IndexKey, Level, Manifest, ObjectRef, PatchType, Reconciler,
    Request, Value, Verbs, api, json,
};
use rekon_sdk::raw;

pub mod webhook;

/// The module's name. Tests make differently named copies of this module by
/// replacing every `misbehave` in the component with another name of the
/// same length (which renames [`MODE_KEY`] too).
pub const NAME: &str = "misbehave";
/// The annotation (or label) that picks the mode.
pub const MODE_KEY: &str = "misbehave.rekon.dev/mode";
/// The annotation giving a size in bytes for `huge-error` and `huge-log`
/// (default [`DEFAULT_SIZE`]), or milliseconds for `requeue` (default 1000).
pub const SIZE_KEY: &str = "misbehave.rekon.dev/size";
/// Default size of the huge outputs: 8 MiB.
pub const DEFAULT_SIZE: usize = 8 << 20;
/// The message of the `panic` mode.
pub const PANIC_MESSAGE: &str = "misbehave: asked to panic";
/// What the `ok` mode writes to `data.behaved-by`: tests make a second
/// version of this module by replacing these bytes in the component (same
/// length), to see a new version take over.
pub const BUILD_MARK: &str = "misbehave-build-A";
/// The index the module declares: ConfigMaps by their `team` label.
pub const TEAM_INDEX: &str = "by-team";
/// The one namespace whose Secrets the module may read (get, list).
pub const READABLE_SECRETS: &str = "vault";
/// The Secret the `forbidden` mode tries to delete.
pub const VICTIM: &str = "misbehave-victim";
/// The annotation holding the calls of the `probe` mode: a JSON array of
/// `{"call": "get|list|create|replace|patch|delete", "apiVersion", "kind",
/// "namespace", "name", "patch": "merge|json|apply", "body": "<text>"}`, or
/// `{"call": "list-by-index", "index", "value", "namespace"}` (answered
/// `ok <names>`).
pub const SCRIPT_KEY: &str = "misbehave.rekon.dev/script";
/// The CRD the module ships (`crds`), as JSON text: tests break a copy of
/// the module by replacing bytes of it (e.g. its kind, or a quote).
pub const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"troubles.misbehave.rekon.dev"},"spec":{"group":"misbehave.rekon.dev","names":{"kind":"Trouble","listKind":"TroubleList","plural":"troubles","singular":"trouble"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#;

/// What the reconciler does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `ok` (also no mode at all): behave: merge-patch `data.reconciled: "true"`
    /// and `data.behaved-by: BUILD_MARK` into the ConfigMap (only if not
    /// there yet) and return done.
    Ok,
    /// `trap`: execute `unreachable` (a trap).
    Trap,
    /// `panic`: panic with [`PANIC_MESSAGE`].
    Panic,
    /// `loop`: spin forever.
    Loop,
    /// `alloc`: allocate (and touch) 1 MiB after 1 MiB without bound.
    Alloc,
    /// `recurse`: recurse without bound with 1 KiB frames in linear memory:
    /// overflows the shadow stack (an out-of-bounds memory access trap).
    Recurse,
    /// `recurse-small`: recurse without bound with frames held in wasm
    /// locals only: exhausts the engine's call stack.
    RecurseSmall,
    /// `huge-error`: return a retryable error whose message is `size` bytes.
    HugeError,
    /// `huge-log`: write a log record whose message is `size` bytes, then done.
    HugeLog,
    /// `forbidden`: delete the Secret [`VICTIM`] in the ConfigMap's namespace,
    /// which the manifest does not allow; on the expected 403, record
    /// `data.forbidden: "<code> <reason>"` on the ConfigMap and return done;
    /// if the delete is not refused, return a permanent error.
    Forbidden,
    /// `error`: return a retryable error `misbehave: asked to fail`.
    Error,
    /// `permanent-error`: return a non-retryable error.
    PermanentError,
    /// `requeue`: return requeue-after `size` milliseconds (default 1000).
    Requeue,
    /// `stamp`: merge-patch `data.<module name>: BUILD_MARK` into the
    /// ConfigMap (only if not there yet) and return done. Differently named
    /// copies of the module stamp the same ConfigMap side by side.
    Stamp,
    /// `probe`: make the host calls of the [`SCRIPT_KEY`] annotation, in
    /// order, and record each answer in the ConfigMap's `data` as
    /// `answer-<i>`: `ok`, or `<code> <reason>: <message>` (only if not
    /// there yet); then done. Tests compare the answers of every way to run
    /// a module.
    Probe,
    /// `churn`: any build but A (a canary under test) merge-patches
    /// `data.churn` with one more than it holds on every reconcile — each
    /// write brings the next reconcile: a write loop. Build A behaves as
    /// `ok`.
    Churn,
}

impl Mode {
    /// Every mode with its name.
    pub const ALL: [(&'static str, Mode); 16] = [
        ("ok", Mode::Ok),
        ("trap", Mode::Trap),
        ("panic", Mode::Panic),
        ("loop", Mode::Loop),
        ("alloc", Mode::Alloc),
        ("recurse", Mode::Recurse),
        ("recurse-small", Mode::RecurseSmall),
        ("huge-error", Mode::HugeError),
        ("huge-log", Mode::HugeLog),
        ("forbidden", Mode::Forbidden),
        ("error", Mode::Error),
        ("permanent-error", Mode::PermanentError),
        ("requeue", Mode::Requeue),
        ("stamp", Mode::Stamp),
        ("probe", Mode::Probe),
        ("churn", Mode::Churn),
    ];

    /// The mode called `name`.
    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }

    /// The mode an object asks for: its annotation, else its label, else
    /// its name if that is a mode's name, else `Ok`. An unknown annotation
    /// or label value is an error.
    pub fn of(object: &Value) -> Result<Mode, Error> {
        let meta = &object["metadata"];
        for source in ["annotations", "labels"] {
            if let Some(value) = meta[source][MODE_KEY].as_str() {
                return Mode::from_name(value)
                    .ok_or_else(|| Error::permanent(format!("unknown {MODE_KEY} {value:?}")));
            }
        }
        Ok(meta["name"]
            .as_str()
            .and_then(Mode::from_name)
            .unwrap_or(Mode::Ok))
    }
}

/// The `misbehave` reconciler.
pub struct Misbehave;

#[rekon_sdk::reconciler(webhook)]
impl Reconciler for Misbehave {
    /// Ships [`CRD`] (a panic when it is not JSON any more).
    fn crds() -> Vec<Value> {
        vec![serde_json::from_str(CRD).expect("misbehave's CRD is JSON")]
    }

    fn manifest() -> Manifest {
        let configmap = Gvk::of::<ConfigMap>();
        Manifest::new(NAME, configmap.clone())
            .version(env!("CARGO_PKG_VERSION"))
            // The `probe` mode creates ConfigMaps, and reads Secrets in
            // one namespace (a namespaced module reading a kind it does
            // not watch).
            .allow(configmap, Verbs::CREATE, &[])
            // The `read` webhook mode reads Namespaces.
            .allow(
                Gvk::of::<rekon_sdk::k8s_openapi::api::core::v1::Namespace>(),
                Verbs::GET,
                &[],
            )
            .allow(
                Gvk::of::<Secret>(),
                Verbs::GET | Verbs::LIST,
                &[READABLE_SECRETS],
            )
            // `list-by-index` of the `probe` mode: ConfigMaps by their
            // `team` label.
            .index(
                TEAM_INDEX,
                Gvk::of::<ConfigMap>(),
                IndexKey::Label("team".into()),
            )
    }

    fn reconcile(req: Request) -> Result<Action, Error> {
        let Some(object) = req.json()? else {
            return Ok(Action::Done);
        };
        let size = object["metadata"]["annotations"][SIZE_KEY]
            .as_str()
            .and_then(|s| s.parse::<usize>().ok());
        match Mode::of(&object)? {
            Mode::Ok => behave(&req, &object),
            Mode::Trap => trap(),
            Mode::Panic => panic!("{PANIC_MESSAGE}"),
            Mode::Loop => spin(),
            Mode::Alloc => allocate(),
            Mode::Recurse => Ok(Action::RequeueAfter(recurse(0))),
            Mode::RecurseSmall => Ok(Action::RequeueAfter(recurse_small(
                0,
                std::hint::black_box(u64::MAX),
            ))),
            Mode::HugeError => Err(Error::retry("E".repeat(size.unwrap_or(DEFAULT_SIZE)))),
            Mode::HugeLog => {
                api::info(&"L".repeat(size.unwrap_or(DEFAULT_SIZE)));
                Ok(Action::Done)
            }
            Mode::Forbidden => forbidden(&req),
            Mode::Error => Err(Error::retry("misbehave: asked to fail")),
            Mode::PermanentError => Err(Error::permanent("misbehave: asked to fail for good")),
            Mode::Requeue => Ok(Action::RequeueAfter(
                size.map_or(1000, |s| u64::try_from(s).unwrap_or(u64::MAX)),
            )),
            Mode::Stamp => stamp(&req, &object),
            Mode::Probe => probe(&req, &object),
            Mode::Churn => churn(&req, &object),
        }
    }
}

fn behave(req: &Request, object: &Value) -> Result<Action, Error> {
    let mark = std::hint::black_box(BUILD_MARK);
    if object["data"]["reconciled"] != "true" || object["data"]["behaved-by"] != mark {
        api::patch_dyn(
            &req.target,
            &PatchType::Merge,
            &json!({"data": {"reconciled": "true", "behaved-by": mark}}),
        )?;
    }
    api::info("misbehave: behaved");
    Ok(Action::Done)
}

fn churn(req: &Request, object: &Value) -> Result<Action, Error> {
    if std::hint::black_box(BUILD_MARK) == "misbehave-build-A" {
        return behave(req, object);
    }
    let count = object["data"]["churn"]
        .as_str()
        .and_then(|c| c.parse::<u64>().ok())
        .unwrap_or(0);
    api::patch_dyn(
        &req.target,
        &PatchType::Merge,
        &json!({"data": {"churn": (count + 1).to_string()}}),
    )?;
    Ok(Action::Done)
}

fn stamp(req: &Request, object: &Value) -> Result<Action, Error> {
    let name = std::hint::black_box(NAME);
    let mark = std::hint::black_box(BUILD_MARK);
    if object["data"][name] != mark {
        api::patch_dyn(
            &req.target,
            &PatchType::Merge,
            &json!({"data": {name: mark}}),
        )?;
    }
    Ok(Action::Done)
}

fn probe(req: &Request, object: &Value) -> Result<Action, Error> {
    if object["data"]["answer-0"].is_string() {
        return Ok(Action::Done);
    }
    let script: Vec<Value> = object["metadata"]["annotations"][SCRIPT_KEY]
        .as_str()
        .map(serde_json::from_str)
        .transpose()?
        .unwrap_or_default();
    let mut answers = serde_json::Map::new();
    for (i, call) in script.iter().enumerate() {
        let answer = match probe_call(call) {
            Ok(None) => "ok".to_string(),
            Ok(Some(found)) => format!("ok {found}"),
            Err(e) => format!("{} {}: {}", e.code, e.reason, e.message),
        };
        answers.insert(format!("answer-{i}"), json!(answer));
    }
    api::patch_dyn(&req.target, &PatchType::Merge, &json!({"data": answers}))?;
    Ok(Action::Done)
}

/// One call of a `probe` script; `list-by-index` answers the names found
/// (`a,b`).
fn probe_call(call: &Value) -> Result<Option<String>, ApiError> {
    let text = |key: &str| call[key].as_str().unwrap_or_default();
    let (group, version) = text("apiVersion")
        .rsplit_once('/')
        .unwrap_or(("", text("apiVersion")));
    let kind = Gvk::new(group, version, text("kind"));
    let namespace = call["namespace"].as_str();
    let target = ObjectRef::new(kind.clone(), namespace, text("name"));
    let patch = match text("patch") {
        "json" => PatchType::Json,
        "apply" => PatchType::Apply {
            field_manager: None,
            force: true,
        },
        _ => PatchType::Merge,
    };
    fn done<T>(answer: Result<T, ApiError>) -> Result<Option<String>, ApiError> {
        answer.map(|_| None)
    }
    match text("call") {
        "get" => done(raw::get(&target)),
        "list" => done(raw::list(&kind, namespace, None)),
        "list-by-index" => {
            let found = raw::list_by_index(text("index"), text("value"), namespace)?;
            let names: Vec<String> = found
                .iter()
                .filter_map(|o| serde_json::from_str::<Value>(o).ok())
                .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
                .collect();
            Ok(Some(names.join(",")))
        }
        "create" => done(raw::create(&kind, namespace, text("body"))),
        "replace" => done(raw::replace(&target, text("body"))),
        "patch" => done(raw::patch(&target, &patch, text("body"))),
        "delete" => done(raw::delete(&target, None)),
        other => Err(ApiError::new(0, "Probe", format!("unknown call {other:?}"))),
    }
}

fn forbidden(req: &Request) -> Result<Action, Error> {
    match api::delete::<Secret>(Some(req.namespace()), VICTIM) {
        Err(e) if e.is_forbidden() => {
            let answer = format!("{} {}", e.code, e.reason);
            api::log(
                Level::Info,
                "misbehave: delete of an undeclared Secret was refused",
                &[("answer", &answer), ("message", &e.message)],
            );
            api::patch_dyn(
                &req.target,
                &PatchType::Merge,
                &json!({"data": {"forbidden": answer}}),
            )?;
            Ok(Action::Done)
        }
        other => Err(Error::permanent(format!(
            "misbehave: delete of an undeclared Secret was not refused: {other:?}"
        ))),
    }
}

pub(crate) fn trap() -> ! {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::unreachable()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        panic!("misbehave: trap (unreachable)")
    }
}

pub(crate) fn spin() -> ! {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

pub(crate) fn allocate() -> ! {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        // Touch every page so the memory is really used.
        hoard.push(vec![0x5a; 1 << 20]);
        std::hint::black_box(&hoard);
    }
}

#[inline(never)]
fn recurse(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth.to_le_bytes()[0]; 1024]);
    if std::hint::black_box(depth) == u64::MAX {
        return 0;
    }
    recurse(depth + 1).wrapping_add(u64::from(frame[usize::from(frame[0]) % 1024]))
}

#[inline(never)]
fn recurse_small(depth: u64, limit: u64) -> u64 {
    if depth == limit {
        return depth;
    }
    // Not a tail call: the result is used, so every level keeps a frame.
    recurse_small(depth + 1, limit).wrapping_mul(depth | 1) ^ depth
}
