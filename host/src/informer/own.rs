//! What this process wrote itself: the resourceVersion each of its writes
//! left, by object uid, so that a change an informer sees which is only one
//! of our own writes coming back (an echo) can be told from a change
//! somebody else made. The controllers still reconcile echoes, after what
//! others caused.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;

use super::Cached;

/// Writes kept per generation; two generations are kept, the older dropped
/// when the newer fills.
const KEPT: usize = 8192;

/// The resourceVersions our writes left, by uid (the last few thousand).
#[derive(Default)]
pub(crate) struct OwnWrites {
    generations: Mutex<[HashMap<String, String>; 2]>,
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    metadata: AnswerMeta,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnswerMeta {
    uid: Option<String>,
    resource_version: Option<String>,
}

impl OwnWrites {
    /// Notes the object an API server answered a write of ours with.
    pub fn note_answer(&self, answer: &str) {
        let Ok(Answer { metadata }) = serde_json::from_str::<Answer>(answer) else {
            return;
        };
        if let (Some(uid), Some(version)) = (metadata.uid, metadata.resource_version) {
            self.note(uid, version);
        }
    }

    fn note(&self, uid: String, version: String) {
        let mut generations = self.generations.lock().expect("own writes lock");
        if generations[0].len() >= KEPT {
            generations[1] = std::mem::take(&mut generations[0]);
        }
        generations[1].remove(&uid);
        generations[0].insert(uid, version);
    }

    /// Whether `object` is, as cached, exactly what one of our writes left.
    pub fn is_echo(&self, object: &Cached) -> bool {
        let generations = self.generations.lock().expect("own writes lock");
        generations.iter().any(|g| {
            g.get(object.uid())
                .is_some_and(|v| v == object.resource_version())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::informer::cached::tests::{cached_object, config_maps};

    fn config_map(uid: &str, version: &str) -> Cached {
        cached_object(
            serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "a", "namespace": "d", "uid": uid, "resourceVersion": version},
            }),
            &config_maps(),
        )
    }

    #[test]
    fn only_the_version_a_write_of_ours_left_is_an_echo() {
        let own = OwnWrites::default();
        own.note_answer(r#"{"metadata":{"uid":"u1","resourceVersion":"7"},"data":{"k":"v"}}"#);
        assert!(own.is_echo(&config_map("u1", "7")));
        assert!(!own.is_echo(&config_map("u1", "8")), "a later change");
        assert!(!own.is_echo(&config_map("u2", "7")), "another object");
        own.note_answer(r#"{"metadata":{"uid":"u1","resourceVersion":"9"}}"#);
        assert!(!own.is_echo(&config_map("u1", "7")), "superseded");
        assert!(own.is_echo(&config_map("u1", "9")));
        own.note_answer("not json");
        own.note_answer(r#"{"kind":"Status","status":"Success"}"#);
    }

    #[test]
    fn old_writes_are_forgotten() {
        let own = OwnWrites::default();
        own.note("first".into(), "1".into());
        for i in 0..2 * KEPT {
            own.note(format!("u{i}"), "1".into());
        }
        assert!(!own.is_echo(&config_map("first", "1")));
        assert!(own.is_echo(&config_map(&format!("u{}", 2 * KEPT - 1), "1")));
    }
}
