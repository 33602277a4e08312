//! Request bodies in Kubernetes' protobuf encoding, for the kinds kubectl's
//! imperative commands create with it (`kubectl create namespace`, `create
//! configmap`, `create secret generic`): decoded to the JSON the rest of
//! the server takes. Other kinds stay refused with 415, as before.
//!
//! The encoding: the magic `k8s\0`, then a `runtime.Unknown` message whose
//! `raw` field holds the object, with the field numbers of the upstream
//! `generated.proto` files.

use serde_json::{Map, Value, json};

/// Why a body could not be decoded (the server answers 415).
#[derive(Debug)]
pub(crate) struct Unsupported;

/// One field of a message: its number and its value.
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// The fields of a message, in order.
fn fields(mut data: &[u8]) -> Result<Vec<(u64, Field<'_>)>, Unsupported> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let key = varint(&mut data)?;
        let field = match key & 7 {
            0 => Field::Varint(varint(&mut data)?),
            2 => {
                let len = usize::try_from(varint(&mut data)?).map_err(|_| Unsupported)?;
                if len > data.len() {
                    return Err(Unsupported);
                }
                let (bytes, rest) = data.split_at(len);
                data = rest;
                Field::Bytes(bytes)
            }
            // Fixed 64- and 32-bit fields: no field decoded here has them.
            1 => skip(&mut data, 8)?,
            5 => skip(&mut data, 4)?,
            _ => return Err(Unsupported),
        };
        out.push((key >> 3, field));
    }
    Ok(out)
}

fn skip<'a>(data: &mut &'a [u8], n: usize) -> Result<Field<'a>, Unsupported> {
    if data.len() < n {
        return Err(Unsupported);
    }
    *data = &data[n..];
    Ok(Field::Varint(0))
}

fn varint(data: &mut &[u8]) -> Result<u64, Unsupported> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = data.split_first().ok_or(Unsupported)?;
        *data = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(Unsupported)
}

fn text(bytes: &[u8]) -> Result<String, Unsupported> {
    String::from_utf8(bytes.to_vec()).map_err(|_| Unsupported)
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A `map<string, string>` entry (or `map<string, bytes>` with `binary`).
fn map_entry(bytes: &[u8], binary: bool) -> Result<(String, Value), Unsupported> {
    let mut key = String::new();
    let mut value = json!("");
    for (number, field) in fields(bytes)? {
        match (number, field) {
            (1, Field::Bytes(b)) => key = text(b)?,
            (2, Field::Bytes(b)) if binary => value = json!(base64(b)),
            (2, Field::Bytes(b)) => value = json!(text(b)?),
            _ => {}
        }
    }
    Ok((key, value))
}

/// Adds a map entry to `object[name]`.
fn add_entry(
    object: &mut Map<String, Value>,
    name: &str,
    bytes: &[u8],
    binary: bool,
) -> Result<(), Unsupported> {
    let (key, value) = map_entry(bytes, binary)?;
    object
        .entry(name)
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or(Unsupported)?
        .insert(key, value);
    Ok(())
}

fn push(object: &mut Map<String, Value>, name: &str, value: Value) -> Result<(), Unsupported> {
    object
        .entry(name)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or(Unsupported)?
        .push(value);
    Ok(())
}

/// `ObjectMeta`: the fields a client sets on create.
fn object_meta(bytes: &[u8]) -> Result<Value, Unsupported> {
    let mut meta = Map::new();
    for (number, field) in fields(bytes)? {
        // Go writes every string field, empty or not: empty means unset.
        match (number, field) {
            (1 | 2 | 3 | 6, Field::Bytes(b)) if !b.is_empty() => {
                let name = match number {
                    1 => "name",
                    2 => "generateName",
                    3 => "namespace",
                    _ => "resourceVersion",
                };
                meta.insert(name.into(), json!(text(b)?));
            }
            (11, Field::Bytes(b)) => add_entry(&mut meta, "labels", b, false)?,
            (12, Field::Bytes(b)) => add_entry(&mut meta, "annotations", b, false)?,
            (14, Field::Bytes(b)) => push(&mut meta, "finalizers", json!(text(b)?))?,
            // Set by the server (uid, timestamps, generation, managedFields)
            // or not sent by kubectl's create commands (owner references).
            (5 | 7 | 8 | 9 | 10 | 17, _) => {}
            (13, _) => return Err(Unsupported),
            _ => {}
        }
    }
    Ok(Value::Object(meta))
}

/// The object in a protobuf body, as JSON; `Unsupported` for kinds not
/// decoded here.
pub(crate) fn to_json(body: &[u8]) -> Result<Value, Unsupported> {
    let unknown = body.strip_prefix(b"k8s\0").ok_or(Unsupported)?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for (number, field) in fields(unknown)? {
        match (number, field) {
            (1, Field::Bytes(type_meta)) => {
                for (number, field) in fields(type_meta)? {
                    match (number, field) {
                        (1, Field::Bytes(b)) => api_version = text(b)?,
                        (2, Field::Bytes(b)) => kind = text(b)?,
                        _ => {}
                    }
                }
            }
            (2, Field::Bytes(b)) => raw = b,
            // contentEncoding: none is supported.
            (3, Field::Bytes(b)) if !b.is_empty() => return Err(Unsupported),
            _ => {}
        }
    }
    let mut object = Map::new();
    object.insert("apiVersion".into(), json!(api_version));
    object.insert("kind".into(), json!(kind));
    let which = (api_version.as_str(), kind.as_str());
    for (number, field) in fields(raw)? {
        let b = match (which, number, field) {
            (("v1", "ConfigMap"), 4, Field::Varint(v))
            | (("v1", "Secret"), 5, Field::Varint(v)) => {
                object.insert("immutable".into(), json!(v != 0));
                continue;
            }
            (_, _, Field::Varint(_)) => continue,
            (_, _, Field::Bytes(b)) => b,
        };
        match (which, number) {
            (_, 1) => {
                object.insert("metadata".into(), object_meta(b)?);
            }
            (("v1", "ConfigMap"), 2) => add_entry(&mut object, "data", b, false)?,
            (("v1", "ConfigMap"), 3) => add_entry(&mut object, "binaryData", b, true)?,
            (("v1", "Secret"), 2) => add_entry(&mut object, "data", b, true)?,
            (("v1", "Secret"), 3) if !b.is_empty() => {
                object.insert("type".into(), json!(text(b)?));
            }
            (("v1", "Secret"), 3) => {}
            (("v1", "Secret"), 4) => add_entry(&mut object, "stringData", b, false)?,
            (("v1", "Namespace"), 2) => {
                let mut spec = Map::new();
                for (number, field) in fields(b)? {
                    if let (1, Field::Bytes(f)) = (number, field) {
                        push(&mut spec, "finalizers", json!(text(f)?))?;
                    }
                }
                object.insert("spec".into(), Value::Object(spec));
            }
            // The status (an empty phase) is the server's to set.
            (("v1", "Namespace"), 3) => {}
            _ => return Err(Unsupported),
        }
    }
    match (api_version.as_str(), kind.as_str()) {
        ("v1", "ConfigMap" | "Secret" | "Namespace") => Ok(Value::Object(object)),
        _ => Err(Unsupported),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A length-delimited field.
    fn bytes(number: u64, data: &[u8]) -> Vec<u8> {
        let mut out = vec![(number << 3 | 2) as u8];
        let mut len = data.len();
        loop {
            let byte = (len & 0x7f) as u8;
            len >>= 7;
            if len == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
        out.extend_from_slice(data);
        out
    }

    fn entry(key: &str, value: &[u8]) -> Vec<u8> {
        [bytes(1, key.as_bytes()), bytes(2, value)].concat()
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [bytes(1, api_version.as_bytes()), bytes(2, kind.as_bytes())].concat();
        [b"k8s\0".to_vec(), bytes(1, &type_meta), bytes(2, raw)].concat()
    }

    #[test]
    fn a_configmap_with_labels_data_and_binary_data() {
        let meta = [
            bytes(1, b"settings"),
            bytes(3, b"demo"),
            bytes(11, &entry("app", b"web")),
        ]
        .concat();
        let raw = [
            bytes(1, &meta),
            bytes(2, &entry("color", b"blue")),
            bytes(3, &entry("blob", &[0, 1, 2])),
            vec![4 << 3, 1],
        ]
        .concat();
        let object = to_json(&envelope("v1", "ConfigMap", &raw)).unwrap();
        assert_eq!(
            object,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "demo", "labels": {"app": "web"}},
                "data": {"color": "blue"}, "binaryData": {"blob": "AAEC"}, "immutable": true})
        );
    }

    #[test]
    fn a_namespace_as_kubectl_create_namespace_sends_it() {
        // Recorded from kubectl 1.32: every string field written, empty.
        let body: &[u8] = &[
            107, 56, 115, 0, 10, 15, 10, 2, 118, 49, 18, 9, 78, 97, 109, 101, 115, 112, 97, 99,
            101, 18, 27, 10, 19, 10, 3, 102, 111, 111, 18, 0, 26, 0, 34, 0, 42, 0, 50, 0, 56, 0,
            66, 0, 18, 0, 26, 2, 10, 0, 26, 0, 34, 0,
        ];
        assert_eq!(
            to_json(body).unwrap(),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "foo"}, "spec": {}})
        );
    }

    #[test]
    fn a_secret_keeps_bytes_as_base64() {
        let raw = [
            bytes(1, &bytes(1, b"s")),
            bytes(2, &entry("password", b"hunter2")),
            bytes(3, b"Opaque"),
        ]
        .concat();
        let object = to_json(&envelope("v1", "Secret", &raw)).unwrap();
        assert_eq!(object["data"]["password"], "aHVudGVyMg==");
        assert_eq!(object["type"], "Opaque");
    }

    #[test]
    fn other_kinds_and_garbage_are_unsupported() {
        let raw = bytes(1, &bytes(1, b"d"));
        assert!(to_json(&envelope("apps/v1", "Deployment", &raw)).is_err());
        assert!(to_json(b"k8s\0\xff\xff").is_err());
        assert!(to_json(b"{}").is_err());
    }
}
