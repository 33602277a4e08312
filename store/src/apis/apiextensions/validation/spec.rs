//! A CRD's spec (`ValidateCustomResourceDefinitionSpec` and its update
//! form): group, scope, versions (one storage version, names, priority,
//! deprecation), the fields immutable once established, and the stored
//! versions the status names.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::conversion::validate_conversion;
use super::names::validate_names;
use super::schema::validate_schema;
use super::subresources::{
    selectable_fields, validate_columns, validate_selectable_fields, validate_subresources,
};
use super::{Options, identical, versions};
use crate::go::json::encode::go_json;
use crate::go::strconv::is_print;
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path, error_with_written_value};
use crate::machinery::names::{is_dns1035_label, is_dns1123_subdomain};
use crate::machinery::object::text_at;
use crate::schema::props::Schema;
use crate::schema::structural::schema_has;

pub(crate) fn validate_spec_update(spec: &Value, old: &Value, established: bool) -> ErrorList {
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

pub(crate) fn validate_spec(spec: &Value, options: Options) -> ErrorList {
    let mut errors = ErrorList::new();
    let at = Path::new(["spec"]);
    let group = text_at(spec, "/group");
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
        text_at(spec, "/scope"),
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
        let name = text_at(version, "/name");
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
        errors.push(error_with_written_value(
            ErrorType::Invalid,
            &at.child("versions"),
            &go_versions(spec),
            "must contain unique version names",
        ));
    }
    if storage != 1 {
        errors.push(error_with_written_value(
            ErrorType::Invalid,
            &at.child("versions"),
            &go_versions(spec),
            "must have exactly one version marked as storage version",
        ));
    }
    // The internal form's `spec.version` is the first version's name.
    if let Some(first) = versions
        .first()
        .map(|v| text_at(v, "/name"))
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

    let strategy = text_at(spec, "/conversion/strategy");
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
                go_json(&json!(text_at(v, "/name"))),
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

pub(crate) fn enum_string(at: &Path, value: &str, accepted: &[&str], required: bool) -> ErrorList {
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

pub(crate) fn validate_stored_versions(stored: &[String], spec: &Value) -> ErrorList {
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
        let name = text_at(version, "/name");
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
