//! What Go's `encoding/json` says when it decodes into typed fields: the
//! kind names of its type errors, the errors of a map of strings or bytes
//! (`[]byte` is base64), the strict decoder's unknown fields, and the
//! numbers it writes back (a `float64` without a fraction has none).

use serde_json::Value;

/// The name Go's JSON errors give a value's kind (`json: cannot unmarshal
/// number into Go struct field ...`).
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Why Go cannot decode `obj[field]`, a map of strings, into the struct
/// field `go_field` (`ConfigMap.data`): a value that is not a string.
pub(crate) fn string_map_error(obj: &Value, field: &str, go_field: &str) -> Option<String> {
    let map = obj.get(field).and_then(Value::as_object)?;
    let value = map.values().find(|v| !v.is_string() && !v.is_null())?;
    Some(format!(
        "json: cannot unmarshal {} into Go struct field {go_field} of type string",
        crate::go::json::decode::json_kind(value)
    ))
}

/// Why Go cannot decode `obj[field]`, a map of bytes (base64 strings),
/// into the struct field `go_field` (`Secret.data`).
pub(crate) fn bytes_map_error(obj: &Value, field: &str, go_field: &str) -> Option<String> {
    let map = obj.get(field).and_then(Value::as_object)?;
    map.values().find_map(|value| match value {
        Value::String(text) => go_base64_error(text),
        Value::Null => None,
        other => Some(format!(
            "json: cannot unmarshal {} into Go struct field {go_field} of type []uint8",
            crate::go::json::decode::json_kind(other)
        )),
    })
}

/// Numbers as Go's JSON writes the float64s it decoded: a float with no
/// fraction is written without one (`2.0` is stored, and read back, as
/// `2`).
pub(crate) fn go_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() == 0.0 && f.abs() < 9.0e18 {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(go_numbers),
        Value::Object(map) => map.values_mut().for_each(go_numbers),
        _ => {}
    }
}

/// Go's `base64.StdEncoding` decoding of a `[]byte` field: why it fails
/// (`illegal base64 data at input byte 3`), if it does.
pub(crate) fn go_base64_error(text: &str) -> Option<String> {
    let src = text.as_bytes();
    let valid = |c: u8| c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
    let corrupt = |at: usize| Some(format!("illegal base64 data at input byte {at}"));
    let mut si = 0;
    loop {
        // One quantum of four characters (`decodeQuantum`).
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                return match j {
                    0 => None,
                    _ => corrupt(si - j),
                };
            }
            let c = src[si];
            si += 1;
            if valid(c) {
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return corrupt(si - 1);
            }
            // Padding: the end.
            match j {
                0 | 1 => return corrupt(si - 1),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return corrupt(src.len());
                    }
                    if src[si] != b'=' {
                        return corrupt(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            return if si < src.len() { corrupt(si) } else { None };
        }
    }
}

/// The unknown fields as the decoder words them, for warnings and for
/// `strict decoding error: ` (joined with `, `): `unknown field
/// "spec.bogus"`.
pub fn unknown_field_messages(paths: &[String]) -> Vec<String> {
    paths
        .iter()
        .map(|path| format!("unknown field \"{path}\""))
        .collect()
}
