//! How each fused step moves its pieces, as plain data: its pieces' parts of the exchanges
//! ([`Program::piece_parts`]) and, for a step that may go through a shared-memory window
//! over the exchanges' group, where every piece lies in that window
//! ([`Program::shared_plan`]). Pure; the plan binds them to its exchanges and windows.

use crate::kernels::RunMap;
use crate::program::{Fused, Program, SharedPlan};
use crate::real::Real;
use num_complex::Complex;
use redist::piecewise::Run;
use redist::plan::RankExchange;

impl<T: Real> Program<T> {
    /// Per piece of `fused`, this rank's parts of its exchanges before and after (see
    /// [`redist::plan::RankExchange::piece`]).
    pub(crate) fn piece_parts(&self, fused: &Fused<T>) -> Vec<[Option<RankExchange>; 2]> {
        let part = |e: Option<usize>, k: usize| {
            e.map(|e| {
                let plan = &self.exchanges[e].plan;
                plan.for_rank(self.rank).piece(fused.axis, fused.size, k)
            })
        };
        (0..fused.pieces.len())
            .map(|k| [part(fused.before, k), part(fused.after, k)])
            .collect()
    }

    /// Bytes per member of the window `fused` moves its pieces through ([`Fused::shared`]):
    /// the largest piece of the exchange before over all ranks (the same region layout
    /// everywhere), then this rank's largest piece of the exchange after.
    pub(crate) fn shared_bytes(&self, fused: &Fused<T>) -> usize {
        (fused.region.0 + fused.region.1) * std::mem::size_of::<Complex<T>>()
    }

    /// The pieces of `fused` in a shared-memory window over its exchanges' group with
    /// `region` complex elements per member (see [`SharedPlan`]): every peer packs or
    /// scatters its messages into its own region, the exchange before's from its start and
    /// the exchange after's from `fused.region.0` on.
    pub(crate) fn shared_plan(&self, fused: &Fused<T>, region: usize) -> SharedPlan {
        let (before, after) = (fused.before, fused.after);
        let after_offset = fused.region.0;
        let cut = (fused.axis, fused.size);
        let in_window = |e: usize, k: usize, base: usize| {
            let plan = &self.exchanges[e].plan;
            plan.piece_in_window(self.rank, (cut.0, cut.1, k), region, base)
        };
        let row = fused.kernel.row_len();
        let mut gather = vec![Run::UNSET; fused.gather.len()];
        let mut unpacks = Vec::new();
        for k in 0..fused.pieces.len() {
            if let Some(e) = before {
                let part = in_window(e, k, 0);
                assert!(
                    part.dst_runs_into(row, &mut gather),
                    "the same runs as the piece's"
                );
            }
            if let Some(e) = after {
                unpacks.push(in_window(e, k, after_offset));
            }
        }
        SharedPlan {
            gather: RunMap::new(gather, row),
            unpacks,
            after_offset,
        }
    }
}
