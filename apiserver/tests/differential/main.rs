//! The differential suite: every case of the corpus (`cases/*.yaml`) sent
//! to rekon's in-memory API server and to a real kube-apiserver + etcd
//! started from `KUBEBUILDER_ASSETS` (envtest's convention), and the
//! answers compared: accepted or refused, status code, reason, each
//! cause's field, reason and message, the aggregated message, the
//! warnings, and the object as read back.
//!
//! Without `KUBEBUILDER_ASSETS` the embedded answers are compared with the
//! real server's answers recorded in `recorded/` (`REKON_RECORD=1` with the
//! binaries writes them again). The suite prints `N/M cases agree` and each
//! disagreement; it fails when a case disagrees that `known.txt` does not
//! list (a regression), and says which listed cases agree now.
//! `REKON_DIFFERENTIAL_CORPUS=DIR` runs another corpus laid out the same way;
//! `REKON_DIFFERENTIAL_ONLY=builtin-service,crd` only the files whose names
//! start so. Agreement is printed in all and by area (`crd-*`, `builtin-*`).

// Tests may unwrap: a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod corpus;
mod summary;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use corpus::Case;
use rekon_envtest::http::Client;

/// The corpus: this folder, or the one `REKON_DIFFERENTIAL_CORPUS` names
/// (with the same `cases/`, `crds/`, `recorded/` and `known.txt`), to run
/// a corpus kept outside the repository the same way.
fn here() -> PathBuf {
    match std::env::var_os("REKON_DIFFERENTIAL_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/differential"),
    }
}

/// The two servers, or the embedded one and the recordings.
struct Servers {
    embedded: Client,
    real: Option<Client>,
    _real: Option<rekon_envtest::RealCluster>,
    _runtime: tokio::runtime::Runtime,
    _server: rekon_apiserver::RunningServer,
}

fn start() -> Servers {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Both servers with the alpha gate of sharded lists and watches on
    // (the `seq-sharding` cases); nothing else changes with it.
    let builder = rekon_apiserver::ApiServer::builder()
        .feature_gate("ShardedListAndWatch", true)
        .expect("a known gate");
    let server = runtime
        .block_on(builder.start())
        .expect("the embedded server starts");
    let embedded = Client::without_retries(&server.url(), None, None);
    let (real, cluster) = match rekon_envtest::assets() {
        Ok(assets) => {
            let cluster = rekon_envtest::RealCluster::start(
                &assets,
                &rekon_envtest::Options {
                    // Answers are the API server's own: no controller
                    // writes the objects of a case between two of its
                    // steps (the embedded server runs none). Those that
                    // keep namespaces as a cluster keeps them run: each
                    // namespace's service account and root CA, namespace
                    // deletion and garbage collection.
                    controllers: [
                        "serviceaccount-controller",
                        "serviceaccount-token-controller",
                        "root-ca-certificate-publisher-controller",
                        "namespace-controller",
                        "garbage-collector-controller",
                    ]
                    .map(String::from)
                    .to_vec(),
                    apiserver_args: vec!["--feature-gates=ShardedListAndWatch=true".into()],
                    ..Default::default()
                },
            )
            .expect("the real cluster starts");
            let client = Client::without_retries(
                &cluster.url(),
                Some(cluster.token()),
                Some(cluster.ca_pem()),
            );
            (Some(client), Some(cluster))
        }
        Err(why) => {
            eprintln!("no real API server ({why}): comparing with the recorded answers");
            (None, None)
        }
    };
    Servers {
        embedded,
        real,
        _real: cluster,
        _runtime: runtime,
        _server: server,
    }
}

/// Creates the fixtures (the CRDs in `crds/`) on a server and waits until
/// they are served.
fn install_fixtures(client: &Client) {
    let mut crds = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(here().join("crds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let crd: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let answer = client
            .request(
                "POST",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                Some("application/json"),
                Some(crd.to_string().as_bytes()),
            )
            .unwrap();
        assert!(
            answer.status == 201 || answer.status == 409,
            "{}: {} {}",
            file.display(),
            answer.status,
            String::from_utf8_lossy(&answer.body)
        );
        crds.push(crd);
    }
    for crd in crds {
        let group = crd["spec"]["group"].as_str().unwrap();
        let plural = crd["spec"]["names"]["plural"].as_str().unwrap();
        for version in crd["spec"]["versions"].as_array().unwrap() {
            let path = format!("/apis/{group}/{}", version["name"].as_str().unwrap());
            let started = std::time::Instant::now();
            loop {
                let answer = client.request("GET", &path, None, None).unwrap();
                let served = answer.json()["resources"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|r| r["name"] == plural));
                if served {
                    break;
                }
                assert!(started.elapsed().as_secs() < 30, "{path} is not served");
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }
}

/// Runs one case on one server, in its own namespace; the summary of each
/// step's answer. On a real server (`real`), the case starts once the
/// namespace's `default` ServiceAccount and `kube-root-ca.crt` ConfigMap
/// exist (kube-controller-manager makes them): before, a Pod is refused for
/// the lack of the first, and lists miss the second.
fn run(client: &Client, case: &Case, namespace: &str, real: bool) -> Vec<Value> {
    let created = client
        .request(
            "POST",
            "/api/v1/namespaces",
            Some("application/json"),
            Some(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
                    .to_string()
                    .as_bytes(),
            ),
        )
        .unwrap();
    assert_eq!(
        created.status,
        201,
        "namespace {namespace}: {}",
        String::from_utf8_lossy(&created.body)
    );
    if real {
        // What kube-controller-manager puts in the namespace, which the
        // embedded server makes with it.
        let started = std::time::Instant::now();
        for made in [
            format!("/api/v1/namespaces/{namespace}/serviceaccounts/default"),
            format!("/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt"),
        ] {
            while client.request("GET", &made, None, None).unwrap().status == 404
                && started.elapsed() < std::time::Duration::from_secs(30)
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
    let mut summaries = Vec::new();
    let mut versions = summary::Versions::default();
    for step in &case.steps {
        let request = step.request(client, namespace);
        let accept: Vec<(&str, &str)> = request
            .accept
            .as_deref()
            .map(|a| ("accept", a))
            .into_iter()
            .collect();
        let send = || {
            client
                .request_with(
                    &request.method,
                    &request.path,
                    request.content_type.as_deref(),
                    request.body.as_deref(),
                    &accept,
                )
                .unwrap()
        };
        let mut answer = send();
        let started = std::time::Instant::now();
        while step.waits()
            && !step.waited(&answer, namespace)
            && started.elapsed() < std::time::Duration::from_secs(30)
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
            answer = send();
        }
        let versions = case.whole.then_some(&mut versions);
        summaries.push(summary::of(&answer, namespace, step, versions));
    }
    summaries
}

#[test]
fn the_embedded_server_answers_as_a_real_one() {
    let servers = start();
    install_fixtures(&servers.embedded);
    if let Some(real) = &servers.real {
        install_fixtures(real);
    }
    let only: Vec<String> = std::env::var("REKON_DIFFERENTIAL_ONLY")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let files: Vec<_> = corpus::load(&here().join("cases"))
        .into_iter()
        .filter(|(file, _)| only.is_empty() || only.iter().any(|o| file.starts_with(o.as_str())))
        .collect();
    let record = std::env::var("REKON_RECORD").is_ok_and(|v| v == "1");
    let known = corpus::known(&here().join("known.txt"));
    let mut total = 0;
    let mut agree = 0;
    // By area: the part of a file's name before its first `-` (`crd`, `builtin`).
    let mut areas: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut regressions = Vec::new();
    let mut fixed = Vec::new();
    let mut disagreements = Vec::new();
    for (file, cases) in &files {
        let recorded_path = here().join("recorded").join(format!("{file}.json"));
        let mut recorded: BTreeMap<String, Value> = std::fs::read_to_string(&recorded_path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let area = file.split('-').next().unwrap_or(file).to_string();
        for (index, case) in cases.iter().enumerate() {
            total += 1;
            areas.entry(area.clone()).or_default().0 += 1;
            let namespace = format!("d-{}-{index}", file.replace('_', "-"));
            let embedded = run(&servers.embedded, case, &namespace, false);
            let real = match &servers.real {
                Some(real) => {
                    let answers = Value::Array(run(real, case, &namespace, true));
                    recorded.insert(case.name.clone(), answers.clone());
                    answers
                }
                None => match recorded.get(&case.name) {
                    Some(answers) => answers.clone(),
                    None => panic!(
                        "{file}: no recorded answer for {:?}: run with KUBEBUILDER_ASSETS and REKON_RECORD=1",
                        case.name
                    ),
                },
            };
            let key = format!("{file}: {}", case.name);
            if Value::Array(embedded.clone()) == real {
                agree += 1;
                areas.entry(area.clone()).or_default().1 += 1;
                if known.contains(&key) {
                    fixed.push(key);
                }
            } else {
                if let Ok(dir) = std::env::var("REKON_DIFFERENTIAL_DUMP") {
                    // Both answers whole, for a closer look.
                    let base = std::path::Path::new(&dir).join(&namespace);
                    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
                    let _ = std::fs::create_dir_all(&dir);
                    let _ = std::fs::write(base.with_extension("real.json"), pretty(&real));
                    let _ = std::fs::write(
                        base.with_extension("embedded.json"),
                        pretty(&Value::Array(embedded.clone())),
                    );
                }
                let diff = summary::diff(&real, &Value::Array(embedded));
                disagreements.push(format!("{key}\n{diff}"));
                if !known.contains(&key) {
                    regressions.push(key);
                }
            }
        }
        if record && servers.real.is_some() {
            std::fs::create_dir_all(recorded_path.parent().unwrap()).unwrap();
            recorded.retain(|name, _| cases.iter().any(|c| &c.name == name));
            std::fs::write(
                &recorded_path,
                serde_json::to_string_pretty(&recorded).unwrap() + "\n",
            )
            .unwrap();
        }
    }
    let against = if servers.real.is_some() {
        "a real kube-apiserver"
    } else {
        "the recorded answers"
    };
    eprintln!("{agree}/{total} cases agree with {against}");
    for (area, (cases, agreeing)) in &areas {
        eprintln!("  {area}: {agreeing}/{cases}");
    }
    for disagreement in &disagreements {
        eprintln!("--- DISAGREES {disagreement}");
    }
    if !fixed.is_empty() {
        eprintln!(
            "agree now, remove from known.txt:\n  {}",
            fixed.join("\n  ")
        );
    }
    assert!(
        regressions.is_empty(),
        "{} case(s) disagree and are not in known.txt:\n  {}",
        regressions.len(),
        regressions.join("\n  ")
    );
}
