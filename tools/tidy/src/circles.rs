//! Circles of files: files that import each other in a loop (strongly
//! connected components of the import graph), kept where they span more
//! than one folder.

use std::collections::BTreeSet;

use crate::imports::Import;
use crate::modules::Tree;

/// A circle of files across folders.
#[derive(Debug)]
pub struct Circle {
    /// The files in it (indexes into the tree).
    pub files: Vec<usize>,
    /// The imports that tie it: (from, to, path).
    pub edges: Vec<(usize, usize, String)>,
}

/// The circles of `imports` whose files are in more than one folder.
pub fn across_folders(tree: &Tree, imports: &[&Import]) -> Vec<Circle> {
    let n = tree.files.len();
    let mut next: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for import in imports {
        next[import.from].insert(import.to);
    }
    components(&next)
        .into_iter()
        .filter(|files| files.len() > 1)
        .filter(|files| {
            let folders: BTreeSet<_> = files
                .iter()
                .map(|&f| tree.files[f].path.parent().map(|p| p.to_path_buf()))
                .collect();
            folders.len() > 1
        })
        .map(|files| {
            let set: BTreeSet<usize> = files.iter().copied().collect();
            let mut edges: Vec<(usize, usize, String)> = imports
                .iter()
                .filter(|i| set.contains(&i.from) && set.contains(&i.to))
                .map(|i| (i.from, i.to, i.path.clone()))
                .collect();
            edges.sort();
            edges.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
            Circle { files, edges }
        })
        .collect()
}

/// Tarjan's strongly connected components, iteratively.
fn components(next: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut counter = 0;
    let mut out = Vec::new();
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        // (node, its successors still to visit)
        let mut work: Vec<(usize, Vec<usize>)> = Vec::new();
        index[start] = counter;
        low[start] = counter;
        counter += 1;
        stack.push(start);
        on_stack[start] = true;
        work.push((start, next[start].iter().rev().copied().collect()));
        while let Some((node, pending)) = work.last_mut() {
            let node = *node;
            if let Some(succ) = pending.pop() {
                if index[succ] == usize::MAX {
                    index[succ] = counter;
                    low[succ] = counter;
                    counter += 1;
                    stack.push(succ);
                    on_stack[succ] = true;
                    work.push((succ, next[succ].iter().rev().copied().collect()));
                } else if on_stack[succ] {
                    low[node] = low[node].min(index[succ]);
                }
            } else {
                work.pop();
                if let Some((parent, _)) = work.last() {
                    low[*parent] = low[*parent].min(low[node]);
                }
                if low[node] == index[node] {
                    let mut component = Vec::new();
                    while let Some(top) = stack.pop() {
                        on_stack[top] = false;
                        component.push(top);
                        if top == node {
                            break;
                        }
                    }
                    component.sort();
                    out.push(component);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::components;

    #[test]
    fn loops_are_found_and_chains_are_not() {
        let graph: Vec<BTreeSet<usize>> =
            vec![[1].into(), [2].into(), [0, 3].into(), BTreeSet::new()];
        let mut found = components(&graph);
        found.sort();
        assert_eq!(found, vec![vec![0, 1, 2], vec![3]]);
    }
}
