//! A match's games on disk, and two matches compared game by game.
//!
//! Two setups played from the same openings with the same colours meet the
//! same lopsided openings: compared game by game, the openings' own share
//! of each score cancels, and a difference the two separate standard
//! errors would hide can show ([`paired_difference`]).
//!
//! # Layout
//!
//! UTF-8 text, lines ending in `\n`. The first line is the signature
//! `oware-match-games 1`; then one line per game in game order (opening 0
//! with A South, opening 0 with A North, opening 1, …), six fields
//! separated by tabs:
//!
//! | field | what |
//! |---|---|
//! | opening | the opening's index in the match, from 0 |
//! | A's side | `S` (A moved first) or `N` |
//! | opening plies | how many of the moves were the opening's |
//! | points | A's points: `1`, `0.5` or `0` |
//! | book moves | moves each player took from its book, `A-B` (e.g. `3-0`) |
//! | moves | the move letters from the start (`FfEa…`) |
//!
//! The final seeds and how the game ended are not stored: the reader
//! replays the moves and derives them, and refuses a file whose points
//! are not what its moves give. A game that reached the match's last ply
//! unfinished is scored as a repetition would be (each side takes its own
//! row), as the match scored it. Writing goes through a temporary file,
//! fsync and rename.

use std::fmt::{self, Write as _};
use std::path::Path;

use super::error::BookError;
use super::play::{clustered_mean, final_seeds, points, GameRecord};
use crate::error::MoveError;
use crate::game::GameState;

/// The first line of a games file.
pub const GAMES_SIGNATURE: &str = "oware-match-games 1";

/// The text of a games file holding `games`.
pub fn render(games: &[GameRecord]) -> String {
    let mut out = format!("{GAMES_SIGNATURE}\n");
    for g in games {
        let side = if g.a_south { 'S' } else { 'N' };
        let _ = writeln!(
            out,
            "{}\t{side}\t{}\t{}\t{}-{}\t{}",
            g.opening, g.opening_plies, g.points_a, g.book_moves[0], g.book_moves[1], g.moves
        );
    }
    out
}

/// Refuses `path` as a games file's destination if it is one of `reads`
/// (the files the match reads) or a file a book or build directory owns.
/// A match checks this before it plays, so that hours of games are not
/// lost to a bad path.
pub fn check_destination(path: &Path, reads: &[&Path]) -> Result<(), BookError> {
    match crate::resumable::names::refuse_output(path, reads) {
        Some(reason) => Err(BookError::WouldOverwrite { path: path.to_path_buf(), reason }),
        None => Ok(()),
    }
}

/// Writes `games` to `path` atomically, unless [`check_destination`]
/// refuses it.
pub fn write(path: &Path, games: &[GameRecord], reads: &[&Path]) -> Result<(), BookError> {
    check_destination(path, reads)?;
    crate::resumable::atomic::write_bytes_atomically(path, render(games).as_bytes())
        .map_err(|error| BookError::Io { path: path.to_path_buf(), error })
}

/// Reads the games file at `path`.
pub fn read(path: &Path) -> Result<Vec<GameRecord>, BookError> {
    let text = std::fs::read(path).map_err(|error| BookError::Io { path: path.to_path_buf(), error })?;
    let text = std::str::from_utf8(&text).map_err(|_| BookError::GamesFile {
        path: path.to_path_buf(),
        line: 0,
        problem: "not UTF-8 text".into(),
    })?;
    parse(text).map_err(|error| BookError::GamesFile {
        path: path.to_path_buf(),
        line: error.line,
        problem: error.problem.to_string(),
    })
}

/// Why a games file's text was refused: the line (from 1) and what is
/// wrong with it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct GamesFileError {
    /// The line, from 1 (the signature's).
    pub line: usize,
    /// What is wrong with it.
    pub problem: GameLineProblem,
}

/// What is wrong with one line of a games file.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum GameLineProblem {
    /// The first line is not [`GAMES_SIGNATURE`].
    NotAGamesFile,
    /// Not six tab-separated fields.
    FieldCount(usize),
    /// A field that should be a plain decimal number.
    BadNumber {
        /// The field's name.
        what: &'static str,
        /// The field as written.
        text: String,
    },
    /// A's side is neither `S` nor `N`.
    BadSide(String),
    /// Points other than `1`, `0.5`, `0`.
    BadPoints(String),
    /// Book moves not written `A-B`.
    BadBookMoves(String),
    /// A move that cannot be played.
    BadMove {
        /// Its number in the game, from 1.
        ply: usize,
        /// The move as written.
        letter: char,
        /// Why it cannot be played.
        error: MoveError,
    },
    /// An opening longer than the game.
    OpeningTooLong {
        /// The opening's plies.
        opening_plies: usize,
        /// The game's plies.
        plies: usize,
    },
    /// More book moves than moves after the opening.
    TooManyBookMoves {
        /// The field as written (`A-B`).
        book: String,
        /// Moves after the opening.
        after_opening: usize,
    },
    /// The points are not what the moves give.
    WrongPoints {
        /// The points as written.
        points: String,
        /// The final seeds of the moves, South's first.
        seeds: [u32; 2],
    },
}

impl fmt::Display for GameLineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameLineProblem::NotAGamesFile => write!(f, "not a games file (expected '{GAMES_SIGNATURE}')"),
            GameLineProblem::FieldCount(count) => write!(f, "{count} fields, expected 6"),
            GameLineProblem::BadNumber { what, text } => write!(f, "bad {what} '{text}'"),
            GameLineProblem::BadSide(side) => write!(f, "A's side '{side}' is neither S nor N"),
            GameLineProblem::BadPoints(points) => write!(f, "points '{points}' are not 1, 0.5 or 0"),
            GameLineProblem::BadBookMoves(book) => write!(f, "book moves '{book}' are not A-B"),
            GameLineProblem::BadMove { ply, letter, error } => write!(f, "move {ply} '{letter}': {error}"),
            GameLineProblem::OpeningTooLong { opening_plies, plies } => {
                write!(f, "an opening of {opening_plies} plies in a game of {plies}")
            }
            GameLineProblem::TooManyBookMoves { book, after_opening } => {
                write!(f, "{book} book moves after the opening, in {after_opening} plies")
            }
            GameLineProblem::WrongPoints { points, seeds } => {
                write!(f, "A scored {points}, but the moves end {}-{}", seeds[0], seeds[1])
            }
        }
    }
}

impl fmt::Display for GamesFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.problem)
    }
}

impl std::error::Error for GamesFileError {}

/// Reads a games file's text; an error names the line (from 1) and the
/// problem.
pub fn parse(text: &str) -> Result<Vec<GameRecord>, GamesFileError> {
    let mut lines = text.split_terminator('\n').enumerate().map(|(i, line)| (i + 1, line));
    if lines.next().map(|(_, l)| l) != Some(GAMES_SIGNATURE) {
        return Err(GamesFileError { line: 1, problem: GameLineProblem::NotAGamesFile });
    }
    lines.map(|(line, text)| parse_game(text).map_err(|problem| GamesFileError { line, problem })).collect()
}

fn parse_game(line: &str) -> Result<GameRecord, GameLineProblem> {
    let fields: Vec<&str> = line.split('\t').collect();
    let [opening, side, opening_plies, points_text, book, moves] = fields[..] else {
        return Err(GameLineProblem::FieldCount(fields.len()));
    };
    let number = |text: &str, what: &'static str| -> Result<usize, GameLineProblem> {
        match text.parse() {
            Ok(n) if text.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => Err(GameLineProblem::BadNumber { what, text: text.to_string() }),
        }
    };
    let opening = number(opening, "opening")?;
    let a_south = match side {
        "S" => true,
        "N" => false,
        other => return Err(GameLineProblem::BadSide(other.to_string())),
    };
    let opening_plies = number(opening_plies, "opening plies")?;
    let points_a = match points_text {
        "1" => 1.0,
        "0.5" => 0.5,
        "0" => 0.0,
        other => return Err(GameLineProblem::BadPoints(other.to_string())),
    };
    let (a_book, b_book) =
        book.split_once('-').ok_or_else(|| GameLineProblem::BadBookMoves(book.to_string()))?;
    let book_moves = [number(a_book, "book moves")?, number(b_book, "book moves")?];
    let mut state = GameState::start();
    for (ply, letter) in moves.chars().enumerate() {
        state.play_letter(letter).map_err(|error| GameLineProblem::BadMove {
            ply: ply + 1,
            letter,
            error,
        })?;
    }
    let plies = moves.chars().count();
    if opening_plies > plies {
        return Err(GameLineProblem::OpeningTooLong { opening_plies, plies });
    }
    if book_moves[0].checked_add(book_moves[1]).is_none_or(|sum| sum > plies - opening_plies) {
        return Err(GameLineProblem::TooManyBookMoves {
            book: book.to_string(),
            after_opening: plies - opening_plies,
        });
    }
    let score = final_seeds(&state);
    if points(a_south, score) != points_a {
        return Err(GameLineProblem::WrongPoints { points: points_text.to_string(), seeds: score });
    }
    Ok(GameRecord {
        opening,
        opening_plies,
        a_south,
        moves: moves.to_string(),
        score,
        points_a,
        book_moves,
        end: state.end(),
    })
}

/// Two matches compared game by game.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct PairedDifference {
    /// The first match's score minus the second's (A's points per game).
    pub difference: f64,
    /// Its standard error: the per-game differences, clustered by opening;
    /// `None` with fewer than two openings.
    pub standard_error: Option<f64>,
    /// Games compared (each match's; pooled, the sum over the pairs).
    pub games: usize,
    /// Games whose moves were the same in both matches.
    pub identical: usize,
}

/// Compares two matches game by game: they must have been played from the
/// same openings, in the same order, with the same colours.
pub fn paired_difference(first: &[GameRecord], second: &[GameRecord]) -> Result<PairedDifference, BookError> {
    pooled_paired_difference(&[(first, second)])
}

/// Several pairs of matches compared game by game and pooled: the mean of
/// every pair's per-game differences, its standard error clustered by
/// opening across the pairs. Pairs played from the same openings (the
/// same setups against two opponents, say) put an opening's games from
/// every pair in one cluster, since what the opening favours is shared;
/// an opening is its index in the match together with its moves, so
/// pairs from different opening sets do not mix theirs. Each pair must
/// meet [`paired_difference`]'s conditions.
pub fn pooled_paired_difference(
    pairs: &[(&[GameRecord], &[GameRecord])],
) -> Result<PairedDifference, BookError> {
    let opening = |g: &GameRecord| g.moves.chars().take(g.opening_plies).collect::<String>();
    let mut clusters: std::collections::BTreeMap<(usize, String), usize> = std::collections::BTreeMap::new();
    let mut differences = Vec::new();
    let (mut games, mut identical) = (0, 0);
    for (pair, &(first, second)) in pairs.iter().enumerate() {
        let which = if pairs.len() > 1 { format!("pair {}: ", pair + 1) } else { String::new() };
        if first.len() != second.len() {
            return Err(BookError::BadOption(format!(
                "{which}the matches have {} and {} games: they were not played from the same openings",
                first.len(),
                second.len()
            )));
        }
        for (i, (a, b)) in first.iter().zip(second).enumerate() {
            if a.opening != b.opening || a.a_south != b.a_south || opening(a) != opening(b) {
                return Err(BookError::BadOption(format!(
                    "{which}game {}: opening {} ({}) with A {} against opening {} ({}) with A {}: not the same openings",
                    i + 1,
                    a.opening.saturating_add(1),
                    opening(a),
                    if a.a_south { "South" } else { "North" },
                    b.opening.saturating_add(1),
                    opening(b),
                    if b.a_south { "South" } else { "North" },
                )));
            }
            let next = clusters.len();
            let cluster = *clusters.entry((a.opening, opening(a))).or_insert(next);
            differences.push((cluster, a.points_a - b.points_a));
        }
        games += first.len();
        identical += first.iter().zip(second).filter(|(a, b)| a.moves == b.moves).count();
    }
    let (difference, standard_error) = clustered_mean(&differences);
    Ok(PairedDifference { difference, standard_error, games, identical })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The record of a game of `moves` from the start (the first two
    /// plies the opening), scored as the match scores it.
    fn game(opening: usize, a_south: bool, moves: &str) -> GameRecord {
        let mut state = GameState::start();
        for letter in moves.chars() {
            state.play_letter(letter).unwrap();
        }
        let score = final_seeds(&state);
        GameRecord {
            opening,
            opening_plies: 2,
            a_south,
            moves: moves.to_string(),
            score,
            points_a: points(a_south, score),
            book_moves: [0, 0],
            end: state.end(),
        }
    }

    #[test]
    fn games_round_trip_and_their_points_are_checked_against_their_moves() {
        let games = vec![game(0, true, "FfEa"), game(0, false, "FfEa"), game(1, true, "FeDd")];
        let text = render(&games);
        // After FfEa North's row holds more seeds: A loses as South and
        // wins as North; FeDd leaves 24 on each row.
        let expected =
            "oware-match-games 1\n0\tS\t2\t0\t0-0\tFfEa\n0\tN\t2\t1\t0-0\tFfEa\n1\tS\t2\t0.5\t0-0\tFeDd\n";
        assert_eq!(text, expected);
        assert_eq!(parse(&text).unwrap(), games);
        let cases = [
            ("0\tS\t2\t1\t0-0\tFfEa", "A scored 1, but the moves end"),
            ("0\tS\t2\t0.5\t0-0\tFfEz", "move 4 'z'"),
            ("0\tX\t2\t0.5\t0-0\tFfEa", "neither S nor N"),
            ("0\tS\t5\t0.5\t0-0\tFfEa", "an opening of 5 plies"),
            ("0\tS\t2\t0.5\t2-1\tFfEa", "book moves after the opening"),
            ("0\tS\t2\t0.25\t0-0\tFfEa", "not 1, 0.5 or 0"),
            ("+0\tS\t2\t0.5\t0-0\tFfEa", "bad opening"),
            ("0\tS\t2\t0.5\tFfEa", "5 fields"),
        ];
        for (line, expected) in cases {
            let error = parse(&format!("{GAMES_SIGNATURE}\n{line}\n")).unwrap_err();
            assert_eq!(error.line, 2, "{line}");
            assert!(error.problem.to_string().contains(expected), "{line}: {}", error.problem);
        }
        let error = parse("oware-match-games 2\n").unwrap_err();
        assert_eq!(error, GamesFileError { line: 1, problem: GameLineProblem::NotAGamesFile });
        assert_eq!(parse(GAMES_SIGNATURE).unwrap(), Vec::new());
    }

    #[test]
    fn the_paired_difference_cancels_what_the_openings_share() {
        // Opening o: A wins as South in both matches; as North, the first
        // match wins where the second draws, on half the openings.
        let base: Vec<GameRecord> =
            (0..10).flat_map(|o| [game(o, true, "FfEa"), game(o, false, "FfEa")]).collect();
        let mut first = base.clone();
        let mut second = base.clone();
        for o in 0..10 {
            first[2 * o].points_a = 1.0;
            second[2 * o].points_a = 1.0;
            first[2 * o + 1].points_a = if o % 2 == 0 { 1.0 } else { 0.5 };
            second[2 * o + 1].points_a = 0.5;
        }
        let paired = paired_difference(&first, &second).unwrap();
        // Differences per opening: ½ on five openings, 0 on five; mean
        // ½·5/20 = 0.125; residual sums ½ − 2·0.125 = ¼ or −¼.
        assert_eq!(paired.difference, 0.125);
        let expected = (10.0f64 / 9.0 * 10.0 * 0.0625).sqrt() / 20.0;
        assert!((paired.standard_error.unwrap() - expected).abs() < 1e-12);
        assert_eq!((paired.games, paired.identical), (20, 20));
        assert_eq!(paired_difference(&first, &first).unwrap().difference, 0.0);
        // Other openings, or other colours, are refused.
        let mut other = second.clone();
        other[3] = game(1, true, "FfEa");
        let error = paired_difference(&first, &other).unwrap_err();
        assert!(error.to_string().contains("game 4:"), "{error}");
        let mut moved = second.clone();
        moved[0] = game(0, true, "FeEa");
        assert!(paired_difference(&first, &moved).is_err(), "another opening under the same index");
        assert!(paired_difference(&first, &second[1..]).is_err());

        // Pooled: the same pair twice is the pair (every cluster's residual
        // and the game count both double); a pair and its reverse cancel
        // within each opening, so the error is 0.
        let twice = pooled_paired_difference(&[(&first, &second), (&first, &second)]).unwrap();
        assert_eq!(twice.difference, 0.125);
        assert!((twice.standard_error.unwrap() - expected).abs() < 1e-12);
        assert_eq!((twice.games, twice.identical), (40, 40));
        let reversed = pooled_paired_difference(&[(&first, &second), (&second, &first)]).unwrap();
        assert_eq!((reversed.difference, reversed.standard_error), (0.0, Some(0.0)));
        // Pairs from other openings (other indices) are other clusters. Here
        // the second pair's differences are all 0: mean 2.5/40 = 0.0625; 20
        // clusters, the first pair's with residual sums ½ − ⅛ or −⅛, the
        // second's −⅛.
        let shifted = |games: &[GameRecord]| -> Vec<GameRecord> {
            games.iter().map(|g| GameRecord { opening: g.opening + 10, ..g.clone() }).collect()
        };
        let (level_first, level_second) = (shifted(&second), shifted(&second));
        let apart = pooled_paired_difference(&[(&first, &second), (&level_first, &level_second)]).unwrap();
        assert_eq!(apart.difference, 0.0625);
        let residuals =
            5.0 * (0.5f64 - 2.0 * 0.0625).powi(2) + 5.0 * (2.0f64 * 0.0625).powi(2) + 10.0 * 0.125f64.powi(2);
        let expected_apart = (20.0f64 / 19.0 * residuals).sqrt() / 40.0;
        assert!((apart.standard_error.unwrap() - expected_apart).abs() < 1e-12);
        let error = pooled_paired_difference(&[(&first, &second), (&first, &other)]).unwrap_err();
        assert!(error.to_string().contains("pair 2: game 4:"), "{error}");
    }
}
