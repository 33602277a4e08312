//! A Pod's quality of service class (`GetPodQOS`/`ComputePodQOS` in
//! `pkg/apis/core/helper/qos`), which its status records on creation and a
//! resize may not change.

use serde_json::Value;

use crate::machinery::quantity::Quantity;

/// `GetPodQOS`: `Guaranteed` when every container limits CPU and memory
/// to what it requests, `BestEffort` when none asks for either, else
/// `Burstable`.
pub(super) fn qos_class(spec: &Value) -> &'static str {
    let containers = ["containers", "initContainers"]
        .iter()
        .flat_map(|k| spec.get(*k).and_then(Value::as_array).into_iter().flatten());
    let mut any = false;
    let mut guaranteed = true;
    for container in containers {
        let resources = container.get("resources");
        let list = |name: &str| {
            resources
                .and_then(|r| r.get(name))
                .and_then(Value::as_object)
        };
        let (requests, limits) = (list("requests"), list("limits"));
        for resource in ["cpu", "memory"] {
            let request = requests
                .and_then(|r| r.get(resource))
                .and_then(|q| Quantity::from_json(q).ok())
                .filter(|q| !q.is_zero());
            let limit = limits
                .and_then(|l| l.get(resource))
                .and_then(|q| Quantity::from_json(q).ok())
                .filter(|q| !q.is_zero());
            any |= request.is_some() || limit.is_some();
            match (&request, &limit) {
                (Some(r), Some(l)) if r == l => {}
                _ => guaranteed = false,
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}
