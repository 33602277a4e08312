//! How every rekon tool shows two texts that differ (`rekon test`, the
//! rollout's shadow diffs, the SDK's check of a checked-in CRD): `- `
//! expected, `+ ` actual, `  ` unchanged lines near a change, `  ...` for
//! the unchanged lines left out. The lines are lined up by `similar`'s
//! diff (a shortest edit script), removed lines first within a change.

use similar::{ChangeTag, TextDiff};

/// The lines of `expected` and `actual` lined up, shown with `context`
/// unchanged lines around each change; `  ...` stands for the unchanged
/// lines left out. Empty when the texts have the same lines.
pub fn diff_lines(expected: &str, actual: &str, context: usize) -> Vec<String> {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let diff = TextDiff::from_slices(&a, &b);
    let lined_up: Vec<(char, &str)> = diff
        .iter_all_changes()
        .map(|change| {
            let sign = match change.tag() {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            };
            (sign, change.value())
        })
        .collect();
    let changed: Vec<usize> = (0..lined_up.len())
        .filter(|&k| lined_up[k].0 != ' ')
        .collect();
    let near = |k: usize| changed.iter().any(|&c| c.abs_diff(k) <= context);
    let mut out = Vec::new();
    let mut skipped = false;
    for (k, (sign, line)) in lined_up.iter().enumerate() {
        if !near(k) {
            skipped = true;
            continue;
        }
        if skipped {
            out.push("  ...".to_string());
        }
        skipped = false;
        out.push(format!("{sign} {line}"));
    }
    if skipped && !out.is_empty() {
        out.push("  ...".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::diff_lines;

    #[test]
    fn changes_show_with_their_context_and_the_rest_is_elided() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\n";
        assert_eq!(
            diff_lines(old, new, 2).join("\n"),
            "  ...\n  b\n  c\n- d\n+ D\n  e\n  f\n  ...\n  i\n  j\n+ k"
        );
        assert!(diff_lines(old, old, 2).is_empty());
    }

    #[test]
    fn removed_lines_come_first_within_a_change() {
        let old = "kind: App\nspec:\n  replicas: 2\n  image: web:1\n";
        let new = "kind: App\nspec:\n  replicas: 3\n  image: web:2\n";
        assert_eq!(
            diff_lines(old, new, 1),
            [
                "  ...",
                "  spec:",
                "-   replicas: 2",
                "-   image: web:1",
                "+   replicas: 3",
                "+   image: web:2",
            ]
        );
    }
}
