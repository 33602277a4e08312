//! A line diff of two texts, as the tools that compare what was expected
//! with what is print it (`rekon test`, the SDK's check of a checked-in
//! CRD): `- ` expected, `+ ` actual, `  ` unchanged lines near a change.

/// The lines of `expected` and `actual` lined up by their longest common
/// subsequence (expected lines first within a change), shown with
/// `context` unchanged lines around each change; `  ...` stands for the
/// unchanged lines left out. Empty when the texts have the same lines.
pub fn lines(expected: &str, actual: &str, context: usize) -> Vec<String> {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    // common[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut common = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i][j] = if a[i] == b[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut lined_up: Vec<(char, &str)> = Vec::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            lined_up.push((' ', a[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < a.len() && (j == b.len() || common[i + 1][j] >= common[i][j + 1]) {
            lined_up.push(('-', a[i]));
            i += 1;
        } else {
            lined_up.push(('+', b[j]));
            j += 1;
        }
    }
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
    use super::lines;

    #[test]
    fn changes_show_with_their_context_and_the_rest_is_elided() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\n";
        assert_eq!(
            lines(old, new, 2).join("\n"),
            "  ...\n  b\n  c\n- d\n+ D\n  e\n  f\n  ...\n  i\n  j\n+ k"
        );
        assert!(lines(old, old, 2).is_empty());
    }
}
