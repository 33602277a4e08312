//! The offline cluster a module reconciles against without a server.

use rekon_host::contract::{Reason, Request};
use rekon_host::names::object_ref_of;
use rekon_offline::MemoryCluster;
use serde_json::Value;

/// Seeds `objects` and builds the request for the first one.
pub fn cluster_with(objects: &[Value]) -> (MemoryCluster, Request) {
    let cluster = MemoryCluster::default();
    let mut stored = Vec::new();
    for object in objects {
        stored.push(cluster.seed(object.clone()).expect("seeding"));
    }
    let target = object_ref_of(&stored[0]).unwrap();
    let request = Request {
        target,
        object: Some(stored[0].to_string()),
        reason: Reason::Manual,
        attempt: 0,
    };
    (cluster, request)
}
