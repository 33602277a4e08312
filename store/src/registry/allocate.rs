//! The Service allocators' state the registry keeps, and the allocation a
//! write of a Service asks for ([`crate::apis::core::service`]).

use serde_json::Value;

use super::registry::Registry;
use crate::apis::core::service::{Held, Ranges, Taken, is_service};
use crate::meta::status::Status;
use crate::resource::info::ResourceInfo;

/// What a kind's storage assigns before validation, from what is stored:
/// a Service's cluster IP and node ports (`BeginCreate`, `BeginUpdate`).
/// Its refusals come alone, before the kind's checks.
pub(crate) fn allocate(
    store: &mut Registry,
    res: &ResourceInfo,
    obj: &mut Value,
    old: Option<&Value>,
    dry_run: bool,
) -> Result<(), Status> {
    if !is_service(res) {
        return Ok(());
    }
    let key = res.key();
    let objects = &store.objects;
    let held = store.services.get_or_insert_with(|| {
        Held::of(
            objects
                .get(&key)
                .into_iter()
                .flat_map(|o| o.values().map(std::sync::Arc::as_ref)),
        )
    });
    let ranges = Ranges::new(
        &store.config.service_cluster_ip_range,
        store.config.service_node_port_range,
    );
    crate::apis::core::service::allocate(obj, old, &Taken::besides(held, old), &ranges, dry_run)
}
