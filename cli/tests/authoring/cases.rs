//! `rekon test`: a module's reconcile against test cases written in YAML,
//! for modules in any language, failures printed as diffs.

use std::path::Path;
use std::process::{Command, Output};

use super::support::path;

/// `rekon test` with these arguments, on the compile cache the tests of a
/// run share (the JavaScript and Python guests compile once).
fn rekon_test(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rekon"))
        .arg("test")
        .args(args)
        .env("REKON_CACHE_DIR", path("target/rekon-test-cache"))
        // The in-memory server (real mode: authoring/real.rs).
        .env_remove("KUBEBUILDER_ASSETS")
        .output()
        .expect("running rekon test")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Everything a user sees, for failure messages.
fn shown(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        stdout(output),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The names of the cases in a cases file.
fn case_names(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let cases: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    cases["cases"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

/// Runs an example's cases file against a built module: every case passes.
fn example_cases_pass(cases: &str, module: &str) {
    let file = path(cases);
    let names = case_names(&file);
    assert!(names.len() >= 3, "{cases} holds {} cases", names.len());
    let output = rekon_test(&[&file, "--module", module]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    for name in &names {
        assert!(
            out.lines().any(|l| l == format!("ok   {name}")),
            "no `ok   {name}` line\n{}",
            shown(&output)
        );
    }
    assert!(!out.contains("FAIL"), "{}", shown(&output));
    assert!(
        out.ends_with(&format!("{} passed, 0 failed\n", names.len())),
        "{}",
        shown(&output)
    );
}

#[test]
fn the_configmap_sync_cases_pass_for_the_rust_guest() {
    example_cases_pass(
        "guests/configmap-sync/tests/cases.yaml",
        rekon_test_artifacts::CONFIGMAP_SYNC,
    );
}

/// The app's cases: one gives its App in v2, which the module's conversion
/// turns into the v1 the reconciler asks for.
#[test]
fn the_app_cases_pass_with_an_app_written_in_another_version() {
    example_cases_pass("guests/app/tests/cases.yaml", rekon_test_artifacts::APP);
}

#[test]
fn the_configmap_sync_cases_pass_for_the_javascript_guest() {
    example_cases_pass(
        "guests/configmap-sync-js/tests/cases.yaml",
        rekon_test_artifacts::built(rekon_test_artifacts::CONFIGMAP_SYNC_JS),
    );
}

#[test]
fn the_configmap_sync_cases_pass_for_the_python_guest() {
    example_cases_pass(
        "guests/configmap-sync-py/tests/cases.yaml",
        rekon_test_artifacts::built(rekon_test_artifacts::CONFIGMAP_SYNC_PY),
    );
}

/// Writes `body` (the `cases:` of a file naming `module`) to a cases file
/// in `dir`.
fn cases_file(dir: &Path, module: &str, body: &str) -> String {
    let file = dir.join("cases.yaml");
    std::fs::write(&file, format!("module: {module}\ncases:\n{body}")).unwrap();
    file.to_str().unwrap().to_string()
}

/// A source listing team-a, with team-a present.
const SYNC_REQUEST: &str = "
    objects:
      - {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
    request:
      object:
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: shared
          namespace: default
          labels: {rekon.dev/sync: \"true\"}
          annotations: {rekon.dev/sync-to: team-a}
        data: {region: eu-west-1}
";

#[test]
fn a_wrong_expectation_fails_and_shows_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let file = cases_file(
        dir.path(),
        rekon_test_artifacts::CONFIGMAP_SYNC,
        &format!(
            "  - name: copies the source
{SYNC_REQUEST}
    expect:
      present:
        - {{apiVersion: v1, kind: ConfigMap, metadata: {{name: shared, namespace: team-a}}, data: {{region: eu-west-1}}}}
  - name: copies the wrong region
{SYNC_REQUEST}
    expect:
      result: done
      present:
        - apiVersion: v1
          kind: ConfigMap
          metadata: {{name: shared, namespace: team-a}}
          data: {{region: us-east-1}}
"
        ),
    );
    let output = rekon_test(&[&file]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{}", shown(&output));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..2],
        ["ok   copies the source", "FAIL copies the wrong region"],
        "{}",
        shown(&output)
    );
    // The failure names the case and the object, then the diff: the
    // expected value, then what the cluster holds.
    let report = out
        .split_once("--- FAIL copies the wrong region")
        .unwrap_or_else(|| panic!("no report of the failed case\n{}", shown(&output)))
        .1;
    assert!(
        report.contains("present ConfigMap team-a/shared differs (- expected, + actual):"),
        "{}",
        shown(&output)
    );
    let expected = report.find("    -   region: us-east-1\n");
    let actual = report.find("    +   region: eu-west-1\n");
    assert!(
        matches!((expected, actual), (Some(e), Some(a)) if e < a),
        "no `- us-east-1` then `+ eu-west-1` diff lines\n{}",
        shown(&output)
    );
    assert!(out.ends_with("1 passed, 1 failed\n"), "{}", shown(&output));
}

#[test]
fn time_fixes_the_guest_clock_and_deleting_finalizes() {
    let dir = tempfile::tempdir().unwrap();
    let file = cases_file(
        dir.path(),
        rekon_test_artifacts::APP,
        "  - name: the Ready condition carries the case's time
    request:
      object:
        apiVersion: demo.rekon.dev/v1
        kind: App
        metadata: {name: web, namespace: default}
        spec: {image: \"nginx:1.27\", replicas: 2, port: 8080}
      time: 2021-03-04T05:06:07Z
    expect:
      result: done
      present:
        - apiVersion: demo.rekon.dev/v1
          kind: App
          metadata: {name: web, namespace: default, finalizers: [demo.rekon.dev/cleanup]}
          status:
            conditions:
              - {type: Ready, status: \"False\", reason: Progressing, lastTransitionTime: \"2021-03-04T05:06:07Z\"}
        - {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 2}}
  - name: a deleted App is finalized
    objects:
      - apiVersion: demo.rekon.dev/v1
        kind: App
        metadata: {name: web, finalizers: [demo.rekon.dev/cleanup]}
        spec: {image: \"nginx:1.27\", replicas: 2, port: 8080}
      - {apiVersion: v1, kind: Service, metadata: {name: web}, spec: {ports: [{port: 80}]}}
    request:
      ref: {apiVersion: demo.rekon.dev/v1, kind: App, name: web}
      deleting: true
      time: 2021-03-04T05:06:07Z
    expect:
      result: done
      absent:
        - {apiVersion: v1, kind: Service, metadata: {name: web}}
        - {apiVersion: demo.rekon.dev/v1, kind: App, metadata: {name: web}}
      events:
        - {type: Normal, reason: CleanedUp, message: Service (was present)}
",
    );
    let output = rekon_test(&[&file]);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    assert_eq!(
        stdout(&output),
        "ok   the Ready condition carries the case's time\n\
         ok   a deleted App is finalized\n\n2 passed, 0 failed\n",
        "{}",
        shown(&output)
    );

    // Another time: the condition's time follows it, and the diff shows both.
    std::fs::write(
        &file,
        std::fs::read_to_string(&file).unwrap().replacen(
            "time: 2021-03-04T05:06:07Z",
            "time: 2030-01-01T00:00:00Z",
            1,
        ),
    )
    .unwrap();
    let output = rekon_test(&[&file, "--case", "Ready"]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{}", shown(&output));
    assert!(
        out.contains("    -     lastTransitionTime: 2021-03-04T05:06:07Z\n")
            && out.contains("    +     lastTransitionTime: 2030-01-01T00:00:00Z\n"),
        "{}",
        shown(&output)
    );
    assert!(out.ends_with("0 passed, 1 failed\n"), "{}", shown(&output));
}

#[test]
fn a_result_and_a_refused_call_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let misbehaving = |mode: &str| {
        format!(
            "      object:
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: {mode}-case
          annotations: {{misbehave.rekon.dev/mode: {mode}, misbehave.rekon.dev/size: \"1500\"}}
"
        )
    };
    let file = cases_file(
        dir.path(),
        rekon_test_artifacts::MISBEHAVE,
        &format!(
            "  - name: the delete outside its permissions is refused
    request:
{}    expect:
      result: done
      refused:
        - {{verb: delete, kind: Secret, name: misbehave-victim, code: 403, message: its manifest does not grant it}}
      present:
        - {{apiVersion: v1, kind: ConfigMap, metadata: {{name: forbidden-case}}, data: {{forbidden: 403 Forbidden}}}}
  - name: expects done but the module requeues
    request:
{}    expect:
      result: done
",
            misbehaving("forbidden"),
            misbehaving("requeue")
        ),
    );
    let output = rekon_test(&[&file]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{}", shown(&output));
    assert!(
        out.starts_with(
            "ok   the delete outside its permissions is refused\n\
             FAIL expects done but the module requeues\n"
        ),
        "{}",
        shown(&output)
    );
    assert!(
        out.contains("  result (- expected, + actual):\n  - done\n  + {requeueAfter: 1500ms}\n"),
        "{}",
        shown(&output)
    );
}

#[test]
fn a_malformed_cases_file_names_the_file_and_the_case() {
    let dir = tempfile::tempdir().unwrap();
    let file = cases_file(
        dir.path(),
        rekon_test_artifacts::CONFIGMAP_SYNC,
        "  - name: fine
    request: {ref: {apiVersion: v1, kind: ConfigMap, name: a}}
  - name: waits a while
    request: {ref: {apiVersion: v1, kind: ConfigMap, name: a}}
    expect: {result: {requeueAfter: 30}}
",
    );
    let output = rekon_test(&[&file]);
    assert_eq!(output.status.code(), Some(2), "{}", shown(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "error: {file}: case \"waits a while\": expect.result: requeueAfter: 30 is not a duration"
        )),
        "{}",
        shown(&output)
    );
    assert!(stdout(&output).is_empty(), "{}", shown(&output));
}

/// Every App a case gives goes through the module's conversion to each
/// version its CRD serves and back: one carrying a field the conversion
/// does not keep (v1's `spec.container`, overwritten on the way to v2)
/// fails, naming the field; `roundTrip: false` opts the case out.
#[test]
fn a_case_whose_object_does_not_survive_the_conversion_fails() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.yaml");
    let case = |name: &str, opt_out: &str| {
        format!(
            "  - name: {name}\n{opt_out}    request:\n      object:\n        apiVersion: demo.rekon.dev/v1\n        kind: App\n        metadata: {{name: web, namespace: default}}\n        spec: {{image: \"nginx:1.27\", replicas: 1, port: 80, container: {{image: other}}}}\n"
        )
    };
    std::fs::write(
        &file,
        format!(
            "cases:\n{}{}",
            case("checked", ""),
            case("opted out", "    roundTrip: false\n")
        ),
    )
    .unwrap();
    let output = rekon_test(&[
        file.to_str().unwrap(),
        "--module",
        rekon_test_artifacts::APP,
    ]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{}", shown(&output));
    assert!(out.contains("FAIL checked"), "{}", shown(&output));
    assert!(out.contains("ok   opted out"), "{}", shown(&output));
    assert!(
        out.contains("conversion round trip: default/web: converted to demo.rekon.dev/v2 and back, .spec.container is not what it was"),
        "{}",
        shown(&output)
    );
}
