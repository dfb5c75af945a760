//! A bounded, seeded fuzz run in the test suite: the same properties as the `cargo fuzz`
//! targets in `fuzz/` (`fuzz/checks.rs`: the .npy header parser, the spec parsers and the
//! planners with the exactly-once check), on random and mutated inputs. `DFFT_FUZZ_ITERS`
//! and `DFFT_FUZZ_SEED` lengthen or vary the run (`scripts/fuzz` does, when cargo fuzz is not
//! usable).

#[path = "../../fuzz/checks.rs"]
mod checks;

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn iterations(default: usize) -> usize {
    std::env::var("DFFT_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rng(salt: u64) -> ChaCha8Rng {
    let seed = std::env::var("DFFT_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    ChaCha8Rng::seed_from_u64(seed ^ salt)
}

/// Random bytes, or a valid example with a few bytes changed, inserted or cut off.
fn mutate(rng: &mut ChaCha8Rng, examples: &[Vec<u8>]) -> Vec<u8> {
    if rng.gen_bool(0.2) || examples.is_empty() {
        let mut v = vec![0u8; rng.gen_range(0..200)];
        rng.fill_bytes(&mut v);
        return v;
    }
    let mut v = examples[rng.gen_range(0..examples.len())].clone();
    for _ in 0..rng.gen_range(1..4) {
        match rng.gen_range(0..4) {
            0 if !v.is_empty() => {
                let i = rng.gen_range(0..v.len());
                v[i] = rng.gen();
            }
            1 => {
                let i = rng.gen_range(0..=v.len());
                let b = *b" ,:()'{}0123456789xTFa<>|fc"
                    .get(rng.gen_range(0..27))
                    .unwrap();
                v.insert(i, b);
            }
            2 if !v.is_empty() => {
                v.truncate(rng.gen_range(0..v.len()));
            }
            _ if !v.is_empty() => {
                let i = rng.gen_range(0..v.len());
                v.remove(i);
            }
            _ => {}
        }
    }
    v
}

#[test]
fn fuzz_npy_header() {
    let mut examples = Vec::new();
    for dtype in [
        npyio::Dtype::F32,
        npyio::Dtype::F64,
        npyio::Dtype::C64,
        npyio::Dtype::C128,
    ] {
        for shape in [&[][..], &[3], &[4, 5], &[1, 2, 3, 4], &[usize::MAX, 2]] {
            examples.push(npyio::encode_header(dtype, shape));
        }
    }
    examples.push(
        b"\x93NUMPY\x02\x00\x10\x00\x00\x00{'descr':'<f8','fortran_order':True,'shape':(2,)}"
            .to_vec(),
    );
    let mut rng = rng(1);
    for _ in 0..iterations(20_000) {
        checks::npy_header(&mutate(&mut rng, &examples));
    }
}

#[test]
fn fuzz_specs() {
    let examples: Vec<Vec<u8>> = [
        "4x2",
        "2",
        "auto",
        "1x1x1",
        "0",
        "pairwise",
        "alltoallv",
        "ortho",
        "512M",
        "8G",
        "18446744073709551615x2",
        "3x-1",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let mut rng = rng(2);
    for _ in 0..iterations(20_000) {
        checks::specs(&mutate(&mut rng, &examples));
    }
}

#[test]
fn fuzz_planners() {
    let mut rng = rng(3);
    for _ in 0..iterations(1_500) {
        let mut bytes = vec![0u8; 64];
        rng.fill_bytes(&mut bytes);
        checks::planners(&bytes);
    }
}

#[test]
fn fuzz_dist_specs() {
    let mut rng = rng(4);
    let n = iterations(3_000);
    let mut checked = 0;
    for _ in 0..n {
        let mut bytes = vec![0u8; rng.gen_range(16..80)];
        rng.fill_bytes(&mut bytes);
        if rng.gen_bool(0.5) {
            // Text that looks like a SPEC after the 12 structure bytes.
            let pieces = [
                "grid=",
                "2x3",
                "x",
                ",",
                "order=",
                "row",
                "col",
                "dist=",
                "cyclic(",
                ")",
                "*",
                "block",
                "0",
                "99999999999999999999",
                "=",
                "(",
            ];
            let mut text = String::new();
            for _ in 0..rng.gen_range(0..12) {
                text.push_str(pieces[rng.gen_range(0..pieces.len())]);
            }
            bytes.truncate(12);
            bytes.extend_from_slice(text.as_bytes());
        }
        checked += checks::dist_specs(&bytes) as usize;
    }
    assert!(
        checked * 4 > n,
        "only {checked} of {n} inputs gave a plan to check"
    );
}
