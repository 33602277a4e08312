//! The functions on lists and strings the `cel` crate lacks: Kubernetes'
//! list library (`isSorted`, `sum`, `min`, `max`, `indexOf`,
//! `lastIndexOf`; `library/lists.go`), its regex library (`find`,
//! `findAll`; `library/regex.go`), cel-go's `ext.Sets` (`sets.contains`,
//! `sets.equivalent`, `sets.intersects`), the optional library's list
//! functions (`first`, `last`, `optional.unwrap`, `unwrapOpt`), and
//! `duration(int)` (which fails, as on the real server).

use std::cmp::Ordering;

use cel::common::types::{
    CelBool, CelInt, CelList, CelOptional, CelString, DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE,
};
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
    env.add_member_overload("find", "string_find", STRING_TYPE, vec![STRING_TYPE], find)?;
    env.add_member_overload(
        "findAll",
        "string_find_all",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_int",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all,
    )?;
    env.add_overload(
        "sets.contains",
        "sets_contains",
        vec![LIST_TYPE, LIST_TYPE],
        sets_contains,
    )?;
    env.add_overload(
        "sets.equivalent",
        "sets_equivalent",
        vec![LIST_TYPE, LIST_TYPE],
        sets_equivalent,
    )?;
    env.add_overload(
        "sets.intersects",
        "sets_intersects",
        vec![LIST_TYPE, LIST_TYPE],
        sets_intersects,
    )?;
    env.add_member_overload("first", "list_first", LIST_TYPE, vec![], first)?;
    env.add_member_overload("last", "list_last", LIST_TYPE, vec![], last)?;
    env.add_overload(
        "optional.unwrap",
        "optional_unwrap",
        vec![LIST_TYPE],
        unwrap,
    )?;
    env.add_member_overload(
        "unwrapOpt",
        "optional_unwrap_opt",
        LIST_TYPE,
        vec![],
        unwrap,
    )?;
    env.add_overload(
        "duration",
        "int_to_duration",
        vec![INT_TYPE],
        int_to_duration,
    )?;
    Ok(())
}

fn no_overload() -> ExecutionError {
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

fn text(v: &dyn Val) -> std::result::Result<&str, ExecutionError> {
    v.downcast_ref::<CelString>()
        .map(|s| s.inner())
        .ok_or_else(no_overload)
}

fn regex(pattern: &str, function: &str) -> std::result::Result<regex::Regex, ExecutionError> {
    regex::Regex::new(pattern)
        .map_err(|e| ExecutionError::function_error(function, format!("Illegal regex: {e}")))
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let re = regex(text(args[1].as_ref())?, "find")?;
    let found = re.find(text(args[0].as_ref())?).map_or("", |m| m.as_str());
    Ok(CowVal::owned(CelString::from(found.to_string())))
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let re = regex(text(args[1].as_ref())?, "findAll")?;
    let limit = match args.get(2) {
        Some(n) => *n.downcast_ref::<CelInt>().ok_or_else(no_overload)?.inner(),
        None => -1,
    };
    let haystack = text(args[0].as_ref())?;
    let found: Vec<Box<dyn Val + 'v>> = re
        .find_iter(haystack)
        .take(if limit < 0 {
            usize::MAX
        } else {
            limit as usize
        })
        .map(|m| Box::new(CelString::from(m.as_str().to_string())) as Box<dyn Val + 'v>)
        .collect();
    Ok(CowVal::owned(CelList::from(found)))
}

fn contains_all(list: &dyn Val, sub: &dyn Val) -> std::result::Result<bool, ExecutionError> {
    let items = elements(list)?;
    Ok(elements(sub)?
        .iter()
        .all(|s| items.iter().any(|i| i.equals(*s))))
}

fn sets_contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let yes = contains_all(args[0].as_ref(), args[1].as_ref())?;
    Ok(CowVal::owned(CelBool::from(yes)))
}

fn sets_equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let yes = contains_all(args[0].as_ref(), args[1].as_ref())?
        && contains_all(args[1].as_ref(), args[0].as_ref())?;
    Ok(CowVal::owned(CelBool::from(yes)))
}

fn sets_intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    let yes = elements(args[1].as_ref())?
        .iter()
        .any(|s| items.iter().any(|i| i.equals(*s)));
    Ok(CowVal::owned(CelBool::from(yes)))
}

fn first<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    Ok(CowVal::owned(match items.first() {
        Some(v) => CelOptional::of(v.clone_as_boxed()),
        None => CelOptional::none(),
    }))
}

fn last<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let items = elements(args[0].as_ref())?;
    Ok(CowVal::owned(match items.last() {
        Some(v) => CelOptional::of(v.clone_as_boxed()),
        None => CelOptional::none(),
    }))
}

fn unwrap<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    let mut out: Vec<Box<dyn Val + 'v>> = Vec::new();
    for item in elements(args[0].as_ref())? {
        let opt = item.downcast_ref::<CelOptional>().ok_or_else(no_overload)?;
        if let Some(v) = opt.inner() {
            out.push(v.clone_as_boxed());
        }
    }
    Ok(CowVal::owned(CelList::from(out)))
}

/// `duration(int)`: declared, but the real server's runtime has no
/// conversion for it.
fn int_to_duration<'b, 'v>(_: Vec<CowVal<'b, 'v>>) -> Result<'b, 'v> {
    Err(ExecutionError::function_error(
        "duration",
        "type conversion error from 'int' to 'google.protobuf.Duration'",
    ))
}
