//! `k8s.io/apimachinery/pkg/util/diff.Diff`, as the real server's
//! validation shows two versions of a spec that may not change (a claim's,
//! `ValidatePersistentVolumeClaimUpdate`): both written as
//! `json.MarshalIndent(v, "", " ")` and compared line by line with
//! `pmezard/go-difflib`'s unified diff (three lines of context, no file
//! header). go-difflib is a port of Python's `difflib`: its
//! `SequenceMatcher` (with the popular-lines heuristic of a long text) and
//! grouped opcodes are made again here.

use std::collections::HashMap;

/// The unified diff `diff.Diff` prints of two objects written as `a` and
/// `b` (each Go's indented JSON of one).
pub(crate) fn unified_diff(a: &str, b: &str) -> String {
    let (a, b) = (split_lines(a), split_lines(b));
    let matcher = Matcher::new(&a, &b);
    let mut out = String::new();
    for group in matcher.grouped_opcodes(3) {
        let (first, last) = (group[0], group[group.len() - 1]);
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(first.i1, last.i2),
            range(first.j1, last.j2)
        ));
        for op in group {
            if op.tag == Tag::Equal {
                a[op.i1..op.i2]
                    .iter()
                    .for_each(|l| out.push_str(&format!(" {l}")));
                continue;
            }
            if matches!(op.tag, Tag::Replace | Tag::Delete) {
                a[op.i1..op.i2]
                    .iter()
                    .for_each(|l| out.push_str(&format!("-{l}")));
            }
            if matches!(op.tag, Tag::Replace | Tag::Insert) {
                b[op.j1..op.j2]
                    .iter()
                    .for_each(|l| out.push_str(&format!("+{l}")));
            }
        }
    }
    out
}

/// `difflib.SplitLines`: each line with its newline, the last given one.
fn split_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    match lines.last_mut() {
        Some(last) if !last.ends_with('\n') => last.push('\n'),
        Some(_) => lines.push("\n".into()),
        None => lines.push("\n".into()),
    }
    lines
}

/// `formatRangeUnified`: a hunk's lines, counted from one.
fn range(start: usize, stop: usize) -> String {
    let length = stop - start;
    match length {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{length}", start + 1),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tag {
    Replace,
    Delete,
    Insert,
    Equal,
}

/// One opcode: how `a[i1..i2]` becomes `b[j1..j2]`.
#[derive(Clone, Copy, Debug)]
struct OpCode {
    tag: Tag,
    i1: usize,
    i2: usize,
    j1: usize,
    j2: usize,
}

/// `SequenceMatcher` over two lists of lines, without junk.
struct Matcher<'a> {
    a: &'a [String],
    b: &'a [String],
    /// Where each line of `b` is, but the popular ones.
    b2j: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Matcher<'a> {
    fn new(a: &'a [String], b: &'a [String]) -> Matcher<'a> {
        let mut b2j: HashMap<&str, Vec<usize>> = HashMap::new();
        for (j, line) in b.iter().enumerate() {
            b2j.entry(line.as_str()).or_default().push(j);
        }
        // `autoJunk`: in a text of 200 lines or more, a line found more
        // than once in a hundred is never matched on.
        if b.len() >= 200 {
            let most = b.len() / 100 + 1;
            b2j.retain(|_, at| at.len() <= most);
        }
        Matcher { a, b, b2j }
    }

    /// `findLongestMatch` in `a[alo..ahi]` and `b[blo..bhi]`: the first
    /// longest block, extended over popular lines.
    fn longest_match(
        &self,
        alo: usize,
        ahi: usize,
        blo: usize,
        bhi: usize,
    ) -> (usize, usize, usize) {
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0);
        let mut j2len: HashMap<usize, usize> = HashMap::new();
        for i in alo..ahi {
            let mut next: HashMap<usize, usize> = HashMap::new();
            for &j in self.b2j.get(self.a[i].as_str()).into_iter().flatten() {
                if j < blo {
                    continue;
                }
                if j >= bhi {
                    break;
                }
                let k = j
                    .checked_sub(1)
                    .and_then(|p| j2len.get(&p))
                    .copied()
                    .unwrap_or(0)
                    + 1;
                next.insert(j, k);
                if k > bestsize {
                    (besti, bestj, bestsize) = (i + 1 - k, j + 1 - k, k);
                }
            }
            j2len = next;
        }
        while besti > alo && bestj > blo && self.a[besti - 1] == self.b[bestj - 1] {
            (besti, bestj, bestsize) = (besti - 1, bestj - 1, bestsize + 1);
        }
        while besti + bestsize < ahi
            && bestj + bestsize < bhi
            && self.a[besti + bestsize] == self.b[bestj + bestsize]
        {
            bestsize += 1;
        }
        (besti, bestj, bestsize)
    }

    /// `GetMatchingBlocks`: the matching blocks in order, adjacent ones
    /// joined, ending with `(len(a), len(b), 0)`.
    fn matching_blocks(&self) -> Vec<(usize, usize, usize)> {
        let mut queue = vec![(0, self.a.len(), 0, self.b.len())];
        let mut found = Vec::new();
        while let Some((alo, ahi, blo, bhi)) = queue.pop() {
            let (i, j, k) = self.longest_match(alo, ahi, blo, bhi);
            if k == 0 {
                continue;
            }
            found.push((i, j, k));
            if alo < i && blo < j {
                queue.push((alo, i, blo, j));
            }
            if i + k < ahi && j + k < bhi {
                queue.push((i + k, ahi, j + k, bhi));
            }
        }
        found.sort_unstable();
        let mut blocks = Vec::new();
        let (mut i1, mut j1, mut k1) = (0, 0, 0);
        for (i2, j2, k2) in found {
            if i1 + k1 == i2 && j1 + k1 == j2 {
                k1 += k2;
            } else {
                if k1 > 0 {
                    blocks.push((i1, j1, k1));
                }
                (i1, j1, k1) = (i2, j2, k2);
            }
        }
        if k1 > 0 {
            blocks.push((i1, j1, k1));
        }
        blocks.push((self.a.len(), self.b.len(), 0));
        blocks
    }

    /// `GetOpCodes`.
    fn opcodes(&self) -> Vec<OpCode> {
        let (mut i, mut j) = (0, 0);
        let mut codes = Vec::new();
        for (ai, bj, size) in self.matching_blocks() {
            let tag = match (i < ai, j < bj) {
                (true, true) => Some(Tag::Replace),
                (true, false) => Some(Tag::Delete),
                (false, true) => Some(Tag::Insert),
                (false, false) => None,
            };
            if let Some(tag) = tag {
                codes.push(OpCode {
                    tag,
                    i1: i,
                    i2: ai,
                    j1: j,
                    j2: bj,
                });
            }
            (i, j) = (ai + size, bj + size);
            if size > 0 {
                codes.push(OpCode {
                    tag: Tag::Equal,
                    i1: ai,
                    i2: i,
                    j1: bj,
                    j2: j,
                });
            }
        }
        codes
    }

    /// `GetGroupedOpCodes`: the changes in hunks with `n` lines of
    /// context.
    fn grouped_opcodes(&self, n: usize) -> Vec<Vec<OpCode>> {
        let mut codes = self.opcodes();
        if codes.is_empty() {
            codes.push(OpCode {
                tag: Tag::Equal,
                i1: 0,
                i2: 1,
                j1: 0,
                j2: 1,
            });
        }
        if let Some(first) = codes.first_mut().filter(|c| c.tag == Tag::Equal) {
            first.i1 = first.i1.max(first.i2.saturating_sub(n));
            first.j1 = first.j1.max(first.j2.saturating_sub(n));
        }
        if let Some(last) = codes.last_mut().filter(|c| c.tag == Tag::Equal) {
            last.i2 = last.i2.min(last.i1 + n);
            last.j2 = last.j2.min(last.j1 + n);
        }
        let mut groups = Vec::new();
        let mut group = Vec::new();
        for mut code in codes {
            if code.tag == Tag::Equal && code.i2 - code.i1 > 2 * n {
                group.push(OpCode {
                    i2: code.i2.min(code.i1 + n),
                    j2: code.j2.min(code.j1 + n),
                    ..code
                });
                groups.push(std::mem::take(&mut group));
                code.i1 = code.i1.max(code.i2.saturating_sub(n));
                code.j1 = code.j1.max(code.j2.saturating_sub(n));
            }
            group.push(code);
        }
        if !group.is_empty() && !(group.len() == 1 && group[0].tag == Tag::Equal) {
            groups.push(group);
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_is_shown_with_three_lines_around_it() {
        let a = "{\n \"A\": 1,\n \"B\": 2,\n \"C\": 3,\n \"D\": 4,\n \"E\": 5,\n \"F\": 6,\n \"G\": 7\n}";
        let b = a.replace("\"D\": 4", "\"D\": 9");
        assert_eq!(
            unified_diff(a, &b),
            "@@ -2,7 +2,7 @@\n  \"A\": 1,\n  \"B\": 2,\n  \"C\": 3,\n- \"D\": 4,\n+ \"D\": 9,\n  \"E\": 5,\n  \"F\": 6,\n  \"G\": 7\n"
        );
        assert_eq!(unified_diff(a, a), "");
    }

    #[test]
    fn far_apart_changes_are_two_hunks() {
        let lines = |changed: [&str; 2]| -> String {
            (0..20)
                .map(|i| match i {
                    2 => changed[0].to_string(),
                    17 => changed[1].to_string(),
                    _ => i.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        let diff = unified_diff(&lines(["2", "17"]), &lines(["x", "y"]));
        assert_eq!(
            diff,
            "@@ -1,6 +1,6 @@\n 0\n 1\n-2\n+x\n 3\n 4\n 5\n@@ -15,6 +15,6 @@\n 14\n 15\n 16\n-17\n+y\n 18\n 19\n"
        );
    }
}
