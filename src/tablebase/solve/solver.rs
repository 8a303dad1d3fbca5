//! A layer being solved: what every phase reads and changes. It holds the
//! layer's entries (their one owner, `entries`), the search budget, the
//! layer's figures and where the build stands ([`Cursor`], [`Step`]); the
//! phases are functions over it (`solve/mod.rs` lists them in order), and
//! `run` drives them.
//!
//! Values are mover-relative: an option of the mover at a position with `n`
//! seeds is worth `n − V(child)` whether or not it captures (the captured
//! seeds plus what the opponent leaves of the rest).

use std::ops::Range;
use std::sync::Arc;

use crate::progress::{Observer, SILENT};
use crate::rank::layer_size;
use crate::tablebase::layers::{PackedLayer, SolvedLayers};
use crate::tablebase::params::SearchBudget;
pub use crate::tablebase::solve::entries::Contradiction;
use crate::tablebase::solve::entries::LayerEntries;
pub use crate::tablebase::solve::split::LabelsExhausted;
use crate::tablebase::stats::LayerStats;

/// Where the build of a layer stands: everything before it is done.
#[derive(Clone, Debug, PartialEq)]
pub enum Cursor {
    Start,
    /// The first retrograde pass is done; these positions (local indexes)
    /// are decided but their parents not told yet.
    Propagating {
        frontier: Vec<u32>,
    },
    /// Retrograde analysis is done.
    Retrograded,
    /// Components are known; those before `k` are resolved.
    Resolving {
        k: usize,
        step: Step,
    },
    Done,
}

/// Progress inside one cycle component.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Begin,
    /// Thresholds above `t` are solved; per member the bytes
    /// `win(q,0), win(q,1), open(q,0), open(q,1)`.
    Bounds {
        t: u8,
        safety_rounds: u32,
        state: SavedGames,
    },
    /// Bounds are known; the first `done.len()` members are searched.
    Search {
        lower: Vec<u8>,
        upper: Vec<u8>,
        done: Vec<(u8, u8)>,
    },
}

/// The games' state a snapshot holds ([`Step::Bounds`], 4 bytes a
/// member): held, or read where it lies in the snapshot a build resumes
/// from. That snapshot is a mapped file, whose pages are the file's and
/// not the process's own memory: a copy would stand beside the games'
/// work arrays as they are filled from it, 4 bytes a member more at the
/// resumed layer's peak (`docs/tablebase-build.md`, "Resuming inside the
/// games").
#[derive(Clone)]
pub struct SavedGames {
    content: Arc<dyn AsRef<[u8]> + Send + Sync>,
    range: Range<usize>,
}

impl SavedGames {
    /// The bytes `range` of `content` (which must hold them).
    pub(crate) fn within(content: Arc<dyn AsRef<[u8]> + Send + Sync>, range: Range<usize>) -> SavedGames {
        assert!(range.end <= (*content).as_ref().len(), "the saved games lie inside their snapshot");
        SavedGames { content, range }
    }
}

impl From<Vec<u8>> for SavedGames {
    fn from(bytes: Vec<u8>) -> SavedGames {
        let range = 0..bytes.len();
        SavedGames { content: Arc::new(bytes), range }
    }
}

impl std::ops::Deref for SavedGames {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &(*self.content).as_ref()[self.range.clone()]
    }
}

impl PartialEq for SavedGames {
    fn eq(&self, other: &SavedGames) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for SavedGames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SavedGames({} bytes)", self.len())
    }
}

/// The state of a layer being solved.
pub struct LayerSolver<'a> {
    pub(crate) n: u32,
    pub(crate) size: usize,
    /// The layer's entries under construction (their only owner).
    pub(crate) entries: LayerEntries<'a>,
    pub(crate) budget: SearchBudget,
    pub(crate) progress: &'a dyn Observer,
    /// The layer's figures so far, complete once it is solved.
    pub stats: LayerStats,
    /// A second opinion asked of some cycle positions (`verify --deep`).
    pub(crate) audit: Option<Audit>,
    /// Components with at least this many members get the parallel
    /// threshold games (`bounds::PARALLEL_MEMBERS`; the tests vary it).
    pub(crate) parallel_members: usize,
    /// Parts of the component search up to this size go to Pearce's
    /// algorithm (`scc::PEARCE_UP_TO`; the tests vary it).
    pub(crate) pearce_up_to: usize,
    /// Where the entries wait while the component search runs, for a
    /// layer of at least so many positions (see [`LayerSolver::with_parking`]).
    pub(crate) parking: Option<(std::path::PathBuf, usize)>,
}

/// Why a layer could not be finished.
#[derive(Debug)]
pub enum LayerError {
    /// A checkpoint could not be written.
    Io(std::io::Error),
    Contradiction(Contradiction),
    /// A position (this layer index, the least) breaks an invariant the
    /// proofs rest on (`broken` says which): a builder bug, refused rather
    /// than written as an entry.
    Invariant {
        index: u64,
        broken: &'static str,
    },
    /// The component search could not split the layer (it ran out of part
    /// labels: a layer far beyond any this game has).
    Labels(LabelsExhausted),
}

/// [`LayerError::Invariant`]: a position undecided at the end of its layer.
pub(crate) const LEFT_UNDECIDED: &str = "was left undecided";

impl From<std::io::Error> for LayerError {
    fn from(error: std::io::Error) -> LayerError {
        LayerError::Io(error)
    }
}

/// Cycle positions to re-prove with the path-cut search from their
/// history-free bounds, leaving the layer's own results untouched.
pub(crate) struct Audit {
    /// Layer indexes, sorted.
    pub wanted: Vec<u32>,
    pub cut_nodes: u64,
    /// Per audited position: its layer index and the bounds the path-cut
    /// search proved.
    pub found: Vec<(u32, u8, u8)>,
}

impl<'a> LayerSolver<'a> {
    /// Prepares layer `n`; `lower` must hold layers `0..n`.
    /// Every layer below in value records (all exact), it keeps no
    /// estimates until a position is decided inexact
    /// (`LayerEntries::without_estimates`).
    pub fn new(n: u32, lower: &'a SolvedLayers, budget: SearchBudget) -> LayerSolver<'a> {
        let mut solver = Self::window(n, lower, budget, 0..layer_size(n) as usize);
        solver.entries.without_estimates();
        solver
    }

    /// Prepares the positions `window` of layer `n` only (one rank's part
    /// of a distributed build: its retrograde passes, never the cycle
    /// phases, which need the whole layer).
    pub(crate) fn window(
        n: u32,
        lower: &'a SolvedLayers,
        budget: SearchBudget,
        window: std::ops::Range<usize>,
    ) -> LayerSolver<'a> {
        assert_eq!(lower.len(), n, "layers below {n} must be solved first");
        let size = layer_size(n) as usize;
        LayerSolver {
            n,
            size,
            entries: LayerEntries::window(n, lower, window),
            budget,
            progress: &SILENT,
            stats: LayerStats::new(n, size as u64),
            audit: None,
            parallel_members: crate::tablebase::solve::tuning::PARALLEL_GAMES_FROM,
            pearce_up_to: crate::tablebase::solve::tuning::PEARCE_UP_TO,
            parking: None,
        }
    }

    /// Intersects every interval this layer proves with `entries`, the
    /// packed entries of the same layer in a table proven before (an
    /// interval that does not meet is a `Contradiction`).
    pub fn with_seed(mut self, entries: PackedLayer<'a>) -> Self {
        self.entries.set_seed(entries);
        self
    }

    /// Solves the cycle bounds of components with at least `members`
    /// members with the frontier-parallel threshold games, and smaller ones
    /// on one thread (default: [`crate::tablebase::solve::tuning::PARALLEL_GAMES_FROM`], 8,192). The bytes are
    /// the same whatever the choice; benchmarks compare the speed
    /// (`usize::MAX`: the sequential games everywhere).
    pub fn with_parallel_games_from(mut self, members: usize) -> Self {
        self.parallel_members = members;
        self
    }

    /// Parks the entries in a scratch file in `dir` while the component
    /// search runs, and the estimates while the threshold games of a
    /// component of a quarter of the layer or more run, if the layer has
    /// at least `from_positions` positions (a build passes
    /// `solve::tuning::PARK_FROM`): those phases' peaks
    /// without the bytes they do not read (4 and 1 a position). The file
    /// has no name once made, and the bytes come back checked: the same
    /// layer either way.
    pub fn with_parking(mut self, dir: &std::path::Path, from_positions: usize) -> Self {
        self.parking = Some((dir.to_path_buf(), from_positions));
        self
    }

    /// Where this layer parks what a phase does not read, if it parks
    /// (given a place, and at least as large as asked).
    pub(crate) fn parking_place(&self) -> Option<std::path::PathBuf> {
        self.parking.as_ref().filter(|(_, from)| self.size >= *from).map(|(dir, _)| dir.clone())
    }

    /// Reports each phase's progress to `observer`.
    pub fn with_observer(mut self, observer: &'a dyn Observer) -> Self {
        self.progress = observer;
        self
    }
}
