//! Kubernetes' list library (`library/lists.go`): `isSorted`, `sum`,
//! `min`, `max`, `indexOf`, `lastIndexOf`.

use std::cmp::Ordering;

use cel::common::types::{CelBool, CelInt, CelString, DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

type Result<'b, 'v> = std::result::Result<CowVal<'b, 'v>, ExecutionError>;

/// Registers the functions on `env`.
pub(crate) fn register(env: &mut Env) -> std::result::Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    Ok(())
}

pub(super) fn no_overload() -> ExecutionError {
    ExecutionError::function_error("", "no such overload")
}

/// The elements of a list.
pub(crate) fn elements<'a, 'v>(
    list: &'a (dyn Val + 'v),
) -> std::result::Result<Vec<&'a (dyn Val + 'v)>, ExecutionError> {
    let mut it = list.as_iterable().ok_or_else(no_overload)?.iter();
    let mut out = Vec::new();
    while let Some(e) = it.next() {
        out.push(e);
    }
    Ok(out)
}

fn compare(a: &dyn Val, b: &dyn Val) -> std::result::Result<Ordering, ExecutionError> {
    a.as_comparer().ok_or_else(no_overload)?.compare(b)
}

fn owned<'b, 'v>(v: &(dyn Val + 'v)) -> CowVal<'b, 'v> {
    CowVal::Owned(v.clone_as_boxed())
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    for pair in items.windows(2) {
        if compare(pair[0], pair[1])? == Ordering::Greater {
            return Ok(CowVal::owned(CelBool::from(false)));
        }
    }
    Ok(CowVal::owned(CelBool::from(true)))
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    let Some((head, rest)) = items.split_first() else {
        // The checked type is unknown here: an empty list sums to 0.
        return Ok(CowVal::owned(CelInt::from(0)));
    };
    let mut acc: Box<dyn Val + 'v> = head.clone_as_boxed();
    for item in rest {
        let next = acc
            .as_adder()
            .ok_or_else(no_overload)?
            .add(*item)?
            .into_owned();
        acc = next;
    }
    Ok(CowVal::Owned(acc))
}

fn extreme<'b, 'v>(args: Vec<CowVal<'b, 'v>>, name: &str, prefer: Ordering) -> Result<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    let mut best: Option<&(dyn Val + 'v)> = None;
    for item in items {
        best = match best {
            Some(b) if compare(b, item)? != prefer => Some(b),
            _ => Some(item),
        };
    }
    match best {
        Some(b) => Ok(owned(b)),
        None => Err(ExecutionError::function_error(
            name,
            format!("{name} called on empty list"),
        )),
    }
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    extreme(args, "min", Ordering::Greater)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    extreme(args, "max", Ordering::Less)
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    let found = items.iter().position(|i| i.equals(args[1].as_ref()));
    Ok(CowVal::owned(CelInt::from(found.map_or(-1, |i| i as i64))))
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    let found = items.iter().rposition(|i| i.equals(args[1].as_ref()));
    Ok(CowVal::owned(CelInt::from(found.map_or(-1, |i| i as i64))))
}

pub(super) fn text(v: &dyn Val) -> std::result::Result<&str, ExecutionError> {
    v.downcast_ref::<CelString>()
        .map(|s| s.inner())
        .ok_or_else(no_overload)
}
