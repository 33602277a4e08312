//! A crate's module tree, from its root file through `mod` items (with
//! their `#[path]` attributes and `#[cfg(test)]`), and the code of each
//! file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::lexer::Code;

/// One file of a crate's module tree.
#[derive(Debug)]
pub struct File {
    /// Its path.
    pub path: PathBuf,
    /// The module path of the file's top (`[]` for the crate root).
    pub module: Vec<String>,
    /// Its code.
    pub code: Code,
    /// Declared under `#[cfg(test)]` (itself or a module above it).
    pub test: bool,
    /// The inline modules of the file: (module path, start, end offsets of
    /// their braces, under `#[cfg(test)]`).
    pub inline: Vec<InlineModule>,
}

/// A `mod name { ... }` inside a file.
#[derive(Debug)]
pub struct InlineModule {
    /// Its module path.
    pub module: Vec<String>,
    /// The offsets of its opening and closing braces.
    pub span: (usize, usize),
    /// Declared under `#[cfg(test)]` (itself or a module above it).
    pub test: bool,
}

impl File {
    /// The module that the offset `at` of the file is in, and whether it
    /// is test code.
    pub fn module_at(&self, at: usize) -> (&[String], bool) {
        self.inline
            .iter()
            .filter(|m| m.span.0 < at && at < m.span.1)
            .max_by_key(|m| m.module.len())
            .map_or((self.module.as_slice(), self.test), |m| {
                (m.module.as_slice(), m.test)
            })
    }
}

/// A crate's module tree: every module path and the file that holds it.
#[derive(Debug, Default)]
pub struct Tree {
    /// The files, in the order they were found.
    pub files: Vec<File>,
    /// Each module path and the index of its file in `files`.
    pub modules: BTreeMap<Vec<String>, usize>,
}

impl Tree {
    /// Reads the module tree rooted at `root` (a `lib.rs` or `main.rs`).
    pub fn read(root: &Path) -> std::io::Result<Tree> {
        let mut tree = Tree::default();
        let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
        tree.add(root, Vec::new(), dir, false)?;
        Ok(tree)
    }

    /// The file that `module` (a module path) lands in: the file of the
    /// longest prefix of it that is a module.
    pub fn file_of(&self, module: &[String]) -> Option<usize> {
        (0..=module.len())
            .rev()
            .find_map(|n| self.modules.get(&module[..n]).copied())
    }

    /// Whether `module` is a module of the tree.
    pub fn is_module(&self, module: &[String]) -> bool {
        self.modules.contains_key(module)
    }

    fn add(
        &mut self,
        path: &Path,
        module: Vec<String>,
        children_dir: PathBuf,
        test: bool,
    ) -> std::io::Result<()> {
        let source = std::fs::read_to_string(path)?;
        let code = Code::new(&source);
        let index = self.files.len();
        self.modules.insert(module.clone(), index);
        let items = mod_items(&code);
        let mut inline = Vec::new();
        let mut children = Vec::new();
        for item in &items {
            // The module that holds this item: the file's, or an inline one.
            let (parent, parent_dir, parent_test) = items
                .iter()
                .filter(|outer| {
                    outer
                        .body
                        .is_some_and(|(open, close)| open < item.at && item.at < close)
                })
                .max_by_key(|outer| outer.body.map(|(open, _)| open))
                .map_or((module.clone(), children_dir.clone(), test), |outer| {
                    let mut m = module.clone();
                    let mut d = children_dir.clone();
                    for name in outer_chain(&items, outer) {
                        m.push(name.clone());
                        d.push(name);
                    }
                    let t = test || items_test_chain(&items, outer, &code);
                    (m, d, t)
                });
            let mut child = parent.clone();
            child.push(item.name.clone());
            let child_test = parent_test || code.is_cfg_test(item.at);
            match item.body {
                Some(span) => {
                    self.modules.insert(child.clone(), index);
                    inline.push(InlineModule {
                        module: child,
                        span,
                        test: child_test,
                    });
                }
                None => {
                    let file = match code.path_attribute(item.at) {
                        Some(p) => parent_dir_for_path(&parent_dir, path, &module, &parent).join(p),
                        None => {
                            let flat = parent_dir.join(format!("{}.rs", item.name));
                            if flat.exists() {
                                flat
                            } else {
                                parent_dir.join(&item.name).join("mod.rs")
                            }
                        }
                    };
                    children.push((file, child, child_test));
                }
            }
        }
        self.files.push(File {
            path: path.to_path_buf(),
            module,
            code,
            test,
            inline,
        });
        for (file, child, child_test) in children {
            if !file.exists() {
                continue;
            }
            let dir = if file.file_name().is_some_and(|n| n == "mod.rs") {
                file.parent().expect("a file has a folder").to_path_buf()
            } else {
                file.with_extension("")
            };
            self.add(&file, child, dir, child_test)?;
        }
        Ok(())
    }
}

/// The folder a `#[path]` is relative to: the folder of the file for an
/// item at the file's top, the inline module's folder inside one.
fn parent_dir_for_path(
    parent_dir: &Path,
    file: &Path,
    module: &[String],
    parent: &[String],
) -> PathBuf {
    if module == parent {
        file.parent().unwrap_or(Path::new(".")).to_path_buf()
    } else {
        parent_dir.to_path_buf()
    }
}

/// A `mod` item of a file.
#[derive(Debug)]
struct ModItem {
    name: String,
    at: usize,
    /// The braces of an inline module.
    body: Option<(usize, usize)>,
}

/// The names of the inline modules from the file's top down to `item`.
fn outer_chain(items: &[ModItem], item: &ModItem) -> Vec<String> {
    let mut chain: Vec<&ModItem> = items
        .iter()
        .filter(|outer| {
            outer
                .body
                .is_some_and(|(open, close)| open < item.at && item.at < close)
        })
        .collect();
    chain.sort_by_key(|outer| outer.at);
    chain.push(item);
    chain.into_iter().map(|m| m.name.clone()).collect()
}

/// Whether `item` or an inline module around it is `#[cfg(test)]`.
fn items_test_chain(items: &[ModItem], item: &ModItem, code: &Code) -> bool {
    code.is_cfg_test(item.at)
        || items.iter().any(|outer| {
            outer
                .body
                .is_some_and(|(open, close)| open < item.at && item.at < close)
                && code.is_cfg_test(outer.at)
        })
}

/// Every `mod` item of the code, inline or not.
fn mod_items(code: &Code) -> Vec<ModItem> {
    let text = &code.text;
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("mod ") {
        let at = from + found;
        from = at + 4;
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let rest = &text[at + 4..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let after_name = at + 4 + (rest.len() - rest.trim_start().len()) + name.len();
        let next = text[after_name..].trim_start();
        let start = item_start(text, at);
        if next.starts_with(';') {
            items.push(ModItem {
                name,
                at: start,
                body: None,
            });
        } else if next.starts_with('{') {
            let open = after_name + (text[after_name..].len() - next.len());
            let close = matching_brace(bytes, open);
            items.push(ModItem {
                name,
                at: start,
                body: Some((open, close)),
            });
        }
    }
    items
}

/// The offset where an item's visibility (`pub`, `pub(crate)`) begins,
/// given where its keyword begins.
fn item_start(text: &str, keyword: usize) -> usize {
    let before = text[..keyword].trim_end();
    for visibility in ["pub(crate)", "pub(super)", "pub"] {
        if let Some(rest) = before.strip_suffix(visibility) {
            return rest.len();
        }
    }
    keyword
}

/// The offset of the brace closing the one at `open`.
pub fn matching_brace(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    bytes.len()
}
