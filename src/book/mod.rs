//! The opening book: grown from the start position by drop-out expansion
//! (Lincke), every new node valued by a [`LeafEvaluator`], stored in a
//! resumable directory, exported in the engine's two book layouts.
//!
//! * [`graph`]: positions merged by state key, values, priorities.
//! * [`dropout`]: the expansion priority formula and the deterministic
//!   batched selection.
//! * [`grow`](mod@grow): the worker pool and the growth loop.
//! * [`store`]: the book directory (manifest, checkpoints, lock);
//!   `docs/book-format.md`.
//! * [`export`]: "Oware Opening Book 1.0" and "DOE Opening Book 1.0".
//! * [`probe`]: book moves of any book, book lines, statistics.
//! * [`play`]: matches between engines with and without books.
//! * [`eval`]: the evaluator trait and the placeholder [`Negamax`].
//!
//! # Plugging in the search engine (issue 4)
//! Once `crate::search` is merged, three additions replace the placeholder.
//!
//! 1. In `src/book/eval.rs`, an evaluator around the searcher. A `Searcher`
//!    searches with `&mut self` and keeps a transposition table, so each
//!    worker thread keeps its own and clears it before every search (the
//!    search is then deterministic for a node or depth limit):
//!
//! ```text
//! pub struct SearchEvaluator { pub nodes: u64 }
//!
//! thread_local! {
//!     static SEARCHER: RefCell<Option<Searcher>> = const { RefCell::new(None) };
//! }
//!
//! impl LeafEvaluator for SearchEvaluator {
//!     fn evaluate(&self, state: &GameState) -> Result<Evaluation, EvaluationError> {
//!         let fail = |e: &dyn Display| EvaluationError { state: state.to_string(), reason: e.to_string() };
//!         SEARCHER.with(|cell| {
//!             let mut cell = cell.borrow_mut();
//!             if cell.is_none() {
//!                 *cell = Some(Searcher::new(Options::default()).map_err(|e| fail(&e))?);
//!             }
//!             let searcher = cell.as_mut().expect("just set");
//!             searcher.clear();
//!             let r = searcher.search(state, &Limits::nodes(self.nodes)).map_err(|e| fail(&e))?;
//!             Ok(Evaluation { score: r.score.engine_units() as i32, best_move: r.best_move,
//!                             depth: r.depth, nodes: r.nodes })
//!         })
//!     }
//!     fn describe(&self) -> String { format!("search nodes {}", self.nodes) }
//! }
//! ```
//!
//! 2. In [`eval::evaluator_from_description`], a branch that reads
//!    `search nodes N` back (resumed growth rebuilds the evaluator from the
//!    book's manifest).
//! 3. In `bin/openings.rs` (function `evaluator`) and `bin/match.rs`
//!    (function `engine`), an option `--search-nodes N` that builds
//!    `SearchEvaluator { nodes: N }` instead of [`Negamax`]. Nothing else
//!    changes: growth, checkpoints, exports and matches only see the trait.
//!
//! A book directory records its evaluator: a book grown with the
//! placeholder cannot be resumed with the search (the values would not
//! mix); grow a new directory (the `make openings` target names it).

pub mod dropout;
pub mod eval;
pub mod export;
pub mod graph;
pub mod grow;
pub mod play;
pub mod probe;
pub mod store;

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::formats::FormatError;

pub use dropout::{Omega, Selection};
pub use eval::{Evaluation, EvaluationError, LeafEvaluator, Negamax};
pub use graph::{BookGraph, Edge, Node, NodeEval, NodeId, NodeKind};
pub use grow::{grow, Budget, GrowOptions, GrowReport};
pub use probe::{AnyBook, BookMove, BookSource, BookStats, ProbeReport};
pub use store::{Manifest, Parameters};

/// Everything that can go wrong with a book.
#[derive(Debug)]
pub enum BookError {
    /// A file or directory could not be read or written.
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// What the system (or the zstd decoder) said.
        error: io::Error,
    },
    /// A file of the book directory is damaged; nothing was written.
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// The directory holds no book manifest.
    NotABook {
        /// The directory given.
        dir: PathBuf,
    },
    /// The book holds no checkpoint yet.
    Empty {
        /// The book directory.
        dir: PathBuf,
    },
    /// The directory holds a book grown with other parameters.
    Parameters {
        /// The book directory.
        dir: PathBuf,
        /// The parameters its manifest records, as text.
        found: String,
        /// The parameters asked for, as text.
        wanted: String,
    },
    /// Another growth holds the directory.
    Busy {
        /// The book directory.
        dir: PathBuf,
    },
    /// Writing there would destroy a file this command reads, or one a
    /// build or book directory owns; nothing was written.
    WouldOverwrite {
        /// The file that was not written.
        path: PathBuf,
        /// Whose file it is, in words.
        reason: String,
    },
    /// The file is neither a book directory nor an opening book layout
    /// this crate reads.
    UnknownFormat {
        /// The file given.
        path: PathBuf,
    },
    /// An option or parameter that cannot be used (out of range, or not
    /// understood); the text says which and why.
    BadOption(String),
    /// The leaf evaluator failed on a state.
    Evaluation(EvaluationError),
    /// Reading or writing one of the engine's layouts.
    Format {
        /// The file concerned, when there is one.
        path: Option<PathBuf>,
        /// What the layout's reader or writer said.
        error: FormatError,
    },
}

impl fmt::Display for BookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BookError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            BookError::Corrupt { path, problem } => {
                write!(f, "{}: {problem}; the book is damaged and was left as it is", path.display())
            }
            BookError::NotABook { dir } => {
                write!(f, "{}: not a book directory (no manifest)", dir.display())
            }
            BookError::Empty { dir } => {
                write!(f, "{}: the book has no checkpoint yet (grow it first)", dir.display())
            }
            BookError::Parameters { dir, found, wanted } => write!(
                f,
                "{} holds a book grown with {found}; asked for {wanted}: use another directory",
                dir.display()
            ),
            BookError::WouldOverwrite { path, reason } => {
                write!(f, "will not write {}: {reason}", path.display())
            }
            BookError::Busy { dir } => {
                write!(f, "{}: another growth is running in this directory", dir.display())
            }
            BookError::UnknownFormat { path } => write!(
                f,
                "{}: neither a book directory nor an opening book file (Oware Opening Book 1.0, DOE Opening Book 1.0)",
                path.display()
            ),
            BookError::BadOption(text) => f.write_str(text),
            BookError::Evaluation(e) => write!(f, "{e}"),
            BookError::Format { path: Some(path), error } => write!(f, "{}: {error}", path.display()),
            BookError::Format { path: None, error } => write!(f, "{error}"),
        }
    }
}

impl From<crate::resumable::DirectoryError> for BookError {
    fn from(error: crate::resumable::DirectoryError) -> BookError {
        use crate::resumable::DirectoryError;
        match error {
            DirectoryError::Io { path, error } => BookError::Io { path, error },
            DirectoryError::Busy { dir } => BookError::Busy { dir },
            DirectoryError::Corrupt { path, problem } => BookError::Corrupt { path, problem },
        }
    }
}

impl std::error::Error for BookError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BookError::Io { error, .. } => Some(error),
            BookError::Format { error, .. } => Some(error),
            BookError::Evaluation(e) => Some(e),
            _ => None,
        }
    }
}
