//! End-to-end check of block-wise `.npy` I/O under MPI.
//!
//! ```text
//! cargo build -p npyio --example block_io
//! OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
//!     mpirun --oversubscribe -n 4 target/debug/examples/block_io [SCRATCH_DIR]
//! ```
//!
//! Works for any number of ranks. Each case writes an index-valued array
//! (element value = global C-order linear index; complex values are
//! `i - i·1j`) split into blocks over the ranks, checks the file with numpy
//! (`/usr/bin/python3`, or `$NPYIO_PYTHON`), and reads it back block-wise with
//! a different decomposition, comparing exactly. Then it checks that errors on
//! one rank make every rank fail, leave no target and no temporary file
//! behind, and do not touch an existing target.
//!
//! `SCRATCH_DIR` must be on a file system shared by all ranks; by default a
//! fresh directory under the system temporary directory is used (and removed
//! at the end). The program panics (non-zero exit) on the first failed check
//! and prints `block_io: all checks passed on P ranks` on success.

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::Command;

use mpi::topology::Communicator;
use mpi::traits::{CommunicatorCollectives, Root};
use npyio::{read_block, read_header, write_block, Dtype, NpyElement, NpyError};
use num_complex::Complex;

/// Element types used in the checks, with their index-derived values.
trait TestValue: NpyElement + PartialEq + Debug {
    /// The value stored at global linear index `i`.
    fn at(i: usize) -> Self;
    /// numpy expression for the whole expected array, in terms of `n` (the
    /// element count), `shape` and `dtype`.
    const NUMPY_EXPECTED: &'static str;
}

impl TestValue for f32 {
    fn at(i: usize) -> Self {
        i as f32
    }
    const NUMPY_EXPECTED: &'static str = "np.arange(n).reshape(shape).astype(dtype)";
}

impl TestValue for f64 {
    fn at(i: usize) -> Self {
        i as f64
    }
    const NUMPY_EXPECTED: &'static str = "np.arange(n).reshape(shape).astype(dtype)";
}

impl TestValue for Complex<f32> {
    fn at(i: usize) -> Self {
        Complex::new(i as f32, 0.0 - i as f32)
    }
    const NUMPY_EXPECTED: &'static str =
        "(np.arange(n) - 1j * np.arange(n)).reshape(shape).astype(dtype)";
}

impl TestValue for Complex<f64> {
    fn at(i: usize) -> Self {
        Complex::new(i as f64, 0.0 - i as f64)
    }
    const NUMPY_EXPECTED: &'static str =
        "(np.arange(n) - 1j * np.arange(n)).reshape(shape).astype(dtype)";
}

/// Balanced split of `n` into `parts`: with `n = q * parts + m`, the first `m`
/// parts get `q + 1` elements. Returns `(start, count)` of part `i`.
fn balanced(n: usize, parts: usize, i: usize) -> (usize, usize) {
    let (q, m) = (n / parts, n % parts);
    (i * q + i.min(m), q + usize::from(i < m))
}

/// A decomposition: `(axis, parts)` pairs whose parts multiply to the number of
/// ranks (or none at all: every rank gets the whole array); the rank's
/// coordinates are mixed-radix digits, last pair fastest.
type Decomposition = Vec<(usize, usize)>;

/// This rank's block `(starts, counts)` under `decomposition`.
fn block_of(
    shape: &[usize],
    decomposition: &[(usize, usize)],
    rank: usize,
) -> (Vec<usize>, Vec<usize>) {
    let mut starts = vec![0; shape.len()];
    let mut counts = shape.to_vec();
    let mut rest = rank;
    for &(axis, parts) in decomposition.iter().rev() {
        let (start, count) = balanced(shape[axis], parts, rest % parts);
        starts[axis] = start;
        counts[axis] = count;
        rest /= parts;
    }
    // An empty decomposition replicates the whole array on every rank.
    assert!(
        rest == 0 || decomposition.is_empty(),
        "decomposition {decomposition:?} has too few parts for rank {rank}"
    );
    (starts, counts)
}

/// Global C-order linear indices of the block's elements, in C order.
fn block_indices(shape: &[usize], starts: &[usize], counts: &[usize]) -> Vec<usize> {
    let mut indices = vec![0usize];
    for axis in 0..shape.len() {
        indices = indices
            .iter()
            .flat_map(|&base| {
                (starts[axis]..starts[axis] + counts[axis]).map(move |j| base * shape[axis] + j)
            })
            .collect();
    }
    indices
}

/// The two factors `(a, b)` of `p` with `a <= b` closest to each other.
fn grid_2d(p: usize) -> (usize, usize) {
    let a = (1..=p)
        .filter(|a| p.is_multiple_of(*a) && a * a <= p)
        .max()
        .unwrap_or(1);
    (a, p / a)
}

fn python() -> String {
    std::env::var("NPYIO_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".to_owned())
}

/// Checks with numpy that `path` holds the index-valued array of `T` and `shape`.
fn check_with_numpy<T: TestValue>(path: &Path, shape: &[usize]) {
    let script = format!(
        "import sys, numpy as np\n\
         a = np.load(sys.argv[1])\n\
         shape = tuple({shape:?})\n\
         dtype = np.dtype('{descr}')\n\
         n = int(np.prod(shape, dtype=np.int64))\n\
         assert a.dtype == dtype, (a.dtype, dtype)\n\
         assert a.shape == shape, (a.shape, shape)\n\
         assert a.flags.c_contiguous\n\
         expected = {expected}\n\
         assert np.array_equal(a, expected), (a, expected)\n",
        descr = T::DTYPE.descr(),
        expected = T::NUMPY_EXPECTED,
    );
    // `tuple([])` / `tuple([5])` give the right Python tuples for any rank.
    let output = Command::new(python())
        .arg("-c")
        .arg(&script)
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python()));
    assert!(
        output.status.success(),
        "numpy check of {} failed:\n{}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Names of the entries of `dir` that look like our temporary files.
fn temporary_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read scratch dir")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.starts_with('.') && name.contains(".tmp-"))
        .collect()
}

struct Ctx<'a, C: Communicator> {
    world: &'a C,
    rank: usize,
    size: usize,
    dir: PathBuf,
}

impl<C: Communicator> Ctx<'_, C> {
    /// Writes the index-valued array with `write_split`, checks it with numpy
    /// (rank 0) and reads it back with each of `read_splits`.
    fn round_trip<T: TestValue>(
        &self,
        name: &str,
        shape: &[usize],
        write_split: &[(usize, usize)],
        read_splits: &[Decomposition],
    ) {
        let path = self.dir.join(format!("{name}.npy"));
        let (starts, counts) = block_of(shape, write_split, self.rank);
        let data: Vec<T> = block_indices(shape, &starts, &counts)
            .into_iter()
            .map(T::at)
            .collect();
        write_block(self.world, &path, shape, &starts, &counts, &data)
            .unwrap_or_else(|e| panic!("rank {}: writing {name}: {e}", self.rank));

        // Every rank sees the finished file once write_block has returned.
        let header = read_header(&path).unwrap_or_else(|e| panic!("rank {}: {e}", self.rank));
        assert_eq!(header.dtype, T::DTYPE);
        assert_eq!(header.shape, shape);
        if self.rank == 0 {
            check_with_numpy::<T>(&path, shape);
            assert_eq!(temporary_files(&self.dir), Vec::<String>::new());
        }

        for split in read_splits {
            let (starts, counts) = block_of(shape, split, self.rank);
            let expected: Vec<T> = block_indices(shape, &starts, &counts)
                .into_iter()
                .map(T::at)
                .collect();
            let mut got = vec![T::zeroed(); expected.len()];
            read_block(self.world, &path, &header, &starts, &counts, &mut got).unwrap_or_else(
                |e| panic!("rank {}: reading {name} with {split:?}: {e}", self.rank),
            );
            assert_eq!(
                got, expected,
                "rank {}: {name} block {starts:?}+{counts:?}",
                self.rank
            );
        }
        self.world.barrier();
        if self.rank == 0 {
            println!(
                "ok  {name}: {} {shape:?}, written {write_split:?}, read back {read_splits:?}",
                T::DTYPE
            );
        }
    }

    /// Runs a round trip for the 7x5x6 array with a 2-D split over axes 0 and 1.
    fn index_arrays(&self) {
        let p = self.size;
        let (a, b) = grid_2d(p);
        let shape = [7, 5, 6];
        let write = vec![(0, b), (1, a)];
        let reads = vec![vec![(1, a), (2, b)], vec![(2, p)], vec![(0, p)]];
        self.round_trip::<f64>("index_f64", &shape, &write, &reads);
        self.round_trip::<f32>("index_f32", &shape, &write, &reads);
        self.round_trip::<Complex<f64>>("index_c128", &shape, &write, &reads);
        self.round_trip::<Complex<f32>>("index_c64", &shape, &write, &reads);
    }

    /// Cases where some or all ranks have empty blocks.
    fn empty_blocks(&self) {
        let p = self.size;
        // 3x5x2 split p ways along axis 0: ranks 3.. get nothing when p > 3.
        self.round_trip::<f64>(
            "empty_3x5x2",
            &[3, 5, 2],
            &[(0, p)],
            &[vec![(1, p)], vec![(0, p)]],
        );
        // 1x4x3 split p ways along axis 0: all ranks but rank 0 get nothing.
        self.round_trip::<Complex<f64>>(
            "empty_1x4x3",
            &[1, 4, 3],
            &[(0, p)],
            &[vec![(1, p)], vec![(0, p)]],
        );
        // An array with no elements at all.
        self.round_trip::<f32>("zero_size", &[0, 3], &[(1, p)], &[vec![(0, p)]]);
        // A 0-d array: every block is the single element (identical data).
        self.round_trip::<f64>("zero_d", &[], &[], &[vec![]]);
    }

    /// Asserts that every rank got an error, the `bad_rank` its own (checked
    /// by `own`) and the others `Remote { rank: bad_rank }`.
    fn expect_collective_error(
        &self,
        result: Result<(), NpyError>,
        bad_rank: usize,
        own: impl Fn(&NpyError) -> bool,
    ) {
        let err = result.expect_err("the call should have failed on every rank");
        if self.rank == bad_rank {
            assert!(own(&err), "rank {}: unexpected error {err:?}", self.rank);
        } else {
            match &err {
                NpyError::Remote { rank, message } => {
                    assert_eq!(*rank as usize, bad_rank, "{err}");
                    assert!(!message.is_empty());
                    if self.rank == 0 {
                        println!("ok  rank 0 got: {err}");
                    }
                }
                other => panic!("rank {}: expected a Remote error, got {other:?}", self.rank),
            }
        }
    }

    fn error_cases(&self) {
        let (rank, p) = (self.rank, self.size);
        let last = p - 1;
        let shape = [7, 5, 6];
        let split = [(0, p)];
        let (starts, counts) = block_of(&shape, &split, rank);
        let data: Vec<f64> = block_indices(&shape, &starts, &counts)
            .into_iter()
            .map(f64::at)
            .collect();

        // 1. The last rank passes a buffer one element too long: every rank
        //    fails, no target, no temporary file.
        let target = self.dir.join("bad_length.npy");
        let mut long = data.clone();
        if rank == last {
            long.push(0.0);
        }
        let result = write_block(self.world, &target, &shape, &starts, &counts, &long);
        let expected_len = data.len();
        self.expect_collective_error(result, last, |e| {
            matches!(e, NpyError::BufferLength { expected, actual, .. }
                if *expected == expected_len && *actual == expected_len + 1)
        });
        self.world.barrier();
        assert!(!target.exists(), "{} must not exist", target.display());
        assert_eq!(temporary_files(&self.dir), Vec::<String>::new());

        // 2. A failing write does not touch an existing target.
        let target = self.dir.join("existing.npy");
        write_block(self.world, &target, &shape, &starts, &counts, &data).expect("initial write");
        self.world.barrier();
        let before = std::fs::read(&target).expect("read target");
        let (bad_starts, bad_counts) = if rank == 0 {
            (vec![7, 0, 0], vec![1, 5, 6]) // past the end of axis 0
        } else {
            (starts.clone(), counts.clone())
        };
        let bad_data = vec![0.0f64; bad_counts.iter().product()];
        let result = write_block(
            self.world,
            &target,
            &shape,
            &bad_starts,
            &bad_counts,
            &bad_data,
        );
        self.expect_collective_error(result, 0, |e| matches!(e, NpyError::InvalidBlock { .. }));
        self.world.barrier();
        assert_eq!(
            std::fs::read(&target).expect("read target"),
            before,
            "target was modified"
        );
        assert_eq!(temporary_files(&self.dir), Vec::<String>::new());

        // 3. Inconsistent global shape on the last rank (needs two ranks).
        if p > 1 {
            let target = self.dir.join("inconsistent.npy");
            let their_shape = if rank == last {
                vec![8, 5, 6]
            } else {
                shape.to_vec()
            };
            let result = write_block(self.world, &target, &their_shape, &starts, &counts, &data);
            self.expect_collective_error(result, last, |e| {
                matches!(e, NpyError::InconsistentArguments { .. })
            });
            self.world.barrier();
            assert!(!target.exists());
        }

        // 4. Missing directory: refused on every rank before any file is made.
        let target = self.dir.join("no_such_dir").join("x.npy");
        let err = write_block(self.world, &target, &shape, &starts, &counts, &data)
            .expect_err("missing dir");
        assert!(
            matches!(&err, NpyError::Io { .. } | NpyError::Remote { .. }),
            "rank {rank}: {err:?}"
        );
        assert!(
            err.to_string().contains("No such file or directory"),
            "rank {rank}: {err}"
        );
        if rank == 0 {
            println!("ok  missing directory: {err}");
        }

        // 5. Reading with the wrong element type fails on every rank.
        let existing = self.dir.join("existing.npy");
        let header = read_header(&existing).expect("header");
        let mut out32 = vec![0.0f32; data.len()];
        let err = read_block(self.world, &existing, &header, &starts, &counts, &mut out32)
            .expect_err("dtype");
        assert!(
            matches!(
                err,
                NpyError::DtypeMismatch {
                    expected: Dtype::F32,
                    found: Dtype::F64,
                    ..
                }
            ),
            "rank {rank}: {err:?}"
        );
        if rank == 0 {
            println!("ok  dtype mismatch: {err}");
        }

        // 6. A wrong-length read buffer on the last rank fails everywhere.
        let mut out = vec![0.0f64; data.len() + usize::from(rank == last)];
        let result = read_block(self.world, &existing, &header, &starts, &counts, &mut out);
        self.expect_collective_error(result, last, |e| matches!(e, NpyError::BufferLength { .. }));

        // 7. A file truncated after its header was read: read_block notices
        //    on every rank.
        let truncated = self.dir.join("truncated.npy");
        if rank == 0 {
            std::fs::copy(&existing, &truncated).expect("copy");
            let len = std::fs::metadata(&truncated).expect("stat").len();
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&truncated)
                .expect("open");
            file.set_len(len - 8).expect("truncate");
        }
        self.world.barrier();
        let err = read_header(&truncated).expect_err("truncated header check");
        assert!(
            matches!(
                err,
                NpyError::Truncated {
                    expected: 1680,
                    actual: 1672,
                    ..
                }
            ),
            "{err:?}"
        );
        if rank == 0 {
            println!("ok  truncated: {err}");
        }
        let mut out = vec![0.0f64; data.len()];
        let err = read_block(self.world, &truncated, &header, &starts, &counts, &mut out)
            .expect_err("truncated read");
        assert!(
            matches!(
                err,
                NpyError::Truncated {
                    expected: 1680,
                    actual: 1672,
                    ..
                }
            ),
            "rank {rank}: {err:?}"
        );

        self.world.barrier();
        assert_eq!(temporary_files(&self.dir), Vec::<String>::new());
        if rank == 0 {
            println!("ok  error cases");
        }
    }
}

/// The scratch directory: `dir`, or a fresh one made by rank 0 and broadcast.
/// Returns it and whether we created it.
fn scratch_dir<C: Communicator>(world: &C, dir: Option<PathBuf>) -> (PathBuf, bool) {
    if let Some(dir) = dir {
        return (dir, false);
    }
    let mut bytes = Vec::new();
    if world.rank() == 0 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("npyio-block-io-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        bytes = dir.into_os_string().into_encoded_bytes();
    }
    let root = world.process_at_rank(0);
    let mut len = bytes.len() as u64;
    root.broadcast_into(&mut len);
    bytes.resize(len as usize, 0);
    root.broadcast_into(&mut bytes[..]);
    // SAFETY: the bytes came from `into_encoded_bytes` on rank 0 (same platform).
    let dir = unsafe { std::ffi::OsString::from_encoded_bytes_unchecked(bytes) };
    (PathBuf::from(dir), true)
}

// Also compiled as a module of `tests/mpi_single_rank.rs`, which calls `run`.
#[allow(dead_code)]
fn main() {
    run(std::env::args_os().nth(1).map(PathBuf::from));
}

/// Initialises MPI and runs all checks in `dir` (or a fresh temporary directory).
pub fn run(dir: Option<PathBuf>) {
    let universe = mpi::initialize().expect("MPI is already initialised");
    // A panicking rank must take the whole job down: unwinding would run
    // MPI_Finalize and wait for ranks that are blocked in a collective call.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        mpi::topology::SimpleCommunicator::world().abort(101);
    }));
    let world = universe.world();
    let (dir, created) = scratch_dir(&world, dir);
    let ctx = Ctx {
        world: &world,
        rank: world.rank() as usize,
        size: world.size() as usize,
        dir: dir.clone(),
    };
    ctx.index_arrays();
    ctx.empty_blocks();
    ctx.error_cases();
    world.barrier();
    if ctx.rank == 0 {
        if created {
            std::fs::remove_dir_all(&dir).expect("remove scratch dir");
        }
        println!("block_io: all checks passed on {} ranks", ctx.size);
    }
}
