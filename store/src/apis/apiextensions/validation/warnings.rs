//! The warnings a write of a CRD gets: formats the real server does not
//! recognise.

use serde_json::Value;

use super::{identical, versions};
use crate::go::strconv::go_quote;
use crate::schema::props::Schema;
use crate::schema::validate::format_checked;

fn unrecognized_formats(spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut schemas: Vec<&Value> = Vec::new();
    let versions = versions(spec);
    if identical(spec, "schema") {
        schemas.extend(
            versions
                .first()
                .and_then(|v| v.pointer("/schema/openAPIV3Schema")),
        );
    } else {
        schemas.extend(
            versions
                .iter()
                .filter_map(|v| v.pointer("/schema/openAPIV3Schema")),
        );
    }
    for raw in schemas {
        let schema = Schema::from_json(raw);
        collect_formats(&schema, &mut out);
    }
    out
}

fn collect_formats(s: &Schema, out: &mut Vec<String>) {
    if let Some(format) = s.format.as_deref().filter(|f| !f.is_empty())
        && !format_checked(s.type_.as_deref().unwrap_or_default(), format)
    {
        out.push(format.to_string());
    }
    for child in s.children() {
        collect_formats(child, out);
    }
}

/// The warnings of a CRD written (created, or replacing `old`): each
/// format the real server does not check (`unrecognized format
/// "colour"`), on update only those `old` did not have.
pub fn warnings(crd: &Value, old: Option<&Value>) -> Vec<String> {
    let spec = crd.get("spec").unwrap_or(&Value::Null);
    let before = old
        .map(|o| unrecognized_formats(o.get("spec").unwrap_or(&Value::Null)))
        .unwrap_or_default();
    unrecognized_formats(spec)
        .into_iter()
        .filter(|f| !before.contains(f))
        .map(|f| format!("unrecognized format {}", go_quote(&f)))
        .collect()
}
