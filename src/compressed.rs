//! zstd content read with a bound on its size.
//!
//! A few kilobytes of zstd can declare gigabytes of content; read without
//! a bound, a damaged or hostile file makes the reader allocate until the
//! system kills it. Every zstd file this crate reads is read with a bound:
//! the size its layout allows where the layout says
//! ([`read_bounded_by_start`]), else [`machine_memory`]
//! ([`read_within_memory`]): content that cannot be held in memory cannot
//! be read anyway, and an error says so.

use std::io::{self, Read, Write};

/// The four bytes every zstd frame starts with.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Whether `start` (a file's first bytes) begins with zstd's magic number.
pub(crate) fn is_zstd(start: &[u8]) -> bool {
    start.len() >= 4 && start[..4] == ZSTD_MAGIC
}

/// The largest window a reader accepts: 2 GiB, zstd's largest, which our
/// compressed tables use (long-distance matching).
const WINDOW_LOG_MAX: u32 = 31;

/// A zstd library error in words a person can act on ("incomplete frame"
/// alone does not say the file is cut short); other errors (the file
/// system's, our own) pass unchanged.
pub(crate) fn in_words(error: io::Error) -> io::Error {
    use io::ErrorKind::{InvalidData, InvalidInput, Other, UnexpectedEof};
    let raw = error.to_string();
    let ours = raw.starts_with("decompresses to more than");
    if ours || !matches!(error.kind(), Other | UnexpectedEof | InvalidData | InvalidInput) {
        return error;
    }
    let lower = raw.to_lowercase();
    let cut = error.kind() == UnexpectedEof || lower.contains("incomplete") || lower.contains("src size");
    let what = if cut {
        "the compressed data is cut short"
    } else if lower.contains("checksum") {
        "the compressed data fails its checksum: it is damaged"
    } else if lower.contains("unknown frame") || lower.contains("prefix") {
        "the data is not zstd-compressed where it should be"
    } else {
        "the compressed data is damaged"
    };
    io::Error::new(io::ErrorKind::InvalidData, format!("{what} (zstd: {raw})"))
}

/// The decompressed content of `source`, one or more zstd frames (each
/// frame's content checksum, where it has one, checked); an error of kind
/// `InvalidData` when the content exceeds `limit` bytes, before more than
/// `limit + 1` bytes are held.
pub(crate) fn read_at_most(source: impl Read, limit: u64) -> io::Result<Vec<u8>> {
    let mut content = Vec::new();
    copy_at_most(source, limit, &mut content)?;
    Ok(content)
}

/// [`read_at_most`] written to `out` as it is decompressed rather than
/// held: returns the content's size. On an error, `out` may have been
/// given part of the content (at most `limit + 1` bytes).
pub(crate) fn copy_at_most(source: impl Read, limit: u64, out: &mut impl Write) -> io::Result<u64> {
    let mut decoder = zstd::stream::Decoder::new(source).map_err(in_words)?;
    decoder.window_log_max(WINDOW_LOG_MAX)?;
    // (A loop of its own rather than `io::copy`: the decoder's errors are
    // put in words, the writer's, such as a full disk, pass as they are.)
    let mut decoder = decoder.take(limit.saturating_add(1));
    let mut buffer = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let read = match decoder.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(in_words(e)),
        };
        out.write_all(&buffer[..read])?;
        size += read as u64;
    }
    if size > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "decompresses to more than {limit} bytes, more than its layout allows or this machine holds"
            ),
        ));
    }
    Ok(size)
}

/// [`read_at_most`] this machine's memory: for content whose layout sets
/// no bound.
pub(crate) fn read_within_memory(source: impl Read) -> io::Result<Vec<u8>> {
    read_at_most(source, machine_memory())
}

/// [`read_at_most`] whose bound is read from the content's first bytes:
/// `limit_of(start)` is given the first `prefix` bytes (fewer if the
/// content is shorter) and returns the bound on the whole content.
pub(crate) fn read_bounded_by_start(
    source: impl Read,
    prefix: usize,
    limit_of: impl FnOnce(&[u8]) -> u64,
) -> io::Result<Vec<u8>> {
    let mut decoder = zstd::stream::Decoder::new(source).map_err(in_words)?;
    decoder.window_log_max(WINDOW_LOG_MAX)?;
    let mut content = Vec::new();
    (&mut decoder).take(prefix as u64).read_to_end(&mut content).map_err(in_words)?;
    let limit = limit_of(&content).max(content.len() as u64);
    let rest = limit - content.len() as u64;
    decoder.take(rest.saturating_add(1)).read_to_end(&mut content).map_err(in_words)?;
    if content.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("decompresses to more than the {limit} bytes its header declares"),
        ));
    }
    Ok(content)
}

/// This machine's memory in bytes (Linux's `MemTotal`), or `u64::MAX`
/// where the system does not say: the bound on content whose layout sets
/// none.
pub(crate) fn machine_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line["MemTotal:".len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// zstd's own errors are said in words (and say zstd's too).
    #[test]
    fn damage_is_said_in_words() {
        let content: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut encoder = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
        encoder.include_checksum(true).unwrap();
        io::Write::write_all(&mut encoder, &content).unwrap();
        let frame = encoder.finish().unwrap();
        let cut = read_within_memory(&frame[..frame.len() / 2]).unwrap_err();
        assert!(cut.to_string().starts_with("the compressed data is cut short (zstd: "), "{cut}");
        let mut flipped = frame.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let error = read_within_memory(&flipped[..]).unwrap_err();
        assert!(error.to_string().starts_with("the compressed data fails its checksum"), "{error}");
        let error = read_within_memory(&b"not zstd at all"[..]).unwrap_err();
        assert!(error.to_string().starts_with("the data is not zstd-compressed"), "{error}");
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn content_above_the_bound_is_an_error_not_an_allocation() {
        // 64 MiB of zeros compress to a few kilobytes.
        let bomb = zstd::bulk::compress(&vec![0u8; 64 << 20], 3).unwrap();
        assert!(bomb.len() < 64 << 10, "{} bytes", bomb.len());
        let error = read_at_most(&bomb[..], 1 << 20).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData, "{error}");
        assert_eq!(read_at_most(&bomb[..], 64 << 20).unwrap().len(), 64 << 20);
        let small = zstd::bulk::compress(b"twelve bytes", 3).unwrap();
        assert_eq!(read_at_most(&small[..], 12).unwrap(), b"twelve bytes");
        assert!(read_at_most(&small[..], 11).is_err());
    }

    #[test]
    fn a_bound_read_from_the_start_holds_the_rest_to_it() {
        let content: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let frame = zstd::bulk::compress(&content, 3).unwrap();
        // The first byte (0) says nothing; the bound is what the closure says.
        assert_eq!(read_bounded_by_start(&frame[..], 4, |_| 1000).unwrap(), content);
        assert!(read_bounded_by_start(&frame[..], 4, |_| 999).is_err());
        // A bound below the prefix read is the prefix: shorter content is
        // still refused as longer than it.
        assert!(read_bounded_by_start(&frame[..], 4, |_| 0).is_err());
        assert!(machine_memory() > 1 << 20);
    }
}
