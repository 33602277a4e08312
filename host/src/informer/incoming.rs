//! Objects as a list or a watch delivers them, decoded straight into the
//! parts the cache keeps.
//!
//! kube's `DynamicObject` decodes an object's body into a tree of
//! `serde_json::Value`s, which the cache then writes back out as text.
//! [`Incoming`] keeps each top-level field as the text it arrived as
//! (`RawValue`: checked, copied, never parsed into a tree) and decodes only
//! the metadata, skipping managedFields without building them. The watcher
//! takes it as its object type ([`kube::Resource`] with an [`ApiResource`]
//! as the dynamic type, like `DynamicObject`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use kube::api::ApiResource;
use kube::core::DynamicResourceScope;
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// An object of any kind as it arrived: its metadata (without
/// managedFields) and every other top-level field but apiVersion and kind,
/// as received, in order.
#[derive(Clone, Debug)]
pub(crate) struct Incoming {
    pub metadata: ObjectMeta,
    pub body: Vec<(Box<str>, Box<RawValue>)>,
}

/// The metadata fields the cache keeps; managedFields, left out, is skipped
/// as it is read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    annotations: Option<BTreeMap<String, String>>,
    creation_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    deletion_timestamp: Option<Time>,
    finalizers: Option<Vec<String>>,
    generate_name: Option<String>,
    generation: Option<i64>,
    labels: Option<BTreeMap<String, String>>,
    name: Option<String>,
    namespace: Option<String>,
    owner_references: Option<Vec<OwnerReference>>,
    resource_version: Option<String>,
    self_link: Option<String>,
    uid: Option<String>,
}

impl From<Meta> for ObjectMeta {
    fn from(meta: Meta) -> ObjectMeta {
        ObjectMeta {
            annotations: meta.annotations,
            creation_timestamp: meta.creation_timestamp,
            deletion_grace_period_seconds: meta.deletion_grace_period_seconds,
            deletion_timestamp: meta.deletion_timestamp,
            finalizers: meta.finalizers,
            generate_name: meta.generate_name,
            generation: meta.generation,
            labels: meta.labels,
            managed_fields: None,
            name: meta.name,
            namespace: meta.namespace,
            owner_references: meta.owner_references,
            resource_version: meta.resource_version,
            self_link: meta.self_link,
            uid: meta.uid,
        }
    }
}

impl<'de> Deserialize<'de> for Incoming {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Incoming, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = Incoming;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a Kubernetes object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Incoming, A::Error> {
                let mut metadata = None;
                let mut body = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        // Written from the resource the informer serves.
                        "apiVersion" | "kind" => {
                            map.next_value::<IgnoredAny>()?;
                        }
                        "metadata" => metadata = Some(map.next_value::<Meta>()?.into()),
                        _ => body.push((key.into(), map.next_value::<Box<RawValue>>()?)),
                    }
                }
                Ok(Incoming {
                    metadata: metadata.unwrap_or_default(),
                    body,
                })
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

impl kube::Resource for Incoming {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        dt.kind.as_str().into()
    }

    fn group(dt: &ApiResource) -> Cow<'_, str> {
        dt.group.as_str().into()
    }

    fn version(dt: &ApiResource) -> Cow<'_, str> {
        dt.version.as_str().into()
    }

    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        dt.api_version.as_str().into()
    }

    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        dt.plural.as_str().into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::informer::cached::Cached;
    use crate::informer::cached::tests::config_maps;
    use serde_json::{Value, json};

    fn object() -> Value {
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": "web", "namespace": "shop", "resourceVersion": "42",
                "uid": "u0", "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": { "b": "2", "a": "1" },
                "annotations": {
                    "kubectl.kubernetes.io/last-applied-configuration": "{}",
                    "note": "say \"hi\"\n",
                },
                "ownerReferences": [{ "apiVersion": "demo.rekon.dev/v1", "kind": "App",
                    "name": "web", "uid": "u1", "controller": true }],
                "managedFields": [{ "manager": "kubectl", "fieldsType": "FieldsV1",
                    "fieldsV1": { "f:data": { "f:z": {} } } }],
            },
            "data": { "z": "last", "a": "first" },
            "immutable": false,
        })
    }

    #[test]
    fn an_incoming_object_caches_as_the_same_text_as_a_decoded_one() {
        let text = object().to_string();
        let incoming: Incoming = serde_json::from_str(&text).expect("an object");
        let decoded = serde_json::from_str(&text).expect("an object");
        let fast = Cached::from_incoming(incoming, &config_maps());
        let slow = Cached::from_object(decoded, &config_maps());
        assert_eq!(fast.json, slow.json);
        assert!(!fast.json.contains("managedFields"), "{}", fast.json);
        assert!(!fast.json.contains("last-applied"), "{}", fast.json);
        assert_eq!(fast.label("a"), Some("1"));
        assert_eq!(fast.resource_version(), "42");
        assert_eq!(fast.owners, slow.owners);
        assert_eq!(fast.annotations_digest, slow.annotations_digest);
    }

    #[test]
    fn watch_events_and_lists_decode_through_kube() {
        // The shapes kube decodes: a watch line (type first, as API servers
        // write it) and a list, whose items may lack apiVersion and kind.
        let line = json!({"type": "MODIFIED", "object": object()}).to_string();
        let event: kube::core::WatchEvent<Incoming> = serde_json::from_str(&line).expect("event");
        let kube::core::WatchEvent::Modified(incoming) = event else {
            panic!("a MODIFIED event");
        };
        assert_eq!(incoming.metadata.resource_version.as_deref(), Some("42"));
        let keys: Vec<&str> = incoming.body.iter().map(|(k, _)| &**k).collect();
        assert_eq!(keys, ["data", "immutable"]);

        let mut item = object();
        item.as_object_mut().unwrap().remove("kind");
        let list = json!({"apiVersion": "v1", "kind": "ConfigMapList",
            "metadata": {"resourceVersion": "43"}, "items": [item]});
        let list: kube::core::ObjectList<Incoming> =
            serde_json::from_str(&list.to_string()).expect("a list");
        let cached = Cached::from_incoming(list.items[0].clone(), &config_maps());
        let back: Value = serde_json::from_str(&cached.json).unwrap();
        assert_eq!(back["kind"], "ConfigMap");
        assert_eq!(back["data"]["z"], "last");
    }

    #[test]
    fn a_body_that_is_not_an_object_is_refused() {
        let refused = serde_json::from_str::<Incoming>("[1, 2]").unwrap_err();
        assert!(
            refused.to_string().contains("a Kubernetes object"),
            "{refused}"
        );
    }
}
