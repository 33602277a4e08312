//! rekon: the command line over the `rekon_host` library — `rekon run`
//! against a cluster, `rekon dev` on the embedded Kubernetes, and the
//! tools a module's author uses (`new`, `check`, `test`, `reconcile`,
//! `admit`, `replay`, `pack`, `crd`, `bench`, `rollout`, `uninstall`). See
//! `rekon --help`.
//!
//! Where to start: [`commands`], one file or folder per subcommand; they
//! use only the library's public API, as any program that embeds the host
//! does, and bring in the embedded Kubernetes (`rekon-offline`,
//! `rekon-apiserver`, `rekon-envtest`) where a command runs without a
//! cluster. [`process`] holds what the binary does to its own process (its
//! allocator, memory given back).

mod commands;
mod common;
mod global;
mod memory;
mod process;

fn main() -> std::process::ExitCode {
    process::install();
    commands::main()
}
