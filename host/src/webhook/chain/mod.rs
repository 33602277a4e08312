//! The admission chain, as kube-apiserver runs it: every matching mutating
//! webhook of every module (by module name, then declaration order), each
//! seeing the object as the previous one left it, then every matching
//! validating webhook; the first denial ends it. `rekon admit` runs it on
//! one AdmissionReview, and `rekon dev` runs it in the embedded API server
//! for every write.

use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Value, json};

mod attributes;

use attributes::equivalent_version;
pub use attributes::{Attributes, admission_review, matches};

use super::registry::WebhookModules;
use super::review;
use crate::cluster::Cluster;
use crate::runtime::Phase;
use crate::telemetry::Metrics;

/// The name of a module's webhook in the cluster's webhook configurations
/// (and in the API server's messages): `<webhook>.<module>.rekon.dev`.
pub fn configuration_name(module: &str, webhook: &str) -> String {
    format!("{webhook}.{module}.rekon.dev")
}

/// Where the chain ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every webhook allowed it: the object as the mutating webhooks left
    /// it (`None` when none changed it).
    Allowed {
        /// The mutated object.
        object: Option<Value>,
    },
    /// A webhook refused it.
    Denied {
        /// The webhook's configuration name.
        webhook: String,
        /// HTTP status code.
        code: u16,
        /// Status reason (`Forbidden`, `Invalid`, `InternalError`...).
        reason: String,
        /// The message as kube-apiserver words it:
        /// `admission webhook "<name>" denied the request: <message>`.
        message: String,
    },
}

/// The chain's answer: where it ended, the warnings of every webhook
/// called, and each webhook's AdmissionReview answer (for `rekon admit`).
#[derive(Clone, Debug)]
pub struct ChainAnswer {
    /// Allowed (with the mutated object) or denied.
    pub outcome: Outcome,
    /// Every webhook's warnings, in order.
    pub warnings: Vec<String>,
    /// `(webhook configuration name, AdmissionReview answer)` per call.
    pub answers: Vec<(String, Value)>,
}

/// The chain over a set of modules: what `rekon dev` installs in its API
/// server and `rekon admit` runs once.
#[derive(Clone)]
pub struct Chain {
    modules: WebhookModules,
    cluster: Arc<dyn Cluster>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field("modules", &self.modules)
            .finish_non_exhaustive()
    }
}

impl Chain {
    /// A chain over `modules`, whose guests read through `cluster`.
    pub fn new(modules: WebhookModules, cluster: Arc<dyn Cluster>, metrics: Arc<Metrics>) -> Chain {
        Chain {
            modules,
            cluster,
            metrics,
        }
    }

    /// Whether any module's webhook is for `kind` in `group`.
    pub fn reviews(&self, group: &str, kind: &str) -> bool {
        self.modules.all().iter().any(|m| {
            let webhooks = m.webhooks();
            webhooks
                .mutating
                .iter()
                .chain(&webhooks.validating)
                .any(|w| w.kinds.iter().any(|k| k.group == group && k.kind == kind))
        })
    }

    /// Runs the chain for one request.
    pub async fn run(&self, mut attributes: Attributes) -> ChainAnswer {
        let modules = self.modules.all();
        let mut warnings = Vec::new();
        let mut answers = Vec::new();
        let mut mutated = None;
        for phase in [Phase::Mutating, Phase::Validating] {
            for module in &modules {
                let webhooks = match phase {
                    Phase::Mutating => &module.webhooks().mutating,
                    Phase::Validating => &module.webhooks().validating,
                };
                for webhook in webhooks {
                    // matchPolicy Equivalent: a webhook for another version
                    // of the kind sees the request in its version.
                    let (seen, back) = if matches(webhook, &attributes) {
                        (attributes.clone(), None)
                    } else if let Some(version) = equivalent_version(webhook, &attributes)
                        && let Some(converted) = self.in_version(&attributes, &version).await
                    {
                        (converted, Some(attributes.version.clone()))
                    } else {
                        continue;
                    };
                    let name = configuration_name(module.name(), &webhook.name);
                    let review = admission_review(&seen, &uid());
                    let answer = review::admit_counted(
                        &self.metrics,
                        module,
                        self.cluster.clone(),
                        phase,
                        &webhook.name,
                        &review,
                    )
                    .await;
                    let response = answer["response"].clone();
                    answers.push((name.clone(), answer));
                    collect_warnings(&response, &mut warnings);
                    if response["allowed"] != json!(true) {
                        return ChainAnswer {
                            outcome: denial(&name, &response),
                            warnings,
                            answers,
                        };
                    }
                    let Some(object) = patched(&response, seen.object.as_ref()) else {
                        continue;
                    };
                    let object = match back {
                        None => Some(object),
                        Some(version) => {
                            let api_version = format!("{}/{version}", attributes.group);
                            self.convert_object(&object, &api_version).await
                        }
                    };
                    if let Some(object) = object {
                        attributes.object = Some(object.clone());
                        mutated = Some(object);
                    }
                }
            }
        }
        ChainAnswer {
            outcome: Outcome::Allowed { object: mutated },
            warnings,
            answers,
        }
    }
}

impl Chain {
    /// The request in another version of its kind, converted by the
    /// module that converts the kind; `None` when none does.
    async fn in_version(&self, attributes: &Attributes, version: &str) -> Option<Attributes> {
        let api_version = format!("{}/{version}", attributes.group);
        let mut seen = attributes.clone();
        seen.version = version.to_string();
        if let Some(object) = &attributes.object {
            seen.object = Some(self.convert_object(object, &api_version).await?);
        }
        if let Some(old) = &attributes.old_object {
            seen.old_object = Some(self.convert_object(old, &api_version).await?);
        }
        Some(seen)
    }

    /// `object` converted to `api_version` by the module converting its kind.
    async fn convert_object(&self, object: &Value, api_version: &str) -> Option<Value> {
        let (group, kind) = (
            crate::names::split_api_version(api_version).0,
            object["kind"].as_str()?,
        );
        let module = self.modules.converting(group, kind)?;
        let review = review::conversion_review(object, api_version, &uid());
        let answer =
            review::convert_counted(&self.metrics, &module, self.cluster.clone(), &review).await;
        review::converted_object(&answer).ok()
    }
}

/// A fresh request uid.
fn uid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "rekon-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn collect_warnings(response: &Value, warnings: &mut Vec<String>) {
    if let Some(list) = response["warnings"].as_array() {
        warnings.extend(list.iter().filter_map(Value::as_str).map(str::to_string));
    }
}

/// The object after a response's JSON patch, if it has one that applies.
fn patched(response: &Value, object: Option<&Value>) -> Option<Value> {
    let encoded = response["patch"].as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let patch: json_patch::Patch = serde_json::from_slice(&bytes).ok()?;
    let mut object = object?.clone();
    json_patch::patch(&mut object, &patch).ok()?;
    Some(object)
}

/// A refusal as kube-apiserver words it.
fn denial(webhook: &str, response: &Value) -> Outcome {
    let status = &response["status"];
    let code = status["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400)
        .unwrap_or(400);
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    let message = match (status["message"].as_str(), status["reason"].as_str()) {
        (Some(m), _) if !m.is_empty() => format!("{denied_by}: {m}"),
        (_, Some(r)) if !r.is_empty() => format!("{denied_by}: {r}"),
        _ => format!("{denied_by} without explanation"),
    };
    Outcome::Denied {
        webhook: webhook.to_string(),
        code,
        reason: status["reason"]
            .as_str()
            .unwrap_or("BadRequest")
            .to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_denial_reads_as_kube_apiserver_words_it() {
        let response = json!({"allowed": false, "status": {"code": 422, "reason": "Invalid", "message": "spec.image is required"}});
        assert_eq!(
            denial("v.app.rekon.dev", &response),
            Outcome::Denied {
                webhook: "v.app.rekon.dev".into(),
                code: 422,
                reason: "Invalid".into(),
                message: "admission webhook \"v.app.rekon.dev\" denied the request: spec.image is required".into(),
            }
        );
        let bare = denial("v", &json!({"allowed": false}));
        assert!(
            matches!(bare, Outcome::Denied { code: 400, ref message, .. } if message.ends_with("without explanation"))
        );
    }
}
