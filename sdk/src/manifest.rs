//! What a reconciler is and needs: [`Manifest`] and its builder.

use std::ops::BitOr;

use crate::types::Gvk;

/// How an event on a watched (not owned) kind is turned into requests for
/// primary objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// The primary named by the watched object's controller ownerReference.
    OwnerReference,
    /// The label with this key on the watched object holds the primary's
    /// name, in the watched object's namespace.
    Label(String),
    /// The primary with the same namespace and name as the watched object.
    SameName,
    /// Every primary object.
    AllPrimaries,
}

/// Which changes of a source's objects queue reconciles. A change passes
/// when any of the source's predicates says so; no predicate passes every
/// change. Objects appearing and disappearing, and deletion starting
/// (`deletionTimestamp` set), always pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Predicate {
    /// `metadata.generation` changed: the spec changed (not status, labels
    /// or annotations). controller-runtime's `GenerationChangedPredicate`.
    GenerationChanged,
    /// `metadata.labels` changed.
    LabelsChanged,
    /// `metadata.annotations` changed.
    AnnotationsChanged,
    /// Anything changed (`metadata.resourceVersion`): the default.
    ResourceVersionChanged,
}

/// A kind the reconciler watches besides its primary and owned kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watch {
    /// The watched kind.
    pub kind: Gvk,
    /// How its events map to primary objects.
    pub mapping: Mapping,
    /// Only watch objects matching this label selector.
    pub label_selector: Option<String>,
    /// Which changes queue reconciles (empty: every change).
    pub predicates: Vec<Predicate>,
}

impl Watch {
    /// Watch `kind`, mapping its events to primaries with `mapping`.
    pub fn new(kind: Gvk, mapping: Mapping) -> Self {
        Watch {
            kind,
            mapping,
            label_selector: None,
            predicates: Vec::new(),
        }
    }

    /// Only watch objects matching this label selector.
    #[must_use]
    pub fn selector(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }

    /// Only these changes queue reconciles.
    #[must_use]
    pub fn predicates(mut self, predicates: &[Predicate]) -> Self {
        self.predicates = predicates.to_vec();
        self
    }
}

/// A kind the primary owns, and which of its changes queue the owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owned {
    /// The owned kind.
    pub kind: Gvk,
    /// Which changes queue the owner (empty: every change).
    pub predicates: Vec<Predicate>,
}

/// What an index keys each object by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexKey {
    /// The value at a dotted field path (`spec.nodeName`); a list indexes
    /// the object under each of its scalar items.
    Field(String),
    /// The value of the label with this key.
    Label(String),
}

/// A named index the host's cache keeps over a kind, for
/// [`api::list_by_index`](crate::api::list_by_index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Index {
    /// Name, unique within the module (`[a-z0-9-]`).
    pub name: String,
    /// The indexed kind.
    pub kind: Gvk,
    /// What each object is indexed by.
    pub key: IndexKey,
}

/// A set of API verbs (`Verbs::GET | Verbs::LIST`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Verbs(u8);

impl Verbs {
    /// No verb.
    pub const NONE: Verbs = Verbs(0);
    /// Read one object.
    pub const GET: Verbs = Verbs(1);
    /// List objects.
    pub const LIST: Verbs = Verbs(1 << 1);
    /// Be told about changes.
    pub const WATCH: Verbs = Verbs(1 << 2);
    /// Create objects.
    pub const CREATE: Verbs = Verbs(1 << 3);
    /// Replace whole objects, including status.
    pub const UPDATE: Verbs = Verbs(1 << 4);
    /// Patch objects (merge, JSON patch, apply), including status.
    pub const PATCH: Verbs = Verbs(1 << 5);
    /// Delete objects.
    pub const DELETE: Verbs = Verbs(1 << 6);
    /// get, list and watch.
    pub const READ: Verbs = Verbs(0b111);
    /// Every verb.
    pub const ALL: Verbs = Verbs(0b111_1111);

    /// Whether every verb of `other` is in `self`.
    pub fn contains(self, other: Verbs) -> bool {
        self.0 & other.0 == other.0
    }

    /// The raw bits (get = 1, list = 2, watch = 4, create = 8, update = 16,
    /// patch = 32, delete = 64).
    pub fn bits(self) -> u8 {
        self.0
    }

    /// Verbs from raw bits; unknown bits are dropped.
    pub fn from_bits(bits: u8) -> Self {
        Verbs(bits & Verbs::ALL.0)
    }
}

impl BitOr for Verbs {
    type Output = Verbs;
    fn bitor(self, rhs: Verbs) -> Verbs {
        Verbs(self.0 | rhs.0)
    }
}

/// One grant: verbs on a kind, optionally limited to some namespaces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permission {
    /// The kind the grant is for.
    pub kind: Gvk,
    /// What may be done with it.
    pub verbs: Verbs,
    /// Namespaces the grant covers; empty means every namespace.
    pub namespaces: Vec<String>,
}

impl Permission {
    /// Whether this grant allows `verb` on `kind` in `namespace`, by the
    /// rule the host applies: group and kind, every version (like RBAC).
    pub fn allows(&self, kind: &Gvk, verb: Verbs, namespace: Option<&str>) -> bool {
        self.kind.group == kind.group
            && self.kind.kind == kind.kind
            && self.verbs.contains(verb)
            && (self.namespaces.is_empty()
                || namespace.is_some_and(|ns| self.namespaces.iter().any(|n| n == ns)))
    }
}

/// The verbs by the names the contract and the host give them.
#[cfg(not(target_arch = "wasm32"))]
const VERB_NAMES: [(Verbs, &str); 7] = [
    (Verbs::GET, "get"),
    (Verbs::LIST, "list"),
    (Verbs::WATCH, "watch"),
    (Verbs::CREATE, "create"),
    (Verbs::UPDATE, "update"),
    (Verbs::PATCH, "patch"),
    (Verbs::DELETE, "delete"),
];

/// A grant under the permission rule the SDK's harness shares with the
/// host (`rekon_rules::is_allowed`).
#[cfg(not(target_arch = "wasm32"))]
impl rekon_rules::Grant for Permission {
    fn group(&self) -> &str {
        &self.kind.group
    }

    fn kind(&self) -> &str {
        &self.kind.kind
    }

    fn grants(&self, verb: &str) -> bool {
        VERB_NAMES
            .iter()
            .any(|(flag, name)| *name == verb && self.verbs.contains(*flag))
    }

    fn namespaces(&self) -> &[String] {
        &self.namespaces
    }
}

/// What a reconciler is and needs, returned by [`Reconciler::manifest`](crate::Reconciler::manifest).
///
/// ```
/// use rekon_sdk::{Gvk, Manifest, Verbs};
/// let m = Manifest::new("app", Gvk::new("demo.rekon.dev", "v1", "App"))
///     .owns(Gvk::new("apps", "v1", "Deployment"))
///     .finalizer("demo.rekon.dev/cleanup")
///     .generation_changed()   // the module's own status writes wake nothing
///     .allow(Gvk::new("apps", "v1", "Deployment"), Verbs::ALL, &[]);
/// assert_eq!(m.owns.len(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Module name, DNS-label style; the field manager is `rekon-<name>`.
    pub name: String,
    /// Free-form version of the module.
    pub version: String,
    /// The kind this reconciler reconciles.
    pub primary: Gvk,
    /// Kinds the primary owns through a controller ownerReference.
    pub owns: Vec<Owned>,
    /// Other kinds that influence primaries.
    pub watches: Vec<Watch>,
    /// The finalizer this reconciler puts on primaries.
    pub finalizer: Option<String>,
    /// Everything the reconciler may do.
    pub permissions: Vec<Permission>,
    /// Hint: how many objects may be reconciled at once.
    pub max_concurrency: Option<u32>,
    /// Hint: CPU time budget of one reconcile in milliseconds.
    pub timeout_ms: Option<u32>,
    /// Only primaries matching this label selector are cached and reconciled.
    pub primary_selector: Option<String>,
    /// Only primaries in these namespaces (empty: every namespace).
    pub primary_namespaces: Vec<String>,
    /// Which changes of a primary queue a reconcile (empty: every change).
    pub primary_predicates: Vec<Predicate>,
    /// Reconcile every primary again this often (milliseconds, jittered).
    pub resync_period_ms: Option<u64>,
    /// Indexes the host keeps over kinds the reconciler reads.
    pub indexes: Vec<Index>,
}

impl Manifest {
    /// A manifest for the module `name` reconciling `primary`. The primary
    /// kind is granted get, list, watch, update and patch (status included);
    /// add more with [`allow`](Self::allow).
    pub fn new(name: impl Into<String>, primary: Gvk) -> Self {
        Manifest {
            name: name.into(),
            version: "0.0.0".to_owned(),
            permissions: vec![Permission {
                kind: primary.clone(),
                verbs: Verbs::READ | Verbs::UPDATE | Verbs::PATCH,
                namespaces: Vec::new(),
            }],
            primary,
            owns: Vec::new(),
            watches: Vec::new(),
            finalizer: None,
            max_concurrency: None,
            timeout_ms: None,
            primary_selector: None,
            primary_namespaces: Vec::new(),
            primary_predicates: Vec::new(),
            resync_period_ms: None,
            indexes: Vec::new(),
        }
    }

    /// Sets the module version (e.g. `env!("CARGO_PKG_VERSION")`).
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Declares an owned kind, and grants every verb on it.
    #[must_use]
    pub fn owns(self, kind: Gvk) -> Self {
        self.owns_when(kind, &[])
    }

    /// Declares an owned kind whose changes queue the owner only when one
    /// of `predicates` passes, and grants every verb on it.
    #[must_use]
    pub fn owns_when(mut self, kind: Gvk, predicates: &[Predicate]) -> Self {
        self = self.allow(kind.clone(), Verbs::ALL, &[]);
        self.owns.push(Owned {
            kind,
            predicates: predicates.to_vec(),
        });
        self
    }

    /// Only primaries matching this label selector are cached and
    /// reconciled (`app=web,tier in (fe,be)`).
    #[must_use]
    pub fn selector(mut self, selector: impl Into<String>) -> Self {
        self.primary_selector = Some(selector.into());
        self
    }

    /// Only primaries in these namespaces are cached and reconciled.
    #[must_use]
    pub fn namespaces(mut self, namespaces: &[&str]) -> Self {
        self.primary_namespaces = namespaces.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// Only these changes of a primary queue a reconcile.
    #[must_use]
    pub fn predicates(mut self, predicates: &[Predicate]) -> Self {
        self.primary_predicates = predicates.to_vec();
        self
    }

    /// Only spec changes of a primary (a new `metadata.generation`) queue
    /// a reconcile: the reconciler's own status writes do not wake it.
    #[must_use]
    pub fn generation_changed(self) -> Self {
        self.predicates(&[Predicate::GenerationChanged])
    }

    /// Reconcile every primary again this often (jittered by up to 10%),
    /// with reason `Resync`, after the work users cause.
    #[must_use]
    pub fn resync(mut self, period: std::time::Duration) -> Self {
        self.resync_period_ms = Some(u64::try_from(period.as_millis()).unwrap_or(u64::MAX));
        self
    }

    /// Declares an index over `kind` for
    /// [`api::list_by_index`](crate::api::list_by_index), and grants get,
    /// list and watch on the kind.
    #[must_use]
    pub fn index(mut self, name: impl Into<String>, kind: Gvk, key: IndexKey) -> Self {
        self = self.allow(kind.clone(), Verbs::READ, &[]);
        self.indexes.push(Index {
            name: name.into(),
            kind,
            key,
        });
        self
    }

    /// Declares a watched kind, and grants get, list and watch on it.
    #[must_use]
    pub fn watches(mut self, watch: Watch) -> Self {
        self = self.allow(watch.kind.clone(), Verbs::READ, &[]);
        self.watches.push(watch);
        self
    }

    /// Declares the finalizer put on primaries.
    #[must_use]
    pub fn finalizer(mut self, finalizer: impl Into<String>) -> Self {
        self.finalizer = Some(finalizer.into());
        self
    }

    /// Grants `verbs` on `kind` in `namespaces` (empty: every namespace).
    /// Grants for the same kind and namespaces are merged.
    #[must_use]
    pub fn allow(mut self, kind: Gvk, verbs: Verbs, namespaces: &[&str]) -> Self {
        let namespaces: Vec<String> = namespaces.iter().map(|s| (*s).to_owned()).collect();
        if let Some(p) = self
            .permissions
            .iter_mut()
            .find(|p| p.kind == kind && p.namespaces == namespaces)
        {
            p.verbs = p.verbs | verbs;
        } else {
            self.permissions.push(Permission {
                kind,
                verbs,
                namespaces,
            });
        }
        self
    }

    /// Hint: how many objects may be reconciled at once.
    #[must_use]
    pub fn max_concurrency(mut self, n: u32) -> Self {
        self.max_concurrency = Some(n);
        self
    }

    /// Hint: CPU time budget of one reconcile in milliseconds.
    #[must_use]
    pub fn timeout_ms(mut self, ms: u32) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// Whether the manifest allows `verb` on `kind` in `namespace`.
    pub fn allows(&self, kind: &Gvk, verb: Verbs, namespace: Option<&str>) -> bool {
        self.permissions
            .iter()
            .any(|p| p.allows(kind, verb, namespace))
    }
}
