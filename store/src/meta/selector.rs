//! Field selectors, parsed the way the real server parses them
//! (apimachinery's `pkg/fields/selector.go`: a malformed selector is a 400
//! BadRequest [`Status`]), their labels converted by a kind's field label
//! conversion, and matched against the kind's field set; label selectors
//! are rekon-rules' [`LabelSelector`], shared with the host and the SDK.

use std::collections::BTreeMap;

use serde_json::Value;

use super::status::Status;
use crate::go::strconv::go_quote;

pub use rekon_rules::LabelSelector;

fn bad(msg: impl Into<String>) -> Status {
    Status::bad_request(msg)
}

/// The fields an object can be selected by and their values, as its
/// kind's `GetAttrs` gives them (apimachinery's `fields.Set`): a field the
/// set lacks reads as `""`.
pub type FieldSet = BTreeMap<String, String>;

/// The words a field label conversion refuses a label with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `DefaultMetaV1FieldSelectorConversion` (apimachinery's
    /// `runtime/conversion.go`), of a kind without a conversion of its own:
    /// `"x" is not a known field selector: only "metadata.name", "metadata.namespace"`.
    Generic,
    /// `field label not supported: x` (most kinds' own conversions, and
    /// custom resources').
    NotSupported,
    /// `field label "x" not supported for Job` (batch/v1's Job).
    ForKind(&'static str),
    /// `field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: x`.
    ForGroupVersionKind(&'static str),
}

impl Refusal {
    fn message(self, label: &str) -> String {
        match self {
            Refusal::Generic => format!(
                "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                go_quote(label)
            ),
            Refusal::NotSupported => format!("field label not supported: {label}"),
            Refusal::ForKind(kind) => {
                format!("field label {} not supported for {kind}", go_quote(label))
            }
            Refusal::ForGroupVersionKind(gvk) => {
                format!("field label not supported for {gvk}: {label}")
            }
        }
    }
}

/// A kind's field label conversion (`AddFieldLabelConversionFunc`, in the
/// real server's `pkg/apis/<group>/<version>/conversion.go`): the labels a
/// version of the kind takes, each with the field of the kind's field set
/// it selects (Pod's `spec.host` selects `spec.nodeName`), and the words
/// it refuses another with.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldLabels {
    labels: Vec<(String, String)>,
    refusal: Refusal,
}

impl FieldLabels {
    /// The labels `supported`, each selecting the field of its name;
    /// `generic` for a kind with no conversion of its own
    /// ([`Refusal::Generic`]), not for the kinds with a conversion of
    /// their own and custom resources ([`Refusal::NotSupported`]).
    pub fn new(supported: Vec<String>, generic: bool) -> FieldLabels {
        FieldLabels {
            labels: supported.into_iter().map(|l| (l.clone(), l)).collect(),
            refusal: if generic {
                Refusal::Generic
            } else {
                Refusal::NotSupported
            },
        }
    }

    /// The labels of `(label, field)` pairs, refused with `refusal`.
    pub fn mapped(labels: &[(&str, &str)], refusal: Refusal) -> FieldLabels {
        FieldLabels {
            labels: labels
                .iter()
                .map(|(l, f)| (l.to_string(), f.to_string()))
                .collect(),
            refusal,
        }
    }

    /// `DefaultMetaV1FieldSelectorConversion`: `metadata.name` and
    /// `metadata.namespace`, the labels of a kind without a conversion.
    pub fn generic() -> FieldLabels {
        FieldLabels::new(
            vec!["metadata.name".into(), "metadata.namespace".into()],
            true,
        )
    }

    /// The field `label` selects, or the 400 of a label not taken.
    pub fn convert(&self, label: &str) -> Result<&str, Status> {
        self.labels
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, field)| field.as_str())
            .ok_or_else(|| bad(self.refusal.message(label)))
    }
}

/// One term of a field selector: `field=value` (`hasTerm`) or
/// `field!=value` (`notHasTerm`).
#[derive(Clone, Debug, PartialEq)]
struct Term {
    field: String,
    equals: bool,
    value: String,
}

/// A parsed field selector: every term must hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldSelector {
    terms: Vec<Term>,
}

/// The terms of `selector`, split on the commas no backslash escapes
/// (`splitTerms`).
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in selector.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// A term split at the first `!=`, `==` or `=` (`splitTerm`): the field,
/// whether it is an equality, and the value as written.
fn split_term(term: &str) -> Option<(&str, bool, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, equals) in [("!=", false), ("==", true), ("=", true)] {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((&term[..i], equals, value));
            }
        }
    }
    None
}

/// A value with its escapes (`\\`, `\,`, `\=`) read (`UnescapeValue`); an
/// unknown escape or a bare `,` or `=` is refused.
fn unescape(value: &str) -> Result<String, Status> {
    let mut out = String::with_capacity(value.len());
    let mut in_slash = false;
    for c in value.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(bad(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                )));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go prints the rune as its number (`%v`).
            ',' | '=' => {
                return Err(bad(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                )));
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err(bad("invalid field selector: invalid escape sequence: \\"));
    }
    Ok(out)
}

impl FieldSelector {
    /// Parses `metadata.name=x,metadata.namespace!=y` (`fields.ParseSelector`):
    /// the terms split on unescaped commas and sorted, empty ones skipped,
    /// nothing trimmed, each value unescaped. The labels are not looked at:
    /// [`FieldSelector::convert`] does that.
    pub fn parse(selector: &str) -> Result<FieldSelector, Status> {
        let mut parts = split_terms(selector);
        parts.sort_unstable();
        let mut terms = Vec::new();
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            let Some((field, equals, value)) = split_term(part) else {
                return Err(bad(format!(
                    "invalid selector: '{selector}'; can't understand '{part}'"
                )));
            };
            terms.push(Term {
                field: field.to_string(),
                equals,
                value: unescape(value)?,
            });
        }
        Ok(FieldSelector { terms })
    }

    /// Parses `selector` and converts its labels by `labels`, as the real
    /// server reads a request's `fieldSelector`.
    pub fn parse_for(selector: &str, labels: &FieldLabels) -> Result<FieldSelector, Status> {
        FieldSelector::parse(selector)?.convert(labels)
    }

    /// Each term's label turned into the field it selects, term by term in
    /// order, or the 400 of the first label `labels` does not take
    /// (`Selector.Transform` with the kind's `ConvertFieldLabel`).
    pub fn convert(self, labels: &FieldLabels) -> Result<FieldSelector, Status> {
        let terms = self
            .terms
            .into_iter()
            .map(|term| {
                Ok(Term {
                    field: labels.convert(&term.field)?.to_string(),
                    ..term
                })
            })
            .collect::<Result<Vec<_>, Status>>()?;
        Ok(FieldSelector { terms })
    }

    /// Whether a field set satisfies every term (a field the set lacks is
    /// `""`).
    pub fn matches(&self, fields: &FieldSet) -> bool {
        self.terms.iter().all(|term| {
            let actual = fields.get(&term.field).map_or("", String::as_str);
            (actual == term.value) == term.equals
        })
    }

    /// The name an `=` (or `==`) term on `metadata.name` requires, if any
    /// (`RequiresExactMatch`): the storage then reads that one key.
    pub fn exact_name(&self) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| t.equals && t.field == "metadata.name")
            .map(|t| t.value.as_str())
    }

    /// Whether the selector has no term.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// The fields every object is selected by: `metadata.name` and, for a
/// namespaced kind, `metadata.namespace` (apiserver's
/// `registry/generic.ObjectMetaFieldsSet`; a cluster-scoped object's empty
/// namespace reads as the field's absence does).
pub fn object_meta_fields(obj: &Value) -> FieldSet {
    let text = |field: &str| {
        obj.pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    FieldSet::from([
        ("metadata.name".to_string(), text("name")),
        ("metadata.namespace".to_string(), text("namespace")),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(pairs: &[(&str, &str)]) -> FieldSet {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn field_selector() {
        let obj = json!({"metadata": {"name": "a", "namespace": "ns"}});
        let fields = object_meta_fields(&obj);
        let meta = FieldLabels::generic();
        let parse = |s: &str| FieldSelector::parse_for(s, &meta);
        assert!(parse("metadata.name=a").unwrap().matches(&fields));
        assert!(!parse("metadata.namespace!=ns").unwrap().matches(&fields));
        let err = parse("spec.x=a").unwrap_err();
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message,
            "\"spec.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
    }

    #[test]
    fn terms_split_on_unescaped_commas_sorted_and_unescaped() {
        let error = |s: &str| FieldSelector::parse(s).unwrap_err().message;
        assert_eq!(
            error("metadata.name in (a,b)"),
            "invalid selector: 'metadata.name in (a,b)'; can't understand 'b)'"
        );
        assert_eq!(
            error("metadata.name"),
            "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
        );
        assert_eq!(
            error("a=b=c"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            error("a=b\\x"),
            "invalid field selector: invalid escape sequence: \\x"
        );
        let labels = FieldLabels::new(vec!["type".into(), "metadata.name".into()], false);
        let parsed = FieldSelector::parse_for("metadata.name=a,,type=x\\,y", &labels).unwrap();
        assert!(parsed.matches(&set(&[("metadata.name", "a"), ("type", "x,y")])));
        assert!(!parsed.matches(&set(&[("metadata.name", "a"), ("type", "x")])));
        assert!(FieldSelector::parse("").unwrap().is_empty());
    }

    #[test]
    fn labels_convert_to_their_fields_or_are_refused_in_the_kinds_words() {
        let pods = FieldLabels::mapped(
            &[
                ("spec.nodeName", "spec.nodeName"),
                ("spec.host", "spec.nodeName"),
            ],
            Refusal::NotSupported,
        );
        let parsed = FieldSelector::parse_for("spec.host=n", &pods).unwrap();
        assert!(parsed.matches(&set(&[("spec.nodeName", "n")])));
        assert!(!parsed.matches(&FieldSet::new()));
        let refused = |labels: &FieldLabels| {
            FieldSelector::parse_for("a=1,status.active=0", labels)
                .unwrap_err()
                .message
        };
        assert_eq!(refused(&pods), "field label not supported: a");
        let jobs = FieldLabels::mapped(&[("a", "a")], Refusal::ForKind("Job"));
        assert_eq!(
            refused(&jobs),
            "field label \"status.active\" not supported for Job"
        );
    }
}
