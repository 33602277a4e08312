//! The structural schema's checks (apiextensions' `pkg/apiserver/schema`:
//! `validation.go` `ValidateStructural`, and `complete.go`): the invariants
//! of a structural schema, the value validations that may stand under
//! `allOf`, `anyOf`, `oneOf` and `not`, and that those name no field the
//! structure does not specify.

use std::collections::BTreeSet;

use serde_json::json;

use super::props::{Additional, Schema};
use crate::go::regexp::compile;
use crate::machinery::field::{ErrorList, FieldError, Path};

/// Why `NewStructural` cannot read a schema: a keyword it does not
/// support, or `items` as a list.
pub(crate) fn structural_init_error(schema: &Schema) -> Option<String> {
    let mut why = None;
    if schema_has(schema, &|s: &Schema| {
        s.items_list.is_some() || s.forbidden.iter().any(|k| k != "externalDocs")
    }) {
        why = Some(first_unsupported(schema));
    }
    why
}

fn first_unsupported(s: &Schema) -> String {
    for keyword in [
        "id",
        "$schema",
        "$ref",
        "patternProperties",
        "dependencies",
        "additionalItems",
        "definitions",
    ] {
        if s.forbidden.iter().any(|k| k == keyword) {
            let name = if keyword == "$schema" {
                "schema"
            } else {
                keyword
            };
            return format!("OpenAPIV3Schema '{name}' is not supported");
        }
    }
    if s.items_list.is_some() {
        return "OpenAPIV3Schema 'items' must be a schema, but is an array".into();
    }
    let mut children: Vec<&Schema> = s
        .properties
        .values()
        .chain(s.items.as_deref())
        .chain(s.all_of.iter())
        .chain(s.any_of.iter())
        .chain(s.one_of.iter())
        .chain(s.not.as_deref())
        .collect();
    if let Some(Additional::Schema(additional)) = &s.additional_properties {
        children.push(additional);
    }
    children
        .into_iter()
        .find(|c| {
            schema_has(c, &|s: &Schema| {
                s.items_list.is_some() || s.forbidden.iter().any(|k| k != "externalDocs")
            })
        })
        .map(first_unsupported)
        .unwrap_or_default()
}

pub(crate) fn type_error(at: &Path, kind: &str, words: &str) -> FieldError {
    if kind.is_empty() {
        FieldError::required(&at.child("type"), words)
    } else {
        FieldError::invalid(&at.child("type"), kind, words)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Level {
    Root,
    Item,
    Field,
}

/// `ValidateStructural`: the invariants of a structural schema, and that
/// every value validation (`allOf`, `anyOf`, `oneOf`, `not`) speaks only
/// of fields the schema itselfpub(crate)  declares.
pub(crate) fn validate_structural(schema: &Schema, at: &Path) -> ErrorList {
    let mut errors = invariants(schema, Level::Root, at);
    errors.extend(completeness(schema, schema, at, at));
    errors
}

fn int_or_string_any_of(list: &[Schema]) -> bool {
    let only = |t: &str| Schema {
        type_: Some(t.into()),
        ..Schema::default()
    };
    list.len() == 2 && list[0] == only("integer") && list[1] == only("string")
}

fn invariants(s: &Schema, level: Level, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let kind = s.type_.as_deref().unwrap_or_default();
    if kind == "array" && s.items.is_none() {
        errors.push(FieldError::required(
            &at.child("items"),
            "must be specified",
        ));
    }
    if let Some(items) = &s.items {
        errors.extend(invariants(items, Level::Item, &at.child("items")));
    }
    for (name, property) in &s.properties {
        errors.extend(invariants(
            property,
            Level::Field,
            &at.child("properties").key(name),
        ));
    }
    if let Some(additional) = &s.additional_properties {
        if level == Level::Root {
            errors.push(FieldError::forbidden(
                &at.child("additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let Additional::Schema(sub) = additional {
            errors.extend(invariants(
                sub,
                Level::Field,
                &at.child("additionalProperties"),
            ));
        }
    }
    let preserve = s.preserves_unknown_fields();
    if s.int_or_string && preserve {
        errors.push(FieldError::invalid(
            &at.child("x-kubernetes-preserve-unknown-fields"),
            json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if s.int_or_string && s.embedded_resource {
        errors.push(FieldError::invalid(
            &at.child("x-kubernetes-embedded-resource"),
            json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    let skip_any_of = int_or_string_any_of(&s.any_of);
    let skip_first_all_of = s
        .all_of
        .first()
        .is_some_and(|first| int_or_string_any_of(&first.any_of));
    errors.extend(value_validation(s, skip_any_of, skip_first_all_of, at));

    let check_metadata = level == Level::Root || s.embedded_resource;
    if s.embedded_resource && kind != "object" {
        errors.push(type_error(
            at,
            kind,
            "must be object if x-kubernetes-embedded-resource is true",
        ));
    } else if kind.is_empty() && !s.int_or_string && !preserve {
        let words = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errors.push(FieldError::required(&at.child("type"), words));
    }
    if s.embedded_resource && s.additional_properties.is_some() {
        errors.push(FieldError::forbidden(
            &at.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !kind.is_empty() && kind != "object" {
        errors.push(FieldError::invalid(
            &at.child("type"),
            kind,
            "must be object at the root",
        ));
    }
    if check_metadata {
        for key in ["kind", "apiVersion"] {
            if let Some(property) = s.properties.get(key) {
                let t = property.type_.as_deref().unwrap_or_default();
                if t != "string" {
                    errors.push(FieldError::invalid(
                        &at.child("properties").key(key).child("type"),
                        t,
                        "must be string",
                    ));
                }
            }
        }
    }
    if let Some(metadata) = s.properties.get("metadata") {
        let mat = at.child("properties").key("metadata");
        let t = metadata.type_.as_deref().unwrap_or_default();
        if check_metadata && t != "object" {
            errors.push(FieldError::invalid(&mat.child("type"), t, "must be object"));
        }
        if level == Level::Root {
            let mut rest = metadata.clone();
            let names: BTreeSet<&str> = rest.properties.keys().map(String::as_str).collect();
            if !names.is_empty() && names.iter().all(|n| *n == "name" || *n == "generateName") {
                rest.properties.clear();
            }
            rest.type_ = None;
            rest.default = None;
            // What the structural form does not keep.
            rest.example = None;
            rest.format = None;
            rest.forbidden.clear();
            rest.malformed.clear();
            if rest != Schema::default() {
                errors.push(FieldError::forbidden(
                    &mat,
                    "must not specify anything other than name and generateName, but metadata is implicitly specified",
                ));
            }
        }
    }
    if s.embedded_resource && !preserve && s.properties.is_empty() {
        errors.push(FieldError::required(
            &at.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
    errors
}

/// `validateValueValidation`: the junctors of a node, and its pattern.
fn value_validation(
    s: &Schema,
    skip_any_of: bool,
    skip_first_all_of: bool,
    at: &Path,
) -> ErrorList {
    let mut errors = ErrorList::new();
    if !skip_any_of {
        for (i, sub) in s.any_of.iter().enumerate() {
            errors.extend(nested(sub, false, &at.child("anyOf").index(i)));
        }
    }
    for (i, sub) in s.all_of.iter().enumerate() {
        errors.extend(nested(
            sub,
            skip_first_all_of && i == 0,
            &at.child("allOf").index(i),
        ));
    }
    for (i, sub) in s.one_of.iter().enumerate() {
        errors.extend(nested(sub, false, &at.child("oneOf").index(i)));
    }
    if let Some(not) = &s.not {
        errors.extend(nested(not, false, &at.child("not")));
    }
    if let Some(pattern) = s.pattern.as_deref()
        && !pattern.is_empty()
        && let Err(why) = compile(pattern).map(|_| ())
    {
        errors.push(FieldError::invalid(
            &at.child("pattern"),
            pattern,
            format!("must be a valid regular expression, but isn't: {why}"),
        ));
    }
    errors
}

/// `validateNestedValueValidation`: a schema inside a junctor may only
/// constrain values, not say what they are.
fn nested(s: &Schema, skip_any_of: bool, at: &Path) -> ErrorList {
    let mut errors = value_validation(s, skip_any_of, false, at);
    if let Some(items) = &s.items {
        errors.extend(nested(items, false, &at.child("items")));
    }
    for (name, property) in &s.properties {
        errors.extend(nested(property, false, &at.child("properties").key(name)));
    }
    let forbid = |errors: &mut ErrorList, set: bool, key: &str, words: &str| {
        if set {
            errors.push(FieldError::forbidden(&at.child(key), words));
        }
    };
    forbid(
        &mut errors,
        s.type_.as_deref().is_some_and(|t| !t.is_empty()),
        "type",
        "must be empty to be structural",
    );
    forbid(
        &mut errors,
        s.additional_properties.is_some(),
        "additionalProperties",
        "must be undefined to be structural",
    );
    forbid(
        &mut errors,
        s.default.is_some(),
        "default",
        "must be undefined to be structural",
    );
    forbid(
        &mut errors,
        s.title.as_deref().is_some_and(|t| !t.is_empty()),
        "title",
        "must be empty to be structural",
    );
    forbid(
        &mut errors,
        s.description.as_deref().is_some_and(|t| !t.is_empty()),
        "description",
        "must be empty to be structural",
    );
    forbid(
        &mut errors,
        s.nullable,
        "nullable",
        "must be false to be structural",
    );
    forbid(
        &mut errors,
        s.preserves_unknown_fields(),
        "x-kubernetes-preserve-unknown-fields",
        "must be false to be structural",
    );
    forbid(
        &mut errors,
        s.embedded_resource,
        "x-kubernetes-embedded-resource",
        "must be false to be structural",
    );
    forbid(
        &mut errors,
        s.int_or_string,
        "x-kubernetes-int-or-string",
        "must be false to be structural",
    );
    forbid(
        &mut errors,
        !s.list_map_keys.is_empty(),
        "x-kubernetes-list-map-keys",
        "must be empty to be structural",
    );
    forbid(
        &mut errors,
        s.list_type.is_some(),
        "x-kubernetes-list-type",
        "must be undefined to be structural",
    );
    forbid(
        &mut errors,
        s.map_type.is_some(),
        "x-kubernetes-map-type",
        "must be undefined to be structural",
    );
    forbid(
        &mut errors,
        !s.validations.is_empty(),
        "x-kubernetes-validations",
        "must be empty to be structural",
    );
    if s.properties.contains_key("metadata") {
        errors.push(FieldError::forbidden(
            &at.child("properties").key("metadata"),
            "must not be specified in a nested context",
        ));
    }
    errors
}

/// `validateStructuralCompleteness`: the root's junctors name only
/// properties and items the root declares.
fn completeness(v: &Schema, s: &Schema, s_at: &Path, v_at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(not) = &v.not {
        errors.extend(nested_completeness(not, Some(s), s_at, &v_at.child("not")));
    }
    for (key, list) in [
        ("allOf", &v.all_of),
        ("anyOf", &v.any_of),
        ("oneOf", &v.one_of),
    ] {
        for (i, sub) in list.iter().enumerate() {
            errors.extend(nested_completeness(
                sub,
                Some(s),
                s_at,
                &v_at.child(key).index(i),
            ));
        }
    }
    errors
}

fn nested_completeness(v: &Schema, s: Option<&Schema>, s_at: &Path, v_at: &Path) -> ErrorList {
    let Some(s) = s else {
        return vec![FieldError::required(
            s_at,
            format!("because it is defined in {v_at}"),
        )];
    };
    let mut errors = completeness(v, s, s_at, v_at);
    if let Some(items) = &v.items {
        errors.extend(nested_completeness(
            items,
            s.items.as_deref(),
            &s_at.child("items"),
            &v_at.child("items"),
        ));
    }
    for (name, property) in &v.properties {
        match s.properties.get(name) {
            Some(declared) => errors.extend(nested_completeness(
                property,
                Some(declared),
                &s_at.child("properties").key(name),
                &v_at.child("properties").key(name),
            )),
            None => errors.push(FieldError::required(
                &s_at.child("properties").key(name),
                format!(
                    "because it is defined in {}",
                    v_at.child("properties").key(name)
                ),
            )),
        }
    }
    errors
}

/// Whether `schema` or a schema beneath it satisfies `test`.
pub(crate) fn schema_has(schema: &Schema, test: &dyn Fn(&Schema) -> bool) -> bool {
    if test(schema) {
        return true;
    }
    schema.children().into_iter().any(|s| schema_has(s, test))
}
