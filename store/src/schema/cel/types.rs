//! The CEL types of a schema, as the type checker sees them: apiserver's
//! `DeclType` (`pkg/cel/types.go`, `common/schemas.go`) reduced to what
//! checking needs, and cel-go's `types.Type` with its formatting
//! (`checker/format.go`).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::schema::Schema;

/// A CEL type.
#[derive(Clone, Debug)]
pub(crate) enum Ty {
    /// `dyn`: any value; checks nothing.
    Dyn,
    /// The type of an expression that failed to check.
    Error,
    /// `null_type`.
    Null,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `google.protobuf.Duration`.
    Duration,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// `list(T)`.
    List(Box<Ty>),
    /// `map(K, V)`.
    Map(Box<Ty>, Box<Ty>),
    /// An object of the schema, with its fields.
    Object(Arc<Object>),
    /// An opaque type, with its parameters: `optional_type(T)`,
    /// `kubernetes.URL`, `net.IP`, ...
    Opaque(String, Vec<Ty>),
    /// `type`, or `type(T)`.
    Type(Option<Box<Ty>>),
    /// A type parameter (`A`) or a type variable of the checker (`_var0`).
    Param(String),
}

/// An object type of the schema: its name (`selfType1.spec`) and fields,
/// by their escaped CEL names.
#[derive(Debug)]
pub(crate) struct Object {
    /// The type's name.
    pub name: String,
    /// The fields.
    pub fields: BTreeMap<String, Ty>,
}

impl Object {
    /// The field a selection names: its escaped name, or a reserved word
    /// written as is (`self.namespace` for `__namespace__`), as the real
    /// server's type provider recognises keywords as field names.
    pub fn field(&self, name: &str) -> Option<&Ty> {
        self.fields.get(name).or_else(|| {
            RESERVED
                .contains(&name)
                .then(|| self.fields.get(&format!("__{name}__")))
                .flatten()
        })
    }
}

impl Ty {
    /// `list(elem)`.
    pub fn list(elem: Ty) -> Ty {
        Ty::List(Box::new(elem))
    }

    /// `map(key, value)`.
    pub fn map(key: Ty, value: Ty) -> Ty {
        Ty::Map(Box::new(key), Box::new(value))
    }

    /// `optional_type(t)`.
    pub fn optional(t: Ty) -> Ty {
        Ty::Opaque("optional_type".into(), vec![t])
    }

    /// The type behind an optional, if this is one.
    pub fn unwrap_optional(&self) -> Option<&Ty> {
        match self {
            Ty::Opaque(name, params) if name == "optional_type" => params.first(),
            _ => None,
        }
    }

    /// `dyn` or the error type.
    pub fn is_dyn_or_error(&self) -> bool {
        matches!(self, Ty::Dyn | Ty::Error)
    }

    /// The type's parameters.
    pub fn params(&self) -> Vec<&Ty> {
        match self {
            Ty::List(e) => vec![e],
            Ty::Map(k, v) => vec![k, v],
            Ty::Opaque(_, p) => p.iter().collect(),
            Ty::Type(Some(t)) => vec![t],
            _ => Vec::new(),
        }
    }

    /// A number for each kind of type (cel-go's `types.Kind`).
    pub fn kind(&self) -> u8 {
        match self {
            Ty::Dyn => 0,
            Ty::Error => 1,
            Ty::Null => 2,
            Ty::Bool => 3,
            Ty::Int => 4,
            Ty::Uint => 5,
            Ty::Double => 6,
            Ty::String => 7,
            Ty::Bytes => 8,
            Ty::Duration => 9,
            Ty::Timestamp => 10,
            Ty::List(_) => 11,
            Ty::Map(..) => 12,
            Ty::Object(_) => 13,
            Ty::Opaque(..) => 14,
            Ty::Type(_) => 15,
            Ty::Param(_) => 16,
        }
    }

    /// The name cel-go gives the type (`TypeName`), without parameters.
    pub fn type_name(&self) -> &str {
        match self {
            Ty::Dyn => "dyn",
            Ty::Error => "error",
            Ty::Null => "null_type",
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::Uint => "uint",
            Ty::Double => "double",
            Ty::String => "string",
            Ty::Bytes => "bytes",
            Ty::Duration => "google.protobuf.Duration",
            Ty::Timestamp => "google.protobuf.Timestamp",
            Ty::List(_) => "list",
            Ty::Map(..) => "map",
            Ty::Object(o) => &o.name,
            Ty::Opaque(name, _) | Ty::Param(name) => name,
            Ty::Type(_) => "type",
        }
    }

    /// Whether the two are the same type, parameters included
    /// (`IsExactType`).
    pub fn is_exact(&self, other: &Ty) -> bool {
        self.kind() == other.kind()
            && self.type_name() == other.type_name()
            && self.params().len() == other.params().len()
            && self
                .params()
                .iter()
                .zip(other.params())
                .all(|(a, b)| a.is_exact(b))
    }
}

/// cel-go's `FormatCELType`: `int`, `list(string)`, `map(string, int)`,
/// `optional_type(int)`, `!error!`, `null`, `duration`, `timestamp`.
impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Error => return f.write_str("!error!"),
            Ty::Null => return f.write_str("null"),
            Ty::Duration => return f.write_str("duration"),
            Ty::Timestamp => return f.write_str("timestamp"),
            _ => {}
        }
        let params = self.params();
        if params.is_empty() {
            return f.write_str(self.type_name());
        }
        let names: Vec<String> = params.iter().map(ToString::to_string).collect();
        write!(f, "{}({})", self.type_name(), names.join(", "))
    }
}

/// The CEL reserved words a property name is escaped from (`__in__`).
pub(crate) const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A property name as CEL names it (apiserver's `cel.Escape`): `__in__`,
/// `foo__dash__bar`, `a__dot__b`, `x__underscores__y`; `None` when it cannot
/// be named (it starts with a digit, or has another character).
pub(crate) fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '_' if chars.peek() == Some(&'_') => {
                chars.next();
                out.push_str("__underscores__");
            }
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

/// How a schema node is seen from CEL: the schema, with `apiVersion`,
/// `kind` and `metadata` (`name`, `generateName`) at the root of a resource
/// (`WithTypeAndObjectMeta`).
pub(crate) fn with_type_and_object_meta(schema: &Schema) -> Schema {
    let string = |s: Option<&Schema>| s.and_then(|s| s.type_.as_deref()) == Some("string");
    let meta = schema.properties.get("metadata");
    if string(schema.properties.get("kind"))
        && string(schema.properties.get("apiVersion"))
        && meta.and_then(|m| m.type_.as_deref()) == Some("object")
        && string(meta.and_then(|m| m.properties.get("name")))
        && string(meta.and_then(|m| m.properties.get("generateName")))
    {
        return schema.clone();
    }
    let text = Schema {
        type_: Some("string".into()),
        ..Schema::default()
    };
    let mut result = schema.clone();
    result.properties.insert("kind".into(), text.clone());
    result.properties.insert("apiVersion".into(), text.clone());
    let mut metadata = Schema {
        type_: Some("object".into()),
        ..Schema::default()
    };
    metadata.properties.insert("name".into(), text.clone());
    metadata.properties.insert("generateName".into(), text);
    result.properties.insert("metadata".into(), metadata);
    result
}

/// The CEL type of a schema node (`SchemaDeclType`), named as
/// `MaybeAssignTypeName` names it: `name` for an object, `name.field` for
/// its fields, `name.@idx` for list items, `name.@elem` for map values.
/// `None` where CEL has no type for the node (no `type`, an array without
/// `items`).
pub(crate) fn decl_type(schema: &Schema, resource_root: bool, name: &str) -> Option<Ty> {
    if schema.int_or_string {
        return Some(Ty::Dyn);
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
            let elem = decl_type(items, items.embedded_resource, &format!("{name}.@idx"))?;
            Some(Ty::list(elem))
        }
        "object" => {
            if let Some(values) = schema.additional_schema() {
                let elem = decl_type(values, values.embedded_resource, &format!("{name}.@elem"))?;
                return Some(Ty::map(Ty::String, elem));
            }
            let mut fields = BTreeMap::new();
            for (prop, sub) in &schema.properties {
                let Some(escaped) = escape(prop) else {
                    continue;
                };
                let field_name = format!("{name}.{escaped}");
                if let Some(t) = decl_type(sub, sub.embedded_resource, &field_name) {
                    fields.insert(escaped, t);
                }
            }
            Some(Ty::Object(Arc::new(Object {
                name: name.to_string(),
                fields,
            })))
        }
        "string" => Some(match schema.format.as_deref() {
            Some("byte") => Ty::Bytes,
            Some("duration") => Ty::Duration,
            Some("date") | Some("date-time") => Ty::Timestamp,
            _ => Ty::String,
        }),
        "boolean" => Some(Ty::Bool),
        "number" => Some(Ty::Double),
        "integer" => Some(Ty::Int),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn property_names_are_escaped_as_the_real_server_escapes_them() {
        assert_eq!(escape("replicas").as_deref(), Some("replicas"));
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("foo-bar").as_deref(), Some("foo__dash__bar"));
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("x__y").as_deref(), Some("x__underscores__y"));
        assert_eq!(escape("1st"), None);
        assert_eq!(escape("a b"), None);
    }

    #[test]
    fn types_print_as_cel_go_prints_them() {
        let t = Ty::map(Ty::String, Ty::list(Ty::optional(Ty::Int)));
        assert_eq!(t.to_string(), "map(string, list(optional_type(int)))");
        assert_eq!(Ty::Duration.to_string(), "duration");
        assert_eq!(Ty::Null.to_string(), "null");
        assert_eq!(Ty::Type(Some(Box::new(Ty::Int))).to_string(), "type(int)");
    }

    #[test]
    fn a_schema_becomes_its_cel_type() {
        let schema = Schema::from_json(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "n": {"type": "number"},
                    "d": {"type": "string", "format": "duration"},
                    "t": {"x-kubernetes-int-or-string": true},
                    "l": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "integer"}}}},
                    "m": {"type": "object", "additionalProperties": {"type": "string"}},
                    "u": {"x-kubernetes-preserve-unknown-fields": true},
                }},
            },
        }));
        let Some(Ty::Object(root)) = decl_type(&schema, true, "selfType1") else {
            panic!("an object");
        };
        assert!(root.fields.contains_key("apiVersion"));
        let Ty::Object(meta) = &root.fields["metadata"] else {
            panic!("metadata is an object");
        };
        assert_eq!(
            meta.fields.keys().collect::<Vec<_>>(),
            ["generateName", "name"]
        );
        let Ty::Object(spec) = &root.fields["spec"] else {
            panic!("spec is an object");
        };
        assert_eq!(spec.name, "selfType1.spec");
        assert_eq!(spec.fields["n"].to_string(), "double");
        assert_eq!(spec.fields["d"].to_string(), "duration");
        assert_eq!(spec.fields["t"].to_string(), "dyn");
        assert_eq!(spec.fields["l"].to_string(), "list(selfType1.spec.l.@idx)");
        assert_eq!(spec.fields["m"].to_string(), "map(string, string)");
        assert!(!spec.fields.contains_key("u"), "no type, no field");
    }
}
