//! `cargo run -p rekon-tidy [WORKSPACE]`: prints what breaks a house rule
//! (see the library's top doc), a count per rule, and exits 1 when
//! anything does.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."),
        PathBuf::from,
    );
    let findings = match rekon_tidy::check(&root) {
        Ok(findings) => findings,
        Err(e) => {
            eprintln!("cannot read {}: {e}", root.display());
            return ExitCode::from(2);
        }
    };
    let mut counts = BTreeMap::new();
    for finding in &findings {
        println!("{finding}");
        *counts.entry(finding.rule).or_insert(0) += 1;
    }
    for (rule, count) in &counts {
        println!("{rule:?}: {count}");
    }
    if findings.is_empty() {
        println!("the house keeps its rules");
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
