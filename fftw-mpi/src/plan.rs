//! An FFTW-MPI plan made by this library: the dfft plan that computes the transform, the
//! arrays FFTW's `fftw_execute` uses, and how each process calls the dfft plan on them.

use crate::comm::Borrowed;
use crate::dist::{Side, TRANSPOSED_IN, TRANSPOSED_OUT};
use crate::problem::{Lowered, Problem, Refusal, Transform};
use fft_core::{with_any_plan, AnyPlan, FftOptions, GridChoice, Precision};
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use std::ffi::c_void;
use std::mem::size_of;

/// How a process hands its arrays to the dfft plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Staging {
    /// Two arrays, straight to the out-of-place transform.
    Direct,
    /// Two arrays of a real transform: the out-of-place transform on FFTW's complex array
    /// and the plan's real block ([`Scratch`]), FFTW's padded real rows copied into that
    /// block before an r2c, out of it after a c2r (dfft's out-of-place real plans take
    /// unpadded rows; its in-place ones exchange through messages only).
    Padded,
    /// One buffer for the in-place transform: FFTW's arrays are one (`in == out`), or, on a
    /// process whose arrays differ while another's are one, the input is first copied into
    /// the output array.
    InPlace,
}

/// A plan this library made, behind the `fftw_plan` handle it returned.
pub struct MpiPlan {
    problem: Problem,
    /// The dfft plan and how to call it; `None` for `howmany = 0` (nothing to compute).
    work: Option<Work>,
    /// The arrays given at planning (what `fftw_execute` transforms).
    input: *mut c_void,
    output: *mut c_void,
    /// Threads per process (`fftw_plan_with_nthreads` at planning).
    threads: usize,
    procs: usize,
}

/// The dfft plan that computes an FFTW-MPI plan's transform.
struct Work {
    lowered: Lowered,
    plan: AnyPlan,
    /// Each process's way of calling (decided at planning, for every execution).
    staging: Staging,
    /// The real block of [`Staging::Padded`].
    scratch: Option<Scratch>,
}

/// A real block the dfft plan allocated (`alloc_input`, in a shared-memory window when the
/// processes are on one node, so that the transform reads or writes the peers' rows in
/// place), made once at planning.
struct Scratch {
    /// Keeps the block alive (a `SharedBlock` of the plan's real scalars).
    _block: Box<dyn std::any::Any>,
    /// Its first scalar (the memory does not move with the box).
    at: *mut c_void,
    /// The axis of the dfft shape FFTW pads (the real one, before any `howmany` axis).
    axis: usize,
}

impl Scratch {
    /// The plan's real input block (collective). Its rows are dfft's input layout in C
    /// order, which the copies below assume.
    fn new(plan: &mut AnyPlan, axis: usize) -> Result<Self, Refusal> {
        if !plan.input_layout().memory_order().is_natural() {
            return Err(Refusal::Unsupported(
                "dfft's real block is not in C order (a bug of the lowering)".into(),
            ));
        }
        let made = with_any_plan!(plan, p => p.alloc_input().map(|mut b| {
            let at = b.as_mut_ptr() as *mut c_void;
            (Box::new(b) as Box<dyn std::any::Any>, at)
        }));
        let (block, at) =
            made.map_err(|e| Refusal::Unsupported(format!("dfft's real block: {e}")))?;
        Ok(Self {
            _block: block,
            at,
            axis,
        })
    }
}

/// What the C API passed to a planner.
pub struct Request<'a> {
    pub problem: Problem,
    pub precision: Precision,
    pub comm: &'a Borrowed,
    pub input: *mut c_void,
    pub output: *mut c_void,
    pub threads: usize,
}

impl MpiPlan {
    /// Plans `request` (collective over its communicator), or says why not. Every process
    /// computes the same verdict from the same arguments, except where their arrays differ,
    /// which is agreed with reductions.
    pub fn new(request: Request<'_>) -> Result<Self, Refusal> {
        let (pe, procs) = request.comm.rank_size();
        let work = match request.problem.lower(procs)? {
            Some(lowered) => Some(Work::new(&request, lowered, procs)?),
            None => None,
        };
        let made = Self {
            problem: request.problem,
            work,
            input: request.input,
            output: request.output,
            threads: request.threads.max(1),
            procs,
        };
        // The one verdict that depends on the process: agreed, so that all return alike.
        let room = made.check_room(pe);
        let mine = i32::from(room.is_ok());
        let mut all = mine;
        request
            .comm
            .all_reduce_into(&mine, &mut all, SystemOperation::min());
        match (room, all) {
            (Err(why), _) => Err(why),
            (Ok(()), 0) => Err(Refusal::Unsupported(
                "another process's arrays cannot hold dfft's in-place buffer".into(),
            )),
            _ => Ok(made),
        }
    }
}

impl crate::registry::Plan for MpiPlan {
    /// The transform on `input` and `output` (the planning arrays for `fftw_execute`): the
    /// same layouts and, as FFTW requires, in place exactly when the planning arrays were.
    fn execute_on(&mut self, input: *mut c_void, output: *mut c_void) {
        let Some(work) = &mut self.work else {
            return;
        };
        // An r2c transform reads FFTW's padded rows: padded along the real axis, dimension
        // rank - 1 of the dfft shape (a howmany axis comes after it).
        let real_in =
            matches!(self.problem.transform, Transform::R2c).then_some(self.problem.n.len() - 1);
        if let Err(e) = work.run(real_in, input, output) {
            crate::fatal(&format!("executing {}: {e}", self.description()));
        }
    }

    fn arrays(&self) -> (*mut c_void, *mut c_void) {
        (self.input, self.output)
    }

    fn describe(&self) -> String {
        self.description()
    }

    fn flops(&self) -> (f64, f64, f64) {
        self.operations()
    }
}

impl MpiPlan {
    /// FFTW's arrays hold what FFTW's `local_size` asks for: enough for dfft's in-place
    /// buffer? A program that allocates what FFTW asks for must be able to run.
    fn check_room(&self, pe: usize) -> Result<(), Refusal> {
        let Some(work) = &self.work else {
            return Ok(());
        };
        if work.staging != Staging::InPlace {
            return Ok(());
        }
        let alloc = self.problem.alloc(self.procs, pe);
        let real = match work.plan.precision() {
            Precision::F64 => size_of::<f64>(),
            Precision::F32 => size_of::<f32>(),
        };
        let need_bytes = with_any_plan!(&work.plan, p => p.in_place_len() * elem_size(p));
        // FFTW counts complex numbers for dft and r2c/c2r, reals for r2r.
        let have_bytes = match self.problem.transform {
            Transform::R2r(_) => alloc * real,
            _ => alloc * 2 * real,
        };
        if need_bytes > have_bytes {
            return Err(Refusal::Unsupported(format!(
                "dfft's in-place buffer takes {need_bytes} bytes on process {pe}, more than the {have_bytes} FFTW's local_size asks for"
            )));
        }
        Ok(())
    }

    /// A one-line description, as FFTW's `fftw_print_plan` gives one.
    fn description(&self) -> String {
        let kind = match &self.problem.transform {
            Transform::Dft { sign } => format!("dft sign {sign:+}"),
            Transform::R2c => "r2c".into(),
            Transform::C2r => "c2r".into(),
            Transform::R2r(k) => format!("r2r kinds {k:?}"),
        };
        let how = match &self.work {
            None => "nothing to compute".to_string(),
            Some(w) => format!(
                "dfft {} {:?}{}{}{}",
                w.lowered.kind,
                w.lowered.shape,
                if w.lowered.transposed_out {
                    " transposed"
                } else {
                    ""
                },
                if w.lowered.forward {
                    " forward"
                } else {
                    " backward"
                },
                if w.staging == Staging::InPlace {
                    " in place"
                } else {
                    ""
                },
            ),
        };
        format!(
            "(dfft-mpi {kind} n {:?} howmany {} on {} processes, {} threads each: {how})",
            self.problem.n, self.problem.howmany, self.procs, self.threads,
        )
    }

    /// The floating-point operations of the whole transform, as FFTW's `fftw_flops` reports
    /// them for an MPI plan (an estimate: 5 N log2 N for a complex transform, half that for
    /// real data).
    fn operations(&self) -> (f64, f64, f64) {
        let n: f64 =
            self.problem.n.iter().map(|&x| x as f64).product::<f64>() * self.problem.howmany as f64;
        let total = if n > 1.0 { 5.0 * n * n.log2() } else { 0.0 };
        let factor = match self.problem.transform {
            Transform::Dft { .. } => 1.0,
            _ => 0.5,
        };
        (total * factor * 0.6, total * factor * 0.4, 0.0)
    }
}

impl Work {
    /// Makes the dfft plan of `lowered`: in place when any process's arrays are one (FFTW
    /// decides by the planning arrays), else out of place (real data through the plan's real
    /// block). Checks its blocks against FFTW's.
    fn new(request: &Request<'_>, lowered: Lowered, procs: usize) -> Result<Self, Refusal> {
        let problem = &request.problem;
        let real = matches!(problem.transform, Transform::R2c | Transform::C2r);
        let mine = i32::from(request.input == request.output);
        let mut any = mine;
        request
            .comm
            .all_reduce_into(&mine, &mut any, SystemOperation::max());
        let staging = if any != 0 {
            Staging::InPlace
        } else if real {
            Staging::Padded
        } else {
            Staging::Direct
        };
        // The real block is the plan's own: an r2c may always use it as scratch.
        let destroy = match staging {
            Staging::Direct => lowered.destroy_input,
            Staging::Padded => lowered.destroy_input || lowered.forward,
            Staging::InPlace => false,
        };
        let mut options = FftOptions::default()
            .grid(GridChoice::Dims(vec![procs]))
            .transposed_out(lowered.transposed_out)
            .destroy_input(destroy)
            .in_place(staging == Staging::InPlace);
        if let Some(axes) = &lowered.axes {
            options = options.axes(axes.clone());
        }
        let [input_blocks, output_blocks] = lowered.blocks.clone();
        if !input_blocks.is_empty() {
            options = options
                .input_blocks(input_blocks)
                .output_blocks(output_blocks);
        }
        if let Some(one_d) = lowered.one_d {
            options = options.one_d(one_d);
        }
        options = options.threads(Some(request.threads.max(1)));
        let mut plan = AnyPlan::new(
            &**request.comm,
            lowered.kind,
            request.precision,
            &lowered.shape,
            options,
        )
        .map_err(|e| Refusal::Unsupported(format!("dfft refused the plan: {e}")))?;
        check_layouts(&plan, &lowered, problem.flags, procs)?;
        let scratch = match staging {
            Staging::Padded => Some(Scratch::new(&mut plan, problem.n.len() - 1)?),
            _ => None,
        };
        Ok(Self {
            lowered,
            plan,
            staging,
            scratch,
        })
    }

    fn run(
        &mut self,
        real_in: Option<usize>,
        input: *mut c_void,
        output: *mut c_void,
    ) -> fft_core::Result<()> {
        let forward = self.lowered.forward;
        match self.staging {
            Staging::Direct => {
                if input == output && !input.is_null() {
                    crate::fatal(&format!(
                        "a plan made with two arrays executed in place (in == out = {input:p})"
                    ));
                }
                let destroy = self.lowered.destroy_input;
                with_any_plan!(&mut self.plan, p => direct(p, forward, destroy, input, output))
            }
            Staging::InPlace => {
                with_any_plan!(&mut self.plan, p => in_place(p, forward, real_in, input, output))
            }
            Staging::Padded => {
                let Some(scratch) = &self.scratch else {
                    unreachable!("a padded plan holds its real block");
                };
                let destroy = self.lowered.destroy_input;
                let (at, axis) = (scratch.at, scratch.axis);
                with_any_plan!(&mut self.plan, p => padded(p, forward, destroy, axis, at, input, output))
            }
        }
    }
}

fn elem_size<P: fft_core::Transform>(_: &P) -> usize {
    size_of::<P::In>()
}

/// The dfft plan's blocks against FFTW's, for every process: the dimension of each FFTW
/// block that comes first in memory (the second one of a transposed side) is the first axis
/// of the dfft block in memory, with FFTW's range, and the others are whole; an array FFTW
/// keeps whole on process 0 (lowered to `1 × n`) is there alone; a distributed 1-D
/// transform's blocks hold FFTW's range of points. A difference is a bug of the lowering.
fn check_layouts(
    plan: &AnyPlan,
    lowered: &Lowered,
    flags: u32,
    procs: usize,
) -> Result<(), Refusal> {
    let (fftw_in, fftw_out) = if lowered.forward {
        (Side::In, Side::Out)
    } else {
        (Side::Out, Side::In)
    };
    let sides = [
        (plan.input_layout(), fftw_in),
        (plan.output_layout(), fftw_out),
    ];
    let whole_1d = lowered.dist.dims.len() == 1 && lowered.shape[0] == 1;
    for (layout, side) in sides {
        let transposed = match side {
            Side::In => flags & TRANSPOSED_IN,
            Side::Out => flags & TRANSPOSED_OUT,
        };
        let split = usize::from(transposed != 0 && lowered.dist.dims.len() > 1);
        let order = layout.memory_order().axes();
        for pe in 0..procs {
            let fftw = lowered.dist.local(side, pe);
            let ranges = layout.global_ranges(pe);
            let first = ranges[order[0]].clone();
            let want = fftw.start[split]..fftw.start[split] + fftw.n[split];
            let same = if whole_1d {
                (layout.local_len(pe) > 0) == (pe == 0)
            } else if lowered.one_d.is_some() {
                let points = fft_core::one_d::range_1d(layout, pe);
                points == want || (points.is_empty() && want.is_empty())
            } else {
                let empty = fftw.is_empty() && layout.local_len(pe) == 0;
                let whole_rest = order[1..]
                    .iter()
                    .all(|&a| ranges[a].len() == layout.global_shape()[a]);
                empty || (first == want && whole_rest)
            };
            if !same {
                return Err(Refusal::Unsupported(format!(
                    "FFTW's {side:?} blocks (process {pe}: {want:?} of dimension {split}) are not dfft's ({first:?})"
                )));
            }
        }
    }
    Ok(())
}

/// `len` elements of `E` at `ptr` as a slice (empty for 0).
///
/// # Safety
/// `ptr` points to `len` elements nothing else accesses during the call.
unsafe fn slice<'a, E>(ptr: *mut c_void, len: usize) -> &'a mut [E] {
    if len == 0 {
        return &mut [];
    }
    if ptr.is_null() {
        crate::fatal(&format!("a NULL array where {len} elements are needed"));
    }
    // SAFETY: the caller's contract (FFTW's: arrays of the sizes `local_size` gives).
    unsafe { std::slice::from_raw_parts_mut(ptr as *mut E, len) }
}

/// Two arrays: the dfft plan's forward or backward transform between them.
fn direct<P: fft_core::Transform>(
    p: &mut P,
    forward: bool,
    destroy: bool,
    input: *mut c_void,
    output: *mut c_void,
) -> fft_core::Result<()> {
    let (n_in, n_out) = lens(p);
    // SAFETY: FFTW's contract: the arrays hold the blocks of their layouts and do not
    // overlap (checked above for equality; partial overlap is the caller's error in FFTW too).
    unsafe {
        match (forward, destroy) {
            (true, false) => p.forward(slice(input, n_in), slice(output, n_out)),
            (true, true) => p.forward_destroying(slice(input, n_in), slice(output, n_out)),
            (false, false) => p.backward(slice(input, n_out), slice(output, n_in)),
            (false, true) => p.backward_destroying(slice(input, n_out), slice(output, n_in)),
        }
    }
}

/// The forward input and output lengths of a plan (all fields).
fn lens<P: fft_core::Transform>(p: &P) -> (usize, usize) {
    let batch = p.batch();
    let rank = p.grid().rank();
    (
        p.input_layout().local_len(rank) * batch,
        p.output_layout().local_len(rank) * batch,
    )
}

/// One buffer: FFTW's output array (which is its input array when `in == out`), after the
/// input block is copied into it when the arrays differ. `real_in`: the input is the padded
/// real rows of an r2c transform, padded along that axis, else the input layout's elements.
fn in_place<P: fft_core::Transform>(
    p: &mut P,
    forward: bool,
    real_in: Option<usize>,
    input: *mut c_void,
    output: *mut c_void,
) -> fft_core::Result<()> {
    let len = p.in_place_len();
    let (n_in, n_out) = lens(p);
    if input != output {
        // Bytes of the block that enters the transform: FFTW's input layout.
        let bytes = if let Some(axis) = real_in {
            padded_real_bytes(p, axis)
        } else if forward {
            n_in * size_of::<P::In>()
        } else {
            n_out * size_of::<P::Out>()
        };
        if bytes > 0 {
            // SAFETY: FFTW's arrays are distinct and hold at least the input block and the
            // in-place buffer (checked at planning against FFTW's allocation).
            unsafe { std::ptr::copy_nonoverlapping(input as *const u8, output as *mut u8, bytes) };
        }
    }
    // SAFETY: the output array holds the in-place buffer (checked at planning).
    let buffer = unsafe { slice::<P::In>(output, len) };
    if forward {
        p.forward_in_place(buffer)
    } else {
        p.backward_in_place(buffer)
    }
}

/// Bytes of a real plan's padded input block: its last transformed axis (the real one,
/// before any untransformed `howmany` axis) padded to `2(n/2+1)` scalars.
fn padded_real_bytes<P: fft_core::Transform>(p: &P, padded_axis: usize) -> usize {
    let layout = p.input_layout();
    let mut local = layout.local_shape(p.grid().rank());
    if local.contains(&0) {
        return 0;
    }
    local[padded_axis] = 2 * (layout.global_shape()[padded_axis] / 2 + 1);
    local.iter().product::<usize>() * p.batch() * size_of::<P::In>()
}

/// FFTW's padded real array and its complex array: the out-of-place transform between the
/// complex array and the plan's real block at `block`, the real rows copied between that
/// block and FFTW's array (padded along `axis`) before the forward (r2c) or after the
/// backward (c2r) transform. `destroy`: the backward transform may overwrite its input.
fn padded<P: fft_core::Transform>(
    p: &mut P,
    forward: bool,
    destroy: bool,
    axis: usize,
    block: *mut c_void,
    input: *mut c_void,
    output: *mut c_void,
) -> fft_core::Result<()> {
    let (n_in, n_out) = lens(p);
    let rows = padded_rows(p, axis);
    // SAFETY: the plan's block holds `n_in` elements (its input length) and is used only
    // here; FFTW's arrays hold their blocks and differ from it.
    let real = unsafe { slice::<P::In>(block, n_in) };
    if forward {
        copy_rows(input, real, rows, true);
        // SAFETY: FFTW's output array holds the output block (its `local_size`).
        let spectrum = unsafe { slice::<P::Out>(output, n_out) };
        p.forward_destroying(real, spectrum)
    } else {
        // SAFETY: FFTW's input array holds the complex block.
        let spectrum = unsafe { slice::<P::Out>(input, n_out) };
        if destroy {
            p.backward_destroying(spectrum, real)?;
        } else {
            p.backward(spectrum, real)?;
        }
        copy_rows(output, real, rows, false);
        Ok(())
    }
}

/// A real block's rows: `(count, scalars per row, scalars per padded row)`, a row being
/// everything from the padded axis inward (the real axis and any `howmany` axis).
fn padded_rows<P: fft_core::Transform>(p: &P, axis: usize) -> (usize, usize, usize) {
    let layout = p.input_layout();
    let local = layout.local_shape(p.grid().rank());
    let inner = local[axis + 1..].iter().product::<usize>() * p.batch();
    let count = local[..axis].iter().product::<usize>();
    let padded = 2 * (layout.global_shape()[axis] / 2 + 1);
    (count, local[axis] * inner, padded * inner)
}

/// Copies `rows` between FFTW's padded array `fftw` and the unpadded `block`: into the block
/// when `into_block`, else out of it (leaving FFTW's padding scalars alone).
fn copy_rows<E: Copy>(
    fftw: *mut c_void,
    block: &mut [E],
    (count, row, padded): (usize, usize, usize),
    into_block: bool,
) {
    if count == 0 || row == 0 {
        return;
    }
    // SAFETY: FFTW's array holds `count` padded rows (its `local_size`), distinct from the
    // plan's block.
    let fftw = unsafe { slice::<E>(fftw, (count - 1) * padded + row) };
    for (r, dense) in block[..count * row].chunks_exact_mut(row).enumerate() {
        let sparse = &mut fftw[r * padded..r * padded + row];
        if into_block {
            dense.copy_from_slice(sparse);
        } else {
            sparse.copy_from_slice(dense);
        }
    }
}
