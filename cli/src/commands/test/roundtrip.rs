//! Conversion round trips of a case's objects: each object of a kind the
//! module converts, sent to each other version its CRD serves and back,
//! must come back as it was — what a storage version migration writes
//! back is what the module's conversion gives (`roundTrip: false` on a case
//! opts out).

use std::sync::Arc;

use rekon_host::migrate::{Converter as _, ModuleConverter, Plan, round_trip};
use rekon_host::{Cluster, Module};
use serde_json::Value;

/// Each object's loss, worded as a failure of the case.
pub(super) async fn round_trips(
    module: &Module,
    cluster: Arc<dyn Cluster>,
    objects: &[&Value],
) -> Vec<String> {
    let crds = module
        .crds()
        .await
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    let converter = ModuleConverter::new(module.clone(), cluster);
    let mut failures = Vec::new();
    for object in objects {
        let (Some(api_version), Some(kind)) =
            (object["apiVersion"].as_str(), object["kind"].as_str())
        else {
            continue;
        };
        let Some((group, version)) = api_version.rsplit_once('/') else {
            continue;
        };
        if !converter.converts(group, kind) {
            continue;
        }
        let served: Vec<String> = crds
            .iter()
            .filter_map(|crd| Plan::of(crd).ok())
            .filter(|plan| plan.group == group && plan.kind == kind)
            .flat_map(|plan| plan.served)
            .collect();
        if let Err(why) = round_trip(&converter, object, group, version, &served).await {
            failures.push(format!(
                "conversion round trip: {why} (a storage migration would write it so; `roundTrip: false` on the case opts out)"
            ));
        }
    }
    failures
}
