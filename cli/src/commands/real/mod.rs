//! Real mode of `rekon dev` and `rekon test`: a kube-apiserver and etcd
//! (and kube-controller-manager when its binary is there: garbage
//! collection, namespace deletion) started on 127.0.0.1 from envtest's
//! binaries (`--kube-assets DIR`, else `KUBEBUILDER_ASSETS`) instead of
//! the in-memory API server, and stopped with the command.
//!
//! [`Direct`] is what both commands need of that server: the manifests
//! applied, fixtures created as given, a case's leftovers cleaned up, and
//! the library's cluster that reads straight from the API server (no
//! informer cache), so a test case reads what its reconcile wrote, as it
//! does in memory. [`serve_conversions`] serves a module's conversions to
//! it.

mod clean;
mod conversions;
mod direct;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rekon_envtest::RealCluster;

pub(super) use conversions::serve_conversions;
pub(super) use direct::Direct;

/// The flags that choose the API server of `rekon dev` and `rekon test`.
#[derive(Debug, clap::Args)]
pub(super) struct ServerArgs {
    /// Run on a real kube-apiserver and etcd (and kube-controller-manager
    /// when the folder has it) started on 127.0.0.1 from the binaries in
    /// DIR, as kubebuilder's setup-envtest leaves them [default:
    /// $KUBEBUILDER_ASSETS].
    #[arg(long, value_name = "DIR")]
    kube_assets: Option<PathBuf>,
    /// Use the in-memory API server even when KUBEBUILDER_ASSETS is set.
    #[arg(long, conflicts_with = "kube_assets")]
    embedded: bool,
    /// The API server's feature gates, as kube-apiserver takes them
    /// (`ShardedListAndWatch=true`): the in-memory server knows
    /// `ShardedListAndWatch` (sharded lists and watches, KEP-5866); a real
    /// one is started with them.
    #[arg(long, value_name = "NAME=BOOL,...")]
    pub(super) feature_gates: Option<String>,
}

impl ServerArgs {
    /// The feature gates asked for, each with whether it is on.
    pub(super) fn gates(&self) -> anyhow::Result<Vec<(String, bool)>> {
        let Some(text) = self.feature_gates.as_deref() else {
            return Ok(Vec::new());
        };
        text.split(',')
            .filter(|g| !g.trim().is_empty())
            .map(|gate| {
                let (name, on) = gate.split_once('=').unwrap_or((gate, "true"));
                let on = on.trim().parse::<bool>().map_err(|_| {
                    anyhow::anyhow!("--feature-gates {gate:?}: a gate is NAME=true or NAME=false")
                })?;
                Ok((name.trim().to_string(), on))
            })
            .collect()
    }

    /// The folder of the binaries in real mode; `None` for the in-memory
    /// server.
    pub(super) fn assets(&self) -> Option<PathBuf> {
        if self.embedded {
            return None;
        }
        self.kube_assets.clone().or_else(|| {
            std::env::var_os("KUBEBUILDER_ASSETS")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
    }
}

/// A real cluster started for a command.
pub(super) struct Real {
    /// The processes; dropping it stops them and removes their data.
    pub cluster: RealCluster,
    /// How long it took to be ready.
    pub took: Duration,
    /// What runs: `kube-apiserver + etcd (+ kube-controller-manager)`.
    pub what: String,
}

impl Real {
    /// Starts the binaries in `assets` and waits until the API server is
    /// ready.
    pub(super) async fn start(assets: &Path) -> anyhow::Result<Real> {
        Real::start_with(assets, &[]).await
    }

    /// [`Real::start`] with these feature gates (`--feature-gates`).
    pub(super) async fn start_with(
        assets: &Path,
        gates: &[(String, bool)],
    ) -> anyhow::Result<Real> {
        let started = Instant::now();
        let folder = assets.to_path_buf();
        let mut options = rekon_envtest::Options::default();
        // Room for as many Services as a development cluster holds
        // (kubeadm's default range is a /12; envtest's /24 runs out at 254).
        options
            .apiserver_args
            .push("--service-cluster-ip-range=10.96.0.0/16".into());
        if !gates.is_empty() {
            let gates: Vec<String> = gates.iter().map(|(n, on)| format!("{n}={on}")).collect();
            options
                .apiserver_args
                .push(format!("--feature-gates={}", gates.join(",")));
        }
        let cluster = tokio::task::spawn_blocking(move || RealCluster::start(&folder, &options))
        .await
        .context("starting the real API server")?
        .with_context(|| {
            format!(
                "cannot start a real API server from {} (--kube-assets or KUBEBUILDER_ASSETS; --embedded runs the in-memory one)",
                assets.display()
            )
        })?;
        let manager = assets.join("kube-controller-manager").is_file();
        Ok(Real {
            cluster,
            took: started.elapsed(),
            what: format!(
                "kube-apiserver + etcd{} from {}",
                if manager {
                    " + kube-controller-manager"
                } else {
                    ""
                },
                assets.display()
            ),
        })
    }

    /// A kube client of the server, as a `system:masters` user, with
    /// rekon's User-Agent naming `identity`.
    pub(super) async fn client(&self, identity: &str) -> anyhow::Result<kube::Client> {
        let file = kube::config::Kubeconfig::from_yaml(&self.cluster.kubeconfig())
            .context("the real API server's kubeconfig")?;
        let config =
            kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
                .await?;
        crate::common::client_from(config, identity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    #[derive(Debug, clap::Parser)]
    struct Flags {
        #[command(flatten)]
        server: ServerArgs,
    }

    #[test]
    fn the_flag_names_the_binaries_and_embedded_keeps_the_in_memory_server() {
        let flags = Flags::parse_from(["rekon", "--kube-assets", "/opt/kube"]);
        assert_eq!(flags.server.assets(), Some(PathBuf::from("/opt/kube")));
        let flags = Flags::parse_from(["rekon", "--embedded"]);
        assert_eq!(flags.server.assets(), None);
        assert!(
            Flags::try_parse_from(["rekon", "--embedded", "--kube-assets", "/opt/kube"]).is_err()
        );
    }

    #[test]
    fn group_versions_have_their_paths() {
        assert_eq!(direct::base_path("v1"), "/api/v1");
        assert_eq!(direct::base_path("apps/v1"), "/apis/apps/v1");
    }
}
