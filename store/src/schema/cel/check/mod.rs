//! The static checks the real server makes when a CRD's rules are
//! compiled: cel-go's type checker (`checker/checker.go`), walking the
//! parsed expression against the schema's types and the declared functions
//! ([`decls`](super::decls)). It finds the fields a schema does not have
//! (`undefined field 'b'`), calls no overload accepts, undeclared names,
//! and gives the expression's type: a rule must be a `bool`, a
//! messageExpression a `string`.

use std::collections::HashMap;

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr, LiteralValue, SourceInfo};

use super::decls;
use super::types::Ty;
use super::unify::{Mapping, most_general};

mod resolve;

/// A problem found, where it is (a byte offset in the source).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Issue {
    /// Where, as a byte offset.
    pub offset: usize,
    /// What.
    pub message: String,
}

/// What checking an expression found.
#[derive(Debug)]
pub(crate) struct Checked {
    /// The expression's type, `dyn` where a type parameter is left unbound.
    pub output: Ty,
    /// Whether it refers to `oldSelf`.
    pub uses_old_self: bool,
    /// The type of each expression, by id.
    pub types: HashMap<u64, Ty>,
    /// The problems, in the order found.
    pub issues: Vec<Issue>,
    /// The overloads each call may resolve to, by id (cel-go's overload
    /// ids where the cost estimate depends on them).
    pub overloads: HashMap<u64, Vec<String>>,
    /// The calls on a qualified name that call a global function
    /// (`sets.contains(a, b)`), with the function's name.
    pub globals: HashMap<u64, String>,
}

/// Checks `expr` with the variables `vars` declared.
pub(crate) fn check(expr: &IdedExpr, info: &SourceInfo, vars: &[(&str, Ty)]) -> Checked {
    let mut checker = Checker {
        info,
        mapping: Mapping::default(),
        types: HashMap::new(),
        scopes: vec![
            vars.iter()
                .map(|(n, t)| (n.to_string(), t.clone()))
                .collect(),
        ],
        issues: Vec::new(),
        free: 0,
        uses_old_self: false,
        overloads: HashMap::new(),
        globals: HashMap::new(),
    };
    let t = checker.check(expr);
    let types = checker
        .types
        .iter()
        .map(|(id, t)| (*id, checker.mapping.substitute(t, true)))
        .collect();
    Checked {
        output: checker.mapping.substitute(&t, true),
        uses_old_self: checker.uses_old_self,
        issues: checker.issues,
        types,
        overloads: checker.overloads,
        globals: checker.globals,
    }
}

struct Checker<'a> {
    info: &'a SourceInfo,
    mapping: Mapping,
    types: HashMap<u64, Ty>,
    scopes: Vec<HashMap<String, Ty>>,
    issues: Vec<Issue>,
    free: usize,
    uses_old_self: bool,
    overloads: HashMap<u64, Vec<String>>,
    globals: HashMap<u64, String>,
}

/// The dotted name an expression spells (`a.b.c`), if it is one.
fn qualified_name(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(s) if !s.test => Some(format!("{}.{}", qualified_name(&s.operand)?, s.field)),
        _ => None,
    }
}

impl Checker<'_> {
    fn report(&mut self, id: u64, message: String) {
        let offset = self
            .info
            .offset_for(id)
            .map_or(0, |(start, _)| start as usize);
        self.issues.push(Issue { offset, message });
    }

    fn set(&mut self, e: &IdedExpr, t: Ty) -> Ty {
        self.types.insert(e.id, t.clone());
        t
    }

    fn fresh(&mut self) -> Ty {
        let t = Ty::Param(format!("_var{}", self.free));
        self.free += 1;
        t
    }

    fn lookup_var(&mut self, name: &str) -> Option<Ty> {
        let found = self.scopes.iter().rev().find_map(|s| s.get(name)).cloned();
        if found.is_some() && name == "oldSelf" {
            self.uses_old_self = true;
        }
        found
    }

    fn lookup_ident(&mut self, name: &str) -> Option<Ty> {
        self.lookup_var(name).or_else(|| decls::type_ident(name))
    }

    fn check(&mut self, e: &IdedExpr) -> Ty {
        let t = match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Bytes(_) => Ty::Bytes,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::Null => Ty::Null,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::UInt(_) => Ty::Uint,
            },
            Expr::Ident(name) => match self.lookup_ident(name) {
                Some(t) => t,
                None => {
                    self.report(
                        e.id,
                        format!("undeclared reference to '{name}' (in container '')"),
                    );
                    Ty::Error
                }
            },
            Expr::Select(s) => {
                let qualified = if s.test { None } else { qualified_name(e) };
                match qualified.and_then(|q| self.lookup_ident(&q)) {
                    Some(t) => t,
                    None => {
                        let t = self.select_field(e, &s.operand, &s.field, false);
                        if s.test {
                            Ty::Bool
                        } else {
                            self.mapping.substitute(&t, false)
                        }
                    }
                }
            }
            Expr::Call(call) => {
                self.check_call(e, &call.func_name, call.target.as_deref(), &call.args)
            }
            Expr::List(list) => {
                let mut elems: Option<Ty> = None;
                for (i, elem) in list.elements.iter().enumerate() {
                    let mut t = self.check(elem);
                    if list.optional_indices.contains(&i) {
                        t = self.unwrap_optional_literal(elem, t);
                    }
                    elems = Some(self.join(elems, t));
                }
                let elem = elems.unwrap_or_else(|| self.fresh());
                Ty::list(elem)
            }
            Expr::Map(map) => {
                let (mut keys, mut values): (Option<Ty>, Option<Ty>) = (None, None);
                for entry in &map.entries {
                    let EntryExpr::MapEntry(entry) = &entry.expr else {
                        continue;
                    };
                    let kt = self.check(&entry.key);
                    keys = Some(self.join(keys, kt));
                    let mut vt = self.check(&entry.value);
                    if entry.optional {
                        vt = self.unwrap_optional_literal(&entry.value, vt);
                    }
                    values = Some(self.join(values, vt));
                }
                match (keys, values) {
                    (Some(k), Some(v)) => Ty::map(k, v),
                    _ => {
                        let (k, v) = (self.fresh(), self.fresh());
                        Ty::map(k, v)
                    }
                }
            }
            Expr::Struct(s) => {
                let name = s.type_name.clone();
                self.report(
                    e.id,
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                Ty::Error
            }
            Expr::Comprehension(c) => {
                self.check(&c.iter_range);
                self.check(&c.accu_init);
                let range = self.mapping.substitute(&self.type_of(&c.iter_range), false);
                let accu = self.type_of(&c.accu_init);
                self.scopes
                    .push(HashMap::from([(c.accu_var.clone(), accu.clone())]));
                let two = c.iter_var2.is_some();
                let (var, var2) = match &range {
                    Ty::List(elem) if two => (Ty::Int, (**elem).clone()),
                    Ty::List(elem) => ((**elem).clone(), Ty::Error),
                    Ty::Map(k, v) => ((**k).clone(), (**v).clone()),
                    Ty::Dyn | Ty::Error | Ty::Param(_) => (Ty::Dyn, Ty::Dyn),
                    other => {
                        let message = format!(
                            "expression of type '{other}' cannot be range of a comprehension (must be list, map, or dynamic)"
                        );
                        self.report(c.iter_range.id, message);
                        (Ty::Error, Ty::Error)
                    }
                };
                let mut scope = HashMap::from([(c.iter_var.clone(), var)]);
                if let Some(v2) = &c.iter_var2 {
                    scope.insert(v2.clone(), var2);
                }
                self.scopes.push(scope);
                let cond = self.check(&c.loop_cond);
                self.assert_type(&c.loop_cond, &Ty::Bool, &cond);
                let step = self.check(&c.loop_step);
                self.assert_type(&c.loop_step, &accu, &step);
                self.scopes.pop();
                let result = self.check(&c.result);
                self.scopes.pop();
                self.mapping.substitute(&result, false)
            }
            Expr::Unspecified => Ty::Error,
        };
        self.set(e, t)
    }

    fn type_of(&self, e: &IdedExpr) -> Ty {
        self.types.get(&e.id).cloned().unwrap_or(Ty::Error)
    }

    fn assert_type(&mut self, e: &IdedExpr, expected: &Ty, actual: &Ty) {
        if !self.mapping.assign(expected, actual) {
            self.report(
                e.id,
                format!("expected type '{expected}' but found '{actual}'"),
            );
        }
    }

    fn unwrap_optional_literal(&mut self, e: &IdedExpr, t: Ty) -> Ty {
        match t.unwrap_optional() {
            Some(inner) => inner.clone(),
            None => {
                if !matches!(t, Ty::Dyn) {
                    let message = format!(
                        "expected type '{}' but found '{t}'",
                        Ty::optional(t.clone())
                    );
                    self.report(e.id, message);
                }
                t
            }
        }
    }

    /// The element type of a literal so far and the next element's type
    /// (`joinTypes`): `dyn` when they differ, as the real server's checker
    /// leaves homogeneity to a later validation.
    fn join(&mut self, previous: Option<Ty>, current: Ty) -> Ty {
        let Some(previous) = previous else {
            return current;
        };
        if self.mapping.assign(&previous, &current) {
            return most_general(&previous, &current);
        }
        Ty::Dyn
    }

    fn select_field(
        &mut self,
        e: &IdedExpr,
        operand: &IdedExpr,
        field: &str,
        optional: bool,
    ) -> Ty {
        self.check(operand);
        let operand_type = self.mapping.substitute(&self.type_of(operand), false);
        let (target, is_optional) = match operand_type.unwrap_optional() {
            Some(inner) => (inner.clone(), true),
            None => (operand_type, false),
        };
        let result = match &target {
            Ty::Map(_, v) => (**v).clone(),
            Ty::Object(o) => match o.field(field) {
                Some(t) => t.clone(),
                None => {
                    self.report(e.id, format!("undefined field '{field}'"));
                    Ty::Error
                }
            },
            Ty::Param(_) | Ty::Dyn | Ty::Error => Ty::Dyn,
            other => {
                let message = format!("type '{other}' does not support field selection");
                self.report(e.id, message);
                Ty::Dyn
            }
        };
        if is_optional || optional {
            Ty::optional(result)
        } else {
            result
        }
    }

    fn check_call(
        &mut self,
        e: &IdedExpr,
        name: &str,
        target: Option<&IdedExpr>,
        args: &[IdedExpr],
    ) -> Ty {
        if name == "_?._" {
            let field = match args.get(1).map(|a| &a.expr) {
                Some(Expr::Literal(LiteralValue::String(s))) => s.inner().to_string(),
                _ => {
                    self.report(e.id, "unsupported optional field selection".into());
                    return Ty::Error;
                }
            };
            let t = self.select_field(e, &args[0], &field, true);
            self.overloads
                .insert(e.id, vec!["select_optional_field".into()]);
            return self.mapping.substitute(&t, false);
        }
        for arg in args {
            self.check(arg);
        }
        let Some(target) = target else {
            return match decls::lookup(name) {
                Some(overloads) => self.resolve(e, name, &overloads, None, args),
                None => {
                    self.report(
                        e.id,
                        format!("undeclared reference to '{name}' (in container '')"),
                    );
                    Ty::Error
                }
            };
        };
        if let Some(prefix) = qualified_name(target) {
            let qualified = format!("{prefix}.{name}");
            if let Some(overloads) = decls::lookup(&qualified) {
                self.globals.insert(e.id, qualified.clone());
                return self.resolve(e, &qualified, &overloads, None, args);
            }
        }
        self.check(target);
        match decls::lookup(name) {
            Some(overloads) => self.resolve(e, name, &overloads, Some(target), args),
            None => {
                self.report(
                    e.id,
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                Ty::Error
            }
        }
    }
}
