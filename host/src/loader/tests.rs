//! The loader's decisions, on real components compiled by a real engine.

use super::*;
use crate::contract::{Gvk, Verbs};
use crate::runtime::EngineConfig;

fn engine() -> Engine {
    Engine::new(EngineConfig::default().cache_dir(None)).expect("an engine")
}

fn misbehave() -> Vec<u8> {
    std::fs::read(rekon_test_artifacts::MISBEHAVE).expect("misbehave is built")
}

/// The same component with a custom section appended: another digest.
fn another_version(mut bytes: Vec<u8>, mark: u8) -> Vec<u8> {
    bytes.extend_from_slice(&[0, 3, 1, b'v', mark]);
    bytes
}

fn file(name: &str) -> Origin {
    Origin::File(name.into())
}

/// A loader whose configuration names `b.wasm` as the shadow of the
/// `misbehave` module.
fn shadowed_by_b() -> Loader {
    let config: HostConfig =
        serde_yaml_ng::from_str("modules:\n  misbehave:\n    shadow: b.wasm\n").unwrap();
    Loader::new(engine(), config)
}

async fn decided(loader: &mut Loader) -> Decision {
    loader.next_compiled().await.expect("a decision")
}

fn installed(decision: Decision) -> Version {
    match decision {
        Decision::Install(version) => version,
        other => panic!("expected an install, got {other:?}"),
    }
}

#[tokio::test]
async fn the_same_bytes_at_an_origin_are_loaded_once() {
    let mut loader = Loader::new(engine(), HostConfig::default());
    assert!(loader.event(upsert(file("a.wasm"), misbehave())).is_none());
    let version = installed(decided(&mut loader).await);
    assert_eq!(version.module.name(), misbehave::NAME);
    assert!(!version.reload);
    assert!(loader.event(upsert(file("a.wasm"), misbehave())).is_none());
    assert!(!loader.is_compiling(), "nothing compiled again");
}

#[tokio::test]
async fn a_newer_version_supersedes_one_still_compiling() {
    let mut loader = Loader::new(engine(), HostConfig::default());
    loader.event(upsert(file("a.wasm"), misbehave()));
    let v1 = installed(decided(&mut loader).await);
    loader.event(upsert(file("a.wasm"), another_version(misbehave(), b'2')));
    let newest = another_version(misbehave(), b'3');
    loader.event(upsert(file("a.wasm"), newest.clone()));
    let v3 = installed(decided(&mut loader).await);
    assert!(v3.reload);
    assert_eq!(v3.module.digest(), digest(&newest));
    assert_ne!(v3.module.digest(), v1.module.digest());
    assert!(
        loader.next_compiled().await.is_none(),
        "the superseded compile decided nothing"
    );
}

#[tokio::test]
async fn a_name_belongs_to_the_first_origin_until_it_goes() {
    let mut loader = Loader::new(engine(), HostConfig::default());
    loader.event(upsert(file("a.wasm"), misbehave()));
    installed(decided(&mut loader).await);
    loader.event(upsert(file("b.wasm"), another_version(misbehave(), b'b')));
    match decided(&mut loader).await {
        Decision::Refuse {
            origin,
            reason,
            message,
            serving,
        } => {
            assert_eq!(origin, file("b.wasm"));
            assert_eq!(reason, "name_taken");
            assert!(message.contains("a.wasm"), "{message}");
            assert_eq!(serving, None);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    match loader.event(SourceEvent::Remove {
        origin: file("a.wasm"),
    }) {
        Some(Decision::Unload { name, origin }) => {
            assert_eq!(name, misbehave::NAME);
            assert_eq!(origin, file("a.wasm"));
        }
        other => panic!("expected an unload, got {other:?}"),
    }
    // The name is free: b's next version takes it.
    loader.event(upsert(file("b.wasm"), another_version(misbehave(), b'c')));
    assert_eq!(installed(decided(&mut loader).await).origin, file("b.wasm"));
}

#[tokio::test]
async fn bad_bytes_are_refused_once_and_the_good_version_keeps_serving() {
    let mut loader = Loader::new(engine(), HostConfig::default());
    loader.event(upsert(file("a.wasm"), misbehave()));
    installed(decided(&mut loader).await);
    loader.event(upsert(file("a.wasm"), b"not a module".to_vec()));
    match decided(&mut loader).await {
        Decision::Refuse {
            reason, serving, ..
        } => {
            assert_eq!(reason, "not_wasm");
            assert_eq!(serving.as_deref(), Some(misbehave::NAME));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(
        loader
            .event(upsert(file("a.wasm"), b"not a module".to_vec()))
            .is_none()
    );
    assert!(
        !loader.is_compiling(),
        "the bad bytes are not compiled again"
    );
}

#[tokio::test]
async fn the_operators_configuration_narrows_what_a_module_may_do() {
    let config: HostConfig = serde_yaml_ng::from_str(&format!(
        "modules:\n  {}:\n    permissions:\n    - {{apiVersion: v1, kind: ConfigMap, verbs: [get, list, watch], namespaces: [team-a]}}\n",
        misbehave::NAME
    ))
    .expect("a configuration");
    let mut loader = Loader::new(engine(), config);
    loader.event(upsert(file("a.wasm"), misbehave()));
    let module = installed(decided(&mut loader).await).module;
    let configmap = Gvk {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
    };
    assert!(module.allows(Verbs::GET, &configmap, Some("team-a")));
    assert!(!module.allows(Verbs::GET, &configmap, Some("team-b")));
    assert!(!module.allows(Verbs::PATCH, &configmap, Some("team-a")));
}

/// A version marked shadow (by its ConfigMap, or named in the operator's
/// configuration) shadows the module another origin serves, instead of
/// being refused as a second provider of the name; its source going ends
/// the shadow, not the module; a serving origin cannot turn into a shadow.
#[tokio::test]
async fn a_version_marked_shadow_shadows_instead_of_taking_the_name() {
    let mut loader = Loader::new(engine(), HostConfig::default());
    loader.event(upsert(file("a.wasm"), misbehave()));
    installed(decided(&mut loader).await);
    let marked = Origin::ConfigMap {
        namespace: "rekon".into(),
        name: "next".into(),
    };
    loader.event(SourceEvent::Upsert {
        origin: marked.clone(),
        bytes: Arc::new(another_version(misbehave(), b'n')),
        rollout: Rollout::Shadow { canary: 0 },
        marks: Marks::default(),
    });
    match decided(&mut loader).await {
        Decision::Shadow {
            version, canary, ..
        } => {
            assert_eq!((&version.origin, canary), (&marked, 0));
        }
        other => panic!("expected a shadow, got {other:?}"),
    }
    match loader.event(SourceEvent::Remove {
        origin: marked.clone(),
    }) {
        Some(Decision::Unshadow { name, origin, .. }) => {
            assert_eq!((name.as_str(), origin), (misbehave::NAME, marked));
        }
        other => panic!("expected the shadow to go, got {other:?}"),
    }
    // Named in the configuration: a file.
    let mut loader = shadowed_by_b();
    loader.event(upsert(file("a.wasm"), misbehave()));
    installed(decided(&mut loader).await);
    loader.event(upsert(file("b.wasm"), another_version(misbehave(), b'b')));
    assert!(matches!(
        decided(&mut loader).await,
        Decision::Shadow { .. }
    ));
    // The serving origin marked shadow: refused, it keeps serving.
    loader.event(SourceEvent::Upsert {
        origin: file("a.wasm"),
        bytes: Arc::new(misbehave()),
        rollout: Rollout::Shadow { canary: 0 },
        marks: Marks::default(),
    });
    match decided(&mut loader).await {
        Decision::Refuse {
            reason, serving, ..
        } => {
            assert_eq!(reason, "serving_as_shadow");
            assert_eq!(serving.as_deref(), Some(misbehave::NAME));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Promoting hands the module's name to the shadow's origin (a new version
/// at the old origin is then refused as a second provider); aborting drops
/// the shadow; a module without one has nothing to promote.
#[tokio::test]
async fn promotion_moves_the_name_and_abort_drops_the_shadow() {
    use crate::rollout::Command;
    let mut loader = shadowed_by_b();
    loader.event(upsert(file("a.wasm"), misbehave()));
    installed(decided(&mut loader).await);
    assert!(loader.command(misbehave::NAME, Command::Promote).is_none());
    loader.event(upsert(file("b.wasm"), another_version(misbehave(), b'b')));
    assert!(matches!(
        decided(&mut loader).await,
        Decision::Shadow { .. }
    ));
    match loader.command(misbehave::NAME, Command::Promote) {
        Some(Decision::Promote { origin, .. }) => assert_eq!(origin, file("b.wasm")),
        other => panic!("expected a promotion, got {other:?}"),
    }
    loader.event(upsert(file("a.wasm"), another_version(misbehave(), b'a')));
    match decided(&mut loader).await {
        Decision::Refuse { reason, .. } => assert_eq!(reason, "name_taken"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(loader.command(misbehave::NAME, Command::Abort).is_none());
}

/// A second shadow of a module replaces the first: a promotion promotes
/// the second, and the first's source going away changes nothing. The
/// annotations' marks (a policy, a recording) reach the decisions.
#[tokio::test]
async fn a_second_shadow_replaces_the_first() {
    use crate::rollout::Command;
    let mut loader = Loader::new(engine(), HostConfig::default());
    loader.event(upsert(file("a.wasm"), misbehave()));
    installed(decided(&mut loader).await);
    let configmap = |name: &str| Origin::ConfigMap {
        namespace: "rekon".into(),
        name: name.into(),
    };
    let annotations = serde_json::json!({
        crate::source::PROMOTE_AFTER_ANNOTATION: "30",
        crate::source::ABORT_ERROR_RATE_ANNOTATION: "5%",
        crate::source::RECORD_ANNOTATION: "40",
    });
    let marks = Marks::of(&annotations, &configmap("second"));
    for (name, mark) in [("first", b'1'), ("second", b'2')] {
        loader.event(SourceEvent::Upsert {
            origin: configmap(name),
            bytes: Arc::new(another_version(misbehave(), mark)),
            rollout: Rollout::Shadow { canary: 0 },
            marks: if name == "second" {
                marks.clone()
            } else {
                Marks::default()
            },
        });
        match decided(&mut loader).await {
            Decision::Shadow {
                version, policy, ..
            } => {
                assert_eq!(version.origin, configmap(name));
                assert_eq!(policy, marks.policy.clone().filter(|_| name == "second"));
            }
            other => panic!("expected a shadow, got {other:?}"),
        }
    }
    let policy = marks.policy.expect("a policy");
    assert_eq!(
        (policy.promote_after, policy.abort_error_rate),
        (Some(30), Some(0.05))
    );
    assert!(
        loader
            .event(SourceEvent::Remove {
                origin: configmap("first"),
            })
            .is_none(),
        "the replaced shadow's source going is nothing to do"
    );
    match loader.command(misbehave::NAME, Command::Promote) {
        Some(Decision::Promote { origin, record, .. }) => {
            assert_eq!((origin, record), (configmap("second"), Some(40)));
        }
        other => panic!("expected the second shadow promoted, got {other:?}"),
    }
}

#[test]
fn annotations_that_mean_nothing_are_left_out() {
    let marks = Marks::of(
        &serde_json::json!({
            crate::source::RECORD_ANNOTATION: "lots",
            crate::source::PROMOTE_AFTER_ANNOTATION: "-3",
            crate::source::ABORT_ERROR_RATE_ANNOTATION: "150%",
            crate::source::ABORT_ON_DIFFERENCE_ANNOTATION: "yes",
        }),
        &file("a.wasm"),
    );
    assert_eq!(marks, Marks::default());
    let marks = Marks::of(
        &serde_json::json!({
            crate::source::RECORD_ANNOTATION: "true",
            crate::source::ABORT_ON_DIFFERENCE_ANNOTATION: "true",
        }),
        &file("a.wasm"),
    );
    assert_eq!(marks.record, Some(crate::config::DEFAULT_RECORDED));
    assert!(marks.policy.is_some_and(|p| p.abort_on_difference));
}

/// A start holds its controllers back while a shadow compiles: the loader
/// knows which compiles may be shadows before they finish (marked by their
/// source, or named by the configuration), and forgets them once decided.
#[tokio::test]
async fn shadows_still_compiling_are_known_before_they_finish() {
    let mut loader = shadowed_by_b();
    loader.event(upsert(file("a.wasm"), misbehave()));
    assert!(
        !loader.is_compiling_shadows(),
        "a serving version is no shadow"
    );
    loader.event(upsert(file("b.wasm"), another_version(misbehave(), b'b')));
    assert!(
        loader.is_compiling_shadows(),
        "the configured shadow compiles"
    );
    let mut shadows = 0;
    for _ in 0..2 {
        if matches!(decided(&mut loader).await, Decision::Shadow { .. }) {
            shadows += 1;
            assert!(!loader.is_compiling_shadows());
        }
    }
    assert_eq!(shadows, 1);
    assert!(!loader.is_compiling_shadows());
    loader.event(SourceEvent::Upsert {
        origin: file("c.wasm"),
        bytes: Arc::new(another_version(misbehave(), b'c')),
        rollout: Rollout::Shadow { canary: 10 },
        marks: Marks::default(),
    });
    assert!(loader.is_compiling_shadows(), "a version its source marks");
    decided(&mut loader).await;
    assert!(!loader.is_compiling_shadows());
}

/// A shadow never serves: one whose module no source serves waits (said
/// loudly once the start's load is over, at once after), and shadows as
/// soon as a version of its module serves; a file the configuration names
/// as a shadow is one however it is spelled, and of the module named only.
#[tokio::test]
async fn a_shadow_without_its_serving_version_waits_and_never_serves() {
    let marked = Origin::ConfigMap {
        namespace: "rekon".into(),
        name: "next".into(),
    };
    let shadow_event = |origin: &Origin| SourceEvent::Upsert {
        origin: origin.clone(),
        bytes: Arc::new(another_version(misbehave(), b'n')),
        rollout: Rollout::Shadow { canary: 50 },
        marks: Marks::default(),
    };
    let mut loader = Loader::new(engine(), HostConfig::default());
    loader.event(shadow_event(&marked));
    // It compiles, and nothing is decided: no install, no shadow.
    assert!(
        loader.next_compiled().await.is_none(),
        "a shadow alone waits"
    );
    // The start's load ends: the waiting shadow is refused loudly.
    match loader.started().as_slice() {
        [Decision::Refuse { reason, origin, .. }] => {
            assert_eq!((*reason, origin), ("shadow_without_serving", &marked));
        }
        other => panic!("expected one refusal, got {other:?}"),
    }
    // Its module is served: the serving version installs, the shadow follows.
    loader.event(upsert(file("a.wasm"), misbehave()));
    let serving = installed(decided(&mut loader).await);
    assert_eq!(serving.origin, file("a.wasm"));
    match decided(&mut loader).await {
        Decision::Shadow {
            version, canary, ..
        } => assert_eq!((version.origin, canary), (marked.clone(), 50)),
        other => panic!("expected the waiting shadow, got {other:?}"),
    }

    // Named in the configuration, spelled another way on the command line:
    // still a shadow, never the serving version.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.wasm");
    std::fs::write(&path, b"").unwrap();
    let config: HostConfig = serde_yaml_ng::from_str(&format!(
        "modules:\n  {}:\n    shadow: {}\n",
        misbehave::NAME,
        path.display()
    ))
    .unwrap();
    let spelled = format!("{}/./v2.wasm", dir.path().display());
    let mut loader = Loader::new(engine(), config);
    loader.started();
    loader.event(upsert(Origin::Given(spelled.clone()), misbehave()));
    match decided(&mut loader).await {
        Decision::Refuse { reason, .. } => assert_eq!(reason, "shadow_without_serving"),
        other => panic!("a shadow alone is refused at once after the start, got {other:?}"),
    }

    // Named as the shadow of another module: refused, never served.
    let config: HostConfig = serde_yaml_ng::from_str(&format!(
        "modules:\n  website:\n    shadow: {}\n",
        path.display()
    ))
    .unwrap();
    let mut loader = Loader::new(engine(), config);
    loader.event(upsert(Origin::Given(spelled), misbehave()));
    match decided(&mut loader).await {
        Decision::Refuse { reason, .. } => assert_eq!(reason, "shadow_of_another_module"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}
