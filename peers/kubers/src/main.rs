//! `rekon-peer-kubers`: the App operator of `cargo bench --bench pipeline`
//! as a kube-rs `Controller` ([`controller`]), in a process of its own, so
//! that the bench can set rekon beside it as a kube-rs user would build it.
//!
//! Usage: `rekon-peer-kubers <concurrency>`, with the cluster found as any
//! kube-rs operator finds it (`KUBECONFIG`, in the bench). It prints
//! `started` once the controller runs, answers each line it reads on stdin
//! with the number of reconciles so far, and exits when stdin closes.

mod controller;

use std::io::{BufRead as _, Write as _};

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: rekon-peer-kubers <concurrency>";
    let concurrency: u16 = args.next().and_then(|c| c.parse().ok()).expect(usage);
    // Two workers, as the bench gives rekon's host.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let counter = controller::Counter::default();
    runtime.block_on(async {
        let client = kube::Client::try_default().await.expect("a kube client");
        controller::start(client, concurrency, counter.clone());
    });
    let mut out = std::io::stdout().lock();
    writeln!(out, "started").expect("writing to stdout");
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
        writeln!(out, "{}", counter.get()).expect("writing to stdout");
    }
}
