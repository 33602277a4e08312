//! The API groups, as Kubernetes keeps them (`pkg/apis/<group>` and
//! `pkg/registry/<group>/<kind>`): one folder per group, and in it each
//! kind's defaults, validation and strategy side by side (`core/service/`,
//! `apps/deployment.rs`). [`builtin`] finds a built-in kind's [`Rules`]
//! and makes the calls the registry makes into them; [`apiextensions`]
//! holds the CRD's and the custom resources' strategies; [`fields`] the
//! fields each built-in kind declares; [`events`] the events.k8s.io view
//! of core Events; [`reviews`] the kinds answered without being stored;
//! [`deletion`] what each kind's strategy says of its deletion;
//! [`selectors`] the field selectors each resource takes; [`updates`]
//! which kinds an update may create or write unconditionally;
//! [`versions`] the kinds served in two versions of one storage.
//!
//! [`Rules`]: strategy::Rules

pub(crate) mod admissionregistration;
pub(crate) mod apiextensions;
pub(crate) mod apps;
pub(crate) mod autoscaling;
pub(crate) mod batch;
pub(crate) mod builtin;
pub(crate) mod certificates;
pub(crate) mod coordination;
pub(crate) mod core;
pub(crate) mod deletion;
pub(crate) mod discovery;
pub(crate) mod events;
pub(crate) mod fields;
pub(crate) mod networking;
pub(crate) mod node;
pub(crate) mod policy;
pub(crate) mod rbac;
pub(crate) mod resource;
pub(crate) mod reviews;
pub(crate) mod scheduling;
pub(crate) mod selectors;
pub(crate) mod shape;
pub(crate) mod storage;
pub(crate) mod strategy;
pub(crate) mod updates;
pub(crate) mod versions;
