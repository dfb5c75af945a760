//! Batches split into groups ([`FftOptions::groups`]): K fields on P ranks transformed by G
//! groups of P/G consecutive ranks, group `g` taking fields `balanced_range(K, G, g)` on its
//! own sub-communicator (`MPI_Comm_split`), instead of all P ranks transforming all K fields
//! together. The caller sees the plain batched plan's layouts: every field distributed over
//! all P ranks. A forward call redistributes the K-field array into the groups' layout (group
//! `g`'s fields in its plan's input layout over its ranks: one general redistribution of the
//! array with a leading field axis, [`redist::cyclic`]), lets each group run its batched plan,
//! and redistributes the spectra back into the output layout over all P ranks; backward the
//! same the other way. [`crate::model::groups`] weighs the choice; `Groups::Auto` takes it.

use crate::engine::Engine;
use crate::error::{FftError, Result};
use crate::model::groups::predict_groups;
use crate::model::{evaluate_groups, Problem};
use crate::options::{FftOptions, GridChoice};
use crate::plan::Direction;
use crate::real::{as_complex, as_complex_mut, Real};
use crate::run::Source;
use crate::spec::Spec;
use crate::stages::Domain;
use mpi::collective::SystemOperation;
use mpi::topology::{Color, Communicator};
use mpi::traits::CommunicatorCollectives;
use num_complex::Complex;
use redist::alloc::AlignedBuf;
use redist::cyclic::plan::RedistPlan;
use redist::cyclic::run::{Redistribution, Schedule};
use redist::dist::{AxisDist, DistArray, GridOrder};
use redist::split::balanced_range;
use redist::{Element, Layout, StageTimes};

/// How a batch is split over the ranks ([`FftOptions::groups`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Groups {
    /// The complexity model picks the group count ([`crate::model::evaluate_groups`]); one
    /// group where the options rule groups out (see [`FftOptions::groups`]).
    Auto,
    /// Exactly this many groups: a divisor of the ranks, at most the fields; 1 is the plain
    /// batched plan.
    Fixed(usize),
}

impl Default for Groups {
    fn default() -> Self {
        Groups::Fixed(1)
    }
}

impl std::str::FromStr for Groups {
    type Err = String;
    /// `auto` or a group count ≥ 1.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "auto" => Ok(Groups::Auto),
            t => match t.parse::<usize>() {
                Ok(g) if g >= 1 => Ok(Groups::Fixed(g)),
                _ => Err(format!(
                    "bad group count '{s}': expected 'auto' or a number of groups >= 1"
                )),
            },
        }
    }
}

/// The options a split plan does not take, by name (the groups' layouts are plain C-order
/// pencils with balanced splits, what the redistribution into them expresses).
fn unsupported(options: &FftOptions) -> Option<&'static str> {
    [
        (options.in_place, "in_place"),
        (
            options.one_d.is_some(),
            "one_d (a distributed 1-D transform)",
        ),
        (options.transposed_out, "transposed_out"),
        (options.transposed_in, "transposed_in"),
        (options.input_blocks.is_some(), "input_blocks"),
        (options.output_blocks.is_some(), "output_blocks"),
    ]
    .into_iter()
    .find_map(|(set, name)| set.then_some(name))
}

/// The model's problem for `spec`: its physical shape over `ranks`, complex elements of
/// `element_bytes`.
fn problem(spec: &Spec, ranks: usize, element_bytes: usize) -> Problem {
    Problem {
        shape: spec.shape.physical.clone(),
        ranks,
        element_bytes,
        transposed_out: false,
        real_to_complex: spec.shape.domain == Domain::RealToComplex,
        windows: false,
    }
}

/// The group count and the groups' grid for `options` over `ranks` ranks (a pure function of
/// global arguments: every rank gets the same answer or the same error).
pub(crate) fn resolve(
    spec: &Spec,
    options: &FftOptions,
    ranks: usize,
    element_bytes: usize,
) -> Result<(usize, Vec<usize>)> {
    let fields = options.batch;
    let bad = |groups: usize, reason: String| FftError::BadGroups {
        groups,
        ranks,
        fields,
        reason,
    };
    let problem = problem(spec, ranks, element_bytes);
    match options.groups {
        Groups::Fixed(0) => Err(bad(0, "a batch needs at least one group".into())),
        Groups::Fixed(1) => Ok((1, Vec::new())),
        Groups::Fixed(g) => {
            if !ranks.is_multiple_of(g) {
                return Err(bad(
                    g,
                    format!("{ranks} ranks do not split into {g} equal groups"),
                ));
            }
            if g > fields {
                return Err(bad(g, format!("{g} groups need at least {g} fields")));
            }
            if let Some(name) = unsupported(options) {
                return Err(bad(g, format!("a split batch does not take {name}")));
            }
            let c = predict_groups(&problem, fields, g, None, &options.machine)?;
            Ok((g, c.grid))
        }
        Groups::Auto => {
            if fields < 2 || ranks < 2 || unsupported(options).is_some() || spec.one_d {
                return Ok((1, Vec::new()));
            }
            let physical = &spec.shape.physical;
            let plain =
                crate::model::resolve_grid(physical, ranks, &options.grid, &options.machine)?;
            let best = evaluate_groups(&problem, fields, Some(&plain), &options.machine)?;
            Ok((best[0].groups, best[0].grid.clone()))
        }
    }
}

/// A distributed array of `fields` fields of `layout` (a C-order pencil with balanced
/// splits) with a leading field axis, split over `groups` groups before the layout's grid:
/// what the redistributions move, in whole elements (complex ones for complex layouts). The
/// axes from `local_from` on, local on both sides of the redistribution, are one axis, so a
/// field's block moves as runs of all of them.
fn dist(layout: &Layout, fields: usize, groups: usize, local_from: usize) -> Result<DistArray> {
    let r = layout.grid().rank();
    let natural = layout.memory_order().is_natural()
        && layout.decomposed().iter().copied().eq(0..r)
        && layout.blocks().iter().all(Option::is_none);
    if !natural || local_from < r {
        return Err(FftError::BadOptions {
            shape: layout.global_shape().to_vec(),
            reason: format!("a split batch needs C-order pencil layouts, got {layout:?}"),
        });
    }
    let global = layout.global_shape();
    let mut shape = vec![fields];
    shape.extend_from_slice(&global[..local_from.min(global.len())]);
    if local_from < global.len() {
        shape.push(global[local_from..].iter().product());
    }
    let mut dists = vec![if groups > 1 {
        AxisDist::Balanced
    } else {
        AxisDist::Local
    }];
    dists.extend((1..shape.len()).map(|a| {
        if a <= r {
            AxisDist::Balanced
        } else {
            AxisDist::Local
        }
    }));
    let mut grid = if groups > 1 { vec![groups] } else { vec![] };
    grid.extend_from_slice(layout.grid().dims());
    Ok(DistArray::new(shape, grid, GridOrder::Row, dists)?)
}

/// Runs `m` on scalar buffers whose elements are complex (`complex`) or real.
fn execute<T: Real>(
    m: &mut Redistribution,
    complex: bool,
    (src, dst): (&[T], &mut [T]),
    (send, recv): (&mut [T], &mut [T]),
    times: &mut StageTimes,
) -> Result<()>
where
    Complex<T>: Element,
{
    if complex {
        let (send, recv) = (as_complex_mut(send), as_complex_mut(recv));
        m.execute_sized(as_complex(src), as_complex_mut(dst), send, recv, times)?;
    } else {
        m.execute_sized(src, dst, send, recv, times)?;
    }
    Ok(())
}

/// The runtime of a split plan: this rank's group's plan, the redistributions into and out
/// of the groups, and their buffers (in scalars).
pub(crate) struct Grouped<T: Real> {
    inner: Box<Engine<T>>,
    /// Forward in, forward out, backward in, backward out.
    moves: [Redistribution; 4],
    /// Whether each move's elements are complex (two scalars) or real.
    complex: [bool; 4],
    /// The group's blocks before and after its transform.
    blocks: [AlignedBuf<T>; 2],
    send: AlignedBuf<T>,
    recv: AlignedBuf<T>,
    /// Scalars of this rank's receive buffers in the shared windows (0 off one node).
    window: usize,
    /// This rank's elements of the caller's input and output (all K fields).
    pub(crate) lens: (usize, usize),
    pub(crate) groups: usize,
}

impl<T: Real> Grouped<T>
where
    Complex<T>: Element,
{
    /// Splits `outer`'s ranks into `groups` groups, plans each group's fields on `grid`, and
    /// the redistributions between `outer`'s layouts (all K fields over all ranks) and the
    /// groups'. Collective.
    pub(crate) fn new(
        outer: &Engine<T>,
        spec: &Spec,
        options: &FftOptions,
        groups: usize,
        grid: Vec<usize>,
    ) -> Result<Self> {
        let world = outer.grid.communicator();
        let (ranks, rank) = (world.size() as usize, world.rank() as usize);
        let per_group = ranks / groups;
        let g = rank / per_group;
        let fields = options.batch;
        let mine = balanced_range(fields, groups, g).len();
        let sub = world
            .split_by_color_with_key(Color::with_value(g as i32), rank as i32)
            .ok_or(redist::RedistError::Mpi {
                call: "MPI_Comm_split",
                code: -1,
            })?;
        let inner_options = FftOptions {
            batch: mine,
            groups: Groups::Fixed(1),
            grid: GridChoice::Dims(grid),
            destroy_input: true,
            ..options.clone()
        };
        let inner = Engine::new(&sub, spec.clone(), inner_options);
        // A group's plan may fail where another's does not (its fields, its memory): every
        // rank learns it before the collective calls below.
        let failed = i32::from(inner.is_err());
        let mut any = 0i32;
        world.all_reduce_into(&failed, &mut any, SystemOperation::max());
        let inner = match (inner, any) {
            (Err(e), _) => return Err(e),
            (Ok(_), 1..) => {
                return Err(FftError::BadGroups {
                    groups,
                    ranks,
                    fields,
                    reason: "another group's plan failed (see the other ranks' errors)".into(),
                })
            }
            (Ok(e), _) => Box::new(e),
        };
        assert_eq!(
            inner.grid.rank(),
            rank % per_group,
            "groups keep the numbering"
        );
        let (op, ip) = (&outer.pipeline, &inner.pipeline);
        let side = |outer_at: usize, inner_at: usize| -> Result<(DistArray, DistArray, bool)> {
            let (a, b) = (&op.layouts[outer_at], &ip.layouts[inner_at]);
            let local_from = a.grid().rank().max(b.grid().rank());
            Ok((
                dist(a, fields, 1, local_from)?,
                dist(b, fields, groups, local_from)?,
                !op.real[outer_at],
            ))
        };
        let (all_in, groups_in, c_in) = side(op.input, ip.input)?;
        let (all_out, groups_out, c_out) = side(op.output, ip.output)?;
        let complex = [c_in, c_out, c_out, c_in];
        let pairs = [
            (&all_in, &groups_in),
            (&groups_out, &all_out),
            (&all_out, &groups_out),
            (&groups_in, &all_in),
        ];
        // On one node each rank packs straight into its peers' shared window (made here,
        // not at the first call): two copies of what changes rank, none of them MPI's.
        let moves = pairs.map(|(from, to)| -> Result<Redistribution> {
            let plan = RedistPlan::new(from, to, ranks)?;
            Ok(Redistribution::new(world, &plan, Schedule::Shared)?)
        });
        let [a, b, c, d] = moves;
        let mut moves = [a?, b?, c?, d?];
        for (m, &complex) in moves.iter_mut().zip(&complex) {
            if complex {
                m.prepare_shared::<Complex<T>>()?;
            } else {
                m.prepare_shared::<T>()?;
            }
        }
        // Buffer lengths in scalars.
        let width = |c: bool| if c { 2 } else { 1 };
        let most = |f: fn(&Redistribution) -> usize| {
            moves
                .iter()
                .zip(&complex)
                .map(|(m, &c)| f(m) * width(c))
                .max()
                .unwrap_or(0)
        };
        let block = most(Redistribution::dst_len).max(most(Redistribution::src_len));
        let window: usize = moves
            .iter()
            .zip(&complex)
            .filter(|(m, _)| m.uses_shared_memory())
            .map(|(m, &c)| m.rank_part().recv_len * width(c))
            .sum();
        let lens = (
            fields * op.layouts[op.input].local_len(rank),
            fields * op.layouts[op.output].local_len(rank),
        );
        Ok(Self {
            blocks: [AlignedBuf::new(block), AlignedBuf::new(block)],
            send: AlignedBuf::new(most(Redistribution::send_len)),
            recv: AlignedBuf::new(most(Redistribution::recv_len)),
            window,
            lens,
            moves,
            complex,
            inner,
            groups,
        })
    }

    /// `Complex<T>` elements of memory this holds besides the caller's blocks.
    pub(crate) fn work_len(&self) -> usize {
        let scalars = self.blocks.iter().map(|b| b.len()).sum::<usize>()
            + self.send.len()
            + self.recv.len()
            + self.window;
        self.inner.work_len() + scalars.div_ceil(2)
    }

    /// This rank's group's plan.
    pub(crate) fn inner(&self) -> &Engine<T> {
        &self.inner
    }

    pub(crate) fn inner_mut(&mut self) -> &mut Engine<T> {
        &mut self.inner
    }

    /// Threads of the group's plan.
    pub(crate) fn threads(&self) -> usize {
        self.inner.threads()
    }

    /// One direction: `input` (scalars of all K fields in the caller's layout) into the
    /// groups, each group's plan, and back into `output`. Collective; allocates nothing.
    pub(crate) fn transform(
        &mut self,
        direction: Direction,
        input: &[T],
        output: &mut [T],
        times: &mut StageTimes,
    ) -> Result<()> {
        let (into, out_of) = match direction {
            Direction::Forward => (0, 1),
            Direction::Backward => (2, 3),
        };
        let scalars = |at: usize, len: usize| len * if self.complex[at] { 2 } else { 1 };
        let x_len = scalars(into, self.moves[into].dst_len());
        let y_len = scalars(out_of, self.moves[out_of].src_len());
        let [x, y] = &mut self.blocks;
        let (x, y) = (&mut x[..x_len], &mut y[..y_len]);
        let (send, recv) = (&mut self.send[..], &mut self.recv[..]);
        let m = &mut self.moves[into];
        execute(m, self.complex[into], (input, x), (send, recv), times)?;
        self.inner
            .transform_scalars(direction, Source::Write(x), y)?;
        times.add(&self.inner.times);
        self.inner.times = StageTimes::default();
        let m = &mut self.moves[out_of];
        execute(m, self.complex[out_of], (y, output), (send, recv), times)?;
        Ok(())
    }
}
