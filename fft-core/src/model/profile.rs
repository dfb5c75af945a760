//! What the model knows about a machine. A plain value: the library never reads a profile
//! from a file or the environment; callers (the `dfft` command line) parse and pass it, in
//! [`crate::FftOptions::machine`] or to the model's functions directly.

use crate::error::{FftError, Result};
use serde::{Deserialize, Serialize};

/// What the model knows about a machine. Times in seconds, sizes in bytes. The [`Default`]
/// values describe a generic cluster node (64 cores, a 100 Gb/s network interface on a
/// non-blocking network): ts 2 µs / tw 0.1 ns per byte between nodes for one rank, 0.08 ns
/// per byte (12.5 GB/s) for all ranks of a node together, 0.5 µs / 0.2 ns per byte inside a
/// node, 2 µs per exchange call, 2 µs / 0.2 ns per byte through a shared-memory window, 1 ns per element·log2 n of 1-D FFT, 2 GB/s element-granular
/// (transposing) and 5 GB/s contiguous copies per core, 200 GB/s of memory bandwidth for the
/// whole node, 64 ranks of one thread per node.
///
/// Serialized with serde's derives (every field named, unknown fields refused); the command
/// line reads profile files strictly and says which fields took their defaults.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineProfile {
    /// Latency of one message between ranks of the same node, seconds.
    pub ts_intra_s: f64,
    /// Inverse bandwidth between ranks of the same node, seconds per byte.
    pub tw_intra_s_per_byte: f64,
    /// Latency of one message between nodes, seconds.
    pub ts_inter_s: f64,
    /// Inverse bandwidth between nodes of one rank's own messages, seconds per byte.
    pub tw_inter_s_per_byte: f64,
    /// Inverse injection bandwidth of one node: seconds per byte of the inter-node traffic
    /// that all ranks of a node send (or receive) together through its network interface;
    /// 0: not limiting (every rank gets `tw_inter_s_per_byte`).
    pub tw_node_s_per_byte: f64,
    /// Nodes under one first-level switch: among them the network is non-blocking; traffic
    /// to nodes beyond goes through the switch's uplinks.
    pub switch_nodes: usize,
    /// How much thinner a switch's uplinks are than its nodes' links together (≥ 1; 1: a
    /// non-blocking, full-bisection network). A node whose exchange partners lie on `G` nodes,
    /// `switch_nodes` of them under its own switch, sends the fraction
    /// `(G − switch_nodes)/(G − 1)` of its inter-node bytes up, which takes `uplink_taper`
    /// times as long per byte as its own link: the contention of large all-to-alls.
    pub uplink_taper: f64,
    /// Fraction (0..=1) of the shorter of an exchange's intra-node and inter-node transfer
    /// times that overlaps with the longer (0: one after the other, as Birkeland & Sørøvik's model; 1:
    /// the exchange takes the longer of the two).
    pub intra_inter_overlap: f64,
    /// Fixed cost of one exchange (one collective call in a group of more than one rank),
    /// seconds; 0 in Birkeland & Sørøvik's model.
    pub exchange_overhead_s: f64,
    /// Fixed cost of one exchange through a shared-memory window (the group's
    /// synchronization), seconds. A window exchange moves no messages: every rank of a group
    /// on one node reads (or writes) its peers' parts straight from (or into) their memory,
    /// one copy, fused with the FFT sweeps next to it.
    pub ts_window_s: f64,
    /// Seconds per byte one rank moves through a shared-memory window (its one copy from or
    /// into its peers' memory); the node's memory bandwidth bounds the ranks together.
    pub tw_window_s_per_byte: f64,
    /// Local 1-D FFT cost on one core, seconds per element·log2(n) (complex f64).
    pub fft_s_per_element_log2: f64,
    /// Rate of one core for copies that move single elements (a transposing pack/unpack, the
    /// exchange's own-part transpose), bytes copied per second.
    pub copy_bytes_per_s: f64,
    /// Rate of one core for copies of long contiguous runs (packing whole rows, a tile row of
    /// a strided sweep), bytes per second. A copy in runs of `L` elements costs
    /// `bytes · (1/stream + (1/copy − 1/stream)/L)`: element-granular copies run at
    /// `copy_bytes_per_s`, long runs at this rate. Not above `copy_bytes_per_s`: every copy
    /// runs at `copy_bytes_per_s`.
    pub stream_bytes_per_s: f64,
    /// Inverse memory bandwidth of one node: seconds per byte that all its ranks together
    /// read or write. Bounds what the per-core rates allow when every core of a node copies
    /// at once: copies, FFT sweeps and shared-memory transfers of the node's ranks take at
    /// least their bytes read and written times this. 0: not limiting.
    pub tw_memory_s_per_byte: f64,
    /// Cores of one node.
    pub cores_per_node: usize,
    /// Ranks placed on one node (consecutive ranks share a node).
    pub ranks_per_node: usize,
    /// Threads each rank uses for FFT lines and copies.
    pub threads_per_rank: usize,
    /// Where the numbers come from (free text: "defaults", or what `dfft calibrate` measured).
    pub source: String,
}

impl Default for MachineProfile {
    fn default() -> Self {
        Self {
            ts_intra_s: 0.5e-6,
            tw_intra_s_per_byte: 0.2e-9,
            ts_inter_s: 2e-6,
            tw_inter_s_per_byte: 0.1e-9,
            tw_node_s_per_byte: 0.08e-9,
            switch_nodes: 32,
            uplink_taper: 1.0,
            intra_inter_overlap: 0.0,
            exchange_overhead_s: 2e-6,
            ts_window_s: 2e-6,
            tw_window_s_per_byte: 0.2e-9,
            fft_s_per_element_log2: 1e-9,
            copy_bytes_per_s: 2e9,
            stream_bytes_per_s: 5e9,
            tw_memory_s_per_byte: 5e-12,
            cores_per_node: 64,
            ranks_per_node: 64,
            threads_per_rank: 1,
            source: "defaults".to_string(),
        }
    }
}

impl PartialEq for MachineProfile {
    /// Bitwise equality of the numbers, so that `Eq` holds.
    fn eq(&self, other: &Self) -> bool {
        self.bits() == other.bits() && self.source == other.source
    }
}

impl Eq for MachineProfile {}

impl MachineProfile {
    fn bits(&self) -> [u64; 18] {
        [
            self.ts_window_s.to_bits(),
            self.tw_window_s_per_byte.to_bits(),
            self.tw_memory_s_per_byte.to_bits(),
            self.tw_node_s_per_byte.to_bits(),
            self.switch_nodes as u64,
            self.uplink_taper.to_bits(),
            self.intra_inter_overlap.to_bits(),
            self.stream_bytes_per_s.to_bits(),
            self.exchange_overhead_s.to_bits(),
            self.ts_intra_s.to_bits(),
            self.tw_intra_s_per_byte.to_bits(),
            self.ts_inter_s.to_bits(),
            self.tw_inter_s_per_byte.to_bits(),
            self.fft_s_per_element_log2.to_bits(),
            self.copy_bytes_per_s.to_bits(),
            self.cores_per_node as u64,
            self.ranks_per_node as u64,
            self.threads_per_rank as u64,
        ]
    }

    /// Birkeland & Sørøvik's machine: one `ts` and one `tw` (per byte) everywhere, free local
    /// work, no shared network interfaces or memory and no contention.
    pub fn network_only(ts_s: f64, tw_s_per_byte: f64) -> Self {
        Self {
            ts_intra_s: ts_s,
            tw_intra_s_per_byte: tw_s_per_byte,
            ts_inter_s: ts_s,
            tw_inter_s_per_byte: tw_s_per_byte,
            tw_node_s_per_byte: 0.0,
            switch_nodes: usize::MAX,
            uplink_taper: 1.0,
            intra_inter_overlap: 0.0,
            exchange_overhead_s: 0.0,
            ts_window_s: ts_s,
            tw_window_s_per_byte: tw_s_per_byte,
            fft_s_per_element_log2: 0.0,
            copy_bytes_per_s: f64::INFINITY,
            stream_bytes_per_s: f64::INFINITY,
            tw_memory_s_per_byte: 0.0,
            cores_per_node: usize::MAX,
            ranks_per_node: usize::MAX,
            threads_per_rank: 1,
            source: format!("network only: ts {ts_s:e} s, tw {tw_s_per_byte:e} s/B"),
        }
    }

    /// Checks that every number is usable (finite where it must be, positive counts).
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str, value: String| {
            Err(FftError::BadMachineProfile {
                reason: format!("{what} = {value}"),
            })
        };
        for (what, v) in [
            ("ts_intra_s", self.ts_intra_s),
            ("tw_intra_s_per_byte", self.tw_intra_s_per_byte),
            ("ts_inter_s", self.ts_inter_s),
            ("tw_inter_s_per_byte", self.tw_inter_s_per_byte),
            ("tw_node_s_per_byte", self.tw_node_s_per_byte),
            ("tw_memory_s_per_byte", self.tw_memory_s_per_byte),
            ("exchange_overhead_s", self.exchange_overhead_s),
            ("ts_window_s", self.ts_window_s),
            ("tw_window_s_per_byte", self.tw_window_s_per_byte),
            ("fft_s_per_element_log2", self.fft_s_per_element_log2),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(what, format!("{v} (must be finite and ≥ 0)"));
            }
        }
        for (what, v) in [
            ("copy_bytes_per_s", self.copy_bytes_per_s),
            ("stream_bytes_per_s", self.stream_bytes_per_s),
        ] {
            if v.is_nan() || v <= 0.0 {
                return bad(what, format!("{v} (must be > 0)"));
            }
        }
        if !(self.uplink_taper.is_finite() && self.uplink_taper >= 1.0) {
            return bad(
                "uplink_taper",
                format!("{} (must be finite and ≥ 1)", self.uplink_taper),
            );
        }
        if !(0.0..=1.0).contains(&self.intra_inter_overlap) {
            return bad(
                "intra_inter_overlap",
                format!("{} (must be between 0 and 1)", self.intra_inter_overlap),
            );
        }
        for (what, v) in [
            ("switch_nodes", self.switch_nodes),
            ("cores_per_node", self.cores_per_node),
            ("ranks_per_node", self.ranks_per_node),
            ("threads_per_rank", self.threads_per_rank),
        ] {
            if v == 0 {
                return bad(what, "0 (must be ≥ 1)".into());
            }
        }
        Ok(())
    }
}
