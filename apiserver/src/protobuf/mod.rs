//! Request bodies in Kubernetes' protobuf encoding, as kubectl's imperative
//! commands send them (`kubectl create deployment`, `create service`,
//! `create role`, `run`...): decoded to the JSON the rest of the server
//! takes, for every built-in kind, as the same object looks in Kubernetes'
//! JSON (what kubectl would have sent as JSON).
//!
//! The encoding: the magic `k8s\0`, then a `runtime.Unknown` message: the
//! TypeMeta (apiVersion, kind), the object's own message in `raw`, and a
//! content encoding, which must be empty.
//!
//! The object is decoded by reflection, with rust-protobuf's dynamic
//! messages, over the descriptors of the crate k8s-rs-pb (rust-protobuf
//! code generated from the upstream `generated.proto` files; its
//! descriptors are copied out of it, see [`kinds`] for why): [`kinds`]
//! finds the message of the (apiVersion, kind), [`json`] walks the decoded
//! message into JSON, and [`names`] holds what Go knows and the
//! descriptors do not (embedded structs, pointer fields, a few renamed
//! fields). Not kube-rs's k8s-pb: its prost-generated types have neither
//! reflection nor serde, so turning every kind into JSON with it would take
//! one conversion per type, by hand. The tests build their objects with
//! k8s-rs-pb's generated types.
//!
//! Go's protobuf writes every field that is not a pointer, set or not, so
//! an empty string, a zero and `false` mean unset and are left out, as Go's
//! JSON does, except for the fields named in [`names::ZERO_IS_SET`]. A
//! message on the wire is kept, even empty (`resources: {}`, `emptyDir:
//! {}`), as Go writes it; a zero Time is left out (Go writes `null`), and so
//! is an empty top-level `status`, which is the server's to set. Kinds not
//! built in, content encodings and bodies that do not parse are refused
//! (the server answers 415).

mod json;
mod kinds;
mod names;
#[cfg(test)]
mod tests;

use protobuf::MessageDyn;
use protobuf::reflect::ReflectValueRef;
use serde_json::{Map, Value};

/// The bytes every body in Kubernetes' protobuf encoding starts with.
const MAGIC: &[u8] = b"k8s\0";

/// Why a body could not be decoded (the server answers 415).
#[derive(Debug)]
pub(crate) struct Unsupported;

/// The object in a protobuf body, as JSON; `Unsupported` for kinds that are
/// not built in, content encodings, and bodies that do not parse.
pub(crate) fn to_json(body: &[u8]) -> Result<Value, Unsupported> {
    let unknown = body.strip_prefix(MAGIC).ok_or(Unsupported)?;
    let unknown = kinds::unknown()
        .parse_from_bytes(unknown)
        .map_err(|_| Unsupported)?;
    object(&*unknown)
}

/// The object a `runtime.Unknown` holds: its TypeMeta, then its fields.
fn object(unknown: &dyn MessageDyn) -> Result<Value, Unsupported> {
    if !json::text(json::get(unknown, "contentEncoding")).is_empty() {
        return Err(Unsupported);
    }
    let Some(ReflectValueRef::Message(type_meta)) = json::get(unknown, "typeMeta") else {
        return Err(Unsupported);
    };
    let api_version = json::text(json::get(&*type_meta, "apiVersion"));
    let kind = json::text(json::get(&*type_meta, "kind"));
    let raw = match json::get(unknown, "raw") {
        Some(ReflectValueRef::Bytes(raw)) => raw,
        _ => &[],
    };
    let descriptor = kinds::find(api_version, kind).ok_or(Unsupported)?;
    let message = descriptor.parse_from_bytes(raw).map_err(|_| Unsupported)?;
    let mut object = Map::new();
    object.insert("apiVersion".into(), Value::from(api_version));
    object.insert("kind".into(), Value::from(kind));
    if let Some(Value::Object(fields)) = json::message(&*message)? {
        object.extend(fields);
    }
    if object
        .get("status")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        object.shift_remove("status");
    }
    Ok(Value::Object(object))
}
