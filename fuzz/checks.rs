//! The properties the fuzz targets check, shared by the `cargo fuzz` targets in
//! `fuzz/fuzz_targets/` and the bounded run in the test suite (`fft-cli/tests/fuzz_inputs.rs`),
//! which includes this file with `#[path]`. Each function takes arbitrary bytes and panics
//! only when a property is violated; user input itself must never panic.

#![allow(dead_code)]

use fft_core::model::{resolve_grid, MachineProfile};
use fft_core::stages::{pipeline, Stage};
use fft_core::{GridChoice, Normalization};
use redist::chain::plan_chain;
use redist::{ExchangePlan, GridShape, Layout, MemoryOrder, Method};
use std::str::FromStr;

/// The `.npy` header parser never panics; a header it accepts re-encodes to one it reads back
/// identically.
pub fn npy_header(bytes: &[u8]) {
    if let Ok(header) = npyio::parse_header(bytes) {
        if !header.fortran_order {
            let again = npyio::parse_header(&npyio::encode_header(header.dtype, &header.shape))
                .expect("an encoded header parses");
            assert_eq!(again.dtype, header.dtype);
            assert_eq!(again.shape, header.shape);
        }
    }
}

/// The spec parsers (grid, grid choice, method, normalization, byte counts) never panic,
/// and what they accept is consistent.
pub fn specs(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    if let Ok(grid) = GridShape::parse(&text) {
        assert!(grid.dims().iter().all(|&d| d >= 1), "{text:?}: {grid:?}");
        assert!(grid.rank() >= 1);
    }
    if let Ok(method) = Method::from_str(&text) {
        assert_eq!(Method::from_str(method.name()).unwrap(), method);
    }
    if let Ok(GridChoice::Dims(dims)) = GridChoice::from_str(&text) {
        assert!(dims.iter().all(|&d| d >= 1), "{text:?}: {dims:?}");
    }
    if let Ok(GridChoice::Rank(r)) = GridChoice::from_str(&text) {
        assert!(r >= 1, "{text:?}");
    }
    let _ = Normalization::from_str(&text);
    let _ = fft_core::memory::parse_bytes(&text);
}

/// A little reader of fuzz bytes (zeros when they run out).
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    /// The next byte.
    pub fn byte(&mut self) -> usize {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b as usize
            }
            None => 0,
        }
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        let v = self.byte() | (self.byte() << 8);
        lo + v % (hi - lo + 1)
    }
}

/// Global indices plus one in every rank's block of `layout` (0 means "never written").
fn index_blocks(layout: &Layout) -> Vec<Vec<u64>> {
    (0..layout.grid().ranks())
        .map(|rank| {
            let mut block = vec![0u64; layout.local_len(rank)];
            layout.fill_index_valued(rank, &mut block, |g| g + 1);
            block
        })
        .collect()
}

/// Every global element is sent exactly once and lands at the right rank and offset: the
/// send and receive sizes add up to the blocks and the simulated result is the index data.
pub fn check_exactly_once(plan: &ExchangePlan) {
    let (from, to) = (plan.from(), plan.to());
    for rank in 0..from.grid().ranks() {
        let part = plan.for_rank(rank);
        assert_eq!(
            part.send_len + part.own().send_box.len(),
            from.local_len(rank)
        );
        assert_eq!(
            part.recv_len + part.own().recv_box.len(),
            to.local_len(rank)
        );
    }
    let dst = plan.simulate(&index_blocks(from));
    assert_eq!(dst, index_blocks(to), "from {from:?} to {to:?}");
}

/// Random shapes (d = 2..=4, extents 1..=12), process counts 1..=64 and grid choices: the
/// planners return a result or an error, never panic, and every exchange of the FFT pipeline
/// and of a chain between two random layouts passes the exactly-once check.
pub fn planners(bytes: &[u8]) {
    let mut b = Bytes(bytes);
    let d = b.range(2, 4);
    let shape: Vec<usize> = (0..d).map(|_| b.range(1, 12)).collect();
    let ranks = b.range(1, 64);
    let choice = match b.byte() % 4 {
        0 => GridChoice::Rank(b.range(0, 4)),
        1 => GridChoice::Dims((0..b.range(1, 3)).map(|_| b.range(0, 8)).collect()),
        2 => GridChoice::Rank(b.range(1, d - 1)),
        _ => GridChoice::Dims(
            redist::grid::factorizations(ranks, b.range(1, d - 1))
                .first()
                .cloned()
                .unwrap_or_default(),
        ),
    };
    let transposed = b.byte() % 2 == 1;
    let Ok(grid) = resolve_grid(&shape, ranks, &choice, &MachineProfile::default()) else {
        return;
    };
    assert_eq!(grid.ranks(), ranks, "{shape:?} {choice:?}");
    assert!(grid.rank() < d);
    let p = pipeline(&shape, grid.clone(), transposed).expect("a resolved grid has a pipeline");
    let _ = fft_core::memory::estimate_memory(&p, 16, 4);
    for stage in p.forward.iter().chain(&p.backward) {
        if let Stage::Exchange { from, to } = *stage {
            let plan = ExchangePlan::new(&p.layouts[from], &p.layouts[to])
                .expect("pipeline exchanges are single exchanges");
            check_exactly_once(&plan);
        }
    }
    // Two random layouts on the same grid (invalid ones must be errors, not panics).
    let r = grid.rank();
    let random_layout = |b: &mut Bytes| {
        let decomposed: Vec<usize> = (0..r).map(|_| b.range(0, d)).collect();
        let mut order: Vec<usize> = (0..d).collect();
        for i in (1..d).rev() {
            order.swap(i, b.range(0, i));
        }
        if b.byte().is_multiple_of(8) {
            order[0] = b.range(0, d + 1); // sometimes not a permutation
        }
        MemoryOrder::new(order).and_then(|o| Layout::new(&shape, grid.clone(), decomposed, o))
    };
    if let (Ok(from), Ok(to)) = (random_layout(&mut b), random_layout(&mut b)) {
        if let Ok(chain) = plan_chain(&from, &to) {
            for plan in &chain {
                check_exactly_once(plan);
            }
            if let Some(last) = chain.last() {
                assert_eq!(last.to().decomposed(), to.decomposed());
            }
        }
    }
}

/// Index data (global C-order index plus one) of every rank's block of `array` on `ranks`
/// processes.
fn dist_index_blocks(array: &redist::dist::DistArray, ranks: usize) -> Vec<Vec<u64>> {
    let shape = array.shape().to_vec();
    let mut blocks: Vec<Vec<u64>> = (0..ranks).map(|r| vec![0; array.local_len(r)]).collect();
    let total: usize = shape.iter().product();
    let mut index = vec![0; shape.len()];
    for global in 0..total {
        let mut rest = global;
        for k in (0..shape.len()).rev() {
            index[k] = rest % shape[k];
            rest /= shape[k];
        }
        let (rank, offset) = array.owner(&index);
        blocks[rank][offset] = global as u64 + 1;
    }
    blocks
}

/// The distribution-spec parser (`dfft redist` SPECs: grid, order, block-cyclic
/// distributions) never panics on arbitrary text; two random valid specs give a plan (or an
/// error) and every plan moves each element exactly once to its owner (simulated for all
/// ranks in one process). Returns whether a plan was checked.
pub fn dist_specs(bytes: &[u8]) -> bool {
    use redist::cyclic::plan::RedistPlan;
    use redist::dist::DistArray;
    let mut b = Bytes(bytes);
    let d = b.range(1, 3);
    let shape: Vec<usize> = (0..d).map(|_| b.range(1, 12)).collect();
    let text = String::from_utf8_lossy(b.0);
    let _ = DistArray::parse_spec(&text, &shape);
    // Two specs from pieces, so that most are valid.
    let spec = |b: &mut Bytes| {
        let dist = [
            "block",
            "balanced",
            "cyclic",
            "cyclic(1)",
            "cyclic(2)",
            "cyclic(5)",
            "*",
        ];
        let dims: Vec<String> = (0..d).map(|_| b.range(1, 3).to_string()).collect();
        let dists: Vec<&str> = (0..d).map(|_| dist[b.range(0, dist.len() - 1)]).collect();
        let order = if b.byte().is_multiple_of(2) {
            "row"
        } else {
            "col"
        };
        format!(
            "grid={},order={order},dist={}",
            dims.join("x"),
            dists.join(",")
        )
    };
    let (from_spec, to_spec) = (spec(&mut b), spec(&mut b));
    let (Ok(from), Ok(to)) = (
        DistArray::parse_spec(&from_spec, &shape),
        DistArray::parse_spec(&to_spec, &shape),
    ) else {
        return false;
    };
    let ranks = from.grid_size().max(to.grid_size()) + b.range(0, 2);
    let Ok(plan) = RedistPlan::new(&from, &to, ranks) else {
        return false;
    };
    let dst = plan.simulate(&dist_index_blocks(&from, ranks));
    assert_eq!(
        dst,
        dist_index_blocks(&to, ranks),
        "{from_spec} -> {to_spec} on {ranks} ranks, shape {shape:?}"
    );
    true
}
