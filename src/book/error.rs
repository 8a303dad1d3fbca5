//! [`BookError`], the error of every part of the book. It has a file of its
//! own, below all of them, so that none imports `book` itself (which
//! re-exports them).

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::eval::EvaluationError;
use crate::formats::FormatError;

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
    /// The path is something else than a book directory: a file, or a
    /// tablebase build directory (`what` says which).
    OtherThanABook {
        /// The path given.
        dir: PathBuf,
        /// What is there instead.
        what: &'static str,
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
    /// A match's games file is not what `games_file` writes, or its
    /// points are not what its moves give.
    GamesFile {
        /// The file.
        path: PathBuf,
        /// The line (from 1; 0 for the whole file).
        line: usize,
        /// What is wrong with it.
        problem: String,
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
            BookError::OtherThanABook { dir, what } => {
                write!(f, "{}: {what}, not an opening book directory", dir.display())
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
            BookError::GamesFile { path, line: 0, problem } => write!(f, "{}: {problem}", path.display()),
            BookError::GamesFile { path, line, problem } => {
                write!(f, "{} line {line}: {problem}", path.display())
            }
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
