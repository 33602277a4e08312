//! What the `rekon` binary does to its own process, which a program that
//! embeds the host library decides for itself: its allocator (mimalloc),
//! the allocator's freed memory given back after each compile and when the
//! host goes quiet ([`quiet`]), and the pages of its code that only
//! start-up and compiles ran given back ([`resident`]).

pub mod quiet;
pub mod resident;

use rekon_host::EngineConfig;

/// mimalloc: a quarter less CPU per reconcile than the system allocator,
/// and less resident memory (README, Performance).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[allow(unsafe_code)]
unsafe extern "C" {
    /// mimalloc's own: frees what every heap of the calling thread holds
    /// unused (`force`: at once, not after its purge delay).
    fn mi_collect(force: bool);
}

/// Gives what the calling thread's mimalloc heaps hold unused back to the
/// system.
fn collect() {
    // SAFETY: `mi_collect` only walks the calling thread's own heaps, and
    // mimalloc is the allocator this binary links.
    #[allow(unsafe_code)]
    unsafe {
        mi_collect(true)
    }
}

/// Sets up the process: the allocator trim the quiet host runs.
pub fn install() {
    quiet::set_trim(collect);
}

/// The engine settings with the binary's hooks: the allocator trimmed on
/// the threads that compiled, and the code pages only compiles ran given
/// back, after each compile.
pub fn engine_hooks(config: EngineConfig) -> EngineConfig {
    config
        .allocator_trim(collect)
        .after_compile(resident::after_compile)
}
