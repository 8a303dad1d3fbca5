//! The driver: a layer's phases in order, from wherever a snapshot left
//! it, with the memory each phase peaked at and a snapshot offered at
//! every safe point between them.

use crate::memory::release_free_memory;
use crate::memory::PeakSampler;
use crate::rank::layer_index;
use crate::rank::position_in_layer;
use crate::rules::Position;
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::snapshot::NoCheckpoints;
use crate::tablebase::solve::checkpoint;
use crate::tablebase::solve::components;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::resolve::{self, SharedGames};
use crate::tablebase::solve::retrograde;
use crate::tablebase::solve::solver::Audit;
use crate::tablebase::solve::solver::Cursor;
use crate::tablebase::solve::solver::LayerError;
use crate::tablebase::solve::solver::LayerSolver;
use crate::tablebase::solve::solver::Step;
use crate::tablebase::solve::solver::LEFT_UNDECIDED;
use crate::tablebase::stats::LayerStats;
use std::time::Instant;

impl LayerSolver<'_> {
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

    /// [`LayerSolver::run`] with the large components' threshold games
    /// played by `shared` (on rank 0 of a distributed build: by every
    /// rank, `across::bounds::RankGames`). The same bytes.
    pub(crate) fn run_sharing(
        self,
        cursor: Cursor,
        components: Option<Components>,
        checkpoints: &mut dyn Checkpointer,
        shared: &dyn SharedGames,
    ) -> Result<(Vec<u8>, LayerStats), LayerError> {
        self.run_to_end(cursor, components, checkpoints, Some(shared)).map(|(bytes, stats, _)| (bytes, stats))
    }

    fn run_to_end(
        mut self,
        mut cursor: Cursor,
        mut components: Option<Components>,
        checkpoints: &mut dyn Checkpointer,
        shared: Option<&dyn SharedGames>,
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
                    let frontier = retrograde::first_pass(&mut self);
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
                            checkpoint::checkpoint(&self, checkpoints, &cursor, None)?;
                        }
                        frontier = retrograde::propagate_round(&mut self, &frontier);
                    }
                    retrograde::finish_retrograde(&mut self);
                    self.stats.seconds.retrograde += clock.elapsed().as_secs_f64();
                    Cursor::Retrograded
                }
                Cursor::Retrograded => {
                    let clock = Instant::now();
                    components = Some(components::components(&mut self));
                    self.stats.seconds.scc += clock.elapsed().as_secs_f64();
                    Cursor::Resolving { k: 0, step: Step::Begin }
                }
                Cursor::Resolving { k, step } => {
                    let found = components.as_ref().expect("components before resolving");
                    resolve::resolve_components(&mut self, found, k, step, checkpoints, shared)?;
                    Cursor::Done
                }
                Cursor::Done => break,
            };
            self.record_memory(&memory);
            if cursor != Cursor::Done && checkpoints.due() {
                checkpoint::checkpoint(&self, checkpoints, &cursor, components.as_ref())?;
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
        let mut frontier = retrograde::first_pass(self);
        while !frontier.is_empty() {
            frontier = retrograde::propagate_round(self, &frontier);
        }
        retrograde::finish_retrograde(self);
        self.stats.decided_by_retrograde
    }

    /// The retrograde result of a position: `(decided, lower, upper)`.
    pub fn retrograde_entry(&self, index: usize) -> (bool, u8, u8) {
        let (lower, upper, _) = self.entries.interval(index);
        (self.entries.is_decided(index), lower, upper)
    }
}

/// Layers 0 to `n − 1` solved in memory, one after the other (for tests
/// of a layer's solver on the layers below it).
#[cfg(test)]
pub(crate) fn solved_below(
    n: u32,
    budget: crate::tablebase::params::SearchBudget,
) -> crate::tablebase::layers::SolvedLayers {
    let mut lower = crate::tablebase::layers::SolvedLayers::new();
    for seeds in 0..n {
        let (bytes, _) = LayerSolver::new(seeds, &lower, budget).solve();
        lower.push(crate::tablebase::layers::LayerBytes::Owned(bytes));
    }
    lower
}
