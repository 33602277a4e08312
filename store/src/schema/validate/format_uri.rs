//! The `uri` format: govalidator's `IsRequestURI`, that is Go 1.26's
//! `url.ParseRequestURI` (`net/url/url.go`): an absolute URI or an absolute
//! path, no control characters, a host that is a bracketed IPv6 address or
//! a name with an optional numeric port (with more than one colon, the
//! first one starts the port for http and https, the last one otherwise),
//! and well-formed `%` escapes.

use super::format_net;

/// Whether `url.ParseRequestURI` accepts `raw`.
pub(crate) fn is_request_uri(raw: &str) -> bool {
    if raw.bytes().any(|b| b < b' ' || b == 0x7f) || raw.is_empty() {
        return false;
    }
    if raw == "*" {
        return true;
    }
    let Some((scheme, rest)) = scheme(raw) else {
        return false;
    };
    let scheme = scheme.to_ascii_lowercase();
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        &rest[..rest.len() - 1]
    } else {
        rest.split_once('?').map_or(rest, |(before, _)| before)
    };
    if !rest.starts_with('/') {
        // An opaque URI when there is a scheme; else not a request URI.
        return !scheme.is_empty();
    }
    let mut path = rest;
    if !scheme.is_empty()
        && let Some(authority) = rest.strip_prefix("//")
    {
        let (authority, after) = match authority.find('/') {
            Some(i) => authority.split_at(i),
            None => (authority, ""),
        };
        if !authority_ok(&scheme, authority) {
            return false;
        }
        path = after;
    }
    unescape_ok(path, Mode::Path)
}

/// `getScheme`: `None` for "missing protocol scheme".
fn scheme(raw: &str) -> Option<(&str, &str)> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return None,
            b':' => return Some((&raw[..i], &raw[i + 1..])),
            _ => return Some(("", raw)),
        }
    }
    Some(("", raw))
}

fn authority_ok(scheme: &str, authority: &str) -> bool {
    let at = authority.rfind('@');
    let host = at.map_or(authority, |i| &authority[i + 1..]);
    if !host_ok(scheme, host) {
        return false;
    }
    let Some(i) = at else {
        return true;
    };
    let userinfo = &authority[..i];
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c);
    let escapes_ok = match userinfo.split_once(':') {
        None => unescape_ok(userinfo, Mode::UserPassword),
        Some((user, password)) => {
            unescape_ok(user, Mode::UserPassword) && unescape_ok(password, Mode::UserPassword)
        }
    };
    userinfo.chars().all(allowed) && escapes_ok
}

/// `parseHost`.
fn host_ok(scheme: &str, host: &str) -> bool {
    match host.rfind('[') {
        Some(i) if i > 0 => return false,
        Some(_) => {
            let Some(close) = host.rfind(']') else {
                return false;
            };
            let colon_port = &host[close + 1..];
            if !optional_port(colon_port) || !unescape_ok(colon_port, Mode::Host) {
                return false;
            }
            let name = &host[1..close];
            let unescaped = match name.find("%25") {
                Some(zone) => unescape(&name[..zone], Mode::Host)
                    .zip(unescape(&name[zone..], Mode::Zone))
                    .map(|(h, z)| h + &z),
                None => unescape(name, Mode::Host),
            };
            return unescaped
                .and_then(|addr| format_net::addr_is_v4(&addr))
                .is_some_and(|v4| !v4);
        }
        None => {
            if let Some(first) = host.find(':') {
                let last = host.rfind(':').unwrap_or(first);
                let i = if last != first && scheme != "http" && scheme != "https" {
                    last
                } else {
                    first
                };
                if !optional_port(&host[i..]) {
                    return false;
                }
            }
        }
    }
    unescape_ok(host, Mode::Host)
}

/// `validOptionalPort`: empty, or a colon and digits.
fn optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
}

fn unescape_ok(s: &str, mode: Mode) -> bool {
    unescape(s, mode).is_some()
}

/// `unescape`: the text with `%XX` decoded (bytes as Latin-1 characters,
/// enough to look for an address), or none when an escape is malformed or
/// a host holds a character it may not.
fn unescape(s: &str, mode: Mode) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                if i + 2 >= b.len() {
                    return None;
                }
                let (hi, lo) = (
                    (b[i + 1] as char).to_digit(16)?,
                    (b[i + 2] as char).to_digit(16)?,
                );
                let escaped = &s[i..i + 3];
                if mode == Mode::Host && hi < 8 && escaped != "%25" {
                    return None;
                }
                let v = (hi * 16 + lo) as u8;
                if mode == Mode::Zone && escaped != "%25" && v != b' ' && !host_char(v) {
                    return None;
                }
                out.push(v);
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && !host_char(c) {
                    return None;
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Whether a byte may stand unescaped in a host (`!shouldEscape(c,
/// encodeHost)`).
fn host_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!$&'()*+,;=:[]<>\"-_.~".contains(&c)
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
            assert_eq!(is_request_uri(uri), valid, "{uri:?}");
        }
    }
}
