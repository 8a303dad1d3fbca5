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
mod error;
pub mod eval;
mod limits;
mod options;
pub mod ordering;
mod result;
mod tt;

use crate::error::NotationError;
use crate::game::GameState;

pub use crate::game::Outcome;
pub use engine::Searcher;
pub use error::{ParseOptionError, SearchError};
pub use eval::{Features, Weights};
pub use limits::{Limits, StopHandle, MAX_DEPTH};
pub use options::Options;
pub use ordering::Ordering;
pub use result::{MoveScore, Score, SearchResult, Stats, Stop};

/// The positions of a benchmark file such as `tests/reference/bench-games.txt`
/// (one move string per non-comment line, each from the start state): every
/// state before a move, with its game number (0-based) and history. Moves
/// played after a game was decided are replayed, as the engine does.
pub fn bench_positions(text: &str) -> Result<Vec<(usize, GameState)>, NotationError> {
    let mut positions = Vec::new();
    let games = text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#'));
    for (game, line) in games.enumerate() {
        let mut state = GameState::start();
        for (ply, letter) in line.chars().enumerate() {
            positions.push((game, state.clone()));
            state
                .letter_pit(letter)
                .and_then(|pit| state.play_past_decision(pit))
                .map_err(|error| NotationError::BadMove { column: ply + 1, ply: ply + 1, error })?;
        }
    }
    Ok(positions)
}
