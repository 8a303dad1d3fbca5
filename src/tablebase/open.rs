//! Opening any tablebase file the crate reads, told apart by its first
//! bytes: ours (checked against its checksums) or the engine's.

use super::directory::finished::{open_finished, table_at, TableAt};
use super::directory::options::BuildError;
use super::owtb::{self, FileError, Tablebase};
use super::table::{EndgameTable, Probe};
use crate::rules::Position;

/// Why no tablebase could be opened.
#[derive(Debug)]
pub enum OpenError {
    /// The file could not be read, or starts like ours and is not a valid
    /// tablebase of ours.
    Ours(FileError),
    /// A build directory without `tablebase.owtb` whose finished layers
    /// could not be opened as the table.
    Directory(BuildError),
    /// The file is not ours and does not read as an engine "Oware Endgames"
    /// file either.
    Engine {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        error: crate::formats::FormatError,
    },
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Ours(e) => e.fmt(f),
            OpenError::Directory(e) => e.fmt(f),
            // (A read error names the file already.)
            OpenError::Engine {
                error: error @ crate::formats::FormatError::Io { path: Some(_), .. },
                ..
            } => error.fmt(f),
            OpenError::Engine { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for OpenError {}

/// Our table at `path`: a `.owtb` or `.owtb.zst` file, or a build
/// directory: its `tablebase.owtb`, or, when the build wrote none
/// (`BuildOptions::plain_table`), its finished layer files, checked
/// against its manifest.
pub fn open_ours(path: &std::path::Path) -> Result<Tablebase, OpenError> {
    match table_at(path) {
        TableAt::File(file) => Tablebase::open(&file).map_err(OpenError::Ours),
        TableAt::Layers(dir) => open_finished(&dir).map_err(OpenError::Directory),
    }
}

/// Any tablebase file the crate reads, opened: ours (checked: header and
/// per-layer checksums) or the engine's (no checksum: its values are
/// range-checked only).
pub enum AnyTable {
    /// Our format, checked against its checksums.
    Ours(Tablebase),
    /// An engine "Oware Endgames" 1.0/2.0 file, range-checked only.
    Engine(crate::formats::endgames::EndgameFile),
}

impl AnyTable {
    /// Opens our `.owtb` or `.owtb.zst` file, a build directory
    /// ([`open_ours`]), or an engine "Oware Endgames" 1.0/2.0 file,
    /// compressed with zstd or not, told apart by their first bytes.
    pub fn open(path: &std::path::Path) -> Result<AnyTable, OpenError> {
        use std::io::Read;
        if path.is_dir() {
            return open_ours(path).map(AnyTable::Ours);
        }
        let path = path.to_path_buf();
        let mut start = [0u8; 8];
        let read = std::fs::File::open(&path).and_then(|mut f| f.read(&mut start));
        let start = match read {
            Ok(n) => &start[..n],
            // Our reader names the file and the cause.
            Err(_) => return Tablebase::open(&path).map(AnyTable::Ours).map_err(OpenError::Ours),
        };
        if crate::compressed::is_zstd(start) {
            let bytes = owtb::decompress(&path)
                .map_err(|error| OpenError::Ours(FileError::Io { path: path.clone(), error }))?;
            return if bytes.starts_with(owtb::MAGIC) {
                Tablebase::from_bytes(bytes, &path).map(AnyTable::Ours).map_err(OpenError::Ours)
            } else {
                crate::formats::endgames::EndgameFile::from_bytes(bytes)
                    .map(AnyTable::Engine)
                    .map_err(|error| OpenError::Engine { path: path.clone(), error })
            };
        }
        if start == owtb::MAGIC {
            return Tablebase::open(&path).map(AnyTable::Ours).map_err(OpenError::Ours);
        }
        crate::formats::endgames::EndgameFile::open(&path)
            .map(AnyTable::Engine)
            .map_err(|error| OpenError::Engine { path, error })
    }

    /// [`AnyTable::open`], then the whole file checked: ours against
    /// every checksum and for well-formed entries
    /// ([`Tablebase::verify`]), the engine's for captures within each
    /// layer's seeds. For long work (searches, matches, book growth),
    /// which must not meet a damaged layer halfway and take it for
    /// positions the table does not cover.
    pub fn open_verified(path: &std::path::Path) -> Result<AnyTable, OpenError> {
        let table = AnyTable::open(path)?;
        match &table {
            AnyTable::Ours(t) => t.verify().map_err(OpenError::Ours)?,
            AnyTable::Engine(t) => {
                t.verify().map_err(|error| OpenError::Engine { path: path.to_path_buf(), error })?
            }
        }
        Ok(table)
    }

    /// Whether every answer is checked against a checksum (ours) or not
    /// (the engine's layouts have none).
    pub fn is_checked(&self) -> bool {
        matches!(self, AnyTable::Ours(_))
    }
}

impl EndgameTable for AnyTable {
    fn max_seeds(&self) -> u32 {
        match self {
            AnyTable::Ours(t) => t.max_seeds(),
            AnyTable::Engine(t) => t.max_seeds(),
        }
    }

    fn probe(&self, position: &Position) -> Option<Probe> {
        match self {
            AnyTable::Ours(t) => t.probe(position),
            AnyTable::Engine(t) => t.probe(position),
        }
    }

    fn proves(&self) -> bool {
        match self {
            AnyTable::Ours(t) => t.proves(),
            AnyTable::Engine(t) => t.proves(),
        }
    }
}

/// Opens any tablebase a search can use, checked in full
/// ([`AnyTable::open_verified`]). The one handle serves both: it converts
/// to the `Arc<dyn EndgameTable>` of [`crate::search::Options::tablebase`]
/// (`Some(table.clone())`), and keeps [`AnyTable::probe_after_capture`]
/// for the engine's own questions.
pub fn open_any(path: &std::path::Path) -> Result<std::sync::Arc<AnyTable>, OpenError> {
    Ok(std::sync::Arc::new(AnyTable::open_verified(path)?))
}
