//! The game-playing search: negamax alpha-beta with principal variation
//! search, iterative deepening, aspiration windows, a two-tier
//! transposition table, move ordering (table move, captures, defensive
//! moves, history heuristic), exact knowledge of the end of the game
//! (stores, stuck mover, repetition) and endgame tablebase probes.
//!
//! ```
//! use oware::search::{Limits, Options, Searcher};
//! use oware::GameState;
//!
//! let mut searcher = Searcher::new(Options::default()).unwrap();
//! let result = searcher.search(&GameState::start(), &Limits::depth(6)).unwrap();
//! assert!(result.best_move.is_some());
//! println!("{} {:?} {}", result.score, result.pv, result.nodes);
//! ```
//!
//! # Scores
//! Every score is seen from the side to move at the root. A heuristic score
//! is in the engine's units: 25 per seed of store difference plus the pit
//! features of [`eval`]; it stays well inside ±2,000 with the built-in
//! weights. An unproven table's estimate of a decided game is a heuristic
//! score just below every proven one, and every heuristic score is kept
//! below them (whatever the weights). A proven result is
//! [`Score::WIN`] − p for a win p plies from the root (the game ends there,
//! or a tablebase probe there proves the win), its negation for a loss, and
//! 0 for a draw ([`SearchResult::proven`] tells a proven 0 from a heuristic
//! one). [`Score::engine_units`] converts to the units of the engine and its
//! opening books: ±1000 won/lost, other scores clamped to ±999.
//!
//! # Determinism
//! The search is single-threaded. A search of the same state with the same
//! depth or node limit on a fresh [`Searcher`] (or after [`Searcher::clear`],
//! or after the same sequence of earlier searches) returns exactly the same
//! result. A time limit stops wherever the clock says, and a
//! [`StopHandle`] whenever it is told: after either, the searcher's table
//! differs, and so may its later results.
//!
//! # Repetitions and the transposition table
//! How the table stays sound although repetitions make values depend on the
//! path: see the module `engine` (the graph-history interaction), in short:
//! a result is stored only if no repetition below it matched a state above
//! it, and a stored result is used only where no line it explored can
//! reach a state of the current history.

mod engine;
pub mod eval;
pub mod ordering;
mod tt;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::time::Duration;

use crate::game::GameState;
pub use crate::game::Outcome;
use crate::rules::Pit;
use crate::tablebase::EndgameTable;

pub use engine::Searcher;
pub use eval::{Features, Weights};
pub use ordering::Ordering;

/// The deepest iteration a search may ask for.
pub const MAX_DEPTH: u32 = 100;

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

/// When to stop (a [`StopHandle`] can also stop a search from outside).
/// At least one limit is required; the first reached stops
/// the search, which then returns its last completed iteration. Iteration 1
/// always completes, so a move is always returned.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Limits {
    /// Deepest iteration (plies), at most [`MAX_DEPTH`].
    pub depth: Option<u32>,
    /// Nodes (deterministic).
    pub nodes: Option<u64>,
    /// Wall-clock time (not deterministic).
    pub time: Option<Duration>,
}

impl Limits {
    /// Only a depth limit (plies, at most [`MAX_DEPTH`]).
    pub fn depth(depth: u32) -> Limits {
        Limits { depth: Some(depth), ..Limits::default() }
    }
    /// Only a node limit.
    pub fn nodes(nodes: u64) -> Limits {
        Limits { nodes: Some(nodes), ..Limits::default() }
    }
    /// No limit but [`MAX_DEPTH`]: a search that runs until a
    /// [`StopHandle`] stops it (or the result is proven).
    pub fn until_stopped() -> Limits {
        Limits::depth(MAX_DEPTH)
    }
    /// Only a wall-clock limit (results then vary from run to run).
    pub fn time(time: Duration) -> Limits {
        Limits { time: Some(time), ..Limits::default() }
    }
}

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
    /// it, [`Stats::horizon_nodes`] is the perft count. For tests.
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
    /// [`StopHandle::stop`] was called.
    Interrupted,
}

/// Stops a search from another thread: [`Searcher::stop_handle`] gives
/// one, shared with the searcher. The search checks it before each
/// iteration after the first and where it checks the clock (every 1,024
/// nodes, from iteration 2 on), then returns its last completed iteration
/// with [`Stop::Interrupted`]. Like a time limit, a stop makes results
/// depend on timing: a searcher whose search was stopped keeps a different
/// transposition table, so later searches need not repeat a fresh
/// searcher's results (see Determinism in the module documentation).
///
/// A request stays until [`StopHandle::clear`]; the searcher never clears
/// it. Clear it *before* starting the search it is meant for (before the
/// search is handed to its thread), so that a stop sent right after the
/// start is never lost. While it is set, every search returns after its
/// first iteration (one that ends sooner, by its depth limit, a proof or
/// a finished game, ends as it would anyway), and
/// [`Searcher::score_moves`] scores each move at one ply.
///
/// ```
/// use oware::search::{Limits, Options, Searcher, Stop};
///
/// let mut searcher = Searcher::new(Options::default()).unwrap();
/// let stop = searcher.stop_handle();
/// stop.clear(); // before the search starts
/// let thinking = std::thread::spawn(move || searcher.search(&oware::GameState::start(), &Limits::until_stopped()));
/// std::thread::sleep(std::time::Duration::from_millis(20));
/// stop.stop();
/// let result = thinking.join().unwrap().unwrap();
/// assert_eq!(result.stop, Stop::Interrupted);
/// assert!(result.best_move.is_some());
/// ```
#[derive(Clone, Debug, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    /// Asks the search to stop at its next check.
    pub fn stop(&self) {
        self.0.store(true, AtomicOrdering::Relaxed);
    }
    /// Withdraws a request, for the next search.
    pub fn clear(&self) {
        self.0.store(false, AtomicOrdering::Relaxed);
    }
    /// A stop is requested.
    pub fn is_stopped(&self) -> bool {
        self.0.load(AtomicOrdering::Relaxed)
    }
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

/// The value of one move, from [`Searcher::score_moves`].
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

/// A name or value of a search option that cannot be read.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseOptionError {
    /// What was being read ("ordering", "weights").
    pub option: &'static str,
    /// The text that could not be read.
    pub text: String,
    /// What is accepted.
    pub expected: &'static str,
}

impl fmt::Display for ParseOptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} '{}' (expected {})", self.option, self.text, self.expected)
    }
}

impl std::error::Error for ParseOptionError {}

/// Why a search could not run.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum SearchError {
    /// No depth, node or time limit: the search would never stop.
    Unbounded,
    /// A depth above [`MAX_DEPTH`].
    DepthTooLarge {
        /// The depth asked for.
        depth: u32,
    },
    /// The transposition table could not be allocated.
    TableAllocation {
        /// The table size asked for, in MiB.
        megabytes: usize,
    },
    /// Board and stores do not hold 48 seeds.
    SeedCount {
        /// Seeds on the board plus both stores.
        total: u32,
    },
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::Unbounded => {
                write!(f, "the search needs a depth, node or time limit")
            }
            SearchError::DepthTooLarge { depth } => {
                write!(f, "depth {depth} is above the limit {MAX_DEPTH}")
            }
            SearchError::TableAllocation { megabytes } => {
                write!(f, "cannot allocate a transposition table of {megabytes} MiB")
            }
            SearchError::SeedCount { total } => {
                write!(f, "board and stores hold {total} seeds, not 48")
            }
        }
    }
}

impl std::error::Error for SearchError {}

/// The positions of a benchmark file such as `tests/reference/bench-games.txt`
/// (one move string per non-comment line, each from the start state): every
/// state before a move, with its game number (0-based) and history. Moves
/// played after a game was decided are replayed, as the engine does.
pub fn bench_positions(text: &str) -> Result<Vec<(usize, GameState)>, crate::NotationError> {
    let mut positions = Vec::new();
    let games = text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#'));
    for (game, line) in games.enumerate() {
        let mut state = GameState::start();
        for (ply, letter) in line.chars().enumerate() {
            positions.push((game, state.clone()));
            state
                .letter_pit(letter)
                .and_then(|pit| state.play_past_decision(pit))
                .map_err(|error| crate::NotationError::BadMove { column: ply + 1, ply: ply + 1, error })?;
        }
    }
    Ok(positions)
}
