//! The per-peer counts and displacements of a packed exchange, and the two ways to move its
//! messages: one `MPI_Alltoallv`, or pairwise steps whose messages go in chunks.

use super::check_mpi;
use super::chunks::{chunk_count, to_i32s};
use super::p2p::{sendrecv, Step};
use crate::element::Element;
use crate::error::Result;
use mpi::ffi;
use std::ffi::c_void;

/// Per peer of a communicator: elements sent to it and their offset in the send buffer,
/// elements received from it and their offset in the receive buffer. A rank's own part has
/// zero counts (it is copied directly). Built once at plan time.
#[derive(Debug, Clone, Default)]
pub struct PeerCounts {
    send_counts: Vec<usize>,
    send_displs: Vec<usize>,
    recv_counts: Vec<usize>,
    recv_displs: Vec<usize>,
    /// The same as `i32` for `MPI_Alltoallv`; empty when some value exceeds `i32::MAX`.
    send_counts_i32: Vec<i32>,
    send_displs_i32: Vec<i32>,
    recv_counts_i32: Vec<i32>,
    recv_displs_i32: Vec<i32>,
}

impl PeerCounts {
    /// Counts and displacements per peer (four slices of the communicator's size).
    pub fn new(
        send_counts: Vec<usize>,
        send_displs: Vec<usize>,
        recv_counts: Vec<usize>,
        recv_displs: Vec<usize>,
    ) -> Self {
        let all = [&send_counts, &send_displs, &recv_counts, &recv_displs];
        let fit: Option<Vec<Vec<i32>>> =
            all.iter().map(|v| to_i32s(v, i32::MAX as usize)).collect();
        let [sc, sd, rc, rd] = match fit {
            Some(v) => <[Vec<i32>; 4]>::try_from(v).expect("four arrays"),
            None => Default::default(),
        };
        Self {
            send_counts,
            send_displs,
            recv_counts,
            recv_displs,
            send_counts_i32: sc,
            send_displs_i32: sd,
            recv_counts_i32: rc,
            recv_displs_i32: rd,
        }
    }

    /// Number of peers (the communicator's size).
    pub fn peers(&self) -> usize {
        self.send_counts.len()
    }

    /// Elements sent to `peer`, as a range of the send buffer.
    pub fn send_range(&self, peer: usize) -> std::ops::Range<usize> {
        self.send_displs[peer]..self.send_displs[peer] + self.send_counts[peer]
    }

    /// Elements received from `peer`, as a range of the receive buffer.
    pub fn recv_range(&self, peer: usize) -> std::ops::Range<usize> {
        self.recv_displs[peer]..self.recv_displs[peer] + self.recv_counts[peer]
    }

    /// Whether every count and displacement fits MPI's `int`, so that
    /// [`PeerCounts::alltoallv`] can run.
    pub fn fits_alltoallv(&self) -> bool {
        !self.send_counts_i32.is_empty() || self.send_counts.is_empty()
    }

    /// Most requests one [`PeerCounts::exchange_with`] step needs with messages cut into
    /// chunks of at most `max_count` elements.
    pub fn most_chunks(&self, max_count: usize) -> usize {
        let most = |v: &[usize]| {
            v.iter()
                .map(|&c| chunk_count(c, max_count))
                .max()
                .unwrap_or(0)
        };
        most(&self.send_counts) + most(&self.recv_counts)
    }

    /// Moves every message with one `MPI_Alltoallv` on `comm`. Collective.
    ///
    /// # Panics
    /// When the counts do not fit (see [`PeerCounts::fits_alltoallv`]) or a buffer is shorter
    /// than the counts say.
    pub fn alltoallv<T: Element>(
        &self,
        comm: ffi::MPI_Comm,
        send: &[T],
        recv: &mut [T],
    ) -> Result<()> {
        assert!(
            self.fits_alltoallv(),
            "counts past MPI's int travel pairwise"
        );
        let ends = |c: &[usize], d: &[usize]| c.iter().zip(d).map(|(c, d)| c + d).max();
        assert!(ends(&self.send_counts, &self.send_displs).unwrap_or(0) <= send.len());
        assert!(ends(&self.recv_counts, &self.recv_displs).unwrap_or(0) <= recv.len());
        let datatype = T::mpi_datatype();
        // SAFETY: counts and displacements lie inside the buffers (asserted above).
        let code = unsafe {
            ffi::MPI_Alltoallv(
                send.as_ptr() as *const c_void,
                self.send_counts_i32.as_ptr(),
                self.send_displs_i32.as_ptr(),
                datatype,
                recv.as_mut_ptr() as *mut c_void,
                self.recv_counts_i32.as_ptr(),
                self.recv_displs_i32.as_ptr(),
                datatype,
                comm,
            )
        };
        check_mpi("MPI_Alltoallv", code)
    }

    /// One pairwise step: sends this rank's message for `to` and receives the one from
    /// `from`, each as chunks of at most `max_count` elements, and waits for both.
    /// `requests` needs capacity [`PeerCounts::most_chunks`] (nothing is allocated then).
    #[allow(clippy::too_many_arguments)]
    pub fn exchange_with<T: Element>(
        &self,
        comm: ffi::MPI_Comm,
        tag: i32,
        max_count: usize,
        to: usize,
        from: usize,
        send: &[T],
        recv: &mut [T],
        requests: &mut Vec<ffi::MPI_Request>,
    ) -> Result<()> {
        let step = Step {
            comm,
            tag,
            max_count,
            to,
            send: self.send_range(to),
            from,
            recv: self.recv_range(from),
        };
        sendrecv(step, send, recv, requests)
    }
}
