//! "Oware Endgames" 1.0 and 2.0: the engine's endgame tablebase.
//!
//! # Layout
//!
//! ```text
//! offset          length        what
//! 0               h             header, UTF-16BE (see `header`): signature
//!                               "Oware Endgames 1.0" or "Oware Endgames 2.0",
//!                               then fields (the engine writes Date, Positions,
//!                               Name, Author, License), then an empty line
//! h               C(N+12, 12)   one byte per tablebase index 0 .. C(N+12, 12)-1
//! h + C(N+12,12)  0 or 1        trailing byte (the engine's files have one)
//! ```
//!
//! Index `i` is the engine's binomial rank of a 12-pit position seen from
//! the side to move ([`crate::rank::index`]): layers by seed count, so the
//! bytes of the `n`-seed layer are `C(n+11, 12) .. C(n+12, 12)`. The body
//! covers layers `0..=N`; the reader derives `N` from the body length and
//! refuses a `Positions` field (the bytes after the header) that disagrees:
//! without it, a body cut on a layer boundary would read as a smaller table.
//!
//! Each byte is `(captures << 2) | flag`:
//!
//! ```text
//! bit   7 6 5 4 3 2   1 0
//!       captures      flag    0 EMPTY, 1 LOWER, 2 UPPER, 3 EXACT
//! ```
//!
//! `captures` is how many of the `n` seeds on the board the side to move
//! takes from here to the end (0..=n).
//!
//! # What the engine's files hold (measured on the shipped files)
//!
//! * Both files (`1.0` of 2014, `2.0` of 2021) cover `N = 12`: 2,704,156
//!   index bytes, then **one trailing byte** (`0x18` in 2014, `0x00` in
//!   2021) that is no entry: their `Positions` field says 2,704,157, the
//!   number of bytes after the header. A reader that took the trailing byte
//!   for index 2,704,156 would read the 13-seed position with every seed in
//!   the opponent's pit f, whose value is an exact 0 (byte `0x03`) — neither
//!   file holds that. We keep the byte ([`EndgameFile::trailing`]) so a
//!   read + write round trip is byte-identical, and our engine-compatible
//!   writer ([`write_table`]) emits one `0x00` byte and counts it in
//!   `Positions`.
//! * Only flags 1 and 3 occur. For `n ≥ 3`, flag 1 marks exactly the
//!   positions that lie on a cycle of non-capturing moves inside their
//!   layer (checked for n ≤ 8); with `n ≤ 2` every entry is EXACT, even the
//!   twelve 2-seed positions that shuttle one seed each round the board.
//! * The two files agree on every entry up to 3 seeds; overall 1,516,356
//!   of the 2,704,156 entries differ, never in the flag: 1,418,696 cycle
//!   estimates (flag 1) and, from 6 seeds up, 97,660 EXACT entries whose
//!   values rest on them.
//!
//! # Probing
//! What these bytes mean as our tablebase's probes (bounds, estimate, on a
//! cycle) is the tablebase's to say: `crate::tablebase::engine` reads an
//! [`EndgameFile`] as a table.

use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use memmap2::Mmap;

use super::error::FormatError;
use super::header::{Header, HeaderEncoding};
use super::signature::FileKind;
use crate::rank::{self, layer_offset, MAX_SEEDS};
use crate::resumable::atomic::write_atomically;
use crate::rules::Position;

/// The format name in the signature.
pub const FORMAT: &str = FileKind::Endgames.format();

/// Versions this module reads and writes (same layout).
pub const VERSIONS: &[&str] = &["1.0", "2.0"];

/// The signature's version.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum EndgamesVersion {
    /// `Oware Endgames 1.0` (the engine's 2014 file).
    V1_0,
    /// `Oware Endgames 2.0` (the engine's 2021 file).
    V2_0,
}

impl EndgamesVersion {
    /// The version word of the signature: `1.0` or `2.0`.
    pub fn as_str(self) -> &'static str {
        match self {
            EndgamesVersion::V1_0 => "1.0",
            EndgamesVersion::V2_0 => "2.0",
        }
    }

    /// The version of a signature's version word; `None` for any word but
    /// `1.0` and `2.0`.
    pub fn parse(version: &str) -> Option<EndgamesVersion> {
        match version {
            "1.0" => Some(EndgamesVersion::V1_0),
            "2.0" => Some(EndgamesVersion::V2_0),
            _ => None,
        }
    }
}

/// The low two bits of an entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Flag {
    /// No value: a probe gives the neutral estimate, half the seeds.
    Empty = 0,
    /// The engine's mark for a position on a cycle: the captures are an
    /// estimate.
    Lower = 1,
    /// Unused in the engine's files; probed like [`Flag::Lower`].
    Upper = 2,
    /// The captures are the file's value (the engine's claim, not a proof
    /// of ours: `crate::tablebase::engine` reads such a file as a table that
    /// proves nothing).
    Exact = 3,
}

impl Flag {
    /// The four flags in value order: `ALL[v]` is the flag of value `v`.
    pub const ALL: [Flag; 4] = [Flag::Empty, Flag::Lower, Flag::Upper, Flag::Exact];
}

/// One tablebase byte: captures in bits 2..8, flag in bits 0..2.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Entry(u8);

impl Entry {
    /// The largest captures count a byte can hold.
    pub const MAX_CAPTURES: u8 = 63;

    /// `captures` (at most [`Entry::MAX_CAPTURES`]) with `flag`.
    pub fn new(captures: u8, flag: Flag) -> Option<Entry> {
        (captures <= Entry::MAX_CAPTURES).then_some(Entry(captures << 2 | flag as u8))
    }

    /// The entry stored as `byte`; every value is accepted.
    pub const fn from_byte(byte: u8) -> Entry {
        Entry(byte)
    }

    /// The stored byte: `(captures << 2) | flag`.
    pub const fn byte(self) -> u8 {
        self.0
    }

    /// Bits 2..8: the seeds the side to move takes from here to the end
    /// (0..=63; not checked against the seeds on the board, see
    /// `crate::tablebase::engine::engine_probe`).
    pub const fn captures(self) -> u8 {
        self.0 >> 2
    }

    /// Bits 0..2.
    pub fn flag(self) -> Flag {
        Flag::ALL[(self.0 & 3) as usize]
    }
}

/// For a body of `length` bytes (everything after the header): the largest
/// layer `N` and the number of trailing bytes (0 or 1), if the body is one
/// byte per index of layers `0..=N` plus at most one byte.
pub fn layers_for_body(length: u64) -> Option<(u32, u64)> {
    (0..=MAX_SEEDS).find_map(|n| {
        let indexes = layer_offset(n + 1);
        (length == indexes || length == indexes + 1).then(|| (n, length - indexes))
    })
}

/// The bytes of a file: mapped from disk or held in memory.
enum Data {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Data {
    fn bytes(&self) -> &[u8] {
        match self {
            Data::Mapped(map) => map,
            Data::Owned(bytes) => bytes,
        }
    }
}

/// A tablebase file, read from a path (memory-mapped) or from bytes.
pub struct EndgameFile {
    header: Header,
    version: EndgamesVersion,
    data: Data,
    /// Where the index bytes start (the header length).
    body_start: usize,
    /// Index bytes: `C(max_seeds + 12, 12)`.
    indexes: usize,
    max_seeds: u32,
}

impl fmt::Debug for EndgameFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndgameFile")
            .field("signature", &self.header.signature())
            .field("max_seeds", &self.max_seeds)
            .field("indexes", &self.indexes)
            .field("trailing", &self.trailing())
            .field("mapped", &matches!(self.data, Data::Mapped(_)))
            .finish()
    }
}

impl EndgameFile {
    /// Maps the file at `path` (read-only) and reads its header, refusing
    /// a `Positions` field that is not the number of bytes after it. The
    /// body is not scanned: see [`EndgameFile::verify`].
    ///
    /// The map shows the file as it is on disk: our writers replace files
    /// by renaming a new one over them, which leaves this map intact, but a
    /// program rewriting the file in place would change what it reads.
    /// Only I/O errors name the path; callers add it to the others.
    pub fn open(path: &Path) -> Result<EndgameFile, FormatError> {
        let file = File::open(path).map_err(|e| FormatError::io("open", path, e))?;
        let length = file.metadata().map_err(|e| FormatError::io("read", path, e))?.len();
        let data = if length == 0 {
            Data::Owned(Vec::new())
        } else {
            // SAFETY: the map is read-only and private to this value; the
            // crate never writes a file in place (see `crate::resumable::atomic`), so
            // the mapped bytes stay as they were while the map lives.
            let map = unsafe { Mmap::map(&file) }.map_err(|e| FormatError::io("map", path, e))?;
            Data::Mapped(map)
        };
        EndgameFile::from_data(data)
    }

    /// Reads a whole file held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<EndgameFile, FormatError> {
        EndgameFile::from_data(Data::Owned(bytes))
    }

    fn from_data(data: Data) -> Result<EndgameFile, FormatError> {
        let bytes = data.bytes();
        let (header, body_start) = Header::read(bytes, FORMAT, HeaderEncoding::Utf16Be)?;
        let version = supported_version(&header)?;
        let body = (bytes.len() - body_start) as u64;
        let (max_seeds, _) = layers_for_body(body)
            .ok_or(FormatError::BadTablebaseLength { length: body, header_len: body_start as u64 })?;
        // The layout has no checksum, and a body cut on a layer boundary
        // has a valid length (a smaller table): `Positions`, when present,
        // is what tells such a cut from a whole file.
        check_positions(&header, body)?;
        Ok(EndgameFile {
            header,
            version,
            body_start,
            indexes: layer_offset(max_seeds + 1) as usize,
            max_seeds,
            data,
        })
    }

    /// The header, as read.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The signature's version.
    pub fn version(&self) -> EndgamesVersion {
        self.version
    }

    /// `N`: layers `0..=N` are covered.
    pub fn max_seeds(&self) -> u32 {
        self.max_seeds
    }

    /// Where the index bytes start: the header's length.
    pub fn header_len(&self) -> usize {
        self.body_start
    }

    /// The number of indexes covered: `C(N + 12, 12)`.
    pub fn index_count(&self) -> u64 {
        self.indexes as u64
    }

    /// The index bytes, one per index `0..index_count()`.
    pub fn bytes(&self) -> &[u8] {
        &self.data.bytes()[self.body_start..self.body_start + self.indexes]
    }

    /// The bytes of layer `n` (positions with `n` seeds), if covered.
    pub fn layer(&self, n: u32) -> Option<&[u8]> {
        (n <= self.max_seeds).then(|| &self.bytes()[layer_offset(n) as usize..layer_offset(n + 1) as usize])
    }

    /// What follows the index bytes: empty, or the engine's one extra byte.
    pub fn trailing(&self) -> &[u8] {
        &self.data.bytes()[self.body_start + self.indexes..]
    }

    /// The entry of a global tablebase index, if covered.
    pub fn entry(&self, index: u64) -> Option<Entry> {
        let index = usize::try_from(index).ok()?;
        self.bytes().get(index).map(|&b| Entry::from_byte(b))
    }

    /// The entry of a position (side to move first), if covered.
    pub fn entry_of(&self, position: &Position) -> Option<Entry> {
        self.seeds_and_entry(position).map(|(_, entry)| entry)
    }

    /// The seeds on the board and the entry, if covered. The seeds are
    /// summed pit by pit, so no pit count can overflow the rank.
    pub fn seeds_and_entry(&self, position: &Position) -> Option<(u32, Entry)> {
        let seeds: u32 = position.pits().iter().map(|&s| s as u32).sum();
        if seeds > self.max_seeds {
            return None;
        }
        Some((seeds, self.entry(rank::index(position))?))
    }

    /// How many entries carry each flag (indexed by `Flag as usize`).
    pub fn flag_counts(&self) -> [u64; 4] {
        let mut counts = [0u64; 4];
        for &byte in self.bytes() {
            counts[(byte & 3) as usize] += 1;
        }
        counts
    }

    /// Checks the whole body: every entry's captures are at most the seeds
    /// of its layer (and `Positions`, if present, counts the bytes after
    /// the header, as opening checked). Returns the first problem found.
    pub fn verify(&self) -> Result<(), FormatError> {
        check_positions(&self.header, (self.indexes + self.trailing().len()) as u64)?;
        check_captures(self.bytes(), self.max_seeds, self.body_start)
    }

    /// Writes the file back exactly as read.
    pub fn write_to<W: Write>(&self, out: &mut W) -> Result<(), FormatError> {
        write_parts(out, &self.header, self.bytes(), self.trailing())
    }

    /// Saves the file atomically to `path`, exactly as read.
    pub fn save(&self, path: &Path) -> Result<(), FormatError> {
        save_parts(path, &self.header, self.bytes(), self.trailing())
    }
}

fn supported_version(header: &Header) -> Result<EndgamesVersion, FormatError> {
    if header.format() != FORMAT {
        return Err(FormatError::UnknownSignature {
            expected: FORMAT,
            found: header.signature().to_string(),
            looks_like: None,
        });
    }
    EndgamesVersion::parse(header.version()).ok_or_else(|| FormatError::UnsupportedVersion {
        format: FORMAT,
        version: header.version().to_string(),
        supported: VERSIONS,
    })
}

fn check_positions(header: &Header, body: u64) -> Result<(), FormatError> {
    match header.number("Positions")? {
        Some(claimed) if claimed != body => {
            Err(FormatError::HeaderMismatch { format: FORMAT, field: "Positions", claimed, actual: body })
        }
        _ => Ok(()),
    }
}

fn check_captures(bytes: &[u8], max_seeds: u32, body_start: usize) -> Result<(), FormatError> {
    for n in 0..=max_seeds {
        let first = layer_offset(n) as usize;
        let layer = &bytes[first..layer_offset(n + 1) as usize];
        if let Some(at) = layer.iter().position(|&b| (b >> 2) as u32 > n) {
            let index = first + at;
            return Err(FormatError::CapturesExceedSeeds {
                index: index as u64,
                offset: (body_start + index) as u64,
                seeds: n,
                captures: layer[at] >> 2,
            });
        }
    }
    Ok(())
}

/// Checks what a writer is given and encodes the header.
fn prepare(header: &Header, indexes: &[u8], trailing: &[u8]) -> Result<Vec<u8>, FormatError> {
    supported_version(header)?;
    let encoded = header.encode(HeaderEncoding::Utf16Be)?;
    if trailing.len() > 1 {
        return Err(FormatError::BadTrailing { length: trailing.len() });
    }
    let body = (indexes.len() + trailing.len()) as u64;
    let max_seeds = match layers_for_body(indexes.len() as u64) {
        Some((n, 0)) => n,
        _ => return Err(FormatError::BadTablebaseLength { length: body, header_len: encoded.len() as u64 }),
    };
    check_positions(header, body)?;
    check_captures(indexes, max_seeds, encoded.len())?;
    Ok(encoded)
}

/// Writes a tablebase: `header` (an `Oware Endgames` 1.0 or 2.0 header),
/// the index bytes (exactly `C(N+12, 12)` of them) and at most one
/// trailing byte. Refuses a `Positions` field that is not the number of
/// bytes after the header, and entries claiming more captures than seeds.
pub fn write_parts<W: Write>(
    out: &mut W,
    header: &Header,
    indexes: &[u8],
    trailing: &[u8],
) -> Result<(), FormatError> {
    let encoded = prepare(header, indexes, trailing)?;
    out.write_all(&encoded)
        .and_then(|_| out.write_all(indexes))
        .and_then(|_| out.write_all(trailing))
        .map_err(FormatError::stream)
}

/// [`write_parts`] to `path`, atomically (nothing is written if the parts
/// are refused).
pub fn save_parts(path: &Path, header: &Header, indexes: &[u8], trailing: &[u8]) -> Result<(), FormatError> {
    let encoded = prepare(header, indexes, trailing)?;
    write_atomically(path, |out| {
        out.write_all(&encoded)?;
        out.write_all(indexes)?;
        out.write_all(trailing)
    })
    .map_err(|e| FormatError::io("write", path, e))
}

/// The trailing byte our engine-compatible writer appends.
pub const ENGINE_TRAILING: &[u8] = &[0x00];

/// A header as the engine writes it: the signature of `version`, then
/// `fields` in order, with `Positions` set to `body_len` (the bytes after
/// the header): where `fields` lists it, else first.
pub fn new_header(
    version: EndgamesVersion,
    fields: &[(&str, &str)],
    body_len: u64,
) -> Result<Header, FormatError> {
    Header::with_count(FORMAT, version.as_str(), fields, "Positions", body_len)
}

/// Writes a tablebase the way the engine's own files are laid out: the
/// header of [`new_header`] (`Positions` counting the trailing byte), the
/// index bytes, then one trailing `0x00` byte.
pub fn write_table<W: Write>(
    out: &mut W,
    version: EndgamesVersion,
    fields: &[(&str, &str)],
    indexes: &[u8],
) -> Result<(), FormatError> {
    let header = new_header(version, fields, (indexes.len() + 1) as u64)?;
    write_parts(out, &header, indexes, ENGINE_TRAILING)
}

/// [`write_table`] to `path`, atomically.
pub fn save_table(
    path: &Path,
    version: EndgamesVersion,
    fields: &[(&str, &str)],
    indexes: &[u8],
) -> Result<(), FormatError> {
    let header = new_header(version, fields, (indexes.len() + 1) as u64)?;
    save_parts(path, &header, indexes, ENGINE_TRAILING)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small table over layers 0..=2 with exact values `seeds / 2`.
    fn small_table() -> Vec<u8> {
        (0..layer_offset(3))
            .map(|i| {
                let n = rank::layer_of_index(i).unwrap() as u8;
                Entry::new(n / 2, Flag::Exact).unwrap().byte()
            })
            .collect()
    }

    #[test]
    fn body_length_gives_the_layers() {
        assert_eq!(layers_for_body(1), Some((0, 0)));
        assert_eq!(layers_for_body(2), Some((0, 1)));
        assert_eq!(layers_for_body(3), None);
        assert_eq!(layers_for_body(13), Some((1, 0)));
        assert_eq!(layers_for_body(2_704_156), Some((12, 0)));
        assert_eq!(layers_for_body(2_704_157), Some((12, 1)));
        assert_eq!(layers_for_body(2_704_158), None);
        assert_eq!(layers_for_body(0), None);
        assert_eq!(layers_for_body(u64::MAX), None);
    }

    #[test]
    fn synthetic_table_round_trips_and_probes() {
        let indexes = small_table();
        let mut bytes = Vec::new();
        write_table(
            &mut bytes,
            EndgamesVersion::V2_0,
            &[("Date", "today"), ("Positions", "7"), ("Name", "test")],
            &indexes,
        )
        .unwrap();
        let file = EndgameFile::from_bytes(bytes.clone()).unwrap();
        assert_eq!(file.version(), EndgamesVersion::V2_0);
        assert_eq!(file.max_seeds(), 2);
        assert_eq!(file.bytes(), indexes);
        assert_eq!(file.trailing(), ENGINE_TRAILING);
        assert_eq!(file.header().get("Positions"), Some("92"));
        assert_eq!(file.header().lines()[1], "Positions: 92");
        file.verify().unwrap();
        let mut pits = [0u8; 12];
        pits[3] = 1;
        pits[9] = 1;
        let (seeds, entry) = file.seeds_and_entry(&Position::new(pits)).unwrap();
        assert_eq!((seeds, entry.captures(), entry.flag()), (2, 1, Flag::Exact));
        pits[0] = 1;
        assert_eq!(file.seeds_and_entry(&Position::new(pits)), None);
        let mut again = Vec::new();
        file.write_to(&mut again).unwrap();
        assert_eq!(again, bytes);
    }

    #[test]
    fn writers_refuse_inconsistent_parts() {
        let indexes = small_table();
        let header = new_header(EndgamesVersion::V1_0, &[], 91).unwrap();
        let mut sink = Vec::new();
        assert!(write_parts(&mut sink, &header, &indexes, &[]).is_ok());
        assert!(matches!(
            write_parts(&mut sink, &header, &indexes, &[0]),
            Err(FormatError::HeaderMismatch { claimed: 91, actual: 92, .. })
        ));
        assert!(matches!(
            write_parts(&mut sink, &header, &indexes[..90], &[]),
            Err(FormatError::BadTablebaseLength { .. })
        ));
        assert!(matches!(
            write_parts(&mut sink, &header, &indexes, &[0, 0]),
            Err(FormatError::BadTrailing { length: 2 })
        ));
        let mut corrupt = indexes.clone();
        corrupt[5] = Entry::new(2, Flag::Exact).unwrap().byte();
        assert!(matches!(
            write_parts(&mut sink, &header, &corrupt, &[]),
            Err(FormatError::CapturesExceedSeeds { index: 5, seeds: 1, captures: 2, .. })
        ));
        let other = Header::new(FORMAT, "3.0").unwrap();
        assert!(matches!(
            write_parts(&mut sink, &other, &indexes, &[]),
            Err(FormatError::UnsupportedVersion { .. })
        ));
    }

    #[test]
    fn verify_finds_corrupt_entries_and_probes_skip_them() {
        let mut indexes = small_table();
        let mut bytes = Vec::new();
        write_table(&mut bytes, EndgamesVersion::V1_0, &[], &indexes).unwrap();
        let header_len = bytes.len() - indexes.len() - 1;
        indexes[20] = Entry::new(3, Flag::Lower).unwrap().byte();
        bytes[header_len + 20] = indexes[20];
        let file = EndgameFile::from_bytes(bytes).unwrap();
        assert!(matches!(
            file.verify(),
            Err(FormatError::CapturesExceedSeeds { index: 20, seeds: 2, captures: 3, offset })
                if offset == (header_len + 20) as u64
        ));
        let position = rank::position_at(20).unwrap();
        assert_eq!(file.entry_of(&position).unwrap().captures(), 3);
        assert_eq!(file.seeds_and_entry(&position).map(|(seeds, _)| seeds), Some(2));
    }
}
