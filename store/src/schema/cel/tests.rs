//! The behaviour of rules end to end, against the real server's answers
//! (recorded in `apiserver/tests/differential/recorded/crd-cel.json`,
//! `crd-definitions.json`, and taken from kube-apiserver 1.36).

use serde_json::{Value, json};

use super::{Rules, compile};
use crate::field::{ErrorList, Path};
use crate::schema::Schema;

/// The base path of the schema in the recorded CRDs.
fn base() -> Path {
    Path::new(["spec", "validation", "openAPIV3Schema"])
}

/// A root schema with `spec` as given.
fn crd(spec: Value) -> Schema {
    Schema::from_json(&json!({"type": "object", "properties": {"spec": spec}}))
}

fn errors_of(spec: Value) -> Vec<String> {
    match compile(&crd(spec), &base()) {
        Ok(_) => Vec::new(),
        Err(errors) => errors
            .iter()
            .map(|e| format!("{} | {} | {}", e.kind.reason(), e.field, e.body()))
            .collect(),
    }
}

fn rules(spec: Value) -> Rules {
    compile(&crd(spec), &base()).expect("the rules compile")
}

fn shown(errors: &ErrorList) -> Vec<String> {
    errors
        .iter()
        .map(|e| format!("{} | {}", e.kind.reason(), e))
        .collect()
}

fn object(spec: Value) -> Value {
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

fn widget_spec() -> Value {
    json!({"type": "object", "required": ["size"],
        "x-kubernetes-validations": [
            {"rule": "self.minReplicas <= self.maxReplicas", "message": "minReplicas must not exceed maxReplicas"},
            {"rule": "!has(self.owner) || self.owner.startsWith('team-')",
             "messageExpression": "'owner ' + self.owner + ' is not a team'", "reason": "FieldValueForbidden", "fieldPath": ".owner"}],
        "properties": {
            "size": {"type": "string"}, "owner": {"type": "string"},
            "minReplicas": {"type": "integer", "default": 1}, "maxReplicas": {"type": "integer", "default": 3},
            "frozen": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "frozen is immutable"}]}}})
}

#[test]
fn a_failing_rule_refuses_with_its_message_and_no_value_for_an_object() {
    let rules = rules(widget_spec());
    let errors = rules.validate(
        &object(json!({"size": "small", "minReplicas": 5, "maxReplicas": 2})),
        None,
    );
    assert_eq!(
        shown(&errors),
        ["FieldValueInvalid | spec: Invalid value: minReplicas must not exceed maxReplicas"]
    );
    assert!(
        rules
            .validate(
                &object(json!({"size": "small", "minReplicas": 1, "maxReplicas": 2})),
                None
            )
            .is_empty()
    );
}

#[test]
fn message_expression_reason_and_field_path_shape_the_error() {
    let rules = rules(widget_spec());
    let errors = rules.validate(
        &object(json!({"size": "small", "owner": "bob", "minReplicas": 9, "maxReplicas": 1})),
        None,
    );
    assert_eq!(
        shown(&errors),
        [
            "FieldValueInvalid | spec: Invalid value: minReplicas must not exceed maxReplicas",
            "FieldValueForbidden | spec.owner: Forbidden: owner bob is not a team",
        ]
    );
}

#[test]
fn a_transition_rule_runs_only_against_an_old_value() {
    let rules = rules(widget_spec());
    let ice = object(json!({"size": "small", "minReplicas": 1, "maxReplicas": 2, "frozen": "ice"}));
    let water =
        object(json!({"size": "small", "minReplicas": 1, "maxReplicas": 2, "frozen": "water"}));
    let none = object(json!({"size": "small", "minReplicas": 1, "maxReplicas": 2}));
    assert!(rules.validate(&ice, None).is_empty(), "not on create");
    assert!(
        rules.validate(&ice, Some(&none)).is_empty(),
        "not when the field is added"
    );
    assert!(
        rules.validate(&ice, Some(&ice)).is_empty(),
        "the same value passes"
    );
    assert_eq!(
        shown(&rules.validate(&water, Some(&ice))),
        ["FieldValueInvalid | spec.frozen: Invalid value: \"water\": frozen is immutable"]
    );
}

#[test]
fn errors_of_unchanged_values_are_dropped_on_update() {
    let rules = rules(widget_spec());
    let bad = object(json!({"size": "small", "minReplicas": 5, "maxReplicas": 2}));
    let mut relabelled = bad.clone();
    relabelled["metadata"]["labels"] = json!({"a": "b"});
    assert!(rules.validate(&relabelled, Some(&bad)).is_empty());
    let worse = object(json!({"size": "small", "minReplicas": 6, "maxReplicas": 2}));
    assert_eq!(rules.validate(&worse, Some(&bad)).len(), 1);
}

#[test]
fn evaluation_errors_name_the_schema_type_and_the_rule() {
    let spec = json!({"type": "object", "properties": {"a": {"type": "integer"}, "x": {"type": "integer"},
        "l": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 3", "reason": "FieldValueDuplicate"}]}},
        "m": {"type": "object", "additionalProperties": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 10", "messageExpression": "'too big'"}]}}},
        "x-kubernetes-validations": [
            {"rule": "self.x == 1"}, {"rule": "self.l[4] == 'x'"},
            {"rule": "self.a < 5", "reason": "FieldValueRequired", "fieldPath": ".a"},
            {"rule": "self.a < 3", "messageExpression": "'x\\ny'"}, {"rule": "self.a < 3", "messageExpression": "'  '"},
            {"rule": "self.a < 2", "messageExpression": "self.l[9]"}, {"rule": "self.a < 1", "message": "  spaced  "},
            {"rule": "1/(self.a-7) == 1"}]});
    let errors = rules(spec).validate(
        &object(json!({"a": 7, "l": ["abcd", "b"], "m": {"k1": 11, "k2": 2}})),
        None,
    );
    assert_eq!(
        shown(&errors),
        [
            "FieldValueInvalid | spec: Invalid value: \"object\": no such key: x evaluating rule: self.x == 1",
            "FieldValueInvalid | spec: Invalid value: \"object\": index out of bounds: 4 evaluating rule: self.l[4] == 'x'",
            "FieldValueRequired | spec.a: Required value: failed rule: self.a < 5",
            "FieldValueInvalid | spec: Invalid value: failed rule: self.a < 3",
            "FieldValueInvalid | spec: Invalid value: failed rule: self.a < 3",
            "FieldValueInvalid | spec: Invalid value: failed rule: self.a < 2",
            "FieldValueInvalid | spec: Invalid value: spaced",
            "FieldValueInvalid | spec: Invalid value: \"object\": division by zero evaluating rule: 1/(self.a-7) == 1",
            "FieldValueDuplicate | spec.l[0]: Duplicate value: \"abcd\"",
            "FieldValueInvalid | spec.m[k1]: Invalid value: 11: too big",
        ]
    );
}

#[test]
fn a_root_rule_points_at_no_field() {
    let schema = Schema::from_json(&json!({"type": "object",
        "x-kubernetes-validations": [{"rule": "self.metadata.name == 'y'"}]}));
    let rules = compile(&schema, &base()).expect("compiles");
    assert_eq!(
        shown(&rules.validate(&object(json!({})), None)),
        ["FieldValueInvalid | <nil>: Invalid value: failed rule: self.metadata.name == 'y'"]
    );
}

/// Compiles `rule` on an object node and runs it: `Ok` when it holds.
/// The CRD's cost limits are left out: these rules are about what
/// functions do.
fn holds(rule: &str) -> Result<(), String> {
    let spec = json!({"type": "object", "properties": {"s": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": rule}]});
    let schema = crd(spec);
    let tree = super::compile::runtime_tree(&schema).ok_or("no rules")?;
    if let Some(error) = tree.properties["spec"].rules[0].error.clone() {
        return Err(error);
    }
    let rules = Rules {
        tree: Some(std::sync::Arc::new((tree, schema))),
    };
    let errors = rules.validate(&object(json!({"s": "x"})), None);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(shown(&errors).join("\n"))
    }
}

fn all_hold(rules: &[&str]) {
    let failures: Vec<String> = rules
        .iter()
        .filter_map(|r| holds(r).err().map(|e| format!("{r}\n    {e}")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_string_functions_work() {
    all_hold(&[
        "'TacoCat'.lowerAscii() == 'tacocat' && 'a'.upperAscii() == 'A'",
        "'hello'.replace('l', 'L') == 'heLLo' && 'hello'.replace('l', 'L', 1) == 'heLlo'",
        "'a,b,c'.split(',') == ['a', 'b', 'c'] && 'a,b,c'.split(',', 2) == ['a', 'b,c']",
        "['a', 'b'].join('-') == 'a-b' && ['a', 'b'].join() == 'ab'",
        "'hello'.substring(1) == 'ello' && 'hello'.substring(1, 3) == 'el' && '  x '.trim() == 'x'",
        "'hello'.indexOf('l') == 2 && 'hello'.indexOf('l', 3) == 3 && 'hello'.lastIndexOf('l') == 3",
        "'hello'.charAt(1) == 'e' && '%s is %d'.format(['x', 1]) == 'x is 1'",
        "strings.quote('a') == '\"a\"'",
        "'abc'.matches('^a') && matches('abc', 'c$') && 'abc'.startsWith('a') && 'abc'.endsWith('c') && 'abc'.contains('b')",
        "size('abc') == 3 && 'abc'.size() == 3 && self.s.size() == 1",
        "'abc123'.find('[0-9]+') == '123' && 'a1b2'.findAll('[0-9]') == ['1', '2'] && 'a1b2'.findAll('[0-9]', 1) == ['1']",
    ]);
}

#[test]
fn the_list_functions_work() {
    all_hold(&[
        "[1, 2, 3].isSorted() && ![2, 1].isSorted()",
        "[1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0 && [duration('1s'), duration('2s')].sum() == duration('3s')",
        "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3 && ['b', 'a'].min() == 'a'",
        "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2 && [1].indexOf(5) == -1",
        "[1, 2, 3, 4].slice(1, 3) == [2, 3] && [[1], [2, 3]].flatten() == [1, 2, 3]",
        "[3, 1, 2].sort() == [1, 2, 3] && [1, 2, 3].reverse() == [3, 2, 1] && [1, 1, 2].distinct() == [1, 2]",
        "lists.range(3) == [0, 1, 2] && [{'a': 2}, {'a': 1}].sortBy(x, x.a)[0].a == 1",
        "[1, 2].first().value() == 1 && [1, 2].last().value() == 2",
        "optional.unwrap([optional.of(1), optional.none()]) == [1] && [optional.of(1)].unwrapOpt() == [1]",
        "sets.contains([1, 2, 3], [2, 3]) && sets.equivalent([1, 2], [2, 1, 1]) && sets.intersects([1], [1, 2])",
        "[1, 2, 3].all(x, x > 0) && [1, 2].exists(x, x == 2) && [1, 2].exists_one(x, x == 2) && [1, 2].existsOne(x, x == 1)",
        "[1, 2].map(x, x * 2) == [2, 4] && [1, 2, 3].filter(x, x > 1) == [2, 3] && [1, 2, 3].map(x, x > 1, x * 2) == [4, 6]",
        "{'a': 1}.all(k, k == 'a') && 'a' in {'a': 1} && 1 in [1, 2] && size([1]) == 1",
    ]);
}

#[test]
fn optionals_conversions_and_times_work() {
    all_hold(&[
        "optional.of(1).value() == 1 && optional.none().orValue(2) == 2 && optional.of(1).or(optional.of(2)).value() == 1",
        "{'a': 1}.?a.value() == 1 && !{'a': 1}.?b.hasValue() && !optional.ofNonZeroValue(0).hasValue()",
        "optional.of(2).optMap(x, x * 2).value() == 4",
        "int('12') == 12 && double('1.5') == 1.5 && string(12) == '12' && uint(1) == 1u && bool('true')",
        "duration('1h') == duration('60m') && duration('90m').getHours() == 1",
        "timestamp('2020-01-01T00:00:00Z').getFullYear() == 2020",
        "timestamp('2020-01-01T00:00:00Z') + duration('24h') == timestamp('2020-01-02T00:00:00Z')",
        "type(1) == int && type('a') == string && dyn(1) == 1 && bytes('abc') == b'abc' && 1 < 1.5 && 2u > 1",
    ]);
}

#[test]
fn the_kubernetes_libraries_work() {
    all_hold(&[
        "quantity('1Gi').isGreaterThan(quantity('1G')) && quantity('500m').compareTo(quantity('0.5')) == 0",
        "quantity('2k').asInteger() == 2000 && quantity('1.5').asApproximateFloat() == 1.5",
        "quantity('1').add(quantity('500m')) == quantity('1500m') && quantity('1').sub(1).isInteger()",
        "isQuantity('1Gi') && !isQuantity('1Gb') && sign(quantity('-1')) == -1",
        "isIP('10.0.0.1') && ip('10.0.0.1').family() == 4 && ip('::1').isLoopback()",
        "cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",
        "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.0.0.0/8').prefixLength() == 8",
        "string(ip('10.0.0.1')) == '10.0.0.1' && string(cidr('10.0.0.0/8')) == '10.0.0.0/8'",
        "ip.isCanonical('10.0.0.1') && cidr('10.0.0.0/8').ip() == ip('10.0.0.0')",
        "ip('169.254.1.1').isLinkLocalUnicast() && ip('224.0.0.1').isLinkLocalMulticast() && ip('8.8.8.8').isGlobalUnicast() && ip('0.0.0.0').isUnspecified()",
        "url('https://example.com:80/path?a=b').getHost() == 'example.com:80' && url('https://example.com:80/path').getHostname() == 'example.com'",
        "url('https://example.com:80/').getPort() == '80' && url('https://x/a%20b').getEscapedPath() == '/a%20b'",
        "url('https://x/?a=1').getQuery()['a'] == ['1'] && url('https://x').getScheme() == 'https' && isURL('https://x') && !isURL('x')",
        "!format.dns1123Label().validate('my-name').hasValue() && format.dns1123Label().validate('A').hasValue()",
        "format.named('uuid').hasValue() && !format.named('nope').hasValue()",
        "format.named('uuid').value().validate('x').value() == ['does not match the UUID format']",
        "semver('1.2.3').isLessThan(semver('1.10.0')) && semver('1.2.3').major() == 1 && semver('v1.2', true).minor() == 2",
        "isSemver('1.0.0') && !isSemver('1.0') && semver('1.2.3').compareTo(semver('1.2.3')) == 0 && semver('1.2.3').patch() == 3",
    ]);
}

#[test]
fn two_variable_comprehensions_work() {
    all_hold(&[
        "[10, 20].all(i, v, v == (i + 1) * 10) && {'a': 1}.all(k, v, k == 'a' && v == 1)",
        "[1, 2].exists(i, v, i == 1 && v == 2) && [1, 2].existsOne(i, v, v > 1)",
        "[1, 2].transformList(i, v, i + v) == [1, 3] && [1, 2, 3].transformList(i, v, v > 1, v * 2) == [4, 6]",
        "{'a': 1}.transformMap(k, v, v + 1) == {'a': 2} && [5].transformMap(i, v, v) == {0: 5}",
        "{'a': 1, 'b': 2}.transformMap(k, v, v > 1, v) == {'b': 2}",
        "{'a': 1}.transformMapEntry(k, v, {k + 'x': v}) == {'ax': 1}",
    ]);
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
        format!("Forbidden: {what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
    };
    let contributed = "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema";
    assert_eq!(
        errors_of(spec),
        [
            format!("FieldValueForbidden | {} | {}", at(1, "rule"), exceeds("estimated rule cost", "2.0x")),
            format!("FieldValueForbidden | {} | {}", at(2, "rule"), exceeds("estimated rule cost", "1.006634x")),
            format!("FieldValueForbidden | {} | {}", at(3, "rule"), exceeds("estimated rule cost", "more than 100x")),
            format!(
                "FieldValueForbidden | {} | {}",
                at(5, "messageExpression"),
                exceeds("estimated messageExpression cost", "more than 100x")
            ),
            format!("FieldValueForbidden | {} | {contributed}", at(5, "messageExpression")),
            format!("FieldValueForbidden | {} | {contributed}", at(3, "rule")),
            format!("FieldValueForbidden | {} | {contributed}", at(1, "rule")),
            format!("FieldValueForbidden | {} | {contributed}", at(2, "rule")),
            format!(
                "FieldValueForbidden | spec.validation.openAPIV3Schema | {}",
                exceeds("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", "more than 100x")
            ),
        ]
    );
}

const RULE_AT_BASE: &str = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations";
