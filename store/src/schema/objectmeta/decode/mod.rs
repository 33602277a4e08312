//! `metadata` as the real server reads it into a `metav1.ObjectMeta` and
//! writes it back (`objectmeta/coerce.go` `GetObjectMetaWithOptions` and
//! `SetObjectMeta`): a JSON round trip through Go's typed struct.
//!
//! What the round trip does, kept here: a field of the wrong type is the
//! error Go's decoder (sigs.k8s.io/json) gives, `json: cannot unmarshal
//! number into Go struct field ObjectMeta.labels of type string`, the
//! first one met in the order Go marshals a map (keys sorted), unless a
//! timestamp fails first; unknown fields are dropped, and listed
//! (`metadata.ownerReferences[0].foo`) when asked; empty values are left
//! out (`omitempty`), except where a pointer holds them
//! (`deletionGracePeriodSeconds: 0`, `controller: false`) or the field has
//! no `omitempty` (an owner reference's `apiVersion`, `kind`, `name`,
//! `uid`); timestamps are rewritten in UTC, to the second, and a zero
//! timestamp goes (as the real server shows it once it has stored it).

mod types;

use serde_json::{Map, Value};

use crate::go::fmt::go_type;
use crate::go::json::decode::json_kind;
use crate::go::json::encode::go_json;
use crate::go::time::parse::{Layout, format_utc, parse};
use crate::machinery::field::Path;
use types::{Field, Kind, OBJECT_META, Struct, render};

/// How [`get_object_meta`] reads (`ObjectMetaOptions`).
#[derive(Clone, Debug, Default)]
pub struct ObjectMetaOptions {
    /// Leaves out, field by field, what cannot be read, instead of failing.
    pub drop_malformed_fields: bool,
    /// Lists the unknown fields.
    pub return_unknown_field_paths: bool,
    /// Where the object whose `metadata` is read is: none for the root.
    pub parent_path: Path,
}

/// `metadata` read and written back.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectMeta {
    /// The metadata as the typed struct writes it.
    pub metadata: Value,
    /// The unknown fields met (with `return_unknown_field_paths`):
    /// `metadata.colour`, `spec.template.metadata.colour`.
    pub unknown_fields: Vec<String>,
}

/// Where the decoder is, for the context of a type error: the innermost
/// struct, and the fields from the top.
#[derive(Clone)]
struct Context {
    strukt: &'static str,
    fields: Vec<&'static str>,
}

/// One decoding (`decodeState`): the first type error, kept while
/// decoding goes on, and the unknown fields.
struct Decoder {
    saved: Option<String>,
    strict: bool,
    unknown: Vec<String>,
    /// The path for unknown fields: `ownerReferences`, `[0]`, ...
    strict_stack: Vec<String>,
}

impl Decoder {
    fn new(strict: bool) -> Self {
        Decoder {
            saved: None,
            strict,
            unknown: Vec::new(),
            strict_stack: Vec::new(),
        }
    }

    fn save(&mut self, value: &str, go_type: &str, context: Option<&Context>) {
        if self.saved.is_none() {
            self.saved = Some(type_error(value, go_type, context));
        }
    }

    fn push_key(&mut self, key: &str) {
        if !self.strict_stack.is_empty() {
            self.strict_stack.push(".".into());
        }
        self.strict_stack.push(key.into());
    }

    fn unknown_field(&mut self, key: &str) {
        if !self.strict {
            return;
        }
        if self.strict_stack.is_empty() {
            self.unknown.push(key.into());
        } else {
            self.unknown
                .push(format!("{}.{key}", self.strict_stack.concat()));
        }
    }

    /// Decodes the top value into an `ObjectMeta`; `Err` is an error that
    /// stops decoding (a timestamp's).
    fn top(&mut self, value: &Value) -> Result<Vec<Option<Value>>, String> {
        match value {
            Value::Null => Ok(vec![None; OBJECT_META.fields.len()]),
            Value::Object(map) => self.strukt(map, &OBJECT_META, &[]),
            other => {
                self.save(json_kind(other), "v1.ObjectMeta", None);
                Ok(vec![None; OBJECT_META.fields.len()])
            }
        }
    }

    fn strukt(
        &mut self,
        map: &Map<String, Value>,
        strukt: &'static Struct,
        outer: &[&'static str],
    ) -> Result<Vec<Option<Value>>, String> {
        let mut slots = vec![None; strukt.fields.len()];
        // Go marshals a map with its keys sorted, then decodes that text.
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort();
        for key in keys {
            let Some(index) = strukt.fields.iter().position(|f| f.json == key) else {
                self.unknown_field(key);
                continue;
            };
            let field = &strukt.fields[index];
            let mut fields = outer.to_vec();
            fields.push(field.json);
            let context = Context {
                strukt: strukt.name,
                fields,
            };
            let depth = self.strict_stack.len();
            self.push_key(field.json);
            slots[index] = self.field(&map[key], field, &context)?;
            self.strict_stack.truncate(depth);
        }
        Ok(slots)
    }

    /// The value of one field, as the struct then holds it (`None`: zero).
    fn field(
        &mut self,
        value: &Value,
        field: &Field,
        context: &Context,
    ) -> Result<Option<Value>, String> {
        if value.is_null() {
            return Ok(None);
        }
        match field.kind {
            Kind::Str(go_type) => match value {
                Value::String(_) => Ok(Some(value.clone())),
                other => {
                    self.save(json_kind(other), go_type, Some(context));
                    Ok(None)
                }
            },
            Kind::Int64 => match value {
                Value::Number(_) => {
                    let text = go_json(value);
                    match text.parse::<i64>() {
                        Ok(number) => Ok(Some(Value::from(number))),
                        Err(_) => {
                            self.save(&format!("number {text}"), "int64", Some(context));
                            Ok(None)
                        }
                    }
                }
                other => {
                    self.save(json_kind(other), "int64", Some(context));
                    Ok(None)
                }
            },
            Kind::Bool => match value {
                Value::Bool(_) => Ok(Some(value.clone())),
                other => {
                    self.save(json_kind(other), "bool", Some(context));
                    Ok(None)
                }
            },
            Kind::Time => match value {
                // `Time.UnmarshalJSON`: its errors stop the decoding.
                // The zero time is written as `null`, which every later
                // reading (the server reads back what it stores) drops.
                Value::String(text) => {
                    Ok(format_utc(&parse(Layout::Rfc3339, text)?).map(Value::String))
                }
                other => Err(type_error(json_kind(other), "string", Some(context))),
            },
            Kind::Raw => Ok(Some(value.clone())),
            Kind::StrMap => match value {
                Value::Object(map) => {
                    let mut out = Map::new();
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort();
                    for key in keys {
                        let text = match &map[key] {
                            Value::String(text) => text.clone(),
                            Value::Null => String::new(),
                            other => {
                                self.save(json_kind(other), "string", Some(context));
                                String::new()
                            }
                        };
                        out.insert(key.clone(), Value::String(text));
                    }
                    Ok(Some(Value::Object(out)))
                }
                other => {
                    self.save(json_kind(other), "map[string]string", Some(context));
                    Ok(None)
                }
            },
            Kind::StrList => match value {
                Value::Array(items) => {
                    let mut out = Vec::with_capacity(items.len());
                    for item in items {
                        out.push(match item {
                            Value::String(_) => item.clone(),
                            Value::Null => Value::String(String::new()),
                            other => {
                                self.save(json_kind(other), "string", Some(context));
                                Value::String(String::new())
                            }
                        });
                    }
                    Ok(Some(Value::Array(out)))
                }
                other => {
                    self.save(json_kind(other), "[]string", Some(context));
                    Ok(None)
                }
            },
            Kind::List(strukt) => match value {
                Value::Array(items) => {
                    let mut out = Vec::with_capacity(items.len());
                    for (index, item) in items.iter().enumerate() {
                        let depth = self.strict_stack.len();
                        self.strict_stack.push(format!("[{index}]"));
                        let slots = match item {
                            Value::Object(map) => self.strukt(map, strukt, &context.fields)?,
                            Value::Null => vec![None; strukt.fields.len()],
                            other => {
                                let go_type = format!("v1.{}", strukt.name);
                                self.save(json_kind(other), &go_type, Some(context));
                                vec![None; strukt.fields.len()]
                            }
                        };
                        self.strict_stack.truncate(depth);
                        out.push(render(strukt, slots));
                    }
                    Ok(Some(Value::Array(out)))
                }
                other => {
                    let go_type = format!("[]v1.{}", strukt.name);
                    self.save(json_kind(other), &go_type, Some(context));
                    Ok(None)
                }
            },
        }
    }
}

/// `*json.UnmarshalTypeError`, with the context Go adds to it.
fn type_error(value: &str, go_type: &str, context: Option<&Context>) -> String {
    match context {
        Some(context) => format!(
            "json: cannot unmarshal {value} into Go struct field {}.{} of type {go_type}",
            context.strukt,
            context.fields.join(".")
        ),
        None => format!("json: cannot unmarshal {value} into Go value of type {go_type}"),
    }
}

/// Reads the `metadata` of `object` into an `ObjectMeta` and back
/// (`GetObjectMetaWithOptions`): `Ok(None)` when there is none, the
/// decoder's error when it cannot be read (unless
/// `drop_malformed_fields`).
pub fn get_object_meta(
    object: &Map<String, Value>,
    options: &ObjectMetaOptions,
) -> Result<Option<ObjectMeta>, String> {
    let Some(metadata) = object.get("metadata") else {
        return Ok(None);
    };
    let prefix = options.parent_path.child("metadata").to_string();
    let with_prefix = |unknown: Vec<String>| -> Vec<String> {
        unknown
            .into_iter()
            .map(|path| format!("{prefix}.{path}"))
            .collect()
    };
    let mut decoder = Decoder::new(options.return_unknown_field_paths);
    let error = match decoder.top(metadata) {
        Ok(slots) => match decoder.saved.take() {
            None => {
                return Ok(Some(ObjectMeta {
                    metadata: render(&OBJECT_META, slots),
                    unknown_fields: with_prefix(decoder.unknown),
                }));
            }
            Some(error) => error,
        },
        Err(error) => error,
    };
    if !options.drop_malformed_fields {
        return Err(error);
    }
    let Value::Object(map) = metadata else {
        return Err(format!(
            "invalid metadata: expected object, got {}",
            go_type(metadata)
        ));
    };
    // Field by field, keeping those that can be read.
    let mut slots = vec![None; OBJECT_META.fields.len()];
    let mut unknown = Vec::new();
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for key in keys {
        let mut single = Map::new();
        single.insert(key.clone(), map[key].clone());
        let mut decoder = Decoder::new(options.return_unknown_field_paths);
        let Ok(decoded) = decoder.strukt(&single, &OBJECT_META, &[]) else {
            continue;
        };
        if decoder.saved.is_some() {
            continue;
        }
        for (slot, value) in slots.iter_mut().zip(decoded) {
            if value.is_some() {
                *slot = value;
            }
        }
        unknown.extend(decoder.unknown);
    }
    Ok(Some(ObjectMeta {
        metadata: render(&OBJECT_META, slots),
        unknown_fields: with_prefix(unknown),
    }))
}

#[cfg(test)]
mod tests;
