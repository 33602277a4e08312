//! The CustomResourceDefinition builder: what `#[derive(CustomResource)]`
//! calls, and usable by hand.

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::columns::{PrinterColumn, Scale};
use super::names::plural;
use super::schema::{schema_for, structural};

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
}
