//! Running rekon for real: leader election between replicas, metrics and
//! health endpoints — the real `rekon run` binary against the in-memory API
//! server.

// Tests may unwrap (tokio tests too): a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod support;

use std::io::{Read as _, Write as _};
use std::time::{Duration, Instant};

use support::{Env, LEASE, app, free_port, path};

fn replica(env: &mut Env, identity: &str) -> usize {
    let mut args = LEASE.to_vec();
    args.extend(["--identity", identity]);
    env.run(&[rekon_test_artifacts::APP], &args)
}

fn holder(env: &Env) -> Option<String> {
    env.lease_holder("rekon-leader")
}

/// Writes to the cluster by each replica (Lease renewals aside), in the
/// order the API server received them: (identity, method, path).
fn writes(env: &Env) -> Vec<(String, String, String)> {
    env.server
        .requests()
        .into_iter()
        .filter(|r| matches!(r.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE"))
        .filter(|r| r.resource != "leases")
        .filter_map(|r| Some((identity(&r.user_agent)?, r.method, r.path)))
        .collect()
}

/// The replica identity in a `rekon/<version> (<identity>)` User-Agent.
fn identity(user_agent: &str) -> Option<String> {
    Some(
        user_agent
            .split('(')
            .nth(1)?
            .trim_end_matches(')')
            .to_string(),
    )
}

async fn reconciled(env: &Env, name: &str) {
    env.wait(&format!("App {name} reconciled"), || {
        env.get("demo.rekon.dev", "v1", "App", Some("default"), name)
            .filter(|a| a["status"]["observedGeneration"] == 1)
    })
    .await;
}

mod leader {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn only_the_leader_writes_and_a_killed_leader_is_replaced() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        let a = replica(&mut env, "replica-a");
        let b = replica(&mut env, "replica-b");
        let first = env.wait("a leader", || holder(&env)).await;
        env.apply(app("one", 1));
        reconciled(&env, "one").await;
        let writers: Vec<String> = writes(&env).into_iter().map(|w| w.0).collect();
        assert!(!writers.is_empty(), "the App was written by someone");
        assert!(
            writers.iter().all(|w| *w == first),
            "only the leader {first} writes: {writers:?}"
        );

        // SIGKILL: no release; the standby takes over once the Lease expires.
        let (leader, standby) = if first == "replica-a" { (a, b) } else { (b, a) };
        env.signal(leader, "KILL");
        let killed = Instant::now();
        let second = env
            .wait("a new leader", || holder(&env).filter(|h| *h != first))
            .await;
        let took = killed.elapsed();
        assert!(
            took < Duration::from_millis(2000 + 200 + 1500),
            "took {took:?} to fail over: more than the lease duration plus a retry"
        );
        env.apply(app("two", 1));
        reconciled(&env, "two").await;
        assert_eq!(
            second,
            if standby == a {
                "replica-a"
            } else {
                "replica-b"
            }
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_frozen_leader_writes_nothing_after_the_new_leader_starts() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        let a = replica(&mut env, "replica-a");
        let b = replica(&mut env, "replica-b");
        let first = env.wait("a leader", || holder(&env)).await;
        let (leader, _) = if first == "replica-a" { (a, b) } else { (b, a) };
        env.apply(app("before", 1));
        reconciled(&env, "before").await;

        // Freeze the leader past its lease, with work pending for it.
        env.signal(leader, "STOP");
        env.apply(app("during", 1));
        let second = env
            .wait("a new leader", || holder(&env).filter(|h| *h != first))
            .await;
        reconciled(&env, "during").await;
        // Thaw it: it must notice it lost the Lease before writing anything.
        env.signal(leader, "CONT");
        env.apply(app("after", 1));
        reconciled(&env, "after").await;
        tokio::time::sleep(Duration::from_millis(800)).await;

        let log = writes(&env);
        let new_first = log
            .iter()
            .position(|w| w.0 == second)
            .expect("the new leader wrote");
        let late: Vec<_> = log[new_first..].iter().filter(|w| w.0 == first).collect();
        assert!(
            late.is_empty(),
            "the old leader wrote after the new one: {late:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigterm_hands_the_lease_over_at_once() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        // A long lease: a handover faster than it proves the release.
        let mut args = vec![
            "--leader-elect",
            "--lease-duration",
            "20s",
            "--renew-deadline",
            "15s",
            "--retry-period",
            "200ms",
        ];
        args.extend(["--identity", "replica-a"]);
        let a = env.run(&[rekon_test_artifacts::APP], &args);
        env.wait("replica-a leads", || {
            holder(&env).filter(|h| h == "replica-a")
        })
        .await;
        args.pop();
        args.push("replica-b");
        env.run(&[rekon_test_artifacts::APP], &args);
        env.signal(a, "TERM");
        let sent = Instant::now();
        env.wait("replica-b leads", || {
            holder(&env).filter(|h| h == "replica-b")
        })
        .await;
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "the standby waited for the lease to expire instead of taking the released one\n{}",
            env.log_of(a)
        );
        env.apply(app("handed-over", 1));
        reconciled(&env, "handed-over").await;
    }
}

/// GET on a local port: (status, body).
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response.split_once("\r\n\r\n")?.1.to_string();
    Some((status, body))
}

mod telemetry {
    use super::*;

    /// The metric names the README lists (its Metrics table).
    fn documented_metrics() -> Vec<String> {
        let readme = std::fs::read_to_string(path("README.md")).unwrap();
        let section = readme
            .split("### Metrics")
            .nth(1)
            .expect("the README has a Metrics section");
        let section = section.split("\n#").next().unwrap();
        let mut names: Vec<String> = section
            .split('`')
            .filter(|t| t.starts_with("rekon_"))
            .map(str::to_string)
            .collect();
        names.dedup();
        names
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn metrics_and_probes_behave_as_documented() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        let garbage = env.dir.path().join("garbage.wasm");
        std::fs::write(&garbage, b"not a module").unwrap();
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let webhook_port = free_port();
        let webhook_addr = format!("127.0.0.1:{webhook_port}");
        let webhook_url = format!("https://{webhook_addr}");
        env.run(
            &[
                rekon_test_artifacts::APP,
                rekon_test_artifacts::MISBEHAVE,
                garbage.to_str().unwrap(),
            ],
            &[
                "--metrics-addr",
                &addr,
                "--webhook-addr",
                &webhook_addr,
                "--webhook-url",
                &webhook_url,
            ],
        );
        env.wait("/healthz", || {
            http_get(port, "/healthz").filter(|r| r.0 == 200)
        })
        .await;
        env.wait("/readyz", || {
            http_get(port, "/readyz").filter(|r| r.0 == 200)
        })
        .await;
        env.apply(app("web", 1));
        env.apply(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": { "name": "trap", "namespace": "default" },
        }));
        reconciled(&env, "web").await;
        // One admission review, as the API server would send it.
        let configuration = env
            .webhook_configuration("ValidatingWebhookConfiguration", "app")
            .await;
        let ca = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            configuration["webhooks"][0]["clientConfig"]["caBundle"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        let review = serde_json::json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "operation": "CREATE",
                "kind": {"group": "demo.rekon.dev", "version": "v1", "kind": "App"},
                "resource": {"group": "demo.rekon.dev", "version": "v1", "resource": "apps"},
                "name": "x", "namespace": "default", "userInfo": {"username": "u"},
                "object": app("x", 1)},
        });
        support::post_tls(webhook_port, &ca, "/validate/app/validate-apps", &review).unwrap();
        let metrics = env
            .wait("a guest failure counted", || {
                http_get(port, "/metrics").map(|r| r.1).filter(|m| {
                    m.contains("rekon_guest_failures_total{") && m.contains("rekon_events_total{")
                })
            })
            .await;
        let documented = documented_metrics();
        assert!(documented.len() >= 10, "{documented:?}");
        for name in &documented {
            // Histograms are served as name_bucket, name_sum and name_count.
            let served = metrics.lines().any(|l| {
                l.strip_prefix(name.as_str()).is_some_and(|rest| {
                    rest.starts_with('{') || rest.starts_with(' ') || rest.starts_with("_bucket{")
                })
            });
            assert!(served, "{name} is documented but not served:\n{metrics}");
        }
        let line = |prefix: &str| -> Option<f64> {
            metrics
                .lines()
                .find(|l| l.starts_with(prefix))?
                .rsplit(' ')
                .next()?
                .parse()
                .ok()
        };
        assert!(
            line("rekon_reconciles_total{module=\"app\",result=\"done\"}").unwrap_or(0.0) >= 1.0,
            "{metrics}"
        );
        assert_eq!(
            line("rekon_module_load_failures_total{reason=\"not_wasm\"}"),
            Some(1.0)
        );
        assert_eq!(line("rekon_leader "), Some(1.0));
        assert_eq!(
            line("rekon_module_leader{module=\"app\"}"),
            Some(1.0),
            "{metrics}"
        );
        let info: Vec<&str> = metrics
            .lines()
            .filter(|l| l.starts_with("rekon_module_info{"))
            .collect();
        assert_eq!(info.len(), 2, "{info:?}");
        assert_eq!(http_get(port, "/nothing").map(|r| r.0), Some(404));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_carry_the_reconcile_span_without_duplicate_keys() {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    env.run(&[rekon_test_artifacts::APP], &["--log-format", "json"]);
    env.apply(app("logged", 1));
    reconciled(&env, "logged").await;
    let log = env
        .wait("a reconcile logged", || {
            let log = env.log();
            log.contains("\"reconciled\"").then_some(log)
        })
        .await;
    let mut reconciles = 0;
    for line in log.lines() {
        let record: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if record["span"]["name"] != "reconcile" {
            continue;
        }
        reconciles += 1;
        assert_eq!(record["span"]["module"], "app", "{line}");
        assert_eq!(record["span"]["object"], "logged", "{line}");
        assert_eq!(record["span"]["namespace"], "default", "{line}");
        // Every span object (the current one and the list) has one `name`.
        for span in line.split("{").skip(1) {
            let span = span.split('}').next().unwrap_or_default();
            assert!(
                span.matches("\"name\":").count() <= 1,
                "a duplicate key in {line}"
            );
        }
    }
    assert!(reconciles > 0, "no reconcile span in the log:\n{log}");
}

/// CPU time (user + system) a process has used so far.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process runs");
    // Fields after the command name (which is in parentheses).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let output = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .expect("getconf");
    let per_second: u64 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or(100);
    Duration::from_secs_f64(ticks as f64 / per_second as f64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_host_uses_almost_no_cpu() {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    let host = env.run(&[rekon_test_artifacts::APP], &[]);
    env.apply(app("idle", 1));
    reconciled(&env, "idle").await;
    // Started on a cold cache, the module served on baseline code; its
    // optimised build compiles behind it. Idle means that is done too.
    env.wait_long("the optimised build", || {
        env.log()
            .contains("module runs optimised code now")
            .then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid = env.hosts[host].id();
    let before = cpu_time(pid);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = cpu_time(pid) - before;
    // A controller that polls instead of waiting burns a whole core.
    assert!(
        used < Duration::from_millis(400),
        "the idle host used {used:?} of CPU in 2 s"
    );
    // The epoch ticker only ticks while a guest runs: idle, it sleeps.
    let before = epoch_wakeups(pid);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle = epoch_wakeups(pid) - before;
    assert!(idle <= 2, "the idle epoch thread woke {idle} times in 1 s");
    // And it ticks again when one does: a guest that loops is stopped.
    env.apply(serde_json::json!({
        "apiVersion": "demo.rekon.dev/v1", "kind": "App",
        "metadata": {"name": "again", "namespace": "default"},
        "spec": {"image": "nginx", "replicas": 1},
    }));
    reconciled(&env, "again").await;
    assert!(
        epoch_wakeups(pid) > before + idle,
        "the ticker ran for the reconcile"
    );
}

/// Context switches of the process's `rekon-epoch` thread so far.
fn epoch_wakeups(pid: u32) -> u64 {
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process runs") {
        let dir = task.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() == "rekon-epoch" {
            let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
            return status
                .lines()
                .filter(|l| l.contains("ctxt_switches"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum();
        }
    }
    panic!("no rekon-epoch thread in process {pid}");
}

mod deploy {
    use super::*;

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
        let applied = std::process::Command::new("kubectl")
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
            http_get(port, "/readyz").filter(|r| r.0 == 200)
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
        let built = std::process::Command::new("kubectl")
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
        let deployment: serde_json::Value = serde_yaml::Deserializer::from_str(&text)
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
}

mod scale_out {
    use super::*;
    use serde_json::{Value, json};

    /// Nine modules: `misbehav1` to `misbehav9`.
    fn modules() -> Vec<String> {
        (1..=9).map(|i| format!("misbehav{i}")).collect()
    }

    fn replica(env: &mut Env, files: &[String], identity: &str) -> usize {
        // The short timings of the election tests.
        let mut args = vec!["--scale-out"];
        args.extend(LEASE.iter().filter(|a| **a != "--leader-elect"));
        args.extend(["--identity", identity]);
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        env.run(&files, &args)
    }

    /// Module -> the replica holding its Lease.
    fn holders(env: &Env) -> std::collections::BTreeMap<String, String> {
        let leases = env.resource("coordination.k8s.io", "v1", "Lease");
        env.store()
            .list(&leases, &Default::default())
            .map(|l| l.items)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|lease| {
                let module = lease["metadata"]["name"]
                    .as_str()?
                    .strip_prefix("rekon-module-")?
                    .to_string();
                let holder = lease["spec"]["holderIdentity"].as_str()?.to_string();
                Some((module, holder))
            })
            .collect()
    }

    /// How many modules each replica holds, once all nine are held.
    fn shares(env: &Env) -> Option<std::collections::BTreeMap<String, usize>> {
        let holders = holders(env);
        if holders.len() != 9 {
            return None;
        }
        let mut shares = std::collections::BTreeMap::new();
        for holder in holders.values() {
            *shares.entry(holder.clone()).or_insert(0) += 1;
        }
        Some(shares)
    }

    /// A ConfigMap every module stamps.
    fn probe(env: &Env, name: &str) {
        let annotations: serde_json::Map<String, Value> = modules()
            .into_iter()
            .map(|m| (format!("{m}.rekon.dev/mode"), json!("stamp")))
            .collect();
        env.apply(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": { "name": name, "namespace": "default", "annotations": annotations },
        }));
    }

    /// The modules that have stamped ConfigMap `name`.
    fn stamped(env: &Env, name: &str) -> Vec<String> {
        let Some(cm) = env.get("", "v1", "ConfigMap", Some("default"), name) else {
            return Vec::new();
        };
        modules()
            .into_iter()
            .filter(|m| cm["data"][m] == format!("{m}-build-A").as_str())
            .collect()
    }

    async fn all_stamped(env: &Env, name: &str) {
        env.wait(&format!("{name} stamped by every module"), || {
            (stamped(env, name).len() == 9).then_some(())
        })
        .await;
    }

    /// The replicas whose requests wrote for `module` (by field manager).
    fn writers_of(env: &Env, module: &str) -> Vec<String> {
        let manager = format!("fieldManager=rekon-{module}");
        env.server
            .requests()
            .into_iter()
            .filter(|r| r.method == "PATCH" && r.query.contains(&manager))
            .filter_map(|r| identity(&r.user_agent))
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn modules_spread_over_replicas_and_move_when_one_dies() {
        let mut env = Env::new().await;
        let dir = env.dir.path().join("modules");
        std::fs::create_dir(&dir).unwrap();
        let files: Vec<String> = modules()
            .iter()
            .map(|m| {
                let file = dir.join(format!("{m}.wasm"));
                std::fs::write(&file, support::misbehave_named(m)).unwrap();
                file.display().to_string()
            })
            .collect();

        // One replica takes every module; two more join and get their share.
        let a = replica(&mut env, &files, "replica-a");
        env.wait("replica-a holding all nine modules", || {
            shares(&env).filter(|s| s.get("replica-a") == Some(&9))
        })
        .await;
        replica(&mut env, &files, "replica-b");
        let c = replica(&mut env, &files, "replica-c");
        env.wait("three modules per replica", || {
            shares(&env).filter(|s| s.len() == 3 && s.values().all(|n| *n == 3))
        })
        .await;
        probe(&env, "probe-balanced");
        all_stamped(&env, "probe-balanced").await;
        let balanced = holders(&env);
        for (module, holder) in &balanced {
            let writers = writers_of(&env, module);
            assert!(
                !writers.is_empty() && writers.iter().all(|w| w == holder),
                "{module} is held by {holder} but written by {writers:?}"
            );
        }

        // SIGKILL one: its Leases expire and the other two take them, while
        // the modules they hold keep reconciling.
        let dead: Vec<String> = balanced
            .iter()
            .filter(|(_, h)| *h == "replica-c")
            .map(|(m, _)| m.clone())
            .collect();
        env.signal(c, "KILL");
        let killed = Instant::now();
        probe(&env, "probe-failover");
        let survivors_done = env
            .wait("the surviving replicas' modules stamping", || {
                let done = stamped(&env, "probe-failover");
                (done.len() >= 6).then_some(done)
            })
            .await;
        // The dead replica's Leases cannot have expired yet: only the live
        // replicas' modules have stamped.
        if holders(&env).values().filter(|h| *h == "replica-c").count() == 3 {
            assert!(
                survivors_done.iter().all(|m| !dead.contains(m)),
                "a module of the dead replica was reconciled before being taken over: {survivors_done:?}"
            );
        }
        env.wait("the dead replica's modules taken over", || {
            shares(&env).filter(|s| !s.contains_key("replica-c") && s.values().all(|n| *n <= 5))
        })
        .await;
        let took = killed.elapsed();
        assert!(
            took < Duration::from_millis(2000 + 200 + 1500),
            "took {took:?} to move the modules: more than the lease duration plus a retry"
        );
        all_stamped(&env, "probe-failover").await;
        probe(&env, "probe-after");
        all_stamped(&env, "probe-after").await;

        // SIGTERM hands the Leases over at once: the last replica takes all.
        env.signal(a, "TERM");
        let sent = Instant::now();
        env.wait("replica-b holding all nine modules", || {
            shares(&env).filter(|s| s.get("replica-b") == Some(&9))
        })
        .await;
        assert!(
            sent.elapsed() < Duration::from_secs(2),
            "replica-b waited for the Leases to expire instead of taking the released ones\n{}",
            env.log_of(a)
        );
        probe(&env, "probe-last");
        all_stamped(&env, "probe-last").await;
    }
}
