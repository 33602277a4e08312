//! The compilation of one rule, as `compileRule` does it
//! (`apiserver/schema/cel/compilation.go`): parse, check against the
//! node's type with `self` and `oldSelf` declared, validate it as the real
//! server does ([`literals`]), then require a `bool`; the same for its
//! messageExpression, which must be a `string`; and normalise its
//! `fieldPath`.

use cel::IdedExpr;
use cel::common::ast::Expr;

use super::check::{self, Issue};
use super::env::ENV;
use super::fieldpath::{steps_text, valid_field_path};
use super::render::{self, Located};
use super::sizes::Bounds;
use super::types::Ty;
use super::{cost, literals};
use crate::schema::{Rule, Schema};

/// One rule, compiled.
#[derive(Debug)]
pub(crate) struct Compiled {
    /// The rule as written.
    pub rule: Rule,
    /// The program, unless the rule is empty or failed to compile.
    pub program: Option<IdedExpr>,
    /// Why the rule failed to compile (`compilation failed: ...`).
    pub error: Option<String>,
    /// The messageExpression's program.
    pub message: Option<IdedExpr>,
    /// Why the messageExpression failed to compile.
    pub message_error: Option<String>,
    /// Whether the rule refers to `oldSelf`.
    pub uses_old_self: bool,
    /// The `fieldPath`, normalised (`a.b`, `m[k]`).
    pub field_path: Option<String>,
    /// The rule's estimated worst-case cost.
    pub cost: u64,
    /// The messageExpression's estimated worst-case cost.
    pub message_cost: u64,
}

/// An expression compiled for one type of `self`: its program and type,
/// or the issues, as cel-go displays them.
struct Expression {
    program: IdedExpr,
    output: Ty,
    uses_old_self: bool,
    cost: u64,
}

fn compile_expression(
    source: &str,
    self_type: &Ty,
    optional_old_self: bool,
    bounds: Option<&Bounds>,
) -> Result<Expression, String> {
    let (expr, info) = ENV
        .parser()
        .parse_with_source_info(source)
        .map_err(|e| render::display(source, &render::parse_issues(source, &e)))?;
    let old_self = if optional_old_self {
        Ty::optional(self_type.clone())
    } else {
        self_type.clone()
    };
    let checked = check::check(
        &expr,
        &info,
        &[("self", self_type.clone()), ("oldSelf", old_self)],
    );
    let mut issues = checked.issues;
    if issues.is_empty() {
        issues = literals::issues(&expr, &info, &checked.types);
    }
    if !issues.is_empty() {
        let located: Vec<Located> = issues
            .into_iter()
            .map(|Issue { offset, message }| {
                let (line, column) = render::locate(source, offset);
                Located {
                    line,
                    column,
                    message,
                }
            })
            .collect();
        return Err(render::display(source, &located));
    }
    let cost = bounds.map_or(0, |b| {
        let view = cost::Checked {
            types: &checked.types,
            overloads: &checked.overloads,
            globals: &checked.globals,
        };
        cost::estimate(&expr, &view, b).max
    });
    let mut program = expr;
    first_error_first(&mut program);
    Ok(Expression {
        program,
        output: checked.output,
        uses_old_self: checked.uses_old_self,
        cost,
    })
}

/// Compiles `rule` for a node of type `self_type` and schema `schema`,
/// estimating its cost when the node's size `bounds` are given.
pub(crate) fn compile(
    rule: &Rule,
    self_type: &Ty,
    schema: &Schema,
    bounds: Option<&Bounds>,
) -> Compiled {
    let mut compiled = Compiled {
        rule: rule.clone(),
        program: None,
        error: None,
        message: None,
        message_error: None,
        uses_old_self: false,
        field_path: None,
        cost: 0,
        message_cost: 0,
    };
    if rule.rule.trim().is_empty() {
        return compiled;
    }
    let optional = rule.optional_old_self == Some(true);
    match compile_expression(&rule.rule, self_type, optional, bounds) {
        Err(issues) => {
            compiled.error = Some(format!("compilation failed: {issues}"));
            return compiled;
        }
        Ok(e) if !matches!(e.output, Ty::Bool) => {
            compiled.error = Some("cel expression must evaluate to a bool".into());
            return compiled;
        }
        Ok(e) => {
            compiled.uses_old_self = e.uses_old_self;
            compiled.cost = e.cost;
            compiled.program = Some(e.program);
        }
    }
    if let Some(source) = rule.message_expression.as_deref().filter(|m| !m.is_empty()) {
        match compile_expression(source, self_type, optional, bounds) {
            Err(issues) => {
                compiled.message_error =
                    Some(format!("messageExpression compilation failed: {issues}"));
                return compiled;
            }
            Ok(e) if !matches!(e.output, Ty::String) => {
                compiled.message_error = Some("messageExpression must evaluate to a string".into());
                return compiled;
            }
            Ok(e) => {
                compiled.message_cost = e.cost;
                compiled.message = Some(e.program);
            }
        }
    }
    if let Some(path) = rule.field_path.as_deref().filter(|p| !p.is_empty())
        && let Ok(steps) = valid_field_path(path, schema)
    {
        compiled.field_path = Some(steps_text(&steps)).filter(|p| !p.is_empty());
    }
    compiled
}

/// Swaps the operands of `&&` and `||` written in the rule, so that when
/// both fail, the interpreter (which reports its right operand's error)
/// reports the error of the one written first, as cel-go does. The
/// operators are commutative; the steps of `all()` and `exists()` are left
/// as the macros wrote them.
fn first_error_first(e: &mut IdedExpr) {
    match &mut e.expr {
        Expr::Call(call) => {
            let accumulator = call
                .args
                .iter()
                .any(|a| matches!(&a.expr, Expr::Ident(n) if n == "@result"));
            if (call.func_name == "_||_" || call.func_name == "_&&_")
                && call.args.len() == 2
                && !accumulator
            {
                call.args.swap(0, 1);
            }
            if let Some(t) = call.target.as_deref_mut() {
                first_error_first(t);
            }
            call.args.iter_mut().for_each(first_error_first);
        }
        Expr::Select(s) => first_error_first(&mut s.operand),
        Expr::List(l) => l.elements.iter_mut().for_each(first_error_first),
        Expr::Map(m) => {
            for entry in &mut m.entries {
                if let cel::common::ast::EntryExpr::MapEntry(me) = &mut entry.expr {
                    first_error_first(&mut me.key);
                    first_error_first(&mut me.value);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &mut s.entries {
                if let cel::common::ast::EntryExpr::StructField(f) = &mut entry.expr {
                    first_error_first(&mut f.value);
                }
            }
        }
        Expr::Comprehension(c) => {
            for part in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                first_error_first(part);
            }
        }
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}
