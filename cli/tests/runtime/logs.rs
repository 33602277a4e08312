//! The log format: `--log-format json` writes one object per line with
//! the guest's fields.

use std::process::Command;

use serde_json::Value;

use crate::support::{stderr, write};

#[test]
fn json_log_format_writes_one_object_per_line_with_guest_fields() {
    let dir = tempfile::tempdir().unwrap();
    let object = write(
        dir.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: quiet, namespace: default}\n",
    );
    let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args([
            "--log-format",
            "json",
            "reconcile",
            rekon_test_artifacts::MISBEHAVE,
        ])
        .args(["--object", &object])
        .env("REKON_CACHE_DIR", dir.path())
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<Value> = stderr(&output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let guest = lines
        .iter()
        .find(|l| l["target"] == "rekon::guest")
        .expect("the guest's log record");
    assert_eq!(guest["fields"]["module"], "misbehave");
    assert_eq!(guest["level"], "INFO");
}
