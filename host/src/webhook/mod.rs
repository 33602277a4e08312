//! Webhooks: admission and conversion reviews answered by modules.
//! May call: runtime, cluster, discovery, telemetry (and contract, shared).
//!
//! Where to start: [`WebhookServerConfig`] (what
//! [`HostBuilder::webhooks`](crate::HostBuilder::webhooks) takes), or
//! [`admit`] and [`convert`] for one review.
//!
//! One review ([`review`]): an AdmissionReview or ConversionReview read into
//! the contract's request, run on a fresh instance of the module, and
//! answered as the API server expects, with the webhook's failure policy
//! applied when the guest fails. The chain ([`chain`]) runs every matching
//! mutating, then validating, webhook of the modules serving webhooks
//! ([`WebhookModules`]), as kube-apiserver does; `rekon dev` installs it,
//! and the modules' conversions, in its API server (`rekon-offline`). In a cluster, the HTTPS server (`serve`) answers the API
//! server with the certificate of [`certs`], and [`publish`] keeps the
//! webhook configurations and CRD conversions in line with the modules,
//! from the replica that leads; `members` tells it which modules the
//! other replicas serve.

pub(crate) mod apis;
pub mod certs;
pub mod chain;
pub(crate) mod members;
pub mod objects;
pub mod publish;
mod registry;
pub mod review;
pub(crate) mod serve;
pub mod uninstall;

pub use certs::{CertError, ServingCert};
pub use chain::{Chain, configuration_name};
pub use objects::{CaSource, Endpoint};
pub use registry::WebhookModules;
pub use review::{admit, convert};
pub use serve::serve_reviews;

/// What goes wrong when `module` runs on a host that serves no webhooks
/// (`rekon run` without `--webhook-addr`): one sentence per need, empty
/// when the module declares no webhook and no conversion.
pub fn unserved(module: &crate::runtime::Module) -> Vec<String> {
    let webhooks = module.webhooks();
    let name = module.name();
    let mut said = Vec::new();
    for conversion in &webhooks.conversions {
        said.push(format!(
            "module {name} converts {kind}.{group} between {versions}, but no webhook server runs (rekon run --webhook-addr ...): the CRD's conversion stays None, and objects read or written in one version carry the fields of another",
            kind = conversion.kind.kind,
            group = conversion.kind.group,
            versions = conversion.versions.join(", "),
        ));
    }
    let admission: Vec<&str> = webhooks
        .validating
        .iter()
        .chain(&webhooks.mutating)
        .map(|w| w.name.as_str())
        .collect();
    if !admission.is_empty() {
        said.push(format!(
            "module {name} declares admission webhooks ({}), but no webhook server runs (rekon run --webhook-addr ...): the cluster neither validates nor defaults with them",
            admission.join(", ")
        ));
    }
    said
}

/// How long a webhook server behind a Service keeps answering once its
/// host starts shutting down: the time the API server may still be sent
/// to it while the Service's endpoints change.
pub const DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Where the webhook server's certificate comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Certificate {
    /// A self-signed CA and serving certificate kept in this Secret
    /// (created by the first replica, read by the others).
    Secret {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
    },
    /// A mounted `kubernetes.io/tls` Secret (`tls.crt`, `tls.key`,
    /// `ca.crt`), such as cert-manager writes.
    Dir(std::path::PathBuf),
}

/// The webhook server of a host: see
/// [`HostBuilder::webhooks`](crate::HostBuilder::webhooks).
#[derive(Clone, Debug)]
pub struct WebhookServerConfig {
    /// The address to serve HTTPS on (port 0 picks one).
    pub addr: std::net::SocketAddr,
    /// Where the API server reaches it.
    pub endpoint: Endpoint,
    /// The serving certificate.
    pub certificate: Certificate,
    /// cert-manager's Certificate (`namespace/name`) whose CA its injector
    /// puts in the webhook configurations, instead of the host.
    pub cert_manager: Option<String>,
    /// Keep the cluster's webhook configurations and CRD conversions in
    /// line with the modules (default: yes).
    pub publish: bool,
    /// How long the server keeps answering once the host starts shutting
    /// down (default: 5 s behind a Service, so the API server's calls that
    /// still reach this replica while the Service's endpoints are updated
    /// are answered; none for a URL).
    pub drain: std::time::Duration,
}

impl WebhookServerConfig {
    /// Serves on `addr`, reached at `endpoint`, with a self-signed
    /// certificate kept in the Secret `namespace/rekon-webhook-tls`.
    pub fn new(addr: std::net::SocketAddr, endpoint: Endpoint, namespace: &str) -> Self {
        let endpoint_is_service = matches!(endpoint, Endpoint::Service { .. });
        WebhookServerConfig {
            addr,
            endpoint,
            certificate: Certificate::Secret {
                namespace: namespace.to_string(),
                name: "rekon-webhook-tls".to_string(),
            },
            cert_manager: None,
            publish: true,
            drain: match endpoint_is_service {
                true => DRAIN,
                false => std::time::Duration::ZERO,
            },
        }
    }

    /// The names the serving certificate must hold for `endpoint`.
    pub fn names(&self) -> Vec<String> {
        let mut names = match &self.endpoint {
            Endpoint::Service {
                namespace, name, ..
            } => vec![
                format!("{name}.{namespace}.svc"),
                format!("{name}.{namespace}.svc.cluster.local"),
                format!("{name}.{namespace}"),
                name.clone(),
            ],
            Endpoint::Url(url) => {
                let host = url
                    .split("://")
                    .nth(1)
                    .unwrap_or(url)
                    .split(['/', '?'])
                    .next()
                    .unwrap_or_default();
                let host = match host.rsplit_once(':') {
                    Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
                    _ => host,
                };
                vec![host.trim_matches(['[', ']']).to_string()]
            }
        };
        for local in ["localhost", "127.0.0.1"] {
            if !names.iter().any(|n| n == local) {
                names.push(local.to_string());
            }
        }
        names
    }
}

/// Why the webhook server could not start.
#[derive(Debug, thiserror::Error)]
pub enum WebhookServerError {
    /// No certificate.
    #[error(transparent)]
    Certificate(#[from] CertError),
    /// The address could not be bound.
    #[error("cannot serve webhooks on {addr}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A started webhook server.
pub(crate) struct Started {
    pub addr: std::net::SocketAddr,
    pub ca_pem: String,
    /// The HTTPS server: it keeps answering while the host shuts down.
    pub server: tokio::task::JoinHandle<()>,
    /// Winds the server's connections down.
    pub closer: serve::Closer,
    /// The publisher of the configurations (aborted first on shutdown:
    /// a stopping replica withdraws nothing).
    pub publisher: Option<tokio::task::JoinHandle<()>>,
    /// This replica's membership among the webhook servers.
    pub members: Option<(
        std::sync::Arc<members::Members>,
        tokio::task::JoinHandle<()>,
    )>,
    /// Where the API server reaches the webhooks.
    pub endpoint: Endpoint,
    /// How long the server keeps answering after a shutdown starts.
    pub drain: std::time::Duration,
}

/// What the publisher needs of the host.
pub(crate) struct Context {
    pub client: kube::Client,
    pub discovery: std::sync::Arc<crate::discovery::Discovery>,
    pub informers: std::sync::Arc<crate::informer::Informers>,
    pub leaders: crate::ha::Leaders,
    /// The replicas' coordination (their namespace, identities, timing),
    /// when several may run.
    pub replicas: Option<crate::ha::LeaderConfig>,
    pub triggers: crate::webhook::uninstall::Triggers,
    /// True once the modules found at start are loaded.
    pub loaded: tokio::sync::watch::Receiver<bool>,
}

/// Starts the webhook server (and the publisher of the configurations).
pub(crate) async fn start(
    config: WebhookServerConfig,
    context: Context,
    served: serve::Served,
) -> Result<Started, WebhookServerError> {
    let cert = match &config.certificate {
        Certificate::Secret { namespace, name } => {
            ServingCert::in_secret(context.client.clone(), namespace, name, &config.names()).await?
        }
        Certificate::Dir(dir) => ServingCert::from_dir(dir)?,
    };
    let tls = cert.server_config()?;
    let modules = served.modules.clone();
    let (addr, server, closer) =
        serve::serve(config.addr, tls, served)
            .await
            .map_err(|source| WebhookServerError::Bind {
                addr: config.addr,
                source,
            })?;
    let ca_pem = if cert.ca_pem.is_empty() {
        cert.cert_pem.clone()
    } else {
        cert.ca_pem.clone()
    };
    let members = context.replicas.as_ref().map(|replicas| {
        let members = std::sync::Arc::new(members::Members::new(context.client.clone(), replicas));
        let task = tokio::spawn(members.clone().run(modules.clone()));
        (members, task)
    });
    let publisher = config.publish.then(|| {
        let ca = match config.cert_manager {
            Some(certificate) => CaSource::CertManager(certificate),
            None => CaSource::Bundle(base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                &ca_pem,
            )),
        };
        let publisher = publish::Publisher {
            client: context.client,
            discovery: context.discovery,
            informers: context.informers,
            modules,
            endpoint: config.endpoint.clone(),
            ca,
            leaders: context.leaders,
            members: members.as_ref().map(|(m, _)| m.clone()),
            triggers: context.triggers,
            loaded: context.loaded,
        };
        tokio::spawn(publisher.run())
    });
    tracing::info!(%addr, endpoint = %config.endpoint, "serving webhooks (HTTPS)");
    Ok(Started {
        addr,
        ca_pem,
        server,
        closer,
        publisher,
        members,
        endpoint: config.endpoint,
        drain: config.drain,
    })
}
