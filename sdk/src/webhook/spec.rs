//! What a module declares of its webhooks: each webhook's kind,
//! operations, selectors and failure policy, its conversions, and the
//! permissions it reads the cluster with.

use crate::manifest::Permission;
use crate::types::Gvk;

/// The operations an admission webhook may be called for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// An object is created.
    Create,
    /// An object (or a subresource) is replaced or patched.
    Update,
    /// An object is deleted.
    Delete,
    /// A connect request (exec, attach, port-forward, proxy).
    Connect,
}

/// What the API server does when a webhook cannot answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailurePolicy {
    /// Refuse the request (the default, as in Kubernetes).
    #[default]
    Fail,
    /// Let the request through.
    Ignore,
}

/// One admission webhook: what it is called for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookSpec {
    /// Name, unique within the module (`[a-z0-9-]`).
    pub name: String,
    /// The kinds it is called for (`version` may be `*`).
    pub kinds: Vec<Gvk>,
    /// The operations it is called for (empty: create and update).
    pub operations: Vec<Operation>,
    /// Subresources it is also called for (`status`, `scale`, `*`).
    pub sub_resources: Vec<String>,
    /// Only objects in namespaces matching this label selector.
    pub namespace_selector: Option<String>,
    /// Only objects matching this label selector.
    pub object_selector: Option<String>,
    /// What happens when the webhook fails.
    pub failure_policy: FailurePolicy,
    /// How long the API server waits, in seconds (1-30; default 10).
    pub timeout_seconds: Option<u32>,
}

impl WebhookSpec {
    /// A webhook named `name` for `kind`, on create and update, failing closed.
    pub fn new(name: impl Into<String>, kind: Gvk) -> Self {
        WebhookSpec {
            name: name.into(),
            kinds: vec![kind],
            operations: Vec::new(),
            sub_resources: Vec::new(),
            namespace_selector: None,
            object_selector: None,
            failure_policy: FailurePolicy::Fail,
            timeout_seconds: None,
        }
    }

    /// Also called for `kind`.
    #[must_use]
    pub fn kind(mut self, kind: Gvk) -> Self {
        self.kinds.push(kind);
        self
    }

    /// Called for these operations (instead of create and update).
    #[must_use]
    pub fn operations(mut self, operations: impl IntoIterator<Item = Operation>) -> Self {
        self.operations = operations.into_iter().collect();
        self
    }

    /// Also called for this subresource (`status`, `scale`, `*`).
    #[must_use]
    pub fn sub_resource(mut self, sub_resource: impl Into<String>) -> Self {
        self.sub_resources.push(sub_resource.into());
        self
    }

    /// Only for objects in namespaces matching `selector`.
    #[must_use]
    pub fn namespace_selector(mut self, selector: impl Into<String>) -> Self {
        self.namespace_selector = Some(selector.into());
        self
    }

    /// Only for objects matching `selector`.
    #[must_use]
    pub fn object_selector(mut self, selector: impl Into<String>) -> Self {
        self.object_selector = Some(selector.into());
        self
    }

    /// What happens when the webhook fails.
    #[must_use]
    pub fn failure_policy(mut self, policy: FailurePolicy) -> Self {
        self.failure_policy = policy;
        self
    }

    /// How long the API server waits, in seconds (1-30).
    #[must_use]
    pub fn timeout_seconds(mut self, seconds: u32) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }
}

/// A CustomResourceDefinition whose versions the module converts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionSpec {
    /// The CRD's group and kind (`version` is ignored).
    pub kind: Gvk,
    /// Every version the module converts between.
    pub versions: Vec<String>,
}

/// The webhooks a module serves: returned by [`Webhook::webhooks`](super::Webhook::webhooks).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Webhooks {
    /// Validating webhooks.
    pub validating: Vec<WebhookSpec>,
    /// Mutating (defaulting) webhooks.
    pub mutating: Vec<WebhookSpec>,
    /// CRDs the module converts.
    pub conversions: Vec<ConversionSpec>,
    /// For a module that only serves webhooks (`#[webhook]`): its name.
    /// A module that also reconciles takes its name from its manifest.
    pub name: String,
    /// For a module that only serves webhooks: its version.
    pub version: String,
    /// For a module that only serves webhooks: what it may read.
    pub permissions: Vec<Permission>,
}

impl Webhooks {
    /// No webhooks yet.
    pub fn new() -> Self {
        Webhooks::default()
    }

    /// For a module that only serves webhooks: its name and version.
    pub fn named(name: impl Into<String>, version: impl Into<String>) -> Self {
        Webhooks {
            name: name.into(),
            version: version.into(),
            ..Webhooks::default()
        }
    }

    /// Adds a validating webhook.
    #[must_use]
    pub fn validating(mut self, webhook: WebhookSpec) -> Self {
        self.validating.push(webhook);
        self
    }

    /// Adds a mutating (defaulting) webhook.
    #[must_use]
    pub fn mutating(mut self, webhook: WebhookSpec) -> Self {
        self.mutating.push(webhook);
        self
    }

    /// Converts the CRD of `kind` between `versions`.
    #[must_use]
    pub fn conversion<S: Into<String>>(
        mut self,
        kind: Gvk,
        versions: impl IntoIterator<Item = S>,
    ) -> Self {
        self.conversions.push(ConversionSpec {
            kind,
            versions: versions.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// For a module that only serves webhooks: grants it `permission`
    /// (reads only: writes are refused during reviews).
    #[must_use]
    pub fn permission(mut self, permission: Permission) -> Self {
        self.permissions.push(permission);
        self
    }
}
