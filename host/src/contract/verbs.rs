//! The names of the contract's verbs, operations and reasons, as
//! manifests, logs, reviews, recordings and the operator's configuration
//! spell them.

use super::{Operation, Reason, Verbs};

/// Every verb with its name, as manifests, logs and the operator's
/// configuration spell it.
pub const VERBS: [(Verbs, &str); 7] = [
    (Verbs::GET, "get"),
    (Verbs::LIST, "list"),
    (Verbs::WATCH, "watch"),
    (Verbs::CREATE, "create"),
    (Verbs::UPDATE, "update"),
    (Verbs::PATCH, "patch"),
    (Verbs::DELETE, "delete"),
];

/// The names of the verbs in `verbs`, in [`VERBS`] order.
pub fn verb_names(verbs: Verbs) -> impl Iterator<Item = &'static str> {
    VERBS
        .into_iter()
        .filter(move |(verb, _)| verbs.contains(*verb))
        .map(|(_, name)| name)
}

/// The verb a name spells (`"get"`), if it is one.
pub fn verb_named(name: &str) -> Option<Verbs> {
    VERBS
        .iter()
        .find(|(_, known)| *known == name)
        .map(|(verb, _)| *verb)
}

/// The name of a single verb.
pub fn verb_name(verb: Verbs) -> &'static str {
    VERBS
        .iter()
        .find(|(v, _)| *v == verb)
        .map_or("?", |(_, name)| name)
}

/// The operation named `name` (`CREATE`...), as reviews and
/// configurations spell it.
pub fn operation_named(name: &str) -> Option<Operation> {
    Some(match name {
        "CREATE" => Operation::Create,
        "UPDATE" => Operation::Update,
        "DELETE" => Operation::Delete,
        "CONNECT" => Operation::Connect,
        _ => return None,
    })
}

/// Every reason a request may have.
pub const REASONS: [Reason; 11] = [
    Reason::Added,
    Reason::Updated,
    Reason::Deleted,
    Reason::Finalizing,
    Reason::OwnedChanged,
    Reason::WatchedChanged,
    Reason::Requeued,
    Reason::Retry,
    Reason::Resync,
    Reason::ModuleReloaded,
    Reason::Manual,
];

/// The reason [`reason_name`] names `name`.
pub fn reason_of(name: &str) -> Option<Reason> {
    REASONS.into_iter().find(|r| reason_name(*r) == name)
}

/// A reason as the WIT names it: `added`, `owned-changed`...
pub fn reason_name(reason: Reason) -> &'static str {
    match reason {
        Reason::Added => "added",
        Reason::Updated => "updated",
        Reason::Deleted => "deleted",
        Reason::Finalizing => "finalizing",
        Reason::OwnedChanged => "owned-changed",
        Reason::WatchedChanged => "watched-changed",
        Reason::Requeued => "requeued",
        Reason::Retry => "retry",
        Reason::Resync => "resync",
        Reason::ModuleReloaded => "module-reloaded",
        Reason::Manual => "manual",
    }
}
