use super::cost::common_run;
use super::*;
use crate::stages::pipeline;

/// Powers of two, so the sums below are exact in binary floating point.
const TS: f64 = 1.0 / (1u64 << 20) as f64;
const TW: f64 = 1.0 / (1u64 << 30) as f64;

fn seed_problem(n: usize, d: usize, ranks: usize, transposed_out: bool) -> Problem {
    Problem {
        shape: vec![n; d],
        ranks,
        element_bytes: 1, // tw per data item, as in the seed
        transposed_out,
        real_to_complex: false,
        windows: false,
    }
}

/// Birkeland & Sørøvik, "Parallel Redistribution of Multidimensional Data", (5.2) and
/// (5.3), exact forms, for equal N, equal p and N mod p = 0.
#[test]
fn reproduces_seed_w1_and_w2_exactly() {
    let profile = MachineProfile::network_only(TS, TW);
    for (n, d, p, r) in [
        (64usize, 3usize, 4usize, 2usize),
        (32, 3, 2, 2),
        (16, 4, 2, 3),
        (16, 4, 4, 2),
        (12, 2, 3, 1),
    ] {
        let nd = (n as f64).powi(d as i32);
        let pf = p as f64;
        let w1 = r as f64 * (pf - 1.0) * (TS + TW * nd / pf.powi(r as i32 + 1));
        let big_p = p.pow(r as u32);
        let q = big_p as f64;
        let w2 = (q - 1.0) * (TS + TW * nd / (q * q));
        for (transposed, sweeps) in [(false, 4.0), (true, 2.0)] {
            let grid = GridShape::new(vec![p; r]).unwrap();
            let pr = predict(&seed_problem(n, d, big_p, transposed), &grid, &profile).unwrap();
            assert_eq!(pr.predicted_s, sweeps * w1, "W1 n={n} d={d} p={p} r={r}");
            assert_eq!(pr.latency_s, sweeps * r as f64 * (pf - 1.0) * TS);
            assert_eq!((pr.fft_s, pr.memory_s), (0.0, 0.0));
            let slab = GridShape::new(vec![big_p]).unwrap();
            if big_p <= n {
                let pr = predict(&seed_problem(n, d, big_p, transposed), &slab, &profile).unwrap();
                assert_eq!(pr.predicted_s, sweeps * w2, "W2 n={n} d={d} P={big_p}");
                assert_eq!(pr.exchanges, sweeps as usize);
            }
        }
    }
}

/// 5×3 on a slab of 2, by hand: L0 rows 3|2, L1 columns 2|1. Rank 0 sends 3·1 = 3 and
/// receives 2·2 = 4 elements, rank 1 sends 2·2 = 4 and receives 3·1 = 3; one message each.
/// Each of the 4 exchanges of a pair costs ts + 4·tw.
#[test]
fn uneven_slab_by_hand() {
    let profile = MachineProfile::network_only(1.0, 1.0);
    let problem = Problem {
        shape: vec![5, 3],
        ranks: 2,
        element_bytes: 1,
        transposed_out: false,
        real_to_complex: false,
        windows: false,
    };
    let pr = predict(&problem, &GridShape::new(vec![2]).unwrap(), &profile).unwrap();
    assert_eq!(pr.latency_s, 4.0);
    assert_eq!(pr.bandwidth_s, 16.0);
    assert_eq!(pr.predicted_s, 20.0);
    assert_eq!((pr.messages, pr.bytes, pr.idle_ranks), (4, 16, 0));
    // Compute terms by hand: 16 bytes per element, 1 s per element·log2 n, 8 B/s copies.
    let mut profile = MachineProfile::network_only(0.0, 0.0);
    profile.fft_s_per_element_log2 = 1.0;
    profile.copy_bytes_per_s = 8.0;
    profile.stream_bytes_per_s = 8.0;
    let problem = Problem::new(&[4, 2], 1);
    let pr = predict(&problem, &GridShape::new(vec![1]).unwrap(), &profile).unwrap();
    // FFT: 2 axes × 2 directions × 8 elements × log2 n (1 for n = 2, 2 for n = 4).
    assert_eq!(pr.fft_s, 2.0 * 8.0 * (1.0 + 2.0));
    // One rank: one pencil, no exchange. Axis 1 is contiguous; the sweep along axis 0 is
    // strided, but with one copy rate for every run length its tile gather and scatter
    // cost nothing beyond the FFT's own pass.
    assert_eq!(pr.exchanges, 0);
    assert_eq!(pr.memory_s, 0.0);
    // Contiguous copies 4× faster than single elements (0.25 s/B vs 1 s/B): the tile rows
    // are runs of 2 elements (the row of axis 1), 0.75/2 s/B extra for gather and scatter
    // of 8 elements × 16 B in each direction.
    profile.copy_bytes_per_s = 1.0;
    profile.stream_bytes_per_s = 4.0;
    let pr = predict(&problem, &GridShape::new(vec![1]).unwrap(), &profile).unwrap();
    assert_eq!(pr.memory_s, 2.0 * 2.0 * 8.0 * 16.0 * (0.75 / 2.0));
}

/// Runs contiguous on both sides of a box copy.
#[test]
fn common_runs_by_hand() {
    // 2×3 box of a 2×6 row-major block into a compact row-major message: runs of 3.
    assert_eq!(common_run(&[2, 3], &[6, 1], &[3, 1]), 3);
    // The whole block: one run of 12.
    assert_eq!(common_run(&[2, 6], &[6, 1], &[6, 1]), 12);
    // Into column-major: a transpose, single elements.
    assert_eq!(common_run(&[2, 3], &[3, 1], &[1, 4]), 1);
    // Axes of extent 1 do not break a run; slab rows (memory order 1,0,2) keep axis 2.
    assert_eq!(common_run(&[1, 3, 5], &[100, 5, 1], &[7, 5, 1]), 15);
    assert_eq!(common_run(&[2, 3, 5], &[15, 5, 1], &[5, 10, 1]), 5);
}

/// Pack runs versus transposing unpacks, by hand. 4×6 on a slab of 2 (2-D: L1 splits
/// axis 1 in memory order 1,0). Rank 0 owns rows 0..2 (L0) and columns 0..3 (L1).
/// L0→L1: the message to rank 1 is rows 0..2 × columns 3..6 of a 2×6 row-major block,
/// runs of 3; the unpack goes into column-major order, single elements. L1→L0: the
/// message (column-major, rows 2..4 × columns 0..3 of a 4×3 column-major block) has runs
/// of 2; the unpack transposes back. 6 elements of 16 B each. The plan fuses every FFT
/// step with the exchange on its far side: the forward's FFTs write the messages and the
/// own part (no pack, no own copy), the backward's read them (no unpack, no own copy).
#[test]
fn copies_are_charged_by_run_length() {
    let mut profile = MachineProfile::network_only(0.0, 0.0);
    profile.copy_bytes_per_s = 1.0; // 1 s/B for single elements
    profile.stream_bytes_per_s = 4.0; // 0.25 s/B for long runs
    let problem = Problem::new(&[4, 6], 2);
    let pipe = pipeline(&[4, 6], GridShape::new(vec![2]).unwrap(), false).unwrap();
    let (pack, unpack) = (
        Fusion {
            pack: true,
            unpack: false,
            pieces: 1,
            window: false,
        },
        Fusion {
            pack: false,
            unpack: true,
            pieces: 1,
            window: false,
        },
    );
    let none = Fusion::default();
    let forward = fusions(&pipe.forward, &pipe, 16).unwrap();
    assert_eq!(forward, vec![none, pack, none, pack]);
    let backward = fusions(&pipe.backward, &pipe, 16).unwrap();
    assert_eq!(backward, vec![unpack, none, unpack, none]);
    let pr = predict(&problem, &GridShape::new(vec![2]).unwrap(), &profile).unwrap();
    let bytes = 6.0 * 16.0;
    let run = |len: f64| bytes * (0.25 + 0.75 / len);
    // Forward: two transposing unpacks; backward: the packs, runs of 3 then of 2.
    let expected = 2.0 * bytes + run(3.0) + run(2.0);
    assert_eq!((pr.exchanges, pr.fft_s), (4, 0.0));
    assert!(
        (pr.memory_s - expected).abs() <= 1e-12 * expected,
        "{} vs {expected}",
        pr.memory_s
    );
    // Without a separate stream rate every copy is a single-element one.
    profile.stream_bytes_per_s = 1.0;
    let pr = predict(&problem, &GridShape::new(vec![2]).unwrap(), &profile).unwrap();
    assert_eq!(pr.memory_s, 4.0 * bytes);
}

/// Ranks sharing cores, by hand: 3×2 on a slab of 2, FFT 1 s per element·log2 n, tw
/// 1 s/B, 1-byte elements. L0 rows 2|1 (axis 1, n = 2: 4 and 2 elements), L1 columns 1|1
/// (axis 0, n = 3: 3 elements each). Each exchange: both ranks move 2 elements (the
/// larger of send and receive).
#[test]
fn shared_cores_charge_the_mean_rank() {
    let mut profile = MachineProfile::network_only(0.0, 1.0);
    profile.fft_s_per_element_log2 = 1.0;
    profile.ranks_per_node = 2;
    let problem = Problem {
        shape: vec![3, 2],
        ranks: 2,
        element_bytes: 1,
        transposed_out: false,
        real_to_complex: false,
        windows: false,
    };
    let grid = GridShape::new(vec![2]).unwrap();
    let log3 = 3f64.log2();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
    // A core per rank: the most loaded rank sets the time (4 + 3·log2 3 per direction).
    profile.cores_per_node = 2;
    let pr = predict(&problem, &grid, &profile).unwrap();
    assert!(close(pr.fft_s, 2.0 * (4.0 + 3.0 * log3)), "{}", pr.fft_s);
    assert_eq!(pr.bandwidth_s, 4.0 * 2.0);
    // One core for both ranks: the mean rank's work twice (3 · 2 and 3·log2 3 · 2); the
    // most loaded rank's 4 alone would be less.
    profile.cores_per_node = 1;
    let pr = predict(&problem, &grid, &profile).unwrap();
    assert!(close(pr.fft_s, 2.0 * (6.0 + 6.0 * log3)), "{}", pr.fft_s);
    // Shared-memory transfers share the core too: 2 elements × 2 ranks per exchange.
    assert_eq!(pr.bandwidth_s, 4.0 * 4.0);
}

/// The exchange terms against `ExchangePlan::for_rank` for every rank: the most loaded
/// rank's ts·messages, tw·bytes and copies (each term's own maximum), summed over the
/// exchanges of a pair.
#[test]
fn exchange_costs_match_exchange_plans_for_every_rank() {
    let shapes: [&[usize]; 6] = [
        &[11, 7, 13],
        &[16, 21, 41],
        &[9, 7, 5, 12],
        &[3, 20, 6],
        &[12, 10],
        &[5, 3],
    ];
    let mut profile = MachineProfile::network_only(1.0, 0.01);
    profile.copy_bytes_per_s = 1000.0;
    profile.stream_bytes_per_s = 1000.0;
    for shape in shapes {
        for ranks in 1..=12 {
            for grid in candidates(shape, ranks) {
                for transposed_out in [false, true] {
                    let problem = Problem {
                        shape: shape.to_vec(),
                        ranks,
                        element_bytes: 16,
                        transposed_out,
                        real_to_complex: false,
                        windows: false,
                    };
                    let pipe = pipeline(shape, grid.clone(), transposed_out).unwrap();
                    let mut expected = 0.0;
                    let fused: Vec<Fusion> = fusions(&pipe.forward, &pipe, 16)
                        .unwrap()
                        .into_iter()
                        .chain(fusions(&pipe.backward, &pipe, 16).unwrap())
                        .collect();
                    for (stage, fusion) in pipe.forward.iter().chain(&pipe.backward).zip(&fused) {
                        let Stage::Exchange { from, to } = *stage else {
                            continue;
                        };
                        let plan =
                            ExchangePlan::new(&pipe.layouts[from], &pipe.layouts[to]).unwrap();
                        // Each term for its most loaded rank.
                        let worst = (0..ranks)
                            .map(|rank| {
                                let part = plan.for_rank(rank);
                                let others = || {
                                    part.peers
                                        .iter()
                                        .filter(move |p| p.peer != part.group_index)
                                };
                                let sm = others().filter(|p| !p.send_box.is_empty()).count();
                                let rm = others().filter(|p| !p.recv_box.is_empty()).count();
                                let own = part.own().send_box.len();
                                let copied = if fusion.pack { 0 } else { part.send_len }
                                    + if fusion.unpack { 0 } else { part.recv_len }
                                    + if fusion.pack || fusion.unpack { 0 } else { own };
                                [
                                    sm.max(rm) as f64 * 1.0,
                                    part.send_len.max(part.recv_len) as f64 * 16.0 * 0.01,
                                    copied as f64 * 16.0 / 1000.0,
                                ]
                            })
                            .fold([0.0f64; 3], |m, t| {
                                [m[0].max(t[0]), m[1].max(t[1]), m[2].max(t[2])]
                            });
                        expected += worst.iter().sum::<f64>();
                    }
                    let pr = predict(&problem, &grid, &profile).unwrap();
                    // One copy rate: strided sweeps add nothing to the memory term.
                    let got = pr.latency_s + pr.bandwidth_s + pr.memory_s;
                    assert!(
                        (got - expected).abs() <= 1e-9 * expected.max(1.0),
                        "{shape:?} grid {grid} transposed {transposed_out}: {got} vs {expected}"
                    );
                }
            }
        }
    }
}

/// Node placement against brute force: for every member of rank 0's group in every
/// exchange, its peers on its own node (rank / ranks_per_node) pay `ts_intra`/`tw_intra`,
/// the others `ts_inter`/`tw_inter`; the model's latency and bandwidth are the members'
/// maxima (each side and term for its own most loaded member). Local work is free and the
/// node's cores unbounded, so nothing else enters.
#[test]
fn node_placement_matches_brute_force() {
    let (ts_intra, ts_inter, tw_intra, tw_inter) = (1.0, 8.0, 0.01, 0.5);
    let mut profile = MachineProfile::network_only(ts_intra, tw_intra);
    profile.ts_inter_s = ts_inter;
    profile.tw_inter_s_per_byte = tw_inter;
    profile.cores_per_node = 1 << 30;
    for shape in [
        vec![11usize, 7, 13],
        vec![9, 7, 5, 12],
        vec![16, 21],
        vec![3, 20, 6],
    ] {
        for ranks in 1..=12 {
            for rpn in [1, 2, 3, 5, 8] {
                profile.ranks_per_node = rpn;
                for grid in candidates(&shape, ranks) {
                    let problem = Problem {
                        shape: shape.clone(),
                        ranks,
                        element_bytes: 1,
                        transposed_out: true,
                        real_to_complex: false,
                        windows: false,
                    };
                    let pipe = pipeline(&shape, grid.clone(), true).unwrap();
                    let fused: Vec<Fusion> = fusions(&pipe.forward, &pipe, 1)
                        .unwrap()
                        .into_iter()
                        .chain(fusions(&pipe.backward, &pipe, 1).unwrap())
                        .collect();
                    let (mut latency, mut bandwidth) = (0.0, 0.0);
                    for (stage, fusion) in pipe.forward.iter().chain(&pipe.backward).zip(&fused) {
                        let Stage::Exchange { from, to } = *stage else {
                            continue;
                        };
                        let plan =
                            ExchangePlan::new(&pipe.layouts[from], &pipe.layouts[to]).unwrap();
                        let members = grid.group_members(0, plan.grid_dim());
                        let (mut lat, mut bw) = (0.0f64, 0.0f64);
                        for &member in &members {
                            let part = plan.for_rank(member);
                            let mut sides = [[0.0f64; 2]; 2]; // [send, recv] x [lat, bw]
                            for p in part.peers.iter().filter(|p| p.peer != part.group_index) {
                                let near = p.peer_rank / rpn == member / rpn;
                                let (ts, tw) = if near {
                                    (ts_intra, tw_intra)
                                } else {
                                    (ts_inter, tw_inter)
                                };
                                for (side, len) in
                                    [p.send_box.len(), p.recv_box.len()].into_iter().enumerate()
                                {
                                    if len > 0 {
                                        sides[side][0] += ts;
                                        sides[side][1] += tw * len as f64;
                                    }
                                }
                            }
                            let pieces = fusion.pieces.max(1) as f64;
                            lat = lat.max(pieces * sides[0][0].max(sides[1][0]));
                            bw = bw.max(sides[0][1].max(sides[1][1]));
                        }
                        latency += lat;
                        bandwidth += bw;
                    }
                    let pr = predict(&problem, &grid, &profile).unwrap();
                    let what = format!("{shape:?} grid {grid} rpn {rpn}");
                    assert!(
                        (pr.latency_s - latency).abs() <= 1e-9 * latency.max(1.0),
                        "{what}: latency {} vs {latency}",
                        pr.latency_s
                    );
                    assert!(
                        (pr.bandwidth_s - bandwidth).abs() <= 1e-9 * bandwidth.max(1.0),
                        "{what}: bandwidth {} vs {bandwidth}",
                        pr.bandwidth_s
                    );
                }
            }
        }
    }
}

/// The cluster terms by hand. 4×4 on a slab of 4 ranks, 2 per node, 1-byte elements:
/// each exchange sends one element to each of 3 peers, one on the rank's node and two
/// beyond; a pair has 4 exchanges.
#[test]
fn cluster_terms_by_hand() {
    let problem = |shape: &[usize], ranks| Problem {
        shape: shape.to_vec(),
        ranks,
        element_bytes: 1,
        transposed_out: false,
        real_to_complex: false,
        windows: false,
    };
    let slab = |p| GridShape::new(vec![p]).unwrap();
    let mut m = MachineProfile::network_only(0.0, 0.0);
    m.ranks_per_node = 2;
    m.tw_inter_s_per_byte = 1.0;
    // Node injection: the node's 2 ranks send 2 bytes each beyond it, 4 bytes through one
    // interface of 1 s/B, slower than each rank's own 2 bytes at 1 s/B.
    m.tw_node_s_per_byte = 1.0;
    let pr = predict(&problem(&[4, 4], 4), &slab(4), &m).unwrap();
    assert_eq!(
        (pr.bandwidth_s, pr.inter_node_s, pr.intra_node_s),
        (16.0, 16.0, 0.0)
    );
    // A faster interface (0.25 s/B: 1 s) leaves each rank's own link (2 s) the limit.
    m.tw_node_s_per_byte = 0.25;
    let pr = predict(&problem(&[4, 4], 4), &slab(4), &m).unwrap();
    assert_eq!(pr.bandwidth_s, 8.0);
    // Intra- and inter-node parts, 1 s and 2 s per exchange: added, or overlapped.
    m.tw_node_s_per_byte = 0.0;
    m.tw_intra_s_per_byte = 1.0;
    for (overlap, per_exchange) in [(0.0, 3.0), (0.5, 2.5), (1.0, 2.0)] {
        m.intra_inter_overlap = overlap;
        let pr = predict(&problem(&[4, 4], 4), &slab(4), &m).unwrap();
        assert_eq!(pr.bandwidth_s, 4.0 * per_exchange, "overlap {overlap}");
        assert_eq!(pr.intra_node_s + pr.inter_node_s, pr.bandwidth_s);
        assert_eq!(pr.intra_node_s * 2.0, pr.inter_node_s);
    }
    // Uplinks: 8 nodes of one rank, 2 nodes per switch, uplinks 3 times thinner. Each node
    // sends 7 bytes, 6/7 of them beyond its switch: 7 · 3 · 6/7 = 18 s per exchange.
    let mut m = MachineProfile::network_only(0.0, 0.0);
    m.ranks_per_node = 1;
    m.tw_node_s_per_byte = 1.0;
    m.switch_nodes = 2;
    m.uplink_taper = 3.0;
    let pr = predict(&problem(&[8, 8], 8), &slab(8), &m).unwrap();
    assert!((pr.bandwidth_s - 72.0).abs() < 1e-12, "{}", pr.bandwidth_s);
    // A non-blocking network (taper 1) or a switch holding every node: 7 s.
    m.uplink_taper = 1.0;
    let pr = predict(&problem(&[8, 8], 8), &slab(8), &m).unwrap();
    assert_eq!(pr.bandwidth_s, 28.0);
    m.uplink_taper = 3.0;
    m.switch_nodes = 8;
    let pr = predict(&problem(&[8, 8], 8), &slab(8), &m).unwrap();
    assert_eq!(pr.bandwidth_s, 28.0);
}

/// A real-to-complex transform exchanges the complex half spectrum: 6×10 real moves what
/// a complex 6×6 does, and its FFT along the last axis costs half a complex one.
#[test]
fn real_to_complex_moves_the_half_spectrum() {
    let m = MachineProfile::network_only(1.0, 1.0);
    let grid = GridShape::new(vec![3]).unwrap();
    let r2c = predict(&Problem::new(&[6, 10], 3).real_to_complex(), &grid, &m).unwrap();
    let c2c = predict(&Problem::new(&[6, 6], 3), &grid, &m).unwrap();
    assert_eq!(
        (r2c.latency_s, r2c.bandwidth_s),
        (c2c.latency_s, c2c.bandwidth_s)
    );
    assert_eq!(r2c.bytes, c2c.bytes);
    let mut m = MachineProfile::network_only(0.0, 0.0);
    m.fft_s_per_element_log2 = 1.0;
    let one = GridShape::new(vec![1]).unwrap();
    let pr = predict(&Problem::new(&[4, 8], 1).real_to_complex(), &one, &m).unwrap();
    // Per direction: the real FFT of 4 lines of 8 (half of 32 · 3) and the complex FFT of
    // 5 columns of 4 (20 · 2).
    assert_eq!(pr.fft_s, 2.0 * (0.5 * 32.0 * 3.0 + 20.0 * 2.0));
}

/// The fused steps the model costs, as the plan lowers them: a slab of d ≥ 3 fuses its
/// axis-0 sweep with the exchanges on both sides; with transposed output the FFTs of the
/// other axes write the exchange's messages instead; pencils, whose FFTs after L0 are all
/// contiguous, fuse nothing.
#[test]
fn fusions_follow_the_slab_layout() {
    let slab = pipeline(&[8, 6, 5], GridShape::new(vec![2]).unwrap(), false).unwrap();
    let f = fusions(&slab.forward, &slab, 16).unwrap();
    // Fft(2), Fft(1), Exchange 0→1, Fft(0), Exchange 1→0.
    assert_eq!(slab.forward.len(), 5);
    let (unpack, pack) = (
        Fusion {
            unpack: true,
            pack: false,
            pieces: 1,
            window: false,
        },
        Fusion {
            unpack: false,
            pack: true,
            pieces: 1,
            window: false,
        },
    );
    assert_eq!(
        f,
        vec![
            Fusion::default(),
            Fusion::default(),
            unpack,
            Fusion::default(),
            pack
        ]
    );
    // Transposed output: the exchange goes to the FFTs of axes 2 and 1 before it, whose
    // whole planes write the messages, not to the last sweep.
    let t = pipeline(&[8, 6, 5], GridShape::new(vec![2]).unwrap(), true).unwrap();
    assert_eq!(fusions(&t.forward, &t, 16).unwrap()[2], pack);
    let pencil = pipeline(&[8, 6, 5], GridShape::new(vec![2, 2]).unwrap(), false).unwrap();
    assert!(fusions(&pencil.forward, &pencil, 16)
        .unwrap()
        .iter()
        .all(|f| *f == Fusion::default()));
}

/// Fused slab exchanges move 1 MiB of planes at a time, one collective call per piece.
/// 64³ on a slab of 2: L1 gives each rank 32 planes of axis 1, a plane is 64·64·16 B =
/// 64 KiB, so 16 planes per piece and 2 pieces; with 7 ranks, 10 planes of 64 KiB: 1
/// piece. 256×64×64 on 2 ranks: 32 planes of 256 KiB, 4 per piece, 8 pieces.
#[test]
fn fused_exchanges_move_in_pieces() {
    let slab = |shape: &[usize], ranks: usize| {
        let p = pipeline(shape, GridShape::new(vec![ranks]).unwrap(), false).unwrap();
        fusions(&p.forward, &p, 16).unwrap()[2].pieces
    };
    assert_eq!(slab(&[64, 64, 64], 2), 2);
    assert_eq!(slab(&[64, 64, 64], 7), 1);
    assert_eq!(slab(&[256, 64, 64], 2), 8);
    // Latency: ts per message per piece. Natural output: all 4 exchanges are fused, one
    // message each way, 2 pieces.
    let profile = MachineProfile::network_only(1.0, 0.0);
    let pr = predict(
        &Problem::new(&[64, 64, 64], 2),
        &GridShape::new(vec![2]).unwrap(),
        &profile,
    )
    .unwrap();
    assert_eq!((pr.latency_s, pr.messages), (4.0 * 2.0, 4 * 2));
}

/// Every factorization of P into r < d dimensions, each once, nothing else.
#[test]
fn candidates_are_every_factorization_once() {
    for d in 2..=5 {
        for ranks in 1..=36 {
            let shape = vec![7; d];
            let cands = candidates(&shape, ranks);
            let expected: usize = (1..d).map(|r| factorizations(ranks, r).len()).sum();
            assert_eq!(cands.len(), expected);
            let mut seen = std::collections::HashSet::new();
            for g in &cands {
                assert!(g.rank() < d && g.ranks() == ranks, "{g}");
                assert!(seen.insert(g.dims().to_vec()), "{g} twice");
            }
            // Birkeland & Sørøvik's §4 projection: all P ranks on one grid dimension.
            assert!(seen.contains(&vec![ranks]));
        }
    }
}

/// The choice never has idle ranks when some candidate has none, always fits P and d, and
/// is what `resolve_grid_with(Auto)` returns.
#[test]
fn nothing_impossible_is_chosen() {
    let profile = MachineProfile::default();
    for shape in [
        vec![3usize, 20, 6],
        vec![2, 2, 64],
        vec![5, 11],
        vec![9, 7, 5, 12],
        vec![64, 64, 64],
    ] {
        for ranks in 1..=40 {
            let problem = Problem::new(&shape, ranks);
            let all = evaluate(&problem, &profile).unwrap();
            assert_eq!(all.iter().filter(|c| c.chosen).count(), 1);
            assert!(all[0].chosen);
            let any_clean = all.iter().any(|c| c.prediction.idle_ranks == 0);
            if any_clean {
                assert_eq!(all[0].prediction.idle_ranks, 0, "{shape:?} P={ranks}");
                assert!(all[0].excluded.is_none());
            }
            let grid = resolve_grid(&shape, ranks, &GridChoice::Auto, &profile).unwrap();
            assert_eq!(grid.dims(), all[0].prediction.grid.as_slice());
            assert!(grid.rank() < shape.len() && grid.ranks() == ranks);
            // Listed in order: the chosen one, then by predicted time within each class.
            for w in all[1..].windows(2) {
                if w[0].excluded.is_some() == w[1].excluded.is_some() {
                    assert!(w[0].prediction.predicted_s <= w[1].prediction.predicted_s);
                }
            }
        }
    }
}

/// Same inputs, same answer, in any order of evaluation and from a copied profile.
#[test]
fn choice_is_a_pure_function() {
    let profile = MachineProfile::default();
    let again = profile.clone();
    for ranks in [1, 6, 7, 8, 64, 1000, 4096] {
        let problem = Problem::new(&[256, 256, 256], ranks);
        let a = evaluate(&problem, &profile).unwrap();
        let _ = evaluate(&Problem::new(&[9, 7, 5, 12], 6), &profile).unwrap();
        let b = evaluate(&problem.clone(), &again).unwrap();
        assert_eq!(a, b);
        assert_eq!(
            choose(&problem, &profile).unwrap().dims(),
            a[0].prediction.grid.as_slice()
        );
    }
}

/// Birkeland & Sørøvik's qualitative result: a 1-D decomposition for few processes, a pencil beyond.
/// The 1-D decomposition may be the slab or a grid whose other dimensions are 1 (`4x1`):
/// they move the same bytes, and with free local work the slab's fused exchanges, which
/// move 1 MiB pieces (64 of them for 256³ on 4 ranks), pay more latency.
#[test]
fn slab_for_few_ranks_pencil_for_many() {
    let profile = MachineProfile::network_only(1e-5, 1e-9);
    let pick = |ranks| choose(&Problem::new(&[256, 256, 256], ranks), &profile).unwrap();
    let split = |g: &GridShape| g.dims().iter().filter(|&&p| p > 1).count();
    assert_eq!(split(&pick(4)), 1);
    assert_eq!(split(&pick(4096)), 2);
    // With the default machine (local work included) the slab itself.
    let pick = |ranks| {
        choose(
            &Problem::new(&[256, 256, 256], ranks),
            &MachineProfile::default(),
        )
        .unwrap()
    };
    assert_eq!(pick(4).rank(), 1);
}

/// The exchanges a fused sweep takes over, on the grid cut to what its axes can use, are
/// those of the real grid: the cut is what lets `predict` skip O(P) peers.
#[test]
fn fusions_of_the_cut_grid_are_the_real_ones() {
    let mut cut_some = 0;
    for shape in [
        vec![5usize, 6, 7],
        vec![3, 9, 4],
        vec![2, 3, 4, 5],
        vec![7, 2],
    ] {
        for ranks in 1..=40 {
            for grid in candidates(&shape, ranks) {
                for transposed_out in [false, true] {
                    let problem = Problem {
                        shape: shape.clone(),
                        ranks,
                        element_bytes: 16,
                        transposed_out,
                        real_to_complex: false,
                        windows: false,
                    };
                    let pipe = pipeline(&shape, grid.clone(), transposed_out).unwrap();
                    let Some(cut) =
                        fusion_pipeline(&pipe, &problem, &vec![true; shape.len()]).unwrap()
                    else {
                        continue;
                    };
                    cut_some += 1;
                    for (stages, cut_stages) in [
                        (&pipe.forward, &cut.forward),
                        (&pipe.backward, &cut.backward),
                    ] {
                        assert_eq!(
                            fusions(stages, &pipe, 16).unwrap(),
                            fusions(cut_stages, &cut, 16).unwrap(),
                            "{shape:?} grid {grid} transposed {transposed_out}"
                        );
                    }
                }
            }
        }
    }
    assert!(cut_some > 100, "{cut_some}");
}

/// Rank counts up to 2^40 answer without walking the ranks: a prime (three candidates),
/// a power of two and a count with 6720 divisors. Every candidate with a grid dimension
/// beyond 1024 leaves ranks idle, so the choice is the fastest of them all.
#[test]
fn huge_rank_counts_answer() {
    let profile = MachineProfile::default();
    for (ranks, count) in [
        (1_000_000_007usize, 3),
        (1 << 40, 42),
        (1_000_000_000_000, 1 + 13 * 13),
        (963_761_198_400, 6721),
    ] {
        let problem = Problem::new(&[1024, 1024, 1024], ranks);
        let all = evaluate(&problem, &profile).unwrap();
        assert_eq!(all.len(), count, "P = {ranks}");
        assert!(all.iter().all(|c| c.prediction.idle_ranks > 0));
        assert!(all[0].chosen && all[0].prediction.predicted_s > 0.0);
        assert_eq!(all[0].prediction.grid.iter().product::<usize>(), ranks);
    }
    let too_many = Problem::new(&[8, 8, 8], MAX_RANKS + 1);
    assert!(matches!(
        evaluate(&too_many, &profile),
        Err(FftError::TooManyRanks { .. })
    ));
    assert!(matches!(
        predict(
            &too_many,
            &GridShape::new(vec![MAX_RANKS + 1]).unwrap(),
            &profile
        ),
        Err(FftError::TooManyRanks { .. })
    ));
}

/// A grid rank or a single grid restricts the candidates.
#[test]
fn candidates_can_be_restricted() {
    let profile = MachineProfile::default();
    let problem = Problem::new(&[64, 64, 64], 12);
    let pencils = evaluate_among(&problem, &profile, &Candidates::Rank(2)).unwrap();
    assert_eq!(pencils.len(), 6);
    assert!(pencils.iter().all(|c| c.prediction.grid_rank == 2));
    let one = evaluate_among(&problem, &profile, &Candidates::Grid(vec![4, 3])).unwrap();
    assert_eq!((one.len(), one[0].chosen), (1, true));
    assert!(evaluate_among(&problem, &profile, &Candidates::Grid(vec![4, 4])).is_err());
    assert!(evaluate_among(&problem, &profile, &Candidates::Rank(3)).is_err());
}

/// The node link's traffic against every rank: with equal blocks, the slowest node's bytes
/// to other nodes (each rank's messages to peers off its node, summed over the node's ranks)
/// per exchange, whatever the groups' placement (groups of 2 or 4 consecutive ranks on nodes
/// of 3 or 5 straddle node boundaries, which rank 0's group alone does not show).
#[test]
fn node_traffic_matches_every_rank() {
    let shape = [24usize, 24, 24];
    let mut profile = MachineProfile::network_only(0.0, 0.0);
    profile.tw_node_s_per_byte = 1.0;
    for ranks in [2usize, 3, 4, 6, 8, 12] {
        for rpn in [1usize, 2, 3, 5, 8] {
            if ranks > rpn && ranks % rpn != 0 {
                continue; // a partial last node: the model looks at full nodes
            }
            profile.ranks_per_node = rpn;
            for grid in candidates(&shape, ranks) {
                let problem = Problem {
                    shape: shape.to_vec(),
                    ranks,
                    element_bytes: 1,
                    transposed_out: true,
                    real_to_complex: false,
                    windows: false,
                };
                let pipe = pipeline(&shape, grid.clone(), true).unwrap();
                let mut expected = 0.0;
                for stage in pipe.forward.iter().chain(&pipe.backward) {
                    let Stage::Exchange { from, to } = *stage else {
                        continue;
                    };
                    let plan = ExchangePlan::new(&pipe.layouts[from], &pipe.layouts[to]).unwrap();
                    let nodes = ranks.div_ceil(rpn.min(ranks));
                    let mut off_node = vec![0usize; nodes];
                    for rank in 0..ranks {
                        let part = plan.for_rank(rank);
                        off_node[rank / rpn.min(ranks)] += part
                            .peers
                            .iter()
                            .filter(|p| p.peer_rank / rpn != rank / rpn)
                            .map(|p| p.send_box.len())
                            .sum::<usize>();
                    }
                    expected += *off_node.iter().max().unwrap() as f64;
                }
                let pr = predict(&problem, &grid, &profile).unwrap();
                assert!(
                    (pr.bandwidth_s - expected).abs() <= 1e-9 * expected.max(1.0),
                    "grid {grid} rpn {rpn}: {} vs {expected}",
                    pr.bandwidth_s
                );
            }
        }
    }
}

/// The node's memory by hand: 4×4×4 on the pencil grid 1×2 (nothing fused), 2 ranks of
/// one node, 1-byte elements, free cores and links, 1 s per byte of the node's memory. Per
/// direction: three sweeps, each reading and writing both ranks' 32 elements (128 s); two
/// exchanges in groups of 2, each copying a rank's 16 sent, 16 received and 16 own elements
/// (192 s) and moving 16 + 16 through shared memory (64 s); two in groups of one, a local
/// transposing copy of the 32 elements of each rank (128 s). Natural output doubles the
/// exchanges.
#[test]
fn node_memory_bounds_sweeps_copies_and_shared_memory() {
    let mut m = MachineProfile::network_only(0.0, 0.0);
    m.ranks_per_node = 2;
    m.tw_memory_s_per_byte = 1.0;
    let problem = Problem {
        shape: vec![4, 4, 4],
        ranks: 2,
        element_bytes: 1,
        transposed_out: false,
        real_to_complex: false,
        windows: false,
    };
    let grid = GridShape::new(vec![1, 2]).unwrap();
    let pr = predict(&problem, &grid, &m).unwrap();
    assert_eq!(
        (pr.fft_s, pr.memory_s, pr.bandwidth_s),
        (6.0 * 128.0, 4.0 * 192.0 + 4.0 * 128.0, 4.0 * 64.0)
    );
    assert_eq!(pr.intra_node_s, pr.bandwidth_s);
    m.tw_memory_s_per_byte = 0.0;
    let pr = predict(&problem, &grid, &m).unwrap();
    assert_eq!((pr.fft_s, pr.memory_s, pr.bandwidth_s), (0.0, 0.0, 0.0));
}

/// A partial transform costs only the exchanges that bring a transformed axis into memory:
/// axes 1 and 2 of a 3-D field on a slab (split along axis 0) need none, on a 2x2 pencil
/// grid fewer than the full transform's; the FFTs of the untransformed axis are not charged,
/// and the choice prefers the slab that needs no exchange.
#[test]
fn partial_transforms_cost_only_the_exchanges_they_need() {
    let problem = Problem::new(&[64, 64, 64], 4);
    let profile = MachineProfile::default();
    let slab = GridShape::new(vec![4]).unwrap();
    let pencils = GridShape::new(vec![2, 2]).unwrap();
    let full = predict(&problem, &slab, &profile).unwrap();
    let part = predict_partial(&problem, &[1, 2], &slab, &profile).unwrap();
    assert!(full.exchanges > 0);
    assert_eq!((part.exchanges, part.messages, part.bytes), (0, 0, 0));
    assert_eq!(part.latency_s + part.bandwidth_s, 0.0);
    // Two of the three axes: two thirds of the FFT work.
    assert!(
        (part.fft_s / full.fft_s - 2.0 / 3.0).abs() < 1e-9,
        "{part:?} {full:?}"
    );
    let full_p = predict(&problem, &pencils, &profile).unwrap();
    let part_p = predict_partial(&problem, &[1, 2], &pencils, &profile).unwrap();
    assert!(part_p.exchanges > 0 && part_p.exchanges < full_p.exchanges);
    // Every axis listed: the full transform.
    let all = predict_partial(&problem, &[0, 1, 2], &slab, &profile).unwrap();
    assert_eq!(all, full);
    let ranked = evaluate_partial(&problem, &[1, 2], &profile, &Candidates::All).unwrap();
    assert_eq!(ranked[0].prediction.grid, vec![4]);
    assert_eq!(ranked[0].prediction.exchanges, 0);
    // Axes 0 and 1: the slab must bring axis 0 in; a slab still wins over pencils here, but
    // with exchanges.
    let other = predict_partial(&problem, &[0, 1], &slab, &profile).unwrap();
    assert!(other.exchanges > 0);
    assert!(predict_partial(&problem, &[3], &slab, &profile).is_err());
}
