//! Field sets, merges and comparisons against what structured-merge-diff
//! computes.

use serde_json::json;

use super::compare::compare;
use super::fieldpath::*;
use super::fieldpath::{FieldSet, field, fields_v1, ordered, parse_fields_v1};
use super::merge::{merge, remove};
use super::set::field_set;
use super::set::*;
use super::typed::Ty;
use crate::schema::Schema;

fn users_schema() -> Schema {
    Schema::from_json(&json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "users": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "roles": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    }},
                },
                "args": {"type": "array", "items": {"type": "string"}},
            }},
        },
    }))
}

fn paths(set: &FieldSet) -> Vec<String> {
    ordered(set).iter().map(|p| display(p)).collect()
}

#[test]
fn map_and_set_list_items_are_paths_of_their_own() {
    let schema = users_schema();
    let ty = Ty::Root(Some(&schema));
    let object = json!({"metadata": {"labels": {"a": "b"}, "finalizers": ["x"]},
        "spec": {"users": [{"name": "shop", "roles": ["read"]}], "args": ["1"]}});
    let set = field_set(&object, ty);
    assert_eq!(
        paths(&set),
        [
            ".metadata.finalizers[=\"x\"]",
            ".metadata.labels.a",
            ".spec.args",
            ".spec.users[name=\"shop\"]",
            ".spec.users[name=\"shop\"].name",
            ".spec.users[name=\"shop\"].roles[=\"read\"]",
        ]
    );
    let doc = fields_v1(&set);
    assert_eq!(
        doc["f:spec"]["f:users"]["k:{\"name\":\"shop\"}"],
        json!({".": {}, "f:name": {}, "f:roles": {"v:\"read\"": {}}})
    );
    assert_eq!(parse_fields_v1(&doc), set);
}

#[test]
fn map_lists_merge_by_key_and_atomic_lists_are_replaced() {
    let schema = users_schema();
    let ty = Ty::Root(Some(&schema));
    let live = json!({"spec": {"users": [{"name": "shop", "roles": ["read"]}], "args": ["1"]}});
    let config = json!({"spec": {"users": [{"name": "report", "roles": ["write"]}, {"name": "shop", "roles": ["write"]}], "args": ["2"]}});
    let merged = merge(Some(&live), Some(&config), ty).unwrap();
    assert_eq!(
        merged,
        json!({"spec": {"users": [
            {"name": "report", "roles": ["write"]},
            {"name": "shop", "roles": ["read", "write"]},
        ], "args": ["2"]}})
    );
    let changes = compare(Some(&live), Some(&merged), ty);
    assert_eq!(
        paths(&changes.added),
        [
            ".spec.users[name=\"report\"]",
            ".spec.users[name=\"report\"].name",
            ".spec.users[name=\"report\"].roles",
            ".spec.users[name=\"report\"].roles[=\"write\"]",
            ".spec.users[name=\"shop\"].roles[=\"write\"]",
        ]
    );
    assert_eq!(paths(&changes.modified), [".spec.args"]);
    let removed = remove(
        &merged,
        &FieldSet::from([vec![
            field("spec"),
            field("users"),
            "k:{\"name\":\"shop\"}".into(),
        ]]),
        ty,
    );
    assert_eq!(
        removed["spec"]["users"],
        json!([{"name": "report", "roles": ["write"]}])
    );
}

#[test]
fn items_without_keys_or_given_twice_cannot_be_typed() {
    let schema = users_schema();
    let ty = Ty::Root(Some(&schema));
    let object = json!({"spec": {"users": [{"name": "a"}, {"name": "a"}, {"roles": []}]}});
    assert_eq!(
        check(&object, ty),
        [
            ".spec.users: duplicate entries for key [name=\"a\"]",
            ".spec.users: element 2: associative list with keys has an element that omits all key fields [\"name\"] (and doesn't have default values for any key fields)",
        ]
    );
}
