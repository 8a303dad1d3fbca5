//! Endgame tablebases: what a probe returns, whatever file it came from.
//!
//! Value semantics (rules-and-values.md, "What the endgame tablebase
//! stores"): for a position `p` with `n` seeds on the board, seen from the
//! side to move, the **as-root value** is the most seeds out of those `n`
//! that the mover captures from now to the end under perfect play, when `p`
//! was reached by a capture (or play starts there), so nothing before `p`
//! can repeat. It obeys
//! `value(p) = max over legal m of captured(m) + n' − value(child)`, with
//! `n' = n − captured(m)`; with no legal move the mover takes its own row.

use crate::rules::Position;

mod bounds;
mod bounds_across;
pub mod build;
mod checkpoint;
mod codec;
mod component;
mod cut_search;
mod cycle_search;
pub mod distributed;
pub mod entry;
pub mod export;
pub mod file;
mod frontier;
mod games;
pub mod improve;
mod layer;
mod layer_entries;
mod members;
pub mod probe;
mod resolve;
mod retrograde;
mod scc;
mod solved;
mod split;
mod spread;
mod spread_checkpoint;
mod stats;
mod threshold_search;
pub mod verify;

pub use build::{build, build_across, BuildError, BuildOptions, BuildReport};
pub use entry::{Entry, Proof};
pub use file::{FileError, Tablebase};
pub use layer::{LayerSolver, SearchBudget};
/// The smallest component solved with the parallel threshold games by
/// default ([`LayerSolver::with_parallel_games_from`]).
pub const PARALLEL_GAMES_FROM: usize = bounds::PARALLEL_MEMBERS;
pub use crate::game::Outcome;
pub use probe::{Certainty, MoveValue, ProbeError, StateProbe};
pub use solved::{LayerBytes, SolvedLayers};
pub use stats::{LayerStats, PhaseMemory, PhaseSeconds};

/// What a tablebase says of one position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Probe {
    /// Bounds on the as-root value: `lower ≤ value ≤ upper`, proven when the
    /// table proves ([`EndgameTable::proves`]: ours do, the engine's files
    /// do not, whose non-EXACT entries give `0` and `n` and whose EXACT
    /// ones are the file's claim).
    pub lower: u8,
    /// The upper bound (see `lower`).
    pub upper: u8,
    /// The best available value, inside `lower..=upper`; equal to both when
    /// the entry is exact.
    pub estimate: u8,
    /// The position lies on a cycle of game states (board and side to move):
    /// its value holds only where it was reached by a capture (or is the
    /// root of play). Elsewhere the history can change it.
    pub on_cycle: bool,
}

impl Probe {
    /// Lower and upper bound meet: the as-root value is known (proven if
    /// the table proves).
    #[inline]
    pub fn is_exact(&self) -> bool {
        self.lower == self.upper
    }

    /// The value usable at a node reached without a capture (proven if the
    /// table proves): only positions on no cycle have a value independent
    /// of the history.
    #[inline]
    pub fn exact_anywhere(&self) -> Option<u8> {
        (self.is_exact() && !self.on_cycle).then_some(self.lower)
    }
}

/// Any endgame tablebase a search can consult.
pub trait EndgameTable: Send + Sync {
    /// Positions with at most this many seeds on the board are covered.
    /// It must not change while the table lives: a
    /// [`crate::search::Searcher`] reads it once, when it is made.
    fn max_seeds(&self) -> u32;
    /// The entry of a position (side to move first), `None` if the position
    /// holds more than [`EndgameTable::max_seeds`] seeds, or if its entry
    /// cannot be read (a damaged layer of our files, an impossible byte of
    /// the engine's): a search takes both for "not covered", which is
    /// sound but silent. [`open_any`] checks a whole file on opening, so
    /// that the second cannot happen later.
    fn probe(&self, position: &Position) -> Option<Probe>;
    /// Whether the bounds of [`EndgameTable::probe`] are proofs (our tables,
    /// checked against their checksums) or what a file says (the engine's
    /// files: estimates on cycles, and values resting on them). A search
    /// never reports a score resting on an unproven entry as proven.
    fn proves(&self) -> bool;
}

/// Why no tablebase could be opened.
#[derive(Debug)]
pub enum OpenError {
    /// The file could not be read, or starts like ours and is not a valid
    /// tablebase of ours.
    Ours(FileError),
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
    /// Opens our `.owtb` or `.owtb.zst` file, a build directory (its
    /// `tablebase.owtb`), or an engine "Oware Endgames" 1.0/2.0 file,
    /// compressed with zstd or not, told apart by their first bytes.
    pub fn open(path: &std::path::Path) -> Result<AnyTable, OpenError> {
        use std::io::Read;
        let path = if path.is_dir() { path.join(build::TABLEBASE_FILE) } else { path.to_path_buf() };
        let mut start = [0u8; 8];
        let read = std::fs::File::open(&path).and_then(|mut f| f.read(&mut start));
        let start = match read {
            Ok(n) => &start[..n],
            // Our reader names the file and the cause.
            Err(_) => return Tablebase::open(&path).map(AnyTable::Ours).map_err(OpenError::Ours),
        };
        if file::is_zstd(start) {
            let bytes = file::decompress(&path)
                .map_err(|error| OpenError::Ours(FileError::Io { path: path.clone(), error }))?;
            return if bytes.starts_with(file::MAGIC) {
                Tablebase::from_bytes(bytes, &path).map(AnyTable::Ours).map_err(OpenError::Ours)
            } else {
                crate::formats::endgames::EndgameFile::from_bytes(bytes)
                    .map(AnyTable::Engine)
                    .map_err(|error| OpenError::Engine { path: path.clone(), error })
            };
        }
        if start == file::MAGIC {
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
