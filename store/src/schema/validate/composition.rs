//! kube-openapi's `schemaPropsValidator` (`validate/schema_props.go`):
//! `allOf`, `anyOf`, `oneOf` and `not`. Each branch is validated at the
//! node's own path, without ratcheting. A failing `anyOf` or `oneOf`
//! reports, besides its own error, the errors of the branch with the
//! highest match count (the first of equals).

use serde_json::Value;

use super::result::GoResult;
use super::{errors, schema};
use crate::schema::Schema;

/// Validates the composition keywords of `schema`.
pub(crate) fn validate(schema: &Schema, path: &str, data: &Value) -> GoResult {
    let mut main = GoResult::new();
    let mut keep_any_of = GoResult::new();
    let mut keep_one_of = GoResult::new();
    let mut keep_all_of = GoResult::new();
    let branch = |s: &Schema| schema::validate(s, path, data, None);

    if !schema.any_of.is_empty() {
        let mut best: Option<GoResult> = None;
        let mut first_success: Option<GoResult> = None;
        let mut succeeded = false;
        for sub in &schema.any_of {
            let result = branch(sub);
            keep_any_of.merge(result.keep_relevant());
            if result.is_valid() {
                best = None;
                succeeded = true;
                first_success.get_or_insert(result);
                keep_any_of = GoResult::new();
                break;
            }
            if best
                .as_ref()
                .is_none_or(|b| result.match_count > b.match_count)
            {
                best = Some(result);
            }
        }
        if !succeeded {
            main.add(errors::at_least_one(path));
        }
        if let Some(best) = best {
            main.merge(best);
        } else if let Some(success) = first_success {
            main.merge(success);
        }
    }

    if !schema.one_of.is_empty() {
        let mut best: Option<GoResult> = None;
        let mut first_success: Option<GoResult> = None;
        let mut validated = 0;
        for sub in &schema.one_of {
            let result = branch(sub);
            keep_one_of.merge(result.keep_relevant());
            if result.is_valid() {
                validated += 1;
                best = None;
                keep_one_of = GoResult::new();
                first_success.get_or_insert(result);
                continue;
            }
            if validated == 0
                && best
                    .as_ref()
                    .is_none_or(|b| result.match_count > b.match_count)
            {
                best = Some(result);
            }
        }
        if validated != 1 {
            let additional = if validated == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {validated} valid alternatives")
            };
            main.add(errors::only_one(path, &additional));
            if let Some(best) = best {
                main.merge(best);
            }
        } else if let Some(success) = first_success {
            main.merge(success);
        }
    }

    if !schema.all_of.is_empty() {
        let mut validated = 0;
        for sub in &schema.all_of {
            let result = branch(sub);
            keep_all_of.merge(result.keep_relevant());
            if result.is_valid() {
                validated += 1;
            }
            main.merge(result);
        }
        if validated != schema.all_of.len() {
            let additional = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            main.add(errors::all_of(path, additional));
        }
    }

    if let Some(not) = &schema.not
        && branch(not).is_valid()
    {
        main.add(errors::must_not(path));
    }

    main.inc();
    main.merge(keep_all_of);
    main.merge(keep_one_of);
    main.merge(keep_any_of);
    main
}

#[cfg(test)]
mod tests {
    use super::super::validate as validate_object;
    use crate::schema::Schema;
    use serde_json::{Value, json};

    fn messages(schema: &Value, object: Value) -> Vec<String> {
        let schema = Schema::from_json(schema);
        let mut m: Vec<String> = validate_object(&schema, &object)
            .iter()
            .map(ToString::to_string)
            .collect();
        m.sort();
        m
    }

    #[test]
    fn one_of_needs_exactly_one_branch() {
        let schema = json!({"type": "object", "properties": {"one": {
            "type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}}});
        assert_eq!(
            messages(&schema, json!({"one": {}})),
            [
                "<nil>: Invalid value: \"\": \"one\" must validate one and only one schema (oneOf). Found none valid",
                "one.a: Required value",
            ]
        );
        assert_eq!(
            messages(&schema, json!({"one": {"a": "x", "b": "y"}})),
            [
                "<nil>: Invalid value: \"\": \"one\" must validate one and only one schema (oneOf). Found 2 valid alternatives"
            ]
        );
        assert!(messages(&schema, json!({"one": {"b": "y"}})).is_empty());
    }

    #[test]
    fn not_refuses_what_its_schema_accepts() {
        let schema = json!({"type": "object", "properties": {"neg": {"type": "string", "not": {"enum": ["x"]}}}});
        assert_eq!(
            messages(&schema, json!({"neg": "x"})),
            ["<nil>: Invalid value: \"\": \"neg\" must not validate the schema (not)"]
        );
        assert!(messages(&schema, json!({"neg": "y"})).is_empty());
    }

    #[test]
    fn all_of_reports_every_branch() {
        let schema = json!({"type": "object", "properties": {"all": {"type": "integer",
            "allOf": [{"minimum": 5}, {"maximum": 3}]}}});
        assert_eq!(
            messages(&schema, json!({"all": 6})),
            [
                "<nil>: Invalid value: \"\": \"all\" must validate all the schemas (allOf)",
                "all: Invalid value: 6: all in body should be less than or equal to 3",
            ]
        );
        assert_eq!(
            messages(&schema, json!({"all": 4})),
            [
                "<nil>: Invalid value: \"\": \"all\" must validate all the schemas (allOf). None validated",
                "all: Invalid value: 4: all in body should be greater than or equal to 5",
                "all: Invalid value: 4: all in body should be less than or equal to 3",
            ]
        );
    }

    #[test]
    fn any_of_reports_the_branch_with_the_most_passed_checks() {
        // A format-only branch runs the type check, so it outweighs a
        // branch with only a bound (as a real server answers).
        let schema = json!({"type": "object", "properties": {"untyped": {
            "x-kubernetes-preserve-unknown-fields": true,
            "anyOf": [{"format": "uuid"}, {"maximum": 3}]}}});
        assert_eq!(
            messages(&schema, json!({"untyped": 5})),
            [
                "<nil>: Invalid value: \"\": \"untyped\" must validate at least one schema (anyOf)",
                "untyped: Invalid value: \"int64\": untyped in body must be of type uuid: \"int64\"",
            ]
        );
        assert!(messages(&schema, json!({"untyped": true})).is_empty());
    }
}
