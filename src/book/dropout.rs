//! Drop-out expansion (Lincke): expansion priorities and the deterministic
//! batched selection of the leaves to expand.
//!
//! # The formula
//! Values are engine units, each node's from **its own side to move**
//! (negamax). For an expanded node `n` with children `c` (one per legal
//! move), write `m(c) = −value(c)` for the value of the move to `c` from
//! the point of view of the player to move at `n` (a repetition edge uses
//! its exact value instead of the child's), and `best(n) = max_c m(c)`,
//! which is `n`'s backed-up value. Then
//!
//! ```text
//! priority(leaf)      = 0
//! priority(terminal)  = ∞          (finished games are never expanded)
//! priority(in flight) = ∞          (a leaf already chosen for this batch)
//! priority(n)         = min over children c with priority(c) < ∞ of
//!                         priority(c) + 1 + ω · (best(n) − m(c))
//!                       (∞ when every child is ∞)
//! ```
//!
//! `priority(n)` is the cost of the cheapest leaf below `n`, counting one
//! per ply and `ω` per engine unit by which each move on the way is worse
//! than the best move of the player who plays it. Lower is more urgent.
//! The next leaf to expand is found by descending from the root, at each
//! node along the child that achieves the minimum (the first such pit on a
//! tie), down to a leaf.
//!
//! **Both players' views.** The deviation `best(n) − m(c) ≥ 0` is always
//! measured from the side to move at `n`: at a South node it penalises
//! South's inferior moves, at a North node North's, so both players may
//! deviate and neither is privileged. This is the symmetric variant of
//! Lincke's drop-out expansion (his page-80 formulas distinguish the book
//! player from the opponent; with neither side assumed to be the book
//! player, they coincide into the one formula above). A South node and a
//! North node of the same shape get the same priority, because the
//! negamax values flip sign with the side to move.
//!
//! **The effect of ω.** With `ω = 0` the priority of a node is the distance
//! to its nearest leaf: growth is breadth-first, a full-width tree. As `ω`
//! grows, a move `d` units worse than the best costs `ω·d` extra plies, so
//! the book narrows onto the principal lines and grows deeper there; a
//! very large `ω` expands almost only the principal variation. At
//! `ω = 0.04` plies per unit, one seed (25 units) of deviation weighs one
//! ply.
//!
//! # Fixed-point units
//! Priorities are integers in micro-plies ([`PLY`] = 10^6) and `ω` an
//! integer number of micro-plies per engine unit ([`Omega`]), so every
//! comparison is exact and the same on every machine.
//!
//! # Batched selection
//! [`select_batch`] picks up to `B` distinct leaves: it descends, marks the
//! leaf *in flight* (priority ∞, a virtual loss that removes it from the
//! choice) and updates the priorities above it, then descends again. The
//! batch depends only on the book, never on thread timing. The caller
//! evaluates the batch's new children in parallel and applies the results
//! in batch order (see `grow`).

use super::graph::{BookGraph, NodeId, NodeKind};

// The formula and the path of a selection are defined below this module
// (the graph needs both, and this module needs the graph); they keep their
// names here.
pub use super::graph::Selection;
pub use super::priority::{child_term, Omega, INFINITE, PLY};

/// The edge of expanded node `id` the descent takes: the minimum term, the
/// first on a tie; `None` if every child is ∞.
pub fn best_edge(graph: &BookGraph, id: NodeId) -> Option<usize> {
    let node = graph.node(id);
    let mut best: Option<(i64, usize)> = None;
    for (i, edge) in node.edges.iter().enumerate() {
        let term = child_term(graph.edge_priority(edge), node.value, graph.move_value(edge), graph.omega());
        if term != INFINITE && best.is_none_or(|(b, _)| term < b) {
            best = Some((term, i));
        }
    }
    best.map(|(_, i)| i)
}

/// Descends from the root along minimum priority to a leaf; `None` when
/// nothing can be expanded (the root's priority is ∞).
pub fn descend(graph: &BookGraph) -> Option<Selection> {
    let mut id = graph.root();
    let mut path = Vec::new();
    loop {
        let node = graph.node(id);
        if node.priority == INFINITE {
            return None;
        }
        match node.kind {
            NodeKind::Leaf => return Some(Selection { leaf: id, path }),
            NodeKind::Terminal => return None,
            NodeKind::Expanded => {
                let edge = best_edge(graph, id)?;
                path.push((id, edge));
                id = node.edges[edge].child;
            }
        }
    }
}

/// Up to `count` distinct leaves in selection order, each marked in flight
/// (the caller expands them, which clears the mark, or calls
/// [`BookGraph::release`]).
pub fn select_batch(graph: &mut BookGraph, count: usize) -> Vec<Selection> {
    let mut batch = Vec::new();
    while batch.len() < count {
        let Some(selection) = descend(graph) else {
            break;
        };
        graph.set_in_flight(selection.leaf);
        batch.push(selection);
    }
    batch
}
