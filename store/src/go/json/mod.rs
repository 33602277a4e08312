//! Go's `encoding/json`, as the real server's decoding and encoding show
//! it: syntax errors in the scanner's words ([`syntax`]), duplicate fields
//! as the strict decoder finds them ([`duplicates`]), type errors and
//! strict unknown fields ([`decode`]), and JSON written as Go writes it
//! (`encode`).

pub mod decode;
pub mod duplicates;
pub(crate) mod encode;
pub mod syntax;

pub use decode::json_kind;
pub use syntax::syntax_error;
