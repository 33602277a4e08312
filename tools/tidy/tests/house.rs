//! rekon's own workspace keeps the house rules: what `cargo run -p
//! rekon-tidy` prints is empty. This is the check CI runs on
//! ARCHITECTURE.md.

use std::path::Path;

#[test]
fn the_workspace_keeps_the_house_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let findings = rekon_tidy::check(&root).expect("the workspace is readable");
    let listed: Vec<String> = findings.iter().map(ToString::to_string).collect();
    assert!(
        findings.is_empty(),
        "{} breach(es) of the house rules (ARCHITECTURE.md):\n{}",
        findings.len(),
        listed.join("\n")
    );
}

#[test]
fn the_library_is_planned_room_by_room() {
    // The check above passes vacuously if ARCHITECTURE.md lost its plans:
    // the library and the command must each have one.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let plans = rekon_tidy::rooms::plans(&text);
    for dir in ["host", "cli"] {
        let plan = plans
            .iter()
            .find(|p| p.crate_dir == Path::new(dir))
            .unwrap_or_else(|| panic!("ARCHITECTURE.md has no rooms block for {dir}/"));
        assert!(
            plan.rooms.len() > 3,
            "{dir}/ is planned in {} rooms",
            plan.rooms.len()
        );
    }
    let crates = rekon_tidy::crates::table(&text);
    assert!(
        crates.iter().any(|c| c.name == "rekon-host") && crates.iter().any(|c| c.name == "rekon"),
        "the crates table lists the library and the command: {crates:?}"
    );
}
