//! Go's behaviours that the real server's answers show, each re-made once:
//! `encoding/json` ([`json`]), `strconv` ([`strconv`]), `fmt`'s verbs
//! ([`fmt`]), `regexp` ([`regexp`]), `net` and `net/netip` ([`net`]), `net/mail`
//! ([`mail`]), `net/url` ([`url`]), `time` ([`time`]), the cron
//! schedules of `robfig/cron` ([`cron`]), go-difflib's unified diffs
//! ([`difflib`]) and go-yaml's repeated keys ([`yaml`]). Everything above asks here rather than writing its own.

pub(crate) mod cron;
pub(crate) mod difflib;
pub(crate) mod fmt;
pub mod json;
pub(crate) mod mail;
pub(crate) mod net;
pub(crate) mod regexp;
pub mod strconv;
pub(crate) mod time;
pub(crate) mod url;
pub(crate) mod yaml;
