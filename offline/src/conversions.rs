//! The modules' conversions, run by the in-memory store (`rekon dev`'s API
//! server, `rekon test`, `rekon reconcile`): it keeps a custom resource in
//! its storage version and asks this converter for the others, as
//! kube-apiserver asks a CRD's conversion webhook.
//!
//! The store converts while it holds its lock, so a conversion runs to the
//! end on a thread of its own, and its guest reads an empty cluster (a
//! read of the API server's own store from inside a conversion could wait
//! for that lock).

use std::sync::Arc;
use std::sync::mpsc;

use serde_json::Value;

use rekon_host::Module;
use rekon_host::telemetry::Metrics;
use rekon_host::webhook::{WebhookModules, review};

use crate::memory::MemoryCluster;

type Job = (Module, Value, mpsc::SyncSender<Value>);

/// Converts custom resources with the conversions the loaded modules declare.
pub struct ModuleConversions {
    modules: WebhookModules,
    jobs: mpsc::Sender<Job>,
}

impl std::fmt::Debug for ModuleConversions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModuleConversions")
            .field("modules", &self.modules)
            .finish_non_exhaustive()
    }
}

impl ModuleConversions {
    /// A converter over `modules`, with its conversion thread.
    pub fn new(modules: WebhookModules, metrics: Arc<Metrics>) -> ModuleConversions {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("rekon-convert".into())
            .spawn(move || {
                let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                let cluster: Arc<dyn rekon_host::Cluster> = Arc::new(MemoryCluster::default());
                for (module, review, answer) in queue {
                    let converted = runtime.block_on(review::convert_counted(
                        &metrics,
                        &module,
                        cluster.clone(),
                        &review,
                    ));
                    let _ = answer.send(converted);
                }
            })
            .expect("starting the conversion thread");
        ModuleConversions { modules, jobs }
    }
}

impl rekon_store::Converter for ModuleConversions {
    fn converts(&self, group: &str, kind: &str) -> bool {
        self.modules.converting(group, kind).is_some()
    }

    fn convert(&self, object: &Value, api_version: &str) -> Result<Value, String> {
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        let kind = object["kind"].as_str().unwrap_or_default();
        let module = self
            .modules
            .converting(group, kind)
            .ok_or_else(|| format!("no module converts {kind}.{group}"))?;
        let review = review::conversion_review(object, api_version, "rekon-dev");
        let (answer, answered) = mpsc::sync_channel(1);
        self.jobs
            .send((module, review, answer))
            .map_err(|_| "the conversion thread is gone".to_string())?;
        let answer = answered
            .recv()
            .map_err(|_| "the conversion thread is gone".to_string())?;
        review::converted_object(&answer)
    }
}
