//! What the real server's decoder does to a custom resource before any
//! strategy sees it (`customresource_handler.go`,
//! `unstructuredSchemaCoercer.apply`): the root's metadata read as an
//! ObjectMeta and written back, unknown fields pruned, non-nullable nulls
//! without a default dropped, the metadata of embedded resources coerced;
//! and the unknown fields of all three, in the order the real server lists
//! them in its warnings and in `strict decoding error: unknown field
//! "metadata.colour", unknown field "extra", unknown field "spec.bogus"`:
//! the root's metadata first (in the order of its sorted keys), then the
//! pruned fields (sorted), then the embedded metadata (sorted).

use serde_json::Value;

use super::defaulting::prune_nulls;
use super::objectmeta::{self, CoerceOptions, ObjectMetaOptions};
use super::props::Schema;
use super::pruning::prune;
use crate::go::fmt::{go_print, go_type};
use crate::machinery::field::Path;

/// How the decoder treats an object (the fields of
/// `unstructuredSchemaCoercer`).
#[derive(Clone, Copy, Debug, Default)]
pub struct DecodeOptions {
    /// Drops the metadata fields that cannot be read instead of failing:
    /// when the server reads what it stored, never for a request.
    pub drop_invalid_metadata: bool,
    /// Sets a missing generation to 1 (reading what very old servers
    /// stored).
    pub repair_generation: bool,
    /// The CRD's `spec.preserveUnknownFields` (v1beta1 only): nothing is
    /// pruned.
    pub preserve_unknown_fields: bool,
    /// Lists the unknown fields (`fieldValidation` `Warn` or `Strict`).
    pub return_unknown_field_paths: bool,
}

/// `unstructured.NestedString` of a top-level field.
fn nested_string(object: &Value, field: &str) -> Result<Option<String>, String> {
    match object.get(field) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(format!(
            ".{field} accessor error: {} is of the type {}, expected string",
            go_print(other),
            go_type(other)
        )),
    }
}

/// Applies what the decoder does to a custom resource of the version whose
/// schema is `schema` (the caller checks that the object is of the CRD's
/// group and kind). Returns the unknown fields (with
/// `return_unknown_field_paths`), or the error that makes the request a
/// 400 (`json: cannot unmarshal number into Go struct field
/// ObjectMeta.labels of type string`, `spec.template.metadata: Invalid
/// value: ...`), which the real server puts after `Widget in version "v1"
/// cannot be handled as a Widget: `.
pub fn coerce_decoded(
    object: &mut Value,
    schema: &Schema,
    options: DecodeOptions,
) -> Result<Vec<String>, String> {
    coerce_decoded_over(object, schema, options, None)
}

/// [`coerce_decoded`] of an object that replaces one stored with
/// `stored_metadata`: metadata equal to it, which the server itself wrote,
/// reads back the same, and is not read again.
pub fn coerce_decoded_over(
    object: &mut Value,
    schema: &Schema,
    options: DecodeOptions,
    stored_metadata: Option<&Value>,
) -> Result<Vec<String>, String> {
    let kind = nested_string(object, "kind")?;
    let api_version = nested_string(object, "apiVersion")?;
    let Some(map) = object.as_object() else {
        return Ok(Vec::new());
    };
    let meta_options = ObjectMetaOptions {
        drop_malformed_fields: options.drop_invalid_metadata,
        return_unknown_field_paths: options.return_unknown_field_paths,
        parent_path: Path::none(),
    };
    let as_stored = !options.repair_generation
        && stored_metadata.is_some_and(|stored| map.get("metadata") == Some(stored));
    let mut meta = if as_stored {
        None
    } else {
        objectmeta::get_object_meta(map, &meta_options)?
    };
    let mut unknown = Vec::new();
    if let Some(meta) = &mut meta {
        unknown.append(&mut meta.unknown_fields);
    }
    if let Some(api_version) = &api_version
        && api_version.matches('/').count() > 1
    {
        return Err(format!("unexpected GroupVersion string: {api_version}"));
    }

    if !options.preserve_unknown_fields {
        let mut pruned = prune(object, schema, true);
        if !options.return_unknown_field_paths {
            pruned.clear();
        }
        unknown.append(&mut pruned);
        prune_nulls(object, schema);
    }
    let coerce_options = CoerceOptions {
        drop_invalid_fields: options.drop_invalid_metadata,
        return_unknown_field_paths: options.return_unknown_field_paths,
    };
    let (error, mut paths) =
        objectmeta::coerce(&Path::none(), object, schema, false, coerce_options);
    if let Some(error) = error {
        return Err(error.to_string());
    }
    unknown.append(&mut paths);

    // The fields every object has, put back as they were read.
    if let Value::Object(map) = object {
        if let Some(kind) = kind {
            map.insert("kind".into(), Value::String(kind));
        }
        if let Some(api_version) = api_version {
            map.insert("apiVersion".into(), Value::String(api_version));
        }
        if let Some(mut meta) = meta {
            if options.repair_generation
                && meta
                    .metadata
                    .get("generation")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
                    == 0
            {
                meta.metadata["generation"] = Value::from(1);
            }
            map.insert("metadata".into(), meta.metadata);
        }
    }
    Ok(unknown)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::go::json::decode::unknown_field_messages;

    fn widget() -> Schema {
        Schema::from_json(
            &json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "size": {"type": "string"},
                "note": {"type": "string", "nullable": true},
                "owner": {"type": "string"},
                "mode": {"type": "string", "default": "fast"},
                "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                             "x-kubernetes-preserve-unknown-fields": true},
            }}}}),
        )
    }

    fn strict() -> DecodeOptions {
        DecodeOptions {
            return_unknown_field_paths: true,
            ..DecodeOptions::default()
        }
    }

    /// `strict decoding error: unknown field "metadata.aaa", unknown field
    /// "metadata.ownerReferences[0].foo", unknown field "metadata.zzz",
    /// unknown field "a", unknown field "spec.aa", unknown field
    /// "spec.zz", unknown field "spec.template.metadata.bad"`, as the real
    /// server answered.
    #[test]
    fn unknown_fields_come_in_the_real_servers_order() {
        let mut object = json!({
            "apiVersion": "fid.example.org/v1", "kind": "Widget",
            "metadata": {"name": "w1", "ownerReferences": [{"name": "x", "foo": 1}], "labels": {"a": "b"}, "zzz": 1, "aaa": 2},
            "spec": {"size": "small", "zz": 1, "aa": 2,
                     "template": {"apiVersion": "v1", "kind": "X", "metadata": {"bad": 1, "name": "q"}}},
            "a": 1,
        });
        let unknown = coerce_decoded(&mut object, &widget(), strict()).unwrap();
        assert_eq!(
            unknown_field_messages(&unknown).join(", "),
            "unknown field \"metadata.aaa\", unknown field \"metadata.ownerReferences[0].foo\", \
             unknown field \"metadata.zzz\", unknown field \"a\", unknown field \"spec.aa\", \
             unknown field \"spec.zz\", unknown field \"spec.template.metadata.bad\""
        );
        assert_eq!(
            object,
            json!({
                "apiVersion": "fid.example.org/v1", "kind": "Widget",
                "metadata": {"name": "w1", "labels": {"a": "b"},
                             "ownerReferences": [{"apiVersion": "", "kind": "", "name": "x", "uid": ""}]},
                "spec": {"size": "small", "template": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "q"}}},
            })
        );
    }

    #[test]
    fn nulls_without_defaults_go_and_defaults_are_left_to_defaulting() {
        let mut object = json!({"apiVersion": "fid.example.org/v1", "kind": "Widget", "metadata": {"name": "w"},
                                "spec": {"size": "small", "note": null, "owner": null, "mode": null}});
        let unknown = coerce_decoded(&mut object, &widget(), DecodeOptions::default()).unwrap();
        assert!(unknown.is_empty());
        assert_eq!(
            object["spec"],
            json!({"size": "small", "note": null, "mode": null})
        );
    }

    #[test]
    fn unreadable_metadata_fails_the_decoding() {
        let mut object = json!({"apiVersion": "fid.example.org/v1", "kind": "Widget",
                                "metadata": {"name": "w1", "labels": {"a": 1}}, "spec": {}});
        assert_eq!(
            coerce_decoded(&mut object, &widget(), DecodeOptions::default()),
            Err("json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string".into())
        );
        let mut object = json!({"apiVersion": "fid.example.org/v1", "kind": "Widget", "metadata": {"name": "w"},
                                "spec": {"template": {"apiVersion": 5, "kind": "C"}}});
        assert_eq!(
            coerce_decoded(&mut object, &widget(), DecodeOptions::default()),
            Err("spec.template.apiVersion: Invalid value: 5: must be a string".into())
        );
    }

    #[test]
    fn reading_what_was_stored_drops_and_repairs() {
        let options = DecodeOptions {
            drop_invalid_metadata: true,
            repair_generation: true,
            ..DecodeOptions::default()
        };
        let mut object = json!({"apiVersion": "fid.example.org/v1", "kind": "Widget",
                                "metadata": {"name": "w1", "labels": {"a": 1}}, "spec": {}});
        assert_eq!(coerce_decoded(&mut object, &widget(), options), Ok(vec![]));
        assert_eq!(object["metadata"], json!({"name": "w1", "generation": 1}));
    }

    #[test]
    fn preserving_unknown_fields_prunes_nothing() {
        let options = DecodeOptions {
            preserve_unknown_fields: true,
            ..strict()
        };
        let mut object = json!({"apiVersion": "fid.example.org/v1", "kind": "Widget",
                                "metadata": {"name": "w", "colour": "blue"}, "spec": {"bogus": 1}});
        let unknown = coerce_decoded(&mut object, &widget(), options).unwrap();
        assert_eq!(unknown, ["metadata.colour"]);
        assert_eq!(object["spec"], json!({"bogus": 1}));
        assert_eq!(object["metadata"], json!({"name": "w"}));
    }

    #[test]
    fn a_kind_that_is_not_a_string_is_an_accessor_error() {
        let mut object = json!({"kind": 5, "metadata": {}});
        assert_eq!(
            coerce_decoded(&mut object, &widget(), DecodeOptions::default()),
            Err(".kind accessor error: 5 is of the type int64, expected string".into())
        );
    }
}
