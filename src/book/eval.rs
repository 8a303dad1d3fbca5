//! What values a new book node: the [`LeafEvaluator`] trait,
//! [`SearchEvaluator`] (our search, the books' evaluator) and [`Negamax`],
//! a small deterministic evaluator the tests use.
//!
//! # Contract of an evaluator
//! * [`LeafEvaluator::evaluate`] returns the value of a state **for its side
//!   to move**, in the engine's units: ±1000 for a proven win or loss
//!   ([`WIN`]), heuristic values inside ±999 (25 per seed of store
//!   difference), and a best move.
//! * It must be **deterministic**: the same state gives the same
//!   [`Evaluation`], whichever thread asks and whatever was asked before.
//!   Book growth relies on it for byte-identical books at any thread count.
//!   A searcher that keeps a transposition table between searches must
//!   clear it (or use a fresh one) for every call.
//! * The states it receives carry no history (book nodes are merged by
//!   state key, so they have none).
//! * [`LeafEvaluator::describe`] names the evaluator and its limits on one
//!   line. The book directory records it, and a resumed growth refuses an
//!   evaluator with another description (the values would not mix).

use std::fmt;
use std::sync::Arc;

use crate::game::GameState;
use crate::rules::{Pit, Position, ROW};

/// The value of a won game (engine units); a lost one is `-WIN`.
pub const WIN: i32 = 1000;
/// Heuristic values are clamped into `±HEURISTIC_LIMIT`.
pub const HEURISTIC_LIMIT: i32 = 999;

/// What an evaluator says of one state.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Evaluation {
    /// The value for the side to move, engine units (±1000 won/lost).
    pub score: i32,
    /// The best move (pit 0..6 of the mover), `None` when the game is over.
    pub best_move: Option<Pit>,
    /// The depth of the last completed iteration (0 for a finished game).
    pub depth: u32,
    /// Nodes searched.
    pub nodes: u64,
}

/// An evaluator failed on a state.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct EvaluationError {
    /// The state, in notation.
    pub state: String,
    /// What went wrong, in words.
    pub reason: String,
}

impl fmt::Display for EvaluationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot evaluate {}: {}", self.state, self.reason)
    }
}

impl std::error::Error for EvaluationError {}

/// Values the new leaves of the book (see the module documentation for the
/// contract: side-to-move view, engine units, deterministic).
pub trait LeafEvaluator: Send + Sync {
    /// The value and best move of `state` (which carries no history) for
    /// its side to move. An error stops the growth or match that asked.
    fn evaluate(&self, state: &GameState) -> Result<Evaluation, EvaluationError>;
    /// One line naming the evaluator and its limits, e.g.
    /// `negamax-2014 depth 7`.
    fn describe(&self) -> String;
}

/// The exact value of a finished game for its side to move: ±[`WIN`] or 0.
pub fn terminal_value(state: &GameState) -> Option<i32> {
    let score = state.final_score()?;
    let mover = state.to_move().index();
    Some(outcome(score[mover] as i32, score[1 - mover] as i32))
}

/// The value, for its side to move, of a state at which the game ends by
/// repetition: each player takes the seeds on their own side.
pub fn repetition_value(state: &GameState) -> i32 {
    let mover = state.to_move();
    let position = state.position();
    let own = state.store(mover) as i32 + position.own_seeds() as i32;
    let other = state.store(mover.other()) as i32 + position.opponent_seeds() as i32;
    outcome(own, other)
}

fn outcome(own: i32, other: i32) -> i32 {
    match own.cmp(&other) {
        std::cmp::Ordering::Greater => WIN,
        std::cmp::Ordering::Less => -WIN,
        std::cmp::Ordering::Equal => 0,
    }
}

/// The engine's 2014 heuristic (rules-and-values.md) for the side to move:
/// 25 per seed of store difference; per own pit +28 above 12 seeds, −54
/// empty, −36 holding 1 or 2; the opposite for the opponent's pits.
/// Clamped to ±[`HEURISTIC_LIMIT`].
pub fn heuristic(position: &Position, own_store: u8, other_store: u8) -> i32 {
    let mut score = 25 * (own_store as i32 - other_store as i32);
    for (pit, &seeds) in position.pits().iter().enumerate() {
        let feature = match seeds {
            0 => -54,
            1 | 2 => -36,
            13.. => 28,
            _ => 0,
        };
        score += if pit < ROW { feature } else { -feature };
    }
    score.clamp(-HEURISTIC_LIMIT, HEURISTIC_LIMIT)
}

/// A deterministic placeholder evaluator: alpha-beta negamax on the 2014
/// heuristic, iterative deepening to `depth` plies, optionally stopped by a
/// node limit (the last completed iteration counts; iteration 1 always
/// completes). Captures are tried first, then pits in order. The game's end
/// is exact inside the search (a store above 24, both at 24, a mover without
/// moves); repetitions are not seen (a cycle needs at least 12 plies, and
/// book states carry no history).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Negamax {
    /// The deepest iteration, in plies (`1..=NEGAMAX_MAX_DEPTH`).
    pub depth: u32,
    /// Nodes after which an iteration is abandoned (iteration 1 is never
    /// stopped); `None`: no limit.
    pub max_nodes: Option<u64>,
}

/// The deepest iteration [`Negamax`] accepts.
pub const NEGAMAX_MAX_DEPTH: u32 = 40;

const NEGAMAX_NAME: &str = "negamax-2014";

impl Negamax {
    /// Iterative deepening to `depth` plies, clamped to
    /// `1..=NEGAMAX_MAX_DEPTH`, with no node limit.
    pub fn depth(depth: u32) -> Negamax {
        Negamax { depth: depth.clamp(1, NEGAMAX_MAX_DEPTH), max_nodes: None }
    }

    /// Iterative deepening up to [`NEGAMAX_MAX_DEPTH`] within `nodes`.
    pub fn nodes(nodes: u64) -> Negamax {
        Negamax { depth: NEGAMAX_MAX_DEPTH, max_nodes: Some(nodes) }
    }

    /// Reads what [`LeafEvaluator::describe`] wrote.
    pub fn from_description(text: &str) -> Option<Negamax> {
        let mut words = text.split_whitespace();
        if words.next()? != NEGAMAX_NAME || words.next()? != "depth" {
            return None;
        }
        let depth: u32 = words.next()?.parse().ok()?;
        let max_nodes = match words.next() {
            None => None,
            Some("nodes") => Some(words.next()?.parse().ok()?),
            Some(_) => return None,
        };
        if words.next().is_some() || depth == 0 || depth > NEGAMAX_MAX_DEPTH {
            return None;
        }
        Some(Negamax { depth, max_nodes })
    }

    /// Searches a position (mover's view) with stores `[mover, other]`
    /// that is not over; returns the value, best pit and nodes.
    pub fn search_position(&self, position: &Position, stores: [u8; 2]) -> (i32, Pit, u32, u64) {
        let mut search = AlphaBeta { nodes: 0, limit: u64::MAX, aborted: false };
        let mut best = (heuristic(position, stores[0], stores[1]), 0, 0);
        for depth in 1..=self.depth.max(1) {
            search.limit = if depth == 1 { u64::MAX } else { self.max_nodes.unwrap_or(u64::MAX) };
            let (value, pit) = search.root(position, stores, depth);
            if search.aborted {
                break;
            }
            best = (value, pit, depth);
            if value.abs() >= WIN {
                break; // proven: deeper iterations cannot change it
            }
        }
        (best.0, best.1, best.2, search.nodes)
    }
}

impl LeafEvaluator for Negamax {
    fn evaluate(&self, state: &GameState) -> Result<Evaluation, EvaluationError> {
        if let Some(score) = terminal_value(state) {
            return Ok(Evaluation { score, best_move: None, depth: 0, nodes: 0 });
        }
        let stores = state.stores_mover_first();
        let (score, pit, depth, nodes) = self.search_position(&state.position(), stores);
        Ok(Evaluation { score, best_move: Some(pit), depth, nodes })
    }

    fn describe(&self) -> String {
        match self.max_nodes {
            Some(nodes) => format!("{NEGAMAX_NAME} depth {} nodes {nodes}", self.depth),
            None => format!("{NEGAMAX_NAME} depth {}", self.depth),
        }
    }
}

/// Rebuilds an evaluator from the description a book directory recorded.
/// A search evaluator that names a table is not rebuilt here: the table's
/// path is the caller's (`SearchEvaluator::parse_description`).
pub fn evaluator_from_description(text: &str) -> Option<Box<dyn LeafEvaluator>> {
    if let Some(negamax) = Negamax::from_description(text) {
        return Some(Box::new(negamax));
    }
    if let Some(search) = SearchEvaluator::from_description(text) {
        return Some(Box::new(search));
    }
    None
}

/// The book's evaluator: our alpha-beta search (`crate::search`) with a
/// node limit per leaf, a fresh transposition table each time (so the value
/// depends only on the state: deterministic at any thread count), the
/// fitted evaluation weights, and optionally one of our endgame tables.
///
/// Its description names the table by its size and entries checksum
/// (`search nodes N tablebase ≤S 0xC`): a table's probes are what the
/// search sees of it, so a book resumes only with the same table.
#[derive(Clone)]
pub struct SearchEvaluator {
    /// The node limit of each leaf's search.
    pub nodes: u64,
    tablebase: Option<(Arc<crate::tablebase::Tablebase>, String)>,
}

impl fmt::Debug for SearchEvaluator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

thread_local! {
    /// One searcher per worker thread (the table is reused, cleared), with
    /// the name of the endgame table it probes ("" for none).
    static SEARCHER: std::cell::RefCell<Option<(String, crate::search::Searcher)>> =
        const { std::cell::RefCell::new(None) };
}

impl SearchEvaluator {
    const PREFIX: &'static str = "search nodes ";
    const TABLE: &'static str = " tablebase ";

    /// The search with `nodes` per leaf and no endgame table.
    pub fn new(nodes: u64) -> SearchEvaluator {
        SearchEvaluator { nodes, tablebase: None }
    }

    /// The search with `nodes` per leaf, probing `table`.
    pub fn with_tablebase(nodes: u64, table: Arc<crate::tablebase::Tablebase>) -> SearchEvaluator {
        let name = Self::table_name(&table);
        SearchEvaluator { nodes, tablebase: Some((table, name)) }
    }

    /// How a description names `table`: `≤S 0xC` (its layers and entries
    /// checksum).
    pub fn table_name(table: &crate::tablebase::Tablebase) -> String {
        format!("≤{} 0x{:016X}", table.header().max_seeds, table.header().body_checksum)
    }

    /// Reads what [`LeafEvaluator::describe`] wrote: the node limit (`N >
    /// 0`) and the table's name if one was used; `None` for any other text.
    pub fn parse_description(text: &str) -> Option<(u64, Option<&str>)> {
        let rest = text.strip_prefix(Self::PREFIX)?;
        let (nodes, table) = match rest.split_once(Self::TABLE) {
            Some((nodes, table)) => (nodes, Some(table)),
            None => (rest, None),
        };
        let count: u64 = nodes.parse().ok()?;
        // Exactly what `describe` writes: no sign, no leading zero.
        (count > 0 && count.to_string() == nodes).then_some((count, table))
    }

    /// Reads a description that names no table (`search nodes N`).
    pub fn from_description(text: &str) -> Option<SearchEvaluator> {
        match Self::parse_description(text)? {
            (nodes, None) => Some(SearchEvaluator::new(nodes)),
            (_, Some(_)) => None,
        }
    }
}

impl LeafEvaluator for SearchEvaluator {
    fn evaluate(&self, state: &GameState) -> Result<Evaluation, EvaluationError> {
        use crate::search::{Limits, Options, Searcher};
        let fail = |reason: String| EvaluationError { state: state.to_string(), reason };
        if let Some(score) = terminal_value(state) {
            return Ok(Evaluation { score, best_move: None, depth: 0, nodes: 0 });
        }
        // The searcher depends on the table only (the node limit is the
        // search's argument): a study of several budgets reuses it.
        let table = self.tablebase.as_ref().map_or(String::new(), |(_, name)| name.clone());
        SEARCHER.with(|cell| {
            let mut cell = cell.borrow_mut();
            if cell.as_ref().is_none_or(|(made_for, _)| *made_for != table) {
                let tablebase = self
                    .tablebase
                    .as_ref()
                    .map(|(t, _)| t.clone() as Arc<dyn crate::tablebase::EndgameTable>);
                let searcher = Searcher::new(Options { tablebase, ..Options::default() })
                    .map_err(|e| fail(e.to_string()))?;
                *cell = Some((table, searcher));
            }
            let (_, searcher) = cell.as_mut().expect("set above");
            searcher.clear();
            let result =
                searcher.search(state, &Limits::nodes(self.nodes)).map_err(|e| fail(e.to_string()))?;
            Ok(Evaluation {
                score: result.score.engine_units() as i32,
                best_move: result.best_move,
                depth: result.depth,
                nodes: result.nodes,
            })
        })
    }

    fn describe(&self) -> String {
        match &self.tablebase {
            Some((_, name)) => format!("{}{}{}{name}", Self::PREFIX, self.nodes, Self::TABLE),
            None => format!("{}{}", Self::PREFIX, self.nodes),
        }
    }
}

struct AlphaBeta {
    nodes: u64,
    limit: u64,
    aborted: bool,
}

/// A child of a position: the value if the game ended with the move, else
/// the position and stores to search.
enum Child {
    Over(i32),
    Open(Position, [u8; 2]),
}

/// Plays `pit` from `position` (stores `[mover, other]`): the child for the
/// new mover, or the final value for the player who moved.
#[inline]
fn child(position: &Position, stores: [u8; 2], pit: Pit) -> (Child, u8) {
    let played = position.play(pit);
    let mover = stores[0] + played.captured;
    let other = stores[1];
    let next = played.child;
    let result = if mover > 24 {
        Child::Over(WIN)
    } else if mover == 24 && other == 24 {
        Child::Over(0)
    } else if next.legal_moves().is_empty() {
        // The new mover is stuck: each side takes the seeds of its own row.
        let own = mover as i32 + next.opponent_seeds() as i32;
        let theirs = other as i32 + next.own_seeds() as i32;
        Child::Over(outcome(own, theirs))
    } else {
        Child::Open(next, [other, mover])
    };
    (result, played.captured)
}

impl AlphaBeta {
    fn ordered(position: &Position, stores: [u8; 2]) -> ([(Child, Pit); ROW], usize) {
        let mut children: [(Child, Pit); ROW] = std::array::from_fn(|_| (Child::Over(0), 0));
        let mut captures = [0u8; ROW];
        let mut count = 0;
        for pit in position.legal_moves() {
            let (c, captured) = child(position, stores, pit);
            // Insertion: more seeds captured first, then pit order.
            let mut at = count;
            while at > 0 && captures[at - 1] < captured {
                at -= 1;
            }
            for i in (at..count).rev() {
                children.swap(i, i + 1);
                captures.swap(i, i + 1);
            }
            children[at] = (c, pit);
            captures[at] = captured;
            count += 1;
        }
        (children, count)
    }

    fn root(&mut self, position: &Position, stores: [u8; 2], depth: u32) -> (i32, Pit) {
        self.nodes += 1;
        let (children, count) = Self::ordered(position, stores);
        let mut best = (-WIN - 1, 0);
        let mut alpha = -WIN - 1;
        for (c, pit) in children.iter().take(count) {
            let value = match c {
                Child::Over(v) => *v,
                Child::Open(p, s) => -self.negamax(p, *s, depth - 1, -WIN - 1, -alpha),
            };
            if self.aborted {
                return best;
            }
            if value > best.0 {
                best = (value, *pit);
            }
            alpha = alpha.max(value);
        }
        best
    }

    fn negamax(
        &mut self,
        position: &Position,
        stores: [u8; 2],
        depth: u32,
        mut alpha: i32,
        beta: i32,
    ) -> i32 {
        self.nodes += 1;
        if depth == 0 {
            return heuristic(position, stores[0], stores[1]);
        }
        if self.nodes > self.limit {
            self.aborted = true;
            return 0;
        }
        let (children, count) = Self::ordered(position, stores);
        let mut best = -WIN - 1;
        for (c, _) in children.iter().take(count) {
            let value = match c {
                Child::Over(v) => *v,
                Child::Open(p, s) => -self.negamax(p, *s, depth - 1, -beta, -alpha),
            };
            if self.aborted {
                return 0;
            }
            best = best.max(value);
            alpha = alpha.max(value);
            if alpha >= beta {
                break;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plain minimax without pruning, for comparison.
    fn minimax(position: &Position, stores: [u8; 2], depth: u32) -> i32 {
        if depth == 0 {
            return heuristic(position, stores[0], stores[1]);
        }
        position
            .legal_moves()
            .map(|pit| match child(position, stores, pit).0 {
                Child::Over(v) => v,
                Child::Open(p, s) => -minimax(&p, s, depth - 1),
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn alpha_beta_equals_minimax() {
        let mut state = GameState::start();
        for letter in "FfEeDdCc".chars() {
            let stores = state.stores_mover_first();
            for depth in 1..=4 {
                let (value, _, _, _) = Negamax::depth(depth).search_position(&state.position(), stores);
                assert_eq!(value, minimax(&state.position(), stores, depth), "{state} depth {depth}");
            }
            state.play_letter(letter).unwrap();
        }
    }

    #[test]
    fn start_heuristic_is_zero_and_description_round_trips() {
        assert_eq!(heuristic(&GameState::start().position(), 0, 0), 0);
        for e in [Negamax::depth(5), Negamax { depth: 9, max_nodes: Some(1234) }] {
            assert_eq!(Negamax::from_description(&e.describe()), Some(e));
        }
        assert_eq!(Negamax::from_description("negamax-2014 depth 0"), None);
        assert_eq!(Negamax::from_description("negamax-2014 depth 3 x"), None);
        assert!(evaluator_from_description("search nodes 5").is_some());
        assert!(evaluator_from_description("search nodes 0").is_none());
        let search = SearchEvaluator::new(5000);
        let read = SearchEvaluator::from_description(&search.describe()).unwrap();
        assert_eq!((read.nodes, read.describe()), (5000, "search nodes 5000".to_string()));
        for bad in ["search nodes 05000", "search nodes +5", "search nodes 5 tablebase", "search nodes 5x"] {
            assert!(SearchEvaluator::from_description(bad).is_none(), "{bad}");
        }
        let table = Arc::new(
            crate::tablebase::Tablebase::open(std::path::Path::new("data/endgames-12.owtb.zst")).unwrap(),
        );
        let probing = SearchEvaluator::with_tablebase(7, table);
        let description = probing.describe();
        assert!(description.starts_with("search nodes 7 tablebase ≤12 0x"), "{description}");
        let (nodes, name) = SearchEvaluator::parse_description(&description).unwrap();
        assert_eq!((nodes, name.unwrap().len()), (7, "≤12 0x".len() + 16));
        assert!(SearchEvaluator::from_description(&description).is_none(), "the table must be given");
        assert!(evaluator_from_description(&description).is_none());
    }

    /// Book growth hands leaves to worker threads in any order: a value
    /// must not depend on what the thread's searcher did before.
    #[test]
    fn a_leaf_value_does_not_depend_on_the_threads_earlier_searches() {
        let states: Vec<GameState> = ["FfEe", "CdAbFa", "BaFfCc", "EeDdCcBb"]
            .iter()
            .map(|m| format!("4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves {m}").parse().unwrap())
            .collect();
        let search = SearchEvaluator::new(30_000);
        // Each state first on a thread of its own, then all on one thread
        // in two orders.
        let fresh: Vec<Evaluation> = states
            .iter()
            .map(|s| std::thread::scope(|scope| scope.spawn(|| search.evaluate(s).unwrap()).join().unwrap()))
            .collect();
        let forward: Vec<Evaluation> = states.iter().map(|s| search.evaluate(s).unwrap()).collect();
        let mut backward: Vec<Evaluation> =
            states.iter().rev().map(|s| search.evaluate(s).unwrap()).collect();
        backward.reverse();
        assert_eq!(forward, fresh);
        assert_eq!(backward, fresh);
    }

    #[test]
    fn the_tablebase_settles_what_the_search_alone_cannot() {
        // 10 seeds on the board: a search of 50 nodes only guesses; with
        // the table the value is proven (±1000 or a draw, exactly).
        let state: GameState = "1-0-3-0-0-1-0-2-0-1-0-2-20-18-S".parse().unwrap();
        let table = Arc::new(
            crate::tablebase::Tablebase::open(std::path::Path::new("data/endgames-12.owtb.zst")).unwrap(),
        );
        let bare = SearchEvaluator::new(50).evaluate(&state).unwrap();
        let probing = SearchEvaluator::with_tablebase(50, table.clone()).evaluate(&state).unwrap();
        assert!([-WIN, 0, WIN].contains(&probing.score), "{probing:?}");
        assert_ne!(bare.score, probing.score, "{bare:?} {probing:?}");
        // The thread's searcher is remade when the evaluator changes.
        assert_eq!(SearchEvaluator::new(50).evaluate(&state).unwrap(), bare);
    }

    #[test]
    fn the_search_evaluator_is_deterministic_and_sees_the_game_end() {
        let search = SearchEvaluator::new(20_000);
        let state: GameState = "4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves FfEe".parse().unwrap();
        let first = search.evaluate(&state).unwrap();
        let other = search.evaluate(&GameState::start()).unwrap();
        assert_eq!(search.evaluate(&state).unwrap(), first);
        assert!(first.best_move.is_some() && other.best_move.is_some());
        assert!(first.score.abs() < WIN);
        let over: GameState = "0-0-0-0-0-0-0-0-0-0-0-1-25-22-S".parse().unwrap();
        assert_eq!(search.evaluate(&over).unwrap().score, WIN);
    }

    #[test]
    fn node_limit_keeps_the_last_completed_iteration() {
        let state = GameState::start();
        let limited = Negamax::nodes(2_000).evaluate(&state).unwrap();
        assert!(limited.depth >= 2);
        let fixed = Negamax::depth(limited.depth).evaluate(&state).unwrap();
        assert_eq!(limited.score, fixed.score);
        assert_eq!(limited.best_move, fixed.best_move);
    }
}
