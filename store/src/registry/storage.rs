//! How objects are stored and read back through each resource: in the
//! storage version (converted by the installed converter, or pruned by
//! the storage version's schema), numbers as Go writes them, bytes in
//! canonical base64, empty metadata left out; and an object as a client
//! of another version (or of events.k8s.io) sees it.

use serde_json::Value;

use super::conversion::conversion_failed;
use crate::apis::events::event_view;
use crate::apis::versions;
use crate::fieldmanager::builtin::encoded;
use crate::go::json::decode::go_numbers;
use crate::meta::status::Status;
use crate::resource::info::ResourceInfo;

/// `o` (as stored) as this resource's clients see its fields: in this
/// version, converted when a converter converts it.
pub(crate) fn view<'a>(res: &ResourceInfo, o: &'a Value) -> std::borrow::Cow<'a, Value> {
    match try_view(res, o) {
        Ok(view) => view,
        Err(status) => {
            // A watch event has no way to fail: it carries the object
            // as stored, and the log says why.
            tracing::warn!(message = %status.message, "conversion failed: object kept as stored");
            std::borrow::Cow::Borrowed(o)
        }
    }
}

/// [`view`], or the 500 of a failed conversion (a read
/// or list in a version the converter cannot produce fails as a whole,
/// as kube-apiserver's does).
pub(crate) fn try_view<'a>(
    res: &ResourceInfo,
    o: &'a Value,
) -> Result<std::borrow::Cow<'a, Value>, Status> {
    if res.is_events_api() {
        return Ok(std::borrow::Cow::Owned(event_view(o)));
    }
    if let Some(converted) = versions::convert(res, o, &res.api_version()) {
        return Ok(std::borrow::Cow::Owned(converted));
    }
    if o.get("apiVersion")
        .and_then(Value::as_str)
        .is_some_and(|v| res.is_api_version(v))
    {
        // In this version already (as decoding defaults it).
        return Ok(match versions::decoded(res, o) {
            Some(decoded) => std::borrow::Cow::Owned(decoded),
            None => std::borrow::Cow::Borrowed(o),
        });
    }
    if let Some(conversion) = &res.conversion {
        match conversion.to(o, &res.api_version()) {
            Ok(Some(mut converted)) => {
                // What a converter gives is pruned by the schema of the
                // version it converted to, as the real server does.
                if let Some(custom) = &res.custom {
                    custom.prune_as(&res.version, &mut converted);
                }
                return Ok(std::borrow::Cow::Owned(converted));
            }
            Ok(None) => {}
            Err(message) => return Err(conversion_failed(message)),
        }
    }
    if let Some(custom) = &res.custom
        && !o
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| res.is_api_version(v))
    {
        // Strategy None: the apiVersion changes, and the object is
        // pruned by this version's schema.
        return Ok(std::borrow::Cow::Owned(custom.to_version(
            o.clone(),
            &res.group,
            &res.version,
        )));
    }
    Ok(std::borrow::Cow::Borrowed(o))
}

/// Whether `o`, written through this resource, converts to the storage
/// version: the 500 of a failed conversion refuses the write.
pub(crate) fn check_stored(res: &ResourceInfo, o: &Value) -> Result<(), Status> {
    let Some(conversion) = &res.conversion else {
        return Ok(());
    };
    let mut o = o.clone();
    if o.get("apiVersion").is_none()
        && let Some(m) = o.as_object_mut()
    {
        m.insert("apiVersion".into(), Value::String(res.api_version()));
    }
    conversion
        .to(&o, &conversion.storage_api_version)
        .map(|_| ())
        .map_err(conversion_failed)
}

/// `o`, written through this resource, as it is stored: in the
/// storage version when a converter converts it.
pub(crate) fn stored(res: &ResourceInfo, mut o: Value) -> Value {
    if res.custom.is_some() {
        // Stored as Go writes what it decoded: `2.0` is `2`.
        go_numbers(&mut o);
    }
    if let Some(storage) = versions::storage_version(res) {
        if o.get("apiVersion").is_none()
            && let Some(m) = o.as_object_mut()
        {
            m.insert("apiVersion".into(), Value::String(res.api_version()));
        }
        let mut o = versions::convert(res, &o, storage).unwrap_or(o);
        encoded(&mut o);
        return o;
    }

    let Some(conversion) = &res.conversion else {
        // Strategy None: the storage version's apiVersion, pruned by
        // its schema.
        return match &res.custom {
            Some(custom) => {
                let storage = custom.storage().to_string();
                custom.to_version(o, &res.group, &storage)
            }
            None => o,
        };
    };
    if o.get("apiVersion").is_none()
        && let Some(m) = o.as_object_mut()
    {
        m.insert("apiVersion".into(), Value::String(res.api_version()));
    }
    match conversion.to(&o, &conversion.storage_api_version) {
        Ok(Some(mut converted)) => {
            if let Some(custom) = &res.custom {
                let storage = custom.storage().to_string();
                custom.prune_as(&storage, &mut converted);
            }
            converted
        }
        Ok(None) => o,
        Err(message) => {
            // Writes check the conversion first (`check_stored`).
            tracing::warn!(message, "conversion failed: object stored as written");
            o
        }
    }
}

/// Drops the metadata lists and maps that are empty, as the real server's
/// `omitempty` encoding does: a patch that removes the last finalizer
/// leaves no `finalizers: []` behind.
pub(crate) fn omit_empty_metadata(obj: &mut Value) {
    if let Some(Value::Object(md)) = obj.get_mut("metadata") {
        md.retain(|key, value| {
            let listed = matches!(
                key.as_str(),
                "labels" | "annotations" | "finalizers" | "ownerReferences" | "managedFields"
            );
            let empty = match value {
                Value::Null => true,
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            };
            !(listed && empty)
        });
    }
}

/// Byte fields (ConfigMap `binaryData`, Secret `data`) are `[]byte` in the
/// real server: base64 with line breaks (as kustomize writes it) is decoded
/// and served back canonical, without them.
pub(crate) fn canonical_bytes(res: &ResourceInfo, obj: &mut Value) {
    let field = match (res.group.as_str(), res.kind.as_str()) {
        ("", "ConfigMap") => "binaryData",
        ("", "Secret") => "data",
        _ => return,
    };
    if let Some(Value::Object(bytes)) = obj.get_mut(field) {
        for value in bytes.values_mut() {
            if let Value::String(text) = value
                && text.contains(|c: char| c.is_ascii_whitespace())
            {
                text.retain(|c| !c.is_ascii_whitespace());
            }
        }
    }
}
