//! A Pod's `log` subresource (`LogREST` in `pkg/registry/core/pod/rest`,
//! `LogLocation` in `pkg/registry/core/pod/strategy.go`): the container is
//! checked against the Pod, and a Pod on no node has no log yet (the real
//! server answers an empty body). Logs live on a node's kubelet, which an
//! embedded server has none of: a Pod on a node is answered with the error
//! of reaching it.

use serde_json::Value;

use super::registry::Registry;
use crate::machinery::object::{text, text_at};
use crate::meta::status::Status;
use crate::resource::info::ResourceInfo;

impl Registry {
    /// The log of `container` (or the Pod's only one) of the Pod `name`:
    /// `Ok(())` when there is none to give (the Pod is on no node), or why
    /// it cannot be given.
    pub(crate) fn pod_log(
        &self,
        pods: &ResourceInfo,
        ns: &str,
        name: &str,
        container: Option<&str>,
    ) -> Result<(), Status> {
        let pod = self
            .find(pods, ns, name)
            .ok_or_else(|| Status::not_found(pods, name))?;
        let names: Vec<&str> = ["initContainers", "containers", "ephemeralContainers"]
            .iter()
            .flat_map(|k| {
                pod.pointer(&format!("/spec/{k}"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .map(|c| text(c, "name"))
            .collect();
        let regular = pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let container = match container.filter(|c| !c.is_empty()) {
            Some(c) if names.contains(&c) => c.to_string(),
            Some(c) => {
                return Err(Status::bad_request(format!(
                    "container {c} is not valid for pod {name}"
                )));
            }
            None if regular == 1 => text_at(pod, "/spec/containers/0/name").to_string(),
            None if regular == 0 => {
                return Err(Status::bad_request(format!(
                    "a container name must be specified for pod {name}"
                )));
            }
            None => {
                return Err(Status::bad_request(format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    names.join(" ")
                )));
            }
        };
        let node = text_at(pod, "/spec/nodeName");
        if node.is_empty() {
            return Ok(());
        }
        // The kubelet's connection getter words a missing node as a Pod.
        if self.find(&self.core_resource("nodes"), "", node).is_none() {
            return Err(Status::not_found(pods, node));
        }
        Err(Status::unknown(format!(
            "no kubelet serves node {node:?}: the log of container {container} of pod {ns}/{name} cannot be read"
        )))
    }
}
