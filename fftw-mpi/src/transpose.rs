//! `fftw_mpi_plan_many_transpose`: FFTW-MPI's distributed transposes, as one dfft exchange.
//!
//! The `n0 × n1` array of `howmany`-tuples, distributed along `n0` in blocks of `block0`,
//! becomes the `n1 × n0` array distributed along `n1` in blocks of `block1`. In dfft's terms
//! both are layouts of the one `[n0, n1, howmany]` array: split along axis 0 in C order
//! (or, with `FFTW_MPI_TRANSPOSED_IN`, stored `n1 × local_n0`: memory order 1, 0, 2), and
//! split along axis 1 in memory order 1, 0, 2 (or, with `FFTW_MPI_TRANSPOSED_OUT`, stored
//! `n0 × local_n1`: C order). One [`Exchange`] between them is the transpose.

use crate::api::Comm;
use crate::dist::{self, Side, TRANSPOSED_IN, TRANSPOSED_OUT};
use crate::problem::Refusal;
use fft_core::Precision;
use redist::{Element, Exchange, ExchangePlan, GridShape, Layout, MemoryOrder, ProcessGrid};
use std::ffi::{c_uint, c_void};

/// A transpose plan behind an `fftw_plan` handle.
pub struct TransposePlan {
    n: [usize; 2],
    howmany: usize,
    procs: usize,
    /// `None` when there is nothing to move (`howmany = 0`).
    work: Option<Moves>,
    input: *mut c_void,
    output: *mut c_void,
}

/// The exchange and its buffers, in the plan's precision.
enum Moves {
    F64(Mover<f64>),
    F32(Mover<f32>),
}

/// One exchange with its message buffers and, for in-place calls, a copy of the input.
struct Mover<T> {
    exchange: Exchange,
    send: Vec<T>,
    recv: Vec<T>,
    copy: Vec<T>,
}

impl<T: Element + Default> Mover<T> {
    fn new(exchange: Exchange, in_place: bool) -> Self {
        let copy = if in_place { exchange.src_len() } else { 0 };
        Self {
            send: vec![T::default(); exchange.send_len()],
            recv: vec![T::default(); exchange.recv_len()],
            copy: vec![T::default(); copy],
            exchange,
        }
    }

    fn run(&mut self, input: *mut c_void, output: *mut c_void) -> redist::Result<()> {
        let (src_len, dst_len) = (self.exchange.src_len(), self.exchange.dst_len());
        let mut times = redist::StageTimes::default();
        if input == output {
            if self.copy.len() < src_len {
                crate::fatal("a transpose planned with two arrays executed in place");
            }
            // SAFETY: FFTW's contract: the one array holds the input block before and the
            // output block after (the larger of the two), nothing else uses it meanwhile.
            let both = unsafe { slice::<T>(output, src_len.max(dst_len)) };
            self.copy[..src_len].copy_from_slice(&both[..src_len]);
            let src = &self.copy[..src_len];
            self.exchange.execute_sized(
                src,
                &mut both[..dst_len],
                &mut self.send,
                &mut self.recv,
                &mut times,
            )
        } else {
            // SAFETY: FFTW's contract: the arrays hold the blocks `local_size_2d_transposed`
            // gives (times howmany); `output` is written, `input` only read.
            let dst = unsafe { slice::<T>(output, dst_len) };
            // SAFETY: as above; the arrays are distinct.
            let src = unsafe { slice::<T>(input, src_len) };
            self.exchange
                .execute_sized(src, dst, &mut self.send, &mut self.recv, &mut times)
        }
    }
}

/// `len` elements at `ptr` (empty for 0).
///
/// # Safety
/// `ptr` points to `len` elements nothing else accesses during the call.
unsafe fn slice<'a, T>(ptr: *mut c_void, len: usize) -> &'a mut [T] {
    if len == 0 {
        return &mut [];
    }
    if ptr.is_null() {
        crate::fatal(&format!("a NULL array where {len} elements are needed"));
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(ptr as *mut T, len) }
}

/// Plans the transpose (collective), or NULL as FFTW returns it (negative sizes, block sizes
/// that need more processes than there are) or with a message when dfft cannot make it.
///
/// # Safety
/// FFTW's contract: the arrays hold the blocks of `local_size_2d_transposed` (times
/// `howmany`).
#[allow(clippy::too_many_arguments)]
pub unsafe fn plan(
    name: &str,
    n: [isize; 2],
    howmany: isize,
    block: [isize; 2],
    input: *mut c_void,
    output: *mut c_void,
    comm: Comm,
    flags: c_uint,
    precision: Precision,
) -> *mut c_void {
    if n[0] <= 0 || n[1] <= 0 || howmany < 0 || block[0] < 0 || block[1] < 0 {
        return std::ptr::null_mut();
    }
    let comm = crate::comm::borrow(comm);
    let (_, procs) = comm.rank_size();
    let n = [n[0] as usize, n[1] as usize];
    let request = Request {
        n,
        howmany: howmany as usize,
        block: block.map(|b| (b > 0).then_some(b as usize)),
        flags,
        procs,
    };
    let made = request.layouts().and_then(|layouts| {
        let Some((from, to)) = layouts else {
            return Ok(None);
        };
        make_mover(&comm, &from, &to, precision, input == output).map(Some)
    });
    match made {
        Ok(work) => crate::registry::register(Box::new(TransposePlan {
            n,
            howmany: howmany as usize,
            procs,
            work,
            input,
            output,
        })),
        Err(refusal) => crate::api::refuse(&comm, name, refusal),
    }
}

/// A transpose call's arguments.
struct Request {
    n: [usize; 2],
    howmany: usize,
    block: [Option<usize>; 2],
    flags: c_uint,
    procs: usize,
}

impl Request {
    /// The source and destination layouts (`None` for `howmany = 0`) in FFTW's blocks, or
    /// why there are none.
    fn layouts(&self) -> Result<Option<(Layout, Layout)>, Refusal> {
        let [n0, n1] = self.n;
        let b0 = self.block[0].unwrap_or(dist::default_block(n0, self.procs));
        let b1 = self.block[1].unwrap_or(dist::default_block(n1, self.procs));
        if dist::num_blocks(n0, b0) > self.procs || dist::num_blocks(n1, b1) > self.procs {
            return Err(Refusal::Invalid(format!(
                "blocks {b0}, {b1} of {n0} x {n1} need more than {} processes",
                self.procs
            )));
        }
        if self.howmany == 0 {
            return Ok(None);
        }
        let bad = |e: redist::RedistError| Refusal::Unsupported(format!("dfft's layouts: {e}"));
        let grid = GridShape::new(vec![self.procs]).map_err(bad)?;
        let shape = [n0, n1, self.howmany];
        let natural = MemoryOrder::natural(3);
        let swapped = MemoryOrder::new(vec![1, 0, 2]).map_err(bad)?;
        let in_order = if self.flags & TRANSPOSED_IN != 0 {
            &swapped
        } else {
            &natural
        };
        let out_order = if self.flags & TRANSPOSED_OUT != 0 {
            &natural
        } else {
            &swapped
        };
        let from = Layout::new(&shape, grid.clone(), vec![0], in_order.clone())
            .and_then(|l| l.with_blocks(vec![Some(b0)]))
            .map_err(bad)?;
        let to = Layout::new(&shape, grid, vec![1], out_order.clone())
            .and_then(|l| l.with_blocks(vec![Some(b1)]))
            .map_err(bad)?;
        let fftw = dist::resolve(
            &[
                dist::DimRequest {
                    n: n0,
                    block: [Some(b0), Some(n0)],
                },
                dist::DimRequest {
                    n: n1,
                    block: [Some(n1), Some(b1)],
                },
            ],
            self.procs,
        );
        for pe in 0..self.procs {
            for (layout, side, axis) in [(&from, Side::In, 0), (&to, Side::Out, 1)] {
                let block = fftw.local(side, pe);
                let want = block.start[axis]..block.start[axis] + block.n[axis];
                let have = layout.global_range(pe, axis);
                if have != want && !(have.is_empty() && want.is_empty()) {
                    return Err(Refusal::Unsupported(format!(
                        "FFTW's blocks of {} (process {pe}: {want:?}) are not dfft's ({have:?})",
                        shape[axis]
                    )));
                }
            }
        }
        Ok(Some((from, to)))
    }
}

/// The exchange between the two layouts, with its buffers in the plan's precision.
fn make_mover(
    comm: &crate::comm::Borrowed,
    from: &Layout,
    to: &Layout,
    precision: Precision,
    in_place: bool,
) -> Result<Moves, Refusal> {
    let bad = |e: redist::RedistError| Refusal::Unsupported(format!("dfft's exchange: {e}"));
    let grid = ProcessGrid::new(&**comm, from.grid().clone()).map_err(bad)?;
    let plan = ExchangePlan::new(from, to).map_err(bad)?;
    let exchange = Exchange::new(&grid, &plan, redist::Method::default()).map_err(bad)?;
    Ok(match precision {
        Precision::F64 => Moves::F64(Mover::new(exchange, in_place)),
        Precision::F32 => Moves::F32(Mover::new(exchange, in_place)),
    })
}

impl crate::registry::Plan for TransposePlan {
    fn execute_on(&mut self, input: *mut c_void, output: *mut c_void) {
        let outcome = match &mut self.work {
            None => Ok(()),
            Some(Moves::F64(m)) => m.run(input, output),
            Some(Moves::F32(m)) => m.run(input, output),
        };
        if let Err(e) = outcome {
            crate::fatal(&format!("executing {}: {e}", self.describe()));
        }
    }

    fn arrays(&self) -> (*mut c_void, *mut c_void) {
        (self.input, self.output)
    }

    fn describe(&self) -> String {
        format!(
            "(dfft-mpi transpose {} x {} howmany {} on {} processes)",
            self.n[0], self.n[1], self.howmany, self.procs
        )
    }

    fn flops(&self) -> (f64, f64, f64) {
        (0.0, 0.0, 0.0)
    }
}
