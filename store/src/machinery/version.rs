//! Kubernetes' version priority (apimachinery's
//! `CompareKubeAwareVersionStrings`): which of a group's versions is
//! preferred. (kube-core's `Version::priority` reads `v1beta` without a
//! number as a beta; Kubernetes, and this, read it as any other string.)

/// Kubernetes' version priority (`CompareKubeAwareVersionStrings`), as a
/// sort key: GA, then beta, then alpha, the higher numbers first; other
/// strings last, alphabetically.
pub fn version_priority(
    version: &str,
) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, String) {
    let parsed = version.strip_prefix('v').and_then(|rest| {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        let (level, minor) = if tail.is_empty() {
            (0, 0)
        } else if let Some(n) = tail.strip_prefix("beta") {
            (1, n.parse().ok()?)
        } else {
            (2, tail.strip_prefix("alpha")?.parse().ok()?)
        };
        Some((level, major, minor))
    });
    match parsed {
        Some((level, major, minor)) => (
            level,
            std::cmp::Reverse(major),
            std::cmp::Reverse(minor),
            String::new(),
        ),
        None => (
            3,
            std::cmp::Reverse(0),
            std::cmp::Reverse(0),
            version.to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::version_priority;

    #[test]
    fn versions_sort_by_kubernetes_priority() {
        let mut versions = vec![
            "v1alpha1", "v1", "foo", "v2beta1", "v10", "v2", "v1beta2", "v1beta1",
        ];
        versions.sort_by_key(|v| version_priority(v));
        assert_eq!(
            versions,
            [
                "v10", "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"
            ]
        );
    }
}
