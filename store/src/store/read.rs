//! Reads: one object, or a page of a list by namespace and selectors.

use serde_json::Value;

use super::handle::Store;
use super::paging::{decode_continue, encode_continue, in_key_order, list_key, parse_list_rv};
use crate::apis::selectors::{field_labels, field_set};
use crate::meta::selector::{FieldSelector, LabelSelector};
use crate::meta::status::Status;
use crate::meta::types::{ListOptions, ObjectList};
use crate::registry::present::{arrange, present_checked};
use crate::registry::registry::ObjKey;
use crate::registry::storage::try_view;
use crate::resource::info::ResourceInfo;

impl Store {
    /// Whether `name` exists (without reading it).
    pub fn exists(&self, res: &ResourceInfo, namespace: Option<&str>, name: &str) -> bool {
        let g = self.lock();
        let ns = res.namespace_of(namespace);
        g.objects
            .get(&res.key())
            .is_some_and(|m| m.contains_key(&(ns.to_string(), name.to_string())))
    }

    /// Reads one object.
    pub fn get(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, Status> {
        let g = self.lock();
        let ns = res.namespace_of(namespace);
        let object = g
            .objects
            .get(&res.key())
            .and_then(|m| m.get(&(ns.to_string(), name.to_string())))
            .ok_or_else(|| Status::not_found(res, name))?;
        present_checked(res, object)
    }

    /// Reads one object as a GET with a `resourceVersion` does: a version
    /// that is not a number is refused before the object is looked for, as
    /// the watch cache's versioner refuses it (`ParseResourceVersion`: an
    /// error with no API status, which the real server answers as a 500
    /// without a reason).
    pub fn get_at(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        resource_version: Option<&str>,
    ) -> Result<Value, Status> {
        parse_list_rv(resource_version.unwrap_or_default())
            .map_err(|why| Status::new(500, "", why))?;
        self.get(res, namespace, name)
    }

    /// The shard selector of a list or watch, when the
    /// `ShardedListAndWatch` gate is on and one is given (an empty one is
    /// none); one that does not parse is the error the real storage
    /// returns, which its handler answers as a 500.
    pub(crate) fn shard_selector(
        &self,
        opts: &ListOptions,
    ) -> Result<Option<crate::meta::shard::ShardSelector>, Status> {
        let Some(text) = opts.shard_selector.as_deref().filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        if !self.lock().config.sharded_list_and_watch {
            return Ok(None);
        }
        crate::meta::shard::ShardSelector::parse(text)
            .map(Some)
            .map_err(|why| Status::unknown(format!("invalid shard selector: {why}")))
    }

    /// Lists objects, newest state, sorted by namespace then name: those
    /// the selectors match, a page at a time when `opts.limit` asks for one.
    ///
    /// The options are read as the real server's storage reads them
    /// (apiserver's `storage.ValidateListOptions` and etcd3's `GetList`):
    /// the selectors first (a field selector's labels converted by the
    /// kind's conversion, `apis/selectors.rs`), then a continue token
    /// (refused with its reason, and with a resourceVersion other than
    /// `"0"`), then the resourceVersion (a number; `"0"` ignores the limit,
    /// as the watch cache does).
    pub fn list(&self, res: &ResourceInfo, opts: &ListOptions) -> Result<ObjectList, Status> {
        let labels = LabelSelector::parse(opts.label_selector.as_deref().unwrap_or(""))?;
        let fields = FieldSelector::parse_for(
            opts.field_selector.as_deref().unwrap_or(""),
            &field_labels(res),
        )?;
        let shard = self.shard_selector(opts)?;
        let rv = opts.resource_version.as_deref().unwrap_or("");
        let token = opts.continue_token.as_deref().filter(|t| !t.is_empty());
        let continued = token.map(decode_continue).transpose()?;
        if continued.is_some() && !rv.is_empty() && rv != "0" {
            return Err(Status::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let g = self.lock();
        if continued.is_none() {
            let n = parse_list_rv(rv)
                .map_err(|why| Status::bad_request(format!("invalid resource version: {why}")))?;
            let exact = opts.resource_version_match.as_deref() == Some("Exact");
            if exact && n < g.history_start {
                return Err(Status::expired(
                    "The resourceVersion for the provided list is too old.",
                ));
            }
        }
        let (list_rv, start) = match continued {
            // A token's version: the list's (a negative one: the newest).
            Some((rv, start)) if rv > 0 => {
                if (rv as u64) < g.history_start {
                    return Err(Status::expired(
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
                    ));
                }
                (rv as u64, Some(start))
            }
            Some((_, start)) => (g.rv, Some(start)),
            None => (g.rv, None),
        };
        let ns_filter = if res.namespaced {
            opts.namespace.as_deref()
        } else {
            None
        };
        let across_namespaces = res.namespaced && ns_filter.is_none();
        // A range read from the start key (or the namespace's first
        // object), like etcd serves a paginated list: a page costs its own
        // objects, not the whole collection.
        let lower: ObjKey = match (start, ns_filter) {
            (Some(start), Some(ns)) => (ns.to_string(), start),
            (Some(start), None) if across_namespaces => match start.split_once('/') {
                Some((ns, name)) => (ns.to_string(), name.to_string()),
                None => (start, String::new()),
            },
            (Some(start), None) => (String::new(), start),
            (None, ns) => (ns.unwrap_or_default().to_string(), String::new()),
        };
        let limit = match opts.limit {
            Some(limit) if limit > 0 && (rv != "0" || token.is_some()) => limit,
            _ => usize::MAX,
        };
        // remainingItemCount is only given without selectors (as upstream).
        let count_rest = labels.is_empty() && fields.is_empty();
        let mut page: Vec<Value> = Vec::new();
        let mut last: Option<&ObjKey> = None;
        let mut more = 0u64;
        // Every key read from the start, matching or not: etcd's count,
        // which a shard selector (not a selector to the count) leaves as
        // it is.
        let mut scanned = 0u64;
        if let Some(m) = g.objects.get(&res.key()) {
            for (k, o) in in_key_order(m, lower, across_namespaces) {
                if ns_filter.is_some_and(|ns| ns != k.0) {
                    break;
                }
                scanned += 1;
                if page.len() >= limit {
                    // The page is full and keys remain, matching or not:
                    // a next page. Without selectors, every key left
                    // counts (without reading it).
                    more += 1;
                    if !count_rest {
                        break;
                    }
                    continue;
                }
                let seen = try_view(res, o)?;
                if shard.as_ref().is_none_or(|s| s.matches(&seen))
                    && labels.matches(&seen)
                    && (fields.is_empty() || fields.matches(&field_set(res, o, &seen)))
                {
                    page.push(arrange(res, &seen));
                    last = Some(k);
                }
            }
        }
        // A field selector naming one object in one namespace (or of a
        // cluster-scoped kind) reads that one key (`MatchesSingle`): no
        // next page.
        let single = fields.exact_name().is_some() && (!res.namespaced || ns_filter.is_some());
        let (continue_token, remaining) = match last {
            Some(k) if more > 0 && !single => (
                Some(encode_continue(
                    list_rv,
                    &list_key(&k.0, &k.1, across_namespaces),
                )),
                count_rest.then_some(match &shard {
                    Some(_) => scanned.saturating_sub(limit as u64),
                    None => more,
                }),
            ),
            _ => (None, None),
        };
        Ok(ObjectList {
            items: page,
            resource_version: list_rv.to_string(),
            continue_token,
            remaining_item_count: remaining,
            shard_info: shard.map(|s| s.text()),
        })
    }
}
