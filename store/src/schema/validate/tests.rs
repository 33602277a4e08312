//! The validator on the Widget schema of the differential corpus, with the
//! causes a real 1.36 server answered (recorded in
//! `apiserver/tests/differential/recorded`, leaving out the causes of
//! other modules: CEL, list-type duplicates), and on schemas of
//! apiextensions' own tests (`validation_test.go`, `ratcheting_test.go`).

use std::sync::LazyLock;

use serde_json::{Value, json};

use super::{validate, validate_at, validate_update, validate_update_at};
use crate::machinery::field::{ErrorList, Path};
use crate::schema::Schema;

static WIDGET: LazyLock<Schema> = LazyLock::new(|| {
    let crd: Value =
        serde_yaml_ng::from_str(include_str!("testdata/widgets.yaml")).expect("the CRD is YAML");
    Schema::from_json(&crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
});

fn widget(spec: Value) -> Value {
    json!({"apiVersion": "fid.example.org/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
}

/// The errors as the recordings list causes: field, reason, message;
/// sorted.
fn causes(errors: &ErrorList) -> Vec<String> {
    let mut causes: Vec<String> = errors
        .iter()
        .map(|e| format!("{} | {} | {}", e.field, e.kind.reason(), e.body()))
        .collect();
    causes.sort();
    causes
}

fn refused(spec: Value) -> Vec<String> {
    causes(&validate(&WIDGET, &widget(spec)))
}

fn sorted(expected: &[&str]) -> Vec<String> {
    let mut expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    expected.sort();
    expected
}

#[test]
fn values_of_the_wrong_type_are_refused_with_their_json_type() {
    assert_eq!(
        refused(json!({"size": "small", "replicas": "3"})),
        sorted(&[
            r#"spec.replicas | FieldValueTypeInvalid | Invalid value: "string": spec.replicas in body must be of type integer: "string""#
        ])
    );
    assert_eq!(
        refused(json!({"size": true})),
        sorted(&[
            r#"spec.size | FieldValueNotSupported | Unsupported value: true: supported values: "small", "medium", "large""#,
            r#"spec.size | FieldValueTypeInvalid | Invalid value: "boolean": spec.size in body must be of type string: "boolean""#,
        ])
    );
    assert_eq!(
        refused(json!([1, 2])),
        sorted(&[
            r#"spec | FieldValueTypeInvalid | Invalid value: "array": spec in body must be of type object: "array""#
        ])
    );
    assert_eq!(
        refused(json!({"size": "small", "settings": {"verbose": "yes"}})),
        sorted(&[
            r#"spec.settings.verbose | FieldValueTypeInvalid | Invalid value: "string": spec.settings.verbose in body must be of type boolean: "string""#
        ])
    );
    assert_eq!(
        refused(json!({"size": "small", "tags": [{"a": 1}]})),
        sorted(&[
            r#"spec.tags[0] | FieldValueTypeInvalid | Invalid value: "object": spec.tags[0] in body must be of type string: "object""#
        ])
    );
    assert_eq!(
        refused(json!({"size": 1, "replicas": "x", "name": false, "tags": {}})),
        sorted(&[
            r#"spec.size | FieldValueNotSupported | Unsupported value: 1: supported values: "small", "medium", "large""#,
            r#"spec.name | FieldValueTypeInvalid | Invalid value: "boolean": spec.name in body must be of type string: "boolean""#,
            r#"spec.size | FieldValueTypeInvalid | Invalid value: "integer": spec.size in body must be of type string: "integer""#,
            r#"spec.tags | FieldValueTypeInvalid | Invalid value: "object": spec.tags in body must be of type array: "object""#,
            r#"spec.replicas | FieldValueTypeInvalid | Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
        ])
    );
}

#[test]
fn a_float_is_an_integer_only_when_whole() {
    assert_eq!(
        refused(json!({"size": "small", "replicas": 1.5})),
        sorted(&[
            r#"<nil> | FieldValueInvalid | Invalid value: "": Checked value must be of type integer (default format) in spec.replicas"#,
            r#"spec.replicas | FieldValueTypeInvalid | Invalid value: "number": spec.replicas in body must be of type integer: "number""#,
        ])
    );
    assert!(refused(json!({"size": "small", "replicas": 2.0})).is_empty());
}

#[test]
fn an_int_or_string_refuses_other_types_through_its_any_of() {
    assert!(refused(json!({"size": "small", "target": 80})).is_empty());
    assert!(refused(json!({"size": "small", "target": "80%"})).is_empty());
    assert!(refused(json!({"size": "small", "limits": {"cpu": 2, "memory": "1Gi"}})).is_empty());
    assert_eq!(
        refused(json!({"size": "small", "target": 1.5})),
        sorted(&[
            r#"<nil> | FieldValueInvalid | Invalid value: "": Checked value must be of type integer (default format) in spec.target"#,
            r#"<nil> | FieldValueInvalid | Invalid value: "": "spec.target" must validate at least one schema (anyOf)"#,
            r#"spec.target | FieldValueTypeInvalid | Invalid value: "number": spec.target in body must be of type integer,string: "number""#,
            r#"spec.target | FieldValueTypeInvalid | Invalid value: "number": spec.target in body must be of type integer: "number""#,
        ])
    );
    assert_eq!(
        refused(json!({"size": "small", "target": true})),
        sorted(&[
            r#"<nil> | FieldValueInvalid | Invalid value: "": "spec.target" must validate at least one schema (anyOf)"#,
            r#"spec.target | FieldValueTypeInvalid | Invalid value: "boolean": spec.target in body must be of type integer,string: "boolean""#,
            r#"spec.target | FieldValueTypeInvalid | Invalid value: "boolean": spec.target in body must be of type integer: "boolean""#,
        ])
    );
    assert_eq!(
        refused(json!({"size": "small", "limits": {"cpu": [1]}})),
        sorted(&[
            r#"<nil> | FieldValueInvalid | Invalid value: "": "spec.limits.cpu" must validate at least one schema (anyOf)"#,
            r#"spec.limits.cpu | FieldValueTypeInvalid | Invalid value: "array": spec.limits.cpu in body must be of type integer,string: "array""#,
            r#"spec.limits.cpu | FieldValueTypeInvalid | Invalid value: "array": spec.limits.cpu in body must be of type integer: "array""#,
        ])
    );
}

#[test]
fn nulls_need_nullable() {
    assert!(refused(json!({"size": "small", "note": null})).is_empty());
    assert_eq!(
        refused(json!({"size": "small", "owner": null})),
        sorted(&[
            r#"spec.owner | FieldValueTypeInvalid | Invalid value: "null": spec.owner in body must be of type string: "null""#
        ])
    );
}

#[test]
fn numbers_are_checked_against_their_bounds() {
    let one = |spec: Value, expected: &str| assert_eq!(refused(spec), sorted(&[expected]));
    one(
        json!({"size": "small", "replicas": -1}),
        "spec.replicas | FieldValueInvalid | Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
    );
    one(
        json!({"size": "small", "replicas": 11}),
        "spec.replicas | FieldValueInvalid | Invalid value: 11: spec.replicas in body should be less than or equal to 10",
    );
    one(
        json!({"size": "small", "ratio": 5.0}),
        "spec.ratio | FieldValueInvalid | Invalid value: 5: spec.ratio in body should be less than 5",
    );
    one(
        json!({"size": "small", "weight": 0}),
        "spec.weight | FieldValueInvalid | Invalid value: 0: spec.weight in body should be greater than 0",
    );
    one(
        json!({"size": "small", "ratio": 1.3}),
        "spec.ratio | FieldValueInvalid | Invalid value: 1.3: spec.ratio in body should be a multiple of 0.5",
    );
    one(
        json!({"size": "small", "ratio": 3}),
        "spec.ratio | FieldValueInvalid | Invalid value: 0: factor MultipleOf declared for spec.ratio must be positive: 0",
    );
    one(
        json!({"size": "small", "weight": 3000000000u64}),
        r#"<nil> | FieldValueInvalid | Invalid value: "": Checked value must be of type integer with format int32 in spec.weight"#,
    );
    for fine in [
        json!({"size": "small", "replicas": 0}),
        json!({"size": "small", "replicas": 10}),
        json!({"size": "small", "ratio": 4.5}),
        json!({"size": "small", "weight": 1}),
        json!({"size": "small", "ratio": 1.5}),
    ] {
        assert!(refused(fine.clone()).is_empty(), "{fine}");
    }
}

#[test]
fn strings_are_checked_against_length_pattern_and_format() {
    let one = |spec: Value, expected: &str| assert_eq!(refused(spec), sorted(&[expected]));
    one(
        json!({"size": "small", "name": "Abc"}),
        r#"spec.name | FieldValueInvalid | Invalid value: "Abc": spec.name in body should match '^[a-z]+$'"#,
    );
    one(
        json!({"size": "small", "name": "a"}),
        r#"spec.name | FieldValueInvalid | Invalid value: "a": spec.name in body should be at least 2 chars long"#,
    );
    one(
        json!({"size": "small", "name": ""}),
        r#"spec.name | FieldValueInvalid | Invalid value: "": spec.name in body should be at least 2 chars long"#,
    );
    one(
        json!({"size": "small", "name": "abcdefghijk"}),
        "spec.name | FieldValueTooLong | Too long: may not be more than 10 bytes",
    );
    one(
        json!({"size": "small", "owner": "team-é", "name": "éééééééé"}),
        r#"spec.name | FieldValueInvalid | Invalid value: "éééééééé": spec.name in body should match '^[a-z]+$'"#,
    );
    one(
        json!({"size": "small", "email": "not-an-email"}),
        r#"spec.email | FieldValueTypeInvalid | Invalid value: "not-an-email": spec.email in body must be of type email: "not-an-email""#,
    );
    one(
        json!({"size": "small", "created": "2026-13-01"}),
        r#"spec.created | FieldValueTypeInvalid | Invalid value: "2026-13-01": spec.created in body must be of type date-time: "2026-13-01""#,
    );
    one(
        json!({"size": "small", "id": 1234}),
        r#"spec.id | FieldValueTypeInvalid | Invalid value: "int64": spec.id in body must be of type uuid: "int64""#,
    );
    one(
        json!({"size": "small", "id": "not-a-uuid"}),
        r#"spec.id | FieldValueTypeInvalid | Invalid value: "not-a-uuid": spec.id in body must be of type uuid: "not-a-uuid""#,
    );
    one(
        json!({"size": "small", "address": "256.1.1.1"}),
        r#"spec.address | FieldValueTypeInvalid | Invalid value: "256.1.1.1": spec.address in body must be of type ipv4: "256.1.1.1""#,
    );
    one(
        json!({"size": "small", "address": "::1"}),
        r#"spec.address | FieldValueTypeInvalid | Invalid value: "::1": spec.address in body must be of type ipv4: "::1""#,
    );
    one(
        json!({"size": "small", "payload": "%%%"}),
        r#"spec.payload | FieldValueTypeInvalid | Invalid value: "%%%": spec.payload in body must be of type byte: "%%%""#,
    );
    for fine in [
        json!({"size": "small", "name": "abc"}),
        json!({"size": "small", "name": "abcdefghij"}),
        json!({"size": "small", "email": "a@example.org"}),
        json!({"size": "small", "created": "2026-11-25T10:00:00Z"}),
        json!({"size": "small", "created": "2026-11-25T10:00:00.123+02:00"}),
        json!({"size": "small", "id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8"}),
        json!({"size": "small", "address": "10.0.0.1"}),
        json!({"size": "small", "payload": "aGVsbG8="}),
    ] {
        assert!(refused(fine.clone()).is_empty(), "{fine}");
    }
}

#[test]
fn lists_and_maps_are_checked_for_size_and_items() {
    let one = |spec: Value, expected: &str| assert_eq!(refused(spec), sorted(&[expected]));
    one(
        json!({"size": "small", "tags": ["a", "b", "c", "d"]}),
        "spec.tags | FieldValueTooMany | Too many: 4: must have at most 3 items",
    );
    one(
        json!({"size": "small", "tags": []}),
        "spec.tags | FieldValueInvalid | Invalid value: 0: spec.tags in body should have at least 1 items",
    );
    one(
        json!({"size": "small", "ports": [{"port": 80}]}),
        "spec.ports[0].name | FieldValueRequired | Required value",
    );
    one(
        json!({"size": "small", "labels": {"a": "1", "b": "2", "c": "3"}}),
        "spec.labels | FieldValueTooMany | Too many: 3: must have at most 2 items",
    );
    one(
        json!({"size": "small", "labels": {}}),
        "spec.labels | FieldValueInvalid | Invalid value: 0: spec.labels in body should have at least 1 properties",
    );
    one(
        json!({"size": "small", "labels": {"a": 1}}),
        r#"spec.labels.a | FieldValueTypeInvalid | Invalid value: "integer": spec.labels.a in body must be of type string: "integer""#,
    );
    one(
        json!({"size": "small", "ports": [{"name": "a", "port": "x"}, {"name": "b", "port": 2}]}),
        r#"spec.ports[0].port | FieldValueTypeInvalid | Invalid value: "string": spec.ports[0].port in body must be of type integer: "string""#,
    );
    // Duplicates are the list-type check's to refuse, not this one's.
    assert!(refused(json!({"size": "small", "tags": ["a", "b", "a"]})).is_empty());
    assert!(refused(json!({"size": "small", "labels": {"a": "x", "b": "y"}})).is_empty());
}

#[test]
fn enum_and_required_are_checked() {
    assert_eq!(
        refused(json!({"size": "huge"})),
        sorted(&[
            r#"spec.size | FieldValueNotSupported | Unsupported value: "huge": supported values: "small", "medium", "large""#
        ])
    );
    assert_eq!(
        refused(json!({"replicas": 1})),
        sorted(&["spec.size | FieldValueRequired | Required value"])
    );
    assert!(refused(json!({"size": "small"})).is_empty());
    let without_spec =
        json!({"apiVersion": "fid.example.org/v1", "kind": "Widget", "metadata": {"name": "w"}});
    assert!(validate(&WIDGET, &without_spec).is_empty());
}

#[test]
fn the_status_is_validated_under_status() {
    let status = &WIDGET.properties["status"];
    let field = Path::new(["status"]);
    let errors = |value: Value| causes(&validate_at(&field, status, &value));
    assert_eq!(
        errors(json!({"readyReplicas": "two"})),
        sorted(&[
            r#"status.readyReplicas | FieldValueTypeInvalid | Invalid value: "string": readyReplicas in body must be of type integer: "string""#
        ])
    );
    assert_eq!(
        errors(json!({"readyReplicas": -2})),
        sorted(&[
            "status.readyReplicas | FieldValueInvalid | Invalid value: -2: readyReplicas in body should be greater than or equal to 0"
        ])
    );
    assert_eq!(
        errors(json!({"phase": "Broken"})),
        sorted(&[
            r#"status.phase | FieldValueNotSupported | Unsupported value: "Broken": supported values: "Pending", "Ready""#
        ])
    );
    assert_eq!(
        errors(json!("up")),
        sorted(&[
            r#"status | FieldValueTypeInvalid | Invalid value: "string":  in body must be of type object: "string""#
        ])
    );
    let update = validate_update_at(&field, status, &json!({"phase": "Broken"}), &Value::Null);
    assert_eq!(update.len(), 1);
}

#[test]
fn updates_are_checked_where_they_change() {
    let update =
        |new: Value, old: Value| causes(&validate_update(&WIDGET, &widget(new), &widget(old)));
    assert_eq!(
        update(
            json!({"size": "small", "name": "NotOk"}),
            json!({"size": "small", "name": "ok"})
        ),
        sorted(&[
            r#"spec.name | FieldValueInvalid | Invalid value: "NotOk": spec.name in body should match '^[a-z]+$'"#
        ])
    );
    assert_eq!(
        update(json!({"size": "tiny"}), json!({"size": "large"})),
        sorted(&[
            r#"spec.size | FieldValueNotSupported | Unsupported value: "tiny": supported values: "small", "medium", "large""#
        ])
    );
    assert_eq!(
        update(
            json!({"size": "small", "replicas": 99}),
            json!({"size": "small"})
        ),
        sorted(&[
            "spec.replicas | FieldValueInvalid | Invalid value: 99: spec.replicas in body should be less than or equal to 10"
        ])
    );
}
