//! The corpus: YAML files of cases, each a list of steps sent in order in
//! a namespace of the case's own.
//!
//! ```yaml
//! cases:
//! - name: an enum value outside the list is refused
//!   steps:
//!   - create: {apiVersion: fid.example.org/v1, kind: Widget, metadata: {name: w}, spec: {size: huge}}
//!     query: fieldValidation=Strict        # optional, on any step
//!   - get: fid.example.org/v1/Widget/w     # apiVersion/Kind/name
//!   - replace: {...}                        # PUT, with the resourceVersion read just before
//!   - status: {...}                         # PUT .../status, the same way
//!   - patch: fid.example.org/v1/Widget/w
//!     type: merge                           # merge, json, strategic or apply
//!     body: {spec: {size: small}}
//!   - delete: fid.example.org/v1/Widget/w
//!   - request: {method: GET, path: "/apis/fid.example.org/v1/namespaces/{ns}/widgets"}
//!   - request: {method: GET, path: "...", accept: "application/json;as=Table;v=v1;g=meta.k8s.io"}
//!   - wait: /apis/a.example.org/v2          # GET again until a 200 holding `until`
//!     until: WdNFkD/x0zU=                   # (what a server applies in the background)
//!   - wait: /apis/a.example.org/v1/namespaces/{ns}/things/t
//!     code: 404                             # GET again until the answer has this code
//! ```
//!
//! Objects are namespaced into the case's namespace (`{ns}` in paths,
//! bodies and the names of references, for cluster-scoped objects named
//! after it).
//! A file with `whole: true` compares the objects it gets back whole:
//! `managedFields` (times masked) and whether each object's
//! resourceVersion moved since the case last saw it.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use rekon_envtest::http::{Client, Response};

/// One case.
#[derive(Debug, Deserialize)]
pub struct Case {
    pub name: String,
    pub steps: Vec<Step>,
    /// Its file's `whole: true`: objects are compared whole — managedFields
    /// (their times masked), and whether the resourceVersion moved.
    #[serde(skip)]
    pub whole: bool,
}

#[derive(Debug, Deserialize)]
struct File {
    /// Compare objects whole (see [`Case::whole`]).
    #[serde(default)]
    whole: bool,
    cases: Vec<Case>,
}

/// One step of a case.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Step {
    create: Option<Value>,
    replace: Option<Value>,
    status: Option<Value>,
    get: Option<String>,
    patch: Option<String>,
    delete: Option<String>,
    request: Option<Raw>,
    /// A GET of this path, sent again until its answer is a 200 whose
    /// body holds `until` (a change the API server applies in the
    /// background: a CRD served, a new storage version in discovery).
    wait: Option<String>,
    until: Option<String>,
    /// The status code a `wait` step waits for (200 by default): a
    /// version unserved answers 404 once the server has taken it in.
    code: Option<u16>,
    #[serde(rename = "type")]
    patch_type: Option<String>,
    body: Option<Value>,
    query: Option<String>,
    /// Compare only the status code and reason of this step's answer
    /// (for answers the corpus is not about).
    #[serde(default)]
    pub brief: bool,
}

#[derive(Debug, Deserialize)]
struct Raw {
    method: String,
    path: String,
    body: Option<Value>,
    #[serde(rename = "contentType")]
    content_type: Option<String>,
    /// The Accept header (a Table:
    /// `application/json;as=Table;v=v1;g=meta.k8s.io`); JSON by default.
    accept: Option<String>,
}

/// A request, ready to send.
pub struct Request {
    pub method: String,
    pub path: String,
    pub content_type: Option<String>,
    pub body: Option<Vec<u8>>,
    /// The Accept header, when not JSON.
    pub accept: Option<String>,
}

/// The files of the corpus, by name (without `.yaml`), in name order.
pub fn load(dir: &Path) -> Vec<(String, Vec<Case>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let mut file: File = serde_yaml_ng::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for case in &mut file.cases {
                case.whole = file.whole;
            }
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let mut names = BTreeSet::new();
            for case in &file.cases {
                assert!(
                    names.insert(&case.name),
                    "{name}: two cases named {:?}",
                    case.name
                );
            }
            (name, file.cases)
        })
        .collect()
}

/// The known disagreements: `file: case name` per line (`#` comments).
pub fn known(path: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(" # ").next().unwrap_or_default().trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// The collection path of `api_version`/`kind` in `namespace`, from the
/// server's discovery.
fn collection(client: &Client, api_version: &str, kind: &str, namespace: &str) -> String {
    let base = if api_version.contains('/') {
        format!("/apis/{api_version}")
    } else {
        format!("/api/{api_version}")
    };
    let discovery = client.request("GET", &base, None, None).unwrap().json();
    let resource = discovery["resources"]
        .as_array()
        .and_then(|r| {
            r.iter()
                .find(|r| r["kind"] == kind && !r["name"].as_str().unwrap_or("/").contains('/'))
        })
        .unwrap_or_else(|| panic!("{api_version} {kind} is not served"))
        .clone();
    let plural = resource["name"].as_str().unwrap();
    if resource["namespaced"] == true {
        format!("{base}/namespaces/{namespace}/{plural}")
    } else {
        format!("{base}/{plural}")
    }
}

/// `apiVersion/Kind/name` (the apiVersion may hold a slash) as its path.
fn object_path(client: &Client, reference: &str, namespace: &str) -> String {
    let mut parts: Vec<&str> = reference.rsplitn(3, '/').collect();
    parts.reverse();
    let [api_version, kind, name] = parts[..] else {
        panic!("{reference:?} is not apiVersion/Kind/name")
    };
    // A cluster-scoped object of a case is named after its namespace.
    let name = name.replace("{ns}", namespace);
    let api_version = api_version.replace("{ns}", namespace);
    let kind = kind.replace("{ns}", namespace);
    format!(
        "{}/{name}",
        collection(client, &api_version, &kind, namespace)
    )
}

fn of_object(client: &Client, object: &Value, namespace: &str) -> String {
    let reference = format!(
        "{}/{}/{}",
        object["apiVersion"].as_str().unwrap_or_default(),
        object["kind"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    );
    object_path(client, &reference, namespace)
}

fn with_query(path: String, query: &Option<String>) -> String {
    match query {
        Some(q) => format!("{path}?{q}"),
        None => path,
    }
}

/// The object's resourceVersion on the server now ("" when absent).
fn resource_version(client: &Client, path: &str) -> String {
    client.request("GET", path, None, None).unwrap().json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// `value` with `{ns}` in its strings written as `namespace`.
fn filled(value: &Value, namespace: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("{ns}", namespace)),
        Value::Array(items) => Value::Array(items.iter().map(|v| filled(v, namespace)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), filled(v, namespace)))
                .collect(),
        ),
        other => other.clone(),
    }
}

impl Step {
    /// For a `wait` step: whether `answer` is the one waited for.
    pub fn waited(&self, answer: &Response, namespace: &str) -> bool {
        let code = self.code.unwrap_or(200);
        let Some(until) = &self.until else {
            return answer.status == code;
        };
        answer.status == code
            && String::from_utf8_lossy(&answer.body).contains(&until.replace("{ns}", namespace))
    }

    /// Whether this step waits for a change (see [`Step::waited`]).
    pub fn waits(&self) -> bool {
        self.wait.is_some()
    }

    /// The request this step sends to `client`, in `namespace` (`{ns}` in
    /// paths and bodies).
    pub fn request(&self, client: &Client, namespace: &str) -> Request {
        let json = |v: &Value| Some(serde_json::to_vec(&filled(v, namespace)).unwrap());
        let put = |object: &Value, suffix: &str| {
            let path = of_object(client, object, namespace);
            let mut object = object.clone();
            object["metadata"]["resourceVersion"] = resource_version(client, &path).into();
            Request {
                method: "PUT".into(),
                path: with_query(format!("{path}{suffix}"), &self.query),
                content_type: Some("application/json".into()),
                body: json(&object),
                accept: None,
            }
        };
        if let Some(object) = &self.create {
            let mut path = of_object(client, object, namespace);
            path.truncate(path.rfind('/').unwrap());
            return Request {
                method: "POST".into(),
                path: with_query(path, &self.query),
                content_type: Some("application/json".into()),
                body: json(object),
                accept: None,
            };
        }
        if let Some(object) = &self.replace {
            return put(object, "");
        }
        if let Some(object) = &self.status {
            return put(object, "/status");
        }
        if let Some(reference) = &self.get {
            return Request {
                method: "GET".into(),
                path: with_query(object_path(client, reference, namespace), &self.query),
                content_type: None,
                body: None,
                accept: None,
            };
        }
        if let Some(reference) = &self.delete {
            return Request {
                method: "DELETE".into(),
                path: with_query(object_path(client, reference, namespace), &self.query),
                content_type: None,
                body: None,
                accept: None,
            };
        }
        if let Some(reference) = &self.patch {
            let (content_type, query) = match self.patch_type.as_deref().unwrap_or("merge") {
                "merge" => ("application/merge-patch+json", self.query.clone()),
                "json" => ("application/json-patch+json", self.query.clone()),
                "strategic" => ("application/strategic-merge-patch+json", self.query.clone()),
                "apply" => (
                    "application/apply-patch+yaml",
                    Some(match &self.query {
                        Some(q) if q.contains("fieldManager=") => q.clone(),
                        Some(q) => format!("fieldManager=differential&{q}"),
                        None => "fieldManager=differential".to_string(),
                    }),
                ),
                other => panic!("patch type {other:?}: merge, json, strategic or apply"),
            };
            return Request {
                method: "PATCH".into(),
                path: with_query(object_path(client, reference, namespace), &query),
                content_type: Some(content_type.into()),
                body: self.body.as_ref().and_then(json),
                accept: None,
            };
        }
        if let Some(path) = &self.wait {
            return Request {
                method: "GET".into(),
                path: path.replace("{ns}", namespace),
                content_type: None,
                body: None,
                accept: None,
            };
        }
        if let Some(raw) = &self.request {
            return Request {
                method: raw.method.clone(),
                path: with_query(raw.path.replace("{ns}", namespace), &self.query),
                content_type: raw
                    .content_type
                    .clone()
                    .or_else(|| raw.body.as_ref().map(|_| "application/json".to_string())),
                // A string body is sent as it is (duplicate fields, bad JSON).
                body: raw.body.as_ref().and_then(|b| match b {
                    Value::String(text) => Some(text.clone().into_bytes()),
                    other => json(other),
                }),
                accept: raw.accept.clone(),
            };
        }
        panic!(
            "a step needs one of create, replace, status, get, patch, delete, request or wait: {self:?}"
        )
    }
}
