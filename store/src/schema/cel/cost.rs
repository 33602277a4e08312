//! The worst-case cost of a checked expression, as cel-go estimates it
//! (`checker/cost.go`), with the sizes of the schema's values
//! ([`sizes`](super::sizes)) and the estimates of the Kubernetes functions
//! ([`cost_calls`](super::cost_calls)). The real server refuses a CRD
//! whose rules may cost too much.

use std::collections::HashMap;

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr, LiteralValue};

use super::est::{Entries, Est, UNKNOWN};
use super::sizes::Bounds;
use super::types::Ty;
use super::{cost_calls, cost_std};

#[derive(Clone, Debug)]
struct Local {
    path: Option<Vec<String>>,
    size: Option<Est>,
    entries: Option<Entries>,
}

/// What the estimates of calls see of an argument (cel-go's `AstNode`).
#[derive(Clone, Debug)]
pub(crate) struct Node<'e> {
    /// The path of the value below a variable, if known.
    pub path: Option<Vec<String>>,
    /// The type.
    pub ty: Ty,
    /// The expression.
    pub expr: Option<&'e IdedExpr>,
    /// The size computed for it.
    pub size: Option<Est>,
}

/// The results of checking that the estimate uses.
pub(crate) struct Checked<'a> {
    /// The type of each expression.
    pub types: &'a HashMap<u64, Ty>,
    /// The overload ids of each call.
    pub overloads: &'a HashMap<u64, Vec<String>>,
    /// The calls resolved as qualified global functions (`sets.contains`).
    pub globals: &'a HashMap<u64, String>,
}

/// Estimates the cost of `expr`, whose variables' values are bounded by
/// `bounds`.
pub(crate) fn estimate(expr: &IdedExpr, checked: &Checked<'_>, bounds: &Bounds) -> Est {
    let mut coster = Coster {
        checked,
        bounds,
        paths: HashMap::new(),
        locals: HashMap::new(),
        sizes: HashMap::new(),
        entries: HashMap::new(),
    };
    coster.cost(expr)
}

pub(crate) struct Coster<'a> {
    checked: &'a Checked<'a>,
    bounds: &'a Bounds,
    paths: HashMap<u64, Vec<String>>,
    locals: HashMap<String, Vec<Local>>,
    sizes: HashMap<u64, Est>,
    entries: HashMap<u64, Entries>,
}

impl<'a> Coster<'a> {
    fn ty(&self, e: &IdedExpr) -> Ty {
        self.checked.types.get(&e.id).cloned().unwrap_or(Ty::Dyn)
    }

    fn local(&self, name: &str) -> Option<&Local> {
        self.locals.get(name).and_then(|stack| stack.last())
    }

    fn push(&mut self, name: &str, local: Local) {
        self.locals.entry(name.to_string()).or_default().push(local);
    }

    fn pop(&mut self, name: &str) {
        if let Some(stack) = self.locals.get_mut(name) {
            stack.pop();
        }
    }

    /// The path of `e`, if one was found (`getPath`, where nil differs
    /// from empty).
    fn known_path(&self, e: &IdedExpr) -> Option<Vec<String>> {
        if let Expr::Ident(name) = &e.expr
            && let Some(local) = self.local(name)
        {
            return local.path.clone();
        }
        self.paths.get(&e.id).cloned()
    }

    fn path(&self, e: &IdedExpr) -> Vec<String> {
        self.known_path(e).unwrap_or_default()
    }

    /// The size the schema bounds a path to (the CRD's `sizeEstimator`).
    pub fn estimate_size(&self, path: Option<&[String]>) -> Option<Est> {
        let path = path.filter(|p| !p.is_empty())?;
        self.bounds
            .size_at(&path[1..])
            .map(|(min, max)| Est { min, max })
    }

    fn size(&mut self, e: &IdedExpr) -> Option<Est> {
        if let Some(s) = self.sizes.get(&e.id) {
            return Some(*s);
        }
        let literal = match &e.expr {
            Expr::Literal(LiteralValue::String(s)) => Some(s.inner().chars().count() as u64),
            Expr::Literal(LiteralValue::Bytes(b)) => Some(b.inner().len() as u64),
            Expr::Literal(_) => Some(1),
            Expr::List(l) => Some(l.elements.len() as u64),
            Expr::Map(m) => Some(m.entries.len() as u64),
            _ => None,
        };
        if let Some(n) = literal {
            return Some(Est::fixed(n));
        }
        let path = self.path(e);
        if let Some(s) = self.estimate_size(Some(&path)) {
            self.sizes.insert(e.id, s);
            return Some(s);
        }
        if scalar(&self.ty(e)) {
            return Some(Est::fixed(1));
        }
        match &e.expr {
            Expr::Ident(name) => self.local(name).and_then(|l| l.size),
            _ => None,
        }
    }

    fn size_or_unknown(&mut self, e: &IdedExpr) -> Est {
        self.size(e).unwrap_or(UNKNOWN)
    }

    fn entries_of(&self, e: &IdedExpr) -> Option<Entries> {
        if let Some(s) = self.entries.get(&e.id) {
            return Some(*s);
        }
        match &e.expr {
            Expr::Ident(name) => self.local(name).and_then(|l| l.entries),
            _ => None,
        }
    }

    fn node<'e>(&mut self, e: &'e IdedExpr) -> Node<'e> {
        let path = self.known_path(e);
        let accumulator = path
            .as_ref()
            .and_then(|p| p.first())
            .is_some_and(|p| p == "@result" || p == "__result__");
        Node {
            path: path.filter(|_| !accumulator),
            ty: self.ty(e),
            expr: Some(e),
            size: self.size(e),
        }
    }

    fn cost(&mut self, e: &IdedExpr) -> Est {
        match &e.expr {
            Expr::Literal(_) => Est::fixed(0),
            Expr::Ident(name) => {
                match self.local(name).map(|l| l.path.clone()) {
                    Some(Some(path)) => {
                        self.paths.insert(e.id, path);
                    }
                    Some(None) => {}
                    None => {
                        self.paths.insert(e.id, vec![name.clone()]);
                    }
                }
                Est::fixed(1)
            }
            Expr::Select(s) => {
                if s.test {
                    return self.cost(&s.operand);
                }
                let mut sum = self.cost(&s.operand);
                if matches!(
                    self.ty(&s.operand),
                    Ty::Map(..) | Ty::Object(_) | Ty::Param(_)
                ) {
                    sum = sum.add(Est::fixed(1));
                }
                let mut path = self.path(&s.operand);
                path.push(s.field.clone());
                self.paths.insert(e.id, path);
                sum
            }
            Expr::Call(call) => {
                self.cost_call(e, &call.func_name, call.target.as_deref(), &call.args)
            }
            Expr::List(list) => {
                let mut sum = Est::fixed(0);
                let mut items = Est {
                    min: u64::MAX,
                    max: 0,
                };
                if list.elements.is_empty() {
                    items.min = 0;
                }
                for elem in &list.elements {
                    sum = sum.add(self.cost(elem));
                    items = items.union(self.size_or_unknown(elem));
                }
                let entries = Entries {
                    list: true,
                    key: Est::fixed(1),
                    val: items,
                };
                self.entries.insert(e.id, entries);
                sum.add(Est::fixed(10))
            }
            Expr::Map(map) => {
                let mut sum = Est::fixed(0);
                let empty = if map.entries.is_empty() { 0 } else { u64::MAX };
                let (mut keys, mut vals) = (Est { min: empty, max: 0 }, Est { min: empty, max: 0 });
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        sum = sum.add(self.cost(&entry.key)).add(self.cost(&entry.value));
                        keys = keys.union(self.size_or_unknown(&entry.key));
                        vals = vals.union(self.size_or_unknown(&entry.value));
                    }
                }
                self.entries.insert(
                    e.id,
                    Entries {
                        list: false,
                        key: keys,
                        val: vals,
                    },
                );
                sum.add(Est::fixed(30))
            }
            Expr::Struct(s) => {
                let mut sum = Est::fixed(40);
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        sum = sum.add(self.cost(&f.value));
                    }
                }
                sum
            }
            Expr::Comprehension(c) => {
                let bind = matches!(&c.iter_range.expr, Expr::List(l) if l.elements.is_empty())
                    && matches!(c.loop_cond.expr, Expr::Literal(LiteralValue::Boolean(ref b)) if !*b.inner())
                    && c.accu_var != "@result";
                let mut sum = self.cost(&c.iter_range).add(self.cost(&c.accu_init));
                let accu = Local {
                    path: self.known_path(&c.accu_init),
                    size: self.size(&c.accu_init),
                    entries: self.entries_of(&c.accu_init),
                };
                self.push(&c.accu_var, accu);
                if bind {
                    sum = sum.add(self.cost(&c.result));
                    self.pop(&c.accu_var);
                    if let Some(s) = self.size(&c.result) {
                        self.sizes.insert(e.id, s);
                    }
                    if let Some(en) = self.entries_of(&c.result) {
                        self.entries.insert(e.id, en);
                    }
                    return sum;
                }
                let range_entries = self.entries_of(&c.iter_range);
                let list = match range_entries {
                    Some(en) => en.list,
                    None => matches!(self.ty(&c.iter_range), Ty::List(_)),
                };
                let mut path = self.path(&c.iter_range);
                path.push(if list { "@items" } else { "@keys" }.into());
                let size = range_entries.map(|en| if list { en.val } else { en.key });
                self.push(
                    &c.iter_var,
                    Local {
                        path: Some(path),
                        size,
                        entries: None,
                    },
                );
                let loop_cost = self.cost(&c.loop_cond);
                let step_cost = self.cost(&c.loop_step);
                self.pop(&c.iter_var);
                sum = sum.add(self.cost(&c.result));
                self.pop(&c.accu_var);
                let count = self.size_or_unknown(&c.iter_range);
                sum = sum.add(count.mul(step_cost.add(loop_cost)));
                match &c.accu_init.expr {
                    Expr::Literal(_) => {
                        if let Some(s) = self.size(&c.accu_init) {
                            self.sizes.insert(e.id, s);
                        }
                    }
                    Expr::List(_) | Expr::Map(_) => {
                        self.sizes.insert(e.id, count);
                        if let Some(en) = self.entries_of(&c.loop_step) {
                            self.entries.insert(e.id, en);
                        }
                    }
                    _ => {}
                }
                sum
            }
            Expr::Unspecified => Est::fixed(0),
        }
    }

    fn cost_call(
        &mut self,
        e: &IdedExpr,
        name: &str,
        target: Option<&IdedExpr>,
        args: &[IdedExpr],
    ) -> Est {
        if name == "dyn" && args.len() == 1 {
            let c = self.cost(&args[0]);
            if let Some(s) = self.size(&args[0]) {
                self.sizes.insert(e.id, s);
            }
            if let Some(en) = self.entries_of(&args[0]) {
                self.entries.insert(e.id, en);
            }
            return Est::fixed(1).add(c);
        }
        let mut arg_costs = Vec::new();
        let mut nodes = Vec::new();
        for arg in args {
            arg_costs.push(self.cost(arg));
            nodes.push(self.node(arg));
        }
        let Some(ids) = self.checked.overloads.get(&e.id).cloned() else {
            return Est::fixed(0);
        };
        let global = self.checked.globals.get(&e.id);
        let function = global.map_or(name, String::as_str).to_string();
        let mut sum = Est::fixed(0);
        let target = match target {
            Some(t) if global.is_none() => {
                sum = sum.add(self.cost(t));
                Some(self.node(t))
            }
            _ => None,
        };
        let mut fn_cost = Est {
            min: u64::MAX,
            max: 0,
        };
        let mut result: Option<Est> = None;
        for id in &ids {
            let (c, size) =
                self.function_cost(e, &function, id, target.as_ref(), &nodes, &arg_costs, args);
            fn_cost = fn_cost.union(c);
            if let Some(s) = size {
                result = Some(result.map_or(s, |r| r.union(s)));
            }
            if (id == "index_list" || id == "index_map") && !args.is_empty() {
                result = self.entries_of(&args[0]).map(|en| en.val);
                let mut path = self.path(&args[0]);
                path.push(
                    if id == "index_list" {
                        "@items"
                    } else {
                        "@values"
                    }
                    .into(),
                );
                self.paths.insert(e.id, path);
            }
            if result.is_none() {
                result = self.size(e);
            }
        }
        if let Some(s) = result {
            self.sizes.insert(e.id, s);
        }
        sum.add(fn_cost)
    }

    /// One overload's cost and result size (`functionCost`).
    #[allow(clippy::too_many_arguments)]
    fn function_cost(
        &mut self,
        e: &IdedExpr,
        function: &str,
        id: &str,
        target: Option<&Node<'_>>,
        nodes: &[Node<'_>],
        costs: &[Est],
        args: &[IdedExpr],
    ) -> (Est, Option<Est>) {
        let arg_sum = costs.iter().fold(Est::fixed(0), |a, c| a.add(*c));
        let sized = |n: &Node<'_>, me: &Self| {
            n.size
                .or_else(|| me.estimate_size(n.path.as_deref()))
                .unwrap_or(UNKNOWN)
        };
        if let Some((c, size)) = cost_calls::overload(id, target, nodes, &|n| sized(n, self)) {
            return (c.add(arg_sum), size);
        }
        if let Some((c, size)) =
            cost_calls::kubernetes(function, id, target, nodes, &|n| sized(n, self))
        {
            return (c.add(arg_sum), size);
        }
        let entries = [1, 2].map(|i| args.get(i - 1).and_then(|a| self.entries_of(a)));
        let conditional = [1, 2].map(|i| args.get(i).and_then(|a| self.entries_of(a)));
        let entries = if id == "conditional" {
            conditional
        } else {
            entries
        };
        let (cost, size, result_entries) = cost_std::standard(id, target, nodes, costs, entries);
        if let Some(en) = result_entries {
            self.entries.insert(e.id, en);
        }
        (cost, size)
    }
}

/// Types of values of size one (`isScalar`).
fn scalar(t: &Ty) -> bool {
    match t {
        Ty::Bool | Ty::Double | Ty::Duration | Ty::Int | Ty::Timestamp | Ty::Uint => true,
        other => other.unwrap_optional().is_some_and(scalar),
    }
}
