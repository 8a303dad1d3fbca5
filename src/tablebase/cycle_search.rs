//! Exact alpha-beta search over simple paths inside one cycle component,
//! to close the gaps the history-free bounds leave.
//!
//! The search plays the real game from a root position: a quiet move that
//! recreates a game state of the current path (same position, same ply
//! parity) ends the game and each side takes its own row. Every child
//! outside the component is a leaf: it cannot reach the component back, so
//! its as-root value (an interval for unresolved lower entries) is its value
//! under this history. Leaves are taken pessimistically for the root player
//! when proving a lower bound, optimistically when proving an upper bound.
//!
//! No transposition table: inside a component the value of a state depends
//! on the whole path (the graph-history interaction), and keying by paths
//! would never hit. Each search has a node budget and a path-length cap;
//! a search that runs out proves nothing. One question is asked at a time
//! ("is the value at least t?" / "at most t?") with a null window, so the
//! outcome of a position depends only on its own searches: the layer's
//! result does not depend on thread count or order.

use std::sync::atomic::Ordering::Relaxed;

use rayon::prelude::*;

use super::cut_search::{CutGraph, CutSearch};
use super::layer::LayerSolver;
use super::scc::{Components, MemberPositions};
use crate::rank::layer_index;
use crate::rules::{Position, ROW};

/// The members of a cycle component as the search sees them.
#[derive(Clone, Copy)]
pub(crate) struct MemberView<'a> {
    pub positions: &'a MemberPositions<'a>,
    /// History-free bounds per member.
    pub lower: &'a [u8],
    pub upper: &'a [u8],
    /// Member number of every layer index (valid for members only).
    pub local: &'a [u32],
    /// The component for the path-cut search, when that search is on.
    pub cut: Option<&'a CutGraph>,
}

/// What the searches of one component achieved.
pub(crate) struct SearchOutcome {
    /// Final bounds per member of the batch.
    pub bounds: Vec<(u8, u8)>,
    pub searches: u64,
    pub nodes: u64,
}

struct SimplePaths<'s> {
    solver: &'s LayerSolver<'s>,
    ids: &'s [u32],
    component: u32,
    /// Component-local number of every position of the layer (valid for
    /// members only), and the members' history-free bounds (move ordering).
    local: &'s [u32],
    lower: &'s [u8],
    upper: &'s [u8],
    /// Game states on the current path: bit `2 * local + parity`.
    path: Vec<u64>,
    path_len: usize,
    nodes: u64,
    budget: u64,
    max_path: usize,
}

/// Ran out of nodes or path length.
struct OutOfBudget;

impl LayerSolver<'_> {
    /// Searches members `batch` of component `k`.
    pub(crate) fn search_component(
        &self,
        components: &Components,
        k: usize,
        members: &MemberView,
        batch: std::ops::Range<usize>,
    ) -> SearchOutcome {
        let MemberView { positions, lower, upper, local, cut } = *members;
        let simple = self.n <= self.budget.max_seeds && self.budget.nodes_per_search > 0;
        let words = (2 * positions.len()).div_ceil(64);
        let batch_positions: Vec<Position> = batch.clone().map(|i| positions.get(i)).collect();
        let results: Vec<((u8, u8), u64, u64)> = batch_positions
            .par_iter()
            .zip(batch)
            .map(|(position, i)| {
                if lower[i] == upper[i] {
                    return ((lower[i], upper[i]), 0, 0);
                }
                let (mut bounds, mut searches, mut nodes) = ((lower[i], upper[i]), 0, 0);
                if simple {
                    let mut search = SimplePaths {
                        solver: self,
                        ids: &components.id,
                        component: k as u32,
                        local,
                        lower,
                        upper,
                        path: vec![0; words],
                        path_len: 0,
                        nodes: 0,
                        budget: 0,
                        max_path: self.budget.max_path,
                    };
                    (bounds, searches) = search.tighten(position, lower[i], upper[i]);
                    nodes = search.nodes;
                }
                if let Some(graph) = cut.filter(|_| bounds.0 < bounds.1) {
                    let mut search = CutSearch::new(graph);
                    bounds = search.tighten(i, bounds.0, bounds.1, self.budget.cut_nodes);
                    searches += search.questions;
                    nodes += search.nodes();
                }
                (bounds, searches, nodes)
            })
            .collect();
        SearchOutcome {
            bounds: results.iter().map(|r| r.0).collect(),
            searches: results.iter().map(|r| r.1).sum(),
            nodes: results.iter().map(|r| r.2).sum(),
        }
    }
}

/// A move's outcome at a search node.
enum Option_ {
    /// Its value for the mover, known without searching.
    Known(i32),
    /// A quiet move to another state of the component.
    Inside { child: Position, index: usize, order: i32 },
}

impl SimplePaths<'_> {
    /// Raises the lower bound and lowers the upper bound, one proven step at
    /// a time, while searches succeed within their budgets.
    fn tighten(&mut self, root: &Position, mut lower: u8, mut upper: u8) -> ((u8, u8), u64) {
        let per_search = self.solver.budget.nodes_per_search;
        let root_key = self.key(layer_index(root) as usize, 0);
        self.mark(root_key, true);
        let mut searches = 0;
        // Is the value at least lower + 1? (leaves pessimistic for the root)
        while lower < upper {
            searches += 1;
            self.budget = self.nodes + per_search;
            let t = lower as i32 + 1;
            match self.negamax(root, 0, t - 1, t, true) {
                Ok(v) if v >= t => lower = (v as u8).min(upper),
                _ => break,
            }
        }
        // Is the value at most upper − 1? (leaves optimistic for the root)
        while lower < upper {
            searches += 1;
            self.budget = self.nodes + per_search;
            let t = upper as i32 - 1;
            match self.negamax(root, 0, t, t + 1, false) {
                Ok(v) if v <= t => upper = (v.max(0) as u8).max(lower),
                _ => break,
            }
        }
        self.mark(root_key, false);
        ((lower, upper), searches)
    }

    /// The path bit of a member's state.
    #[inline]
    fn key(&self, index: usize, parity: usize) -> usize {
        2 * self.local[index] as usize + parity
    }

    #[inline]
    fn on_path(&self, key: usize) -> bool {
        self.path[key / 64] & (1 << (key % 64)) != 0
    }

    #[inline]
    fn mark(&mut self, key: usize, on: bool) {
        if on {
            self.path[key / 64] |= 1 << (key % 64);
            self.path_len += 1;
        } else {
            self.path[key / 64] &= !(1 << (key % 64));
            self.path_len -= 1;
        }
    }

    /// Fail-soft negamax value for the mover at `position`, reached along
    /// the current path with ply parity `parity`. `pessimistic` says how to
    /// read interval leaves for this mover.
    fn negamax(
        &mut self,
        position: &Position,
        parity: usize,
        alpha: i32,
        beta: i32,
        pessimistic: bool,
    ) -> Result<i32, OutOfBudget> {
        self.nodes += 1;
        if self.nodes > self.budget || self.path_len > self.max_path {
            return Err(OutOfBudget);
        }
        let n = self.solver.n as i32;
        let mut options: [Option<Option_>; ROW] = Default::default();
        let mut best = i32::MIN;
        for (slot, pit) in position.legal_moves().enumerate() {
            let played = position.play(pit);
            let option = self.option(&played.child, played.captured, parity, pessimistic);
            if let Option_::Known(value) = option {
                best = best.max(value);
            }
            options[slot] = Some(option);
        }
        if best >= beta {
            return Ok(best);
        }
        let mut inside: Vec<(Position, usize, i32)> = options
            .iter()
            .flatten()
            .filter_map(|o| match o {
                Option_::Inside { child, index, order } => Some((*child, *index, *order)),
                Option_::Known(_) => None,
            })
            .collect();
        inside.sort_by_key(|&(_, index, order)| (-order, index));
        for (child, index, _) in inside {
            let key = self.key(index, 1 - parity);
            self.mark(key, true);
            let result = self.negamax(&child, 1 - parity, n - beta, n - alpha.max(best), !pessimistic);
            self.mark(key, false);
            best = best.max(n - result?);
            if best >= beta {
                break;
            }
        }
        Ok(best)
    }

    /// The option of a move from a node with parity `parity`.
    fn option(&self, child: &Position, captured: u8, parity: usize, pessimistic: bool) -> Option_ {
        let n = self.solver.n as i32;
        if captured == 0 {
            let index = layer_index(child) as usize;
            if self.ids[index] == self.component {
                if self.on_path(self.key(index, 1 - parity)) {
                    // Repetition: the opponent, to move at the repeated
                    // state, keeps its own row; the mover gets the rest.
                    return Option_::Known(n - child.own_seeds() as i32);
                }
                let local = self.local[index] as usize;
                let guess = (self.lower[local] as i32 + self.upper[local] as i32) / 2;
                return Option_::Inside { child: *child, index, order: n - guess };
            }
            let s = self.solver;
            let (lo, hi) = (s.lo[index].load(Relaxed) as i32, s.hi[index].load(Relaxed) as i32);
            return Option_::Known(n - if pessimistic { hi } else { lo });
        }
        let e = self.solver.lower.entry(child);
        Option_::Known(n - if pessimistic { e.upper as i32 } else { e.lower as i32 })
    }
}
