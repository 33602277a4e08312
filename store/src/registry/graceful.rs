//! What is checked and marked before an object is deleted
//! (`rest.BeforeDelete`, `staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go`):
//! a delete the kind's REST storage refuses outright, the DELETE's
//! preconditions, and the grace period of a kind deleted
//! gracefully (a Pod): a first delete marks it, a later one may only
//! shorten the period it was given.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde_json::{Value, json};

use crate::apis::deletion::{check_graceful_delete, refuse_delete};
use crate::machinery::object::{is_deleting, meta, meta_mut};
use crate::meta::status::Status;
use crate::meta::types::Deletion;
use crate::resource::info::ResourceInfo;

/// What `BeforeDelete` makes of a delete.
pub(super) enum BeforeDelete {
    /// Not a graceful delete: the kind has none, or the object's earlier
    /// delete left it no grace period.
    Now,
    /// A graceful delete: the object marked (`deletionTimestamp`,
    /// `deletionGracePeriodSeconds`, the generation up on a first
    /// delete), and its grace period.
    Graceful(Value, i64),
    /// A graceful delete is under way and this one does not shorten it:
    /// nothing changes.
    Pending,
}

/// `rest.BeforeDelete` for `obj` and the DELETE `how`: its preconditions
/// (a 409 in `BeforeDelete`'s words), then, for a kind deleted gracefully,
/// the grace period.
pub(super) fn before_delete(
    res: &ResourceInfo,
    obj: &Value,
    how: &Deletion,
) -> Result<BeforeDelete, Status> {
    let name = meta(obj, "name").unwrap_or_default();
    if let Some(refused) = refuse_delete(res, &name) {
        return Err(refused);
    }
    let pre = &how.preconditions;
    let uid = meta(obj, "uid").unwrap_or_default();
    if let Some(want) = pre.uid.as_deref()
        && want != uid
    {
        return Err(Status::precondition_failed(res, &name, "UID", want, &uid));
    }
    let rv = meta(obj, "resourceVersion").unwrap_or_default();
    if let Some(want) = pre.resource_version.as_deref()
        && want != rv
    {
        return Err(Status::precondition_failed(
            res,
            &name,
            "ResourceVersion",
            want,
            &rv,
        ));
    }
    // Negative periods are taken as 1 s, asked or stored.
    let asked = how.grace_period.map(|g| if g < 0 { 1 } else { g });
    let stored = obj
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64)
        .map(|g| if g < 0 { 1 } else { g });
    if is_deleting(obj) {
        if check_graceful_delete(res, obj, asked).is_none() {
            return Ok(BeforeDelete::Now);
        }
        // Deleted before without a grace period: delete it now.
        let Some(stored) = stored.filter(|g| *g != 0) else {
            return Ok(BeforeDelete::Now);
        };
        // Only a shorter grace period may be asked.
        let Some(mut period) = asked.filter(|p| *p < stored) else {
            return Ok(BeforeDelete::Pending);
        };
        let now = Utc::now();
        let at = obj
            .pointer("/metadata/deletionTimestamp")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map_or(now, |t| t.with_timezone(&Utc));
        let mut at = at - Duration::seconds(stored) + Duration::seconds(period);
        // Never into the past: a graceful delete whose period has run out
        // keeps the shortest one, for another to finish it.
        if at < now {
            at = now;
            if period != 0 {
                period = 1;
            }
        }
        let mut marked = obj.clone();
        let md = meta_mut(&mut marked);
        md.insert("deletionTimestamp".into(), json!(timestamp(at)));
        md.insert("deletionGracePeriodSeconds".into(), json!(period));
        return Ok(BeforeDelete::Graceful(marked, period));
    }
    let Some(period) = check_graceful_delete(res, obj, asked) else {
        return Ok(BeforeDelete::Now);
    };
    let mut marked = obj.clone();
    let md = meta_mut(&mut marked);
    let at = Utc::now() + Duration::seconds(period);
    md.insert("deletionTimestamp".into(), json!(timestamp(at)));
    md.insert("deletionGracePeriodSeconds".into(), json!(period));
    // A first graceful delete is a change its controllers must see.
    let generation = md.get("generation").and_then(Value::as_i64).unwrap_or(0);
    if generation > 0 {
        md.insert("generation".into(), json!(generation + 1));
    }
    Ok(BeforeDelete::Graceful(marked, period))
}

/// `markAsDeleting` (`store.go`), for a delete that is not graceful but
/// waits for finalizers: the generation up on a first delete, the
/// deletionTimestamp now (unless it is already earlier), no grace period.
pub(super) fn mark_as_deleting(obj: &mut Value) {
    let now = Utc::now();
    let deleting = is_deleting(obj);
    let md = meta_mut(obj);
    let generation = md.get("generation").and_then(Value::as_i64).unwrap_or(0);
    if !deleting && generation > 0 {
        md.insert("generation".into(), json!(generation + 1));
    }
    let earlier = md
        .get("deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .is_some_and(|t| t.with_timezone(&Utc) <= now);
    if !earlier {
        md.insert("deletionTimestamp".into(), json!(timestamp(now)));
    }
    md.insert("deletionGracePeriodSeconds".into(), json!(0));
}

/// A time as the API server writes a deletionTimestamp (whole seconds).
fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}
