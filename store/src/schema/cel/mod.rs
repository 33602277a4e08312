//! `x-kubernetes-validations`: the CEL rules of a CRD's schema, compiled
//! when the CRD is created or updated and evaluated on every write of its
//! objects, as kube-apiserver 1.36 does (`apiextensions-apiserver/pkg/
//! apiserver/schema/cel`).
//!
//! Rules run on the `cel` crate's interpreter. The crate has no type
//! checker: `check` walks the parsed expression against the schema's
//! types (`types`) and the functions the real server declares
//! (`decls`), so that a rule naming a field the schema does not have, or
//! calling a function no overload accepts, or not giving a `bool`, is
//! refused with the real server's message; `literals` adds the real
//! server's validations of literals, and `cost` its estimate of a rule's
//! worst-case cost, which refuses rules that may cost too much. The
//! Kubernetes functions the crate lacks are added as overloads on its
//! environment (`env`).
//!
//! - CRD side: `compile` (the walk and its errors), `rulefields` (a
//!   rule's own fields), `rule` (one rule), `fieldpath`, `sizes`,
//!   `cost`, `cost_calls`, `cost_std`, `est`;
//! - object side: `tree` (the compiled rules by schema node),
//!   `validate` (their evaluation, ratcheting), `values` (JSON as CEL
//!   values), `render` (messages);
//! - the functions: `library/`, one file per library.

mod check;
mod compile;
mod cost;
mod cost_calls;
mod cost_std;
mod decls;
mod env;
mod est;
mod fieldpath;
mod formatcheck;
mod library;
mod literals;
mod render;
mod rule;
mod rulefields;
mod sizes;
mod tree;
mod types;
mod unify;
mod validate;
mod values;

use std::sync::Arc;

use serde_json::Value;

use crate::machinery::field::{ErrorList, Path};
use crate::schema::Schema;

/// The compiled rules of one CRD version's schema.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    tree: Option<Arc<(tree::Node, Schema)>>,
}

/// Compiles every `x-kubernetes-validations` rule of `schema`; the errors
/// are the CRD's own (refused when the CRD is created or updated), with the
/// real server's field paths under `base` (e.g.
/// `spec.versions[0].schema.openAPIV3Schema`, whose rules are then at
/// `...openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`)
/// and messages. The schema is expected to be structural: the real server
/// checks the rules of a schema it accepted otherwise.
pub fn compile(schema: &Schema, base: &Path) -> Result<Rules, ErrorList> {
    compile_beside(schema, base, &ErrorList::new())
}

/// [`compile`] beside the schema's other errors (`others`, its keywords'
/// found by the CRD's checks): as the real server, the rules of a node
/// with such an error at or beneath it are not compiled (their errors
/// would not be actionable), the others are.
pub fn compile_beside(
    schema: &Schema,
    base: &Path,
    others: &ErrorList,
) -> Result<Rules, ErrorList> {
    let errors = compile::check_schema(schema, base, others).all(base);
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Rules {
        tree: tree::runtime_tree(schema).map(|node| Arc::new((node, schema.clone()))),
    })
}

impl Rules {
    /// Evaluates every rule against `new` (the whole custom resource), with
    /// `old` for transition rules (rules that use `oldSelf`, run only where
    /// an old value correlates, unless `optionalOldSelf`) and for
    /// ratcheting (on update, errors of values left unchanged are dropped,
    /// as the real server turns them into warnings). The errors are the
    /// object's (422). The caller runs them only when the schema's own
    /// validation found no blocking error, as the real server does.
    pub fn validate(&self, new: &Value, old: Option<&Value>) -> ErrorList {
        match &self.tree {
            Some(tree) => validate::validate(&tree.0, &tree.1, new, old),
            None => ErrorList::new(),
        }
    }

    /// Whether the schema has no rule at all.
    pub fn is_empty(&self) -> bool {
        self.tree.is_none()
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_eval;
