//! `rekon dev --api-only` and `--api-resources`: its API server driven
//! through kubectl alone — every built-in resource, kinds served from
//! discovery documents, and a clean stop on SIGTERM.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{dev_kubectl, kubectl, sigterm_and_wait, stderr, stdout, write};

/// Every built-in resource of Kubernetes 1.36, driven through kubectl
/// against `rekon dev --api-only` as its discovery document allows:
/// created from a minimal manifest, read, listed by label, patched and
/// deleted; a verb the resource does not serve is refused with 405.
#[test]
fn every_builtin_resource_through_kubectl() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
        .args(["dev", "--api-only", "--write-kubeconfig"])
        .arg(&kubeconfig)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !kubeconfig.exists() {
        assert!(Instant::now() < deadline, "no kubeconfig written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let cache = dir.path().join("kubectl-cache");
    let kubectl = |args: &[&str]| {
        let mut all = vec!["--cache-dir", cache.to_str().unwrap()];
        all.extend_from_slice(args);
        kubectl(&kubeconfig, &all)
    };
    let manifests = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/builtins.yaml"
    ))
    .unwrap();
    let manifests: Vec<Value> = serde_yaml_ng::Deserializer::from_str(&manifests)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    let resources = rekon_store::builtin_resources();
    assert_eq!(resources.len(), 68, "the resources of Kubernetes 1.36");
    let mut failures = Vec::new();
    for res in &resources {
        if let Err(failure) = drive(&kubectl, res, &manifests, dir.path()) {
            failures.push(format!("{}.{}: {failure}", res.plural, res.api_version()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    sigterm_and_wait(&mut child);
}

/// `rekon dev --api-resources` serves kinds without a CRD: an
/// aggregated API (metrics.k8s.io, which `kubectl top` reads) and a
/// kind of a version Kubernetes no longer serves (batch/v1beta1).
#[test]
fn dev_serves_further_resources_from_discovery_documents() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let resources = write(
        dir.path(),
        "resources.yaml",
        r#"kind: APIResourceList
apiVersion: v1
groupVersion: metrics.k8s.io/v1beta1
resources:
- {name: nodes, singularName: "", namespaced: false, kind: NodeMetrics, verbs: [get, list]}
- {name: pods, singularName: "", namespaced: true, kind: PodMetrics, verbs: [get, list]}
---
kind: APIResourceList
apiVersion: v1
groupVersion: batch/v1beta1
resources:
- {name: cronjobs, singularName: cronjob, namespaced: true, kind: CronJob, shortNames: [cj]}
"#,
    );
    let metrics = write(
        dir.path(),
        "metrics.yaml",
        r#"apiVersion: metrics.k8s.io/v1beta1
kind: PodMetrics
metadata: {name: web-0, namespace: default}
timestamp: "2026-11-23T00:00:00Z"
window: 30s
containers: [{name: web, usage: {cpu: 250m, memory: 64Mi}}]
"#,
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
        .args([
            "dev",
            "--api-only",
            "--api-resources",
            &resources,
            "-f",
            &metrics,
        ])
        .arg("--write-kubeconfig")
        .arg(&kubeconfig)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !kubeconfig.exists() {
        assert!(Instant::now() < deadline, "no kubeconfig written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let cache = dir.path().join("kubectl-cache");
    let kubectl = |args: &[&str]| {
        let mut all = vec!["--cache-dir", cache.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = kubectl(&kubeconfig, &all);
        assert!(out.status.success(), "kubectl {args:?}: {}", stderr(&out));
        stdout(&out)
    };
    // kubectl top finds the metrics API through discovery and reads it.
    let top = kubectl(&["top", "pod", "-n", "default"]);
    let row: Vec<&str> = top
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row, ["web-0", "250m", "64Mi"], "{top}");
    let cronjob = write(
        dir.path(),
        "cronjob.yaml",
        r#"apiVersion: batch/v1beta1
kind: CronJob
metadata: {name: nightly, namespace: default}
spec:
  schedule: "0 3 * * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
"#,
    );
    kubectl(&["create", "-f", &cronjob]);
    let got = kubectl(&[
        "get",
        "cronjobs.v1beta1.batch",
        "nightly",
        "-o",
        "jsonpath={.apiVersion} {.spec.schedule}",
    ]);
    assert_eq!(got, "batch/v1beta1 0 3 * * *");
    // batch/v1 stays the preferred version.
    let batch: Value = serde_json::from_str(&kubectl(&["get", "--raw", "/apis/batch"])).unwrap();
    assert_eq!(batch["preferredVersion"]["version"], "v1", "{batch}");
    let versions = kubectl(&["api-versions"]);
    assert!(versions.lines().any(|l| l == "batch/v1beta1"), "{versions}");
    assert!(
        versions.lines().any(|l| l == "metrics.k8s.io/v1beta1"),
        "{versions}"
    );
    // The metrics API is read-only, as its document says.
    let out = dev_kubectl(&kubeconfig, &cache, &["delete", "podmetrics", "web-0"]);
    assert!(
        !out.status.success() && stderr(&out).contains("MethodNotAllowed"),
        "{}",
        stderr(&out)
    );
    sigterm_and_wait(&mut child);
}

/// Drives one resource through kubectl; `Err` says what went wrong.
fn drive(
    kubectl: &dyn Fn(&[&str]) -> Output,
    res: &rekon_store::ResourceInfo,
    manifests: &[Value],
    dir: &Path,
) -> Result<(), String> {
    // `horizontalpodautoscalers.v1.autoscaling`: this very version (a
    // core resource by its plural alone: kubectl prefers the core group).
    let qualified = if res.group.is_empty() {
        res.plural.clone()
    } else {
        format!("{}.{}.{}", res.plural, res.version, res.group)
    };
    let manifest = manifests
        .iter()
        .find(|m| m["apiVersion"] == res.api_version().as_str() && m["kind"] == res.kind.as_str());
    let name = manifest
        .and_then(|m| m["metadata"]["name"].as_str())
        .map_or_else(
            || format!("rekon-{}-{}", res.plural, res.version),
            str::to_string,
        );
    let label = format!("rekon-test={}", res.plural);
    let ns: &[&str] = if res.namespaced {
        &["-n", "default"]
    } else {
        &[]
    };
    let run = |args: &[&str]| -> Output {
        let mut all: Vec<&str> = args.to_vec();
        all.extend_from_slice(ns);
        kubectl(&all)
    };
    let ok = |what: &str, out: Output| -> Result<String, String> {
        if out.status.success() {
            Ok(stdout(&out))
        } else {
            Err(format!("{what}: {}", stderr(&out).trim()))
        }
    };
    if !res.serves("create") {
        // Read-only (ComponentStatus): listed, and writes refused.
        ok("list", run(&["get", &qualified, "-o", "name"]))?;
        let refused = run(&["delete", &qualified, "etcd-0"]);
        let says = stderr(&refused);
        return if !refused.status.success() && says.contains("MethodNotAllowed") {
            Ok(())
        } else {
            Err(format!("a delete was not refused with 405: {says}"))
        };
    }
    if res.kind == "Binding" {
        // A Binding binds the Pod it names: the Pod comes first.
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}});
        let file = dir.join(format!("{name}-pod.yaml"));
        std::fs::write(&file, serde_yaml_ng::to_string(&pod).unwrap()).unwrap();
        ok(
            "create its pod",
            run(&["create", "-f", file.to_str().unwrap()]),
        )?;
    }
    let mut object = manifest.cloned().ok_or("no manifest")?;
    object["metadata"] = json!({"name": name, "labels": {"rekon-test": res.plural}});
    let file = dir.join(format!("{name}.yaml"));
    std::fs::write(&file, serde_yaml_ng::to_string(&object).unwrap()).unwrap();
    let created = ok(
        "create",
        run(&["create", "-f", file.to_str().unwrap(), "-o", "json"]),
    )?;
    if !res.is_stored() {
        // A review: answered, with a status, and not kept.
        let answer: Value = serde_json::from_str(&created).map_err(|e| e.to_string())?;
        if res.kind == "Binding" {
            // Kept on the Pod it bound.
            let node = ok(
                "get its pod",
                run(&["get", "pod", &name, "-o", "jsonpath={.spec.nodeName}"]),
            )?;
            return match node.as_str() {
                "node-1" => Ok(()),
                other => Err(format!("the pod is on {other:?}, not node-1")),
            };
        }
        return match answer.get("status") {
            Some(_) => Ok(()),
            None => Err(format!("no status in the answer: {answer}")),
        };
    }
    let got = ok(
        "get",
        run(&["get", &qualified, &name, "-o", "jsonpath={.metadata.name}"]),
    )?;
    if got != name {
        return Err(format!("get gave {got:?}"));
    }
    let listed = ok(
        "list",
        run(&["get", &qualified, "-l", &label, "-o", "name"]),
    )?;
    if !listed.contains(&name) {
        return Err(format!("not listed by its label: {listed:?}"));
    }
    ok(
        "patch",
        run(&[
            "patch",
            &qualified,
            &name,
            "--type=merge",
            "-p",
            r#"{"metadata":{"annotations":{"patched":"yes"}}}"#,
        ]),
    )?;
    let patched = ok(
        "get after patch",
        run(&[
            "get",
            &qualified,
            &name,
            "-o",
            "jsonpath={.metadata.annotations.patched}",
        ]),
    )?;
    if patched != "yes" {
        return Err(format!("the patch did not stick: {patched:?}"));
    }
    ok("table", run(&["get", &qualified, &name])).and_then(|table| {
        // NAME and a time column: AGE, or CREATED AT for the kinds the
        // real server prints so (CRDs, Roles, LimitRanges); Events
        // start with LAST SEEN.
        let timed = table.contains("AGE") || table.contains("CREATED AT");
        if table.starts_with("NAME") && timed || table.starts_with("LAST SEEN") {
            Ok(())
        } else {
            Err(format!("the table has no NAME and time columns: {table}"))
        }
    })?;
    ok(
        "delete",
        run(&["delete", &qualified, &name, "--wait=true", "--timeout=20s"]),
    )?;
    let gone = run(&["get", &qualified, &name]);
    if gone.status.success() || !stderr(&gone).contains("NotFound") {
        return Err(format!("still there after delete: {}", stderr(&gone)));
    }
    Ok(())
}

#[test]
fn api_only_serves_kubectl_until_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
        .args(["dev", "--api-only", "--write-kubeconfig"])
        .arg(&kubeconfig)
        .arg("-f")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../guests/app/manifests/crd.yaml"
        ))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !kubeconfig.exists() {
        assert!(Instant::now() < deadline, "no kubeconfig written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kubectl = |args: &[&str]| kubectl(&kubeconfig, args);
    let namespaces = kubectl(&["get", "namespaces", "-o", "name"]);
    assert!(namespaces.status.success(), "{}", stderr(&namespaces));
    assert!(stdout(&namespaces).contains("namespace/default"));
    // The CRD given with -f is served: its kind can be applied and listed.
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../guests/app/manifests/example.yaml"
    );
    let applied = kubectl(&["apply", "-f", example]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let apps = kubectl(&["get", "apps.demo.rekon.dev", "-o", "name"]);
    assert_eq!(stdout(&apps).trim(), "app.demo.rekon.dev/web");

    sigterm_and_wait(&mut child);
}
