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

use std::fmt;

use super::graph::{BookGraph, NodeId, NodeKind};

/// One ply, in priority units.
pub const PLY: i64 = 1_000_000;
/// The priority of what cannot be expanded.
pub const INFINITE: i64 = i64::MAX;
/// The largest finite priority (sums saturate here).
const MAX_FINITE: i64 = i64::MAX - 1;

/// ω, the weight of a deviation: micro-plies per engine unit.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Omega(i64);

impl Omega {
    /// The largest ω accepted: 1000 plies per engine unit.
    pub const MAX_MICRO: i64 = 1000 * PLY;

    /// ω given in plies per engine unit (0.04: one seed weighs one ply),
    /// rounded to the micro-ply.
    pub fn from_plies_per_unit(plies: f64) -> Option<Omega> {
        let micro = (plies * PLY as f64).round();
        (plies.is_finite() && micro >= 0.0 && micro <= Self::MAX_MICRO as f64).then_some(Omega(micro as i64))
    }

    /// ω given in micro-plies per engine unit; `None` outside
    /// `0..=MAX_MICRO`.
    pub fn from_micro(micro: i64) -> Option<Omega> {
        (0..=Self::MAX_MICRO).contains(&micro).then_some(Omega(micro))
    }

    /// ω in micro-plies per engine unit (the unit of priorities).
    pub fn micro(self) -> i64 {
        self.0
    }

    /// ω in plies per engine unit (what `Display` prints).
    pub fn plies_per_unit(self) -> f64 {
        self.0 as f64 / PLY as f64
    }
}

impl fmt::Display for Omega {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.plies_per_unit())
    }
}

/// What child `c` contributes to its parent's priority:
/// `priority(c) + 1 ply + ω · (best − value)`, or ∞ if `c` is ∞.
/// `best` and `value` are from the parent's mover's view.
#[inline]
pub fn child_term(child_priority: i64, best: i32, value: i32, omega: Omega) -> i64 {
    if child_priority == INFINITE {
        return INFINITE;
    }
    let deviation = (best as i64 - value as i64).max(0);
    child_priority.saturating_add(PLY).saturating_add(omega.0.saturating_mul(deviation)).min(MAX_FINITE)
}

/// A leaf chosen for expansion and the way the descent took to it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Selection {
    /// The leaf to expand.
    pub leaf: NodeId,
    /// `(node, edge index)` from the root down to the leaf's parent.
    pub path: Vec<(NodeId, usize)>,
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omega_rounds_to_micro_plies() {
        assert_eq!(Omega::from_plies_per_unit(0.04).unwrap().micro(), 40_000);
        assert_eq!(Omega::from_plies_per_unit(0.0).unwrap().micro(), 0);
        assert!(Omega::from_plies_per_unit(-0.1).is_none());
        assert!(Omega::from_plies_per_unit(f64::NAN).is_none());
        assert!(Omega::from_plies_per_unit(1e9).is_none());
        assert_eq!(Omega::from_micro(40_000).unwrap().to_string(), "0.04");
    }

    #[test]
    fn terms_saturate_and_keep_infinity_apart() {
        let w = Omega::from_micro(Omega::MAX_MICRO).unwrap();
        assert_eq!(child_term(INFINITE, 0, 0, w), INFINITE);
        assert_eq!(child_term(MAX_FINITE, 1000, -1000, w), MAX_FINITE);
        assert_eq!(child_term(0, 10, 10, w), PLY);
        let w = Omega::from_plies_per_unit(0.5).unwrap();
        assert_eq!(child_term(3 * PLY, 10, 4, w), 3 * PLY + PLY + 3 * PLY);
    }
}
