//! The pure half of `dfft calibrate`: the network parameters of a machine profile fitted to
//! timed all-to-alls. No MPI here, so the fit is tested on samples made from known
//! parameters.
//!
//! Every sample is one `MPI_Alltoall` (or ping-pong) of `bytes` per peer in groups that all
//! run at once; it says how many of a member's peers sit on its node (`intra_peers`), how many
//! beyond (`inter_peers`) and how many ranks of one node send beyond it at once
//! (`node_ranks`). The model of one sample is the model of one exchange:
//!
//! `T = c + intra·ts_intra + inter·ts_inter + combine(intra·m·tw_intra,
//!      max(inter·m·tw_inter, node_ranks·inter·m·tw_node))`
//!
//! with `combine(a, b) = max(a, b) + (1 − overlap)·min(a, b)`. The fit takes, in order:
//! `c`, `ts_intra`, `tw_intra` from groups inside one node; `ts_inter`, `tw_inter` from one
//! rank per node (the node leaders); `tw_node` from all ranks of every node at once (groups of
//! equal local rank); the overlap from the whole world (intra and inter at once).

use serde::Serialize;

/// One timing sample of the communication fit.
#[derive(Debug, Clone, Serialize)]
pub struct CommSample {
    /// "pingpong", "alltoall" (consecutive ranks), "leaders" (one rank per node) or
    /// "nodes" (ranks of equal local rank, one per node, every node's ranks at once).
    pub kind: &'static str,
    /// Group size k.
    pub group: usize,
    /// Bytes per message.
    pub bytes: usize,
    /// Seconds (ping-pong: one way; otherwise one call), max over ranks.
    pub seconds: f64,
    /// Peers of a member on its own node (for the group of world rank 0).
    pub intra_peers: usize,
    /// Peers of a member on other nodes.
    pub inter_peers: usize,
    /// Ranks of one node that send beyond it at the same time.
    pub node_ranks: usize,
}

/// The fitted network parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NetworkFit {
    /// Fixed cost of one collective call, seconds.
    pub exchange_overhead_s: f64,
    /// Latency inside a node, seconds.
    pub ts_intra_s: f64,
    /// Inverse bandwidth inside a node, seconds per byte.
    pub tw_intra_s_per_byte: f64,
    /// Latency between nodes, seconds.
    pub ts_inter_s: f64,
    /// Inverse bandwidth of one rank's messages between nodes, seconds per byte.
    pub tw_inter_s_per_byte: f64,
    /// Inverse injection bandwidth of a node, seconds per byte.
    pub tw_node_s_per_byte: f64,
    /// Overlap of intra- and inter-node transfers (0..=1).
    pub intra_inter_overlap: f64,
    /// Whether the inter-node values were measured (several nodes) or copied from the
    /// intra-node ones (one node).
    pub inter_measured: bool,
    /// Root mean square relative error of the model over every all-to-all sample.
    pub rms_relative_error: f64,
}

/// Least squares of `t ≈ Σ c_i·x_i` (three columns) on relative errors, with every
/// coefficient ≥ 0: the best fit over the subsets of columns whose unconstrained solution is
/// non-negative. Returns (coefficients, rms relative error).
pub fn fit_nonnegative(rows: &[([f64; 3], f64)]) -> Option<([f64; 3], f64)> {
    if rows.len() < 2 {
        return None;
    }
    let err = |c: &[f64; 3]| -> f64 {
        (rows
            .iter()
            .map(|(x, t)| ((c[0] * x[0] + c[1] * x[1] + c[2] * x[2] - t) / t).powi(2))
            .sum::<f64>()
            / rows.len() as f64)
            .sqrt()
    };
    let mut best: Option<([f64; 3], f64)> = None;
    for mask in 1u32..8 {
        let cols: Vec<usize> = (0..3).filter(|i| mask & (1 << i) != 0).collect();
        let k = cols.len();
        // Normal equations with weights 1/t² (relative errors), solved by Gauss–Jordan.
        let mut a = vec![vec![0.0f64; k + 1]; k];
        for (x, t) in rows {
            let w = 1.0 / (t * t).max(1e-30);
            for (i, &ci) in cols.iter().enumerate() {
                for (j, &cj) in cols.iter().enumerate() {
                    a[i][j] += w * x[ci] * x[cj];
                }
                a[i][k] += w * x[ci] * t;
            }
        }
        let mut ok = true;
        for i in 0..k {
            let pivot = (i..k).max_by(|&p, &q| a[p][i].abs().total_cmp(&a[q][i].abs()));
            let Some(p) = pivot.filter(|&p| a[p][i].abs() > 1e-300) else {
                ok = false;
                break;
            };
            a.swap(i, p);
            let pivot_row = a[i].clone();
            for (r, row) in a.iter_mut().enumerate() {
                if r != i {
                    let f = row[i] / pivot_row[i];
                    for (x, &y) in row.iter_mut().zip(&pivot_row).skip(i) {
                        *x -= f * y;
                    }
                }
            }
        }
        if !ok {
            continue;
        }
        let mut coef = [0.0f64; 3];
        for (i, &ci) in cols.iter().enumerate() {
            coef[ci] = a[i][k] / a[i][i];
        }
        if coef.iter().any(|&c| c.is_nan() || c < 0.0) {
            continue;
        }
        let e = err(&coef);
        if best.as_ref().is_none_or(|(_, b)| e < *b) {
            best = Some((coef, e));
        }
    }
    best
}

impl NetworkFit {
    /// The model's time of `s` with these parameters.
    pub fn time(&self, s: &CommSample) -> f64 {
        let m = s.bytes as f64;
        let (intra, inter) = (s.intra_peers as f64, s.inter_peers as f64);
        let i = intra * m * self.tw_intra_s_per_byte;
        let e = (inter * m * self.tw_inter_s_per_byte)
            .max(s.node_ranks as f64 * inter * m * self.tw_node_s_per_byte);
        let call = if s.kind == "pingpong" {
            0.0
        } else {
            self.exchange_overhead_s
        };
        call + intra * self.ts_intra_s
            + inter * self.ts_inter_s
            + i.max(e)
            + (1.0 - self.intra_inter_overlap) * i.min(e)
    }
}

/// Fits the network parameters to `samples` (see the module comment); `defaults` fills what
/// the samples cannot tell (no samples: one rank). Intra-node values are divided by
/// `oversubscription` (ranks on a node per core): the model multiplies them back for the
/// ranks it plans.
pub fn fit_network(
    samples: &[CommSample],
    oversubscription: f64,
    defaults: &fft_core::model::MachineProfile,
) -> NetworkFit {
    let of = |kind: &'static str| samples.iter().filter(move |s| s.kind == kind);
    // Inside a node: groups with no peer beyond it. With a single group size the call and
    // message columns are collinear: ts only, no call column.
    let intra: Vec<&CommSample> = of("alltoall").filter(|s| s.inter_peers == 0).collect();
    let mut sizes: Vec<usize> = intra.iter().map(|s| s.group).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let separable = sizes.len() > 1;
    let rows: Vec<([f64; 3], f64)> = intra
        .iter()
        .map(|s| {
            let peers = s.intra_peers as f64;
            let calls = if separable { 1.0 } else { 0.0 };
            ([calls, peers, peers * s.bytes as f64], s.seconds)
        })
        .collect();
    let (c, ts_intra, tw_intra) = match fit_nonnegative(&rows) {
        Some((k, _)) => (k[0], k[1], k[2]),
        None => (
            defaults.exchange_overhead_s * oversubscription,
            defaults.ts_intra_s * oversubscription,
            defaults.tw_intra_s_per_byte * oversubscription,
        ),
    };
    let mut fit = NetworkFit {
        exchange_overhead_s: c / oversubscription,
        ts_intra_s: ts_intra / oversubscription,
        tw_intra_s_per_byte: tw_intra / oversubscription,
        ts_inter_s: ts_intra / oversubscription,
        tw_inter_s_per_byte: tw_intra / oversubscription,
        tw_node_s_per_byte: 0.0,
        intra_inter_overlap: 0.0,
        inter_measured: false,
        rms_relative_error: 0.0,
    };
    // Between nodes, one rank per node: what is left after the call's fixed cost.
    let rows: Vec<([f64; 3], f64)> = of("leaders")
        .filter(|s| s.inter_peers > 0 && s.seconds > c)
        .map(|s| {
            let peers = s.inter_peers as f64;
            ([0.0, peers, peers * s.bytes as f64], s.seconds - c)
        })
        .collect();
    if let Some((k, _)) = fit_nonnegative(&rows) {
        fit.ts_inter_s = k[1];
        fit.tw_inter_s_per_byte = k[2];
        fit.inter_measured = true;
        // Every node's ranks at once, from the largest messages (the least latency-bound):
        // what the node's interface carries per second.
        fit.tw_node_s_per_byte = of("nodes")
            .filter(|s| s.inter_peers > 0)
            .max_by_key(|s| s.bytes)
            .map_or(fit.tw_inter_s_per_byte, |s| {
                let peers = s.inter_peers as f64;
                let transfer = s.seconds - c - peers * fit.ts_inter_s;
                (transfer / (s.node_ranks as f64 * peers * s.bytes as f64)).max(0.0)
            });
        // Intra- and inter-node transfers at once: how much of the shorter one the longer hides.
        if let Some(s) = of("alltoall")
            .filter(|s| s.inter_peers > 0 && s.intra_peers > 0)
            .max_by_key(|s| (s.group, s.bytes))
        {
            let m = s.bytes as f64;
            let i = s.intra_peers as f64 * m * fit.tw_intra_s_per_byte;
            let e = (s.inter_peers as f64 * m * fit.tw_inter_s_per_byte)
                .max(s.node_ranks as f64 * s.inter_peers as f64 * m * fit.tw_node_s_per_byte);
            let transfer = s.seconds
                - c
                - s.intra_peers as f64 * fit.ts_intra_s
                - s.inter_peers as f64 * fit.ts_inter_s;
            if i.min(e) > 0.0 {
                fit.intra_inter_overlap = (1.0 - (transfer - i.max(e)) / i.min(e)).clamp(0.0, 1.0);
            }
        }
    }
    let errors: Vec<f64> = samples
        .iter()
        .filter(|s| s.kind != "pingpong")
        .map(|s| (fit.time(s) - s.seconds) / s.seconds)
        .collect();
    if !errors.is_empty() {
        fit.rms_relative_error =
            (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt();
    }
    fit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_exact_parameters() {
        let (c, ts, tw) = (5e-6, 2e-6, 3e-10);
        let rows: Vec<([f64; 3], f64)> = [1usize, 3, 7]
            .iter()
            .flat_map(|&k| {
                [8.0, 1024.0, 1e6].map(move |m| {
                    let x = k as f64;
                    ([1.0, x, x * m], c + x * (ts + tw * m))
                })
            })
            .collect();
        let (coef, e) = fit_nonnegative(&rows).unwrap();
        for (got, want) in coef.iter().zip([c, ts, tw]) {
            assert!((got / want - 1.0).abs() < 1e-6, "{coef:?}");
        }
        assert!(e < 1e-9);
        assert!(fit_nonnegative(&rows[..1]).is_none());
        // A negative unconstrained intercept is dropped, not returned.
        let rows: Vec<([f64; 3], f64)> = [1.0, 2.0, 4.0]
            .map(|x| ([1.0, x, 0.0], 3.0 * x - 0.5))
            .to_vec();
        let (coef, _) = fit_nonnegative(&rows).unwrap();
        assert!(coef.iter().all(|&v| v >= 0.0) && coef[0] == 0.0, "{coef:?}");
    }

    /// Samples of 4 nodes × 2 ranks made by the model itself give back its parameters: the
    /// node's shared interface (half a rank's own link rate for both ranks together) and a
    /// partial overlap included.
    #[test]
    fn network_fit_recovers_a_cluster() {
        let truth = NetworkFit {
            exchange_overhead_s: 4e-6,
            ts_intra_s: 1e-6,
            tw_intra_s_per_byte: 2e-10,
            ts_inter_s: 3e-5,
            tw_inter_s_per_byte: 8e-9,
            tw_node_s_per_byte: 6e-9,
            intra_inter_overlap: 0.25,
            inter_measured: true,
            rms_relative_error: 0.0,
        };
        let (nodes, rpn) = (4usize, 2usize);
        let mut samples = Vec::new();
        for m in [8usize, 16 << 10, 256 << 10] {
            let mut add = |kind, group, intra_peers, inter_peers, node_ranks| {
                let mut s = CommSample {
                    kind,
                    group,
                    bytes: m,
                    seconds: 0.0,
                    intra_peers,
                    inter_peers,
                    node_ranks,
                };
                s.seconds = truth.time(&s);
                samples.push(s);
            };
            add("alltoall", 2, 1, 0, 0);
            add("alltoall", 1, 0, 0, 0);
            add("alltoall", 4, 1, 2, 2);
            add("alltoall", 8, 1, 6, 2);
            add("leaders", nodes, 0, nodes - 1, 1);
            add("nodes", nodes, 0, nodes - 1, rpn);
        }
        let fit = fit_network(&samples, 1.0, &fft_core::model::MachineProfile::default());
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1e-12);
        assert!(fit.inter_measured);
        for (got, want) in [
            (fit.exchange_overhead_s, truth.exchange_overhead_s),
            (fit.ts_intra_s, truth.ts_intra_s),
            (fit.tw_intra_s_per_byte, truth.tw_intra_s_per_byte),
            (fit.ts_inter_s, truth.ts_inter_s),
            (fit.tw_inter_s_per_byte, truth.tw_inter_s_per_byte),
            (fit.tw_node_s_per_byte, truth.tw_node_s_per_byte),
            (fit.intra_inter_overlap, truth.intra_inter_overlap),
        ] {
            assert!(close(got, want), "{got:e} vs {want:e}: {fit:?}");
        }
        assert!(fit.rms_relative_error < 1e-6, "{fit:?}");
    }
}
