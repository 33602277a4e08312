//! What `/metrics` serves, read as a scraper reads it.

use super::help::HELP;
use super::*;

#[test]
fn every_metric_says_what_it_counts() {
    // Registering a metric without help text panics: building the
    // metrics proves each has one.
    let metrics = Metrics::new();
    for (name, help) in HELP {
        assert!(help.len() > 20, "rekon_{name}: {help:?}");
    }
    let mut names: Vec<&str> = HELP.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), HELP.len(), "each metric once");
    // A family with a series is served with its help.
    metrics
        .shadow_skipped
        .get_or_create(&ModuleLabel {
            module: "app".into(),
        })
        .inc();
    let text = metrics.encode();
    assert!(
        text.contains("# HELP rekon_shadow_skipped Requests the shadow did not reconcile"),
        "{text}"
    );
}
