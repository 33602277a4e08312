//! Custom resources over HTTP: what the handlers check and add around the
//! store (deprecation warnings, the scale subresource at the CRD's paths,
//! bodies and patches of the wrong version or shape), as a real
//! kube-apiserver 1.36 answers.

use serde_json::{Value, json};

use crate::common::{self, eventually, get, raw};

/// A Gadget CRD: v1 (stored, with a scale subresource at
/// `.spec.workers`/`.status.ready`/`.status.selector`) and v1beta1
/// (deprecated).
fn gadgets() -> String {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"workers": {"type": "integer", "maximum": 9}}},
        "status": {"type": "object", "properties": {"ready": {"type": "integer"}, "selector": {"type": "string"}}},
    }}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.org"},
        "spec": {"group": "example.org", "scope": "Namespaced",
            "names": {"kind": "Gadget", "plural": "gadgets"},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": schema,
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.workers",
                     "statusReplicasPath": ".status.ready", "labelSelectorPath": ".status.selector"}}},
                {"name": "v1beta1", "served": true, "storage": false, "deprecated": true, "schema": schema},
            ]}
    })
    .to_string()
}

async fn with_gadget() -> common::TestServer {
    let t = common::start().await;
    let addr = t.server.addr();
    let (code, _, body) = raw(
        addr,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "application/json",
        &gadgets(),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    eventually("gadgets served", || async move {
        get(addr, "/apis/example.org/v1")
            .await
            .2
            .contains("gadgets")
    })
    .await;
    let gadget = r#"{"apiVersion":"example.org/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"workers":2}}"#;
    let (code, _, body) = raw(
        addr,
        "POST",
        "/apis/example.org/v1/namespaces/default/gadgets",
        "application/json",
        gadget,
    )
    .await;
    assert_eq!(code, 201, "{body}");
    t
}

#[tokio::test]
async fn a_deprecated_version_is_warned_about_on_every_request() {
    let t = with_gadget().await;
    let addr = t.server.addr();
    let warning =
        "warning: 299 - \"example.org/v1beta1 gadget is deprecated; use example.org/v1 gadget\"";
    for path in [
        "/apis/example.org/v1beta1/namespaces/default/gadgets/g",
        "/apis/example.org/v1beta1/namespaces/default/gadgets",
        "/apis/example.org/v1beta1/namespaces/default/gadgets/missing",
    ] {
        let (_, head, _) = get(addr, path).await;
        assert!(head.contains(warning), "{path}: {head}");
    }
    let (_, head, _) = get(addr, "/apis/example.org/v1/namespaces/default/gadgets/g").await;
    assert!(!head.contains("warning:"), "{head}");
}

#[tokio::test]
async fn the_scale_subresource_reads_and_writes_the_crd_s_paths() {
    let t = with_gadget().await;
    let addr = t.server.addr();
    let status = r#"{"status":{"ready":1,"selector":"app=g"}}"#;
    let (code, _, body) = raw(
        addr,
        "PATCH",
        "/apis/example.org/v1/namespaces/default/gadgets/g/status",
        "application/merge-patch+json",
        status,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let (code, _, body) = get(
        addr,
        "/apis/example.org/v1/namespaces/default/gadgets/g/scale",
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let scale: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(scale["spec"], json!({"replicas": 2}));
    assert_eq!(scale["status"], json!({"replicas": 1, "selector": "app=g"}));
    let (code, _, body) = raw(
        addr,
        "PATCH",
        "/apis/example.org/v1/namespaces/default/gadgets/g/scale",
        "application/merge-patch+json",
        r#"{"spec":{"replicas":4}}"#,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let (_, _, body) = get(addr, "/apis/example.org/v1/namespaces/default/gadgets/g").await;
    let gadget: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(gadget["spec"], json!({"workers": 4}));
}

#[tokio::test]
async fn bodies_and_patches_of_another_version_or_shape_are_bad_requests() {
    let t = with_gadget().await;
    let addr = t.server.addr();
    let message = |body: &str| serde_json::from_str::<Value>(body).unwrap()["message"].clone();
    let other =
        r#"{"apiVersion":"example.org/v1beta1","kind":"Gadget","metadata":{"name":"h"},"spec":{}}"#;
    let (code, _, body) = raw(
        addr,
        "POST",
        "/apis/example.org/v1/namespaces/default/gadgets",
        "application/json",
        other,
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(
        message(&body),
        "the API version in the data (example.org/v1beta1) does not match the expected API version (example.org/v1)"
    );
    let path = "/apis/example.org/v1/namespaces/default/gadgets/g";
    for (content_type, patch, words) in [
        (
            "application/merge-patch+json",
            r#"{"spec": {"workers": 2}"#,
            "error decoding patch: unexpected end of JSON input",
        ),
        (
            "application/merge-patch+json",
            "[1]",
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
        (
            "application/json-patch+json",
            r#"{"op": "add"}"#,
            "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
        ),
        (
            "application/merge-patch+json",
            "nope",
            "error decoding patch: invalid character 'o' in literal null (expecting 'u')",
        ),
    ] {
        let (code, _, body) = raw(addr, "PATCH", path, content_type, patch).await;
        assert_eq!(code, 400, "{patch}: {body}");
        assert_eq!(message(&body), words, "{patch}");
    }
    let apply = r#"{"kind":"Gadget","metadata":{"name":"g"},"spec":{"workers":3}}"#;
    let (code, _, body) = raw(
        addr,
        "PATCH",
        &format!("{path}?fieldManager=t"),
        "application/apply-patch+yaml",
        apply,
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(message(&body), "invalid object type: /, Kind=Gadget");
}
