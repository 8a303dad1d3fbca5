//! Readers and writers of the Aalina engine's four binary file layouts
//! (`docs/engine-formats.md`).
//!
//! | module | signature | what |
//! |---|---|---|
//! | [`endgames`] | `Oware Endgames 1.0` / `2.0` | endgame tablebase, one byte per position |
//! | [`opening_book`] | `Oware Opening Book 1.0` | 2014 book: six scores per state |
//! | [`doe`] | `DOE Opening Book 1.0` | 2022 book: one row per (parent, child) edge |
//! | [`header`] | | the text headers all three share |
//!
//! Every file is a text header followed by a body of fixed-size records.
//! All integers in bodies are big-endian (the engine wrote them with Java's
//! `DataOutput`). Each module's documentation gives its layout byte by byte.
//!
//! Common rules of this module:
//! * **No panic on any input.** A reader either returns a value or a
//!   [`FormatError`] naming the problem and, where there is one, the entry
//!   number and the byte offset (counted from the start of the file, header
//!   included; entries are numbered from 0).
//! * **Byte-exact round trips.** What a reader accepts, the matching writer
//!   writes back unchanged, header lines and their order included.
//! * **Atomic files.** Every `save` goes through
//!   `crate::resumable::atomic::write_atomically`: readers of the old file never see
//!   a torn one, and a memory map of the old file stays valid, since the new
//!   file is a new inode renamed over the old name.

pub mod doe;
pub mod endgames;
mod error;
pub mod header;
pub mod opening_book;
mod records;
mod signature;

pub use doe::{DoeBook, DoeEntry};
pub use endgames::{EndgameFile, EndgamesVersion, Entry, Flag};
pub use error::FormatError;
pub use header::{Header, HeaderEncoding};
pub use opening_book::{BookEntry, OpeningBook};
pub use records::is_state_key;
pub use signature::{detect, FileKind};
