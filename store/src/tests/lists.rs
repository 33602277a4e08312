//! Lists: selectors, pages and continue tokens.

use serde_json::{Value, json};

use super::{cm, cm_res, namespace, opts, store};
use crate::meta::types::ListOptions;
use crate::resource::info::ResourceInfo;
use crate::store::handle::Store;

#[test]
fn list_selectors_and_pages() {
    let s = store();
    let r = cm_res(&s);
    for i in 0..5 {
        let mut o = cm(&format!("c{i}"));
        o["metadata"]["labels"] = json!({"i": i.to_string(), "even": (i % 2 == 0).to_string()});
        s.create(&r, Some("default"), o, &opts("t")).unwrap();
    }
    let sel = |l: &str| ListOptions {
        label_selector: Some(l.into()),
        ..ListOptions::default()
    };
    assert_eq!(s.list(&r, &sel("even=true")).unwrap().items.len(), 3);
    assert_eq!(
        s.list(&r, &sel("i in (1,2),even!=true"))
            .unwrap()
            .items
            .len(),
        1
    );
    let f = ListOptions {
        field_selector: Some("metadata.name=c3".into()),
        ..ListOptions::default()
    };
    assert_eq!(s.list(&r, &f).unwrap().items[0]["metadata"]["name"], "c3");
    let mut names = Vec::new();
    let mut o = ListOptions {
        limit: Some(2),
        namespace: Some("default".into()),
        ..ListOptions::default()
    };
    let first = s.list(&r, &o).unwrap();
    // Five ConfigMaps and the namespace's root CA.
    assert_eq!(first.remaining_item_count, Some(4));
    let mut page = first.clone();
    loop {
        assert_eq!(page.resource_version, first.resource_version);
        names.extend(
            page.items
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_string()),
        );
        match page.continue_token {
            Some(t) => o.continue_token = Some(t),
            None => break,
        }
        page = s.list(&r, &o).unwrap();
    }
    assert_eq!(names, ["c0", "c1", "c2", "c3", "c4", "kube-root-ca.crt"]);
}

/// Pages one item at a time; returns (namespace, name) of every item but
/// the namespaces' root CAs (`kube-root-ca.crt`, one in each).
fn page_through(s: &Store, r: &ResourceInfo, namespace: Option<&str>) -> Vec<(String, String)> {
    let mut o = ListOptions {
        limit: Some(1),
        namespace: namespace.map(str::to_string),
        ..ListOptions::default()
    };
    let mut seen = Vec::new();
    loop {
        let page = s.list(r, &o).unwrap();
        seen.extend(page.items.iter().map(|i| {
            let meta = &i["metadata"];
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (text(&meta["namespace"]), text(&meta["name"]))
        }));
        match page.continue_token {
            Some(t) => o.continue_token = Some(t),
            None => {
                seen.retain(|(_, name)| name != "kube-root-ca.crt");
                return seen;
            }
        }
    }
}

#[test]
fn pages_cover_namespaces_whose_names_share_a_prefix() {
    let s = store();
    for n in ["a", "a-b", "b"] {
        namespace(&s, n);
    }
    let r = cm_res(&s);
    for (n, name) in [("a-b", "x"), ("a", "y"), ("a", "x"), ("b", "a")] {
        s.create(&r, Some(n), cm(name), &opts("t")).unwrap();
    }
    let pair = |n: &str, name: &str| (n.to_string(), name.to_string());
    // In storage-key order, as etcd ranges: `a-b/x` before `a/x` ('-'
    // sorts before '/').
    assert_eq!(
        page_through(&s, &r, None),
        [
            pair("a-b", "x"),
            pair("a", "x"),
            pair("a", "y"),
            pair("b", "a")
        ]
    );
    assert_eq!(
        page_through(&s, &r, Some("a")),
        [pair("a", "x"), pair("a", "y")]
    );
    assert_eq!(page_through(&s, &r, Some("a-b")), [pair("a-b", "x")]);
    let first = s
        .list(
            &r,
            &ListOptions {
                limit: Some(1),
                namespace: Some("a".into()),
                ..ListOptions::default()
            },
        )
        .unwrap();
    // y and the root CA.
    assert_eq!(first.remaining_item_count, Some(2));
}

/// The names of a page's items.
fn names(list: &crate::meta::types::ObjectList) -> Vec<&str> {
    list.items
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap_or_default())
        .collect()
}

#[test]
fn a_full_page_with_selectors_continues_while_keys_remain() {
    let s = store();
    let r = cm_res(&s);
    for name in ["a", "b", "c"] {
        let mut o = cm(name);
        o["metadata"]["labels"] = json!({"team": if name == "c" { "y" } else { "x" }});
        s.create(&r, Some("default"), o, &opts("t")).unwrap();
    }
    let page = |selector: &str, limit: usize| {
        s.list(
            &r,
            &ListOptions {
                namespace: Some("default".into()),
                label_selector: Some(selector.into()),
                limit: Some(limit),
                ..ListOptions::default()
            },
        )
        .unwrap()
    };
    // b fills the page; c and the root CA remain, though neither matches.
    let first = page("team=x", 2);
    assert_eq!(names(&first), ["a", "b"]);
    assert!(first.continue_token.is_some());
    assert_eq!(first.remaining_item_count, None);
    // A page not filled has no next one.
    let all = page("team", 4);
    assert_eq!(names(&all), ["a", "b", "c"]);
    assert!(all.continue_token.is_none());
}

#[test]
fn a_continue_token_is_read_before_the_resource_version() {
    let s = store();
    let r = cm_res(&s);
    let list = |token: &str, rv: &str| {
        s.list(
            &r,
            &ListOptions {
                continue_token: Some(token.into()),
                resource_version: Some(rv.into()),
                ..ListOptions::default()
            },
        )
        .unwrap_err()
        .message
    };
    assert!(list("!", "5").starts_with("invalid continue token"));
    let token = crate::store::paging::encode_continue(5, "a");
    assert_eq!(
        list(&token, "5"),
        "specifying resource version is not allowed when using continue"
    );
    assert_eq!(
        list("", "abc"),
        "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
    );
}

#[test]
fn pods_are_selected_by_their_field_set() {
    let s = store();
    let pods = s.resource_for_plural("", "v1", "pods").unwrap();
    for (name, spec) in [
        ("a", json!({"nodeName": "node-1"})),
        ("h", json!({"hostNetwork": true})),
    ] {
        let mut spec = spec;
        spec["containers"] = json!([{"name": "c", "image": "nginx"}]);
        spec["automountServiceAccountToken"] = json!(false);
        let pod =
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec});
        s.create(&pods, Some("default"), pod, &opts("t")).unwrap();
    }
    let select = |selector: &str| {
        let list = s.list(
            &pods,
            &ListOptions {
                field_selector: Some(selector.into()),
                ..ListOptions::default()
            },
        );
        list.map(|l| names(&l).join(",")).map_err(|e| e.message)
    };
    assert_eq!(select("spec.host=node-1"), Ok("a".into()));
    assert_eq!(select("spec.hostNetwork=false"), Ok("a".into()));
    assert_eq!(select("status.podIPs="), Ok("a,h".into()));
    assert_eq!(select("status.podIPs=10.0.0.1"), Ok(String::new()));
    assert_eq!(
        select("spec.containers=c"),
        Err("field label not supported: spec.containers".into())
    );
}
