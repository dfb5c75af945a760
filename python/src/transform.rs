//! What `dfft.PFFT` runs: the checked, collective call of one transform of its plan
//! ([`fft_core::AnyPlan`]) on numpy arrays without the GIL.

use crate::arrays::{new_array, Checked, Expect};
use crate::blocks::Blocks;
use crate::comm::{agree, collective};
use crate::errors::{fft_error, value_error};
use fft_core::SharedBlock;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use pyo3::prelude::*;
use redist::alloc::AlignedBuf;

/// A plan kind whose elements numpy holds: every [`fft_core::Transform`] of `f32`, `f64`
/// and their complex types.
pub(crate) trait Transform:
    fft_core::Transform<In: numpy::Element, Out: numpy::Element>
{
}

impl<P> Transform for P
where
    P: fft_core::Transform,
    P::In: numpy::Element,
    P::Out: numpy::Element,
{
}

/// What a transform needs from the plan object besides the Rust plan, borrowed apart from it.
pub(crate) struct Context<'a> {
    pub(crate) comm: &'a SimpleCommunicator,
    pub(crate) pool: Option<&'a rayon::ThreadPool>,
    /// The arrays `PFFT.alloc` made, to check that every rank passes the same one.
    pub(crate) blocks: &'a Blocks,
}

/// Moves borrowed state into the closure that runs without the GIL, possibly on a rayon
/// worker: MPI handles and raw windows are not `Send` in Rust's eyes.
pub(crate) struct AssertSend<T>(pub(crate) T);
// SAFETY: the wrapped references are used only while the calling thread blocks waiting for
// the closure (`Python::detach` runs it on this thread, `ThreadPool::install` on a worker while
// this thread waits), so no two threads touch them at once; MPI calls from a worker need
// MPI_THREAD_SERIALIZED, checked when the pool is made.
unsafe impl<T> Send for AssertSend<T> {}

impl<T> AssertSend<T> {
    pub(crate) fn into_inner(self) -> T {
        self.0
    }
}

/// Checks `input` (and `out`, or a new array) on every rank, agrees, and runs `step` without
/// the GIL. Returns the output array.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<'py, P, I, O>(
    py: Python<'py>,
    ctx: Context<'_>,
    plan: &mut P,
    input: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    names: (&str, &str),
    shapes: (&[usize], &[usize]),
    step: fn(&mut P, &[I], &mut [O]) -> fft_core::Result<()>,
) -> PyResult<Bound<'py, PyAny>>
where
    I: numpy::Element,
    O: numpy::Element,
{
    let rank = ctx.comm.rank();
    let want_in = Expect {
        what: names.0,
        shape: shapes.0,
        rank,
    };
    let want_out = Expect {
        what: names.1,
        shape: shapes.1,
        rank,
    };
    let target: Bound<'py, PyAny> = match out {
        Some(o) => o.clone(),
        None => new_array::<O>(py, shapes.1).into_any(),
    };
    let mut checked = Checked::<I, O>::new((&want_in, &want_out), input, &target);
    let local = crate::comm::thread_allowed(rank).and(checked.local.clone());
    let slices = checked.slices()?;
    let comm = ctx.comm;
    // Which of the plan's blocks the arrays are (`None` for other memory), once blocks exist.
    let blocks = ctx.blocks.any().then(|| {
        let at = |s: Option<usize>| s.and_then(|s| ctx.blocks.index_of(s));
        let starts = slices
            .as_ref()
            .map(|(i, o)| (i.as_ptr() as usize, o.as_ptr() as usize));
        [at(starts.map(|s| s.0)), at(starts.map(|s| s.1))]
    });
    let state = AssertSend((comm, ctx.pool, plan, slices));
    let outcome = py.detach(move || {
        let (comm, pool, plan, slices) = state.into_inner();
        collective(comm, move || -> Result<(), PyErrText> {
            match blocks {
                Some(blocks) => agree_on_blocks(comm, local, blocks, names),
                None => agree(comm, local),
            }
            .map_err(PyErrText::Value)?;
            let (src, dst) = slices.expect("checked on this rank");
            let work = AssertSend((plan, src, dst));
            let go = move || {
                let (plan, src, dst) = work.into_inner();
                step(plan, src, dst)
            };
            match pool {
                Some(pool) => {
                    let go = AssertSend(go);
                    pool.install(move || (go.into_inner())())
                }
                None => go(),
            }
            .map_err(PyErrText::Fft)
        })
    });
    drop(checked);
    match outcome {
        Ok(()) => Ok(target),
        Err(PyErrText::Value(m)) => Err(value_error(m)),
        Err(PyErrText::Fft(e)) => Err(fft_error(e)),
    }
}

/// `PFFT.time_rust`: `repeat` runs of one direction, after one untimed run, each after a
/// barrier, on arrays of `lens` elements that the plan allocates (`alloc`, as `PFFT.alloc`
/// does) or on private blocks like `PFFT.zeros` arrays; this rank's seconds per run. Collective.
pub(crate) fn time_runs<P: Transform>(
    plan: &mut P,
    ctx: Context<'_>,
    lens: (usize, usize),
    repeat: usize,
    backward: bool,
    alloc: bool,
) -> fft_core::Result<Vec<f64>> {
    let (mut a, mut b): (SharedBlock<P::In>, SharedBlock<P::Out>) = if alloc {
        (plan.alloc_input()?, plan.alloc_output()?)
    } else {
        // Private blocks as the plans allocate theirs and `PFFT.zeros` makes them: on a cache
        // line (a large `Vec` starts 16 bytes past one), advised to use huge pages.
        let (a, b) = (AlignedBuf::new(lens.0), AlignedBuf::new(lens.1));
        (a.into(), b.into())
    };
    // Written, not only allocated: a zeroed allocation that is only read maps the
    // kernel's single zero page, which reads faster than a caller's array.
    a.iter_mut()
        .for_each(|x| *x = std::hint::black_box(P::In::default()));
    b.iter_mut()
        .for_each(|x| *x = std::hint::black_box(P::Out::default()));
    let mut times = Vec::with_capacity(repeat + 1);
    // One untimed run first: the buffers' pages are touched, as a caller's are.
    for _ in 0..=repeat {
        // Each run starts together on every rank, as a caller's timing after a
        // barrier does: otherwise one run's skew between ranks counts in the next.
        ctx.comm.barrier();
        let mut step = || {
            let t = std::time::Instant::now();
            let r = if backward {
                plan.backward(&b, &mut a)
            } else {
                plan.forward(&a, &mut b)
            };
            r.map(|()| t.elapsed().as_secs_f64())
        };
        times.push(match ctx.pool {
            Some(pool) => {
                let step = AssertSend(step);
                pool.install(move || (step.into_inner())())?
            }
            None => step()?,
        });
    }
    // Keep the arrays alive and used so the runs cannot be optimized away.
    std::hint::black_box((&mut a, &mut b));
    times.remove(0);
    Ok(times)
}
/// [`agree`] on the checks of the arrays, and a check that where every rank passes one of the
/// plan's blocks ([`Blocks`]) as the input (or the output), it is the same block everywhere:
/// the plan would otherwise write into (or read from) the peers' regions of a block they are
/// not passing. Collective: one `MPI_Allreduce` of five integers when all is well.
fn agree_on_blocks(
    comm: &SimpleCommunicator,
    local: Result<(), String>,
    blocks: [Option<usize>; 2],
    names: (&str, &str),
) -> Result<(), String> {
    let (rank, size) = (i64::from(comm.rank()), i64::from(comm.size()));
    let failed = if local.is_err() { rank } else { size };
    let id = |b: Option<usize>| b.map_or(-1, |i| i as i64);
    // Minima as maxima of the negated values, so that one reduction does it all.
    let mine = [
        -failed,
        id(blocks[0]),
        -id(blocks[0]),
        id(blocks[1]),
        -id(blocks[1]),
    ];
    let mut most = [0i64; 5];
    comm.all_reduce_into(&mine[..], &mut most[..], SystemOperation::max());
    if -most[0] != size {
        // Some rank's arrays are wrong: its message, on every rank.
        return agree(comm, local);
    }
    for (side, what) in [(1, names.0), (3, names.1)] {
        let (high, low) = (most[side], -most[side + 1]);
        if low >= 0 && high != low {
            return Err(format!(
                "the ranks pass different arrays of the plan's alloc() as the {what} (those of \
                 calls {low} and {high}, counting from 0): pass the arrays of the same alloc() \
                 call on every rank"
            ));
        }
    }
    Ok(())
}

/// An error made without the GIL, turned into a Python exception after.
pub(crate) enum PyErrText {
    Value(String),
    Fft(fft_core::FftError),
}
