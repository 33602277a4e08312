//! `rekon rollout`: what a module's shadow version does, and its promotion
//! or abort, through a running host's metrics port.

use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use anyhow::{Context as _, bail};

use crate::common::say;

/// `rekon rollout status|promote|abort MODULE [--addr HOST:PORT]`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Per object, whether the shadow version writes what the serving one
    /// writes, with a unified diff of each difference. Exit code 1 when
    /// any object differs.
    Status {
        /// The module, by its manifest name.
        module: String,
        /// The host's metrics address (`rekon run --metrics-addr`).
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: String,
    },
    /// Make the shadow the serving version, in one step: every object is
    /// reconciled once by it (as after a reload), none lost.
    Promote {
        /// The module, by its manifest name.
        module: String,
        /// The host's metrics address (`rekon run --metrics-addr`).
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: String,
    },
    /// Drop the shadow; the serving version goes on alone.
    Abort {
        /// The module, by its manifest name.
        module: String,
        /// The host's metrics address (`rekon run --metrics-addr`).
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: String,
    },
}

pub(super) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let (module, addr, command) = match &args.command {
        Command::Status { module, addr } => (module, addr, None),
        Command::Promote { module, addr } => (module, addr, Some("promote")),
        Command::Abort { module, addr } => (module, addr, Some("abort")),
    };
    let reach = || format!("cannot reach the host's metrics port at {addr}");
    if let Some(command) = command {
        let (code, body) =
            request(addr, "POST", &format!("/rollout/{module}/{command}")).with_context(reach)?;
        if code != 202 {
            bail!("{}", body.trim_end());
        }
        say(body.trim_end())?;
        return Ok(ExitCode::SUCCESS);
    }
    let (code, body) = request(addr, "GET", &format!("/rollout/{module}")).with_context(reach)?;
    if code != 200 {
        bail!("{}", body.trim_end());
    }
    say(body.trim_end())?;
    let differs = body
        .lines()
        .any(|l| l.starts_with("differ ") || l.starts_with("error "));
    Ok(if differs {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The status code and body of `method path` at `addr` (HTTP/1.0).
fn request(addr: &str, method: &str, path: &str) -> anyhow::Result<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n"
    )?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    let (head, body) = text
        .split_once("\r\n\r\n")
        .context("the answer is not HTTP")?;
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .context("the answer has no status code")?;
    Ok((code, body.to_string()))
}
