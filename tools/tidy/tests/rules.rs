//! Each rule of the house, broken on purpose in a small workspace written
//! to a temporary folder, is found; the same workspace kept tidy passes.

use std::path::{Path, PathBuf};

use rekon_tidy::{Rule, check};

/// A workspace of files (path, text) in a fresh temporary folder.
fn workspace(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("rekon-tidy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a file has a folder"))
            .expect("the temporary folder is writable");
        std::fs::write(path, text).expect("the temporary folder is writable");
    }
    root
}

const PLAN: &str =
    "```rooms lib\nhost: host/ lib.rs\nruntime: runtime/\ncontract: contract.rs\n```\n";

fn tidy() -> Vec<(&'static str, &'static str)> {
    vec![
        ("ARCHITECTURE.md", PLAN),
        ("lib/Cargo.toml", "[package]\nname = \"lib\"\n"),
        ("lib/src/lib.rs", "mod contract;\nmod host;\nmod runtime;\n"),
        ("lib/src/contract.rs", "pub struct Gvk;\n"),
        (
            "lib/src/host/mod.rs",
            "use crate::runtime::Module;\nfn run() { crate::runtime::engine::start(); }\n",
        ),
        (
            "lib/src/runtime/mod.rs",
            "mod engine;\npub use engine::Module;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        ),
        (
            "lib/src/runtime/engine.rs",
            "use crate::contract::Gvk;\npub struct Module;\npub fn start() {}\n",
        ),
    ]
}

fn rules(root: &Path) -> Vec<Rule> {
    check(root)
        .expect("the workspace is readable")
        .into_iter()
        .map(|f| f.rule)
        .collect()
}

#[test]
fn a_tidy_house_passes() {
    let root = workspace("tidy", &tidy());
    assert_eq!(check(&root).unwrap(), vec![]);
}

#[test]
fn an_import_up_the_order_is_found() {
    let mut files = tidy();
    files.push((
        "lib/src/runtime/engine.rs",
        "pub struct Module;\npub fn start() { crate::host::run(); }\n",
    ));
    let root = workspace("upward", &files);
    let found = check(&root).unwrap();
    assert!(
        found.iter().any(|f| f.rule == Rule::Upward
            && f.file.ends_with("runtime/engine.rs")
            && f.line == 2),
        "{found:?}"
    );
    // host -> runtime -> host is also a circle across folders.
    assert!(found.iter().any(|f| f.rule == Rule::Circle), "{found:?}");
}

#[test]
fn a_file_in_no_room_and_a_room_naming_nothing_are_found() {
    let mut files = tidy();
    files[0] = (
        "ARCHITECTURE.md",
        "```rooms lib\nhost: host/ lib.rs gone/\nruntime: runtime/\n```\n",
    );
    let root = workspace("unplaced", &files);
    let found = check(&root).unwrap();
    assert!(
        found
            .iter()
            .any(|f| f.rule == Rule::Unplaced && f.file.ends_with("contract.rs")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|f| f.rule == Rule::Unplaced && f.message.contains("gone")),
        "{found:?}"
    );
}

#[test]
fn a_glob_outside_tests_is_found() {
    let mut files = tidy();
    files.push(("lib/src/host/mod.rs", "use crate::runtime::*;\n"));
    let root = workspace("glob", &files);
    assert_eq!(rules(&root), vec![Rule::Glob]);
}

#[test]
fn a_long_file_is_found() {
    let long = "// a line\n".repeat(rekon_tidy::MAX_LINES + 1);
    let mut files = tidy();
    files.push(("lib/tests/long.rs", long.as_str()));
    let root = workspace("long", &files);
    assert_eq!(rules(&root), vec![Rule::Long]);
}

#[test]
fn a_circle_across_folders_is_found_without_a_plan() {
    let files = vec![
        ("other/Cargo.toml", "[package]\nname = \"other\"\n"),
        ("other/src/lib.rs", "mod a;\nmod b;\n"),
        ("other/src/a/mod.rs", "pub fn f() { crate::b::g(); }\n"),
        ("other/src/b/mod.rs", "use crate::a::f;\npub fn g() {}\n"),
    ];
    let root = workspace("circle", &files);
    let found = check(&root).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].rule, Rule::Circle);
    assert!(
        found[0]
            .message
            .contains("other/src/a/mod.rs -> other/src/b/mod.rs"),
        "{}",
        found[0].message
    );
}

const CRATES: &str = "## The crates\n\n| crate | folder | what it is |\n| --- | --- | --- |\n| `cmd` | `cmd/` | the command |\n| `lib` | `lib/` | the library |\n\nAfter the table.\n";

#[test]
fn a_crate_depending_on_one_above_it_is_found() {
    let mut files = tidy();
    let architecture = format!("{CRATES}{PLAN}");
    files[0] = ("ARCHITECTURE.md", architecture.as_str());
    files.push((
        "cmd/Cargo.toml",
        "[package]\nname = \"cmd\"\n[dependencies]\nlib.workspace = true\n",
    ));
    let root = workspace("crates-tidy", &files);
    assert_eq!(
        check(&root).unwrap(),
        vec![],
        "the command may use the library"
    );

    // The library now depends on the command, in a target table; a
    // dev-dependency on it would be allowed.
    files[1] = (
        "lib/Cargo.toml",
        "[package]\nname = \"lib\"\n[dev-dependencies]\ncmd = { path = \"../cmd\" }\n[target.'cfg(unix)'.dependencies]\ncmd = { path = \"../cmd\" }\n",
    );
    let root = workspace("crates-upward", &files);
    let findings = check(&root).unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].rule, Rule::CrateOrder);
    assert_eq!(findings[0].file, PathBuf::from("lib/Cargo.toml"));
    assert_eq!(findings[0].line, 6);

    // A row naming a folder with no crate is found too.
    let architecture = CRATES.replace("`cmd/`", "`gone/`");
    files[0] = ("ARCHITECTURE.md", architecture.as_str());
    files[1] = ("lib/Cargo.toml", "[package]\nname = \"lib\"\n");
    let root = workspace("crates-gone", &files);
    assert_eq!(rules(&root), vec![Rule::CrateOrder]);
}
