//! Module updates in place: a new version served by both replicas without
//! a restart, a garbage module refused with an Event while the last good
//! version serves, a rollback.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::cluster::{Node, apply_text, text, too_many_replicas, wait};
use crate::install::pack;

/// Updates the app module of `node` in place through `deploy`, refuses
/// garbage, rolls back.
pub fn in_place(node: &Node, work: &Path, deploy: &Path, step: &dyn Fn(&str)) {
    let app_wasm = PathBuf::from(rekon_test_artifacts::APP);
    // ---- module updates, in place.
    let digest_of = |bytes: &[u8]| rekon_host::runtime::digest(bytes);
    let v1_bytes = std::fs::read(&app_wasm).expect("app.wasm");
    let serving = |digest: &str| {
        let line =
            format!("rekon_module_info{{module=\"app\",version=\"0.1.0\",digest=\"{digest}\"}} 1");
        let metrics = node.metrics();
        (metrics.len() == 2 && metrics.iter().all(|(_, m)| m.contains(&line))).then_some(())
    };
    let restarts = |pods: &[Value]| -> Vec<(String, i64)> {
        pods.iter()
            .map(|p| {
                (
                    p["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    p["status"]["containerStatuses"][0]["restartCount"]
                        .as_i64()
                        .unwrap_or(-1),
                )
            })
            .collect()
    };
    let before = restarts(&node.rekon_pods());
    step("a module updated in place");
    let v1_pack = work.join("app-v1.yaml");
    std::fs::copy(deploy.join("modules/app.yaml"), &v1_pack).expect("keeping the first pack");
    let v2_wasm = work.join("app-v2.wasm");
    let v2_bytes = with_custom_section(&v1_bytes, "v2: same code, another digest");
    std::fs::write(&v2_wasm, &v2_bytes).expect("writing app-v2.wasm");
    pack(&v2_wasm, &deploy.join("modules/app.yaml"));
    let modules = deploy.join("modules");
    node.k(&["apply", "-k", modules.to_str().expect("a path")]);
    node.wait(
        "both replicas serving the new version",
        Duration::from_secs(60),
        || serving(&digest_of(&v2_bytes)),
    );
    assert_eq!(restarts(&node.rekon_pods()), before, "no pod restarted");
    let module_configmaps =
        node.in_rekon(&["get", "configmaps", "-l", "rekon.dev/module", "-o", "name"]);
    assert_eq!(
        module_configmaps.trim(),
        "configmap/app",
        "no ConfigMap left behind"
    );

    step("a garbage module refused with an Event");
    let garbage = b"this is not a wasm component\n".repeat(10);
    let documents = rekon_host::pack::pack(
        &garbage,
        "app",
        "rekon-system",
        rekon_host::pack::Encoding::None,
        rekon_host::pack::DEFAULT_PART_SIZE,
    )
    .expect("packing");
    let yaml: String = documents
        .iter()
        .map(|d| format!("---\n{}", serde_yaml_ng::to_string(d).expect("YAML")))
        .collect();
    apply_text(node, &yaml);
    let event = wait("the ModuleRejected Event", Duration::from_secs(60), || {
        let events = node.json(&[
            "-n",
            "rekon-system",
            "get",
            "events",
            "--field-selector",
            "reason=ModuleRejected",
        ]);
        events["items"].as_array()?.first().cloned()
    });
    assert_eq!(event["involvedObject"]["name"], "app");
    assert!(
        event["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not a WebAssembly component"),
        "{event}"
    );
    assert!(
        serving(&digest_of(&v2_bytes)).is_some(),
        "the last good version keeps serving"
    );
    let still = too_many_replicas(node);
    assert!(
        text(&still.stderr).contains("denied the request"),
        "{}",
        text(&still.stderr)
    );

    step("a rollback");
    std::fs::copy(&v1_pack, deploy.join("modules/app.yaml")).expect("restoring the first pack");
    node.k(&["apply", "-k", modules.to_str().expect("a path")]);
    node.wait(
        "both replicas serving the first version again",
        Duration::from_secs(60),
        || serving(&digest_of(&v1_bytes)),
    );
    assert_eq!(restarts(&node.rekon_pods()), before, "no pod restarted");
}

/// `bytes` with one more custom section: the same code, another digest (a
/// new version of the module, as a rebuild makes).
pub fn with_custom_section(bytes: &[u8], payload: &str) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let name = b"rekon-e2e";
    let mut body = Vec::new();
    leb(name.len(), &mut body);
    body.extend_from_slice(name);
    body.extend_from_slice(payload.as_bytes());
    let mut out = bytes.to_vec();
    out.push(0);
    leb(body.len(), &mut out);
    out.extend(body);
    out
}
