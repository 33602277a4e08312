//! Label selectors, parsed the way the real server parses them: the
//! string form (`app=web,tier in (front)`), matched against an object's
//! labels, and written back as a `metav1.LabelSelector`.

use serde_json::Value;

/// A label selector the real server would refuse, with its words (it
/// answers the request that carries it with a 400 BadRequest).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(pub String);

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
    /// `key>n`: the label is an integer above `n`.
    GreaterThan(String, String),
    /// `key<n`: the label is an integer below `n`.
    LessThan(String, String),
}

/// A parsed label selector: every requirement must hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelSelector {
    reqs: Vec<Requirement>,
}

mod parse;

/// Why `key` is not a label key, in the real words: apimachinery's
/// `IsLabelKey` (`pkg/api/validate/content/kube.go`), which checks the
/// prefix before the name, and the name's format even when it is empty
/// or too long; lengths are counted in bytes (`content/errors.go`).
fn key_error(key: &str) -> Option<String> {
    let mut errors = Vec::new();
    let name = match key.split('/').collect::<Vec<_>>()[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errors.push("prefix part must be no more than 253 bytes".to_string());
                }
                if !is_subdomain(prefix) {
                    errors.push(format!("prefix part {SUBDOMAIN}"));
                }
            }
            name
        }
        _ => {
            return Some(format!(
                "a valid label key {QUALIFIED} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ));
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 bytes".to_string());
    }
    if !is_label_like(name) {
        errors.push(format!("name part {QUALIFIED}"));
    }
    (!errors.is_empty()).then(|| errors.join("; "))
}

/// Why `value` is not a label value, in the real words: apimachinery's
/// `IsLabelValue` (`pkg/api/validate/content/kube.go`), lengths in bytes.
fn value_error(value: &str) -> Option<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 bytes".to_string());
    }
    if !value.is_empty() && !is_label_like(value) {
        errors.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_string());
    }
    (!errors.is_empty()).then(|| errors.join("; "))
}

const QUALIFIED: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_label_like(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The format of a lowercase RFC 1123 subdomain
/// (`[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`).
fn is_subdomain(s: &str) -> bool {
    s.split('.').all(|part| {
        let b = part.as_bytes();
        b.first()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && b.last()
                .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    })
}

impl LabelSelector {
    /// The label keys the selector's requirements name.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.reqs.iter().map(|req| match req {
            Requirement::Equals(k, _)
            | Requirement::NotEquals(k, _)
            | Requirement::In(k, _)
            | Requirement::NotIn(k, _)
            | Requirement::Exists(k)
            | Requirement::NotExists(k)
            | Requirement::GreaterThan(k, _)
            | Requirement::LessThan(k, _) => k.as_str(),
        })
    }

    /// The selector as a `metav1.LabelSelector` (`matchLabels` and
    /// `matchExpressions`), as webhook configurations take it.
    pub fn to_api(&self) -> Value {
        let mut labels = serde_json::Map::new();
        let mut expressions = Vec::new();
        let expression = |key: &str, operator: &str, values: &[String]| {
            let mut e = serde_json::json!({"key": key, "operator": operator});
            if !values.is_empty() {
                e["values"] = serde_json::json!(values);
            }
            e
        };
        for req in &self.reqs {
            match req {
                Requirement::Equals(k, v) if !labels.contains_key(k) => {
                    labels.insert(k.clone(), Value::String(v.clone()));
                }
                Requirement::Equals(k, v) => {
                    expressions.push(expression(k, "In", std::slice::from_ref(v)))
                }
                Requirement::NotEquals(k, v) => {
                    expressions.push(expression(k, "NotIn", std::slice::from_ref(v)))
                }
                Requirement::In(k, vs) => expressions.push(expression(k, "In", vs)),
                Requirement::NotIn(k, vs) => expressions.push(expression(k, "NotIn", vs)),
                Requirement::Exists(k) => expressions.push(expression(k, "Exists", &[])),
                Requirement::NotExists(k) => expressions.push(expression(k, "DoesNotExist", &[])),
                Requirement::GreaterThan(k, v) => {
                    expressions.push(expression(k, "Gt", std::slice::from_ref(v)))
                }
                Requirement::LessThan(k, v) => {
                    expressions.push(expression(k, "Lt", std::slice::from_ref(v)))
                }
            }
        }
        let mut out = serde_json::Map::new();
        if !labels.is_empty() {
            out.insert("matchLabels".into(), Value::Object(labels));
        }
        if !expressions.is_empty() {
            out.insert("matchExpressions".into(), Value::Array(expressions));
        }
        Value::Object(out)
    }

    /// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h,i>1,j<2`; a malformed selector
    /// is refused with the words of the real server (which answers it
    /// with a 400 BadRequest).
    pub fn parse(s: &str) -> Result<LabelSelector, SelectorError> {
        parse::parse(s)
            .map(|reqs| LabelSelector { reqs })
            .map_err(SelectorError)
    }

    /// Whether the object's labels satisfy every requirement.
    pub fn matches(&self, obj: &Value) -> bool {
        self.reqs.is_empty()
            || self.matches_labels(
                obj.get("metadata")
                    .and_then(|m| m.get("labels"))
                    .and_then(Value::as_object),
            )
    }

    /// Whether a label map (`metadata.labels`) satisfies every requirement.
    pub fn matches_labels(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        self.matches_with(|k| labels.and_then(|l| l.get(k)).and_then(Value::as_str))
    }

    /// Whether labels, looked up by `get`, satisfy every requirement.
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.reqs.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
            Requirement::GreaterThan(k, n) | Requirement::LessThan(k, n) => {
                let (Some(label), Ok(n)) =
                    (get(k).and_then(|l| l.parse::<i64>().ok()), n.parse::<i64>())
                else {
                    return false;
                };
                match r {
                    Requirement::GreaterThan(..) => label > n,
                    _ => label < n,
                }
            }
        })
    }

    /// Whether the selector has no requirement.
    pub fn is_empty(&self) -> bool {
        self.reqs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::LabelSelector;

    #[test]
    fn label_selector_operators() {
        let obj = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}});
        let cases = [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web,db)", true),
            ("app notin (web)", false),
            ("tier", true),
            ("!tier", false),
            ("!missing", true),
            ("missing notin (x)", true),
            ("app=web,tier=back", false),
            ("app in (), tier", false),
            ("", true),
        ];
        for (sel, want) in cases {
            let s = LabelSelector::parse(sel).expect(sel);
            assert_eq!(s.matches(&obj), want, "selector {sel}");
        }
    }

    #[test]
    fn bad_label_selectors_are_refused() {
        for sel in [
            "app in (",
            "a b c",
            "app within (a)",
            "version>x",
            "env=-bad-",
        ] {
            let err = LabelSelector::parse(sel).expect_err(sel);
            assert!(
                err.0.starts_with("unable to parse requirement"),
                "{sel}: {err}"
            );
        }
    }
}

#[cfg(test)]
mod comparisons {
    use serde_json::json;

    use super::LabelSelector;

    #[test]
    fn comparison_operators_compare_integers_and_errors_use_the_real_words() {
        let obj = json!({"metadata": {"labels": {"version": "3", "name": "x"}}});
        for (sel, want) in [
            ("version>2", true),
            ("version<3", false),
            ("version > 2, name", true),
            ("name>1", false),
            ("missing<9", false),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).unwrap().matches(&obj),
                want,
                "{sel}"
            );
        }
        let error = |sel: &str| LabelSelector::parse(sel).unwrap_err().0;
        assert_eq!(
            error("version>x"),
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            error("env within (a)"),
            "unable to parse requirement: found 'within', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert!(error("env=-bad-").starts_with(
            "unable to parse requirement: values[0][env]: Invalid value: \"-bad-\": a valid label must be"
        ));
    }

    #[test]
    fn a_negated_key_takes_no_value_and_lengths_are_bytes() {
        let error = |sel: &str| LabelSelector::parse(sel).unwrap_err().0;
        assert_eq!(
            error("!env=prod"),
            "found '=', expected: ',' or 'end of string'"
        );
        assert!(error("a/b/c=x").starts_with(
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key must consist of"
        ));
        assert!(
            error(&format!("env={}", "a".repeat(64))).ends_with("must be no more than 63 bytes")
        );
        assert!(error("Ex/a=b").contains(": prefix part a lowercase RFC 1123 subdomain"));
        assert!(error("ex/=b").contains(
            "name part must be non-empty; name part must consist of alphanumeric characters"
        ));
    }
}
