//! The checks of a CRD's `x-kubernetes-validations` when the CRD is
//! created or updated, as `ValidateCustomResourceDefinitionOpenAPISchema`
//! makes them (`apis/apiextensions/validation/validation.go`): each rule's
//! fields ([`rulefields`](super::rulefields)), then, where the schema
//! around it is sound, its compilation and the estimate of its cost.

use serde_json::Value;

use super::rule;
use super::rulefields::rule_field_errors;
use super::sizes::{bounds, cardinality_from_size, max_elements};
use super::tree::self_type_name;
use super::types::decl_type;
use crate::go::json::encode::go_json;
use crate::machinery::field::{BadValue, ErrorList, ErrorType, FieldError, Path};
use crate::schema::{Rule, Schema};

/// The rule as the error shows it: Go's JSON of the internal
/// `ValidationRule`, its fields in declaration order.
fn rule_value(rule: &Rule) -> String {
    let text = |s: Option<&str>| go_json(&Value::String(s.unwrap_or_default().to_string()));
    let reason = rule
        .reason
        .as_deref()
        .map_or("null".to_string(), |r| text(Some(r)));
    let old = rule
        .optional_old_self
        .map_or("null".to_string(), |b| b.to_string());
    format!(
        "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{reason},\"FieldPath\":{},\"OptionalOldSelf\":{old}}}",
        text(Some(&rule.rule)),
        text(rule.message.as_deref()),
        text(rule.message_expression.as_deref()),
        text(rule.field_path.as_deref()),
    )
}

/// `field.Invalid(path, rule, detail)`: the rule printed as Go prints the
/// struct, which a JSON value with sorted keys cannot do, so it is written
/// into the message after the words `Invalid value`.
fn invalid_rule(path: &Path, rule: &Rule, detail: &str) -> FieldError {
    FieldError {
        kind: ErrorType::Invalid,
        field: path.clone(),
        value: BadValue::Omit,
        detail: format!("{}: {detail}", rule_value(rule)),
    }
}

/// Where a walk stands in the schema.
#[derive(Clone)]
struct Context {
    /// Rules are compiled here (not inside `allOf`, `anyOf`, `oneOf`,
    /// `not`).
    compile: bool,
    /// The node is the root of the schema.
    root: bool,
    /// The highest node above whose values cannot be correlated with
    /// their old values (`oldSelf` is refused below it).
    uncorrelatable: Option<Path>,
    /// The most times the node can occur in an object, if bounded.
    cardinality: Option<u64>,
}

impl Context {
    /// The context of a child of `parent` (`childContext`).
    fn child(&self, parent: &Schema) -> Context {
        let mut next = self.clone();
        next.root = false;
        next.cardinality = self
            .cardinality
            .zip(max_elements(parent))
            .map(|(c, m)| c.saturating_mul(m));
        next
    }

    /// The context of a child whose values do not correlate with old ones.
    fn uncorrelated(&self, parent: &Schema, path: &Path) -> Context {
        let mut next = self.child(parent);
        if next.uncorrelatable.is_none() {
            next.uncorrelatable = Some(path.clone());
        }
        next
    }
}

/// The per-expression cost limit (`StaticEstimatedCostLimit`).
const COST_LIMIT: u64 = 10_000_000;
/// The limit of all of a CRD's rules (`StaticEstimatedCRDCostLimit`).
const CRD_COST_LIMIT: u64 = 100_000_000;

/// `getCostErrorMessage`.
fn cost_message(name: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let shown = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{name} exceeds budget by factor of {shown} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The errors of a CRD's rules, schema errors first, then compilation
/// errors (`OpenAPISchemaErrorList.AllErrors`).
#[derive(Default)]
pub(crate) struct Errors {
    schema: ErrorList,
    cel: ErrorList,
    /// The fields of the schema's other errors (its keywords'): the rules
    /// of a node with one at or beneath it are not compiled.
    blocked: Vec<String>,
    total: u64,
    most_expensive: Vec<(Path, u64)>,
}

impl Errors {
    /// Whether another error is at `path` or beneath it.
    fn blocked_at(&self, path: &Path) -> bool {
        let at = path.to_string();
        self.blocked.iter().any(|field| {
            field
                .strip_prefix(&at)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        })
    }

    /// All of them, the schema's total cost last
    /// (`ValidateCustomResourceDefinition`).
    pub fn all(self, base: &Path) -> ErrorList {
        let mut all = self.schema;
        all.extend(self.cel);
        if self.total > CRD_COST_LIMIT {
            for (path, _) in &self.most_expensive {
                all.push(FieldError::forbidden(
                    path,
                    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
                ));
            }
            all.push(FieldError::forbidden(
                base,
                cost_message(
                    "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                    self.total,
                    CRD_COST_LIMIT,
                ),
            ));
        }
        all
    }

    /// Counts an expression's cost towards the CRD's total
    /// (`ObserveExpressionCost`).
    fn observe(&mut self, path: Path, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < CRD_COST_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path, cost));
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }
}

/// Checks the rules of `schema` (at `path`) and of the nodes below it.
pub(crate) fn check_schema(schema: &Schema, path: &Path, others: &ErrorList) -> Errors {
    let mut errors = Errors {
        blocked: others.iter().map(|e| e.field.to_string()).collect(),
        ..Errors::default()
    };
    let context = Context {
        compile: true,
        root: true,
        uncorrelatable: None,
        cardinality: Some(1),
    };
    walk(schema, path, &context, &mut errors);
    errors
}

fn walk(schema: &Schema, path: &Path, context: &Context, errors: &mut Errors) {
    let schema_errors_before = errors.schema.len();
    if let Some(values) = schema.additional_schema() {
        let sub = context.child(schema);
        walk(values, &path.child("additionalProperties"), &sub, errors);
    }
    let correlatable = matches!(
        schema.map_type.as_deref(),
        None | Some("granular" | "atomic")
    );
    for (name, property) in &schema.properties {
        let sub = if correlatable {
            context.child(schema)
        } else {
            context.uncorrelated(schema, path)
        };
        walk(property, &path.child("properties").key(name), &sub, errors);
    }
    let nested = Context {
        compile: false,
        ..context.child(schema)
    };
    if let Some(not) = schema.not.as_deref() {
        walk(not, &path.child("not"), &nested, errors);
    }
    for (word, list) in [
        ("allOf", &schema.all_of),
        ("oneOf", &schema.one_of),
        ("anyOf", &schema.any_of),
    ] {
        for (i, entry) in list.iter().enumerate() {
            walk(entry, &path.child(word).index(i), &nested, errors);
        }
    }
    if let Some(items) = schema.items.as_deref() {
        let sub = if schema.list_type.as_deref() == Some("map") {
            context.child(schema)
        } else {
            context.uncorrelated(schema, path)
        };
        walk(items, &path.child("items"), &sub, errors);
    }
    if schema.validations.is_empty() {
        return;
    }
    let rules_path = path.child("x-kubernetes-validations");
    for (i, rule) in schema.validations.iter().enumerate() {
        let at = rules_path.index(i);
        rule_field_errors(rule, schema, &at, &mut errors.schema);
    }
    if errors.schema.len() > schema_errors_before || !context.compile || errors.blocked_at(path) {
        return;
    }
    let embedded = context.root || schema.embedded_resource;
    let Some(ty) = decl_type(schema, embedded, &self_type_name()) else {
        errors.cel.push(FieldError::internal(
            &rules_path,
            "internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations",
        ));
        return;
    };
    let bounds = bounds(schema, embedded).unwrap_or_default();
    let cardinality = context
        .cardinality
        .unwrap_or_else(|| cardinality_from_size(bounds.min));
    for (i, rule) in schema.validations.iter().enumerate() {
        let at = rules_path.index(i);
        let compiled = rule::compile(rule, &ty, schema, Some(&bounds));
        let cost = compiled.cost.saturating_mul(cardinality);
        if cost > COST_LIMIT {
            errors.cel.push(FieldError::forbidden(
                &at.child("rule"),
                cost_message("estimated rule cost", cost, COST_LIMIT),
            ));
        }
        errors.observe(at.child("rule"), cost);
        if let Some(error) = &compiled.error {
            errors
                .cel
                .push(invalid_rule(&at.child("rule"), rule, error));
        }
        if let Some(error) = &compiled.message_error {
            errors
                .cel
                .push(invalid_rule(&at.child("messageExpression"), rule, error));
        } else if compiled.message.is_some() {
            if compiled.message_cost > COST_LIMIT {
                errors.cel.push(FieldError::forbidden(
                    &at.child("messageExpression"),
                    cost_message(
                        "estimated messageExpression cost",
                        compiled.message_cost,
                        COST_LIMIT,
                    ),
                ));
            }
            errors.observe(at.child("messageExpression"), compiled.message_cost);
        }
        if compiled.uses_old_self {
            if let Some(within) = &context.uncorrelatable {
                errors.cel.push(FieldError::invalid(
                    &at.child("rule"),
                    rule.rule.as_str(),
                    format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"),
                ));
            }
        } else if let Some(optional) = rule.optional_old_self {
            errors.cel.push(FieldError::invalid(
                &at.child("optionalOldSelf"),
                Value::Bool(optional),
                "may not be set if oldSelf is not used in rule",
            ));
        }
    }
}
