//! Phase 2: the cycle components of the undecided positions, sinks first.
//!
//! After retrograde analysis every undecided position has an undecided
//! quiet child, so each lies on a cycle or reaches one. Only the strongly
//! connected components that hold a cycle need the cycle phases; every
//! other undecided position is decided by retrograde propagation as soon
//! as the components below it are (`resolve.rs`). The components are
//! found on every thread by [`crate::tablebase::solve::split`] over the layer's quiet moves.
//!
//! We work on the normalized graph (positions seen from the mover) and
//! derive the components of game states (position and side to move, the
//! graph doubled by ply parity) from it: see `docs/cycle-bounds.md`,
//! "Game-state components". A normalized component S with an odd cycle is
//! one game-state component of 2|S| states; a bipartite one is two mirror
//! components of |S| states each.

use std::ops::Range;
use std::sync::atomic::AtomicU32;

use rayon::prelude::*;

use crate::rank::{layer_index, layer_positions_from, position_in_layer, LayerPositions};
use crate::rules::Position;
use crate::tablebase::solve::solver::LayerSolver;
use crate::tablebase::solve::split::{cycle_components, CycleComponents, SplitGraph, TO_SPLIT};

pub(crate) use crate::tablebase::solve::split::NONE;

/// Gaps between two wanted positions up to this many are stepped across
/// rather than unranked.
const STEP_ACROSS: usize = 24;

/// The cycle components, sinks first.
pub struct Components {
    /// Component of every position, `NONE` for positions on no cycle.
    pub id: Vec<u32>,
    /// Positions grouped by component, each group sorted by index.
    pub members: Vec<u32>,
    /// `members[starts[k]..starts[k + 1]]` is component `k`.
    pub starts: Vec<usize>,
}

impl Components {
    /// Groups positions by component number (`NONE`: in no component).
    pub fn from_ids(id: Vec<u32>) -> Components {
        let count = id.par_iter().filter(|&&r| r != NONE).map(|&r| r as usize + 1).max().unwrap_or(0);
        let mut starts = vec![0usize; count + 1];
        for &r in &id {
            if r != NONE {
                starts[r as usize + 1] += 1;
            }
        }
        for k in 0..count {
            starts[k + 1] += starts[k];
        }
        let mut fill = starts.clone();
        let mut members = vec![0u32; starts[count]];
        for (i, &r) in id.iter().enumerate() {
            if r != NONE {
                members[fill[r as usize]] = i as u32;
                fill[r as usize] += 1;
            }
        }
        Components { id, members, starts }
    }

    pub fn count(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn of(&self, k: usize) -> &[u32] {
        &self.members[self.starts[k]..self.starts[k + 1]]
    }
}

/// Finds the cycle components of the undecided positions and records
/// their figures in the layer statistics.
pub(crate) fn components(solver: &mut LayerSolver) -> Components {
    let graph = QuietMoves::of(solver);
    let found = cycle_components(
        &graph,
        labels_to_split(solver),
        solver.pearce_up_to,
        solver.progress,
        &graph.what(),
    );
    components_found(solver, found)
}

/// The labels the split starts from, for the positions these arrays
/// hold: the undecided ones are to split.
pub(crate) fn labels_to_split(solver: &LayerSolver) -> Vec<AtomicU32> {
    solver
        .entries
        .window_range()
        .into_par_iter()
        .map(|i| AtomicU32::new(if solver.entries.is_decided(i) { NONE } else { TO_SPLIT }))
        .collect()
}

/// The components the split found, grouped, their figures recorded in
/// the layer statistics.
pub(crate) fn components_found(solver: &mut LayerSolver, found: CycleComponents) -> Components {
    let components = Components::from_ids(found.id);
    record_component_stats(solver, &components, &found.odd);
    components
}

fn record_component_stats(solver: &mut LayerSolver, components: &Components, odd: &[bool]) {
    let sizes: Vec<u64> = (0..odd.len()).map(|k| components.of(k).len() as u64).collect();
    record_component_sizes(solver, &sizes, odd);
}

/// Records the figures of components of `sizes` members, with whether
/// each holds an odd cycle.
pub(crate) fn record_component_sizes(solver: &mut LayerSolver, sizes: &[u64], odd: &[bool]) {
    for (&size, &odd) in sizes.iter().zip(odd) {
        let size = size as usize;
        let s = &mut solver.stats.components;
        s.cycle_components += 1;
        s.positions_on_cycles += size as u64;
        s.largest = s.largest.max(size as u64);
        s.game_state_components += if odd { 1 } else { 2 };
        s.largest_game_state = s.largest_game_state.max(if odd { 2 } else { 1 } * size as u64);
        *s.size_histogram.entry(size_class(size)).or_default() += 1;
    }
}

/// The quiet moves of a layer, between its positions.
pub(crate) struct QuietMoves {
    n: u32,
    size: usize,
}

impl QuietMoves {
    /// The quiet moves of the solver's layer (all of it, whatever the
    /// solver's arrays hold).
    pub(crate) fn of(solver: &LayerSolver) -> QuietMoves {
        QuietMoves { n: solver.n, size: solver.size }
    }

    /// The name of the split in progress reports.
    pub(crate) fn what(&self) -> String {
        format!("{} seeds", self.n)
    }
}

impl SplitGraph for QuietMoves {
    type Node = Position;

    fn size(&self) -> usize {
        self.size
    }

    #[inline]
    fn index(&self, position: &Position) -> usize {
        layer_index(position) as usize
    }

    fn node(&self, index: usize) -> Position {
        position_in_layer(self.n, index as u64).expect("index inside the layer")
    }

    fn walk(&self, range: Range<usize>, mut visit: impl FnMut(usize, Position)) {
        let positions = layer_positions_from(self.n, range.start as u64).take(range.len());
        range.zip(positions).for_each(|(i, p)| visit(i, p));
    }

    fn walk_sorted(&self, indexes: &[u32], mut visit: impl FnMut(usize, Position)) {
        // Stepping to the next position costs a few nanoseconds, unranking
        // about a hundred: step across short gaps, unrank across long ones.
        let mut walker: Option<(usize, LayerPositions)> = None;
        for &index in indexes {
            let index = index as usize;
            let position = match &mut walker {
                Some((at, positions)) if index >= *at && index - *at <= STEP_ACROSS => {
                    let position = positions.nth(index - *at).expect("index inside the layer");
                    *at = index + 1;
                    position
                }
                _ => {
                    let mut positions = layer_positions_from(self.n, index as u64);
                    let position = positions.next().expect("index inside the layer");
                    walker = Some((index + 1, positions));
                    position
                }
            };
            visit(index, position);
        }
    }

    #[inline]
    fn for_each_child(&self, position: &Position, mut visit: impl FnMut(Position)) {
        for pit in position.legal_moves() {
            let played = position.play(pit);
            if played.captured == 0 {
                visit(played.child);
            }
        }
    }

    #[inline]
    fn for_each_parent(&self, position: &Position, mut visit: impl FnMut(Position)) {
        position.quiet_parents(|parent, _| visit(parent));
    }
}

/// "1", "2-9", "10-99", … for the component size report.
fn size_class(size: usize) -> String {
    let mut low = 1usize;
    while low * 10 <= size {
        low *= 10;
    }
    if low == 1 {
        format!("{size}")
    } else {
        format!("{low}-{}", low * 10 - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tablebase::layers::{LayerBytes, SolvedLayers};
    use crate::tablebase::params::SearchBudget;
    use crate::tablebase::solve::split::tests::check_split;

    /// On the layers themselves, whatever the parts sent to Pearce's
    /// algorithm (all, none, some): Kosaraju's components, and the same
    /// layer bytes.
    #[test]
    fn the_layers_components_and_bytes_do_not_depend_on_the_split() {
        let mut solved = SolvedLayers::new();
        let mut split = 0;
        for n in 0..=9u32 {
            let mut reference: Option<Vec<u8>> = None;
            for pearce_up_to in [usize::MAX, 0, 40] {
                let mut solver = LayerSolver::new(n, &solved, SearchBudget::NONE);
                solver.pearce_up_to = pearce_up_to;
                solver.retrograde_only();
                let inside: Vec<bool> = (0..solver.size).map(|i| !solver.entries.is_decided(i)).collect();
                let graph = QuietMoves { n, size: solver.size };
                split += check_split(&graph, &inside, pearce_up_to);
                let mut solver = LayerSolver::new(n, &solved, SearchBudget::NONE);
                solver.pearce_up_to = pearce_up_to;
                let (bytes, _) = solver.solve();
                match &reference {
                    None => reference = Some(bytes),
                    Some(reference) => assert!(reference == &bytes, "layer {n}, Pearce up to {pearce_up_to}"),
                }
            }
            solved.push(LayerBytes::Owned(reference.expect("a solve")));
        }
        assert!(split >= 3 * 8, "{split} components");
    }
}
