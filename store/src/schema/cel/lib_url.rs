//! Kubernetes' URL library (`library/urls.go`): `url()`, `isURL()` and the
//! getters. A URL is read as Go's `url.ParseRequestURI` reads it: an
//! absolute URI or an absolute path, no fragment.

use std::collections::HashMap;

use cel::common::types::{CelBool, CelList, CelMap, CelMapKey, CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::opaque::{Content, Opaque, arg, error, opaque_type, owned, text};

static URL_TYPE: Type = opaque_type("kubernetes.URL");

/// A parsed URL.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Url {
    scheme: String,
    opaque: String,
    host: String,
    path: String,
    raw_path: String,
    raw_query: String,
}

impl Content for Url {
    const TYPE: &'static Type = &URL_TYPE;

    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

fn unhex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Go's `url.unescape`; `query` reads `+` as a space.
fn unescape(s: &str, query: bool) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let pair = bytes
                    .get(i + 1..i + 3)
                    .and_then(|p| Some((unhex(p[0])?, unhex(p[1])?)));
                let Some((hi, lo)) = pair else {
                    let bad: String = s[i..].chars().take(3).collect();
                    return Err(format!("invalid URL escape {bad:?}"));
                };
                out.push(hi << 4 | lo);
                i += 3;
            }
            b'+' if query => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Whether a byte stays as is in a path (`shouldEscape` with `encodePath`).
fn path_safe(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&c)
}

fn escape_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if path_safe(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn valid_optional_port(port: &str) -> bool {
    port.is_empty() || (port.starts_with(':') && port[1..].bytes().all(|b| b.is_ascii_digit()))
}

fn parse_host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let close = host.rfind(']').ok_or("missing ']' in host")?;
        let port = &host[close + 1..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
    } else if let Some(colon) = host.rfind(':') {
        let port = &host[colon..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
    }
    unescape(host, false)
}

/// `url.ParseRequestURI`, as `url.parse(raw, viaRequest)` reads it.
pub(crate) fn parse_request_uri(raw: &str) -> Result<Url, String> {
    let wrap = |e: String| format!("parse {raw:?}: {e}");
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(wrap("net/url: invalid control character in URL".into()));
    }
    if raw.is_empty() {
        return Err(wrap("empty url".into()));
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let mut rest = raw;
    for (i, c) in raw.bytes().enumerate() {
        match c {
            c if c.is_ascii_alphabetic() => {}
            c if (c.is_ascii_digit() || b"+-.".contains(&c)) && i > 0 => {}
            b':' if i == 0 => return Err(wrap("missing protocol scheme".into())),
            b':' => {
                url.scheme = raw[..i].to_ascii_lowercase();
                rest = &raw[i + 1..];
                break;
            }
            _ => break,
        }
    }
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_string();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_string();
            return Ok(url);
        }
        return Err(wrap("invalid URI for request".into()));
    }
    if !url.scheme.is_empty() && rest.starts_with("//") {
        let after = &rest[2..];
        let (authority, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        url.host = parse_host(host).map_err(wrap)?;
        rest = path;
    }
    url.path = unescape(rest, false).map_err(wrap)?;
    url.raw_path = rest.to_string();
    Ok(url)
}

impl Url {
    fn hostname(&self) -> &str {
        let host = &self.host;
        if let Some(inner) = host.strip_prefix('[') {
            return inner.split(']').next().unwrap_or_default();
        }
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    }

    fn port(&self) -> &str {
        let after = match self.host.rfind(']') {
            Some(i) => &self.host[i + 1..],
            None => &self.host,
        };
        after.rsplit_once(':').map_or("", |(_, p)| p)
    }

    fn escaped_path(&self) -> String {
        let valid = self
            .raw_path
            .bytes()
            .all(|b| path_safe(b) || b == b'%' || b"!'()*[]".contains(&b));
        if valid && unescape(&self.raw_path, false).is_ok_and(|p| p == self.path) {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".into();
        }
        escape_path(&self.path)
    }

    fn query<'v>(&self) -> CelMap<'v> {
        let mut values: Vec<(String, Vec<String>)> = Vec::new();
        for part in self
            .raw_query
            .split('&')
            .filter(|p| !p.is_empty() && !p.contains(';'))
        {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            let (Ok(k), Ok(v)) = (unescape(k, true), unescape(v, true)) else {
                continue;
            };
            match values.iter_mut().find(|(name, _)| *name == k) {
                Some((_, list)) => list.push(v),
                None => values.push((k, vec![v])),
            }
        }
        let entries: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = values
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
    owned(arg::<Url>(&args, 0)?.query())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_as_go_parses_request_uris() {
        let u = parse_request_uri("https://user@[::1]:8443/a%20b?x=1&x=2&y=").expect("valid");
        assert_eq!(u.scheme, "https");
        assert_eq!(u.host, "[::1]:8443");
        assert_eq!(u.hostname(), "::1");
        assert_eq!(u.port(), "8443");
        assert_eq!(u.escaped_path(), "/a%20b");
        assert_eq!(u.query().len(), 2);
        assert_eq!(
            parse_request_uri("example.com/x").unwrap_err(),
            "parse \"example.com/x\": invalid URI for request"
        );
        assert_eq!(
            parse_request_uri("http://h:port/").unwrap_err(),
            "parse \"http://h:port/\": invalid port \":port\" after host"
        );
        assert!(parse_request_uri("/relative/path").is_ok());
    }
}
