//! The canary layer's choice: which objects a shadow version serves live.

use crate::names::namespaced_name;

/// Whether the object `namespace/name` is in a canary of `percent`: the
/// FNV-1a hash of `namespace/name` (`name` alone for a cluster-scoped
/// object), modulo 100, is below it. Stable across restarts and replicas.
pub fn in_canary(namespace: Option<&str>, name: &str, percent: u8) -> bool {
    let key = namespaced_name(namespace, name);
    rekon_rules::fnv1a64(key.bytes()) % 100 < u64::from(percent)
}

#[cfg(test)]
mod tests {
    use super::in_canary;

    #[test]
    fn a_share_of_objects_is_in_the_canary_the_same_every_time() {
        let names: Vec<String> = (0..1000).map(|i| format!("app-{i}")).collect();
        let share = |percent| {
            names
                .iter()
                .filter(|n| in_canary(Some("shop"), n, percent))
                .count()
        };
        assert_eq!(share(0), 0);
        assert_eq!(share(100), 1000);
        let half = share(50);
        assert!((400..=600).contains(&half), "{half} of 1000 at 50%");
        assert_eq!(share(50), half, "stable");
        assert!(share(10) < half);
    }
}
