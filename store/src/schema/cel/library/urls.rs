//! Kubernetes' URL library (`library/urls.go`): `url()`, `isURL()` and the
//! getters. A URL is read as Go's `url.ParseRequestURI` reads it
//! ([`crate::go::url`]): an absolute URI or an absolute path, no fragment.

use std::collections::HashMap;

use cel::common::types::{CelBool, CelList, CelMap, CelMapKey, CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::opaque::{Content, Opaque, arg, error, opaque_type, owned, text};
use crate::go::url::{Url, parse_request_uri};

static URL_TYPE: Type = opaque_type("kubernetes.URL");

impl Content for Url {
    const TYPE: &'static Type = &URL_TYPE;

    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

/// `URL.Query` as a CEL map of lists.
fn query<'v>(url: &Url) -> CelMap<'v> {
    let entries: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = url
        .query()
        .into_iter()
        .map(|(k, list)| {
            let list: Vec<Box<dyn Val + 'v>> = list
                .into_iter()
                .map(|s| Box::new(CelString::from(s)) as Box<dyn Val + 'v>)
                .collect();
            (
                CelMapKey::from(k),
                Box::new(CelList::from(list)) as Box<dyn Val + 'v>,
            )
        })
        .collect();
    CelMap::from(entries)
}

/// Registers the functions on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let url = || std::borrow::ToOwned::to_owned(&URL_TYPE);
    env.add_type(url())?;
    env.add_overload("url", "string_to_url", vec![STRING_TYPE], to_url)?;
    env.add_overload("isURL", "is_url_string", vec![STRING_TYPE], is_url)?;
    env.add_member_overload("getScheme", "url_get_scheme", url(), vec![], get_scheme)?;
    env.add_member_overload("getHost", "url_get_host", url(), vec![], get_host)?;
    env.add_member_overload(
        "getHostname",
        "url_get_hostname",
        url(),
        vec![],
        get_hostname,
    )?;
    env.add_member_overload("getPort", "url_get_port", url(), vec![], get_port)?;
    env.add_member_overload(
        "getEscapedPath",
        "url_get_escaped_path",
        url(),
        vec![],
        get_escaped_path,
    )?;
    env.add_member_overload("getQuery", "url_get_query", url(), vec![], get_query)?;
    Ok(())
}

type Out<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

fn to_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    let url = parse_request_uri(text(&args, 0)?).map_err(|e| {
        error(
            "url",
            format!("URL parse error during conversion from string: {e}"),
        )
    })?;
    owned(Opaque(url))
}

fn is_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(CelBool::from(parse_request_uri(text(&args, 0)?).is_ok()))
}

fn string_of<'b, 'v>(args: &[CowVal<'b, 'v>], f: fn(&Url) -> String) -> Out<'b, 'v> {
    owned(CelString::from(f(arg::<Url>(args, 0)?)))
}

fn get_scheme<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    string_of(&args, |u| u.scheme.clone())
}

fn get_host<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    string_of(&args, |u| u.host.clone())
}

fn get_hostname<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    string_of(&args, |u| u.hostname().to_string())
}

fn get_port<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    string_of(&args, |u| u.port().to_string())
}

fn get_escaped_path<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    string_of(&args, Url::escaped_path)
}

fn get_query<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Out<'b, 'v> {
    owned(query(arg::<Url>(&args, 0)?))
}
