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
//! and the [`DevConverter`] of the modules' conversions, in its API
//! server. In a cluster, the HTTPS server (`serve`) answers the API
//! server with the certificate of [`certs`], and [`publish`] keeps the
//! webhook configurations and CRD conversions in line with the modules.

pub mod certs;
pub mod chain;
#[cfg(feature = "dev")]
mod dev;
pub mod publish;
mod registry;
pub mod review;
pub(crate) mod serve;

pub use certs::{CertError, ServingCert};
pub use chain::{Chain, configuration_name};
#[cfg(feature = "dev")]
pub use dev::DevConverter;
pub use publish::{CaSource, Endpoint};
pub use registry::WebhookModules;
pub use review::{admit, convert};

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
}

impl WebhookServerConfig {
    /// Serves on `addr`, reached at `endpoint`, with a self-signed
    /// certificate kept in the Secret `namespace/rekon-webhook-tls`.
    pub fn new(addr: std::net::SocketAddr, endpoint: Endpoint, namespace: &str) -> Self {
        WebhookServerConfig {
            addr,
            endpoint,
            certificate: Certificate::Secret {
                namespace: namespace.to_string(),
                name: "rekon-webhook-tls".to_string(),
            },
            cert_manager: None,
            publish: true,
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
    pub tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// Starts the webhook server (and the publisher of the configurations).
pub(crate) async fn start(
    config: WebhookServerConfig,
    client: kube::Client,
    discovery: std::sync::Arc<crate::discovery::Discovery>,
    served: serve::Served,
) -> Result<Started, WebhookServerError> {
    let cert = match &config.certificate {
        Certificate::Secret { namespace, name } => {
            ServingCert::in_secret(client.clone(), namespace, name, &config.names()).await?
        }
        Certificate::Dir(dir) => ServingCert::from_dir(dir)?,
    };
    let tls = cert.server_config()?;
    let modules = served.modules.clone();
    let (addr, server) = serve::serve(config.addr, tls, served)
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
    let mut tasks = vec![server];
    if config.publish {
        let ca = match config.cert_manager {
            Some(certificate) => CaSource::CertManager(certificate),
            None => CaSource::Bundle(base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                &ca_pem,
            )),
        };
        let publisher = publish::Publisher {
            client,
            discovery,
            modules,
            endpoint: config.endpoint,
            ca,
        };
        tasks.push(tokio::spawn(publisher.run()));
    }
    tracing::info!(%addr, "serving webhooks (HTTPS)");
    Ok(Started {
        addr,
        ca_pem,
        tasks,
    })
}
