//! The generic metadata checks, against the real server's answers (the
//! `crd-metadata` recordings, and objects tried on it).

use serde_json::{Value, json};

use super::*;
use crate::machinery::names::{
    generate_name, mask_trailing_dash, name_is_dns_label, name_is_dns1035_label,
    name_is_path_segment,
};

const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_KEY: &str = "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// The metadata of a namespaced custom resource, checked on create.
fn created(meta: Value) -> Vec<String> {
    let mut meta = meta;
    if meta.get("namespace").is_none() {
        meta["namespace"] = json!("ns");
    }
    rendered(validate_object_meta(&meta, true, &Path::new(["metadata"])))
}

fn rendered(errors: ErrorList) -> Vec<String> {
    let mut out: Vec<String> = errors.iter().map(ToString::to_string).collect();
    out.sort();
    out
}

#[test]
fn names_are_dns_subdomains() {
    assert_eq!(
        created(json!({"name": "Bad_Name"})),
        [format!(
            "metadata.name: Invalid value: \"Bad_Name\": {SUBDOMAIN}"
        )]
    );
    assert!(created(json!({"name": "a.b.c"})).is_empty());
    let long = "a".repeat(254);
    assert_eq!(
        created(json!({"name": long})),
        [format!(
            "metadata.name: Invalid value: \"{long}\": must be no more than 253 characters"
        )]
    );
    assert_eq!(
        created(json!({})),
        ["metadata.name: Required value: name or generateName is required"]
    );
}

#[test]
fn labels_and_annotations_as_the_real_server_checks_them() {
    assert_eq!(
        created(json!({"name": "w", "labels": {"-bad": "x"}})),
        [format!(
            "metadata.labels: Invalid value: \"-bad\": {NAME_PART}"
        )]
    );
    assert_eq!(
        created(json!({"name": "w", "labels": {"ok": "not ok"}})),
        [format!(
            "metadata.labels: Invalid value: \"not ok\": {LABEL_VALUE}"
        )]
    );
    assert_eq!(
        created(json!({"name": "w", "annotations": {"a/b/c": "x"}})),
        [format!(
            "metadata.annotations: Invalid value: \"a/b/c\": {LABEL_KEY}"
        )]
    );
    // Annotation keys may have any case.
    assert!(created(json!({"name": "w", "annotations": {"Example.COM/Key": "x"}})).is_empty());
    let causes = validate_object_meta(
        &json!({"name": "w", "namespace": "ns", "labels": {"-bad": "x"}}),
        true,
        &Path::new(["metadata"]),
    );
    assert_eq!(causes[0].kind.reason(), "FieldValueInvalid");
}

#[test]
fn lengths_are_in_characters_for_names_and_bytes_for_keys() {
    let (long_value, prefix) = ("b".repeat(64), format!("{}/x", "c".repeat(254)));
    let errors = created(json!({"name": "w", "labels": {
        long_value.clone(): long_value.clone(), prefix.clone(): "x", "/a": "b", "a/": ""}}));
    assert_eq!(
        errors,
        [
            "metadata.labels: Invalid value: \"/a\": prefix part must be non-empty".to_string(),
            "metadata.labels: Invalid value: \"a/\": name part must be non-empty".to_string(),
            format!("metadata.labels: Invalid value: \"a/\": {NAME_PART}"),
            format!(
                "metadata.labels: Invalid value: \"{long_value}\": must be no more than 63 bytes"
            ),
            format!(
                "metadata.labels: Invalid value: \"{long_value}\": name part must be no more than 63 bytes"
            ),
            format!(
                "metadata.labels: Invalid value: \"{prefix}\": prefix part must be no more than 253 bytes"
            ),
        ]
    );
}

/// `metadata.generateName: Invalid value: "Bad-": ...` and
/// `metadata.name: Invalid value: "Bad-dbf85": ...`.
#[test]
fn generate_name_is_checked_as_a_prefix() {
    let name = generate_name("Bad-");
    assert_eq!(name.len(), 9);
    assert!(name.starts_with("Bad-"));
    assert_eq!(
        created(json!({"generateName": "Bad-", "name": "Bad-dbf85"})),
        [
            format!("metadata.generateName: Invalid value: \"Bad-\": {SUBDOMAIN}"),
            format!("metadata.name: Invalid value: \"Bad-dbf85\": {SUBDOMAIN}"),
        ]
    );
    // A trailing dash is allowed in a prefix.
    assert!(created(json!({"generateName": "web-", "name": "web-x2b4z"})).is_empty());
    // Go's mask drops the character before the dash too.
    assert_eq!(mask_trailing_dash("a/b-"), "a/a");
    assert_eq!(mask_trailing_dash("a-"), "a");
    assert_eq!(mask_trailing_dash("-"), "-");
}

#[test]
fn generated_names_are_cut_to_fifty_eight_bytes() {
    let name = generate_name(&"x".repeat(70));
    assert_eq!(name.len(), 63);
    assert!(
        name[58..]
            .chars()
            .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c))
    );
}

#[test]
fn finalizers_are_qualified_names_and_not_both_orphan_and_foreground() {
    assert_eq!(
        created(json!({"name": "x", "finalizers": ["orphan", "foregroundDeletion", "a/b/c"]})),
        [
            format!("metadata.finalizers: Invalid value: \"a/b/c\": {LABEL_KEY}"),
            "metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\",\"a/b/c\"]: finalizer orphan and foregroundDeletion cannot be both set".to_string(),
        ]
    );
}

#[test]
fn the_namespace_is_required_or_forbidden() {
    let path = Path::new(["metadata"]);
    assert_eq!(
        rendered(validate_object_meta(&json!({"name": "x"}), true, &path)),
        ["metadata.namespace: Required value"]
    );
    assert_eq!(
        rendered(validate_object_meta(
            &json!({"name": "x", "namespace": "a"}),
            false,
            &path
        )),
        ["metadata.namespace: Forbidden: not allowed on this type"]
    );
    assert_eq!(
        rendered(validate_object_meta(
            &json!({"name": "x", "namespace": "a.b"}),
            true,
            &path
        )),
        ["metadata.namespace: Invalid value: \"a.b\": must not contain dots"]
    );
    assert_eq!(
        rendered(validate_object_meta(
            &json!({"name": "x", "namespace": "ns", "generation": -1}),
            true,
            &path
        )),
        ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"]
    );
}

#[test]
fn owner_references_must_be_complete_and_have_one_controller() {
    let errors = validate_object_meta(
        &json!({"name": "x", "namespace": "ns", "ownerReferences": [
            {"apiVersion": "v1", "kind": "Event", "name": "a", "uid": "1", "controller": true},
            {"apiVersion": "x/v1", "kind": "A", "name": "b", "uid": "2", "controller": true},
        ]}),
        true,
        &Path::new(["metadata"]),
    );
    let details: Vec<(String, &str)> = errors
        .iter()
        .map(|e| (e.field.to_string(), e.detail.as_str()))
        .collect();
    assert_eq!(
        details,
        [
            // Go prints the references as structs: their fields in order.
            (
                "metadata.ownerReferences".to_string(),
                "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"a\",\"uid\":\"1\",\"controller\":true}: /v1, Kind=Event is disallowed from being an owner"
            ),
            (
                "metadata.ownerReferences".to_string(),
                "[{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"a\",\"uid\":\"1\",\"controller\":true},{\"apiVersion\":\"x/v1\",\"kind\":\"A\",\"name\":\"b\",\"uid\":\"2\",\"controller\":true}]: Only one reference can have Controller set to true. Found \"true\" in references for Event/a and A/b"
            ),
        ]
    );
    assert_eq!(
        created(json!({"name": "x", "ownerReferences": [{"controller": false}]})),
        [
            "metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty",
            "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty",
            "metadata.ownerReferences.name: Invalid value: \"\": must not be empty",
            "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty",
        ]
    );
}

#[test]
fn annotations_are_at_most_256_kb() {
    let big = "v".repeat(256 * 1024);
    assert_eq!(
        created(json!({"name": "x", "annotations": {"k": big}})),
        ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    );
}

#[test]
fn managed_fields_entries_are_checked() {
    assert_eq!(
        created(json!({"name": "x", "managedFields": [
            {"operation": "Bad", "fieldsType": "X", "manager": "a\u{1}b", "subresource": "s".repeat(257)}]})),
        [
            "metadata.managedFields[0].fieldsType: Invalid value: \"X\": must be `FieldsV1`",
            "metadata.managedFields[0].manager: Invalid value: \"a\\x01b\": invalid character U+0001 (at position 1)",
            "metadata.managedFields[0].operation: Invalid value: \"Bad\": must be `Apply` or `Update`",
            "metadata.managedFields[0].subresource: Too long: may not be more than 256 bytes",
        ]
    );
}

fn stored() -> Value {
    json!({"name": "t2", "namespace": "ns", "uid": "u1", "resourceVersion": "5", "generation": 2,
           "creationTimestamp": "2026-01-01T00:00:00Z"})
}

#[test]
fn an_update_keeps_what_is_immutable() {
    let path = Path::new(["metadata"]);
    assert!(validate_object_meta_update(&stored(), &stored(), &path).is_empty());
    let mut new = stored();
    new["deletionGracePeriodSeconds"] = json!(5);
    // The real server: `metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable`.
    assert_eq!(
        rendered(validate_object_meta_update(&new, &stored(), &path)),
        ["metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable"]
    );
    let new = json!({"name": "other", "namespace": "ns2", "uid": "u2", "generation": 1});
    assert_eq!(
        rendered(validate_object_meta_update(&new, &stored(), &path)),
        [
            "metadata.creationTimestamp: Invalid value: null: field is immutable",
            "metadata.generation: Invalid value: 1: must not be decremented",
            "metadata.name: Invalid value: \"other\": field is immutable",
            "metadata.namespace: Invalid value: \"ns2\": field is immutable",
            "metadata.resourceVersion: Invalid value: \"\": must be specified for an update",
            "metadata.uid: Invalid value: \"u2\": field is immutable",
        ]
    );
}

#[test]
fn no_finalizer_may_be_added_while_deleting() {
    let mut old = stored();
    old["deletionTimestamp"] = json!("2026-01-02T00:00:00Z");
    old["finalizers"] = json!(["a/x"]);
    let mut new = old.clone();
    new["finalizers"] = json!(["a/x", "b/y", "a/z"]);
    assert_eq!(
        rendered(validate_object_meta_update(
            &new,
            &old,
            &Path::new(["metadata"])
        )),
        [
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"a/z\", \"b/y\"}"
        ]
    );
    // Removing one is fine.
    new["finalizers"] = json!([]);
    assert!(validate_object_meta_update(&new, &old, &Path::new(["metadata"])).is_empty());
}

#[test]
fn labels_are_checked_on_update_and_finalizers_are_not() {
    let mut new = stored();
    new["labels"] = json!({"ok": "not ok"});
    new["finalizers"] = json!(["a/b/c"]);
    assert_eq!(
        rendered(validate_object_meta_update(
            &new,
            &stored(),
            &Path::new(["metadata"])
        )),
        [format!(
            "metadata.labels: Invalid value: \"not ok\": {LABEL_VALUE}"
        )]
    );
}

/// The warnings of the real server, on create then on update.
#[test]
fn finalizers_added_without_a_domain_are_warned_about() {
    assert_eq!(
        finalizer_warnings(&json!({"finalizers": ["cleanup"]}), None),
        [
            "metadata.finalizers: \"cleanup\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
        ]
    );
    assert!(
        finalizer_warnings(&json!({"finalizers": ["fid.example.org/cleanup"]}), None).is_empty()
    );
    let old = json!({"finalizers": ["z.b", "cleanup", "kubernetes", "orphan", "x/y"]});
    assert_eq!(
        finalizer_warnings(&old, None),
        [
            "metadata.finalizers: \"cleanup\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers",
            "metadata.finalizers: \"z.b\": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers",
        ]
    );
    let new = json!({"finalizers": ["z.b", "cleanup", "new1", "a.c"]});
    assert_eq!(
        finalizer_warnings(&new, Some(&old)),
        [
            "metadata.finalizers: \"a.c\": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers",
            "metadata.finalizers: \"new1\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers",
        ]
    );
    assert_eq!(
        finalizer_warnings(&json!({"finalizers": ["a/b/c"]}), None),
        [format!("metadata.finalizers: \"a/b/c\": {LABEL_KEY}")]
    );
}

#[test]
fn name_functions_of_other_kinds() {
    assert_eq!(name_is_dns_label("a.b", false), ["must not contain dots"]);
    assert!(name_is_dns_label("web-", true).is_empty());
    assert_eq!(
        name_is_dns1035_label("1abc", false),
        [
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        ]
    );
    assert_eq!(
        name_is_path_segment("a%b/c", false),
        ["may not contain '/'", "may not contain '%'"]
    );
    assert_eq!(name_is_path_segment(".", false), ["may not be '.'"]);
    assert!(name_is_path_segment(".", true).is_empty());
    assert_eq!(
        validate_object_meta_with(
            &json!({"name": "Ns"}),
            false,
            name_is_dns_label,
            &Path::new(["metadata"])
        )[0]
        .to_string(),
        "metadata.name: Invalid value: \"Ns\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    );
}
