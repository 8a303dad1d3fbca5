//! How a searcher works: its table, move ordering, weights, windows and
//! tablebase.

use std::fmt;
use std::sync::Arc;

use super::eval::Weights;
use super::ordering::Ordering;
use crate::tablebase::EndgameTable;

/// How the searcher works. The default is what a game or a book wants;
/// the switches exist to measure each technique and to test the search.
#[derive(Clone)]
pub struct Options {
    /// Transposition table size in MiB (0: no table).
    pub table_megabytes: usize,
    /// Move ordering steps.
    pub ordering: Ordering,
    /// Evaluation weights.
    pub weights: Weights,
    /// Half-width of the aspiration window in engine units (0: full window).
    pub aspiration: i32,
    /// Use table scores only from searches of exactly the depth asked (and
    /// proven ones), so a fixed-depth search returns exactly the minimax
    /// value at that depth, table or not. Costs some nodes; for tests.
    pub strict_depth: bool,
    /// No pruning, no table, no tablebase: every line to the horizon. With
    /// it, [`super::Stats::horizon_nodes`] is the perft count. For tests.
    pub full_width: bool,
    /// An endgame tablebase to consult: best opened with
    /// [`crate::tablebase::open_any`], which checks the whole file (a
    /// layer found damaged mid-search answers nothing, and the search goes
    /// on without it).
    pub tablebase: Option<Arc<dyn EndgameTable>>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            table_megabytes: 16,
            ordering: Ordering::FULL,
            weights: Weights::default(),
            aspiration: 30,
            strict_depth: false,
            full_width: false,
            tablebase: None,
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("table_megabytes", &self.table_megabytes)
            .field("ordering", &self.ordering)
            .field("weights", &self.weights)
            .field("aspiration", &self.aspiration)
            .field("strict_depth", &self.strict_depth)
            .field("full_width", &self.full_width)
            .field("tablebase", &self.tablebase.as_ref().map(|t| t.max_seeds()))
            .finish()
    }
}
