//! The epoch ticker: reconcile deadlines are epochs, and a thread
//! advances the epoch while a guest may run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::engine::Engine;

/// How often the epoch ticker advances the engine's epoch: the granularity
/// of reconcile deadlines (a guest over its budget is stopped within one
/// tick). Every tick wakes a thread while guests run; at 1 ms the ticker
/// was a seventh of a busy host's CPU against a real API server, where
/// reconciles wait on the network and a guest is alive most of the time.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The epoch ticker's state: how many guests run (it ticks only while
/// some do, and sleeps otherwise: an idle host has no thread waking up),
/// and whether to stop.
pub(crate) struct Ticker {
    pub running: AtomicUsize,
    pub stop: AtomicBool,
    pub thread: std::sync::OnceLock<std::thread::Thread>,
}

impl Ticker {
    pub(super) fn wake(&self) {
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }
}

/// Held while a guest may run (a store exists): the epoch ticker ticks.
pub(crate) struct Ticking(Arc<Ticker>);

impl Drop for Ticking {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Engine {
    /// Keeps the epoch ticker ticking until the guard is dropped: taken
    /// for every store a guest runs in.
    pub(crate) fn ticking(&self) -> Ticking {
        let ticker = &self.shared.ticker;
        if ticker.running.fetch_add(1, Ordering::AcqRel) == 0 {
            ticker.wake();
        }
        Ticking(ticker.clone())
    }
}

/// Advances the epoch every [`EPOCH_TICK`] while a guest may run, and
/// sleeps (parked, no wake-ups) while none does. When the thread falls
/// behind (a stalled machine), missed ticks are skipped rather than
/// replayed in a burst, so a stall never times out every running reconcile
/// at once.
pub(super) fn spawn_ticker(engines: Vec<wasmtime::EngineWeak>, ticker: Arc<Ticker>) {
    let state = ticker.clone();
    let thread = std::thread::Builder::new()
        .name("rekon-epoch".into())
        .spawn(move || {
            let ticker = state;
            let mut next = Instant::now() + EPOCH_TICK;
            while !ticker.stop.load(Ordering::Relaxed) {
                if ticker.running.load(Ordering::Acquire) == 0 {
                    // A spurious wake-up only goes round the loop again.
                    std::thread::park();
                    next = Instant::now() + EPOCH_TICK;
                    continue;
                }
                let now = Instant::now();
                if next > now {
                    std::thread::sleep(next - now);
                }
                let mut alive = false;
                for engine in engines.iter().filter_map(wasmtime::EngineWeak::upgrade) {
                    engine.increment_epoch();
                    alive = true;
                }
                if !alive {
                    return;
                }
                next += EPOCH_TICK;
                let now = Instant::now();
                if now > next + EPOCH_TICK {
                    next = now + EPOCH_TICK;
                }
            }
        })
        .expect("spawning the epoch ticker thread");
    let _ = ticker.thread.set(thread.thread().clone());
}
