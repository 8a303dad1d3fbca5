//! The little-endian binary codec of our own records (book checkpoints,
//! tablebase checkpoints and messages): an [`Encoder`] that appends values
//! to a byte vector and a [`Decoder`] that reads them back in the same
//! order. Nothing is self-describing: the caller writes a magic and a
//! version first and reads in the order it wrote.
//!
//! | value | bytes |
//! |---|---|
//! | `u8`, `bool` (0 or 1) | 1 |
//! | `u16`, `i16` | 2, little-endian |
//! | `u32`, `i32` | 4, little-endian |
//! | `u64`, `i64` | 8, little-endian |
//! | `f64` | its IEEE 754 bits as a `u64` |
//! | blob, text (UTF-8) | a `u64` length, then the bytes |
//! | words | a `u64` count, then each `u32` |
//! | raw bytes | the bytes alone (the reader knows how many) |
//!
//! Decoding never panics and never allocates more than the input could
//! hold: a length prefix is checked against the bytes left before anything
//! is read. Every failure is a [`DecodeError`] saying what was being read
//! (the caller may name it with [`Decoder::reading`]), at which byte, and
//! what went wrong.

use std::fmt;

/// Why a record could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The data ends inside a value.
    Truncated {
        /// What was being read ("a u32", or the caller's name for it).
        what: &'static str,
        /// Where the value starts.
        offset: usize,
        /// The bytes it needs.
        wanted: usize,
        /// The bytes left from `offset`.
        available: usize,
    },
    /// A length prefix counts more than the data left could hold.
    LengthBeyondData {
        /// What was being read.
        what: &'static str,
        /// Where the length prefix starts.
        offset: usize,
        /// The count read.
        length: u64,
        /// Bytes per counted item.
        unit: usize,
        /// The bytes left after the prefix.
        available: usize,
    },
    /// Bytes read as text are not UTF-8.
    NotUtf8 {
        /// What was being read.
        what: &'static str,
        /// Where the text's bytes start.
        offset: usize,
    },
    /// A value read whole that its type does not allow (a flag other than 0
    /// or 1).
    BadValue {
        /// What was being read.
        what: &'static str,
        /// Where the value starts.
        offset: usize,
        /// The value found.
        value: u64,
    },
    /// Bytes are left after the last value ([`Decoder::finish`]).
    TrailingBytes {
        /// Where the first byte left over is.
        offset: usize,
        /// How many are left.
        count: usize,
    },
    /// The values were read but do not make sense together: the caller's
    /// words.
    Invalid(String),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { what, offset, wanted, available } => write!(
                f,
                "cut short at byte {offset} reading {what} ({wanted} bytes wanted, {available} left)"
            ),
            DecodeError::LengthBeyondData { what, offset, length, unit, available } => write!(
                f,
                "length {length} of {what} at byte {offset} exceeds the data ({length} × {unit} bytes, \
                 {available} left)"
            ),
            DecodeError::NotUtf8 { what, offset } => write!(f, "{what} at byte {offset} is not UTF-8"),
            DecodeError::BadValue { what, offset, value } => {
                write!(f, "{what} at byte {offset} is {value}, which it cannot be")
            }
            DecodeError::TrailingBytes { offset, count } => {
                write!(f, "{count} bytes after the last value (from byte {offset})")
            }
            DecodeError::Invalid(problem) => f.write_str(problem),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Appends values to [`Encoder::bytes`] in the layout of the module
/// documentation.
#[derive(Clone, Debug, Default)]
pub struct Encoder {
    /// Everything written so far.
    pub bytes: Vec<u8>,
}

impl Encoder {
    /// An empty encoder with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Encoder {
        Encoder { bytes: Vec::with_capacity(capacity) }
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// One byte.
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    /// 1 for true, 0 for false.
    pub fn bool(&mut self, v: bool) {
        self.u8(u8::from(v));
    }
    /// Two bytes, little-endian.
    pub fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// Two bytes, little-endian, two's complement.
    pub fn i16(&mut self, v: i16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// Four bytes, little-endian.
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// Four bytes, little-endian, two's complement.
    pub fn i32(&mut self, v: i32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// Eight bytes, little-endian.
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// Eight bytes, little-endian, two's complement.
    pub fn i64(&mut self, v: i64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// The IEEE 754 bits, as [`Encoder::u64`].
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    /// The bytes alone, without a length: the reader must know how many
    /// ([`Decoder::blob_exact`]).
    pub fn raw(&mut self, v: &[u8]) {
        self.bytes.extend_from_slice(v);
    }
    /// A `u64` length, then the bytes.
    pub fn blob(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.raw(v);
    }
    /// A `u64` count, then each word as [`Encoder::u32`].
    pub fn words(&mut self, v: &[u32]) {
        self.u64(v.len() as u64);
        for &w in v {
            self.u32(w);
        }
    }
    /// The UTF-8 bytes as a [`Encoder::blob`].
    pub fn text(&mut self, v: &str) {
        self.blob(v.as_bytes());
    }
}

/// Reads values from a byte slice in the order an [`Encoder`] wrote them.
#[derive(Clone, Debug)]
pub struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The caller's name for the next value ([`Decoder::reading`]).
    next_what: Option<&'static str>,
}

impl<'a> Decoder<'a> {
    /// A decoder at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Decoder<'a> {
        Decoder { bytes, at: 0, next_what: None }
    }

    /// Names the next value read, for its error (`d.reading("the batch
    /// size").u32()?`); a value read without a name is named by its type.
    pub fn reading(&mut self, what: &'static str) -> &mut Decoder<'a> {
        self.next_what = Some(what);
        self
    }

    /// Where the next value starts.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// Fails unless every byte has been read.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(DecodeError::TrailingBytes { offset: self.at, count }),
        }
    }

    /// The name of the value about to be read: the caller's, or `default`.
    fn what(&mut self, default: &'static str) -> &'static str {
        self.next_what.take().unwrap_or(default)
    }

    fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let available = self.remaining();
        if len > available {
            return Err(DecodeError::Truncated { what, offset: self.at, wanted: len, available });
        }
        let slice = &self.bytes[self.at..self.at + len];
        self.at += len;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        let mut array = [0u8; N];
        array.copy_from_slice(self.take(N, what)?);
        Ok(array)
    }

    /// Exactly `len` bytes (no length prefix).
    pub fn blob_exact(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let what = self.what("bytes");
        self.take(len, what)
    }
    /// One byte.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        let what = self.what("a u8");
        Ok(self.array::<1>(what)?[0])
    }
    /// A byte that must be 0 (false) or 1 (true).
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        let what = self.what("a flag");
        let offset = self.at;
        match self.array::<1>(what)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(DecodeError::BadValue { what, offset, value: value.into() }),
        }
    }
    /// Two bytes, little-endian.
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        let what = self.what("a u16");
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    /// Two bytes, little-endian, two's complement.
    pub fn i16(&mut self) -> Result<i16, DecodeError> {
        let what = self.what("an i16");
        Ok(i16::from_le_bytes(self.array(what)?))
    }
    /// Four bytes, little-endian.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        let what = self.what("a u32");
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    /// Four bytes, little-endian, two's complement.
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        let what = self.what("an i32");
        Ok(i32::from_le_bytes(self.array(what)?))
    }
    /// Eight bytes, little-endian.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        let what = self.what("a u64");
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    /// Eight bytes, little-endian, two's complement.
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        let what = self.what("an i64");
        Ok(i64::from_le_bytes(self.array(what)?))
    }
    /// IEEE 754 bits, as [`Decoder::u64`].
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        let what = self.what("an f64");
        Ok(f64::from_bits(u64::from_le_bytes(self.array(what)?)))
    }

    /// A `u64` count of `unit`-byte items, refused if the data left cannot
    /// hold them (so no caller allocates for a damaged count).
    fn length(&mut self, unit: usize, what: &'static str) -> Result<usize, DecodeError> {
        let offset = self.at;
        let length = u64::from_le_bytes(self.array(what)?);
        let available = self.remaining();
        match length.checked_mul(unit as u64) {
            Some(bytes) if bytes <= available as u64 => Ok(length as usize),
            _ => Err(DecodeError::LengthBeyondData { what, offset, length, unit, available }),
        }
    }
    /// A `u64` length, then that many bytes.
    pub fn blob(&mut self) -> Result<&'a [u8], DecodeError> {
        let what = self.what("a blob");
        let len = self.length(1, what)?;
        self.take(len, what)
    }
    /// What [`Decoder::words`] reads, left as its little-endian bytes (a
    /// long list need not be copied).
    pub fn word_bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let what = self.what("a list of words");
        let len = self.length(4, what)?;
        self.take(4 * len, what)
    }
    /// A `u64` count, then that many `u32`s.
    pub fn words(&mut self) -> Result<Vec<u32>, DecodeError> {
        let what = self.what("a list of words");
        let len = self.length(4, what)?;
        let bytes = self.take(4 * len, what)?;
        Ok(bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
    }
    /// A [`Decoder::blob`] that must be UTF-8.
    pub fn text(&mut self) -> Result<String, DecodeError> {
        let what = self.what("a text");
        let len = self.length(1, what)?;
        self.utf8(len, what).map(str::to_string)
    }
    /// Exactly `len` bytes (no length prefix) that must be UTF-8.
    pub fn text_exact(&mut self, len: usize) -> Result<&'a str, DecodeError> {
        let what = self.what("a text");
        self.utf8(len, what)
    }

    fn utf8(&mut self, len: usize, what: &'static str) -> Result<&'a str, DecodeError> {
        let offset = self.at;
        let bytes = self.take(len, what)?;
        std::str::from_utf8(bytes).map_err(|_| DecodeError::NotUtf8 { what, offset })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One value of every kind, in a known order.
    fn every_kind() -> Encoder {
        let mut e = Encoder::default();
        e.u8(0xAB);
        e.bool(true);
        e.u16(0xBEEF);
        e.i16(-2);
        e.u32(0xDEAD_BEEF);
        e.i32(-3);
        e.u64(u64::MAX - 1);
        e.i64(i64::MIN);
        e.f64(-0.125);
        e.raw(b"RAW");
        e.blob(&[1, 2, 3]);
        e.words(&[7, u32::MAX]);
        e.text("ω = 0.04");
        e
    }

    /// Reads back [`every_kind`]'s values, or the first error.
    fn read_every_kind(bytes: &[u8]) -> Result<(), DecodeError> {
        let mut d = Decoder::new(bytes);
        assert_eq!(d.u8()?, 0xAB);
        assert!(d.bool()?);
        assert_eq!(d.u16()?, 0xBEEF);
        assert_eq!(d.i16()?, -2);
        assert_eq!(d.u32()?, 0xDEAD_BEEF);
        assert_eq!(d.i32()?, -3);
        assert_eq!(d.u64()?, u64::MAX - 1);
        assert_eq!(d.i64()?, i64::MIN);
        assert_eq!(d.f64()?, -0.125);
        assert_eq!(d.blob_exact(3)?, b"RAW");
        assert_eq!(d.blob()?, [1, 2, 3]);
        assert_eq!(d.words()?, [7, u32::MAX]);
        assert_eq!(d.text()?, "ω = 0.04");
        d.finish()
    }

    #[test]
    fn every_kind_of_value_round_trips_in_the_documented_bytes() {
        let bytes = every_kind().into_bytes();
        read_every_kind(&bytes).unwrap();
        // Little-endian, lengths as u64: the layout of the module table.
        assert_eq!(&bytes[..5], [0xAB, 1, 0xEF, 0xBE, 0xFE]);
        let blob_at = 1 + 1 + 2 + 2 + 4 + 4 + 8 + 8 + 8 + 3;
        assert_eq!(&bytes[blob_at..blob_at + 11], [3, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3]);
        let text = "ω = 0.04".as_bytes();
        assert_eq!(
            &bytes[bytes.len() - text.len() - 8..bytes.len() - text.len()],
            (text.len() as u64).to_le_bytes()
        );
    }

    #[test]
    fn a_record_cut_at_any_length_is_an_error_and_never_a_panic() {
        let bytes = every_kind().into_bytes();
        for cut in 0..bytes.len() {
            let error = read_every_kind(&bytes[..cut]).expect_err("a cut record");
            // A fixed-size value is cut short where it starts; a length
            // prefix read whole counts more than the bytes after it.
            let consistent = match error {
                DecodeError::Truncated { offset, wanted, available, .. } => {
                    available == cut - offset && wanted > available
                }
                DecodeError::LengthBeyondData { offset, length, unit, available, .. } => {
                    offset + 8 + available == cut && length * unit as u64 > available as u64
                }
                _ => false,
            };
            assert!(consistent, "cut at {cut}: {error:?}");
        }
    }

    #[test]
    fn trailing_bytes_are_refused_by_finish() {
        let mut bytes = every_kind().into_bytes();
        let end = bytes.len();
        bytes.extend_from_slice(&[0, 0]);
        assert_eq!(read_every_kind(&bytes), Err(DecodeError::TrailingBytes { offset: end, count: 2 }));
    }

    #[test]
    fn a_length_beyond_the_data_is_refused_before_anything_is_read() {
        let mut e = Encoder::default();
        e.u64(u64::MAX);
        e.u32(5);
        let beyond = |error| {
            matches!(error, DecodeError::LengthBeyondData { offset: 0, length: u64::MAX, available: 4, .. })
        };
        assert!(beyond(Decoder::new(&e.bytes).blob().unwrap_err()));
        assert!(beyond(Decoder::new(&e.bytes).words().unwrap_err()));
        assert!(beyond(Decoder::new(&e.bytes).text().unwrap_err()));
        // Four words need 16 bytes, not 4.
        let mut e = Encoder::default();
        e.u64(4);
        e.u32(1);
        let error = Decoder::new(&e.bytes).words().unwrap_err();
        assert_eq!(
            error,
            DecodeError::LengthBeyondData {
                what: "a list of words",
                offset: 0,
                length: 4,
                unit: 4,
                available: 4
            }
        );
    }

    #[test]
    fn errors_say_what_was_read_where() {
        let mut d = Decoder::new(&[1, 2, 3]);
        d.u8().unwrap();
        let error = d.reading("the batch size").u32().unwrap_err();
        assert_eq!(error.to_string(), "cut short at byte 1 reading the batch size (4 bytes wanted, 2 left)");
        // The name is for one value only.
        assert!(d.u32().unwrap_err().to_string().contains("reading a u32"));

        let mut e = Encoder::default();
        e.u8(2);
        e.blob(&[0xFF, 0xFE]);
        e.raw(&[0xC3]);
        let mut d = Decoder::new(&e.bytes);
        let flag = d.reading("a repetition flag").bool().unwrap_err();
        assert_eq!(flag, DecodeError::BadValue { what: "a repetition flag", offset: 0, value: 2 });
        assert_eq!(flag.to_string(), "a repetition flag at byte 0 is 2, which it cannot be");
        assert_eq!(d.text().unwrap_err(), DecodeError::NotUtf8 { what: "a text", offset: 9 });
        let mut d = Decoder::new(&e.bytes[11..]);
        let error = d.reading("the evaluator").text_exact(1).unwrap_err();
        assert_eq!(error.to_string(), "the evaluator at byte 0 is not UTF-8");
        assert_eq!(DecodeError::Invalid("bad magic".into()).to_string(), "bad magic");
    }

    #[test]
    fn offsets_and_remaining_follow_the_reads() {
        let bytes = every_kind().into_bytes();
        let mut d = Decoder::new(&bytes);
        assert_eq!((d.offset(), d.remaining()), (0, bytes.len()));
        d.u16().unwrap();
        assert_eq!((d.offset(), d.remaining()), (2, bytes.len() - 2));
    }
}
