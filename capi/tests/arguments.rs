//! The C API's checks that need no MPI, called through the C ABI in one process (MPI is never
//! initialized here): argument errors come back as codes with messages naming the values, in
//! C's or Fortran's indexing; a valid request without MPI is refused, not crashed; a panic
//! becomes `DFFT_ERROR_INTERNAL`; messages belong to their codes.

use dfft::*;
use std::ffi::{c_char, c_int, CStr};
use std::ptr::{null, null_mut};

fn message(code: c_int) -> String {
    // SAFETY: dfft_error_message never returns NULL; its strings are NUL-terminated.
    unsafe { CStr::from_ptr(dfft_error_message(code)) }
        .to_str()
        .unwrap()
        .to_string()
}

/// Plans a c2c transform on a NULL communicator (never reached when the arguments are bad),
/// returning the code and the message; checks that `*plan` is NULL afterwards.
fn plan_c(
    d: c_int,
    n: &[isize],
    grid_rank: c_int,
    grid_dims: Option<&[c_int]>,
    flags: u32,
) -> (c_int, String) {
    let mut plan = std::ptr::NonNull::<DfftPlan>::dangling().as_ptr();
    // SAFETY: `n` and `grid_dims` hold what `d` and `grid_rank` say (or the call refuses them
    // first); RSMPI_COMM_NULL is a constant handle; `plan` is writable.
    let code = unsafe {
        dfft_plan_dft(
            d,
            n.as_ptr(),
            1,
            mpi::ffi::RSMPI_COMM_NULL,
            grid_rank,
            grid_dims.map_or(null(), |g| g.as_ptr()),
            flags,
            &mut plan,
        )
    };
    assert!(plan.is_null(), "a failed constructor must leave *plan NULL");
    (code, message(code))
}

#[test]
fn bad_sizes_name_their_values() {
    let (code, text) = plan_c(0, &[8], 0, None, 0);
    assert_eq!(code, DFFT_ERROR_BAD_ARGUMENT);
    assert!(text.contains("d = 0"), "{text}");
    let (code, text) = plan_c(3, &[8, -2, 4], 0, None, 0);
    assert_eq!(code, DFFT_ERROR_BAD_ARGUMENT);
    assert!(
        text.contains("n[1] = -2") && text.contains("[8, -2, 4]"),
        "{text}"
    );
    let (code, text) = plan_c(3, &[8, 6, 4], 0, None, 1 << 9);
    assert_eq!(code, DFFT_ERROR_BAD_ARGUMENT);
    assert!(text.contains("0x200"), "{text}");
    let (code, _) = plan_c(
        3,
        &[8, 6, 4],
        0,
        None,
        DFFT_NORMALIZE_BACKWARD | DFFT_NORMALIZE_ORTHO,
    );
    assert_eq!(code, DFFT_ERROR_BAD_ARGUMENT);
}

#[test]
fn bad_grids_are_refused_before_any_communication() {
    let (code, text) = plan_c(3, &[8, 6, 4], -2, None, 0);
    assert_eq!(
        (code, text.contains("grid_rank = -2")),
        (DFFT_ERROR_BAD_GRID, true),
        "{text}"
    );
    let (code, text) = plan_c(3, &[8, 6, 4], 3, Some(&[1, 1, 1]), 0);
    assert_eq!(
        (code, text.contains("grid_rank = 3")),
        (DFFT_ERROR_BAD_GRID, true),
        "{text}"
    );
    let (code, text) = plan_c(3, &[8, 6, 4], 2, Some(&[2, -1]), 0);
    assert_eq!(
        (code, text.contains("grid_dims[1] = -1")),
        (DFFT_ERROR_BAD_GRID, true),
        "{text}"
    );
}

#[test]
fn a_valid_request_without_mpi_is_an_mpi_error() {
    let (code, text) = plan_c(3, &[8, 6, 4], 0, None, 0);
    assert_eq!(code, DFFT_ERROR_MPI);
    assert!(text.contains("MPI is not initialized"), "{text}");
}

#[test]
fn fortran_entries_read_arrays_in_fortran_order_and_name_fortran_indices() {
    let mut plan = null_mut();
    let kinds = [DFFT_REDFT10, DFFT_REDFT10, 12];
    // SAFETY: three extents and kinds; no grid_dims; `plan` is writable.
    let code = unsafe {
        dfft_f_plan_r2r(
            3,
            [8isize, 6, 4].as_ptr(),
            1,
            kinds.as_ptr(),
            0,
            0,
            0,
            &mut plan,
            null(),
        )
    };
    assert_eq!(code, DFFT_ERROR_BAD_ARGUMENT);
    let text = message(code);
    assert!(text.contains("kinds(3) = 12"), "{text}");
    // SAFETY: as above, with two grid dimensions.
    let code =
        unsafe { dfft_f_plan_dft(3, [8isize, 0, 4].as_ptr(), 1, 0, 0, 0, &mut plan, null()) };
    assert!(message(code).contains("n(2) = 0"), "{}", message(code));
    // SAFETY: as above.
    let code = unsafe {
        dfftf_f_plan_dft_r2c(
            3,
            [8isize, 6, 4].as_ptr(),
            1,
            0,
            2,
            0,
            &mut plan,
            [2, 0].as_ptr(),
        )
    };
    assert_eq!(code, DFFT_ERROR_BAD_GRID);
    assert!(
        message(code).contains("grid_dims(2) = 0"),
        "{}",
        message(code)
    );
    assert!(plan.is_null());
}

#[test]
fn null_pointers_are_refused() {
    // SAFETY: NULL pointers are the point; each call checks them before any use.
    unsafe {
        assert_eq!(
            dfft_plan_dft(
                3,
                null(),
                1,
                mpi::ffi::RSMPI_COMM_NULL,
                0,
                null(),
                0,
                null_mut()
            ),
            DFFT_ERROR_NULL_POINTER
        );
        let mut plan = null_mut();
        assert_eq!(
            dfft_plan_r2r(
                2,
                [4isize, 4].as_ptr(),
                1,
                null(),
                mpi::ffi::RSMPI_COMM_NULL,
                0,
                null(),
                0,
                &mut plan
            ),
            DFFT_ERROR_NULL_POINTER
        );
        assert!(message(DFFT_ERROR_NULL_POINTER).contains("kinds is NULL"));
        assert_eq!(
            dfft_forward(null_mut(), null_mut(), null_mut()),
            DFFT_ERROR_NULL_POINTER
        );
        assert_eq!(
            dfft_backward(null_mut(), null_mut(), null_mut()),
            DFFT_ERROR_NULL_POINTER
        );
        assert_eq!(
            dfft_local_size(null(), null_mut(), null_mut()),
            DFFT_ERROR_NULL_POINTER
        );
        assert_eq!(
            dfft_local_input(null(), null_mut(), null_mut(), null_mut()),
            DFFT_ERROR_NULL_POINTER
        );
        assert_eq!(
            dfft_grid(null(), null_mut(), null_mut()),
            DFFT_ERROR_NULL_POINTER
        );
        let mut block = null_mut();
        assert_eq!(
            dfft_alloc_input(null_mut(), &mut block),
            DFFT_ERROR_NULL_POINTER
        );
        assert_eq!(dfft_destroy(null_mut()), DFFT_SUCCESS);
        assert_eq!(dfft_free(null_mut()), DFFT_SUCCESS);
        let mut local = 0u8;
        assert_eq!(
            dfft_free((&mut local as *mut u8).cast()),
            DFFT_ERROR_UNKNOWN_BLOCK
        );
    }
}

#[test]
fn panics_become_internal_errors() {
    let code = guard_for_tests(|| panic!("boom {}", 42));
    assert_eq!(code, DFFT_ERROR_INTERNAL);
    assert!(message(code).contains("boom 42"), "{}", message(code));
    assert_eq!(guard_for_tests(|| Ok(())), DFFT_SUCCESS);
}

#[test]
fn messages_belong_to_their_codes() {
    let code = guard_for_tests(|| Err((DFFT_ERROR_BAD_BUFFER, "input = 0x1".into())));
    assert_eq!(code, DFFT_ERROR_BAD_BUFFER);
    assert_eq!(message(code), "dfft: input = 0x1");
    // Codes that did not fail last on this thread get their fixed description.
    assert!(message(DFFT_ERROR_BAD_GRID).contains("grid request"));
    assert_eq!(message(DFFT_SUCCESS), "dfft: success");
    assert!(message(12345).contains("unknown error code"));
}

#[test]
fn fortran_messages_are_blank_padded_and_cut() {
    guard_for_tests(|| Err((DFFT_ERROR_BAD_ARGUMENT, "n(2) = 0".into())));
    let mut buffer = [b'x' as c_char; 24];
    // SAFETY: the buffer has room for 24 bytes.
    unsafe { dfft_f_error_message(DFFT_ERROR_BAD_ARGUMENT, buffer.as_mut_ptr(), 24) };
    let text: Vec<u8> = buffer.iter().map(|&c| c as u8).collect();
    assert_eq!(&text, b"dfft: n(2) = 0          ");
    let mut short = [0 as c_char; 4];
    // SAFETY: room for 4 bytes.
    unsafe { dfft_f_error_message(DFFT_ERROR_BAD_ARGUMENT, short.as_mut_ptr(), 4) };
    assert_eq!(short.map(|c| c as u8), *b"dfft");
}

#[test]
fn version_is_the_crate_version() {
    // SAFETY: a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(dfft_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}
