//! A ConversionReview: read into the contract's request, run by a
//! module's conversion on a fresh instance, and answered with the
//! converted objects, each checked (count, version, identity).

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::{BadReview, ReviewResult, text};
use crate::cluster::Cluster;
use crate::contract::ConversionRequest;
use crate::runtime::Module;
use crate::telemetry::Metrics;

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
}
