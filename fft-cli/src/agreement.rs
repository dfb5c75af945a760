//! What every rank of a `dfft` job must agree on before anything collective: its command line
//! (an MPMD launch, `mpirun -n 1 dfft run --iters 3 : -n 1 dfft run --iters 1`, gives each
//! block its own, and the ranks would take different collective paths and hang), and the
//! outcome of steps each rank takes alone.

use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use std::os::unix::ffi::OsStrExt;

/// `root`'s bytes on every rank (the others' `bytes` are ignored). Collective.
fn broadcast(world: &SimpleCommunicator, root: i32, bytes: &[u8]) -> Vec<u8> {
    let root = world.process_at_rank(root);
    let mut len = bytes.len() as u64;
    root.broadcast_into(&mut len);
    let mut out = bytes.to_vec();
    out.resize(len as usize, 0);
    // (An empty slice's dangling pointer is OpenMPI's MPI_IN_PLACE: never broadcast one.)
    if !out.is_empty() {
        root.broadcast_into(&mut out[..]);
    }
    out
}

/// The lowest rank whose `failed` is true, if any. Collective: one allreduce.
fn lowest(world: &SimpleCommunicator, failed: bool) -> Option<i32> {
    let size = world.size();
    let mine = if failed { world.rank() } else { size };
    let mut first = size;
    world.all_reduce_into(&mine, &mut first, SystemOperation::min());
    (first < size).then_some(first)
}

/// This process's arguments after the program name, as one line for messages.
fn arguments_text() -> String {
    std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Fails on every rank, naming a rank whose arguments differ from rank 0's and both command
/// lines, unless every rank was started with the same arguments (the program's path may
/// differ). Collective: a broadcast of rank 0's arguments and one allreduce.
pub fn same_arguments(world: &SimpleCommunicator) -> Result<(), String> {
    let mine: Vec<u8> = std::env::args_os()
        .skip(1)
        .flat_map(|a| a.as_bytes().iter().copied().chain([0]).collect::<Vec<_>>())
        .collect();
    let first = broadcast(world, 0, &mine);
    let Some(differs) = lowest(world, first != mine) else {
        return Ok(());
    };
    let text = broadcast(world, differs, arguments_text().as_bytes());
    let zero = broadcast(world, 0, arguments_text().as_bytes());
    Err(format!(
        "the ranks were started with different arguments: rank {differs} runs `dfft {}`, \
         rank 0 `dfft {}`; every rank of a job needs the same command line",
        String::from_utf8_lossy(&text),
        String::from_utf8_lossy(&zero)
    ))
}

/// Agrees on a step each rank took alone: `Ok` everywhere if it passed everywhere, else the
/// message of the lowest failing rank on every rank (naming that rank when it is not 0).
/// Collective: one allreduce, and a broadcast on failure.
pub fn agree(world: &SimpleCommunicator, local: Result<(), String>) -> Result<(), String> {
    let Some(failed) = lowest(world, local.is_err()) else {
        return Ok(());
    };
    let message = match &local {
        Err(e) if world.rank() == failed => e.as_bytes().to_vec(),
        _ => Vec::new(),
    };
    let message = String::from_utf8_lossy(&broadcast(world, failed, &message)).into_owned();
    Err(if failed == 0 {
        message
    } else {
        format!("rank {failed}: {message}")
    })
}
