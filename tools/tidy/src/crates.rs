//! The crates of the workspace in the order ARCHITECTURE.md's crates table
//! gives them (its first table whose first column is `crate`, rows from
//! the top of the data path down): a crate's normal and build dependencies
//! may name only crates listed below it.

use std::path::{Path, PathBuf};

/// One row of the crates table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The package name.
    pub name: String,
    /// Its folder, relative to the workspace.
    pub dir: PathBuf,
    /// The line of ARCHITECTURE.md that lists it.
    pub line: usize,
}

/// Reads the crates table of ARCHITECTURE.md's text: rows whose first
/// cell is a package name in backquotes and whose second is its folder.
pub fn table(text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut inside = false;
    for (index, line) in text.lines().enumerate() {
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        if !line.trim_start().starts_with('|') {
            if inside {
                break;
            }
            continue;
        }
        if !inside {
            inside = cells.first() == Some(&"crate");
            continue;
        }
        let quoted = |cell: &str| {
            cell.strip_prefix('`')
                .and_then(|c| c.strip_suffix('`'))
                .map(str::to_string)
        };
        if let (Some(name), Some(dir)) = (
            cells.first().and_then(|c| quoted(c)),
            cells.get(1).and_then(|c| quoted(c)),
        ) {
            rows.push(Row {
                name,
                dir: PathBuf::from(dir.trim_end_matches('/')),
                line: index + 1,
            });
        }
    }
    rows
}

/// The names a Cargo.toml's `[dependencies]`, `[build-dependencies]` and
/// `[target.*.dependencies]` tables declare (dev-dependencies are not
/// held to the order), with their lines.
pub fn dependencies(manifest: &str) -> Vec<(String, usize)> {
    let mut names = Vec::new();
    let mut counted = false;
    for (index, line) in manifest.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            let header = line.trim_matches(|c| c == '[' || c == ']').trim();
            counted = header == "dependencies"
                || header == "build-dependencies"
                || (header.starts_with("target.")
                    && (header.ends_with(".dependencies")
                        || header.ends_with(".build-dependencies")));
            continue;
        }
        if !counted || line.starts_with('#') {
            continue;
        }
        let Some((key, _)) = line.split_once('=') else {
            continue;
        };
        let name = key.trim().split('.').next().unwrap_or("").trim_matches('"');
        if !name.is_empty() {
            names.push((name.to_string(), index + 1));
        }
    }
    names
}

/// A dependency against the order: `(manifest, line, message)`.
pub fn breaches(root: &Path, rows: &[Row]) -> std::io::Result<Vec<(PathBuf, usize, String)>> {
    let mut found = Vec::new();
    for (position, row) in rows.iter().enumerate() {
        let manifest = row.dir.join("Cargo.toml");
        let text = match std::fs::read_to_string(root.join(&manifest)) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                found.push((
                    PathBuf::from("ARCHITECTURE.md"),
                    row.line,
                    format!(
                        "crate `{}` lists {}, which does not exist",
                        row.name,
                        manifest.display()
                    ),
                ));
                continue;
            }
            Err(error) => return Err(error),
        };
        for (name, line) in dependencies(&text) {
            let Some(at) = rows.iter().position(|r| r.name == name) else {
                continue;
            };
            if at <= position {
                found.push((
                    manifest.clone(),
                    line,
                    format!(
                        "crate `{}` depends on `{name}`, which ARCHITECTURE.md lists {}",
                        row.name,
                        if at == position {
                            "as itself"
                        } else {
                            "above it"
                        }
                    ),
                ));
            }
        }
    }
    Ok(found)
}
