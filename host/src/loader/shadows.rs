//! Shadows the loader knows of: named by the operator configuration
//! (`modules.<name>.shadow`, a file however it is spelled), and those
//! waiting for a serving version of their module (a shadow never serves).

use super::{Decision, Loader};
use crate::source::Origin;

impl Loader {
    /// The module whose shadow the operator configuration names `origin`
    /// (`modules.<name>.shadow`), if any.
    pub(super) fn configured_shadow(&self, origin: &Origin) -> Option<&str> {
        self.config
            .modules
            .iter()
            .find(|(_, m)| {
                m.shadow
                    .as_deref()
                    .is_some_and(|path| origin_is(origin, path))
            })
            .map(|(name, _)| name.as_str())
    }
}

/// A waiting shadow, refused loudly: no source serves its module.
pub(super) fn without_serving(waiting: &Decision) -> Decision {
    let Decision::Shadow { version, .. } = waiting else {
        unreachable!("only shadows wait");
    };
    let name = version.module.name();
    Decision::Refuse {
        origin: version.origin.clone(),
        reason: "shadow_without_serving",
        message: format!(
            "it is a shadow of module {name:?}, which no source serves: a shadow never serves; it shadows once a version of {name:?} serves"
        ),
        serving: None,
    }
}

/// Whether `origin` is the module file `path` names (as given to the host,
/// or in a watched directory), however either is spelled.
pub(crate) fn origin_is(origin: &Origin, path: &str) -> bool {
    let same = |a: &std::path::Path| {
        a == std::path::Path::new(path)
            || std::fs::canonicalize(path)
                .is_ok_and(|p| std::fs::canonicalize(a).is_ok_and(|a| a == p))
    };
    match origin {
        Origin::Given(given) => same(std::path::Path::new(given)),
        Origin::File(file) => same(file),
        Origin::ConfigMap { .. } => false,
    }
}
