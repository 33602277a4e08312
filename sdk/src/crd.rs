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
//! takes a hand-made schema. [`Condition`]
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

use std::borrow::Cow;
use std::collections::BTreeSet;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value, json};

use crate::Gvk;
use crate::conditions::Condition;

pub use rekon_sdk_macros::CustomResource;

const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";

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

/// One `additionalPrinterColumns` entry: what `kubectl get` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct PrinterColumn {
    /// The column's header.
    pub name: String,
    /// `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: String,
    /// A JSON path into the object, e.g. `.spec.image`.
    pub json_path: String,
    /// What the column means (`kubectl explain`).
    pub description: Option<String>,
    /// A format of the type, e.g. `int32` or `date-time`.
    pub format: Option<String>,
    /// 0 (the default) shows in the standard view; more only with `-o wide`.
    pub priority: Option<i32>,
}

impl PrinterColumn {
    /// A column named `name`, of type `type_`, showing `json_path`.
    pub fn new(
        name: impl Into<String>,
        type_: impl Into<String>,
        json_path: impl Into<String>,
    ) -> Self {
        PrinterColumn {
            name: name.into(),
            type_: type_.into(),
            json_path: json_path.into(),
            description: None,
            format: None,
            priority: None,
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the format.
    pub fn format(mut self, format: impl Into<String>) -> Self {
        self.format = Some(format.into());
        self
    }

    /// Sets the priority.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    fn check(&self) -> Result<(), String> {
        const TYPES: [&str; 5] = ["integer", "number", "string", "boolean", "date"];
        const FORMATS: [&str; 8] = [
            "int32",
            "int64",
            "float",
            "double",
            "byte",
            "date",
            "date-time",
            "password",
        ];
        if self.name.trim().is_empty() {
            return Err("a printer column has an empty name".into());
        }
        if !TYPES.contains(&self.type_.as_str()) {
            return Err(format!(
                "printer column {:?} has type {:?}: expected one of {}",
                self.name,
                self.type_,
                TYPES.join(", ")
            ));
        }
        if let Some(format) = &self.format
            && !FORMATS.contains(&format.as_str())
        {
            return Err(format!(
                "printer column {:?} has format {format:?}: expected one of {}",
                self.name,
                FORMATS.join(", ")
            ));
        }
        if !self.json_path.starts_with('.') {
            return Err(format!(
                "printer column {:?} has JSON path {:?}: it starts with a dot, e.g. \".spec.image\"",
                self.name, self.json_path
            ));
        }
        Ok(())
    }

    fn to_value(&self) -> Value {
        let mut column = json!({"name": self.name, "type": self.type_, "jsonPath": self.json_path});
        if let Some(description) = &self.description {
            column["description"] = json!(description);
        }
        if let Some(format) = &self.format {
            column["format"] = json!(format);
        }
        if let Some(priority) = self.priority {
            column["priority"] = json!(priority);
        }
        column
    }
}

/// The scale subresource: where `kubectl scale` (and the HorizontalPodAutoscaler)
/// read and write replicas.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct Scale {
    /// The desired replicas, e.g. `.spec.replicas`.
    pub spec_replicas_path: String,
    /// The observed replicas, e.g. `.status.replicas`.
    pub status_replicas_path: String,
    /// The label selector (as a string) of the pods, e.g. `.status.selector`.
    pub label_selector_path: Option<String>,
}

impl Scale {
    /// Replicas at `spec_replicas_path` (desired) and `status_replicas_path`
    /// (observed).
    pub fn new(
        spec_replicas_path: impl Into<String>,
        status_replicas_path: impl Into<String>,
    ) -> Self {
        Scale {
            spec_replicas_path: spec_replicas_path.into(),
            status_replicas_path: status_replicas_path.into(),
            label_selector_path: None,
        }
    }

    /// Sets the label selector path.
    pub fn label_selector_path(mut self, path: impl Into<String>) -> Self {
        self.label_selector_path = Some(path.into());
        self
    }

    fn check(&self) -> Result<(), String> {
        let under = |path: &str, root: &str, what: &str| {
            if path.starts_with(root) {
                Ok(())
            } else {
                Err(format!(
                    "scale: {what} {path:?} is not under {root} (e.g. \"{root}replicas\")"
                ))
            }
        };
        under(&self.spec_replicas_path, ".spec.", "specReplicasPath")?;
        under(&self.status_replicas_path, ".status.", "statusReplicasPath")?;
        if let Some(selector) = &self.label_selector_path
            && !(selector.starts_with(".status.") || selector.starts_with(".spec."))
        {
            return Err(format!(
                "scale: labelSelectorPath {selector:?} is not under .spec. or .status."
            ));
        }
        Ok(())
    }

    fn to_value(&self) -> Value {
        let mut scale = json!({
            "specReplicasPath": self.spec_replicas_path,
            "statusReplicasPath": self.status_replicas_path,
        });
        if let Some(selector) = &self.label_selector_path {
            scale["labelSelectorPath"] = json!(selector);
        }
        scale
    }
}

/// Builds a CustomResourceDefinition with one version; what
/// `#[derive(CustomResource)]` calls, and usable by hand:
///
/// ```
/// use rekon_sdk::crd::{Crd, PrinterColumn};
/// use rekon_sdk::serde_json::json;
///
/// let crd = Crd::new("demo.rekon.dev", "v1", "Policy")
///     .spec_schema(json!({"type": "object", "properties": {"rules": {
///         "type": "array", "items": {"type": "string"}}}}))
///     .printer_column(PrinterColumn::new("Age", "date", ".metadata.creationTimestamp"))
///     .build()
///     .expect("a valid CRD");
/// assert_eq!(crd["metadata"]["name"], "policies.demo.rekon.dev");
/// assert_eq!(crd["spec"]["scope"], "Cluster");
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct Crd {
    group: String,
    version: String,
    kind: String,
    plural: Option<String>,
    singular: Option<String>,
    namespaced: bool,
    served: bool,
    storage: bool,
    short_names: Vec<String>,
    categories: Vec<String>,
    printer_columns: Vec<PrinterColumn>,
    scale: Option<Scale>,
    spec: Option<Result<Value, String>>,
    status: Option<Result<Value, String>>,
}

impl Crd {
    /// A cluster-scoped, served and storage version `version` of `kind` in
    /// `group`, with no schema yet.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
    ) -> Self {
        Crd {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: None,
            singular: None,
            namespaced: false,
            served: true,
            storage: true,
            short_names: Vec::new(),
            categories: Vec::new(),
            printer_columns: Vec::new(),
            scale: None,
            spec: None,
            status: None,
        }
    }

    /// The resource name (default: [`plural`] of the kind).
    pub fn plural(mut self, plural: impl Into<String>) -> Self {
        self.plural = Some(plural.into());
        self
    }

    /// The singular name (default: the lower-case kind).
    pub fn singular(mut self, singular: impl Into<String>) -> Self {
        self.singular = Some(singular.into());
        self
    }

    /// Namespaced (`true`) or cluster-scoped (`false`, the default).
    pub fn namespaced(mut self, namespaced: bool) -> Self {
        self.namespaced = namespaced;
        self
    }

    /// Whether the version is served (default `true`).
    pub fn served(mut self, served: bool) -> Self {
        self.served = served;
        self
    }

    /// Whether the version is the storage version (default `true`).
    pub fn storage(mut self, storage: bool) -> Self {
        self.storage = storage;
        self
    }

    /// Adds a short name (`kubectl get ap`).
    pub fn short_name(mut self, short_name: impl Into<String>) -> Self {
        self.short_names.push(short_name.into());
        self
    }

    /// Adds a category (`kubectl get all`).
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.categories.push(category.into());
        self
    }

    /// Adds a printer column.
    pub fn printer_column(mut self, column: PrinterColumn) -> Self {
        self.printer_columns.push(column);
        self
    }

    /// Adds the scale subresource.
    pub fn scale(mut self, scale: Scale) -> Self {
        self.scale = Some(scale);
        self
    }

    /// The spec's schema, from its type.
    pub fn spec<T: JsonSchema + ?Sized>(mut self) -> Self {
        self.spec = Some(schema_for::<T>());
        self
    }

    /// The spec's schema, hand-made (made structural like [`schema_for`]'s).
    pub fn spec_schema(mut self, schema: Value) -> Self {
        self.spec = Some(structural(schema, "spec"));
        self
    }

    /// The status's schema, from its type; adds the status subresource.
    pub fn status<T: JsonSchema + ?Sized>(mut self) -> Self {
        self.status = Some(schema_for::<T>());
        self
    }

    /// The status's schema, hand-made; adds the status subresource.
    pub fn status_schema(mut self, schema: Value) -> Self {
        self.status = Some(structural(schema, "status"));
        self
    }

    /// The CustomResourceDefinition, or what is wrong with it (a schema that
    /// has no structural form, a bad printer column, no spec schema...).
    pub fn build(&self) -> Result<Value, String> {
        let what = format!("the CRD of {}/{} {}", self.group, self.version, self.kind);
        self.build_checked().map_err(|e| format!("{what}: {e}"))
    }

    fn build_checked(&self) -> Result<Value, String> {
        if !self.group.contains('.') {
            return Err(format!(
                "group {:?} is not a DNS subdomain with a dot, e.g. \"demo.example.com\"",
                self.group
            ));
        }
        if self.version.is_empty() || self.kind.is_empty() {
            return Err("the version and the kind must not be empty".into());
        }
        let spec = match &self.spec {
            Some(spec) => spec.clone()?,
            None => return Err("no spec schema: call .spec::<YourSpec>()".into()),
        };
        let status = self.status.clone().transpose()?;
        for column in &self.printer_columns {
            column.check()?;
        }
        if let Some(scale) = &self.scale {
            scale.check()?;
        }

        let plural = self.plural.clone().unwrap_or_else(|| plural(&self.kind));
        let singular = self
            .singular
            .clone()
            .unwrap_or_else(|| self.kind.to_ascii_lowercase());
        let mut names = json!({
            "kind": self.kind,
            "listKind": format!("{}List", self.kind),
            "plural": plural,
            "singular": singular,
        });
        if !self.short_names.is_empty() {
            names["shortNames"] = json!(self.short_names);
        }
        if !self.categories.is_empty() {
            names["categories"] = json!(self.categories);
        }

        let mut version =
            json!({"name": self.version, "served": self.served, "storage": self.storage});
        let mut subresources = Map::new();
        if status.is_some() {
            subresources.insert("status".into(), json!({}));
        }
        if let Some(scale) = &self.scale {
            subresources.insert("scale".into(), scale.to_value());
        }
        if !subresources.is_empty() {
            version["subresources"] = Value::Object(subresources);
        }
        if !self.printer_columns.is_empty() {
            let columns: Vec<Value> = self
                .printer_columns
                .iter()
                .map(PrinterColumn::to_value)
                .collect();
            version["additionalPrinterColumns"] = Value::Array(columns);
        }
        let spec_required = spec
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        let mut properties = Map::new();
        properties.insert("spec".into(), spec);
        if let Some(status) = status {
            properties.insert("status".into(), status);
        }
        let mut root = json!({"type": "object"});
        if spec_required {
            root["required"] = json!(["spec"]);
        }
        root["properties"] = Value::Object(properties);
        version["schema"] = json!({"openAPIV3Schema": root});

        Ok(json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{}", self.group)},
            "spec": {
                "group": self.group,
                "names": names,
                "scope": if self.namespaced { "Namespaced" } else { "Cluster" },
                "versions": [version],
            },
        }))
    }
}

/// The usual resource name of a kind: lower case, plural (`App` -> `apps`,
/// `Policy` -> `policies`, `Ingress` -> `ingresses`); the rule of
/// `#[derive(CustomResource)]` when no `plural` is given.
pub fn plural(kind: &str) -> String {
    let mut out = vec![0; kind.len() + 2];
    let len = __private::plural_into(kind.as_bytes(), &mut out);
    out.truncate(len);
    String::from_utf8(out).expect("lower-casing ASCII letters keeps UTF-8 valid")
}

/// The structural schema of `T`: what schemars generates, made structural
/// (see the [module docs](self#the-schema)). Fails on what Kubernetes
/// cannot express (a recursive type, a tuple, an enum whose variants are of
/// different types...), naming the field.
pub fn schema_for<T: JsonSchema + ?Sized>() -> Result<Value, String> {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    structural(schema.to_value(), &T::schema_name())
}

/// Makes a JSON schema (from schemars, or hand-made) a Kubernetes
/// structural schema, the way [`schema_for`] does; `name` names the root in
/// errors.
pub fn structural(mut schema: Value, name: &str) -> Result<Value, String> {
    make_structural(&mut schema, name)?;
    Ok(schema)
}

/// Schema keywords Kubernetes does not take, or that mean nothing to it.
const DROPPED: [&str; 14] = [
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "deprecated",
    "readOnly",
    "writeOnly",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contentEncoding",
    "contentMediaType",
];

/// Keywords with no structural form: an error names them.
const UNSUPPORTED: [&str; 10] = [
    "patternProperties",
    "prefixItems",
    "additionalItems",
    "dependencies",
    "dependentSchemas",
    "dependentRequired",
    "contains",
    "if",
    "then",
    "else",
];

/// The order of keywords in what we write (others follow in their order).
const ORDER: [&str; 33] = [
    "type",
    "format",
    "description",
    "enum",
    "default",
    "example",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "nullable",
    PRESERVE,
    "x-kubernetes-int-or-string",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "oneOf",
    "anyOf",
    "not",
];

fn make_structural(schema: &mut Value, at: &str) -> Result<(), String> {
    let obj = match schema {
        Value::Bool(true) => {
            *schema = json!({PRESERVE: true});
            return Ok(());
        }
        Value::Bool(false) => {
            return Err(format!(
                "{at}: the schema `false` (no value at all) has no Kubernetes form"
            ));
        }
        Value::Object(obj) => obj,
        other => return Err(format!("{at}: not a schema: {other}")),
    };
    if let Some(reference) = obj.get("$ref") {
        return Err(format!(
            "{at}: still refers to {reference} after inlining: a recursive type has no \
             Kubernetes structural schema (give the field a hand-made one with \
             #[schemars(schema_with = \"...\")])"
        ));
    }
    if let Some(key) = UNSUPPORTED.iter().find(|k| obj.contains_key(**k)) {
        let hint = if *key == "prefixItems" {
            " (a tuple: use a struct)"
        } else {
            ""
        };
        return Err(format!(
            "{at}: `{key}` has no Kubernetes structural form{hint}"
        ));
    }
    if obj.get("items").is_some_and(Value::is_array) {
        return Err(format!(
            "{at}: `items` as a list (a tuple) has no Kubernetes structural form: use a struct"
        ));
    }
    for key in DROPPED {
        obj.remove(key);
    }
    if let Some(examples) = obj.remove("examples")
        && let Some(first) = examples.as_array().and_then(|e| e.first())
        && !obj.contains_key("example")
    {
        obj.insert("example".into(), first.clone());
    }
    if let Some(value) = obj.remove("const") {
        obj.insert("enum".into(), json!([value]));
    }
    single_type(obj, at)?;
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
        if values.is_empty() {
            return Err(format!(
                "{at}: only `null` is allowed, which Kubernetes cannot say"
            ));
        }
    }

    // The subschemas.
    if let Some(Value::Object(properties)) = obj.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            make_structural(property, &format!("{at}.{name}"))?;
        }
    }
    if let Some(items) = obj.get_mut("items") {
        make_structural(items, &format!("{at}[]"))?;
    }
    match obj.remove("additionalProperties") {
        // A map of anything (`Map<String, Value>`).
        Some(Value::Bool(true)) => {
            obj.insert(PRESERVE.into(), json!(true));
        }
        // `deny_unknown_fields`: the API server prunes unknown fields.
        Some(Value::Bool(false)) | None => {}
        Some(mut values) => {
            make_structural(&mut values, &format!("{at}.*"))?;
            if obj
                .get("properties")
                .is_some_and(|p| p.as_object().is_some_and(|p| !p.is_empty()))
            {
                // A map flattened into a struct: both are not allowed.
                obj.insert(PRESERVE.into(), json!(true));
            } else {
                obj.insert("additionalProperties".into(), values);
            }
        }
    }
    if let Some(not) = obj.get_mut("not") {
        make_structural(not, &format!("{at} (not)"))?;
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = obj.get_mut(key) {
            // `Option<T>` is `anyOf: [T, null]`: not required is enough.
            branches.retain(|b| !is_null_schema(b));
            for (i, branch) in branches.iter_mut().enumerate() {
                make_structural(branch, &format!("{at} ({key} #{i})"))?;
            }
        }
    }
    if let Some(all) = obj.remove("allOf") {
        for branch in all.as_array().into_iter().flatten() {
            merge_into(obj, branch.clone(), at)?;
        }
    }
    for key in ["anyOf", "oneOf"] {
        match obj.remove(key) {
            Some(Value::Array(mut branches)) if branches.len() == 1 => {
                merge_into(obj, branches.remove(0), at)?;
            }
            Some(Value::Array(branches)) if branches.is_empty() => {}
            Some(Value::Array(branches)) => hoist(obj, key, branches, at)?,
            Some(other) => return Err(format!("{at}: `{key}` is not a list: {other}")),
            None => {}
        }
    }

    // Keywords.
    if obj.get("type").and_then(Value::as_str) == Some("integer") {
        let format = match obj.get("format").and_then(Value::as_str) {
            Some("int8" | "int16" | "int32" | "uint8" | "uint16" | "uint32") => Some("int32"),
            Some("int64" | "uint64" | "int" | "uint") => Some("int64"),
            Some("int128" | "uint128") => None,
            Some(other) => Some(other),
            None => None,
        }
        .map(str::to_owned);
        match format {
            Some(format) => obj.insert("format".into(), json!(format)),
            None => obj.remove("format"),
        };
    }
    for (bound, exclusive) in [
        ("minimum", "exclusiveMinimum"),
        ("maximum", "exclusiveMaximum"),
    ] {
        // JSON Schema's exclusive bound is a number, OpenAPI 3.0's a flag.
        if let Some(limit) = obj.get(exclusive).filter(|v| v.is_number()).cloned() {
            obj.insert(bound.into(), limit);
            obj.insert(exclusive.into(), json!(true));
        }
    }
    obj.remove("uniqueItems");
    if !obj.contains_key("type") {
        if let Some(ty) = inferred_type(obj) {
            obj.insert("type".into(), json!(ty));
        } else if !obj.contains_key("x-kubernetes-int-or-string") {
            // No type at all (e.g. a documented `serde_json::Value`): anything goes.
            obj.insert(PRESERVE.into(), json!(true));
        }
    }
    *obj = ordered(std::mem::take(obj));
    Ok(())
}

/// `type: [T, "null"]` (an `Option<T>`) is `type: T`.
fn single_type(obj: &mut Map<String, Value>, at: &str) -> Result<(), String> {
    let types = match obj.get("type") {
        Some(Value::Array(types)) => types.clone(),
        Some(Value::String(t)) if t == "null" => {
            return Err(format!("{at}: the type `null` has no Kubernetes form"));
        }
        _ => return Ok(()),
    };
    let types: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
    match types.as_slice() {
        [one] => {
            obj.insert("type".into(), one.clone());
            Ok(())
        }
        [] => Err(format!("{at}: the type `null` has no Kubernetes form")),
        several => Err(format!(
            "{at}: several types ({}): a Kubernetes field has one type \
             (for an int or a string, use a hand-made schema with x-kubernetes-int-or-string)",
            Value::Array(several.to_vec())
        )),
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const").is_some_and(Value::is_null)
        || schema.get("enum") == Some(&json!([null]))
}

fn inferred_type(obj: &Map<String, Value>) -> Option<&'static str> {
    if obj.contains_key("properties") || obj.contains_key("additionalProperties") {
        return Some("object");
    }
    if obj.contains_key("items") {
        return Some("array");
    }
    let values = obj.get("enum")?.as_array()?;
    let all = |f: fn(&Value) -> bool| values.iter().all(f);
    if all(Value::is_string) {
        Some("string")
    } else if all(Value::is_boolean) {
        Some("boolean")
    } else if all(|v| v.is_i64() || v.is_u64()) {
        Some("integer")
    } else if all(Value::is_number) {
        Some("number")
    } else {
        None
    }
}

/// Merges a subschema into its parent (`allOf`, or the one branch left of
/// an `anyOf`). The parent's annotations win: a field's doc comment over
/// its type's.
fn merge_into(obj: &mut Map<String, Value>, branch: Value, at: &str) -> Result<(), String> {
    let Value::Object(branch) = branch else {
        return Err(format!("{at}: a subschema is not an object: {branch}"));
    };
    for (key, value) in branch {
        match obj.get_mut(&key) {
            None => {
                obj.insert(key, value);
            }
            Some(_) if matches!(key.as_str(), "description" | "default" | "example") => {}
            Some(Value::Object(properties)) if key == "properties" => {
                for (name, schema) in value.as_object().into_iter().flatten() {
                    merge_property(properties, name, schema.clone(), at)?;
                }
            }
            Some(Value::Array(required)) if key == "required" => {
                for name in value.as_array().into_iter().flatten() {
                    if !required.contains(name) {
                        required.push(name.clone());
                    }
                }
            }
            Some(existing) if *existing == value => {}
            Some(existing) => {
                return Err(format!(
                    "{at}: combined subschemas disagree on `{key}` ({existing} and {value})"
                ));
            }
        }
    }
    Ok(())
}

/// Adds property `name` to `properties`; a property two variants share
/// must have one schema, except for their `enum`s (a tag's values), which
/// are joined.
fn merge_property(
    properties: &mut Map<String, Value>,
    name: &str,
    schema: Value,
    at: &str,
) -> Result<(), String> {
    let Some(existing) = properties.get_mut(name) else {
        properties.insert(name.to_owned(), schema);
        return Ok(());
    };
    if *existing == schema {
        return Ok(());
    }
    let without = |s: &Value| {
        let mut s = s.clone();
        if let Some(s) = s.as_object_mut() {
            s.remove("enum");
            s.remove("description");
        }
        s
    };
    if let (Some(Value::Array(values)), Some(Value::Array(more))) =
        (existing.get("enum").cloned(), schema.get("enum"))
        && without(existing) == without(&schema)
    {
        let mut values = values;
        for value in more {
            if !values.contains(value) {
                values.push(value.clone());
            }
        }
        existing["enum"] = Value::Array(values);
        return Ok(());
    }
    Err(format!(
        "{at}.{name}: the enum's variants give this property different schemas \
         ({existing} and {schema}); Kubernetes needs one"
    ))
}

/// An enum's `oneOf`/`anyOf`, hoisted: unit variants into one `enum`,
/// variants with fields into one object with all their properties (each
/// variant keeping only its `required`).
fn hoist(
    obj: &mut Map<String, Value>,
    key: &str,
    branches: Vec<Value>,
    at: &str,
) -> Result<(), String> {
    let is_scalar = |b: &Value| {
        b.as_object().is_some_and(|o| {
            o.contains_key("enum")
                && o.keys()
                    .all(|k| matches!(k.as_str(), "type" | "enum" | "description"))
        })
    };
    let is_object = |b: &Value| b.get("type").and_then(Value::as_str) == Some("object");
    let mixed = || {
        format!(
            "{at}: the variants of this enum are of different kinds (unit variants with \
             variants holding data, or values of different types); a Kubernetes field has \
             one type: use #[serde(tag = \"...\")] or a hand-made schema \
             (#[schemars(schema_with = \"...\")])"
        )
    };
    let mut parent_type = |ty: &Value| match obj.get("type") {
        Some(existing) if existing != ty => Err(mixed()),
        Some(_) => Ok(()),
        None => {
            obj.insert("type".into(), ty.clone());
            Ok(())
        }
    };
    if branches.iter().all(is_scalar) {
        let types: BTreeSet<String> = branches
            .iter()
            .filter_map(|b| b.get("type"))
            .map(Value::to_string)
            .collect();
        if types.len() > 1 {
            return Err(mixed());
        }
        if let Some(ty) = branches.iter().find_map(|b| b.get("type")) {
            parent_type(ty)?;
        }
        let mut values: Vec<Value> = Vec::new();
        for value in branches
            .iter()
            .filter_map(|b| b.get("enum"))
            .filter_map(Value::as_array)
            .flatten()
        {
            if !values.contains(value) {
                values.push(value.clone());
            }
        }
        obj.insert("enum".into(), Value::Array(values));
        return Ok(());
    }
    if !branches.iter().all(is_object) {
        return Err(mixed());
    }
    parent_type(&json!("object"))?;
    let mut rests = Vec::new();
    for branch in branches {
        let Value::Object(mut branch) = branch else {
            return Err(mixed());
        };
        if let Some(Value::Object(properties)) = branch.remove("properties") {
            let parent = obj
                .entry("properties")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .ok_or_else(|| format!("{at}: `properties` is not an object"))?;
            for (name, schema) in properties {
                merge_property(parent, &name, schema, at)?;
            }
        }
        if branch.get(PRESERVE) == Some(&json!(true)) {
            obj.insert(PRESERVE.into(), json!(true));
        }
        let mut rest = Map::new();
        if let Some(required) = branch
            .remove("required")
            .filter(|r| r.as_array().is_some_and(|r| !r.is_empty()))
        {
            rest.insert("required".into(), required);
        }
        rests.push(Value::Object(rest));
    }
    // A variant that requires nothing matches every object: the others'
    // `required` then say nothing either (and would break `oneOf`).
    if rests
        .iter()
        .all(|r| r.as_object().is_some_and(|r| !r.is_empty()))
    {
        obj.insert(key.into(), Value::Array(rests));
    }
    Ok(())
}

fn ordered(mut obj: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for key in ORDER {
        if let Some(value) = obj.remove(key) {
            out.insert(key.into(), value);
        }
    }
    out.extend(obj);
    out
}

/// Combines the CRDs of several versions of one kind (as
/// [`CustomResource::crd`] makes them) into one CRD with all their
/// versions, in the order given.
///
/// They must agree on the group, the scope and the names (kind, plural,
/// singular, list kind); their short names and categories are joined.
/// Exactly one version may be the storage version, and no version may
/// come twice.
///
/// ```
/// use rekon_sdk::crd::{Crd, merge};
/// use rekon_sdk::serde_json::json;
///
/// let v1 = Crd::new("demo.rekon.dev", "v1", "Thing").spec_schema(json!({"type": "object"}));
/// let v2 = Crd::new("demo.rekon.dev", "v2", "Thing")
///     .storage(false)
///     .spec_schema(json!({"type": "object"}));
/// let crd = merge([v1.build()?, v2.build()?])?;
/// assert_eq!(crd["spec"]["versions"][1]["name"], "v2");
/// # Ok::<(), String>(())
/// ```
pub fn merge(crds: impl IntoIterator<Item = Value>) -> Result<Value, String> {
    let mut crds = crds.into_iter();
    let Some(mut merged) = crds.next() else {
        return Err("no CRD to merge".into());
    };
    let describe = |crd: &Value| {
        let versions: Vec<&str> = versions_of(crd)
            .iter()
            .filter_map(|v| v.get("name").and_then(Value::as_str))
            .collect();
        format!(
            "{} {}",
            crd.pointer("/spec/names/kind")
                .and_then(Value::as_str)
                .unwrap_or("?"),
            versions.join("+")
        )
    };
    check_is_crd(&merged, 1)?;
    for (i, crd) in crds.enumerate() {
        check_is_crd(&crd, i + 2)?;
        let (first, this) = (describe(&merged), describe(&crd));
        for pointer in [
            "/spec/group",
            "/spec/scope",
            "/spec/names/kind",
            "/spec/names/plural",
            "/spec/names/singular",
            "/spec/names/listKind",
        ] {
            let (a, b) = (merged.pointer(pointer), crd.pointer(pointer));
            if a != b {
                let show =
                    |v: Option<&Value>| v.map_or_else(|| "nothing".to_owned(), Value::to_string);
                return Err(format!(
                    "cannot merge the CRD of {this} into that of {first}: {} differs ({} and {})",
                    pointer.trim_start_matches("/spec/").replace('/', "."),
                    show(a),
                    show(b)
                ));
            }
        }
        for list in ["shortNames", "categories"] {
            let more = crd
                .pointer(&format!("/spec/names/{list}"))
                .and_then(Value::as_array)
                .cloned();
            if let Some(more) = more {
                let names = &mut merged["spec"]["names"];
                let mut all = names
                    .get(list)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for name in more {
                    if !all.contains(&name) {
                        all.push(name);
                    }
                }
                names[list] = Value::Array(all);
            }
        }
        let existing: Vec<Value> = versions_of(&merged)
            .iter()
            .filter_map(|v| v.get("name").cloned())
            .collect();
        for version in versions_of(&crd) {
            if let Some(name) = version.get("name").filter(|n| existing.contains(n)) {
                return Err(format!(
                    "cannot merge the CRD of {this} into that of {first}: version {name} comes twice"
                ));
            }
            if let Some(Value::Array(versions)) = merged.pointer_mut("/spec/versions") {
                versions.push(version.clone());
            }
        }
    }
    let storage: Vec<String> = versions_of(&merged)
        .iter()
        .filter(|v| v.get("storage") == Some(&json!(true)))
        .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    match storage.as_slice() {
        [_] => Ok(merged),
        [] => Err(format!(
            "the CRD of {} has no storage version: exactly one version needs storage = true",
            describe(&merged)
        )),
        several => Err(format!(
            "the CRD of {} has {} storage versions ({}): exactly one may have storage = true",
            describe(&merged),
            several.len(),
            several.join(", ")
        )),
    }
}

fn versions_of(crd: &Value) -> &[Value] {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn check_is_crd(crd: &Value, position: usize) -> Result<(), String> {
    if crd.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition")
        || !crd.pointer("/spec/versions").is_some_and(Value::is_array)
    {
        return Err(format!(
            "CRD #{position} to merge is not a CustomResourceDefinition with spec.versions"
        ));
    }
    Ok(())
}

/// `metav1.Condition`'s schema, for `Vec<Condition>` in a status.
impl JsonSchema for Condition {
    fn schema_name() -> Cow<'static, str> {
        "Condition".into()
    }

    fn schema_id() -> Cow<'static, str> {
        "rekon_sdk::conditions::Condition".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "required": ["type", "status"],
            "properties": {
                "type": {"type": "string", "description": "Condition type in CamelCase, e.g. Ready."},
                "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                "reason": {"type": "string", "description": "One CamelCase word saying why."},
                "message": {"type": "string", "description": "Human-readable detail."},
                "lastTransitionTime": {
                    "type": "string",
                    "format": "date-time",
                    "description": "When status last changed.",
                },
                "observedGeneration": {
                    "type": "integer",
                    "format": "int64",
                    "description": "The metadata.generation the condition was computed from.",
                },
            },
        })
    }
}

/// The environment variable that makes [`check_file`] rewrite the file.
#[cfg(not(target_arch = "wasm32"))]
pub const UPDATE_ENV: &str = "REKON_UPDATE_CRDS";

/// A CRD as YAML, after one comment line saying it is generated and how to
/// regenerate it (by the running package's tests).
#[cfg(not(target_arch = "wasm32"))]
pub fn to_yaml(crd: &Value) -> String {
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "<package>".into());
    let yaml = serde_yaml::to_string(crd).expect("a JSON value is YAML");
    format!(
        "# Generated from Rust types by rekon_sdk::crd: do not edit. \
         Regenerate: {UPDATE_ENV}=1 cargo test -p {package}\n{yaml}"
    )
}

/// Checks that the YAML file at `path` says the same as `crd` (as values:
/// key order and comments do not matter); on a mismatch, the error is a
/// line diff of the two (keys sorted) and how to regenerate the file. With
/// `REKON_UPDATE_CRDS=1` set, writes [`to_yaml`]`(crd)` to `path` instead.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_file(crd: &Value, path: impl AsRef<std::path::Path>) -> Result<(), String> {
    let path = path.as_ref();
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "<package>".into());
    let hint = format!("regenerate it with `{UPDATE_ENV}=1 cargo test -p {package}`");
    if std::env::var_os(UPDATE_ENV).is_some_and(|v| !v.is_empty() && v != "0") {
        return std::fs::write(path, to_yaml(crd))
            .map_err(|e| format!("cannot write {}: {e}", path.display()));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}; {hint}", path.display()))?;
    let checked_in: Value = serde_yaml::from_str(&text)
        .map_err(|e| format!("{} is not one YAML document: {e}; {hint}", path.display()))?;
    if checked_in == *crd {
        return Ok(());
    }
    let diff = rekon_rules::diff_lines(&sorted_yaml(&checked_in), &sorted_yaml(crd), 2).join("\n");
    Err(format!(
        "{} is not the CRD the Rust types make (- in the file, + generated):\n{diff}\n{hint}",
        path.display()
    ))
}

#[cfg(not(target_arch = "wasm32"))]
fn sorted_yaml(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(obj) => {
                let mut keys: Vec<&String> = obj.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&obj[k])))
                        .collect(),
                )
            }
            Value::Array(values) => Value::Array(values.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    serde_yaml::to_string(&sorted(value)).expect("a JSON value is YAML")
}

/// What `#[derive(CustomResource)]` emits refers to. Not a public API.
#[doc(hidden)]
pub mod __private {
    /// Writes the plural of `kind` (see [`super::plural`]) into `out`
    /// (room for `kind.len() + 2` bytes); returns its length. A `const fn`
    /// so that the derive's `PLURAL` follows the same rule.
    pub const fn plural_into(kind: &[u8], out: &mut [u8]) -> usize {
        let mut len = kind.len();
        let mut i = 0;
        while i < len {
            out[i] = kind[i].to_ascii_lowercase();
            i += 1;
        }
        if len == 0 {
            return 0;
        }
        let last = out[len - 1];
        let before = if len >= 2 { out[len - 2] } else { 0 };
        let suffix: &[u8] = if last == b'y' && !matches!(before, b'a' | b'e' | b'i' | b'o' | b'u') {
            len -= 1;
            b"ies"
        } else if last == b's' || last == b'x' || (last == b'h' && before == b'c') {
            b"es"
        } else {
            b"s"
        };
        let mut k = 0;
        while k < suffix.len() {
            out[len + k] = suffix[k];
            k += 1;
        }
        len + suffix.len()
    }

    /// The plural of `kind` in an `N`-byte buffer, and its length.
    pub const fn plural<const N: usize>(kind: &str) -> ([u8; N], usize) {
        let mut out = [0; N];
        let len = plural_into(kind.as_bytes(), &mut out);
        (out, len)
    }

    /// The first `len` bytes of `bytes`, as a string.
    pub const fn as_str(bytes: &'static [u8], len: usize) -> &'static str {
        match core::str::from_utf8(bytes.split_at(len).0) {
            Ok(s) => s,
            Err(_) => panic!("the plural of a UTF-8 kind is UTF-8"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};

    use super::*;

    fn schema<T: JsonSchema>() -> Value {
        schema_for::<T>().expect("a structural schema")
    }

    /// Every schema keyword Kubernetes refuses, anywhere in `schema`.
    fn forbidden_keywords(schema: &Value) -> Vec<String> {
        let mut found = Vec::new();
        if let Some(obj) = schema.as_object() {
            for key in [
                "$ref",
                "$defs",
                "$schema",
                "definitions",
                "title",
                "anyOf",
                "allOf",
            ] {
                if obj.contains_key(key) {
                    found.push(key.to_owned());
                }
            }
            if obj.get("type").is_some_and(Value::is_array) {
                found.push("type list".into());
            }
            for (key, sub) in obj {
                match key.as_str() {
                    "properties" => sub
                        .as_object()
                        .into_iter()
                        .flatten()
                        .for_each(|(_, s)| found.extend(forbidden_keywords(s))),
                    "items" | "additionalProperties" => found.extend(forbidden_keywords(sub)),
                    _ => {}
                }
            }
        }
        found
    }

    /// Inner part of an outer struct, used twice.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Endpoint {
        /// Host name.
        host: String,
        port: Option<u16>,
    }

    #[derive(JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Shapes {
        name: String,
        nick_name: Option<String>,
        count_u32: u32,
        count_i32: i32,
        big_i64: i64,
        big_u64: u64,
        size: usize,
        #[serde(rename = "primary")]
        main_endpoint: Endpoint,
        /// The spare, if any.
        spare: Option<Endpoint>,
        endpoints: Vec<Endpoint>,
        labels: BTreeMap<String, String>,
        anything: Value,
        /// Free-form settings.
        settings: Map<String, Value>,
        #[serde(default)]
        tags: BTreeSet<String>,
        ratio: f64,
    }

    #[test]
    fn structural_schema_of_common_shapes() {
        let s = schema::<Shapes>();
        assert_eq!(forbidden_keywords(&s), Vec::<String>::new(), "{s:#}");
        assert_eq!(s["type"], "object");
        // Option and #[serde(default)] fields are not required, and not nullable.
        assert_eq!(
            s["required"],
            json!([
                "name",
                "countU32",
                "countI32",
                "bigI64",
                "bigU64",
                "size",
                "primary",
                "endpoints",
                "labels",
                "anything",
                "settings",
                "ratio"
            ])
        );
        assert_eq!(s["properties"]["nickName"], json!({"type": "string"}));
        let p = &s["properties"];
        assert_eq!(
            p["countU32"],
            json!({"type": "integer", "format": "int32", "minimum": 0})
        );
        assert_eq!(p["countI32"], json!({"type": "integer", "format": "int32"}));
        assert_eq!(p["bigI64"], json!({"type": "integer", "format": "int64"}));
        assert_eq!(
            p["bigU64"],
            json!({"type": "integer", "format": "int64", "minimum": 0})
        );
        assert_eq!(
            p["size"],
            json!({"type": "integer", "format": "int64", "minimum": 0})
        );
        assert_eq!(p["ratio"], json!({"type": "number", "format": "double"}));
        // Nested structs are inlined, each time, with their docs.
        let endpoint = json!({
            "type": "object",
            "required": ["host"],
            "properties": {
                "host": {"type": "string", "description": "Host name."},
                "port": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 65535},
            },
        });
        let mut documented = endpoint.clone();
        documented["description"] = json!("Inner part of an outer struct, used twice.");
        assert_eq!(p["primary"], ordered_value(documented.clone()));
        assert_eq!(
            p["endpoints"],
            json!({"type": "array", "items": ordered_value(documented)})
        );
        // The field's doc comment wins over its type's.
        assert_eq!(p["spare"]["description"], "The spare, if any.");
        assert_eq!(p["spare"]["properties"], endpoint["properties"]);
        // Maps, free-form values, sets.
        assert_eq!(
            p["labels"],
            json!({"type": "object", "additionalProperties": {"type": "string"}})
        );
        assert_eq!(p["anything"], json!({PRESERVE: true}));
        assert_eq!(
            p["settings"],
            json!({"type": "object", "description": "Free-form settings.", PRESERVE: true})
        );
        assert_eq!(
            p["tags"],
            json!({"type": "array", "default": [], "items": {"type": "string"}})
        );
    }

    fn ordered_value(value: Value) -> Value {
        match value {
            Value::Object(obj) => Value::Object(ordered(obj)),
            other => other,
        }
    }

    fn five() -> i32 {
        5
    }

    #[derive(JsonSchema)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Validated {
        /// Pods to run.
        #[serde(default = "five")]
        #[schemars(range(min = 0, max = 10))]
        replicas: i32,
        #[schemars(length(min = 1), regex(pattern = "^[a-z]+$"))]
        name: String,
        #[schemars(extend("nullable" = true))]
        maybe: Option<String>,
        mode: Mode,
        documented_mode: DocumentedMode,
        maybe_mode: Option<DocumentedMode>,
        #[serde(flatten)]
        extra: BTreeMap<String, Value>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Mode {
        Fast,
        #[serde(rename = "careful")]
        Slow,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum DocumentedMode {
        /// Quickly.
        Fast,
        /// Slowly.
        Slow,
    }

    #[test]
    fn defaults_ranges_enums_and_nullable_on_request() {
        let s = schema::<Validated>();
        let p = &s["properties"];
        assert_eq!(
            p["replicas"],
            json!({"type": "integer", "format": "int32", "description": "Pods to run.",
                   "default": 5, "minimum": 0, "maximum": 10})
        );
        assert_eq!(
            p["name"],
            json!({"type": "string", "minLength": 1, "pattern": "^[a-z]+$"})
        );
        assert_eq!(p["maybe"], json!({"type": "string", "nullable": true}));
        assert_eq!(
            p["mode"],
            json!({"type": "string", "enum": ["Fast", "careful"]})
        );
        assert_eq!(
            p["documentedMode"],
            json!({"type": "string", "enum": ["Fast", "Slow"]})
        );
        assert_eq!(p["maybeMode"], p["documentedMode"]);
        assert_eq!(s["required"], json!(["name", "mode", "documentedMode"]));
        // A flattened map: the other fields are kept as they come.
        assert_eq!(s[PRESERVE], true);
        assert!(s.get("additionalProperties").is_none(), "{s:#}");
    }

    #[derive(JsonSchema)]
    #[serde(tag = "kind", rename_all = "camelCase")]
    #[allow(dead_code)]
    enum Source {
        Git { url: String, branch: Option<String> },
        Bucket { bucket: String },
    }

    #[test]
    fn tagged_enum_is_one_object_with_every_variants_properties() {
        let s = schema::<Source>();
        assert_eq!(forbidden_keywords(&s), Vec::<String>::new(), "{s:#}");
        assert_eq!(s["type"], "object");
        assert_eq!(
            s["properties"]["kind"],
            json!({"type": "string", "enum": ["git", "bucket"]})
        );
        assert_eq!(s["properties"]["branch"], json!({"type": "string"}));
        assert_eq!(
            s["oneOf"],
            json!([{"required": ["kind", "url"]}, {"required": ["kind", "bucket"]}])
        );
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Mixed {
        Nothing,
        Something(String),
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        children: Vec<Tree>,
    }

    #[test]
    fn what_kubernetes_cannot_say_is_an_error_naming_the_place() {
        let mixed = schema_for::<Mixed>().expect_err("mixed enum");
        assert!(
            mixed.starts_with("Mixed:") && mixed.contains("serde(tag"),
            "{mixed}"
        );
        let tree = schema_for::<Tree>().expect_err("recursive");
        assert!(
            tree.starts_with("Tree.children[]:") && tree.contains("recursive"),
            "{tree}"
        );
        let tuple = schema_for::<(i32, String)>().expect_err("tuple");
        assert!(tuple.contains("tuple"), "{tuple}");
        let int_or_string =
            structural(json!({"type": ["integer", "string"]}), "port").expect_err("two types");
        assert!(
            int_or_string.starts_with("port: several types"),
            "{int_or_string}"
        );
    }

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

    #[test]
    fn plural_rule_is_the_same_at_compile_time_and_run_time() {
        for (kind, plural_name) in [
            ("App", "apps"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Ingress", "ingresses"),
            ("Box", "boxes"),
            ("Match", "matches"),
            ("Y", "ies"),
            ("", ""),
        ] {
            assert_eq!(plural(kind), plural_name, "{kind}");
            let (buf, len) = __private::plural::<16>(kind);
            assert_eq!(std::str::from_utf8(&buf[..len]), Ok(plural_name), "{kind}");
        }
    }

    #[test]
    fn builder_refuses_bad_columns_scale_and_missing_spec() {
        let base =
            || Crd::new("demo.rekon.dev", "v1", "App").spec_schema(json!({"type": "object"}));
        let cases = [
            (
                "no spec",
                Crd::new("demo.rekon.dev", "v1", "App"),
                "no spec schema",
            ),
            (
                "group without a dot",
                Crd::new("demo", "v1", "App").spec_schema(json!({})),
                "DNS subdomain",
            ),
            (
                "column type",
                base().printer_column(PrinterColumn::new("X", "text", ".spec.x")),
                "has type \"text\"",
            ),
            (
                "column path",
                base().printer_column(PrinterColumn::new("X", "string", "spec.x")),
                "starts with a dot",
            ),
            (
                "column format",
                base().printer_column(PrinterColumn::new("X", "string", ".spec.x").format("uuid")),
                "format \"uuid\"",
            ),
            (
                "scale path",
                base().scale(Scale::new(".spec.replicas", ".spec.replicas")),
                "not under .status.",
            ),
        ];
        for (name, crd, expected) in cases {
            let err = crd.build().expect_err(name);
            assert!(
                err.starts_with("the CRD of ") && err.contains(expected),
                "{name}: {err}"
            );
        }
    }

    fn version(kind: &str, version: &str, storage: bool) -> Value {
        Crd::new("demo.rekon.dev", version, kind)
            .namespaced(true)
            .storage(storage)
            .spec_schema(json!({"type": "object"}))
            .build()
            .expect("valid")
    }

    #[test]
    fn merge_joins_versions_in_order() {
        let mut v1 = version("App", "v1", true);
        v1["spec"]["names"]["shortNames"] = json!(["ap"]);
        let mut v2 = version("App", "v2", false);
        v2["spec"]["names"]["shortNames"] = json!(["ap", "a"]);
        let merged = merge([version("App", "v1beta1", false), v1, v2]).expect("merges");
        let names: Vec<&Value> = versions_of(&merged).iter().map(|v| &v["name"]).collect();
        assert_eq!(names, [&json!("v1beta1"), &json!("v1"), &json!("v2")]);
        assert_eq!(merged["spec"]["names"]["shortNames"], json!(["ap", "a"]));
        assert_eq!(merged["metadata"]["name"], "apps.demo.rekon.dev");
    }

    #[test]
    fn merge_errors_say_what_differs() {
        let mut cluster = version("App", "v2", false);
        cluster["spec"]["scope"] = json!("Cluster");
        let cases = [
            ("nothing", vec![], "no CRD to merge"),
            (
                "two storage versions",
                vec![version("App", "v1", true), version("App", "v2", true)],
                "the CRD of App v1+v2 has 2 storage versions (v1, v2): exactly one may have storage = true",
            ),
            (
                "no storage version",
                vec![version("App", "v1", false)],
                "has no storage version",
            ),
            (
                "different kinds",
                vec![version("App", "v1", true), version("Thing", "v2", false)],
                "cannot merge the CRD of Thing v2 into that of App v1: names.kind differs (\"App\" and \"Thing\")",
            ),
            (
                "different scopes",
                vec![version("App", "v1", true), cluster],
                "scope differs (\"Namespaced\" and \"Cluster\")",
            ),
            (
                "a version twice",
                vec![version("App", "v1", true), version("App", "v1", false)],
                "version \"v1\" comes twice",
            ),
            (
                "not a CRD",
                vec![version("App", "v1", true), json!({"kind": "ConfigMap"})],
                "CRD #2 to merge is not a CustomResourceDefinition",
            ),
        ];
        for (name, crds, expected) in cases {
            let err = merge(crds).expect_err(name);
            assert!(err.contains(expected), "{name}: {err}");
        }
    }

    #[test]
    fn check_file_accepts_the_same_values_and_diffs_the_rest() {
        let dir = std::env::temp_dir().join(format!("rekon-crd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("crd.yaml");
        let crd = version("App", "v1", true);
        std::fs::write(&path, to_yaml(&crd)).expect("write");
        check_file(&crd, &path).expect("the generated file matches");

        // Another key order and a comment: still the same CRD.
        std::fs::write(&path, format!("# hand-made\n{}", sorted_yaml(&crd))).expect("write");
        check_file(&crd, &path).expect("order and comments do not matter");

        let mut changed = crd.clone();
        changed["spec"]["scope"] = json!("Cluster");
        let err = check_file(&changed, &path).expect_err("differs");
        assert!(
            err.contains("-   scope: Namespaced\n+   scope: Cluster\n"),
            "{err}"
        );
        assert!(
            err.contains("REKON_UPDATE_CRDS=1 cargo test -p rekon-sdk"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
