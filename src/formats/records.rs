//! What the three layouts share after the header: fixed-size records read
//! and written in order, big-endian numbers in them, state keys, the
//! format and version check.

use std::io;
use std::path::Path;

use super::error::FormatError;
use super::header::{Header, HeaderEncoding};
use crate::rank::{binomial, SOUTH_TO_MOVE_BIT};

/// Ranks of 48 seeds in 14 places: `C(61, 13)`, below 2^43.
const STATE_RANKS: u64 = binomial(61, 13);

/// Whether `key` is a state key: bit 43 the side to move, bits 0..43 a rank
/// below `C(61, 13)`, nothing above bit 43. Every such key decodes with
/// [`crate::rank::state_from_key`].
pub fn is_state_key(key: u64) -> bool {
    key >> 44 == 0 && key & !SOUTH_TO_MOVE_BIT < STATE_RANKS
}

/// Checks that a header carries `format` at one of `versions`.
pub(crate) fn check_version(
    header: &Header,
    format: &'static str,
    versions: &'static [&'static str],
) -> Result<(), FormatError> {
    if header.format() != format {
        return Err(FormatError::UnknownSignature {
            expected: format,
            found: header.signature().to_string(),
            looks_like: None,
        });
    }
    if !versions.contains(&header.version()) {
        return Err(FormatError::UnsupportedVersion {
            format,
            version: header.version().to_string(),
            supported: versions,
        });
    }
    Ok(())
}

/// Reads a book's header (checking its format and version) and cuts the
/// body into records of `len` bytes; returns the header, the body's offset
/// and the records. A body that does not end on a record boundary is a
/// truncated entry, named with its number and offset.
pub(crate) fn read_records<'a>(
    bytes: &'a [u8],
    format: &'static str,
    versions: &'static [&'static str],
    encoding: HeaderEncoding,
    len: usize,
) -> Result<(Header, usize, std::slice::ChunksExact<'a, u8>), FormatError> {
    let (header, start) = Header::read(bytes, format, encoding)?;
    check_version(&header, format, versions)?;
    let body = &bytes[start..];
    let records = body.chunks_exact(len);
    let rest = records.remainder().len();
    if rest != 0 {
        let entry = (body.len() / len) as u64;
        return Err(FormatError::TruncatedEntry {
            format,
            entry,
            offset: start as u64 + entry * len as u64,
            missing: (len - rest) as u64,
        });
    }
    Ok((header, start, records))
}

/// Writes an encoded header, then fixed-size records in order.
pub(crate) fn write_records<W: io::Write, const N: usize>(
    out: &mut W,
    header: &[u8],
    records: impl Iterator<Item = [u8; N]>,
) -> io::Result<()> {
    out.write_all(header)?;
    for record in records {
        out.write_all(&record)?;
    }
    Ok(())
}

/// Reads a whole file, naming it on failure.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, FormatError> {
    std::fs::read(path).map_err(|e| FormatError::io("read", path, e))
}

/// Big-endian numbers from a record (the caller slices exactly).
pub(crate) fn be_u64(bytes: &[u8]) -> u64 {
    let mut buffer = [0u8; 8];
    buffer.copy_from_slice(bytes);
    u64::from_be_bytes(buffer)
}

pub(crate) fn be_i16(bytes: &[u8]) -> i16 {
    let mut buffer = [0u8; 2];
    buffer.copy_from_slice(bytes);
    i16::from_be_bytes(buffer)
}

pub(crate) fn be_i32(bytes: &[u8]) -> i32 {
    let mut buffer = [0u8; 4];
    buffer.copy_from_slice(bytes);
    i32::from_be_bytes(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameState;
    use crate::rank::{state_from_key, state_key};

    #[test]
    fn state_keys_are_44_bits_below_the_rank_count() {
        let start = state_key(&GameState::start());
        assert!(is_state_key(start));
        assert!(is_state_key(0));
        assert!(is_state_key(STATE_RANKS - 1));
        assert!(state_from_key(STATE_RANKS - 1).is_some());
        assert!(!is_state_key(STATE_RANKS));
        assert!(is_state_key(SOUTH_TO_MOVE_BIT + STATE_RANKS - 1));
        assert!(!is_state_key(SOUTH_TO_MOVE_BIT + STATE_RANKS));
        assert!(!is_state_key(1 << 44));
        assert!(!is_state_key(u64::MAX));
    }
}
