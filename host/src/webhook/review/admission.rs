//! An AdmissionReview: read into the contract's request, run by a
//! module's webhook on a fresh instance, and answered as the API server
//! expects it (a verdict with warnings, a JSON patch for a mutation), the
//! webhook's failure policy applied when the guest fails.

use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use serde_json::{Value, json};

use super::{BadReview, ReviewResult, object_text, text, user_info};
use crate::cluster::Cluster;
use crate::contract::{AdmissionRequest, FailurePolicy, Gvk, Verdict, operation_named};
use crate::runtime::webhooks::timeout;
use crate::runtime::{Module, Phase, ReconcileError};
use crate::telemetry::Metrics;

/// The `request` of an AdmissionReview v1, for the module's webhook `webhook`.
pub fn admission_request(review: &Value, webhook: &str) -> Result<AdmissionRequest, BadReview> {
    let request = review
        .get("request")
        .filter(|r| r.is_object())
        .ok_or_else(|| BadReview("the AdmissionReview has no request".into()))?;
    let uid = text(request, "uid");
    if uid.is_empty() {
        return Err(BadReview("the AdmissionReview's request has no uid".into()));
    }
    let kind = request.get("kind").unwrap_or(&Value::Null);
    let sub_resource = text(request, "subResource");
    let namespace = text(request, "namespace");
    Ok(AdmissionRequest {
        uid,
        webhook: webhook.to_string(),
        kind: Gvk {
            group: text(kind, "group"),
            version: text(kind, "version"),
            kind: text(kind, "kind"),
        },
        resource: text(request.get("resource").unwrap_or(&Value::Null), "resource"),
        sub_resource: (!sub_resource.is_empty()).then_some(sub_resource),
        namespace: (!namespace.is_empty()).then_some(namespace),
        name: text(request, "name"),
        operation: {
            let name = text(request, "operation");
            operation_named(&name)
                .ok_or_else(|| BadReview(format!("unknown operation {name:?}")))?
        },
        user_info: user_info(request.get("userInfo").unwrap_or(&Value::Null)),
        object: object_text(request, "object"),
        old_object: object_text(request, "oldObject"),
        dry_run: request
            .get("dryRun")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        options: object_text(request, "options"),
    })
}

/// The AdmissionReview that answers `uid` with `response` (uid added).
fn admission_answer(uid: &str, mut response: Value) -> Value {
    response["uid"] = json!(uid);
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": response,
    })
}

fn status_reason(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        404 => "NotFound",
        409 => "Conflict",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        _ => "Forbidden",
    }
}

/// A `response` for a verdict (without the uid).
fn verdict_response(verdict: &Verdict) -> Value {
    let mut response = json!({ "allowed": verdict.allowed });
    if !verdict.allowed {
        let code = verdict.code.unwrap_or(403);
        response["status"] = json!({
            "metadata": {},
            "status": "Failure",
            "message": verdict.message.clone().unwrap_or_else(|| "denied by the webhook".into()),
            "reason": status_reason(code),
            "code": code,
        });
    }
    if !verdict.warnings.is_empty() {
        response["warnings"] = json!(verdict.warnings);
    }
    response
}

/// A `response` for a guest that failed, by the webhook's failure policy.
fn failure_response(
    module: &str,
    webhook: &str,
    policy: FailurePolicy,
    error: &ReconcileError,
) -> Value {
    let message = format!("webhook {webhook:?} of module {module:?} failed: {error}");
    match policy {
        FailurePolicy::Fail => json!({
            "allowed": false,
            "status": {
                "metadata": {},
                "status": "Failure",
                "message": message,
                "reason": "InternalError",
                "code": 500,
            },
        }),
        FailurePolicy::Ignore => json!({
            "allowed": true,
            "warnings": [format!("{message} (ignored: failurePolicy Ignore)")],
        }),
    }
}

/// The JSON patch (RFC 6902) from `before` to `after`, or `None` when
/// they are the same.
pub fn json_patch(before: &Value, after: &Value) -> Option<Value> {
    let patch = json_patch::diff(before, after);
    (!patch.0.is_empty()).then(|| serde_json::to_value(patch).unwrap_or(Value::Null))
}

/// Answers one AdmissionReview for the module's webhook `webhook` of
/// `phase`: the AdmissionReview to send back, and what became of it. The
/// guest reads through `cluster` and cannot write. Never fails: a review
/// that cannot be read is refused (400), a guest failure follows the
/// webhook's failure policy.
pub async fn admit(
    module: &Module,
    cluster: Arc<dyn Cluster>,
    phase: Phase,
    webhook: &str,
    review: &Value,
) -> (Value, ReviewResult) {
    let uid = review
        .pointer("/request/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let bad = |message: String| {
        let verdict = Verdict {
            allowed: false,
            message: Some(message),
            code: Some(400),
            warnings: Vec::new(),
        };
        (
            admission_answer(&uid, verdict_response(&verdict)),
            "bad_request",
        )
    };
    let Some(declared) = module.webhook(phase, webhook) else {
        return bad(format!(
            "module {:?} has no {} webhook {webhook:?}",
            module.name(),
            phase.as_str()
        ));
    };
    let request = match admission_request(review, webhook) {
        Ok(request) => request,
        Err(e) => return bad(e.0),
    };
    let budget = module.review_budget(timeout(declared));
    let policy = declared.failure_policy;
    let outcome = match phase {
        Phase::Validating => module
            .validate(cluster, &request, budget)
            .await
            .map(|verdict| (verdict, None)),
        Phase::Mutating => module
            .mutate(cluster, &request, budget)
            .await
            .map(|mutation| (mutation.verdict, mutation.object)),
    };
    let (verdict, changed) = match outcome {
        Ok(answer) => answer,
        Err(error) => {
            tracing::warn!(
                module = module.name(),
                webhook,
                uid,
                %error,
                policy = ?policy,
                "webhook failed"
            );
            let response = failure_response(module.name(), webhook, policy, &error);
            return (admission_answer(&uid, response), error.metric_label());
        }
    };
    let mut response = verdict_response(&verdict);
    let mut result = if verdict.allowed { "allowed" } else { "denied" };
    if let (true, Some(changed)) = (verdict.allowed, changed) {
        let before: Value = request
            .object
            .as_deref()
            .and_then(|o| serde_json::from_str(o).ok())
            .unwrap_or(Value::Null);
        let after: Value = match serde_json::from_str(&changed) {
            Ok(after) => after,
            Err(e) => {
                let error = ReconcileError::Guest {
                    message: format!("the mutated object is not JSON: {e}"),
                    retry: false,
                };
                let response = failure_response(module.name(), webhook, policy, &error);
                return (admission_answer(&uid, response), "bad_answer");
            }
        };
        if let Some(patch) = json_patch(&before, &after) {
            let encoded = base64::engine::general_purpose::STANDARD.encode(patch.to_string());
            response["patchType"] = json!("JSONPatch");
            response["patch"] = json!(encoded);
            result = "patched";
        }
    }
    (admission_answer(&uid, response), result)
}

/// Runs [`admit`] and counts it in `metrics`.
pub async fn admit_counted(
    metrics: &Metrics,
    module: &Module,
    cluster: Arc<dyn Cluster>,
    phase: Phase,
    webhook: &str,
    review: &Value,
) -> Value {
    let started = Instant::now();
    let (answer, result) = admit(module, cluster, phase, webhook, review).await;
    metrics.count_review(module.name(), webhook, result, started.elapsed());
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Operation;

    #[test]
    fn an_admission_review_reaches_the_guest_whole() {
        let review = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "u-1",
                "kind": {"group": "demo.rekon.dev", "version": "v1", "kind": "App"},
                "resource": {"group": "demo.rekon.dev", "version": "v1", "resource": "apps"},
                "subResource": "status",
                "name": "web", "namespace": "default", "operation": "UPDATE",
                "userInfo": {"username": "alice", "groups": ["devs"], "extra": {"scopes": ["a"]}},
                "object": {"kind": "App"}, "oldObject": {"kind": "App", "old": true},
                "dryRun": true, "options": {"kind": "UpdateOptions"}
            }
        });
        let request = admission_request(&review, "apps").unwrap();
        assert_eq!(request.uid, "u-1");
        assert_eq!(request.resource, "apps");
        assert_eq!(request.sub_resource.as_deref(), Some("status"));
        assert_eq!(request.namespace.as_deref(), Some("default"));
        assert_eq!(request.operation, Operation::Update);
        assert_eq!(request.user_info.username, "alice");
        assert_eq!(
            request.user_info.extra,
            vec![("scopes".into(), vec!["a".into()])]
        );
        assert!(request.old_object.unwrap().contains("\"old\":true"));
        assert!(request.dry_run);
        assert!(
            admission_request(&json!({"request": {"uid": "x", "operation": "PATCH"}}), "w")
                .is_err()
        );
        assert!(admission_request(&json!({}), "w").is_err());
    }

    #[test]
    fn a_denial_carries_its_message_code_and_warnings() {
        let denied = verdict_response(&Verdict {
            allowed: false,
            message: Some("spec.image is required".into()),
            code: Some(422),
            warnings: vec!["careful".into()],
        });
        assert_eq!(denied["status"]["code"], 422);
        assert_eq!(denied["status"]["reason"], "Invalid");
        assert_eq!(denied["status"]["message"], "spec.image is required");
        assert_eq!(denied["warnings"][0], "careful");
        let error = ReconcileError::Timeout {
            limit: std::time::Duration::from_millis(10),
        };
        let fail = failure_response("app", "apps", FailurePolicy::Fail, &error);
        assert_eq!(fail["allowed"], false);
        assert!(
            fail["status"]["message"]
                .as_str()
                .unwrap()
                .contains("CPU time limit")
        );
        let ignore = failure_response("app", "apps", FailurePolicy::Ignore, &error);
        assert_eq!(ignore["allowed"], true);
    }

    #[test]
    fn a_mutation_becomes_a_json_patch() {
        let before = json!({"spec": {"image": "nginx"}});
        let after = json!({"spec": {"image": "nginx", "replicas": 1}});
        let patch = json_patch(&before, &after).unwrap();
        assert_eq!(
            patch,
            json!([{"op": "add", "path": "/spec/replicas", "value": 1}])
        );
        assert_eq!(json_patch(&before, &before), None);
    }
}
