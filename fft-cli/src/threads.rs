//! How many threads each rank runs (rayon's global pool, which the plans' local FFTs and
//! copies use).
//!
//! The default is the cores this rank may use divided by the ranks that share them: the ranks
//! on its node whose CPU affinity overlaps its own (with `--bind-to none` every rank of the
//! node; with `--bind-to core` none but itself), at least 1 and never more than the cores.
//! So `mpirun -n 4 dfft run` on 2 cores runs 1 thread per rank instead of 2 (8 threads on 2
//! cores), and 2 ranks bound to two 4-core sockets run 4 each. `RAYON_NUM_THREADS` (as the
//! test harness and the benchmark scripts set it) replaces the default, capped at the cores;
//! `--threads N` is taken as given.

use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;

/// Words of the CPU masks compared between ranks (1024 CPUs).
const MASK_WORDS: usize = 16;

/// The CPUs this process may run on, as a bit mask (all ones where it cannot be read).
fn affinity_mask() -> [u64; MASK_WORDS] {
    // SAFETY: sched_getaffinity fills the zeroed cpu_set_t we own.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return [u64::MAX; MASK_WORDS];
        }
        set
    };
    let mut mask = [0u64; MASK_WORDS];
    for cpu in 0..MASK_WORDS * 64 {
        // SAFETY: `cpu` is below CPU_SETSIZE (1024), the bits a cpu_set_t holds.
        if unsafe { libc::CPU_ISSET(cpu, &set) } {
            mask[cpu / 64] |= 1 << (cpu % 64);
        }
    }
    mask
}

/// The cores this process may use: its affinity, and the cgroup CPU quota
/// (`available_parallelism` honours both).
pub fn usable_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The default threads per rank: [`usable_cores`] divided by the ranks of this node whose
/// affinity overlaps this rank's (collective over `world`).
pub fn default_threads(world: &SimpleCommunicator) -> usize {
    let node = world.split_shared(world.rank());
    let mine = affinity_mask();
    let mut all = vec![0u64; MASK_WORDS * node.size() as usize];
    node.all_gather_into(&mine[..], &mut all[..]);
    let sharing = all
        .chunks(MASK_WORDS)
        .filter(|other| other.iter().zip(&mine).any(|(a, b)| a & b != 0))
        .count()
        .max(1);
    (usable_cores() / sharing).max(1)
}

/// The thread count of this run: `requested` (`--threads`), else `RAYON_NUM_THREADS` capped at
/// the usable cores, else [`default_threads`]. Collective (the default asks the node's ranks).
pub fn choose(world: &SimpleCommunicator, requested: Option<usize>, env: Option<&str>) -> usize {
    let from_env = env
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0);
    // Every rank takes part in the collective whatever it chooses.
    let default = default_threads(world);
    match (requested, from_env) {
        (Some(n), _) => n,
        (None, Some(n)) => n.min(usable_cores()),
        (None, None) => default,
    }
}

/// Sizes rayon's global pool to `threads` (before anything else uses it). A pool whose
/// threads cannot start (an address space or process limit too small for them) is an error
/// naming the count: rayon would otherwise panic at its first use. The threads start in
/// turn ([`fft_core::threads`]), so that running out of address space fails the pool
/// instead of aborting a thread that already started.
pub fn configure(threads: usize) -> Result<(), String> {
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("dfft-{i}"))
        .spawn_handler(fft_core::threads::spawn_in_turn)
        .build_global();
    match built {
        Ok(()) => Ok(()),
        // The pool exists already (it was used before this call): it keeps its size, which
        // the reports print as they read it from rayon.
        Err(e) if e.to_string().contains("already") => Ok(()),
        Err(e) => Err(format!(
            "cannot start {threads} threads: {e} (lower --threads or RAYON_NUM_THREADS, or \
             raise the address-space and process limits: ulimit -v, ulimit -u)"
        )),
    }
}
