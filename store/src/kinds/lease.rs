//! Lease (coordination.k8s.io/v1): its times are `metav1.MicroTime`, which
//! the real server parses strictly (six fractional digits), answering 400
//! to a client that writes them otherwise.

use crate::prelude::*;

/// Refuses a Lease whose `acquireTime` or `renewTime` is not a MicroTime,
/// with the real server's message.
pub(crate) fn validate(obj: &Value) -> Result<(), Status> {
    for f in ["acquireTime", "renewTime"] {
        if let Some(t) = obj.pointer(&format!("/spec/{f}")).and_then(Value::as_str)
            && !is_micro_time(t)
        {
            return Err(Status::bad_request(format!(
                "Lease in version \"v1\" cannot be handled as a Lease: parsing time \"{t}\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"{t}\" as \"2006-01-02T15:04:05.000000Z07:00\""
            )));
        }
    }
    Ok(())
}

/// Exactly six fractional digits, as `metav1.MicroTime` requires.
pub(crate) fn is_micro_time(t: &str) -> bool {
    let Some((_, frac)) = t.split_once('.') else {
        return false;
    };
    let digits: String = frac.chars().take_while(char::is_ascii_digit).collect();
    digits.len() == 6 && chrono::DateTime::parse_from_rfc3339(t).is_ok()
}
