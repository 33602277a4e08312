//! The processes of the bench: this executable started again in a role,
//! the API server's process and what it says, the CPU time a process has
//! used, and a process's own lines to its parent.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Child, ChildStdout, Command, Stdio};

use crate::{ROLE_ENV, SERVE_ENV};

/// CPU time (user + system) a process has used, in seconds
/// (`/proc/<pid>/stat`, clock ticks of 10 ms).
pub fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|t| t.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// Starts this executable in `role`, with stdin and stdout piped.
pub fn spawn_role(role: &str, env: &[(&str, String)]) -> Child {
    let mut command = Command::new(std::env::current_exe().expect("this executable"));
    command
        .env(ROLE_ENV, role)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (key, value) in env {
        command.env(key, value);
    }
    command.spawn().expect("starting a benchmark process")
}

/// A server process and what it says.
pub struct ServerProcess {
    pub child: Child,
    lines: BufReader<ChildStdout>,
    pub kubeconfig: String,
    /// Where `kubeconfig` is written (for the peer's process).
    pub kubeconfig_path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl ServerProcess {
    pub fn start(role: &str, count: usize) -> ServerProcess {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("kubeconfig");
        let mut child = spawn_role(
            role,
            &[(
                SERVE_ENV,
                format!("{count}:{}", path.to_str().expect("a UTF-8 path")),
            )],
        );
        let mut lines = BufReader::new(child.stdout.take().expect("the server's stdout"));
        let mut line = String::new();
        lines.read_line(&mut line).expect("reading the server");
        assert_eq!(line.trim(), "ready", "the API server process did not start");
        let kubeconfig = std::fs::read_to_string(&path).expect("the kubeconfig");
        ServerProcess {
            child,
            lines,
            kubeconfig,
            kubeconfig_path: path,
            _dir: dir,
        }
    }

    /// Blocks until the server reports at least `count` observed Apps.
    pub fn wait_observed(&mut self, count: usize) {
        let mut line = String::new();
        loop {
            line.clear();
            let read = self.lines.read_line(&mut line).expect("reading the server");
            assert!(read > 0, "the API server process ended");
            let observed: usize = line
                .trim()
                .strip_prefix("observed ")
                .and_then(|n| n.parse().ok())
                .expect("an `observed N` line");
            if observed >= count {
                return;
            }
        }
    }

    pub fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Reads stdin to its end: the parent closed it, or died.
pub async fn stdin_closed() {
    tokio::task::spawn_blocking(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
    })
    .await
    .expect("waiting for stdin to close");
}

/// Says `line` to the parent, on stdout.
pub fn say(line: &str) {
    let mut stdout = std::io::stdout().lock();
    // The parent may have stopped listening; the server then just serves.
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}
