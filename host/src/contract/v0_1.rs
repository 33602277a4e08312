//! Components built for `rekon:reconciler@0.1.0` (the text is kept in
//! `wit/versions/0.1.0/`): their bindings, and the conversions between
//! their types and the current ones.
//!
//! What 0.1.0 cannot say gets the value that behaves as 0.1.0 did: every
//! change passes (no predicates), no primary selector or namespaces, no
//! resync, no indexes. A 0.1.0 component never sees a 0.2 type: the host's
//! answers are converted back, and a `list-by-index` it cannot call.

#[allow(missing_docs)]
mod generated {
    wasmtime::component::bindgen!({
        path: "../wit/versions/0.1.0",
        world: "reconciler",
        imports: { default: async },
        exports: { default: async },
    });
}

pub(crate) use generated::rekon as wit;
pub(crate) use generated::{Reconciler, ReconcilerPre};

use wit::reconciler::types as old;

use super::{
    Action, ApiError, ApplyOptions, EventType, GuestError, Gvk, Level, Manifest, Mapping,
    ObjectRef, Owned, PatchType, Permission, Propagation, Reason, Request, Verbs, Watch,
};

// --- from 0.1.0 to the current types ----------------------------------

pub(crate) fn gvk(g: old::Gvk) -> Gvk {
    Gvk {
        group: g.group,
        version: g.version,
        kind: g.kind,
    }
}

pub(crate) fn object_ref(r: old::ObjectRef) -> ObjectRef {
    ObjectRef {
        kind: gvk(r.kind),
        namespace: r.namespace,
        name: r.name,
    }
}

pub(crate) fn patch_type(p: old::PatchType) -> PatchType {
    match p {
        old::PatchType::Merge => PatchType::Merge,
        old::PatchType::Json => PatchType::Json,
        old::PatchType::Apply(o) => PatchType::Apply(ApplyOptions {
            field_manager: o.field_manager,
            force: o.force,
        }),
    }
}

pub(crate) fn propagation(p: old::Propagation) -> Propagation {
    match p {
        old::Propagation::Background => Propagation::Background,
        old::Propagation::Foreground => Propagation::Foreground,
        old::Propagation::Orphan => Propagation::Orphan,
    }
}

pub(crate) fn event_type(e: old::EventType) -> EventType {
    match e {
        old::EventType::Normal => EventType::Normal,
        old::EventType::Warning => EventType::Warning,
    }
}

pub(crate) fn level(l: old::Level) -> Level {
    match l {
        old::Level::Trace => Level::Trace,
        old::Level::Debug => Level::Debug,
        old::Level::Info => Level::Info,
        old::Level::Warn => Level::Warn,
        old::Level::Error => Level::Error,
    }
}

fn mapping(m: old::Mapping) -> Mapping {
    match m {
        old::Mapping::OwnerReference => Mapping::OwnerReference,
        old::Mapping::Label(key) => Mapping::Label(key),
        old::Mapping::SameName => Mapping::SameName,
        old::Mapping::AllPrimaries => Mapping::AllPrimaries,
    }
}

/// Each 0.1.0 verb and its current flag.
const VERBS: [(old::Verbs, Verbs); 7] = [
    (old::Verbs::GET, Verbs::GET),
    (old::Verbs::LIST, Verbs::LIST),
    (old::Verbs::WATCH, Verbs::WATCH),
    (old::Verbs::CREATE, Verbs::CREATE),
    (old::Verbs::UPDATE, Verbs::UPDATE),
    (old::Verbs::PATCH, Verbs::PATCH),
    (old::Verbs::DELETE, Verbs::DELETE),
];

fn verbs(v: old::Verbs) -> Verbs {
    VERBS
        .into_iter()
        .filter(|(before, _)| v.contains(*before))
        .fold(Verbs::empty(), |all, (_, now)| all | now)
}

/// A 0.1.0 manifest in current form: every change passes, every primary is
/// reconciled, no resync, no indexes.
pub(crate) fn manifest(m: old::Manifest) -> Manifest {
    Manifest {
        name: m.name,
        version: m.version,
        primary: gvk(m.primary),
        owns: m
            .owns
            .into_iter()
            .map(|kind| Owned {
                kind: gvk(kind),
                predicates: Vec::new(),
            })
            .collect(),
        watches: m
            .watches
            .into_iter()
            .map(|w| Watch {
                kind: gvk(w.kind),
                mapping: mapping(w.mapping),
                label_selector: w.label_selector,
                predicates: Vec::new(),
            })
            .collect(),
        finalizer: m.finalizer,
        permissions: m
            .permissions
            .into_iter()
            .map(|p| Permission {
                kind: gvk(p.kind),
                verbs: verbs(p.verbs),
                namespaces: p.namespaces,
            })
            .collect(),
        max_concurrency: m.max_concurrency,
        timeout_ms: m.timeout_ms,
        primary_selector: None,
        primary_namespaces: Vec::new(),
        primary_predicates: Vec::new(),
        resync_period_ms: None,
        indexes: Vec::new(),
    }
}

pub(crate) fn action(a: old::Action) -> Action {
    match a {
        old::Action::Done => Action::Done,
        old::Action::RequeueAfter(ms) => Action::RequeueAfter(ms),
    }
}

pub(crate) fn guest_error(e: old::ReconcileError) -> GuestError {
    GuestError {
        message: e.message,
        retry: e.retry,
    }
}

// --- from the current types to 0.1.0 -----------------------------------

fn old_gvk(g: &Gvk) -> old::Gvk {
    old::Gvk {
        group: g.group.clone(),
        version: g.version.clone(),
        kind: g.kind.clone(),
    }
}

fn old_reason(r: Reason) -> old::Reason {
    match r {
        Reason::Added => old::Reason::Added,
        Reason::Updated => old::Reason::Updated,
        Reason::Deleted => old::Reason::Deleted,
        Reason::Finalizing => old::Reason::Finalizing,
        Reason::OwnedChanged => old::Reason::OwnedChanged,
        Reason::WatchedChanged => old::Reason::WatchedChanged,
        Reason::Requeued => old::Reason::Requeued,
        Reason::Retry => old::Reason::Retry,
        Reason::Resync => old::Reason::Resync,
        Reason::ModuleReloaded => old::Reason::ModuleReloaded,
        Reason::Manual => old::Reason::Manual,
    }
}

pub(crate) fn request(r: &Request) -> old::Request {
    old::Request {
        target: old::ObjectRef {
            kind: old_gvk(&r.target.kind),
            namespace: r.target.namespace.clone(),
            name: r.target.name.clone(),
        },
        object: r.object.clone(),
        reason: old_reason(r.reason),
        attempt: r.attempt,
    }
}

pub(crate) fn api_error(e: ApiError) -> old::ApiError {
    old::ApiError {
        code: e.code,
        reason: e.reason,
        message: e.message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_keep_their_meaning_across_versions() {
        assert_eq!(
            verbs(old::Verbs::GET | old::Verbs::DELETE),
            Verbs::GET | Verbs::DELETE
        );
        for (before, now) in VERBS {
            assert_eq!(verbs(before), now);
        }
    }
}
