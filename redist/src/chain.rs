//! Chains of single-dimension exchanges between any two block layouts (Birkeland & Sørøvik §3.2).

use crate::error::{RedistError, Result};
use crate::layout::Layout;
use crate::plan::ExchangePlan;

/// Plans a sequence of single-dimension exchanges that takes `from` to `to` (same array, same
/// grid; any decomposition and memory order). Each step moves one grid dimension to an axis
/// that is local at that moment; when the remaining moves form a cycle (e.g. decomposed
/// `[0, 1]` to `[1, 0]`), one grid dimension first parks on a free local axis. Intermediate
/// layouts use `to`'s memory order. Returns an empty chain when the layouts are equal; layouts that
/// differ only in memory order need a local transpose, not an exchange, and are an error.
///
/// ```
/// use redist::{chain::plan_chain, grid::GridShape, layout::{Layout, MemoryOrder}};
/// let grid = GridShape::new(vec![2, 2]).unwrap();
/// let from = Layout::pencil(&[6, 5, 4], grid.clone()).unwrap();
/// let to = Layout::new(&[6, 5, 4], grid, vec![1, 0], MemoryOrder::natural(3)).unwrap();
/// let chain = plan_chain(&from, &to).unwrap();
/// assert_eq!(chain.len(), 3); // a swap of two grid dimensions needs a parking step
/// assert_eq!(chain.last().unwrap().to(), &to);
/// ```
pub fn plan_chain(from: &Layout, to: &Layout) -> Result<Vec<ExchangePlan>> {
    from.check_compatible(to)?;
    if from.decomposed() == to.decomposed() && from.memory_order() != to.memory_order() {
        return Err(RedistError::LayoutMismatch {
            what: format!(
                "layouts differ only in memory order ({:?} vs {:?}); that is a local transpose, not an exchange",
                from.memory_order().axes(),
                to.memory_order().axes()
            ),
        });
    }
    let d = from.ndim();
    let r = from.grid().rank();
    let mut current = from.clone();
    let mut steps = Vec::new();
    // Each grid dimension moves at most twice, so 2r steps bound the loop.
    for _ in 0..=2 * r {
        let now = current.decomposed().to_vec();
        if now == to.decomposed() {
            break;
        }
        let is_free = |axis: usize| !now.contains(&axis);
        let next =
            match (0..r).find(|&j| now[j] != to.decomposed()[j] && is_free(to.decomposed()[j])) {
                Some(j) => {
                    let mut dec = now.clone();
                    dec[j] = to.decomposed()[j];
                    dec
                }
                None => {
                    // A cycle: park the first unfinished grid dimension on an axis that neither
                    // layout distributes (exists because r < d) or, failing that, any free axis.
                    let j = (0..r)
                        .find(|&j| now[j] != to.decomposed()[j])
                        .expect("unfinished");
                    let park = (0..d)
                        .find(|&a| is_free(a) && !to.decomposed().contains(&a))
                        .or_else(|| (0..d).find(|&a| is_free(a)))
                        .expect("r < d leaves a free axis");
                    let mut dec = now.clone();
                    dec[j] = park;
                    dec
                }
            };
        let layout = Layout::new(
            to.global_shape(),
            to.grid().clone(),
            next,
            to.memory_order().clone(),
        )?;
        steps.push(ExchangePlan::new(&current, &layout)?);
        current = layout;
    }
    debug_assert_eq!(current.decomposed(), to.decomposed());
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::GridShape;
    use crate::layout::MemoryOrder;

    #[test]
    fn every_pair_of_decompositions_is_reachable() {
        let shape = [3, 4, 5, 2];
        let grid = GridShape::new(vec![2, 3]).unwrap();
        let from = Layout::pencil(&shape, grid.clone()).unwrap();
        for a in 0..4 {
            for b in 0..4 {
                if a == b {
                    continue;
                }
                let to =
                    Layout::new(&shape, grid.clone(), vec![a, b], MemoryOrder::natural(4)).unwrap();
                let chain = plan_chain(&from, &to).unwrap();
                assert!(chain.len() <= 4);
                let mut data = crate::plan::tests_support::index_valued(&from);
                for step in &chain {
                    data = step.simulate(&data);
                }
                if chain.is_empty() {
                    assert_eq!(from.decomposed(), to.decomposed());
                } else {
                    assert_eq!(chain.last().unwrap().to(), &to);
                    assert_eq!(data, crate::plan::tests_support::index_valued(&to));
                }
            }
        }
    }
}
