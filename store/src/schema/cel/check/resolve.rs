//! Overload resolution (`resolveOverload`, `checker/checker.go`): the
//! overloads of a function whose parameters the arguments' types fit, with
//! type parameters bound afresh for each, and the result type they agree
//! on (`dyn` when they do not).

use cel::IdedExpr;

use super::super::decls::Overload;
use super::super::types::Ty;
use super::super::unify::Mapping;
use super::Checker;

impl Checker<'_> {
    /// Picks the overloads the arguments fit (`resolveOverload`).
    pub(super) fn resolve(
        &mut self,
        e: &IdedExpr,
        name: &str,
        overloads: &[&Overload],
        target: Option<&IdedExpr>,
        args: &[IdedExpr],
    ) -> Ty {
        let mut arg_types: Vec<Ty> = target.iter().map(|t| self.type_of(t)).collect();
        arg_types.extend(args.iter().map(|a| self.type_of(a)));
        if name == "_&&_" || name == "_||_" {
            let mut failed = false;
            for (arg, t) in args.iter().zip(&arg_types) {
                if !self.mapping.assign(t, &Ty::Bool) {
                    self.report(arg.id, format!("expected type 'bool' but found '{t}'"));
                    failed = true;
                }
            }
            let id = if name == "_&&_" {
                "logical_and"
            } else {
                "logical_or"
            };
            self.overloads.insert(e.id, vec![id.into()]);
            return if failed { Ty::Error } else { Ty::Bool };
        }
        let mut result: Option<Ty> = None;
        for overload in overloads.iter().filter(|o| o.member == target.is_some()) {
            let mut fresh = Mapping::default();
            let mut params = Vec::new();
            for t in overload.args.iter().chain([&overload.result]) {
                collect_params(t, &mut params);
            }
            for p in params {
                let var = self.fresh();
                fresh.bind(&p, var);
            }
            let candidates: Vec<Ty> = overload
                .args
                .iter()
                .map(|t| fresh.substitute(t, false))
                .collect();
            if !self.mapping.assign_all(&arg_types, &candidates) {
                continue;
            }
            let id = overload.id.clone().unwrap_or_else(|| name.to_string());
            self.overloads.entry(e.id).or_default().push(id);
            let t = self
                .mapping
                .substitute(&fresh.substitute(&overload.result, false), false);
            result = Some(match result {
                None => t,
                Some(r) if !matches!(r, Ty::Dyn) && !t.is_exact(&r) => Ty::Dyn,
                Some(r) => r,
            });
        }
        match result {
            Some(t) => t,
            None => {
                let shown: Vec<String> = arg_types
                    .iter()
                    .map(|t| self.mapping.substitute(t, true).to_string())
                    .collect();
                let signature = match target {
                    Some(_) => format!("{}.({})", shown[0], shown[1..].join(", ")),
                    None => format!("({})", shown.join(", ")),
                };
                self.report(
                    e.id,
                    format!("found no matching overload for '{name}' applied to '{signature}'"),
                );
                Ty::Error
            }
        }
    }
}

/// The type parameters (`A`, `V`) of a declared type.
fn collect_params(t: &Ty, out: &mut Vec<String>) {
    match t {
        Ty::Param(name) if !out.contains(name) => out.push(name.clone()),
        _ => t.params().into_iter().for_each(|p| collect_params(p, out)),
    }
}
