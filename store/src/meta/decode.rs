//! An object body as the real server's serializer reads it: JSON, or YAML
//! as it also takes, with the `400` it answers for one it cannot read.

use serde_json::Value;

use super::status::Status;
use crate::go::strconv::quote_char;
use crate::resource::info::ResourceInfo;

/// An object body (JSON, or YAML as a real server also takes), or the 400
/// a real server answers for one it cannot read.
pub fn decode_object(body: &[u8], res: &ResourceInfo) -> Result<Value, Status> {
    let json_error = match serde_json::from_slice(body) {
        Ok(value) => return Ok(value),
        Err(e) => e,
    };
    let unrecognized = |why: String| {
        Status::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: {why}",
            res.kind
        ))
    };
    if body.first() == Some(&b'{') {
        // A JSON body: Go's words, and the start of the body.
        let why = if json_error.is_eof() {
            "unexpected end of JSON input".to_string()
        } else {
            let text = String::from_utf8_lossy(body);
            let line = text
                .lines()
                .nth(json_error.line().saturating_sub(1))
                .unwrap_or_default();
            let c = line
                .chars()
                .nth(json_error.column().saturating_sub(1))
                .unwrap_or(' ');
            format!(
                "invalid character {} looking for beginning of value",
                quote_char(c)
            )
        };
        let summary = if body.len() > 30 {
            format!("{} ...", String::from_utf8_lossy(&body[..30]))
        } else {
            String::from_utf8_lossy(body).into_owned()
        };
        return Err(unrecognized(format!("{why} ({summary})")));
    }
    serde_yaml_ng::from_slice(body).map_err(|e: serde_yaml_ng::Error| unrecognized(e.to_string()))
}
