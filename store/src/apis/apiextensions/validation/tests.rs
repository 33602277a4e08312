//! The CRD checks against the real server's answers.

use super::*;
use crate::apis::apiextensions::defaults::default_crd;

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
        got.contains(&"spec.group: Invalid value: \"other.org\": field is immutable".to_string()),
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
            format!("{at}: Invalid value: \"x=1\": query parameters are not permitted in the URL"),
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
    assert!(
        got.iter().any(|m| m.starts_with(&format!(
            "{at}.path: Invalid value: \"convert/Now\": segment[1]: a lowercase RFC 1123 subdomain"
        ))),
        "{got:#?}"
    );
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
    assert!(
        got.contains(
            &"status.storedVersions: Invalid value: null: must have at least one stored version"
                .to_string()
        ),
        "{got:#?}"
    );
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
    let props = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(props["size"], json!({"type": "string"}));
    assert_eq!(props["note"], json!({"type": "string", "nullable": true}));
}
