//! The structural schemas of common shapes, of defaults, ranges, enums and
//! nullable fields, of tagged enums, and the errors for what Kubernetes
//! cannot say.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::*;

fn schema<T: JsonSchema>() -> Value {
    schema_for::<T>().expect("a structural schema")
}

/// Every schema keyword Kubernetes refuses, anywhere in `schema`.
fn forbidden_keywords(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(obj) = schema.as_object() {
        for key in [
            "$ref",
            "$defs",
            "$schema",
            "definitions",
            "title",
            "anyOf",
            "allOf",
        ] {
            if obj.contains_key(key) {
                found.push(key.to_owned());
            }
        }
        if obj.get("type").is_some_and(Value::is_array) {
            found.push("type list".into());
        }
        for (key, sub) in obj {
            match key.as_str() {
                "properties" => sub
                    .as_object()
                    .into_iter()
                    .flatten()
                    .for_each(|(_, s)| found.extend(forbidden_keywords(s))),
                "items" | "additionalProperties" => found.extend(forbidden_keywords(sub)),
                _ => {}
            }
        }
    }
    found
}

/// Inner part of an outer struct, used twice.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Endpoint {
    /// Host name.
    host: String,
    port: Option<u16>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Shapes {
    name: String,
    nick_name: Option<String>,
    count_u32: u32,
    count_i32: i32,
    big_i64: i64,
    big_u64: u64,
    size: usize,
    #[serde(rename = "primary")]
    main_endpoint: Endpoint,
    /// The spare, if any.
    spare: Option<Endpoint>,
    endpoints: Vec<Endpoint>,
    labels: BTreeMap<String, String>,
    anything: Value,
    /// Free-form settings.
    settings: Map<String, Value>,
    #[serde(default)]
    tags: BTreeSet<String>,
    ratio: f64,
}

#[test]
fn structural_schema_of_common_shapes() {
    let s = schema::<Shapes>();
    assert_eq!(forbidden_keywords(&s), Vec::<String>::new(), "{s:#}");
    assert_eq!(s["type"], "object");
    // Option and #[serde(default)] fields are not required, and not nullable.
    assert_eq!(
        s["required"],
        json!([
            "name",
            "countU32",
            "countI32",
            "bigI64",
            "bigU64",
            "size",
            "primary",
            "endpoints",
            "labels",
            "anything",
            "settings",
            "ratio"
        ])
    );
    assert_eq!(s["properties"]["nickName"], json!({"type": "string"}));
    let p = &s["properties"];
    assert_eq!(
        p["countU32"],
        json!({"type": "integer", "format": "int32", "minimum": 0})
    );
    assert_eq!(p["countI32"], json!({"type": "integer", "format": "int32"}));
    assert_eq!(p["bigI64"], json!({"type": "integer", "format": "int64"}));
    assert_eq!(
        p["bigU64"],
        json!({"type": "integer", "format": "int64", "minimum": 0})
    );
    assert_eq!(
        p["size"],
        json!({"type": "integer", "format": "int64", "minimum": 0})
    );
    assert_eq!(p["ratio"], json!({"type": "number", "format": "double"}));
    // Nested structs are inlined, each time, with their docs.
    let endpoint = json!({
        "type": "object",
        "required": ["host"],
        "properties": {
            "host": {"type": "string", "description": "Host name."},
            "port": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 65535},
        },
    });
    let mut documented = endpoint.clone();
    documented["description"] = json!("Inner part of an outer struct, used twice.");
    assert_eq!(p["primary"], ordered_value(documented.clone()));
    assert_eq!(
        p["endpoints"],
        json!({"type": "array", "items": ordered_value(documented)})
    );
    // The field's doc comment wins over its type's.
    assert_eq!(p["spare"]["description"], "The spare, if any.");
    assert_eq!(p["spare"]["properties"], endpoint["properties"]);
    // Maps, free-form values, sets.
    assert_eq!(
        p["labels"],
        json!({"type": "object", "additionalProperties": {"type": "string"}})
    );
    assert_eq!(p["anything"], json!({PRESERVE: true}));
    assert_eq!(
        p["settings"],
        json!({"type": "object", "description": "Free-form settings.", PRESERVE: true})
    );
    assert_eq!(
        p["tags"],
        json!({"type": "array", "default": [], "items": {"type": "string"}})
    );
}

fn ordered_value(value: Value) -> Value {
    match value {
        Value::Object(obj) => Value::Object(ordered(obj)),
        other => other,
    }
}

fn five() -> i32 {
    5
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Validated {
    /// Pods to run.
    #[serde(default = "five")]
    #[schemars(range(min = 0, max = 10))]
    replicas: i32,
    #[schemars(length(min = 1), regex(pattern = "^[a-z]+$"))]
    name: String,
    #[schemars(extend("nullable" = true))]
    maybe: Option<String>,
    mode: Mode,
    documented_mode: DocumentedMode,
    maybe_mode: Option<DocumentedMode>,
    #[serde(flatten)]
    extra: BTreeMap<String, Value>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
enum Mode {
    Fast,
    #[serde(rename = "careful")]
    Slow,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
enum DocumentedMode {
    /// Quickly.
    Fast,
    /// Slowly.
    Slow,
}

#[test]
fn defaults_ranges_enums_and_nullable_on_request() {
    let s = schema::<Validated>();
    let p = &s["properties"];
    assert_eq!(
        p["replicas"],
        json!({"type": "integer", "format": "int32", "description": "Pods to run.",
               "default": 5, "minimum": 0, "maximum": 10})
    );
    assert_eq!(
        p["name"],
        json!({"type": "string", "minLength": 1, "pattern": "^[a-z]+$"})
    );
    assert_eq!(p["maybe"], json!({"type": "string", "nullable": true}));
    assert_eq!(
        p["mode"],
        json!({"type": "string", "enum": ["Fast", "careful"]})
    );
    assert_eq!(
        p["documentedMode"],
        json!({"type": "string", "enum": ["Fast", "Slow"]})
    );
    assert_eq!(p["maybeMode"], p["documentedMode"]);
    assert_eq!(s["required"], json!(["name", "mode", "documentedMode"]));
    // A flattened map: the other fields are kept as they come.
    assert_eq!(s[PRESERVE], true);
    assert!(s.get("additionalProperties").is_none(), "{s:#}");
}

#[derive(JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[allow(dead_code)]
enum Source {
    Git { url: String, branch: Option<String> },
    Bucket { bucket: String },
}

#[test]
fn tagged_enum_is_one_object_with_every_variants_properties() {
    let s = schema::<Source>();
    assert_eq!(forbidden_keywords(&s), Vec::<String>::new(), "{s:#}");
    assert_eq!(s["type"], "object");
    assert_eq!(
        s["properties"]["kind"],
        json!({"type": "string", "enum": ["git", "bucket"]})
    );
    assert_eq!(s["properties"]["branch"], json!({"type": "string"}));
    assert_eq!(
        s["oneOf"],
        json!([{"required": ["kind", "url"]}, {"required": ["kind", "bucket"]}])
    );
}

#[derive(JsonSchema)]
#[allow(dead_code)]
enum Mixed {
    Nothing,
    Something(String),
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Tree {
    children: Vec<Tree>,
}

#[test]
fn what_kubernetes_cannot_say_is_an_error_naming_the_place() {
    let mixed = schema_for::<Mixed>().expect_err("mixed enum");
    assert!(
        mixed.starts_with("Mixed:") && mixed.contains("serde(tag"),
        "{mixed}"
    );
    let tree = schema_for::<Tree>().expect_err("recursive");
    assert!(
        tree.starts_with("Tree.children[]:") && tree.contains("recursive"),
        "{tree}"
    );
    let tuple = schema_for::<(i32, String)>().expect_err("tuple");
    assert!(tuple.contains("tuple"), "{tuple}");
    let int_or_string =
        structural(json!({"type": ["integer", "string"]}), "port").expect_err("two types");
    assert!(
        int_or_string.starts_with("port: several types"),
        "{int_or_string}"
    );
}
