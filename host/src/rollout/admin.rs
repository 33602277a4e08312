//! The admin endpoints on the metrics port: a module's rollout
//! (`GET /rollout/<module>`, what `rekon rollout status` prints), its
//! commands (`POST /rollout/<module>/promote` and `/abort`), and the
//! recorded reconciles (`GET /recordings/<module>`, JSON lines).

use std::sync::Arc;

use hyper::{Method, StatusCode};

use super::{Command, Rollouts};
use crate::replay::Recordings;
use crate::telemetry::{Answer, Endpoints};

/// The rollouts' and recordings' endpoints.
#[derive(Debug, Clone)]
pub struct Admin {
    rollouts: Arc<Rollouts>,
    recordings: Arc<Recordings>,
}

impl Admin {
    /// The endpoints of `rollouts` and `recordings`.
    pub fn new(rollouts: Arc<Rollouts>, recordings: Arc<Recordings>) -> Admin {
        Admin {
            rollouts,
            recordings,
        }
    }

    /// `module`'s rollout as `rekon rollout status` prints it; `None` when
    /// it never had a shadow.
    pub fn status(&self, module: &str) -> Option<String> {
        Some(self.rollouts.get(module)?.status(module))
    }
}

impl Endpoints for Admin {
    fn answer(&self, method: &Method, path: &str) -> Option<Answer> {
        if let Some(rest) = path.strip_prefix("/rollout/") {
            return Some(if method == Method::POST {
                self.command(rest)
            } else {
                self.rollout(rest)
            });
        }
        let module = path.strip_prefix("/recordings/")?;
        Some(match self.recordings.lines(module) {
            Some(traces) => (StatusCode::OK, "application/jsonl", traces),
            None => (
                StatusCode::NOT_FOUND,
                "text/plain",
                format!(
                    "the reconciles of module {module:?} are not recorded (see `record:` in the operator configuration)\n"
                ),
            ),
        })
    }
}

impl Admin {
    /// `POST /rollout/<module>/promote|abort`.
    fn command(&self, rest: &str) -> Answer {
        let command = match rest.rsplit_once('/') {
            Some((module, "promote")) => Some((module, Command::Promote)),
            Some((module, "abort")) => Some((module, Command::Abort)),
            _ => None,
        };
        match command {
            Some((module, command)) => match self.rollouts.command(module, command) {
                Ok(()) => (
                    StatusCode::ACCEPTED,
                    "text/plain",
                    format!("{command:?} of module {module:?}'s shadow under way\n"),
                ),
                Err(why) => (StatusCode::CONFLICT, "text/plain", format!("{why}\n")),
            },
            None => (
                StatusCode::NOT_FOUND,
                "text/plain",
                "POST /rollout/<module>/promote or /rollout/<module>/abort\n".to_string(),
            ),
        }
    }

    /// `GET /rollout/<module>`.
    fn rollout(&self, module: &str) -> Answer {
        match self.status(module) {
            Some(status) => (StatusCode::OK, "text/plain", status),
            None => (
                StatusCode::NOT_FOUND,
                "text/plain",
                format!(
                    "no module {module:?} runs on this host (its modules are named by their manifests)\n"
                ),
            ),
        }
    }
}
