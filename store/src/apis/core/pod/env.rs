//! A container's environment as `ValidateEnv`, `validateEnvVarValueFrom`
//! and `ValidateEnvFrom` check it: names, one source per variable, the
//! fields and resources the downward API offers, key references.

use serde_json::Value;

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{config_map_key_errors, is_qualified_name, name_is_dns_subdomain};
use crate::machinery::object::text;

/// `ValidateEnv` (relaxed names: printable ASCII but `=`) and
/// `ValidateEnvFrom` of the container at `container_path`.
pub(super) fn validate_env(container: &Value, container_path: &Path) -> ErrorList {
    let path = &container_path.child("env");
    let mut errors = ErrorList::new();
    for (i, env) in container
        .get("env")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = path.index(i);
        let name = text(env, "name");
        if name.is_empty() {
            errors.push(FieldError::required(&at.child("name"), ""));
        } else if name.chars().any(|c| !(' '..='~').contains(&c) || c == '=') {
            errors.push(FieldError::invalid(
                &at.child("name"),
                name,
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
        if let Some(from) = env.get("valueFrom").filter(|f| !f.is_null()) {
            errors.extend(validate_value_from(env, from, &at.child("valueFrom")));
        }
    }
    for (i, source) in container
        .get("envFrom")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = container_path.child("envFrom").index(i);
        let prefix = text(source, "prefix");
        if prefix
            .chars()
            .any(|c| !(' '..='~').contains(&c) || c == '=')
        {
            errors.push(FieldError::invalid(
                &at.child("prefix"),
                prefix,
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
        let mut count = 0;
        for (kind, name_key) in [("configMapRef", "name"), ("secretRef", "name")] {
            if let Some(reference) = source.get(kind).filter(|r| !r.is_null()) {
                count += 1;
                let name = text(reference, name_key);
                for message in name_is_dns_subdomain(name, false) {
                    errors.push(FieldError::invalid(
                        &at.child(kind).child("name"),
                        name,
                        message,
                    ));
                }
            }
        }
        if count != 1 {
            errors.push(FieldError::invalid(
                &container_path.child("envFrom"),
                "",
                if count == 0 {
                    "must specify one of: `configMapRef` or `secretRef`"
                } else {
                    "may not have more than one field specified at a time"
                },
            ));
        }
    }
    errors
}

/// The fields a pod's environment may read (`validEnvDownwardAPIFieldPathExpressions`).
const ENV_FIELDS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// The resources a pod's environment may read.
const ENV_RESOURCES: [&str; 6] = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// `validateEnvVarValueFrom`: exactly one source, and no value beside it.
fn validate_value_from(env: &Value, from: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut count = 0;
    if let Some(field_ref) = from.get("fieldRef").filter(|f| !f.is_null()) {
        count += 1;
        errors.extend(validate_field_ref(field_ref, &path.child("fieldRef")));
    }
    if let Some(resource_ref) = from.get("resourceFieldRef").filter(|r| !r.is_null()) {
        count += 1;
        let at = path.child("resourceFieldRef");
        let resource = text(resource_ref, "resource");
        if resource.is_empty() {
            errors.push(FieldError::required(&at.child("resource"), ""));
        } else if !ENV_RESOURCES.contains(&resource)
            && !resource.starts_with("requests.hugepages-")
            && !resource.starts_with("limits.hugepages-")
        {
            errors.push(FieldError::not_supported(
                &at.child("resource"),
                resource,
                &ENV_RESOURCES.map(str::to_string),
            ));
        }
    }
    for kind in ["configMapKeyRef", "secretKeyRef"] {
        if let Some(selector) = from.get(kind).filter(|s| !s.is_null()) {
            count += 1;
            let at = path.child(kind);
            let name = text(selector, "name");
            for message in name_is_dns_subdomain(name, false) {
                errors.push(FieldError::invalid(&at.child("name"), name, message));
            }
            let key = text(selector, "key");
            if key.is_empty() {
                errors.push(FieldError::required(&at.child("key"), ""));
            } else {
                for message in config_map_key_errors(key) {
                    errors.push(FieldError::invalid(&at.child("key"), key, message));
                }
            }
        }
    }
    if from.get("fileKeyRef").is_some_and(|f| !f.is_null()) {
        count += 1;
    }
    if count == 0 {
        errors.push(FieldError::invalid(
            path,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`",
        ));
    } else if !text(env, "value").is_empty() {
        errors.push(FieldError::invalid(
            path,
            "",
            "may not be specified when `value` is not empty",
        ));
    } else if count > 1 {
        errors.push(FieldError::invalid(
            path,
            "",
            "may not have more than one field specified at a time",
        ));
    }
    errors
}

/// `validateObjectFieldSelector` of an environment variable's `fieldRef`.
fn validate_field_ref(field_ref: &Value, path: &Path) -> ErrorList {
    let version = text(field_ref, "apiVersion");
    if version.is_empty() {
        return vec![FieldError::required(&path.child("apiVersion"), "")];
    }
    let field = text(field_ref, "fieldPath");
    if field.is_empty() {
        return vec![FieldError::required(&path.child("fieldPath"), "")];
    }
    let subscripted = field
        .strip_suffix("']")
        .and_then(|f| f.split_once("['"))
        .filter(|(p, s)| !p.is_empty() && !s.is_empty());
    let converted = if version != "v1" {
        Err(format!("unsupported pod version: {version}"))
    } else if let Some((base, _)) = subscripted {
        if base == "metadata.annotations" || base == "metadata.labels" {
            Ok(field)
        } else {
            Err(format!("field label does not support subscript: {field}"))
        }
    } else if [
        "metadata.annotations",
        "metadata.labels",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    ]
    .contains(&field)
    {
        Ok(field)
    } else if field == "spec.host" {
        Ok("spec.nodeName")
    } else {
        Err(format!("field label not supported: {field}"))
    };
    let field = match converted {
        Ok(field) => field,
        Err(why) => {
            return vec![FieldError::invalid(
                &path.child("fieldPath"),
                field,
                format!("error converting fieldPath: {why}"),
            )];
        }
    };
    if let Some((base, key)) = subscripted {
        let key = if base == "metadata.annotations" {
            key.to_lowercase()
        } else {
            key.to_string()
        };
        return is_qualified_name(&key)
            .into_iter()
            .map(|m| FieldError::invalid(path, key.as_str(), m))
            .collect();
    }
    if ENV_FIELDS.contains(&field) {
        ErrorList::new()
    } else {
        vec![FieldError::not_supported(
            &path.child("fieldPath"),
            field,
            &ENV_FIELDS.map(str::to_string),
        )]
    }
}
