//! The rooms of a crate as ARCHITECTURE.md lists them: in each fenced
//! block whose info string is `rooms CRATE-FOLDER`, one room per line, in
//! data-path order (the top first), its name and then the files and
//! folders (ending in `/`) under the crate's `src/` that it holds. A room
//! may import the rooms listed after it, never one listed before.

use std::path::{Path, PathBuf};

/// The rooms of one crate.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The crate's folder, relative to the workspace.
    pub crate_dir: PathBuf,
    /// The rooms, the top of the data path first.
    pub rooms: Vec<Room>,
}

/// One room: a name and what it holds.
#[derive(Debug, Clone)]
pub struct Room {
    /// Its name.
    pub name: String,
    /// Files and folders (ending in `/`) under the crate's `src/`.
    pub paths: Vec<String>,
    /// The line of ARCHITECTURE.md that lists it.
    pub line: usize,
}

impl Plan {
    /// The index of the room that holds `file` (relative to the crate's
    /// `src/`): the one with the longest matching path.
    pub fn room_of(&self, file: &Path) -> Option<usize> {
        let file = file.to_string_lossy().replace('\\', "/");
        self.rooms
            .iter()
            .enumerate()
            .flat_map(|(i, room)| room.paths.iter().map(move |p| (i, p)))
            .filter(|(_, p)| {
                if p.ends_with('/') {
                    file.starts_with(p.as_str())
                } else {
                    file == **p
                }
            })
            .max_by_key(|(_, p)| p.len())
            .map(|(i, _)| i)
    }
}

/// Reads every `rooms` block of ARCHITECTURE.md's text.
pub fn plans(text: &str) -> Vec<Plan> {
    let mut plans = Vec::new();
    let mut current: Option<Plan> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(plan) = current.as_mut() {
            if trimmed.starts_with("```") {
                plans.push(current.take().expect("a block is open"));
                continue;
            }
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let mut words = trimmed.split_whitespace();
            let Some(name) = words.next() else {
                continue;
            };
            plan.rooms.push(Room {
                name: name.trim_end_matches(':').to_string(),
                paths: words.map(str::to_string).collect(),
                line: n + 1,
            });
        } else if let Some(dir) = trimmed.strip_prefix("```rooms ") {
            current = Some(Plan {
                crate_dir: PathBuf::from(dir.trim()),
                rooms: Vec::new(),
            });
        }
    }
    plans
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::plans;

    #[test]
    fn blocks_list_rooms_in_order() {
        let text = "# House\n```rooms host\nhost: host/ lib.rs\nruntime: runtime/\n# a note\ncontract: contract/ names.rs\n```\n";
        let plan = &plans(text)[0];
        assert_eq!(plan.crate_dir, Path::new("host"));
        assert_eq!(plan.rooms.len(), 3);
        assert_eq!(plan.room_of(Path::new("runtime/engine.rs")), Some(1));
        assert_eq!(plan.room_of(Path::new("names.rs")), Some(2));
        assert_eq!(plan.room_of(Path::new("lib.rs")), Some(0));
        assert_eq!(plan.room_of(Path::new("other.rs")), None);
    }
}
