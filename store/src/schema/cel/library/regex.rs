//! Kubernetes' regex library (`library/regex.go`): `find`, `findAll`.
//! Patterns are Go's (RE2), read as `regexp.Compile` reads them
//! ([`crate::go::regexp`]).

use cel::common::types::{CelInt, CelList, CelString, INT_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::lists::{no_overload, text};
use crate::go::regexp::compile;

type Result<'b, 'v> = std::result::Result<CowVal<'b, 'v>, ExecutionError>;

/// Registers the functions on `env`.
pub(crate) fn register(env: &mut Env) -> std::result::Result<(), DeclarationError> {
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
    Ok(())
}

/// A pattern compiled as Go's `regexp.Compile` compiles it, or the
/// library's `Illegal regex` error with Go's words.
fn regex(pattern: &str, function: &str) -> std::result::Result<regex::Regex, ExecutionError> {
    compile(pattern)
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
