#![warn(missing_docs)]
//! Oware Abapa toolchain: exact rules, endgame tablebases proven by
//! retrograde analysis and cycle resolution, an alpha-beta search, and
//! opening books grown by drop-out expansion, in our own checked formats
//! and in the layouts of the Aalina engine.
//!
//! # Probing a tablebase and a book
//! One `open` per kind of file: [`tablebase::AnyTable::open`] reads our
//! `.owtb` and `.owtb.zst` files, build directories, and the engine's
//! "Oware Endgames" 1.0/2.0 files, compressed or not;
//! [`book::AnyBook::open`] reads book directories and both engine book
//! layouts. The probe's name carries its caveat: a tablebase value assumes
//! the state was reached by a capture (or starts play), and
//! [`tablebase::StateProbe::holds_in`] says whether it holds in the game
//! at hand.
//!
//! ```
//! use oware::book::{AnyBook, BookSource};
//! use oware::tablebase::{AnyTable, Certainty, Outcome, Proof};
//! use oware::Game;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let table = AnyTable::open("data/endgames-12.owtb.zst".as_ref())?;
//! let game: Game = "0-0-0-0-0-1-0-0-0-0-1-1-22-23-S".parse()?;
//! let probe = table.probe_after_capture(&game.current)?;
//! // South captures 1 of the 3 seeds left and loses 23-25, proven by the
//! // cycle search and checked against the file's checksums.
//! assert_eq!((probe.lower, probe.upper), (1, 1));
//! assert_eq!(probe.outcome_bounds(), (Outcome::Loss, Outcome::Loss));
//! assert_eq!(probe.certainty, Certainty::Checked(Proof::Search));
//! assert!(probe.holds_in(&game.current));
//! // Every legal move with its value (here the only one, F).
//! assert_eq!(probe.moves.iter().map(|m| m.letter).collect::<String>(), "F");
//!
//! let book = AnyBook::open("data/openings-2014.bin".as_ref())?;
//! assert!(!book.book_moves(&oware::GameState::start()).is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! # Layout
//! * [`rules`]: positions seen from the side to move, legal moves, sowing,
//!   captures. The heart of everything else.
//! * [`game`]: full game states (stores, side, history) and the end rules.
//! * [`notation`]: the text notation of states and games.
//! * [`rank`]: binomial ranks: tablebase indexes and opening-book keys.
//! * [`perft`]: move-path counts.
//! * [`tablebase`]: building, checking, probing and exporting endgame
//!   tablebases.
//! * [`search`]: the alpha-beta search.
//! * [`book`]: growing, probing and exporting opening books.
//! * [`formats`]: readers and writers of the engine's file layouts.
//! * [`cluster`]: the ranks of a distributed build (threads, or MPI with
//!   the `mpi` feature).
//! * [`codec`]: the little-endian binary codec of our own records.
//! * [`error`]: typed errors.

pub mod book;
pub mod checksum;
pub mod cluster;
pub mod codec;
mod compressed;
pub mod cpu;
pub mod error;
pub mod formats;
pub mod game;
pub mod memory;
pub mod notation;
mod parallel;
mod parked;
pub mod perft;
pub mod progress;
pub mod rank;
mod resumable;
pub mod rules;
pub mod search;
pub mod tablebase;
pub mod text;

pub use error::{MoveError, NotationError};
pub use game::{GameEnd, GameState, Outcome, Side};
pub use notation::Game;
pub use rules::{Moves, Pit, Played, Position};
