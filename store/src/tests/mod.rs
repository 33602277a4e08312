//! The store end to end, by subject.

mod classes;
mod conversion;
mod crds;
mod custom_resources;
mod deleting;
mod deletion;
mod eviction;
mod identity;
mod lists;
mod objects;
mod patches;
mod resources;
mod sharding;
mod watches;

use serde_json::{Value, json};

use super::store;
use crate::meta::types::{StoreConfig, WriteOptions};
use crate::resource::info::ResourceInfo;
use crate::store::handle::Store;

pub(super) fn store() -> Store {
    Store::new(StoreConfig::default())
}

/// Creates the namespace `name`.
pub(super) fn namespace(s: &Store, name: &str) {
    let ns = s
        .resource_for_plural("", "v1", "namespaces")
        .expect("namespaces");
    s.create(
        &ns,
        None,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
        &opts("t"),
    )
    .expect("a namespace");
}

pub(super) fn cm_res(s: &Store) -> ResourceInfo {
    s.resource_for_kind("", "v1", "ConfigMap")
        .expect("configmaps")
}

pub(super) fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}})
}

pub(crate) fn opts(manager: &str) -> WriteOptions {
    WriteOptions {
        field_manager: Some(manager.into()),
        ..WriteOptions::default()
    }
}

pub(super) fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.demo.example.com"},
        "spec": {"group": "demo.example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    })
}
