//! A CRD's names (`ValidateCustomResourceDefinitionNames`): plural,
//! singular, kind and list kind, short names and categories.

use serde_json::Value;

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::is_dns1035_label;
use crate::machinery::object::strings;

pub(crate) fn validate_names(names: &Value, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let get = |k: &str| names.get(k).and_then(Value::as_str).unwrap_or_default();
    for key in ["plural", "singular", "kind", "listKind"] {
        if get(key).is_empty() {
            errors.push(FieldError::required(&at.child(key), ""));
        }
    }
    for key in ["plural", "singular"] {
        let value = get(key);
        let problems = is_dns1035_label(value);
        if !value.is_empty() && !problems.is_empty() {
            errors.push(FieldError::invalid(
                &at.child(key),
                value,
                problems.join(","),
            ));
        }
    }
    for key in ["kind", "listKind"] {
        let value = get(key);
        let problems = is_dns1035_label(&value.to_lowercase());
        if !value.is_empty() && !problems.is_empty() {
            errors.push(FieldError::invalid(
                &at.child(key),
                value,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    problems.join(",")
                ),
            ));
        }
    }
    for (key, list) in [("shortNames", "shortNames"), ("categories", "categories")] {
        for (i, value) in strings(names.get(list)).iter().enumerate() {
            let problems = is_dns1035_label(value);
            if !problems.is_empty() {
                errors.push(FieldError::invalid(
                    &at.child(key).index(i),
                    value.as_str(),
                    problems.join(","),
                ));
            }
        }
    }
    if !get("kind").is_empty() && get("kind") == get("listKind") {
        errors.push(FieldError::invalid(
            &at.child("listKind"),
            get("listKind"),
            "kind and listKind may not be the same",
        ));
    }
    errors
}
