//! Go 1.26's `url.Parse` and `url.ParseRequestURI` (`net/url/url.go`),
//! with their words: no control characters, a host that is a bracketed
//! IPv6 address or a name with an optional numeric port (with more than
//! one colon, the first one starts the port for http and https, the last
//! one otherwise), userinfo of the characters RFC 3986 allows, and
//! well-formed `%` escapes; a request URI is an absolute URI or an absolute
//! path. The `uri` format, CEL's URL library and the CRD's webhook URLs
//! all read URLs here.

use super::net;
use super::strconv::go_quote;

/// A URL as `ParseRequestURI` gives it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Url {
    /// The scheme, lower case.
    pub scheme: String,
    /// What follows `scheme:` when it is not a path (`mailto:a@b.c`).
    pub opaque: String,
    /// The userinfo before the host's `@`, as written, when there is one.
    pub user: Option<String>,
    /// The host, unescaped, with its port.
    pub host: String,
    /// The path, unescaped.
    pub path: String,
    /// The path as written.
    pub raw_path: String,
    /// The query, without `?`.
    pub raw_query: String,
    /// The fragment after `#`, unescaped (`url.Parse` only).
    pub fragment: String,
}

/// How a part of a URL is unescaped (Go's `encoding` modes).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

/// `url.ParseRequestURI`: the URL, or Go's error (`parse "x": invalid URI
/// for request`).
pub(crate) fn parse_request_uri(raw: &str) -> Result<Url, String> {
    parse_with(raw, true).map_err(|why| format!("parse {}: {why}", go_quote(raw)))
}

/// `url.Parse`: a URL or a relative reference, with a fragment after `#`.
pub(crate) fn parse(raw: &str) -> Result<Url, String> {
    let (u, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let mut url = parse_with(u, false).map_err(|why| format!("parse {}: {why}", go_quote(u)))?;
    url.fragment = unescape(fragment, Mode::Fragment)
        .map_err(|why| format!("parse {}: {why}", go_quote(raw)))?;
    Ok(url)
}

/// `url.parse(raw, viaRequest)`.
fn parse_with(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < b' ' || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let (scheme, mut rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
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
        if via_request {
            return Err("invalid URI for request".into());
        }
        if rest
            .split('/')
            .next()
            .is_some_and(|segment| segment.contains(':'))
        {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, path) = match after.find('/') {
            Some(i) => after.split_at(i),
            None => (after, ""),
        };
        (url.user, url.host) = parse_authority(&url.scheme, authority)?;
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    url.raw_path = rest.to_string();
    Ok(url)
}

/// `getScheme`: the scheme (empty when there is none) and the rest.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// `parseAuthority`: the userinfo (checked, kept as written) and the host.
fn parse_authority(scheme: &str, authority: &str) -> Result<(Option<String>, String), String> {
    let at = authority.rfind('@');
    let host = parse_host(scheme, at.map_or(authority, |i| &authority[i + 1..]))?;
    let Some(i) = at else {
        return Ok((None, host));
    };
    let userinfo = &authority[..i];
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c);
    if !userinfo.chars().all(allowed) {
        return Err("net/url: invalid userinfo".into());
    }
    match userinfo.split_once(':') {
        None => unescape(userinfo, Mode::UserPassword)?,
        Some((user, password)) => {
            unescape(user, Mode::UserPassword)?;
            unescape(password, Mode::UserPassword)?
        }
    };
    Ok((Some(userinfo.to_string()), host))
}

/// `parseHost`.
fn parse_host(scheme: &str, host: &str) -> Result<String, String> {
    match host.rfind('[') {
        Some(i) if i > 0 => return Err("invalid IP-literal".into()),
        Some(_) => {
            let Some(close) = host.rfind(']') else {
                return Err("missing ']' in host".into());
            };
            let colon_port = &host[close + 1..];
            if !valid_optional_port(colon_port) {
                return Err(format!("invalid port {} after host", go_quote(colon_port)));
            }
            let colon_port = unescape(colon_port, Mode::Host)?;
            let name = &host[1..close];
            let name = match name.find("%25") {
                Some(zone) => {
                    unescape(&name[..zone], Mode::Host)? + &unescape(&name[zone..], Mode::Zone)?
                }
                None => unescape(name, Mode::Host)?,
            };
            return match net::parse_addr(&name) {
                None => Err(format!(
                    "invalid host: ParseAddr({}): unable to parse IP",
                    go_quote(&name)
                )),
                Some(addr) if addr.ip.is_ipv4() => Err("invalid IP-literal".into()),
                Some(_) => Ok(format!("[{name}]{colon_port}")),
            };
        }
        None => {
            if let Some(first) = host.find(':') {
                let last = host.rfind(':').unwrap_or(first);
                let i = if last != first && scheme != "http" && scheme != "https" {
                    last
                } else {
                    first
                };
                if !valid_optional_port(&host[i..]) {
                    return Err(format!("invalid port {} after host", go_quote(&host[i..])));
                }
            }
        }
    }
    unescape(host, Mode::Host)
}

/// `validOptionalPort`: empty, or a colon and digits.
fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `url.unescape`: `%XX` decoded (`+` a space in a query component),
/// refusing a malformed escape (`invalid URL escape "%zz"`) and, in a host,
/// a character a host may not hold (`invalid character "|" in host name`).
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let digits = b.get(i + 1..i + 3).and_then(|p| {
                    Some(((p[0] as char).to_digit(16)?, (p[1] as char).to_digit(16)?))
                });
                let Some((hi, lo)) = digits else {
                    let bad = &b[i..b.len().min(i + 3)];
                    return Err(format!(
                        "invalid URL escape {}",
                        go_quote(&String::from_utf8_lossy(bad))
                    ));
                };
                let escaped = &s[i..i + 3];
                if mode == Mode::Host && hi < 8 && escaped != "%25" {
                    return Err(format!("invalid URL escape {}", go_quote(escaped)));
                }
                let v = (hi * 16 + lo) as u8;
                if mode == Mode::Zone && escaped != "%25" && v != b' ' && !host_char(v) {
                    return Err(format!("invalid URL escape {}", go_quote(escaped)));
                }
                out.push(v);
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && !host_char(c) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&(c as char).to_string())
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Whether a byte may stand unescaped in a host (`!shouldEscape(c,
/// encodeHost)`).
fn host_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!$&'()*+,;=:[]<>\"-_.~".contains(&c)
}

/// Whether a byte stays as is in a path (`shouldEscape` with `encodePath`).
fn path_safe(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&c)
}

/// `escape(path, encodePath)`.
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

impl Url {
    /// `URL.Hostname`: the host without its port and brackets.
    pub(crate) fn hostname(&self) -> &str {
        let host = &self.host;
        if let Some(inner) = host.strip_prefix('[') {
            return inner.split(']').next().unwrap_or_default();
        }
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    }

    /// `URL.Port`.
    pub(crate) fn port(&self) -> &str {
        let after = match self.host.rfind(']') {
            Some(i) => &self.host[i + 1..],
            None => &self.host,
        };
        after.rsplit_once(':').map_or("", |(_, p)| p)
    }

    /// `URL.EscapedPath`.
    pub(crate) fn escaped_path(&self) -> String {
        let valid = self
            .raw_path
            .bytes()
            .all(|b| path_safe(b) || b == b'%' || b"!'()*[]".contains(&b));
        if valid && unescape(&self.raw_path, Mode::Path).is_ok_and(|p| p == self.path) {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".into();
        }
        escape_path(&self.path)
    }

    /// `URL.Query`: each key's values, keys in the order they first come,
    /// malformed pairs (and those with a `;`) left out.
    pub(crate) fn query(&self) -> Vec<(String, Vec<String>)> {
        let mut values: Vec<(String, Vec<String>)> = Vec::new();
        for part in self
            .raw_query
            .split('&')
            .filter(|p| !p.is_empty() && !p.contains(';'))
        {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            let (Ok(k), Ok(v)) = (
                unescape(k, Mode::QueryComponent),
                unescape(v, Mode::QueryComponent),
            ) else {
                continue;
            };
            match values.iter_mut().find(|(name, _)| *name == k) {
                Some((_, list)) => list.push(v),
                None => values.push((k, vec![v])),
            }
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_uris_follow_go() {
        let cases = [
            ("http://example.com/path?q=1", true),
            ("https://user:pass@example.com:8080/", true),
            ("/just/a/path", true),
            ("mailto:someone@example.com", true),
            ("*", true),
            ("http://[::1]:80/", true),
            ("http://[fe80::1%25en0]/", true),
            ("foo:a:b:80", true),
            ("relative/path", false),
            ("", false),
            (":nope", false),
            ("http://a:b:80/", false),
            ("mongodb://a:1,b:2/", true),
            ("http://[1.2.3.4]/", false),
            ("http://x[::1]/", false),
            ("http://host/%zz", false),
            ("http://h|st/", false),
            ("http://us er@host/", false),
            ("http://host/a\u{7f}", false),
            ("http://host:80a/", false),
        ];
        for (uri, valid) in cases {
            assert_eq!(parse_request_uri(uri).is_ok(), valid, "{uri:?}");
        }
    }

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
        assert_eq!(
            parse_request_uri("http://h|st/").unwrap_err(),
            "parse \"http://h|st/\": invalid character \"|\" in host name"
        );
        assert_eq!(
            parse_request_uri("http://[1.2.3.4]/").unwrap_err(),
            "parse \"http://[1.2.3.4]/\": invalid IP-literal"
        );
        assert!(parse_request_uri("/relative/path").is_ok());
    }

    #[test]
    fn urls_parse_as_go_parses_them() {
        let u = parse("https://user@host:8443/x?q=1#a%20b").expect("valid");
        assert_eq!(u.user.as_deref(), Some("user"));
        assert_eq!(u.host, "host:8443");
        assert_eq!(u.raw_query, "q=1");
        assert_eq!(u.fragment, "a b");
        assert_eq!(parse("https:host").expect("opaque").host, "");
        assert_eq!(parse("//host/x").expect("a network path").host, "host");
        assert_eq!(
            parse(":x").unwrap_err(),
            "parse \":x\": missing protocol scheme"
        );
        assert_eq!(parse("a:b/c:d").expect("a scheme").opaque, "b/c:d");
        assert_eq!(
            parse("1a:b").unwrap_err(),
            "parse \"1a:b\": first path segment in URL cannot contain colon"
        );
        assert_eq!(
            parse("https://h|st/#x").unwrap_err(),
            "parse \"https://h|st/\": invalid character \"|\" in host name"
        );
    }
}
