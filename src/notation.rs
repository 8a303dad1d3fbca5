//! The text notation of states and games (`docs/rules.md`, "Notation"): `p0-…-p11-S-N-T`, and a game as a state followed by `moves`
//! and the concatenated move letters.

use std::fmt;
use std::str::FromStr;

use crate::error::NotationError;
use crate::game::{GameState, Side};
use crate::rules::{PITS, TOTAL_SEEDS};

impl fmt::Display for GameState {
    /// Writes the state without its history: `4-4-…-4-0-0-S`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for seeds in self.pits() {
            write!(f, "{seeds}-")?;
        }
        let [south, north] = self.stores();
        let side = if self.to_move() == Side::South { 'S' } else { 'N' };
        write!(f, "{south}-{north}-{side}")
    }
}

impl GameState {
    /// The board as a picture, South's row at the bottom read from South's
    /// left (A to F) and North's above it read from North's left (a to f,
    /// so right to left here): sowing runs counter-clockwise.
    ///
    /// ```text
    ///      f   e   d   c   b   a     North, store 0
    ///   [ 4][ 4][ 4][ 4][ 4][ 4]
    ///   [ 4][ 4][ 4][ 4][ 4][ 4]
    ///      A   B   C   D   E   F     South, store 0, to move
    /// ```
    pub fn board(&self) -> String {
        let pits = self.pits();
        let row = |range: &mut dyn Iterator<Item = usize>| -> String {
            range.map(|i| format!("[{:>2}]", pits[i])).collect()
        };
        let to_move = |side: Side| if self.to_move() == side { ", to move" } else { "" };
        let [south, north] = self.stores();
        format!(
            "     f   e   d   c   b   a     North, store {north}{}\n  {}\n  {}\n     A   B   C   D   E   F     South, store {south}{}",
            to_move(Side::North),
            row(&mut (6..12).rev()),
            row(&mut (0..6)),
            to_move(Side::South)
        )
    }
}

impl FromStr for GameState {
    type Err = NotationError;
    /// Reads a state or a whole game (`… moves FfEe`): the result carries the
    /// history since the last capture, so repetitions are detected.
    fn from_str(text: &str) -> Result<GameState, NotationError> {
        Ok(Game::from_str(text)?.current)
    }
}

/// A game: where it started and the moves played, with the state they reach.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Game {
    /// The state the game was read from, before any move.
    pub start: GameState,
    /// Move letters in order (`A..F` South, `a..f` North).
    pub moves: String,
    /// The state after every move, with its history since the last capture.
    pub current: GameState,
}

impl Game {
    /// A game with no moves yet, starting (and standing) at `start`.
    pub fn new(start: GameState) -> Game {
        Game { current: start.clone(), start, moves: String::new() }
    }
}

impl fmt::Display for Game {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.start)?;
        if !self.moves.is_empty() {
            write!(f, " moves {}", self.moves)?;
        }
        Ok(())
    }
}

impl FromStr for Game {
    type Err = NotationError;
    fn from_str(text: &str) -> Result<Game, NotationError> {
        let leading = text.len() - text.trim_start().len();
        let body = text.trim_start();
        let state_len = body.find(char::is_whitespace).unwrap_or(body.len());
        let start = parse_state(&body[..state_len], leading)?;
        let mut game = Game::new(start);
        let rest = &body[state_len..];
        let rest_at = leading + state_len;
        let keyword_at = rest.len() - rest.trim_start().len();
        let rest_body = rest.trim_start();
        if rest_body.is_empty() {
            return Ok(game);
        }
        let keyword_len = rest_body.find(char::is_whitespace).unwrap_or(rest_body.len());
        if &rest_body[..keyword_len] != "moves" {
            return Err(NotationError::ExpectedMoves {
                column: column(text, rest_at + keyword_at),
                text: rest_body[..keyword_len].to_string(),
            });
        }
        let moves_at = rest_at + keyword_at + keyword_len;
        for (offset, letter) in text[moves_at..].char_indices() {
            if letter.is_whitespace() {
                continue;
            }
            let ply = game.moves.len() + 1;
            let at = column(text, moves_at + offset);
            let played = game.current.letter_pit(letter).and_then(|pit| game.current.play_past_decision(pit));
            played.map_err(|error| NotationError::BadMove { column: at, ply, error })?;
            game.moves.push(letter);
        }
        Ok(game)
    }
}

/// 1-based character column of byte offset `at` in `text`.
fn column(text: &str, at: usize) -> usize {
    text[..at].chars().count() + 1
}

/// Parses `p0-…-p11-S-N-T`; `base` is the byte offset of `state` in the
/// caller's text, so columns point into it.
fn parse_state(state: &str, base: usize) -> Result<GameState, NotationError> {
    let fields: Vec<(usize, &str)> = field_offsets(state);
    if fields.len() != PITS + 3 {
        return Err(NotationError::FieldCount { found: fields.len() });
    }
    let mut counts = [0u8; PITS + 2];
    for (index, &(offset, text)) in fields[..PITS + 2].iter().enumerate() {
        let field = index + 1;
        let column = base + offset + 1;
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(NotationError::BadCount { field, column, text: text.to_string() });
        }
        let value = text.parse::<u64>().unwrap_or(u64::MAX);
        if value > TOTAL_SEEDS as u64 {
            return Err(NotationError::CountTooLarge { field, column, text: text.to_string() });
        }
        counts[index] = value as u8;
    }
    let (offset, side_text) = fields[PITS + 2];
    let side = match side_text {
        "S" | "s" => Side::South,
        "N" | "n" => Side::North,
        _ => return Err(NotationError::BadSide { column: base + offset + 1, text: side_text.to_string() }),
    };
    let mut pits = [0u8; PITS];
    pits.copy_from_slice(&counts[..PITS]);
    GameState::try_from_parts(pits, [counts[PITS], counts[PITS + 1]], side)
}

fn field_offsets(state: &str) -> Vec<(usize, &str)> {
    let mut fields = Vec::new();
    let mut start = 0;
    for (at, c) in state.char_indices() {
        if c == '-' {
            fields.push((start, &state[start..at]));
            start = at + 1;
        }
    }
    fields.push((start, &state[start..]));
    fields
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_board_picture_puts_north_right_to_left_above_south() {
        let state: GameState = "1-2-3-4-5-6-7-8-9-0-0-0-1-2-N".parse().unwrap();
        let picture = state.board();
        let lines: Vec<&str> = picture.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], "     f   e   d   c   b   a     North, store 2, to move");
        assert_eq!(lines[1], "  [ 0][ 0][ 0][ 9][ 8][ 7]");
        assert_eq!(lines[2], "  [ 1][ 2][ 3][ 4][ 5][ 6]");
        assert_eq!(lines[3], "     A   B   C   D   E   F     South, store 1");
    }
    use super::*;
    use crate::error::MoveError;

    #[test]
    fn the_start_round_trips() {
        let text = "4-4-4-4-4-4-4-4-4-4-4-4-0-0-S";
        let state: GameState = text.parse().unwrap();
        assert_eq!(state, GameState::start());
        assert_eq!(state.to_string(), text);
    }

    #[test]
    fn a_game_replays_its_moves() {
        let game: Game = "4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves FfEe".parse().unwrap();
        assert_eq!(game.moves, "FfEe");
        assert_eq!(game.to_string(), "4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves FfEe");
        assert_eq!(game.current.to_string(), "6-6-6-5-0-1-6-6-6-5-0-1-0-0-S");
    }

    #[test]
    fn bad_input_names_the_problem() {
        let err = |s: &str| s.parse::<GameState>().unwrap_err();
        assert_eq!(err("4-4-4"), NotationError::FieldCount { found: 3 });
        assert_eq!(
            err("4-4-4-4-4-4-4-4-4-4-4-x-0-0-S"),
            NotationError::BadCount { field: 12, column: 23, text: "x".into() }
        );
        assert_eq!(
            err("4-4-4-4-4-4-4-4-4-4-4-49-0-0-S"),
            NotationError::CountTooLarge { field: 12, column: 23, text: "49".into() }
        );
        assert_eq!(err("4-4-4-4-4-4-4-4-4-4-4-4-1-0-S"), NotationError::BadTotal { total: 49 });
        assert!(matches!(err("4-4-4-4-4-4-4-4-4-4-4-4-0-0-X"), NotationError::BadSide { column: 29, .. }));
        assert_eq!(
            err("4-4-4-4-4-4-4-4-4-4-4-4-0-0-S foo"),
            NotationError::ExpectedMoves { column: 31, text: "foo".into() }
        );
        assert_eq!(
            err("4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves AaA"),
            NotationError::BadMove { column: 39, ply: 3, error: MoveError::EmptyPit('A') }
        );
        // A negative count splits into an empty field.
        assert!(matches!(err("4--4-4-4-4-4-4-4-4-4-4-4-0-0-S"), NotationError::FieldCount { .. }));
    }
}
