//! Large work buffers backed by transparent huge pages where the kernel offers them.
//!
//! Transposing copies touch many pages at once; with 4 KiB pages they miss the TLB on almost
//! every access. On Linux with THP in `madvise` mode (a common default), buffers are only
//! backed by 2 MiB pages if asked, which [`huge_vec`] does before touching the memory.

/// A vector of `len` default values whose memory is advised to use huge pages (Linux
/// `madvise(MADV_HUGEPAGE)`, a no-op elsewhere or when refused).
///
/// ```
/// let v: Vec<f64> = redist::alloc::huge_vec(1 << 20);
/// assert_eq!(v.len(), 1 << 20);
/// assert!(v.iter().all(|&x| x == 0.0));
/// ```
pub fn huge_vec<T: Default + Clone>(len: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(len);
    advise_huge(v.as_mut_ptr() as *mut u8, len * std::mem::size_of::<T>());
    v.resize(len, T::default());
    v
}

/// Advises huge pages for the whole pages inside `[ptr, ptr + bytes)`.
#[cfg(target_os = "linux")]
fn advise_huge(ptr: *mut u8, bytes: usize) {
    const PAGE: usize = 4096;
    const WORTH_IT: usize = 4 << 20;
    if bytes < WORTH_IT {
        return;
    }
    let start = (ptr as usize).div_ceil(PAGE) * PAGE;
    let end = (ptr as usize + bytes) / PAGE * PAGE;
    if end > start {
        // SAFETY: the range lies inside an allocation we own; madvise only changes paging
        // policy, never contents. Failure (e.g. THP disabled) is harmless and ignored.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *mut u8, _bytes: usize) {}

/// Hands the heap's free pages back to the system (glibc's `malloc_trim(0)`; a no-op
/// elsewhere). Planning builds large temporary tables (run maps before they are shared, exchange
/// plans) whose freed pages would otherwise stay resident in the heap for the life of the
/// process: a plan calls this once it is made, so its memory per rank is what it keeps.
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns unused heap memory to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}
