//! Oware Abapa toolchain: exact rules, binomial ranks, perft, and (in later
//! modules) the endgame tablebase, the search engine and the opening book.
//!
//! Layout:
//! * [`rules`]: positions seen from the side to move, legal moves, sowing,
//!   captures. The heart of everything else.
//! * [`game`]: full game states (stores, side, history) and the end rules.
//! * [`notation`]: the text notation of states and games.
//! * [`rank`]: binomial ranks: tablebase indexes and opening-book keys.
//! * [`perft`]: move-path counts.
//! * [`formats`]: readers and writers of the engine's file layouts.
//! * [`error`]: typed errors.

pub mod atomic;
pub mod book;
pub mod checksum;
pub mod cli;
pub mod cpu;
pub mod error;
pub mod formats;
pub mod game;
pub mod notation;
pub mod perft;
pub mod rank;
pub mod rules;
pub mod search;
mod strays;
pub mod tablebase;

pub use error::{MoveError, NotationError};
pub use game::{GameEnd, GameState, Side};
pub use notation::Game;
pub use rules::{Moves, Pit, Played, Position};
