//! rekon-tidy: the house rules of rekon's source tree, checked.
//!
//! Where to start: [`check`] reads the workspace and returns what breaks a
//! rule; `tests/house.rs` runs it on this workspace, so CI fails on:
//! - an import from a room to one above it in the order ARCHITECTURE.md
//!   gives (its `rooms` blocks: see [`rooms`]), or a file in no room of a
//!   crate that has a plan;
//! - a circle of files across folders (files that import each other in a
//!   loop, not all in one folder), in any crate;
//! - a glob import (`use x::*`) outside test code;
//! - a Rust source file over [`MAX_LINES`] lines;
//! - a crate depending on one listed above it in ARCHITECTURE.md's crates
//!   table ([`crates`]).
//!
//! Imports are read from the code itself ([`imports`]): `use`
//! declarations and the paths written in expressions (`crate::a::f()`,
//! `super::b`, `child::c`), resolved through the crate's module tree
//! ([`modules`]) to the file that holds them. Test code (`#[cfg(test)]`
//! modules and the files they declare) is not held to the order.
#![deny(missing_docs)]

pub mod circles;
pub mod crates;
pub mod imports;
pub mod lexer;
pub mod modules;
pub mod rooms;

use std::fmt;
use std::path::{Path, PathBuf};

use modules::Tree;

/// The most lines a Rust source file may have.
pub const MAX_LINES: usize = 450;

/// A rule of the house.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// An import against the documented order.
    Upward,
    /// A file in no room of its crate's plan, or a room naming nothing.
    Unplaced,
    /// Files of several folders importing each other in a loop.
    Circle,
    /// A glob import outside test code.
    Glob,
    /// A source file over [`MAX_LINES`] lines.
    Long,
    /// A crate depending on one above it in the crates table.
    CrateOrder,
}

/// One breach of a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The rule.
    pub rule: Rule,
    /// The file, relative to the workspace.
    pub file: PathBuf,
    /// The line (0 when the finding is about the whole file).
    pub line: usize,
    /// What breaks the rule.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?}: {}:{}: {}",
            self.rule,
            self.file.display(),
            self.line,
            self.message
        )
    }
}

/// Checks the workspace at `root` (the folder of its Cargo.toml and
/// ARCHITECTURE.md) against every rule.
pub fn check(root: &Path) -> std::io::Result<Vec<Finding>> {
    let mut findings = Vec::new();
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap_or_default();
    let plans = rooms::plans(&architecture);
    for (file, line, message) in crates::breaches(root, &crates::table(&architecture))? {
        findings.push(Finding {
            rule: Rule::CrateOrder,
            file,
            line,
            message,
        });
    }
    let mut sources = Vec::new();
    rust_files(root, root, &mut sources)?;
    for file in &sources {
        let lines = std::fs::read_to_string(root.join(file))?.lines().count();
        if lines > MAX_LINES {
            findings.push(Finding {
                rule: Rule::Long,
                file: file.clone(),
                line: 0,
                message: format!("{lines} lines (at most {MAX_LINES}): split it by job"),
            });
        }
    }
    for crate_dir in crate_dirs(&sources) {
        let plan = plans.iter().find(|p| p.crate_dir == crate_dir);
        for root_file in ["src/lib.rs", "src/main.rs"] {
            let path = root.join(&crate_dir).join(root_file);
            if path.exists() {
                let tree = Tree::read(&path)?;
                check_tree(root, &crate_dir, &tree, plan, &mut findings);
            }
        }
        if let Some(plan) = plan {
            check_plan_paths(root, plan, &mut findings);
        }
    }
    findings.sort_by(|a, b| (a.rule, &a.file, a.line).cmp(&(b.rule, &b.file, b.line)));
    findings.dedup();
    Ok(findings)
}

/// The rules that read a crate's module tree: globs, circles, order.
fn check_tree(
    root: &Path,
    crate_dir: &Path,
    tree: &Tree,
    plan: Option<&rooms::Plan>,
    findings: &mut Vec<Finding>,
) {
    let relative = |i: usize| {
        tree.files[i]
            .path
            .strip_prefix(root)
            .unwrap_or(&tree.files[i].path)
            .to_path_buf()
    };
    let (imports, globs) = imports::imports(tree);
    for glob in globs.iter().filter(|g| !g.test && !tree.files[g.file].test) {
        findings.push(Finding {
            rule: Rule::Glob,
            file: relative(glob.file),
            line: glob.line,
            message: "a glob import outside test code: name what is imported".to_string(),
        });
    }
    let code: Vec<&imports::Import> = imports.iter().filter(|i| !i.test).collect();
    for circle in circles::across_folders(tree, &code) {
        findings.push(Finding {
            rule: Rule::Circle,
            file: relative(circle.files[0]),
            line: 0,
            message: format!(
                "a circle of {} files across folders: {}",
                circle.files.len(),
                circle
                    .edges
                    .iter()
                    .map(|(from, to, path)| format!(
                        "{} -> {} ({path})",
                        relative(*from).display(),
                        relative(*to).display()
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        });
    }
    let Some(plan) = plan else {
        return;
    };
    let src = root.join(crate_dir).join("src");
    let room_of = |i: usize| {
        tree.files[i]
            .path
            .strip_prefix(&src)
            .ok()
            .and_then(|p| plan.room_of(p))
    };
    for (i, file) in tree.files.iter().enumerate() {
        if !file.test && room_of(i).is_none() {
            findings.push(Finding {
                rule: Rule::Unplaced,
                file: relative(i),
                line: 0,
                message: "in no room of ARCHITECTURE.md: give it one".to_string(),
            });
        }
    }
    for import in code {
        let (Some(from), Some(to)) = (room_of(import.from), room_of(import.to)) else {
            continue;
        };
        if to < from {
            findings.push(Finding {
                rule: Rule::Upward,
                file: relative(import.from),
                line: import.line,
                message: format!(
                    "room {:?} imports {} of room {:?}, which is above it",
                    plan.rooms[from].name, import.path, plan.rooms[to].name
                ),
            });
        }
    }
}

/// Every path a plan names must exist.
fn check_plan_paths(root: &Path, plan: &rooms::Plan, findings: &mut Vec<Finding>) {
    let src = root.join(&plan.crate_dir).join("src");
    for room in &plan.rooms {
        for path in &room.paths {
            if !src.join(path.trim_end_matches('/')).exists() {
                findings.push(Finding {
                    rule: Rule::Unplaced,
                    file: PathBuf::from("ARCHITECTURE.md"),
                    line: room.line,
                    message: format!(
                        "room {:?} names {}/src/{path}, which does not exist",
                        room.name,
                        plan.crate_dir.display()
                    ),
                });
            }
        }
    }
}

/// The folders of the crates the sources are in (each has a Cargo.toml
/// and a `src/`).
fn crate_dirs(sources: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = sources
        .iter()
        .filter_map(|file| {
            let components: Vec<_> = file.components().collect();
            let src = components.iter().position(|c| c.as_os_str() == "src")?;
            Some(components[..src].iter().collect::<PathBuf>())
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Every `.rs` file under `dir`, relative to `root`, but build outputs,
/// dependencies and version control.
fn rust_files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if entry.file_type()?.is_dir() {
            if !matches!(name.as_ref(), "target" | "node_modules" | ".git")
                && !name.starts_with('.')
            {
                rust_files(root, &path, out)?;
            }
        } else if name.ends_with(".rs") {
            out.push(path.strip_prefix(root).unwrap_or(&path).to_path_buf());
        }
    }
    Ok(())
}
