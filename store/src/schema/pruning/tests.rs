//! Pruning, against the cases of `pruning/algorithm_test.go` and what the
//! real server answered (`crd-pruning` recordings, and a CRD of maps, lists
//! of lists and `additionalProperties: true/false` tried on it).

use serde_json::{Value, json};

use super::prune;
use crate::schema::Schema;

fn run(object: Value, schema: Value, root: bool) -> (Value, Vec<String>) {
    let mut object = object;
    let pruned = prune(&mut object, &Schema::from_json(&schema), root);
    (object, pruned)
}

/// The part of the `Widget` schema of the recordings that these cases touch.
fn widget() -> Value {
    json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "size": {"type": "string"},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
                "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    })
}

#[test]
fn unknown_fields_are_listed_sorted_as_strict_decoding_lists_them() {
    // `strict decoding error: unknown field "extra", unknown field "spec.bogus"`
    let (object, pruned) = run(
        json!({"apiVersion": "fid.example.org/v1", "kind": "Widget", "metadata": {"name": "w"},
               "spec": {"size": "small", "bogus": 1}, "extra": true}),
        widget(),
        true,
    );
    assert_eq!(pruned, ["extra", "spec.bogus"]);
    assert_eq!(
        object,
        json!({"apiVersion": "fid.example.org/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": "small"}})
    );
}

#[test]
fn fields_of_list_items_are_named_by_index() {
    let (object, pruned) = run(
        json!({"spec": {"ports": [{"name": "a", "color": "red"}]}}),
        widget(),
        true,
    );
    assert_eq!(pruned, ["spec.ports[0].color"]);
    assert_eq!(object, json!({"spec": {"ports": [{"name": "a"}]}}));
}

#[test]
fn fields_under_preserve_unknown_fields_stay() {
    let (object, pruned) = run(
        json!({"spec": {"config": {"anything": [1, {"deep": true}]}}}),
        widget(),
        true,
    );
    assert!(pruned.is_empty());
    assert_eq!(
        object,
        json!({"spec": {"config": {"anything": [1, {"deep": true}]}}})
    );
}

#[test]
fn an_embedded_resource_keeps_its_type_and_metadata() {
    let template = json!({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "x", "labels": {"a": "b"}, "colour": "blue"}, "data": {"k": "v"}});
    let (object, pruned) = run(
        json!({"spec": {"template": template.clone()}}),
        widget(),
        true,
    );
    assert!(pruned.is_empty());
    assert_eq!(object, json!({"spec": {"template": template}}));
}

#[test]
fn the_status_is_pruned_by_its_own_schema() {
    let (object, pruned) = run(
        json!({"status": {"phase": "Ready", "mood": "good"}}),
        widget(),
        true,
    );
    assert_eq!(pruned, ["status.mood"]);
    assert_eq!(object, json!({"status": {"phase": "Ready"}}));
}

/// The CRD tried on the real server: its answer to fieldValidation=Warn
/// listed exactly these warnings, in this order.
#[test]
fn map_values_lists_of_lists_and_additional_properties_as_the_real_server_prunes_them() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}}},
        "ll": {"type": "array", "items": {"type": "array", "items": {"type": "object", "properties": {"b": {"type": "integer"}}}}},
        "both": {"type": "object", "properties": {"p": {"type": "string"}}, "additionalProperties": true},
        "apfalse": {"type": "object", "additionalProperties": false},
        "io": {"x-kubernetes-int-or-string": true},
    }}}});
    let (object, pruned) = run(
        json!({"apiVersion": "deftest.example.org/v1", "kind": "Thing", "metadata": {"name": "t1"}, "spec": {
            "m": {"k.1": {"u": 1, "a": "given"}, "k2": {"u": {"v": 1}}},
            "ll": [[{"b": 1, "c": 2}], [{"d": 3}]],
            "both": {"p": "x", "extra": {"deep": 1}, "s": "str"},
            "apfalse": {"k": {"z": 1}},
            "io": {"x": 1},
        }, "zzz": 1}),
        schema,
        true,
    );
    assert_eq!(
        pruned,
        [
            "spec.apfalse.k.z",
            "spec.both.extra.deep",
            "spec.io.x",
            "spec.ll[0][0].c",
            "spec.ll[1][0].d",
            "spec.m.k.1.u",
            "spec.m.k2.u",
            "zzz",
        ]
    );
    assert_eq!(
        object["spec"],
        json!({
            "m": {"k.1": {"a": "given"}, "k2": {}},
            "ll": [[{"b": 1}], [{}]],
            "both": {"p": "x", "extra": {}, "s": "str"},
            "apfalse": {"k": {}},
            "io": {},
        })
    );
}

#[test]
fn known_properties_beneath_preserve_unknown_fields_are_pruned_by_their_schema() {
    let schema = json!({"type": "object", "properties": {"pres": {"type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"nn": {"type": "object", "properties": {"e": {"type": "string"}}}}}}});
    let (object, pruned) = run(
        json!({"pres": {"unk": {"q": 1}, "nn": {"unk2": 1}, "arr": [{"x": 1}]}}),
        schema,
        true,
    );
    assert_eq!(pruned, ["pres.nn.unk2"]);
    assert_eq!(
        object,
        json!({"pres": {"unk": {"q": 1}, "nn": {}, "arr": [{"x": 1}]}})
    );
}

// The cases of pruning/algorithm_test.go.

#[test]
fn scalars_and_scalar_arrays_are_left_alone() {
    assert_eq!(run(json!(4), json!({}), false), (json!(4), vec![]));
    assert_eq!(
        run(json!([1, 2]), json!({"items": {}}), false),
        (json!([1, 2]), vec![])
    );
    assert_eq!(run(json!(null), json!({}), false), (json!(null), vec![]));
}

#[test]
fn object_array() {
    let (object, pruned) = run(
        json!([{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}]),
        json!({"items": {"properties": {"a": {}, "c": {}}}}),
        false,
    );
    assert_eq!(object, json!([{"a": 1}, {}, {"a": 1, "c": 3}]));
    assert_eq!(pruned, ["[1].b", "[2].b"]);
}

#[test]
fn object_array_without_an_item_schema() {
    let (object, pruned) = run(
        json!([{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}]),
        json!({}),
        false,
    );
    assert_eq!(object, json!([{}, {}, {}]));
    assert_eq!(pruned, ["[0].a", "[1].b", "[2].a", "[2].b", "[2].c"]);
}

#[test]
fn object_array_object() {
    let (object, pruned) = run(
        json!({"array": [{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}], "unspecified": {"a": 1},
               "specified": {"a": 1, "b": 2, "c": 3}}),
        json!({"properties": {
            "array": {"items": {"properties": {"a": {}, "c": {}}}},
            "specified": {"properties": {"a": {}, "c": {}}},
        }}),
        false,
    );
    assert_eq!(
        object,
        json!({"array": [{"a": 1}, {}, {"a": 1, "c": 3}], "specified": {"a": 1, "c": 3}})
    );
    assert_eq!(
        pruned,
        ["array[1].b", "array[2].b", "specified.b", "unspecified"]
    );
}

#[test]
fn nested_preserve_unknown_fields() {
    let (object, pruned) = run(
        json!({
            "unspecified": "bar", "alpha": "abc", "beta": 42.0,
            "unspecifiedObject": {"unspecified": "bar"},
            "pruning": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                        "pruning": {"unspecified": "bar"}, "apiVersion": "unknown",
                        "preserving": {"unspecified": "bar"}},
            "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                           "pruning": {"unspecified": "bar"}, "preserving": {"unspecified": "bar"},
                           "preservingUnknownType": [{"foo": true}, {"bar": true}]},
            "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
                "foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
            "preservingAdditionalPropertiesKeyPruneValues": {
                "foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
        }),
        json!({
            "type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {
                "alpha": {"type": "string"},
                "beta": {"type": "number"},
                "pruning": {"type": "object", "properties": {
                    "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "pruning": {"type": "object"},
                }},
                "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                    "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "preservingUnknownType": {"x-kubernetes-preserve-unknown-fields": true},
                    "pruning": {"type": "object"},
                }},
                "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "additionalProperties": {"type": "object", "properties": {"specified": {"type": "object"}}},
                },
                "preservingAdditionalPropertiesKeyPruneValues": {
                    "type": "object",
                    "additionalProperties": {"type": "object", "properties": {"specified": {"type": "object"}}},
                },
            },
        }),
        false,
    );
    assert_eq!(
        object,
        json!({
            "unspecified": "bar", "alpha": "abc", "beta": 42.0,
            "unspecifiedObject": {"unspecified": "bar"},
            "pruning": {"pruning": {}, "preserving": {"unspecified": "bar"}},
            "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"}, "pruning": {},
                           "preserving": {"unspecified": "bar"},
                           "preservingUnknownType": [{"foo": true}, {"bar": true}]},
            "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {"foo": {"specified": {}}},
            "preservingAdditionalPropertiesKeyPruneValues": {"foo": {"specified": {}}},
        })
    );
    assert_eq!(
        pruned,
        [
            "preserving.pruning.unspecified",
            "preservingAdditionalPropertiesKeyPruneValues.foo.specified.unspecified",
            "preservingAdditionalPropertiesKeyPruneValues.foo.unspecified",
            "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.specified.unspecified",
            "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.unspecified",
            "pruning.apiVersion",
            "pruning.pruning.unspecified",
            "pruning.unspecified",
            "pruning.unspecifiedObject",
        ]
    );
}

#[test]
fn additional_properties_with_a_schema() {
    let (object, pruned) = run(
        json!({"a": 1, "b": 1, "c": {"a": 1, "b": 2, "c": {"a": 1}}}),
        json!({"properties": {"a": {}, "c": {"additionalProperties": {"type": "integer"}}}}),
        false,
    );
    assert_eq!(object, json!({"a": 1, "c": {"a": 1, "b": 2, "c": {}}}));
    assert_eq!(pruned, ["b", "c.c.a"]);
}

#[test]
fn additional_properties_false_keeps_keys_and_prunes_their_objects() {
    let (object, pruned) = run(
        json!({"a": 1, "b": 1, "c": {"a": 1, "b": 2, "c": {"a": 1, "apiVersion": "unknown"}}}),
        json!({"properties": {"a": {}, "c": {"additionalProperties": false}}}),
        false,
    );
    assert_eq!(object, json!({"a": 1, "c": {"a": 1, "b": 2, "c": {}}}));
    assert_eq!(pruned, ["b", "c.c.a", "c.c.apiVersion"]);
}

fn embedded_instance() -> Value {
    let inner = json!({"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                       "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {"unspecified": "bar"}});
    let mut nested = inner.clone();
    nested["spec"]["embedded"] = inner.clone();
    json!({
        "apiVersion": "foo/v1", "kind": "Foo", "metadata": {"name": "instance", "unspecified": "bar"},
        "unspecified": "bar", "pruned": inner.clone(), "preserving": inner, "nested": nested,
    })
}

fn embedded_schema() -> Value {
    json!({"type": "object", "properties": {
        "pruned": {"type": "object", "x-kubernetes-embedded-resource": true,
                   "properties": {"spec": {"type": "object"}}},
        "preserving": {"type": "object", "x-kubernetes-embedded-resource": true,
                       "x-kubernetes-preserve-unknown-fields": true},
        "nested": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
            "spec": {"type": "object", "properties": {
                "embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
                             "properties": {"spec": {"type": "object"}}}}}}},
    }})
}

fn embedded_expected(root: bool) -> Value {
    let pruned = json!({"apiVersion": "foo/v1", "kind": "Foo",
                        "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {}});
    let mut nested = pruned.clone();
    nested["spec"] = json!({"embedded": pruned.clone()});
    let mut expected = json!({
        "pruned": pruned,
        "preserving": {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                       "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {"unspecified": "bar"}},
        "nested": nested,
    });
    if root {
        expected["apiVersion"] = json!("foo/v1");
        expected["kind"] = json!("Foo");
        expected["metadata"] = json!({"name": "instance", "unspecified": "bar"});
    }
    expected
}

const EMBEDDED_PRUNED: [&str; 7] = [
    "nested.spec.embedded.spec.unspecified",
    "nested.spec.embedded.unspecified",
    "nested.spec.unspecified",
    "nested.unspecified",
    "pruned.spec.unspecified",
    "pruned.unspecified",
    "unspecified",
];

#[test]
fn embedded_resources_below_a_root_that_is_not_a_resource() {
    // The root's own apiVersion, kind and metadata go, and are not listed.
    let (object, pruned) = run(embedded_instance(), embedded_schema(), false);
    assert_eq!(object, embedded_expected(false));
    assert_eq!(pruned, EMBEDDED_PRUNED);
}

#[test]
fn embedded_resources_below_the_resource_root() {
    let (object, pruned) = run(embedded_instance(), embedded_schema(), true);
    assert_eq!(object, embedded_expected(true));
    assert_eq!(pruned, EMBEDDED_PRUNED);
}
