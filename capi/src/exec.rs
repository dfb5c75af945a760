//! `dfft_forward` and `dfft_backward`: the caller's pointers checked, the verdict agreed over
//! the plan's ranks (so a bad buffer on one rank never leaves the others waiting), then the
//! Rust plan run on slices of the blocks.

use crate::plan::DfftPlan;
use crate::status::{
    guard, Failure, Outcome, DFFT_ERROR_BAD_BUFFER, DFFT_ERROR_IN_PLACE, DFFT_ERROR_OTHER_RANK,
    DFFT_SUCCESS,
};
use fft_core::{with_any_plan, Direction, Transform};
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::Communicator;
use mpi::traits::Root;
use std::ffi::{c_int, c_void};
use std::mem::{align_of, size_of};

/// One of the caller's buffers: where, how many elements, of what size and alignment.
#[derive(Debug, Clone, Copy)]
struct Buffer {
    ptr: *mut c_void,
    len: usize,
    size: usize,
    align: usize,
    name: &'static str,
}

impl Buffer {
    fn of<E>(ptr: *mut c_void, len: usize, name: &'static str) -> Self {
        Self {
            ptr,
            len,
            size: size_of::<E>(),
            align: align_of::<E>(),
            name,
        }
    }

    fn bytes(&self) -> std::ops::Range<usize> {
        let start = self.ptr as usize;
        start..start + self.len * self.size
    }

    fn check(&self) -> Outcome {
        if self.len == 0 {
            return Ok(());
        }
        if self.ptr.is_null() {
            return Err(Failure::null(&format!(
                "{} (this rank's block has {} elements)",
                self.name, self.len
            )));
        }
        if !(self.ptr as usize).is_multiple_of(self.align) {
            return Err(Failure::new(
                DFFT_ERROR_BAD_BUFFER,
                format!(
                    "{} = {:p} is not aligned to {} bytes (its element type's alignment)",
                    self.name, self.ptr, self.align
                ),
            ));
        }
        Ok(())
    }

    /// The buffer as a slice.
    ///
    /// # Safety
    /// [`Buffer::check`] passed, and the caller's block holds `len` initialized elements of
    /// `E` that nothing else accesses during the call.
    unsafe fn read<'a, E>(&self) -> &'a [E] {
        debug_assert_eq!(size_of::<E>(), self.size);
        if self.len == 0 {
            return &[];
        }
        // SAFETY: non-NULL, aligned (checked), `len` elements by the API's contract.
        unsafe { std::slice::from_raw_parts(self.ptr as *const E, self.len) }
    }

    /// The buffer as a mutable slice (same contract as [`Buffer::read`]).
    unsafe fn write<'a, E>(&self) -> &'a mut [E] {
        debug_assert_eq!(size_of::<E>(), self.size);
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as in `read`; the buffers do not overlap (checked), so this is the only
        // view of these bytes.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut E, self.len) }
    }
}

/// A caller's pointer and its element count.
type Raw = (*mut c_void, usize);

/// How one rank calls: two buffers, or one (`input == output`, in place).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `input == output == NULL` (this rank's blocks are empty): whatever the others do.
    Either,
    InPlace,
    OutOfPlace,
}

/// The checks of one rank's pair of buffers, and how it calls (`one`: the one buffer of an
/// in-place call at `input`, when the plan was made with `DFFT_IN_PLACE`).
fn check_pair(input: &Buffer, output: &Buffer, one: Option<Buffer>) -> Outcome<Mode> {
    if input.ptr == output.ptr {
        if input.ptr.is_null() {
            input.check()?;
            output.check()?;
            return Ok(Mode::Either);
        }
        let Some(one) = one else {
            return Err(Failure::new(
                DFFT_ERROR_IN_PLACE,
                format!(
                    "input == output = {:p}, but the plan was made without DFFT_IN_PLACE; plan with it or pass two buffers",
                    input.ptr
                ),
            ));
        };
        one.check()?;
        return Ok(Mode::InPlace);
    }
    input.check()?;
    output.check()?;
    if input.len > 0 && output.len > 0 {
        let (a, b) = (input.bytes(), output.bytes());
        if a.start < b.end && b.start < a.end {
            return Err(Failure::new(
                DFFT_ERROR_BAD_BUFFER,
                format!(
                    "input ({:p}, {} bytes) and output ({:p}, {} bytes) overlap (only input == output runs in place)",
                    input.ptr,
                    a.len(),
                    output.ptr,
                    b.len()
                ),
            ));
        }
    }
    Ok(Mode::OutOfPlace)
}

impl DfftPlan {
    /// The caller's buffers of one direction, typed by the plan's kind and precision.
    fn buffers(
        &self,
        direction: Direction,
        src: *mut c_void,
        dst: *mut c_void,
    ) -> (Buffer, Buffer) {
        let (input_len, output_len) = self.counts();
        let (src_len, dst_len) = if direction.is_forward() {
            (input_len, output_len)
        } else {
            (output_len, input_len)
        };
        let (src, dst) = ((src, src_len), (dst, dst_len));
        // Generic over the plan inside, for its element types.
        fn typed<P: Transform>(
            _: &P,
            direction: Direction,
            src: Raw,
            dst: Raw,
        ) -> (Buffer, Buffer) {
            if direction.is_forward() {
                (
                    Buffer::of::<P::In>(src.0, src.1, "input"),
                    Buffer::of::<P::Out>(dst.0, dst.1, "output"),
                )
            } else {
                (
                    Buffer::of::<P::Out>(src.0, src.1, "input"),
                    Buffer::of::<P::In>(dst.0, dst.1, "output"),
                )
            }
        }
        with_any_plan!(&self.transform, p => typed(p, direction, src, dst))
    }

    /// The largest code any rank's check returned (`DFFT_SUCCESS` when all passed), the
    /// lowest rank whose check failed, and whether any rank calls in place and any out of
    /// place. Collective: one allreduce.
    fn agree(&self, code: c_int, mode: Mode) -> (c_int, c_int, bool, bool) {
        let comm = self.transform.grid().communicator();
        let (rank, size) = (comm.rank(), comm.size());
        let failed = if code == DFFT_SUCCESS { size } else { rank };
        // Minima as maxima of the negated values, so that one reduction does it all.
        let mine = [
            code,
            -failed,
            c_int::from(mode == Mode::InPlace),
            c_int::from(mode == Mode::OutOfPlace),
        ];
        let mut all = mine;
        if size > 1 {
            comm.all_reduce_into(&mine[..], &mut all[..], SystemOperation::max());
        }
        (all[0], -all[1], all[2] != 0, all[3] != 0)
    }

    /// The message of rank `from`'s failed check, on every rank (collective: two broadcasts).
    fn message_of(&self, from: c_int, local: &Outcome<Mode>) -> String {
        let comm = self.transform.grid().communicator();
        let root = comm.process_at_rank(from);
        let mut text = match local {
            Err(f) if comm.rank() == from => f.message.clone().into_bytes(),
            _ => Vec::new(),
        };
        let mut len = text.len() as u64;
        root.broadcast_into(&mut len);
        text.resize(len as usize, 0);
        if !text.is_empty() {
            root.broadcast_into(&mut text[..]);
        }
        String::from_utf8_lossy(&text).into_owned()
    }

    /// Runs one direction on the caller's pointers.
    fn run(&mut self, direction: Direction, src: *mut c_void, dst: *mut c_void) -> Outcome {
        let (input, output) = self.buffers(direction, src, dst);
        let local = check_pair(&input, &output, self.in_place_buffer(input.ptr));
        let (code, mode) = match &local {
            Ok(mode) => (DFFT_SUCCESS, *mode),
            Err(f) => (f.code, Mode::Either),
        };
        let (worst, first, in_place, out_of_place) = self.agree(code, mode);
        if worst != DFFT_SUCCESS {
            let message = self.message_of(first, &local);
            let rank = self.transform.grid().communicator().rank();
            local.map_err(|f| Failure::new(f.code, format!("rank {rank}: {}", f.message)))?;
            return Err(Failure::new(
                DFFT_ERROR_OTHER_RANK,
                format!("another rank's buffers were rejected: rank {first}: {message} (code {worst}); nothing was transformed"),
            ));
        }
        if in_place && out_of_place {
            return Err(Failure::new(
                DFFT_ERROR_BAD_BUFFER,
                "some ranks passed input == output (in place) and others two buffers: every rank must call alike; nothing was transformed".to_string(),
            ));
        }
        if in_place {
            return self.run_in_place(direction, input);
        }
        let destroy = self.destroys_input();
        // One direction of the plan inside, whatever its kind and precision.
        macro_rules! go {
            ($plan:expr, $read:ident, $write:ident) => {
                // SAFETY: both buffers passed `check_pair` (non-NULL when non-empty, aligned,
                // not overlapping) and, by the API's contract, hold this rank's block of the
                // plan's layouts in the element type of the plan's kind and precision, which
                // is what `buffers` typed them as.
                unsafe {
                    if destroy {
                        $plan.$write(input.write(), output.write())
                    } else {
                        $plan.$read(input.read(), output.write())
                    }
                }
            };
        }
        let result = with_any_plan!(&mut self.transform, p => match direction {
            Direction::Forward => go!(p, forward, forward_destroying),
            Direction::Backward => go!(p, backward, backward_destroying),
        });
        Ok(result?)
    }

    /// The one buffer of an in-place call at `ptr`: [`fft_core::FftPlan::in_place_len`]
    /// elements of the plan's type (complex for c2c; real for r2r, and for r2c, whose real
    /// rows are padded as FFTW's), or `None` for a plan made without `DFFT_IN_PLACE`.
    fn in_place_buffer(&self, ptr: *mut c_void) -> Option<Buffer> {
        if !self.in_place() {
            return None;
        }
        let name = "input == output";
        let len = self.transform.in_place_len();
        fn typed<P: Transform>(_: &P, ptr: *mut c_void, len: usize, name: &'static str) -> Buffer {
            Buffer::of::<P::In>(ptr, len, name)
        }
        Some(with_any_plan!(&self.transform, p => typed(p, ptr, len, name)))
    }

    /// Runs one direction in place on the caller's one buffer (`input == output`; checked
    /// and agreed on every rank; a plan made with `DFFT_IN_PLACE`).
    fn run_in_place(&mut self, direction: Direction, buffer: Buffer) -> Outcome {
        let one = self
            .in_place_buffer(buffer.ptr)
            .expect("in place only on DFFT_IN_PLACE plans (checked)");
        // SAFETY: `one` passed `check_pair` (non-NULL when non-empty, aligned) and, by the
        // API's contract for in-place calls, holds `dfft_local_in_place`'s count of this
        // rank's elements of the type `in_place_buffer` gave it, which nothing else accesses.
        let result = unsafe {
            with_any_plan!(&mut self.transform, p => p.transform_in_place(direction, one.write()))
        };
        Ok(result?)
    }
}

/// The plan as `&mut`, or the NULL failure.
///
/// # Safety
/// `plan` is NULL or a live plan from a `dfft_plan_*` constructor, not used concurrently.
pub(crate) unsafe fn plan_mut<'a>(plan: *mut DfftPlan) -> Outcome<&'a mut DfftPlan> {
    // SAFETY: the caller's contract.
    unsafe { plan.as_mut() }.ok_or_else(|| Failure::null("plan"))
}

/// The forward transform of `input` (this rank's block of the input layout,
/// `dfft_local_input`) into `output` (its block of the output layout, `dfft_local_output`).
/// Collective over the plan's communicator. `input` is left alone unless the plan was made
/// with `DFFT_DESTROY_INPUT`. Element types: c2c `double _Complex` (`float _Complex` for
/// `dfftf_` plans) in and out; r2c `double` in, `double _Complex` out; r2r `double` in and
/// out. The buffers must not overlap, except `input == output` on a plan made with
/// `DFFT_IN_PLACE`: the transform then runs in place in that one buffer of the count
/// `dfft_local_in_place` reports (the output left at its start; for r2c the real rows padded
/// as FFTW's in-place r2c: see `DFFT_IN_PLACE`), on every rank alike (`input == output == NULL` where both counts are 0); on a plan made
/// without it `input == output` returns `DFFT_ERROR_IN_PLACE`. Buffers rejected on any
/// rank make every rank return an error without transforming.
/// Allocates nothing.
///
/// # Safety
/// `plan` is NULL or a live plan; `input` and `output` point to this rank's blocks of at
/// least the element counts `dfft_local_size` reports (NULL allowed where that count is 0).
#[no_mangle]
pub unsafe extern "C" fn dfft_forward(
    plan: *mut DfftPlan,
    input: *mut c_void,
    output: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        unsafe { plan_mut(plan) }?.run(Direction::Forward, input, output)
    })
}

/// The backward transform of `input` (this rank's block of the output layout) into `output`
/// (its block of the input layout): the inverse of `dfft_forward` up to the normalization flags.
/// Collective; the same rules as `dfft_forward` with the roles of the layouts swapped (c2r:
/// `double _Complex` in, `double` out).
///
/// # Safety
/// As `dfft_forward`.
#[no_mangle]
pub unsafe extern "C" fn dfft_backward(
    plan: *mut DfftPlan,
    input: *mut c_void,
    output: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        unsafe { plan_mut(plan) }?.run(Direction::Backward, input, output)
    })
}
