//! Distributed fields in one parallel HDF5 file under real mpirun (1 to 4 ranks): written
//! by blocks of an uneven split, read back under another split, checked by h5py (values,
//! complex as numpy complex, attributes), the XDMF file parsed by Python's xml; a write that
//! fails on one rank leaves no file; a write into a file a user keeps adds or replaces its
//! dataset and keeps the rest byte for byte (h5py compares), and refuses a group's name.

use std::path::Path;

use mpi::traits::*;
use num_complex::Complex;

const BODY: &str = "fields_body";

mpi_harness::launches!(BODY, 180; fields_np1 => 1, fields_np2 => 2, fields_np3 => 3, fields_np4 => 4);

/// Rank `r`'s rows `[start, start + count)` of `n` split over `p` (balanced).
fn rows(n: usize, p: usize, r: usize) -> (usize, usize) {
    let (q, m) = (n / p, n % p);
    (r * q + r.min(m), q + usize::from(r < m))
}

fn python(script: &str, args: &[&Path]) -> String {
    let out = std::process::Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python failed (h5py and numpy are required: scripts/setup):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "MPI body: run by the fields_np* launchers under mpirun"]
fn fields_body() {
    if !mpi_harness::is_child() {
        return;
    }
    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    mpi_harness::mark_reached(BODY, rank, size);
    let dir = std::env::temp_dir().join(format!("h5io-fields-{size}"));
    if rank == 0 {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
    }
    world.barrier();
    let path = dir.join("fields.h5");
    let shape = [7usize, 5, 3];
    let plane = shape[1] * shape[2];
    // Written by rows of axis 0.
    let (start, count) = rows(shape[0], size, rank);
    let index = |i: usize| Complex::new(i as f64, -(i as f64));
    let u: Vec<Complex<f64>> = (start * plane..(start + count) * plane)
        .map(index)
        .collect();
    let attrs = [
        ("shape", "7,5,3".to_string()),
        ("kind", "c2c".to_string()),
        ("normalization", "backward".to_string()),
        ("layout", "C order".to_string()),
    ];
    let fields = [
        h5io::FieldWrite {
            dataset: "/u",
            global_shape: &shape,
            starts: &[start, 0, 0],
            counts: &[count, 5, 3],
            data: &u,
            attributes: &attrs,
        },
        h5io::FieldWrite {
            dataset: "/step_000001/u",
            global_shape: &shape,
            starts: &[start, 0, 0],
            counts: &[count, 5, 3],
            data: &u,
            attributes: &[],
        },
    ];
    h5io::write_fields(&world, &path, &fields).expect("written");
    let real: Vec<f64> = (start * plane..(start + count) * plane)
        .map(|i| i as f64)
        .collect();
    let real_path = dir.join("real.h5");
    h5io::write_fields(
        &world,
        &real_path,
        &[h5io::FieldWrite {
            dataset: "/p",
            global_shape: &shape,
            starts: &[start, 0, 0],
            counts: &[count, 5, 3],
            data: &real,
            attributes: &[],
        }],
    )
    .expect("real written");

    // Read back by columns of axis 2 (another split).
    let (c0, cn) = rows(shape[2], size, rank);
    let mut back = vec![Complex::default(); shape[0] * shape[1] * cn];
    h5io::read_field(
        &world,
        &path,
        "/step_000001/u",
        &[0, 0, c0],
        &[7, 5, cn],
        &mut back,
    )
    .expect("read");
    let mut k = 0;
    for i in 0..shape[0] {
        for j in 0..shape[1] {
            for l in c0..c0 + cn {
                assert_eq!(back[k], index((i * shape[1] + j) * shape[2] + l));
                k += 1;
            }
        }
    }
    // The wrong element type is refused on every rank.
    let mut wrong = vec![0.0f32; back.len()];
    assert!(h5io::read_field(&world, &path, "/u", &[0, 0, c0], &[7, 5, cn], &mut wrong).is_err());

    // A block past the end on the last rank: every rank fails, no file appears.
    let bad = dir.join("bad.h5");
    let bad_start = if rank == size - 1 { 7 } else { start };
    let result = h5io::write_fields(
        &world,
        &bad,
        &[h5io::FieldWrite {
            dataset: "/u",
            global_shape: &shape,
            starts: &[bad_start, 0, 0],
            counts: &[count.max(1), 5, 3],
            data: &vec![Complex::<f64>::default(); count.max(1) * plane],
            attributes: &[],
        }],
    );
    assert!(
        result.is_err(),
        "rank {rank}: the bad write fails everywhere"
    );
    world.barrier();
    assert!(!bad.exists());

    // One rank's wrong arguments: an error on every rank (that rank's own, Remote naming it on
    // the others), agreed before any file is made, and no file.
    let last = size - 1;
    let agreed = |result: Result<(), h5io::H5Error>, what: &str| match result {
        Err(e) if rank == last => e,
        Err(h5io::H5Error::Remote { rank: r, message }) => {
            assert_eq!(r as usize, last, "rank {rank}: {what}: {message}");
            h5io::H5Error::Remote { rank: r, message }
        }
        other => panic!("rank {rank}: {what}: expected Remote from rank {last}, got {other:?}"),
    };
    let mine_shape = if rank == last && size > 1 {
        [8, 5, 3]
    } else {
        shape
    };
    let (block_starts, block_counts) = ([start, 0, 0], [count, 5, 3]);
    let field = |global_shape, data| h5io::FieldWrite {
        dataset: "/u",
        global_shape,
        starts: &block_starts,
        counts: &block_counts,
        data,
        attributes: &[],
    };
    if size > 1 {
        let e = agreed(
            h5io::write_fields(&world, &bad, &[field(&mine_shape, &u)]).map(drop),
            "a global shape of its own",
        );
        let want = "field 0 is dataset /u of shape [8, 5, 3] with attributes [] here and dataset \
                    /u of shape [7, 5, 3] with attributes [] on rank 0";
        assert!(e.to_string().contains(want), "rank {rank}: {e}");
        let two = [field(&shape, &u), field(&shape, &u)];
        let fields = if rank == last { &two[..] } else { &two[..1] };
        let e = agreed(
            h5io::write_fields(&world, &bad, fields).map(drop),
            "a field more",
        );
        assert!(
            e.to_string().contains("2 fields here, 1 on rank 0"),
            "rank {rank}: {e}"
        );
    }
    let short = &u[..u.len() - usize::from(rank == last && !u.is_empty())];
    if !u.is_empty() || rank != last {
        let e = agreed(
            h5io::write_fields(&world, &bad, &[field(&shape, short)]).map(drop),
            "a short buffer",
        );
        assert!(e.to_string().contains("but the block"), "rank {rank}: {e}");
    }
    let mut long = vec![Complex::<f64>::default(); back.len() + usize::from(rank == last)];
    let e = agreed(
        h5io::read_field(&world, &path, "/u", &[0, 0, c0], &[7, 5, cn], &mut long),
        "a long read buffer",
    );
    assert!(e.to_string().contains("but the block"), "rank {rank}: {e}");
    // A file the last rank cannot open (here: a path of its own that does not exist).
    let missing = dir.join("missing.h5");
    let their_path = if rank == last { &missing } else { &path };
    let mut out = vec![Complex::<f64>::default(); back.len()];
    let e = agreed(
        h5io::read_field(&world, their_path, "/u", &[0, 0, c0], &[7, 5, cn], &mut out),
        "a file it cannot open",
    );
    assert!(e.to_string().contains("missing.h5"), "rank {rank}: {e}");
    world.barrier();
    assert!(!bad.exists());
    keeps_the_rest_of_a_file(&world, &dir, &field(&shape, &u));

    if rank == 0 {
        let xmf = h5io::write_xdmf(&real_path, &[("/p", &shape, npyio::Dtype::F64)]).unwrap();
        let out = python(
            r#"
import sys, h5py, numpy as np, xml.etree.ElementTree as ET, os
f = h5py.File(sys.argv[1], "r")
u = f["u"][...]
want = np.arange(7 * 5 * 3).reshape(7, 5, 3)
assert u.dtype == np.complex128, u.dtype
assert np.array_equal(u, want - 1j * want)
assert np.array_equal(f["step_000001/u"][...], u)
a = dict(f["u"].attrs)
assert a["kind"] == "c2c" and a["shape"] == "7,5,3" and a["normalization"] == "backward", a
p = h5py.File(sys.argv[2], "r")["p"][...]
assert p.dtype == np.float64 and np.array_equal(p, want)
root = ET.parse(sys.argv[3]).getroot()
items = [d for d in root.iter("DataItem") if d.get("Format") == "HDF"]
assert len(items) == 1 and items[0].get("Dimensions") == "7 5 3", [i.attrib for i in items]
assert items[0].text.strip() == "real.h5:/p", items[0].text
names = sorted(os.listdir(os.path.dirname(sys.argv[1])))
assert names == ["fields.h5", "keep.h5", "real.h5", "real.xmf", "text.h5"], names
print("h5py ok")
"#,
            &[&path, &real_path, &xmf],
        );
        assert!(out.contains("h5py ok"), "{out}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    mpi_harness::mark_passed(BODY, rank, size);
}

/// h5py's digest of every object of `file` but `/u`: paths, kinds, dtypes, shapes, a hash of
/// the data and the attributes (names, dtypes, a hash of the values).
const DIGEST: &str = r#"
import sys, h5py, hashlib, numpy as np
def attrs(o):
    return " ".join("%s:%s:%s" % (k, np.asarray(o.attrs[k]).dtype.str,
        hashlib.sha256(np.asarray(o.attrs[k]).tobytes()).hexdigest()[:16]) for k in sorted(o.attrs))
lines = []
def visit(name, o):
    if name == "u":
        return
    data = hashlib.sha256(np.asarray(o[()]).tobytes()).hexdigest()[:16] if isinstance(o, h5py.Dataset) else "group"
    lines.append("/%s %s [%s]" % (name, data, attrs(o)))
with h5py.File(sys.argv[1], "r") as f:
    f.visititems(visit)
    lines.append("/ [%s]" % attrs(f))
print("\n".join(sorted(lines)))
"#;

/// Writes `/u` into a file h5py made with other datasets, a group and attributes: added, then
/// replaced, the rest byte for byte as it was; a group's name and a file that is not HDF5 are
/// refused on every rank and leave the files as they were.
fn keeps_the_rest_of_a_file(
    world: &mpi::topology::SimpleCommunicator,
    dir: &Path,
    field: &h5io::FieldWrite<'_, Complex<f64>>,
) {
    let rank = world.rank();
    let keep = dir.join("keep.h5");
    let text = dir.join("text.h5");
    let mut before = String::new();
    if rank == 0 {
        python(
            r#"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["title"] = "kept"
    f.create_dataset("notes", data=np.arange(10, dtype=np.int16))
    f.create_group("g").attrs["step"] = np.int32(3)
    f["g"].create_dataset("v", data=np.ones((2, 3)))
"#,
            &[&keep],
        );
        std::fs::write(&text, "not an HDF5 file\n").unwrap();
        before = python(DIGEST, &[&keep]);
    }
    world.barrier();
    let write = |dataset: &'static str, path: &Path| {
        let f = h5io::FieldWrite { dataset, ..*field };
        h5io::write_fields(world, path, &[f])
    };
    assert_eq!(write("/u", &keep).unwrap(), [h5io::Action::Added]);
    assert_eq!(write("/u", &keep).unwrap(), [h5io::Action::Replaced]);
    let kept = (rank == 0).then(|| std::fs::read(&keep).unwrap());
    for (dataset, path, needle) in [
        ("/g", &keep, "/g is a group, not a dataset"),
        ("/notes/u", &keep, "/notes is a dataset, not a group"),
        ("/", &keep, "is the file's root group"),
        ("/u", &text, "exists and is not an HDF5 file"),
    ] {
        let e = write(dataset, path).expect_err("refused");
        assert!(
            e.to_string().contains(needle),
            "rank {rank}: {dataset}: {e}"
        );
    }
    world.barrier();
    if rank == 0 {
        assert!(
            std::fs::read(&keep).unwrap() == kept.unwrap(),
            "a refusal changed keep.h5"
        );
        assert_eq!(std::fs::read(&text).unwrap(), b"not an HDF5 file\n");
        assert_eq!(
            python(DIGEST, &[&keep]),
            before,
            "the rest of keep.h5 changed"
        );
        let out = python(
            r#"
import sys, h5py, numpy as np
u = h5py.File(sys.argv[1], "r")["u"][...]
want = np.arange(7 * 5 * 3).reshape(7, 5, 3)
assert np.array_equal(u, want - 1j * want)
print("u ok")
"#,
            &[&keep],
        );
        assert!(out.contains("u ok"), "{out}");
    }
}
