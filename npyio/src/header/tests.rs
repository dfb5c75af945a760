use super::*;
use proptest::prelude::*;

/// Builds a version-1.0 file preamble + header around `dict`.
fn v1(dict: &str) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

fn with_version(major: u8, dict: &str) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[major, 0]);
    out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

fn shape_of(dict: &str) -> Result<Vec<usize>, NpyError> {
    parse_header(&v1(dict)).map(|h| h.shape)
}

#[test]
fn numpy_style_header() {
    let bytes = v1("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }          \n");
    let h = parse_header(&bytes).unwrap();
    assert_eq!(
        h,
        NpyHeader {
            dtype: Dtype::F64,
            shape: vec![3, 4],
            fortran_order: false,
            data_offset: bytes.len() as u64
        }
    );
}

#[test]
fn dict_spellings() {
    for dict in [
        "{'shape': (2, 3), 'descr': '<f4', 'fortran_order': False}",
        "{\"shape\":(2,3),\"descr\":\"<f4\",\"fortran_order\":False,}\n",
        "  {\n\t'fortran_order' :False ,\r\n 'shape' : ( 2 , 3 , ) , u'descr': '<f4' , }  \n",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }",
    ] {
        let h = parse_header(&v1(dict)).unwrap_or_else(|e| panic!("{dict:?}: {e}"));
        assert_eq!(h.shape, vec![2, 3], "{dict:?}");
        assert_eq!(h.dtype, Dtype::F32);
    }
}

#[test]
fn shapes() {
    let d = |s: &str| format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {s}, }}");
    assert_eq!(shape_of(&d("()")).unwrap(), Vec::<usize>::new());
    assert_eq!(shape_of(&d("( )")).unwrap(), Vec::<usize>::new());
    assert_eq!(shape_of(&d("(5,)")).unwrap(), vec![5]);
    assert_eq!(shape_of(&d("(0, 3)")).unwrap(), vec![0, 3]);
    assert_eq!(shape_of(&d("((5),)")).unwrap(), vec![5]);
    for bad in [
        "(5)", "5", "[5]", "(5, -1)", "(5, 'a')", "(5,,)", "(,)", "((5,),)",
    ] {
        let err = shape_of(&d(bad)).unwrap_err();
        assert!(
            matches!(err, NpyError::InvalidHeader { .. }),
            "{bad}: {err}"
        );
    }
}

#[test]
fn zero_d_and_empty_counts() {
    let h = parse_header(&encode_header(Dtype::C64, &[])).unwrap();
    assert_eq!(h.element_count().unwrap(), 1);
    let h = parse_header(&encode_header(Dtype::C64, &[4, 0, 7])).unwrap();
    assert_eq!(h.element_count().unwrap(), 0);
    assert_eq!(h.data_len_bytes().unwrap(), 0);
}

#[test]
fn versions_2_and_3() {
    let dict = "{'descr': '<c16', 'fortran_order': False, 'shape': (7,), }\n";
    for major in [2, 3] {
        let bytes = with_version(major, dict);
        let h = parse_header(&bytes).unwrap();
        assert_eq!((h.dtype, h.shape.as_slice()), (Dtype::C128, &[7][..]));
        assert_eq!(h.data_offset, bytes.len() as u64);
    }
    let err = parse_header(&with_version(4, dict)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)"
    );
}

#[test]
fn fortran_order_is_reported() {
    let h = parse_header(&v1(
        "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 4), }",
    ))
    .unwrap();
    assert!(h.fortran_order);
}

#[test]
fn error_messages() {
    let err = |dict: &str| parse_header(&v1(dict)).unwrap_err().with_path("input.npy");
    assert_eq!(
        parse_header(b"PK\x03\x04 zip file")
            .unwrap_err()
            .with_path("input.npy")
            .to_string(),
        "input.npy: not a .npy file (bad magic bytes)"
    );
    assert_eq!(
            err("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }").to_string(),
            "input.npy: dtype '<i4' is not supported (expected one of float32, float64, complex64, complex128)"
        );
    assert_eq!(
            err("{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }").to_string(),
            "input.npy: dtype '>f8' is big-endian; only little-endian ('<') float32, float64, complex64 and complex128 are supported"
        );
    assert_eq!(
            err("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }")
                .to_string(),
            "input.npy: dtype '[('a', '<f8')]' is not supported (expected one of float32, float64, complex64, complex128)"
        );
    assert_eq!(
        err("{'descr': '<f8', 'shape': (3,), }").to_string(),
        "input.npy: malformed .npy header: missing key 'fortran_order'"
    );
    assert_eq!(
            err("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}").to_string(),
            "input.npy: malformed .npy header: unexpected key 'x' (expected exactly 'descr', 'fortran_order' and 'shape')"
        );
    assert_eq!(
        err("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3,)}").to_string(),
        "input.npy: malformed .npy header: duplicate key 'descr'"
    );
    assert_eq!(
        err("{'descr': '<f8', 'fortran_order': 0, 'shape': (3,)}").to_string(),
        "input.npy: malformed .npy header: 'fortran_order' must be True or False, found 0"
    );
    assert_eq!(
            err("{'descr': '<f8', 'fortran_order': False, 'shape': (3,)} x").to_string(),
            "input.npy: malformed .npy header: unexpected text after the header dict at offset 56: \"x\""
        );
    assert_eq!(
            err("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}")
                .to_string(),
            "input.npy: malformed .npy header: integer \"99999999999999999999\" at offset 51 does not fit in 64 bits"
        );
    assert!(matches!(
        err("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"),
        NpyError::ShapeOverflow { .. }
    ));
}

#[test]
fn truncated_inputs() {
    assert!(matches!(
        parse_header(b""),
        Err(NpyError::TruncatedHeader {
            expected: 10,
            actual: 0,
            ..
        })
    ));
    assert!(matches!(
        parse_header(b"\x93NUM"),
        Err(NpyError::TruncatedHeader { .. })
    ));
    assert!(matches!(
        parse_header(b"\x93NUMPY\x02\x00\x10"),
        Err(NpyError::TruncatedHeader { expected: 12, .. })
    ));
    let full = encode_header(Dtype::F64, &[2, 2]);
    let err = parse_header(&full[..full.len() - 1]).unwrap_err();
    assert!(
        matches!(
            err,
            NpyError::TruncatedHeader {
                expected: 128,
                actual: 127,
                ..
            }
        ),
        "{err}"
    );
    // Trailing data after the header is fine for parse_header.
    let mut more = full.clone();
    more.extend_from_slice(&[0; 32]);
    assert_eq!(parse_header(&more).unwrap().data_offset, 128);
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let dict = format!("{{'shape': {}", "(".repeat(100_000));
    assert!(matches!(
        parse_header(&with_version(2, &dict)),
        Err(NpyError::InvalidHeader { .. })
    ));
}

#[test]
fn encode_matches_numpy_layout() {
    // What numpy 1.24 writes for np.save(f, np.zeros((3, 4))): the dict,
    // spaces up to byte 127 and a newline.
    let dict = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
    let mut expected = b"\x93NUMPY\x01\x00v\x00".to_vec();
    expected.extend_from_slice(dict);
    expected.resize(127, b' ');
    expected.push(b'\n');
    assert_eq!(encode_header(Dtype::F64, &[3, 4]), expected);

    // numpy's growth padding (21 - digits(shape[0]) spaces after the dict)
    // pushes this header to 192 bytes although 128 would hold it.
    assert_eq!(encode_header(Dtype::F32, &[1; 14]).len(), 128);
    assert_eq!(encode_header(Dtype::F32, &[1; 15]).len(), 192);
}

#[test]
fn encode_switches_to_version_2_for_huge_headers() {
    let shape = vec![1usize; 30_000];
    let bytes = encode_header(Dtype::F32, &shape);
    assert_eq!(&bytes[6..8], &[2, 0]);
    assert_eq!(bytes.len() % 64, 0);
    let h = parse_header(&bytes).unwrap();
    assert_eq!(h.shape, shape);
    assert_eq!(h.data_offset, bytes.len() as u64);
}

fn arb_dtype() -> impl Strategy<Value = Dtype> {
    prop::sample::select(Dtype::ALL.to_vec())
}

fn arb_shape() -> impl Strategy<Value = Vec<usize>> {
    let dim = prop_oneof![
        8 => 0usize..20,
        2 => any::<usize>(),
        1 => Just(usize::MAX),
    ];
    prop::collection::vec(dim, 0..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn encode_parse_round_trip(dtype in arb_dtype(), shape in arb_shape()) {
        let bytes = encode_header(dtype, &shape);
        prop_assert_eq!(bytes.len() % ARRAY_ALIGN, 0);
        prop_assert_eq!(bytes.last(), Some(&b'\n'));
        prop_assert_eq!(&bytes[6..8], &[1u8, 0][..]);
        let fits = checked_product(&shape)
            .and_then(|n| n.checked_mul(dtype.size_bytes()))
            .is_some();
        match parse_header(&bytes) {
            Ok(h) => {
                prop_assert!(fits);
                prop_assert_eq!(h, NpyHeader {
                    dtype,
                    shape,
                    fortran_order: false,
                    data_offset: bytes.len() as u64,
                });
            }
            Err(NpyError::ShapeOverflow { shape: s, .. }) => {
                prop_assert!(!fits);
                prop_assert_eq!(s, shape);
            }
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse_header(&bytes);
        let mut with_magic = MAGIC.to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = parse_header(&with_magic);
    }

    #[test]
    fn random_dicts_never_panic(
        major in 1u8..=3,
        tokens in prop::collection::vec(
            prop::sample::select(vec![
                "{", "}", "(", ")", "[", "]", ",", ":", " ", "\n", "'", "\"", "\\",
                "'descr'", "'shape'", "'fortran_order'", "'<f8'", "'>c16'", "True",
                "False", "None", "0", "7", "18446744073709551616", "-1", "u", "L",
                "\u{e9}", "\u{80}",
            ]),
            0..40,
        ),
    ) {
        let dict: String = tokens.concat();
        let bytes = if major == 1 { v1(&dict) } else { with_version(major, &dict) };
        let _ = parse_header(&bytes);
    }

    #[test]
    fn mutated_headers_never_panic(
        dtype in arb_dtype(),
        shape in arb_shape(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = encode_header(dtype, &shape);
        for (index, byte) in edits {
            let i = index.index(bytes.len());
            bytes[i] = byte;
        }
        let _ = parse_header(&bytes);
        let _ = parse_header(&bytes[..cut.index(bytes.len())]);
    }
}
