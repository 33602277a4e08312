//! The checks of a CustomResourceDefinition itself, as kube-apiserver 1.36
//! makes them before it stores one (`apiextensions-apiserver/pkg/apis/
//! apiextensions/validation`, with the structural schema rules of
//! `pkg/apiserver/schema/validation.go` and `complete.go`, and the checks
//! of `default:` values of `schema/defaulting/validation.go`), with the
//! real server's field paths and words.
//!
//! The real server validates its internal form of the CRD: when every
//! version has the same schema (or subresources, or printer columns), it
//! is moved to the top (`spec.validation`, `spec.subresources`,
//! `spec.additionalPrinterColumns`) and its errors are reported there.
//! [`validate_crd`] reports them at the same places.
//!
//! Start with [`default_crd`] (what `apiextensions.k8s.io/v1` fills in)
//! and [`validate_crd`].

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::go::json::encode::go_json;
use crate::go::strconv::go_quote;
use crate::go::strconv::is_print;
use crate::machinery::field::{BadValue, ErrorList, ErrorType, FieldError, Path};
use crate::machinery::names::is_dns1035_label;
use crate::machinery::names::is_dns1123_subdomain;
use crate::machinery::object::strings;
use crate::machinery::objectmeta::{validate_object_meta, validate_object_meta_update};
use crate::schema::cel::compile;
use crate::schema::cel::compile_beside;
use crate::schema::objectmeta::validate;
use crate::schema::pruning::prune;
use crate::schema::validate::format_checked;
use crate::schema::validate::validate_at;
use crate::schema::{Additional, Schema};

/// The types a schema may name (`openapiV3Types`, sorted).
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// The printer column types and formats.
const COLUMN_TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];
const COLUMN_FORMATS: [&str; 8] = [
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];

/// The keywords a root schema may have when the status subresource is on
/// (`allowedFieldsAtRootSchema`, as JSON names).
const ROOT_WITH_STATUS: [&str; 22] = [
    "description",
    "type",
    "format",
    "title",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "required",
    "items",
    "properties",
    "externalDocs",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
];

/// The annotation protected groups (`*.k8s.io`, `*.kubernetes.io`) need.
const API_APPROVED: &str = "api-approved.kubernetes.io";

/// Fills in what `apiextensions.k8s.io/v1` defaults (and drops what its
/// decoding drops: `default: null` in a schema): `names.singular`
/// (the kind in lower case), `names.listKind` (the kind + `List`), the
/// conversion strategy `None`, port 443 of a conversion webhook's
/// service, and `status.storedVersions` (the storage version) when empty.
pub fn default_crd(crd: &mut Value) {
    let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if names
            .get("singular")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if names
            .get("listKind")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
            && !kind.is_empty()
        {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    if let Some(Value::Array(versions)) = spec.get_mut("versions") {
        for version in versions {
            if let Some(schema) = version.pointer_mut("/schema/openAPIV3Schema") {
                drop_null_defaults(schema);
            }
        }
    }
    match spec.get_mut("conversion") {
        Some(Value::Object(conversion)) => {
            if let Some(Value::Object(service)) = conversion
                .get_mut("webhook")
                .and_then(|w| w.get_mut("clientConfig"))
                .and_then(|c| c.get_mut("service"))
                && !service.contains_key("port")
            {
                service.insert("port".into(), json!(443));
            }
        }
        _ => {
            spec.insert("conversion".into(), json!({"strategy": "None"}));
        }
    }
    let storage = spec
        .get("versions")
        .and_then(Value::as_array)
        .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
        .and_then(|v| v["name"].as_str())
        .map(str::to_string);
    if let (Some(storage), Some(crd)) = (storage, crd.as_object_mut()) {
        let status = crd.entry("status").or_insert_with(|| json!({}));
        if let Some(status) = status.as_object_mut() {
            let empty = status
                .get("storedVersions")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
            if empty {
                status.insert("storedVersions".into(), json!([storage]));
            }
        }
    }
}

/// The stored versions of a CRD replacing `old`: the old ones, and the new
/// storage version if it is not among them (`PrepareForUpdate`).
pub fn stored_versions(crd: &Value, old: Option<&Value>) -> Vec<String> {
    let mut stored: Vec<String> = old
        .and_then(|o| o.pointer("/status/storedVersions"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let storage = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
        .and_then(|v| v["name"].as_str());
    if let Some(storage) = storage
        && !stored.iter().any(|s| s == storage)
    {
        stored.push(storage.to_string());
    }
    stored
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// An error whose value Go prints as a struct (fields in declaration
/// order), written into the message as [`go_struct`] renders it.
fn invalid_struct(field: &Path, rendered: String, detail: &str) -> FieldError {
    FieldError {
        kind: ErrorType::Invalid,
        field: field.clone(),
        value: BadValue::Omit,
        detail: format!("{rendered}: {detail}"),
    }
}

/// What a CRD's checks depend on besides the CRD.
#[derive(Clone, Copy)]
struct Options {
    /// A schema is required in every version (relaxed on update when the
    /// old CRD had none somewhere).
    require_schema: bool,
}

/// Checks a CustomResourceDefinition (`apiextensions.k8s.io/v1`, its
/// defaults filled in by [`default_crd`]) about to be created, or to
/// replace `old`: its name, group, scope, names, versions, schemas
/// (structural, the OpenAPI keywords Kubernetes allows, list and map
/// types, `default:` values, CEL rules), subresources, printer columns,
/// conversion, stored versions and API approval. Returns the errors of a
/// 422 answer, none when the CRD is fine.
pub fn validate_crd(crd: &Value, old: Option<&Value>) -> ErrorList {
    let mut errors = ErrorList::new();
    let meta = crd.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let spec = crd.get("spec").cloned().unwrap_or_else(|| json!({}));
    let name = text(&meta, "/name");
    let metadata = Path::new(["metadata"]);
    match old {
        None => {
            errors.extend(validate_object_meta(&meta, false, &metadata));
            let expected = format!("{}.{}", text(&spec, "/names/plural"), text(&spec, "/group"));
            if !name.is_empty() && name != expected {
                errors.push(FieldError::invalid(
                    &metadata.child("name"),
                    name,
                    "must be spec.names.plural+\".\"+spec.group",
                ));
            }
        }
        Some(old) => {
            let old_meta = old.get("metadata").cloned().unwrap_or_else(|| json!({}));
            errors.extend(validate_object_meta_update(&meta, &old_meta, &metadata));
        }
    }
    let options = Options {
        require_schema: old
            .is_none_or(|old| all_versions_have_schemas(old.get("spec").unwrap_or(&Value::Null))),
    };
    errors.extend(validate_spec(&spec, options));
    if let Some(old) = old {
        let old_spec = old.get("spec").cloned().unwrap_or_else(|| json!({}));
        errors.extend(validate_spec_update(&spec, &old_spec, established(old)));
    }
    let stored = strings(crd.pointer("/status/storedVersions"));
    errors.extend(validate_stored_versions(&stored, &spec));
    errors.extend(validate_api_approval(crd, old));
    if spec["preserveUnknownFields"] == true
        && old.is_none_or(|old| old.pointer("/spec/preserveUnknownFields") != Some(&json!(true)))
    {
        errors.push(FieldError::invalid(
            &Path::new(["spec", "preserveUnknownFields"]),
            json!(true),
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    errors
}

fn established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

fn versions(spec: &Value) -> &[Value] {
    spec.get("versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn all_versions_have_schemas(spec: &Value) -> bool {
    versions(spec)
        .iter()
        .all(|v| v.pointer("/schema/openAPIV3Schema").is_some())
}

/// Whether every version has the same value at `key` (the real server
/// then moves it to the top of its internal form).
fn identical(spec: &Value, key: &str) -> bool {
    let versions = versions(spec);
    versions
        .first()
        .is_some_and(|first| versions.iter().all(|v| v.get(key) == first.get(key)))
}

fn validate_spec_update(spec: &Value, old: &Value, established: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    let at = Path::new(["spec"]);
    let mut immutable = |field: Path, new: &Value, old: &Value| {
        if new != old {
            errors.push(FieldError::invalid(
                &field,
                new.clone(),
                "field is immutable",
            ));
        }
    };
    if established {
        immutable(at.child("scope"), &spec["scope"], &old["scope"]);
        immutable(
            at.child("names").child("kind"),
            &spec["names"]["kind"],
            &old["names"]["kind"],
        );
    }
    immutable(at.child("group"), &spec["group"], &old["group"]);
    immutable(
        at.child("names").child("plural"),
        &spec["names"]["plural"],
        &old["names"]["plural"],
    );
    errors
}

fn validate_spec(spec: &Value, options: Options) -> ErrorList {
    let mut errors = ErrorList::new();
    let at = Path::new(["spec"]);
    let group = text(spec, "/group");
    if group.is_empty() {
        errors.push(FieldError::required(&at.child("group"), ""));
    } else {
        let problems = is_dns1123_subdomain(group);
        if !problems.is_empty() {
            errors.push(FieldError::invalid(
                &at.child("group"),
                group,
                problems.join(","),
            ));
        } else if !group.contains('.') {
            errors.push(FieldError::invalid(
                &at.child("group"),
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    errors.extend(enum_string(
        &at.child("scope"),
        text(spec, "/scope"),
        &["Cluster", "Namespaced"],
        true,
    ));

    let versions = versions(spec);
    let schema_on_top = identical(spec, "schema") && versions[0].get("schema").is_some();
    let subresources_on_top = identical(spec, "subresources");
    let columns_on_top = identical(spec, "additionalPrinterColumns");
    let selectable_on_top =
        identical(spec, "selectableFields") && !selectable_fields(&versions[0]).is_empty();
    let any_status = versions
        .iter()
        .any(|v| v.pointer("/subresources/status").is_some());

    if options.require_schema && !schema_on_top {
        for (i, v) in versions.iter().enumerate() {
            if v.pointer("/schema/openAPIV3Schema").is_none() {
                errors.push(FieldError::required(
                    &at.child("versions")
                        .index(i)
                        .child("schema")
                        .child("openAPIV3Schema"),
                    "",
                ));
            }
        }
    }
    let has_defaults = versions.iter().any(|v| {
        v.pointer("/schema/openAPIV3Schema")
            .is_some_and(|s| schema_has(&Schema::from_json(s), &|s: &Schema| s.default.is_some()))
    });
    if has_defaults && spec["preserveUnknownFields"] == true {
        errors.push(FieldError::invalid(
            &at.child("preserveUnknownFields"),
            json!(true),
            "must be false in order to use defaults in the schema",
        ));
    }

    let mut storage = 0;
    let mut seen = BTreeSet::new();
    let mut unique = true;
    for (i, version) in versions.iter().enumerate() {
        let vat = at.child("versions").index(i);
        if version["storage"] == true {
            storage += 1;
        }
        let name = text(version, "/name");
        if !seen.insert(name) {
            unique = false;
        }
        let problems = is_dns1035_label(name);
        if !problems.is_empty() {
            errors.push(FieldError::invalid(
                &vat.child("name"),
                name,
                problems.join(","),
            ));
        }
        errors.extend(validate_deprecation(version, &vat));
        let status = version.pointer("/subresources/status").is_some();
        if !schema_on_top && let Some(schema) = version.pointer("/schema/openAPIV3Schema") {
            errors.extend(validate_schema(schema, &vat.child("schema"), status));
        }
        if !subresources_on_top && let Some(subresources) = version.get("subresources") {
            errors.extend(validate_subresources(
                subresources,
                &vat.child("subresources"),
            ));
        }
        if !columns_on_top {
            errors.extend(validate_columns(
                version,
                &vat.child("additionalPrinterColumns"),
            ));
        }
        if !selectable_on_top && !selectable_fields(version).is_empty() {
            match version
                .pointer("/schema/openAPIV3Schema")
                .filter(|_| !schema_on_top)
            {
                None => errors.push(FieldError::invalid(
                    &vat.child("selectableFields"),
                    "",
                    "may only be set when `version.schema.openAPIV3Schema` is not included",
                )),
                Some(schema) => errors.extend(validate_selectable_fields(
                    selectable_fields(version),
                    &Schema::from_json(schema),
                    &vat.child("selectableFields"),
                )),
            }
        }
    }
    if !unique {
        errors.push(invalid_struct(
            &at.child("versions"),
            go_versions(spec),
            "must contain unique version names",
        ));
    }
    if storage != 1 {
        errors.push(invalid_struct(
            &at.child("versions"),
            go_versions(spec),
            "must have exactly one version marked as storage version",
        ));
    }
    // The internal form's `spec.version` is the first version's name.
    if let Some(first) = versions
        .first()
        .map(|v| text(v, "/name"))
        .filter(|n| !n.is_empty())
    {
        let problems = is_dns1035_label(first);
        if !problems.is_empty() {
            errors.push(FieldError::invalid(
                &at.child("version"),
                first,
                problems.join(","),
            ));
        }
    }

    errors.extend(validate_names(&spec["names"], &at.child("names")));
    if schema_on_top && let Some(schema) = versions[0].pointer("/schema/openAPIV3Schema") {
        errors.extend(validate_schema(schema, &at.child("validation"), any_status));
    }
    if subresources_on_top
        && let Some(subresources) = versions.first().and_then(|v| v.get("subresources"))
    {
        errors.extend(validate_subresources(
            subresources,
            &at.child("subresources"),
        ));
    }
    if columns_on_top && let Some(first) = versions.first() {
        errors.extend(validate_columns(
            first,
            &at.child("additionalPrinterColumns"),
        ));
    }
    if selectable_on_top && let Some(first) = versions.first() {
        match first
            .pointer("/schema/openAPIV3Schema")
            .filter(|_| schema_on_top)
        {
            None => errors.push(FieldError::invalid(
                &at.child("selectableFields"),
                "",
                "may only be set when validations.schema is included",
            )),
            Some(schema) => errors.extend(validate_selectable_fields(
                selectable_fields(first),
                &Schema::from_json(schema),
                &at.child("selectableFields"),
            )),
        }
    }

    let strategy = text(spec, "/conversion/strategy");
    if !strategy.is_empty() && strategy != "None" && spec["preserveUnknownFields"] == true {
        errors.push(FieldError::invalid(
            &at.child("conversion").child("strategy"),
            strategy,
            "must be None if spec.preserveUnknownFields is true",
        ));
    }
    if let Some(conversion) = spec.get("conversion") {
        errors.extend(validate_conversion(conversion, &at.child("conversion")));
    }
    errors
}

/// The versions as Go prints the internal `[]CustomResourceDefinitionVersion`
/// (with what moved to the top left out).
fn go_versions(spec: &Value) -> String {
    let schema_on_top = identical(spec, "schema");
    let subresources_on_top = identical(spec, "subresources");
    let columns_on_top = identical(spec, "additionalPrinterColumns");
    let items: Vec<String> = versions(spec)
        .iter()
        .map(|v| {
            let or_null = |key: &str, on_top: bool| match v.get(key) {
                Some(value) if !on_top => go_json(value),
                _ => "null".into(),
            };
            format!(
                "{{\"Name\":{},\"Served\":{},\"Storage\":{},\"Deprecated\":{},\"DeprecationWarning\":{},\"Schema\":{},\"Subresources\":{},\"AdditionalPrinterColumns\":{},\"SelectableFields\":{}}}",
                go_json(&json!(text(v, "/name"))),
                v["served"] == true,
                v["storage"] == true,
                v["deprecated"] == true,
                v.get("deprecationWarning").map_or("null".into(), go_json),
                or_null("schema", schema_on_top),
                or_null("subresources", subresources_on_top),
                or_null("additionalPrinterColumns", columns_on_top),
                v.get("selectableFields").map_or("null".into(), go_json),
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn enum_string(at: &Path, value: &str, accepted: &[&str], required: bool) -> ErrorList {
    if value.is_empty() {
        return if required {
            vec![FieldError::required(at, "")]
        } else {
            Vec::new()
        };
    }
    if accepted.contains(&value) {
        return Vec::new();
    }
    let accepted: Vec<String> = accepted.iter().map(|s| s.to_string()).collect();
    vec![FieldError::not_supported(at, value, &accepted)]
}

fn validate_deprecation(version: &Value, at: &Path) -> ErrorList {
    let Some(warning) = version.get("deprecationWarning").and_then(Value::as_str) else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    if version["deprecated"] != true {
        problems.push("can only be set for deprecated versions".to_string());
    } else {
        if warning.len() > 256 {
            problems.push("must be <= 256 characters long".into());
        }
        if warning.is_empty() {
            problems.push("must not be an empty string".into());
        }
        // Go checks `unicode.IsPrint` first: a control character is not
        // printable either.
        if let Some((i, _)) = warning.char_indices().find(|(_, c)| !is_print(*c)) {
            problems.push(format!(
                "must only contain printable UTF-8 characters; non-printable character found at index {i}"
            ));
        }
    }
    problems
        .into_iter()
        .map(|p| FieldError::invalid(&at.child("deprecationWarning"), warning, p))
        .collect()
}

fn validate_names(names: &Value, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let get = |k: &str| names.get(k).and_then(Value::as_str).unwrap_or_default();
    for key in ["plural", "singular", "kind", "listKind"] {
        if get(key).is_empty() {
            errors.push(FieldError::required(&at.child(key), ""));
        }
    }
    for key in ["plural", "singular"] {
        let value = get(key);
        let problems = is_dns1035_label(value);
        if !value.is_empty() && !problems.is_empty() {
            errors.push(FieldError::invalid(
                &at.child(key),
                value,
                problems.join(","),
            ));
        }
    }
    for key in ["kind", "listKind"] {
        let value = get(key);
        let problems = is_dns1035_label(&value.to_lowercase());
        if !value.is_empty() && !problems.is_empty() {
            errors.push(FieldError::invalid(
                &at.child(key),
                value,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    problems.join(",")
                ),
            ));
        }
    }
    for (key, list) in [("shortNames", "shortNames"), ("categories", "categories")] {
        for (i, value) in strings(names.get(list)).iter().enumerate() {
            let problems = is_dns1035_label(value);
            if !problems.is_empty() {
                errors.push(FieldError::invalid(
                    &at.child(key).index(i),
                    value.as_str(),
                    problems.join(","),
                ));
            }
        }
    }
    if !get("kind").is_empty() && get("kind") == get("listKind") {
        errors.push(FieldError::invalid(
            &at.child("listKind"),
            get("listKind"),
            "kind and listKind may not be the same",
        ));
    }
    errors
}

fn validate_stored_versions(stored: &[String], spec: &Value) -> ErrorList {
    let at = Path::new(["status", "storedVersions"]);
    let value = json!(stored);
    if stored.is_empty() {
        // What the strategy gathered: nothing is Go's nil slice, `null`.
        return vec![FieldError::invalid(
            &at,
            Value::Null,
            "must have at least one stored version",
        )];
    }
    let mut errors = ErrorList::new();
    let mut left: Vec<(usize, &String)> = stored.iter().enumerate().collect();
    for version in versions(spec) {
        let name = text(version, "/name");
        let found = left.iter().position(|(_, s)| *s == name);
        if version["storage"] == true && !stored.iter().any(|s| s == name) {
            errors.push(FieldError::invalid(
                &at,
                value.clone(),
                format!("must have the storage version {name}"),
            ));
        }
        if let Some(found) = found {
            left.remove(found);
        }
    }
    for (i, v) in left {
        errors.push(FieldError::invalid(
            &at.index(i),
            v.as_str(),
            format!(
                "missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"
            ),
        ));
    }
    errors
}

fn approval_state(annotations: &Value) -> (u8, String) {
    let annotation = annotations
        .get(API_APPROVED)
        .and_then(Value::as_str)
        .unwrap_or_default();
    let url_like = annotation.split_once("://").is_some_and(|(scheme, rest)| {
        !scheme.is_empty() && !rest.is_empty() && !rest.starts_with('/')
    });
    if annotation.is_empty() {
        (
            0,
            format!(
                "protected groups must have approval annotation \"{API_APPROVED}\", see https://github.com/kubernetes/enhancements/pull/1111"
            ),
        )
    } else if annotation.starts_with("unapproved") || url_like {
        (1, String::new())
    } else {
        (
            2,
            format!(
                "protected groups must have approval annotation \"{API_APPROVED}\" with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"
            ),
        )
    }
}

fn validate_api_approval(crd: &Value, old: Option<&Value>) -> ErrorList {
    let group = text(crd, "/spec/group");
    let protected = ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|p| group == *p || group.ends_with(&format!(".{p}")));
    if !protected {
        return Vec::new();
    }
    let annotations = crd
        .pointer("/metadata/annotations")
        .cloned()
        .unwrap_or(Value::Null);
    let (state, reason) = approval_state(&annotations);
    if let Some(old) = old {
        let old_annotations = old
            .pointer("/metadata/annotations")
            .cloned()
            .unwrap_or(Value::Null);
        if approval_state(&old_annotations).0 == state {
            return Vec::new();
        }
    }
    let at = Path::new(["metadata", "annotations"]).key(API_APPROVED);
    match state {
        0 => vec![FieldError::required(&at, reason)],
        2 => vec![FieldError::invalid(
            &at,
            text(&annotations, &format!("/{API_APPROVED}")),
            reason,
        )],
        _ => Vec::new(),
    }
}

fn simple_json_path(value: &str, at: &Path) -> ErrorList {
    if value.is_empty() {
        vec![FieldError::invalid(at, value, "must not be empty")]
    } else if !value.starts_with('.') {
        vec![FieldError::invalid(
            at,
            value,
            "must be a simple json path starting with .",
        )]
    } else {
        Vec::new()
    }
}

fn validate_subresources(subresources: &Value, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(scale) = subresources.get("scale") else {
        return errors;
    };
    for (key, prefix, words) in [
        (
            "specReplicasPath",
            ".spec.",
            "should be a json path under .spec",
        ),
        (
            "statusReplicasPath",
            ".status.",
            "should be a json path under .status",
        ),
    ] {
        let field = at.child(&format!("scale.{key}"));
        let value = text(scale, &format!("/{key}"));
        if value.is_empty() {
            errors.push(FieldError::required(&field, ""));
        } else {
            let problems = simple_json_path(value, &field);
            if !problems.is_empty() {
                errors.extend(problems);
            } else if !value.starts_with(prefix) {
                errors.push(FieldError::invalid(&field, value, words));
            }
        }
    }
    let selector = text(scale, "/labelSelectorPath");
    if !selector.is_empty() {
        let field = at.child("scale.labelSelectorPath");
        let problems = simple_json_path(selector, &field);
        if !problems.is_empty() {
            errors.extend(problems);
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            errors.push(FieldError::invalid(
                &field,
                selector,
                "should be a json path under either .spec or .status",
            ));
        }
    }
    errors
}

fn validate_columns(version: &Value, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let columns = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let types = format!("must be one of {}", COLUMN_TYPES.join(","));
    for (i, column) in columns.iter().enumerate() {
        let cat = at.index(i);
        if text(column, "/name").is_empty() {
            errors.push(FieldError::required(&cat.child("name"), ""));
        }
        let kind = text(column, "/type");
        if kind.is_empty() {
            errors.push(FieldError::required(&cat.child("type"), types.clone()));
        } else if !COLUMN_TYPES.contains(&kind) {
            errors.push(FieldError::invalid(&cat.child("type"), kind, types.clone()));
        }
        let format = text(column, "/format");
        if !format.is_empty() && !COLUMN_FORMATS.contains(&format) {
            errors.push(FieldError::invalid(
                &cat.child("format"),
                format,
                format!("must be one of {}", COLUMN_FORMATS.join(",")),
            ));
        }
        let path = text(column, "/jsonPath");
        if path.is_empty() {
            errors.push(FieldError::required(&cat.child("JSONPath"), ""));
        } else {
            errors.extend(simple_json_path(path, &cat.child("JSONPath")));
        }
    }
    errors
}

/// The `selectableFields` of a version.
fn selectable_fields(version: &Value) -> &[Value] {
    version
        .get("selectableFields")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// `MaxSelectableFields`.
const MAX_SELECTABLE_FIELDS: i64 = 8;

/// `cel.ValidFieldPath` without array notation, as selectable fields use
/// it: the path's field names and the schema it points to (none under
/// `additionalProperties: true`), or why it is not valid.
fn selectable_path<'a>(
    path: &str,
    schema: &'a Schema,
) -> Result<(Vec<String>, Option<&'a Schema>), String> {
    let mut tokens = Vec::new();
    let mut start = 0;
    for (i, c) in path.char_indices() {
        if matches!(c, '.' | '[' | ']') {
            if i > start {
                tokens.push(&path[start..i]);
            }
            tokens.push(&path[i..=i]);
            start = i + 1;
        }
    }
    if start < path.len() {
        tokens.push(&path[start..]);
    }
    let not_valid = || "does not refer to a valid field".to_string();
    let mut names = Vec::new();
    let mut node = Some(schema);
    let mut tokens = tokens.into_iter();
    while let Some(token) = tokens.next() {
        match token {
            "[" => return Err("array notation is not allowed".into()),
            "." => {
                let name = tokens.next().ok_or("unexpected end of JSON path")?;
                let current = node.ok_or_else(not_valid)?;
                if !current.properties.is_empty() {
                    node = Some(current.properties.get(name).ok_or_else(not_valid)?);
                } else if let Some(additional) = &current.additional_properties {
                    node = match additional {
                        Additional::Schema(schema) => Some(schema),
                        _ => None,
                    };
                } else {
                    return Err(not_valid());
                }
                names.push(name.to_string());
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok((names, node))
}

/// `ValidateCustomResourceSelectableFields`: each a path to a string,
/// boolean or integer field outside metadata, once, at most eight.
fn validate_selectable_fields(fields: &[Value], schema: &Schema, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (i, field) in fields.iter().enumerate() {
        let fat = at.index(i).child("jsonPath");
        let path = text(field, "/jsonPath");
        if path.is_empty() {
            errors.push(FieldError::required(&fat, ""));
            continue;
        }
        let (names, found) = match selectable_path(path, schema) {
            Ok(found) => found,
            Err(why) => {
                errors.push(FieldError::invalid(
                    &fat,
                    path,
                    format!("is an invalid path: {why}"),
                ));
                continue;
            }
        };
        if names.first().is_some_and(|n| n == "metadata") {
            errors.push(FieldError::invalid(
                &fat,
                path,
                "must not point to fields in metadata",
            ));
        }
        let allowed = found
            .and_then(|s| s.type_.as_deref())
            .is_some_and(|t| matches!(t, "string" | "boolean" | "integer"));
        if !allowed {
            errors.push(FieldError::invalid(
                &fat,
                path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        if !seen.insert(names.join(".")) {
            errors.push(FieldError::duplicate(&fat, path));
        }
    }
    if seen.len() as i64 > MAX_SELECTABLE_FIELDS {
        errors.push(FieldError::too_many(
            at,
            seen.len() as i64,
            MAX_SELECTABLE_FIELDS,
        ));
    }
    errors
}

fn validate_conversion(conversion: &Value, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let strategy = text(conversion, "/strategy");
    errors.extend(enum_string(
        &at.child("strategy"),
        strategy,
        &["None", "Webhook"],
        true,
    ));
    let config = conversion.pointer("/webhook/clientConfig");
    let review_versions = conversion.pointer("/webhook/conversionReviewVersions");
    // The internal form keeps the client config and review versions at
    // `webhookClientConfig` and `conversionReviewVersions`.
    let config_at = at.child("webhookClientConfig");
    let versions_at = at.child("conversionReviewVersions");
    if strategy == "Webhook" {
        match config {
            None => errors.push(FieldError::required(
                &config_at,
                "required when strategy is set to Webhook",
            )),
            Some(config) => {
                let url = config.get("url").and_then(Value::as_str);
                let service = config.get("service");
                match (url, service) {
                    (Some(url), None) => {
                        errors.extend(validate_webhook_url(url, &config_at.child("url")))
                    }
                    (None, Some(service)) => {
                        errors.extend(validate_webhook_service(
                            service,
                            &config_at.child("service"),
                        ));
                    }
                    _ => errors.push(FieldError::required(
                        &config_at,
                        "exactly one of url or service is required",
                    )),
                }
            }
        }
        let versions = strings(review_versions);
        if versions.is_empty() {
            errors.push(FieldError::required(&versions_at, ""));
        } else {
            let mut seen = BTreeSet::new();
            let mut accepted = false;
            for (i, v) in versions.iter().enumerate() {
                if !seen.insert(v) {
                    errors.push(FieldError::invalid(
                        &versions_at.index(i),
                        v.as_str(),
                        "duplicate version",
                    ));
                    continue;
                }
                for problem in is_dns1035_label(v) {
                    errors.push(FieldError::invalid(
                        &versions_at.index(i),
                        v.as_str(),
                        problem,
                    ));
                }
                accepted |= v == "v1" || v == "v1beta1";
            }
            if !accepted {
                errors.push(FieldError::invalid(
                    &versions_at,
                    json!(versions),
                    "must include at least one of v1, v1beta1",
                ));
            }
        }
    } else {
        if config.is_some() {
            errors.push(FieldError::forbidden(
                &config_at,
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !strings(review_versions).is_empty() {
            errors.push(FieldError::forbidden(
                &versions_at,
                "should not be set when strategy is not set to Webhook",
            ));
        }
    }
    errors
}

/// What Go's `url.Parse` finds in a URL, as far as webhook URLs are
/// checked.
#[derive(Debug, Default, PartialEq)]
struct GoUrl {
    scheme: String,
    user: Option<String>,
    host: String,
    fragment: String,
    raw_query: String,
}

/// Go's `url.Parse`, to the parts [`validate_webhook_url`] looks at: the
/// fragment after `#`, the scheme before the first `:` (letters, then
/// digits, `+`, `-`, `.`), the query after `?`, and the authority after
/// `//` (user information before its last `@`).
fn parse_go_url(raw: &str) -> Result<GoUrl, String> {
    let failed = |why: &str| format!("parse {}: {why}", go_json(&json!(raw)));
    let mut url = GoUrl::default();
    let (rest, fragment) = match raw.split_once('#') {
        Some((rest, fragment)) => (rest, fragment),
        None => (raw, ""),
    };
    url.fragment = fragment.to_string();
    if rest.chars().any(|c| (c as u32) < 0x20 || c as u32 == 0x7f) {
        return Err(failed("net/url: invalid control character in URL"));
    }
    let mut rest = rest;
    for (i, c) in rest.char_indices() {
        if c.is_ascii_alphabetic() {
            continue;
        }
        if i > 0 && (c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) {
            continue;
        }
        if c == ':' {
            if i == 0 {
                return Err(failed("missing protocol scheme"));
            }
            url.scheme = rest[..i].to_ascii_lowercase();
            rest = &rest[i + 1..];
        }
        break;
    }
    if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_string();
        rest = before;
    }
    if !rest.starts_with('/') && !url.scheme.is_empty() {
        // An opaque URL (`https:host`): no host.
        return Ok(url);
    }
    if let Some(after) = rest.strip_prefix("//")
        && !after.starts_with('/')
    {
        let authority = after.split('/').next().unwrap_or_default();
        match authority.rsplit_once('@') {
            Some((user, host)) => {
                url.user = Some(user.to_string());
                url.host = host.to_string();
            }
            None => url.host = authority.to_string(),
        }
    }
    Ok(url)
}

/// `webhook.ValidateWebhookURL` with https required.
fn validate_webhook_url(url: &str, at: &Path) -> ErrorList {
    const FORM: &str = "; desired format: https://host[/path]";
    let parsed = match parse_go_url(url) {
        Ok(parsed) => parsed,
        Err(why) => {
            return vec![FieldError::required(
                at,
                format!("url must be a valid URL: {why}{FORM}"),
            )];
        }
    };
    let mut errors = ErrorList::new();
    if parsed.scheme != "https" {
        errors.push(FieldError::invalid(
            at,
            parsed.scheme.as_str(),
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if parsed.host.is_empty() {
        errors.push(FieldError::invalid(
            at,
            "",
            format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = &parsed.user {
        errors.push(FieldError::invalid(
            at,
            user.as_str(),
            "user information is not permitted in the URL",
        ));
    }
    if !parsed.fragment.is_empty() {
        errors.push(FieldError::invalid(
            at,
            parsed.fragment.as_str(),
            "fragments are not permitted in the URL",
        ));
    }
    if !parsed.raw_query.is_empty() {
        errors.push(FieldError::invalid(
            at,
            parsed.raw_query.as_str(),
            "query parameters are not permitted in the URL",
        ));
    }
    errors
}

/// `webhook.ValidateWebhookService`, called as the real server calls it
/// for a conversion webhook: with the service's name and namespace
/// swapped (a missing namespace is reported at `service.name`, a missing
/// name at `service.namespace`).
fn validate_webhook_service(service: &Value, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    // `ValidateWebhookService(path, cc.Service.Name, cc.Service.Namespace, ...)`
    // of `func ValidateWebhookService(fldPath, namespace, name string, ...)`.
    let name = text(service, "/namespace");
    let namespace = text(service, "/name");
    if name.is_empty() {
        errors.push(FieldError::required(&at.child("name"), ""));
    }
    if namespace.is_empty() {
        errors.push(FieldError::required(&at.child("namespace"), ""));
    }
    let port = service.get("port").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=65535).contains(&port) {
        errors.push(FieldError::invalid(
            &at.child("port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(path) = service.get("path").and_then(Value::as_str) else {
        return errors;
    };
    let path_at = at.child("path");
    if path == "/" || path.is_empty() {
        return errors;
    }
    if path == "//" {
        errors.push(FieldError::invalid(
            &path_at,
            path,
            "segment[0] may not be empty",
        ));
        return errors;
    }
    if !path.starts_with('/') {
        errors.push(FieldError::invalid(&path_at, path, "must start with a '/'"));
    }
    // Go drops the first byte, whatever it is, then one trailing `/`.
    let mut check = path.get(1..).unwrap_or_default();
    check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errors.push(FieldError::invalid(
                &path_at,
                path,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for failure in is_dns1123_subdomain(step) {
            errors.push(FieldError::invalid(
                &path_at,
                path,
                format!("segment[{i}]: {failure}"),
            ));
        }
    }
    errors
}

/// Whether `schema` or a schema beneath it satisfies `test`.
fn schema_has(schema: &Schema, test: &dyn Fn(&Schema) -> bool) -> bool {
    if test(schema) {
        return true;
    }
    let children = schema
        .properties
        .values()
        .chain(schema.items.as_deref())
        .chain(schema.items_list.iter().flatten())
        .chain(schema.all_of.iter())
        .chain(schema.any_of.iter())
        .chain(schema.one_of.iter())
        .chain(schema.not.as_deref());
    let mut children: Vec<&Schema> = children.collect();
    if let Some(Additional::Schema(additional)) = &schema.additional_properties {
        children.push(additional);
    }
    children.into_iter().any(|s| schema_has(s, test))
}

/// Checks one `schema:` (`CustomResourceValidation`) at `at`
/// (`spec.validation` or `spec.versions[i].schema`).
fn validate_schema(raw: &Value, at: &Path, status_enabled: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    let root = at.child("openAPIV3Schema");
    if status_enabled && let Some(map) = raw.as_object() {
        if let Some(kind) = map.get("type").and_then(Value::as_str)
            && kind != "object"
        {
            errors.push(FieldError::invalid(
                &at.child("openAPIV3Schema.type"),
                kind,
                "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
            ));
        } else if map.keys().any(|k| !ROOT_WITH_STATUS.contains(&k.as_str())) {
            errors.push(FieldError {
                kind: ErrorType::Invalid,
                field: root.clone(),
                value: BadValue::Omit,
                detail: "only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled".into(),
            });
        }
    }
    if raw["nullable"] == true {
        errors.push(FieldError::forbidden(
            &at.child("openAPIV3Schema.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let schema = Schema::from_json(raw);
    let mut structural_ok = false;
    let mut init_error = None;
    match structural_init_error(&schema) {
        Some(why) => init_error = Some(why),
        None => {
            let structural = validate_structural(&schema, &root);
            if !structural.is_empty() {
                errors.extend(structural);
            } else {
                let defaults = validate_defaults(&schema, &root, true, false);
                structural_ok = defaults.is_empty();
                errors.extend(defaults);
            }
        }
    }
    let keyword_errors = openapi_schema(&schema, &root, &Context::default(), true);
    // The rules' own fields are always checked; a node's rules are
    // compiled only when its schema is sound at and beneath it (the whole
    // schema: structural, with valid defaults).
    let mut blocking = keyword_errors.clone();
    if !structural_ok {
        blocking.push(FieldError::forbidden(&root, ""));
    }
    errors.extend(keyword_errors);
    if let Err(cel) = compile_beside(&schema, &root, &blocking) {
        errors.extend(cel);
    }
    if let Some(why) = init_error
        && errors.is_empty()
    {
        // Shown only when nothing else is wrong, as the real server does.
        errors.push(FieldError::invalid(&root, "", why));
    }
    errors
}

/// Why `NewStructural` cannot read a schema: a keyword it does not
/// support, or `items` as a list.
fn structural_init_error(schema: &Schema) -> Option<String> {
    let mut why = None;
    if schema_has(schema, &|s: &Schema| {
        s.items_list.is_some() || s.forbidden.iter().any(|k| k != "externalDocs")
    }) {
        why = Some(first_unsupported(schema));
    }
    why
}

fn first_unsupported(s: &Schema) -> String {
    for keyword in [
        "id",
        "$schema",
        "$ref",
        "patternProperties",
        "dependencies",
        "additionalItems",
        "definitions",
    ] {
        if s.forbidden.iter().any(|k| k == keyword) {
            let name = if keyword == "$schema" {
                "schema"
            } else {
                keyword
            };
            return format!("OpenAPIV3Schema '{name}' is not supported");
        }
    }
    if s.items_list.is_some() {
        return "OpenAPIV3Schema 'items' must be a schema, but is an array".into();
    }
    let mut children: Vec<&Schema> = s
        .properties
        .values()
        .chain(s.items.as_deref())
        .chain(s.all_of.iter())
        .chain(s.any_of.iter())
        .chain(s.one_of.iter())
        .chain(s.not.as_deref())
        .collect();
    if let Some(Additional::Schema(additional)) = &s.additional_properties {
        children.push(additional);
    }
    children
        .into_iter()
        .find(|c| {
            schema_has(c, &|s: &Schema| {
                s.items_list.is_some() || s.forbidden.iter().any(|k| k != "externalDocs")
            })
        })
        .map(first_unsupported)
        .unwrap_or_default()
}

/// What the walk over a schema's keywords knows of where it is.
#[derive(Clone, Default)]
struct Context {
    /// `default:` is not allowed here, for this reason.
    no_defaults: Option<String>,
    /// Inside the metadata, kind or apiVersion of a resource.
    inside_meta: bool,
}

/// `ValidateCustomResourceDefinitionOpenAPISchema` without the CEL rules
/// (compiled by [`crate::schema::cel::compile`]).
fn openapi_schema(schema: &Schema, at: &Path, context: &Context, is_root: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    // specStandardValidatorV3
    if let Some(kind) = schema.type_.as_deref()
        && !kind.is_empty()
        && !TYPES.contains(&kind)
    {
        let types: Vec<String> = TYPES.iter().map(|t| t.to_string()).collect();
        errors.push(FieldError::not_supported(&at.child("type"), kind, &types));
    }
    if schema.default.is_some()
        && let Some(reason) = &context.no_defaults
    {
        errors.push(FieldError::forbidden(
            &at.child("default"),
            format!("must not be set {reason}"),
        ));
    }
    for keyword in &schema.forbidden {
        let words = match keyword.as_str() {
            "id" => "id is not supported",
            "additionalItems" => "additionalItems is not supported",
            "patternProperties" => "patternProperties is not supported",
            "definitions" => "definitions is not supported",
            "dependencies" => "dependencies is not supported",
            "$ref" => "$ref is not supported",
            _ => continue,
        };
        errors.push(FieldError::forbidden(&at.child(keyword), words));
    }
    if schema.type_.as_deref() == Some("null") {
        errors.push(FieldError::forbidden(
            &at.child("type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if schema.items_list.as_ref().is_some_and(|l| !l.is_empty()) {
        errors.push(FieldError::forbidden(
            &at.child("items"),
            "items must be a schema object and not an array",
        ));
    }
    if context.inside_meta && schema.embedded_resource {
        errors.push(FieldError::forbidden(
            &at.child("x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }

    if schema.unique_items {
        errors.push(FieldError::forbidden(
            &at.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if let Some(additional) = &schema.additional_properties {
        if !schema.properties.is_empty() && additional != &Additional::Allows(true) {
            errors.push(FieldError::forbidden(
                &at.child("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if let Additional::Schema(sub) = additional {
            let mut sub_context = context.clone();
            if context.inside_meta {
                sub_context.no_defaults =
                    Some("inside additionalProperties applying to object metadata".into());
            }
            errors.extend(openapi_schema(
                sub,
                &at.child("additionalProperties"),
                &sub_context,
                false,
            ));
        }
    }
    for (name, property) in &schema.properties {
        let mut sub_context = context.clone();
        if (is_root || schema.embedded_resource)
            && ["metadata", "kind", "apiVersion"].contains(&name.as_str())
        {
            sub_context.inside_meta = true;
            if is_root {
                sub_context.no_defaults = Some(format!("in top-level {name}"));
            }
        }
        errors.extend(openapi_schema(
            property,
            &at.child("properties").key(name),
            &sub_context,
            false,
        ));
    }
    if let Some(not) = &schema.not {
        errors.extend(openapi_schema(not, &at.child("not"), context, false));
    }
    for (key, list) in [
        ("allOf", &schema.all_of),
        ("oneOf", &schema.one_of),
        ("anyOf", &schema.any_of),
    ] {
        for (i, sub) in list.iter().enumerate() {
            errors.extend(openapi_schema(sub, &at.child(key).index(i), context, false));
        }
    }
    if let Some(items) = &schema.items {
        errors.extend(openapi_schema(items, &at.child("items"), context, false));
    }
    if let Some(list) = &schema.items_list {
        for (i, items) in list.iter().enumerate() {
            errors.extend(openapi_schema(
                items,
                &at.child("items").index(i),
                context,
                false,
            ));
        }
    }

    if schema.preserve_unknown_fields == Some(false) {
        errors.push(FieldError::invalid(
            &at.child("x-kubernetes-preserve-unknown-fields"),
            json!(false),
            "must be true or undefined",
        ));
    }
    let kind = schema.type_.as_deref().unwrap_or_default();
    if let Some(map_type) = schema.map_type.as_deref() {
        if kind != "object" {
            errors.push(type_error(
                at,
                kind,
                "must be object if x-kubernetes-map-type is specified",
            ));
        }
        if map_type != "atomic" && map_type != "granular" {
            errors.push(FieldError::not_supported(
                &at.child("x-kubernetes-map-type"),
                map_type,
                &["atomic".into(), "granular".into()],
            ));
        }
    }
    let list_type = schema.list_type.as_deref();
    if list_type.is_some() && kind != "array" {
        errors.push(type_error(
            at,
            kind,
            "must be array if x-kubernetes-list-type is specified",
        ));
    } else if list_type == Some("set")
        && let Some(items) = &schema.items
    {
        let null_or = |v: Option<&str>| v.map_or(Value::Null, |s| json!(s));
        match items.type_.as_deref() {
            Some("array") if items.list_type.as_deref().is_some_and(|t| t != "atomic") => {
                errors.push(FieldError::invalid(
                    &at.child("items").child("x-kubernetes-list-type"),
                    null_or(items.list_type.as_deref()),
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                ));
            }
            Some("object") if items.map_type.as_deref() != Some("atomic") => {
                errors.push(FieldError::invalid(
                    &at.child("items").child("x-kubernetes-map-type"),
                    null_or(items.list_type.as_deref()),
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                ));
            }
            _ => {}
        }
    }
    if let Some(list_type) = list_type
        && !["atomic", "set", "map"].contains(&list_type)
    {
        errors.push(FieldError::not_supported(
            &at.child("x-kubernetes-list-type"),
            list_type,
            &["atomic".into(), "set".into(), "map".into()],
        ));
    }
    if !schema.list_map_keys.is_empty() {
        match list_type {
            None => errors.push(FieldError::required(
                &at.child("x-kubernetes-list-type"),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            Some("map") => {}
            Some(other) => errors.push(FieldError::invalid(
                &at.child("x-kubernetes-list-type"),
                other,
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
        }
    }
    if list_type == Some("map") {
        if schema.list_map_keys.is_empty() {
            errors.push(FieldError::required(
                &at.child("x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match (&schema.items, &schema.items_list) {
            (None, None) => errors.push(FieldError::required(
                &at.child("items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            (None, Some(_)) => errors.push(FieldError::invalid(
                &at.child("items"),
                BadValue::Omit,
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            (Some(items), _) => {
                let item_type = items.type_.as_deref().unwrap_or_default();
                if item_type != "object" {
                    errors.push(FieldError::invalid(
                        &at.child("items").child("type"),
                        item_type,
                        "must be object if parent array's x-kubernetes-list-type is map",
                    ));
                } else {
                    let keys_value = json!(schema.list_map_keys);
                    let mut seen = BTreeSet::new();
                    for key in &schema.list_map_keys {
                        match items.properties.get(key) {
                            Some(property) => {
                                if matches!(property.type_.as_deref(), Some("array" | "object")) {
                                    errors.push(FieldError::invalid(
                                        &at.child("items").child("properties").key(key).child("type"),
                                        item_type,
                                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                    ));
                                }
                            }
                            None => errors.push(FieldError::invalid(
                                &at.child("x-kubernetes-list-map-keys"),
                                keys_value.clone(),
                                "entries must all be names of item properties",
                            )),
                        }
                        if !seen.insert(key) {
                            errors.push(FieldError::invalid(
                                &at.child("x-kubernetes-list-map-keys"),
                                keys_value.clone(),
                                "must not contain duplicate entries",
                            ));
                        }
                    }
                }
            }
        }
    }
    // validateMapListKeysMapSet
    if let (Some(items), Some(list_type @ ("set" | "map"))) = (&schema.items, list_type) {
        if items.nullable {
            errors.push(FieldError::forbidden(
                &at.child("items").child("nullable"),
                format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
            ));
        }
        if list_type == "map" {
            for key in &schema.list_map_keys {
                let Some(property) = items.properties.get(key) else {
                    continue;
                };
                let kat = at.child("items").child("properties").key(key);
                if !items.required.contains(key) && property.default.is_none() {
                    errors.push(FieldError::required(
                        &kat.child("default"),
                        "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                    ));
                }
                if property.nullable {
                    errors.push(FieldError::forbidden(
                        &kat.child("nullable"),
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                    ));
                }
            }
        }
    }
    errors
}

fn type_error(at: &Path, kind: &str, words: &str) -> FieldError {
    if kind.is_empty() {
        FieldError::required(&at.child("type"), words)
    } else {
        FieldError::invalid(&at.child("type"), kind, words)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Level {
    Root,
    Item,
    Field,
}

/// `ValidateStructural`: the invariants of a structural schema, and that
/// every value validation (`allOf`, `anyOf`, `oneOf`, `not`) speaks only
/// of fields the schema itself declares.
fn validate_structural(schema: &Schema, at: &Path) -> ErrorList {
    let mut errors = invariants(schema, Level::Root, at);
    errors.extend(completeness(schema, schema, at, at));
    errors
}

fn int_or_string_any_of(list: &[Schema]) -> bool {
    let only = |t: &str| Schema {
        type_: Some(t.into()),
        ..Schema::default()
    };
    list.len() == 2 && list[0] == only("integer") && list[1] == only("string")
}

fn invariants(s: &Schema, level: Level, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let kind = s.type_.as_deref().unwrap_or_default();
    if kind == "array" && s.items.is_none() {
        errors.push(FieldError::required(
            &at.child("items"),
            "must be specified",
        ));
    }
    if let Some(items) = &s.items {
        errors.extend(invariants(items, Level::Item, &at.child("items")));
    }
    for (name, property) in &s.properties {
        errors.extend(invariants(
            property,
            Level::Field,
            &at.child("properties").key(name),
        ));
    }
    if let Some(additional) = &s.additional_properties {
        if level == Level::Root {
            errors.push(FieldError::forbidden(
                &at.child("additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let Additional::Schema(sub) = additional {
            errors.extend(invariants(
                sub,
                Level::Field,
                &at.child("additionalProperties"),
            ));
        }
    }
    let preserve = s.preserves_unknown_fields();
    if s.int_or_string && preserve {
        errors.push(FieldError::invalid(
            &at.child("x-kubernetes-preserve-unknown-fields"),
            json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if s.int_or_string && s.embedded_resource {
        errors.push(FieldError::invalid(
            &at.child("x-kubernetes-embedded-resource"),
            json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    let skip_any_of = int_or_string_any_of(&s.any_of);
    let skip_first_all_of = s
        .all_of
        .first()
        .is_some_and(|first| int_or_string_any_of(&first.any_of));
    errors.extend(value_validation(s, skip_any_of, skip_first_all_of, at));

    let check_metadata = level == Level::Root || s.embedded_resource;
    if s.embedded_resource && kind != "object" {
        errors.push(type_error(
            at,
            kind,
            "must be object if x-kubernetes-embedded-resource is true",
        ));
    } else if kind.is_empty() && !s.int_or_string && !preserve {
        let words = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errors.push(FieldError::required(&at.child("type"), words));
    }
    if s.embedded_resource && s.additional_properties.is_some() {
        errors.push(FieldError::forbidden(
            &at.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !kind.is_empty() && kind != "object" {
        errors.push(FieldError::invalid(
            &at.child("type"),
            kind,
            "must be object at the root",
        ));
    }
    if check_metadata {
        for key in ["kind", "apiVersion"] {
            if let Some(property) = s.properties.get(key) {
                let t = property.type_.as_deref().unwrap_or_default();
                if t != "string" {
                    errors.push(FieldError::invalid(
                        &at.child("properties").key(key).child("type"),
                        t,
                        "must be string",
                    ));
                }
            }
        }
    }
    if let Some(metadata) = s.properties.get("metadata") {
        let mat = at.child("properties").key("metadata");
        let t = metadata.type_.as_deref().unwrap_or_default();
        if check_metadata && t != "object" {
            errors.push(FieldError::invalid(&mat.child("type"), t, "must be object"));
        }
        if level == Level::Root {
            let mut rest = metadata.clone();
            let names: BTreeSet<&str> = rest.properties.keys().map(String::as_str).collect();
            if !names.is_empty() && names.iter().all(|n| *n == "name" || *n == "generateName") {
                rest.properties.clear();
            }
            rest.type_ = None;
            rest.default = None;
            // What the structural form does not keep.
            rest.example = None;
            rest.format = None;
            rest.forbidden.clear();
            rest.malformed.clear();
            if rest != Schema::default() {
                errors.push(FieldError::forbidden(
                    &mat,
                    "must not specify anything other than name and generateName, but metadata is implicitly specified",
                ));
            }
        }
    }
    if s.embedded_resource && !preserve && s.properties.is_empty() {
        errors.push(FieldError::required(
            &at.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
    errors
}

/// `validateValueValidation`: the junctors of a node, and its pattern.
fn value_validation(
    s: &Schema,
    skip_any_of: bool,
    skip_first_all_of: bool,
    at: &Path,
) -> ErrorList {
    let mut errors = ErrorList::new();
    if !skip_any_of {
        for (i, sub) in s.any_of.iter().enumerate() {
            errors.extend(nested(sub, false, &at.child("anyOf").index(i)));
        }
    }
    for (i, sub) in s.all_of.iter().enumerate() {
        errors.extend(nested(
            sub,
            skip_first_all_of && i == 0,
            &at.child("allOf").index(i),
        ));
    }
    for (i, sub) in s.one_of.iter().enumerate() {
        errors.extend(nested(sub, false, &at.child("oneOf").index(i)));
    }
    if let Some(not) = &s.not {
        errors.extend(nested(not, false, &at.child("not")));
    }
    if let Some(pattern) = s.pattern.as_deref()
        && !pattern.is_empty()
        && let Err(why) = crate::go::regexp::compile(pattern).map(|_| ())
    {
        errors.push(FieldError::invalid(
            &at.child("pattern"),
            pattern,
            format!("must be a valid regular expression, but isn't: {why}"),
        ));
    }
    errors
}

/// `validateNestedValueValidation`: a schema inside a junctor may only
/// constrain values, not say what they are.
fn nested(s: &Schema, skip_any_of: bool, at: &Path) -> ErrorList {
    let mut errors = value_validation(s, skip_any_of, false, at);
    if let Some(items) = &s.items {
        errors.extend(nested(items, false, &at.child("items")));
    }
    for (name, property) in &s.properties {
        errors.extend(nested(property, false, &at.child("properties").key(name)));
    }
    let forbid = |errors: &mut ErrorList, set: bool, key: &str, words: &str| {
        if set {
            errors.push(FieldError::forbidden(&at.child(key), words));
        }
    };
    forbid(
        &mut errors,
        s.type_.as_deref().is_some_and(|t| !t.is_empty()),
        "type",
        "must be empty to be structural",
    );
    forbid(
        &mut errors,
        s.additional_properties.is_some(),
        "additionalProperties",
        "must be undefined to be structural",
    );
    forbid(
        &mut errors,
        s.default.is_some(),
        "default",
        "must be undefined to be structural",
    );
    forbid(
        &mut errors,
        s.title.as_deref().is_some_and(|t| !t.is_empty()),
        "title",
        "must be empty to be structural",
    );
    forbid(
        &mut errors,
        s.description.as_deref().is_some_and(|t| !t.is_empty()),
        "description",
        "must be empty to be structural",
    );
    forbid(
        &mut errors,
        s.nullable,
        "nullable",
        "must be false to be structural",
    );
    forbid(
        &mut errors,
        s.preserves_unknown_fields(),
        "x-kubernetes-preserve-unknown-fields",
        "must be false to be structural",
    );
    forbid(
        &mut errors,
        s.embedded_resource,
        "x-kubernetes-embedded-resource",
        "must be false to be structural",
    );
    forbid(
        &mut errors,
        s.int_or_string,
        "x-kubernetes-int-or-string",
        "must be false to be structural",
    );
    forbid(
        &mut errors,
        !s.list_map_keys.is_empty(),
        "x-kubernetes-list-map-keys",
        "must be empty to be structural",
    );
    forbid(
        &mut errors,
        s.list_type.is_some(),
        "x-kubernetes-list-type",
        "must be undefined to be structural",
    );
    forbid(
        &mut errors,
        s.map_type.is_some(),
        "x-kubernetes-map-type",
        "must be undefined to be structural",
    );
    forbid(
        &mut errors,
        !s.validations.is_empty(),
        "x-kubernetes-validations",
        "must be empty to be structural",
    );
    if s.properties.contains_key("metadata") {
        errors.push(FieldError::forbidden(
            &at.child("properties").key("metadata"),
            "must not be specified in a nested context",
        ));
    }
    errors
}

/// `validateStructuralCompleteness`: the root's junctors name only
/// properties and items the root declares.
fn completeness(v: &Schema, s: &Schema, s_at: &Path, v_at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(not) = &v.not {
        errors.extend(nested_completeness(not, Some(s), s_at, &v_at.child("not")));
    }
    for (key, list) in [
        ("allOf", &v.all_of),
        ("anyOf", &v.any_of),
        ("oneOf", &v.one_of),
    ] {
        for (i, sub) in list.iter().enumerate() {
            errors.extend(nested_completeness(
                sub,
                Some(s),
                s_at,
                &v_at.child(key).index(i),
            ));
        }
    }
    errors
}

fn nested_completeness(v: &Schema, s: Option<&Schema>, s_at: &Path, v_at: &Path) -> ErrorList {
    let Some(s) = s else {
        return vec![FieldError::required(
            s_at,
            format!("because it is defined in {v_at}"),
        )];
    };
    let mut errors = completeness(v, s, s_at, v_at);
    if let Some(items) = &v.items {
        errors.extend(nested_completeness(
            items,
            s.items.as_deref(),
            &s_at.child("items"),
            &v_at.child("items"),
        ));
    }
    for (name, property) in &v.properties {
        match s.properties.get(name) {
            Some(declared) => errors.extend(nested_completeness(
                property,
                Some(declared),
                &s_at.child("properties").key(name),
                &v_at.child("properties").key(name),
            )),
            None => errors.push(FieldError::required(
                &s_at.child("properties").key(name),
                format!(
                    "because it is defined in {}",
                    v_at.child("properties").key(name)
                ),
            )),
        }
    }
    errors
}

/// `ValidateDefaults`: every `default:` is pruned (no field its schema
/// does not know) and valid against its schema.
fn validate_defaults(s: &Schema, at: &Path, resource_root: bool, inside_meta: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    // The root of a resource is checked as an embedded resource is
    // (`ValidateDefaults` marks it so): a default there needs apiVersion
    // and kind.
    let embedded = s.embedded_resource || resource_root;
    let inside_meta = inside_meta && !s.embedded_resource;
    if let Some(default) = &s.default
        && !inside_meta
    {
        let dat = at.child("default");
        let mut pruned = default.clone();
        prune(&mut pruned, s, embedded);
        if &pruned != default {
            errors.push(FieldError::invalid(
                &dat,
                default.clone(),
                "must not have unknown fields",
            ));
        }
        let meta = if embedded {
            validate(&dat, default, s, true)
        } else {
            ErrorList::new()
        };
        if !meta.is_empty() {
            errors.extend(meta);
        } else {
            let invalid = validate_at(&dat, s, default);
            if invalid.is_empty() {
                errors.extend(default_rule_errors(s, &dat, default));
            }
            errors.extend(invalid);
        }
    }
    if let Some(items) = &s.items {
        errors.extend(validate_defaults(
            items,
            &at.child("items"),
            false,
            inside_meta,
        ));
    }
    for (name, property) in &s.properties {
        let meta = embedded && ["metadata", "apiVersion", "kind"].contains(&name.as_str());
        errors.extend(validate_defaults(
            property,
            &at.child("properties").key(name),
            false,
            inside_meta || meta,
        ));
    }
    errors
}

/// The errors of the CEL rules at and beneath `s` on its `default:`
/// value `default` (at `dat`), as the real server runs them on a default
/// that is otherwise valid; none when the rules do not compile (their own
/// errors say why).
fn default_rule_errors(s: &Schema, dat: &Path, default: &Value) -> ErrorList {
    if !schema_has(s, &|n: &Schema| !n.validations.is_empty()) {
        return ErrorList::new();
    }
    let Ok(rules) = compile(s, dat) else {
        return ErrorList::new();
    };
    rules
        .validate(default, None)
        .into_iter()
        .map(|mut e| {
            e.field = dat.join(&e.field);
            e
        })
        .collect()
}

/// Drops `default: null` and `example: null` from a schema and the
/// schemas beneath it: Go reads them into a nil `*JSON`, as if absent.
fn drop_null_defaults(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    for key in ["default", "example"] {
        if map.get(key).is_some_and(Value::is_null) {
            map.remove(key);
        }
    }
    for key in ["items", "additionalProperties", "not", "additionalItems"] {
        if let Some(child) = map.get_mut(key) {
            match child {
                Value::Array(list) => list.iter_mut().for_each(drop_null_defaults),
                other => drop_null_defaults(other),
            }
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = map.get_mut(key) {
            list.iter_mut().for_each(drop_null_defaults);
        }
    }
    for key in [
        "properties",
        "patternProperties",
        "definitions",
        "dependencies",
    ] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            children.values_mut().for_each(drop_null_defaults);
        }
    }
}

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
    let mut children: Vec<&Schema> = s
        .properties
        .values()
        .chain(s.items.as_deref())
        .chain(s.items_list.iter().flatten())
        .chain(s.all_of.iter())
        .chain(s.any_of.iter())
        .chain(s.one_of.iter())
        .chain(s.not.as_deref())
        .collect();
    if let Some(Additional::Schema(additional)) = &s.additional_properties {
        children.push(additional);
    }
    for child in children {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(schema: Value) -> Value {
        let mut crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.org"},
            "spec": {
                "group": "example.org",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true,
                              "schema": {"openAPIV3Schema": schema}}],
            },
        });
        default_crd(&mut crd);
        crd
    }

    fn messages(errors: &ErrorList) -> Vec<String> {
        let mut out: Vec<String> = errors
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_good_crd_passes_and_gets_its_defaults() {
        let crd = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"size": {"type": "integer", "default": 1}}}}}),
        );
        assert_eq!(messages(&validate_crd(&crd, None)), Vec::<String>::new());
        assert_eq!(crd["spec"]["names"]["singular"], "widget");
        assert_eq!(crd["spec"]["names"]["listKind"], "WidgetList");
        assert_eq!(crd["spec"]["conversion"]["strategy"], "None");
        assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
    }

    #[test]
    fn structural_errors_are_reported_where_the_real_server_puts_them() {
        let crd = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"size": {"description": "no type"}, "l": {"type": "array"}}}}}),
        );
        assert_eq!(
            messages(&validate_crd(&crd, None)),
            [
                "spec.validation.openAPIV3Schema.properties[spec].properties[l].items: Required value: must be specified",
                "spec.validation.openAPIV3Schema.properties[spec].properties[size].type: Required value: must not be empty for specified object fields",
            ]
        );
    }

    #[test]
    fn keywords_kubernetes_does_not_allow_are_refused() {
        let crd = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "l": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
                "m": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
                "r": {"$ref": "#/definitions/x"},
                "t": {"type": "array", "x-kubernetes-list-type": "bag", "items": {"type": "string"}},
            }}}}),
        );
        let got = messages(&validate_crd(&crd, None));
        let at = "spec.validation.openAPIV3Schema.properties[spec].properties";
        assert!(got.contains(&format!("{at}[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic")), "{got:#?}");
        assert!(got.contains(&format!("{at}[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive")), "{got:#?}");
        assert!(
            got.contains(&format!("{at}[r].$ref: Forbidden: $ref is not supported")),
            "{got:#?}"
        );
        assert!(got.contains(&format!("{at}[t].x-kubernetes-list-type: Unsupported value: \"bag\": supported values: \"atomic\", \"set\", \"map\"")), "{got:#?}");
    }

    #[test]
    fn names_versions_and_conversion_are_checked() {
        let mut crd = crd(json!({"type": "object"}));
        crd["metadata"]["name"] = json!("other.example.org");
        crd["spec"]["versions"][0]["storage"] = json!(false);
        crd["spec"]["conversion"] = json!({"strategy": "Webhook"});
        let got = messages(&validate_crd(&crd, None));
        assert!(got.contains(&"metadata.name: Invalid value: \"other.example.org\": must be spec.names.plural+\".\"+spec.group".to_string()), "{got:#?}");
        assert!(
            got.iter().any(
                |m| m.starts_with("spec.versions: Invalid value: [{\"Name\":\"v1\"")
                    && m.ends_with("must have exactly one version marked as storage version")
            ),
            "{got:#?}"
        );
        assert!(got.contains(&"spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook".to_string()), "{got:#?}");
        assert!(
            got.contains(&"spec.conversion.conversionReviewVersions: Required value".to_string()),
            "{got:#?}"
        );
    }

    #[test]
    fn bad_defaults_are_refused() {
        let crd = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "default": 0},
                "o": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": "y"}},
            }}}}),
        );
        let got = messages(&validate_crd(&crd, None));
        let at = "spec.validation.openAPIV3Schema.properties[spec].properties";
        assert!(
            got.contains(&format!(
                "{at}[n].default: Invalid value: 0:  in body should be greater than or equal to 1"
            )),
            "{got:#?}"
        );
        assert!(got.contains(&format!("{at}[o].default: Invalid value: {{\"a\":\"x\",\"b\":\"y\"}}: must not have unknown fields")), "{got:#?}");
    }

    #[test]
    fn a_rule_beside_a_keyword_error_is_still_compiled() {
        // `a` has a bad list type; the rule on `b` is elsewhere and is
        // compiled (and refused); the rule on `a`'s node is not.
        let crd = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "a": {"type": "object", "x-kubernetes-validations": [{"rule": "self.nope > 0"}],
                      "properties": {"l": {"type": "array", "x-kubernetes-list-type": "bag", "items": {"type": "string"}}}},
                "b": {"type": "object", "x-kubernetes-validations": [{"rule": "self.nope > 0"}],
                      "properties": {"n": {"type": "integer"}}},
            }}}}),
        );
        let got = messages(&validate_crd(&crd, None));
        let at = "spec.validation.openAPIV3Schema.properties[spec].properties";
        assert!(
            got.iter().any(|m| m.starts_with(&format!(
                "{at}[b].x-kubernetes-validations[0].rule: Invalid value"
            )) && m.contains("undefined field 'nope'")),
            "{got:#?}"
        );
        assert!(
            !got.iter()
                .any(|m| m.starts_with(&format!("{at}[a].x-kubernetes-validations"))),
            "{got:#?}"
        );
        assert!(
            got.iter()
                .any(|m| m.starts_with(&format!("{at}[a].properties[l].x-kubernetes-list-type"))),
            "{got:#?}"
        );
    }

    #[test]
    fn group_and_plural_cannot_change() {
        let old = crd(json!({"type": "object"}));
        let mut new = old.clone();
        new["spec"]["group"] = json!("other.org");
        let got = messages(&validate_crd(&new, Some(&old)));
        assert!(
            got.contains(
                &"spec.group: Invalid value: \"other.org\": field is immutable".to_string()
            ),
            "{got:#?}"
        );
    }

    #[test]
    fn a_conversion_webhook_url_is_read_as_go_parses_it() {
        let mut crd = crd(json!({"type": "object"}));
        crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
            "clientConfig": {"url": "http://hook.example.org/convert?x=1#top"}}});
        let at = "spec.conversion.webhookClientConfig.url";
        assert_eq!(
            messages(&validate_crd(&crd, None)),
            [
                format!(
                    "{at}: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"
                ),
                format!("{at}: Invalid value: \"top\": fragments are not permitted in the URL"),
                format!(
                    "{at}: Invalid value: \"x=1\": query parameters are not permitted in the URL"
                ),
            ]
        );
        crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"] = json!("https:hook");
        assert_eq!(
            messages(&validate_crd(&crd, None)),
            [format!(
                "{at}: Invalid value: \"\": host must be specified; desired format: https://host[/path]"
            )]
        );
    }

    #[test]
    fn a_webhook_service_is_checked_with_name_and_namespace_swapped() {
        // The real server passes the service's name as the namespace and
        // its namespace as the name.
        let mut crd = crd(json!({"type": "object"}));
        crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
            "clientConfig": {"service": {"name": "hook", "path": "convert/Now"}}}});
        default_crd(&mut crd);
        let at = "spec.conversion.webhookClientConfig.service";
        let got = messages(&validate_crd(&crd, None));
        assert!(
            got.contains(&format!("{at}.name: Required value")),
            "{got:#?}"
        );
        assert!(
            got.contains(&format!(
                "{at}.path: Invalid value: \"convert/Now\": must start with a '/'"
            )),
            "{got:#?}"
        );
        assert!(got.iter().any(|m| m.starts_with(&format!("{at}.path: Invalid value: \"convert/Now\": segment[1]: a lowercase RFC 1123 subdomain"))), "{got:#?}");
        assert!(
            !got.iter()
                .any(|m| m.starts_with(&format!("{at}.namespace"))),
            "{got:#?}"
        );
    }

    #[test]
    fn a_bad_first_version_name_is_also_the_internal_spec_version() {
        let mut crd = crd(json!({"type": "object"}));
        crd["spec"]["versions"][0]["name"] = json!("V1");
        crd["status"]["storedVersions"] = json!(["V1"]);
        let got = messages(&validate_crd(&crd, None));
        let words = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
        assert_eq!(
            got,
            [
                format!("spec.version: Invalid value: \"V1\": {words}"),
                format!("spec.versions[0].name: Invalid value: \"V1\": {words}"),
            ]
        );
    }

    #[test]
    fn a_deprecation_warning_with_a_tab_is_not_printable() {
        let mut crd = crd(json!({"type": "object"}));
        crd["spec"]["versions"][0]["deprecated"] = json!(true);
        crd["spec"]["versions"][0]["deprecationWarning"] = json!("old\tversion");
        assert_eq!(
            messages(&validate_crd(&crd, None)),
            [
                "spec.versions[0].deprecationWarning: Invalid value: \"old\\tversion\": must only contain printable UTF-8 characters; non-printable character found at index 3"
            ]
        );
    }

    #[test]
    fn no_stored_version_is_go_s_nil_list() {
        let mut crd = crd(json!({"type": "object"}));
        crd["spec"]["versions"][0]["storage"] = json!(false);
        crd["status"]["storedVersions"] = json!([]);
        let got = messages(&validate_crd(&crd, None));
        assert!(got.contains(&"status.storedVersions: Invalid value: null: must have at least one stored version".to_string()), "{got:#?}");
    }

    #[test]
    fn selectable_fields_point_to_scalars_outside_metadata_once() {
        let mut crd = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "host": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}}}}),
        );
        crd["spec"]["versions"][0]["selectableFields"] = json!([
            {"jsonPath": ".spec.host"}, {"jsonPath": ".spec.tags"}, {"jsonPath": ".spec.colour"},
            {"jsonPath": ".spec.host"}, {"jsonPath": ".spec['host']"}, {"jsonPath": ""},
        ]);
        let at = "spec.selectableFields";
        assert_eq!(
            messages(&validate_crd(&crd, None)),
            [
                format!(
                    "{at}[1].jsonPath: Invalid value: \".spec.tags\": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."
                ),
                format!(
                    "{at}[2].jsonPath: Invalid value: \".spec.colour\": is an invalid path: does not refer to a valid field"
                ),
                format!("{at}[3].jsonPath: Duplicate value: \".spec.host\""),
                format!(
                    "{at}[4].jsonPath: Invalid value: \".spec['host']\": is an invalid path: array notation is not allowed"
                ),
                format!("{at}[5].jsonPath: Required value"),
            ]
        );
    }

    #[test]
    fn a_default_at_the_root_is_an_object_of_a_kind() {
        let crd = crd(json!({"type": "object", "default": {"spec": {}},
            "properties": {"spec": {"type": "object"}}}));
        assert_eq!(
            messages(&validate_crd(&crd, None)),
            [
                "spec.validation.openAPIV3Schema.default.apiVersion: Required value",
                "spec.validation.openAPIV3Schema.default.kind: Required value",
            ]
        );
    }

    #[test]
    fn a_default_is_checked_by_the_rules_of_its_schema() {
        let crd = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 0,
                         "x-kubernetes-validations": [{"rule": "self > 0", "message": "replicas must be positive"}]}}}}}),
        );
        assert_eq!(
            messages(&validate_crd(&crd, None)),
            [
                "spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: 0: replicas must be positive"
            ]
        );
    }

    #[test]
    fn a_null_default_is_no_default() {
        let crd = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "string", "default": null}, "note": {"type": "string", "nullable": true, "default": null}}}}}),
        );
        assert_eq!(messages(&validate_crd(&crd, None)), Vec::<String>::new());
        let props = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            ["properties"];
        assert_eq!(props["size"], json!({"type": "string"}));
        assert_eq!(props["note"], json!({"type": "string", "nullable": true}));
    }
}
