//! How modules are spread over the replicas in scale-out mode: each
//! replica takes its share, preferring the modules that score highest for
//! it (rendezvous hashing), so the replicas do not all go for the same
//! modules first.

/// Rendezvous score: how much `identity` wants `module` (FNV-1a).
pub(super) fn score(identity: &str, module: &str) -> u64 {
    let mut hash = rekon_rules::fnv1a64(identity.bytes().chain([0]).chain(module.bytes()));
    // A final mix, so that nearby identities spread well.
    hash ^= hash >> 33;
    hash.wrapping_mul(0xff51_afd7_ed55_8ccd)
}

/// This replica's share of `modules` among `replicas`.
pub(super) fn share(modules: usize, replicas: usize) -> usize {
    modules.div_ceil(replicas.max(1))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{score, share};

    #[test]
    fn shares_round_up() {
        assert_eq!(share(9, 3), 3);
        assert_eq!(share(9, 2), 5);
        assert_eq!(share(10, 3), 4);
        assert_eq!(share(2, 3), 1);
        assert_eq!(share(0, 3), 0);
        assert_eq!(share(5, 0), 5);
    }

    #[test]
    fn preferences_differ_between_replicas() {
        let modules: Vec<String> = (1..=9).map(|i| format!("module-{i}")).collect();
        let favourite = |identity: &str| {
            modules
                .iter()
                .max_by_key(|m| score(identity, m))
                .cloned()
                .expect("modules")
        };
        let favourites: BTreeSet<String> = ["replica-a", "replica-b", "replica-c", "replica-d"]
            .iter()
            .map(|r| favourite(r))
            .collect();
        assert!(
            favourites.len() > 1,
            "every replica would go for the same module first: {favourites:?}"
        );
    }
}
