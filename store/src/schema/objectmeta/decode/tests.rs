//! Reading metadata as Go's ObjectMeta, against the real server's answers
//! (an embedded resource's metadata, and the root's, decoded from a
//! request).

use serde_json::{Value, json};

use super::{ObjectMeta, ObjectMetaOptions, get_object_meta};
use crate::machinery::field::Path;

fn read(metadata: Value, options: ObjectMetaOptions) -> Result<Option<ObjectMeta>, String> {
    let object = json!({"metadata": metadata});
    get_object_meta(object.as_object().unwrap(), &options)
}

fn strict() -> ObjectMetaOptions {
    ObjectMetaOptions {
        return_unknown_field_paths: true,
        ..ObjectMetaOptions::default()
    }
}

fn error(metadata: Value) -> String {
    read(metadata, ObjectMetaOptions::default()).unwrap_err()
}

#[test]
fn no_metadata_is_none() {
    let object = json!({"kind": "Widget"});
    assert_eq!(
        get_object_meta(object.as_object().unwrap(), &ObjectMetaOptions::default()),
        Ok(None)
    );
}

/// What the real server stored for an embedded resource's metadata.
#[test]
fn empty_values_go_and_pointers_keep_theirs() {
    let meta = read(
        json!({"yy": 1, "creationTimestamp": "2024-01-01T10:00:00.5+02:00", "generation": 0,
               "labels": {}, "finalizers": [], "namespace": "", "deletionGracePeriodSeconds": 0,
               "ownerReferences": [{"controller": false, "apiVersion": "v1", "kind": "K", "name": "n", "uid": "u"}],
               "managedFields": [{"fieldsV1": "str", "operation": "Apply"}]}),
        ObjectMetaOptions::default(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        meta.metadata,
        json!({
            "creationTimestamp": "2024-01-01T08:00:00Z",
            "deletionGracePeriodSeconds": 0,
            "managedFields": [{"fieldsV1": "str", "operation": "Apply"}],
            "ownerReferences": [{"apiVersion": "v1", "controller": false, "kind": "K", "name": "n", "uid": "u"}],
        })
    );
    assert!(meta.unknown_fields.is_empty());
}

#[test]
fn an_owner_reference_keeps_its_empty_strings_and_null_metadata_is_empty() {
    let meta = read(
        json!({"ownerReferences": [{"controller": true}, null]}),
        ObjectMetaOptions::default(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        meta.metadata,
        json!({"ownerReferences": [
            {"apiVersion": "", "kind": "", "name": "", "uid": "", "controller": true},
            {"apiVersion": "", "kind": "", "name": "", "uid": ""},
        ]})
    );
    let meta = read(json!(null), ObjectMetaOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(meta.metadata, json!({}));
}

/// What the real server stored for these in an embedded resource.
#[test]
fn zero_timestamps_go_and_null_map_values_are_empty_strings() {
    let meta = read(
        json!({"name": "x", "creationTimestamp": "0001-01-01T00:00:00Z", "deletionTimestamp": "0001-01-01T00:00:00Z",
               "labels": {"a": null}, "managedFields": [{"time": "0001-01-01T00:00:00Z", "operation": "Update"}]}),
        ObjectMetaOptions::default(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        meta.metadata,
        json!({"name": "x", "labels": {"a": ""}, "managedFields": [{"operation": "Update"}]})
    );
}

/// `unknown field "metadata.aaa", unknown field
/// "metadata.ownerReferences[0].foo", unknown field "metadata.zzz"`.
#[test]
fn unknown_fields_are_listed_in_the_order_of_sorted_keys() {
    let meta = read(
        json!({"name": "w1", "ownerReferences": [{"name": "x", "foo": 1}], "labels": {"a": "b"}, "zzz": 1, "aaa": 2, "Name": "x"}),
        strict(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        meta.unknown_fields,
        [
            "metadata.Name",
            "metadata.aaa",
            "metadata.ownerReferences[0].foo",
            "metadata.zzz"
        ]
    );
    assert_eq!(meta.metadata["labels"], json!({"a": "b"}));
    let nested = ObjectMetaOptions {
        parent_path: Path::new(["spec"]).key("one"),
        ..strict()
    };
    let meta = read(json!({"zz": 1}), nested).unwrap().unwrap();
    assert_eq!(meta.unknown_fields, ["spec[one].metadata.zz"]);
    // Not asked: not listed.
    let meta = read(json!({"zz": 1}), ObjectMetaOptions::default())
        .unwrap()
        .unwrap();
    assert!(meta.unknown_fields.is_empty());
}

/// The messages of the real server, word for word.
#[test]
fn type_errors_are_go_decoder_errors() {
    assert_eq!(
        error(json!({"name": 5})),
        "json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"
    );
    assert_eq!(
        error(json!("str")),
        "json: cannot unmarshal string into Go value of type v1.ObjectMeta"
    );
    assert_eq!(
        error(json!({"labels": {"a": 1}, "name": 5})),
        "json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string"
    );
    assert_eq!(
        error(json!({"ownerReferences": [{"controller": "x"}]})),
        "json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool"
    );
    assert_eq!(
        error(json!({"ownerReferences": [{"name": 5}]})),
        "json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.name of type string"
    );
    assert_eq!(
        error(json!({"generation": 1.5})),
        "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64"
    );
    assert_eq!(
        error(json!({"deletionTimestamp": 5})),
        "json: cannot unmarshal number into Go struct field ObjectMeta.deletionTimestamp of type string"
    );
    assert_eq!(
        error(json!({"creationTimestamp": "bad"})),
        "parsing time \"bad\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"bad\" as \"2006\""
    );
    assert_eq!(
        error(json!({"creationTimestamp": "2024-13-01T00:00:00Z"})),
        "parsing time \"2024-13-01T00:00:00Z\": month out of range"
    );
    assert_eq!(
        error(json!({"finalizers": "x"})),
        "json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string"
    );
    assert_eq!(
        error(json!({"ownerReferences": ["x"]})),
        "json: cannot unmarshal string into Go struct field ObjectMeta.ownerReferences of type v1.OwnerReference"
    );
    assert_eq!(
        error(json!({"uid": true})),
        "json: cannot unmarshal bool into Go struct field ObjectMeta.uid of type types.UID"
    );
}

#[test]
fn a_timestamp_error_comes_before_a_type_error_met_earlier() {
    // Go keeps decoding after a type error, and stops at a timestamp's.
    assert_eq!(
        error(json!({"annotations": 1, "creationTimestamp": "bad"})),
        "parsing time \"bad\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"bad\" as \"2006\""
    );
}

#[test]
fn dropping_malformed_fields_keeps_the_rest() {
    let options = ObjectMetaOptions {
        drop_malformed_fields: true,
        ..strict()
    };
    let meta = read(
        json!({"name": "x", "labels": {"a": 1, "b": "c"}, "generation": "two", "creationTimestamp": "bad", "colour": "blue"}),
        options.clone(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(meta.metadata, json!({"name": "x"}));
    assert_eq!(meta.unknown_fields, ["metadata.colour"]);
    assert_eq!(
        read(json!("str"), options),
        Err("invalid metadata: expected object, got string".into())
    );
}
