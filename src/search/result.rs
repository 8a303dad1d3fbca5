//! What a search answers: scores, why it stopped, its counters, the
//! result of a search and the value of a move.

use std::fmt;
use std::time::Duration;

use crate::game::Outcome;
use crate::rules::Pit;

/// A score for the side to move (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Score(pub i32);

impl Score {
    /// A win at the root itself; a win p plies away scores `WIN - p`.
    pub const WIN: i32 = 10_000;
    /// Scores at least this far from 0 are proven wins or losses.
    pub const PROVEN: i32 = Score::WIN - 1_000;

    /// A proven win for the side to move.
    pub fn is_win(self) -> bool {
        self.0 >= Score::PROVEN
    }
    /// A proven loss for the side to move.
    pub fn is_loss(self) -> bool {
        self.0 <= -Score::PROVEN
    }
    /// Plies until a proven win or loss is decided (or proven by a
    /// tablebase).
    pub fn plies_to_end(self) -> Option<u32> {
        (self.is_win() || self.is_loss()).then(|| (Score::WIN - self.0.abs()) as u32)
    }
    /// The engine's units: ±1000 for won/lost, heuristic scores (25 per
    /// seed) clamped to ±999. Opening books store these.
    pub fn engine_units(self) -> i16 {
        if self.is_win() {
            1000
        } else if self.is_loss() {
            -1000
        } else {
            self.0.clamp(-999, 999) as i16
        }
    }
}

impl fmt::Display for Score {
    /// `+37` for heuristic scores (engine units), `win in 9` / `loss in 4`
    /// (plies) for proven results.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.plies_to_end() {
            // Known at this very node: the game is over or a table says so.
            Some(0) if self.is_win() => write!(f, "win (known here)"),
            Some(0) => write!(f, "loss (known here)"),
            Some(plies) if self.is_win() => write!(f, "win in {plies}"),
            Some(plies) => write!(f, "loss in {plies}"),
            None => write!(f, "{:+}", self.0),
        }
    }
}

/// Why the search stopped. More reasons may come: a match needs a `_`
/// arm.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum Stop {
    /// The game is already over at the root.
    GameOver,
    /// The depth limit was reached.
    Depth,
    /// The result is proven: deeper iterations cannot change it.
    Proven,
    /// The node limit was reached.
    Nodes,
    /// The time limit was reached.
    Time,
    /// [`super::StopHandle::stop`] was called.
    Interrupted,
}

/// Counters of one search.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Stats {
    /// Nodes at the horizon (remaining depth 0), terminal or not, in the
    /// last iteration.
    pub horizon_nodes: u64,
    /// Table probes, and those that found the state.
    pub table_probes: u64,
    /// Table probes that found the state.
    pub table_hits: u64,
    /// Hits whose score ended the node.
    pub table_cutoffs: u64,
    /// Hits refused because the history could change their value.
    pub table_unsafe: u64,
    /// Lines ended by a repetition.
    pub repetitions: u64,
    /// Tablebase probes, and those that settled the node.
    pub tablebase_probes: u64,
    /// Tablebase probes that settled the node with an exact value.
    pub tablebase_hits: u64,
}

/// The result of a search.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SearchResult {
    /// The value for the side to move.
    pub score: Score,
    /// `None` only when the game is over at the root.
    pub best_move: Option<Pit>,
    /// The principal variation, starting with the best move.
    pub pv: Vec<Pit>,
    /// The last completed iteration.
    pub depth: u32,
    /// Nodes visited (all iterations, including an interrupted one).
    pub nodes: u64,
    /// Wall-clock time the search took.
    pub elapsed: Duration,
    /// No heuristic evaluation influenced the score: it is the game's
    /// result under perfect play (given the root's history).
    pub proven: bool,
    /// Why the search stopped.
    pub stop: Stop,
    /// Counters of this search.
    pub stats: Stats,
}

impl SearchResult {
    /// Search speed: nodes over elapsed wall-clock seconds.
    pub fn nodes_per_second(&self) -> f64 {
        self.nodes as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    /// The proven result for the side to move, if there is one.
    pub fn outcome(&self) -> Option<Outcome> {
        if !self.proven {
            return None;
        }
        Some(match self.score.0 {
            s if s > 0 => Outcome::Win,
            0 => Outcome::Draw,
            _ => Outcome::Loss,
        })
    }
}

/// The value of one move, from [`super::Searcher::score_moves`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MoveScore {
    /// The move: the mover's pit, 0..6 from its left.
    pub pit: Pit,
    /// For the side playing the move.
    pub score: Score,
    /// The score is the game's result under perfect play.
    pub proven: bool,
    /// Nodes the search of this move took.
    pub nodes: u64,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stop::GameOver => "the game is over",
            Stop::Depth => "the depth limit",
            Stop::Proven => "the score is proven",
            Stop::Nodes => "the node limit",
            Stop::Time => "the time limit",
            Stop::Interrupted => "interrupted",
        })
    }
}
