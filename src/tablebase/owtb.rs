//! Our own tablebase file, `*.owtb`: every layer `0..=N` in one
//! memory-mappable file with a versioned header, per-layer checksums and a
//! checksum of the header itself. `docs/tablebase-format.md` has the byte
//! layout; this module is its only writer and reader.
//!
//! ```text
//! offset  size  field (all integers little-endian)
//!      0     8  magic "OWARETB\0"
//!      8     4  format version (4; versions 2 and 3 are still read)
//!     12     4  N, the largest seed count (the largest layer)
//!     16     4  bytes of a full record (3)
//!     20     4  header length H = F + R (N + 1): F = 96 (80 in version 2),
//!               R = 32 (24 before version 4)
//!     24     8  entries = C(N + 12, 12)
//!     32     8  search budget: nodes per search
//!     40     4  search budget: longest path
//!     44     4  search budget: largest layer given the threshold search
//!     48     8  checksum of the entries (crate::checksum)
//!     56     8  checksum of bytes 0..H with these 8 bytes zero
//!     64     8  search budget: nodes per path-cut question
//!     72     4  search budget: largest layer given the path-cut search
//!     76     4  rules: 1 (Abapa as the engine plays it); zero in version 2
//!     -- version 3 only --
//!     80     8  provenance: entries checksum (offset 48) of the table whose
//!               proven intervals this one intersected, 0 if none
//!     88     4  provenance: how many layers (0..k) were intersected
//!     92     4  search budget: smallest layer searched
//!      F  R(N+1)  per layer n: file offset (u64), entries (u64), checksum
//!                 of its bytes (u64), and from version 4 its width w_n (u64):
//!                 3 for full records, 1 for value records
//!      H  the layers in order, layer n at its offset: w_n bytes per entry,
//!         the entry of layer index i at offset + w_n i (tablebase::entry;
//!         before version 4 every layer has full records)
//! ```
//!
//! A layer is written with value records exactly when every one of its
//! entries has one (`Entry::value_record`), so the bytes are a function of
//! the entries. The layer index is the position's rank inside its layer
//! (`rank::layer_index`), so an entry is found with one multiplication. A
//! `.owtb.zst` file is the same bytes in one zstd frame, for shipping; it
//! is read into memory.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use memmap2::Mmap;

use crate::checksum::{checksum, Checksum};
use crate::progress::Observer;
use crate::rank::{layer_index, layer_offset, layer_size};
use crate::resumable::atomic::write_atomically;
use crate::rules::Position;
use crate::tablebase::entry::{Entry, EntryWidth, ENTRY_BYTES};
use crate::tablebase::layers::{LayerBytes, PackedLayer, PIECE};
use crate::tablebase::params::{param_fields, BuildParams, Param, SearchBudget, MAX_FILE_SEEDS};
use crate::tablebase::table::{EndgameTable, Probe};

/// The first eight bytes of every `.owtb` file.
pub const MAGIC: &[u8; 8] = b"OWARETB\0";
/// The format version this crate writes.
pub const VERSION: u32 = 4;
/// The oldest version this reader accepts.
const OLDEST_VERSION: u32 = 2;
/// The rule set, as recorded at offset 76: the rules of
/// `docs/rules.md` (the only ones this crate plays).
pub const RULES_ABAPA: u32 = 1;

/// Bytes of a layer's record in the header of each version.
fn layer_record(version: u32) -> usize {
    if version >= 4 {
        32
    } else {
        24
    }
}

/// Where the header keeps each build parameter: its offset and width in
/// bytes (the table above). The smallest layer searched has a place from
/// version 3 on; a version 2 file searched from layer 0.
fn param_slot(param: Param) -> (usize, usize) {
    match param {
        Param::LargestLayer => (12, 4),
        Param::SearchNodesPerQuestion => (32, 8),
        Param::SearchMaxPath => (40, 4),
        Param::ThresholdMaxSeeds => (44, 4),
        Param::CutNodesPerQuestion => (64, 8),
        Param::CutMaxSeeds => (72, 4),
        Param::SearchMinSeeds => (92, 4),
    }
}

/// Why a tablebase file was refused.
#[derive(Debug)]
pub enum FileError {
    /// The file could not be opened, read or decompressed.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system or the decompressor said.
        error: io::Error,
    },
    /// The file is shorter than a header or does not start with [`MAGIC`].
    NotATablebase {
        /// The file.
        path: PathBuf,
    },
    /// A format version this reader does not know.
    Version {
        /// The file.
        path: PathBuf,
        /// The version the header declares.
        found: u32,
    },
    /// The header is inconsistent, or the file's length does not match it.
    Header {
        /// The file.
        path: PathBuf,
        /// What is wrong, in words.
        problem: String,
    },
    /// Stored bytes do not match their checksum: the file is damaged.
    Checksum {
        /// The file.
        path: PathBuf,
        /// The part that failed: "the header", "the entries" or "layer n".
        what: String,
    },
    /// An entry no writer makes (bounds out of order or above the seeds
    /// on the board, reserved bits set, a proof that does not match its
    /// bounds) behind a checksum that agrees: the file was written wrong
    /// or edited, and is not used.
    Malformed {
        /// The file.
        path: PathBuf,
        /// The entry's layer.
        layer: u32,
        /// Its index in the layer.
        index: u64,
    },
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            FileError::NotATablebase { path } => {
                write!(f, "{}: not an Oware tablebase (.owtb) file", path.display())
            }
            FileError::Version { path, found } => {
                write!(
                    f,
                    "{}: format version {found}, this reader knows {OLDEST_VERSION} to {VERSION}",
                    path.display()
                )
            }
            FileError::Header { path, problem } => {
                write!(f, "{}: bad header: {problem}", path.display())
            }
            FileError::Checksum { path, what } => {
                write!(f, "{}: checksum mismatch in {what}", path.display())
            }
            FileError::Malformed { path, layer, index } => {
                write!(f, "{}: entry {index} of layer {layer} is malformed", path.display())
            }
        }
    }
}

impl std::error::Error for FileError {}

/// Where a table's proven intervals came from, besides its own proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// The entries checksum of the table whose intervals were intersected.
    pub body_checksum: u64,
    /// Layers `0..layers` were intersected.
    pub layers: u32,
}

/// The header fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// The format version the file was written in.
    pub version: u32,
    /// N: the file holds layers `0..=N`.
    pub max_seeds: u32,
    /// The search budget the cycle positions were resolved with.
    pub budget: SearchBudget,
    /// The checksum of all the entries (offset 48).
    pub body_checksum: u64,
    /// `None` for a table proven from scratch (and in version 2 files).
    pub provenance: Option<Provenance>,
    /// Per layer, where its records are and what they hold.
    pub layers: Vec<LayerRecord>,
}

/// Where a layer's records are in the file, and their width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerRecord {
    /// File offset of its first byte.
    pub offset: u64,
    /// Its entries: the positions of the layer.
    pub entries: u64,
    /// The checksum of its bytes as stored.
    pub checksum: u64,
    /// Bytes per entry.
    pub width: EntryWidth,
}

impl LayerRecord {
    /// Its length in bytes.
    pub fn length(&self) -> u64 {
        self.entries * self.width.bytes() as u64
    }
}

/// The fixed part of the header in each version.
fn fixed_header(version: u32) -> usize {
    if version == 2 {
        80
    } else {
        96
    }
}

impl Header {
    /// The header length of a file written now.
    pub fn length(max_seeds: u32) -> usize {
        Header::length_in(VERSION, max_seeds)
    }

    fn length_in(version: u32, max_seeds: u32) -> usize {
        fixed_header(version) + layer_record(version) * (max_seeds as usize + 1)
    }

    /// The length of the whole file this header describes.
    pub fn file_length(&self) -> u64 {
        self.own_length() as u64 + self.layers.iter().map(LayerRecord::length).sum::<u64>()
    }

    /// This header's length.
    pub fn own_length(&self) -> usize {
        Header::length_in(self.version, self.max_seeds)
    }

    /// The parameters as this header records them (not checked against a
    /// build's limits: a file may hold up to [`MAX_FILE_SEEDS`] layers).
    fn fields(&self) -> [(Param, u64); 7] {
        param_fields(self.max_seeds, &self.budget)
    }

    /// Only a header of this version, with parameters a build accepts
    /// (their fields fit their places), is written.
    fn encode(&self) -> Vec<u8> {
        debug_assert_eq!(self.version, VERSION, "only the current version is written");
        let length = Header::length(self.max_seeds);
        let mut h = vec![0u8; length];
        let mut put = |at: usize, bytes: &[u8]| h[at..at + bytes.len()].copy_from_slice(bytes);
        put(0, MAGIC);
        put(8, &VERSION.to_le_bytes());
        put(16, &(ENTRY_BYTES as u32).to_le_bytes());
        put(20, &(length as u32).to_le_bytes());
        put(24, &layer_offset(self.max_seeds + 1).to_le_bytes());
        for (param, value) in self.fields() {
            let (at, width) = param_slot(param);
            debug_assert!(width == 8 || value <= u32::MAX as u64, "{param} {value} fits its place");
            put(at, &value.to_le_bytes()[..width]);
        }
        put(48, &self.body_checksum.to_le_bytes());
        // (56..64: the header's checksum, computed with these bytes zero.)
        put(76, &RULES_ABAPA.to_le_bytes());
        let provenance = self.provenance.unwrap_or(Provenance { body_checksum: 0, layers: 0 });
        put(80, &provenance.body_checksum.to_le_bytes());
        put(88, &provenance.layers.to_le_bytes());
        for (n, record) in self.layers.iter().enumerate() {
            let at = fixed_header(VERSION) + layer_record(VERSION) * n;
            put(at, &record.offset.to_le_bytes());
            put(at + 8, &record.entries.to_le_bytes());
            put(at + 16, &record.checksum.to_le_bytes());
            put(at + 24, &(record.width.bytes() as u64).to_le_bytes());
        }
        let sum = checksum(&h);
        h[56..64].copy_from_slice(&sum.to_le_bytes());
        h
    }

    fn decode(bytes: &[u8], path: &Path) -> Result<Header, FileError> {
        let bad = |problem: String| FileError::Header { path: path.to_path_buf(), problem };
        if bytes.len() < fixed_header(OLDEST_VERSION) || &bytes[..8] != MAGIC {
            return Err(FileError::NotATablebase { path: path.to_path_buf() });
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let version = u32_at(8);
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return Err(FileError::Version { path: path.to_path_buf(), found: version });
        }
        if bytes.len() < fixed_header(version) {
            return Err(bad(format!("{} bytes, shorter than a header", bytes.len())));
        }
        let max_seeds = u32_at(12);
        if max_seeds > MAX_FILE_SEEDS {
            return Err(bad(format!("{max_seeds} seeds is more than {MAX_FILE_SEEDS}")));
        }
        if u32_at(16) as usize != ENTRY_BYTES {
            return Err(bad(format!("{} bytes per entry", u32_at(16))));
        }
        let length = Header::length_in(version, max_seeds);
        if u32_at(20) as usize != length || bytes.len() < length {
            return Err(bad(format!("header length {} for {max_seeds} seeds", u32_at(20))));
        }
        if u64_at(24) != layer_offset(max_seeds + 1) {
            return Err(bad(format!("{} entries for {max_seeds} seeds", u64_at(24))));
        }
        let mut zeroed = bytes[..length].to_vec();
        zeroed[56..64].fill(0);
        if checksum(&zeroed) != u64_at(56) {
            return Err(FileError::Checksum { path: path.to_path_buf(), what: "the header".into() });
        }
        let v3 = version >= 3;
        let rules = u32_at(76);
        if (v3 && rules != RULES_ABAPA) || (!v3 && rules != 0) {
            return Err(bad(format!("rule set {rules}, this crate plays {RULES_ABAPA} (Abapa)")));
        }
        let budget = SearchBudget::from_fields(|param| match param_slot(param) {
            _ if param == Param::SearchMinSeeds && !v3 => 0,
            (at, 4) => u32_at(at) as u64,
            (at, _) => u64_at(at),
        })
        .expect("fields of at most 4 bytes fit the budget's");
        let provenance = match v3 {
            true if u32_at(88) > 0 => Some(Provenance { body_checksum: u64_at(80), layers: u32_at(88) }),
            _ => None,
        };
        let mut layers = Vec::new();
        let mut offset = length as u64;
        for n in 0..=max_seeds {
            let at = fixed_header(version) + layer_record(version) * n as usize;
            let width = match version {
                4.. => EntryWidth::from_code(u64_at(at + 24))
                    .ok_or_else(|| bad(format!("layer {n} with {} bytes per entry", u64_at(at + 24))))?,
                _ => EntryWidth::Full,
            };
            let record =
                LayerRecord { offset: u64_at(at), entries: u64_at(at + 8), checksum: u64_at(at + 16), width };
            if (record.offset, record.entries) != (offset, layer_size(n)) {
                return Err(bad(format!(
                    "layer {n} at offset {} with {} entries",
                    record.offset, record.entries
                )));
            }
            offset += record.length();
            layers.push(record);
        }
        Ok(Header { version, max_seeds, budget, body_checksum: u64_at(48), provenance, layers })
    }
}

/// The header of a table of layers `0..=params.largest_layer()` built
/// with `params`: one pass over the layers for their checksums. Each
/// layer is described with value records when every entry has one, else
/// with full records, however `layers` holds it
/// ([`PackedLayer::canonical_width`]).
pub fn table_header<'a>(
    params: &BuildParams,
    provenance: Option<Provenance>,
    layers: impl Fn(u32) -> PackedLayer<'a>,
) -> io::Result<Header> {
    let (max_seeds, budget) = (params.largest_layer(), params.budget());
    let mut offset = Header::length(max_seeds) as u64;
    let mut body = Checksum::new();
    let mut records = Vec::new();
    for n in 0..=max_seeds {
        let layer = layers(n);
        let width = layer.canonical_width();
        let mut sum = Checksum::new();
        layer.for_each_piece_in(width, PIECE, |piece| {
            body.update(piece);
            sum.update(piece);
            Ok(())
        })?;
        let record = LayerRecord { offset, entries: layer_size(n), checksum: sum.finish(), width };
        offset += record.length();
        records.push(record);
    }
    Ok(Header {
        version: VERSION,
        max_seeds,
        budget,
        body_checksum: body.finish(),
        provenance,
        layers: records,
    })
}

/// Streams the table `header` describes to `out`: the header, then each
/// layer in the width the header gives it, converted piece by piece
/// (a few MB of buffer, whatever the table's size).
pub fn write_table_to<'a>(
    out: &mut dyn Write,
    header: &Header,
    layers: impl Fn(u32) -> PackedLayer<'a>,
) -> io::Result<()> {
    out.write_all(&header.encode())?;
    for (n, record) in header.layers.iter().enumerate() {
        layers(n as u32).for_each_piece_in(record.width, PIECE, |piece| out.write_all(piece))?;
    }
    Ok(())
}

/// Writes a tablebase file of layers `0..=params.largest_layer()` built
/// with `params`, atomically ([`table_header`], then
/// [`write_table_to`]), and returns its header.
pub fn write_tablebase<'a>(
    path: &Path,
    params: &BuildParams,
    provenance: Option<Provenance>,
    layers: impl Fn(u32) -> PackedLayer<'a> + Copy,
) -> io::Result<Header> {
    let header = table_header(params, provenance, layers)?;
    write_table_file(path, &header, layers)?;
    Ok(header)
}

/// Writes the tablebase file `header` describes ([`table_header`]),
/// atomically.
pub fn write_table_file<'a>(
    path: &Path,
    header: &Header,
    layers: impl Fn(u32) -> PackedLayer<'a>,
) -> io::Result<()> {
    write_atomically(path, |w| write_table_to(w, header, layers))
}

/// Writes the compressed copy (`.owtb.zst`) of the table `header`
/// describes straight from its layers, atomically: the same bytes as
/// compressing the file [`write_tablebase`] writes ([`write_compressed`]),
/// without that file on disk.
pub fn write_compressed_table<'a>(
    target: &Path,
    header: &Header,
    layers: impl Fn(u32) -> PackedLayer<'a>,
    progress: &dyn Observer,
) -> io::Result<()> {
    compress_into(target, header.file_length(), progress, |w| write_table_to(w, header, layers))
}

/// The header of a table file, compressed or not, read without the rest
/// (of a compressed file, only its first bytes are decompressed).
pub fn read_header(path: &Path) -> Result<Header, FileError> {
    let io_error = |error| FileError::Io { path: path.to_path_buf(), error };
    let mut file = File::open(path).map_err(io_error)?;
    let mut magic = [0u8; 4];
    let compressed = file.read_exact(&mut magic).is_ok() && crate::compressed::is_zstd(&magic);
    let file = File::open(path).map_err(io_error)?;
    let most = Header::length_in(VERSION, MAX_FILE_SEEDS) as u64;
    let mut bytes = Vec::new();
    if compressed {
        zstd::stream::Decoder::new(file)
            .and_then(|d| d.take(most).read_to_end(&mut bytes))
            .map_err(crate::compressed::in_words)
    } else {
        file.take(most).read_to_end(&mut bytes)
    }
    .map_err(io_error)?;
    Header::decode(&bytes, path)
}

/// Compresses a finished tablebase file into `.owtb.zst`, atomically,
/// reporting the bytes read to `progress` (minutes for the largest tables).
pub fn write_compressed(source: &Path, target: &Path, progress: &dyn Observer) -> io::Result<()> {
    let mut input = File::open(source)?;
    let length = input.metadata()?.len();
    compress_into(target, length, progress, |w| io::copy(&mut input, w).map(|_| ()))
}

/// Compresses the `length` bytes `fill` writes into `target`, atomically,
/// reporting them to `progress`. Streaming zstd with a fixed level, window
/// and worker count writes the same frame however the input is cut into
/// writes, so a table streamed from its layers compresses to the bytes of
/// its file compressed.
fn compress_into(
    target: &Path,
    length: u64,
    progress: &dyn Observer,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let level = compression_level(length);
    progress.phase(&format!("compressing (zstd {level})"), length, "bytes");
    write_atomically(target, |w| {
        let mut encoder = zstd::stream::Encoder::new(w, level)?;
        // Streaming multithreaded zstd writes the same bytes for any number
        // of workers from 1 up (not the same as 0 workers): the copy does
        // not depend on the thread count.
        encoder.multithread(rayon::current_num_threads().clamp(1, 64) as u32)?;
        encoder.long_distance_matching(true)?;
        // A damaged copy then fails to decompress instead of decoding to
        // other entries.
        encoder.include_checksum(true)?;
        fill(&mut Counted { inner: &mut encoder, progress })?;
        encoder.finish()?;
        Ok(())
    })?;
    progress.finish();
    Ok(())
}

/// A writer that reports the bytes written through it.
struct Counted<'a, W: Write> {
    inner: &'a mut W,
    progress: &'a dyn Observer,
}

impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(bytes)?;
        self.progress.advance(written as u64);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn compression_level(bytes: u64) -> i32 {
    if bytes <= 64 << 20 {
        19
    } else {
        12
    }
}

/// The whole content of a zstd file (one or more frames; every frame's
/// content checksum, when it has one, is checked by the decoder), read no
/// further than the length its header declares (for our tables, the
/// header length and entry count of its first 32 bytes, checked in full
/// once read), nor than this machine's memory.
pub(crate) fn decompress(path: &Path) -> io::Result<Vec<u8>> {
    let declared = |start: &[u8]| -> u64 {
        if start.len() < 32 || !start.starts_with(MAGIC) {
            return crate::compressed::machine_memory();
        }
        let header = u32::from_le_bytes(start[20..24].try_into().expect("4 bytes")) as u64;
        let entries = u64::from_le_bytes(start[24..32].try_into().expect("8 bytes"));
        let length = entries.checked_mul(ENTRY_BYTES as u64).and_then(|body| body.checked_add(header));
        length.unwrap_or(0).min(crate::compressed::machine_memory())
    };
    crate::compressed::read_bounded_by_start(File::open(path)?, 32, declared)
}

enum Storage {
    Mapped(Mmap),
    Owned(Vec<u8>),
    /// A finished build directory's layer files, one per layer: the file
    /// the header describes was never written.
    Layers(Vec<LayerBytes>),
}

impl Storage {
    /// The whole file's bytes, header first (not for layers held apart).
    fn whole(&self) -> Option<&[u8]> {
        match self {
            Storage::Mapped(m) => Some(m),
            Storage::Owned(v) => Some(v),
            Storage::Layers(_) => None,
        }
    }
}

/// What the first read of a layer found.
#[derive(Clone, Copy)]
enum LayerCheck {
    Good,
    /// Its checksum disagrees.
    Damaged,
    /// Its checksum agrees, but this entry is not one a writer makes.
    Malformed(u64),
}

/// An open tablebase file.
///
/// Every answer comes from a checked layer: the first read of a layer
/// compares its checksum with the header's and checks its entries' form
/// (once; mapped files stay lazy, so a probe of a ≤ 24 table reads only
/// the layers it touches), and a layer that fails answers nothing but its
/// error.
pub struct Tablebase {
    storage: Storage,
    header: Header,
    path: PathBuf,
    /// Per layer, once checked: what the check found.
    checked: Vec<OnceLock<LayerCheck>>,
}

impl Tablebase {
    /// Opens a `.owtb` file (memory-mapped) or a `.owtb.zst` file (read into
    /// memory). Checks the header and the file length; each layer is
    /// checked on its first read, [`Tablebase::verify`] checks them all.
    pub fn open(path: &Path) -> Result<Tablebase, FileError> {
        let io_error = |error| FileError::Io { path: path.to_path_buf(), error };
        let mut file = File::open(path).map_err(io_error)?;
        if file.metadata().map_err(io_error)?.is_dir() {
            let hint = if path.join("tablebase.owtb").is_file() {
                format!(" (its table: {})", path.join("tablebase.owtb").display())
            } else {
                String::new()
            };
            let message = format!("a directory, not a table file{hint}");
            return Err(io_error(std::io::Error::new(std::io::ErrorKind::InvalidInput, message)));
        }
        let mut magic = [0u8; 4];
        let compressed = file.read_exact(&mut magic).is_ok() && crate::compressed::is_zstd(&magic);
        let storage = if compressed {
            Storage::Owned(decompress(path).map_err(io_error)?)
        } else {
            // Safety: the file is opened read-only; a tablebase file is never
            // modified in place (writers replace it by rename).
            Storage::Mapped(unsafe { Mmap::map(&file) }.map_err(io_error)?)
        };
        Tablebase::from_storage(storage, path)
    }

    /// A table whose bytes (a decompressed `.owtb.zst`) are in memory;
    /// `path` names it in errors.
    pub fn from_bytes(bytes: Vec<u8>, path: &Path) -> Result<Tablebase, FileError> {
        Tablebase::from_storage(Storage::Owned(bytes), path)
    }

    fn from_storage(storage: Storage, path: &Path) -> Result<Tablebase, FileError> {
        let Some(bytes) = storage.whole() else {
            let problem = "layers held apart come with their header".to_string();
            return Err(FileError::Header { path: path.to_path_buf(), problem });
        };
        let header = Header::decode(bytes, path)?;
        let expected = header.file_length();
        if bytes.len() as u64 != expected {
            return Err(FileError::Header {
                path: path.to_path_buf(),
                problem: format!("file holds {} bytes, expected {expected} (truncated?)", bytes.len()),
            });
        }
        Ok(Tablebase::with_header(storage, header, path))
    }

    /// The table `header` describes, its layers held apart (a finished
    /// build directory's layer files, `directory::finished`); `path`
    /// names it in errors. Each layer's length must be the one the header
    /// gives it; its checksum is checked on its first read, as a file's.
    pub fn from_layers(header: Header, layers: Vec<LayerBytes>, path: &Path) -> Result<Tablebase, FileError> {
        let lengths = header.layers.iter().map(LayerRecord::length);
        if layers.len() != header.layers.len() || !lengths.eq(layers.iter().map(|l| l.bytes().len() as u64)) {
            let problem = "the layers do not have the lengths the header gives them".to_string();
            return Err(FileError::Header { path: path.to_path_buf(), problem });
        }
        Ok(Tablebase::with_header(Storage::Layers(layers), header, path))
    }

    fn with_header(storage: Storage, header: Header, path: &Path) -> Tablebase {
        let checked = (0..=header.max_seeds).map(|_| OnceLock::new()).collect();
        Tablebase { storage, header, path: path.to_path_buf(), checked }
    }

    /// The decoded header (checked against its own checksum on opening).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file this table was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The records of layer `n`, as stored: not checked (see
    /// [`Tablebase::checked_layer`]). Panics if `n` is above the table's
    /// `max_seeds`.
    pub fn layer(&self, n: u32) -> PackedLayer<'_> {
        let record = self.header.layers[n as usize];
        let bytes = match (&self.storage, self.storage.whole()) {
            (Storage::Layers(layers), _) => layers[n as usize].bytes(),
            (_, Some(whole)) => &whole[record.offset as usize..(record.offset + record.length()) as usize],
            (_, None) => &[],
        };
        // (The header was checked on opening: offsets, entries and width.)
        PackedLayer::with_width(bytes, record.width)
    }

    /// Checks every layer's checksum and the whole body's.
    pub fn verify_checksums(&self) -> Result<(), FileError> {
        let mut body = Checksum::new();
        for n in 0..=self.header.max_seeds {
            let layer = self.layer(n).bytes();
            body.update(layer);
            if checksum(layer) != self.header.layers[n as usize].checksum {
                return Err(FileError::Checksum { path: self.path.clone(), what: format!("layer {n}") });
            }
        }
        if body.finish() != self.header.body_checksum {
            return Err(FileError::Checksum { path: self.path.clone(), what: "the entries".into() });
        }
        Ok(())
    }

    /// Checks every layer as its first read does (its checksum, which the
    /// header's own checksum vouches for, then its entries' form): what a
    /// reader calls on opening when a damaged layer must not go unnoticed
    /// later (a probe of a damaged layer answers nothing,
    /// [`EndgameTable::probe`]). Reads the whole file once; later reads
    /// are not checked again.
    pub fn verify(&self) -> Result<(), FileError> {
        (0..=self.header.max_seeds).try_for_each(|n| self.check_layer(n))
    }

    /// Checks layer `n`, the first time only: its checksum, then that
    /// every entry is one a writer makes (a writer's bug or an edit behind
    /// a checksum that agrees). Panics if `n` is above the table's
    /// `max_seeds`.
    pub fn check_layer(&self, n: u32) -> Result<(), FileError> {
        let found = *self.checked[n as usize].get_or_init(|| {
            let layer = self.layer(n);
            if checksum(layer.bytes()) != self.header.layers[n as usize].checksum {
                return LayerCheck::Damaged;
            }
            layer.first_malformed(n).map_or(LayerCheck::Good, LayerCheck::Malformed)
        });
        match found {
            LayerCheck::Good => Ok(()),
            LayerCheck::Damaged => {
                Err(FileError::Checksum { path: self.path.clone(), what: format!("layer {n}") })
            }
            LayerCheck::Malformed(index) => {
                Err(FileError::Malformed { path: self.path.clone(), layer: n, index })
            }
        }
    }

    /// The records of layer `n`, once checked ([`Tablebase::check_layer`]).
    pub fn checked_layer(&self, n: u32) -> Result<PackedLayer<'_>, FileError> {
        self.check_layer(n).map(|()| self.layer(n))
    }

    /// The entry of a position: `Ok(None)` above `max_seeds`, an error if
    /// the position's layer is damaged or holds a malformed entry.
    #[inline]
    pub fn entry(&self, position: &Position) -> Result<Option<Entry>, FileError> {
        let n = position.seeds();
        if n > self.header.max_seeds {
            return Ok(None);
        }
        self.check_layer(n)?;
        Ok(Some(self.layer(n).entry(layer_index(position))))
    }
}

impl EndgameTable for Tablebase {
    fn max_seeds(&self) -> u32 {
        self.header.max_seeds
    }

    /// A damaged layer (or one holding a malformed entry) answers nothing
    /// (see [`Tablebase::entry`] for why; [`Tablebase::verify`] finds them
    /// all at once).
    fn probe(&self, position: &Position) -> Option<Probe> {
        self.entry(position).ok().flatten().map(|e| e.probe())
    }

    /// Every entry is a proven interval, and each layer is checked against
    /// its checksum before it answers.
    fn proves(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped table's header (version 3) reads; a version 4 header
    /// with every parameter set and layers of both widths is read back to
    /// the same fields, and the layers' offsets follow their widths.
    #[test]
    fn headers_of_version_3_read_and_of_version_4_round_trip() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/data/endgames-12.owtb.zst"));
        let table = Tablebase::open(path).unwrap();
        let header = table.header();
        assert_eq!(header.version, 3);
        assert_eq!(header.budget.threshold_max_seeds, 11);
        assert!(header.layers.iter().all(|r| r.width == EntryWidth::Full));
        assert!(matches!(&table.storage, Storage::Owned(v) if v.len() as u64 == header.file_length()));
        let budget = SearchBudget {
            nodes_per_search: 1 << 40,
            max_path: 4_096,
            threshold_max_seeds: 20,
            cut_nodes: 600,
            cut_max_seeds: 9,
            min_seeds: 13,
        };
        let mut offset = Header::length(12) as u64;
        let layers = (0..=12u32)
            .map(|n| {
                let width = if n % 3 == 1 { EntryWidth::Full } else { EntryWidth::Value };
                let record = LayerRecord { offset, entries: layer_size(n), checksum: n as u64 * 7, width };
                offset += record.length();
                record
            })
            .collect();
        let written = Header {
            version: VERSION,
            budget,
            provenance: Some(Provenance { body_checksum: 7, layers: 3 }),
            layers,
            ..header.clone()
        };
        let bytes = written.encode();
        assert_eq!(Header::decode(&bytes, path).unwrap(), written);
        assert_eq!(u32::from_le_bytes(bytes[92..96].try_into().unwrap()), 13);
        assert_eq!(u64::from_le_bytes(bytes[32..40].try_into().unwrap()), 1 << 40);
        // A width other than 1 or 3 is refused.
        let mut odd = bytes.clone();
        odd[96 + 32 * 2 + 24] = 2;
        odd[56..64].fill(0);
        let sum = checksum(&odd);
        odd[56..64].copy_from_slice(&sum.to_le_bytes());
        assert!(matches!(Header::decode(&odd, path), Err(FileError::Header { .. })));
    }
}
