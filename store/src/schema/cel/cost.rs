//! The worst-case cost of a checked expression, as cel-go estimates it
//! (`checker/cost.go`), with the sizes of the schema's values
//! ([`sizes`](super::sizes)) and the estimates of the Kubernetes functions
//! ([`cost_calls`](super::cost_calls)). The real server refuses a CRD
//! whose rules may cost too much.

use std::collections::HashMap;

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr, LiteralValue};

use super::cost_calls;
use super::sizes::Bounds;
use super::types::Ty;

/// A range of sizes or costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Est {
    /// The least.
    pub min: u64,
    /// The most.
    pub max: u64,
}

/// Nothing known.
pub(crate) const UNKNOWN: Est = Est {
    min: 0,
    max: u64::MAX,
};

impl Est {
    /// Exactly `n`.
    pub const fn fixed(n: u64) -> Est {
        Est { min: n, max: n }
    }

    /// The sum, saturating.
    pub fn add(self, o: Est) -> Est {
        Est {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    /// The product, saturating.
    pub fn mul(self, o: Est) -> Est {
        Est {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    /// Times a cost factor, rounded up (`MultiplyByCostFactor`).
    pub fn factor(self, f: f64) -> Est {
        let by = |x: u64| {
            let xf = x as f64;
            if xf > 0.0 && f > 0.0 && xf > u64::MAX as f64 / f {
                return u64::MAX;
            }
            let ceil = (xf * f).ceil();
            if ceil >= 18_446_744_073_709_551_616.0 {
                u64::MAX
            } else {
                ceil as u64
            }
        };
        Est {
            min: by(self.min),
            max: by(self.max),
        }
    }

    /// The smallest least and the largest most.
    pub fn union(self, o: Est) -> Est {
        Est {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// The sizes of a container's keys and values.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entries {
    list: bool,
    key: Est,
    val: Est,
}

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
        let or_unknown = |n: &Node<'_>| n.size.unwrap_or(UNKNOWN);
        match id {
            "string_format" if target.is_some() => {
                let t = target.map(or_unknown).unwrap_or(UNKNOWN);
                (t.factor(0.1).add(arg_sum), None)
            }
            "string_to_bytes" if nodes.len() == 1 => {
                let s = or_unknown(&nodes[0]);
                (
                    s.factor(0.1).add(arg_sum),
                    Some(Est {
                        min: s.min,
                        max: s.max.saturating_mul(4),
                    }),
                )
            }
            "bytes_to_string" if nodes.len() == 1 => {
                let s = or_unknown(&nodes[0]);
                (
                    s.factor(0.1).add(arg_sum),
                    Some(Est {
                        min: s.min / 4,
                        max: s.max,
                    }),
                )
            }
            "strings_quote" if nodes.len() == 1 => {
                let s = or_unknown(&nodes[0]);
                let size = Est {
                    min: s.min.saturating_add(2),
                    max: s.max.saturating_mul(2).saturating_add(2),
                };
                (s.factor(0.1).add(arg_sum), Some(size))
            }
            "starts_with_string" | "ends_with_string" if nodes.len() == 1 => {
                (or_unknown(&nodes[0]).factor(0.1).add(arg_sum), None)
            }
            "in_list" if nodes.len() == 2 => (or_unknown(&nodes[1]).factor(1.0).add(arg_sum), None),
            "matches_string" if target.is_some() && nodes.len() == 1 => {
                let t = target.map(or_unknown).unwrap_or(UNKNOWN);
                let s = t.add(Est::fixed(1)).factor(0.1);
                (s.mul(or_unknown(&nodes[0]).factor(0.25)).add(arg_sum), None)
            }
            "contains_string" if target.is_some() && nodes.len() == 1 => {
                let t = target.map(or_unknown).unwrap_or(UNKNOWN).factor(0.1);
                (t.mul(or_unknown(&nodes[0]).factor(0.1)).add(arg_sum), None)
            }
            "logical_or" | "logical_and" if costs.len() == 2 => (
                Est {
                    min: costs[0].min,
                    max: costs[0].add(costs[1]).max,
                },
                None,
            ),
            "conditional" if nodes.len() == 3 => {
                let size = or_unknown(&nodes[1]).union(or_unknown(&nodes[2]));
                if let (Some(a), Some(b)) = (self.entries_of(&args[1]), self.entries_of(&args[2])) {
                    let en = Entries {
                        list: a.list,
                        key: a.key.union(b.key),
                        val: a.val.union(b.val),
                    };
                    self.entries.insert(e.id, en);
                }
                (costs[0].add(costs[1].union(costs[2])), Some(size))
            }
            "add_string" | "add_bytes" | "add_list" if nodes.len() == 2 => {
                let size = or_unknown(&nodes[0]).add(or_unknown(&nodes[1]));
                if let (Some(a), Some(b)) = (self.entries_of(&args[0]), self.entries_of(&args[1])) {
                    let en = Entries {
                        list: a.list,
                        key: a.key.union(b.key),
                        val: a.val.union(b.val),
                    };
                    self.entries.insert(e.id, en);
                }
                if id == "add_list" {
                    (Est::fixed(1).add(arg_sum), Some(size))
                } else {
                    (size.factor(0.1).add(arg_sum), Some(size))
                }
            }
            "less_string"
            | "greater_string"
            | "less_equals_string"
            | "greater_equals_string"
            | "less_bytes"
            | "greater_bytes"
            | "less_equals_bytes"
            | "greater_equals_bytes"
            | "equals"
            | "not_equals"
                if nodes.len() == 2 =>
            {
                let smallest = or_unknown(&nodes[0]).max.min(or_unknown(&nodes[1]).max);
                let c = Est {
                    min: u64::from(smallest > 0),
                    max: smallest,
                };
                (c.factor(0.1).add(arg_sum), None)
            }
            _ => (Est::fixed(1).add(arg_sum), None),
        }
    }
}

/// Types of values of size one (`isScalar`).
fn scalar(t: &Ty) -> bool {
    match t {
        Ty::Bool | Ty::Double | Ty::Duration | Ty::Int | Ty::Timestamp | Ty::Uint => true,
        other => other.unwrap_optional().is_some_and(scalar),
    }
}
