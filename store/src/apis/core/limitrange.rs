//! LimitRange (v1): quantities that decode (else `400`), a container
//! item's defaults (`SetDefaults_LimitRangeItem`: `default` from `max`,
//! `defaultRequest` from `default` then `min`), milli-unit rounding, and
//! its checks (`ValidateLimitRange`): types, resource names, one item per
//! type, `min <= defaultRequest <= default <= max`, ratios.

use serde_json::{Map, Value, json};

use super::resources::{
    container_name_errors, list_decode_error, name_errors, overcommit_allowed, quantity,
};
use crate::apis::strategy::Rules;
use crate::go::fmt::go_f;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{is_qualified_name, name_is_dns_subdomain};
use crate::machinery::quantity::{Quantity, default_resource_list};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update: |new, _| validate(new),
    validate_status: None,
};

/// The resource lists of an item.
const LISTS: [&str; 5] = [
    "max",
    "min",
    "default",
    "defaultRequest",
    "maxLimitRequestRatio",
];

fn limits(obj: &Value) -> &[Value] {
    obj.pointer("/spec/limits")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Why the real server cannot decode this LimitRange, if it cannot.
pub(crate) fn decode(obj: &Value) -> Option<String> {
    (0..limits(obj).len()).find_map(|i| {
        LISTS.iter().find_map(|list| {
            list_decode_error(
                obj,
                &format!("/spec/limits/{i}/{list}"),
                &format!("LimitRangeItem.spec.limits.{list}"),
            )
        })
    })
}

fn default(obj: &mut Value) {
    let Some(items) = obj
        .pointer_mut("/spec/limits")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for item in items.iter_mut() {
        if item.get("type").and_then(Value::as_str) == Some("Container")
            && let Some(map) = item.as_object_mut()
        {
            let copy = |map: &mut Map<String, Value>, from: &str, to: &str| {
                let source = map
                    .get(from)
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                let target = map.entry(to).or_insert_with(|| json!({}));
                if target.is_null() {
                    *target = json!({});
                }
                if let Some(target) = target.as_object_mut() {
                    for (k, v) in source {
                        target.entry(k).or_insert(v);
                    }
                }
            };
            copy(map, "max", "default");
            copy(map, "default", "defaultRequest");
            copy(map, "min", "defaultRequest");
            // Empty lists are not served (`omitempty`).
            for key in ["default", "defaultRequest"] {
                if map
                    .get(key)
                    .and_then(Value::as_object)
                    .is_some_and(Map::is_empty)
                {
                    map.remove(key);
                }
            }
        }
        for list in LISTS {
            default_resource_list(item.get_mut(list));
        }
    }
}

fn entries(item: &Value, list: &str) -> Vec<(String, Quantity)> {
    item.get(list)
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), quantity(v))).collect())
        .unwrap_or_default()
}

fn get<'a>(entries: &'a [(String, Quantity)], key: &str) -> Option<&'a Quantity> {
    entries.iter().find(|(k, _)| k == key).map(|(_, q)| q)
}

fn validate(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let path = Path::new(["spec", "limits"]);
    let mut types: Vec<String> = Vec::new();
    for (i, item) in limits(obj).iter().enumerate() {
        let at = path.index(i);
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        let type_errors: ErrorList = is_qualified_name(kind)
            .into_iter()
            .map(|m| FieldError::invalid(&at.child("type"), kind, m))
            .collect();
        if type_errors.is_empty()
            && !kind.contains('/')
            && !["Pod", "Container", "PersistentVolumeClaim"].contains(&kind)
        {
            errors.push(FieldError::invalid(
                &at.child("type"),
                kind,
                "must be a standard limit type or fully qualified",
            ));
        }
        errors.extend(type_errors);
        if types.iter().any(|t| t == kind) {
            errors.push(FieldError::duplicate(&at.child("type"), kind));
        }
        types.push(kind.to_string());
        let name_check = |name: &str, path: &Path| match kind {
            "Pod" | "Container" => container_name_errors(name, path),
            _ => name_errors(name, path),
        };
        let mut keys: Vec<String> = Vec::new();
        let mut lists: Vec<(&str, Vec<(String, Quantity)>)> = Vec::new();
        for list in LISTS {
            let found = entries(item, list);
            let skipped = kind == "Pod" && (list == "default" || list == "defaultRequest");
            if skipped {
                if !found.is_empty() {
                    errors.push(FieldError::forbidden(
                        &at.child(list),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
                lists.push((list, Vec::new()));
                continue;
            }
            for (name, _) in &found {
                errors.extend(name_check(name, &at.child(list).key(name)));
                if !keys.contains(name) {
                    keys.push(name.clone());
                }
            }
            lists.push((list, found));
        }
        let list = |name: &str| {
            lists
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, l)| l.as_slice())
                .unwrap_or_default()
        };
        let (max, min, defaults, requests, ratios) = (
            list("max"),
            list("min"),
            list("default"),
            list("defaultRequest"),
            list("maxLimitRequestRatio"),
        );
        if kind == "PersistentVolumeClaim"
            && get(min, "storage").is_none()
            && get(max, "storage").is_none()
        {
            errors.push(FieldError::required(
                &at.child("limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        for key in &keys {
            let (lo, hi, def, req, ratio) = (
                get(min, key),
                get(max, key),
                get(defaults, key),
                get(requests, key),
                get(ratios, key),
            );
            let bad = |errors: &mut ErrorList, list: &str, value: &Quantity, why: String| {
                errors.push(FieldError::invalid(
                    &at.child(list).key(key),
                    value.text().as_str(),
                    why,
                ));
            };
            if let (Some(lo), Some(hi)) = (lo, hi)
                && lo > hi
            {
                bad(
                    &mut errors,
                    "min",
                    lo,
                    format!("min value {lo} is greater than max value {hi}"),
                );
            }
            if let (Some(req), Some(lo)) = (req, lo)
                && lo > req
            {
                bad(
                    &mut errors,
                    "defaultRequest",
                    req,
                    format!("min value {lo} is greater than default request value {req}"),
                );
            }
            if let (Some(req), Some(hi)) = (req, hi)
                && req > hi
            {
                bad(
                    &mut errors,
                    "defaultRequest",
                    req,
                    format!("default request value {req} is greater than max value {hi}"),
                );
            }
            if let (Some(req), Some(def)) = (req, def)
                && req > def
            {
                bad(
                    &mut errors,
                    "defaultRequest",
                    req,
                    format!(
                        "default request value {req} is greater than default limit value {def}"
                    ),
                );
            }
            if let (Some(def), Some(lo)) = (def, lo)
                && lo > def
            {
                bad(
                    &mut errors,
                    "default",
                    lo,
                    format!("min value {lo} is greater than default value {def}"),
                );
            }
            if let (Some(def), Some(hi)) = (def, hi)
                && def > hi
            {
                bad(
                    &mut errors,
                    "default",
                    hi,
                    format!("default value {def} is greater than max value {hi}"),
                );
            }
            if let Some(ratio) = ratio {
                if *ratio < Quantity::parse("1").expect("1 parses") {
                    bad(
                        &mut errors,
                        "maxLimitRequestRatio",
                        ratio,
                        format!("ratio {ratio} is less than 1"),
                    );
                }
                if let (Some(lo), Some(hi)) = (lo, hi) {
                    let limit = approximate(hi) / approximate(lo);
                    if approximate(ratio) > limit {
                        bad(
                            &mut errors,
                            "maxLimitRequestRatio",
                            ratio,
                            format!("ratio {ratio} is greater than max/min = {}", go_f(limit)),
                        );
                    }
                }
            }
            if !overcommit_allowed(key)
                && let (Some(def), Some(req)) = (def, req)
                && def != req
            {
                bad(
                    &mut errors,
                    "defaultRequest",
                    req,
                    format!(
                        "default value {def} must equal to defaultRequest value {req} in {key}"
                    ),
                );
            }
        }
    }
    errors
}

/// A quantity's value as a float, from its canonical text.
fn approximate(q: &Quantity) -> f64 {
    let text = q.text();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let base: f64 = number.parse().unwrap_or(0.0);
    let scale = match suffix {
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        s if s.starts_with(['e', 'E']) => 10f64.powi(s[1..].parse().unwrap_or(0)),
        _ => 1.0,
    };
    base * scale
}
