//! How book leaf values change with the search budget: a sample of a
//! book's leaves, each valued at several node limits, compared with the
//! largest. What `openings leaf-study` prints; the budget a book is grown
//! with is then chosen by matches (`scripts/matches.sh`).

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use super::error::BookError;
use super::eval::{LeafEvaluator, SearchEvaluator};
use super::graph::{BookGraph, NodeKind};
use crate::rank::state_from_key;
use crate::tablebase::Tablebase;

/// One budget's figures over the sample.
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetRow {
    /// Nodes per leaf asked for.
    pub nodes: u64,
    /// Mean nodes searched per leaf.
    pub mean_nodes: f64,
    /// Mean seconds per leaf (of one thread).
    pub mean_seconds: f64,
    /// Mean depth reached.
    pub mean_depth: f64,
    /// Mean |value − value at the largest budget|, engine units.
    pub mean_change: f64,
    /// Leaves whose value is within 25 units (a seed) of the largest
    /// budget's, as a fraction.
    pub within_a_seed: f64,
    /// Leaves whose best move is the largest budget's, as a fraction.
    pub same_move: f64,
}

/// The study: how many leaves, and a row per budget.
#[derive(Clone, Debug, PartialEq)]
pub struct Study {
    /// Leaves valued (fewer than asked if the book has fewer).
    pub leaves: usize,
    /// One row per budget, in the order given.
    pub rows: Vec<BudgetRow>,
}

/// One leaf's search at one budget.
#[derive(Clone, Copy)]
struct Measure {
    score: i32,
    best: Option<usize>,
    depth: u32,
    nodes: u64,
    seconds: f64,
}

/// Values `sample` leaves of `graph` (spread evenly over the leaves in
/// node order, the same leaves for every budget) at each of `budgets`
/// (ascending; the last is the reference), with `table` if given, on every
/// thread.
pub fn leaf_budget_study(
    graph: &BookGraph,
    sample: usize,
    budgets: &[u64],
    table: Option<&Arc<Tablebase>>,
) -> Result<Study, BookError> {
    let leaves: Vec<u64> = graph.nodes().iter().filter(|n| n.kind == NodeKind::Leaf).map(|n| n.key).collect();
    let count = sample.min(leaves.len());
    let chosen: Vec<u64> = (0..count).map(|i| leaves[i * leaves.len() / count]).collect();
    let evaluators: Vec<SearchEvaluator> = budgets
        .iter()
        .map(|&nodes| match table {
            Some(t) => SearchEvaluator::with_tablebase(nodes, t.clone()),
            None => SearchEvaluator::new(nodes),
        })
        .collect();
    // Per leaf, per budget.
    let results: Vec<Result<Vec<Measure>, BookError>> = chosen
        .par_iter()
        .map(|&key| {
            let state = state_from_key(key).ok_or_else(|| BookError::Corrupt {
                path: "(memory)".into(),
                problem: format!("0x{key:X} is not a state key"),
            })?;
            evaluators
                .iter()
                .map(|e| {
                    let started = Instant::now();
                    let eval = e.evaluate(&state).map_err(BookError::Evaluation)?;
                    Ok(Measure {
                        score: eval.score,
                        best: eval.best_move,
                        depth: eval.depth,
                        nodes: eval.nodes,
                        seconds: started.elapsed().as_secs_f64(),
                    })
                })
                .collect()
        })
        .collect();
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let n = results.len().max(1) as f64;
    let reference = budgets.len() - 1;
    let rows = budgets
        .iter()
        .enumerate()
        .map(|(b, &nodes)| {
            let mean = |f: &dyn Fn(&Measure, &Measure) -> f64| {
                results.iter().map(|r| f(&r[b], &r[reference])).sum::<f64>() / n
            };
            BudgetRow {
                nodes,
                mean_nodes: mean(&|m, _| m.nodes as f64),
                mean_seconds: mean(&|m, _| m.seconds),
                mean_depth: mean(&|m, _| m.depth as f64),
                mean_change: mean(&|m, r| (m.score - r.score).abs() as f64),
                within_a_seed: mean(&|m, r| f64::from(u8::from((m.score - r.score).abs() <= 25))),
                same_move: mean(&|m, r| f64::from(u8::from(m.best == r.best))),
            }
        })
        .collect();
    Ok(Study { leaves: count, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_budget_agrees_with_itself_and_smaller_ones_less() {
        let graph = crate::book::store::load(std::path::Path::new("data/book-dir")).unwrap().graph.unwrap();
        let study = leaf_budget_study(&graph, 12, &[100, 300, 20_000], None).unwrap();
        assert_eq!(study.leaves, 12);
        let rows = study.rows;
        assert_eq!(rows.iter().map(|r| r.nodes).collect::<Vec<_>>(), [100, 300, 20_000]);
        let reference = &rows[2];
        assert_eq!((reference.mean_change, reference.within_a_seed, reference.same_move), (0.0, 1.0, 1.0));
        assert!(rows[0].mean_nodes <= 100.0 + 1e-9 && rows[0].mean_depth < reference.mean_depth);
        assert!(rows[0].mean_change > 0.0, "100 nodes and 20,000 disagree somewhere: {rows:?}");
        // The same leaves every time: the study is deterministic but for times.
        let again = leaf_budget_study(&graph, 12, &[100, 300, 20_000], None).unwrap().rows;
        let strip = |r: &BudgetRow| (r.mean_nodes, r.mean_depth, r.mean_change, r.same_move);
        assert_eq!(rows.iter().map(strip).collect::<Vec<_>>(), again.iter().map(strip).collect::<Vec<_>>());
    }
}
