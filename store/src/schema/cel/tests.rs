//! The behaviour of rules end to end, against the real server's answers
//! (recorded in `apiserver/tests/differential/recorded/crd-cel.json`,
//! `crd-definitions.json`, and taken from kube-apiserver 1.36).

use serde_json::{Value, json};

use super::{Rules, compile};
use crate::machinery::field::{ErrorList, Path};
use crate::schema::Schema;

/// The base path of the schema in the recorded CRDs.
pub(super) fn base() -> Path {
    Path::new(["spec", "validation", "openAPIV3Schema"])
}

/// A root schema with `spec` as given.
pub(super) fn crd(spec: Value) -> Schema {
    Schema::from_json(&json!({"type": "object", "properties": {"spec": spec}}))
}

pub(super) fn errors_of(spec: Value) -> Vec<String> {
    match compile(&crd(spec), &base()) {
        Ok(_) => Vec::new(),
        Err(errors) => errors
            .iter()
            .map(|e| format!("{} | {} | {}", e.kind.reason(), e.field, e.body()))
            .collect(),
    }
}

pub(super) fn rules(spec: Value) -> Rules {
    compile(&crd(spec), &base()).expect("the rules compile")
}

pub(super) fn shown(errors: &ErrorList) -> Vec<String> {
    errors
        .iter()
        .map(|e| format!("{} | {}", e.kind.reason(), e))
        .collect()
}

pub(super) fn object(spec: Value) -> Value {
    json!({"apiVersion": "fid.example.org/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
}

fn one_rule(rule: Value) -> Value {
    json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
           "x-kubernetes-validations": [rule]})
}

const RULE_AT: &str =
    "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]";

#[test]
fn a_syntax_error_is_refused_with_the_parser_message() {
    assert_eq!(
        errors_of(one_rule(json!({"rule": "self.a >"}))),
        [format!(
            "FieldValueInvalid | {RULE_AT}.rule | Invalid value: {{\"Rule\":\"self.a \\u003e\",\"Message\":\"\",\"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}}: compilation failed: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {{'[', '{{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}}\n | self.a >\n | ........^"
        )]
    );
}

#[test]
fn a_field_the_schema_does_not_have_is_refused() {
    assert_eq!(
        errors_of(one_rule(json!({"rule": "self.c > 0"}))),
        [format!(
            "FieldValueInvalid | {RULE_AT}.rule | Invalid value: {{\"Rule\":\"self.c \\u003e 0\",\"Message\":\"\",\"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}}: compilation failed: ERROR: <input>:1:5: undefined field 'c'\n | self.c > 0\n | ....^"
        )]
    );
}

#[test]
fn a_rule_that_is_not_a_bool_is_refused() {
    assert_eq!(
        errors_of(one_rule(json!({"rule": "self.a + 1"}))),
        [format!(
            "FieldValueInvalid | {RULE_AT}.rule | Invalid value: {{\"Rule\":\"self.a + 1\",\"Message\":\"\",\"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}}: cel expression must evaluate to a bool"
        )]
    );
}

#[test]
fn a_message_expression_that_is_not_a_string_is_refused() {
    assert_eq!(
        errors_of(one_rule(
            json!({"rule": "self.a > 0", "messageExpression": "self.a"})
        )),
        [format!(
            "FieldValueInvalid | {RULE_AT}.messageExpression | Invalid value: {{\"Rule\":\"self.a \\u003e 0\",\"Message\":\"\",\"MessageExpression\":\"self.a\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}}: messageExpression must evaluate to a string"
        )]
    );
}

#[test]
fn a_reason_that_is_not_allowed_is_refused() {
    assert_eq!(
        errors_of(one_rule(
            json!({"rule": "self.a > 0", "reason": "Sometimes"})
        )),
        [format!(
            "FieldValueNotSupported | {RULE_AT}.reason | Unsupported value: \"Sometimes\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\""
        )]
    );
}

#[test]
fn a_field_path_the_schema_does_not_have_is_refused() {
    assert_eq!(
        errors_of(one_rule(json!({"rule": "self.a > 0", "fieldPath": ".c"}))),
        [format!(
            "FieldValueInvalid | {RULE_AT}.fieldPath | Invalid value: \".c\": must be a valid path"
        )]
    );
}

#[test]
fn type_errors_are_worded_as_cel_go_words_them() {
    let spec = json!({"type": "object", "properties": {
    "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
    "l": {"type": "array", "items": {"type": "string"}},
    "o": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
    "x-kubernetes-validations": [
        {"rule": "self.i == 1.0"}, {"rule": "foo(1)"}, {"rule": "self.o.b == 1"},
        {"rule": "'abc'.reverse() == 'cba'"}, {"rule": "self.l.all(x, x.foo)"},
        {"rule": "self.s == null"}, {"rule": "self.i in self.l"}, {"rule": "[1, 'a'].size() == 2"},
        {"rule": "self.s.matches('[')"}, {"rule": "duration('1x') > duration('1s')"},
        {"rule": "self.n > 1 && self.o == self.o"},
    ]});
    let details: Vec<String> = errors_of(spec)
        .iter()
        .map(|e| {
            e.split("compilation failed: ")
                .nth(1)
                .unwrap_or(e)
                .to_string()
        })
        .collect();
    assert_eq!(
        details,
        [
            "ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(int, double)'\n | self.i == 1.0\n | .......^",
            "ERROR: <input>:1:4: undeclared reference to 'foo' (in container '')\n | foo(1)\n | ...^",
            "ERROR: <input>:1:7: undefined field 'b'\n | self.o.b == 1\n | ......^",
            "ERROR: <input>:1:14: found no matching overload for 'reverse' applied to 'string.()'\n | 'abc'.reverse() == 'cba'\n | .............^",
            "ERROR: <input>:1:16: type 'string' does not support field selection\n | self.l.all(x, x.foo)\n | ...............^",
            "ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(string, null)'\n | self.s == null\n | .......^",
            "ERROR: <input>:1:8: found no matching overload for '@in' applied to '(int, list(string))'\n | self.i in self.l\n | .......^",
            "ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a'].size() == 2\n | ....^",
            "ERROR: <input>:1:16: invalid matches argument\n | self.s.matches('[')\n | ...............^",
            "ERROR: <input>:1:10: invalid duration argument\n | duration('1x') > duration('1s')\n | .........^",
        ]
    );
}

#[test]
fn literals_and_macros_are_checked_as_the_real_server_checks_them() {
    let spec = json!({"type": "object", "properties": {
    "s": {"type": "string"}, "l": {"type": "array", "items": {"type": "string"}}},
    "x-kubernetes-validations": [
        {"rule": "'%d'.format(['x']) == ''"}, {"rule": "'%s %s'.format(['x']) == ''"},
        {"rule": "'%s is %d'.format([self.s, 1]) != ''"}, {"rule": "duration(0) == duration('0s')"},
        {"rule": "has(self)"}, {"rule": "self.l.all(1, true)"}, {"rule": "self.`s` == ''"},
        {"rule": "self.s == 'é' && self.x == 1"},
    ]});
    let details: Vec<String> = errors_of(spec)
        .iter()
        .map(|e| {
            e.split("compilation failed: ")
                .nth(1)
                .unwrap_or(e)
                .to_string()
        })
        .collect();
    assert_eq!(
        details,
        [
            "ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, was given string\n | '%d'.format(['x']) == ''\n | .............^",
            "ERROR: <input>:1:15: index 1 out of range\n | '%s %s'.format(['x']) == ''\n | ..............^",
            "ERROR: <input>:1:10: invalid duration argument\n | duration(0) == duration('0s')\n | .........^",
            "ERROR: <input>:1:5: invalid argument to has() macro\n | has(self)\n | ....^",
            "ERROR: <input>:1:12: argument must be a simple name\n | self.l.all(1, true)\n | ...........^",
            "ERROR: <input>:1:6: unsupported syntax: '`'\n | self.`s` == ''\n | .....^",
            "ERROR: <input>:1:22: undefined field 'x'\n | self.s == 'é' && self.x == 1\n | ...........．.........^",
        ]
    );
}

#[test]
fn the_root_sees_only_name_and_generate_name_in_metadata() {
    let schema = Schema::from_json(&json!({"type": "object",
        "x-kubernetes-validations": [{"rule": "self.metadata.name == 'x'"}, {"rule": "self.metadata.labels.size() > 0"}]}));
    let errors = compile(&schema, &base()).expect_err("labels are not there");
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].field.to_string(),
        "spec.validation.openAPIV3Schema.x-kubernetes-validations[1].rule"
    );
    assert!(errors[0].detail.ends_with(
        "undefined field 'labels'\n | self.metadata.labels.size() > 0\n | .............^"
    ));
}

#[test]
fn old_self_is_refused_where_no_old_value_correlates() {
    let spec = json!({"type": "object", "properties": {"l": {"type": "array", "items": {
        "type": "object", "properties": {"a": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "self == oldSelf"}, {"rule": "self.a == 'x'", "optionalOldSelf": true}]}}}});
    assert_eq!(
        errors_of(spec),
        [
            "FieldValueInvalid | spec.validation.openAPIV3Schema.properties[spec].properties[l].items.x-kubernetes-validations[0].rule | Invalid value: \"self == oldSelf\": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[spec].properties[l]",
            "FieldValueInvalid | spec.validation.openAPIV3Schema.properties[spec].properties[l].items.x-kubernetes-validations[1].optionalOldSelf | Invalid value: true: may not be set if oldSelf is not used in rule",
        ]
    );
}

#[test]
fn a_rule_on_a_node_without_a_type_is_an_internal_error() {
    let spec = json!({"type": "object", "properties": {"u": {"x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-validations": [{"rule": "self == 1"}]}}});
    assert_eq!(
        errors_of(spec),
        [
            "InternalError | spec.validation.openAPIV3Schema.properties[spec].properties[u].x-kubernetes-validations | Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations"
        ]
    );
}

#[test]
fn rules_that_may_cost_too_much_are_refused_as_the_real_server_estimates_them() {
    let spec = json!({"type": "object", "properties": {
        "us": {"type": "string"}, "ls": {"type": "array", "items": {"type": "string"}},
        "lsb": {"type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 100}}},
        "x-kubernetes-validations": [
            {"rule": "self.lsb.all(x, self.lsb.exists(y, y == x))"},
            {"rule": "self.us.split(',').all(p, p.size() < 3)"},
            {"rule": "format.dns1123Label().validate(self.us).hasValue()"},
            {"rule": "self.ls.all(x, x.matches('^[a-z]+$'))"},
            {"rule": "self.us.matches('^[a-z]+$')"},
            {"rule": "self.us.size() > 0", "messageExpression": "'bad: ' + string(self.lsb.size())"}]});
    let at = |i: usize, field: &str| format!("{RULE_AT_BASE}[{i}].{field}");
    let exceeds = |what: &str, factor: &str| {
        format!(
            "Forbidden: {what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
        )
    };
    let contributed = "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema";
    assert_eq!(
        errors_of(spec),
        [
            format!(
                "FieldValueForbidden | {} | {}",
                at(1, "rule"),
                exceeds("estimated rule cost", "2.0x")
            ),
            format!(
                "FieldValueForbidden | {} | {}",
                at(2, "rule"),
                exceeds("estimated rule cost", "1.006634x")
            ),
            format!(
                "FieldValueForbidden | {} | {}",
                at(3, "rule"),
                exceeds("estimated rule cost", "more than 100x")
            ),
            format!(
                "FieldValueForbidden | {} | {}",
                at(5, "messageExpression"),
                exceeds("estimated messageExpression cost", "more than 100x")
            ),
            format!(
                "FieldValueForbidden | {} | {contributed}",
                at(5, "messageExpression")
            ),
            format!("FieldValueForbidden | {} | {contributed}", at(3, "rule")),
            format!("FieldValueForbidden | {} | {contributed}", at(1, "rule")),
            format!("FieldValueForbidden | {} | {contributed}", at(2, "rule")),
            format!(
                "FieldValueForbidden | spec.validation.openAPIV3Schema | {}",
                exceeds(
                    "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                    "more than 100x"
                )
            ),
        ]
    );
}

const RULE_AT_BASE: &str =
    "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations";

#[test]
fn compiled_rules_can_be_shared_between_threads() {
    fn shared<T: Send + Sync + Clone + 'static>() {}
    shared::<Rules>();
}

#[test]
fn the_fields_of_a_rule_are_checked_before_it_is_compiled() {
    let spec = json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 5}},
        "x-kubernetes-validations": [
            {"rule": ""}, {"rule": "self.a == 'x'", "message": "  "}, {"rule": "self.a ==\n'x'"},
            {"rule": "true", "messageExpression": "  "}, {"rule": "true", "fieldPath": " "},
            {"rule": "true", "fieldPath": ".a\n"}, {"rule": "true", "message": "a\nb"}]});
    let at = |i: usize, field: &str| format!("{RULE_AT_BASE}[{i}].{field}");
    assert_eq!(
        errors_of(spec),
        [
            format!(
                "FieldValueRequired | {} | Required value: rule is not specified",
                at(0, "rule")
            ),
            format!(
                "FieldValueInvalid | {} | Invalid value: \"  \": must be non-empty if specified",
                at(1, "message")
            ),
            format!(
                "FieldValueRequired | {} | Required value: message must be specified if rule contains line breaks",
                at(2, "message")
            ),
            format!(
                "FieldValueRequired | {} | Required value: messageExpression must be non-empty if specified",
                at(3, "messageExpression")
            ),
            format!(
                "FieldValueInvalid | {} | Invalid value: \" \": must be non-empty if specified",
                at(4, "fieldPath")
            ),
            format!(
                "FieldValueInvalid | {} | Invalid value: \" \": must be a valid path",
                at(4, "fieldPath")
            ),
            format!(
                "FieldValueInvalid | {} | Invalid value: \".a\\n\": must not contain line breaks",
                at(5, "fieldPath")
            ),
            format!(
                "FieldValueInvalid | {} | Invalid value: \".a\\n\": must be a valid path",
                at(5, "fieldPath")
            ),
            format!(
                "FieldValueInvalid | {} | Invalid value: \"a\\nb\": must not contain line breaks",
                at(6, "message")
            ),
        ]
    );
}
