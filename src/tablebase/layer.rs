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

use std::sync::atomic::AtomicU8;
use std::sync::Mutex;

use indicatif::ProgressBar;
use std::sync::atomic::Ordering::{AcqRel, Relaxed};
use std::time::Instant;

use super::entry::{Entry, Proof, ENTRY_BYTES};
use super::scc::Components;
use super::solved::SolvedLayers;
use super::stats::LayerStats;
use crate::rank::{layer_index, layer_size, position_in_layer};
use crate::rules::Position;

/// Flags byte of a position under construction.
pub(crate) const DECIDED: u8 = 0x80;
pub(crate) const ON_CYCLE: u8 = 0x40;
pub(crate) const PROOF_MASK: u8 = 0x03;

/// Budget of the searches inside cycle components.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchBudget {
    /// Most nodes a threshold question may use (questions start at
    /// 4,096 nodes and get eight times more each round until they are
    /// answered or reach this); 0 turns the threshold search off.
    pub nodes_per_search: u64,
    /// Longest line (plies from the root) a threshold search explores.
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
    /// No search at all: the history-free bounds only.
    pub const NONE: SearchBudget =
        SearchBudget {
        nodes_per_search: 0,
        max_path: 1_000,
        max_seeds: 0,
        cut_nodes: 0,
        cut_max_seeds: 0,
        min_seeds: 0,
    };

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
    pub(crate) lower: &'a SolvedLayers,
    /// Best option bounds and estimate seen so far (mover-relative); once a
    /// position is decided, its own lower bound, upper bound and value.
    pub(crate) lo: Vec<AtomicU8>,
    pub(crate) hi: Vec<AtomicU8>,
    pub(crate) est: Vec<AtomicU8>,
    /// Quiet moves whose child is not decided yet.
    pub(crate) pending: Vec<AtomicU8>,
    /// `DECIDED | ON_CYCLE | proof`.
    pub(crate) flags: Vec<AtomicU8>,
    pub(crate) budget: SearchBudget,
    pub(crate) progress: ProgressBar,
    pub stats: LayerStats,
    /// A second opinion asked of some cycle positions (`verify --deep`).
    pub(crate) audit: Option<Audit>,
    /// This layer's packed entries in the table the build starts from:
    /// proven intervals, intersected with what this build proves
    /// (`docs/cycle-bounds.md` §6).
    pub(crate) seed: Option<&'a [u8]>,
    /// The first position where this build and the seed disagree.
    pub(crate) contradiction: Mutex<Option<Contradiction>>,
}

/// A position whose interval proven by this build and the interval of the
/// table it started from do not meet: one of the two tables is wrong (or
/// made for other rules), and nothing built on both may be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contradiction {
    pub seeds: u32,
    pub index: u64,
    /// The interval this build proves, and the seed's entry.
    pub ours: (u8, u8),
    pub theirs: (u8, u8),
}

impl std::fmt::Display for Contradiction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let position = position_in_layer(self.seeds, self.index)
            .map(|p| p.pits().iter().map(|s| s.to_string()).collect::<Vec<_>>().join("-"))
            .unwrap_or_else(|| format!("index {}", self.index));
        write!(
            f,
            "layer {} position {position}: this build proves {}..{}, the table it starts from says {}..{}",
            self.seeds, self.ours.0, self.ours.1, self.theirs.0, self.theirs.1
        )
    }
}

/// Why a layer could not be finished.
#[derive(Debug)]
pub enum LayerError {
    /// A checkpoint could not be written.
    Io(std::io::Error),
    Contradiction(Contradiction),
}

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

fn atomic_bytes(len: usize) -> Vec<AtomicU8> {
    (0..len).map(|_| AtomicU8::new(0)).collect()
}

impl<'a> LayerSolver<'a> {
    /// Prepares layer `n`; `lower` must hold layers `0..n`.
    pub fn new(n: u32, lower: &'a SolvedLayers, budget: SearchBudget) -> LayerSolver<'a> {
        assert_eq!(lower.len(), n, "layers below {n} must be solved first");
        let size = layer_size(n) as usize;
        LayerSolver {
            n,
            size,
            lower,
            lo: atomic_bytes(size),
            hi: atomic_bytes(size),
            est: atomic_bytes(size),
            pending: atomic_bytes(size),
            flags: atomic_bytes(size),
            budget,
            progress: ProgressBar::hidden(),
            stats: LayerStats::new(n, size as u64),
            audit: None,
            seed: None,
            contradiction: Mutex::new(None),
        }
    }

    /// Intersects every interval this layer proves with `entries`, the
    /// packed entries of the same layer in a table proven before (an
    /// interval that does not meet is a [`Contradiction`]).
    pub fn with_seed(mut self, entries: &'a [u8]) -> Self {
        assert_eq!(entries.len(), self.size * ENTRY_BYTES, "the seed holds layer {}", self.n);
        self.seed = Some(entries);
        self
    }

    /// The seed's proven interval of a position, if there is a seed.
    #[inline]
    pub(crate) fn seed_entry(&self, index: usize) -> Option<Entry> {
        let bytes = self.seed?;
        let at = index * ENTRY_BYTES;
        Some(Entry::unpack([bytes[at], bytes[at + 1], bytes[at + 2]]))
    }

    /// `[lower, upper]` intersected with the seed's interval; a seed entry
    /// that does not meet it (or is no interval of this layer) is recorded
    /// as the layer's contradiction and leaves `[lower, upper]` as it is.
    pub(crate) fn meet_seed(&self, index: usize, lower: u8, upper: u8) -> (u8, u8) {
        let Some(seed) = self.seed_entry(index) else {
            return (lower, upper);
        };
        let (low, high) = (lower.max(seed.lower), upper.min(seed.upper));
        if low > high || seed.upper > self.n as u8 {
            let mut first = self.contradiction.lock().unwrap_or_else(|e| e.into_inner());
            let found = Contradiction {
                seeds: self.n,
                index: index as u64,
                ours: (lower, upper),
                theirs: (seed.lower, seed.upper),
            };
            // The least index, so that the report does not depend on
            // thread timing.
            if first.is_none_or(|c| c.index > found.index) {
                *first = Some(found);
            }
            return (lower, upper);
        }
        (low, high)
    }

    /// Shows progress on this bar (one phase after the other).
    pub fn with_progress(mut self, bar: ProgressBar) -> Self {
        self.progress = bar;
        self
    }

    /// Runs every phase and returns the packed entries of the layer.
    pub fn solve(self) -> (Vec<u8>, LayerStats) {
        self.run(Cursor::Start, None, &mut NoCheckpoints).expect("no checkpoints and no seed")
    }

    /// Solves the layer for its audit (see [`Audit`]) and returns what the
    /// audit found.
    pub(crate) fn solve_audit(self) -> Vec<(u32, u8, u8)> {
        let (_, _, audit) = self.run_to_end(Cursor::Start, None, &mut NoCheckpoints).expect("no checkpoints");
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
        self.run_to_end(cursor, components, checkpoints).map(|(bytes, stats, _)| (bytes, stats))
    }

    fn run_to_end(
        mut self,
        mut cursor: Cursor,
        mut components: Option<Components>,
        checkpoints: &mut dyn Checkpointer,
    ) -> Result<(Vec<u8>, LayerStats, Option<Audit>), LayerError> {
        let started = Instant::now();
        let seconds_before = self.stats.seconds.total;
        loop {
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
                    self.resolve_components(found, k, step, checkpoints)?;
                    Cursor::Done
                }
                Cursor::Done => break,
            };
            if cursor != Cursor::Done && checkpoints.due() {
                self.checkpoint(checkpoints, &cursor, components.as_ref())?;
            }
        }
        self.progress.finish_and_clear();
        if let Some(found) = *self.contradiction.lock().unwrap_or_else(|e| e.into_inner()) {
            return Err(LayerError::Contradiction(found));
        }
        let bytes = self.packed();
        self.stats.finish(&bytes);
        self.stats.seconds.total = seconds_before + started.elapsed().as_secs_f64();
        Ok((bytes, self.stats, self.audit))
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
        (self.is_decided(index), self.lo[index].load(Relaxed), self.hi[index].load(Relaxed))
    }

    #[inline]
    pub(crate) fn is_decided(&self, index: usize) -> bool {
        self.flags[index].load(Relaxed) & DECIDED != 0
    }

    /// The interval and estimate of the mover's option leading to `child`
    /// (reached by a capture into a lower layer, or a decided position of
    /// this layer): `n − V(child)`.
    #[inline]
    pub(crate) fn option_of(&self, child: &Position, captured: u8) -> (u8, u8, u8) {
        let n = self.n as u8;
        let (lower, upper, value) = if captured > 0 {
            let e = self.lower.entry(child);
            (e.lower, e.upper, e.value)
        } else {
            let i = layer_index(child) as usize;
            (self.lo[i].load(Relaxed), self.hi[i].load(Relaxed), self.est[i].load(Relaxed))
        };
        (n - upper, n - lower, n - value)
    }

    /// Records a decided child's option at an undecided parent; returns
    /// the quiet moves of the parent still pending.
    #[inline]
    pub(crate) fn tell_parent(&self, parent: usize, option: (u8, u8, u8)) -> u8 {
        self.lo[parent].fetch_max(option.0, Relaxed);
        self.hi[parent].fetch_max(option.1, Relaxed);
        self.est[parent].fetch_max(option.2, Relaxed);
        // Release/acquire: whoever takes the count to zero sees every option.
        self.pending[parent].fetch_sub(1, AcqRel) - 1
    }

    /// Marks a position decided with its final values; false if another
    /// thread decided it first.
    pub(crate) fn decide(
        &self,
        index: usize,
        lower: u8,
        upper: u8,
        value: u8,
        proof: Proof,
        cycle: bool,
    ) -> bool {
        let (lower, upper, value, proof) = match self.seed_entry(index) {
            Some(seed) => {
                let (low, high) = self.meet_seed(index, lower, upper);
                // Exact by our own proof, else by the seed's; two open
                // intervals that meet in one value count as searched (at
                // least one of them narrowed by a search).
                let proof = match (lower == upper, seed.is_exact()) {
                    (true, _) => proof,
                    (false, true) => seed.proof,
                    (false, false) => Proof::Search,
                };
                // Our own estimate (clamped below): a seed that adds
                // nothing leaves the bytes of a build from scratch.
                (low, high, value, proof)
            }
            None => (lower, upper, value, proof),
        };
        let proof = if lower == upper { proof } else { Proof::Open };
        let flags = DECIDED | if cycle { ON_CYCLE } else { 0 } | proof as u8;
        if self.flags[index].compare_exchange(0, flags, Relaxed, Relaxed).is_err() {
            return false;
        }
        self.lo[index].store(lower, Relaxed);
        self.hi[index].store(upper, Relaxed);
        self.est[index].store(value.clamp(lower, upper), Relaxed);
        true
    }

    /// The final entry of a decided position.
    pub(crate) fn entry(&self, index: usize) -> Entry {
        let flags = self.flags[index].load(Relaxed);
        Entry {
            value: self.est[index].load(Relaxed),
            lower: self.lo[index].load(Relaxed),
            upper: self.hi[index].load(Relaxed),
            on_cycle: flags & ON_CYCLE != 0,
            proof: Proof::from_bits(flags & PROOF_MASK),
        }
    }

    fn packed(&self) -> Vec<u8> {
        let mut bytes = vec![0u8; self.size * ENTRY_BYTES];
        for (index, chunk) in bytes.chunks_exact_mut(ENTRY_BYTES).enumerate() {
            debug_assert!(self.is_decided(index));
            chunk.copy_from_slice(&self.entry(index).pack());
        }
        bytes
    }
}
