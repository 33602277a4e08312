//! A custom resource's schemas, as its CRD gives them and the real server
//! compiles them once per CRD (apiextensions' `crdInfo`): each version's
//! structural schema (its defaults pruned), compiled CEL rules, selectable
//! fields, scale subresource and deprecation warning; and an object read
//! in another version (strategy `None`: its apiVersion changed, pruned by
//! that version's schema).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::machinery::field::Path;
use crate::machinery::version::version_priority;
use crate::schema::cel::{Rules, compile};
use crate::schema::coerce::{DecodeOptions, coerce_decoded};
use crate::schema::defaulting::{default, prune_defaults};
use crate::schema::props::Schema;
use crate::schema::pruning::prune;

/// The schemas of one version of a CRD.
pub(crate) struct VersionSchema {
    /// The `openAPIV3Schema` (none: anything goes).
    pub schema: Option<Schema>,
    /// Its compiled `x-kubernetes-validations` rules.
    pub rules: Option<Rules>,
    /// The warning every request to a deprecated version gets.
    pub deprecation: Option<String>,
    /// Its `scale` subresource.
    pub scale: Option<Scale>,
    /// Its `selectableFields`, without the leading dot.
    pub selectable: Vec<String>,
}

/// The `scale` subresource of a version: where the replicas and the
/// label selector are in its objects (`.spec.replicas`...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// `specReplicasPath`.
    pub spec_replicas_path: String,
    /// `statusReplicasPath`.
    pub status_replicas_path: String,
    /// `labelSelectorPath`, when set.
    pub label_selector_path: Option<String>,
}

impl Scale {
    fn of(scale: &Value) -> Scale {
        let text = |key: &str| scale.get(key).and_then(Value::as_str).map(str::to_string);
        Scale {
            spec_replicas_path: text("specReplicasPath").unwrap_or_default(),
            status_replicas_path: text("statusReplicasPath").unwrap_or_default(),
            label_selector_path: text("labelSelectorPath"),
        }
    }

    /// The fields of a simple JSON path (`.spec.replicas`).
    pub fn fields(path: &str) -> Vec<&str> {
        path.strip_prefix('.').unwrap_or(path).split('.').collect()
    }
}

/// The warning of a deprecated version: its `deprecationWarning`, or
/// `<group>/<version> <Kind> is deprecated` and the served version of
/// higher priority to use instead (`defaultDeprecationWarning`).
fn deprecation_warning(crd: &Value, version: &Value) -> Option<String> {
    if version["deprecated"] != true {
        return None;
    }
    if let Some(warning) = version.get("deprecationWarning").and_then(Value::as_str) {
        return Some(warning.to_string());
    }
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = crd
        .pointer("/spec/names/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = version["name"].as_str().unwrap_or_default();
    let mut message = format!("{group}/{name} {kind} is deprecated");
    let instead = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v["served"] == true && v["deprecated"] != true)
        .filter_map(|v| v["name"].as_str())
        .filter(|v| version_priority(v) < version_priority(name))
        .min_by_key(|v| version_priority(v));
    if let Some(instead) = instead {
        message.push_str(&format!("; use {group}/{instead} {kind}"));
    }
    Some(message)
}

/// The schemas of every version of one CRD. Cheap to clone.
#[derive(Clone)]
pub struct CustomSchemas(Arc<Schemas>);

pub(crate) struct Schemas {
    /// The storage version.
    pub storage: String,
    /// Each version's schemas.
    pub versions: BTreeMap<String, VersionSchema>,
}

impl std::fmt::Debug for CustomSchemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomSchemas")
            .field("storage", &self.0.storage)
            .field("versions", &self.0.versions.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl PartialEq for CustomSchemas {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl CustomSchemas {
    /// The schemas of a CRD (`apiextensions.k8s.io/v1`), versions by name.
    pub(crate) fn of_crd(crd: &Value) -> CustomSchemas {
        let versions = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let storage = versions
            .iter()
            .find(|v| v["storage"] == true)
            .and_then(|v| v["name"].as_str())
            .unwrap_or_default()
            .to_string();
        let versions = versions
            .iter()
            .enumerate()
            .filter_map(|(index, v)| {
                let name = v["name"].as_str()?.to_string();
                let schema = v.pointer("/schema/openAPIV3Schema").map(|raw| {
                    let mut schema = Schema::from_json(raw);
                    // The defaults themselves are pruned once, as the real
                    // server does before it serves a version.
                    let _ = prune_defaults(&mut schema);
                    schema
                });
                let base = Path::new(["spec"])
                    .child(&format!("versions[{index}]"))
                    .child("schema")
                    .child("openAPIV3Schema");
                let rules = schema.as_ref().and_then(|s| compile(s, &base).ok());
                let deprecation = deprecation_warning(crd, v);
                let selectable = v["selectableFields"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f["jsonPath"].as_str())
                    .map(|path| path.strip_prefix('.').unwrap_or(path).to_string())
                    .collect();
                let scale = v.pointer("/subresources/scale").map(Scale::of);
                Some((
                    name,
                    VersionSchema {
                        schema,
                        rules,
                        deprecation,
                        scale,
                        selectable,
                    },
                ))
            })
            .collect();
        CustomSchemas(Arc::new(Schemas { storage, versions }))
    }

    /// The names of the versions.
    pub(crate) fn version_names(&self) -> Vec<String> {
        self.0.versions.keys().cloned().collect()
    }

    pub(crate) fn version(&self, version: &str) -> Option<&VersionSchema> {
        self.0.versions.get(version)
    }

    /// The fields objects of `version` can be selected by (its
    /// `selectableFields`, without the leading dot).
    pub fn selectable_fields(&self, version: &str) -> &[String] {
        self.version(version)
            .map(|v| v.selectable.as_slice())
            .unwrap_or_default()
    }

    /// The structural schema of `version`, if it has one.
    pub(crate) fn schema(&self, version: &str) -> Option<&Schema> {
        self.version(version).and_then(|v| v.schema.as_ref())
    }

    /// The storage version.
    pub(crate) fn storage(&self) -> &str {
        &self.0.storage
    }

    /// The warning every request to `version` gets when it is deprecated.
    pub fn deprecation_warning(&self, version: &str) -> Option<&str> {
        self.version(version).and_then(|v| v.deprecation.as_deref())
    }

    /// The `scale` subresource of `version`, when it has one.
    pub fn scale(&self, version: &str) -> Option<&Scale> {
        self.version(version).and_then(|v| v.scale.as_ref())
    }

    /// A merge patch setting `value` at a simple JSON path
    /// (`.spec.replicas`): what a write to the scale subresource changes.
    pub fn scale_patch(path: &str, value: Value) -> Value {
        Scale::fields(path)
            .iter()
            .rev()
            .fold(value, |inner, field| json!({ *field: inner }))
    }

    /// Prunes `object` by the schema of `version`; in the storage version,
    /// fills its defaults too, as a real server's storage decodes every
    /// object it reads with the storage version's defaults.
    fn prune_and_default(&self, version: &str, object: &mut Value) {
        if let Some(schema) = self.version(version).and_then(|v| v.schema.as_ref()) {
            prune(object, schema, true);
            if version == self.storage() {
                default(object, schema);
            }
        }
    }

    /// `object` (in any version of the CRD) as version `version` reads it:
    /// its apiVersion, and pruned by that version's schema, as the real
    /// server converts with strategy `None` (into the storage version, with
    /// its defaults: what is stored reads back defaulted by it).
    pub(crate) fn to_version(&self, mut object: Value, group: &str, version: &str) -> Value {
        let api_version = format!("{group}/{version}");
        if object.get("apiVersion").and_then(Value::as_str) == Some(api_version.as_str()) {
            return object;
        }
        if let Some(m) = object.as_object_mut() {
            m.insert("apiVersion".into(), json!(api_version));
        }
        self.prune_and_default(version, &mut object);
        object
    }

    /// Prunes `object` by the schema of `version` (what a converter gave;
    /// into the storage version, with its defaults).
    pub(crate) fn prune_as(&self, version: &str, object: &mut Value) {
        self.prune_and_default(version, object);
    }

    /// The fields of `object` the schema of `version` does not declare.
    pub(crate) fn undeclared(&self, version: &str, object: &Value) -> Vec<String> {
        match self.version(version).and_then(|v| v.schema.as_ref()) {
            Some(schema) => {
                let mut copy = object.clone();
                prune(&mut copy, schema, true)
            }
            None => Vec::new(),
        }
    }

    /// A stored object decoded anew (after its CRD changed): pruned and
    /// defaulted by the schema of the version it is stored in.
    pub(crate) fn redecode(&self, object: &mut Value) {
        // Each object in the schema of the version it is stored in (an
        // object written before the storage version changed is still in
        // the old one, and the new schema would prune its fields).
        let stored = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|v| v.rsplit_once('/'))
            .map_or_else(|| self.storage().to_string(), |(_, v)| v.to_string());
        if let Some(schema) = self.version(&stored).and_then(|v| v.schema.as_ref()) {
            let options = DecodeOptions {
                drop_invalid_metadata: true,
                ..Default::default()
            };
            let _ = coerce_decoded(object, schema, options);
            default(object, schema);
        }
    }
}
