//! The Go types `metadata` is read into: `metav1.ObjectMeta`,
//! `OwnerReference` and `ManagedFieldsEntry`, with their JSON names,
//! pointers and `omitempty`, and how the unstructured converter writes
//! them back.

use serde_json::{Map, Value};

/// What a field holds in Go.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    /// A string type, by its Go name (`string`, `types.UID`).
    Str(&'static str),
    Int64,
    Bool,
    /// `metav1.Time`.
    Time,
    /// `metav1.FieldsV1`: any JSON, kept as it is.
    Raw,
    /// `map[string]string`.
    StrMap,
    /// `[]string`.
    StrList,
    /// A list of structs.
    List(&'static Struct),
}

pub(super) struct Field {
    pub(super) json: &'static str,
    pub(super) kind: Kind,
    /// A pointer: kept when set, even to its zero value.
    pub(super) pointer: bool,
    /// `omitempty` (and `omitzero` for a timestamp).
    pub(super) omitempty: bool,
}

pub(super) struct Struct {
    /// The Go type's name, as errors print it (`ObjectMeta`).
    pub(super) name: &'static str,
    pub(super) fields: &'static [Field],
}

const fn field(json: &'static str, kind: Kind) -> Field {
    Field {
        json,
        kind,
        pointer: false,
        omitempty: true,
    }
}

const fn pointer(json: &'static str, kind: Kind) -> Field {
    Field {
        json,
        kind,
        pointer: true,
        omitempty: true,
    }
}

const fn required(json: &'static str, kind: Kind) -> Field {
    Field {
        json,
        kind,
        pointer: false,
        omitempty: false,
    }
}

const STRING: Kind = Kind::Str("string");
const UID: Kind = Kind::Str("types.UID");

static OWNER_REFERENCE: Struct = Struct {
    name: "OwnerReference",
    fields: &[
        required("apiVersion", STRING),
        required("kind", STRING),
        required("name", STRING),
        required("uid", UID),
        pointer("controller", Kind::Bool),
        pointer("blockOwnerDeletion", Kind::Bool),
    ],
};

static MANAGED_FIELDS_ENTRY: Struct = Struct {
    name: "ManagedFieldsEntry",
    fields: &[
        field("manager", STRING),
        field("operation", Kind::Str("v1.ManagedFieldsOperationType")),
        field("apiVersion", STRING),
        pointer("time", Kind::Time),
        field("fieldsType", STRING),
        pointer("fieldsV1", Kind::Raw),
        field("subresource", STRING),
    ],
};

pub(super) static OBJECT_META: Struct = Struct {
    name: "ObjectMeta",
    fields: &[
        field("name", STRING),
        field("generateName", STRING),
        field("namespace", STRING),
        field("selfLink", STRING),
        field("uid", UID),
        field("resourceVersion", STRING),
        field("generation", Kind::Int64),
        field("creationTimestamp", Kind::Time),
        pointer("deletionTimestamp", Kind::Time),
        pointer("deletionGracePeriodSeconds", Kind::Int64),
        field("labels", Kind::StrMap),
        field("annotations", Kind::StrMap),
        field("ownerReferences", Kind::List(&OWNER_REFERENCE)),
        field("finalizers", Kind::StrList),
        field("managedFields", Kind::List(&MANAGED_FIELDS_ENTRY)),
    ],
};

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Number(number) => number.as_i64() == Some(0),
        Value::Bool(flag) => !flag,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
    }
}

/// The struct as `runtime.DefaultUnstructuredConverter` writes it.
pub(super) fn render(strukt: &Struct, slots: Vec<Option<Value>>) -> Value {
    let mut out = Map::new();
    for (field, slot) in strukt.fields.iter().zip(slots) {
        match slot {
            Some(value) if field.pointer || !field.omitempty || !is_empty(&value) => {
                out.insert(field.json.into(), value);
            }
            None if !field.omitempty && !field.pointer => {
                // Only strings are without omitempty.
                out.insert(field.json.into(), Value::String(String::new()));
            }
            _ => {}
        }
    }
    Value::Object(out)
}
