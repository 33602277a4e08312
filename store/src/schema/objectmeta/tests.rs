//! Embedded resources, against the real server's answers (the `Widget`
//! recordings, and a CRD of embedded resources in a property, a list and a
//! map tried on it) and the cases of `objectmeta/validation_test.go`.

use serde_json::{Value, json};

use super::{CoerceOptions, coerce, validate, validate_embedded};
use crate::machinery::field::{FieldError, Path};
use crate::schema::Schema;

fn schema() -> Schema {
    Schema::from_json(
        &json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
            "embl": {"type": "array", "items": {"type": "object", "x-kubernetes-embedded-resource": true,
                                                "x-kubernetes-preserve-unknown-fields": true}},
            "embm": {"type": "object", "additionalProperties": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}}},
        }}}}),
    )
}

fn errors(object: Value) -> Vec<String> {
    let mut rendered: Vec<String> = validate_embedded(&object, &schema())
        .iter()
        .map(ToString::to_string)
        .collect();
    rendered.sort();
    rendered
}

fn with_template(template: Value) -> Value {
    json!({"apiVersion": "fid.example.org/v1", "kind": "Widget", "metadata": {"name": "w"},
           "spec": {"template": template}})
}

fn strict_coerce(object: &mut Value) -> (Option<FieldError>, Vec<String>) {
    let options = CoerceOptions {
        drop_invalid_fields: false,
        return_unknown_field_paths: true,
    };
    coerce(&Path::none(), object, &schema(), false, options)
}

#[test]
fn an_embedded_resource_needs_a_kind_and_an_api_version() {
    assert_eq!(
        errors(with_template(
            json!({"apiVersion": "v1", "metadata": {"name": "x"}})
        )),
        ["spec.template.kind: Required value"]
    );
    assert_eq!(
        errors(with_template(json!({}))),
        [
            "spec.template.apiVersion: Required value",
            "spec.template.kind: Required value"
        ]
    );
    let required = &validate_embedded(&with_template(json!({"apiVersion": "v1"})), &schema())[0];
    assert_eq!(required.kind.reason(), "FieldValueRequired");
}

#[test]
fn a_valid_embedded_resource_passes() {
    assert!(
        errors(with_template(json!({"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": "x", "labels": {"a": "b"}}, "data": {"k": "v"}})))
        .is_empty()
    );
    // The name of an embedded resource is only a path segment.
    assert!(
        errors(with_template(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad Name"}})
        ))
        .is_empty()
    );
    // And it may have none.
    assert!(
        errors(with_template(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
        ))
        .is_empty()
    );
}

#[test]
fn kind_and_api_version_are_checked_as_the_real_server_checks_them() {
    assert_eq!(
        errors(with_template(
            json!({"apiVersion": "a/b/c", "kind": "Bad_Kind"})
        )),
        [
            "spec.template.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c",
            "spec.template.kind: Invalid value: \"Bad_Kind\": may have mixed case, but should otherwise match: \
             a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic \
             character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for \
             validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ]
    );
    assert_eq!(
        errors(with_template(json!({"apiVersion": "", "kind": ""}))),
        [
            "spec.template.apiVersion: Invalid value: \"\": must not be empty",
            "spec.template.kind: Invalid value: \"\": must not be empty",
        ]
    );
    assert_eq!(
        errors(with_template(json!({"apiVersion": 5, "kind": true}))),
        [
            "spec.template.apiVersion: Invalid value: 5: must be a string",
            "spec.template.kind: Invalid value: true: must be a string",
        ]
    );
}

#[test]
fn embedded_metadata_gets_the_generic_checks_with_path_segment_names() {
    assert_eq!(
        errors(with_template(
            json!({"apiVersion": "v1", "kind": "K", "metadata": {
            "name": "a/b", "generateName": "x/", "namespace": "Bad",
            "ownerReferences": [{"controller": false}]}})
        )),
        [
            "spec.template.metadata.generateName: Invalid value: \"x/\": may not contain '/'",
            "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
            "spec.template.metadata.namespace: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower \
             case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. \
             'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            "spec.template.metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty",
            "spec.template.metadata.ownerReferences.kind: Invalid value: \"\": must not be empty",
            "spec.template.metadata.ownerReferences.name: Invalid value: \"\": must not be empty",
            "spec.template.metadata.ownerReferences.uid: Invalid value: \"\": must not be empty",
        ]
    );
    assert_eq!(
        errors(with_template(
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": ".."}})
        )),
        ["spec.template.metadata.name: Invalid value: \"..\": may not be '..'"]
    );
}

#[test]
fn metadata_that_cannot_be_read_is_invalid() {
    assert_eq!(
        errors(with_template(
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": 5}})
        )),
        [
            "spec.template.metadata: Invalid value: {\"name\":5}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"
        ]
    );
}

#[test]
fn embedded_resources_in_lists_and_maps_are_found() {
    let object = json!({"spec": {
        "embl": [{"apiVersion": "v1", "kind": "A"}, {"kind": "B"}],
        "embm": {"one": {"apiVersion": "v1"}},
    }});
    assert_eq!(
        errors(object),
        [
            "spec.embl[1].apiVersion: Required value",
            "spec.embm[one].kind: Required value",
        ]
    );
}

#[test]
fn the_resource_root_is_checked_when_asked() {
    let errors = validate(
        &Path::none(),
        &json!({"metadata": {}}),
        &Schema::default(),
        true,
    );
    let rendered: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        rendered,
        ["apiVersion: Required value", "kind: Required value"]
    );
    assert!(
        validate(
            &Path::none(),
            &json!({"metadata": {}}),
            &Schema::default(),
            false
        )
        .is_empty()
    );
}

/// The warnings the real server gave for these, after those of pruning:
/// `unknown field "spec.emb.metadata.yy"`, `unknown field
/// "spec.embl[0].metadata.zz"`, `unknown field "spec.embm[one].metadata.zz"`.
#[test]
fn coercion_drops_and_lists_unknown_metadata_fields() {
    let mut object = json!({"apiVersion": "x/v1", "kind": "Thing", "metadata": {"name": "t", "colour": "x"}, "spec": {
        "template": {"apiVersion": "v1", "kind": "C", "metadata": {"yy": 1, "labels": {}, "generation": 0,
                     "creationTimestamp": "2024-01-01T10:00:00.5+02:00"}},
        "embl": [{"apiVersion": "v1", "kind": "A", "metadata": {"name": "n", "zz": 1}, "other": {"x": 1}}],
        "embm": {"one": {"apiVersion": "v1", "kind": "B", "metadata": {"name": "n", "zz": 1}, "spec": {"x": "y"}}},
    }});
    let (error, unknown) = strict_coerce(&mut object);
    assert_eq!(error, None);
    assert_eq!(
        unknown,
        [
            "spec.embl[0].metadata.zz",
            "spec.embm[one].metadata.zz",
            "spec.template.metadata.yy"
        ]
    );
    assert_eq!(
        object["spec"],
        json!({
            "template": {"apiVersion": "v1", "kind": "C", "metadata": {"creationTimestamp": "2024-01-01T08:00:00Z"}},
            "embl": [{"apiVersion": "v1", "kind": "A", "metadata": {"name": "n"}, "other": {"x": 1}}],
            "embm": {"one": {"apiVersion": "v1", "kind": "B", "metadata": {"name": "n"}, "spec": {"x": "y"}}},
        })
    );
    // The root is not an embedded resource: its metadata is the decoder's.
    assert_eq!(object["metadata"], json!({"name": "t", "colour": "x"}));
}

/// `Thing in version "v1" cannot be handled as a Thing:
/// spec.emb.metadata: Invalid value: {"name":5}: json: cannot unmarshal
/// number into Go struct field ObjectMeta.name of type string`, and
/// `spec.emb.apiVersion: Invalid value: 5: must be a string`.
#[test]
fn coercion_fails_on_what_cannot_be_read() {
    let mut object =
        with_template(json!({"apiVersion": "v1", "kind": "C", "metadata": {"name": 5}}));
    let (error, _) = strict_coerce(&mut object);
    assert_eq!(
        error.unwrap().to_string(),
        "spec.template.metadata: Invalid value: {\"name\":5}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"
    );
    let mut object = with_template(json!({"apiVersion": 5, "kind": "C"}));
    let (error, _) = strict_coerce(&mut object);
    assert_eq!(
        error.unwrap().to_string(),
        "spec.template.apiVersion: Invalid value: 5: must be a string"
    );
}

#[test]
fn coercion_with_dropping_leaves_out_what_cannot_be_read() {
    let mut object = with_template(json!({"apiVersion": 5, "kind": "C",
                                          "metadata": {"name": "x", "labels": {"a": 1}}}));
    let options = CoerceOptions {
        drop_invalid_fields: true,
        return_unknown_field_paths: false,
    };
    let (error, unknown) = coerce(&Path::none(), &mut object, &schema(), false, options);
    assert_eq!(error, None);
    assert!(unknown.is_empty());
    assert_eq!(
        object["spec"]["template"],
        json!({"kind": "C", "metadata": {"name": "x"}})
    );
}

#[test]
fn null_metadata_becomes_empty() {
    let mut object = with_template(json!({"apiVersion": "v1", "kind": "K", "metadata": null}));
    let (error, _) = strict_coerce(&mut object);
    assert_eq!(error, None);
    assert_eq!(
        object["spec"]["template"],
        json!({"apiVersion": "v1", "kind": "K", "metadata": {}})
    );
}
