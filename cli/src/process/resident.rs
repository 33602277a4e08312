//! Giving back the pages of this executable that only start-up and compiles
//! ran.
//!
//! Code and read-only data of an executable are mapped from its file; the
//! kernel maps each page on first touch, with the 15 pages around it
//! ("fault-around"), and keeps them mapped for the life of the process. What
//! ran once (argument parsing, the kube client's set-up, loading the
//! modules, Cranelift compiling a module) therefore stays in the resident
//! memory of a host that runs for weeks: 8 MiB of the 13 MiB of code a host
//! had resident when idle was code it no longer ran.
//! [`release_code_pages`] unmaps them: the file's pages stay in the page
//! cache, and what runs again is mapped again on its first touch (a minor
//! fault, no read from disk).

/// Gives back the code pages after a compile (Cranelift's code, megabytes
/// of it, runs only while a module compiles): the engine's after-compile
/// hook.
pub fn after_compile() {
    release_code_pages();
}

/// Unmaps the resident pages of this executable's code and read-only data
/// (the mappings of its file that are not writable and hold no page of the
/// process's own: relocated data is never touched). They stay in the page
/// cache; what runs again is mapped again on first touch. Returns the bytes
/// of the mappings released (0 where there is no `/proc`, or off Linux).
pub fn release_code_pages() -> usize {
    #[cfg(target_os = "linux")]
    {
        let Ok(exe) = std::fs::read_link("/proc/self/exe") else {
            return 0;
        };
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
            return 0;
        };
        let mut released = 0;
        for (start, end) in clean_mappings_of(&smaps, &exe.to_string_lossy()) {
            // SAFETY: the range is a whole mapping of the executable's file
            // that is not writable and has no anonymous (copied-on-write)
            // page: every page of it reads the same from the file as from
            // memory, and after `MADV_DONTNEED` the next touch maps the
            // file's page again. The executable cannot change under it (the
            // kernel refuses to write a running executable).
            #[allow(unsafe_code)]
            let done = unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED)
            };
            if done == 0 {
                released += end - start;
            }
        }
        released
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// The address ranges of the mappings of `exe` in `smaps` that can be
/// released: not writable, and no anonymous page.
fn clean_mappings_of(smaps: &str, exe: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        if let Some(anonymous) = line.strip_prefix("Anonymous:") {
            if let (Some(range), Some(0)) = (current.take(), kb(anonymous)) {
                ranges.push(range);
            }
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(span), Some(perms)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Some((start, end)) = span.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        // A mapping's header: range, perms, offset, device, inode, path
        // (which may hold spaces).
        let of_exe = fields.nth(3).is_some() && line.trim_end().ends_with(exe);
        current = (of_exe && perms.len() == 4 && !perms.contains('w') && perms.ends_with('p'))
            .then_some((start, end));
    }
    ranges
}

/// The KiB of an smaps field's value (`"      4 kB"`).
fn kb(value: &str) -> Option<u64> {
    value.trim().trim_end_matches("kB").trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
5555a000-5555b000 r--p 00000000 fe:00 42 /usr/bin/rekon
Size:                  4 kB
Rss:                   4 kB
Anonymous:             0 kB
5555b000-5555f000 r-xp 00001000 fe:00 42 /usr/bin/rekon
Size:                 16 kB
Anonymous:             0 kB
5555f000-55560000 r--p 00005000 fe:00 42 /usr/bin/rekon
Size:                  4 kB
Anonymous:             4 kB
55560000-55561000 rw-p 00006000 fe:00 42 /usr/bin/rekon
Anonymous:             0 kB
7f000000-7f001000 r-xp 00000000 fe:00 7 /usr/lib/libc.so.6
Anonymous:             0 kB
";

    #[test]
    fn only_clean_read_only_mappings_of_the_executable_are_released() {
        // The relocated read-only data (an anonymous page), the writable
        // data and other files' code stay.
        assert_eq!(
            clean_mappings_of(SMAPS, "/usr/bin/rekon"),
            vec![(0x5555a000, 0x5555b000), (0x5555b000, 0x5555f000)]
        );
    }

    /// Resident KiB of the test executable's clean mappings.
    #[cfg(target_os = "linux")]
    fn resident_code_kb() -> u64 {
        let exe = std::fs::read_link("/proc/self/exe").expect("/proc/self/exe");
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let clean = clean_mappings_of(&smaps, &exe.to_string_lossy());
        let mut total = 0;
        let mut counted = false;
        for line in smaps.lines() {
            if let Some((start, _)) = line.split_once('-')
                && let Ok(start) = usize::from_str_radix(start, 16)
            {
                counted = clean.iter().any(|range| range.0 == start);
            } else if let Some(rss) = line.strip_prefix("Rss:")
                && counted
            {
                total += kb(rss).expect("Rss in KiB");
            }
        }
        total
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn released_code_leaves_resident_memory_and_comes_back_when_run() {
        let before = resident_code_kb();
        let released = release_code_pages();
        let after = resident_code_kb();
        assert!(released > 0, "no clean mapping of the test executable");
        assert!(
            after < before,
            "{after} KiB of code resident after releasing, {before} KiB before"
        );
        // Code released runs again: its pages come back on demand.
        let again: Vec<usize> = (1..100).map(|n| n * 2).collect();
        assert_eq!(again.iter().sum::<usize>(), 9900);
        assert!(resident_code_kb() > 0);
    }
}
