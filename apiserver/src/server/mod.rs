//! The server a user starts: [`ApiServer::builder`] binds the port and
//! starts the accept loop; [`RunningServer`] is the handle to it. The
//! requests it accepts go to the endpoints (`crate::endpoints`).

mod builder;
mod error;
mod listen;
mod running;

pub use builder::{ApiServer, ApiServerBuilder};
pub use error::ServerError;
pub use running::RunningServer;

pub use crate::admission::{Admission, AdmissionAttributes, AdmitFuture, Admitted};
pub use crate::faults::{FailRule, Faults, RequestRecord};
