use serde_json::{Value, json};

use super::custom::custom_cell;
use super::jsonpath::JsonPath;

fn find(path: &str, o: &Value) -> Option<Value> {
    JsonPath::parse(path)
        .expect("a path")
        .first(o)
        .map(|v| v.into_owned())
}

#[test]
fn paths_read_fields_indexes_filters_and_keys() {
    let o = json!({"spec": {"ports": [{"port": 80}, {"port": 443}], "tags": ["a", "b"],
        "labels": {"app.kubernetes.io/name": "web"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}});
    assert_eq!(find(".spec.ports[0].port", &o), Some(json!(80)));
    assert_eq!(find(".spec.ports[-1].port", &o), Some(json!(443)));
    assert_eq!(find(".spec.ports[*].port", &o), Some(json!(80)));
    assert_eq!(find(".spec.ports[1:].port", &o), Some(json!(443)));
    assert_eq!(find(".spec.ports[2].port", &o), None);
    assert_eq!(find(".spec.tags", &o), Some(json!(["a", "b"])));
    assert_eq!(
        find(r".spec.labels.app\.kubernetes\.io/name", &o),
        Some(json!("web"))
    );
    assert_eq!(
        find(r#".status.conditions[?(@.type=="Synced")].status"#, &o),
        Some(json!("False"))
    );
    assert_eq!(
        find(".status.conditions[?(@.type=='Ready')].status", &o),
        Some(json!("True"))
    );
    assert_eq!(find("..port", &o), Some(json!(80)));
    assert_eq!(find(".spec.missing.deeper", &o), None);
    assert_eq!(find(".spec.tags.name", &o), None);
    assert!(JsonPath::parse(".spec.ports[").is_none());
    assert!(JsonPath::parse(".spec.ports[x]").is_none());
}

#[test]
fn cells_are_kept_in_their_type_or_printed_as_text() {
    let o = json!({"spec": {"replicas": 3, "ratio": 1.5, "ready": true, "tags": ["a", "<b>"],
        "nested": {"b": 1, "a": 2}, "size": "large", "none": null}});
    let cell = |path: &str, kind: &str| custom_cell(&JsonPath::parse(path).unwrap(), kind, &o);
    assert_eq!(cell(".spec.replicas", "integer"), json!(3));
    assert_eq!(cell(".spec.ratio", "integer"), json!(1));
    assert_eq!(cell(".spec.replicas", "number"), json!(3));
    assert_eq!(cell(".spec.ratio", "number"), json!(1.5));
    assert_eq!(cell(".spec.size", "integer"), Value::Null);
    assert_eq!(cell(".spec.ready", "boolean"), json!(true));
    assert_eq!(cell(".spec.replicas", "string"), json!("3"));
    assert_eq!(cell(".spec.ratio", "string"), json!("1.5"));
    assert_eq!(
        cell(".spec.tags", "string"),
        json!(r#"["a","\u003cb\u003e"]"#)
    );
    assert_eq!(cell(".spec.nested", "string"), json!(r#"{"a":2,"b":1}"#));
    assert_eq!(cell(".spec.none", "string"), json!("<no value>"));
    assert_eq!(cell(".spec.missing", "string"), Value::Null);
    assert_eq!(cell(".spec.size", "date"), json!("<invalid>"));
}

#[test]
fn rows_carry_what_include_object_asks() {
    use super::{IncludeObject, TableMeta, TableOptions, table};
    let o = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "resourceVersion": "7"}, "data": {"a": "1"}});
    let objects = std::slice::from_ref(&o);
    let row_object = |version: &'static str, include: Option<&str>| {
        let options = TableOptions::new(version, include).expect("valid options");
        table(&[], TableMeta::default(), objects, options, true)["rows"][0]["object"].clone()
    };
    assert_eq!(row_object("v1", Some("None")), Value::Null);
    assert_eq!(row_object("v1", Some("Object")), o);
    let partial = row_object("v1beta1", None);
    assert_eq!(partial["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(partial["kind"], "PartialObjectMetadata");
    assert_eq!(partial["metadata"], o["metadata"]);
    assert_eq!(
        TableOptions::new("v1", Some("")).map(|o| o.include),
        Ok(IncludeObject::Metadata)
    );
    let refused = TableOptions::new("v1", Some("All")).expect_err("refused");
    assert_eq!(
        refused.message,
        "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty"
    );
    let meta = TableMeta {
        resource_version: "9",
        continue_token: Some(""),
        remaining_item_count: None,
    };
    let options = TableOptions::new("v1", None).expect("valid options");
    let doc = table(&[], meta, &[], options, true);
    assert_eq!(doc["metadata"], json!({"resourceVersion": "9"}));
    assert_eq!(doc["rows"], json!([]));
}
