//! `misbehave`'s webhooks: validating webhooks on ConfigMaps that
//! misbehave on command, to test the host's failure policies and limits
//! during admission.
//!
//! Two webhooks, told apart by the ConfigMap's label [`POLICY_KEY`]:
//! `fail-closed` (failure policy `Fail`) for `fail`, `fail-open` (`Ignore`)
//! for `ignore`; both time out after 2 seconds. The annotation
//! [`WEBHOOK_KEY`] picks what they do: `deny`, `deny-build-a` (deny only in
//! the build marked [`BUILD_MARK`](crate::BUILD_MARK) `...-A`), `trap`,
//! `panic`, `loop`, `alloc`, `write` (try to patch the object: refused
//! during a review, and the refusal is the denial's message), `read` (get
//! the object's namespace: allowed, with the namespace's uid as a warning);
//! anything else allows.

use rekon_sdk::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use rekon_sdk::prelude::{Gvk, ObjectRef, PatchType, api, json};
use rekon_sdk::webhook::{
    AdmissionRequest, Denied, FailurePolicy, Operation, Validation, Webhook, WebhookSpec, Webhooks,
};

use crate::{BUILD_MARK, Misbehave};

/// The label that picks the webhook (`fail` or `ignore`).
pub const POLICY_KEY: &str = "misbehave.rekon.dev/webhook-policy";
/// The annotation that picks what the webhook does.
pub const WEBHOOK_KEY: &str = "misbehave.rekon.dev/webhook";
/// The message of `deny`.
pub const DENY_MESSAGE: &str = "misbehave: asked to deny";

impl Webhook for Misbehave {
    fn webhooks() -> Webhooks {
        let configmap = Gvk::of::<ConfigMap>();
        let spec = |name: &str, policy: FailurePolicy, value: &str| {
            WebhookSpec::new(name, configmap.clone())
                .operations([Operation::Create, Operation::Update])
                .object_selector(format!("{POLICY_KEY}={value}"))
                .failure_policy(policy)
                .timeout_seconds(2)
        };
        Webhooks::new()
            .validating(spec("fail-closed", FailurePolicy::Fail, "fail"))
            .validating(spec("fail-open", FailurePolicy::Ignore, "ignore"))
    }

    fn validate_create(request: &AdmissionRequest) -> Validation {
        misbehave(request)
    }

    fn validate_update(request: &AdmissionRequest) -> Validation {
        misbehave(request)
    }
}

fn misbehave(request: &AdmissionRequest) -> Validation {
    let object = request.object.as_ref().cloned().unwrap_or_default();
    let mode = object["metadata"]["annotations"][WEBHOOK_KEY]
        .as_str()
        .unwrap_or("allow");
    match mode {
        "deny" => Err(Denied::new(DENY_MESSAGE)),
        "deny-build-a" => {
            let mark = std::hint::black_box(BUILD_MARK);
            if mark.ends_with('A') {
                Err(Denied::new(format!("denied by {mark}")))
            } else {
                Ok(vec![format!("allowed by {mark}")])
            }
        }
        "trap" => crate::trap(),
        "panic" => panic!("{}", crate::PANIC_MESSAGE),
        "loop" => crate::spin(),
        "alloc" => crate::allocate(),
        "write" => {
            let target = ObjectRef::new(
                Gvk::of::<ConfigMap>(),
                request.namespace.as_deref(),
                &request.name,
            );
            match api::patch_dyn(
                &target,
                &PatchType::Merge,
                &json!({"data": {"written": "yes"}}),
            ) {
                Ok(_) => Ok(Vec::new()),
                Err(e) => Err(Denied::new(format!(
                    "write refused: {} {}: {}",
                    e.code, e.reason, e.message
                ))),
            }
        }
        "read" => {
            let namespace = request.namespace.clone().unwrap_or_default();
            match api::get::<Namespace>(None, &namespace) {
                Ok(Some(ns)) => Ok(vec![format!(
                    "namespace uid {}",
                    ns.metadata.uid.unwrap_or_default()
                )]),
                Ok(None) => Err(Denied::new(format!("namespace {namespace} not found"))),
                Err(e) => Err(Denied::new(format!(
                    "read refused: {} {}",
                    e.code, e.reason
                ))),
            }
        }
        _ => Ok(Vec::new()),
    }
}
