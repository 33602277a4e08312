//! The `rekon` binary: the command line over the `rekon_host` library.
//! See `rekon --help`.

mod cli;

/// mimalloc: a quarter less CPU per reconcile than the system allocator,
/// and less resident memory (README, Performance).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "mimalloc")]
#[allow(unsafe_code)]
unsafe extern "C" {
    /// mimalloc's own: frees what every heap of the calling thread holds
    /// unused (`force`: at once, not after its purge delay).
    fn mi_collect(force: bool);
}

fn main() -> std::process::ExitCode {
    // After a compile, the memory its threads freed goes back to the
    // system (see `set_allocator_trim`).
    // SAFETY: `mi_collect` only walks the calling thread's own heaps, and
    // mimalloc is the allocator this binary links.
    #[cfg(feature = "mimalloc")]
    #[allow(unsafe_code)]
    rekon_host::set_allocator_trim(|| unsafe { mi_collect(true) });
    // Cranelift's code runs only while a module compiles: its pages are
    // given back after each compile (see `release_code_pages`).
    rekon_host::release_code_after_compile(true);
    cli::main()
}
