//! Matches between engines with and without books: what the `match` binary
//! runs.
//!
//! A player is an engine (any [`LeafEvaluator`]: its best move is the move
//! played) and optionally a book. In a state the book knows, the player
//! picks uniformly at random among the book moves scored within `margin`
//! of the best (the engine's rule, margin 10); elsewhere it plays the
//! engine's move. Games start from the start position; the first
//! `random_plies` plies (2 by default) are uniformly random, because two
//! deterministic engines would otherwise replay a handful of games; games
//! `2k` and `2k + 1` share their random stream and swap colours, so each
//! pair plays the same opening from both sides. Everything is seeded: a
//! match is reproducible.

use super::eval::LeafEvaluator;
use super::probe::{best_move, BookSource};
use super::BookError;
use crate::game::{GameEnd, GameState, Side};
use crate::rules::Pit;

/// One side of a match: an engine, optionally with a book.
pub struct Player<'a> {
    /// A label for reports; it plays no part in the games.
    pub name: String,
    /// Plays its best move wherever the book has none.
    pub engine: &'a dyn LeafEvaluator,
    /// The book consulted first, if any.
    pub book: Option<&'a dyn BookSource>,
}

/// How a match is played.
#[derive(Clone, Copy, Debug)]
pub struct MatchOptions {
    /// Games to play; consecutive pairs share their opening and swap
    /// colours, so an even number is fairer.
    pub games: usize,
    /// The seed every random choice of the match derives from.
    pub seed: u64,
    /// Book moves within this many engine units of the best are played.
    pub margin: f64,
    /// Uniformly random plies before the players take over.
    pub random_plies: usize,
    /// A game still running after this many plies ends as if by
    /// repetition (each side takes its own seeds).
    pub max_plies: usize,
}

impl Default for MatchOptions {
    fn default() -> MatchOptions {
        MatchOptions { games: 20, seed: 1, margin: 10.0, random_plies: 2, max_plies: 400 }
    }
}

/// One game of a match.
#[derive(Clone, PartialEq, Debug)]
pub struct GameRecord {
    /// Player A had South (moved first).
    pub a_south: bool,
    /// The move letters played from the start position.
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
    /// Every game, in the order played.
    pub games: Vec<GameRecord>,
    /// Games player A won.
    pub wins: usize,
    /// Games drawn.
    pub draws: usize,
    /// Games player A lost.
    pub losses: usize,
    /// A's mean points per game.
    pub score: f64,
    /// Standard error of that mean (sample deviation / √games).
    pub standard_error: f64,
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

/// The move `player` makes in `state`, and whether it came from the book.
fn choose(
    player: &Player,
    state: &GameState,
    margin: f64,
    rng: &mut SplitMix,
) -> Result<(Pit, bool), BookError> {
    if let Some(book) = player.book {
        let moves = book.book_moves(state);
        if let Some(best) = best_move(&moves) {
            let choices: Vec<Pit> =
                moves.iter().filter(|m| m.score >= best.score - margin).map(|m| m.pit).collect();
            if !choices.is_empty() {
                return Ok((choices[rng.below(choices.len())], true));
            }
        }
    }
    let eval = player.engine.evaluate(state).map_err(BookError::Evaluation)?;
    match eval.best_move {
        Some(pit) if state.legal_moves().contains(pit) => Ok((pit, false)),
        _ => Err(BookError::Evaluation(super::eval::EvaluationError {
            state: state.to_string(),
            reason: format!("{} returned no legal move", player.engine.describe()),
        })),
    }
}

/// Plays one game; `a_south` says which colour player A has.
pub fn play_game(
    a: &Player,
    b: &Player,
    a_south: bool,
    options: &MatchOptions,
    seed: u64,
) -> Result<GameRecord, BookError> {
    let mut rng = SplitMix::new(seed);
    let mut state = GameState::start();
    let mut moves = String::new();
    let mut book_moves = [0usize; 2];
    let mut plies = 0;
    while !state.is_over() && plies < options.max_plies {
        let a_to_move = (state.to_move() == Side::South) == a_south;
        let player = if a_to_move { a } else { b };
        let pit = if plies < options.random_plies {
            let legal: Vec<Pit> = state.legal_moves().collect();
            legal[rng.below(legal.len())]
        } else {
            let (pit, from_book) = choose(player, &state, options.margin, &mut rng)?;
            if from_book {
                book_moves[usize::from(!a_to_move)] += 1;
            }
            pit
        };
        moves.push(state.to_move().move_letter(pit));
        state.play(pit).map_err(|e| {
            BookError::Evaluation(super::eval::EvaluationError {
                state: state.to_string(),
                reason: e.to_string(),
            })
        })?;
        plies += 1;
    }
    let score = state.final_score().unwrap_or_else(|| {
        // Adjudicated: each side takes the seeds of its own row.
        let p = state.position();
        let mut s = [state.store(Side::South) as u32, state.store(Side::North) as u32];
        s[state.to_move().index()] += p.own_seeds();
        s[state.to_move().other().index()] += p.opponent_seeds();
        s
    });
    let (a_seeds, b_seeds) = if a_south { (score[0], score[1]) } else { (score[1], score[0]) };
    let points_a = match a_seeds.cmp(&b_seeds) {
        std::cmp::Ordering::Greater => 1.0,
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Less => 0.0,
    };
    Ok(GameRecord { a_south, moves, score, points_a, book_moves, end: state.end() })
}

/// Plays `options.games` games, A with South in the even ones; `log` sees
/// each game as it ends.
pub fn run_match(
    a: &Player,
    b: &Player,
    options: &MatchOptions,
    log: &mut dyn FnMut(usize, &GameRecord),
) -> Result<MatchReport, BookError> {
    let mut games = Vec::with_capacity(options.games);
    let mut pair_seeds = SplitMix::new(options.seed);
    let mut seed = 0;
    for i in 0..options.games {
        if i % 2 == 0 {
            seed = pair_seeds.next_u64();
        }
        let record = play_game(a, b, i % 2 == 0, options, seed)?;
        log(i, &record);
        games.push(record);
    }
    let n = games.len().max(1) as f64;
    let score = games.iter().map(|g| g.points_a).sum::<f64>() / n;
    let variance = if games.len() > 1 {
        games.iter().map(|g| (g.points_a - score).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    Ok(MatchReport {
        wins: games.iter().filter(|g| g.points_a == 1.0).count(),
        draws: games.iter().filter(|g| g.points_a == 0.5).count(),
        losses: games.iter().filter(|g| g.points_a == 0.0).count(),
        standard_error: (variance / n).sqrt(),
        score,
        games,
    })
}
