//! Defaulting, against the cases of `defaulting/algorithm_test.go`,
//! `prunenulls_test.go` and what the real server stored (`crd-defaults`
//! recordings, and a CRD of nullable fields, map values, list items and
//! preserve-unknown-fields tried on it).

use serde_json::{Value, json};

use super::{default, prune_defaults, prune_nulls};
use crate::schema::{Additional, Schema};

fn defaulted(object: Value, schema: Value) -> Value {
    let mut object = object;
    default(&mut object, &Schema::from_json(&schema));
    object
}

/// What the decoder then the defaulter do to a written object.
fn written(object: Value, schema: Value) -> Value {
    let schema = Schema::from_json(&schema);
    let mut object = object;
    prune_nulls(&mut object, &schema);
    default(&mut object, &schema);
    object
}

/// The `spec` of the `Widget` schema of the recordings, as far as
/// defaults go.
fn widget() -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "string"},
        "minReplicas": {"type": "integer", "default": 1},
        "maxReplicas": {"type": "integer", "default": 3},
        "mode": {"type": "string", "default": "fast", "enum": ["fast", "safe"]},
        "settings": {"type": "object", "default": {}, "properties": {
            "level": {"type": "integer", "default": 5},
            "verbose": {"type": "boolean", "default": false},
        }},
        "ports": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"},
            "port": {"type": "integer", "default": 80},
            "protocol": {"type": "string", "default": "TCP"},
        }}},
    }}}})
}

const WIDGET_DEFAULTS: &str = r#"{"maxReplicas": 3, "minReplicas": 1, "mode": "fast", "settings": {"level": 5, "verbose": false}, "size": "small"}"#;

#[test]
fn absent_fields_take_their_defaults_and_a_default_object_its_own() {
    let object = written(json!({"spec": {"size": "small"}}), widget());
    let expected: Value = serde_json::from_str(WIDGET_DEFAULTS).unwrap();
    assert_eq!(object["spec"], expected);
}

#[test]
fn given_values_are_kept() {
    let object = written(
        json!({"spec": {"size": "small", "minReplicas": 2, "maxReplicas": 4, "mode": "safe", "settings": {"verbose": true}}}),
        widget(),
    );
    assert_eq!(
        object["spec"],
        json!({"maxReplicas": 4, "minReplicas": 2, "mode": "safe", "settings": {"level": 5, "verbose": true}, "size": "small"})
    );
}

#[test]
fn a_null_given_for_a_defaulted_field_gets_the_default() {
    let object = written(json!({"spec": {"size": "small", "mode": null}}), widget());
    let expected: Value = serde_json::from_str(WIDGET_DEFAULTS).unwrap();
    assert_eq!(object["spec"], expected);
}

#[test]
fn list_items_get_their_defaults() {
    let object = written(
        json!({"spec": {"size": "small", "ports": [{"name": "a"}, {"name": "b", "port": 8080}]}}),
        widget(),
    );
    assert_eq!(
        object["spec"]["ports"],
        json!([{"name": "a", "port": 80, "protocol": "TCP"}, {"name": "b", "port": 8080, "protocol": "TCP"}])
    );
}

/// The CRD tried on the real server, and the object it stored.
#[test]
fn nulls_map_values_list_items_and_preserved_objects_as_the_real_server_defaults_them() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}},
        "pres": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
            "d": {"type": "string", "default": "dd"},
            "nn": {"type": "object", "properties": {"e": {"type": "string", "default": "ee"}}},
        }},
        "nul": {"type": "string", "nullable": true, "default": "nd"},
        "nonnul": {"type": "string"},
        "nonnulobj": {"type": "object", "properties": {"z": {"type": "string"}}},
        "listnull": {"type": "array", "items": {"type": "string", "default": "li"}},
        "listnullnodef": {"type": "array", "items": {"type": "string"}},
        "listnullable": {"type": "array", "items": {"type": "string", "nullable": true}},
        "mapnull": {"type": "object", "additionalProperties": {"type": "string", "default": "mv"}},
        "mapnullnodef": {"type": "object", "additionalProperties": {"type": "string"}},
        "dft": {"type": "object", "default": {"q": 1}, "properties": {"q": {"type": "integer"}, "r": {"type": "string", "default": "rr"}}},
        "emb": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
            "spec": {"type": "object", "properties": {"x": {"type": "string", "default": "ex"}}}}},
    }}}});
    let object = written(
        json!({"spec": {
            "m": {"k.1": {"a": "given"}, "k2": {}},
            "pres": {"unk": {"q": 1}, "nn": {"unk2": 1}},
            "nul": null, "nonnul": null, "nonnulobj": null,
            "listnull": ["a", null], "listnullnodef": ["a", null], "listnullable": [null],
            "mapnull": {"a": null}, "mapnullnodef": {"a": null},
            "emb": {"apiVersion": "v1", "kind": "C", "metadata": {"name": "x"}, "spec": {}},
        }}),
        schema,
    );
    assert_eq!(
        object["spec"],
        json!({
            "m": {"k.1": {"a": "given"}, "k2": {"a": "x"}},
            "pres": {"d": "dd", "unk": {"q": 1}, "nn": {"unk2": 1, "e": "ee"}},
            "nul": null,
            "listnull": ["a", "li"], "listnullnodef": ["a", null], "listnullable": [null],
            "mapnull": {"a": "mv"}, "mapnullnodef": {},
            "dft": {"q": 1, "r": "rr"},
            "emb": {"apiVersion": "v1", "kind": "C", "metadata": {"name": "x"}, "spec": {"x": "ex"}},
        })
    );
}

#[test]
fn an_absent_nullable_field_takes_its_default() {
    let schema =
        json!({"properties": {"nul": {"type": "string", "nullable": true, "default": "nd"}}});
    assert_eq!(written(json!({}), schema), json!({"nul": "nd"}));
}

#[test]
fn a_null_default_is_no_default() {
    let schema =
        json!({"properties": {"a": {"type": "string", "nullable": true, "default": null}}});
    assert_eq!(defaulted(json!({}), schema), json!({}));
}

// The cases of defaulting/algorithm_test.go.

#[test]
fn scalars_take_no_default() {
    assert_eq!(defaulted(json!(null), json!({})), json!(null));
    assert_eq!(defaulted(json!(4), json!({"default": "foo"})), json!(4));
    assert_eq!(
        defaulted(json!([1, 2]), json!({"items": {"default": "foo"}})),
        json!([1, 2])
    );
}

#[test]
fn object_array() {
    let schema = json!({"items": {"properties": {
        "a": {"default": "A"}, "b": {"default": "B"}, "c": {"default": "C"}}}});
    assert_eq!(
        defaulted(json!([{"a": 1}, {"b": 1}, {"c": 1}]), schema),
        json!([{"a": 1, "b": "B", "c": "C"}, {"a": "A", "b": 1, "c": "C"}, {"a": "A", "b": "B", "c": 1}])
    );
}

#[test]
fn object_array_object() {
    let schema = json!({"properties": {
        "array": {"items": {"properties": {"a": {"default": "A"}, "b": {"default": "B"}}}},
        "object": {"properties": {"a": {"default": "N"}, "b": {"default": "O"}}},
        "additionalProperties": {"additionalProperties": {"properties": {
            "a": {"default": "alpha"}, "b": {"default": "beta"}}}},
        "foo": {"default": "bar"},
    }});
    assert_eq!(
        defaulted(
            json!({"array": [{"a": 1}, {"b": 2}], "object": {"a": 1},
                   "additionalProperties": {"x": {"a": 1}, "y": {"b": 2}}}),
            schema
        ),
        json!({"array": [{"a": 1, "b": "B"}, {"a": "A", "b": 2}], "object": {"a": 1, "b": "O"},
               "additionalProperties": {"x": {"a": 1, "b": "beta"}, "y": {"a": "alpha", "b": 2}}, "foo": "bar"})
    );
}

#[test]
fn empty_values_are_kept_and_null_is_replaced() {
    let schema = json!({"items": {"properties": {"a": {"default": "A"}}}});
    assert_eq!(
        defaulted(
            json!([{}, {"a": 1}, {"a": 0}, {"a": 0.0}, {"a": ""}, {"a": null}, {"a": []}, {"a": {}}]),
            schema
        ),
        json!([{"a": "A"}, {"a": 1}, {"a": 0}, {"a": 0.0}, {"a": ""}, {"a": "A"}, {"a": []}, {"a": {}}])
    );
}

#[test]
fn nulls_in_lists_and_maps() {
    let item = json!({"items": {"default": "A"}});
    assert_eq!(defaulted(json!([null]), item), json!(["A"]));
    let nullable_item = json!({"items": {"nullable": true, "default": "A"}});
    assert_eq!(defaulted(json!([null]), nullable_item), json!([null]));
    let nullable = json!({"properties": {"a": {"nullable": true, "default": "A"}}});
    assert_eq!(defaulted(json!({"a": null}), nullable), json!({"a": null}));
    let non_nullable = json!({"properties": {"a": {"default": "A"}}});
    assert_eq!(
        defaulted(json!({"a": null}), non_nullable),
        json!({"a": "A"})
    );
    let nullable_values = json!({"additionalProperties": {"nullable": true, "default": "A"}});
    assert_eq!(
        defaulted(json!({"a": null}), nullable_values),
        json!({"a": null})
    );
    let values = json!({"additionalProperties": {"default": "A"}});
    assert_eq!(defaulted(json!({"a": null}), values), json!({"a": "A"}));
    let unknown = json!({"additionalProperties": true});
    assert_eq!(defaulted(json!({"a": null}), unknown), json!({"a": null}));
}

// The cases of defaulting/prunenulls_test.go.

#[test]
fn non_nullable_nulls_without_defaults_are_dropped() {
    let schema = Schema::from_json(&json!({
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string", "nullable": true},
            "c": {"type": "string", "default": "C"},
            "list": {"type": "array", "items": {"type": "string"}},
            "map": {"type": "object", "additionalProperties": {"type": "string"}},
            "obj": {"type": "object", "properties": {"d": {"type": "string"}}},
        },
    }));
    let mut object = json!({"a": null, "b": null, "c": null, "unknown": null,
                            "list": [null], "map": {"k": null}, "obj": {"d": null}});
    prune_nulls(&mut object, &schema);
    assert_eq!(
        object,
        json!({"b": null, "c": null, "unknown": null, "list": [null], "map": {}, "obj": {}})
    );
}

// PruneDefaults.

#[test]
fn defaults_lose_their_unknown_fields_when_the_schema_is_read() {
    let mut schema = Schema::from_json(&json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "settings": {"type": "object", "default": {"level": 1, "bogus": 2},
                         "properties": {"level": {"type": "integer"}}},
            "ports": {"type": "array", "items": {"type": "object", "default": {"name": "a", "x": 1},
                                                 "properties": {"name": {"type": "string"}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "object", "default": {"k": "v", "y": 1},
                                                                  "properties": {"k": {"type": "string"}}}},
            "keep": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {"any": 1}},
        }},
    }}));
    assert_eq!(prune_defaults(&mut schema), Ok(true));
    let spec = &schema.properties["spec"].properties;
    assert_eq!(spec["settings"].default, Some(json!({"level": 1})));
    assert_eq!(
        spec["ports"].items.as_ref().unwrap().default,
        Some(json!({"name": "a"}))
    );
    let labels = match &spec["labels"].additional_properties {
        Some(Additional::Schema(values)) => values,
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(labels.default, Some(json!({"k": "v"})));
    assert_eq!(spec["keep"].default, Some(json!({"any": 1})));
    // Nothing left to prune.
    assert_eq!(prune_defaults(&mut schema), Ok(false));
}

#[test]
fn the_metadata_of_an_embedded_default_is_coerced() {
    let mut schema = Schema::from_json(&json!({"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "x-kubernetes-preserve-unknown-fields": true,
                     "default": {"apiVersion": "v1", "kind": "Pod",
                                 "metadata": {"name": "x", "colour": "blue", "labels": {}}}},
    }}));
    assert_eq!(prune_defaults(&mut schema), Ok(true));
    assert_eq!(
        schema.properties["template"].default,
        Some(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}))
    );
}

#[test]
fn a_default_at_the_root_must_be_an_object() {
    let mut schema = Schema::from_json(&json!({"type": "object", "default": 1}));
    assert_eq!(
        prune_defaults(&mut schema),
        Err(
            "failed to prune default value: object root default value must be of object type"
                .into()
        )
    );
}
