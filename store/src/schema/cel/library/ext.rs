//! cel-go's own extensions the `cel` crate lacks: `ext.Sets`
//! (`sets.contains`, `sets.equivalent`, `sets.intersects`), the optional
//! library's list functions (`first`, `last`, `optional.unwrap`,
//! `unwrapOpt`), and `duration(int)` (declared, and failing at run time as
//! on the real server).

use cel::common::types::{CelBool, CelList, CelOptional, INT_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::lists::{elements, no_overload};

type Result<'b, 'v> = std::result::Result<CowVal<'b, 'v>, ExecutionError>;

/// Registers the functions on `env`.
pub(crate) fn register(env: &mut Env) -> std::result::Result<(), DeclarationError> {
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
