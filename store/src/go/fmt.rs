//! Go's `fmt` verbs over decoded JSON: `%v` of a value decoded into
//! `interface{}` (`map[a:1 b:[x y]]`), and `%T` of one as `unstructured`
//! holds it.

use serde_json::Value;

use super::strconv::go_float;

/// Decoded JSON (`interface{}`) as Go's `%v` prints it: `map[a:1 b:[x
/// y]]`, keys sorted, strings bare, `<nil>` for null, a number that is not
/// an `int64` as a `float64`.
pub fn go_print(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => match number.as_i64() {
            Some(int) => int.to_string(),
            None => go_float(number.as_f64().unwrap_or_default()),
        },
        Value::String(text) => text.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_print).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|key| format!("{key}:{}", go_print(&map[key])))
                .collect();
            format!("map[{}]", fields.join(" "))
        }
    }
}

/// Go's `%T` of a JSON value decoded into `interface{}`, as `unstructured`
/// holds it.
pub(crate) fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.as_i64().is_some() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%f`: six decimals.
pub(crate) fn go_f(value: f64) -> String {
    if value.is_infinite() {
        return if value > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    format!("{value:.6}")
}
