//! The `/_rekon/` control endpoints of a server built with the `faults`
//! feature: the request log, open watches, and the faults to inject.

use std::time::Duration;

use http::{Method, Response};
use rekon_store::Status;
use serde_json::{Value, json};

use super::state::State;
use crate::faults::FailRule;
use crate::respond::{Body, Ctx, json_response, status_response, text_404};

/// Answers a request to a control endpoint.
pub(crate) fn control(
    state: &State,
    method: &Method,
    path: &str,
    body: &[u8],
    ctx: &Ctx,
) -> Response<Body> {
    let f = &state.faults;
    let arg: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let ok = || json_response(200, &json!({"ok": true}), ctx);
    match (method.as_str(), path) {
        ("GET", "/_rekon/requests") => json_response(200, &json!(f.requests()), ctx),
        ("DELETE", "/_rekon/requests") => {
            f.clear_requests();
            ok()
        }
        ("GET", "/_rekon/watches") => {
            json_response(200, &json!({"open": state.store.watch_count()}), ctx)
        }
        ("POST", "/_rekon/drop-watches") => {
            f.drop_watches();
            ok()
        }
        ("POST", "/_rekon/fail") => match serde_json::from_value::<FailRule>(arg) {
            Ok(rule) => {
                f.fail(rule);
                ok()
            }
            Err(e) => status_response(&Status::bad_request(format!("bad fail rule: {e}")), ctx),
        },
        ("POST", "/_rekon/latency") => {
            let ms = arg.get("millis").and_then(Value::as_u64).unwrap_or(0);
            f.set_latency(Duration::from_millis(ms));
            ok()
        }
        ("POST", "/_rekon/compact") => {
            f.compact();
            ok()
        }
        ("POST", "/_rekon/restart") => {
            let keep = arg.get("keepData").and_then(Value::as_bool).unwrap_or(true);
            // The restart closes this very connection: answer first.
            let f = f.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                f.restart(keep);
            });
            ok()
        }
        ("DELETE", "/_rekon/faults") => {
            f.clear();
            ok()
        }
        _ => text_404(),
    }
}
