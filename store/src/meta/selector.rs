//! Field selectors, parsed the way the real server parses them (a
//! malformed selector is a 400 BadRequest [`Status`]); label selectors are
//! rekon-rules' [`LabelSelector`], shared with the host and the SDK.

use serde_json::Value;

use super::status::Status;
use crate::go::strconv::go_quote;
use crate::machinery::field::go_value;
use crate::resource::info::ResourceInfo;

pub use rekon_rules::LabelSelector;

fn bad(msg: impl Into<String>) -> Status {
    Status::bad_request(msg)
}

/// The fields a resource's objects can be selected by, as the real
/// server's field label conversion (`ConvertFieldLabel`) takes them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldLabels {
    supported: Vec<String>,
    generic: bool,
}

impl FieldLabels {
    /// The labels `supported`; `generic` for a kind with none of its own
    /// (`DefaultMetaV1FieldSelectorConversion`, whose refusal names the
    /// two it takes), not for the kinds with a conversion of their own
    /// and custom resources (`field label not supported: ...`).
    pub fn new(supported: Vec<String>, generic: bool) -> FieldLabels {
        FieldLabels { supported, generic }
    }

    fn refuse(&self, label: &str) -> Status {
        if self.generic {
            bad(format!(
                "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                go_quote(label)
            ))
        } else {
            bad(format!("field label not supported: {label}"))
        }
    }
}

/// A parsed field selector (`metadata.name`, `metadata.namespace`, the
/// fields of a kind, a custom resource's `selectableFields`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldSelector {
    reqs: Vec<(String, bool, String)>,
}

impl FieldSelector {
    /// Parses `metadata.name=x,metadata.namespace!=y`, on the fields
    /// `labels` supports.
    pub fn parse(s: &str, labels: &FieldLabels) -> Result<FieldSelector, Status> {
        let mut reqs = Vec::new();
        if s.trim().is_empty() {
            return Ok(FieldSelector { reqs });
        }
        for part in s.split(',') {
            let p = part.trim();
            let (k, eq, v) = if let Some((k, v)) = p.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = p.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = p.split_once('=') {
                (k, true, v)
            } else {
                return Err(bad(format!(
                    "invalid selector: '{s}'; can't understand '{p}'"
                )));
            };
            let k = k.trim();
            if !labels.supported.iter().any(|l| l == k) {
                return Err(labels.refuse(k));
            }
            reqs.push((k.to_string(), eq, v.trim().to_string()));
        }
        Ok(FieldSelector { reqs })
    }

    /// Whether the object satisfies every requirement. A field is read as
    /// Go's `fmt.Sprint` prints it (`3`, `true`); a missing one is `""`.
    pub fn matches(&self, obj: &Value) -> bool {
        self.reqs.iter().all(|(k, eq, v)| {
            let ptr = format!("/{}", k.replace('.', "/"));
            let actual = match obj.pointer(&ptr) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => match n.as_i64() {
                    Some(i) => i.to_string(),
                    None => go_value(&Value::Number(n.clone())),
                },
                Some(Value::Bool(b)) => b.to_string(),
                Some(other) => other.to_string(),
            };
            (actual == *v) == *eq
        })
    }

    /// Whether the selector has no requirement.
    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }
}

/// The fields `res`'s objects can be selected by: a custom resource's
/// name, namespace (when namespaced) and the `selectableFields` of its
/// version; a built-in kind's name, namespace and its own fields.
pub(crate) fn field_labels(res: &ResourceInfo) -> FieldLabels {
    let mut supported = vec!["metadata.name".to_string()];
    match &res.custom {
        Some(custom) => {
            if res.namespaced {
                supported.push("metadata.namespace".into());
            }
            supported.extend(custom.selectable_fields(&res.version).iter().cloned());
            FieldLabels::new(supported, false)
        }
        None => {
            supported.push("metadata.namespace".into());
            let extra = extra_fields(res);
            let generic = extra.is_empty();
            supported.extend(extra.into_iter().map(str::to_string));
            FieldLabels::new(supported, generic)
        }
    }
}

pub(crate) fn extra_fields(res: &ResourceInfo) -> Vec<&'static str> {
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Event") | ("events.k8s.io", "Event") => vec![
            "involvedObject.name",
            "involvedObject.namespace",
            "involvedObject.kind",
            "involvedObject.uid",
            "reason",
            "type",
            "regarding.name",
            "regarding.kind",
            "regarding.namespace",
        ],
        ("", "Secret") => vec!["type"],
        // The Pod strategy's `ToSelectableFields`.
        ("", "Pod") => vec![
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        ("", "Namespace") => vec!["status.phase"],
        _ => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_selector() {
        let obj = json!({"metadata": {"name": "a", "namespace": "ns"}, "spec": {"port": 80, "tls": true}});
        let meta = FieldLabels::new(
            vec!["metadata.name".into(), "metadata.namespace".into()],
            true,
        );
        assert!(
            FieldSelector::parse("metadata.name=a", &meta)
                .unwrap()
                .matches(&obj)
        );
        assert!(
            !FieldSelector::parse("metadata.namespace!=ns", &meta)
                .unwrap()
                .matches(&obj)
        );
        let err = FieldSelector::parse("spec.x=a", &meta).unwrap_err();
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message,
            "\"spec.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
    }

    #[test]
    fn selectable_fields_read_numbers_booleans_and_missing_fields() {
        let obj = json!({"metadata": {"name": "a"}, "spec": {"port": 80, "tls": true}});
        let labels = FieldLabels::new(
            vec![
                "metadata.name".into(),
                "spec.port".into(),
                "spec.tls".into(),
                "spec.host".into(),
            ],
            false,
        );
        for (selector, want) in [
            ("spec.port=80", true),
            ("spec.tls=true", true),
            ("spec.host=", true),
            ("spec.host!=x,metadata.name=a", true),
            ("spec.port=8080", false),
        ] {
            let parsed = FieldSelector::parse(selector, &labels).unwrap();
            assert_eq!(parsed.matches(&obj), want, "{selector}");
        }
        assert_eq!(
            FieldSelector::parse("metadata.namespace=x", &labels)
                .unwrap_err()
                .message,
            "field label not supported: metadata.namespace"
        );
    }
}
