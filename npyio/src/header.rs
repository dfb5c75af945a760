//! The `.npy` header: parsing, validation and encoding. No MPI involved.
//!
//! A `.npy` file is the magic string `"\x93NUMPY"`, two version bytes, the
//! header length (`u16` little-endian for version 1.0, `u32` for 2.0 and 3.0),
//! the header itself — a Python dict literal such as
//! `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }` padded with
//! spaces and terminated by `'\n'` — and then the raw array data.
//!
//! See <https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html>.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::NpyError;

/// The magic string every `.npy` file starts with.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// numpy aligns the start of the data to this many bytes.
const ARRAY_ALIGN: usize = 64;

/// numpy leaves room for this many digits in the first dimension so the header
/// can be rewritten in place when the array grows (`GROWTH_AXIS_MAX_DIGITS`).
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// Nesting limit for tuples and lists in the header, so that hostile input
/// cannot exhaust the stack.
const MAX_NESTING: usize = 32;

/// Longest excerpt of offending header text quoted in an error message.
const MAX_QUOTE: usize = 40;

/// Element types supported by this crate: little-endian IEEE floats and
/// complex numbers made of two of them.
///
/// ```
/// use npyio::Dtype;
/// assert_eq!(Dtype::C128.descr(), "<c16");
/// assert_eq!(Dtype::C128.size_bytes(), 16);
/// assert!(Dtype::C128.is_complex());
/// assert_eq!(Dtype::from_descr("<f4").unwrap(), Dtype::F32);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// `float32`, descr `'<f4'`.
    F32,
    /// `float64`, descr `'<f8'`.
    F64,
    /// `complex64` (two `float32`), descr `'<c8'`.
    C64,
    /// `complex128` (two `float64`), descr `'<c16'`.
    C128,
}

impl Dtype {
    /// All supported dtypes.
    pub const ALL: [Dtype; 4] = [Dtype::F32, Dtype::F64, Dtype::C64, Dtype::C128];

    /// Size of one element in bytes.
    ///
    /// ```
    /// assert_eq!(npyio::Dtype::C64.size_bytes(), 8);
    /// ```
    pub const fn size_bytes(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F64 | Dtype::C64 => 8,
            Dtype::C128 => 16,
        }
    }

    /// Whether the elements are complex numbers.
    ///
    /// ```
    /// assert!(!npyio::Dtype::F64.is_complex());
    /// ```
    pub const fn is_complex(self) -> bool {
        matches!(self, Dtype::C64 | Dtype::C128)
    }

    /// The numpy type string (`descr`) for this dtype, e.g. `"<f8"`.
    pub const fn descr(self) -> &'static str {
        match self {
            Dtype::F32 => "<f4",
            Dtype::F64 => "<f8",
            Dtype::C64 => "<c8",
            Dtype::C128 => "<c16",
        }
    }

    /// The numpy name of this dtype, e.g. `"float64"`; also its `Display` form.
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "float32",
            Dtype::F64 => "float64",
            Dtype::C64 => "complex64",
            Dtype::C128 => "complex128",
        }
    }

    /// Parses a numpy type string such as `"<f8"`.
    ///
    /// Only the four little-endian descrs `'<f4'`, `'<f8'`, `'<c8'`, `'<c16'`
    /// are accepted. Big-endian versions of them (`'>f8'`, ...) give
    /// [`NpyError::BigEndian`]; anything else gives
    /// [`NpyError::UnsupportedDtype`].
    ///
    /// ```
    /// use npyio::{Dtype, NpyError};
    /// assert_eq!(Dtype::from_descr("<c16").unwrap(), Dtype::C128);
    /// assert!(matches!(Dtype::from_descr(">f8"), Err(NpyError::BigEndian { .. })));
    /// assert!(matches!(Dtype::from_descr("<i4"), Err(NpyError::UnsupportedDtype { .. })));
    /// ```
    pub fn from_descr(descr: &str) -> Result<Dtype, NpyError> {
        if let Some(dtype) = Dtype::ALL.into_iter().find(|d| d.descr() == descr) {
            return Ok(dtype);
        }
        let big_endian = descr
            .strip_prefix('>')
            .is_some_and(|rest| Dtype::ALL.iter().any(|d| &d.descr()[1..] == rest));
        if big_endian {
            Err(NpyError::BigEndian {
                path: PathBuf::new(),
                descr: descr.to_owned(),
            })
        } else {
            Err(NpyError::UnsupportedDtype {
                path: PathBuf::new(),
                descr: descr.to_owned(),
            })
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The decoded header of a `.npy` file.
///
/// ```
/// use npyio::{encode_header, parse_header, Dtype};
/// let bytes = encode_header(Dtype::F64, &[7, 5, 6]);
/// let header = parse_header(&bytes).unwrap();
/// assert_eq!(header.dtype, Dtype::F64);
/// assert_eq!(header.shape, vec![7, 5, 6]);
/// assert!(!header.fortran_order);
/// assert_eq!(header.data_offset, bytes.len() as u64);
/// assert_eq!(header.element_count().unwrap(), 210);
/// assert_eq!(header.data_len_bytes().unwrap(), 210 * 8);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// Element type.
    pub dtype: Dtype,
    /// Array shape; empty for a 0-d array (which holds one element).
    pub shape: Vec<usize>,
    /// Whether the data is stored in Fortran (column-major) order.
    pub fortran_order: bool,
    /// Byte offset of the array data from the start of the file.
    pub data_offset: u64,
}

impl NpyHeader {
    /// Number of elements, the product of `shape` (1 for a 0-d array).
    ///
    /// Fails with [`NpyError::ShapeOverflow`] if the product overflows `usize`.
    pub fn element_count(&self) -> Result<usize, NpyError> {
        checked_product(&self.shape).ok_or_else(|| NpyError::ShapeOverflow {
            path: PathBuf::new(),
            shape: self.shape.clone(),
        })
    }

    /// Number of data bytes, `element_count() * dtype.size_bytes()`.
    ///
    /// Fails with [`NpyError::ShapeOverflow`] if it overflows `u64` or `usize`.
    pub fn data_len_bytes(&self) -> Result<u64, NpyError> {
        let count = self.element_count()?;
        count
            .checked_mul(self.dtype.size_bytes())
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| NpyError::ShapeOverflow {
                path: PathBuf::new(),
                shape: self.shape.clone(),
            })
    }
}

/// Product of `dims` (1 when empty), `None` on overflow.
pub(crate) fn checked_product(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// Parses the header at the start of `bytes` (a whole file, or at least its
/// header; bytes after the header are ignored).
///
/// Accepts format versions 1.0, 2.0 and 3.0 and any valid spelling of the
/// header dict: keys in any order, arbitrary whitespace, optional trailing
/// commas, single or double quotes, `(5,)` for one dimension and `()` for a 0-d
/// array. The dict must contain exactly the keys `descr`, `fortran_order` and
/// `shape`. A header with `fortran_order: True` is returned as such (see
/// [`read_header`], which rejects it). Never panics, whatever the input.
///
/// Errors carry no path; use [`NpyError::with_path`] to add one.
///
/// ```
/// let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
/// let dict = b"{ \"shape\": (5,), 'fortran_order' : False, 'descr': '<c8' }\n";
/// bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
/// bytes.extend_from_slice(dict);
/// let header = npyio::parse_header(&bytes).unwrap();
/// assert_eq!(header.dtype, npyio::Dtype::C64);
/// assert_eq!(header.shape, vec![5]);
/// assert_eq!(header.data_offset, bytes.len() as u64);
/// ```
pub fn parse_header(bytes: &[u8]) -> Result<NpyHeader, NpyError> {
    let preamble = parse_preamble(bytes)?;
    let end = preamble.data_offset;
    if (bytes.len() as u64) < end {
        return Err(NpyError::TruncatedHeader {
            path: PathBuf::new(),
            expected: end,
            actual: bytes.len() as u64,
        });
    }
    // `end <= bytes.len()`, so it fits in usize.
    let text = &bytes[preamble.prefix_len..end as usize];
    let dict = Parser::new(text, preamble.utf8).parse_header_dict()?;
    let header = interpret_dict(dict, end)?;
    header.data_len_bytes()?;
    Ok(header)
}

/// Reads and validates the header of the `.npy` file at `path`.
///
/// In addition to [`parse_header`]'s checks this rejects Fortran-order arrays
/// ([`NpyError::FortranOrder`]) and checks that the file length is exactly
/// `data_offset + element_count * size_bytes` ([`NpyError::Truncated`] or
/// [`NpyError::TrailingBytes`]). All errors name `path`.
///
/// ```no_run
/// let header = npyio::read_header("input.npy")?;
/// println!("{} array of shape {:?}", header.dtype, header.shape);
/// # Ok::<(), npyio::NpyError>(())
/// ```
pub fn read_header(path: impl AsRef<Path>) -> Result<NpyHeader, NpyError> {
    let path = path.as_ref();
    read_header_impl(path).map_err(|e| e.with_path(path))
}

fn read_header_impl(path: &Path) -> Result<NpyHeader, NpyError> {
    let io_err = |action: &str| {
        let action = action.to_owned();
        move |source| NpyError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    // Refuses devices and FIFOs without blocking on them.
    let mut file = crate::staging::open_input(path)?;
    let file_len = file.metadata().map_err(io_err("failed to stat"))?.len();

    // Read the fixed-size preamble first so that a bogus header length cannot
    // make us allocate more than the file holds.
    let mut bytes = Vec::with_capacity(12);
    (&mut file)
        .take(12)
        .read_to_end(&mut bytes)
        .map_err(io_err("failed to read"))?;
    let preamble = parse_preamble(&bytes)?;
    if preamble.data_offset > file_len {
        return Err(NpyError::TruncatedHeader {
            path: PathBuf::new(),
            expected: preamble.data_offset,
            actual: file_len,
        });
    }
    (&mut file)
        .take(preamble.data_offset - bytes.len() as u64)
        .read_to_end(&mut bytes)
        .map_err(io_err("failed to read"))?;

    let header = parse_header(&bytes)?;
    if header.fortran_order {
        return Err(NpyError::FortranOrder {
            path: PathBuf::new(),
        });
    }
    let expected = header.data_len_bytes()?;
    let actual = file_len - header.data_offset;
    if actual < expected {
        return Err(NpyError::Truncated {
            path: PathBuf::new(),
            expected,
            actual,
        });
    }
    if actual > expected {
        return Err(NpyError::TrailingBytes {
            path: PathBuf::new(),
            expected,
            actual,
        });
    }
    Ok(header)
}

/// Encodes the header of a C-order array of `dtype` and `shape`, exactly as
/// numpy (≥ 1.23) writes it: format version 1.0 when the header length fits
/// in a `u16`, otherwise 2.0; the dict padded with spaces (including numpy's
/// spare room for growing the first axis) and a final `'\n'` so that the total
/// length — and thus the data offset — is a multiple of 64.
///
/// # Panics
///
/// Only if the header would exceed 4 GiB, i.e. for shapes with hundreds of
/// millions of dimensions.
///
/// ```
/// use npyio::{encode_header, Dtype};
/// let bytes = encode_header(Dtype::F32, &[3]);
/// assert_eq!(bytes.len() % 64, 0);
/// assert!(bytes.starts_with(b"\x93NUMPY\x01\x00"));
/// assert!(bytes.ends_with(b"\n"));
/// let text = std::str::from_utf8(&bytes[10..]).unwrap();
/// assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"));
/// ```
pub fn encode_header(dtype: Dtype, shape: &[usize]) -> Vec<u8> {
    let shape_repr = match shape {
        [] => "()".to_owned(),
        [n] => format!("({n},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", dims.join(", "))
        }
    };
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_repr}, }}",
        dtype.descr()
    );
    if let Some(first) = shape.first() {
        let digits = first.to_string().len();
        dict.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits)));
    }

    // Dict + padding + '\n', where padding is 1..=64 spaces (numpy always pads).
    let unpadded = dict.len() + 1;
    let padded_len = |prefix_len: usize| {
        let pad = ARRAY_ALIGN - (prefix_len + unpadded) % ARRAY_ALIGN;
        unpadded + pad
    };
    let (major, len_bytes) = match u16::try_from(padded_len(10)) {
        Ok(len) => (1u8, len.to_le_bytes().to_vec()),
        Err(_) => {
            let len = u32::try_from(padded_len(12)).expect(".npy header exceeds 4 GiB");
            (2u8, len.to_le_bytes().to_vec())
        }
    };
    let header_len = padded_len(8 + len_bytes.len());

    let mut out = Vec::with_capacity(8 + len_bytes.len() + header_len);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[major, 0]);
    out.extend_from_slice(&len_bytes);
    out.extend_from_slice(dict.as_bytes());
    out.resize(out.len() + (header_len - unpadded), b' ');
    out.push(b'\n');
    out
}

/// The fixed-size start of a `.npy` file.
struct Preamble {
    /// Length of magic + version + header-length field (10 or 12).
    prefix_len: usize,
    /// Offset of the first data byte (prefix + header length).
    data_offset: u64,
    /// Whether the header text is UTF-8 (version 3.0) rather than latin-1.
    utf8: bool,
}

fn parse_preamble(bytes: &[u8]) -> Result<Preamble, NpyError> {
    let have = bytes.len().min(MAGIC.len());
    if bytes[..have] != MAGIC[..have] {
        // HDF5's signature (its superblock at offset 0, as h5py and dfft write it): say what
        // the file is rather than only what it is not.
        if bytes.starts_with(b"\x89HDF") {
            return Err(NpyError::Hdf5NotNpy {
                path: PathBuf::new(),
            });
        }
        return Err(NpyError::BadMagic {
            path: PathBuf::new(),
        });
    }
    let truncated = |expected: u64| NpyError::TruncatedHeader {
        path: PathBuf::new(),
        expected,
        actual: bytes.len() as u64,
    };
    let (major, minor) = match bytes {
        [_, _, _, _, _, _, major, minor, ..] => (*major, *minor),
        // Not even the version is present; the smallest possible header needs 10 bytes.
        _ => return Err(truncated(10)),
    };
    let (prefix_len, utf8) = match (major, minor) {
        (1, 0) => (10, false),
        (2, 0) => (12, false),
        (3, 0) => (12, true),
        _ => {
            return Err(NpyError::UnsupportedVersion {
                path: PathBuf::new(),
                major,
                minor,
            })
        }
    };
    let header_len = match (prefix_len, &bytes[8..]) {
        (10, [a, b, ..]) => u64::from(u16::from_le_bytes([*a, *b])),
        (12, [a, b, c, d, ..]) => u64::from(u32::from_le_bytes([*a, *b, *c, *d])),
        _ => return Err(truncated(prefix_len as u64)),
    };
    Ok(Preamble {
        prefix_len,
        data_offset: prefix_len as u64 + header_len,
        utf8,
    })
}

/// A Python literal of the subset that can appear in a `.npy` header.
#[derive(Debug)]
enum Value {
    Str(String),
    Int(u64),
    Bool(bool),
    Tuple(Vec<Value>),
    List(Vec<Value>),
}

impl fmt::Display for Value {
    /// Python `repr`-like rendering, used in error messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn items(f: &mut fmt::Formatter<'_>, items: &[Value]) -> fmt::Result {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{item}")?;
            }
            Ok(())
        }
        match self {
            Value::Str(s) => write!(f, "'{s}'"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
            Value::Tuple(v) => {
                f.write_str("(")?;
                items(f, v)?;
                f.write_str(if v.len() == 1 { ",)" } else { ")" })
            }
            Value::List(v) => {
                f.write_str("[")?;
                items(f, v)?;
                f.write_str("]")
            }
        }
    }
}

fn invalid(reason: impl Into<String>) -> NpyError {
    NpyError::InvalidHeader {
        path: PathBuf::new(),
        reason: reason.into(),
    }
}

/// Renders (at most [`MAX_QUOTE`] bytes of) header text for an error message.
fn quote(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(MAX_QUOTE)];
    let mut s: String = shown.escape_ascii().to_string();
    if bytes.len() > MAX_QUOTE {
        s.push_str("...");
    }
    format!("\"{s}\"")
}

/// Recursive-descent parser for the header dict.
struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    /// Decode string contents as UTF-8 (version 3.0) instead of latin-1.
    utf8: bool,
}

impl<'a> Parser<'a> {
    fn new(text: &'a [u8], utf8: bool) -> Self {
        Parser { text, pos: 0, utf8 }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c') = self.peek() {
            self.pos += 1;
        }
    }

    /// Error for an unexpected character (or end of input) at the current position.
    fn unexpected(&self, expected: &str) -> NpyError {
        match self.text.get(self.pos..) {
            Some(rest) if !rest.is_empty() => invalid(format!(
                "expected {expected} at offset {} but found {}",
                self.pos,
                quote(rest)
            )),
            _ => invalid(format!("expected {expected} but the header ended")),
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), NpyError> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(what))
        }
    }

    /// `{ key: value, ... }` followed only by whitespace.
    fn parse_header_dict(mut self) -> Result<Vec<(String, Value)>, NpyError> {
        self.expect(b'{', "'{'")?;
        let mut entries = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                break;
            }
            let key_start = self.pos;
            let key = match self.parse_value(0)? {
                Value::Str(key) => key,
                other => {
                    return Err(invalid(format!(
                        "dict keys must be strings, found {other} at offset {key_start}"
                    )))
                }
            };
            self.expect(b':', "':'")?;
            let value = self.parse_value(0)?;
            entries.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return Err(self.unexpected("',' or '}'")),
            }
        }
        self.skip_ws();
        if self.pos < self.text.len() {
            return Err(invalid(format!(
                "unexpected text after the header dict at offset {}: {}",
                self.pos,
                quote(&self.text[self.pos..])
            )));
        }
        Ok(entries)
    }

    fn parse_value(&mut self, depth: usize) -> Result<Value, NpyError> {
        if depth > MAX_NESTING {
            return Err(invalid(format!(
                "values nested more than {MAX_NESTING} levels deep"
            )));
        }
        self.skip_ws();
        match self.peek() {
            Some(b'\'' | b'"') => self.parse_string(),
            Some(b'u' | b'U') if matches!(self.text.get(self.pos + 1), Some(b'\'' | b'"')) => {
                self.pos += 1;
                self.parse_string()
            }
            Some(b'0'..=b'9') => self.parse_int(),
            Some(b'(') => self.parse_sequence(b')', depth),
            Some(b'[') => self.parse_sequence(b']', depth),
            Some(b'A'..=b'Z' | b'a'..=b'z' | b'_') => self.parse_word(),
            Some(b'-') => Err(invalid(format!(
                "negative numbers are not allowed (at offset {}: {})",
                self.pos,
                quote(&self.text[self.pos..])
            ))),
            _ => Err(self.unexpected("a string, integer, boolean, tuple or list")),
        }
    }

    fn parse_string(&mut self) -> Result<Value, NpyError> {
        let quote_char = self.text[self.pos];
        let start = self.pos + 1;
        let len = self.text[start..]
            .iter()
            .position(|&b| b == quote_char || b == b'\\' || b == b'\n')
            .ok_or_else(|| invalid(format!("unterminated string at offset {}", self.pos)))?;
        let end = start + len;
        if self.text[end] != quote_char {
            return Err(invalid(format!(
                "escape sequences and line breaks in strings are not supported (string at offset {})",
                self.pos
            )));
        }
        let raw = &self.text[start..end];
        let s = if self.utf8 {
            std::str::from_utf8(raw)
                .map_err(|_| invalid(format!("string at offset {} is not valid UTF-8", self.pos)))?
                .to_owned()
        } else {
            // Versions 1.0 and 2.0 are latin-1: every byte is one code point.
            raw.iter().map(|&b| char::from(b)).collect()
        };
        self.pos = end + 1;
        Ok(Value::Str(s))
    }

    fn parse_int(&mut self) -> Result<Value, NpyError> {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        let digits = &self.text[start..self.pos];
        // Python 2 wrote longs with an `L` suffix, e.g. `(3L, 4L)`.
        if let Some(b'L' | b'l') = self.peek() {
            self.pos += 1;
        }
        let value = digits.iter().try_fold(0u64, |acc, &d| {
            acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        });
        value.map(Value::Int).ok_or_else(|| {
            invalid(format!(
                "integer {} at offset {start} does not fit in 64 bits",
                quote(digits)
            ))
        })
    }

    /// A tuple `( ... )` or list `[ ... ]`; `(x)` without a comma is just `x`.
    fn parse_sequence(&mut self, close: u8, depth: usize) -> Result<Value, NpyError> {
        let is_tuple = close == b')';
        self.pos += 1;
        let mut items = Vec::new();
        let mut saw_comma = false;
        loop {
            self.skip_ws();
            if self.peek() == Some(close) {
                self.pos += 1;
                break;
            }
            items.push(self.parse_value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    saw_comma = true;
                }
                Some(c) if c == close => {}
                _ => {
                    return Err(self.unexpected(if is_tuple { "',' or ')'" } else { "',' or ']'" }))
                }
            }
        }
        if !is_tuple {
            return Ok(Value::List(items));
        }
        if items.len() == 1 && !saw_comma {
            // Parenthesised expression, not a tuple.
            return Ok(items.pop().expect("one item"));
        }
        Ok(Value::Tuple(items))
    }

    fn parse_word(&mut self) -> Result<Value, NpyError> {
        let start = self.pos;
        while let Some(b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_') = self.peek() {
            self.pos += 1;
        }
        match &self.text[start..self.pos] {
            b"True" => Ok(Value::Bool(true)),
            b"False" => Ok(Value::Bool(false)),
            word => Err(invalid(format!(
                "unexpected name {} at offset {start} (only True and False are allowed)",
                quote(word)
            ))),
        }
    }
}

/// Turns the parsed dict into a header, checking keys and value types.
fn interpret_dict(entries: Vec<(String, Value)>, data_offset: u64) -> Result<NpyHeader, NpyError> {
    let mut descr = None;
    let mut fortran_order = None;
    let mut shape = None;
    for (key, value) in entries {
        let slot = match key.as_str() {
            "descr" => &mut descr,
            "fortran_order" => &mut fortran_order,
            "shape" => &mut shape,
            _ => {
                return Err(invalid(format!(
                    "unexpected key '{key}' (expected exactly 'descr', 'fortran_order' and 'shape')"
                )))
            }
        };
        if slot.replace(value).is_some() {
            return Err(invalid(format!("duplicate key '{key}'")));
        }
    }
    let missing = |key: &str| invalid(format!("missing key '{key}'"));

    let dtype = match descr.ok_or_else(|| missing("descr"))? {
        Value::Str(s) => Dtype::from_descr(&s)?,
        other => {
            return Err(NpyError::UnsupportedDtype {
                path: PathBuf::new(),
                descr: other.to_string(),
            })
        }
    };
    let fortran_order = match fortran_order.ok_or_else(|| missing("fortran_order"))? {
        Value::Bool(b) => b,
        other => {
            return Err(invalid(format!(
                "'fortran_order' must be True or False, found {other}"
            )))
        }
    };
    let shape_value = shape.ok_or_else(|| missing("shape"))?;
    let shape = match &shape_value {
        Value::Tuple(items) => items
            .iter()
            .map(|item| match item {
                Value::Int(n) => usize::try_from(*n).ok(),
                _ => None,
            })
            .collect::<Option<Vec<usize>>>(),
        _ => None,
    }
    .ok_or_else(|| {
        invalid(format!(
            "'shape' must be a tuple of non-negative integers, found {shape_value}"
        ))
    })?;
    Ok(NpyHeader {
        dtype,
        shape,
        fortran_order,
        data_offset,
    })
}

#[cfg(test)]
mod tests;
