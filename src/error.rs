//! Typed errors of the library. Every variant names the problem and where it
//! is, so a binary can print it as one line.

use std::fmt;

use crate::rules::{GameEnd, Side};

/// Why a move cannot be played.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MoveError {
    /// Not a move letter (`A..F`, `a..f`).
    BadLetter(char),
    /// A pit number outside 0..6.
    NoSuchPit(usize),
    /// The letter belongs to the side not to move.
    WrongSide {
        /// The move letter given.
        letter: char,
        /// The side whose turn it is.
        to_move: Side,
    },
    /// The pit sown is empty.
    EmptyPit(char),
    /// The opponent's row is empty and this move does not reach it.
    MustFeed(char),
    /// The game has already ended.
    GameOver(GameEnd),
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::BadLetter(c) => {
                write!(f, "'{c}' is not a move (A-F for South, a-f for North)")
            }
            MoveError::NoSuchPit(p) => {
                write!(f, "pit {p} does not exist (0-5 from the mover's left)")
            }
            MoveError::WrongSide { letter, to_move } => {
                write!(f, "move '{letter}' belongs to the other side ({to_move:?} is to move)")
            }
            MoveError::EmptyPit(c) => write!(f, "move '{c}' sows an empty pit"),
            MoveError::MustFeed(c) => {
                write!(f, "move '{c}' is illegal: the opponent's row is empty and it does not reach it")
            }
            MoveError::GameOver(end) => write!(f, "the game is already over ({end:?})"),
        }
    }
}

impl std::error::Error for MoveError {}

/// Why a state or game string could not be read. `column` is the 1-based
/// character position in the input where the problem starts.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum NotationError {
    /// A state has `p0-…-p11-S-N-T`: 15 fields separated by '-'.
    FieldCount {
        /// How many '-'-separated fields the state has.
        found: usize,
    },
    /// A field that should be a seed count is not a decimal number.
    BadCount {
        /// The 1-based number of the field (1..=14).
        field: usize,
        /// Where the field starts in the input.
        column: usize,
        /// The field as written.
        text: String,
    },
    /// A seed count above 48.
    CountTooLarge {
        /// The 1-based number of the field (1..=14).
        field: usize,
        /// Where the field starts in the input.
        column: usize,
        /// The count as written (it may not fit any integer type).
        text: String,
    },
    /// Pits and stores must total 48.
    BadTotal {
        /// The sum of the twelve pits and both stores.
        total: u64,
    },
    /// The side to move must be `S` or `N`.
    BadSide {
        /// Where the side field starts in the input.
        column: usize,
        /// The side field as written.
        text: String,
    },
    /// Something other than `moves` after the state.
    ExpectedMoves {
        /// Where the unexpected word starts in the input.
        column: usize,
        /// The word found instead of `moves`.
        text: String,
    },
    /// A move of the game that cannot be played.
    BadMove {
        /// Where the move letter is in the input.
        column: usize,
        /// The 1-based number of the move in the game's move list.
        ply: usize,
        /// Why the move cannot be played.
        error: MoveError,
    },
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotationError::FieldCount { found } => {
                write!(f, "a state has 15 fields p0-...-p11-S-N-side separated by '-', found {found}")
            }
            NotationError::BadCount { field, column, text } => {
                write!(f, "column {column}: field {field} {} is not a seed count", quoted(text))
            }
            NotationError::CountTooLarge { field, column, text } => {
                write!(f, "column {column}: field {field} holds {} seeds, more than 48", quoted(text))
            }
            NotationError::BadTotal { total } => {
                write!(f, "pits and stores total {total} seeds, not 48")
            }
            NotationError::BadSide { column, text } => {
                write!(f, "column {column}: side to move {} is not S or N", quoted(text))
            }
            NotationError::ExpectedMoves { column, text } => {
                write!(f, "column {column}: expected 'moves' after the state, found {}", quoted(text))
            }
            NotationError::BadMove { column, ply, error } => {
                write!(f, "column {column}: move {ply}: {error}")
            }
        }
    }
}

impl std::error::Error for NotationError {}

/// Input echoed in an error, in quotes: whole up to 24 characters, else
/// its start and its length (an error line stays one readable line).
fn quoted(text: &str) -> String {
    const SHOWN: usize = 24;
    let count = text.chars().count();
    if count <= SHOWN {
        return format!("'{text}'");
    }
    let start: String = text.chars().take(SHOWN).collect();
    format!("'{start}…' ({count} characters)")
}
