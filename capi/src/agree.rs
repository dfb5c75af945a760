//! The ranks' agreement on a constructor's arguments before anything collective: each rank
//! reads and checks its own, then every rank learns whether any rank's check failed or any
//! rank's arguments differ from rank 0's, and every rank returns an error (that rank's own
//! code and message there, `DFFT_ERROR_OTHER_RANK` naming it elsewhere) instead of the others
//! going on into the plan's collective set-up and waiting forever, or making plans of
//! different transforms (kinds that differ on one rank) that return wrong results.

use crate::comm::Borrowed;
use crate::plan::{DfftPlan, Request};
use crate::status::{Failure, Outcome, DFFT_ERROR_OTHER_RANK};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;

/// `root`'s bytes on every rank (the others' `bytes` are ignored). Collective.
fn broadcast(comm: &SimpleCommunicator, root: i32, bytes: &[u8]) -> Vec<u8> {
    let root = comm.process_at_rank(root);
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

/// What must be the same on every rank: everything but the memory limit (a per-process
/// setting; the smallest one is used everywhere).
fn describe(request: &Request) -> String {
    let mut r = request.clone();
    r.options.memory_limit = None;
    format!("{r:?}")
}

/// Makes the plan of `request` over `comm` once every rank agrees (see the module docs).
/// Without a usable communicator nothing can be agreed: the argument error comes first, as
/// before any communication.
pub(crate) fn plan_agreed(request: Outcome<Request>, comm: Outcome<Borrowed>) -> Outcome<DfftPlan> {
    let comm = match comm {
        Ok(comm) => comm,
        Err(e) => return Err(request.err().unwrap_or(e)),
    };
    let request = agree(&comm, request)?;
    request.plan(&comm)
}

/// Agrees on `local` over `comm` (collective: a broadcast of rank 0's arguments, one
/// allreduce, and a broadcast on failure); the smallest memory limit of any rank applies.
fn agree(comm: &SimpleCommunicator, local: Outcome<Request>) -> Outcome<Request> {
    let (rank, size) = (comm.rank(), comm.size());
    let mine = local.as_ref().map(describe).unwrap_or_default();
    let zero = String::from_utf8_lossy(&broadcast(comm, 0, mine.as_bytes())).into_owned();
    let checked: Outcome = match &local {
        Err(f) => Err(f.clone()),
        Ok(_) if mine != zero => Err(Failure::argument(format!(
            "the arguments differ from rank 0's: {mine} here, {zero} on rank 0"
        ))),
        Ok(_) => Ok(()),
    };
    // The lowest failing rank, and the smallest memory limit (0: none) as its complement.
    let limit = local
        .as_ref()
        .ok()
        .and_then(|r| r.options.memory_limit)
        .unwrap_or(u64::MAX);
    let least = [
        if checked.is_err() {
            rank as u64
        } else {
            size as u64
        },
        limit,
    ];
    let mut agreed = [0u64; 2];
    comm.all_reduce_into(&least[..], &mut agreed[..], SystemOperation::min());
    let first = agreed[0] as i32;
    if first == size {
        let mut request = local.expect("every rank passed");
        request.options.memory_limit = (agreed[1] != u64::MAX).then_some(agreed[1]);
        return Ok(request);
    }
    let message = match &checked {
        Err(f) if rank == first => f.message.as_bytes().to_vec(),
        _ => Vec::new(),
    };
    let message = String::from_utf8_lossy(&broadcast(comm, first, &message)).into_owned();
    match checked {
        Err(f) => Err(Failure::new(f.code, format!("rank {rank}: {}", f.message))),
        Ok(()) => Err(Failure::new(
            DFFT_ERROR_OTHER_RANK,
            format!("rank {first}'s arguments were rejected ({message}); nothing was planned"),
        )),
    }
}
