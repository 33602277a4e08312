//! Whether an update changes an object (a write that changes nothing
//! stores nothing: `GuaranteedUpdate` compares the bytes), and whether it
//! changes its spec (what moves the generation).

use serde_json::{Map, Value};

/// Whether `a` and `b` differ outside `metadata` and `status` (what
/// raises the generation).
pub(crate) fn spec_differs(a: &Value, b: &Value) -> bool {
    !equal_except(
        a,
        b,
        &["metadata", "status", "apiVersion", "kind"],
        |_, _, _| None,
    )
}

/// Whether `a` and `b` are the same object but for resourceVersion and
/// managedFields times (a write that changes nothing).
pub(crate) fn same_object(a: &Value, b: &Value) -> bool {
    equal_except(a, b, &["apiVersion", "kind"], |key, a, b| {
        (key == "metadata").then(|| {
            equal_except(a, b, &["resourceVersion"], |key, a, b| {
                (key == "managedFields").then(|| match (a.as_array(), b.as_array()) {
                    (Some(a), Some(b)) => {
                        a.len() == b.len()
                            && a.iter()
                                .zip(b)
                                .all(|(a, b)| equal_except(a, b, &["time"], |_, _, _| None))
                    }
                    _ => a == b,
                })
            })
        })
    })
}

/// Whether objects `a` and `b` have the same fields, those named in `skip`
/// left out; `field` compares a field its own way when it answers.
fn equal_except(
    a: &Value,
    b: &Value,
    skip: &[&str],
    field: impl Fn(&str, &Value, &Value) -> Option<bool>,
) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    let kept = |m: &Map<String, Value>| m.keys().filter(|k| !skip.contains(&k.as_str())).count();
    kept(a) == kept(b)
        && a.iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .all(|(k, va)| {
                b.get(k)
                    .is_some_and(|vb| field(k, va, vb).unwrap_or_else(|| va == vb))
            })
}
