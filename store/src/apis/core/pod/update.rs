//! What `ValidatePodUpdate` checks of the fields a Pod update may change
//! before it compares the rest: the active deadline (set, or lowered,
//! never raised or unset) and the tolerations (only added; an existing
//! one may change its `tolerationSeconds` alone).

use serde_json::{Map, Value};

use crate::machinery::field::{ErrorList, FieldError, Path};

/// The errors of the active deadline's change; a refused deadline ends
/// the update's checks (`true`), as the real validation returns there.
pub(super) fn active_deadline(new: &Value, old: &Value, errors: &mut ErrorList) -> bool {
    let field = Path::new(["spec", "activeDeadlineSeconds"]);
    let deadline = |pod: &Value| {
        pod.pointer("/spec/activeDeadlineSeconds")
            .and_then(Value::as_i64)
    };
    match (deadline(new), deadline(old)) {
        (Some(new), _) if !(0..=i64::from(i32::MAX)).contains(&new) => {
            errors.push(FieldError::invalid(
                &field,
                new,
                format!("must be between 0 and {}, inclusive", i32::MAX),
            ));
            true
        }
        (Some(new), Some(old)) if old < new => {
            errors.push(FieldError::invalid(
                &field,
                new,
                "must be less than or equal to previous value",
            ));
            true
        }
        (None, Some(_)) => {
            errors.push(FieldError::invalid(
                &field,
                Value::Null,
                "must not update from a positive integer to nil value",
            ));
            false
        }
        _ => false,
    }
}

/// A toleration as the internal type holds it: each string field there
/// (empty when not sent), `tolerationSeconds` left out.
fn toleration(value: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    for key in ["key", "operator", "value", "effect"] {
        let text = value.get(key).cloned().unwrap_or_else(|| Value::from(""));
        out.insert(key.into(), text);
    }
    out
}

/// `validateOnlyAddedTolerations`: every old toleration is still there,
/// but for its `tolerationSeconds`.
pub(super) fn only_added_tolerations(new: &Value, old: &Value, errors: &mut ErrorList) {
    let list = |pod: &Value| {
        pod.pointer("/spec/tolerations")
            .and_then(Value::as_array)
            .map(|items| items.iter().map(toleration).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let (new, old) = (list(new), list(old));
    if old.iter().any(|o| !new.contains(o)) {
        errors.push(FieldError::forbidden(
            &Path::new(["spec", "tolerations"]),
            "existing toleration can not be modified except its tolerationSeconds",
        ));
    }
}
