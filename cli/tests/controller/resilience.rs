//! Resilience to the API server: dropped watches, 410 Gone and bursts of
//! errors still end in the right state.

use crate::support::{Env, app, path};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_watches_410_and_error_bursts_end_in_the_right_state() {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    env.run(&[rekon_test_artifacts::APP], &[]);
    for i in 0..3 {
        env.apply(app(&format!("a{i}"), 1));
    }
    let faults = env.server.faults();
    // Writes fail for a while: 500s, 429s, and conflicts.
    faults.fail_next(4, Some("patch"), Some("deployments"), 500);
    faults.fail_next(3, Some("patch"), Some("services"), 429);
    faults.fail_next(2, Some("patch"), Some("apps/status"), 409);
    for i in 3..6 {
        env.apply(app(&format!("a{i}"), 1));
    }
    // Watches are cut and history is compacted: resuming gets 410.
    faults.drop_watches();
    faults.compact();
    for i in 6..9 {
        env.apply(app(&format!("a{i}"), 2));
    }
    faults.drop_watches();
    for i in 0..9 {
        let name = format!("a{i}");
        let replicas = if i >= 6 { 2 } else { 1 };
        env.wait(&format!("{name} reconciled"), || {
            let d = env.get("apps", "v1", "Deployment", Some("default"), &name)?;
            env.get("", "v1", "Service", Some("default"), &name)?;
            let a = env.get("demo.rekon.dev", "v1", "App", Some("default"), &name)?;
            (d["spec"]["replicas"] == replicas && a["status"]["observedGeneration"] == 1)
                .then_some(())
        })
        .await;
    }
}
