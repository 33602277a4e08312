//! CustomResourceDefinitions end to end: the kinds they serve, their
//! status, the fields v1 does not know.

use serde_json::{Value, json};

use super::{opts, store, widget_crd};
use crate::go::json::decode::go_base64_error;
use crate::meta::types::{FieldValidation, PatchType, StoreConfig, WriteOptions};
use crate::resource::info::ResourceInfo;
use crate::store::handle::Store;

#[test]
fn crd_serves_kind_with_generation_and_status_subresource() {
    let s = store();
    s.apply_object(widget_crd()).unwrap();
    let r = s
        .resource_for_plural("demo.example.com", "v1", "widgets")
        .expect("served");
    assert_eq!(r.short_names, vec!["wd"]);
    assert!(r.status_subresource);
    let w = json!({"apiVersion": "demo.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}, "status": {"ready": true}});
    let o = s.create(&r, Some("default"), w, &opts("t")).unwrap();
    assert_eq!(o["metadata"]["generation"], 1);
    assert!(o.get("status").is_none(), "status dropped on create");
    let o = s
        .patch(
            &r,
            Some("default"),
            "w",
            &PatchType::Merge,
            br#"{"metadata":{"labels":{"x":"y"}}}"#,
            &opts("t"),
        )
        .unwrap();
    assert_eq!(o["metadata"]["generation"], 1);
    let o = s
        .patch(
            &r,
            Some("default"),
            "w",
            &PatchType::Merge,
            br#"{"spec":{"size":2},"status":{"ready":true}}"#,
            &opts("t"),
        )
        .unwrap();
    assert_eq!(o["metadata"]["generation"], 2);
    assert!(o.get("status").is_none(), "main resource ignores status");
    let st = WriteOptions {
        subresource: Some("status".into()),
        ..opts("ctl")
    };
    let o = s
        .patch(
            &r,
            Some("default"),
            "w",
            &PatchType::Merge,
            br#"{"spec":{"size":9},"status":{"ready":true}}"#,
            &st,
        )
        .unwrap();
    assert_eq!(o["status"]["ready"], true);
    assert_eq!(o["spec"]["size"], 2);
    assert_eq!(o["metadata"]["generation"], 2);
    let err = s
        .patch(
            &r,
            Some("default"),
            "w",
            &PatchType::StrategicMerge,
            b"{}",
            &opts("t"),
        )
        .unwrap_err();
    assert_eq!(err.code, 415);
    // Deleting the CRD removes the kind and its objects.
    let crd = s
        .resource_for_plural("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .unwrap();
    s.delete(&crd, None, "widgets.demo.example.com", None)
        .unwrap();
    assert!(
        s.resource_for_plural("demo.example.com", "v1", "widgets")
            .is_none()
    );
}

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.org"},
        "spec": {"group": "example.org", "scope": "Namespaced",
            "names": {"kind": "Gadget", "plural": "gadgets"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}
    })
}

fn crds(store: &Store) -> ResourceInfo {
    store
        .resource_for_plural("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .unwrap()
}

#[test]
fn a_status_write_sets_the_stored_versions_it_gives() {
    let store = Store::new(StoreConfig::default());
    let res = crds(&store);
    store
        .create(&res, None, crd(), &WriteOptions::default())
        .unwrap();
    let status = WriteOptions {
        subresource: Some("status".into()),
        ..WriteOptions::default()
    };
    let name = "gadgets.example.org";
    let written = store
        .patch(
            &res,
            None,
            name,
            &PatchType::Merge,
            br#"{"status":{"storedVersions":["v0","v1"]}}"#,
            &status,
        )
        .unwrap();
    assert_eq!(written["status"]["storedVersions"], json!(["v0", "v1"]));
    // None given: v1's default, the storage version.
    let written = store
        .patch(
            &res,
            None,
            name,
            &PatchType::Merge,
            br#"{"status":{"storedVersions":[]}}"#,
            &status,
        )
        .unwrap();
    assert_eq!(written["status"]["storedVersions"], json!(["v1"]));
}

#[test]
fn fields_v1_does_not_know_are_dropped_and_reported() {
    let store = Store::new(StoreConfig::default());
    let res = crds(&store);
    let mut body = crd();
    body["spec"]["subresources"] = json!({"status": {}});
    body["spec"]["versions"][0]["validation"] = json!({});
    let strict = WriteOptions {
        field_validation: FieldValidation::Strict,
        ..WriteOptions::default()
    };
    let refused = store.create(&res, None, body.clone(), &strict).unwrap_err();
    assert_eq!(refused.code, 400);
    assert_eq!(
        refused.message,
        "CustomResourceDefinition in version \"v1\" cannot be handled as a CustomResourceDefinition: strict decoding error: unknown field \"spec.subresources\", unknown field \"spec.versions[0].validation\""
    );
    let warn = WriteOptions::default();
    let created = store.create(&res, None, body, &warn).unwrap();
    assert!(created["spec"].get("subresources").is_none());
    assert_eq!(
        warn.warnings.list(),
        [
            "unknown field \"spec.subresources\"",
            "unknown field \"spec.versions[0].validation\""
        ]
    );
}

#[test]
fn a_ca_bundle_that_is_not_base64_cannot_be_decoded() {
    assert_eq!(go_base64_error("Y2VydGlmaWNhdGU="), None);
    assert_eq!(go_base64_error("Y2Vy\ndGlm"), None);
    assert_eq!(
        go_base64_error("not base64!").as_deref(),
        Some("illegal base64 data at input byte 3")
    );
    assert_eq!(
        go_base64_error("abc").as_deref(),
        Some("illegal base64 data at input byte 0")
    );
    assert_eq!(
        go_base64_error("ab=").as_deref(),
        Some("illegal base64 data at input byte 3")
    );
    let store = Store::new(StoreConfig::default());
    let mut body = crd();
    body["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "v2", "served": true, "storage": false,
        "schema": {"openAPIV3Schema": {"type": "object"}}}));
    body["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://hook.example.org", "caBundle": "not base64!"}}});
    let refused = store
        .create(&crds(&store), None, body, &WriteOptions::default())
        .unwrap_err();
    assert_eq!(
        refused.message,
        "CustomResourceDefinition in version \"v1\" cannot be handled as a CustomResourceDefinition: illegal base64 data at input byte 3"
    );
}
