//! A JSON value as CEL sees it, by its schema (apiserver's
//! `UnstructuredToVal`, `common/valuesunstructured.go`): objects as maps of
//! their schema's properties (by their escaped names, null fields left
//! out, the fields of `x-kubernetes-preserve-unknown-fields` kept for
//! comparisons), maps from `additionalProperties`, lists (sets and map-lists equal
//! whatever their order), int-or-string as an `int` or a `string`, numbers
//! as `double` and integers as `int`, strings of the `byte`, `duration`,
//! `date` and `date-time` formats as bytes, durations and timestamps.

use std::collections::HashMap;

use cel::common::traits::{Adder, Container, Indexer, Iterable, Sizer, Zeroer};
use cel::common::types::{
    CelBool, CelBytes, CelDouble, CelDuration, CelInt, CelList, CelMap, CelMapKey, CelNull,
    CelString, CelTimestamp, LIST_TYPE, Type,
};
use cel::common::value::{Builtin, BuiltinRef, Val};
use chrono::{DateTime, FixedOffset, NaiveDate};
use serde_json::Value;

use super::types::{RESERVED, escape, with_type_and_object_meta};
use crate::go::time::strfmt;
use crate::schema::Schema;

/// A CEL value.
pub(crate) type CelValue = Box<dyn Val + 'static>;

/// `value` as CEL sees it under `schema`; `resource_root` for the root of
/// a resource, whose `apiVersion`, `kind` and `metadata` are typed.
pub(crate) fn to_cel(value: &Value, schema: &Schema, resource_root: bool) -> CelValue {
    if resource_root || (schema.embedded_resource && value.is_object()) {
        return convert(value, &with_type_and_object_meta(schema));
    }
    convert(value, schema)
}

fn convert(value: &Value, schema: &Schema) -> CelValue {
    if value.is_null() {
        return Box::new(CelNull);
    }
    if schema.int_or_string {
        return match value {
            Value::String(s) => Box::new(CelString::from(s.clone())),
            Value::Number(n) => number(n, true),
            _ => Box::new(CelNull),
        };
    }
    match (schema.type_.as_deref(), value) {
        (Some("object"), Value::Object(map)) => {
            let mut entries: HashMap<CelMapKey<'static>, CelValue> = HashMap::new();
            if let Some(values) = schema.additional_schema() {
                for (k, v) in map {
                    entries.insert(CelMapKey::from(k.clone()), to_cel(v, values, false));
                }
            } else {
                let mut unknown = Vec::new();
                for (k, v) in map {
                    let (Some(prop), Some(name)) = (schema.properties.get(k), escape(k)) else {
                        if !schema.properties.contains_key(k) && schema.preserves_unknown_fields() {
                            unknown.push((k, v));
                        }
                        continue;
                    };
                    if v.is_null() {
                        continue;
                    }
                    if RESERVED.contains(&k.as_str()) {
                        // Selected as `self.namespace` as well as `self.__namespace__`.
                        entries.insert(CelMapKey::from(k.clone()), to_cel(v, prop, false));
                    }
                    entries.insert(CelMapKey::from(name), to_cel(v, prop, false));
                }
                // Fields the schema does not name are out of reach of a
                // rule, but count in comparing objects, as on the real
                // server.
                for (k, v) in unknown {
                    entries
                        .entry(CelMapKey::from(k.clone()))
                        .or_insert_with(|| plain(v));
                }
            }
            Box::new(CelMap::from(entries))
        }
        (Some("array"), Value::Array(items)) => {
            let Some(item) = schema.items.as_deref() else {
                return Box::new(CelList::from(Vec::new()));
            };
            let elems: Vec<CelValue> = items.iter().map(|v| to_cel(v, item, false)).collect();
            let list = CelList::from(elems);
            match schema.list_type.as_deref() {
                Some("set") => Box::new(KeyedList { list, keys: None }),
                Some("map") => Box::new(KeyedList {
                    list,
                    keys: Some(
                        schema
                            .list_map_keys
                            .iter()
                            .map(|k| escape(k).unwrap_or_else(|| k.clone()))
                            .collect(),
                    ),
                }),
                _ => Box::new(list),
            }
        }
        (Some("string"), Value::String(s)) => string(s, schema.format.as_deref()),
        (Some("number"), Value::Number(n)) => {
            Box::new(CelDouble::from(n.as_f64().unwrap_or_default()))
        }
        (Some("integer"), Value::Number(n)) => number(n, true),
        (Some("boolean"), Value::Bool(b)) => Box::new(CelBool::from(*b)),
        _ => Box::new(CelNull),
    }
}

/// A value of no schema, for comparisons: maps, lists, numbers, strings,
/// booleans and nulls.
fn plain(value: &Value) -> CelValue {
    match value {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => number(n, false),
        Value::String(s) => Box::new(CelString::from(s.clone())),
        Value::Array(items) => Box::new(CelList::from(items.iter().map(plain).collect::<Vec<_>>())),
        Value::Object(map) => Box::new(CelMap::from(
            map.iter()
                .map(|(k, v)| (CelMapKey::from(k.clone()), plain(v)))
                .collect::<HashMap<_, _>>(),
        )),
    }
}

/// An integer as `int`, a fraction as `double`.
fn number(n: &serde_json::Number, integral: bool) -> CelValue {
    match n.as_i64() {
        Some(i) => Box::new(CelInt::from(i)),
        None => {
            let f = n.as_f64().unwrap_or_default();
            if integral && f.fract() == 0.0 && f.abs() < 9.2e18 {
                Box::new(CelInt::from(f as i64))
            } else {
                Box::new(CelDouble::from(f))
            }
        }
    }
}

fn string(s: &str, format: Option<&str>) -> CelValue {
    let parsed: Option<CelValue> = match format {
        Some("duration") => strfmt::parse_duration(s)
            .map(|n| Box::new(CelDuration::from(chrono::Duration::nanoseconds(n))) as CelValue),
        Some("date") => NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|d| timestamp(d.and_utc().fixed_offset())),
        Some("date-time") => strfmt::parse_date_time(s).map(timestamp),
        Some("byte") => {
            use base64::Engine;
            base64::engine::general_purpose::URL_SAFE
                .decode(s)
                .or_else(|_| base64::engine::general_purpose::STANDARD.decode(s))
                .ok()
                .map(|b| Box::new(CelBytes::from(b)) as CelValue)
        }
        _ => None,
    };
    parsed.unwrap_or_else(|| Box::new(CelString::from(s.to_string())))
}

fn timestamp(t: DateTime<FixedOffset>) -> CelValue {
    Box::new(CelTimestamp::from(t))
}

/// A list of `x-kubernetes-list-type` `set` (no keys) or `map` (its keys):
/// equal to another list of the same elements in any order, as the real
/// server compares them; a list otherwise.
#[derive(Debug, Clone)]
pub(crate) struct KeyedList {
    list: CelList<'static>,
    keys: Option<Vec<String>>,
}

impl KeyedList {
    fn key_of<'a, 'v>(
        keys: &[String],
        elem: &'a (dyn Val + 'v),
    ) -> Vec<Option<&'a (dyn Val + 'v)>> {
        let map = elem.downcast_ref::<CelMap>();
        keys.iter()
            .map(|k| {
                map.and_then(|m| m.inner().get(&CelMapKey::from(k.clone())))
                    .map(|v| v.as_ref())
            })
            .collect()
    }

    fn same_key(a: &[Option<&(dyn Val + '_)>], b: &[Option<&(dyn Val + '_)>]) -> bool {
        a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Some(x), Some(y)) => x.equals(*y),
            (None, None) => true,
            _ => false,
        })
    }
}

impl Val for KeyedList {
    fn get_type(&self) -> &Type {
        &LIST_TYPE
    }

    fn cel_type() -> &'static Type {
        &LIST_TYPE
    }

    fn as_adder<'b, 'w>(&'b self) -> Option<&'b (dyn Adder + 'w)>
    where
        Self: 'w,
    {
        Some(&self.list)
    }

    fn as_container(&self) -> Option<&dyn Container> {
        Some(&self.list)
    }

    fn as_indexer<'b, 'w>(&'b self) -> Option<&'b (dyn Indexer + 'w)>
    where
        Self: 'w,
    {
        Some(&self.list)
    }

    fn into_indexer<'w>(self: Box<Self>) -> Option<Box<dyn Indexer + 'w>>
    where
        Self: 'w,
    {
        Some(Box::new(self.list))
    }

    fn as_iterable<'b, 'w>(&'b self) -> Option<&'b (dyn Iterable + 'w)>
    where
        Self: 'w,
    {
        Some(&self.list)
    }

    fn as_sizer(&self) -> Option<&dyn Sizer> {
        Some(&self.list)
    }

    fn as_zeroer(&self) -> Option<&dyn Zeroer> {
        Some(&self.list)
    }

    fn equals(&self, other: &dyn Val) -> bool {
        let Some(other) = other.downcast_ref::<CelList>() else {
            return false;
        };
        if other.len() != self.list.len() {
            return false;
        }
        match &self.keys {
            None => other
                .inner()
                .iter()
                .all(|o| self.list.inner().iter().any(|mine| mine.equals(o.as_ref()))),
            Some(keys) => other.inner().iter().all(|o| {
                let key = Self::key_of(keys, o.as_ref());
                self.list
                    .inner()
                    .iter()
                    .find(|mine| Self::same_key(&Self::key_of(keys, mine.as_ref()), &key))
                    .is_some_and(|mine| mine.equals(o.as_ref()))
            }),
        }
    }

    fn clone_as_boxed<'w>(&self) -> Box<dyn Val + 'w>
    where
        Self: 'w,
    {
        Box::new(self.clone())
    }

    fn as_builtin<'b, 'w>(&'b self) -> BuiltinRef<'b, 'w>
    where
        Self: 'w,
    {
        BuiltinRef::List(&self.list)
    }

    fn into_builtin<'w>(self: Box<Self>) -> Option<Builtin<'w>>
    where
        Self: 'w,
    {
        Some(Builtin::List(self.list))
    }
}
