//! One call at run time: gather every process's view of the call over the union context,
//! resolve and plan it (or find the plan of an earlier identical call), and move the data
//! with dfft's redistribution.

use crate::blacs;
use crate::desc::{in_trapezoid, resolve, Call, Record, Side, RECORD_LEN};
use mpi::ffi;
use mpi::raw::FromRaw;
use mpi::topology::SimpleCommunicator;
use redist::cyclic::plan::RedistPlan;
use redist::cyclic::run::{Redistribution, Schedule};
use redist::{Element, StageTimes};
use std::cell::RefCell;
use std::ffi::c_int;
use std::mem::ManuallyDrop;

/// The arguments of one `p?gemr2d` or `p?trmr2d` call, as ScaLAPACK's C interface takes them
/// (1-based submatrix starts; descriptors of 9 integers).
pub(crate) struct Args<T> {
    pub m: c_int,
    pub n: c_int,
    pub a: *const T,
    pub ia: c_int,
    pub ja: c_int,
    pub desca: *const c_int,
    pub b: *mut T,
    pub ib: c_int,
    pub jb: c_int,
    pub descb: *const c_int,
    pub gcontext: c_int,
    /// `(uplo, diag)` of the trapezoidal copy; `None` for the whole submatrix.
    pub trapezoid: Option<(u8, u8)>,
}

/// A planned call, kept for later identical calls.
struct Entry {
    /// Every process's record (the key: equal on every process of the union context).
    key: Vec<i32>,
    /// Bytes of the submatrix (the same on every process: what bounds the kept buffers).
    bytes: usize,
    call: Call,
    redist: Redistribution,
    /// Message buffers, in 16-byte units (any element type fits).
    send: Vec<[u64; 2]>,
    recv: Vec<[u64; 2]>,
}

/// The plans kept for one set of processes (the union context's members, by rank in
/// `MPI_COMM_WORLD`, in its order). Every member takes part in every call on that set, in the
/// same order, so all of them find, make and drop plans together: making one and dropping one
/// are collective (a communicator and a shared window).
struct Group {
    members: Vec<i32>,
    /// Oldest first.
    entries: Vec<Entry>,
}

/// Plans kept per set of processes, and the most submatrix bytes they may cover together
/// (their windows and buffers stay allocated).
const KEPT: usize = 8;
const KEPT_BYTES: usize = 1 << 31;

thread_local! {
    /// Never dropped: the communicators inside must not be freed after `MPI_Finalize`.
    static CACHE: RefCell<ManuallyDrop<Vec<Group>>> =
        const { RefCell::new(ManuallyDrop::new(Vec::new())) };
}

/// Runs one call; on bad arguments prints the error (on the first process of the union
/// context) and aborts the job, as ScaLAPACK exits on them.
pub(crate) fn mr2d<T: Element>(name: &str, args: Args<T>) {
    if args.m == 0 || args.n == 0 {
        return;
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call(&args)));
    let message = match result {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e,
        Err(_) => "internal error (a panic; see above)".to_string(),
    };
    eprintln!("dfft_scalapack {name}: {message}");
    // SAFETY: reading a constant the MPI library initializes at load time.
    let world = unsafe { ffi::RSMPI_COMM_WORLD };
    let comm = blacs::communicator(args.gcontext).unwrap_or(world);
    // SAFETY: MPI_Abort on a live communicator; it does not return.
    unsafe { ffi::MPI_Abort(comm, 1) };
}

fn check(call: &'static str, code: c_int) -> Result<(), String> {
    redist::transport::check_mpi(call, code).map_err(|e| e.to_string())
}

/// This process's side of one matrix: read the descriptor only when in the grid.
fn side(desc: *const c_int, i: c_int, j: c_int) -> Result<Side, String> {
    // SAFETY: ScaLAPACK's contract: a descriptor of 9 integers, whose context entry is −1
    // on processes outside the matrix's grid.
    let ctxt = unsafe { *desc.add(1) };
    match blacs::grid_position(ctxt)? {
        None => Ok(Side::default()),
        Some(grid) => {
            // SAFETY: as above; in the grid, all 9 entries are valid.
            let d: [i32; 9] = unsafe { std::ptr::read_unaligned(desc as *const [i32; 9]) };
            Ok(Side::new(grid, &d, i, j))
        }
    }
}

fn call<T: Element>(args: &Args<T>) -> Result<(), String> {
    let comm = blacs::communicator(args.gcontext)?;
    let (mut me, mut size, mut world) = (0, 0, 0);
    // SAFETY: plain queries on live communicators.
    unsafe {
        check("MPI_Comm_rank", ffi::MPI_Comm_rank(comm, &mut me))?;
        check("MPI_Comm_size", ffi::MPI_Comm_size(comm, &mut size))?;
        check(
            "MPI_Comm_rank",
            ffi::MPI_Comm_rank(ffi::RSMPI_COMM_WORLD, &mut world),
        )?;
    }
    let mine = Record {
        a: side(args.desca, args.ia, args.ja)?,
        b: side(args.descb, args.ib, args.jb)?,
        m: args.m,
        n: args.n,
        world,
    };
    let mut key = vec![0i32; RECORD_LEN * size as usize];
    // SAFETY: RECORD_LEN ints from every process into `key`, which holds them all.
    check("MPI_Allgather", unsafe {
        ffi::MPI_Allgather(
            mine.to_ints().as_ptr() as *const _,
            RECORD_LEN as c_int,
            ffi::RSMPI_INT32_T,
            key.as_mut_ptr() as *mut _,
            RECORD_LEN as c_int,
            ffi::RSMPI_INT32_T,
            comm,
        )
    })?;
    let members: Vec<i32> = key
        .chunks(RECORD_LEN)
        .map(|r| Record::from_ints(r).world)
        .collect();
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let g = match cache.iter().position(|g| g.members == members) {
            Some(g) => g,
            None => {
                cache.push(Group {
                    members,
                    entries: Vec::new(),
                });
                cache.len() - 1
            }
        };
        let group = &mut cache[g];
        let index = match group.entries.iter().position(|e| e.key == key) {
            Some(i) => i,
            None => {
                let entry = plan::<T>(comm, me as usize, key)?;
                // Make room (the same decision on every member: counts and global sizes).
                while !group.entries.is_empty()
                    && (group.entries.len() == KEPT
                        || group.entries.iter().map(|e| e.bytes).sum::<usize>() + entry.bytes
                            > KEPT_BYTES)
                {
                    group.entries.remove(0);
                }
                group.entries.push(entry);
                group.entries.len() - 1
            }
        };
        execute(&mut group.entries[index], args, me as usize)
    })
}

fn plan<T>(comm: ffi::MPI_Comm, me: usize, key: Vec<i32>) -> Result<Entry, String> {
    let records: Vec<Record> = key.chunks(RECORD_LEN).map(Record::from_ints).collect();
    let call = resolve(&records, me).map_err(|e| e.to_string())?;
    let plan = RedistPlan::section(
        &call.a.array,
        &call.a.start,
        &call.b.array,
        &call.b.start,
        &call.extent,
        records.len(),
    )
    .map_err(|e| e.to_string())?;
    // SAFETY: reading a constant the MPI library initializes at load time.
    let mut dup = unsafe { ffi::RSMPI_COMM_NULL };
    // SAFETY: a collective call on the live BLACS communicator, writing `dup`.
    check("MPI_Comm_dup", unsafe { ffi::MPI_Comm_dup(comm, &mut dup) })?;
    // SAFETY: `dup` is a live intra-communicator owned by nothing else; the wrapper frees it.
    let owned = unsafe { SimpleCommunicator::from_raw(dup) };
    let redist = Redistribution::new(&owned, &plan, Schedule::Shared).map_err(|e| e.to_string())?;
    let units = |elements: usize| {
        (elements * std::mem::size_of::<num_complex::Complex<f64>>()).div_ceil(16)
    };
    let (send, recv) = (redist.send_len(), redist.recv_len());
    let bytes = call.extent[0] * call.extent[1] * std::mem::size_of::<T>();
    Ok(Entry {
        key,
        bytes,
        call,
        send: vec![[0; 2]; units(send)],
        recv: vec![[0; 2]; units(recv)],
        redist,
    })
}

fn execute<T: Element>(entry: &mut Entry, args: &Args<T>, me: usize) -> Result<(), String> {
    let (src_len, dst_len) = (entry.redist.src_len(), entry.redist.dst_len());
    let src: &[T] = if src_len == 0 {
        &[]
    } else {
        // SAFETY: ScaLAPACK's contract: this process's local array of A holds
        // LLD·(LOCc − 1) + LOCr elements, which is `src_len`; it is only read.
        unsafe { std::slice::from_raw_parts(args.a, src_len) }
    };
    let dst: &mut [T] = if dst_len == 0 {
        &mut []
    } else {
        // SAFETY: as above for B, which nothing else touches during the call.
        unsafe { std::slice::from_raw_parts_mut(args.b, dst_len) }
    };
    let send: &mut [T] = bytemuck::cast_slice_mut(&mut entry.send[..]);
    let recv: &mut [T] = bytemuck::cast_slice_mut(&mut entry.recv[..]);
    let (send_len, recv_len) = (entry.redist.send_len(), entry.redist.recv_len());
    let (send, recv) = (&mut send[..send_len], &mut recv[..recv_len]);
    let mut times = StageTimes::default();
    let Some((uplo, diag)) = args.trapezoid else {
        return entry
            .redist
            .execute(src, dst, send, recv, &mut times)
            .map_err(|e| e.to_string());
    };
    // The trapezoid: the whole submatrix into a copy of B, then the trapezoid's elements.
    let mut scratch = dst.to_vec();
    entry
        .redist
        .execute(src, &mut scratch, send, recv, &mut times)
        .map_err(|e| e.to_string())?;
    let b = &entry.call.b;
    let Some(coords) = b.array.axis_coords(me) else {
        return Ok(());
    };
    let (maps, shape) = (b.array.axis_maps(), b.array.local_shape(me));
    let strides = b.array.local_strides(me);
    let [m, n] = entry.call.extent;
    for lc in 0..shape[1] {
        let j = maps[1].global_index(coords[1], lc).wrapping_sub(b.start[1]);
        if j >= n {
            continue;
        }
        for lr in 0..shape[0] {
            let i = maps[0].global_index(coords[0], lr).wrapping_sub(b.start[0]);
            if i < m && in_trapezoid(uplo, diag, m, n, i, j) {
                let at = lr * strides[0] + lc * strides[1];
                dst[at] = scratch[at];
            }
        }
    }
    Ok(())
}
