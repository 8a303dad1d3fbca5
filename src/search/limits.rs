//! When a search stops: its limits, and the handle that stops it from
//! outside.

use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::time::Duration;

/// The deepest iteration a search may ask for.
pub const MAX_DEPTH: u32 = 100;

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

/// Stops a search from another thread: [`super::Searcher::stop_handle`] gives
/// one, shared with the searcher. The search checks it before each
/// iteration after the first and where it checks the clock (every 1,024
/// nodes, from iteration 2 on), then returns its last completed iteration
/// with [`super::Stop::Interrupted`]. Like a time limit, a stop makes results
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
/// [`super::Searcher::score_moves`] scores each move at one ply.
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

/// "depth 13", "100,000 nodes", "2.5 s", joined by " or " ("no limit"
/// when none is set).
impl std::fmt::Display for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(depth) = self.depth {
            parts.push(format!("depth {depth}"));
        }
        if let Some(nodes) = self.nodes {
            parts.push(format!("{} nodes", crate::text::thousands(nodes)));
        }
        if let Some(time) = self.time {
            parts.push(format!("{} s", time.as_secs_f64()));
        }
        if parts.is_empty() {
            return f.write_str("no limit");
        }
        f.write_str(&parts.join(" or "))
    }
}
