//! CustomResourceDefinitions generated from Rust types (like kube-rs's
//! `#[derive(CustomResource)]`, or kubebuilder's markers).
//!
//! Derive [`schemars::JsonSchema`](crate::schemars) and [`CustomResource`]
//! on the spec struct and describe the resource in `#[resource(...)]`;
//! [`CustomResource::crd`] then returns the whole
//! `apiextensions.k8s.io/v1` CustomResourceDefinition, with a Kubernetes
//! *structural* schema made from the spec (and status) types.
//!
//! ```
//! use rekon_sdk::crd::CustomResource;
//! use rekon_sdk::schemars::{self, JsonSchema};
//! use rekon_sdk::serde_json::json;
//! use serde::{Deserialize, Serialize};
//!
//! /// What a Backup asks for.
//! #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, CustomResource)]
//! #[serde(rename_all = "camelCase")]
//! #[resource(group = "demo.rekon.dev", version = "v1", kind = "Backup", namespaced,
//!            status = "BackupStatus", shortname = "bk",
//!            printcolumn(name = "Schedule", type = "string", json_path = ".spec.schedule"))]
//! pub struct BackupSpec {
//!     /// When to back up, in cron syntax.
//!     pub schedule: String,
//!     /// How many backups to keep.
//!     #[serde(default = "three")]
//!     #[schemars(range(min = 1))]
//!     pub keep_last: u32,
//! }
//!
//! fn three() -> u32 {
//!     3
//! }
//!
//! /// What happened.
//! #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! pub struct BackupStatus {
//!     /// When the last backup finished.
//!     pub last_backup: Option<String>,
//! }
//!
//! assert_eq!(BackupSpec::PLURAL, "backups");
//! let crd = BackupSpec::crd();
//! assert_eq!(crd["metadata"]["name"], "backups.demo.rekon.dev");
//! assert_eq!(crd["spec"]["scope"], "Namespaced");
//! let version = &crd["spec"]["versions"][0];
//! assert_eq!(version["subresources"], json!({"status": {}}));
//! let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
//! assert_eq!(spec["required"], json!(["schedule"]));
//! assert_eq!(
//!     spec["properties"]["keepLast"],
//!     json!({"type": "integer", "format": "int32", "description": "How many backups to keep.",
//!            "default": 3, "minimum": 1}),
//! );
//! ```
//!
//! The derive emits paths through `schemars::`, so either import
//! `rekon_sdk::schemars` as `schemars` (as above: the guest then needs no
//! dependency of its own), or depend on `schemars` 1.x, or put
//! `#[schemars(crate = "rekon_sdk::schemars")]` on the type.
//!
//! # `#[resource(...)]`
//!
//! | key | meaning | default |
//! | --- | --- | --- |
//! | `group = "..."`, `version = "..."`, `kind = "..."` | the resource (required) | |
//! | `namespaced` | `scope: Namespaced` | `Cluster` |
//! | `status = "Type"` | the status type (its schema, and the status subresource) | no status |
//! | `plural = "..."`, `singular = "..."` | resource names | the SDK's plural of the kind (`App` -> `apps`, `Policy` -> `policies`); the lower-case kind |
//! | `shortname = "..."`, `category = "..."` | `shortNames`, `categories` (repeat the key for more) | none |
//! | `printcolumn(name, type, json_path, description, format, priority)` | an `additionalPrinterColumns` entry (repeatable; `Age` is not added for you) | none |
//! | `scale(spec_replicas_path, status_replicas_path, label_selector_path)` | the scale subresource | none |
//! | `served = bool`, `storage = bool` | the version's flags | `true`, `true` |
//!
//! Mistakes in the attribute are compile errors pointing at them:
//!
//! ```compile_fail
//! # use rekon_sdk::schemars::{self, JsonSchema};
//! #[derive(JsonSchema, rekon_sdk::crd::CustomResource)]
//! #[resource(group = "demo.rekon.dev", version = "v1")] // error: needs `kind = "..."`
//! struct ThingSpec {}
//! ```
//!
//! ```compile_fail
//! # use rekon_sdk::schemars::{self, JsonSchema};
//! #[derive(JsonSchema, rekon_sdk::crd::CustomResource)]
//! #[resource(group = "demo.rekon.dev", version = "v1", kind = "Thing", shortnames = "t")]
//! struct ThingSpec {} // error: unknown key `shortnames`
//! ```
//!
//! Several versions of one kind: derive on each version's spec type (one of
//! them `storage = true`, the others `storage = false`) and [`merge`] their
//! CRDs.
//!
//! # The schema
//!
//! [`schema_for`] turns what schemars generates into a structural schema:
//! subschemas inlined (a recursive type is an error: give it a hand-made
//! schema), no `$schema`, `$defs`, `title`; `Option<T>` is `T`, not
//! required and not `nullable` (add `#[schemars(extend("nullable" = true))]`
//! to ask for it); `u32`/`i32` are `integer`/`int32`, `u64`/`i64`
//! `integer`/`int64`; doc comments become `description`; serde's renames and
//! `default`s are honoured (a `#[serde(default)]` field is not required and
//! gets schemars' `default`); enums of unit variants are `enum`s; tagged
//! enums are objects with every variant's properties; maps are
//! `additionalProperties`; [`serde_json::Value`] is
//! `x-kubernetes-preserve-unknown-fields: true`; `uniqueItems` and
//! `additionalProperties: false` are dropped (Kubernetes refuses the first
//! and prunes unknown fields anyway). Validation comes from schemars'
//! attributes: `#[schemars(range(min = 0, max = 10))]`, `length(...)`,
//! `regex(pattern = ...)`, or any keyword with `extend("key" = value)`.
//! Where a type has no fitting derive, `#[schemars(schema_with = "path")]`
//! takes a hand-made schema. [`Condition`](crate::conditions::Condition)
//! has one: `Vec<Condition>` is the usual conditions list.
//!
//! The root schema is `{type: object, properties: {spec, status}}`, with
//! `required: [spec]` only when the spec has required fields. (kube-rs
//! always requires `spec`; here an object whose spec may be empty may omit
//! it, as serde would accept.)
//!
//! # Keeping a checked-in CRD in step
//!
//! [`check_file`] (in native tests) compares a CRD with a YAML file and
//! fails with a line diff; `REKON_UPDATE_CRDS=1 cargo test` rewrites the
//! file instead. See `guests/app` for the test.

use serde_json::Value;

use crate::types::Gvk;

pub use rekon_sdk_macros::CustomResource;

mod build;
#[cfg(not(target_arch = "wasm32"))]
mod check;
mod columns;
pub(crate) mod names;
mod schema;
mod versions;

pub use build::Crd;
#[cfg(not(target_arch = "wasm32"))]
pub use check::{UPDATE_ENV, check_file, to_yaml};
pub use columns::{PrinterColumn, Scale};
#[doc(hidden)]
pub use names::__private;
pub use names::plural;
pub use schema::{schema_for, structural};
pub use versions::merge;

/// A spec type that knows its resource and CRD: implemented by
/// `#[derive(CustomResource)]` (see the [module docs](self)).
pub trait CustomResource {
    /// The API group, e.g. `demo.rekon.dev`.
    const GROUP: &'static str;
    /// The version this type is the spec of, e.g. `v1`.
    const VERSION: &'static str;
    /// The kind, e.g. `App`.
    const KIND: &'static str;
    /// The resource (plural) name, e.g. `apps`.
    const PLURAL: &'static str;
    /// Whether objects live in namespaces.
    const NAMESPACED: bool;

    /// The CustomResourceDefinition with this one version.
    ///
    /// # Panics
    ///
    /// The derived one panics, naming the field, when a type has no
    /// structural schema (see [`schema_for`]): a mistake any test calling
    /// it shows at once.
    fn crd() -> Value;

    /// The group, version and kind.
    fn gvk() -> Gvk {
        Gvk::new(Self::GROUP, Self::VERSION, Self::KIND)
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::*;
    use crate::conditions::Condition;

    /// Spec of a test App.
    #[derive(Serialize, Deserialize, JsonSchema, CustomResource)]
    #[resource(
        group = "demo.rekon.dev",
        version = "v1",
        kind = "App",
        namespaced,
        status = "AppStatus",
        shortname = "ap",
        shortname = "apps1",
        category = "all",
        printcolumn(name = "Image", type = "string", json_path = ".spec.image"),
        printcolumn(
            name = "Ready",
            type = "integer",
            json_path = ".status.ready",
            description = "Ready pods",
            format = "int32",
            priority = 1
        ),
        scale(
            spec_replicas_path = ".spec.replicas",
            status_replicas_path = ".status.replicas",
            label_selector_path = ".status.selector"
        )
    )]
    struct AppSpec {
        image: String,
        replicas: Option<i32>,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct AppStatus {
        replicas: Option<i32>,
        #[serde(default)]
        conditions: Vec<Condition>,
    }

    /// Cluster-scoped, no status, all optional.
    #[derive(Serialize, Deserialize, JsonSchema, CustomResource)]
    #[resource(
        group = "demo.rekon.dev",
        version = "v1alpha1",
        kind = "Policy",
        served = false,
        storage = false
    )]
    struct PolicySpec {
        rules: Option<Vec<String>>,
    }

    #[test]
    fn derive_makes_names_scope_subresources_columns() {
        assert_eq!(
            (
                AppSpec::GROUP,
                AppSpec::VERSION,
                AppSpec::KIND,
                AppSpec::PLURAL,
                AppSpec::NAMESPACED
            ),
            ("demo.rekon.dev", "v1", "App", "apps", true)
        );
        assert_eq!(AppSpec::gvk(), Gvk::new("demo.rekon.dev", "v1", "App"));
        let crd = AppSpec::crd();
        assert_eq!(crd["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(crd["metadata"], json!({"name": "apps.demo.rekon.dev"}));
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(
            crd["spec"]["names"],
            json!({"kind": "App", "listKind": "AppList", "plural": "apps", "singular": "app",
                   "shortNames": ["ap", "apps1"], "categories": ["all"]})
        );
        let version = &crd["spec"]["versions"][0];
        assert_eq!(
            (&version["name"], &version["served"], &version["storage"]),
            (&json!("v1"), &json!(true), &json!(true))
        );
        assert_eq!(
            version["subresources"],
            json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                   "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}})
        );
        assert_eq!(
            version["additionalPrinterColumns"],
            json!([{"name": "Image", "type": "string", "jsonPath": ".spec.image"},
                   {"name": "Ready", "type": "integer", "jsonPath": ".status.ready",
                    "description": "Ready pods", "format": "int32", "priority": 1}])
        );
        let root = &version["schema"]["openAPIV3Schema"];
        assert_eq!(root["type"], "object");
        assert_eq!(
            root["required"],
            json!(["spec"]),
            "the spec has a required field"
        );
        assert_eq!(
            root["properties"]["spec"]["description"],
            "Spec of a test App."
        );
        let conditions = &root["properties"]["status"]["properties"]["conditions"];
        assert_eq!(conditions["items"]["required"], json!(["type", "status"]));
        assert_eq!(
            conditions["items"]["properties"]["status"]["enum"],
            json!(["True", "False", "Unknown"])
        );

        assert_eq!(PolicySpec::PLURAL, "policies");
        let policy = PolicySpec::crd();
        assert_eq!(policy["spec"]["scope"], "Cluster");
        assert_eq!(policy["metadata"]["name"], "policies.demo.rekon.dev");
        let version = &policy["spec"]["versions"][0];
        assert_eq!(
            (&version["served"], &version["storage"]),
            (&json!(false), &json!(false))
        );
        assert!(
            version.get("subresources").is_none()
                && version.get("additionalPrinterColumns").is_none()
        );
        let root = &version["schema"]["openAPIV3Schema"];
        assert!(
            root.get("required").is_none(),
            "nothing required in the spec: {root}"
        );
        assert!(root["properties"].get("status").is_none());
        assert!(policy["spec"]["names"].get("shortNames").is_none());
    }
}
