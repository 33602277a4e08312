//! Converters between a custom resource's versions.

use serde_json::{Value, json};

use super::{opts, store, widget_crd};
use crate::meta::types::{ListOptions, PatchType};
use crate::resource::info::ResourceInfo;
use crate::store::handle::Store;

/// A converter of Widgets: `v1` has `spec.size`, `v2` has `spec.dimensions.size`.
struct Widgets;

impl crate::Converter for Widgets {
    fn converts(&self, group: &str, kind: &str) -> bool {
        group == "demo.example.com" && kind == "Widget"
    }

    fn convert(&self, object: &Value, api_version: &str) -> Result<Value, String> {
        let mut out = object.clone();
        let spec = out["spec"].as_object_mut().ok_or("no spec")?;
        match api_version {
            "demo.example.com/v2" => {
                let size = spec.remove("size").unwrap_or(Value::Null);
                spec.insert("dimensions".into(), json!({"size": size}));
            }
            "demo.example.com/v1" => {
                let size = spec
                    .remove("dimensions")
                    .and_then(|d| d.get("size").cloned())
                    .unwrap_or(Value::Null);
                spec.insert("size".into(), size);
            }
            other => return Err(format!("no version {other}")),
        }
        out["apiVersion"] = json!(api_version);
        Ok(out)
    }
}

/// A store serving Widgets in `v1` (stored) and `v2`, converted by
/// `converter`, and the two resources.
fn two_versions(converter: impl crate::Converter) -> (Store, ResourceInfo, ResourceInfo) {
    let s = store();
    let mut crd = widget_crd();
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    crd["spec"]["versions"].as_array_mut().unwrap().push(v2);
    s.apply_object(crd).unwrap();
    s.set_converter(Some(std::sync::Arc::new(converter)));
    let version = |v: &str| {
        s.resource_for_plural("demo.example.com", v, "widgets")
            .unwrap()
    };
    let (r1, r2) = (version("v1"), version("v2"));
    (s, r1, r2)
}

#[test]
fn a_converter_serves_every_version_from_the_storage_version() {
    let (s, r1, r2) = two_versions(Widgets);
    let w = json!({"apiVersion": "demo.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}});
    s.create(&r1, Some("default"), w, &opts("t")).unwrap();
    let (_, events) = s.watch_channel(&r2, &ListOptions::default(), None).unwrap();

    // Read in v2: converted.
    let as_v2 = s.get(&r2, Some("default"), "w").unwrap();
    assert_eq!(as_v2["apiVersion"], "demo.example.com/v2");
    assert_eq!(as_v2["spec"], json!({"dimensions": {"size": 3}}));
    let listed = s.list(&r2, &ListOptions::default()).unwrap();
    assert_eq!(listed.items[0]["spec"], json!({"dimensions": {"size": 3}}));

    // Written in v2 (a merge patch in v2's shape): stored in v1.
    let patched = s
        .patch(
            &r2,
            Some("default"),
            "w",
            &PatchType::Merge,
            br#"{"spec":{"dimensions":{"size":5}}}"#,
            &opts("t"),
        )
        .unwrap();
    assert_eq!(patched["spec"], json!({"dimensions": {"size": 5}}));
    assert_eq!(
        s.get(&r1, Some("default"), "w").unwrap()["spec"],
        json!({"size": 5})
    );
    let created = json!({"apiVersion": "demo.example.com/v2", "kind": "Widget", "metadata": {"name": "x"}, "spec": {"dimensions": {"size": 7}}});
    s.create(&r2, Some("default"), created, &opts("t")).unwrap();
    assert_eq!(
        s.get(&r1, Some("default"), "x").unwrap()["spec"],
        json!({"size": 7})
    );

    // A v2 watch sees v2 objects: the one there, then its change.
    let next = || {
        events
            .recv_timeout(std::time::Duration::from_secs(1))
            .unwrap()
    };
    let (added, modified) = (next(), next());
    assert_eq!(added.object["apiVersion"], "demo.example.com/v2");
    assert_eq!(added.object["spec"], json!({"dimensions": {"size": 3}}));
    assert_eq!(modified.object["spec"], json!({"dimensions": {"size": 5}}));

    // Without the converter, versions differ only by apiVersion again.
    s.set_converter(None);
    let r2 = s
        .resource_for_plural("demo.example.com", "v2", "widgets")
        .unwrap();
    assert_eq!(
        s.get(&r2, Some("default"), "w").unwrap()["spec"],
        json!({"size": 5})
    );
}

/// A converter that cannot convert a Widget whose size is "odd".
struct Picky;

impl crate::Converter for Picky {
    fn converts(&self, group: &str, kind: &str) -> bool {
        Widgets.converts(group, kind)
    }

    fn convert(&self, object: &Value, api_version: &str) -> Result<Value, String> {
        let size = object
            .pointer("/spec/size")
            .or(object.pointer("/spec/dimensions/size"));
        if size == Some(&json!("odd")) {
            return Err("odd sizes do not convert".into());
        }
        Widgets.convert(object, api_version)
    }
}

#[test]
fn a_failed_conversion_refuses_the_write_and_fails_the_read() {
    let (s, r1, r2) = two_versions(Picky);

    // Written in v2, it cannot be stored in v1: refused, nothing stored.
    let odd = json!({"apiVersion": "demo.example.com/v2", "kind": "Widget", "metadata": {"name": "o"}, "spec": {"dimensions": {"size": "odd"}}});
    let refused = s.create(&r2, Some("default"), odd, &opts("t")).unwrap_err();
    assert_eq!(refused.code, 500);
    assert_eq!(
        refused.message,
        "conversion webhook for demo.example.com/v2, Kind=Widget failed: odd sizes do not convert"
    );
    assert!(s.get(&r1, Some("default"), "o").is_err(), "nothing stored");

    // Stored in v1, it cannot be read in v2: the read fails, and so does a
    // list in v2 as a whole, never an object under the wrong version.
    let w = json!({"apiVersion": "demo.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": "odd"}});
    s.create(&r1, Some("default"), w, &opts("t")).unwrap();
    let read = s.get(&r2, Some("default"), "w").unwrap_err();
    assert_eq!(read.code, 500);
    assert!(
        read.message
            .contains("conversion webhook for demo.example.com/v1, Kind=Widget failed"),
        "{}",
        read.message
    );
    let listed = s.list(&r2, &ListOptions::default()).unwrap_err();
    assert_eq!(listed.code, 500, "{}", listed.message);
    // In its own version it reads as stored.
    assert_eq!(
        s.get(&r1, Some("default"), "w").unwrap()["spec"]["size"],
        "odd"
    );
}
