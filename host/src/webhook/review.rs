//! One review: an AdmissionReview or ConversionReview (v1) read into the
//! contract's request, run by a module on a fresh instance, and its answer
//! written back as the API server expects it: a verdict with warnings, a
//! JSON patch for a mutation, the converted objects; and the webhook's
//! failure policy applied when the guest fails.

use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::cluster::Cluster;
use crate::contract::operation_named;
use crate::contract::{AdmissionRequest, ConversionRequest, FailurePolicy, Gvk, UserInfo, Verdict};
use crate::runtime::webhooks::timeout;
use crate::runtime::{Module, Phase, ReconcileError};
use crate::telemetry::Metrics;

/// What became of one review, for metrics and logs: `allowed`, `denied`,
/// `patched`, `converted`, `bad_request`, or the guest's failure.
pub type ReviewResult = &'static str;

/// A review that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadReview(pub String);

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn object_text(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .filter(|v| v.is_object())
        .map(ToString::to_string)
}

fn user_info(value: &Value) -> UserInfo {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    UserInfo {
        username: text(value, "username"),
        uid: text(value, "uid"),
        groups: value.get("groups").map(strings).unwrap_or_default(),
        extra: value
            .get("extra")
            .and_then(Value::as_object)
            .map(|extra| extra.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
            .unwrap_or_default(),
    }
}

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

/// The `request` of a ConversionReview v1.
pub fn conversion_request(review: &Value) -> Result<ConversionRequest, BadReview> {
    let request = review
        .get("request")
        .filter(|r| r.is_object())
        .ok_or_else(|| BadReview("the ConversionReview has no request".into()))?;
    let desired = text(request, "desiredAPIVersion");
    if desired.is_empty() {
        return Err(BadReview(
            "the ConversionReview names no desiredAPIVersion".into(),
        ));
    }
    Ok(ConversionRequest {
        uid: text(request, "uid"),
        desired_api_version: desired,
        objects: request
            .get("objects")
            .and_then(Value::as_array)
            .map(|items| items.iter().map(ToString::to_string).collect())
            .unwrap_or_default(),
    })
}

fn conversion_answer(uid: &str, result: Result<Vec<Value>, String>) -> Value {
    let response = match result {
        Ok(objects) => json!({
            "uid": uid,
            "convertedObjects": objects,
            "result": { "metadata": {}, "status": "Success" },
        }),
        Err(message) => json!({
            "uid": uid,
            "convertedObjects": [],
            "result": { "metadata": {}, "status": "Failure", "message": message },
        }),
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": response,
    })
}

/// Checks what the API server checks of converted objects: one for each
/// object given, in the desired version, with the same identity.
fn check_converted(
    request: &ConversionRequest,
    converted: &[String],
) -> Result<Vec<Value>, String> {
    if converted.len() != request.objects.len() {
        return Err(format!(
            "the module returned {} objects for {}",
            converted.len(),
            request.objects.len()
        ));
    }
    request
        .objects
        .iter()
        .zip(converted)
        .map(|(given, answer)| {
            let given: Value = serde_json::from_str(given).unwrap_or(Value::Null);
            let answer: Value = serde_json::from_str(answer)
                .map_err(|e| format!("a converted object is not JSON: {e}"))?;
            let version = answer.get("apiVersion").and_then(Value::as_str);
            if version != Some(request.desired_api_version.as_str()) {
                return Err(format!(
                    "a converted object has apiVersion {version:?}, not {:?}",
                    request.desired_api_version
                ));
            }
            for field in ["name", "namespace", "uid"] {
                let pointer = format!("/metadata/{field}");
                if given.pointer(&pointer) != answer.pointer(&pointer) {
                    return Err(format!("the conversion changed metadata.{field}"));
                }
            }
            Ok(answer)
        })
        .collect()
}

/// The ConversionReview kube-apiserver would send to convert `object` to
/// `api_version`.
pub fn conversion_review(object: &Value, api_version: &str, uid: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": [object]},
    })
}

/// The one object a ConversionReview answer converted, or why there is none.
pub fn converted_object(answer: &Value) -> Result<Value, String> {
    let response = &answer["response"];
    if response["result"]["status"] == "Success" {
        Some(response["convertedObjects"][0].clone())
            .filter(Value::is_object)
            .ok_or_else(|| "no converted object".to_string())
    } else {
        Err(response["result"]["message"]
            .as_str()
            .unwrap_or("conversion failed")
            .to_string())
    }
}

/// Answers one ConversionReview with the module: the ConversionReview to
/// send back, and what became of it. Never fails: a guest failure or a
/// wrong answer is a `Failure` result with the reason.
pub async fn convert(
    module: &Module,
    cluster: Arc<dyn Cluster>,
    review: &Value,
) -> (Value, ReviewResult) {
    let request = match conversion_request(review) {
        Ok(request) => request,
        Err(e) => {
            let uid = review
                .pointer("/request/uid")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return (conversion_answer(uid, Err(e.0)), "bad_request");
        }
    };
    let budget = module.review_budget(std::time::Duration::from_secs(
        crate::runtime::DEFAULT_TIMEOUT_SECONDS.into(),
    ));
    let (answer, result) = match module.convert(cluster, &request, budget).await {
        Ok(Ok(converted)) => match check_converted(&request, &converted) {
            Ok(objects) => (Ok(objects), "converted"),
            Err(message) => (Err(message), "bad_answer"),
        },
        Ok(Err(message)) => (Err(message), "error"),
        Err(error) => (
            Err(format!("module {:?} failed: {error}", module.name())),
            error.metric_label(),
        ),
    };
    if let Err(message) = &answer {
        tracing::warn!(
            module = module.name(),
            uid = request.uid,
            message,
            "conversion failed"
        );
    }
    (conversion_answer(&request.uid, answer), result)
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

/// Runs [`convert`] and counts it in `metrics` (webhook `convert`).
pub async fn convert_counted(
    metrics: &Metrics,
    module: &Module,
    cluster: Arc<dyn Cluster>,
    review: &Value,
) -> Value {
    let started = Instant::now();
    let (answer, result) = convert(module, cluster, review).await;
    metrics.count_review(module.name(), "convert", result, started.elapsed());
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
    fn conversions_keep_count_version_and_identity() {
        let request = ConversionRequest {
            uid: "u".into(),
            desired_api_version: "demo.rekon.dev/v2".into(),
            objects: vec![
                json!({"apiVersion": "demo.rekon.dev/v1", "metadata": {"name": "a", "uid": "1"}})
                    .to_string(),
            ],
        };
        let good =
            json!({"apiVersion": "demo.rekon.dev/v2", "metadata": {"name": "a", "uid": "1"}})
                .to_string();
        assert!(check_converted(&request, std::slice::from_ref(&good)).is_ok());
        assert!(
            check_converted(&request, &[])
                .unwrap_err()
                .contains("0 objects")
        );
        let renamed =
            json!({"apiVersion": "demo.rekon.dev/v2", "metadata": {"name": "b", "uid": "1"}})
                .to_string();
        assert!(
            check_converted(&request, &[renamed])
                .unwrap_err()
                .contains("metadata.name")
        );
        let old = json!({"apiVersion": "demo.rekon.dev/v1", "metadata": {"name": "a", "uid": "1"}})
            .to_string();
        assert!(
            check_converted(&request, &[old])
                .unwrap_err()
                .contains("apiVersion")
        );
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
