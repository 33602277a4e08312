//! The evaluation of compiled rules against an object, as the real
//! server's `Validator.Validate` does it (`apiserver/schema/cel/
//! validation.go`): every non-null value with rules, its old value where
//! one correlates (map keys, map-list keys), transition rules only then
//! (or with `optionalOldSelf`), errors of unchanged values dropped on
//! update (ratcheting, `common/equality.go`), and each error worded as the
//! real server words it.

use cel::common::types::CelOptional;
use cel::{Context, Value as CelResult};
use serde_json::Value;

use super::env::ENV;
use super::render::runtime_message;
use super::rule::Compiled;
use super::tree::Node;
use super::values::{CelValue, to_cel};
use crate::machinery::field::{BadValue, ErrorList, FieldError, Path};
use crate::schema::Schema;

/// The longest message a messageExpression may give.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// A value and its old value, under their schema (`CorrelatedObject`).
#[derive(Clone, Copy)]
struct Pair<'a> {
    new: &'a Value,
    old: &'a Value,
    schema: &'a Schema,
}

impl<'a> Pair<'a> {
    fn key(self, field: &str) -> Option<Pair<'a>> {
        let (Value::Object(new), Value::Object(old)) = (self.new, self.old) else {
            return None;
        };
        let schema = self
            .schema
            .properties
            .get(field)
            .or_else(|| self.schema.additional_schema())?;
        Some(Pair {
            new: new.get(field)?,
            old: old.get(field)?,
            schema,
        })
    }

    fn index(self, i: usize) -> Option<Pair<'a>> {
        let (Value::Array(new), Value::Array(old)) = (self.new, self.old) else {
            return None;
        };
        if self.schema.list_type.as_deref() != Some("map") {
            return None;
        }
        let item = new.get(i)?;
        Some(Pair {
            new: item,
            old: map_list_get(self.schema, old, item)?,
            schema: self.schema.items.as_deref()?,
        })
    }

    /// Whether the value is unchanged (`CachedDeepEqual`).
    fn unchanged(self) -> bool {
        match (self.new, self.old) {
            (Value::Null, Value::Null) => true,
            (Value::Array(new), Value::Array(old)) => {
                if new.len() != old.len() {
                    return false;
                }
                let map_list = self.schema.list_type.as_deref() == Some("map");
                (0..new.len()).all(|i| match self.index(i) {
                    Some(child) => child.unchanged(),
                    None => !map_list && new == old,
                })
            }
            (Value::Object(new), Value::Object(old)) => {
                new.len() == old.len()
                    && new.keys().all(|k| self.key(k).is_some_and(Pair::unchanged))
            }
            (new, old) => new == old,
        }
    }
}

/// The old item of a map-list with the keys of `item`.
fn map_list_get<'a>(schema: &Schema, old: &'a [Value], item: &Value) -> Option<&'a Value> {
    if schema.list_type.as_deref() != Some("map") {
        return None;
    }
    let key = |v: &Value| -> Vec<Value> {
        schema
            .list_map_keys
            .iter()
            .map(|k| v.get(k).cloned().unwrap_or(Value::Null))
            .collect()
    };
    let wanted = key(item);
    old.iter().find(|o| o.is_object() && key(o) == wanted)
}

/// Where ratcheting stands: the node's pair, else the nearest one above.
#[derive(Clone, Copy, Default)]
struct Ratchet<'a> {
    current: Option<Pair<'a>>,
    parent: Option<Pair<'a>>,
}

impl<'a> Ratchet<'a> {
    fn key(self, field: &str) -> Ratchet<'a> {
        let Some(current) = self.current else {
            return self;
        };
        if self.parent.is_none() && (field == "apiVersion" || field == "kind") {
            return Ratchet::default();
        }
        Ratchet {
            current: current.key(field),
            parent: Some(current),
        }
    }

    fn index(self, i: usize) -> Ratchet<'a> {
        let Some(current) = self.current else {
            return self;
        };
        Ratchet {
            current: current.index(i),
            parent: Some(current),
        }
    }

    fn should_ratchet(self) -> bool {
        self.current.or(self.parent).is_some_and(Pair::unchanged)
    }
}

/// Validates `new` (with `old` on update) against the tree of `root`.
pub(crate) fn validate(
    node: &Node,
    schema: &Schema,
    new: &Value,
    old: Option<&Value>,
) -> ErrorList {
    let ratchet = Ratchet {
        current: old.map(|old| Pair { new, old, schema }),
        parent: None,
    };
    let mut errors = ErrorList::new();
    walk(node, schema, new, old, &Path::none(), ratchet, &mut errors);
    errors
}

fn correlatable_map(schema: &Schema) -> bool {
    matches!(
        schema.map_type.as_deref(),
        None | Some("granular" | "atomic")
    )
}

fn walk(
    node: &Node,
    schema: &Schema,
    value: &Value,
    old: Option<&Value>,
    path: &Path,
    ratchet: Ratchet,
    errors: &mut ErrorList,
) {
    let old = old.filter(|o| !o.is_null());
    if value.is_null() {
        return;
    }
    expressions(node, schema, value, old, path, ratchet, errors);
    for all_of in &node.all_of {
        let nested = Ratchet {
            current: None,
            parent: ratchet.parent,
        };
        walk(all_of, schema, value, old, path, nested, errors);
    }
    match value {
        Value::Array(items) => {
            let (Some(items_node), Some(item_schema)) = (&node.items, schema.items.as_deref())
            else {
                return;
            };
            let old_items = old.and_then(Value::as_array);
            for (i, item) in items.iter().enumerate() {
                let old_item = old_items.and_then(|o| map_list_get(schema, o, item));
                walk(
                    items_node,
                    item_schema,
                    item,
                    old_item,
                    &path.index(i),
                    ratchet.index(i),
                    errors,
                );
            }
        }
        Value::Object(map) => {
            let old_map = old
                .and_then(Value::as_object)
                .filter(|_| correlatable_map(schema));
            if let (Some(values_node), Some(values_schema)) =
                (&node.additional, schema.additional_schema())
            {
                for (k, v) in map {
                    let old_v = old_map.and_then(|o| o.get(k));
                    walk(
                        values_node,
                        values_schema,
                        v,
                        old_v,
                        &path.key(k),
                        ratchet.key(k),
                        errors,
                    );
                }
            }
            for (k, v) in map {
                let (Some(sub), Some(sub_schema)) =
                    (node.properties.get(k), schema.properties.get(k))
                else {
                    continue;
                };
                let old_v = old_map.and_then(|o| o.get(k));
                walk(
                    sub,
                    sub_schema,
                    v,
                    old_v,
                    &path.child(k),
                    ratchet.key(k),
                    errors,
                );
            }
        }
        _ => {}
    }
}

/// The rule's message, or its text (`ruleErrorString`).
fn rule_text(compiled: &Compiled) -> String {
    match compiled
        .rule
        .message
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
    {
        Some(message) => message.to_string(),
        None => compiled.rule.rule.trim().to_string(),
    }
}

fn context(
    self_value: &CelValue,
    old: Option<&CelValue>,
    optional: bool,
) -> Context<'static, 'static> {
    let mut ctx = Context::with_env(ENV.clone());
    ctx.add_variable_as_val("self", self_value.clone());
    match (old, optional) {
        (Some(o), false) => ctx.add_variable_as_val("oldSelf", o.clone()),
        (Some(o), true) => ctx.add_variable_as_val("oldSelf", Box::new(CelOptional::of(o.clone()))),
        (None, true) => ctx.add_variable_as_val("oldSelf", Box::new(CelOptional::none())),
        (None, false) => {}
    }
    ctx
}

fn expressions(
    node: &Node,
    schema: &Schema,
    value: &Value,
    old: Option<&Value>,
    path: &Path,
    ratchet: Ratchet,
    errors: &mut ErrorList,
) {
    let type_name = schema.type_.clone().unwrap_or_default();
    let type_value = || BadValue::Json(Value::String(type_name.clone()));
    if let Some(init) = &node.init_error {
        let detail = format!("rule compiler initialization error: {init}");
        errors.push(FieldError::invalid(path, type_value(), detail));
        return;
    }
    if node.rules.is_empty() {
        return;
    }
    let self_value = to_cel(value, schema, node.resource_root);
    let old_value = old.map(|o| to_cel(o, schema, node.resource_root));
    // One context for the rules of the node, one for those with an
    // optional `oldSelf`, made when first needed.
    let mut contexts: [Option<Context<'static, 'static>>; 2] = [None, None];
    for compiled in &node.rules {
        if let Some(error) = &compiled.error {
            errors.push(FieldError::invalid(
                path,
                type_value(),
                format!("rule compile error: {error}"),
            ));
            continue;
        }
        let Some(program) = &compiled.program else {
            continue;
        };
        let optional = compiled.rule.optional_old_self == Some(true);
        if compiled.uses_old_self && old_value.is_none() && !optional {
            continue;
        }
        let ctx = contexts[usize::from(optional)]
            .get_or_insert_with(|| context(&self_value, old_value.as_ref(), optional));
        match CelResult::resolve(program, ctx) {
            Ok(CelResult::Bool(true)) => continue,
            Ok(CelResult::Bool(false)) => {}
            Ok(_) => {
                let detail = format!(
                    "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {}",
                    rule_text(compiled)
                );
                errors.push(FieldError::invalid(path, type_value(), detail));
                continue;
            }
            Err(e) => {
                let message = runtime_message(&e);
                let detail = if message.starts_with("no such overload") {
                    format!(
                        "'{message}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        rule_text(compiled)
                    )
                } else {
                    format!("{message} evaluating rule: {}", rule_text(compiled))
                };
                errors.push(FieldError::invalid(path, type_value(), detail));
                continue;
            }
        }
        let at = match &compiled.field_path {
            Some(relative) => path.child(relative),
            None => path.clone(),
        };
        let detail =
            message(compiled, ctx).unwrap_or_else(|| match compiled.rule.message.as_deref() {
                Some(m) if !m.is_empty() => m.trim().to_string(),
                _ => format!("failed rule: {}", rule_text(compiled)),
            });
        let bad: BadValue = if matches!(type_name.as_str(), "object" | "array") {
            BadValue::Omit
        } else {
            BadValue::Json(value.clone())
        };
        let error = match compiled.rule.reason.as_deref() {
            Some("FieldValueForbidden") => FieldError::forbidden(&at, detail),
            Some("FieldValueRequired") => FieldError::required(&at, detail),
            Some("FieldValueDuplicate") => FieldError::duplicate(&at, bad),
            _ => FieldError::invalid(&at, bad, detail),
        };
        if compiled.uses_old_self || !ratchet.should_ratchet() {
            errors.push(error);
        }
    }
}

/// The messageExpression's message, unless it fails, is empty, too long
/// or has line breaks (`evalMessageExpression`).
fn message(compiled: &Compiled, ctx: &Context) -> Option<String> {
    let program = compiled.message.as_ref()?;
    let CelResult::String(text) = CelResult::resolve(program, ctx).ok()? else {
        return None;
    };
    let trimmed = text.trim();
    (!trimmed.is_empty() && trimmed.len() <= MAX_MESSAGE_BYTES && !trimmed.contains('\n'))
        .then(|| trimmed.to_string())
}
