//! Custom resources end to end: their CRD's schemas on every write and
//! read, versions, scale subresource, metadata errors.

use serde_json::json;

use super::*;
use crate::meta::types::PatchType;
use crate::resource::custom::CustomSchemas;
use crate::{Store, StoreConfig};

/// A Gadget CRD: `v1` stored (spec.size defaults to 1, a scale
/// subresource), `v2` served, `v1beta1` and `v1alpha1` deprecated.
fn gadgets() -> Value {
    let schema = |with_default: bool| {
        let mut size = json!({"type": "integer"});
        if with_default {
            size["default"] = json!(1);
        }
        json!({"openAPIV3Schema": {"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"size": size, "replicas": {"type": "integer"}}},
            "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}}},
        }}})
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.org"},
        "spec": {"group": "example.org", "scope": "Namespaced",
            "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget"},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": schema(true),
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                     "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}}},
                {"name": "v2", "served": true, "storage": false, "schema": schema(false)},
                {"name": "v1beta1", "served": true, "storage": false, "deprecated": true, "schema": schema(false)},
                {"name": "v1alpha1", "served": true, "storage": false, "deprecated": true,
                 "deprecationWarning": "v1alpha1 is going away", "schema": schema(false)},
            ]}
    })
}

fn store() -> (Store, impl Fn(&str) -> ResourceInfo) {
    let store = Store::new(StoreConfig::default());
    store.apply_object(gadgets()).unwrap();
    let lookup = store.clone();
    (store, move |version: &str| {
        lookup
            .resource_for_plural("example.org", version, "gadgets")
            .unwrap()
    })
}

#[test]
fn deprecated_versions_warn_as_the_crd_says_or_name_a_better_version() {
    let schemas = CustomSchemas::of_crd(&gadgets());
    assert_eq!(schemas.deprecation_warning("v1"), None);
    assert_eq!(schemas.deprecation_warning("v2"), None);
    // The served, not deprecated version of highest priority.
    assert_eq!(
        schemas.deprecation_warning("v1beta1"),
        Some("example.org/v1beta1 Gadget is deprecated; use example.org/v2 Gadget")
    );
    assert_eq!(
        schemas.deprecation_warning("v1alpha1"),
        Some("v1alpha1 is going away")
    );
}

#[test]
fn an_object_written_in_another_version_reads_back_with_the_storage_defaults() {
    let (store, res) = store();
    let gadget = json!({"apiVersion": "example.org/v2", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {}});
    let created = store
        .create(
            &res("v2"),
            Some("default"),
            gadget,
            &WriteOptions::default(),
        )
        .unwrap();
    assert_eq!(created["spec"], json!({"size": 1}));
    let read = store.get(&res("v1"), Some("default"), "g").unwrap();
    assert_eq!(read["spec"], json!({"size": 1}));
}

#[test]
fn the_scale_paths_are_checked_on_every_write() {
    let (store, res) = store();
    let gadget = json!({"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"replicas": -2}});
    let refused = store
        .create(
            &res("v1"),
            Some("default"),
            gadget,
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(
        refused.message,
        "Gadget.example.org \"g\" is invalid: .spec.replicas: Invalid value: -2: should be a non-negative integer"
    );
    let gadget = json!({"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"replicas": 1}});
    store
        .create(
            &res("v1"),
            Some("default"),
            gadget,
            &WriteOptions::default(),
        )
        .unwrap();
    let status = WriteOptions {
        subresource: Some("status".into()),
        ..WriteOptions::default()
    };
    let refused = store
        .patch(
            &res("v1"),
            Some("default"),
            "g",
            &PatchType::Merge,
            br#"{"status":{"replicas":3000000000,"selector":"a=b"}}"#,
            &status,
        )
        .unwrap_err();
    assert_eq!(
        refused.message,
        "Gadget.example.org \"g\" is invalid: .status.replicas: Invalid value: 3000000000: should be less than or equal to 2147483647"
    );
}

#[test]
fn a_metadata_error_on_update_is_listed_as_often_as_the_real_server_checks_it() {
    let (store, res) = store();
    let gadget = json!({"apiVersion": "example.org/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {}});
    store
        .create(
            &res("v1"),
            Some("default"),
            gadget,
            &WriteOptions::default(),
        )
        .unwrap();
    let refused = store
        .patch(
            &res("v1"),
            Some("default"),
            "g",
            &PatchType::Merge,
            br#"{"metadata":{"labels":{"a/b/c":"x"}}}"#,
            &WriteOptions::default(),
        )
        .unwrap_err();
    let causes = refused
        .details
        .as_ref()
        .and_then(|d| d["causes"].as_array())
        .map_or(0, Vec::len);
    assert_eq!(causes, 3, "{refused:?}");
    // The message says it once.
    assert_eq!(
        refused.message.matches("a/b/c").count(),
        1,
        "{}",
        refused.message
    );
}
