//! The async layer on a real runtime: waiters woken by adds, finishes
//! and deadlines, shutdown, and no key twice at once.

use super::*;

pub(super) fn queue(concurrency: usize) -> WorkQueue<Key, Why> {
    WorkQueue::new(QueueConfig::default().concurrency(concurrency))
}

fn waiter(q: &WorkQueue<Key, Why>) -> tokio::task::JoinHandle<Option<Key>> {
    let q = q.clone();
    tokio::spawn(async move { q.next().await.map(|ticket| ticket.key) })
}

/// Lets spawned tasks run until they wait.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

async fn woken(waiter: tokio::task::JoinHandle<Option<Key>>) -> Option<Key> {
    timeout(HANG, waiter)
        .await
        .expect("the waiter was woken")
        .expect("the waiter did not panic")
}

#[tokio::test]
async fn a_waiter_is_woken_by_add() {
    let q = queue(1);
    let w = waiter(&q);
    settle().await;
    q.add("a", "x");
    assert_eq!(woken(w).await, Some("a"));
    assert_eq!((q.in_flight(), q.len()), (1, 0));
}

#[tokio::test]
async fn a_waiter_is_woken_by_finish_at_the_concurrency_limit() {
    let q = queue(1);
    q.add("a", "x");
    q.add("b", "x");
    let a = q.next().await.expect("a is ready");
    assert!(q.next().now_or_never().is_none(), "b waits for a free slot");
    let w = waiter(&q);
    settle().await;
    q.finish(a, Completion::Done);
    assert_eq!(woken(w).await, Some("b"));
}

#[tokio::test]
async fn a_dirty_key_wakes_its_waiter_on_finish() {
    let q = queue(4);
    q.add("a", "created");
    let a = q.next().await.expect("a is ready");
    q.add("a", "updated");
    let w = waiter(&q);
    settle().await;
    assert!(!w.is_finished(), "not handed out while in flight");
    q.finish(a, Completion::RequeueAfter(Duration::from_secs(3600)));
    assert_eq!(woken(w).await, Some("a"));
}

#[tokio::test]
async fn a_waiter_sleeps_until_the_earliest_deadline() {
    let q = queue(1);
    q.add_after("far", "x", Priority::High, Duration::from_secs(3600));
    let w = waiter(&q);
    settle().await;
    let start = Instant::now();
    q.add_after("near", "x", Priority::High, 20 * MS);
    assert_eq!(woken(w).await, Some("near"), "woken by the nearer key");
    assert!(start.elapsed() >= 20 * MS, "not before its time");
}

#[tokio::test]
async fn zero_concurrency_means_one() {
    let q = queue(0);
    q.add("a", "x");
    q.add("b", "x");
    let _a = q.next().await.expect("a is ready");
    assert!(q.next().now_or_never().is_none());
}

#[tokio::test]
async fn shutdown_wakes_every_waiter() {
    let q = queue(1);
    q.add_after("later", "x", Priority::High, Duration::from_secs(3600));
    let waiters: Vec<_> = (0..3).map(|_| waiter(&q)).collect();
    settle().await;
    q.shutdown();
    for w in waiters {
        assert_eq!(woken(w).await, None);
    }
    assert!(q.is_empty(), "pending keys dropped");
    q.add("a", "x");
    assert!(q.is_empty(), "adds after shutdown are ignored");
    assert!(q.next().await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn never_the_same_key_twice_at_once_under_concurrency_4() {
    const KEYS: u32 = 6;
    const ROUNDS: u32 = 200;
    let q: WorkQueue<u32, u32> = WorkQueue::new(QueueConfig::default().concurrency(4));
    let running = Arc::new(Mutex::new(HashSet::new()));
    let peak = Arc::new(AtomicUsize::new(0));
    let last_reason = Arc::new(Mutex::new(HashMap::new()));
    let workers: Vec<_> = (0..6)
        .map(|_| {
            let (q, running, peak, last_reason) = (
                q.clone(),
                running.clone(),
                peak.clone(),
                last_reason.clone(),
            );
            tokio::spawn(async move {
                while let Some(ticket) = q.next().await {
                    {
                        let mut running = running.lock().unwrap();
                        assert!(
                            running.insert(ticket.key),
                            "key {} twice at once",
                            ticket.key
                        );
                        peak.fetch_max(running.len(), Ordering::SeqCst);
                    }
                    last_reason
                        .lock()
                        .unwrap()
                        .insert(ticket.key, ticket.reason);
                    for _ in 0..3 {
                        tokio::task::yield_now().await;
                    }
                    running.lock().unwrap().remove(&ticket.key);
                    q.finish(ticket, Completion::Done);
                }
            })
        })
        .collect();

    for round in 0..ROUNDS {
        for key in 0..KEYS {
            q.add(key, round);
        }
        tokio::task::yield_now().await;
    }
    timeout(HANG, async {
        while !q.is_empty() || q.in_flight() > 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the queue drains");
    q.shutdown();
    for worker in workers {
        worker.await.unwrap();
    }

    assert!(peak.load(Ordering::SeqCst) <= 4, "at most four in flight");
    let last_reason = last_reason.lock().unwrap();
    for key in 0..KEYS {
        assert_eq!(
            last_reason[&key],
            ROUNDS - 1,
            "key {key} ran after its last add"
        );
    }
}
