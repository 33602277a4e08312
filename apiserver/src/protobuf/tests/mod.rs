//! The recorded and hand-encoded bodies of the first decoder, the failures,
//! and the helpers that build objects as Go's protobuf writes them.

mod kubectl;
mod types;

use std::collections::BTreeMap;

use k8s_rs_pb::api::core::v1 as core;
use k8s_rs_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_rs_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use protobuf::{Message, MessageField};
use serde_json::{Value, json};

use super::{kinds, names, to_json};

/// A length-delimited field.
fn bytes(number: u64, data: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3 | 2) as u8];
    let mut len = data.len();
    loop {
        let byte = (len & 0x7f) as u8;
        len >>= 7;
        if len == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    }
    out.extend_from_slice(data);
    out
}

fn entry(key: &str, value: &[u8]) -> Vec<u8> {
    [bytes(1, key.as_bytes()), bytes(2, value)].concat()
}

fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let type_meta = [bytes(1, api_version.as_bytes()), bytes(2, kind.as_bytes())].concat();
    [b"k8s\0".to_vec(), bytes(1, &type_meta), bytes(2, raw)].concat()
}

/// `object` in the envelope kubectl sends it in, with `content_encoding`.
fn wrap_encoded(
    api_version: &str,
    kind: &str,
    object: &impl Message,
    content_encoding: &str,
) -> Vec<u8> {
    let unknown = Unknown {
        typeMeta: MessageField::some(TypeMeta {
            apiVersion: Some(api_version.into()),
            kind: Some(kind.into()),
            ..Default::default()
        }),
        raw: Some(object.write_to_bytes().unwrap()),
        contentEncoding: Some(content_encoding.into()),
        contentType: Some(String::new()),
        ..Default::default()
    };
    [b"k8s\0".to_vec(), unknown.write_to_bytes().unwrap()].concat()
}

/// `object` as kubectl sends it, decoded.
fn decode(api_version: &str, kind: &str, object: &impl Message) -> Value {
    to_json(&wrap_encoded(api_version, kind, object, "")).unwrap()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|&(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn some<T: Default>(value: T) -> MessageField<T> {
    MessageField::some(value)
}

/// ObjectMeta as Go writes it: every string field, set or not, the
/// generation, and a zero creationTimestamp as an empty message.
fn go_meta(name: &str, labels: &[(&str, &str)]) -> MessageField<meta::ObjectMeta> {
    some(meta::ObjectMeta {
        name: Some(name.into()),
        generateName: Some(String::new()),
        namespace: Some(String::new()),
        selfLink: Some(String::new()),
        uid: Some(String::new()),
        resourceVersion: Some(String::new()),
        generation: Some(0),
        creationTimestamp: some(meta::Time::default()),
        labels: map(labels),
        ..Default::default()
    })
}

/// A Container as Go writes the one of `kubectl create deployment`.
fn go_container(name: &str, image: &str) -> core::Container {
    core::Container {
        name: Some(name.into()),
        image: Some(image.into()),
        workingDir: Some(String::new()),
        resources: some(core::ResourceRequirements::default()),
        terminationMessagePath: Some(String::new()),
        imagePullPolicy: Some(String::new()),
        stdin: Some(false),
        stdinOnce: Some(false),
        tty: Some(false),
        ..Default::default()
    }
}

/// A PodSpec as Go writes it, with `containers`.
fn go_pod_spec(containers: Vec<core::Container>, restart: &str) -> MessageField<core::PodSpec> {
    some(core::PodSpec {
        containers,
        restartPolicy: Some(restart.into()),
        dnsPolicy: Some(String::new()),
        serviceAccountName: Some(String::new()),
        nodeName: Some(String::new()),
        hostNetwork: Some(false),
        hostPID: Some(false),
        hostIPC: Some(false),
        ..Default::default()
    })
}

#[test]
fn a_configmap_with_labels_data_and_binary_data() {
    let meta = [
        bytes(1, b"settings"),
        bytes(3, b"demo"),
        bytes(11, &entry("app", b"web")),
    ]
    .concat();
    let raw = [
        bytes(1, &meta),
        bytes(2, &entry("color", b"blue")),
        bytes(3, &entry("blob", &[0, 1, 2])),
        vec![4 << 3, 1],
    ]
    .concat();
    let object = to_json(&envelope("v1", "ConfigMap", &raw)).unwrap();
    assert_eq!(
        object,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "demo", "labels": {"app": "web"}},
            "data": {"color": "blue"}, "binaryData": {"blob": "AAEC"}, "immutable": true})
    );
}

#[test]
fn a_namespace_as_kubectl_create_namespace_sends_it() {
    // Recorded from kubectl 1.32: every string field written, empty.
    let body: &[u8] = &[
        107, 56, 115, 0, 10, 15, 10, 2, 118, 49, 18, 9, 78, 97, 109, 101, 115, 112, 97, 99, 101,
        18, 27, 10, 19, 10, 3, 102, 111, 111, 18, 0, 26, 0, 34, 0, 42, 0, 50, 0, 56, 0, 66, 0, 18,
        0, 26, 2, 10, 0, 26, 0, 34, 0,
    ];
    assert_eq!(
        to_json(body).unwrap(),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "foo"}, "spec": {}})
    );
}

#[test]
fn a_secret_keeps_bytes_as_base64() {
    let raw = [
        bytes(1, &bytes(1, b"s")),
        bytes(2, &entry("password", b"hunter2")),
        bytes(3, b"Opaque"),
    ]
    .concat();
    let object = to_json(&envelope("v1", "Secret", &raw)).unwrap();
    assert_eq!(object["data"]["password"], "aHVudGVyMg==");
    assert_eq!(object["type"], "Opaque");
}

#[test]
fn unsupported_bodies() {
    let widget = meta::Status::default();
    let config_map = core::ConfigMap {
        metadata: go_meta("settings", &[]),
        ..Default::default()
    };
    let cases: &[(&str, Vec<u8>)] = &[
        (
            "a kind that is not built in",
            wrap_encoded("example.com/v1", "Widget", &widget, ""),
        ),
        (
            "a built-in kind under another group",
            wrap_encoded("apps.example.com/v1", "Deployment", &widget, ""),
        ),
        (
            "a kind its group does not have",
            wrap_encoded("apps/v1", "ConfigMap", &config_map, ""),
        ),
        (
            "a content encoding",
            wrap_encoded("v1", "ConfigMap", &config_map, "gzip"),
        ),
        ("garbage after the magic", b"k8s\0\xff\xff".to_vec()),
        (
            "an object that does not parse",
            envelope("v1", "ConfigMap", b"\x0a\x05ab"),
        ),
        ("JSON", b"{}".to_vec()),
    ];
    for (name, body) in cases {
        assert!(to_json(body).is_err(), "{name}");
    }
}

#[test]
fn option_types_resolve_in_every_group_version() {
    let options = meta::DeleteOptions {
        propagationPolicy: Some("Foreground".into()),
        ..Default::default()
    };
    assert_eq!(
        decode("apps/v1", "DeleteOptions", &options),
        json!({"apiVersion": "apps/v1", "kind": "DeleteOptions", "propagationPolicy": "Foreground"})
    );
}

#[test]
fn every_field_the_tables_name_exists() {
    let fields = names::INLINE
        .iter()
        .chain(names::ZERO_IS_SET)
        .copied()
        .chain(names::RENAMED.iter().map(|&(m, f, _)| (m, f)));
    for (message, field) in fields {
        let found = kinds::messages_named(message);
        assert!(
            found.iter().any(|m| m.field_by_name(field).is_some()),
            "{message}.{field}"
        );
    }
}

#[test]
fn every_kind_the_store_keeps_has_a_message_but_those_of_1_36() {
    let store = rekon_store::Store::new(rekon_store::StoreConfig::default());
    let mut missing: Vec<String> = store
        .resources()
        .into_iter()
        .filter(|r| r.is_stored() && kinds::find(&r.api_version(), &r.kind).is_none())
        .map(|r| format!("{} {}", r.api_version(), r.kind))
        .collect();
    missing.sort();
    // GA in Kubernetes 1.36; k8s-rs-pb 0.5 stops at 1.35 (v1beta1 there).
    let newer = [
        "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy",
        "admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding",
    ];
    assert_eq!(missing, newer);
}
