//! Periodic resync: every primary reconciled again, now and then, at low
//! priority, to catch drift no watch reports (an external system, a
//! missed change of a kind the module does not watch).

use std::time::Duration;

/// The most a period is stretched by: up to 10% longer, so replicas and
/// modules started together do not resync in step.
pub(crate) const JITTER: f64 = 0.1;

/// `period`, stretched by `unit` (in `[0, 1)`) times [`JITTER`].
pub(crate) fn jittered(period: Duration, unit: f64) -> Duration {
    period.mul_f64(1.0 + JITTER * unit.clamp(0.0, 1.0))
}

/// Calls `resync` after every jittered `period`, forever (the caller
/// aborts it). `unit` draws the jitter of each wait.
pub(crate) async fn every(
    period: Duration,
    mut unit: impl FnMut() -> f64,
    mut resync: impl FnMut(),
) {
    loop {
        tokio::time::sleep(jittered(period, unit())).await;
        resync();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tokio::time::Instant;

    #[test]
    fn the_jitter_stretches_by_up_to_a_tenth() {
        let period = Duration::from_secs(100);
        assert_eq!(jittered(period, 0.0), period);
        assert_eq!(jittered(period, 0.5), Duration::from_secs(105));
        assert!(jittered(period, 0.999) < Duration::from_secs(110));
    }

    /// On paused time: resyncs come at each jittered period, and only then.
    #[tokio::test(start_paused = true)]
    async fn resyncs_come_at_the_declared_period() {
        let started = Instant::now();
        let at = Arc::new(Mutex::new(Vec::new()));
        let units = [0.0, 0.5, 0.9];
        let mut drawn = units.into_iter().cycle();
        let seen = at.clone();
        let task = tokio::spawn(every(
            Duration::from_secs(60),
            move || drawn.next().unwrap_or(0.0),
            move || seen.lock().unwrap().push(started.elapsed()),
        ));
        tokio::time::sleep(Duration::from_secs(200)).await;
        task.abort();
        let at = at.lock().unwrap().clone();
        let secs: Vec<u64> = at.iter().map(Duration::as_secs).collect();
        // 60, then 60 + 63, then 123 + 65.4
        assert_eq!(secs, [60, 123, 188]);
    }
}
