//! What a CRD shows and scales by: `additionalPrinterColumns` entries (what
//! `kubectl get` prints) and the scale subresource, each checked as the API
//! server checks it.

use serde_json::{Value, json};

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

    pub(super) fn check(&self) -> Result<(), String> {
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

    pub(super) fn to_value(&self) -> Value {
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

    pub(super) fn check(&self) -> Result<(), String> {
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

    pub(super) fn to_value(&self) -> Value {
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
