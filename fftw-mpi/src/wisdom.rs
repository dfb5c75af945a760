//! `fftw_mpi_gather_wisdom` and `fftw_mpi_broadcast_wisdom`: the program's FFTW wisdom
//! (its serial plans'; dfft's plans need none) moved between processes as FFTW's text.

use crate::api::Comm;
use mpi::traits::{Communicator, Destination, Root, Source};
use std::ffi::{c_char, c_int, CStr};

/// The real FFTW's wisdom functions of one precision.
pub struct Wisdom {
    /// `fftw_export_wisdom_to_string` (the caller frees the result).
    pub export: unsafe fn() -> *mut c_char,
    /// `fftw_import_wisdom_from_string` (non-zero on success).
    pub import: unsafe fn(*const c_char) -> c_int,
}

impl Wisdom {
    /// This process's wisdom, NUL-terminated.
    fn export(&self) -> Vec<u8> {
        // SAFETY: FFTW returns a malloc'ed NUL-terminated string, freed here.
        unsafe {
            let text = (self.export)();
            if text.is_null() {
                return vec![0];
            }
            let bytes = CStr::from_ptr(text).to_bytes_with_nul().to_vec();
            libc::free(text as *mut libc::c_void);
            bytes
        }
    }

    /// Adds `text` (NUL-terminated) to this process's wisdom; a text FFTW rejects ends the
    /// job, as in FFTW.
    fn import(&self, text: &[u8]) {
        let ok = match CStr::from_bytes_until_nul(text) {
            // SAFETY: a NUL-terminated string.
            Ok(s) => (unsafe { (self.import)(s.as_ptr()) }) != 0,
            Err(_) => false,
        };
        if !ok {
            crate::fatal("another process's FFTW wisdom could not be imported");
        }
    }
}

/// Process 0 imports every other process's wisdom (FFTW merges it through a tree of pairs;
/// the result on process 0 is the same).
pub fn gather(comm: Comm, wisdom: Wisdom) {
    let comm = crate::comm::borrow(comm);
    let (pe, procs) = comm.rank_size();
    if pe == 0 {
        for from in 1..procs {
            let (text, _) = comm.process_at_rank(from as i32).receive_vec::<u8>();
            wisdom.import(&text);
        }
    } else {
        comm.process_at_rank(0).send(&wisdom.export()[..]);
    }
}

/// Every process imports process 0's wisdom.
pub fn broadcast(comm: Comm, wisdom: Wisdom) {
    let comm = crate::comm::borrow(comm);
    let (pe, _) = comm.rank_size();
    let root = comm.process_at_rank(0);
    let mut text = if pe == 0 { wisdom.export() } else { vec![] };
    let mut len = text.len() as u64;
    root.broadcast_into(&mut len);
    text.resize(len as usize, 0);
    root.broadcast_into(&mut text[..]);
    if pe != 0 {
        wisdom.import(&text);
    }
}
