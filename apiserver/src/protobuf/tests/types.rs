//! The types with a JSON form of their own, embedded structs, and zeros.

use k8s_rs_pb::api::{apps::v1 as apps, coordination::v1 as coordination, core::v1 as core};
use k8s_rs_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_rs_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_rs_pb::apimachinery::pkg::runtime::RawExtension;
use k8s_rs_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

use super::super::json::go_duration;
use super::{decode, go_container, go_meta, go_pod_spec, some};

fn time(seconds: i64, nanos: i32) -> protobuf::MessageField<meta::Time> {
    some(meta::Time {
        seconds: Some(seconds),
        nanos: Some(nanos),
        ..Default::default()
    })
}

#[test]
fn times_are_rfc3339_in_utc() {
    let mut metadata = go_meta("settings", &[]);
    let meta = metadata.mut_or_insert_default();
    meta.creationTimestamp = time(1_700_000_000, 123_456_789);
    meta.managedFields = vec![meta::ManagedFieldsEntry {
        manager: Some("kubectl".into()),
        operation: Some("Update".into()),
        time: time(1_700_000_000, 0),
        fieldsType: Some("FieldsV1".into()),
        fieldsV1: some(meta::FieldsV1 {
            Raw: Some(br#"{"f:data":{}}"#.to_vec()),
            ..Default::default()
        }),
        ..Default::default()
    }];
    let config_map = core::ConfigMap {
        metadata,
        ..Default::default()
    };
    assert_eq!(
        decode("v1", "ConfigMap", &config_map)["metadata"],
        json!({"name": "settings", "creationTimestamp": "2023-11-14T22:13:20Z",
            "managedFields": [{"manager": "kubectl", "operation": "Update",
                "time": "2023-11-14T22:13:20Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {}}}]})
    );
    // A MicroTime: k8s-rs-pb holds it in its Time struct, the descriptor
    // says what it is.
    let lease = coordination::Lease {
        metadata: go_meta("leader", &[]),
        spec: some(coordination::LeaseSpec {
            holderIdentity: Some("a".into()),
            renewTime: time(1_700_000_000, 123_456_789),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        decode("coordination.k8s.io/v1", "Lease", &lease)["spec"],
        json!({"holderIdentity": "a", "renewTime": "2023-11-14T22:13:20.123456Z"})
    );
}

#[test]
fn a_controller_revision_holds_its_data_as_json() {
    let revision = apps::ControllerRevision {
        metadata: go_meta("web-1", &[]),
        data: some(RawExtension {
            raw: Some(br#"{"spec":{"replicas":2}}"#.to_vec()),
            ..Default::default()
        }),
        revision: Some(1),
        ..Default::default()
    };
    assert_eq!(
        decode("apps/v1", "ControllerRevision", &revision),
        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": "web-1"}, "data": {"spec": {"replicas": 2}}, "revision": 1})
    );
}

#[test]
fn zeros_are_unset_but_for_go_pointers() {
    let deployment = apps::Deployment {
        metadata: go_meta("web", &[]),
        spec: some(apps::DeploymentSpec {
            replicas: Some(0),
            minReadySeconds: Some(0),
            paused: Some(false),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        decode("apps/v1", "Deployment", &deployment)["spec"],
        json!({"replicas": 0})
    );
}

#[test]
fn embedded_structs_are_inline_and_empty_ones_kept() {
    // kubectl run, with a volume and a probe added.
    let volume = |name: &str, source| core::Volume {
        name: Some(name.into()),
        volumeSource: some(source),
        ..Default::default()
    };
    let config_map = core::ConfigMapVolumeSource {
        localObjectReference: some(core::LocalObjectReference {
            name: Some("settings".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let probe = core::Probe {
        handler: some(core::ProbeHandler {
            httpGet: some(core::HTTPGetAction {
                path: Some("/".into()),
                port: some(IntOrString {
                    type_: Some(0),
                    intVal: Some(80),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        periodSeconds: Some(10),
        ..Default::default()
    };
    let mut spec = go_pod_spec(
        vec![core::Container {
            livenessProbe: some(probe),
            ..go_container("p", "nginx")
        }],
        "Always",
    );
    spec.mut_or_insert_default().volumes = vec![
        volume(
            "cache",
            core::VolumeSource {
                emptyDir: some(core::EmptyDirVolumeSource {
                    medium: Some(String::new()),
                    ..Default::default()
                }),
                ..Default::default()
            },
        ),
        volume(
            "config",
            core::VolumeSource {
                configMap: some(config_map),
                ..Default::default()
            },
        ),
    ];
    let pod = core::Pod {
        metadata: go_meta("p", &[("run", "p")]),
        spec,
        status: some(core::PodStatus::default()),
        ..Default::default()
    };
    assert_eq!(
        decode("v1", "Pod", &pod)["spec"],
        json!({"containers": [{"name": "p", "image": "nginx", "resources": {},
                "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 10}}],
            "restartPolicy": "Always",
            "volumes": [{"name": "cache", "emptyDir": {}},
                {"name": "config", "configMap": {"name": "settings"}}]})
    );
}

#[test]
fn a_crd_schema_has_json_schema_names_and_forms() {
    let schema = |ty: &str| apiextensions::JSONSchemaProps {
        type_: Some(ty.into()),
        ..Default::default()
    };
    let replicas = apiextensions::JSONSchemaProps {
        minimum: Some(0.0),
        default: some(apiextensions::JSON {
            raw: Some(b"1".to_vec()),
            ..Default::default()
        }),
        ..schema("integer")
    };
    let tags = apiextensions::JSONSchemaProps {
        items: some(apiextensions::JSONSchemaPropsOrArray {
            schema: some(schema("string")),
            ..Default::default()
        }),
        xKubernetesListType: Some("set".into()),
        ..schema("array")
    };
    let spec = apiextensions::JSONSchemaProps {
        properties: [("replicas".to_owned(), replicas), ("tags".to_owned(), tags)].into(),
        additionalProperties: some(apiextensions::JSONSchemaPropsOrBool {
            allows: Some(false),
            ..Default::default()
        }),
        xKubernetesPreserveUnknownFields: Some(true),
        ..schema("object")
    };
    let crd = apiextensions::CustomResourceDefinition {
        metadata: go_meta("widgets.example.com", &[]),
        spec: some(apiextensions::CustomResourceDefinitionSpec {
            group: Some("example.com".into()),
            versions: vec![apiextensions::CustomResourceDefinitionVersion {
                name: Some("v1".into()),
                served: Some(true),
                storage: Some(true),
                schema: some(apiextensions::CustomResourceValidation {
                    openAPIV3Schema: some(spec),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let decoded = decode("apiextensions.k8s.io/v1", "CustomResourceDefinition", &crd);
    assert_eq!(
        decoded["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
        json!({"type": "object", "properties": {
                "replicas": {"type": "integer", "default": 1, "minimum": 0},
                "tags": {"type": "array", "items": {"type": "string"},
                    "x-kubernetes-list-type": "set"}},
            "additionalProperties": false,
            "x-kubernetes-preserve-unknown-fields": true})
    );
}

#[test]
fn go_durations() {
    let cases = [
        ("zero", 0, "0s"),
        ("nanoseconds", 500, "500ns"),
        ("microseconds", 1_500, "1.5µs"),
        ("milliseconds", 500_000_000, "500ms"),
        ("fractional seconds", 1_500_000_000, "1.5s"),
        ("hours, minutes, seconds", 3_723_000_000_000, "1h2m3s"),
        ("whole hour", 3_600_000_000_000, "1h0m0s"),
        ("negative", -90_000_000_000, "-1m30s"),
    ];
    for (name, nanos, expected) in cases {
        assert_eq!(go_duration(nanos), expected, "{name}");
    }
}
