//! The generic registry, as Kubernetes' `apiserver/pkg/registry/generic`
//! keeps one for every resource: the objects and the commit of a change at
//! a new resourceVersion ([`registry`]); the write path: create
//! ([`create`]), replace ([`replace`], with the identity a body names)
//! and update ([`update`]; what changes nothing: [`unchanged`]), merge,
//! JSON and strategic merge patches ([`patch`], [`strategic`]) and
//! server-side apply ([`apply`]); deletion with finalizers and propagation
//! ([`delete`], after `rest.BeforeDelete`'s preconditions and grace
//! periods: [`graceful`]) and the garbage collector ([`gc`]); the watch
//! history ([`watch`]). Each write asks the resource's strategy
//! ([`strategy`]: a built-in kind's rules, or a custom resource's schemas),
//! the built-in validating admission plugins ([`admission`]) and the
//! storage form ([`storage`]: versions, conversion), keeps the Service
//! allocators' state ([`allocate`]), the resources CRDs add ([`crds`]), the
//! converter ([`conversion`]) and the namespace lifecycle
//! ([`namespaces`]); what a client reads is laid out as the real server
//! lays it out ([`present`]); the scale subresource is a write of the
//! object through its Scale ([`scale`]); a Pod's eviction is a delete its
//! disruption budget allows ([`eviction`]), its binding a write of its node
//! straight to the storage ([`binding`]), and its log is read from no
//! kubelet ([`podlog`]).

pub(crate) mod admission;
pub(crate) mod allocate;
pub(crate) mod apply;
pub(crate) mod binding;
pub(crate) mod conversion;
pub(crate) mod crds;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod eviction;
pub(crate) mod gc;
pub(crate) mod graceful;
pub(crate) mod namespaces;
pub(crate) mod patch;
pub(crate) mod podlog;
pub(crate) mod preconditions;
pub(crate) mod present;
#[allow(clippy::module_inception)]
pub(crate) mod registry;
pub(crate) mod replace;
pub(crate) mod scale;
pub(crate) mod storage;
pub(crate) mod strategic;
pub(crate) mod strategy;
pub(crate) mod unchanged;
pub(crate) mod update;
pub(crate) mod watch;
