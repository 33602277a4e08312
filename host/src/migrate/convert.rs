//! A module's conversion as a [`Converter`]: one object per review, on a
//! fresh instance, as the API server would ask the module's webhook.

use std::sync::Arc;

use serde_json::Value;

use super::check::Converter;
use crate::cluster::Cluster;
use crate::runtime::Module;
use crate::webhook::convert;
use crate::webhook::review::{conversion_review, converted_object};

/// The conversion of one module version.
pub struct ModuleConverter {
    module: Module,
    cluster: Arc<dyn Cluster>,
}

impl ModuleConverter {
    /// `module`'s conversion; its reads go to `cluster`.
    pub fn new(module: Module, cluster: Arc<dyn Cluster>) -> ModuleConverter {
        ModuleConverter { module, cluster }
    }
}

#[async_trait::async_trait]
impl Converter for ModuleConverter {
    async fn convert(&self, object: &Value, api_version: &str) -> Result<Value, String> {
        let review = conversion_review(object, api_version, "rekon-migrate");
        let (answer, _) = convert(&self.module, self.cluster.clone(), &review).await;
        converted_object(&answer)
    }

    fn converts(&self, group: &str, kind: &str) -> bool {
        self.module.webhooks().converts(group, kind)
    }
}
