//! What a write changed as each manager's version sees it
//! (structured-merge-diff's `Updater.update`): a manager that wrote
//! through another version of the kind is compared on the old and new
//! objects converted to its version, so a v1 autoscaler's
//! `targetCPUUtilizationPercentage` is `.spec.metrics` to a v2 manager.

use std::collections::HashMap;

use serde_json::Value;

use super::compare::{Comparison, compare};
use super::fieldpath::FieldSet;
use super::managed::{ownable, root_type, strip_meta};
use crate::resource::info::ResourceInfo;

/// Converts an object to an apiVersion of its kind (`None`: it cannot be,
/// or needs not be).
pub(crate) type Converter<'a> = &'a dyn Fn(&Value, &str) -> Option<Value>;

/// What one write changed, as managers of one apiVersion see it.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    /// The fields it added or modified (what an apply conflicts on).
    pub(crate) touched: FieldSet,
    /// The same, without the metadata root nobody is recorded owning
    /// (what an update takes from the others).
    pub(crate) changed: FieldSet,
    /// The fields it removed, without the metadata root.
    pub(crate) removed: FieldSet,
}

impl Seen {
    fn of(comparison: Comparison) -> Seen {
        let touched: FieldSet = comparison
            .added
            .union(&comparison.modified)
            .cloned()
            .collect();
        Seen {
            changed: strip_meta(touched.clone()),
            touched,
            removed: strip_meta(comparison.removed),
        }
    }
}

/// The comparisons of one write, by the apiVersion they are made in, each
/// made once.
pub(crate) struct ByVersion<'a> {
    res: &'a ResourceInfo,
    old: &'a Value,
    new: &'a Value,
    subresource: Option<&'a str>,
    convert: Option<Converter<'a>>,
    made: HashMap<String, Seen>,
}

impl<'a> ByVersion<'a> {
    /// The comparisons of `old` and `new` (both in `res`'s version, whose
    /// comparison is `own`), converted by `convert` for other versions.
    pub(crate) fn new(
        res: &'a ResourceInfo,
        old: &'a Value,
        new: &'a Value,
        subresource: Option<&'a str>,
        convert: Option<Converter<'a>>,
        own: Comparison,
    ) -> ByVersion<'a> {
        let mut made = HashMap::new();
        made.insert(res.api_version(), Seen::of(own));
        ByVersion {
            res,
            old,
            new,
            subresource,
            convert,
            made,
        }
    }

    /// What a manager of `api_version` sees the write change: the write's
    /// own when the objects cannot be converted there.
    pub(crate) fn of(&mut self, api_version: &str) -> &Seen {
        if !self.made.contains_key(api_version) {
            let made = match self.in_version(api_version) {
                Some(comparison) => Seen::of(comparison),
                None => self.made[&self.res.api_version()].clone(),
            };
            self.made.insert(api_version.to_string(), made);
        }
        &self.made[api_version]
    }

    /// The write's own [`Seen`], given up.
    pub(crate) fn into_own(mut self) -> Seen {
        let own = self.res.api_version();
        self.made
            .remove(&own)
            .expect("the write's own version is made first")
    }

    fn in_version(&self, api_version: &str) -> Option<Comparison> {
        let convert = self.convert?;
        let converted = |o: &Value| match o.get("apiVersion").and_then(Value::as_str) {
            Some(v) if v == api_version => Some(o.clone()),
            _ => convert(o, api_version),
        };
        let (old, new) = (converted(self.old)?, converted(self.new)?);
        let mut res = self.res.clone();
        res.version = api_version.rsplit('/').next()?.to_string();
        let ty = root_type(&res);
        Some(compare(
            Some(&ownable(&res, &old, self.subresource)),
            Some(&ownable(&res, &new, self.subresource)),
            ty,
        ))
    }
}
