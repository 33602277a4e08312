//! Taking back what the replicas published: deleting the object rekon
//! runs as (its `--uninstall-trigger`) withdraws it all, and `rekon
//! uninstall` cleans up after a rekon that is gone.

use std::process::Command;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::{ADMISSION, all_published, configuration, conversion, module_dir, replica};
use crate::support::{self, Env, post_tls as post, stderr, stdout};

fn delete_review(
    uid: &str,
    resource: &str,
    name: &str,
    namespace: Option<&str>,
    dry_run: bool,
) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": uid, "operation": "DELETE", "dryRun": dry_run,
            "kind": {"group": "", "version": "v1", "kind": "ServiceAccount"},
            "resource": {"group": "", "version": "v1", "resource": resource},
            "name": name, "namespace": namespace,
            "userInfo": {"username": "admin"},
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_what_rekon_runs_as_takes_back_what_it_published() {
    let mut env = Env::new().await;
    env.use_shared_cache();
    env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
    env.apply(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "rekon", "namespace": "default"}}));
    env.apply(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rekon-system"}}),
    );
    let dir = module_dir(&env, "a");
    let (host, port) = replica(
        &mut env,
        &dir,
        "a",
        &[
            "--uninstall-trigger",
            "serviceaccount/rekon",
            "--uninstall-trigger",
            "namespace/rekon-system",
            // One that never existed: no sign of an uninstall.
            "--uninstall-trigger",
            "clusterrolebinding/missing",
        ],
    );
    env.wait_long("the configurations", || all_published(&env).then_some(()))
        .await;
    let uninstall = env
        .wait("the uninstall webhook", || {
            env.get(
                ADMISSION,
                "v1",
                "ValidatingWebhookConfiguration",
                None,
                "rekon.uninstall",
            )
        })
        .await;
    let webhook = &uninstall["webhooks"][0];
    assert_eq!(webhook["failurePolicy"], "Ignore");
    assert_eq!(webhook["clientConfig"]["service"]["path"], "/uninstall");
    let ca = base64::engine::general_purpose::STANDARD
        .decode(webhook["clientConfig"]["caBundle"].as_str().unwrap())
        .unwrap();

    // A dry run, or another object, changes nothing.
    for review in [
        delete_review("u-1", "serviceaccounts", "rekon", Some("default"), true),
        delete_review("u-2", "serviceaccounts", "other", Some("default"), false),
        delete_review("u-3", "serviceaccounts", "rekon", Some("team-a"), false),
    ] {
        let (code, answer) = post(port, &ca, "/uninstall", &review).unwrap();
        assert_eq!(code, 200);
        assert_eq!(answer["response"]["allowed"], true);
        assert!(answer["response"]["warnings"].is_null(), "{answer}");
    }
    assert!(all_published(&env));

    // The real deletion of the ServiceAccount: allowed, after rekon took
    // back everything it published.
    let (_, answer) = post(
        port,
        &ca,
        "/uninstall",
        &delete_review("u-4", "serviceaccounts", "rekon", Some("default"), false),
    )
    .unwrap();
    assert_eq!(answer["response"]["uid"], "u-4");
    assert_eq!(answer["response"]["allowed"], true);
    assert_eq!(
        answer["response"]["warnings"][0],
        "rekon is uninstalled: removed 3 webhook configuration(s), turned off the conversion of 1 CRD(s), deleted 2 Lease(s)",
        "{answer}"
    );
    assert!(configuration(&env, "ValidatingWebhookConfiguration").is_none());
    assert!(configuration(&env, "MutatingWebhookConfiguration").is_none());
    assert!(
        env.get(
            ADMISSION,
            "v1",
            "ValidatingWebhookConfiguration",
            None,
            "rekon.uninstall"
        )
        .is_none()
    );
    assert_eq!(conversion(&env), json!({"strategy": "None"}));
    // And it publishes nothing again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        configuration(&env, "ValidatingWebhookConfiguration").is_none(),
        "{}",
        env.log_of(host)
    );
    assert_eq!(conversion(&env), json!({"strategy": "None"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rekon_uninstall_cleans_up_after_a_rekon_that_is_gone() {
    let mut env = Env::new().await;
    env.use_shared_cache();
    env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
    let dir = module_dir(&env, "a");
    let (host, _) = replica(&mut env, &dir, "a", &[]);
    env.wait_long("the configurations", || all_published(&env).then_some(()))
        .await;
    // It dies without a word.
    env.signal(host, "KILL");
    let _ = env.hosts[host].wait();
    assert!(all_published(&env));
    let uninstall = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_rekon"))
            .arg("uninstall")
            .args(args)
            .arg("--kubeconfig")
            .arg(&env.kubeconfig)
            .output()
            .unwrap()
    };
    let output = uninstall(&["--namespace", "default"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stdout(&output);
    for line in [
        "deleted: MutatingWebhookConfiguration/rekon-app",
        "deleted: ValidatingWebhookConfiguration/rekon-app",
        "conversion set to None: apps.demo.rekon.dev",
        "deleted Lease: rekon-leader",
    ] {
        assert!(said.lines().any(|l| l == line), "{line} in:\n{said}");
    }
    assert!(configuration(&env, "ValidatingWebhookConfiguration").is_none());
    assert_eq!(conversion(&env), json!({"strategy": "None"}));
    let again = uninstall(&["--namespace", "default"]);
    assert_eq!(
        stdout(&again).trim(),
        "nothing of rekon's left for service default/rekon-webhooks:443"
    );
}
