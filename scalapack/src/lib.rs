//! # dfft-scalapack
//!
//! A drop-in for ScaLAPACK's matrix redistribution: `libdfft_scalapack.so` exports the exact
//! Fortran symbols and C entry points of `p{s,d,c,z,i}gemr2d` and `p{s,d,c,z,i}trmr2d`
//! (`pdgemr2d_`, `Cpdgemr2d`, …), so a program built against ScaLAPACK runs its
//! redistributions on dfft with `LD_PRELOAD=libdfft_scalapack.so` or by linking this library
//! before ScaLAPACK, with no source change. Every entry point also exists with a `dfft_`
//! prefix (`dfft_pdgemr2d_`, `dfft_Cpdgemr2d`, …) for programs that call both.
//!
//! The semantics are ScaLAPACK's (Dongarra, Prylli, Randriamaro and Tourancheau's algorithm,
//! as `REDIST/SRC` implements it): any 2-D block-cyclic descriptors with first-process offsets
//! and leading dimensions, submatrices `A(IA:IA+M-1, JA:JA+N-1) → B(IB:…, JB:…)`, grids on any
//! processes of the union context `gcontext` (processes outside a grid pass a descriptor whose
//! context is −1), nothing done for `M = 0` or `N = 0`, and for `p?trmr2d` ScaLAPACK's
//! trapezoid (`UPLO`, `DIAG`). Every process of `gcontext` must call. Bad arguments print an
//! error naming the values and abort the job, as ScaLAPACK exits on them.
//!
//! How: the BLACS of the program's ScaLAPACK (found through the dynamic linker) give each
//! process its grid positions and the union context's communicator; one `MPI_Allgather` tells
//! every process everyone's view; [`desc::resolve`] turns that into two
//! [`redist::dist::DistArray`]s and sections, planned by [`redist::cyclic::plan::RedistPlan`]
//! and run by [`redist::cyclic::run::Redistribution`]. Plans of the last 8 distinct calls per
//! set of processes are kept: a repeated call costs one `MPI_Allreduce`, the pack and the
//! unpack.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod blacs;
pub mod desc;
mod run;

use num_complex::Complex;
use run::{mr2d, Args};
use std::ffi::{c_char, c_int};

/// Defines the Fortran and C entry points of one element type, under ScaLAPACK's names and
/// under `dfft_`-prefixed ones.
macro_rules! entry_points {
    ($t:ty, $gemr:literal, $trmr:literal,
     [$($f_ge:ident),+], [$($c_ge:ident),+], [$($f_tr:ident),+], [$($c_tr:ident),+]) => {
        $(
            #[doc = concat!("`", $gemr, "` (Fortran): copies `A(IA:IA+M-1, JA:JA+N-1)` to ",
                            "`B(IB:IB+M-1, JB:JB+N-1)`; every argument by reference.")]
            ///
            /// # Safety
            /// ScaLAPACK's contract: valid pointers, descriptors of 9 integers, local arrays of
            /// their descriptors' sizes on the processes of their grids.
            #[no_mangle]
            pub unsafe extern "C" fn $f_ge(
                m: *const c_int, n: *const c_int,
                a: *const $t, ia: *const c_int, ja: *const c_int, desca: *const c_int,
                b: *mut $t, ib: *const c_int, jb: *const c_int, descb: *const c_int,
                gcontext: *const c_int,
            ) {
                // SAFETY: the Fortran interface passes every integer by reference.
                let (m, n, ia, ja, ib, jb, gcontext) =
                    unsafe { (*m, *n, *ia, *ja, *ib, *jb, *gcontext) };
                mr2d($gemr, Args {
                    m, n, a, ia, ja, desca, b, ib, jb, descb, gcontext, trapezoid: None,
                });
            }
        )+
        $(
            #[doc = concat!("`C", $gemr, "`: the C entry point of `", $gemr, "`.")]
            ///
            /// # Safety
            /// As the Fortran entry point.
            #[no_mangle]
            pub unsafe extern "C" fn $c_ge(
                m: c_int, n: c_int,
                a: *const $t, ia: c_int, ja: c_int, desca: *const c_int,
                b: *mut $t, ib: c_int, jb: c_int, descb: *const c_int,
                gcontext: c_int,
            ) {
                mr2d($gemr, Args {
                    m, n, a, ia, ja, desca, b, ib, jb, descb, gcontext, trapezoid: None,
                });
            }
        )+
        $(
            #[doc = concat!("`", $trmr, "` (Fortran): copies the trapezoid `UPLO`, `DIAG` of ",
                            "the submatrix; every argument by reference (the hidden string ",
                            "lengths are not needed).")]
            ///
            /// # Safety
            /// As the general copy, and `uplo`, `diag` point to one character each.
            #[no_mangle]
            pub unsafe extern "C" fn $f_tr(
                uplo: *const c_char, diag: *const c_char,
                m: *const c_int, n: *const c_int,
                a: *const $t, ia: *const c_int, ja: *const c_int, desca: *const c_int,
                b: *mut $t, ib: *const c_int, jb: *const c_int, descb: *const c_int,
                gcontext: *const c_int,
            ) {
                // SAFETY: the Fortran interface passes every argument by reference.
                let (m, n, ia, ja, ib, jb, gcontext, uplo, diag) =
                    unsafe { (*m, *n, *ia, *ja, *ib, *jb, *gcontext, *uplo as u8, *diag as u8) };
                mr2d($trmr, Args {
                    m, n, a, ia, ja, desca, b, ib, jb, descb, gcontext,
                    trapezoid: Some((uplo, diag)),
                });
            }
        )+
        $(
            #[doc = concat!("`C", $trmr, "`: the C entry point of `", $trmr, "`.")]
            ///
            /// # Safety
            /// As the Fortran entry point.
            #[no_mangle]
            pub unsafe extern "C" fn $c_tr(
                uplo: *const c_char, diag: *const c_char,
                m: c_int, n: c_int,
                a: *const $t, ia: c_int, ja: c_int, desca: *const c_int,
                b: *mut $t, ib: c_int, jb: c_int, descb: *const c_int,
                gcontext: c_int,
            ) {
                // SAFETY: `uplo` and `diag` point to one character each.
                let (uplo, diag) = unsafe { (*uplo as u8, *diag as u8) };
                mr2d($trmr, Args {
                    m, n, a, ia, ja, desca, b, ib, jb, descb, gcontext,
                    trapezoid: Some((uplo, diag)),
                });
            }
        )+
    };
}

entry_points!(
    f32,
    "psgemr2d",
    "pstrmr2d",
    [psgemr2d_, dfft_psgemr2d_],
    [Cpsgemr2d, dfft_Cpsgemr2d],
    [pstrmr2d_, dfft_pstrmr2d_],
    [Cpstrmr2d, dfft_Cpstrmr2d]
);
entry_points!(
    f64,
    "pdgemr2d",
    "pdtrmr2d",
    [pdgemr2d_, dfft_pdgemr2d_],
    [Cpdgemr2d, dfft_Cpdgemr2d],
    [pdtrmr2d_, dfft_pdtrmr2d_],
    [Cpdtrmr2d, dfft_Cpdtrmr2d]
);
entry_points!(
    Complex<f32>,
    "pcgemr2d",
    "pctrmr2d",
    [pcgemr2d_, dfft_pcgemr2d_],
    [Cpcgemr2d, dfft_Cpcgemr2d],
    [pctrmr2d_, dfft_pctrmr2d_],
    [Cpctrmr2d, dfft_Cpctrmr2d]
);
entry_points!(
    Complex<f64>,
    "pzgemr2d",
    "pztrmr2d",
    [pzgemr2d_, dfft_pzgemr2d_],
    [Cpzgemr2d, dfft_Cpzgemr2d],
    [pztrmr2d_, dfft_pztrmr2d_],
    [Cpztrmr2d, dfft_Cpztrmr2d]
);
entry_points!(
    i32,
    "pigemr2d",
    "pitrmr2d",
    [pigemr2d_, dfft_pigemr2d_],
    [Cpigemr2d, dfft_Cpigemr2d],
    [pitrmr2d_, dfft_pitrmr2d_],
    [Cpitrmr2d, dfft_Cpitrmr2d]
);
