//! Large work buffers backed by transparent huge pages where the kernel offers them.
//!
//! Transposing copies touch many pages at once; with 4 KiB pages they miss the TLB on almost
//! every access. On Linux with THP in `madvise` mode (a common default), buffers are only
//! backed by 2 MiB pages if asked, which [`AlignedBuf`] does before touching the memory; it
//! also starts on a cache line.

/// Bytes of a cache line: where [`AlignedBuf`] starts its elements.
pub const CACHE_LINE: usize = 64;

/// A fixed-length heap buffer of default values that starts on a cache line ([`CACHE_LINE`]
/// bytes), advised to use huge pages; dereferences to a slice.
///
/// A `Vec` from the heap starts 16 bytes past a cache line when large (glibc's chunk header
/// before an `mmap`ed block), so every row of a block whose rows are whole cache lines then
/// straddles two lines, and a 64-byte vector load from it costs two accesses. The plans'
/// private blocks and work buffers are `AlignedBuf`s (measured faster than such `Vec`s).
///
/// ```
/// use redist::alloc::{AlignedBuf, CACHE_LINE};
/// let mut b: AlignedBuf<f64> = AlignedBuf::new(1000);
/// assert_eq!(b.len(), 1000);
/// assert_eq!(b.as_ptr() as usize % CACHE_LINE, 0);
/// assert!(b.iter().all(|&x| x == 0.0));
/// b[999] = 1.0;
/// assert_eq!(b.iter().sum::<f64>(), 1.0);
/// ```
pub struct AlignedBuf<T> {
    ptr: std::ptr::NonNull<T>,
    len: usize,
}

// SAFETY: an `AlignedBuf` owns its elements like a `Vec` (no shared state).
unsafe impl<T: Send> Send for AlignedBuf<T> {}
unsafe impl<T: Sync> Sync for AlignedBuf<T> {}

impl<T: Default> AlignedBuf<T> {
    /// `len` default values.
    ///
    /// # Panics
    /// If the size overflows `isize` (as `Vec::with_capacity` does); aborts if the memory
    /// cannot be had (as `Vec` does).
    pub fn new(len: usize) -> Self {
        let Some(layout) = Self::layout(len) else {
            return Self {
                ptr: std::ptr::NonNull::dangling(),
                len,
            };
        };
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) } as *mut T;
        let Some(ptr) = std::ptr::NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout);
        };
        advise_huge(raw as *mut u8, layout.size());
        for i in 0..len {
            // SAFETY: `i < len` elements of `T` fit the allocation.
            unsafe { raw.add(i).write(T::default()) };
        }
        Self { ptr, len }
    }
}

impl<T> AlignedBuf<T> {
    /// The allocation's layout; `None` when nothing is allocated (no bytes).
    fn layout(len: usize) -> Option<std::alloc::Layout> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .expect("AlignedBuf size overflows usize");
        let align = CACHE_LINE.max(std::mem::align_of::<T>());
        (bytes > 0).then(|| {
            std::alloc::Layout::from_size_align(bytes, align)
                .expect("AlignedBuf size overflows isize")
        })
    }
}

impl<T> Drop for AlignedBuf<T> {
    fn drop(&mut self) {
        // SAFETY: `len` initialized elements, dropped once; then the allocation of `new`, with
        // this same layout.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr(),
                self.len,
            ));
            if let Some(layout) = Self::layout(self.len) {
                std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, layout);
            }
        }
    }
}

impl<T> std::ops::Deref for AlignedBuf<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialized elements (or a dangling, aligned pointer and no bytes).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> std::ops::DerefMut for AlignedBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> std::fmt::Debug for AlignedBuf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len)
            .finish()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn aligned_buf_starts_on_a_cache_line_for_every_size() {
        // Small ones from the heap, large ones (past glibc's mmap threshold) from mmap, where
        // a Vec would start 16 bytes past a line.
        for len in [1usize, 3, 1000, 1 << 17, (4 << 20) / 16 + 5] {
            let b: AlignedBuf<num_complex::Complex<f64>> = AlignedBuf::new(len);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % CACHE_LINE, 0, "len {len}");
            assert!(b.iter().all(|z| z.re == 0.0 && z.im == 0.0));
        }
        let empty: AlignedBuf<f64> = AlignedBuf::new(0);
        assert!(empty.is_empty());
    }

    thread_local! {
        static DROPS: Cell<usize> = const { Cell::new(0) };
    }

    #[derive(Default)]
    struct Counted(#[allow(dead_code)] u8);

    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.with(|d| d.set(d.get() + 1));
        }
    }

    #[test]
    fn aligned_buf_drops_each_element_once() {
        DROPS.with(|d| d.set(0));
        drop(AlignedBuf::<Counted>::new(37));
        assert_eq!(DROPS.with(Cell::get), 37);
    }
}
