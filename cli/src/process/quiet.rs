//! Giving the allocator's free memory back to the system when the host goes
//! quiet.
//!
//! An allocator that keeps freed memory per thread (mimalloc does, until a
//! later allocation on the same thread purges it) holds on to what a burst
//! of work freed for as long as the host then sits idle: after creating 600
//! objects, 11 MiB of heap stayed resident around 4 MiB in use. The host
//! library counts its work (`rekon_host::telemetry::activity`: guests
//! instantiated, informer changes); [`trim_when_quiet`] looks every few
//! seconds, and the first look that finds no work since the one before
//! asks every runtime thread to run the allocator trim ([`set_trim`]) as
//! it next parks ([`on_runtime_thread_park`]), and wakes them so they do.
//! A host that stays quiet is not woken again; one under steady work is
//! never trimmed in the middle of it.

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What gives the allocator's freed memory back, set once by `main`.
static TRIM: OnceLock<fn()> = OnceLock::new();

/// How many quiet spells have asked for a trim: each runtime thread trims
/// once for each as it parks.
static TRIM_EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The last quiet spell this thread trimmed for.
    static TRIMMED: Cell<u64> = const { Cell::new(0) };
}

/// How often [`trim_when_quiet`] looks for quiet.
pub const LOOK_EVERY: Duration = Duration::from_secs(2);

/// Sets the allocator trim (only the first call counts).
pub fn set_trim(trim: fn()) {
    let _ = TRIM.set(trim);
}

/// The allocator trim `main` set, if any.
pub fn trim() -> Option<fn()> {
    TRIM.get().copied()
}

/// The hook for `tokio::runtime::Builder::on_thread_park` of the runtime a
/// host runs on: runs the allocator trim on this thread once per quiet
/// spell [`trim_when_quiet`] found. Costs two loads when there is nothing
/// to do.
pub fn on_runtime_thread_park() {
    let epoch = TRIM_EPOCH.load(Ordering::Relaxed);
    if TRIMMED.with(|trimmed| trimmed.replace(epoch)) != epoch
        && let Some(trim) = trim()
    {
        trim();
    }
}

/// Looks for quiet every `every` until aborted: after work (what
/// `activity` counts), the first look with none since the one before asks
/// every runtime thread for a trim. Returns at once when no allocator trim
/// is set.
pub async fn trim_when_quiet(every: Duration, activity: fn() -> u64) {
    if trim().is_none() {
        return;
    }
    let mut looks = Looks::new(activity());
    loop {
        tokio::time::sleep(every).await;
        if looks.gone_quiet(activity()) {
            ask_every_thread_to_trim();
        }
    }
}

/// What the looks for quiet have seen.
struct Looks {
    /// The work count at the last look.
    seen: u64,
    /// The work count when a trim was last asked for.
    trimmed_at: Option<u64>,
}

impl Looks {
    fn new(now: u64) -> Looks {
        Looks {
            seen: now,
            trimmed_at: None,
        }
    }

    /// Whether the host has gone quiet at this look (the work count `now`):
    /// no work since the last look, and some since the last trim.
    fn gone_quiet(&mut self, now: u64) -> bool {
        if now != self.seen {
            self.seen = now;
            return false;
        }
        if self.trimmed_at == Some(now) {
            return false;
        }
        self.trimmed_at = Some(now);
        true
    }
}

/// Asks every runtime thread for a trim as it next parks, and wakes the
/// workers: each that runs one of these empty tasks parks after it.
fn ask_every_thread_to_trim() {
    TRIM_EPOCH.fetch_add(1, Ordering::Relaxed);
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    for _ in 0..workers {
        tokio::spawn(async {});
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A quiet look after work asks for a trim, once; a look after more
    /// work waits for the next quiet one.
    #[test]
    fn the_first_look_without_work_after_work_is_quiet() {
        let mut looks = Looks::new(5);
        assert!(looks.gone_quiet(5), "start-up was work");
        assert!(!looks.gone_quiet(5), "still quiet: asked already");
        assert!(!looks.gone_quiet(9), "work since the last look");
        assert!(!looks.gone_quiet(12), "more work");
        assert!(looks.gone_quiet(12), "quiet again");
        assert!(!looks.gone_quiet(12));
    }

    /// The threads of the test's runtime that trimmed, by name.
    static TRIMS: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn counting_trim() {
        let thread = std::thread::current();
        if let Some(name) = thread.name()
            && name.starts_with("quiet-test")
        {
            TRIMS.lock().unwrap().push(name.to_string());
        }
    }

    fn trims() -> Vec<String> {
        TRIMS.lock().unwrap().clone()
    }

    /// Asked, each runtime thread trims once as it parks (the idle ones
    /// woken for it), and not again until asked again; the looks ask after
    /// work once the host is quiet.
    /// Work the test does, as the host library counts its own.
    static WORK: AtomicU64 = AtomicU64::new(0);

    fn work() -> u64 {
        WORK.load(Ordering::Relaxed)
    }

    #[test]
    fn every_runtime_thread_trims_once_when_asked() {
        set_trim(counting_trim);
        let workers = 2;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .thread_name_fn(|| {
                static NEXT: AtomicU64 = AtomicU64::new(0);
                format!("quiet-test-{}", NEXT.fetch_add(1, Ordering::Relaxed))
            })
            .on_thread_park(on_runtime_thread_park)
            .enable_all()
            .build()
            .unwrap();
        let settle = Duration::from_millis(300);
        runtime.block_on(async {
            tokio::time::sleep(settle).await;
            let before = trims().len();
            tokio::spawn(async { ask_every_thread_to_trim() })
                .await
                .unwrap();
            tokio::time::sleep(settle).await;
            let mut names = trims()[before..].to_vec();
            assert_eq!(names.len(), workers, "{names:?}");
            names.sort();
            names.dedup();
            assert_eq!(names.len(), workers, "each worker once: {names:?}");
            // Parking again asks nothing more.
            for _ in 0..10 {
                tokio::spawn(async {}).await.unwrap();
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert_eq!(trims().len(), before + workers, "not again until asked");
            // The looks: work, then quiet.
            let watcher = tokio::spawn(trim_when_quiet(Duration::from_millis(50), work));
            WORK.fetch_add(1, Ordering::Relaxed);
            let started = std::time::Instant::now();
            while trims().len() < before + 2 * workers {
                assert!(started.elapsed() < Duration::from_secs(30), "no trim");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            watcher.abort();
        });
    }
}
