//! Conversions between the SDK's types and the generated bindings' (only
//! on `wasm32`): what the host calls take and what the exports return.

use crate::bindings::rekon::reconciler::types as b;
use crate::{
    Action, ApiError, EventType, Gvk, IndexKey, Level, Manifest, Mapping, ObjectRef, PatchType,
    Predicate, Propagation, Reason, Request, Verbs,
};

pub(crate) fn gvk(g: &Gvk) -> b::Gvk {
    b::Gvk {
        group: g.group.clone(),
        version: g.version.clone(),
        kind: g.kind.clone(),
    }
}

pub(crate) fn gvk_from(g: b::Gvk) -> Gvk {
    Gvk {
        group: g.group,
        version: g.version,
        kind: g.kind,
    }
}

pub(crate) fn object_ref(r: &ObjectRef) -> b::ObjectRef {
    b::ObjectRef {
        kind: gvk(&r.kind),
        namespace: r.namespace.clone(),
        name: r.name.clone(),
    }
}

pub(crate) fn api_error(e: b::ApiError) -> ApiError {
    ApiError {
        code: e.code,
        reason: e.reason,
        message: e.message,
    }
}

pub(crate) fn patch_type(p: &PatchType) -> b::PatchType {
    match p {
        PatchType::Merge => b::PatchType::Merge,
        PatchType::Json => b::PatchType::Json,
        PatchType::Apply {
            field_manager,
            force,
        } => b::PatchType::Apply(b::ApplyOptions {
            field_manager: field_manager.clone(),
            force: *force,
        }),
    }
}

pub(crate) fn propagation(p: Propagation) -> b::Propagation {
    match p {
        Propagation::Background => b::Propagation::Background,
        Propagation::Foreground => b::Propagation::Foreground,
        Propagation::Orphan => b::Propagation::Orphan,
    }
}

pub(crate) fn event_type(e: EventType) -> b::EventType {
    match e {
        EventType::Normal => b::EventType::Normal,
        EventType::Warning => b::EventType::Warning,
    }
}

pub(crate) fn level(l: Level) -> b::Level {
    match l {
        Level::Trace => b::Level::Trace,
        Level::Debug => b::Level::Debug,
        Level::Info => b::Level::Info,
        Level::Warn => b::Level::Warn,
        Level::Error => b::Level::Error,
    }
}

fn verbs(v: Verbs) -> b::Verbs {
    let mut out = b::Verbs::empty();
    for (ours, theirs) in [
        (Verbs::GET, b::Verbs::GET),
        (Verbs::LIST, b::Verbs::LIST),
        (Verbs::WATCH, b::Verbs::WATCH),
        (Verbs::CREATE, b::Verbs::CREATE),
        (Verbs::UPDATE, b::Verbs::UPDATE),
        (Verbs::PATCH, b::Verbs::PATCH),
        (Verbs::DELETE, b::Verbs::DELETE),
    ] {
        if v.contains(ours) {
            out |= theirs;
        }
    }
    out
}

fn predicates(p: &[Predicate]) -> Vec<b::Predicate> {
    p.iter()
        .map(|p| match p {
            Predicate::GenerationChanged => b::Predicate::GenerationChanged,
            Predicate::LabelsChanged => b::Predicate::LabelsChanged,
            Predicate::AnnotationsChanged => b::Predicate::AnnotationsChanged,
            Predicate::ResourceVersionChanged => b::Predicate::ResourceVersionChanged,
        })
        .collect()
}

pub(crate) fn permission(p: crate::Permission) -> b::Permission {
    b::Permission {
        kind: gvk(&p.kind),
        verbs: verbs(p.verbs),
        namespaces: p.namespaces,
    }
}

pub(crate) fn manifest(m: Manifest) -> b::Manifest {
    b::Manifest {
        name: m.name,
        version: m.version,
        primary: gvk(&m.primary),
        owns: m
            .owns
            .iter()
            .map(|o| b::Owned {
                kind: gvk(&o.kind),
                predicates: predicates(&o.predicates),
            })
            .collect(),
        watches: m
            .watches
            .into_iter()
            .map(|w| b::Watch {
                kind: gvk(&w.kind),
                mapping: match w.mapping {
                    Mapping::OwnerReference => b::Mapping::OwnerReference,
                    Mapping::Label(key) => b::Mapping::Label(key),
                    Mapping::SameName => b::Mapping::SameName,
                    Mapping::AllPrimaries => b::Mapping::AllPrimaries,
                },
                label_selector: w.label_selector,
                predicates: predicates(&w.predicates),
            })
            .collect(),
        finalizer: m.finalizer,
        permissions: m.permissions.into_iter().map(permission).collect(),
        max_concurrency: m.max_concurrency,
        timeout_ms: m.timeout_ms,
        primary_selector: m.primary_selector,
        primary_namespaces: m.primary_namespaces,
        primary_predicates: predicates(&m.primary_predicates),
        resync_period_ms: m.resync_period_ms,
        indexes: m
            .indexes
            .into_iter()
            .map(|i| b::Index {
                name: i.name,
                kind: gvk(&i.kind),
                key: match i.key {
                    IndexKey::Field(path) => b::IndexKey::Field(path),
                    IndexKey::Label(key) => b::IndexKey::Label(key),
                },
            })
            .collect(),
    }
}

pub(crate) fn request(r: b::Request) -> Request {
    Request {
        target: ObjectRef {
            kind: gvk_from(r.target.kind),
            namespace: r.target.namespace,
            name: r.target.name,
        },
        object: r.object,
        reason: match r.reason {
            b::Reason::Added => Reason::Added,
            b::Reason::Updated => Reason::Updated,
            b::Reason::Deleted => Reason::Deleted,
            b::Reason::Finalizing => Reason::Finalizing,
            b::Reason::OwnedChanged => Reason::OwnedChanged,
            b::Reason::WatchedChanged => Reason::WatchedChanged,
            b::Reason::Requeued => Reason::Requeued,
            b::Reason::Retry => Reason::Retry,
            b::Reason::Resync => Reason::Resync,
            b::Reason::ModuleReloaded => Reason::ModuleReloaded,
            b::Reason::Manual => Reason::Manual,
        },
        attempt: r.attempt,
    }
}

pub(crate) fn action(a: Action) -> b::Action {
    match a {
        Action::Done => b::Action::Done,
        Action::RequeueAfter(ms) => b::Action::RequeueAfter(ms),
    }
}
