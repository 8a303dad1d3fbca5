//! The searches that close the gaps the history-free bounds leave in one
//! cycle component: the threshold search with history-proof leaves
//! ([`threshold_search`](crate::tablebase::solve::search::threshold)), then, where a budget
//! asks for it, the path-cut search ([`cut_search`](crate::tablebase::solve::search::cut)).
//!
//! Members are searched in batches, in parallel; a member's result depends
//! only on the member (its questions use the component's structure, its
//! proven exits and its history-free sets, never another member's search),
//! so the layer's bytes do not depend on thread count or batch boundaries.

pub(crate) mod cut;
pub(crate) mod threshold;

use rayon::prelude::*;

use crate::tablebase::solve::graph::ComponentGraph;
use crate::tablebase::solve::search::cut::CutSearch;
use crate::tablebase::solve::search::threshold::{ProofLeaves, ThresholdSearch};
use crate::tablebase::solve::solver::LayerSolver;
use crate::tablebase::solve::tuning::FIRST_BUDGET;
use crate::tablebase::stats::NodeHistogram;

/// A component prepared for searching.
pub(crate) struct SearchView<'a> {
    pub graph: &'a ComponentGraph,
    pub leaves: &'a ProofLeaves<'a>,
    /// History-free bounds per member.
    pub lower: &'a [u8],
    pub upper: &'a [u8],
}

/// What the searches of a batch achieved.
#[derive(Default)]
pub(crate) struct SearchOutcome {
    /// Final bounds per member of the batch.
    pub bounds: Vec<(u8, u8)>,
    /// Questions answered by the threshold search, with their nodes.
    pub answered: NodeHistogram,
    /// Members the threshold search left open.
    pub left_open: u64,
    /// Members the path-cut search then closed.
    pub closed_by_cut: u64,
    pub nodes: u64,
    pub cut_nodes: u64,
}

/// Searches members `batch` of a component, each from its proven
/// as-root interval `[root_lower, root_upper]`.
pub(crate) fn search_members(
    solver: &LayerSolver,
    view: &SearchView,
    root_lower: &[u8],
    root_upper: &[u8],
    batch: std::ops::Range<usize>,
) -> SearchOutcome {
    let b = solver.budget;
    let threshold = b.threshold_search_at(solver.n);
    let cut = b.cut_search_at(solver.n);
    let (lower, upper) = (view.lower, view.upper);
    let results: Vec<_> = batch
        .into_par_iter()
        .map_init(
            || ThresholdSearch::new(view.graph, view.leaves, lower, upper, b.max_path),
            |search, i| {
                let mut outcome = SearchOutcome::default();
                let (mut low, mut high) = (root_lower[i], root_upper[i]);
                if low < high && threshold {
                    let result = search.tighten(i, low, high, FIRST_BUDGET, b.nodes_per_search);
                    (low, high) = (result.lower, result.upper);
                    for &nodes in &result.answered {
                        outcome.answered.add(nodes);
                    }
                    outcome.nodes += result.nodes;
                    outcome.left_open += (low < high) as u64;
                }
                if low < high && cut {
                    let mut search = CutSearch::new(view.graph);
                    let closed = search.tighten(i, low, high, b.cut_nodes);
                    outcome.closed_by_cut += (closed.0 == closed.1) as u64;
                    (low, high) = closed;
                    outcome.cut_nodes += search.nodes();
                }
                outcome.bounds.push((low, high));
                outcome
            },
        )
        .collect();
    let mut total = SearchOutcome::default();
    for r in results {
        total.bounds.extend(r.bounds);
        total.answered.merge(&r.answered);
        total.left_open += r.left_open;
        total.closed_by_cut += r.closed_by_cut;
        total.nodes += r.nodes;
        total.cut_nodes += r.cut_nodes;
    }
    total
}
