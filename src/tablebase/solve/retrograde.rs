//! Phase 1: retrograde analysis inside a layer.
//!
//! Every position starts with the options that leave the layer (captures
//! into solved lower layers) and a counter of its quiet moves. A position
//! is decided when every quiet child is decided; its value is then the best
//! option. Deciding a position tells its quiet parents, found by un-moves,
//! and so on to a fixpoint. The fixpoint does not depend on the order, so
//! the frontier is processed in parallel and the result is deterministic.
//!
//! There is deliberately no early decision (say, on an option worth all `n`
//! seeds): every position decided here is then decided after all its
//! children, so none lies on a cycle, and its value holds whatever the
//! history. Positions left over are exactly those on cycles and those that
//! reach one; the cycle phases handle an all-`n` option just as well.
//!
//! A rank of a distributed build runs the same passes over its window of
//! the layer; what a position tells a parent held by another rank goes
//! out as a message ([`propagate_to`], and
//! [`receive`] at the other end), and the fixpoint is the
//! same (`docs/distributed-build.md`).

use crate::parallel;

use crate::rank::{layer_index, layer_positions_from};
use crate::rules::{PackedPosition, Position};
use crate::tablebase::entry::Proof;
use crate::tablebase::solve::solver::LayerSolver;

/// Positions per parallel task in the first pass.
const CHUNK: usize = 1 << 14;

/// Frontier positions handed to one thread at a time.
const FRONTIER_CHUNK: usize = 1 << 10;

/// The first pass over the layer; returns the positions it decided
/// (packed: 8 bytes each, where the frontiers can hold a tenth of a layer).
pub(crate) fn first_pass(solver: &mut LayerSolver) -> Vec<PackedPosition> {
    let n = solver.n;
    let window = solver.entries.window_range();
    solver.progress.phase(&format!("{n} seeds: retrograde"), window.len() as u64, "positions");
    let solver = &*solver;
    parallel::collect_chunks(window.len(), CHUNK, &|range, decided| {
        let (start, end) = (window.start + range.start, window.start + range.end);
        for (offset, position) in layer_positions_from(n, start as u64).take(end - start).enumerate() {
            if first_look(solver, start + offset, &position) {
                decided.push(PackedPosition::of(&position));
            }
        }
        solver.progress.advance((end - start) as u64);
    })
}

/// Tells the parents of one frontier; returns the next frontier.
pub(crate) fn propagate_round(solver: &mut LayerSolver, frontier: &[PackedPosition]) -> Vec<PackedPosition> {
    solver.stats.retrograde_rounds += 1;
    solver.progress.detail(&format!("{} seeds: propagate {}", solver.n, solver.stats.retrograde_rounds));
    next_frontier(solver, frontier)
}

/// The positions that telling the parents of `frontier` decides (every
/// thread; the set does not depend on their order).
fn next_frontier(solver: &LayerSolver, frontier: &[PackedPosition]) -> Vec<PackedPosition> {
    parallel::collect_chunks(frontier.len(), FRONTIER_CHUNK, &|range, next| {
        frontier[range].iter().for_each(|child| propagate(solver, &child.position(), next))
    })
}

pub(crate) fn finish_retrograde(solver: &mut LayerSolver) {
    let decided = solver.entries.window_range().filter(|&i| solver.entries.is_decided(i)).count() as u64;
    solver.stats.decided_by_retrograde = decided;
}

/// Exits, terminal rule and quiet-move count of one position; true if
/// it is decided already.
fn first_look(solver: &LayerSolver, index: usize, position: &Position) -> bool {
    let moves = position.legal_moves();
    if moves.is_empty() {
        let own = position.own_seeds() as u8;
        return solver.entries.decide(index, own, own, own, Proof::Retrograde, false);
    }
    let (mut lower, mut upper, mut value, mut quiet) = (0u8, 0u8, 0u8, 0u8);
    for pit in moves {
        let played = position.play(pit);
        if played.captured > 0 {
            let option = solver.entries.option_of(&played.child, played.captured);
            lower = lower.max(option.0);
            upper = upper.max(option.1);
            value = value.max(option.2);
        } else {
            quiet += 1;
        }
    }
    solver.entries.start(index, (lower, upper, value), quiet);
    quiet == 0 && solver.entries.decide(index, lower, upper, value, Proof::Retrograde, false)
}

/// Tells the quiet parents of a just-decided position; pushes those that
/// become decided onto `decided`.
pub(crate) fn propagate(solver: &LayerSolver, child: &Position, decided: &mut Vec<PackedPosition>) {
    propagate_to(
        solver,
        child,
        |_, parent| decided.push(PackedPosition::of(parent)),
        |_, _| unreachable!("every parent is held here"),
    );
}

/// Tells the quiet parents of a just-decided position held here, handing
/// each that becomes decided to `decided(layer index, parent)`, and each
/// parent held elsewhere to `elsewhere(layer index, option)`.
pub(crate) fn propagate_to(
    solver: &LayerSolver,
    child: &Position,
    mut decided: impl FnMut(usize, &Position),
    mut elsewhere: impl FnMut(usize, (u8, u8, u8)),
) {
    let option = solver.entries.option_of(child, 0);
    child.quiet_parents(|parent, _pit| {
        let index = layer_index(&parent) as usize;
        if !solver.entries.holds(index) {
            elsewhere(index, option);
        } else if receive(solver, index, option) {
            decided(index, &parent);
        }
    });
}

/// Records at the parent `index` (held here) the option of a decided
/// child; true if that decides the parent.
pub(crate) fn receive(solver: &LayerSolver, index: usize, option: (u8, u8, u8)) -> bool {
    if solver.entries.is_decided(index) {
        return false;
    }
    if solver.entries.tell_parent(index, option) != 0 {
        return false;
    }
    let (lower, upper, value) = solver.entries.interval(index);
    solver.entries.decide(index, lower, upper, value, Proof::Retrograde, false)
}
