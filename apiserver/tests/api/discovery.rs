//! Discovery answers as a real kube-apiserver 1.36 does: every built-in
//! group-version's document equal to the one recorded from the real server.

use serde_json::Value;

use crate::common::{get, start};

#[tokio::test]
async fn every_builtin_group_version_answers_its_recorded_document() {
    let server = start().await;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../store/discovery");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let recorded: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let group_version = recorded["groupVersion"].as_str().unwrap();
        let url = if group_version.contains('/') {
            format!("/apis/{group_version}")
        } else {
            format!("/api/{group_version}")
        };
        let (code, _, body) = get(server.server.addr(), &url).await;
        assert_eq!(code, 200, "{url}");
        let served: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(served, recorded, "{url} differs from {}", path.display());
        checked += 1;
    }
    assert_eq!(checked, 22, "the 22 built-in group-versions");

    // The group list names every group once, with its preferred version.
    let (_, _, body) = get(server.server.addr(), "/apis").await;
    let groups: Value = serde_json::from_str(&body).unwrap();
    let autoscaling = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "autoscaling")
        .unwrap();
    assert_eq!(autoscaling["preferredVersion"]["version"], "v2");
    assert_eq!(groups["groups"].as_array().unwrap().len(), 20);
}
