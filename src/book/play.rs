//! Matches between engines with and without books: what the `match` binary
//! runs.
//!
//! A player is an engine ([`Mover`]: our search with its own node or time
//! limit and its own endgame table, or any [`LeafEvaluator`]), optionally
//! with an opening book and the [`BookRule`] it uses the book by. In a state
//! its book knows, the player picks among the book moves the rule allows;
//! elsewhere, or when the rule says to leave the book, it plays its
//! engine's move.
//!
//! # Openings and the standard error
//! Two deterministic engines from the start position replay the same few
//! games. A match therefore plays a set of distinct openings
//! ([`opening_set`]: every distinct position a few plies from the start,
//! the balanced ones, a seeded sample), each twice with colours swapped.
//! The two games of an opening are not independent (a lopsided opening
//! gives one point to each side), so the standard error of the score is
//! clustered by opening:
//!
//! ```text
//! SE² = G / (G − 1) · Σ_g (Σ_{i ∈ g} (x_i − x̄))² / N²
//! ```
//!
//! over `G` openings and `N` games with points `x_i` (the cluster-robust
//! variance of a mean; with one game per cluster it is the usual `s²/N`).
//!
//! # Determinism
//! Each game gets fresh searchers (their transposition tables persist from
//! move to move within the game, as in a real engine) and a random stream
//! derived from the match seed and its own number only. Games run on every
//! thread (rayon); with node limits the report is the same whatever the
//! thread count. A time limit depends on the clock.

use std::sync::Arc;

use rayon::prelude::*;

use super::error::BookError;
use super::eval::{terminal_value, EvaluationError, LeafEvaluator};
use super::probe::{best_move, BookMove, BookSource};
use crate::game::{GameEnd, GameState, Side};
use crate::rank::state_key;
use crate::rules::Pit;
use crate::search::{Limits, Options, SearchError, Searcher};
use crate::tablebase::EndgameTable;

/// How a player chooses its moves outside the book.
#[derive(Clone)]
pub enum Mover<'a> {
    /// Our search: a fresh transposition table for every game, kept from
    /// move to move within it; the game's history is searched with the
    /// position (repetitions are seen).
    Search {
        /// The limit of each move's search.
        limits: Limits,
        /// The endgame table the search probes, if any.
        tablebase: Option<Arc<dyn EndgameTable>>,
    },
    /// Any evaluator's best move (it sees the state without its history).
    Evaluator(&'a dyn LeafEvaluator),
}

impl Mover<'_> {
    /// One line naming the engine and its limit.
    pub fn describe(&self) -> String {
        match self {
            Mover::Search { limits, tablebase } => {
                let mut text = String::from("search");
                if let Some(nodes) = limits.nodes {
                    text += &format!(" {nodes} nodes");
                }
                if let Some(time) = limits.time {
                    text += &format!(" {} ms", time.as_millis());
                }
                if let Some(depth) = limits.depth {
                    text += &format!(" depth {depth}");
                }
                match tablebase {
                    Some(t) => text + &format!(" per move, tablebase ≤ {} seeds", t.max_seeds()),
                    None => text + " per move, no tablebase",
                }
            }
            Mover::Evaluator(e) => e.describe(),
        }
    }
}

/// How a player uses its book. The default is the rule that measured best
/// with the shipped book (README, "Books that win games"): the best book
/// move only, until the book says nothing.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct BookRule {
    /// Book moves scored within this many engine units of the best are
    /// candidates (0: only the best, ties broken at random). The engine
    /// plays with 10.
    pub margin: f64,
    /// Leave the book when the best book move's count ([`BookMove::count`]:
    /// 1 + the expansions through it in our books, the visits in DOE
    /// books) is below this; candidates need it too. Books without counts
    /// ignore it.
    pub min_count: u64,
    /// The same with the depth of book beneath the move (plies along its
    /// principal line, the move included; our books only).
    pub min_depth: u32,
}

impl Default for BookRule {
    fn default() -> BookRule {
        BookRule { margin: 0.0, min_count: 0, min_depth: 0 }
    }
}

impl BookRule {
    /// The moves this rule lets a player pick from `moves`: empty when the
    /// book says nothing or the rule says to leave it. A move whose value
    /// is not this game's ([`BookMove::repetition_caveat`]) is never
    /// picked, and the book is left when the best move is one.
    pub fn candidates(&self, moves: &[BookMove]) -> Vec<Pit> {
        let trusted = |m: &BookMove| {
            m.count.is_none_or(|c| c >= self.min_count)
                && m.depth.is_none_or(|d| d >= self.min_depth)
                && m.repetition_caveat != Some(true)
        };
        let Some(best) = best_move(moves) else {
            return Vec::new();
        };
        if !trusted(best) {
            return Vec::new();
        }
        moves.iter().filter(|m| m.score >= best.score - self.margin && trusted(m)).map(|m| m.pit).collect()
    }
}

/// One side of a match: an engine, optionally with a book.
#[derive(Clone)]
pub struct Player<'a> {
    /// A label for reports; it plays no part in the games.
    pub name: String,
    /// Plays its move wherever the book has none.
    pub mover: Mover<'a>,
    /// The book consulted first, if any, at every move: a player that left
    /// it comes back when a transposition returns to a book position its
    /// rule trusts.
    pub book: Option<&'a dyn BookSource>,
    /// How the book is used.
    pub rule: BookRule,
}

/// How a match is played.
#[derive(Clone, Debug)]
pub struct MatchOptions {
    /// The openings: each is played twice, player A with South first.
    /// Each is a list of pits (0..6, the mover's), played from the start.
    pub openings: Vec<Vec<Pit>>,
    /// The seed the players' random choices among book moves derive from.
    pub seed: u64,
    /// A game still running after this many plies (the opening's
    /// included) ends as if by repetition (each side takes its own seeds).
    /// Above every opening's length ([`run_match`] refuses it otherwise).
    pub max_plies: usize,
}

/// One game of a match.
#[derive(Clone, PartialEq, Debug)]
pub struct GameRecord {
    /// The opening it was played from (an index into the options').
    pub opening: usize,
    /// How many of `moves` were the opening's.
    pub opening_plies: usize,
    /// Player A had South (moved first).
    pub a_south: bool,
    /// The move letters played from the start position, the opening's
    /// included.
    pub moves: String,
    /// Final seeds of South and North.
    pub score: [u32; 2],
    /// 1, ½ or 0 for player A.
    pub points_a: f64,
    /// Moves each player (A, B) took from its book.
    pub book_moves: [usize; 2],
    /// How the game ended; `None` when it was adjudicated after
    /// `max_plies`.
    pub end: Option<GameEnd>,
}

/// A match: every game and A's score.
#[derive(Clone, PartialEq, Debug)]
pub struct MatchReport {
    /// Every game: opening 0 with A South, then A North, then opening 1...
    pub games: Vec<GameRecord>,
    /// Games player A won.
    pub wins: usize,
    /// Games drawn.
    pub draws: usize,
    /// Games player A lost.
    pub losses: usize,
    /// A's mean points per game.
    pub score: f64,
    /// Standard error of that mean, clustered by opening (see the module
    /// documentation); `None` with fewer than two openings (unknown).
    pub standard_error: Option<f64>,
    /// Mean book moves per game of A and of B.
    pub book_moves: [f64; 2],
}

/// A small deterministic generator (splitmix64).
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator whose sequence depends only on `seed`.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }
    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A line of an opening, the state it reaches and the value of its last
/// move for the player who made it.
type Line = (Vec<Pit>, GameState, i32);

/// How [`opening_set`] picks openings.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct OpeningSetOptions {
    /// Plies from the start (at most [`MAX_OPENING_PLIES`]).
    pub plies: usize,
    /// Openings to pick (fewer if fewer qualify).
    pub count: usize,
    /// Keep only positions whose search value (for the side to move) is
    /// within this many engine units of 0.
    pub max_imbalance: i32,
    /// Extend a line only by moves whose search value is within this many
    /// engine units of the best move's (plausible moves, as a player
    /// would make; `i32::MAX`: every move).
    pub max_move_loss: i32,
    /// The depth of those searches (fixed depth: deterministic).
    pub depth: u32,
    /// The seed of the sample.
    pub seed: u64,
}

/// The longest openings [`opening_set`] makes (each ply multiplies the
/// positions it searches by up to six).
pub const MAX_OPENING_PLIES: usize = 8;

impl Default for OpeningSetOptions {
    fn default() -> OpeningSetOptions {
        OpeningSetOptions { plies: 4, count: 200, max_imbalance: 50, max_move_loss: 50, depth: 10, seed: 1 }
    }
}

/// The openings [`opening_set`] picked.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct OpeningSet {
    /// The sample, each a list of pits (0..6, the mover's) from the start,
    /// in pit order of their moves.
    pub openings: Vec<Vec<Pit>>,
    /// How many distinct balanced positions qualified (the sample's
    /// population).
    pub qualifying: usize,
}

/// A set of distinct, balanced openings: every distinct state `plies`
/// plies from the start along plausible moves (each within
/// `max_move_loss` of the best by a fixed-depth search; the first move
/// sequence in pit order that reaches a state names it), those the search
/// values within `max_imbalance` of 0, and of those a seeded sample of
/// `count`, in pit order of their moves.
pub fn opening_set(options: &OpeningSetOptions) -> Result<OpeningSet, BookError> {
    if options.plies > MAX_OPENING_PLIES {
        return Err(BookError::BadOption(format!(
            "openings of {} plies: at most {MAX_OPENING_PLIES} (each ply searches up to six times more positions)",
            options.plies
        )));
    }
    // A searcher per rayon job (`map_init`), cleared before each search, so
    // each value is a fresh searcher's (deterministic); a searcher made and
    // dropped per position left the allocator holding gigabytes.
    let searcher = || Searcher::new(Options { table_megabytes: 1, ..Options::default() });
    let value = |searcher: &mut Result<Searcher, SearchError>, state: &GameState| -> Result<i32, BookError> {
        let searcher = searcher.as_mut().map_err(|e| fail(state, e.to_string()))?;
        searcher.clear();
        let result =
            searcher.search(state, &Limits::depth(options.depth)).map_err(|e| fail(state, e.to_string()))?;
        Ok(i32::from(result.score.engine_units()))
    };
    let mut frontier: Vec<(Vec<Pit>, GameState)> = vec![(Vec::new(), GameState::start())];
    let mut seen = std::collections::HashSet::new();
    for _ in 0..options.plies {
        // Every child with the value of its move for the mover.
        let children: Vec<Result<Vec<Line>, BookError>> = frontier
            .par_iter()
            .map_init(searcher, |searcher, (moves, state)| {
                let mut out = Vec::new();
                for pit in state.legal_moves() {
                    let mut child = state.clone();
                    child.play(pit).map_err(|e| fail(state, e.to_string()))?;
                    let loss_matters = options.max_move_loss != i32::MAX;
                    let worth = match terminal_value(&child) {
                        Some(exact) => -exact,
                        None if loss_matters => -value(searcher, &child)?,
                        None => 0,
                    };
                    let mut line = moves.clone();
                    line.push(pit);
                    out.push((line, child, worth));
                }
                Ok(out)
            })
            .collect();
        let mut next = Vec::new();
        for family in children {
            let family = family?;
            let best = family.iter().map(|c| c.2).max().unwrap_or(0);
            for (line, child, worth) in family {
                let plausible =
                    options.max_move_loss == i32::MAX || worth >= best.saturating_sub(options.max_move_loss);
                if plausible && !child.is_over() && seen.insert(state_key(&child)) {
                    next.push((line, child));
                }
            }
        }
        frontier = next;
    }
    let balanced: Vec<Result<Option<Vec<Pit>>, BookError>> = frontier
        .into_par_iter()
        .map_init(searcher, |searcher, (moves, state)| {
            Ok((value(searcher, &state)?.abs() <= options.max_imbalance).then_some(moves))
        })
        .collect();
    let mut kept = Vec::new();
    for entry in balanced {
        kept.extend(entry?);
    }
    let qualifying = kept.len();
    let mut rng = SplitMix::new(options.seed);
    for i in 0..kept.len().min(options.count) {
        let j = i + rng.below(kept.len() - i);
        kept.swap(i, j);
    }
    kept.truncate(options.count);
    kept.sort();
    Ok(OpeningSet { openings: kept, qualifying })
}

fn fail(state: &GameState, reason: String) -> BookError {
    BookError::Evaluation(EvaluationError { state: state.to_string(), reason })
}

/// A player's engine for one game.
enum GameMover<'a> {
    Search(Box<Searcher>, Limits),
    Evaluator(&'a dyn LeafEvaluator),
}

impl GameMover<'_> {
    fn new<'a>(mover: &Mover<'a>) -> Result<GameMover<'a>, BookError> {
        Ok(match mover {
            Mover::Search { limits, tablebase } => {
                let options = Options { tablebase: tablebase.clone(), ..Options::default() };
                let searcher =
                    Searcher::new(options).map_err(|e| fail(&GameState::start(), e.to_string()))?;
                GameMover::Search(Box::new(searcher), *limits)
            }
            Mover::Evaluator(e) => GameMover::Evaluator(*e),
        })
    }

    fn best_move(&mut self, state: &GameState) -> Result<Pit, BookError> {
        let (best, who) = match self {
            GameMover::Search(searcher, limits) => {
                let result = searcher.search(state, limits).map_err(|e| fail(state, e.to_string()))?;
                (result.best_move, "the search".to_string())
            }
            GameMover::Evaluator(e) => {
                (e.evaluate(state).map_err(BookError::Evaluation)?.best_move, e.describe())
            }
        };
        match best {
            Some(pit) if state.legal_moves().contains(pit) => Ok(pit),
            _ => Err(fail(state, format!("{who} returned no legal move"))),
        }
    }
}

/// The move `player` makes in `state`, and whether it came from the book.
fn choose(
    player: &Player,
    mover: &mut GameMover,
    state: &GameState,
    rng: &mut SplitMix,
) -> Result<(Pit, bool), BookError> {
    if let Some(book) = player.book {
        let legal = state.legal_moves();
        let mut candidates = player.rule.candidates(&book.book_moves(state));
        candidates.retain(|&pit| legal.contains(pit));
        if !candidates.is_empty() {
            return Ok((candidates[rng.below(candidates.len())], true));
        }
    }
    Ok((mover.best_move(state)?, false))
}

/// Plays game `game` of a match: opening `game / 2`, A with South when
/// `game` is even, its random stream from the match seed and `game`.
pub fn play_game(
    a: &Player,
    b: &Player,
    options: &MatchOptions,
    game: usize,
) -> Result<GameRecord, BookError> {
    let index = game / 2;
    let opening = &options.openings[index];
    let a_south = game.is_multiple_of(2);
    let mut rng = SplitMix::new(game_seed(options.seed, game));
    let mut movers = [GameMover::new(&a.mover)?, GameMover::new(&b.mover)?];
    let mut state = GameState::start();
    let mut moves = String::new();
    let mut book_moves = [0usize; 2];
    let mut plies = 0;
    while !state.is_over() && plies < options.max_plies {
        let a_to_move = (state.to_move() == Side::South) == a_south;
        let who = usize::from(!a_to_move);
        let pit = match opening.get(plies) {
            Some(&pit) => pit,
            None => {
                let player = if a_to_move { a } else { b };
                let (pit, from_book) = choose(player, &mut movers[who], &state, &mut rng)?;
                book_moves[who] += usize::from(from_book);
                pit
            }
        };
        moves.push(state.to_move().move_letter(pit));
        state.play(pit).map_err(|e| fail(&state, e.to_string()))?;
        plies += 1;
    }
    let score = final_seeds(&state);
    Ok(GameRecord {
        opening: index,
        opening_plies: opening.len().min(plies),
        a_south,
        moves,
        score,
        points_a: points(a_south, score),
        book_moves,
        end: state.end(),
    })
}

/// The seeds South and North end a game with: the final score of a
/// finished game, and for one stopped after the match's last ply, each
/// side's store and its own row (as a repetition would give).
pub(crate) fn final_seeds(state: &GameState) -> [u32; 2] {
    state.final_score().unwrap_or_else(|| {
        let p = state.position();
        let mut s = [state.store(Side::South) as u32, state.store(Side::North) as u32];
        s[state.to_move().index()] += p.own_seeds();
        s[state.to_move().other().index()] += p.opponent_seeds();
        s
    })
}

/// A's and B's seeds of final seeds `score` (South, North).
pub fn a_and_b_seeds(a_south: bool, score: [u32; 2]) -> (u32, u32) {
    if a_south {
        (score[0], score[1])
    } else {
        (score[1], score[0])
    }
}

/// Player A's points (1, ½ or 0) for final seeds `score` (South, North).
pub(crate) fn points(a_south: bool, score: [u32; 2]) -> f64 {
    let (a_seeds, b_seeds) = a_and_b_seeds(a_south, score);
    match a_seeds.cmp(&b_seeds) {
        std::cmp::Ordering::Greater => 1.0,
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Less => 0.0,
    }
}

/// The seed of game `game` of a match seeded with `seed`.
fn game_seed(seed: u64, game: usize) -> u64 {
    SplitMix::new(seed ^ (game as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64()
}

/// Plays every opening twice (A South, then A North) on every thread;
/// `log` sees each game as it ends (in the order they end).
pub fn run_match(
    a: &Player,
    b: &Player,
    options: &MatchOptions,
    log: &(dyn Fn(&GameRecord) + Sync),
) -> Result<MatchReport, BookError> {
    if let Some(long) = options.openings.iter().find(|o| o.len() >= options.max_plies) {
        return Err(BookError::BadOption(format!(
            "a game stopped after {} plies would end inside its opening of {} plies",
            options.max_plies,
            long.len()
        )));
    }
    let outcomes: Vec<Result<GameRecord, BookError>> = (0..options.openings.len() * 2)
        .into_par_iter()
        .map(|game| {
            let record = play_game(a, b, options, game)?;
            log(&record);
            Ok(record)
        })
        .collect();
    let games = outcomes.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(report(games))
}

/// The mean of per-game values `(opening, x)` and its standard error
/// clustered by opening (the module documentation's formula); the error is
/// `None` with fewer than two openings.
pub fn clustered_mean(values: &[(usize, f64)]) -> (f64, Option<f64>) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().map(|&(_, x)| x).sum::<f64>() / n;
    let mut residuals: std::collections::BTreeMap<usize, f64> = std::collections::BTreeMap::new();
    for &(opening, x) in values {
        *residuals.entry(opening).or_default() += x - mean;
    }
    let clusters = residuals.len() as f64;
    let standard_error = (clusters > 1.0).then(|| {
        let sum: f64 = residuals.values().map(|r| r * r).sum();
        (clusters / (clusters - 1.0) * sum).sqrt() / n
    });
    (mean, standard_error)
}

/// The totals, the clustered standard error and the book use of `games`.
pub fn report(games: Vec<GameRecord>) -> MatchReport {
    let n = games.len().max(1) as f64;
    let points: Vec<(usize, f64)> = games.iter().map(|g| (g.opening, g.points_a)).collect();
    let (score, standard_error) = clustered_mean(&points);
    let book = |who: usize| games.iter().map(|g| g.book_moves[who]).sum::<usize>() as f64 / n;
    MatchReport {
        wins: games.iter().filter(|g| g.points_a == 1.0).count(),
        draws: games.iter().filter(|g| g.points_a == 0.5).count(),
        losses: games.iter().filter(|g| g.points_a == 0.0).count(),
        standard_error,
        score,
        book_moves: [book(0), book(1)],
        games,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(opening: usize, points_a: f64) -> GameRecord {
        GameRecord {
            opening,
            opening_plies: 0,
            a_south: true,
            moves: String::new(),
            score: [24, 24],
            points_a,
            book_moves: [2, 0],
            end: None,
        }
    }

    #[test]
    fn the_standard_error_is_clustered_by_opening() {
        // Each opening splits its pair: the mean is exactly ½ and every
        // cluster's residual is 0, whereas unclustered it would be ~0.26.
        let split: Vec<GameRecord> = (0..10).flat_map(|o| [game(o, 1.0), game(o, 0.0)]).collect();
        let r = report(split);
        assert_eq!((r.score, r.standard_error), (0.5, Some(0.0)));
        assert_eq!((r.wins, r.draws, r.losses), (10, 0, 10));
        // Both games of an opening agree: the pairs are the units, so the
        // error is the error of 10 independent results, √(G/(G−1)·Σ4·¼)/20.
        let agree: Vec<GameRecord> = (0..10)
            .flat_map(|o| {
                let p = if o < 5 { 1.0 } else { 0.0 };
                [game(o, p), game(o, p)]
            })
            .collect();
        let r = report(agree);
        let expected = (10.0f64 / 9.0 * 10.0 * 1.0).sqrt() / 20.0;
        assert!((r.standard_error.unwrap() - expected).abs() < 1e-12, "{:?} {}", r.standard_error, expected);
        assert_eq!(r.book_moves, [2.0, 0.0]);
    }

    #[test]
    fn one_game_per_opening_gives_the_usual_standard_error() {
        let games: Vec<GameRecord> = (0..8).map(|o| game(o, [1.0, 0.5, 0.0, 1.0][o % 4])).collect();
        let r = report(games.clone());
        let mean = r.score;
        let s2 = games.iter().map(|g| (g.points_a - mean).powi(2)).sum::<f64>() / 7.0;
        assert!((r.standard_error.unwrap() - (s2 / 8.0).sqrt()).abs() < 1e-12);
        assert_eq!(report(games[..1].to_vec()).standard_error, None, "one opening: unknown");
    }

    #[test]
    fn the_rule_leaves_the_book_below_its_count_and_keeps_the_margin() {
        let m = |pit, score, count| BookMove { pit, score, count, depth: None, repetition_caveat: None };
        let moves = [m(0, 10.0, Some(50)), m(1, 4.0, Some(500)), m(2, -20.0, Some(900))];
        let rule = |margin, min_count| BookRule { margin, min_count, min_depth: 0 };
        assert_eq!(rule(0.0, 0).candidates(&moves), vec![0]);
        assert_eq!(rule(10.0, 0).candidates(&moves), vec![0, 1]);
        assert_eq!(rule(10.0, 100).candidates(&moves), Vec::<Pit>::new(), "the best is too thin");
        assert_eq!(rule(10.0, 50).candidates(&moves), vec![0, 1]);
        let uncounted = [m(3, 1.0, None), m(4, 2.0, None)];
        assert_eq!(rule(0.0, 1_000).candidates(&uncounted), vec![4], "no counts: the margin only");
        assert!(rule(10.0, 0).candidates(&[]).is_empty());
        let deep = |pit, score, depth| BookMove {
            pit,
            score,
            count: None,
            depth: Some(depth),
            repetition_caveat: None,
        };
        let moves = [deep(0, 10.0, 3), deep(1, 8.0, 9), deep(2, 0.0, u32::MAX)];
        let by_depth = |min_depth| BookRule { margin: 10.0, min_count: 0, min_depth };
        assert_eq!(by_depth(3).candidates(&moves), vec![0, 1, 2]);
        assert_eq!(by_depth(4).candidates(&moves), Vec::<Pit>::new(), "the best is too shallow");
        assert_eq!(by_depth(0).candidates(&[deep(0, 1.0, 1), deep(1, 1.0, 9)]), vec![0, 1]);
        assert_eq!(
            by_depth(5).candidates(&[deep(0, 1.0, 9), deep(1, 1.0, 2)]),
            vec![0],
            "shallow candidates are dropped"
        );
    }

    #[test]
    fn the_opening_set_is_distinct_balanced_and_seeded() {
        let options = OpeningSetOptions {
            plies: 2,
            count: 20,
            max_imbalance: 1000,
            max_move_loss: i32::MAX,
            depth: 2,
            seed: 7,
        };
        let picked = opening_set(&options).unwrap();
        assert_eq!(picked.qualifying, 36, "36 two-ply openings qualify");
        let all = picked.openings;
        assert_eq!(all.len(), 20, "36 two-ply openings, 20 picked");
        let keys: std::collections::HashSet<u64> = all
            .iter()
            .map(|moves| {
                let mut s = GameState::start();
                for &p in moves {
                    s.play(p).unwrap();
                }
                state_key(&s)
            })
            .collect();
        assert_eq!(keys.len(), 20, "distinct positions");
        assert_eq!(opening_set(&options).unwrap().openings, all, "seeded");
        assert_ne!(opening_set(&OpeningSetOptions { seed: 8, ..options }).unwrap().openings, all);
        let every = opening_set(&OpeningSetOptions { count: 1000, ..options }).unwrap().openings;
        assert_eq!(every.len(), 36);
        let tight =
            opening_set(&OpeningSetOptions { count: 1000, max_imbalance: 0, ..options }).unwrap().openings;
        assert!(tight.len() < 36 && tight.iter().all(|o| every.contains(o)));
        // Only best moves (ties kept): South's best first moves, each
        // answered by North's best replies.
        let best =
            opening_set(&OpeningSetOptions { count: 1000, max_move_loss: 0, ..options }).unwrap().openings;
        assert!(!best.is_empty() && best.len() < 36 && best.iter().all(|o| every.contains(o)), "{best:?}");
        let plausible =
            opening_set(&OpeningSetOptions { count: 1000, max_move_loss: 100, ..options }).unwrap().openings;
        assert!(best.iter().all(|o| plausible.contains(o)) && plausible.iter().all(|o| every.contains(o)));
        assert!(best.len() < plausible.len(), "{best:?} {plausible:?}");
    }
}
