//! One call at run time: find the plan of an earlier identical call with one allreduce, or
//! gather every process's view of the call over the union context and resolve and plan it;
//! then move the data with dfft's redistribution.

use crate::blacs;
use crate::desc::{in_trapezoid, resolve, Call, Record, Side, RECORD_LEN};
use mpi::ffi;
use mpi::raw::FromRaw;
use mpi::topology::SimpleCommunicator;
use redist::cyclic::plan::RedistPlan;
use redist::cyclic::run::{Redistribution, Schedule};
use redist::{Element, StageTimes};
use std::cell::RefCell;
use std::ffi::{c_int, c_void};
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
    /// `p?trmr2d`'s destination before the trapezoid is kept (B's local array, in 16-byte
    /// units; empty until the plan's first trapezoidal call).
    scratch: Vec<[u64; 2]>,
}

impl Entry {
    /// This process's record in the key.
    fn mine(&self, me: usize) -> &[i32] {
        &self.key[me * RECORD_LEN..(me + 1) * RECORD_LEN]
    }
}

/// The plans kept for one set of processes (the union context's members, by rank in
/// `MPI_COMM_WORLD`, in its order). Every member takes part in every call on that set, in the
/// same order, so all of them find, make and drop plans together: making one and dropping one
/// are collective (a communicator and a shared window).
struct Group {
    members: Vec<i32>,
    /// Oldest first.
    entries: Vec<Entry>,
    /// The entry of the last call on the set.
    last: Option<usize>,
}

/// Every group, and scratch space for finding the caller's.
struct Cache {
    groups: Vec<Group>,
    /// The union context's members, by rank in `MPI_COMM_WORLD`.
    members: Vec<i32>,
    /// `0..size`, what `MPI_Group_translate_ranks` translates.
    ranks: Vec<i32>,
}

/// Plans kept per set of processes (at most 32: a call's candidates travel as bits of one
/// integer), and the most submatrix bytes they may cover together (their windows and
/// buffers stay allocated).
const KEPT: usize = 8;
const KEPT_BYTES: usize = 1 << 31;
const _: () = assert!(KEPT <= 32);

/// Calls of at most this many bytes get two receive buffers in the shared window (double
/// buffering): a repeated call then synchronizes once. Larger ones, whose time is the copies',
/// keep one and synchronize once more.
const DOUBLE_BUFFER_BYTES: usize = 64 << 20;

thread_local! {
    /// Emptied when MPI finalizes ([`free_at_finalize`]), never dropped: nothing in it may be
    /// freed after `MPI_Finalize`.
    static CACHE: RefCell<ManuallyDrop<Cache>> = const {
        RefCell::new(ManuallyDrop::new(Cache {
            groups: Vec::new(),
            members: Vec::new(),
            ranks: Vec::new(),
        }))
    };
}

/// Frees every kept plan at the start of `MPI_Finalize`, which calls the delete function of
/// each attribute of `MPI_COMM_SELF` first: the plans' windows and communicators are freed
/// collectively, group by group in the order the groups were made and plan by plan, the same
/// order on every member. (Left to `MPI_Finalize` itself, the windows would be freed in the
/// order of OpenMPI's table of windows, which differs between processes once windows of
/// different sets of processes have come and gone, and the processes would wait for each
/// other forever.)
fn free_at_finalize() -> Result<(), String> {
    thread_local! {
        static REGISTERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if REGISTERED.get() {
        return Ok(());
    }
    unsafe extern "C" fn no_copy(
        _: ffi::MPI_Comm,
        _: c_int,
        _: *mut c_void,
        _: *mut c_void,
        _: *mut c_void,
        flag: *mut c_int,
    ) -> c_int {
        // SAFETY: MPI passes a valid flag pointer; 0: the attribute is not copied.
        unsafe { *flag = 0 };
        ffi::MPI_SUCCESS as c_int
    }
    unsafe extern "C" fn free_plans(
        _: ffi::MPI_Comm,
        _: c_int,
        _: *mut c_void,
        _: *mut c_void,
    ) -> c_int {
        // Dropping a group frees its plans' windows and communicators (collective).
        let groups = CACHE.with(|cache| std::mem::take(&mut cache.borrow_mut().groups));
        drop(groups);
        ffi::MPI_SUCCESS as c_int
    }
    let mut keyval = 0;
    // SAFETY: a new attribute key with the two functions above, set on MPI_COMM_SELF (a
    // predefined communicator) with no value.
    unsafe {
        check(
            "MPI_Comm_create_keyval",
            ffi::MPI_Comm_create_keyval(
                Some(no_copy),
                Some(free_plans),
                &mut keyval,
                std::ptr::null_mut(),
            ),
        )?;
        check(
            "MPI_Comm_set_attr",
            ffi::MPI_Comm_set_attr(ffi::RSMPI_COMM_SELF, keyval, std::ptr::null_mut()),
        )?;
    }
    REGISTERED.set(true);
    Ok(())
}

/// Why a call failed. `agreed`: every process of the union context found this same error in
/// the gathered records (bad arguments, on any process), so one of them reports it.
struct Failure {
    message: String,
    agreed: bool,
}

impl From<String> for Failure {
    /// A failure of this process alone (an MPI or BLACS call).
    fn from(message: String) -> Self {
        Failure {
            message,
            agreed: false,
        }
    }
}

/// A failure every process finds alike.
fn agreed(e: impl std::fmt::Display) -> Failure {
    Failure {
        message: e.to_string(),
        agreed: true,
    }
}

/// Runs one call. Bad arguments end the job, as ScaLAPACK's `exit(1)` in its parameter check
/// does, but alike on every process: the records of all processes are checked on each (a
/// repeated call whose record changed on one process gathers them again), the first process
/// of the union context prints the error, naming the offending process and its values, and
/// every process calls `MPI_Abort` after it has. A failure of one process alone (an MPI error,
/// a panic) is printed by that process, which aborts the job at once.
pub(crate) fn mr2d<T: Element>(name: &str, args: Args<T>) {
    if args.m == 0 || args.n == 0 {
        return;
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call(&args)));
    let failure = match result {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e,
        Err(_) => Failure::from("internal error (a panic; see above)".to_string()),
    };
    // SAFETY: reading a constant the MPI library initializes at load time.
    let world = unsafe { ffi::RSMPI_COMM_WORLD };
    let comm = blacs::communicator(args.gcontext).unwrap_or(world);
    let mut me = 0;
    if failure.agreed {
        // SAFETY: a plain query on a live communicator.
        unsafe { ffi::MPI_Comm_rank(comm, &mut me) };
    }
    if me == 0 {
        eprintln!("dfft_scalapack {name}: {}", failure.message);
    }
    if failure.agreed {
        // Nobody ends the job before the first process has printed the error.
        // SAFETY: a collective call every process of the union context makes here.
        unsafe { ffi::MPI_Barrier(comm) };
    }
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

/// One call. A repeated call (the same record on every process as an earlier kept call)
/// costs one collective operation when it repeats the set's last call: each process packs
/// for that call if its own record matches it, and one `MPI_Allreduce` of which kept calls
/// match on every process tells all of them whether to unpack. Otherwise that allreduce finds
/// another kept call, or the records are gathered and the call is planned.
fn call<T: Element>(args: &Args<T>) -> Result<(), Failure> {
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
    let (me, size) = (me as usize, size as usize);
    let mine = Record {
        a: side(args.desca, args.ia, args.ja)?,
        b: side(args.descb, args.ib, args.jb)?,
        m: args.m,
        n: args.n,
        world,
    }
    .to_ints();
    CACHE.with(|cache| {
        let cache = &mut **cache.borrow_mut();
        world_ranks(comm, size, &mut cache.members, &mut cache.ranks)?;
        let known = cache.groups.iter().position(|g| g.members == cache.members);
        if let Some(g) = known {
            if repeat(&mut cache.groups[g], comm, me, &mine, args)? {
                return Ok(());
            }
        }
        let key = gather(comm, size, &mine)?;
        let g = match known {
            Some(g) => g,
            None => {
                free_at_finalize()?;
                cache.groups.push(Group {
                    members: cache.members.clone(),
                    entries: Vec::new(),
                    last: None,
                });
                cache.groups.len() - 1
            }
        };
        let group = &mut cache.groups[g];
        let index = match group.entries.iter().position(|e| e.key == key) {
            Some(i) => i,
            None => {
                let entry = plan::<T>(comm, me, key)?;
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
        group.last = Some(index);
        Ok(execute(&mut group.entries[index], args, me)?)
    })
}

/// The ranks in `MPI_COMM_WORLD` of `comm`'s members, in `comm`'s order, into `out` (no
/// communication: what tells the sets of processes apart before anything is exchanged).
fn world_ranks(
    comm: ffi::MPI_Comm,
    size: usize,
    out: &mut Vec<i32>,
    ranks: &mut Vec<i32>,
) -> Result<(), String> {
    ranks.clear();
    ranks.extend(0..size as i32);
    out.clear();
    out.resize(size, -1);
    // SAFETY: reading constants the MPI library initializes at load time.
    let (mut group, mut world) = unsafe { (ffi::RSMPI_GROUP_NULL, ffi::RSMPI_GROUP_NULL) };
    // SAFETY: local group queries on live communicators; `ranks` and `out` hold `size`
    // integers each; the groups are freed before returning.
    unsafe {
        check("MPI_Comm_group", ffi::MPI_Comm_group(comm, &mut group))?;
        check(
            "MPI_Comm_group",
            ffi::MPI_Comm_group(ffi::RSMPI_COMM_WORLD, &mut world),
        )?;
        let translated = ffi::MPI_Group_translate_ranks(
            group,
            size as c_int,
            ranks.as_ptr(),
            world,
            out.as_mut_ptr(),
        );
        ffi::MPI_Group_free(&mut group);
        ffi::MPI_Group_free(&mut world);
        check("MPI_Group_translate_ranks", translated)
    }
}

/// Every process's record, gathered over `comm` (the key of the call).
fn gather(comm: ffi::MPI_Comm, size: usize, mine: &[i32; RECORD_LEN]) -> Result<Vec<i32>, String> {
    let mut key = vec![0i32; RECORD_LEN * size];
    // SAFETY: RECORD_LEN ints from every process into `key`, which holds them all.
    check("MPI_Allgather", unsafe {
        ffi::MPI_Allgather(
            mine.as_ptr() as *const _,
            RECORD_LEN as c_int,
            ffi::RSMPI_INT32_T,
            key.as_mut_ptr() as *mut _,
            RECORD_LEN as c_int,
            ffi::RSMPI_INT32_T,
            comm,
        )
    })?;
    Ok(key)
}

/// Runs the call from `group`'s kept plans when every process's record matches one of them
/// (`true`), or tells that none matches (`false`, on every process). One `MPI_Allreduce` of
/// the matching plans; before it, each process whose record matches the group's last call
/// packs that call's messages into the receivers' spare buffers, so that a repeated last call
/// only unpacks after it.
fn repeat<T: Element>(
    group: &mut Group,
    comm: ffi::MPI_Comm,
    me: usize,
    mine: &[i32; RECORD_LEN],
    args: &Args<T>,
) -> Result<bool, String> {
    let mut matching = 0u32;
    for (i, e) in group.entries.iter().enumerate() {
        if e.mine(me) == mine {
            matching |= 1 << i;
        }
    }
    // Whether the last call's plan can run in halves is the same on every process (its
    // buffers and the element type); whether this process packs is its own record's match.
    let split = group
        .last
        .filter(|&l| group.entries[l].redist.split_ready::<T>());
    if let Some(l) = split.filter(|&l| matching & (1 << l) != 0) {
        let entry = &mut group.entries[l];
        // SAFETY: the arrays of the call, of the plan's lengths (ScaLAPACK's contract).
        let (src, _) = unsafe { arrays(&entry.redist, args.a, args.b) };
        // SAFETY: every process packs only before the allreduce below and unpacks after it,
        // and all unpack or none (see `Redistribution::pack_shared`).
        unsafe { entry.redist.pack_shared(src) }.map_err(|e| e.to_string())?;
        entry.redist.shared_fence().map_err(|e| e.to_string())?;
    }
    let mut all = 0u32;
    // SAFETY: one integer from every process, combined into `all`.
    check("MPI_Allreduce", unsafe {
        ffi::MPI_Allreduce(
            &matching as *const u32 as *const _,
            &mut all as *mut u32 as *mut _,
            1,
            ffi::RSMPI_UINT32_T,
            ffi::RSMPI_BAND,
            comm,
        )
    })?;
    if all == 0 {
        return Ok(false);
    }
    if let Some(l) = split.filter(|&l| all & (1 << l) != 0) {
        // Every process matched the last call, so every process packed it.
        let entry = &mut group.entries[l];
        entry.redist.shared_fence().map_err(|e| e.to_string())?;
        finish(
            &mut entry.redist,
            &entry.call,
            &mut entry.scratch,
            args,
            me,
            |redist, src, dst| {
                // SAFETY: every process packed and fenced before the allreduce and fenced after
                // it; every process unpacks.
                unsafe { redist.unpack_shared(src, dst) }
            },
        )?;
        return Ok(true);
    }
    let index = all.trailing_zeros() as usize;
    group.last = Some(index);
    execute(&mut group.entries[index], args, me)?;
    Ok(true)
}

fn plan<T: Element>(comm: ffi::MPI_Comm, me: usize, key: Vec<i32>) -> Result<Entry, Failure> {
    let records: Vec<Record> = key.chunks(RECORD_LEN).map(Record::from_ints).collect();
    let call = resolve(&records, me).map_err(agreed)?;
    let plan = RedistPlan::section(
        &call.a.array,
        &call.a.start,
        &call.b.array,
        &call.b.start,
        &call.extent,
        records.len(),
    )
    .map_err(agreed)?;
    // SAFETY: reading a constant the MPI library initializes at load time.
    let mut dup = unsafe { ffi::RSMPI_COMM_NULL };
    // SAFETY: a collective call on the live BLACS communicator, writing `dup`.
    check("MPI_Comm_dup", unsafe { ffi::MPI_Comm_dup(comm, &mut dup) })?;
    // SAFETY: `dup` is a live intra-communicator owned by nothing else; the wrapper frees it.
    let owned = unsafe { SimpleCommunicator::from_raw(dup) };
    let bytes = call.extent[0] * call.extent[1] * std::mem::size_of::<T>();
    let mut redist =
        Redistribution::new(&owned, &plan, Schedule::Shared).map_err(|e| e.to_string())?;
    if bytes <= DOUBLE_BUFFER_BYTES {
        redist = redist.with_double_buffering();
    }
    // Collective: the window now, so that the plan's later calls need no collective call
    // of their own to make it.
    redist.prepare_shared::<T>().map_err(|e| e.to_string())?;
    let units = |elements: usize| {
        (elements * std::mem::size_of::<num_complex::Complex<f64>>()).div_ceil(16)
    };
    let (send, recv) = (redist.send_len(), redist.recv_len());
    Ok(Entry {
        key,
        bytes,
        call,
        send: vec![[0; 2]; units(send)],
        recv: vec![[0; 2]; units(recv)],
        scratch: Vec::new(),
        redist,
    })
}

/// The caller's local arrays `a` and `b` of A and B, of the lengths the plan `redist` gives
/// them (empty off a grid).
///
/// # Safety
/// ScaLAPACK's contract for the call's duration: this process's local array of A holds
/// LLD·(LOCc − 1) + LOCr elements (the plan's source length) and is only read; B's likewise,
/// and nothing else touches it.
unsafe fn arrays<'a, T>(redist: &Redistribution, a: *const T, b: *mut T) -> (&'a [T], &'a mut [T]) {
    let (src_len, dst_len) = (redist.src_len(), redist.dst_len());
    let src: &[T] = if src_len == 0 {
        &[]
    } else {
        // SAFETY: the caller's guarantee for A.
        unsafe { std::slice::from_raw_parts(a, src_len) }
    };
    let dst: &mut [T] = if dst_len == 0 {
        &mut []
    } else {
        // SAFETY: the caller's guarantee for B.
        unsafe { std::slice::from_raw_parts_mut(b, dst_len) }
    };
    (src, dst)
}

/// Runs a kept plan whole (its schedule synchronizes as it needs).
fn execute<T: Element>(entry: &mut Entry, args: &Args<T>, me: usize) -> Result<(), String> {
    let send: &mut [T] = bytemuck::cast_slice_mut(&mut entry.send[..]);
    let recv: &mut [T] = bytemuck::cast_slice_mut(&mut entry.recv[..]);
    let (send_len, recv_len) = (entry.redist.send_len(), entry.redist.recv_len());
    let (send, recv) = (&mut send[..send_len], &mut recv[..recv_len]);
    let mut times = StageTimes::default();
    finish(
        &mut entry.redist,
        &entry.call,
        &mut entry.scratch,
        args,
        me,
        |redist, src, dst| redist.execute_sized(src, dst, send, recv, &mut times),
    )
}

/// Moves the data into B with `run` (which fills its destination from A's local array):
/// straight into B for `p?gemr2d`; for `p?trmr2d` into `scratch` (grown to B's local array
/// at the plan's first such call, then reused), of which the trapezoid's elements are kept.
fn finish<T: Element>(
    redist: &mut Redistribution,
    call: &Call,
    scratch: &mut Vec<[u64; 2]>,
    args: &Args<T>,
    me: usize,
    run: impl FnOnce(&mut Redistribution, &[T], &mut [T]) -> redist::Result<()>,
) -> Result<(), String> {
    // SAFETY: the arrays of the call, of the plan's lengths (ScaLAPACK's contract).
    let (src, dst) = unsafe { arrays(redist, args.a, args.b) };
    let Some((uplo, diag)) = args.trapezoid else {
        return run(redist, src, dst).map_err(|e| e.to_string());
    };
    // The trapezoid: the whole submatrix into the scratch array, then the trapezoid's
    // elements into B. Only elements of the submatrix are read back, and the redistribution
    // writes every one of them, so the scratch array needs no copy of B first.
    let units = std::mem::size_of_val(dst).div_ceil(16);
    if scratch.len() < units {
        scratch.resize(units, [0; 2]);
    }
    let scratch: &mut [T] = &mut bytemuck::cast_slice_mut(&mut scratch[..units])[..dst.len()];
    run(redist, src, scratch).map_err(|e| e.to_string())?;
    let b = &call.b;
    let Some(coords) = b.array.axis_coords(me) else {
        return Ok(());
    };
    let (maps, shape) = (b.array.axis_maps(), b.array.local_shape(me));
    let strides = b.array.local_strides(me);
    let [m, n] = call.extent;
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
