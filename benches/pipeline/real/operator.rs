//! One operator under measure: its process (rekon or the kube-rs peer),
//! how to read its reconciles, and its memory (resident, peak, where).

use std::process::{Child, Command};

/// What one operator did in each phase.
#[derive(Default)]
pub struct Figures {
    pub create_cpu_s: f64,
    pub create_reconciles: f64,
    pub update_cpu_s: f64,
    pub update_reconciles: f64,
    pub idle_cpu_percent: f64,
    pub idle_rss_mb: f64,
    pub peak_rss_mb: f64,
    pub delete_s: f64,
    pub cleaned_up_events: f64,
}

/// A running operator: its process and how to read its reconciles.
pub enum Operator {
    Rekon { child: Child, metrics_port: u16 },
    KubeRs(crate::peer::Peer),
}

impl Operator {
    pub fn pid(&self) -> String {
        match self {
            Operator::Rekon { child, .. } => child.id().to_string(),
            Operator::KubeRs(peer) => peer.pid(),
        }
    }

    pub fn reconciles(&mut self) -> f64 {
        match self {
            Operator::Rekon { metrics_port, .. } => {
                let text = http_get(*metrics_port, "/metrics").unwrap_or_default();
                crate::run::counter(&text, "rekon_reconciles_total{")
            }
            Operator::KubeRs(peer) => peer.reconciles() as f64,
        }
    }

    pub fn stop(self) {
        match self {
            Operator::Rekon { mut child, .. } => {
                let _ = Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .status();
                let _ = child.wait();
            }
            Operator::KubeRs(peer) => peer.stop(),
        }
    }
}

/// The whole HTTP/1.0 answer to `GET path` on 127.0.0.1:`port`.
pub fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    Some(text)
}

/// A free port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// `1`: print where each operator's resident memory is when idle.
pub const SMAPS_ENV: &str = "REKON_PIPELINE_BENCH_SMAPS";

/// The mappings of process `pid` holding the most resident memory, one
/// per line: KiB, and what is mapped (anonymous memory grouped).
pub fn smaps(pid: &str) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let mut by: std::collections::BTreeMap<String, u64> = Default::default();
    let mut current = String::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if first.contains('-') && !first.ends_with(':') {
            let rest: Vec<&str> = line.split_whitespace().collect();
            let what = rest.get(5).map_or("[anonymous]", |p| *p);
            current = format!("{what} ({})", rest.get(1).unwrap_or(&""));
        } else if first == "Rss:" {
            let kb: u64 = fields.next().and_then(|k| k.parse().ok()).unwrap_or(0);
            *by.entry(current.clone()).or_default() += kb;
        }
    }
    let mut rows: Vec<(String, u64)> = by.into_iter().collect();
    rows.sort_by_key(|row| std::cmp::Reverse(row.1));
    rows.iter()
        .take(12)
        .map(|(what, kb)| format!("{kb:8} KiB  {what}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Peak resident memory of process `pid`, MiB (`VmHWM`).
pub fn peak_rss_mb(pid: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}
