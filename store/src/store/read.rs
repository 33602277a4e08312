//! Reads: one object, or a page of a list by namespace and selectors.

use std::ops::Bound;

use serde_json::Value;

use super::handle::Store;
use super::paging::{decode_continue, encode_continue, list_key};
use crate::meta::selector::{FieldSelector, LabelSelector, field_labels};
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

    /// Lists objects, newest state, sorted by namespace then name.
    pub fn list(&self, res: &ResourceInfo, opts: &ListOptions) -> Result<ObjectList, Status> {
        let labels = LabelSelector::parse(opts.label_selector.as_deref().unwrap_or(""))?;
        let fields = FieldSelector::parse(
            opts.field_selector.as_deref().unwrap_or(""),
            &field_labels(res),
        )?;
        let g = self.lock();
        let (list_rv, start) = match &opts.continue_token {
            Some(tok) if !tok.is_empty() => {
                let (rv, start) = decode_continue(tok)?;
                if rv < 0 || (rv as u64) < g.history_start {
                    return Err(Status::expired(
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
                    ));
                }
                (rv as u64, Some(start))
            }
            _ => (g.rv, None),
        };
        let ns_filter = if res.namespaced {
            opts.namespace.as_deref()
        } else {
            None
        };
        // A range read from where the previous page stopped (or the
        // namespace's first object), like etcd serves a paginated list:
        // a page costs its own objects, not the whole collection.
        let after: Option<ObjKey> = start.map(|s| match s.split_once('/') {
            Some((ns, name)) => (ns.to_string(), name.to_string()),
            None => (String::new(), s),
        });
        let first = ns_filter.map(|ns| (ns.to_string(), String::new()));
        let lower = match (after, first) {
            (Some(after), Some(first)) if first > after => Bound::Included(first),
            (Some(after), _) => Bound::Excluded(after),
            (None, Some(first)) => Bound::Included(first),
            (None, None) => Bound::Unbounded,
        };
        let limit = opts.limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
        // remainingItemCount is only given without selectors (as upstream).
        let count_rest = labels.is_empty() && fields.is_empty();
        let mut page: Vec<Value> = Vec::new();
        let mut last: Option<&ObjKey> = None;
        let mut more = 0u64;
        if let Some(m) = g.objects.get(&res.key()) {
            for (k, o) in m.range((lower, Bound::Unbounded)) {
                if ns_filter.is_some_and(|ns| ns != k.0) {
                    break;
                }
                if count_rest && page.len() >= limit {
                    // Without selectors every object counts: no need to
                    // read the rest.
                    more += 1;
                    continue;
                }
                let seen = try_view(res, o)?;
                if !(labels.matches(&seen) && fields.matches(&seen)) {
                    continue;
                }
                if page.len() < limit {
                    page.push(arrange(res, &seen));
                    last = Some(k);
                } else {
                    more += 1;
                    if !count_rest {
                        break;
                    }
                }
            }
        }
        let (continue_token, remaining) = match last {
            Some(k) if more > 0 => (
                Some(encode_continue(list_rv, &list_key(&k.0, &k.1))),
                count_rest.then_some(more),
            ),
            _ => (None, None),
        };
        Ok(ObjectList {
            items: page,
            resource_version: list_rv.to_string(),
            continue_token,
            remaining_item_count: remaining,
        })
    }
}
