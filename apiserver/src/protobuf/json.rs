//! A decoded message as Go's JSON writes it, by walking its descriptor:
//! every field under its JSON name, the types with their own JSON form
//! (IntOrString, Quantity, Time, RawExtension...) as Go writes them.

use protobuf::MessageDyn;
use protobuf::reflect::{ReflectFieldRef, ReflectValueRef};
use serde_json::{Map, Number, Value};

use super::{Unsupported, names};

/// The packages of the types with their own JSON form.
const META: &str = "apimachinery.pkg.apis.meta.v1.";
const RUNTIME: &str = "apimachinery.pkg.runtime.";
const APIEXTENSIONS: &str = "apiextensions_apiserver.pkg.apis.apiextensions.";

/// `m` as JSON; `None` where Go writes `null` (a zero Time, an empty
/// RawExtension), which the parent leaves out.
pub(super) fn message(m: &dyn MessageDyn) -> Result<Option<Value>, Unsupported> {
    let descriptor = m.descriptor_dyn();
    let (full, name) = (descriptor.full_name(), descriptor.name());
    let special = |package: &str| full.strip_prefix(package).is_some_and(|rest| rest == name);
    let in_apiextensions = full.starts_with(APIEXTENSIONS);
    Ok(Some(match name {
        "IntOrString" if full == "apimachinery.pkg.util.intstr.IntOrString" => {
            match int(get(m, "type")) {
                1 => Value::from(text(get(m, "strVal"))),
                _ => Value::from(int(get(m, "intVal"))),
            }
        }
        "Quantity" | "QuantityValue" if full.starts_with("apimachinery.pkg.api.resource.") => {
            // Go writes a zero Quantity as "0".
            let quantity = text(get(m, "string"));
            Value::from(if quantity.is_empty() { "0" } else { quantity })
        }
        "Time" | "MicroTime" if special(META) => return time(m, name == "MicroTime"),
        "Duration" if special(META) => Value::from(go_duration(int(get(m, "duration")))),
        "FieldsV1" if special(META) => return embedded(bytes(get(m, "Raw"))),
        "RawExtension" if special(RUNTIME) => return embedded(bytes(get(m, "raw"))),
        "JSON" if in_apiextensions => return embedded(bytes(get(m, "raw"))),
        "Unknown" if special(RUNTIME) => super::object(m)?,
        // Named string slices, wrapped in a message by go-to-protobuf.
        "Verbs" | "ExtraValue" => items(m, "items")?.unwrap_or_else(|| Value::Array(Vec::new())),
        // Go's MarshalJSON of these writes one of their fields.
        "JSONSchemaPropsOrBool" if in_apiextensions => match field(m, "schema")? {
            Some(schema) => schema,
            None => Value::Bool(matches!(
                get(m, "allows"),
                Some(ReflectValueRef::Bool(true))
            )),
        },
        "JSONSchemaPropsOrArray" if in_apiextensions => match items(m, "jSONSchemas")? {
            Some(schemas) => schemas,
            None => return field(m, "schema"),
        },
        "JSONSchemaPropsOrStringArray" if in_apiextensions => match items(m, "property")? {
            Some(property) => property,
            None => return field(m, "schema"),
        },
        _ => Value::Object(object(m)?),
    }))
}

/// The fields of a message that has no JSON form of its own.
fn object(m: &dyn MessageDyn) -> Result<Map<String, Value>, Unsupported> {
    let descriptor = m.descriptor_dyn();
    let message = descriptor.name();
    let mut out = Map::new();
    for field in descriptor.fields() {
        let value = match field.get_reflect(m) {
            ReflectFieldRef::Optional(value) => match value.value() {
                Some(value) => singular(value, names::zero_is_set(message, field.name()))?,
                None => None,
            },
            ReflectFieldRef::Repeated(list) if list.is_empty() => None,
            ReflectFieldRef::Repeated(list) => Some(Value::Array(
                list.into_iter().map(element).collect::<Result<_, _>>()?,
            )),
            ReflectFieldRef::Map(map) if map.is_empty() => None,
            ReflectFieldRef::Map(map) => {
                // Sorted by key, as Go writes maps.
                let mut entries = Vec::with_capacity(map.len());
                for (key, value) in &map {
                    let key = match key {
                        ReflectValueRef::String(key) => key.to_owned(),
                        key => element(key)?.to_string(),
                    };
                    entries.push((key, element(value)?));
                }
                entries.sort_by(|(a, _), (b, _)| a.cmp(b));
                Some(Value::Object(entries.into_iter().collect()))
            }
        };
        match value {
            Some(Value::Object(inner)) if names::is_inline(message, field.name()) => {
                out.extend(inner);
            }
            Some(value) => {
                out.insert(names::json_name(message, field.name()).into_owned(), value);
            }
            None => {}
        }
    }
    Ok(out)
}

/// A set singular field; `None` for the zero values Go writes for every
/// field that is no pointer (see [`names::ZERO_IS_SET`]). A message that
/// is there is written even when empty: Go writes `{}` for a struct field,
/// and for a pointer to an empty struct (`emptyDir: {}`), which is not the
/// same as none.
fn singular(value: ReflectValueRef<'_>, zero_is_set: bool) -> Result<Option<Value>, Unsupported> {
    let zero = match value {
        ReflectValueRef::String(s) => s.is_empty(),
        ReflectValueRef::Bytes(b) => b.is_empty(),
        ReflectValueRef::I32(n) => n == 0,
        ReflectValueRef::I64(n) => n == 0,
        ReflectValueRef::U32(n) => n == 0,
        ReflectValueRef::U64(n) => n == 0,
        ReflectValueRef::F32(x) => x == 0.0,
        ReflectValueRef::F64(x) => x == 0.0,
        ReflectValueRef::Bool(b) => !b,
        ReflectValueRef::Enum(..) | ReflectValueRef::Message(_) => false,
    };
    match value {
        _ if zero && !zero_is_set => Ok(None),
        ReflectValueRef::Message(m) => message(&*m),
        value => element(value).map(Some),
    }
}

/// A value as it is in a list or a map: always written, even when empty
/// (`apiGroups: [""]` is the core group; a label's value may be empty).
fn element(value: ReflectValueRef<'_>) -> Result<Value, Unsupported> {
    Ok(match value {
        ReflectValueRef::U32(n) => Value::from(n),
        ReflectValueRef::U64(n) => Value::from(n),
        ReflectValueRef::I32(n) => Value::from(n),
        // A number, not a string as in protobuf's own JSON mapping.
        ReflectValueRef::I64(n) => Value::from(n),
        ReflectValueRef::F32(x) => float(x.into()),
        ReflectValueRef::F64(x) => float(x),
        ReflectValueRef::Bool(b) => Value::Bool(b),
        ReflectValueRef::String(s) => Value::from(s),
        ReflectValueRef::Bytes(b) => Value::from(base64(b)),
        ReflectValueRef::Enum(_, n) => Value::from(n),
        ReflectValueRef::Message(m) => message(&*m)?.unwrap_or(Value::Null),
    })
}

/// A float as Go writes it: `1`, not `1.0`, when it is whole.
fn float(x: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if x.fract() == 0.0 && x.abs() < EXACT {
        #[allow(clippy::cast_possible_truncation)] // whole and below 2^53
        return Value::from(x as i64);
    }
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// `[]byte` as Go's JSON writes it.
pub(super) fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A singular field of `m` by name, if set.
pub(super) fn get<'a>(m: &'a dyn MessageDyn, name: &str) -> Option<ReflectValueRef<'a>> {
    m.descriptor_dyn().field_by_name(name)?.get_singular(m)
}

/// A message field of `m` by name, as JSON.
fn field(m: &dyn MessageDyn, name: &str) -> Result<Option<Value>, Unsupported> {
    match get(m, name) {
        Some(ReflectValueRef::Message(inner)) => message(&*inner),
        _ => Ok(None),
    }
}

/// A repeated field of `m` by name, as a JSON array; `None` when empty.
fn items(m: &dyn MessageDyn, name: &str) -> Result<Option<Value>, Unsupported> {
    let field = m.descriptor_dyn().field_by_name(name).ok_or(Unsupported)?;
    let list = field.get_repeated(m);
    if list.is_empty() {
        return Ok(None);
    }
    let list: Vec<Value> = list.into_iter().map(element).collect::<Result<_, _>>()?;
    Ok(Some(Value::Array(list)))
}

fn int(value: Option<ReflectValueRef<'_>>) -> i64 {
    match value {
        Some(ReflectValueRef::I32(n)) => n.into(),
        Some(ReflectValueRef::I64(n)) => n,
        _ => 0,
    }
}

pub(super) fn text(value: Option<ReflectValueRef<'_>>) -> &str {
    match value {
        Some(ReflectValueRef::String(s)) => s,
        _ => "",
    }
}

fn bytes(value: Option<ReflectValueRef<'_>>) -> &[u8] {
    match value {
        Some(ReflectValueRef::Bytes(b)) => b,
        _ => &[],
    }
}

/// `metav1.Time` (`2006-01-02T15:04:05Z`) or `metav1.MicroTime` (with six
/// digits of fraction), in UTC. A zero time, which Go writes as an empty
/// message, is `null` in Go's JSON: left out.
fn time(m: &dyn MessageDyn, micro: bool) -> Result<Option<Value>, Unsupported> {
    let (seconds, nanos) = (get(m, "seconds"), get(m, "nanos"));
    if seconds.is_none() && nanos.is_none() {
        return Ok(None);
    }
    let nanos = u32::try_from(int(nanos)).map_err(|_| Unsupported)?;
    let time = chrono::DateTime::from_timestamp(int(seconds), nanos).ok_or(Unsupported)?;
    let format = if micro {
        "%Y-%m-%dT%H:%M:%S%.6fZ"
    } else {
        "%Y-%m-%dT%H:%M:%SZ"
    };
    Ok(Some(Value::from(time.format(format).to_string())))
}

/// Raw JSON in a message (RawExtension, FieldsV1, apiextensions' JSON), or
/// a nested object in protobuf when it starts with the magic; `None` when
/// empty (Go writes `null`).
fn embedded(raw: &[u8]) -> Result<Option<Value>, Unsupported> {
    if raw.is_empty() {
        Ok(None)
    } else if raw.starts_with(super::MAGIC) {
        super::to_json(raw).map(Some)
    } else {
        serde_json::from_slice(raw)
            .map(Some)
            .map_err(|_| Unsupported)
    }
}

/// Nanoseconds as Go's `time.Duration.String` writes them: `1h2m3s`,
/// `1.5s`, `500ms`, `0s`.
pub(super) fn go_duration(nanos: i64) -> String {
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    let (value, unit) = match n {
        0 => return "0s".into(),
        1..1_000 => (n.to_string(), "ns"),
        1_000..1_000_000 => (fraction(n, 3), "µs"),
        1_000_000..1_000_000_000 => (fraction(n, 6), "ms"),
        _ => {
            let (whole, seconds) = (n / 1_000_000_000, fraction(n % 60_000_000_000, 9));
            let (hours, minutes) = (whole / 3600, whole / 60 % 60);
            return match (hours, minutes) {
                (0, 0) => format!("{sign}{seconds}s"),
                (0, _) => format!("{sign}{minutes}m{seconds}s"),
                _ => format!("{sign}{hours}h{minutes}m{seconds}s"),
            };
        }
    };
    format!("{sign}{value}{unit}")
}

/// `n` divided by 10^`digits`, with the fraction's trailing zeros cut.
fn fraction(n: u64, digits: u32) -> String {
    let scale = 10u64.pow(digits);
    let (whole, rest) = (n / scale, n % scale);
    if rest == 0 {
        return whole.to_string();
    }
    let rest = format!("{rest:0width$}", width = digits as usize);
    format!("{whole}.{}", rest.trim_end_matches('0'))
}
