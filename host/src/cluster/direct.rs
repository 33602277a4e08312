//! The reads and Events of a [`KubeCluster`] made
//! [`direct`](KubeCluster::direct): straight from the API server, with no
//! cache between, and each Event written before the call returns.

use serde_json::Value;

use super::Cluster as _;
use super::kube::{KubeCluster, query_value};
use crate::contract::{ApiError, EventType, Gvk, ObjectRef, api_error};
use crate::events::event_object;
use crate::names::api_version;

/// A GET of `url`.
pub(super) fn get_request(url: String) -> Result<http::Request<Vec<u8>>, ApiError> {
    http::Request::get(url)
        .body(Vec::new())
        .map_err(|e| api_error(400, "BadRequest", &e.to_string()))
}

impl KubeCluster {
    /// Lists `kind` from the API server: its items, each given back the
    /// apiVersion and kind a list leaves out of them.
    pub(super) async fn list_direct(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let resolved = self.resolve(kind).await?;
        let mut url = resolved.url_path(namespace);
        if let Some(selector) = label_selector {
            url.push_str("?labelSelector=");
            url.push_str(&query_value(selector));
        }
        let text = self.send(get_request(url)?).await?;
        let mut list: Value = serde_json::from_str(&text)
            .map_err(|e| api_error(500, "InternalError", &e.to_string()))?;
        let items = match list.get_mut("items").map(Value::take) {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        Ok(items
            .into_iter()
            .map(|mut item| {
                if let Some(fields) = item.as_object_mut() {
                    fields.insert("apiVersion".into(), Value::String(api_version(kind)));
                    fields.insert("kind".into(), Value::String(kind.kind.clone()));
                }
                item.to_string()
            })
            .collect())
    }

    /// Writes an Event about `regarding` now. Best effort, as a cluster's
    /// recorder: an Event the server refuses is not the caller's failure.
    pub(super) async fn record_event_now(
        &self,
        regarding: &ObjectRef,
        event_type: EventType,
        reason: &str,
        message: &str,
        component: &str,
    ) -> Result<(), ApiError> {
        let uid = match self.get(regarding).await {
            Ok(text) => serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|o| o["metadata"]["uid"].as_str().map(str::to_string)),
            Err(_) => None,
        };
        let event = event_object(
            regarding,
            uid.as_deref(),
            event_type,
            reason,
            message,
            component,
        );
        let namespace = event.metadata.namespace.as_deref().unwrap_or("default");
        let request = http::Request::post(format!(
            "/apis/events.k8s.io/v1/namespaces/{namespace}/events"
        ))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&event).expect("an Event serialises"))
        .map_err(|e| api_error(400, "BadRequest", &e.to_string()))?;
        if let Err(error) = self.send(request).await {
            tracing::debug!(reason, error = %error.message, "event dropped: the API server refused it");
        }
        Ok(())
    }
}
