//! 1-D transforms along one axis that may change its length or element type, or are not
//! FFTs ([`LineStep`]): r2c, c2r, padded or truncated c2c, and the real-to-real kinds.

use super::tile_lines;
use super::transpose::{gather, scatter};
use super::Twiddle;
use crate::options::R2rKind;
use crate::real::Real;
use num_complex::Complex;
use rayon::prelude::*;
use realfft::{ComplexToReal, RealToComplex};
use redist::alloc::AlignedBuf;
use redist::pack::prefetch_run;
use redist::transport::SendPtr;
use rustfft::Fft;
use std::sync::Arc;

/// A real-to-real transform of one length. rustdct's DCTs and DSTs compute half of FFTW's
/// REDFT/RODFT sums ([`R2r::process`] leaves that factor to the caller, see
/// [`R2r::fftw_factor`]); the halfcomplex kinds and the Hartley transform run on realfft's
/// real FFTs, at FFTW's scale.
#[derive(Clone)]
pub(crate) enum R2r<T: Real> {
    Dct1(Arc<dyn rustdct::Dct1<T>>),
    Dst1(Arc<dyn rustdct::Dst1<T>>),
    Type23(Arc<dyn rustdct::TransformType2And3<T>>, R2rKind),
    Type4(Arc<dyn rustdct::TransformType4<T>>, R2rKind),
    /// R2HC (`hartley` false) or DHT (`hartley` true): a real FFT, then its half spectrum
    /// rearranged.
    Forward(Arc<dyn RealToComplex<T>>, bool),
    /// HC2R: the halfcomplex line made a half spectrum, then a complex-to-real FFT.
    Hc2r(Arc<dyn ComplexToReal<T>>),
}

impl<T: Real> R2r<T> {
    /// Plans `kind` for lines of `n` points.
    pub(crate) fn new(
        dcts: &mut rustdct::DctPlanner<T>,
        reals: &mut realfft::RealFftPlanner<T>,
        kind: R2rKind,
        n: usize,
    ) -> Self {
        match kind {
            R2rKind::Dct1 => R2r::Dct1(dcts.plan_dct1(n)),
            R2rKind::Dst1 => R2r::Dst1(dcts.plan_dst1(n)),
            R2rKind::Dct2 => R2r::Type23(dcts.plan_dct2(n), kind),
            R2rKind::Dct3 => R2r::Type23(dcts.plan_dct3(n), kind),
            R2rKind::Dst2 => R2r::Type23(dcts.plan_dst2(n), kind),
            R2rKind::Dst3 => R2r::Type23(dcts.plan_dst3(n), kind),
            R2rKind::Dct4 => R2r::Type4(dcts.plan_dct4(n), kind),
            R2rKind::Dst4 => R2r::Type4(dcts.plan_dst4(n), kind),
            R2rKind::R2hc => R2r::Forward(reals.plan_fft_forward(n), false),
            R2rKind::Dht => R2r::Forward(reals.plan_fft_forward(n), true),
            R2rKind::Hc2r => R2r::Hc2r(reals.plan_fft_inverse(n)),
        }
    }

    /// What [`R2r::process`]'s result must be multiplied by to give FFTW's transform:
    /// rustdct's sums are half of FFTW's.
    pub(crate) fn fftw_factor(&self) -> f64 {
        match self {
            R2r::Forward(..) | R2r::Hc2r(_) => 1.0,
            _ => 2.0,
        }
    }

    /// Scalars of scratch [`R2r::process`] needs: rustdct's own, or a half spectrum (an even
    /// number of scalars, so that it starts the scratch aligned as complex) and realfft's.
    fn scratch_len(&self) -> usize {
        match self {
            R2r::Dct1(t) => t.get_scratch_len(),
            R2r::Dst1(t) => t.get_scratch_len(),
            R2r::Type23(t, _) => t.get_scratch_len(),
            R2r::Type4(t, _) => t.get_scratch_len(),
            R2r::Forward(f, _) => 2 * (f.len() / 2 + 1) + 2 * f.get_scratch_len(),
            R2r::Hc2r(f) => 2 * (f.len() / 2 + 1) + 2 * f.get_scratch_len(),
        }
    }

    /// The transform of `line` in place (rustdct's scaling; see [`R2r::fftw_factor`]).
    fn process(&self, line: &mut [T], scratch: &mut [T]) {
        match self {
            R2r::Dct1(t) => t.process_dct1_with_scratch(line, scratch),
            R2r::Dst1(t) => {
                // rustdct's DST-I from length 25 on (`Dst1ConvertToFft`) writes the odd
                // extension of the line into scratch but never its two zeros (entries 0 and
                // n + 1 of the FFT input), so it reads whatever the scratch held: the previous
                // line's FFT output, when one scratch serves every line. A zeroed scratch is
                // what rustdct's own `process_dst1` hands it.
                scratch.fill(T::zero());
                t.process_dst1_with_scratch(line, scratch)
            }
            R2r::Type23(t, R2rKind::Dct2) => t.process_dct2_with_scratch(line, scratch),
            R2r::Type23(t, R2rKind::Dct3) => t.process_dct3_with_scratch(line, scratch),
            R2r::Type23(t, R2rKind::Dst2) => t.process_dst2_with_scratch(line, scratch),
            R2r::Type23(t, _) => t.process_dst3_with_scratch(line, scratch),
            R2r::Type4(t, R2rKind::Dct4) => t.process_dct4_with_scratch(line, scratch),
            R2r::Type4(t, _) => t.process_dst4_with_scratch(line, scratch),
            R2r::Forward(f, hartley) => {
                let n = line.len();
                let (spectrum, fft_scratch) = half_spectrum(scratch, n, f.get_scratch_len());
                f.process_with_scratch(line, spectrum, fft_scratch)
                    .expect("r2c buffer lengths are planned");
                halfcomplex_from(spectrum, line, *hartley);
            }
            R2r::Hc2r(f) => {
                let n = line.len();
                let (spectrum, fft_scratch) = half_spectrum(scratch, n, f.get_scratch_len());
                spectrum_from_halfcomplex(line, spectrum);
                f.process_with_scratch(spectrum, line, fft_scratch)
                    .expect("the DC and Nyquist modes are real");
            }
        }
    }
}

/// The first `n/2 + 1` complex elements of `scratch` (scalars) for a half spectrum, and the
/// next `fft` complex elements for realfft's own scratch.
fn half_spectrum<T: Real>(
    scratch: &mut [T],
    n: usize,
    fft: usize,
) -> (&mut [Complex<T>], &mut [Complex<T>]) {
    let (spectrum, rest) = scratch.split_at_mut(2 * (n / 2 + 1));
    (
        bytemuck::cast_slice_mut(spectrum),
        bytemuck::cast_slice_mut(&mut rest[..2 * fft]),
    )
}

/// Writes the half spectrum `X` of a real line of `line.len()` points into `line`: FFTW's
/// halfcomplex order (`Re X_0 … Re X_{n/2}`, then `Im X_{(n−1)/2} … Im X_1`), or with
/// `hartley` the Hartley transform `Re X_k − Im X_k` (the modes above n/2 being the
/// conjugates of those below).
fn halfcomplex_from<T: Real>(spectrum: &[Complex<T>], line: &mut [T], hartley: bool) {
    let n = line.len();
    for k in 0..=n / 2 {
        let x = spectrum[k];
        if hartley {
            line[k] = x.re - x.im;
            if k > 0 && 2 * k != n {
                line[n - k] = x.re + x.im;
            }
        } else {
            line[k] = x.re;
            if k > 0 && 2 * k != n {
                line[n - k] = x.im;
            }
        }
    }
}

/// The half spectrum stored in halfcomplex order in `line` (see [`halfcomplex_from`]), with
/// the DC and (even lengths) Nyquist modes real.
fn spectrum_from_halfcomplex<T: Real>(line: &[T], spectrum: &mut [Complex<T>]) {
    let n = line.len();
    for (k, x) in spectrum.iter_mut().enumerate() {
        let im = if k > 0 && 2 * k != n {
            line[n - k]
        } else {
            T::zero()
        };
        *x = Complex::new(line[k], im);
    }
}

/// The 1-D transform a [`LineStep`] applies to each line.
#[derive(Clone)]
pub(crate) enum LineOp<T: Real> {
    /// A complex FFT of `max(n_in, n_out)` points; when the lengths differ, the spectral side
    /// keeps the `min(n_in, n_out)` lowest modes (truncation forward, zero-padding backward;
    /// the Nyquist mode of an even spectral length is dropped).
    C2c(Arc<dyn Fft<T>>),
    /// A real-to-complex FFT of `n_in` points; the output keeps the `n_out` lowest modes of a
    /// spectral real length `spectral` (Nyquist dropped when padded).
    R2c(Arc<dyn RealToComplex<T>>),
    /// A complex-to-real FFT of `n_out` points from `n_in` modes (zero-padded).
    C2r(Arc<dyn ComplexToReal<T>>),
    /// A real-to-real transform (on complex data: on the real and imaginary parts).
    R2r(R2r<T>),
}

/// 1-D transforms along one axis of a block, in or out of place, that may change the axis
/// length (padding/truncation) and the element type (real ↔ complex). Lines are gathered a
/// tile at a time into the worker's scratch (or read and written directly when contiguous and
/// out of place), so nothing is allocated per call; the gather and the scatter move 4 × 4
/// blocks of elements where the CPU can ([`super::transpose`]: complex `f64`, complex `f32`
/// and real `f64`), and the tile's lines are padded like a sweep's ([`tile_stride`]). Data is
/// passed as scalars (`T`); complex elements are two scalars.
#[derive(Clone)]
pub(crate) struct LineStep<T: Real> {
    op: LineOp<T>,
    /// Line lengths in elements.
    n_in: usize,
    n_out: usize,
    /// Scalars per element (1 real, 2 complex).
    c_in: usize,
    c_out: usize,
    /// Memory shape `[outer, n, inner]` of both blocks.
    outer: usize,
    inner: usize,
    /// The spectral length (real length along the r2c axis) for the mode map.
    spectral: usize,
    /// Extra factor applied with every line (rustdct's scaling for r2r).
    factor: T,
    /// The twiddle factors of a distributed 1-D FFT's first FFTs (c2c of unchanged length).
    twiddle: Option<Twiddle<T>>,
}

/// Whether index `j` of `n` modes is the Nyquist mode (`n` even, `j = n/2`).
fn is_nyquist(n: usize, j: usize) -> bool {
    n & 1 == 0 && j == n / 2
}

/// Spectral index `j` of `n` modes → index in a spectrum of `m ≥ n` points, or `None` for the
/// Nyquist mode of an even `n` (dropped when padding or truncating).
fn mode_index(n: usize, m: usize, j: usize) -> Option<usize> {
    if is_nyquist(n, j) {
        return None;
    }
    Some(if j < n.div_ceil(2) { j } else { m - (n - j) })
}

impl<T: Real> LineStep<T> {
    /// A step along memory position `position` of a source block of memory shape
    /// `memory_shape` (only that axis differs between source and destination). `spectral`: see
    /// the field; `real_in`/`real_out`: element types.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        op: LineOp<T>,
        memory_shape: &[usize],
        position: usize,
        n_out: usize,
        real_in: bool,
        real_out: bool,
        spectral: usize,
    ) -> Self {
        let factor = match &op {
            LineOp::R2r(r2r) => T::of(r2r.fftw_factor()),
            _ => T::one(),
        };
        Self {
            op,
            n_in: memory_shape[position],
            n_out,
            c_in: if real_in { 1 } else { 2 },
            c_out: if real_out { 1 } else { 2 },
            outer: memory_shape[..position].iter().product(),
            inner: memory_shape[position + 1..].iter().product(),
            spectral,
            factor,
            twiddle: None,
        }
    }

    /// The same step with the twiddle factors of a distributed 1-D FFT around each line's
    /// FFT (a complex FFT that keeps the length; line `o` of the block is [`Twiddle`]'s line
    /// `o`).
    pub(crate) fn with_twiddle(mut self, twiddle: Twiddle<T>) -> Self {
        debug_assert!(matches!(self.op, LineOp::C2c(_)) && self.n_in == self.n_out);
        self.twiddle = Some(twiddle);
        self
    }

    /// Scalars of the destination block.
    pub(crate) fn output_scalars(&self) -> usize {
        self.outer * self.inner * self.n_out * self.c_out
    }

    fn tile_width(&self) -> usize {
        tile_lines::<T>(self.n_in.max(self.n_out)).min(self.inner.max(1))
    }

    /// Scalars of the per-line temporaries and the transform's own scratch.
    pub(super) fn tmp_len(&self) -> usize {
        let m = self.n_in.max(self.n_out);
        match &self.op {
            LineOp::C2c(f) => 2 * (m + f.get_inplace_scratch_len()),
            LineOp::R2c(f) => self.n_in + 2 * (self.n_in / 2 + 1) + 2 * f.get_scratch_len(),
            LineOp::C2r(f) => 2 * (self.n_out / 2 + 1) + 2 * f.get_scratch_len(),
            LineOp::R2r(t) => self.n_in + t.scratch_len(),
        }
    }

    /// Scalars between the lines of a tile of `n` elements of `c` scalars each: the line
    /// padded by two cache lines, as in [`tile_stride`], so that lines of a power-of-two
    /// length do not all fall into the same cache sets.
    fn tile_line(&self, n: usize, c: usize) -> usize {
        n * c + 128 / std::mem::size_of::<T>()
    }

    /// Scratch elements (`Complex<T>`) one worker needs.
    pub(crate) fn scratch_len(&self) -> usize {
        let w = self.tile_width();
        let lines = self.tile_line(self.n_in, self.c_in) + self.tile_line(self.n_out, self.c_out);
        (w * lines + self.tmp_len()).div_ceil(2)
    }

    /// Transforms line `line` of the block: `input` (`n_in` elements) into `output` (`n_out`
    /// elements).
    fn apply(&self, line: usize, input: &[T], output: &mut [T], tmp: &mut [T], scale: T) {
        let scale = scale * self.factor;
        let scaled = |x: Complex<T>| x * scale;
        match &self.op {
            LineOp::C2c(fft) => {
                let m = self.n_in.max(self.n_out);
                let (buf, scratch) = tmp.split_at_mut(2 * m);
                let buf: &mut [Complex<T>] = bytemuck::cast_slice_mut(buf);
                let scratch: &mut [Complex<T>] =
                    bytemuck::cast_slice_mut(&mut scratch[..2 * fft.get_inplace_scratch_len()]);
                let input: &[Complex<T>] = bytemuck::cast_slice(input);
                let output: &mut [Complex<T>] = bytemuck::cast_slice_mut(output);
                if self.n_in >= self.n_out {
                    buf.copy_from_slice(input);
                    let twiddle = self.twiddle.as_ref();
                    if let Some(t) = twiddle.filter(|t| !t.after()) {
                        t.apply(line, buf);
                    }
                    fft.process_with_scratch(buf, scratch);
                    if let Some(t) = twiddle.filter(|t| t.after()) {
                        t.apply(line, buf);
                    }
                    if self.n_in == self.n_out {
                        output
                            .iter_mut()
                            .zip(buf.iter())
                            .for_each(|(o, &b)| *o = scaled(b));
                    } else {
                        for (j, o) in output.iter_mut().enumerate() {
                            *o = match mode_index(self.n_out, m, j) {
                                Some(i) => scaled(buf[i]),
                                None => Complex::default(),
                            };
                        }
                    }
                } else {
                    buf.fill(Complex::default());
                    for (j, &x) in input.iter().enumerate() {
                        if let Some(i) = mode_index(self.n_in, m, j) {
                            buf[i] = x;
                        }
                    }
                    fft.process_with_scratch(buf, scratch);
                    output
                        .iter_mut()
                        .zip(buf.iter())
                        .for_each(|(o, &b)| *o = scaled(b));
                }
            }
            LineOp::R2c(fft) => {
                let m = self.n_in;
                let (real, rest) = tmp.split_at_mut(m);
                let (spec, scratch) = rest.split_at_mut(2 * (m / 2 + 1));
                let spec: &mut [Complex<T>] = bytemuck::cast_slice_mut(spec);
                let scratch: &mut [Complex<T>] =
                    bytemuck::cast_slice_mut(&mut scratch[..2 * fft.get_scratch_len()]);
                real.copy_from_slice(input);
                let output: &mut [Complex<T>] = bytemuck::cast_slice_mut(output);
                let padded = m != self.spectral;
                let n = self.spectral;
                if !padded {
                    // The whole half spectrum is kept: transform straight into the output.
                    fft.process_with_scratch(real, output, scratch)
                        .expect("r2c buffer lengths are planned");
                    if scale != T::one() {
                        output.iter_mut().for_each(|x| *x = *x * scale);
                    }
                    return;
                }
                fft.process_with_scratch(real, spec, scratch)
                    .expect("r2c buffer lengths are planned");
                for (j, o) in output.iter_mut().enumerate() {
                    *o = if padded && is_nyquist(n, j) {
                        Complex::default()
                    } else {
                        scaled(spec[j])
                    };
                }
            }
            LineOp::C2r(fft) => {
                let m = self.n_out;
                let (spec, scratch) = tmp.split_at_mut(2 * (m / 2 + 1));
                let spec: &mut [Complex<T>] = bytemuck::cast_slice_mut(spec);
                let scratch: &mut [Complex<T>] =
                    bytemuck::cast_slice_mut(&mut scratch[..2 * fft.get_scratch_len()]);
                let input: &[Complex<T>] = bytemuck::cast_slice(input);
                let padded = m != self.spectral;
                let n = self.spectral;
                spec.fill(Complex::default());
                for (j, &x) in input.iter().enumerate() {
                    if !(padded && is_nyquist(n, j)) {
                        spec[j] = x;
                    }
                }
                // The imaginary parts of the DC and Nyquist modes do not exist in a real
                // signal's spectrum; they are ignored, as numpy's irfft does.
                spec[0].im = T::zero();
                if m & 1 == 0 {
                    spec[m / 2].im = T::zero();
                }
                let _ = fft.process_with_scratch(spec, output, scratch);
                if scale != T::one() {
                    output.iter_mut().for_each(|x| *x = *x * scale);
                }
            }
            LineOp::R2r(r2r) => {
                let n = self.n_in;
                let (line, scratch) = tmp.split_at_mut(n);
                let c = self.c_in;
                if c == 1 {
                    // Real lines: plain copies, which vectorize.
                    line.copy_from_slice(input);
                    r2r.process(line, scratch);
                    output
                        .iter_mut()
                        .zip(&*line)
                        .for_each(|(o, &v)| *o = v * scale);
                    return;
                }
                for part in 0..c {
                    for (j, v) in line.iter_mut().enumerate() {
                        *v = input[j * c + part];
                    }
                    r2r.process(line, scratch);
                    for (j, &v) in line.iter().enumerate() {
                        output[j * c + part] = v * scale;
                    }
                }
            }
        }
    }

    /// Runs the step: from `input` into `data` when given (out of place; `input` has the
    /// source shape), else in place on `data` (same lengths and element type). Scalars.
    pub(crate) fn run(
        &self,
        data: &mut [T],
        input: Option<&[T]>,
        scale: T,
        workers: &mut [AlignedBuf<Complex<T>>],
    ) {
        let (outer, inner) = (self.outer, self.inner);
        if outer * inner == 0 || self.n_in == 0 {
            return;
        }
        let (n_in, n_out, c_in, c_out) = (self.n_in, self.n_out, self.c_in, self.c_out);
        let in_line = n_in * c_in;
        let out_line = n_out * c_out;
        assert_eq!(data.len(), outer * inner * out_line);
        if let Some(input) = input {
            assert_eq!(input.len(), outer * inner * in_line);
        } else {
            assert_eq!(
                (n_in, c_in),
                (n_out, c_out),
                "in place keeps the line shape"
            );
        }
        let width = self.tile_width();
        let blocks = inner.div_ceil(width);
        let tasks = outer * blocks;
        let nworkers = workers.len();
        let dst = SendPtr::new(data.as_mut_ptr());
        let src = input.map(|s| SendPtr::from_const(s.as_ptr()));
        workers.par_iter_mut().enumerate().for_each(|(w, scratch)| {
            let scratch: &mut [T] = bytemuck::cast_slice_mut(&mut scratch[..]);
            let (in_stride, out_stride) =
                (self.tile_line(n_in, c_in), self.tile_line(n_out, c_out));
            let (tile_in, rest) = scratch.split_at_mut(width * in_stride);
            let (tile_out, tmp) = rest.split_at_mut(width * out_stride);
            let first = tasks * w / nworkers;
            let last = tasks * (w + 1) / nworkers;
            for task in first..last {
                let (o, block) = (task / blocks, task % blocks);
                let c0 = block * width;
                let cols = width.min(inner - c0);
                // Tasks cover disjoint (outer, column-block) sets, so workers read and write
                // disjoint lines; all offsets stay inside the blocks (lengths asserted).
                let from = src.map_or(dst.get().cast_const(), |s| s.get_const());
                let from = from.wrapping_add((o * n_in * inner + c0) * c_in);
                let to = dst.get().wrapping_add((o * n_out * inner + c0) * c_out);
                if inner == 1 {
                    // A contiguous line: straight from the input, or in place from a copy.
                    // SAFETY: this task's source line, only read while the slice lives (in
                    // place, it is copied before its own line is written).
                    let mut input = unsafe { std::slice::from_raw_parts(from, in_line) };
                    if src.is_none() {
                        tile_in[..in_line].copy_from_slice(input);
                        input = &tile_in[..in_line];
                    }
                    // SAFETY: this task's destination line, written by no one else.
                    let output = unsafe { std::slice::from_raw_parts_mut(to, out_line) };
                    self.apply(o, input, output, tmp, scale);
                    continue;
                }
                // Gather `cols` lines into the tile (line c at c·in_stride), in blocks of
                // elements (complex or real) where the CPU can.
                let rows = |j: usize| from.wrapping_add(j * inner * c_in);
                let tile = tile_in.as_mut_ptr();
                // SAFETY: the task's source rows hold its `cols` columns; the tile holds
                // `cols` lines `in_stride` scalars apart.
                unsafe {
                    if c_in == 2 {
                        let rows = |j| rows(j).cast::<Complex<T>>();
                        gather(rows, n_in, cols, tile.cast::<Complex<T>>(), in_stride / 2);
                    } else {
                        gather(rows, n_in, cols, tile, in_stride);
                    }
                }
                for c in 0..cols {
                    self.apply(
                        o,
                        &tile_in[c * in_stride..c * in_stride + in_line],
                        &mut tile_out[c * out_stride..c * out_stride + out_line],
                        tmp,
                        scale,
                    );
                }
                let rows = |j: usize| to.wrapping_add(j * inner * c_out);
                let tile = tile_out.as_ptr();
                // SAFETY: the task's destination rows hold its `cols` columns, written by no
                // one else; the tile holds `cols` lines `out_stride` scalars apart.
                unsafe {
                    if c_out == 2 {
                        let rows = |j| rows(j).cast::<Complex<T>>();
                        let tile = tile.cast::<Complex<T>>();
                        scatter(tile, out_stride / 2, n_out, cols, rows, None::<T>);
                    } else {
                        scatter(tile, out_stride, n_out, cols, rows, None::<T>);
                    }
                }
            }
        });
    }
}

impl<T: Real> LineStep<T> {
    /// Whether the lines are contiguous (the step runs along the last memory position).
    pub(crate) fn is_contiguous(&self) -> bool {
        self.inner == 1
    }

    /// Whether the step turns real lines into complex ones (or back): an r2c or a c2r.
    pub(crate) fn is_real_complex(&self) -> bool {
        matches!(self.op, LineOp::R2c(_) | LineOp::C2r(_))
    }

    /// Lines of the block.
    pub(super) fn lines(&self) -> usize {
        self.outer * self.inner
    }

    /// Scalars of one source block.
    pub(super) fn input_scalars(&self) -> usize {
        self.outer * self.inner * self.n_in * self.c_in
    }

    /// The contiguous lines of `input` into `output` on the calling thread, with `tmp` of at
    /// least `tmp_len()` scalars. A line's transform runs in cache, so the next line's source
    /// and destination (for writing) are fetched meanwhile: a plane step's real rows stream
    /// from memory (r2c) or to it (c2r) that way instead of stalling each line's first
    /// touch.
    pub(super) fn run_lines(&self, output: &mut [T], input: &[T], scale: T, tmp: &mut [T]) {
        self.run_lines_to(output, input, scale, tmp, |i| i);
    }

    /// [`LineStep::run_lines`], line `i` written to output line `to(i)` (a permutation of
    /// the lines, each below their count).
    pub(super) fn run_lines_to(
        &self,
        output: &mut [T],
        input: &[T],
        scale: T,
        tmp: &mut [T],
        to: impl Fn(usize) -> usize,
    ) {
        debug_assert!(self.is_contiguous() && self.twiddle.is_none());
        let (in_line, out_line) = (self.n_in * self.c_in, self.n_out * self.c_out);
        let size = std::mem::size_of::<T>();
        let lines = (input.len() / in_line.max(1)).min(output.len() / out_line.max(1));
        let next_out = output.as_ptr();
        for (i, x) in input.chunks_exact(in_line).take(lines).enumerate() {
            if i + 1 < lines {
                prefetch_run(input[(i + 1) * in_line..].as_ptr(), in_line * size);
                let next = next_out.wrapping_add(to(i + 1) * out_line);
                prefetch_for_write(next, out_line * size);
            }
            let at = to(i) * out_line;
            self.apply(0, x, &mut output[at..at + out_line], tmp, scale);
        }
    }
}

/// Fetches the cache lines of `bytes` bytes at `ptr` for writing (exclusive, so that the
/// stores that follow need no read for ownership of their own).
#[inline(always)]
fn prefetch_for_write<E>(ptr: *const E, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        let p = ptr.cast::<i8>();
        for off in (0..bytes).step_by(64) {
            // SAFETY: prefetching is a hint that never faults, whatever the address.
            unsafe { _mm_prefetch(p.wrapping_add(off), _MM_HINT_ET0) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ptr, bytes);
}
