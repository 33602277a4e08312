//! Secret (v1): `data` must decode as base64 (else the real server cannot
//! decode the object: `400 BadRequest`), `stringData` is merged into
//! `data` and dropped (its conversion), `type` defaults to `Opaque`
//! (`SetDefaults_Secret`), keys are ConfigMap keys, 1 MiB in all, the keys
//! each type requires, and `type` and, once `immutable: true`, `data`
//! never change (`ValidateSecret`, `ValidateSecretUpdate`); secrets are
//! selected by `type`.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::apis::strategy::{Rules, Selectable};
use crate::go::json::decode::{bytes_map_error, json_kind, string_map_error};
use crate::go::json::syntax::syntax_error;
use crate::machinery::field::{ErrorList, FieldError, Path, immutable};
use crate::machinery::names::{config_map_key_errors, name_is_dns_subdomain};
use crate::meta::selector::{Refusal, object_meta_fields};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: None,
};

/// `MaxSecretSize`: 1 MiB of data in all.
const MAX_SIZE: usize = 1024 * 1024;

/// Why the real server cannot decode this Secret, if it cannot: a `data`
/// value that is not base64 or not a string, a `stringData` value not a
/// string.
pub(crate) fn decode(obj: &Value) -> Option<String> {
    bytes_map_error(obj, "data", "Secret.data")
        .or_else(|| string_map_error(obj, "stringData", "Secret.stringData"))
}

/// `stringData` into `data` (its values win), and `type: Opaque`.
fn default(obj: &mut Value) {
    let Some(secret) = obj.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(data)) = secret.get_mut("data") {
        for value in data.values_mut() {
            if value.is_null() {
                *value = json!("");
            }
        }
    }
    if let Some(Value::Object(strings)) = secret.remove("stringData") {
        let data = secret.entry("data").or_insert_with(|| json!({}));
        if data.is_null() {
            *data = json!({});
        }
        if let Some(data) = data.as_object_mut() {
            for (key, value) in strings {
                let text = value.as_str().unwrap_or_default();
                data.insert(
                    key,
                    json!(base64::engine::general_purpose::STANDARD.encode(text)),
                );
            }
        }
    }
    if secret
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
    {
        secret.insert("type".into(), json!("Opaque"));
    }
}

fn has(obj: &Value, key: &str) -> bool {
    obj.get("data")
        .and_then(Value::as_object)
        .is_some_and(|d| d.contains_key(key))
}

fn bytes(obj: &Value, key: &str) -> Vec<u8> {
    obj.get("data")
        .and_then(|d| d.get(key))
        .and_then(Value::as_str)
        .and_then(|text| {
            let clean: String = text.chars().filter(|c| *c != '\n' && *c != '\r').collect();
            base64::engine::general_purpose::STANDARD.decode(clean).ok()
        })
        .unwrap_or_default()
}

/// Go's words for JSON that does not decode into a map, roughly: the
/// message of `json.Unmarshal`'s first error.
fn json_error(content: &[u8]) -> Option<String> {
    let start = content
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    match start {
        None => return Some("unexpected end of JSON input".to_string()),
        Some(b) if !b"{[\"-0123456789tfn".contains(b) => {
            return Some(format!(
                "invalid character {:?} looking for beginning of value",
                char::from(*b)
            ));
        }
        _ => {}
    }
    match serde_json::from_slice::<Value>(content) {
        Ok(Value::Object(_)) => None,
        Ok(other) => Some(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_kind(&other)
        )),
        Err(e) if e.is_eof() => Some("unexpected end of JSON input".to_string()),
        Err(_) => {
            Some(syntax_error(content).unwrap_or_else(|| "invalid character in JSON".to_string()))
        }
    }
}

/// `warningsForSecret`: a TLS secret whose certificate or key holds no PEM
/// block (`tls.X509KeyPair`'s first errors; the PEM content itself is not
/// parsed).
pub(crate) fn warnings(obj: &Value) -> Vec<String> {
    if obj.get("type").and_then(Value::as_str) != Some("kubernetes.io/tls") {
        return Vec::new();
    }
    let pem = |key: &str| {
        let text = String::from_utf8_lossy(&bytes(obj, key)).into_owned();
        text.find("-----BEGIN ")
            .is_some_and(|at| text[at..].contains("\n-----END "))
    };
    if !pem("tls.crt") {
        return vec!["tls: failed to find any PEM data in certificate input".to_string()];
    }
    if !pem("tls.key") {
        return vec!["tls: failed to find any PEM data in key input".to_string()];
    }
    Vec::new()
}

fn validate(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let data_path = Path::new(["data"]);
    let mut total = 0;
    if let Some(data) = obj.get("data").and_then(Value::as_object) {
        for (key, value) in data {
            for message in config_map_key_errors(key) {
                errors.push(FieldError::invalid(
                    &data_path.key(key),
                    key.as_str(),
                    message,
                ));
            }
            total += value
                .as_str()
                .map_or(0, |s| s.trim_end_matches('=').len() * 3 / 4);
        }
    }
    if total > MAX_SIZE {
        errors.push(FieldError::too_long(&data_path, MAX_SIZE as i64));
    }
    let required = |errors: &mut ErrorList, key: &str| {
        errors.push(FieldError::required(&data_path.key(key), ""));
    };
    match obj.get("type").and_then(Value::as_str).unwrap_or_default() {
        "kubernetes.io/service-account-token" => {
            let name = obj
                .pointer("/metadata/annotations/kubernetes.io~1service-account.name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if name.is_empty() {
                errors.push(FieldError::required(
                    &Path::new(["metadata", "annotations"])
                        .key("kubernetes.io/service-account.name"),
                    "",
                ));
            }
        }
        kind @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
            let key = if kind == "kubernetes.io/dockercfg" {
                ".dockercfg"
            } else {
                ".dockerconfigjson"
            };
            if !has(obj, key) {
                required(&mut errors, key);
            } else if let Some(why) = json_error(&bytes(obj, key)) {
                errors.push(FieldError::invalid(
                    &data_path.key(key),
                    "<secret contents redacted>",
                    why,
                ));
            }
        }
        "kubernetes.io/basic-auth" if !has(obj, "username") && !has(obj, "password") => {
            required(&mut errors, "username");
            required(&mut errors, "password");
        }
        "kubernetes.io/ssh-auth" if bytes(obj, "ssh-privatekey").is_empty() => {
            required(&mut errors, "ssh-privatekey");
        }
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !has(obj, key) {
                    required(&mut errors, key);
                }
            }
        }
        _ => {}
    }
    errors
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = immutable(new.get("type"), old.get("type"), &Path::new(["type"]));
    if old.get("immutable") == Some(&Value::Bool(true)) {
        if new.get("immutable") != Some(&Value::Bool(true)) {
            errors.push(FieldError::forbidden(
                &Path::new(["immutable"]),
                "field is immutable when `immutable` is set",
            ));
        }
        let data = |o: &Value| o.get("data").filter(|d| !d.is_null()).cloned();
        if data(new) != data(old) {
            errors.push(FieldError::forbidden(
                &Path::new(["data"]),
                "field is immutable when `immutable` is set",
            ));
        }
    }
    errors.extend(validate(new));
    errors
}

/// core/v1's Secret labels (`AddFieldLabelConversionsForSecret` in
/// `pkg/apis/core/v1/conversion.go`) and the Secret's field set
/// (`SelectableFields` in `pkg/registry/core/secret/strategy.go`).
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("type", "type"),
        ("metadata.namespace", "metadata.namespace"),
        ("metadata.name", "metadata.name"),
    ],
    refusal: Refusal::NotSupported,
    fields: |secret| {
        let mut set = object_meta_fields(secret);
        let kind = secret
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        set.insert("type".into(), kind.to_string());
        set
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_is_merged_into_data_and_wins() {
        let mut secret = json!({"data": {"a": "eA==", "b": null}, "stringData": {"a": "y"}});
        default(&mut secret);
        assert_eq!(
            secret,
            json!({"data": {"a": "eQ==", "b": ""}, "type": "Opaque"})
        );
    }

    #[test]
    fn data_is_decoded_as_go_decodes_it() {
        let secret = |data: Value| json!({ "data": { "k": data } });
        assert_eq!(decode(&secret(json!("YWJj\nZGVm"))), None);
        assert_eq!(
            decode(&secret(json!("YQ"))).as_deref(),
            Some("illegal base64 data at input byte 0")
        );
        assert_eq!(
            decode(&secret(json!(1))).as_deref(),
            Some("json: cannot unmarshal number into Go struct field Secret.data of type []uint8")
        );
    }

    #[test]
    fn docker_config_must_be_a_json_object() {
        assert_eq!(json_error(b"{}"), None);
        assert_eq!(
            json_error(b"x").as_deref(),
            Some("invalid character 'x' looking for beginning of value")
        );
        assert_eq!(
            json_error(b"{\"a\":").as_deref(),
            Some("unexpected end of JSON input")
        );
    }
}
