//! What the subcommands print: tables for people, and for scripts one JSON object per line
//! in one schema for every subcommand (`docs/schema/dfft-report.schema.json`):
//!
//! ```text
//! {"schema_version": 1, "command": "run" | "redist" | "bench-redist" | "plan" | "calibrate",
//!  "problem": {what was asked}, "result": {what came out},
//!  "provenance": {dfft version and commit, build, MPI library, hosts, ranks, threads, CPU, time}}
//! ```

use crate::provenance::Provenance;
use serde::Serialize;
use serde_json::{json, Value};

/// The version of the JSON schema; bumped when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// One JSON line in the common schema.
pub fn envelope(command: &str, problem: Value, result: Value, provenance: &Provenance) -> String {
    let v = json!({
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "problem": problem,
        "result": result,
        "provenance": provenance,
    });
    serde_json::to_string(&v).expect("a report serializes")
}

/// Seconds per stage of one forward+backward pair (mean over the timed pairs, max over ranks).
#[derive(Debug, Clone, Serialize)]
pub struct Stages {
    pub fft_s: f64,
    pub pack_s: f64,
    pub comm_s: f64,
    pub unpack_s: f64,
}

/// One step of one direction of `dfft run --steps`: times per call, max over ranks (the
/// mean over the timed pairs); bytes and flops per call, all ranks together.
#[derive(Debug, Clone, Serialize)]
pub struct StepRow {
    /// `forward` or `backward`, as the run goes (c2r: the plan's backward is the forward).
    pub direction: &'static str,
    /// Its place in the direction's program, from 0.
    pub index: usize,
    /// fft, line, planes, exchange or fused.
    pub kind: &'static str,
    /// What it does, in words.
    pub what: String,
    pub seconds: f64,
    /// Its share of the pair: its seconds over every step's.
    pub share: f64,
    /// Bytes of the step's input and output blocks (read and written at least once).
    pub bytes: u64,
    pub flops: f64,
    /// `bytes` / `seconds` and `flops` / `seconds`, in units of 10⁹.
    pub gb_per_s: f64,
    pub gflop_per_s: f64,
    /// `gb_per_s` over the machine profile's memory bandwidth (all ranks of the node, bytes
    /// read or written per second); null with the generic profile.
    pub copy_fraction: Option<f64>,
    /// The stage split of `seconds` (each max over ranks).
    pub fft_s: f64,
    pub pack_s: f64,
    pub comm_s: f64,
    /// `comm_s`'s min over ranks: far below the max, the ranks wait on each other.
    pub comm_min_s: f64,
    pub unpack_s: f64,
}

/// The result of `dfft run`, printed by rank 0.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub ranks: usize,
    pub threads_per_rank: usize,
    pub shape: Vec<usize>,
    pub grid: Vec<usize>,
    /// How the grid was given: `auto` (the complexity model chose it) or the `--grid` value.
    pub grid_choice: String,
    /// The complexity model's forward+backward time for this grid (compare with `min_s`).
    pub predicted_s: Option<f64>,
    /// The machine profile the model used: where it came from and what it describes.
    pub machine_profile: String,
    /// Whether that profile is the built-in generic one (no calibration of this machine).
    pub generic_profile: bool,
    pub method: String,
    /// Whether the forward output stayed in the last pencil layout.
    pub transposed_out: bool,
    /// `--destroy-input`: the transforms used their input as scratch.
    pub destroy_input: bool,
    /// `--in-place`: the transforms ran in place in one buffer.
    pub in_place: bool,
    /// `--scrambled-in`, `--scrambled-out` (a 1-D transform's FFTW-MPI orders).
    pub scrambled: [bool; 2],
    /// `--axes`: the transformed axes of a partial transform (`None`: every axis).
    pub axes: Option<Vec<usize>>,
    /// `--kind`: c2c, r2c, c2r or `r2r:<types>`.
    pub kind: String,
    /// `--precision`: f32 or f64.
    pub precision: String,
    /// Fields transformed together; times are per transform of all of them.
    pub batch: usize,
    /// Groups of ranks the batch was split into (1: all ranks transform all fields).
    pub groups: usize,
    /// `--groups`: `auto` or the forced count.
    pub groups_choice: String,
    /// `--normalization`: none, backward, ortho or forward.
    pub normalization: String,
    pub iters: u64,
    pub warmup: u64,
    /// Fastest forward+backward pair, max over ranks.
    pub min_s: f64,
    /// Median forward+backward pair, max over ranks.
    pub median_s: f64,
    pub stages: Stages,
    /// `--steps`: each step of each direction with its time and rates.
    pub steps: Option<Vec<StepRow>>,
    /// max |backward(forward(x)) − c·x| / (c·max |x|) (c = N with `--normalization none`,
    /// else 1),
    /// max over ranks and fields; for c2r taken on the real side.
    pub roundtrip_error: f64,
    /// Forward result against the exact transform of the synthetic input, relative to the
    /// largest exact value, max over ranks and fields (null with --input).
    pub reference_error: Option<f64>,
    /// Peak resident set size, max over ranks. Pages of a peer's block in a shared-memory
    /// window (`--alloc plan`) count once in every process that touched them.
    pub peak_rss_bytes: u64,
    /// Proportional set size at the end of the run (all blocks alive), max over ranks:
    /// shared pages divided among the processes mapping them.
    pub pss_bytes: u64,
    /// Peak proportional set size while one more (untimed) forward+backward pair ran,
    /// sampled every millisecond from a second thread, or `pss_bytes` where that is larger;
    /// max over ranks: what the transforms hold while they run, which `pss_bytes` at rest
    /// would miss.
    pub pss_peak_bytes: u64,
    /// Who allocated the blocks the transforms wrote (`--alloc`: plan or caller).
    pub alloc: String,
    /// Work memory the plan holds per rank in bytes, max over ranks.
    pub plan_work_bytes: u64,
    pub input: Option<String>,
    pub output: Option<String>,
    /// What writing the output did (a new file, a file or dataset replaced, a dataset added).
    #[serde(skip)]
    pub output_action: Option<crate::files::Written>,
}

/// Seconds for a table: six decimals in the usual range, else three significant digits with
/// an exponent (a prediction of 1e30 s prints as `1.000e30`, not as 31 digits).
pub fn seconds(x: f64) -> String {
    if x == 0.0 || (1e-6..1e5).contains(&x.abs()) {
        format!("{x:.6}")
    } else {
        format!("{x:.3e}")
    }
}

impl RunReport {
    /// One JSON object on one line, in the common schema.
    pub fn to_json(&self, provenance: &Provenance) -> String {
        let problem = json!({
            "shape": self.shape,
            "ranks": self.ranks,
            "kind": self.kind,
            "precision": self.precision,
            "batch": self.batch,
            "groups_choice": self.groups_choice,
            "normalization": self.normalization,
            "grid_choice": self.grid_choice,
            "method": self.method,
            "transposed_out": self.transposed_out,
            "destroy_input": self.destroy_input,
            "in_place": self.in_place,
            "scrambled_in": self.scrambled[0],
            "scrambled_out": self.scrambled[1],
            "axes": self.axes,
            "alloc": self.alloc,
            "iters": self.iters,
            "warmup": self.warmup,
            "input": self.input,
            "output": self.output,
            "output_action": self.output_action.map(|w| w.word()),
        });
        let result = json!({
            "grid": self.grid,
            "groups": self.groups,
            "threads_per_rank": self.threads_per_rank,
            "min_s": self.min_s,
            "median_s": self.median_s,
            "stages": self.stages,
            "steps": self.steps,
            "predicted_s": self.predicted_s,
            "machine_profile": self.machine_profile,
            "generic_profile": self.generic_profile,
            "roundtrip_error": self.roundtrip_error,
            "reference_error": self.reference_error,
            "peak_rss_bytes": self.peak_rss_bytes,
            "pss_bytes": self.pss_bytes,
            "pss_peak_bytes": self.pss_peak_bytes,
            "plan_work_bytes": self.plan_work_bytes,
        });
        envelope("run", problem, result, provenance)
    }

    /// A table for people.
    pub fn to_table(&self) -> String {
        let fmt_err = |e: Option<f64>| e.map_or("n/a".to_string(), |e| format!("{e:.2e}"));
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        let mut s = String::new();
        s.push_str(&format!(
            "dfft run: shape {:?} on {} rank(s) x {} thread(s), grid {:?}, method {}\n",
            self.shape, self.ranks, self.threads_per_rank, self.grid, self.method
        ));
        s.push_str(&format!(
            "  transform          {} {}{}{}, normalization {}{}{}{}\n",
            self.kind,
            self.precision,
            match &self.axes {
                Some(axes) => format!(" of axes {axes:?} only"),
                None => String::new(),
            },
            if self.batch > 1 {
                match self.groups {
                    1 => format!(", batch of {}", self.batch),
                    g => format!(", batch of {} in {g} groups of ranks", self.batch),
                }
            } else {
                String::new()
            },
            self.normalization,
            match (self.transposed_out, self.destroy_input) {
                (false, false) => "",
                (true, false) => ", transposed output",
                (false, true) => ", input destroyed",
                (true, true) => ", transposed output, input destroyed",
            },
            if self.in_place { ", in place" } else { "" },
            match self.scrambled {
                [false, false] => "",
                [true, false] => ", scrambled input",
                [false, true] => ", scrambled output",
                [true, true] => ", scrambled input and output",
            }
        ));
        s.push_str(&format!(
            "  forward+backward   min {} s   median {} s   ({} timed, {} warm-up)\n",
            seconds(self.min_s),
            seconds(self.median_s),
            self.iters,
            self.warmup
        ));
        if let Some(p) = self.predicted_s {
            s.push_str(&format!(
                "  model              predicted {} s for grid {:?} ({}), measured/predicted {:.2}\n",
                seconds(p),
                self.grid,
                if self.grid_choice == "auto" {
                    "chosen by the model"
                } else {
                    "given with --grid"
                },
                self.min_s / p.max(f64::MIN_POSITIVE)
            ));
        }
        s.push_str(&format!("  model profile      {}\n", self.machine_profile));
        if self.generic_profile {
            s.push_str(&format!(
                "  note               {}\n",
                crate::machine::generic_note()
            ));
        }
        s.push_str(&format!(
            "  per pair           fft {} s   pack {} s   comm {} s   unpack {} s\n",
            seconds(self.stages.fft_s),
            seconds(self.stages.pack_s),
            seconds(self.stages.comm_s),
            seconds(self.stages.unpack_s)
        ));
        s.push_str(&format!(
            "  verification       round trip {}   reference {}\n",
            fmt_err(Some(self.roundtrip_error)),
            fmt_err(self.reference_error)
        ));
        s.push_str(&format!(
            "  memory per rank    peak RSS {:.1} MiB   PSS {:.1} MiB (peak {:.1})   plan work {:.1} MiB   blocks by the {}\n",
            mib(self.peak_rss_bytes),
            mib(self.pss_bytes),
            mib(self.pss_peak_bytes),
            mib(self.plan_work_bytes),
            self.alloc
        ));
        if let Some(out) = &self.output {
            let action = self.output_action.map_or("", |w| w.describe());
            s.push_str(&format!("  output             {out} ({action})\n"));
        }
        if let Some(steps) = &self.steps {
            s.push_str(&crate::steps::table(steps));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn seconds_keep_their_digits_in_range() {
        use super::seconds;
        assert_eq!(seconds(0.5), "0.500000");
        assert_eq!(seconds(0.0), "0.000000");
        assert_eq!(seconds(1e300), "1.000e300");
        assert_eq!(seconds(2.5e-9), "2.500e-9");
        assert_eq!(seconds(f64::INFINITY), "inf");
    }
}
