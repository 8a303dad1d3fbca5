//! [`FormatError`], what every reader and writer of the engine's layouts
//! returns. It has a file of its own, below all of them, so that none
//! imports `formats` itself (which re-exports them).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::signature::FileKind;

/// Everything that can go wrong reading or writing the engine's files.
///
/// `entry` numbers count from 0 in file order; `offset`s are byte offsets
/// from the start of the file (header included). Both are `None` for
/// entries handed to a constructor rather than read from a file.
#[derive(Debug)]
pub enum FormatError {
    /// Opening, mapping, reading or writing failed. `path` is `None` when
    /// writing to a stream.
    Io {
        /// What was being done: `open`, `map`, `read` or `write`.
        operation: &'static str,
        /// The file, or `None` for a stream.
        path: Option<PathBuf>,
        /// What the system said.
        source: io::Error,
    },
    /// The data ends at `offset`, inside the header (before its end mark).
    TruncatedHeader {
        /// The format name the reader expected.
        format: &'static str,
        /// The length of the data.
        offset: u64,
    },
    /// No end of header within the first `limit` bytes.
    HeaderTooLong {
        /// The format name; `header` for a header built for none of this
        /// crate's formats.
        format: &'static str,
        /// [`super::header::MAX_HEADER_LEN`], in bytes, end mark included.
        limit: usize,
    },
    /// A UTF-16 code unit that is an unpaired surrogate, at byte `offset`.
    BadUtf16 {
        /// The format name the reader expected.
        format: &'static str,
        /// Where the unit starts.
        offset: u64,
        /// The unpaired surrogate.
        unit: u16,
    },
    /// A header line that is not UTF-8; the bad sequence starts at `offset`.
    BadUtf8 {
        /// The format name the reader expected.
        format: &'static str,
        /// Where the first invalid byte is.
        offset: u64,
    },
    /// The first line is not `<format> <version>`. `found` is the start of
    /// the first line; `looks_like` names the format it has, if known.
    UnknownSignature {
        /// The format name wanted.
        expected: &'static str,
        /// At most 40 characters of the first line read, or the whole
        /// signature of a header given to a constructor or writer.
        found: String,
        /// The format name [`super::detect`] finds in the bytes; `None` when it
        /// finds none, or the header was not read from bytes.
        looks_like: Option<&'static str>,
    },
    /// The signature names a version this crate does not read.
    UnsupportedVersion {
        /// The format name.
        format: &'static str,
        /// The signature's version word.
        version: String,
        /// The versions this crate reads for that format.
        supported: &'static [&'static str],
    },
    /// Text that cannot go into a header line (a field built by the caller).
    BadHeaderText {
        /// The refused text.
        text: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A header field that must be a number is not one.
    BadHeaderField {
        /// The format name; `header` for a header of none of this crate's
        /// formats.
        format: &'static str,
        /// The field's name.
        field: String,
        /// The field's value, trimmed.
        value: String,
    },
    /// Writing there would destroy a file this command reads, or one a
    /// build or book directory owns; nothing was written.
    WouldOverwrite {
        /// The file that was not written.
        path: PathBuf,
        /// Whose file it is, in words.
        reason: String,
    },
    /// A header field disagrees with the body.
    HeaderMismatch {
        /// The format name.
        format: &'static str,
        /// The field's name (`Positions`).
        field: &'static str,
        /// The field's value.
        claimed: u64,
        /// What the body gives: for a tablebase the bytes after the header,
        /// for a 2014 book the states it knows.
        actual: u64,
    },
    /// A tablebase body of `length` bytes is not one byte per index of
    /// layers 0..=N (C(N+12, 12) bytes) plus at most one trailing byte.
    BadTablebaseLength {
        /// Bytes after the header, trailing bytes included.
        length: u64,
        /// The header's length in bytes: the body's offset.
        header_len: u64,
    },
    /// More than one trailing byte after the index bytes.
    BadTrailing {
        /// How many trailing bytes a writer was given.
        length: usize,
    },
    /// The file ends inside the last entry: `missing` bytes are absent.
    TruncatedEntry {
        /// The format name.
        format: &'static str,
        /// The cut entry's number.
        entry: u64,
        /// Where the cut entry starts.
        offset: u64,
        /// Bytes it lacks.
        missing: u64,
    },
    /// An entry whose key (for DOE: parent and child) is below the previous
    /// entry's: the body must be sorted ascending.
    Unsorted {
        /// The format name.
        format: &'static str,
        /// The out-of-order entry's number.
        entry: u64,
        /// Where that entry starts.
        offset: u64,
    },
    /// A key present twice in a 2014 opening book.
    DuplicateKey {
        /// The repeated state key.
        key: u64,
        /// The second entry's number; `None` for entries given to
        /// [`super::OpeningBook::new`].
        entry: Option<u64>,
        /// Where the second entry starts; `None` as for `entry`.
        offset: Option<u64>,
    },
    /// A (parent, child) pair present twice in a DOE book file.
    DuplicateEdge {
        /// The parent state key.
        parent: u64,
        /// The child state key.
        child: u64,
        /// The second entry's number.
        entry: u64,
        /// Where the second entry starts.
        offset: u64,
    },
    /// A number that is no 44-bit state key (formats.md, section 1).
    BadKey {
        /// The format name.
        format: &'static str,
        /// The refused number.
        key: u64,
        /// The entry's number, in file order or in the order given to a
        /// constructor.
        entry: u64,
        /// Where the entry starts; `None` for entries given to a constructor.
        offset: Option<u64>,
    },
    /// A DOE move that is not a pit number 0..=11.
    BadMove {
        /// The move: the stored `i32`, or the pit given to [`super::DoeBook::new`].
        value: i64,
        /// The entry's number, in file order or in the order given to
        /// [`super::DoeBook::new`].
        entry: u64,
        /// Where the entry starts; `None` for entries given to
        /// [`super::DoeBook::new`].
        offset: Option<u64>,
    },
    /// A move that is not a legal move of the side to move in state `key`:
    /// a scored move of a 2014 book entry (`pit` 0..6, the mover's) or a
    /// DOE edge (`pit` 0..12, absolute).
    IllegalMove {
        /// The format name.
        format: &'static str,
        /// The 2014 entry's key, or the DOE edge's parent.
        key: u64,
        /// The move's pit, numbered as above.
        pit: u8,
        /// The entry's number, in file order or in the order given to a
        /// constructor.
        entry: u64,
        /// Where the entry starts; `None` for entries given to a constructor.
        offset: Option<u64>,
    },
    /// A DOE edge whose move leads from `parent` to `reached`, not to its
    /// `child`.
    WrongChild {
        /// The edge's parent state key.
        parent: u64,
        /// The edge's child state key.
        child: u64,
        /// The key of the state the move reaches.
        reached: u64,
        /// The entry's number, in file order or in the order given to
        /// [`super::DoeBook::new`].
        entry: u64,
        /// Where the entry starts; `None` for entries given to
        /// [`super::DoeBook::new`].
        offset: Option<u64>,
    },
    /// A tablebase entry claiming more captures than seeds on the board.
    CapturesExceedSeeds {
        /// The entry's tablebase index.
        index: u64,
        /// Where the entry is (or, for a writer, would be) in the file.
        offset: u64,
        /// The seeds on the board: the entry's layer.
        seeds: u32,
        /// The captures the entry claims.
        captures: u8,
    },
}

impl FormatError {
    /// An I/O error on `path`.
    pub(crate) fn io(operation: &'static str, path: &Path, source: io::Error) -> FormatError {
        FormatError::Io { operation, path: Some(path.to_path_buf()), source }
    }

    /// An I/O error writing to a stream.
    pub(crate) fn stream(source: io::Error) -> FormatError {
        FormatError::Io { operation: "write", path: None, source }
    }
}

/// " (byte N)" when the offset is known.
struct At(Option<u64>);

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(offset) => write!(f, " (byte {offset})"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::WouldOverwrite { path, reason } => {
                write!(f, "will not write '{}': {reason}", path.display())
            }
            FormatError::Io { operation, path: Some(path), source } => {
                write!(f, "cannot {operation} '{}': {source}", path.display())
            }
            FormatError::Io { operation, path: None, source } => write!(f, "cannot {operation}: {source}"),
            FormatError::TruncatedHeader { format, offset } => {
                write!(f, "{format} file: the data ends at byte {offset}, inside the header")
            }
            FormatError::HeaderTooLong { format, limit } => {
                write!(f, "{format} file: the header does not end within its first {limit} bytes")
            }
            FormatError::BadUtf16 { format, offset, unit } => write!(
                f,
                "{format} file: byte {offset}: the header holds an unpaired UTF-16 surrogate 0x{unit:04X}"
            ),
            FormatError::BadUtf8 { format, offset } => {
                write!(f, "{format} file: byte {offset}: the header is not valid UTF-8")
            }
            FormatError::UnknownSignature { expected, found, looks_like } => {
                write!(f, "not an '{expected}' file: its first line starts '{}'", found.escape_debug())?;
                match looks_like {
                    Some(other) => write!(f, " (it looks like an '{other}' file)"),
                    None => Ok(()),
                }
            }
            FormatError::UnsupportedVersion { format, version, supported } => write!(
                f,
                "{format} version '{}' is not supported (this reader knows {})",
                version.escape_debug(),
                supported.join(", ")
            ),
            FormatError::BadHeaderText { text, reason } => {
                write!(f, "header text '{}': {reason}", text.escape_debug())
            }
            FormatError::BadHeaderField { format, field, value } => write!(
                f,
                "{format} header: field '{field}' should be a number, found '{}'",
                value.escape_debug()
            ),
            FormatError::HeaderMismatch { format, field, claimed, actual } => {
                write!(f, "{format} header: '{field}' says {claimed} but the body holds {actual}")
            }
            FormatError::BadTablebaseLength { length, header_len } => write!(
                f,
                "{} file: the body (from byte {header_len}) holds {length} bytes, which is not \
                 C(N+12, 12) index bytes (+ at most one trailing byte) for any N <= 48",
                FileKind::Endgames.format()
            ),
            FormatError::BadTrailing { length } => write!(
                f,
                "{} file: {length} trailing bytes after the index bytes, at most 1 allowed",
                FileKind::Endgames.format()
            ),
            FormatError::TruncatedEntry { format, entry, offset, missing } => write!(
                f,
                "{format} file: entry {entry} (byte {offset}) is cut short, {missing} bytes missing"
            ),
            FormatError::Unsorted { format, entry, offset } => write!(
                f,
                "{format} file: entry {entry} (byte {offset}) sorts before the previous entry \
                 (entries must be in ascending key order)"
            ),
            FormatError::DuplicateKey { key, entry, offset } => match entry {
                Some(entry) => write!(
                    f,
                    "{} file: entry {entry}{}: key 0x{key:X} repeats the previous entry's",
                    FileKind::OpeningBook.format(),
                    At(*offset)
                ),
                None => {
                    write!(f, "{}: key 0x{key:X} is given more than once", FileKind::OpeningBook.format())
                }
            },
            FormatError::DuplicateEdge { parent, child, entry, offset } => write!(
                f,
                "{} file: entry {entry} (byte {offset}): parent 0x{parent:X} and child 0x{child:X} \
                 repeat the previous entry's",
                FileKind::Doe.format()
            ),
            FormatError::BadKey { format, key, entry, offset } => {
                write!(f, "{format}: entry {entry}{}: 0x{key:X} is not a 44-bit state key", At(*offset))
            }
            FormatError::BadMove { value, entry, offset } => write!(
                f,
                "{}: entry {entry}{}: move {value} is not a pit number 0..11",
                FileKind::Doe.format(),
                At(*offset)
            ),
            FormatError::IllegalMove { format, key, pit, entry, offset } => write!(
                f,
                "{format}: entry {entry}{}: pit {pit} is not a legal move of state 0x{key:X}",
                At(*offset)
            ),
            FormatError::WrongChild { parent, child, reached, entry, offset } => write!(
                f,
                "{}: entry {entry}{}: the move leads from 0x{parent:X} to 0x{reached:X}, not to the \
                 entry's child 0x{child:X}",
                FileKind::Doe.format(),
                At(*offset)
            ),
            FormatError::CapturesExceedSeeds { index, offset, seeds, captures } => write!(
                f,
                "{} file: index {index} (byte {offset}): {captures} captures claimed with only \
                 {seeds} seeds on the board",
                FileKind::Endgames.format()
            ),
        }
    }
}

impl std::error::Error for FormatError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FormatError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_place() {
        let e = FormatError::Unsorted { format: FileKind::Doe.format(), entry: 7, offset: 325 };
        assert!(e.to_string().contains("entry 7 (byte 325)"));
        let e = FormatError::BadMove { value: 12, entry: 3, offset: None };
        assert_eq!(e.to_string(), "DOE Opening Book: entry 3: move 12 is not a pit number 0..11");
    }
}
