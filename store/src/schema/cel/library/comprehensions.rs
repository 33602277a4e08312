//! cel-go's two-variable comprehensions (`ext.TwoVarComprehensions`):
//! `all(i, v, p)`, `exists(i, v, p)`, `existsOne(i, v, p)`,
//! `transformList(i, v, [filter,] e)`, `transformMap(k, v, [filter,] e)`,
//! `transformMapEntry(k, v, [filter,] e)`. The `cel` crate's interpreter
//! iterates with one variable only, so each is expanded into one-variable
//! comprehensions: over the keys of the target (a map's keys, a list's
//! indices, `@keys`), with the second variable bound to the value at each
//! key, and maps built with `@mapInsert`.

use std::collections::HashMap;

use cel::common::ast::{
    CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr,
};
use cel::common::types::{CelInt, CelList, CelMap, CelMapKey, DYN_TYPE, LIST_TYPE, MAP_TYPE};
use cel::common::value::{CowVal, Val};
use cel::parser::{Macro, MacroExprHelper};
use cel::{DeclarationError, Env, ExecutionError, ParseError};

use super::lists::elements;
use super::opaque::{error, no_overload};

/// The variable the target is bound to.
const TARGET: &str = "@__target__";
/// The accumulator of a built map.
const RESULT: &str = "@result";

/// Registers the macros and their helper functions on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    for name in ["all", "exists", "existsOne"] {
        env.add_macro(Macro::receiver(name, 3, move |h, t, a| {
            quantifier(h, t, a, name)
        }))?;
    }
    for name in ["transformList", "transformMap", "transformMapEntry"] {
        for count in [3, 4] {
            env.add_macro(Macro::receiver(name, count, move |h, t, a| {
                transform(h, t, a, name)
            }))?;
        }
    }
    env.add_overload("@keys", "list_keys", vec![LIST_TYPE], keys)?;
    env.add_overload("@keys", "map_keys", vec![MAP_TYPE], keys)?;
    env.add_overload(
        "@mapInsert",
        "map_insert_key_value",
        vec![MAP_TYPE, DYN_TYPE, DYN_TYPE],
        insert,
    )?;
    env.add_overload(
        "@mapInsert",
        "map_insert_map",
        vec![MAP_TYPE, MAP_TYPE],
        insert,
    )?;
    Ok(())
}

type Expansion = Result<Option<IdedExpr>, ParseError>;

fn call(
    h: &mut MacroExprHelper<'_>,
    name: &str,
    target: Option<IdedExpr>,
    args: Vec<IdedExpr>,
) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: name.to_string(),
        target: target.map(Box::new),
        args,
    }))
}

fn ident(h: &mut MacroExprHelper<'_>, name: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(name.to_string()))
}

/// `cel.bind(name, value, body)`: a comprehension over nothing whose
/// accumulator is `value`.
fn bind(h: &mut MacroExprHelper<'_>, name: &str, value: IdedExpr, body: IdedExpr) -> IdedExpr {
    let comprehension = ComprehensionExpr {
        iter_range: h.next_expr(Expr::List(ListExpr::new(Vec::new()))),
        iter_var: "#unused".into(),
        iter_var2: None,
        accu_var: name.into(),
        accu_init: value,
        loop_cond: h.next_expr(Expr::Literal(LiteralValue::Boolean(false.into()))),
        loop_step: ident(h, name),
        result: body,
    };
    h.next_expr(Expr::Comprehension(Box::new(comprehension)))
}

/// The two variable names, checked as cel-go checks them.
fn names(h: &mut MacroExprHelper<'_>, args: &[IdedExpr]) -> Result<(String, String), ParseError> {
    let name = |e: &IdedExpr| match &e.expr {
        Expr::Ident(n) => Ok(n.clone()),
        _ => Err(h.new_error(e.id, "argument must be a simple name")),
    };
    let (first, second) = (name(&args[0])?, name(&args[1])?);
    if first == second {
        return Err(h.new_error(args[1].id, format!("duplicate variable name: {first}")));
    }
    for (n, e) in [(&first, &args[0]), (&second, &args[1])] {
        if n == RESULT {
            return Err(h.new_error(e.id, "iteration variable overwrites accumulator variable"));
        }
    }
    Ok((first, second))
}

/// `expr` with `value` bound to the target's value at `key`.
fn with_value(h: &mut MacroExprHelper<'_>, key: &str, value: &str, expr: IdedExpr) -> IdedExpr {
    let target = ident(h, TARGET);
    let k = ident(h, key);
    let at = call(h, "_[_]", None, vec![target, k]);
    bind(h, value, at, expr)
}

fn quantifier(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
    name: &str,
) -> Expansion {
    let (key, value) = names(h, args)?;
    let predicate = args.pop().expect("three arguments");
    args.clear();
    let Some(range) = target.take() else {
        return Ok(None);
    };
    let body = with_value(h, &key, &value, predicate);
    let accu = |h: &mut MacroExprHelper<'_>| ident(h, RESULT);
    let (init, cond, step, result) = match name {
        "all" => {
            let a = accu(h);
            let cond = call(h, "@not_strictly_false", None, vec![a]);
            let a = accu(h);
            let step = call(h, "_&&_", None, vec![a, body]);
            (
                literal(h, LiteralValue::Boolean(true.into())),
                cond,
                step,
                accu(h),
            )
        }
        "exists" => {
            let a = accu(h);
            let not = call(h, "!_", None, vec![a]);
            let cond = call(h, "@not_strictly_false", None, vec![not]);
            let a = accu(h);
            let step = call(h, "_||_", None, vec![a, body]);
            (
                literal(h, LiteralValue::Boolean(false.into())),
                cond,
                step,
                accu(h),
            )
        }
        _ => {
            let a = accu(h);
            let one = literal(h, LiteralValue::Int(1.into()));
            let plus = call(h, "_+_", None, vec![a, one]);
            let a = accu(h);
            let step = call(h, "_?_:_", None, vec![body, plus, a]);
            let a = accu(h);
            let one = literal(h, LiteralValue::Int(1.into()));
            let result = call(h, "_==_", None, vec![a, one]);
            (
                literal(h, LiteralValue::Int(0.into())),
                literal(h, LiteralValue::Boolean(true.into())),
                step,
                result,
            )
        }
    };
    let bound = ident(h, TARGET);
    let comprehension = ComprehensionExpr {
        iter_range: call(h, "@keys", None, vec![bound]),
        iter_var: key,
        iter_var2: None,
        accu_var: RESULT.into(),
        accu_init: init,
        loop_cond: cond,
        loop_step: step,
        result,
    };
    let inner = h.next_expr(Expr::Comprehension(Box::new(comprehension)));
    Ok(Some(bind(h, TARGET, range, inner)))
}

fn literal(h: &mut MacroExprHelper<'_>, value: LiteralValue) -> IdedExpr {
    h.next_expr(Expr::Literal(value))
}

fn transform(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
    name: &str,
) -> Expansion {
    let (key, value) = names(h, args)?;
    let expr = args.pop().expect("an expression");
    let filter = (args.len() == 3).then(|| args.pop().expect("a filter"));
    args.clear();
    let Some(range) = target.take() else {
        return Ok(None);
    };
    let mapped = with_value(h, &key, &value, expr);
    let filter = filter.map(|f| with_value(h, &key, &value, f));
    let step = match name {
        "transformList" => {
            let accu = ident(h, RESULT);
            let one = h.next_expr(Expr::List(ListExpr::new(vec![mapped])));
            call(h, "_+_", None, vec![accu, one])
        }
        "transformMap" => {
            let accu = ident(h, RESULT);
            let k = ident(h, &key);
            call(h, "@mapInsert", None, vec![accu, k, mapped])
        }
        _ => {
            let accu = ident(h, RESULT);
            call(h, "@mapInsert", None, vec![accu, mapped])
        }
    };
    let step = match filter {
        Some(f) => {
            let accu = ident(h, RESULT);
            call(h, "_?_:_", None, vec![f, step, accu])
        }
        None => step,
    };
    let init = if name == "transformList" {
        h.next_expr(Expr::List(ListExpr::new(Vec::new())))
    } else {
        h.next_expr(Expr::Map(MapExpr::default()))
    };
    let bound = ident(h, TARGET);
    let comprehension = ComprehensionExpr {
        iter_range: call(h, "@keys", None, vec![bound]),
        iter_var: key,
        iter_var2: None,
        accu_var: RESULT.into(),
        accu_init: init,
        loop_cond: h.next_expr(Expr::Literal(LiteralValue::Boolean(true.into()))),
        loop_step: step,
        result: ident(h, RESULT),
    };
    let inner = h.next_expr(Expr::Comprehension(Box::new(comprehension)));
    Ok(Some(bind(h, TARGET, range, inner)))
}

type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

/// A list's indices, or a map itself (iterating over its keys).
fn keys<'b, 'v>(mut args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let target = args.pop().ok_or_else(no_overload)?;
    if target.downcast_ref::<CelMap>().is_some() {
        return Ok(target);
    }
    let n = elements(target.as_ref())?.len() as i64;
    let indices: Vec<Box<dyn Val + 'v>> = (0..n)
        .map(|i| Box::new(CelInt::from(i)) as Box<dyn Val + 'v>)
        .collect();
    Ok(CowVal::owned(CelList::from(indices)))
}

/// A map with one more entry, or the entries of another map.
fn insert<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let map = args[0].downcast_ref::<CelMap>().ok_or_else(no_overload)?;
    let mut entries: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = map
        .inner()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let added: Vec<(CelMapKey<'v>, Box<dyn Val + 'v>)> = match args.len() {
        3 => {
            let key =
                CelMapKey::try_from(args[1].clone().into_owned()).map_err(|_| no_overload())?;
            vec![(key, args[2].clone().into_owned())]
        }
        _ => {
            let other = args[1].downcast_ref::<CelMap>().ok_or_else(no_overload)?;
            other
                .inner()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        }
    };
    for (k, v) in added {
        if entries.contains_key(&k) {
            return Err(error(
                "@mapInsert",
                format!("insert failed: key {} already exists", key_text(&k)),
            ));
        }
        entries.insert(k, v);
    }
    Ok(CowVal::owned(CelMap::from(entries)))
}

fn key_text(key: &CelMapKey<'_>) -> String {
    match key {
        CelMapKey::String(s) => s.inner().to_string(),
        CelMapKey::Int(i) => i.inner().to_string(),
        CelMapKey::UInt(u) => u.inner().to_string(),
        CelMapKey::Bool(b) => b.inner().to_string(),
    }
}
