//! The glue between the generated bindings and [`Reconciler`](crate::Reconciler):
//! used by the code `#[reconciler]` emits, not by hand.

use std::marker::PhantomData;

/// The exported component type for reconciler `R`. `#[reconciler]` passes
/// it to the bindings' `export!` macro on `wasm32`.
pub struct Export<R>(PhantomData<R>);

/// The exported component type for a reconciler with webhooks (world
/// `operator`): `#[reconciler(webhook)]`.
pub struct ExportOperator<R>(PhantomData<R>);

/// The exported component type for a module of webhooks only (world
/// `webhook`): `#[webhook]`.
pub struct ExportWebhook<W>(PhantomData<W>);

#[cfg(target_arch = "wasm32")]
impl<R: crate::Reconciler + crate::webhook::Webhook> crate::bindings_operator::Guest
    for ExportOperator<R>
{
    fn manifest() -> crate::bindings::rekon::reconciler::types::Manifest {
        <Export<R> as crate::bindings::Guest>::manifest()
    }

    fn reconcile(
        request: crate::bindings::rekon::reconciler::types::Request,
    ) -> Result<
        crate::bindings::rekon::reconciler::types::Action,
        crate::bindings::rekon::reconciler::types::ReconcileError,
    > {
        <Export<R> as crate::bindings::Guest>::reconcile(request)
    }

    fn crds() -> Vec<String> {
        <Export<R> as crate::bindings::Guest>::crds()
    }

    fn webhooks() -> hooks::w::Webhooks {
        install_panic_hook();
        hooks::webhooks(R::webhooks())
    }

    fn validate(request: hooks::w::AdmissionRequest) -> hooks::w::Verdict {
        hooks::validate::<R>(request)
    }

    fn mutate(request: hooks::w::AdmissionRequest) -> hooks::w::Mutation {
        hooks::mutate::<R>(request)
    }

    fn convert(request: hooks::w::ConversionRequest) -> Result<Vec<String>, String> {
        hooks::convert::<R>(request)
    }
}

#[cfg(target_arch = "wasm32")]
impl<W: crate::webhook::Webhook> crate::bindings_webhook::Guest for ExportWebhook<W> {
    fn manifest() -> hooks::w::WebhookManifest {
        install_panic_hook();
        let declared = W::webhooks();
        hooks::w::WebhookManifest {
            name: declared.name.clone(),
            version: declared.version.clone(),
            permissions: declared
                .permissions
                .iter()
                .cloned()
                .map(convert::permission)
                .collect(),
            webhooks: hooks::webhooks(declared),
        }
    }

    fn crds() -> Vec<String> {
        install_panic_hook();
        crds_json(W::crds())
    }

    fn validate(request: hooks::w::AdmissionRequest) -> hooks::w::Verdict {
        hooks::validate::<W>(request)
    }

    fn mutate(request: hooks::w::AdmissionRequest) -> hooks::w::Mutation {
        hooks::mutate::<W>(request)
    }

    fn convert(request: hooks::w::ConversionRequest) -> Result<Vec<String>, String> {
        hooks::convert::<W>(request)
    }
}

/// Conversions between the SDK's webhook types and the generated ones.
#[cfg(target_arch = "wasm32")]
mod hooks {
    pub(crate) use crate::bindings_webhook::rekon::reconciler::webhook_types as w;
    use crate::webhook::{
        AdmissionRequest, FailurePolicy, Operation, UserInfo, Verdict, Webhook, WebhookSpec,
        Webhooks,
    };
    use serde_json::Value;

    fn operation(o: Operation) -> w::Operation {
        match o {
            Operation::Create => w::Operation::Create,
            Operation::Update => w::Operation::Update,
            Operation::Delete => w::Operation::Delete,
            Operation::Connect => w::Operation::Connect,
        }
    }

    fn spec(s: WebhookSpec) -> w::Webhook {
        w::Webhook {
            name: s.name,
            kinds: s.kinds.iter().map(super::convert::gvk).collect(),
            operations: s.operations.into_iter().map(operation).collect(),
            sub_resources: s.sub_resources,
            namespace_selector: s.namespace_selector,
            object_selector: s.object_selector,
            failure_policy: match s.failure_policy {
                FailurePolicy::Fail => w::FailurePolicy::Fail,
                FailurePolicy::Ignore => w::FailurePolicy::Ignore,
            },
            timeout_seconds: s.timeout_seconds,
        }
    }

    pub(crate) fn webhooks(d: Webhooks) -> w::Webhooks {
        w::Webhooks {
            validating: d.validating.into_iter().map(spec).collect(),
            mutating: d.mutating.into_iter().map(spec).collect(),
            conversions: d
                .conversions
                .into_iter()
                .map(|c| w::Conversion {
                    kind: super::convert::gvk(&c.kind),
                    versions: c.versions,
                })
                .collect(),
        }
    }

    fn json(text: Option<String>) -> Option<Value> {
        text.and_then(|t| serde_json::from_str(&t).ok())
    }

    fn request(r: w::AdmissionRequest) -> AdmissionRequest {
        AdmissionRequest {
            uid: r.uid,
            webhook: r.webhook,
            kind: super::convert::gvk_from(r.kind),
            resource: r.resource,
            sub_resource: r.sub_resource,
            namespace: r.namespace,
            name: r.name,
            operation: match r.operation {
                w::Operation::Create => Operation::Create,
                w::Operation::Update => Operation::Update,
                w::Operation::Delete => Operation::Delete,
                w::Operation::Connect => Operation::Connect,
            },
            user_info: UserInfo {
                username: r.user_info.username,
                uid: r.user_info.uid,
                groups: r.user_info.groups,
                extra: r.user_info.extra,
            },
            object: json(r.object),
            old_object: json(r.old_object),
            dry_run: r.dry_run,
            options: json(r.options),
        }
    }

    fn verdict(v: Verdict) -> w::Verdict {
        w::Verdict {
            allowed: v.allowed,
            message: v.message,
            code: v.code,
            warnings: v.warnings,
        }
    }

    pub(crate) fn validate<W: Webhook>(r: w::AdmissionRequest) -> w::Verdict {
        super::install_panic_hook();
        verdict(crate::webhook::validate::<W>(&request(r)))
    }

    pub(crate) fn mutate<W: Webhook>(r: w::AdmissionRequest) -> w::Mutation {
        super::install_panic_hook();
        let (v, changed) = crate::webhook::mutate::<W>(&request(r));
        w::Mutation {
            verdict: verdict(v),
            object: changed.map(|o| o.to_string()),
        }
    }

    pub(crate) fn convert<W: Webhook>(r: w::ConversionRequest) -> Result<Vec<String>, String> {
        super::install_panic_hook();
        let objects = r
            .objects
            .iter()
            .map(|o| serde_json::from_str(o).map_err(|e| format!("an object is not JSON: {e}")))
            .collect::<Result<Vec<Value>, String>>()?;
        crate::webhook::convert::<W>(objects, &r.desired_api_version)
            .map(|done| done.iter().map(Value::to_string).collect())
    }
}

#[cfg(target_arch = "wasm32")]
impl<R: crate::Reconciler> crate::bindings::Guest for Export<R> {
    fn manifest() -> crate::bindings::rekon::reconciler::types::Manifest {
        install_panic_hook();
        convert::manifest(R::manifest())
    }

    fn reconcile(
        request: crate::bindings::rekon::reconciler::types::Request,
    ) -> Result<
        crate::bindings::rekon::reconciler::types::Action,
        crate::bindings::rekon::reconciler::types::ReconcileError,
    > {
        install_panic_hook();
        match R::reconcile(convert::request(request)) {
            Ok(action) => Ok(convert::action(action)),
            Err(e) => Err(crate::bindings::rekon::reconciler::types::ReconcileError {
                message: e.message,
                retry: e.retry,
            }),
        }
    }

    fn crds() -> Vec<String> {
        install_panic_hook();
        crds_json(R::crds())
    }
}

/// The CRDs as the contract carries them: one JSON document each.
#[cfg(target_arch = "wasm32")]
fn crds_json(crds: Vec<serde_json::Value>) -> Vec<String> {
    crds.iter().map(serde_json::Value::to_string).collect()
}

/// The prefix of the error-level log record a panicking guest writes just
/// before it traps: `panic: <message>`, with the source location in the
/// `location` field.
pub const PANIC_PREFIX: &str = "panic: ";

/// The panic message of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "Box<dyn Any>"
    }
}

/// Sends panic messages through the `log` import at error level before the
/// trap, so the host can say why the guest died.
#[cfg(target_arch = "wasm32")]
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = panic_message(info.payload());
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_default();
        crate::raw::log(
            crate::Level::Error,
            &format!("{PANIC_PREFIX}{message}"),
            &[("location".to_owned(), location)],
        );
    }));
}

/// Conversions between the SDK's types and the generated ones.
#[cfg(target_arch = "wasm32")]
pub(crate) mod convert {
    use crate::bindings::rekon::reconciler::types as b;
    use crate::{
        Action, ApiError, EventType, Gvk, IndexKey, Level, Manifest, Mapping, ObjectRef, PatchType,
        Predicate, Propagation, Reason, Request, Verbs,
    };

    pub(crate) fn gvk(g: &Gvk) -> b::Gvk {
        b::Gvk {
            group: g.group.clone(),
            version: g.version.clone(),
            kind: g.kind.clone(),
        }
    }

    pub(crate) fn gvk_from(g: b::Gvk) -> Gvk {
        Gvk {
            group: g.group,
            version: g.version,
            kind: g.kind,
        }
    }

    pub(crate) fn object_ref(r: &ObjectRef) -> b::ObjectRef {
        b::ObjectRef {
            kind: gvk(&r.kind),
            namespace: r.namespace.clone(),
            name: r.name.clone(),
        }
    }

    pub(crate) fn api_error(e: b::ApiError) -> ApiError {
        ApiError {
            code: e.code,
            reason: e.reason,
            message: e.message,
        }
    }

    pub(crate) fn patch_type(p: &PatchType) -> b::PatchType {
        match p {
            PatchType::Merge => b::PatchType::Merge,
            PatchType::Json => b::PatchType::Json,
            PatchType::Apply {
                field_manager,
                force,
            } => b::PatchType::Apply(b::ApplyOptions {
                field_manager: field_manager.clone(),
                force: *force,
            }),
        }
    }

    pub(crate) fn propagation(p: Propagation) -> b::Propagation {
        match p {
            Propagation::Background => b::Propagation::Background,
            Propagation::Foreground => b::Propagation::Foreground,
            Propagation::Orphan => b::Propagation::Orphan,
        }
    }

    pub(crate) fn event_type(e: EventType) -> b::EventType {
        match e {
            EventType::Normal => b::EventType::Normal,
            EventType::Warning => b::EventType::Warning,
        }
    }

    pub(crate) fn level(l: Level) -> b::Level {
        match l {
            Level::Trace => b::Level::Trace,
            Level::Debug => b::Level::Debug,
            Level::Info => b::Level::Info,
            Level::Warn => b::Level::Warn,
            Level::Error => b::Level::Error,
        }
    }

    fn verbs(v: Verbs) -> b::Verbs {
        let mut out = b::Verbs::empty();
        for (ours, theirs) in [
            (Verbs::GET, b::Verbs::GET),
            (Verbs::LIST, b::Verbs::LIST),
            (Verbs::WATCH, b::Verbs::WATCH),
            (Verbs::CREATE, b::Verbs::CREATE),
            (Verbs::UPDATE, b::Verbs::UPDATE),
            (Verbs::PATCH, b::Verbs::PATCH),
            (Verbs::DELETE, b::Verbs::DELETE),
        ] {
            if v.contains(ours) {
                out |= theirs;
            }
        }
        out
    }

    fn predicates(p: &[Predicate]) -> Vec<b::Predicate> {
        p.iter()
            .map(|p| match p {
                Predicate::GenerationChanged => b::Predicate::GenerationChanged,
                Predicate::LabelsChanged => b::Predicate::LabelsChanged,
                Predicate::AnnotationsChanged => b::Predicate::AnnotationsChanged,
                Predicate::ResourceVersionChanged => b::Predicate::ResourceVersionChanged,
            })
            .collect()
    }

    pub(crate) fn permission(p: crate::Permission) -> b::Permission {
        b::Permission {
            kind: gvk(&p.kind),
            verbs: verbs(p.verbs),
            namespaces: p.namespaces,
        }
    }

    pub(crate) fn manifest(m: Manifest) -> b::Manifest {
        b::Manifest {
            name: m.name,
            version: m.version,
            primary: gvk(&m.primary),
            owns: m
                .owns
                .iter()
                .map(|o| b::Owned {
                    kind: gvk(&o.kind),
                    predicates: predicates(&o.predicates),
                })
                .collect(),
            watches: m
                .watches
                .into_iter()
                .map(|w| b::Watch {
                    kind: gvk(&w.kind),
                    mapping: match w.mapping {
                        Mapping::OwnerReference => b::Mapping::OwnerReference,
                        Mapping::Label(key) => b::Mapping::Label(key),
                        Mapping::SameName => b::Mapping::SameName,
                        Mapping::AllPrimaries => b::Mapping::AllPrimaries,
                    },
                    label_selector: w.label_selector,
                    predicates: predicates(&w.predicates),
                })
                .collect(),
            finalizer: m.finalizer,
            permissions: m.permissions.into_iter().map(permission).collect(),
            max_concurrency: m.max_concurrency,
            timeout_ms: m.timeout_ms,
            primary_selector: m.primary_selector,
            primary_namespaces: m.primary_namespaces,
            primary_predicates: predicates(&m.primary_predicates),
            resync_period_ms: m.resync_period_ms,
            indexes: m
                .indexes
                .into_iter()
                .map(|i| b::Index {
                    name: i.name,
                    kind: gvk(&i.kind),
                    key: match i.key {
                        IndexKey::Field(path) => b::IndexKey::Field(path),
                        IndexKey::Label(key) => b::IndexKey::Label(key),
                    },
                })
                .collect(),
        }
    }

    pub(crate) fn request(r: b::Request) -> Request {
        Request {
            target: ObjectRef {
                kind: gvk_from(r.target.kind),
                namespace: r.target.namespace,
                name: r.target.name,
            },
            object: r.object,
            reason: match r.reason {
                b::Reason::Added => Reason::Added,
                b::Reason::Updated => Reason::Updated,
                b::Reason::Deleted => Reason::Deleted,
                b::Reason::Finalizing => Reason::Finalizing,
                b::Reason::OwnedChanged => Reason::OwnedChanged,
                b::Reason::WatchedChanged => Reason::WatchedChanged,
                b::Reason::Requeued => Reason::Requeued,
                b::Reason::Retry => Reason::Retry,
                b::Reason::Resync => Reason::Resync,
                b::Reason::ModuleReloaded => Reason::ModuleReloaded,
                b::Reason::Manual => Reason::Manual,
            },
            attempt: r.attempt,
        }
    }

    pub(crate) fn action(a: Action) -> b::Action {
        match a {
            Action::Done => b::Action::Done,
            Action::RequeueAfter(ms) => b::Action::RequeueAfter(ms),
        }
    }
}
