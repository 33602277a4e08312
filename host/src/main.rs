//! The `rekon` binary: the command line over the `rekon_host` library.
//! See `rekon --help`.

mod cli;

/// mimalloc: a quarter less CPU per reconcile than the system allocator,
/// and less resident memory (README, Performance).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
