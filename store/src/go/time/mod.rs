//! Go's `time`: timestamps parsed as `time.Parse` parses them with the
//! layouts the real server uses ([`parse`]), and durations as
//! `time.ParseDuration` reads them ([`duration`]); and the time formats of
//! go-openapi's `strfmt` over them ([`strfmt`]).

pub(crate) mod duration;
pub(crate) mod parse;
pub(crate) mod strfmt;
#[cfg(test)]
mod tests;
