//! The glue between the generated bindings and [`Reconciler`](crate::Reconciler):
//! used by the code `#[reconciler]` emits, not by hand.

use std::marker::PhantomData;

#[cfg(target_arch = "wasm32")]
use crate::convert;

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
            kinds: s.kinds.iter().map(crate::convert::gvk).collect(),
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
                    kind: crate::convert::gvk(&c.kind),
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
            kind: crate::convert::gvk_from(r.kind),
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
