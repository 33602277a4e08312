//! A custom resource's columns: its CRD version's additionalPrinterColumns,
//! as apiextensions-apiserver's table convertor prints them
//! (`pkg/registry/customresource/tableconvertor/tableconvertor.go`).

use serde_json::{Value, json};

use super::builtin::doc;
use super::column::{Cell, Column, age};
use super::jsonpath::JsonPath;

/// The columns after Name of a CRD version (`spec.versions[]`): its
/// printer columns, or Age alone when it has none (`getColumnsForVersion`
/// and `serveDefaultColumnsIfEmpty`, apiextensions-apiserver's
/// `pkg/apiserver/helpers.go`). A column whose path does not parse ends
/// them, as `tableconvertor.New` stops at it.
pub(super) fn custom_columns(version: &Value) -> Vec<Column> {
    let declared = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .filter(|columns| !columns.is_empty());
    let Some(declared) = declared else {
        let path = ".metadata.creationTimestamp";
        return JsonPath::parse(path)
            .map(|parsed| Column {
                name: "Age".into(),
                kind: "date".into(),
                format: String::new(),
                description: doc("meta/v1 ObjectMeta.creationTimestamp").into(),
                priority: 0,
                cell: Cell::Path(parsed),
            })
            .into_iter()
            .collect();
    };
    let text = |c: &Value, key: &str| c.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let mut columns = Vec::new();
    for c in declared {
        let path = text(c, "jsonPath");
        let Some(parsed) = JsonPath::parse(&path) else {
            break;
        };
        let description = match text(c, "description") {
            d if d.is_empty() => {
                format!("Custom resource definition column (in JSONPath format): {path}")
            }
            d => d,
        };
        columns.push(Column {
            name: text(c, "name"),
            kind: text(c, "type"),
            format: text(c, "format"),
            description,
            priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
            cell: Cell::Path(parsed),
        });
    }
    columns
}

/// The cell of a printer column of type `kind` in `o`: the first value
/// its path finds, printed as JSONPath prints it for a `string` column
/// (`PrintResults`), else kept when of the column's type
/// (`cellForJSONValue`); null when nothing is found.
pub(super) fn custom_cell(path: &JsonPath, kind: &str, o: &Value) -> Value {
    let Some(found) = path.first(o) else {
        return Value::Null;
    };
    match (kind, &*found) {
        ("string", Value::String(s)) => json!(s),
        // A nil value is printed as text/template prints an invalid one.
        ("string", Value::Null) => json!("<no value>"),
        ("string", other) => json!(rekon_store::field::go_value(other)),
        ("integer", Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(int), _) => json!(int),
            // Go's int64(float64) truncates.
            (None, Some(float)) if n.is_f64() => json!(float as i64),
            _ => Value::Null,
        },
        ("number", Value::Number(n)) => match n.as_i64() {
            // A float64 with no fraction is written as an integer.
            Some(int) => json!(int),
            None => n.as_f64().map_or(Value::Null, |f| json!(f)),
        },
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(s)) => json!(date(s)),
        _ => Value::Null,
    }
}

/// A `date` cell: the age of an RFC 3339 time, `<unknown>` for an empty
/// or `null` one (the zero time), `<invalid>` when it does not parse
/// (`metav1.Time.UnmarshalQueryParameter`, `ConvertToHumanReadableDateType`).
fn date(text: &str) -> String {
    if text.is_empty() || text == "null" {
        return "<unknown>".into();
    }
    match chrono::DateTime::parse_from_rfc3339(text) {
        Ok(_) => age(text),
        Err(_) => "<invalid>".into(),
    }
}
