//! A rollout on a real kube-apiserver, modules shipped as ConfigMaps:
//! recorded and replayed, shadows dry-run by the real server, a policy, a
//! canary share, a promotion.

use std::path::Path;
use std::process::{Command, Stdio};

use super::{ONE_AT_A_TIME, Stopped, kubectl, kubectl_out, real_binaries, shown, until};

/// `bytes` with every `from` replaced by `to` (of the same length).
pub(super) fn replaced(mut bytes: Vec<u8>, from: &str, to: &str) -> Vec<u8> {
    let (from, to) = (from.as_bytes(), to.as_bytes());
    assert_eq!(from.len(), to.len());
    let mut at = 0;
    while let Some(found) = bytes[at..].windows(from.len()).position(|w| w == from) {
        bytes[at + found..at + found + from.len()].copy_from_slice(to);
        at += found + from.len();
    }
    bytes
}

/// `rekon pack` of `bytes` as module ConfigMaps named `name` in `default`,
/// the head annotated with `annotations`, applied with kubectl.
fn ship(kubeconfig: &Path, dir: &Path, bytes: &[u8], name: &str, annotations: &[(&str, &str)]) {
    let module = dir.join(format!("{name}.wasm"));
    std::fs::write(&module, bytes).unwrap();
    let packed = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .arg("pack")
        .arg(&module)
        .args(["--name", name, "--namespace", "default"])
        .env("REKON_CACHE_DIR", dir.join("cache"))
        .output()
        .unwrap();
    assert!(packed.status.success(), "{}", shown(&packed));
    let mut documents: Vec<serde_json::Value> =
        serde_yaml_ng::Deserializer::from_slice(&packed.stdout)
            .map(|d| <serde_json::Value as serde::Deserialize>::deserialize(d).unwrap())
            .filter(|v| !v.is_null())
            .collect();
    let head = documents.last_mut().unwrap();
    for (key, value) in annotations {
        head["metadata"]["annotations"][*key] = serde_json::json!(value);
    }
    let file = dir.join(format!("{name}.json"));
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": documents});
    std::fs::write(&file, list.to_string()).unwrap();
    let applied = kubectl(kubeconfig, &["apply", "-f", file.to_str().unwrap()]);
    assert!(applied.status.success(), "{}", shown(&applied));
}

/// A rollout on a real kube-apiserver, modules shipped as ConfigMaps the
/// way users ship them: the serving version's reconciles are recorded (its
/// ConfigMap annotated `rekon.dev/record`) and the recording replays
/// offline against the same version (agrees) and a changed one (differs);
/// a shadow's writes are the server's dry runs, answered with what the
/// server would store (its defaults) or refused by its validation, shown
/// as the difference and never stored; a second shadow replaces it and
/// its annotated policy drops it at its first difference; the first,
/// annotated with a canary share, serves part of the objects live; promoted,
/// it serves them all.
#[test]
fn a_rollout_on_a_real_api_server_shadows_replays_canaries_and_promotes() {
    if !real_binaries("a_rollout_on_a_real_api_server_shadows_replays_canaries_and_promotes") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let assets = rekon_envtest::assets().unwrap();
    let cluster = rekon_envtest::RealCluster::start(
        &assets,
        &rekon_envtest::Options {
            controller_manager: false,
            ..rekon_envtest::Options::default()
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, cluster.kubeconfig()).unwrap();
    let serving = std::fs::read(rekon_test_artifacts::MISBEHAVE).unwrap();
    // The next version writes another mark, and reads its mode from another
    // annotation: only it probes (`subject` is no mode's name, which would
    // be both versions').
    let shadow_key = misbehave::MODE_KEY.replace("/mode", "/modx");
    let next = replaced(
        replaced(serving.clone(), misbehave::MODE_KEY, &shadow_key),
        misbehave::BUILD_MARK,
        "misbehave-build-B",
    );
    let port = crate::support::free_port();
    let addr = format!("127.0.0.1:{port}");
    let log = dir.join("rekon.log");
    let _run = Stopped(
        Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args([
                "run",
                "--watch-configmaps",
                "--configmap-namespace",
                "default",
            ])
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["--metrics-addr", &addr])
            .env("REKON_CACHE_DIR", dir.join("cache"))
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let rekon = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args(args)
            .output()
            .unwrap();
        (shown(&output), output.status.code())
    };
    let status = || crate::support::http_get(port, "/rollout/misbehave").unwrap_or_default();
    let marks = || -> Vec<String> {
        (0..8)
            .map(|i| {
                kubectl_out(
                    &kubeconfig,
                    &[
                        "get",
                        "configmap",
                        &format!("c{i}"),
                        "-o",
                        "jsonpath={.data.behaved-by}",
                    ],
                )
            })
            .collect()
    };

    // The serving version, recorded.
    ship(
        &kubeconfig,
        dir,
        &serving,
        "misbehave",
        &[("rekon.dev/record", "50")],
    );
    let objects: Vec<serde_json::Value> = (0..8)
        .map(|i| {
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("c{i}"), "namespace": "default"}})
        })
        .collect();
    let file = dir.join("objects.json");
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects});
    std::fs::write(&file, list.to_string()).unwrap();
    let applied = kubectl(&kubeconfig, &["apply", "-f", file.to_str().unwrap()]);
    assert!(applied.status.success(), "{}", shown(&applied));
    until("the serving version's reconciles", &log, || {
        marks().iter().all(|m| m == misbehave::BUILD_MARK)
    });

    // Its recording replays offline: agrees with the same version, differs
    // from the next.
    let answer = crate::support::http_get(port, "/recordings/misbehave").unwrap();
    let (head, recorded) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.contains(" 200 "), "{answer}");
    let traces = dir.join("recorded.jsonl");
    std::fs::write(&traces, recorded).unwrap();
    let (out, code) = rekon(&[
        "replay",
        traces.to_str().unwrap(),
        "--module",
        rekon_test_artifacts::MISBEHAVE,
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("recorded reconciles agree (0 differ)"),
        "{out}"
    );
    let next_file = dir.join("next.wasm");
    std::fs::write(&next_file, &next).unwrap();
    let (out, code) = rekon(&[
        "replay",
        traces.to_str().unwrap(),
        "--module",
        next_file.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("differ  default/c0") && out.contains("misbehave-build-B"),
        "{out}"
    );

    // The next version in shadow: its writes are the server's dry runs.
    ship(
        &kubeconfig,
        dir,
        &next,
        "misbehave-next",
        &[("rekon.dev/rollout", "shadow")],
    );
    let create = |name: &str| {
        serde_json::json!({"call": "create", "apiVersion": "v1", "kind": "ConfigMap",
            "namespace": "default", "name": name,
            "body": serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name}, "data": {"made-by": "shadow"}}).to_string()})
    };
    let script = serde_json::json!([create("shadow-made"), create("Bad_Name")]).to_string();
    let probe = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "subject", "namespace": "default",
            "annotations": {shadow_key: "probe", misbehave::SCRIPT_KEY: script}}});
    let file = dir.join("subject.json");
    std::fs::write(&file, probe.to_string()).unwrap();
    let applied = kubectl(&kubeconfig, &["apply", "-f", file.to_str().unwrap()]);
    assert!(applied.status.success(), "{}", shown(&applied));
    let mut shown_status = String::new();
    until("the shadow's comparisons", &log, || {
        shown_status = status();
        shown_status.contains("differ  default/subject")
            && shown_status.contains("differ  default/c0")
    });
    assert!(
        shown_status.contains("from configmap:default/misbehave-next"),
        "{shown_status}"
    );
    // The valid create: answered with the object the server would store.
    assert!(
        shown_status.contains("\"made-by\": \"shadow\""),
        "{shown_status}"
    );
    // The invalid one: refused by the server's validation, in its words.
    assert!(
        shown_status.contains("\"code\": 422") && shown_status.contains("Bad_Name"),
        "{shown_status}"
    );
    assert!(
        shown_status.contains("+") && shown_status.contains("misbehave-build-B"),
        "{shown_status}"
    );
    // The serving version's writes are stored; the shadow's are not.
    let subject: serde_json::Value = serde_json::from_str(&kubectl_out(
        &kubeconfig,
        &["get", "configmap", "subject", "-o", "json"],
    ))
    .unwrap();
    assert_eq!(subject["data"]["reconciled"], "true", "{subject}");
    let made = kubectl(&kubeconfig, &["get", "configmap", "shadow-made"]);
    assert!(
        String::from_utf8_lossy(&made.stderr).contains("NotFound"),
        "{}",
        shown(&made)
    );
    assert!(marks().iter().all(|m| m == misbehave::BUILD_MARK));

    // A second shadow replaces the first; its policy (annotated) drops it
    // at its first difference.
    let third = replaced(serving.clone(), misbehave::BUILD_MARK, "misbehave-build-C");
    ship(
        &kubeconfig,
        dir,
        &third,
        "misbehave-third",
        &[
            ("rekon.dev/rollout", "shadow"),
            ("rekon.dev/abort-on-difference", "true"),
        ],
    );
    until("the second shadow's policy dropping it", &log, || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("the rollout policy decides"))
            && status().contains("no shadow")
    });
    assert!(marks().iter().all(|m| m == misbehave::BUILD_MARK));

    // The first again, with a canary share: part of the objects served live
    // by it, the others still by the serving version.
    ship(
        &kubeconfig,
        dir,
        &next,
        "misbehave-next",
        &[("rekon.dev/rollout", "shadow"), ("rekon.dev/canary", "50")],
    );
    until("the canary's live writes", &log, || {
        status().contains("serves 50% of the objects live")
            && marks().iter().any(|m| m == "misbehave-build-B")
    });
    until("the shadowed objects compared", &log, || {
        status().contains("differ  default/c")
    });
    let split = marks();
    assert!(
        split.iter().any(|m| m == misbehave::BUILD_MARK),
        "half of the objects stay with the serving version: {split:?}"
    );

    // Promoted: it serves every object.
    let (out, code) = rekon(&["rollout", "promote", "misbehave", "--addr", &addr]);
    assert_eq!(code, Some(0), "{out}");
    until("every object served by the promoted version", &log, || {
        marks().iter().all(|m| m == "misbehave-build-B")
    });
    assert!(status().contains("no shadow"), "{}", status());
}
