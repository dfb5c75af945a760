//! `dfft run --steps`: the plan's per-step profile ([`fft_core::StepProfile`]) over all
//! ranks, as rows and as a table per direction.

use crate::report::StepRow;
use fft_core::StepProfile;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::CommunicatorCollectives;

/// Entry-wise `op` (max, min or sum) over ranks of `v` (the same length on every rank).
fn over_ranks(world: &SimpleCommunicator, v: &[f64], op: SystemOperation) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    world.all_reduce_into(v, &mut out[..], op);
    out
}

/// The rows of `profile` (this rank's; every rank runs the same steps): times per call max
/// over ranks (the exchanges' also min: a rank that waits far longer than another waits on
/// its slower partners, not on the network), bytes and flops summed; `copy`: the node's
/// memory bandwidth, if known. Collective.
pub fn rows(
    world: &SimpleCommunicator,
    profile: &[StepProfile],
    copy: Option<f64>,
) -> Vec<StepRow> {
    let per_call = |x: f64, s: &StepProfile| x / s.calls.max(1) as f64;
    let pick = |f: &dyn Fn(&StepProfile) -> f64| profile.iter().map(f).collect::<Vec<f64>>();
    let max = |f: &dyn Fn(&StepProfile) -> f64| over_ranks(world, &pick(f), SystemOperation::max());
    let seconds = max(&|s| per_call(s.seconds, s));
    let fft = max(&|s| per_call(s.stages.fft, s));
    let pack = max(&|s| per_call(s.stages.pack, s));
    let comm = max(&|s| per_call(s.stages.comm, s));
    let comm_min = over_ranks(
        world,
        &pick(&|s| per_call(s.stages.comm, s)),
        SystemOperation::min(),
    );
    let unpack = max(&|s| per_call(s.stages.unpack, s));
    let sum = |f: &dyn Fn(&StepProfile) -> f64| over_ranks(world, &pick(f), SystemOperation::sum());
    let bytes = sum(&|s| s.bytes() as f64);
    let flops = sum(&|s| s.flops);
    let total: f64 = seconds.iter().sum();
    let rate = |x: f64, t: f64| if t > 0.0 { x / t / 1e9 } else { 0.0 };
    profile
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let gb_per_s = rate(bytes[i], seconds[i]);
            StepRow {
                direction: s.direction.name(),
                index: s.index,
                kind: s.kind.name(),
                what: s.what.clone(),
                seconds: seconds[i],
                share: if total > 0.0 { seconds[i] / total } else { 0.0 },
                bytes: bytes[i] as u64,
                flops: flops[i],
                gb_per_s,
                gflop_per_s: rate(flops[i], seconds[i]),
                copy_fraction: copy.map(|c| gb_per_s * 1e9 / c),
                fft_s: fft[i],
                pack_s: pack[i],
                comm_s: comm[i],
                comm_min_s: comm_min[i],
                unpack_s: unpack[i],
            }
        })
        .collect()
}

/// A table per direction: step, ms per call, share of the pair, GB/s, Gflop/s, % of the
/// memory bandwidth (where known), ms in exchanges (communication and waiting; max and min
/// over ranks), what.
pub fn table(rows: &[StepRow]) -> String {
    let mut s = String::from(
        "  steps              per call, max over ranks; GB/s: bytes of the step's blocks \
         (read + written, all ranks) / time\n",
    );
    for direction in ["forward", "backward"] {
        s.push_str(&format!(
            "  {direction:<9} {:>2} {:>9} {:>6} {:>7} {:>8} {:>6} {:>8} {:>8}  what\n",
            "#", "ms", "share", "GB/s", "Gflop/s", "%copy", "comm ms", "min"
        ));
        for r in rows.iter().filter(|r| r.direction == direction) {
            let copy = r
                .copy_fraction
                .map_or("-".to_string(), |c| format!("{:.0}", 100.0 * c));
            s.push_str(&format!(
                "  {:<9} {:>2} {:>9.3} {:>5.1}% {:>7.2} {:>8.2} {:>6} {:>8.3} {:>8.3}  {}\n",
                "",
                r.index,
                1e3 * r.seconds,
                100.0 * r.share,
                r.gb_per_s,
                r.gflop_per_s,
                copy,
                1e3 * r.comm_s,
                1e3 * r.comm_min_s,
                r.what
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_a_line_per_step_under_its_direction() {
        let row = |direction, index, what: &str, copy| StepRow {
            direction,
            index,
            kind: "fft",
            what: what.to_string(),
            seconds: 0.002,
            share: 0.25,
            bytes: 4_000_000,
            flops: 1e7,
            gb_per_s: 2.0,
            gflop_per_s: 5.0,
            copy_fraction: copy,
            fft_s: 0.002,
            pack_s: 0.0,
            comm_s: 0.0005,
            comm_min_s: 0.0002,
            unpack_s: 0.0,
        };
        let rows = [
            row("forward", 0, "FFT along axes 2 and 1", Some(0.1)),
            row("backward", 0, "FFT along axis 0", None),
        ];
        let t = table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 5, "{t}");
        assert!(lines[1].starts_with("  forward"), "{t}");
        assert!(lines[2].ends_with("FFT along axes 2 and 1"), "{t}");
        assert!(
            lines[2].contains("2.000  25.0%    2.00     5.00     10    0.500    0.200"),
            "{t}"
        );
        assert!(lines[3].starts_with("  backward"), "{t}");
        assert!(
            lines[4].contains("     -    0.500    0.200  FFT along axis 0"),
            "{t}"
        );
    }
}
