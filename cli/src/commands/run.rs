//! `rekon run`: the modules against a cluster, until SIGTERM.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};
use rekon_host::config::{ShardBy, ShardingConfig};
use rekon_host::webhook::{Certificate, Endpoint, WebhookServerConfig};
use rekon_host::{ControllerConfig, Host, HostConfig, LeaderConfig};

use crate::common::{ConfigMapArgs, client_from, signals, with_modules};
use crate::global::{Global, engine_config};

/// `rekon run [MODULE]...`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Module files (.wasm).
    modules: Vec<PathBuf>,
    /// A directory whose `*.wasm` files are modules, watched: changes are loaded live.
    #[arg(long = "modules")]
    module_dir: Vec<PathBuf>,
    /// Kubeconfig file (default: in-cluster config, else $KUBECONFIG, else ~/.kube/config).
    #[arg(long, env = "KUBECONFIG")]
    kubeconfig: Option<PathBuf>,
    /// Kubeconfig context (default: the current context).
    #[arg(long)]
    context: Option<String>,
    /// Reconciles at once per module (default: each module's hint, else 1).
    #[arg(long)]
    concurrency: Option<usize>,
    /// The operator's configuration (YAML): per-module concurrency and narrowed permissions.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Spread MODULE's objects over every replica by a hash of their uid or
    /// namespace (as `modules.MODULE.sharding.by` in --config); the
    /// replicas find each other with --leader-elect or --scale-out.
    #[arg(long = "shard", value_name = "MODULE=uid|namespace", value_parser = parse_shard)]
    shards: Vec<(String, ShardBy)>,
    /// First retry delay of a failed reconcile, in milliseconds (doubling).
    #[arg(long, default_value_t = 5)]
    backoff_base_ms: u64,
    /// Longest retry delay, in seconds.
    #[arg(long, default_value_t = 1000)]
    backoff_max_s: u64,
    /// Serve /metrics, /healthz and /readyz on this address (e.g. 0.0.0.0:8080).
    #[arg(long)]
    metrics_addr: Option<std::net::SocketAddr>,
    /// Apply the CustomResourceDefinitions each module ships (server-side,
    /// field manager `rekon-crds`) before its controller starts. Needs
    /// create and patch on customresourcedefinitions.
    #[arg(long)]
    install_crds: bool,
    /// Leave the CRDs the modules ship as they are stored: no storage
    /// version migration (by default the replica leading a module writes
    /// back every object of a CRD whose storedVersions lists an older
    /// version, then sets storedVersions; see `rekon migrate`).
    #[arg(long)]
    no_migrate: bool,
    /// An object whose deletion means rekon is being uninstalled, as
    /// KIND/NAME (namespace, serviceaccount, role, rolebinding, clusterrole,
    /// clusterrolebinding; namespaced ones in $POD_NAMESPACE), repeatable.
    /// With --webhook-addr, rekon publishes a webhook for their deletion:
    /// the first one (`kubectl delete -k deploy/`) makes it take back its
    /// webhook configurations, CRD conversions and Leases while its
    /// permissions still hold.
    #[arg(long = "uninstall-trigger", value_name = "KIND/NAME")]
    uninstall_triggers: Vec<rekon_host::webhook::uninstall::Trigger>,
    #[command(flatten)]
    leader: LeaderArgs,
    #[command(flatten)]
    configmaps: ConfigMapArgs,
    #[command(flatten)]
    webhooks: WebhookArgs,
}

/// Webhook flags of `rekon run`.
#[derive(Debug, clap::Args)]
struct WebhookArgs {
    /// Serve the modules' admission and conversion webhooks over HTTPS on
    /// this address (e.g. 0.0.0.0:9443), and keep the cluster's webhook
    /// configurations and CRD conversions in line with the modules.
    #[arg(long)]
    webhook_addr: Option<std::net::SocketAddr>,
    /// The Service the API server reaches the webhooks through, as
    /// `NAMESPACE/NAME[:PORT]` (default: $POD_NAMESPACE/rekon-webhooks:443).
    #[arg(long)]
    webhook_service: Option<String>,
    /// Reach the webhooks at this URL instead of a Service (a host outside
    /// the cluster), e.g. https://203.0.113.7:9443.
    #[arg(long, conflicts_with = "webhook_service")]
    webhook_url: Option<String>,
    /// A mounted kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt) to
    /// serve with, instead of the self-signed certificate the host keeps
    /// in the Secret --webhook-secret.
    #[arg(long)]
    webhook_cert_dir: Option<PathBuf>,
    /// The Secret (in $POD_NAMESPACE) holding the self-signed CA and
    /// serving certificate every replica serves with.
    #[arg(long, default_value = "rekon-webhook-tls")]
    webhook_secret: String,
    /// Let cert-manager's CA injector fill the webhook configurations'
    /// caBundle from this Certificate (`NAMESPACE/NAME`); use with
    /// --webhook-cert-dir mounting the Certificate's Secret.
    #[arg(long, requires = "webhook_cert_dir")]
    webhook_cert_manager: Option<String>,
    /// How long the webhook server keeps answering once rekon starts
    /// shutting down (default: 5s behind a Service, while the Service's
    /// endpoints drop this replica; 0s with --webhook-url).
    #[arg(long, value_parser = parse_duration)]
    webhook_drain: Option<Duration>,
}

impl WebhookArgs {
    /// The webhook server's configuration, if one is asked for.
    fn config(&self, namespace: &str) -> anyhow::Result<Option<WebhookServerConfig>> {
        let Some(addr) = self.webhook_addr else {
            return Ok(None);
        };
        let endpoint = endpoint(
            self.webhook_url.as_deref(),
            self.webhook_service.as_deref(),
            namespace,
        )?;
        let mut config = WebhookServerConfig::new(addr, endpoint, namespace);
        if let Certificate::Secret { name, .. } = &mut config.certificate {
            name.clone_from(&self.webhook_secret);
        }
        if let Some(dir) = &self.webhook_cert_dir {
            config.certificate = Certificate::Dir(dir.clone());
        }
        config.cert_manager.clone_from(&self.webhook_cert_manager);
        if let Some(drain) = self.webhook_drain {
            config.drain = drain;
        }
        Ok(Some(config))
    }
}

/// Where the API server reaches the webhooks: `--webhook-url`, else
/// `--webhook-service NAMESPACE/NAME[:PORT]`, else the Service
/// `rekon-webhooks` in `namespace` (also `rekon uninstall`'s).
pub(super) fn endpoint(
    url: Option<&str>,
    service: Option<&str>,
    namespace: &str,
) -> anyhow::Result<Endpoint> {
    Ok(match (url, service) {
        (Some(url), _) => {
            if !url.starts_with("https://") {
                bail!("--webhook-url must be an https:// URL, not {url:?}");
            }
            Endpoint::Url(url.to_string())
        }
        (None, Some(service)) => {
            let (namespace, rest) = service
                .split_once('/')
                .with_context(|| format!("--webhook-service {service:?}: NAMESPACE/NAME[:PORT]"))?;
            let (name, port) = match rest.split_once(':') {
                Some((name, port)) => (name, port.parse().context("--webhook-service port")?),
                None => (rest, 443),
            };
            Endpoint::Service {
                namespace: namespace.to_string(),
                name: name.to_string(),
                port,
            }
        }
        (None, None) => Endpoint::Service {
            namespace: namespace.to_string(),
            name: "rekon-webhooks".to_string(),
            port: 443,
        },
    })
}

/// Leader election flags of `rekon run`.
#[derive(Debug, clap::Args)]
struct LeaderArgs {
    /// Reconcile only while holding the leader Lease (for several replicas).
    #[arg(long, conflicts_with = "scale_out")]
    leader_elect: bool,
    /// Spread the modules across the replicas: each module reconciles on the
    /// replica holding its own Lease, and each replica holds at most
    /// ceil(modules / replicas) of them.
    #[arg(long)]
    scale_out: bool,
    /// Name of the leader Lease (default `rekon-leader`); with --scale-out,
    /// the prefix of the Leases' names (default `rekon`).
    #[arg(long)]
    lease_name: Option<String>,
    /// Namespace of the leader Lease (default: $POD_NAMESPACE, else `default`).
    #[arg(long, env = "POD_NAMESPACE", default_value = "default")]
    lease_namespace: String,
    /// This replica's identity (default: $POD_NAME, else the host name and process id).
    #[arg(long, env = "POD_NAME")]
    identity: Option<String>,
    /// How long the Lease is valid without renewal.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    lease_duration: Duration,
    /// How long a leader keeps leading without renewing.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    renew_deadline: Duration,
    /// How often to try to acquire or renew the Lease.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    retry_period: Duration,
}

/// `MODULE=uid` or `MODULE=namespace`.
fn parse_shard(text: &str) -> Result<(String, ShardBy), String> {
    let (module, by) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: MODULE=uid or MODULE=namespace"))?;
    Ok((module.to_string(), by.parse()?))
}

/// `150ms`, `2s`, `1m`.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .ok_or_else(|| format!("{text:?} needs a unit: ms, s or m"))?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (ms, s or m)")),
    };
    Ok(Duration::from_secs_f64(seconds))
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    let mut config = match &args.config {
        Some(path) => HostConfig::read(path)?,
        None => HostConfig::default(),
    };
    for (module, by) in &args.shards {
        config.modules.entry(module.clone()).or_default().sharding =
            Some(ShardingConfig { by: *by });
    }
    let config = config
        // In a cluster, rekon's own namespace is kept out of its modules'
        // webhooks by default.
        .with_namespace(
            std::env::var("POD_NAMESPACE")
                .ok()
                .filter(|n| !n.is_empty()),
        );
    let stop = signals()?;
    let leader = &args.leader;
    let identity = leader.identity.clone().unwrap_or_else(default_identity);
    let client = kube_client(args.kubeconfig.as_deref(), args.context.clone(), &identity).await?;
    let mut controller = ControllerConfig::default().backoff(
        Duration::from_millis(args.backoff_base_ms),
        Duration::from_secs(args.backoff_max_s),
    );
    if let Some(concurrency) = args.concurrency {
        controller = controller.concurrency(concurrency);
    }
    let mut builder = Host::builder()
        .client(client)
        .identity(identity.clone())
        .engine_config(engine_config(global))
        .controller_config(controller)
        .install_crds(args.install_crds)
        .migrate(!args.no_migrate)
        .uninstall_triggers(
            args.leader.lease_namespace.clone(),
            args.uninstall_triggers.clone(),
        )
        .config(config);
    if let Some(addr) = args.metrics_addr {
        builder = builder.metrics_addr(addr);
    }
    if let Some(webhooks) = args.webhooks.config(&leader.lease_namespace)? {
        builder = builder.webhooks(webhooks);
    }
    if leader.leader_elect || leader.scale_out {
        if leader.renew_deadline >= leader.lease_duration {
            bail!("--renew-deadline must be shorter than --lease-duration");
        }
        let default_name = if leader.scale_out {
            "rekon"
        } else {
            "rekon-leader"
        };
        let config = LeaderConfig::new(leader.lease_namespace.clone(), identity)
            .name(leader.lease_name.as_deref().unwrap_or(default_name))
            .timing(
                leader.lease_duration,
                leader.renew_deadline,
                leader.retry_period,
            );
        builder = if leader.scale_out {
            builder.scale_out(config)
        } else {
            builder.leader_election(config)
        };
    }
    for dir in &args.module_dir {
        builder = builder.watch_dir(dir.clone());
    }
    if args.configmaps.watch_configmaps {
        builder = builder.watch_configmaps(args.configmaps.configmap_namespaces.clone());
    }
    if args.webhooks.webhook_addr.is_none() {
        tracing::info!(
            "no webhook server (--webhook-addr): modules' admission webhooks and conversions are not served"
        );
    }
    let host = with_modules(builder, &args.modules)?.start().await?;
    let modules = host.modules().await.len();
    tracing::info!(modules, refused = host.failures().len(), "rekon running");
    // What ran only to start (arguments, the client's set-up, loading the
    // modules) leaves resident memory; what runs again comes back.
    let released = crate::process::resident::release_code_pages();
    tracing::debug!(bytes = released, "start-up code pages given back");
    stop.await;
    tracing::info!("shutting down: finishing reconciles in flight");
    host.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// This replica's default identity: host name and process id.
fn default_identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "rekon".to_string());
    format!("{host}-{}", std::process::id())
}

/// A kube client from a kubeconfig file and context, or the usual
/// inference; its User-Agent names this replica.
pub(super) async fn kube_client(
    kubeconfig: Option<&Path>,
    context: Option<String>,
    identity: &str,
) -> anyhow::Result<kube::Client> {
    let options = kube::config::KubeConfigOptions {
        context,
        ..Default::default()
    };
    let config = match kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &options).await?
        }
        None if options.context.is_some() => kube::Config::from_kubeconfig(&options).await?,
        None => kube::Config::infer().await?,
    };
    client_from(config, identity)
}
