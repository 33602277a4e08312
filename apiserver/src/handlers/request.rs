//! One request to a resource, as the handlers and the admission chain
//! read it: what it addresses, its body, its query, and the store.

use std::time::Duration;

use http::Method;
use rekon_store::{ListOptions, ResourceInfo, Store};

use crate::respond::{Ctx, Query};

/// A request to a resource (a collection, an object, or a subresource).
pub(crate) struct Request<'a> {
    /// The store served.
    pub(crate) store: &'a Store,
    /// The resource addressed.
    pub(crate) res: &'a ResourceInfo,
    /// The namespace in the path.
    pub(crate) namespace: Option<&'a str>,
    /// The object's name in the path (none for a collection).
    pub(crate) name: Option<&'a str>,
    /// The subresource in the path (`status`, `scale`, `finalize`).
    pub(crate) sub: Option<&'a str>,
    /// The HTTP method.
    pub(crate) method: Method,
    /// The body's content type.
    pub(crate) content_type: String,
    /// The body.
    pub(crate) body: Vec<u8>,
    /// The query parameters.
    pub(crate) query: &'a Query,
    /// The User-Agent header.
    pub(crate) user_agent: &'a str,
    /// How to write the answer.
    pub(crate) ctx: &'a Ctx,
    /// How often watches with `allowWatchBookmarks` get a BOOKMARK.
    pub(crate) bookmark_interval: Duration,
}

impl Request<'_> {
    /// The Kubernetes verb of the request.
    pub(crate) fn verb(&self) -> &'static str {
        verb_of(&self.method, self.name.is_some(), self.query)
    }

    /// The field manager of a write: the `fieldManager` parameter, or the
    /// User-Agent's first word, as the real server defaults it.
    pub(crate) fn field_manager(&self) -> String {
        match self.query.get("fieldManager").filter(|m| !m.is_empty()) {
            Some(m) => m.to_string(),
            None => self
                .user_agent
                .split('/')
                .next()
                .filter(|s| !s.is_empty())
                .unwrap_or("unknown")
                .to_string(),
        }
    }

    /// The options of a list, watch or deletecollection.
    pub(crate) fn list_options(&self) -> ListOptions {
        let query = self.query;
        ListOptions {
            namespace: self.namespace.map(str::to_string),
            label_selector: query.get("labelSelector").map(str::to_string),
            field_selector: query.get("fieldSelector").map(str::to_string),
            limit: query.get("limit").and_then(|l| l.parse().ok()),
            continue_token: query.get("continue").map(str::to_string),
            resource_version: query.get("resourceVersion").map(str::to_string),
            resource_version_match: query.get("resourceVersionMatch").map(str::to_string),
            shard_selector: query.get("shardSelector").map(str::to_string),
        }
    }
}

/// The Kubernetes verb of a method on a collection or an object.
pub(crate) fn verb_of(method: &Method, has_name: bool, query: &Query) -> &'static str {
    match (method.as_str(), has_name) {
        ("GET", false) if query.flag("watch") => "watch",
        ("GET", false) => "list",
        ("GET", true) if query.flag("watch") => "watch",
        ("GET", true) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", false) => "deletecollection",
        ("DELETE", true) => "delete",
        _ => "unknown",
    }
}
