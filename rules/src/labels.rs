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
}

/// A parsed label selector: every requirement must hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelSelector {
    reqs: Vec<Requirement>,
}

fn bad(msg: impl Into<String>) -> SelectorError {
    SelectorError(msg.into())
}

fn split_top_level(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn parse_set(rest: &str) -> Result<Vec<String>, SelectorError> {
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| {
            bad("unable to parse requirement: found '', expected: ',', ')' or identifier")
        })?;
    let vals: Vec<String> = inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if vals.is_empty() {
        return Err(bad(
            "unable to parse requirement: found '', expected: ',', ')' or identifier",
        ));
    }
    Ok(vals)
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
            | Requirement::NotExists(k) => k.as_str(),
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

    /// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`; a malformed selector
    /// is refused with the words of the real server (which answers it
    /// with a 400 BadRequest).
    pub fn parse(s: &str) -> Result<LabelSelector, SelectorError> {
        let mut reqs = Vec::new();
        if s.trim().is_empty() {
            return Ok(LabelSelector { reqs });
        }
        for part in split_top_level(s) {
            let p = part.trim();
            if p.is_empty() {
                return Err(bad(
                    "unable to parse requirement: found '', expected: identifier",
                ));
            }
            let req = if let Some(k) = p.strip_prefix('!') {
                Requirement::NotExists(k.trim().to_string())
            } else if let Some((k, v)) = p.split_once("!=") {
                Requirement::NotEquals(k.trim().to_string(), v.trim().to_string())
            } else if let Some((k, v)) = p.split_once("==") {
                Requirement::Equals(k.trim().to_string(), v.trim().to_string())
            } else if let Some((k, v)) = p.split_once('=') {
                Requirement::Equals(k.trim().to_string(), v.trim().to_string())
            } else if let Some(idx) = p.find(" notin ") {
                Requirement::NotIn(p[..idx].trim().to_string(), parse_set(&p[idx + 7..])?)
            } else if let Some(idx) = p.find(" in ") {
                Requirement::In(p[..idx].trim().to_string(), parse_set(&p[idx + 4..])?)
            } else if p.contains(['(', ')', ' ', '<', '>']) {
                return Err(bad(format!(
                    "unable to parse requirement: <nil>: Invalid value: \"{p}\": invalid label selector"
                )));
            } else {
                Requirement::Exists(p.to_string())
            };
            let key = match &req {
                Requirement::Equals(k, _)
                | Requirement::NotEquals(k, _)
                | Requirement::In(k, _)
                | Requirement::NotIn(k, _)
                | Requirement::Exists(k)
                | Requirement::NotExists(k) => k,
            };
            if !valid_key(key) {
                return Err(bad(format!(
                    "unable to parse requirement: <nil>: Invalid value: \"{key}\": name part must consist of alphanumeric characters, '-', '_' or '.'"
                )));
            }
            reqs.push(req);
        }
        Ok(LabelSelector { reqs })
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
            ("", true),
        ];
        for (sel, want) in cases {
            let s = LabelSelector::parse(sel).expect(sel);
            assert_eq!(s.matches(&obj), want, "selector {sel}");
        }
    }

    #[test]
    fn bad_label_selectors_are_refused() {
        for sel in ["app in (", "a b c", "app in ()"] {
            let err = LabelSelector::parse(sel).expect_err(sel);
            assert!(
                err.0.starts_with("unable to parse requirement"),
                "{sel}: {err}"
            );
        }
    }
}
