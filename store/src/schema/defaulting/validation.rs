//! The checks of a schema's `default:` values
//! (`schema/defaulting/validation.go`): each default, pruned and defaulted,
//! validates against its schema and its rules.

use serde_json::Value;

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::schema::cel::compile;
use crate::schema::objectmeta::validate;
use crate::schema::props::Schema;
use crate::schema::pruning::prune;
use crate::schema::structural::schema_has;
use crate::schema::validate::validate_at;

/// `ValidateDefaults`: every `default:` is pruned (no field its schema
/// does not know) and valid against its schema.
pub(crate) fn validate_defaults(
    s: &Schema,
    at: &Path,
    resource_root: bool,
    inside_meta: bool,
) -> ErrorList {
    let mut errors = ErrorList::new();
    // The root of a resource is checked as an embedded resource is
    // (`ValidateDefaults` marks it so): a default there needs apiVersion
    // and kind.
    let embedded = s.embedded_resource || resource_root;
    let inside_meta = inside_meta && !s.embedded_resource;
    if let Some(default) = &s.default
        && !inside_meta
    {
        let dat = at.child("default");
        let mut pruned = default.clone();
        prune(&mut pruned, s, embedded);
        if &pruned != default {
            errors.push(FieldError::invalid(
                &dat,
                default.clone(),
                "must not have unknown fields",
            ));
        }
        let meta = if embedded {
            validate(&dat, default, s, true)
        } else {
            ErrorList::new()
        };
        if !meta.is_empty() {
            errors.extend(meta);
        } else {
            let invalid = validate_at(&dat, s, default);
            if invalid.is_empty() {
                errors.extend(default_rule_errors(s, &dat, default));
            }
            errors.extend(invalid);
        }
    }
    if let Some(items) = &s.items {
        errors.extend(validate_defaults(
            items,
            &at.child("items"),
            false,
            inside_meta,
        ));
    }
    for (name, property) in &s.properties {
        let meta = embedded && ["metadata", "apiVersion", "kind"].contains(&name.as_str());
        errors.extend(validate_defaults(
            property,
            &at.child("properties").key(name),
            false,
            inside_meta || meta,
        ));
    }
    errors
}

/// The errors of the CEL rules at and beneath `s` on its `default:`
/// value `default` (at `dat`), as the real server runs them on a default
/// that is otherwise valid; none when the rules do not compile (their own
/// errors say why).
fn default_rule_errors(s: &Schema, dat: &Path, default: &Value) -> ErrorList {
    if !schema_has(s, &|n: &Schema| !n.validations.is_empty()) {
        return ErrorList::new();
    }
    let Ok(rules) = compile(s, dat) else {
        return ErrorList::new();
    };
    rules
        .validate(default, None)
        .into_iter()
        .map(|mut e| {
            e.field = dat.join(&e.field);
            e
        })
        .collect()
}
