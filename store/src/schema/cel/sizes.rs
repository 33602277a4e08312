//! The size bounds the real server derives from a schema for estimating
//! the cost of rules: each node's most elements (`MaxElements`: items,
//! properties, or the bytes of a string) and least serialised size
//! (`MinSerializedSize`), as `SchemaDeclType` sets them
//! (`apiserver/pkg/cel/common/schemas.go`), and the most times a rule's
//! node can occur in an object (`MaxCardinality`,
//! `apis/apiextensions/validation/cel_validation.go`).

use std::collections::BTreeMap;

use super::types::{escape, with_type_and_object_meta};
use crate::schema::Schema;

/// The largest request the real server accepts, in bytes.
pub(crate) const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;

/// The size bounds of a node and of the nodes below it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bounds {
    /// The most elements (`MaxElements`).
    pub max: u64,
    /// The least serialised size (`MinSerializedSize`).
    pub min: u64,
    /// The fields of an object, by escaped name.
    pub fields: BTreeMap<String, Bounds>,
    /// The items of a list, or the values of a map.
    pub elem: Option<Box<Bounds>>,
    /// Whether this is a map (its keys are strings with no bound).
    pub map: bool,
}

fn scalar(min: u64, max: u64) -> Bounds {
    Bounds {
        max,
        min,
        ..Bounds::default()
    }
}

fn non_negative(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// The bounds of a schema node (`SchemaDeclType`), `None` where CEL has no
/// type for it.
pub(crate) fn bounds(schema: &Schema, resource_root: bool) -> Option<Bounds> {
    if schema.int_or_string {
        let max = match schema.max_length {
            Some(n) => non_negative(n) * 4,
            None => MAX_REQUEST_BYTES - 2,
        };
        return Some(scalar(1, max));
    }
    let rooted;
    let schema = if resource_root {
        rooted = with_type_and_object_meta(schema);
        &rooted
    } else {
        schema
    };
    match schema.type_.as_deref()? {
        "array" => {
            let items = schema.items.as_deref()?;
            let elem = bounds(items, items.embedded_resource)?;
            let max = match schema.max_items {
                Some(n) => non_negative(n),
                None => (MAX_REQUEST_BYTES - 2) / (elem.min + 1),
            };
            Some(Bounds {
                max,
                min: 2,
                elem: Some(Box::new(elem)),
                ..Bounds::default()
            })
        }
        "object" => {
            if let Some(values) = schema.additional_schema() {
                let elem = bounds(values, values.embedded_resource)?;
                let max = match schema.max_properties {
                    Some(n) => non_negative(n),
                    None => (MAX_REQUEST_BYTES - 2) / (elem.min + 6),
                };
                return Some(Bounds {
                    max,
                    min: 2,
                    elem: Some(Box::new(elem)),
                    map: true,
                    ..Bounds::default()
                });
            }
            let mut min = 2;
            let mut fields = BTreeMap::new();
            for (name, prop) in &schema.properties {
                let Some(field) = bounds(prop, prop.embedded_resource) else {
                    continue;
                };
                if schema.required.contains(name) && prop.default.is_none() {
                    min += name.len() as u64 + field.min + 4;
                }
                if let Some(escaped) = escape(name) {
                    fields.insert(escaped, field);
                }
            }
            Some(Bounds {
                max: 0,
                min,
                fields,
                ..Bounds::default()
            })
        }
        "string" => Some(match schema.format.as_deref() {
            Some("byte") => scalar(
                2,
                schema
                    .max_length
                    .map_or(MAX_REQUEST_BYTES - 2, non_negative),
            ),
            Some("duration") => scalar(3, 32),
            Some("date") => scalar(12, 12),
            Some("date-time") => scalar(21, 32),
            _ => {
                let max = match (&schema.max_length, &schema.enum_) {
                    (Some(n), _) => non_negative(*n) * 4,
                    (None, Some(values)) if !values.is_empty() => values
                        .iter()
                        .filter_map(|v| v.as_str())
                        .map(|s| s.len() as u64)
                        .max()
                        .unwrap_or(0),
                    _ => MAX_REQUEST_BYTES - 2,
                };
                scalar(2, max)
            }
        }),
        "boolean" => Some(scalar(4, 0)),
        "number" | "integer" => Some(scalar(1, 0)),
        _ => None,
    }
}

impl Bounds {
    /// The size of what a path below the variable names (`sizeEstimator`):
    /// fields, `@items`, `@values`, `@keys`.
    pub fn size_at(&self, path: &[String]) -> Option<(u64, u64)> {
        let mut node = self;
        for step in path {
            node = match step.as_str() {
                "@items" | "@values" => node.elem.as_deref()?,
                "@keys" if node.map => return Some((0, 0)),
                "@keys" => return None,
                field => node.fields.get(field)?,
            };
        }
        Some((0, node.max))
    }
}

/// How many elements a node's children can number (`extractMaxElements`):
/// `None` when unbounded.
pub(crate) fn max_elements(schema: &Schema) -> Option<u64> {
    match schema.type_.as_deref() {
        Some("object") if schema.additional_properties.is_some() => {
            schema.max_properties.map(non_negative)
        }
        Some("array") => schema.max_items.map(non_negative),
        _ => Some(1),
    }
}

/// The most times data of a node with this least serialised size can occur
/// in a request (`maxCardinality`).
pub(crate) fn cardinality_from_size(min: u64) -> u64 {
    MAX_REQUEST_BYTES / (min + 1)
}
