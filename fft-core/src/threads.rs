//! Starting rayon pools so that a pool too large for the address space is an error, never an
//! abort.
//!
//! rayon starts a pool's threads one after another without waiting for them, and each new
//! thread, once running, maps its signal stack (std does, to report stack overflows). When
//! the address space runs out (`ulimit -v`) while threads are still starting, a thread whose
//! stack was mapped may then find no room for its signal stack, and std aborts the process
//! instead of failing the pool. [`spawn_in_turn`], given to
//! [`rayon::ThreadPoolBuilder::spawn_handler`], starts each thread only after the previous
//! one runs and has made its first allocation, and only when its stack and a margin still
//! fit: the pool then fails to build, and the caller reports it.

use std::io;

/// The stack of a thread whose builder names none: std's default.
const DEFAULT_STACK: usize = 2 << 20;

/// Room left for what a thread maps once running (its signal stack, a guard page).
const MARGIN: usize = 1 << 20;

/// Starts `thread` after checking that its stack and [`MARGIN`] fit in the address space,
/// and returns once it runs. A spawn handler for [`rayon::ThreadPoolBuilder::spawn_handler`].
pub fn spawn_in_turn(thread: rayon::ThreadBuilder) -> io::Result<()> {
    let stack = thread.stack_size().unwrap_or(DEFAULT_STACK);
    room_for(stack + MARGIN)?;
    let mut builder = std::thread::Builder::new();
    if let Some(name) = thread.name() {
        builder = builder.name(name.to_owned());
    }
    if let Some(size) = thread.stack_size() {
        builder = builder.stack_size(size);
    }
    let (running, started) = std::sync::mpsc::channel();
    builder.spawn(move || {
        // The first allocation may map this thread's malloc arena: done before the next
        // thread's check, so that the two never race for the last room.
        drop(std::hint::black_box(vec![0u8; 1]));
        // The receiver waits for this; it is gone only if the spawner failed.
        let _ = running.send(());
        thread.run()
    })?;
    started
        .recv()
        .map_err(|_| io::Error::other("a pool thread ended before it ran"))
}

/// Ok when `bytes` of address space can still be mapped (a mapping that reserves no memory,
/// removed at once).
fn room_for(bytes: usize) -> io::Result<()> {
    // SAFETY: an anonymous PROT_NONE mapping chosen by the kernel overlaps nothing of ours;
    // it is unmapped with the length it was mapped with and never touched.
    unsafe {
        let at = libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        if at == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        libc::munmap(at, bytes);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool started in turn runs its work on every thread, with the names given.
    #[test]
    fn a_pool_started_in_turn_runs_on_its_threads() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .thread_name(|i| format!("turn-{i}"))
            .spawn_handler(spawn_in_turn)
            .build()
            .unwrap();
        let mut names: Vec<String> = pool.broadcast(|_| {
            std::thread::current()
                .name()
                .map(str::to_owned)
                .unwrap_or_default()
        });
        names.sort();
        assert_eq!(names, ["turn-0", "turn-1", "turn-2"]);
    }

    /// More address space than any machine has is refused, not mapped.
    #[test]
    fn an_address_space_too_small_is_an_error() {
        assert!(room_for(1 << 20).is_ok());
        assert!(room_for(usize::MAX / 2).is_err());
    }
}
