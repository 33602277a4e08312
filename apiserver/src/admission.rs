//! The admission chain of writes: as kube-apiserver calls mutating, then
//! validating, admission webhooks between decoding a write and storing it,
//! this server calls an installed [`Admission`] (`rekon dev` installs the
//! loaded modules' webhooks). The object a write would store is computed
//! first (a dry run), the chain sees it, and a mutated object is what gets
//! stored; a refusal is the answer, with the chain's message.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

use http::Method;
use rekon_store::{FieldValidation, ResourceInfo, Status, Store, WriteOptions};
use serde_json::Value;

use crate::handlers::body::parse_json;
use crate::handlers::patch::patch_type;
use crate::handlers::request::Request;

/// What the admission chain sees of one write.
#[derive(Clone, Debug)]
pub struct AdmissionAttributes {
    /// The kind's group (`""` for the core group).
    pub group: String,
    /// The version the request was made in.
    pub version: String,
    /// The kind.
    pub kind: String,
    /// The resource (plural).
    pub resource: String,
    /// The subresource written (`status`), if any.
    pub sub_resource: Option<String>,
    /// The namespace, for namespaced kinds.
    pub namespace: Option<String>,
    /// The labels of that namespace (for namespace selectors).
    pub namespace_labels: BTreeMap<String, String>,
    /// The object's name.
    pub name: String,
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'static str,
    /// The object the write would store (none on delete).
    pub object: Option<Value>,
    /// The stored object before the write (update and delete).
    pub old_object: Option<Value>,
    /// The request is a dry run: nothing will be stored.
    pub dry_run: bool,
    /// Who asks.
    pub username: String,
}

/// What the chain let through.
#[derive(Clone, Debug, Default)]
pub struct Admitted {
    /// The object changed by mutating webhooks, if they changed it.
    pub object: Option<Value>,
    /// Warnings for the client (sent as `Warning` headers).
    pub warnings: Vec<String>,
}

/// A boxed future of the chain's answer.
pub type AdmitFuture<'a> = Pin<Box<dyn Future<Output = Result<Admitted, Status>> + Send + 'a>>;

/// An admission chain the server calls for writes.
pub trait Admission: Send + Sync + 'static {
    /// Whether writes of `kind` in `group` may be reviewed at all (a
    /// cheap filter: the others skip the dry run).
    fn reviews(&self, group: &str, kind: &str) -> bool;

    /// Reviews one write: what to store instead, and warnings; or the
    /// refusal to answer with.
    fn admit(&self, attributes: AdmissionAttributes) -> AdmitFuture<'_>;
}

/// The server's admission chain, installed at any time.
#[derive(Default)]
pub(crate) struct Chain(RwLock<Option<Arc<dyn Admission>>>);

impl Chain {
    /// Installs a chain, or removes it.
    pub(crate) fn set(&self, admission: Option<Arc<dyn Admission>>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = admission;
    }

    /// The chain installed, if any.
    pub(crate) fn get(&self) -> Option<Arc<dyn Admission>> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The answer to a reviewed write: the method and body to run instead
/// (a mutation becomes part of the body; a mutated patch, a replace), and
/// the warnings. `None` when the chain does not review it.
pub(crate) struct Reviewed {
    pub(crate) method: Method,
    pub(crate) content_type: String,
    pub(crate) body: Vec<u8>,
    pub(crate) warnings: Vec<String>,
}

fn namespace_labels(store: &Store, namespace: Option<&str>) -> BTreeMap<String, String> {
    let Some(namespace) = namespace else {
        return BTreeMap::new();
    };
    let Some(res) = store.resource_for_plural("", "v1", "namespaces") else {
        return BTreeMap::new();
    };
    store
        .get(&res, None, namespace)
        .ok()
        .and_then(|ns| ns.pointer("/metadata/labels").cloned())
        .and_then(|labels| serde_json::from_value(labels).ok())
        .unwrap_or_default()
}

/// Runs the chain for a write, if it reviews it.
pub(crate) async fn review(
    admission: &dyn Admission,
    write: &Request<'_>,
) -> Result<Option<Reviewed>, Status> {
    let res = write.res;
    let operation = match (write.method.as_str(), write.name) {
        ("POST", None) => "CREATE",
        ("PUT" | "PATCH", Some(_)) => "UPDATE",
        ("DELETE", Some(_)) => "DELETE",
        _ => return Ok(None),
    };
    if !matches!(write.sub, None | Some("status")) || !res.is_stored() {
        return Ok(None);
    }
    if !admission.reviews(&res.group, &res.kind) {
        return Ok(None);
    }
    let store = write.store;
    let old = write
        .name
        .and_then(|n| store.get(res, write.namespace, n).ok());
    let opts = WriteOptions {
        field_manager: Some(write.field_manager()),
        subresource: write.sub.map(str::to_string),
        dry_run: true,
        // Webhooks see the object before the server validates it.
        skip_validation: true,
        field_validation: FieldValidation::Ignore,
        ..WriteOptions::default()
    };
    // What the write would store.
    let (object, operation) = match (write.method.as_str(), write.name) {
        ("POST", _) => {
            let obj = parse_json(&write.body, res)?;
            (
                Some(store.create(res, write.namespace, obj, &opts)?),
                operation,
            )
        }
        ("PUT", Some(n)) => {
            let obj = parse_json(&write.body, res)?;
            let op = if old.is_some() { operation } else { "CREATE" };
            (
                Some(store.replace(res, write.namespace, n, obj, &opts)?),
                op,
            )
        }
        ("PATCH", Some(n)) => {
            let ptype = patch_type(&write.content_type, write.query)?;
            let (out, created) =
                store.patch_created(res, write.namespace, n, &ptype, &write.body, &opts)?;
            (Some(out), if created { "CREATE" } else { operation })
        }
        _ => (None, operation),
    };
    let attributes = AdmissionAttributes {
        group: res.group.clone(),
        version: res.version.clone(),
        kind: res.kind.clone(),
        resource: res.plural.clone(),
        sub_resource: write.sub.map(str::to_string),
        namespace: write.namespace.map(str::to_string),
        namespace_labels: namespace_labels(store, write.namespace),
        name: write
            .name
            .map(str::to_string)
            .or_else(|| {
                object
                    .as_ref()
                    .and_then(|o| o.pointer("/metadata/name"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default(),
        operation,
        object: object.clone(),
        old_object: old.clone(),
        dry_run: write.query.get("dryRun") == Some("All"),
        username: "kubernetes-admin".to_string(),
    };
    let admitted = admission.admit(attributes).await?;
    let (method, content_type, body) = match (admitted.object, object) {
        (Some(mutated), Some(before)) if mutated != before => {
            mutated_write(write, res, &before, mutated, old.as_ref())?
        }
        _ => (
            write.method.clone(),
            write.content_type.to_string(),
            write.body.to_vec(),
        ),
    };
    Ok(Some(Reviewed {
        method,
        content_type,
        body,
        warnings: admitted.warnings,
    }))
}

/// The write that stores a mutated object: a create or replace with the
/// mutation applied to its body, or for a patch, a replace of the mutated
/// object at the version the patch applied to.
fn mutated_write(
    write: &Request<'_>,
    res: &ResourceInfo,
    before: &Value,
    mutated: Value,
    old: Option<&Value>,
) -> Result<(Method, String, Vec<u8>), Status> {
    let json = "application/json".to_string();
    match write.method.as_str() {
        "POST" | "PUT" => {
            let mut body = parse_json(&write.body, res)?;
            let patch = json_patch::diff(before, &mutated);
            json_patch::patch(&mut body, &patch).map_err(|e| {
                Status::internal(format!("the admission webhook's patch does not apply: {e}"))
            })?;
            Ok((write.method.clone(), json, body.to_string().into_bytes()))
        }
        _ => {
            let mut object = mutated;
            match old.and_then(|o| o.pointer("/metadata/resourceVersion")) {
                Some(rv) => object["metadata"]["resourceVersion"] = rv.clone(),
                None => {
                    if let Some(m) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                        m.remove("resourceVersion");
                    }
                }
            }
            Ok((Method::PUT, json, object.to_string().into_bytes()))
        }
    }
}
