//! What a build is asked ([`BuildOptions`]), why it stops
//! ([`BuildError`]) and what it did ([`BuildReport`]).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::resumable;
use crate::tablebase::across::layer::LayerTraffic;
use crate::tablebase::owtb::FileError;
use crate::tablebase::params::{BuildParams, ParamError};
use crate::tablebase::solve::solver::{Contradiction, LabelsExhausted};
use crate::tablebase::stats::LayerStats;

/// What to build and how.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The build directory, created if missing; an existing build there is
    /// resumed.
    pub dir: PathBuf,
    /// The largest layer to build and how hard to search cycle positions
    /// (checked when made); a resumed build must use the budget it was
    /// started with.
    pub params: BuildParams,
    /// Least time between two checkpoints inside a layer (zero: at every
    /// safe point, which the kill tests use).
    pub checkpoint_every: Duration,
    /// Write the finished table as one file, `tablebase.owtb`: a second
    /// full copy of the layer files beside them. Without it, the layer
    /// files are the table (`AnyTable::open`, `verify`, `probe` and `--from`
    /// read a finished build directory through its manifest), and the
    /// largest builds need disk for one copy of the table, not two.
    pub plain_table: bool,
    /// Write the zstd-compressed copy of the table, `tablebase.owtb.zst`,
    /// streamed from the layer files (the same bytes as the plain file
    /// compressed).
    pub compress: bool,
    /// A proven table (`.owtb` or `.owtb.zst`) whose intervals every layer
    /// it covers is intersected with (`docs/cycle-bounds.md` §6): its exact
    /// entries need no search, and a disagreement stops the build.
    pub start_from: Option<PathBuf>,
    /// With several ranks: finish each layer that gets no search with its
    /// entries kept spread over the ranks, so that no rank holds a whole
    /// layer's work arrays (`docs/distributed-build.md` §1 and §6), each
    /// rank writing its part of the layer's checkpoints; else rank 0
    /// gathers each layer for its cycle phases. The files are the same.
    pub keep_layers_spread: bool,
}

/// Why a build stopped.
#[derive(Debug)]
pub enum BuildError {
    /// A file or directory could not be read or written.
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        error: io::Error,
    },
    /// The directory holds a build with other parameters.
    Parameters {
        /// The build directory.
        dir: PathBuf,
        /// The parameters its manifest records, as text.
        found: String,
        /// The parameters asked for, as text.
        wanted: String,
    },
    /// A file the manifest names is damaged.
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// Another build holds the directory.
    Busy {
        /// The build directory.
        dir: PathBuf,
    },
    /// An improvement pass asked for layers the build does not hold.
    LayersOutside {
        /// The build directory.
        dir: PathBuf,
        /// The first and last layer asked for.
        asked: (u32, u32),
        /// The build's largest layer.
        largest: u32,
    },
    /// A parameter out of its range.
    Param(ParamError),
    /// The table to start from could not be used.
    StartFrom(FileError),
    /// Another rank of a distributed build stopped, for this reason.
    Peer {
        /// The rank that stopped first.
        rank: usize,
        /// Its error, as text.
        problem: String,
    },
    /// This build and the table it starts from disagree about a position.
    Contradiction {
        /// The table the build started from.
        source: PathBuf,
        /// The position and the two intervals that do not meet.
        contradiction: Contradiction,
    },
    /// A position broke an invariant the proofs rest on (it was left
    /// undecided, or it waited for a move out of its cycle component; a
    /// layer kept spread across ranks checks the first only): a bug of
    /// this builder, caught before the layer was written.
    Invariant {
        /// The layer.
        layer: u32,
        /// The least such position's index in the layer.
        index: u64,
        /// What it broke, in words.
        broken: &'static str,
    },
    /// The component search could not split a layer.
    Labels {
        /// The layer.
        layer: u32,
        /// How far the split got.
        exhausted: LabelsExhausted,
    },
}

impl From<ParamError> for BuildError {
    fn from(error: ParamError) -> BuildError {
        BuildError::Param(error)
    }
}

impl From<resumable::DirectoryError> for BuildError {
    fn from(error: resumable::DirectoryError) -> BuildError {
        match error {
            resumable::DirectoryError::Io { path, error } => BuildError::Io { path, error },
            resumable::DirectoryError::Busy { dir } => BuildError::Busy { dir },
            // A damaged file: say how to get on.
            resumable::DirectoryError::Corrupt { path, problem } => BuildError::Corrupt {
                path,
                problem: format!(
                    "{problem}: it is not what the build wrote (restore it from a copy, or build in another \
                     directory, `--from` a table of this one that `endgames verify` accepts to keep its \
                     proven layers)"
                ),
            },
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            BuildError::Parameters { dir, found, wanted } => write!(
                f,
                "{} holds a build with other parameters ({found}; asked for {wanted}): use another directory",
                dir.display()
            ),
            BuildError::Corrupt { path, problem } => {
                write!(f, "{}: {problem}; the build directory is left as it is", path.display())
            }
            BuildError::Busy { dir } => {
                write!(f, "{}: another build is running in this directory", dir.display())
            }
            BuildError::Param(error) => error.fmt(f),
            BuildError::StartFrom(error) => write!(f, "the table to start from: {error}"),
            BuildError::LayersOutside { dir, asked: (first, last), largest } => write!(
                f,
                "{}: layers {first} to {last} asked for, but the build holds layers 0 to {largest}: \
                 extend it with `endgames build --dir {} --max-seeds {last}` first",
                dir.display(),
                dir.display()
            ),
            BuildError::Peer { rank, problem } => write!(f, "rank {rank} of the build stopped: {problem}"),
            BuildError::Labels { layer, exhausted } => {
                write!(f, "layer {layer}: {exhausted}; the layer is not written")
            }
            BuildError::Invariant { layer, index, broken } => write!(
                f,
                "layer {layer}: position {index} {broken} (a builder bug; please report it); \
                 the layer is not written"
            ),
            BuildError::Contradiction { source, contradiction } => write!(
                f,
                "{contradiction} ({}): one of the two tables is wrong; the layer is not written",
                source.display()
            ),
        }
    }
}

impl std::error::Error for BuildError {}

pub(super) fn io_at(path: &Path) -> impl Fn(io::Error) -> BuildError + '_ {
    move |error| BuildError::Io { path: path.to_path_buf(), error }
}

/// What a build did.
#[derive(Debug, Default)]
pub struct BuildReport {
    /// The figures of every layer, those found finished included, by seed
    /// count.
    pub layers: Vec<LayerStats>,
    /// Layers found finished, and whether a layer resumed from a snapshot.
    pub reused_layers: u32,
    /// Whether a layer resumed from a checkpoint.
    pub resumed_checkpoint: bool,
    /// Per layer whose retrograde analysis was spread over several ranks,
    /// what that cost (all ranks together).
    pub traffic: Vec<LayerTraffic>,
    /// Checkpoints this run wrote.
    pub checkpoints_written: u64,
}
