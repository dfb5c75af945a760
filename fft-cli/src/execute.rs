//! `dfft run` on one plan, phase by phase: fill or read the input, check one forward
//! transform against the reference, time forward+backward pairs, sample the memory of one
//! more pair, check the round trip, decide the verdict, write `--output`, report.
//!
//! Every phase takes the same collective path on every rank (decisions from global data or
//! values agreed with an allreduce), so a failure is the same error everywhere.

use crate::args::{Alloc, RunArgs};
use crate::files::FileRef;
use crate::kind::Kind;
use crate::memory::{peak_rss_bytes, pss_bytes, PssSampler};
use crate::report::{RunReport, Stages};
use crate::run::{
    max_or_nan, max_over_ranks, read_input, sum_over_ranks, write_array, write_output,
};
use crate::run::{RunError, Setup};
use crate::synthetic::Reference;
use crate::transform::{RunPlan, Sample};
use fft_core::{FftError, SharedBlock};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use redist::alloc::AlignedBuf;
use redist::Layout;
use std::time::Instant;

/// Everything [`Context::execute`] needs besides the plan.
pub struct Context<'a> {
    pub world: &'a SimpleCommunicator,
    pub args: &'a RunArgs,
    pub setup: &'a Setup,
    pub model: crate::plan_cmd::RunModel,
    pub verify_limit: f64,
    /// The agreed per-rank memory limit (`None`: no check).
    pub limit: Option<crate::memory_limit::Limit>,
    /// When planning began (for the phase log).
    pub planning: Instant,
}

/// How the run calls the transforms: on the input, in one buffer (`--in-place`), or on a
/// copy they may overwrite (`--destroy-input`; `back` serves as the scratch block).
#[derive(Clone, Copy)]
struct Mode {
    in_place: bool,
    destroy: bool,
}

impl Mode {
    /// The forward transform of `input` into `output` (or into `back`, in place).
    fn forward_of_input<P: RunPlan>(
        self,
        plan: &mut P,
        input: &[P::In],
        back: &mut [P::In],
        output: &mut [P::Out],
    ) -> Result<(), FftError> {
        if self.in_place {
            plan.in_place_load(back, input);
            plan.forward_in_place(back)
        } else if self.destroy {
            back.copy_from_slice(input);
            plan.forward_destroying(back, output)
        } else {
            plan.forward(input, output)
        }
    }

    /// One forward+backward pair; `back` ends holding backward(forward(input)). With
    /// `in_place` or `destroy`, [`Mode::reload`] must put the input back first.
    fn pair<P: RunPlan>(
        self,
        plan: &mut P,
        input: &[P::In],
        back: &mut [P::In],
        output: &mut [P::Out],
    ) -> Result<(), FftError> {
        if self.in_place {
            plan.forward_in_place(back)?;
            plan.backward_in_place(back)
        } else if self.destroy {
            plan.forward_destroying(back, output)?;
            plan.backward_destroying(output, back)
        } else {
            plan.forward(input, output)?;
            plan.backward(output, back)
        }
    }

    /// Puts the input back before a pair where the transforms overwrite it: into the
    /// in-place buffer (FFTW's padded rows for r2c) or the scratch block.
    fn reload<P: RunPlan>(self, plan: &P, back: &mut [P::In], input: &[P::In]) {
        if self.in_place {
            plan.in_place_load(back, input);
        } else if self.destroy {
            back[..input.len()].copy_from_slice(input);
        }
    }
}

/// The scaling of this run's forward transform and of backward(forward(x)) / x.
#[derive(Clone, Copy)]
struct Scales {
    forward: f64,
    roundtrip: f64,
}

impl Scales {
    fn of(args: &RunArgs, shape: &[usize]) -> Scales {
        let logical = match &args.axes {
            // A partial transform scales by the transformed axes' lengths alone.
            Some(axes) => axes.iter().map(|&a| shape[a] as f64).product(),
            None => args.kind.logical_len(shape),
        };
        let (forward, backward) = args.normalization.factors_f64(logical);
        let (forward, backward) = if args.kind.forward_is_backward() {
            (backward, forward)
        } else {
            (forward, backward)
        };
        Scales {
            forward,
            roundtrip: forward * backward * logical,
        }
    }
}

/// The timed pairs: each pair's time (max over ranks, sorted) and the stages per pair.
struct Timing {
    pair_times: Vec<f64>,
    /// `--steps`: the per-step profile.
    steps: Option<Vec<crate::report::StepRow>>,
    stages: Stages,
}

/// Peak RSS, PSS at the end, peak PSS and plan work bytes, each the max over ranks.
struct MemoryUse {
    peak_rss: u64,
    pss: u64,
    pss_peak: u64,
    plan_work: u64,
}

/// The blocks the transforms write: the forward output and `back` (the backward output, the
/// scratch copy of `--destroy-input`, or the one in-place buffer, `output` then empty).
type Blocks<P> = (
    SharedBlock<<P as fft_core::Transform>::Out>,
    SharedBlock<<P as fft_core::Transform>::In>,
);

impl Context<'_> {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn mode(&self) -> Mode {
        Mode {
            in_place: self.args.in_place,
            destroy: self.args.destroy_input,
        }
    }

    /// The synthetic input and exact output of field `field` (seed `--seed` + field), in the
    /// frame of the plan's layouts of global shape `frame` (a 1-D transform's `rows × cols`).
    fn reference(&self, field: usize, forward_scale: f64, frame: &[usize]) -> Reference {
        let seed = self.args.seed.wrapping_add(field as u64);
        let shape = &self.setup.shape;
        let on: Option<Vec<bool>> = (self.args.axes.as_ref())
            .map(|axes| (0..shape.len()).map(|j| axes.contains(&j)).collect());
        let axes = crate::synthetic::Axes(on.as_deref());
        match &self.args.kind {
            Kind::C2c if shape.len() == 1 => {
                Reference::c2c_1d(shape[0], frame[0], seed, forward_scale)
            }
            Kind::C2c => Reference::c2c(shape, axes, seed, forward_scale),
            Kind::R2c => Reference::r2c(shape, axes, seed, forward_scale),
            Kind::C2r => Reference::c2r(shape, axes, seed, forward_scale),
            Kind::R2r(types) => Reference::r2r(shape, types, seed, forward_scale),
        }
    }

    /// The plan checked its estimate (work and message buffers, scratch, one input and one
    /// output block) against the limit; the run holds more before it allocates its blocks:
    /// `back`, the round trip's input-sized block, and an output-sized one for the c2r check
    /// (`again`) or a reordered `--output`. Global arguments only: every rank agrees.
    fn check_memory<P: RunPlan>(&self, plan: &P) -> Result<(), RunError> {
        let Some(limit) = &self.limit else {
            return Ok(());
        };
        let batch = plan.batch() as u64;
        let plan_needs = fft_core::memory::estimate_memory_batched(
            plan.pipeline(),
            plan.complex_bytes(),
            rayon::current_num_threads(),
            plan.batch(),
        );
        let block = |layout: &Layout, element: usize| {
            (layout.max_local_len() as u64)
                .saturating_mul(batch)
                .saturating_mul(element as u64)
        };
        let reordered =
            self.args.output.is_some() && !plan.output_layout().memory_order().is_natural();
        let output_copy = self.args.kind.forward_is_backward() || reordered;
        let copies = block(plan.input_layout(), std::mem::size_of::<P::In>()).saturating_add(
            if output_copy {
                block(plan.output_layout(), std::mem::size_of::<P::Out>())
            } else {
                0
            },
        );
        let need = plan_needs.total().saturating_add(copies);
        if need > limit.bytes {
            use fft_core::memory::format_bytes;
            return Err(RunError::Memory {
                detail: format!(
                    "needs {} = work {} + messages {} + FFT scratch {} + input/output {} + the run's round-trip{} copies {} per rank, limit {} per rank",
                    format_bytes(need),
                    format_bytes(plan_needs.work_bytes),
                    format_bytes(plan_needs.message_bytes),
                    format_bytes(plan_needs.scratch_bytes),
                    format_bytes(plan_needs.data_bytes),
                    if output_copy { " and output" } else { "" },
                    format_bytes(copies),
                    format_bytes(limit.bytes)
                ),
                origin: limit.source.clone(),
            });
        }
        Ok(())
    }

    /// Fills or reads the input, checks one forward transform against the reference, times
    /// forward+backward pairs, checks the round trip, reports, writes `--output`.
    pub fn execute<P: RunPlan>(&self, mut plan: P) -> Result<(), RunError> {
        self.check_memory(&plan)?;
        let mut phases = crate::logging::Phases::new("dfft run", self.rank(), self.planning);
        phases.done("plan");
        self.log_plan(&plan);
        let scales = Scales::of(self.args, &self.setup.shape);
        let (input, references) = self.load_input(&plan, scales.forward)?;
        // NaN and Inf pass through the transforms (IEEE arithmetic); they are counted here so
        // the run can say why it cannot be verified.
        let local_nonfinite = input.iter().filter(|v| !v.is_finite()).count() as u64;
        let nonfinite = sum_over_ranks(self.world, local_nonfinite);
        let (mut output, mut back) = self.alloc_blocks(&mut plan)?;
        phases.done("input and blocks");
        // The forward transform once, checked before any timing. --output is written at the
        // end, after every iteration and the verification, so a run that fails or is killed
        // leaves no file.
        self.mode()
            .forward_of_input(&mut plan, &input, &mut back, &mut output)?;
        self.perturb_for_tests::<P>(&references, &mut output);
        let overflowed = self.nonfinite_output(&plan, &back, &output);
        let reference_errors = self.reference_errors(&plan, &references, &back, &output);
        phases.done("first forward and its check");
        let timing = self.time_pairs(&mut plan, &input, &mut back, &mut output, &mut phases)?;
        let pss_peak = self.sampled_pair(&mut plan, &input, &mut back, &mut output)?;
        phases.done("memory-sampled pair");
        let roundtrip_errors =
            self.roundtrip_errors(&mut plan, &input, &mut back, &mut output, scales)?;
        phases.done("round trip check");
        // Memory as the transforms left it, before --output's buffers.
        let memory = self.memory_use(&plan, pss_peak);
        // The verdict comes before --output: finite input that fails verification writes
        // nothing. Non-finite input is still transformed IEEE-exactly, so its output is
        // written, but the run cannot be verified and fails.
        let (roundtrip_error, reference_error, mut verdict) =
            self.verdict(nonfinite, &roundtrip_errors, &reference_errors);
        if nonfinite == 0 && (overflowed > 0 || !roundtrip_error.is_finite()) {
            verdict = Err(self.overflow(&input, overflowed > 0));
        }
        let out_layout = plan.output_layout().clone();
        let written = if verdict.is_ok() {
            write_output(self.world, self.args, &out_layout, plan.batch(), &output)
        } else {
            Ok(None)
        };
        if let (Some(path), true) = (&self.args.roundtrip_output, verdict.is_ok()) {
            let layout = plan.input_layout().clone();
            let round_trip = (path.as_path(), "backward(forward output)");
            let back = &back[..input.len()];
            write_array(
                self.world,
                self.args,
                round_trip,
                &layout,
                plan.batch(),
                back,
            )?;
        }
        phases.done("output");
        phases.summary();
        if nonfinite > 0 {
            verdict = Err(RunError::NonFinite {
                count: nonfinite,
                written: if matches!(written, Ok(Some(_))) {
                    " and --output was written"
                } else {
                    ""
                },
            });
        }
        let report = self.report(
            &plan,
            timing,
            memory,
            (roundtrip_error, reference_error),
            written.as_ref().ok().copied().flatten(),
        );
        self.print(&report);
        written?;
        verdict
    }

    /// Logs the plan (rank 0, `info`).
    fn log_plan<P: RunPlan>(&self, plan: &P) {
        if self.rank() != 0 {
            return;
        }
        let args = self.args;
        log::info!(
            "dfft run: planned {} {:?} on {} rank(s): grid {} ({}), method {}, batch {}, blocks in {:?} out {:?} (rank 0), plan work {:.1} MiB, model {}",
            args.kind,
            self.setup.shape,
            self.world.size(),
            plan.grid().shape(),
            if self.model.auto { "chosen by the model" } else { "given" },
            args.method,
            plan.batch(),
            plan.input_layout().local_shape(0),
            plan.output_layout().local_shape(0),
            plan.work_bytes() as f64 / (1024.0 * 1024.0),
            self.model.loaded.describe()
        );
    }

    /// The input block (read from `--input`, or the synthetic fields) and, for synthetic
    /// input, each field's reference. Every block of the run starts on a cache line, as
    /// FFTW's driver's (fftw_malloc).
    fn load_input<P: RunPlan>(
        &self,
        plan: &P,
        forward_scale: f64,
    ) -> Result<(AlignedBuf<P::In>, Vec<Reference>), RunError> {
        let (rank, batch) = (self.rank(), plan.batch());
        let in_layout = plan.input_layout();
        let in_block = in_layout.local_len(rank);
        let mut input: AlignedBuf<P::In> = AlignedBuf::new(in_block * batch);
        let references = match &self.setup.header {
            Some(header) => {
                let path = self
                    .args
                    .input
                    .as_ref()
                    .expect("a header comes from --input");
                let file = FileRef::parse(path);
                read_input(self.world, &file, header, in_layout, batch, &mut input)?;
                Vec::new()
            }
            None => (0..batch)
                .map(|f| {
                    let r = self.reference(f, forward_scale, in_layout.global_shape());
                    let block = &mut input[f * in_block..(f + 1) * in_block];
                    r.input.fill(in_layout, rank, block);
                    r
                })
                .collect(),
        };
        Ok((input, references))
    }

    /// The blocks the transforms write; with `--alloc plan` the plan's (shared-memory windows
    /// on one node). The input stays a plain vector: no step reads it across ranks. With
    /// --in-place, `back` is the one buffer and `output` stays empty.
    fn alloc_blocks<P: RunPlan>(&self, plan: &mut P) -> Result<Blocks<P>, RunError> {
        let (rank, batch) = (self.rank(), plan.batch());
        let in_block = plan.input_layout().local_len(rank);
        let out_block = plan.output_layout().local_len(rank);
        Ok(match self.args.alloc {
            _ if self.args.in_place => (
                AlignedBuf::new(0).into(),
                AlignedBuf::new(plan.in_place_len()).into(),
            ),
            Alloc::Plan => (plan.alloc_output()?, plan.alloc_input()?),
            Alloc::Caller => (
                AlignedBuf::new(out_block * batch).into(),
                AlignedBuf::new(in_block * batch).into(),
            ),
        })
    }

    /// Test-only (`fault-injection`): a wrong answer of relative size `delta` that the checks
    /// must catch.
    fn perturb_for_tests<P: RunPlan>(&self, references: &[Reference], output: &mut [P::Out]) {
        if let (Some(delta), Some(r)) = (crate::fault::perturbation(), references.first()) {
            if let Some(v) = output.first_mut() {
                *v = P::Out::from_c64(v.to_c64() + delta * r.magnitude);
            }
        }
    }

    /// Non-finite values of the forward output, summed over ranks (of a finite input: an
    /// overflow).
    fn nonfinite_output<P: RunPlan>(&self, plan: &P, back: &[P::In], output: &[P::Out]) -> u64 {
        let forward = if self.args.in_place {
            plan.as_output(back)
        } else {
            output
        };
        let local = forward.iter().filter(|v| !v.is_finite()).count() as u64;
        sum_over_ranks(self.world, local)
    }

    /// The error of a finite input whose forward output (`forward`) or round trip overflowed.
    fn overflow<S: Sample>(&self, input: &[S], forward: bool) -> RunError {
        let local = max_or_nan(input.iter().map(|v| v.to_c64().norm()));
        let largest = max_over_ranks(self.world, local);
        let n: f64 = self.setup.shape.iter().map(|&n| n as f64).product();
        RunError::Overflow {
            what: if forward {
                "the forward output"
            } else {
                "the round trip (backward of forward)"
            },
            largest,
            n,
            precision: self.args.precision,
            max: match self.args.precision {
                crate::kind::Precision::F64 => f64::MAX,
                crate::kind::Precision::F32 => f32::MAX as f64,
            },
            written: if self.args.output.is_some() {
                "; --output was not written"
            } else {
                ""
            },
        }
    }

    /// Per field: max over ranks of the relative error of the forward output.
    fn reference_errors<P: RunPlan>(
        &self,
        plan: &P,
        references: &[Reference],
        back: &[P::In],
        output: &[P::Out],
    ) -> Vec<f64> {
        let rank = self.rank();
        let out_layout = plan.output_layout();
        let out_block = out_layout.local_len(rank);
        let forward = if self.args.in_place {
            plan.as_output(back)
        } else {
            output
        };
        references
            .iter()
            .enumerate()
            .map(|(f, r)| {
                let got = &forward[f * out_block..(f + 1) * out_block];
                let e = r.output.max_error(out_layout, rank, got) / r.magnitude;
                max_over_ranks(self.world, e)
            })
            .collect()
    }

    /// The warm-up pairs, then `--iters` timed pairs (each from a barrier, max over ranks).
    fn time_pairs<P: RunPlan>(
        &self,
        plan: &mut P,
        input: &[P::In],
        back: &mut [P::In],
        output: &mut [P::Out],
        phases: &mut crate::logging::Phases,
    ) -> Result<Timing, RunError> {
        let (world, args, mode, rank) = (self.world, self.args, self.mode(), self.rank());
        for _ in 0..args.warmup {
            mode.reload(plan, back, input);
            mode.pair(plan, input, back, output)?;
        }
        phases.done("warm-up pairs");
        plan.reset_times();
        let panic_rank = crate::fault::panic_rank();
        let mut pair_times = Vec::with_capacity(args.iters as usize);
        let mut bar = crate::progress::start(
            args.iters,
            rank,
            args.json,
            args.progress,
            "dfft run: timed pairs",
        );
        for iter in 0..args.iters {
            if panic_rank == Some(rank) && iter == args.iters / 2 {
                crate::fault::deliberate_panic(rank);
            }
            mode.reload(plan, back, input);
            world.barrier();
            let t = Instant::now();
            mode.pair(plan, input, back, output)?;
            pair_times.push(max_over_ranks(world, t.elapsed().as_secs_f64()));
            if let Some(b) = &mut bar {
                b.inc();
            }
        }
        if let Some(b) = bar {
            b.finish();
        }
        phases.done("timed pairs");
        let times = plan.times();
        let per_pair = |x: f64| max_over_ranks(world, x / args.iters as f64);
        let stages = Stages {
            fft_s: per_pair(times.fft),
            pack_s: per_pair(times.pack),
            comm_s: per_pair(times.comm),
            unpack_s: per_pair(times.unpack),
        };
        pair_times.sort_by(f64::total_cmp);
        let steps = args.steps.then(|| {
            let copy = self.model.loaded.copy_bytes_per_s();
            crate::steps::rows(world, &plan.step_profile(), copy)
        });
        Ok(Timing {
            pair_times,
            stages,
            steps,
        })
    }

    /// One more pair, untimed, with the proportional set sampled while it runs: its peak
    /// counts whatever a transform holds only while it runs (FFTW's driver measures the same
    /// way). It leaves `back` as a timed pair does. The peak PSS in bytes.
    fn sampled_pair<P: RunPlan>(
        &self,
        plan: &mut P,
        input: &[P::In],
        back: &mut [P::In],
        output: &mut [P::Out],
    ) -> Result<u64, RunError> {
        let mode = self.mode();
        mode.reload(plan, back, input);
        self.world.barrier();
        let sampler = PssSampler::start();
        mode.pair(plan, input, back, output)?;
        Ok(sampler.finish())
    }

    /// Round trip per field: backward(forward(x)) against roundtrip_scale·x, relative to
    /// roundtrip_scale·max |x|. For c2r the input (a half spectrum) need not be Hermitian, so
    /// the round trip is taken on the real side: forward(backward(y)) against y = forward(x).
    /// `back` holds backward(forward(input)); with --destroy-input, `output` is scratch now
    /// and is computed again (for the c2r check and --output).
    fn roundtrip_errors<P: RunPlan>(
        &self,
        plan: &mut P,
        input: &[P::In],
        back: &mut [P::In],
        output: &mut [P::Out],
        scales: Scales,
    ) -> Result<Vec<f64>, RunError> {
        let (rank, batch, mode) = (self.rank(), plan.batch(), self.mode());
        let in_block = plan.input_layout().local_len(rank);
        let out_block = plan.output_layout().local_len(rank);
        if self.args.kind.forward_is_backward() {
            let mut again: AlignedBuf<P::Out> = AlignedBuf::new(out_block * batch);
            if mode.destroy {
                plan.forward_destroying(back, &mut again)?;
                mode.forward_of_input(plan, input, back, output)?;
            } else {
                plan.forward(back, &mut again)?;
            }
            let scale = scales.roundtrip;
            return Ok(roundtrip(
                self.world, output, &again, scale, out_block, batch,
            ));
        }
        let n_input = input.len();
        let mut dense: AlignedBuf<P::In> = AlignedBuf::new(if mode.in_place { n_input } else { 0 });
        if mode.in_place {
            plan.in_place_unload(back, &mut dense);
        }
        let got = if mode.in_place {
            &dense[..]
        } else {
            &back[..n_input]
        };
        let errors = roundtrip(self.world, input, got, scales.roundtrip, in_block, batch);
        if mode.destroy {
            mode.forward_of_input(plan, input, back, output)?;
        }
        Ok(errors)
    }

    /// Peak RSS, PSS now and at peak, and the plan's work bytes, each max over ranks.
    fn memory_use<P: RunPlan>(&self, plan: &P, pss_peak: u64) -> MemoryUse {
        let world = self.world;
        let pss_at_end = pss_bytes();
        let max = |x: u64| max_over_ranks(world, x as f64) as u64;
        MemoryUse {
            peak_rss: max(peak_rss_bytes()),
            pss: max(pss_at_end),
            pss_peak: max(pss_peak.max(pss_at_end)),
            plan_work: max(plan.work_bytes() as u64),
        }
    }

    /// The worst round-trip error, the worst reference error (synthetic input only; with the
    /// field they are in), and whether they pass: a finite input passes when both errors are
    /// within the limit (NaN fails).
    fn verdict(
        &self,
        nonfinite: u64,
        roundtrip_errors: &[f64],
        reference_errors: &[f64],
    ) -> (f64, Option<f64>, Result<(), RunError>) {
        let worst = |errors: &[f64]| -> Option<(usize, f64)> {
            errors
                .iter()
                .copied()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(&b.1))
        };
        let roundtrip = worst(roundtrip_errors).expect("batch >= 1");
        let reference = worst(reference_errors);
        let batch = roundtrip_errors.len();
        let field = |f: usize| {
            if batch > 1 {
                format!(" (field {f} of {batch})")
            } else {
                String::new()
            }
        };
        let mut verdict = Ok(());
        if nonfinite == 0 {
            for (what, worst) in [("round-trip", Some(roundtrip)), ("reference", reference)] {
                if let Some((f, error)) = worst {
                    if verdict.is_ok() && (error.is_nan() || error > self.verify_limit) {
                        verdict = Err(RunError::Verification {
                            what,
                            error,
                            limit: self.verify_limit,
                            field: field(f),
                        });
                    }
                }
            }
        }
        (roundtrip.1, reference.map(|r| r.1), verdict)
    }

    /// The run's report; `written`: what `--output` now is (a failed run names none).
    fn report<P: RunPlan>(
        &self,
        plan: &P,
        timing: Timing,
        memory: MemoryUse,
        (roundtrip_error, reference_error): (f64, Option<f64>),
        written: Option<crate::files::Written>,
    ) -> RunReport {
        let (args, batch) = (self.args, plan.batch());
        let pair_times = &timing.pair_times;
        RunReport {
            ranks: self.world.size() as usize,
            threads_per_rank: rayon::current_num_threads(),
            shape: self.setup.shape.clone(),
            grid: plan.grid().shape().dims().to_vec(),
            grid_choice: if self.model.auto {
                "auto".to_string()
            } else {
                args.grid.to_string()
            },
            // The model describes one c2c or r2c field.
            predicted_s: match (&args.kind, batch) {
                (Kind::C2c, 1) => self.model.predicted_s(plan.grid().shape(), false),
                (Kind::R2c, 1) => self.model.predicted_s(plan.grid().shape(), true),
                _ => None,
            },
            machine_profile: self.model.loaded.describe(),
            generic_profile: self.model.loaded.origin == crate::machine::Origin::Defaults,
            method: args.method.to_string(),
            transposed_out: args.transposed_out,
            destroy_input: args.destroy_input,
            in_place: args.in_place,
            scrambled: [args.scrambled_in, args.scrambled_out],
            axes: args.axes.clone(),
            kind: args.kind.to_string(),
            precision: args.precision.name().to_string(),
            batch,
            groups: plan.groups(),
            groups_choice: match args.groups {
                fft_core::Groups::Auto => "auto".to_string(),
                fft_core::Groups::Fixed(g) => g.to_string(),
            },
            normalization: args.normalization.name().to_string(),
            iters: args.iters,
            warmup: args.warmup,
            min_s: pair_times[0],
            median_s: pair_times[pair_times.len() / 2],
            stages: timing.stages,
            steps: timing.steps,
            roundtrip_error,
            reference_error,
            peak_rss_bytes: memory.peak_rss,
            pss_bytes: memory.pss,
            pss_peak_bytes: memory.pss_peak,
            // The in-place buffer is the run's own, whatever --alloc says.
            alloc: if args.in_place {
                Alloc::Caller.to_string()
            } else {
                args.alloc.to_string()
            },
            plan_work_bytes: memory.plan_work,
            input: args.input.as_ref().map(|p| p.display().to_string()),
            output: args
                .output
                .as_ref()
                .filter(|_| written.is_some())
                .map(|p| p.display().to_string()),
            output_action: written,
        }
    }

    /// Prints the report on rank 0 (a JSON line or a table).
    fn print(&self, report: &RunReport) {
        let provenance = crate::provenance::Provenance::collect(self.world);
        if self.rank() == 0 {
            if self.args.json {
                println!("{}", report.to_json(&provenance));
            } else {
                print!("{}", report.to_table());
            }
        }
    }
}

/// Per field: max over ranks of max |got − scale·want| / (scale · max |want|).
fn roundtrip<S: Sample>(
    world: &SimpleCommunicator,
    want: &[S],
    got: &[S],
    scale: f64,
    block: usize,
    batch: usize,
) -> Vec<f64> {
    (0..batch)
        .map(|f| {
            let range = f * block..(f + 1) * block;
            let (want, got) = (&want[range.clone()], &got[range]);
            let local_max = max_or_nan(want.iter().map(|v| v.to_c64().norm()));
            let global_max = max_over_ranks(world, local_max);
            let local = max_or_nan(
                got.iter()
                    .zip(want)
                    .map(|(g, w)| (g.to_c64() - w.to_c64() * scale).norm()),
            );
            max_over_ranks(world, local) / (scale * global_max).max(f64::MIN_POSITIVE)
        })
        .collect()
}
