//! The evaluation of rules end to end, against the real server's answers:
//! messages, reasons, field paths, transition rules, ratcheting, and what
//! the functions of the libraries give.

use serde_json::{Value, json};

use super::tests::{base, crd, object, rules, shown};
use super::{Rules, compile};
use crate::schema::Schema;

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
    let tree = super::tree::runtime_tree(&schema).ok_or("no rules")?;
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
fn calls_no_overload_accepts_at_run_time_are_worded_as_cel_go_words_them() {
    let spec = json!({"type": "object", "properties": {"ios": {"x-kubernetes-int-or-string": true}},
        "x-kubernetes-validations": [
            {"rule": "self.ios.size() > 0"}, {"rule": "self.ios.lowerAscii() == 'a'"},
            {"rule": "self.ios.contains('a')"}, {"rule": "self.ios.split(',').size() > 0"},
            {"rule": "self.ios + 'a' == 'b'"}, {"rule": "self.ios.getHours() > 0"}]});
    let schema = crd(spec);
    let tree = super::tree::runtime_tree(&schema).expect("rules");
    let rules = Rules {
        tree: Some(std::sync::Arc::new((tree, schema))),
    };
    let detail = |what: &str, rule: &str| {
        format!(
            "FieldValueInvalid | spec: Invalid value: \"object\": '{what}': call arguments did not match a supported operator, function or macro signature for rule: {rule}"
        )
    };
    assert_eq!(
        shown(&rules.validate(&object(json!({"ios": 5})), None)),
        [
            detail("no such overload: size", "self.ios.size() > 0"),
            detail(
                "no such overload: lowerAscii(int)",
                "self.ios.lowerAscii() == 'a'"
            ),
            detail("no such overload", "self.ios.contains('a')"),
            detail(
                "no such overload: split(int, string)",
                "self.ios.split(',').size() > 0"
            ),
            detail("no such overload", "self.ios + 'a' == 'b'"),
            detail("no such overload: getHours(int)", "self.ios.getHours() > 0"),
        ]
    );
}

#[test]
fn unknown_fields_count_when_objects_are_compared() {
    let spec = json!({"type": "object", "properties": {"raw": {"type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "raw is immutable"}]}}});
    let rules = rules(spec);
    let old = object(json!({"raw": {"a": 1}}));
    assert!(rules.validate(&old, Some(&old)).is_empty());
    assert_eq!(
        shown(&rules.validate(&object(json!({"raw": {"a": 2}})), Some(&old))),
        ["FieldValueInvalid | spec.raw: Invalid value: raw is immutable"]
    );
}
