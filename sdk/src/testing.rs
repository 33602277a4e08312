//! Native test harness (placeholder while the store lands).
#![allow(missing_docs)]
use crate::*;
pub(crate) trait Backend {
    fn get(&self, target: &ObjectRef) -> Result<String, ApiError>;
    fn list(&self, kind: &Gvk, ns: Option<&str>, sel: Option<&str>) -> Result<Vec<String>, ApiError>;
    fn create(&self, kind: &Gvk, ns: Option<&str>, obj: &str) -> Result<String, ApiError>;
    fn replace(&self, target: &ObjectRef, obj: &str, status: bool) -> Result<String, ApiError>;
    fn patch(&self, target: &ObjectRef, pt: &PatchType, body: &str, status: bool) -> Result<String, ApiError>;
    fn delete(&self, target: &ObjectRef, p: Option<Propagation>) -> Result<(), ApiError>;
    fn record_event(&self, r: &ObjectRef, t: EventType, reason: &str, message: &str) -> Result<(), ApiError>;
}
pub(crate) fn with_backend<T>(_f: impl FnOnce(&dyn Backend) -> Result<T, ApiError>) -> Result<T, ApiError> {
    Err(ApiError::new(500, "InternalError", "no cluster"))
}
pub(crate) fn log(_l: Level, _m: &str, _f: &[(String, String)]) {}
pub struct FakeCluster;
