//! Compatibility with numpy's own `.npy` reader and writer.
//!
//! These tests need numpy for `/usr/bin/python3` (Debian package
//! `python3-numpy`, installed by `scripts/setup`); `$NPYIO_PYTHON` overrides
//! the interpreter. They fail, rather than skip, when numpy is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use npyio::{encode_header, parse_header, read_header, Dtype, NpyError};

fn python() -> String {
    std::env::var("NPYIO_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".to_owned())
}

/// Runs a Python script with `args`, panicking with its stderr on failure.
fn run_python(script: &str, args: &[&Path]) -> String {
    let output = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python()));
    assert!(
        output.status.success(),
        "{} failed (numpy is required: apt-get install python3-numpy):\n{}",
        python(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A scratch directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!("npyio-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Little-endian bytes of the index-valued array (complex: `i - i·1j`).
fn index_data(dtype: Dtype, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * dtype.size_bytes());
    for i in 0..n {
        match dtype {
            Dtype::F32 => out.extend_from_slice(&(i as f32).to_le_bytes()),
            Dtype::F64 => out.extend_from_slice(&(i as f64).to_le_bytes()),
            Dtype::C64 => {
                out.extend_from_slice(&(i as f32).to_le_bytes());
                out.extend_from_slice(&(0.0 - i as f32).to_le_bytes());
            }
            Dtype::C128 => {
                out.extend_from_slice(&(i as f64).to_le_bytes());
                out.extend_from_slice(&(0.0 - i as f64).to_le_bytes());
            }
        }
    }
    out
}

const SHAPES: &[&[usize]] = &[
    &[],
    &[5],
    &[0, 3],
    &[7, 5, 6],
    &[1; 15],
    &[2, 1, 3, 1, 2],
    &[1000],
];

fn python_shape(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

const NUMPY_INDEX_ARRAY: &str = "
import sys, numpy as np
def index_array(shape, descr):
    n = int(np.prod(shape, dtype=np.int64))
    a = np.arange(n, dtype=np.float64)
    if np.dtype(descr).kind == 'c':
        a = a - 1j * a
    return a.astype(descr).reshape(shape)
";

#[test]
fn numpy_is_available() {
    let version = run_python("import numpy; print(numpy.__version__)", &[]);
    assert!(!version.trim().is_empty());
}

#[test]
fn we_parse_what_numpy_writes() {
    let dir = TempDir::new("numpy-writes");
    let mut script = NUMPY_INDEX_ARRAY.to_owned();
    let mut cases = Vec::new();
    for dtype in Dtype::ALL {
        for (i, shape) in SHAPES.iter().enumerate() {
            for version in ["None", "(2, 0)", "(3, 0)"] {
                let name = format!("{}_{i}_{}.npy", &dtype.descr()[1..], cases.len());
                script += &format!(
                    "np.lib.format.write_array(open(sys.argv[1] + '/{name}', 'wb'), \
                     index_array({shape}, '{descr}'), version={version})\n",
                    shape = python_shape(shape),
                    descr = dtype.descr(),
                );
                cases.push((name, dtype, *shape, version));
            }
        }
    }
    run_python(&script, &[&dir.0]);

    for (name, dtype, shape, version) in cases {
        let path = dir.0.join(&name);
        let header = read_header(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(header.dtype, dtype, "{name}");
        assert_eq!(header.shape, shape, "{name}");
        assert!(!header.fortran_order);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(parse_header(&bytes).unwrap(), header);
        let expected_major = match version {
            "(2, 0)" => 2,
            "(3, 0)" => 3,
            _ => 1,
        };
        assert_eq!(bytes[6], expected_major, "{name}");
        let n: usize = shape.iter().product();
        assert_eq!(
            &bytes[header.data_offset as usize..],
            index_data(dtype, n).as_slice(),
            "{name}"
        );
    }
}

#[test]
fn numpy_reads_what_we_write_and_headers_are_identical() {
    let dir = TempDir::new("we-write");
    let mut script = NUMPY_INDEX_ARRAY.to_owned();
    script += "import io\n";
    for dtype in Dtype::ALL {
        for (i, shape) in SHAPES.iter().enumerate() {
            let name = format!("{}_{i}.npy", &dtype.descr()[1..]);
            let mut bytes = encode_header(dtype, shape);
            bytes.extend_from_slice(&index_data(dtype, shape.iter().product()));
            std::fs::write(dir.0.join(&name), &bytes).unwrap();
            script += &format!(
                "path = sys.argv[1] + '/{name}'\n\
                 expected = index_array({shape}, '{descr}')\n\
                 a = np.load(path)\n\
                 assert a.dtype == np.dtype('{descr}'), (path, a.dtype)\n\
                 assert a.shape == {shape}, (path, a.shape)\n\
                 assert np.array_equal(a, expected), path\n\
                 buf = io.BytesIO()\n\
                 np.save(buf, expected)\n\
                 assert open(path, 'rb').read() == buf.getvalue(), ('not byte-identical', path)\n",
                shape = python_shape(shape),
                descr = dtype.descr(),
            );
        }
    }
    script += "print('ok')\n";
    assert_eq!(run_python(&script, &[&dir.0]).trim(), "ok");
}

#[test]
fn numpy_parses_our_version_2_header() {
    let dir = TempDir::new("v2");
    let shape = vec![1usize; 30_000];
    let bytes = encode_header(Dtype::C64, &shape);
    assert_eq!(bytes[6], 2);
    let path = dir.0.join("v2.npy");
    std::fs::write(&path, &bytes).unwrap();
    let script = "
import sys, numpy as np
with open(sys.argv[1], 'rb') as f:
    assert np.lib.format.read_magic(f) == (2, 0)
    shape, fortran, dtype = np.lib.format.read_array_header_2_0(f, max_header_size=10**8)
    assert f.tell() % 64 == 0
assert shape == (1,) * 30000 and not fortran and dtype == np.complex64
print('ok')
";
    assert_eq!(run_python(script, &[&path]).trim(), "ok");
}

#[test]
fn rejects_what_we_do_not_support_with_clear_messages() {
    let dir = TempDir::new("reject");
    let script = "
import sys, numpy as np
d = sys.argv[1]
np.save(d + '/i4.npy', np.arange(6, dtype='<i4'))
np.save(d + '/big.npy', np.arange(6, dtype='>f8'))
np.save(d + '/bigc.npy', np.arange(6, dtype='>c16'))
np.save(d + '/bool.npy', np.zeros(3, dtype=bool))
np.save(d + '/fortran.npy', np.asfortranarray(np.arange(6.0).reshape(2, 3)))
np.save(d + '/struct.npy', np.zeros(2, dtype=[('a', '<f8'), ('b', '<i4')]))
np.save(d + '/ok.npy', np.arange(512.0))
";
    run_python(script, &[&dir.0]);
    let err = |name: &str| read_header(dir.0.join(name)).unwrap_err();
    let shown = |name: &str| {
        err(name)
            .to_string()
            .replace(&format!("{}/", dir.0.display()), "")
    };

    assert_eq!(
        shown("i4.npy"),
        "i4.npy: dtype '<i4' is not supported (expected one of float32, float64, complex64, complex128)"
    );
    assert!(matches!(err("big.npy"), NpyError::BigEndian { descr, .. } if descr == ">f8"));
    assert_eq!(
        shown("bigc.npy"),
        "bigc.npy: dtype '>c16' is big-endian; only little-endian ('<') float32, float64, complex64 and complex128 are supported"
    );
    assert!(matches!(err("bool.npy"), NpyError::UnsupportedDtype { descr, .. } if descr == "|b1"));
    assert!(matches!(
        err("struct.npy"),
        NpyError::UnsupportedDtype { .. }
    ));
    assert_eq!(
        shown("fortran.npy"),
        "fortran.npy: array is stored in Fortran order (fortran_order: True); only C-order arrays are supported"
    );
    let fortran = std::fs::read(dir.0.join("fortran.npy")).unwrap();
    assert!(parse_header(&fortran).unwrap().fortran_order);

    // Truncated and over-long files, and a file that is not .npy at all.
    let ok = std::fs::read(dir.0.join("ok.npy")).unwrap();
    assert_eq!(ok.len(), 128 + 4096);
    std::fs::write(dir.0.join("short.npy"), &ok[..128 + 1000]).unwrap();
    assert_eq!(
        shown("short.npy"),
        "short.npy: file is truncated: header says 4096 bytes of data, file has 1000"
    );
    let mut long = ok.clone();
    long.extend_from_slice(b"junk");
    std::fs::write(dir.0.join("long.npy"), &long).unwrap();
    assert!(matches!(
        err("long.npy"),
        NpyError::TrailingBytes {
            expected: 4096,
            actual: 4100,
            ..
        }
    ));
    std::fs::write(dir.0.join("header_only.npy"), &ok[..100]).unwrap();
    assert_eq!(
        shown("header_only.npy"),
        "header_only.npy: header is truncated: it needs 128 bytes, only 100 are present"
    );
    std::fs::write(dir.0.join("text.npy"), b"hello world").unwrap();
    assert_eq!(
        shown("text.npy"),
        "text.npy: not a .npy file (bad magic bytes)"
    );
    assert!(matches!(err("missing.npy"), NpyError::Io { .. }));
    assert!(shown("missing.npy").starts_with("missing.npy: failed to open: "));
}
