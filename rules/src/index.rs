//! What a cache index keys an object by: the contract's `index-key`, read
//! the same by the host's informer caches and the embedded Kubernetes.

use serde_json::Value;

/// What a cache index keys an object by (the contract's `index-key`).
#[derive(Clone, Copy, Debug)]
pub enum IndexKeyRef<'a> {
    /// The value at a dotted field path (`spec.nodeName`); each scalar
    /// item of a list is a key.
    Field(&'a str),
    /// The value of the label with this key.
    Label(&'a str),
}

/// The keys `object` is indexed under: the value at the field path (each
/// scalar item of a list), or the label's value; none when it has neither.
pub fn index_keys(object: &Value, key: IndexKeyRef<'_>) -> Vec<String> {
    fn scalar(value: &Value) -> Option<String> {
        match value {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
    match key {
        IndexKeyRef::Label(label) => object
            .pointer("/metadata/labels")
            .and_then(|labels| labels.get(label))
            .and_then(Value::as_str)
            .map(|v| vec![v.to_string()])
            .unwrap_or_default(),
        IndexKeyRef::Field(path) => {
            let mut at = object;
            for part in path.trim_start_matches('.').split('.') {
                match at.get(part) {
                    Some(next) => at = next,
                    None => return Vec::new(),
                }
            }
            match at {
                Value::Array(items) => items.iter().filter_map(scalar).collect(),
                other => scalar(other).into_iter().collect(),
            }
        }
    }
}

/// Whether an index field path is well formed: dotted names, none empty.
pub fn valid_field_path(path: &str) -> bool {
    let path = path.trim_start_matches('.');
    !path.is_empty() && path.split('.').all(|p| !p.is_empty())
}
