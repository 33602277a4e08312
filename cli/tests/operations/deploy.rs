//! The deployment as the README gives it: `kubectl apply -k deploy/` and
//! the Deployment's arguments run the modules; the scale-out overlay
//! builds with kubectl.

use crate::support::{Env, app, free_port, http_status, path, reconciled};

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `make deploy-modules`: the example module packed into deploy/modules/app.yaml.
fn deploy_modules(deploy: &std::path::Path) {
    let packed = std::process::Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(["pack", rekon_test_artifacts::APP, "--name", "app"])
        .output()
        .expect("running rekon pack");
    assert!(packed.status.success());
    std::fs::write(deploy.join("modules/app.yaml"), packed.stdout).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_k_deploy_then_the_deployment_args_run_the_modules() {
    let mut env = Env::new().await;
    let deploy = env.dir.path().join("deploy");
    copy_dir(std::path::Path::new(&path("deploy")), &deploy);
    deploy_modules(&deploy);
    let applied = std::process::Command::new(crate::support::kubectl_binary())
        .args(["apply", "-k"])
        .arg(&deploy)
        .env("KUBECONFIG", &env.kubeconfig)
        .output()
        .expect("running kubectl");
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );

    let deployment = env
        .get("apps", "v1", "Deployment", Some("rekon-system"), "rekon")
        .expect("the Deployment");
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(
        deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 0,
        "a new replica serves before an old one stops"
    );
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let container = &pod["containers"][0];
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert!(
        env.get("", "v1", "ServiceAccount", Some("rekon-system"), "rekon")
            .is_some()
    );
    let role = env
        .get(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            Some("rekon-system"),
            "rekon",
        )
        .expect("the host's Role");
    assert!(role.to_string().contains("leases"));
    assert!(
        env.get(
            "policy",
            "v1",
            "PodDisruptionBudget",
            Some("rekon-system"),
            "rekon"
        )
        .is_some()
    );

    // The module ConfigMap `rekon pack` wrote holds the module's bytes.
    let configmaps = env.resource("", "v1", "ConfigMap");
    let listed = env
        .store()
        .list(&configmaps, &Default::default())
        .unwrap()
        .items;
    let manifest = listed
        .iter()
        .find(|c| c["metadata"]["labels"]["rekon.dev/module"] == "app")
        .expect("the module ConfigMap");
    assert_eq!(manifest["metadata"]["namespace"], "rekon-system");
    let wasm = rekon_host::pack::assemble(manifest, &listed).unwrap();
    assert_eq!(wasm, std::fs::read(rekon_test_artifacts::APP).unwrap());

    // Run the container's arguments as the kubelet would: the pod's
    // namespace in $(POD_NAMESPACE), the cache on a scratch volume.
    let port = free_port();
    let webhook_port = free_port();
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1) // `run`
        .map(|a| {
            a.as_str()
                .unwrap()
                .replace("$(POD_NAMESPACE)", "rekon-system")
                .replace("/cache", env.dir.path().join("cache").to_str().unwrap())
                .replace("0.0.0.0:8080", &format!("127.0.0.1:{port}"))
                .replace("0.0.0.0:9443", &format!("127.0.0.1:{webhook_port}"))
        })
        .chain(["--lease-namespace".to_string(), "rekon-system".to_string()])
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.run(&[], &args);
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    env.apply(app("deployed", 1));
    reconciled(&env, "deployed").await;
    env.wait("/readyz", || {
        http_status(port, "/readyz").filter(|r| r.0 == 200)
    })
    .await;
    // The webhooks: reached through the Service, with the CA kept in
    // the Secret the host created.
    let service = env
        .get("", "v1", "Service", Some("rekon-system"), "rekon-webhooks")
        .expect("the webhook Service");
    assert_eq!(service["spec"]["ports"][0]["port"], 443);
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "webhooks");
    let configuration = env
        .webhook_configuration("ValidatingWebhookConfiguration", "app")
        .await;
    assert_eq!(
        configuration["webhooks"][0]["clientConfig"]["service"],
        serde_json::json!({"namespace": "rekon-system", "name": "rekon-webhooks",
                           "path": "/validate/app/validate-apps", "port": 443})
    );
    assert!(
        env.get(
            "",
            "v1",
            "Secret",
            Some("rekon-system"),
            "rekon-webhook-tls"
        )
        .is_some()
    );
    // And the uninstall webhook, for the deletion of what rekon runs as.
    let uninstall = env
        .wait("the uninstall webhook", || {
            env.get(
                "admissionregistration.k8s.io",
                "v1",
                "ValidatingWebhookConfiguration",
                None,
                "rekon.uninstall",
            )
        })
        .await;
    let expression = uninstall["webhooks"][0]["matchConditions"][0]["expression"]
        .as_str()
        .unwrap();
    for named in [
        "request.name == 'rekon-system'",
        "request.name == 'rekon' && request.namespace == 'rekon-system'",
        "request.name == 'rekon-host'",
    ] {
        assert!(expression.contains(named), "{expression}");
    }
}

#[test]
fn the_readme_scale_out_overlay_builds_with_kubectl() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        std::path::Path::new(&path("deploy")),
        &dir.path().join("deploy"),
    );
    deploy_modules(&dir.path().join("deploy"));
    let readme = std::fs::read_to_string(path("README.md")).unwrap();
    let overlay = readme
        .split("```yaml\n")
        .find(|block| block.starts_with("# rekon with its modules spread"))
        .and_then(|block| block.split("```").next())
        .expect("the README's scale-out overlay");
    let overlay_dir = dir.path().join("scale-out");
    std::fs::create_dir(&overlay_dir).unwrap();
    std::fs::write(overlay_dir.join("kustomization.yaml"), overlay).unwrap();
    let built = std::process::Command::new(crate::support::kubectl_binary())
        .arg("kustomize")
        .arg(&overlay_dir)
        .output()
        .expect("running kubectl");
    let text = String::from_utf8_lossy(&built.stdout);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let deployment: serde_json::Value = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .find(|d: &serde_json::Value| d["kind"] == "Deployment")
        .expect("the Deployment");
    assert_eq!(deployment["spec"]["replicas"], 3);
    let args = deployment["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    assert!(
        args.contains("--scale-out") && !args.contains("--leader-elect"),
        "{args}"
    );
}
