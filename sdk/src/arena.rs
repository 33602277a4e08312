//! An allocator for guests: memory handed out by moving a pointer.
//!
//! The host runs every reconcile (and every review) on a fresh instance,
//! whose memory is thrown away when it returns. A guest's general-purpose
//! allocator (dlmalloc, in Rust's standard library for WebAssembly) keeps
//! free lists sorted for reuse that mostly never comes; with JSON, where a
//! reconcile is many small strings and maps, that bookkeeping was a fifth
//! of the `app` example's reconcile. [`Arena`] carves allocations out of
//! chunks of 256 KiB in order, and counts what is live in each chunk:
//!
//! - the most recent allocation gives its room back at once (a growing
//!   `String` or `Vec` grows in place);
//! - a chunk whose allocations are all freed is reused (the current one)
//!   or returned to the system allocator, so data that is built and
//!   dropped, reconcile after reconcile, does not pile up;
//! - allocations of 64 KiB or more go to the system allocator.
//!
//! What it gives up: room freed in the middle of a chunk that still holds
//! live data is not reused until all of that chunk is free. A module that
//! keeps a few long-lived allocations among much short-lived churn is
//! better served by the default allocator. Natively (tests), `Arena` is
//! the system allocator.
//!
//! ```ignore
//! #[cfg(target_arch = "wasm32")]
//! #[global_allocator]
//! static ALLOCATOR: rekon_sdk::arena::Arena = rekon_sdk::arena::Arena::new();
//! ```

// Natively the arena is the system allocator: its bookkeeping is only
// exercised by the tests.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;

/// Allocations at least this large bypass the arena.
const LARGE: usize = 64 << 10;
/// The size (and alignment) of the chunks small allocations are carved
/// from.
const CHUNK: usize = 256 << 10;
/// The head of a chunk: how many of its allocations are live.
const HEAD: usize = 16;

/// A bump allocator for a guest's `#[global_allocator]`: see the
/// [module documentation](self).
pub struct Arena {
    chunks: Chunks,
}

// SAFETY: a WebAssembly guest (wasm32-wasip2) runs on one thread, so calls
// never overlap; natively the arena forwards to the system allocator and
// never touches its chunks.
unsafe impl Sync for Arena {}

impl Arena {
    /// An empty arena: the first allocation takes its first chunk.
    pub const fn new() -> Arena {
        Arena {
            chunks: Chunks::new(),
        }
    }
}

impl Default for Arena {
    fn default() -> Self {
        Arena::new()
    }
}

#[cfg(not(target_arch = "wasm32"))]
// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[cfg(target_arch = "wasm32")]
// SAFETY: see `Chunks`; one thread (`unsafe impl Sync for Arena`).
unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on; calls never overlap.
        unsafe { self.chunks.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on; calls never overlap.
        unsafe { self.chunks.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on; calls never overlap.
        unsafe { self.chunks.realloc(ptr, layout, new_size) }
    }
}

/// The arena's bookkeeping, for one thread: every pointer handed out is
/// aligned as asked, inside a chunk the system allocator gave (or from the
/// system allocator itself, for large sizes), and never handed out twice
/// while live. The top only moves back over the most recent allocation
/// when it is freed or shrunk, or to the start of the current chunk when
/// nothing in it is live; a chunk goes back to the system allocator only
/// when nothing in it is live.
struct Chunks {
    state: UnsafeCell<State>,
}

struct State {
    /// The next free byte of the current chunk.
    top: usize,
    /// The end of the current chunk.
    end: usize,
    /// Where the most recent allocation starts (it may be given back).
    last: usize,
    /// The current chunk (0 before the first allocation).
    chunk: usize,
}

/// Whether an allocation of this size and alignment bypasses the arena.
fn large(size: usize, align: usize) -> bool {
    size >= LARGE || align > CHUNK / 4
}

fn chunk_layout() -> Layout {
    Layout::from_size_align(CHUNK, CHUNK).expect("a power-of-two size and alignment")
}

/// `at`, rounded up to a multiple of `align` (a power of two).
fn align_up(at: usize, align: usize) -> usize {
    (at + align - 1) & !(align - 1)
}

/// The live count in the head of the chunk holding `ptr`.
fn live(ptr: usize) -> *mut usize {
    (ptr & !(CHUNK - 1)) as *mut usize
}

impl Chunks {
    const fn new() -> Chunks {
        Chunks {
            state: UnsafeCell::new(State {
                top: 0,
                end: 0,
                last: 0,
                chunk: 0,
            }),
        }
    }

    /// The state. Callers never overlap (one thread, and no call
    /// re-enters another).
    #[allow(clippy::mut_from_ref)]
    fn state(&self) -> &mut State {
        // SAFETY: calls never overlap (above).
        unsafe { &mut *self.state.get() }
    }

    /// Carves `layout` out of the current chunk, taking a new one when it
    /// does not fit.
    fn bump(&self, layout: Layout) -> *mut u8 {
        let state = self.state();
        let align = layout.align();
        let mut start = align_up(state.top, align);
        if state.chunk == 0 || start + layout.size() > state.end {
            // SAFETY: a non-zero size.
            let chunk = unsafe { System.alloc(chunk_layout()) } as usize;
            if chunk == 0 {
                return std::ptr::null_mut();
            }
            // The chunk left behind goes back once its last allocation
            // does; if nothing in it is live, now.
            let old = state.chunk;
            // SAFETY: `old` is a chunk of this arena, its head written.
            if old != 0 && unsafe { *live(old) } == 0 {
                // SAFETY: allocated with this layout.
                unsafe { System.dealloc(old as *mut u8, chunk_layout()) };
            }
            // SAFETY: the chunk is at least `HEAD` bytes, aligned.
            unsafe { *(chunk as *mut usize) = 0 };
            state.chunk = chunk;
            state.end = chunk + CHUNK;
            start = align_up(chunk + HEAD, align);
        }
        // SAFETY: `start` is inside the current chunk, whose head is live.
        unsafe { *live(start) += 1 };
        state.last = start;
        state.top = start + layout.size();
        start as *mut u8
    }

    /// Whether `ptr` (of `size` bytes) is the most recent allocation.
    fn is_last(&self, ptr: *mut u8, size: usize) -> bool {
        let state = self.state();
        ptr as usize == state.last && state.last + size == state.top
    }

    /// Gives back a small allocation: the most recent one gives its room
    /// back at once; a chunk with nothing live is reused (the current one)
    /// or returned to the system allocator.
    fn release(&self, ptr: *mut u8, size: usize) {
        let last = self.is_last(ptr, size);
        let state = self.state();
        if last {
            state.top = state.last;
        }
        let count = live(ptr as usize);
        // SAFETY: `ptr` came from `bump`: its chunk's head is live.
        let remaining = unsafe {
            *count -= 1;
            *count
        };
        if remaining == 0 {
            let chunk = count as usize;
            if chunk == state.chunk {
                state.top = chunk + HEAD;
                state.last = 0;
            } else {
                // SAFETY: a chunk of this arena, not the current one, with
                // nothing live in it.
                unsafe { System.dealloc(chunk as *mut u8, chunk_layout()) };
            }
        }
    }

    /// [`GlobalAlloc::alloc`].
    ///
    /// # Safety
    /// As `GlobalAlloc::alloc`, and no other call on `self` at the same time.
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if large(layout.size(), layout.align()) {
            // SAFETY: the caller's contract, passed on.
            return unsafe { System.alloc(layout) };
        }
        self.bump(layout)
    }

    /// [`GlobalAlloc::dealloc`].
    ///
    /// # Safety
    /// As `GlobalAlloc::dealloc`, and no other call on `self` at the same time.
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if large(layout.size(), layout.align()) {
            // SAFETY: it came from `System.alloc` with this layout.
            return unsafe { System.dealloc(ptr, layout) };
        }
        self.release(ptr, layout.size());
    }

    /// [`GlobalAlloc::realloc`].
    ///
    /// # Safety
    /// As `GlobalAlloc::realloc`, and no other call on `self` at the same time.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        if large(layout.size(), align) && large(new_size, align) {
            // SAFETY: it came from `System.alloc` with this layout.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        if !large(layout.size(), align)
            && !large(new_size, align)
            && self.is_last(ptr, layout.size())
        {
            let state = self.state();
            if state.last + new_size <= state.end {
                state.top = state.last + new_size;
                return ptr;
            }
        }
        let Ok(new_layout) = Layout::from_size_align(new_size, align) else {
            return std::ptr::null_mut();
        };
        // SAFETY: a valid, non-zero layout (the caller's contract).
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live and distinct, each at least
            // the length copied; the old one is then given back.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).expect("a valid layout")
    }

    /// Allocates `size` bytes filled with `byte`.
    fn filled(chunks: &Chunks, size: usize, byte: u8) -> *mut u8 {
        // SAFETY: one thread; a valid layout.
        let ptr = unsafe { chunks.alloc(layout(size, 8)) };
        assert!(!ptr.is_null());
        // SAFETY: `size` bytes were just allocated.
        unsafe { std::ptr::write_bytes(ptr, byte, size) };
        ptr
    }

    fn holds(ptr: *mut u8, size: usize, byte: u8) -> bool {
        // SAFETY: a live allocation of at least `size` bytes.
        unsafe { std::slice::from_raw_parts(ptr, size) }
            .iter()
            .all(|b| *b == byte)
    }

    #[test]
    fn allocations_are_aligned_distinct_and_keep_their_contents() {
        let chunks = Chunks::new();
        let mut live = Vec::new();
        for (n, align) in [1, 2, 8, 16, 64, 4096].iter().cycle().take(600).enumerate() {
            let size = 1 + n * 37 % 900;
            // SAFETY: one thread; a valid layout.
            let ptr = unsafe { chunks.alloc(layout(size, *align)) };
            assert_eq!(ptr as usize % align, 0, "aligned to {align}");
            // SAFETY: just allocated.
            unsafe { std::ptr::write_bytes(ptr, n as u8, size) };
            live.push((ptr, size, n as u8, *align));
        }
        for (ptr, size, byte, _) in &live {
            assert!(
                holds(*ptr, *size, *byte),
                "overwritten by a later allocation"
            );
        }
        for (ptr, size, _, align) in live {
            // SAFETY: allocated above with this layout.
            unsafe { chunks.dealloc(ptr, layout(size, align)) };
        }
    }

    #[test]
    fn the_most_recent_allocation_grows_in_place_and_gives_its_room_back() {
        let chunks = Chunks::new();
        let first = filled(&chunks, 100, 1);
        let growing = filled(&chunks, 10, 2);
        // SAFETY: allocated above with this layout.
        let grown = unsafe { chunks.realloc(growing, layout(10, 8), 4000) };
        assert_eq!(grown, growing, "the last allocation grows where it is");
        assert!(holds(grown, 10, 2));
        // SAFETY: as grown.
        unsafe { chunks.dealloc(grown, layout(4000, 8)) };
        let next = filled(&chunks, 16, 3);
        assert_eq!(next, growing, "its room is handed out again");
        assert!(holds(first, 100, 1));
        // An allocation that is not the last one moves when it grows, and
        // keeps its contents.
        // SAFETY: allocated above with this layout.
        let moved = unsafe { chunks.realloc(first, layout(100, 8), 300) };
        assert_ne!(moved, first);
        assert!(holds(moved, 100, 1));
    }

    #[test]
    fn chunks_with_nothing_live_are_reused_so_churn_does_not_pile_up() {
        let chunks = Chunks::new();
        // A long-lived allocation, then rounds of data built and dropped,
        // many times the size of a chunk in all.
        let kept = filled(&chunks, 64, 7);
        let mut seen = std::collections::HashSet::new();
        for round in 0..200u8 {
            let batch: Vec<_> = (0..300).map(|_| filled(&chunks, 512, round)).collect();
            for ptr in &batch {
                assert!(holds(*ptr, 512, round));
            }
            for ptr in batch {
                seen.insert(ptr as usize & !(CHUNK - 1));
                // SAFETY: allocated with this layout.
                unsafe { chunks.dealloc(ptr, layout(512, 8)) };
            }
        }
        assert!(holds(kept, 64, 7), "the long-lived allocation is intact");
        // 200 rounds of 150 KiB: without reuse, over a hundred chunks.
        assert!(seen.len() < 10, "{} chunks used", seen.len());
    }

    #[test]
    fn large_allocations_bypass_the_chunks() {
        let chunks = Chunks::new();
        let small = filled(&chunks, 32, 1);
        let big = filled(&chunks, LARGE, 2);
        assert_ne!(big as usize & !(CHUNK - 1), small as usize & !(CHUNK - 1));
        // SAFETY: allocated with this layout; grows as a large allocation.
        let bigger = unsafe { chunks.realloc(big, layout(LARGE, 8), 4 * LARGE) };
        assert!(holds(bigger, LARGE, 2));
        // SAFETY: allocated with these layouts.
        unsafe {
            chunks.dealloc(bigger, layout(4 * LARGE, 8));
            chunks.dealloc(small, layout(32, 8));
        }
    }
}
