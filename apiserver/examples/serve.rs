//! Runs the in-memory API server until Ctrl-C:
//! `cargo run -p rekon-apiserver --example serve -- [--port N] [--write-kubeconfig PATH] [--history-limit N] [--state FILE]`.

use rekon_apiserver::ApiServer;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut builder = ApiServer::builder();
    let mut kubeconfig = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => builder = builder.port(args.next().unwrap_or_default().parse()?),
            "--history-limit" => {
                builder = builder.history_limit(args.next().unwrap_or_default().parse()?)
            }
            "--write-kubeconfig" => kubeconfig = args.next(),
            "--state" => builder = builder.persist(args.next().unwrap_or_default()),
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    let server = builder.start().await?;
    if let Some(path) = kubeconfig {
        server.write_kubeconfig(&path)?;
    }
    println!("{}", server.url());
    server.run_until_signal().await?;
    Ok(())
}
