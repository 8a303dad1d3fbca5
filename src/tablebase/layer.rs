//! Solving one seed layer, given every lower layer.
//!
//! The phases, each in its own module:
//! 1. [`retrograde`](super::retrograde): terminal positions, captures into
//!    the solved lower layers, then propagation through un-moves with child
//!    counters until nothing more follows without cycles.
//! 2. [`scc`](super::scc): Pearce's strongly connected components of the
//!    still-undecided positions, in reverse topological order.
//! 3. Component by component, sinks first: a component on no cycle is
//!    decided from its (now decided) children; a cycle component gets the
//!    proven [`bounds`](super::bounds) of `docs/cycle-bounds.md`, then the
//!    [`cycle_search`](super::cycle_search) over simple paths and the
//!    history-aware [`cut_search`](super::cut_search) try to close the
//!    remaining gaps. Its positions are then decided and their parents told.
//!
//! Values are mover-relative: an option of the mover at a position with `n`
//! seeds is worth `n − V(child)` whether or not it captures (the captured
//! seeds plus what the opponent leaves of the rest).

use std::time::Instant;

use super::checkpoint::SnapshotParts;
pub use super::layer_entries::Contradiction;
use super::layer_entries::LayerEntries;
use super::scc::Components;
use super::solved::SolvedLayers;
use super::stats::LayerStats;
use crate::cluster::Communicator;
use crate::memory::{release_free_memory, PeakSampler};
use crate::progress::{Observer, SILENT};
use crate::rank::{layer_index, layer_size, position_in_layer};
use crate::rules::Position;

/// Budget of the searches inside cycle components.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchBudget {
    /// Most nodes a threshold question may use (questions start at
    /// 4,096 nodes and get eight times more each round until they are
    /// answered or reach this); 0 turns the threshold search off.
    pub nodes_per_search: u64,
    /// Longest line (plies from the root) a threshold search explores
    /// (at most [`SearchBudget::MAX_PATH`]).
    pub max_path: usize,
    /// Layers above this many seeds get no threshold search.
    pub max_seeds: u32,
    /// Nodes per question of the path-cut search (each node solves two
    /// threshold games on its component), for what the threshold search
    /// leaves open; 0 turns it off.
    pub cut_nodes: u64,
    /// Layers above this many seeds get no path-cut search.
    pub cut_max_seeds: u32,
    /// Layers below this many seeds get no search of either kind (an
    /// improvement pass that re-proves chosen layers only).
    pub min_seeds: u32,
}

impl SearchBudget {
    /// The longest line either cycle search explores: both recurse once a
    /// ply, and a line this long fits a worker thread's stack
    /// (`cpu::use_threads` gives them 32 MiB). A search that would go
    /// deeper answers "unknown", which never becomes a proof.
    pub const MAX_PATH: usize = 4_096;

    /// No search at all: the history-free bounds only.
    pub const NONE: SearchBudget = SearchBudget {
        nodes_per_search: 0,
        max_path: 1_000,
        max_seeds: 0,
        cut_nodes: 0,
        cut_max_seeds: 0,
        min_seeds: 0,
    };

    /// Refuses what no search can do: paths longer than
    /// [`SearchBudget::MAX_PATH`].
    pub fn check(&self) -> Result<(), super::BuildError> {
        match self.max_path {
            path if path > SearchBudget::MAX_PATH => Err(super::BuildError::PathTooLong { max_path: path }),
            _ => Ok(()),
        }
    }

    /// Whether layer `n` gets the threshold search.
    pub fn threshold_search_at(&self, n: u32) -> bool {
        self.nodes_per_search > 0 && (self.min_seeds..=self.max_seeds).contains(&n)
    }

    /// Whether layer `n` gets the path-cut search.
    pub fn cut_search_at(&self, n: u32) -> bool {
        self.cut_nodes > 0 && (self.min_seeds..=self.cut_max_seeds).contains(&n)
    }
}

impl Default for SearchBudget {
    /// What a default build affords (≤ 12 seeds in well under a minute on
    /// two cores): the threshold search to layer 7, which closes every gap
    /// there; the path-cut search off (it has nothing left to close).
    fn default() -> SearchBudget {
        SearchBudget {
            nodes_per_search: 1_000_000,
            max_path: 1_000,
            max_seeds: 7,
            cut_nodes: 0,
            cut_max_seeds: 0,
            min_seeds: 0,
        }
    }
}

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
        state: Vec<u8>,
    },
    /// Bounds are known; the first `done.len()` members are searched.
    Search {
        lower: Vec<u8>,
        upper: Vec<u8>,
        done: Vec<(u8, u8)>,
    },
}

/// Receives snapshots of a layer build at safe points.
pub trait Checkpointer {
    /// Whether a snapshot is wanted now (cheap: called often).
    fn due(&mut self) -> bool;
    /// Persists a snapshot: `write` streams it into the writer given; an
    /// error stops the build.
    fn save(
        &mut self,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> std::io::Result<()>;
    /// Where the ranks of a distributed build write their parts of the
    /// next snapshot taken inside games spread over them, and the sequence
    /// number that names that snapshot (the parts are written before it).
    /// None by default: no snapshot is taken inside such games.
    fn parts(&self) -> Option<(&dyn SnapshotParts, u64)> {
        None
    }
}

/// A checkpointer that never asks for snapshots.
pub struct NoCheckpoints;

impl Checkpointer for NoCheckpoints {
    fn due(&mut self) -> bool {
        false
    }
    fn save(
        &mut self,
        _: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        Ok(())
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
    pub fn new(n: u32, lower: &'a SolvedLayers, budget: SearchBudget) -> LayerSolver<'a> {
        Self::window(n, lower, budget, 0..layer_size(n) as usize)
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
            parallel_members: super::bounds::PARALLEL_MEMBERS,
            pearce_up_to: super::scc::PEARCE_UP_TO,
        }
    }

    /// Intersects every interval this layer proves with `entries`, the
    /// packed entries of the same layer in a table proven before (an
    /// interval that does not meet is a `Contradiction`).
    pub fn with_seed(mut self, entries: &'a [u8]) -> Self {
        self.entries.set_seed(entries);
        self
    }

    /// Solves the cycle bounds of components with at least `members`
    /// members with the frontier-parallel threshold games, and smaller ones
    /// on one thread (default: [`super::PARALLEL_GAMES_FROM`], 8,192). The bytes are
    /// the same whatever the choice; benchmarks compare the speed
    /// (`usize::MAX`: the sequential games everywhere).
    pub fn with_parallel_games_from(mut self, members: usize) -> Self {
        self.parallel_members = members;
        self
    }

    /// Reports each phase's progress to `observer`.
    pub fn with_observer(mut self, observer: &'a dyn Observer) -> Self {
        self.progress = observer;
        self
    }

    /// Runs every phase and returns the packed entries of the layer.
    pub fn solve(self) -> (Vec<u8>, LayerStats) {
        // (Without checkpoints or a seed, only a builder bug fails: an
        // invariant broken.)
        let n = self.n;
        self.run(Cursor::Start, None, &mut NoCheckpoints).unwrap_or_else(|e| panic!("layer {n}: {e:?}"))
    }

    /// Solves the layer for its audit (see [`Audit`]) and returns what the
    /// audit found.
    pub(crate) fn solve_audit(self) -> Vec<(u32, u8, u8)> {
        let (_, _, audit) =
            self.run_to_end(Cursor::Start, None, &mut NoCheckpoints, None).expect("no checkpoints");
        audit.map(|a| a.found).unwrap_or_default()
    }

    /// Runs the build from `cursor` (with the components, once known),
    /// offering snapshots to `checkpoints` at safe points.
    /// A contradiction with the seed ([`LayerSolver::with_seed`]) is
    /// reported once the layer is done, for the least index.
    pub fn run(
        self,
        cursor: Cursor,
        components: Option<Components>,
        checkpoints: &mut dyn Checkpointer,
    ) -> Result<(Vec<u8>, LayerStats), LayerError> {
        self.run_to_end(cursor, components, checkpoints, None).map(|(bytes, stats, _)| (bytes, stats))
    }

    /// [`LayerSolver::run`] on rank 0 of a distributed build: the large
    /// components' threshold games are played by every rank of `comm`
    /// (the others wait in `bounds_across::serve_bounds`, which the caller
    /// ends with `bounds_across::end_bounds`). The same bytes.
    pub(crate) fn run_across(
        self,
        cursor: Cursor,
        components: Option<Components>,
        checkpoints: &mut dyn Checkpointer,
        comm: &dyn Communicator,
    ) -> Result<(Vec<u8>, LayerStats), LayerError> {
        self.run_to_end(cursor, components, checkpoints, Some(comm)).map(|(bytes, stats, _)| (bytes, stats))
    }

    fn run_to_end(
        mut self,
        mut cursor: Cursor,
        mut components: Option<Components>,
        checkpoints: &mut dyn Checkpointer,
        across: Option<&dyn Communicator>,
    ) -> Result<(Vec<u8>, LayerStats, Option<Audit>), LayerError> {
        let started = Instant::now();
        let seconds_before = self.stats.seconds.total;
        // (Memory freed before, such as a checkpoint just read, is handed
        // back first so that it does not count.)
        release_free_memory();
        let memory = PeakSampler::start(3);
        loop {
            release_free_memory();
            memory.enter(match cursor {
                Cursor::Start | Cursor::Propagating { .. } => 0,
                Cursor::Retrograded => 1,
                Cursor::Resolving { .. } | Cursor::Done => 2,
            });
            cursor = match cursor {
                Cursor::Start => {
                    let clock = Instant::now();
                    let frontier = self.first_pass();
                    self.stats.seconds.retrograde += clock.elapsed().as_secs_f64();
                    Cursor::Propagating { frontier: frontier.iter().map(|p| layer_index(p) as u32).collect() }
                }
                Cursor::Propagating { frontier } => {
                    let clock = Instant::now();
                    let mut frontier: Vec<Position> = frontier
                        .iter()
                        .map(|&i| position_in_layer(self.n, i as u64).expect("index inside the layer"))
                        .collect();
                    while !frontier.is_empty() {
                        if checkpoints.due() {
                            let indexes = frontier.iter().map(|p| layer_index(p) as u32).collect();
                            let cursor = Cursor::Propagating { frontier: indexes };
                            self.checkpoint(checkpoints, &cursor, None)?;
                        }
                        frontier = self.propagate_round(&frontier);
                    }
                    self.finish_retrograde();
                    self.stats.seconds.retrograde += clock.elapsed().as_secs_f64();
                    Cursor::Retrograded
                }
                Cursor::Retrograded => {
                    let clock = Instant::now();
                    components = Some(self.components());
                    self.stats.seconds.scc += clock.elapsed().as_secs_f64();
                    Cursor::Resolving { k: 0, step: Step::Begin }
                }
                Cursor::Resolving { k, step } => {
                    let found = components.as_ref().expect("components before resolving");
                    self.resolve_components(found, k, step, checkpoints, across)?;
                    Cursor::Done
                }
                Cursor::Done => break,
            };
            self.record_memory(&memory);
            if cursor != Cursor::Done && checkpoints.due() {
                self.checkpoint(checkpoints, &cursor, components.as_ref())?;
            }
        }
        self.progress.finish();
        if let Some(found) = self.entries.contradiction() {
            return Err(LayerError::Contradiction(found));
        }
        drop(components);
        release_free_memory();
        let (bytes, undecided) = self.entries.packed();
        if let Some(index) = undecided {
            return Err(LayerError::Invariant { index: index as u64, broken: LEFT_UNDECIDED });
        }
        self.record_memory(&memory);
        self.stats.finish(&bytes);
        self.stats.seconds.total = seconds_before + started.elapsed().as_secs_f64();
        Ok((bytes, self.stats, self.audit))
    }

    /// Folds the sampled peaks into the layer's figures (a resumed layer
    /// keeps the peaks seen before the interruption).
    fn record_memory(&mut self, sampler: &PeakSampler) {
        let m = &mut self.stats.memory;
        let phases = [&mut m.retrograde, &mut m.components, &mut m.cycles];
        for (phase, peak) in phases.into_iter().enumerate() {
            let (anonymous, file) = sampler.peak(phase);
            *peak = (*peak).max(anonymous);
            m.mapped = m.mapped.max(file);
        }
    }

    /// Runs the retrograde phase alone and returns how many positions it
    /// decided (for benchmarks comparing propagation strategies).
    pub fn retrograde_only(&mut self) -> u64 {
        let mut frontier = self.first_pass();
        while !frontier.is_empty() {
            frontier = self.propagate_round(&frontier);
        }
        self.finish_retrograde();
        self.stats.decided_by_retrograde
    }

    /// The retrograde result of a position: `(decided, lower, upper)`.
    pub fn retrograde_entry(&self, index: usize) -> (bool, u8, u8) {
        let (lower, upper, _) = self.entries.interval(index);
        (self.entries.is_decided(index), lower, upper)
    }
}
