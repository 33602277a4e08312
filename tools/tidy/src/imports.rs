//! What a file of a crate takes from the crate's other files: its `use`
//! declarations and the paths written in its code (`crate::a::f()`,
//! `super::b::C`, `child::D`), resolved to the files that hold them.

use std::collections::HashMap;

use crate::modules::{File, Tree};

/// One import of a file: what it names, and the file that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    /// The index of the importing file in the tree.
    pub from: usize,
    /// The index of the file imported.
    pub to: usize,
    /// The 1-based line of the import.
    pub line: usize,
    /// The path as resolved (`crate::a::b::C`).
    pub path: String,
    /// Made from test code.
    pub test: bool,
}

/// A `use` with a `*` in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    /// The index of the file in the tree.
    pub file: usize,
    /// The 1-based line.
    pub line: usize,
    /// Made from test code.
    pub test: bool,
}

/// The imports and glob imports of every file of `tree`.
pub fn imports(tree: &Tree) -> (Vec<Import>, Vec<Glob>) {
    let mut imports = Vec::new();
    let mut globs = Vec::new();
    for (index, file) in tree.files.iter().enumerate() {
        let uses = use_declarations(&file.code.text);
        // What each name a `use` brings in stands for, per module.
        let mut aliases: HashMap<(Vec<String>, String), Vec<String>> = HashMap::new();
        for declaration in &uses {
            let (module, test) = file.module_at(declaration.at);
            for path in &declaration.paths {
                if path.glob {
                    globs.push(Glob {
                        file: index,
                        line: file.code.line_of(declaration.at),
                        test,
                    });
                }
                let Some(absolute) = resolve(tree, module, &path.segments, &HashMap::new()) else {
                    continue;
                };
                if let Some(name) = path.alias.clone().or_else(|| path.segments.last().cloned())
                    && name != "self"
                {
                    aliases.insert((module.to_vec(), name), absolute.clone());
                }
                push(
                    tree,
                    &mut imports,
                    index,
                    file,
                    declaration.at,
                    absolute,
                    test,
                );
            }
        }
        for (at, segments) in written_paths(&file.code.text, &uses) {
            let (module, test) = file.module_at(at);
            let module = module.to_vec();
            let scoped: HashMap<String, Vec<String>> = aliases
                .iter()
                .filter(|((m, _), _)| *m == module)
                .map(|((_, name), target)| (name.clone(), target.clone()))
                .collect();
            if let Some(absolute) = resolve(tree, &module, &segments, &scoped) {
                push(tree, &mut imports, index, file, at, absolute, test);
            }
        }
    }
    (imports, globs)
}

fn push(
    tree: &Tree,
    imports: &mut Vec<Import>,
    from: usize,
    file: &File,
    at: usize,
    absolute: Vec<String>,
    test: bool,
) {
    let Some(to) = tree.file_of(&absolute) else {
        return;
    };
    if to != from {
        imports.push(Import {
            from,
            to,
            line: file.code.line_of(at),
            path: format!("crate::{}", absolute.join("::")),
            test: test || file.test,
        });
    }
}

/// The path `segments`, written in `module`, from the crate root; `None`
/// when it names something outside the crate.
fn resolve(
    tree: &Tree,
    module: &[String],
    segments: &[String],
    aliases: &HashMap<String, Vec<String>>,
) -> Option<Vec<String>> {
    let first = segments.first()?;
    let mut rest = segments;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => {
            rest = &segments[1..];
            Vec::new()
        }
        "self" => {
            rest = &segments[1..];
            module.to_vec()
        }
        "super" => {
            let mut base = module.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
            base
        }
        name => {
            let mut child = module.to_vec();
            child.push(name.to_string());
            if tree.is_module(&child) {
                rest = &segments[1..];
                child
            } else {
                let target = aliases.get(name)?;
                rest = &segments[1..];
                target.clone()
            }
        }
    };
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(base)
}

/// A `use` declaration: where it starts and the paths it brings in.
#[derive(Debug)]
struct UseDeclaration {
    at: usize,
    end: usize,
    paths: Vec<UsePath>,
}

/// One path of a use tree.
#[derive(Debug, Clone)]
struct UsePath {
    segments: Vec<String>,
    alias: Option<String>,
    glob: bool,
}

/// Every `use` declaration of the code.
fn use_declarations(text: &str) -> Vec<UseDeclaration> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(n) = text[from..].find("use ") {
        let at = from + n;
        from = at + 4;
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let Some(end) = text[at..].find(';').map(|n| at + n) else {
            break;
        };
        let tokens = tokens(&text[at + 4..end]);
        let mut paths = Vec::new();
        let mut position = 0;
        tree(&tokens, &mut position, &[], &mut paths);
        found.push(UseDeclaration { at, end, paths });
        from = end;
    }
    found
}

/// Reads one use tree at `position`, prefixed by `prefix`.
fn tree(tokens: &[String], position: &mut usize, prefix: &[String], out: &mut Vec<UsePath>) {
    let mut segments = prefix.to_vec();
    while let Some(token) = tokens.get(*position) {
        match token.as_str() {
            "::" => *position += 1,
            "*" => {
                *position += 1;
                out.push(UsePath {
                    segments: segments.clone(),
                    alias: None,
                    glob: true,
                });
                return;
            }
            "{" => {
                *position += 1;
                loop {
                    match tokens.get(*position).map(String::as_str) {
                        None => return,
                        Some("}") => {
                            *position += 1;
                            return;
                        }
                        Some(",") => *position += 1,
                        Some(_) => tree(tokens, position, &segments, out),
                    }
                }
            }
            "," | "}" => break,
            "as" => {
                *position += 1;
                let alias = tokens.get(*position).cloned();
                *position += 1;
                out.push(UsePath {
                    segments,
                    alias,
                    glob: false,
                });
                return;
            }
            name => {
                segments.push(name.to_string());
                *position += 1;
            }
        }
    }
    if segments.len() > prefix.len() {
        out.push(UsePath {
            segments,
            alias: None,
            glob: false,
        });
    }
}

fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ':' if chars.peek() == Some(&':') => {
                chars.next();
                out.push("::".to_string());
            }
            '{' | '}' | ',' | '*' => out.push(c.to_string()),
            c if c.is_alphanumeric() || c == '_' => {
                let mut word = c.to_string();
                while let Some(&next) = chars.peek() {
                    if next.is_alphanumeric() || next == '_' {
                        word.push(next);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(word.trim_start_matches("r#").to_string());
            }
            _ => {}
        }
    }
    out
}

/// The paths of two or more segments written in the code outside `use`
/// declarations (`crate::a::f`, `child::g`), with their offsets.
fn written_paths(text: &str, uses: &[UseDeclaration]) -> Vec<(usize, Vec<String>)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(skip) = uses.iter().find(|u| u.at <= i && i < u.end) {
            i = skip.end;
            continue;
        }
        let ident_start = (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_')
            && (i == 0
                || !(bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'_' | b':')));
        if !ident_start {
            i += 1;
            continue;
        }
        let start = i;
        let mut segments = Vec::new();
        let mut j = i;
        loop {
            let word_end = (j..bytes.len())
                .find(|&k| !(bytes[k].is_ascii_alphanumeric() || bytes[k] == b'_'))
                .unwrap_or(bytes.len());
            if word_end == j {
                break;
            }
            segments.push(text[j..word_end].to_string());
            if text[word_end..].starts_with("::")
                && text[word_end + 2..]
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            {
                j = word_end + 2;
            } else {
                j = word_end;
                break;
            }
        }
        // `pub(in crate::a)` names a module the item is visible in: no import.
        let visibility = text[..start]
            .trim_end()
            .strip_suffix("in")
            .is_some_and(|before| before.trim_end().ends_with('('));
        if segments.len() > 1 && !visibility {
            out.push((start, segments));
        }
        i = j.max(i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{tokens, tree, use_declarations, written_paths};

    #[test]
    fn use_trees_expand_to_their_paths() {
        let uses = use_declarations(
            "use crate::a::{b::{C, D as E}, self, f::*};\npub(crate) use super::g;\nfn user() {}",
        );
        let paths: Vec<String> = uses
            .iter()
            .flat_map(|u| &u.paths)
            .map(|p| {
                format!(
                    "{}{}",
                    p.segments.join("::"),
                    if p.glob { "::*" } else { "" }
                )
            })
            .collect();
        assert_eq!(
            paths,
            [
                "crate::a::b::C",
                "crate::a::b::D",
                "crate::a::self",
                "crate::a::f::*",
                "super::g"
            ]
        );
        let mut out = Vec::new();
        tree(&tokens("x as y"), &mut 0, &[], &mut out);
        assert_eq!(out[0].alias.as_deref(), Some("y"));
    }

    #[test]
    fn paths_in_code_are_found() {
        let text = "pub(in crate::c) fn f() { crate::a::b(); let x = queue::Work::new(); y.z(); }";
        let found: Vec<String> = written_paths(text, &[])
            .into_iter()
            .map(|(_, s)| s.join("::"))
            .collect();
        assert_eq!(found, ["crate::a::b", "queue::Work::new"]);
    }
}
