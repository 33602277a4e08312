//! Watch streams: one JSON event per line, bookmarks, and the end of the stream.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt as _;
use http::{HeaderValue, Response, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use rekon_store::{EventType, ListOptions, Store, WatchEvent, WatchId};
use serde_json::Value;
use tokio::time::Instant;

use super::request::Request;
use crate::printers::{IncludeObject, TableMeta, TableOptions, columns, partial, table};
use crate::respond::{Body, Ctx, audit_headers, status_response};

/// One line of a watch stream, written straight from the object.
fn event_line(event_type: &str, object: &Value) -> Bytes {
    let mut line = Vec::with_capacity(4096);
    line.extend_from_slice(b"{\"type\":");
    let written = serde_json::to_writer(&mut line, event_type).and_then(|()| {
        line.extend_from_slice(b",\"object\":");
        serde_json::to_writer(&mut line, object)
    });
    if written.is_err() {
        return Bytes::new();
    }
    line.extend_from_slice(b"}\n");
    Bytes::from(line)
}

struct WatchGuard {
    store: Store,
    id: Option<WatchId>,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.store.unwatch(id);
        }
    }
}

struct WatchState {
    rx: tokio::sync::mpsc::UnboundedReceiver<Bytes>,
    guard: WatchGuard,
    deadline: Instant,
    next_bookmark: Instant,
    final_bookmark: Option<Instant>,
    bookmarks: bool,
    interval: Duration,
}

/// A watch of the objects `opts` selects, as a stream of JSON lines (or
/// Table rows, or metadata only, as the request asks).
pub(crate) fn watch(req: &Request<'_>, opts: ListOptions) -> Response<Body> {
    let (res, query, shape) = (req.res, req.query, req.ctx);
    let store = req.store.clone();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let bookmarks = query.flag("allowWatchBookmarks");
    let send_initial = query.flag("sendInitialEvents");
    let rv = query.get("resourceVersion").filter(|v| !v.is_empty());
    let legacy = rv.is_none() || rv == Some("0");
    let start_rv = if send_initial { None } else { rv };
    let sink_tx = tx.clone();
    // A watch's Table rows carry what `includeObject` asks; a value the
    // real server refuses is read as the default here.
    let cols = shape.table.map(|version| {
        let options =
            TableOptions::new(version, query.get("includeObject")).unwrap_or(TableOptions {
                version,
                include: IncludeObject::Metadata,
            });
        (columns(&store, res), options)
    });
    let metadata_only = shape.metadata_only;
    let mut first = true;
    let sink = Box::new(move |ev: WatchEvent| {
        let kind = ev.event_type.as_str();
        let line = match &cols {
            Some((cols, options)) if ev.event_type != EventType::Bookmark => {
                let meta = TableMeta {
                    resource_version: ev
                        .object
                        .pointer("/metadata/resourceVersion")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                    ..TableMeta::default()
                };
                let t = table(
                    cols,
                    meta,
                    std::slice::from_ref(&*ev.object),
                    *options,
                    first,
                );
                first = false;
                event_line(kind, &t)
            }
            _ if metadata_only && ev.event_type != EventType::Bookmark => {
                event_line(kind, &partial(&ev.object))
            }
            _ => event_line(kind, &ev.object),
        };
        sink_tx.send(line).is_ok()
    });
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(1800));
    let ctx = Ctx {
        pretty: false,
        yaml: false,
        table: None,
        metadata_only: false,
        metadata_as: None,
        accept: String::new(),
    };
    let id = match store.watch(res, &opts, start_rv, sink) {
        Ok(id) => id,
        Err(st) if st.code == 410 => {
            let _ = tx.send(event_line("ERROR", &st.to_json()));
            drop(tx);
            return stream_response(WatchState {
                rx,
                guard: WatchGuard { store, id: None },
                deadline: Instant::now() + timeout,
                next_bookmark: Instant::now() + timeout,
                final_bookmark: None,
                bookmarks: false,
                interval: timeout,
            });
        }
        Err(st) => return status_response(&st, &ctx),
    };
    drop(tx);
    if bookmarks && (legacy || send_initial) {
        store.watch_bookmark(id, true);
    }
    let now = Instant::now();
    let deadline = now + timeout;
    stream_response(WatchState {
        rx,
        guard: WatchGuard {
            store,
            id: Some(id),
        },
        deadline,
        next_bookmark: now + req.bookmark_interval,
        final_bookmark: timeout
            .checked_sub(Duration::from_secs(2))
            .filter(|d| !d.is_zero())
            .map(|d| now + d),
        bookmarks,
        interval: req.bookmark_interval,
    })
}

fn stream_response(st: WatchState) -> Response<Body> {
    let stream = futures::stream::unfold(st, |mut st| async move {
        loop {
            let bookmark_at = match st.final_bookmark {
                Some(f) => f.min(st.next_bookmark),
                None => st.next_bookmark,
            };
            tokio::select! {
                biased;
                msg = st.rx.recv() => {
                    return msg.map(|b| (Ok::<_, Infallible>(Frame::data(b)), st));
                }
                _ = tokio::time::sleep_until(st.deadline) => return None,
                _ = tokio::time::sleep_until(bookmark_at), if st.bookmarks => {
                    if let Some(id) = st.guard.id {
                        st.guard.store.watch_bookmark(id, false);
                    }
                    if st.final_bookmark.is_some_and(|f| f <= Instant::now()) {
                        st.final_bookmark = None;
                    } else {
                        st.next_bookmark = Instant::now() + st.interval;
                    }
                }
            }
        }
    });
    let mut resp = Response::new(BodyExt::boxed_unsync(StreamBody::new(stream.boxed())));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    audit_headers(&mut resp);
    resp
}
