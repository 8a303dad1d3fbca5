//! Why a search cannot run, and why an option cannot be read. Below the
//! rest of the search, whose parts all return them.

use std::fmt;

use super::limits::MAX_DEPTH;

/// A name or value of a search option that cannot be read.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseOptionError {
    /// What was being read ("ordering", "weights").
    pub option: &'static str,
    /// The text that could not be read.
    pub text: String,
    /// What is accepted.
    pub expected: &'static str,
}

impl fmt::Display for ParseOptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} '{}' (expected {})", self.option, self.text, self.expected)
    }
}

impl std::error::Error for ParseOptionError {}

/// Why a search could not run.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum SearchError {
    /// No depth, node or time limit: the search would never stop.
    Unbounded,
    /// A depth above [`MAX_DEPTH`].
    DepthTooLarge {
        /// The depth asked for.
        depth: u32,
    },
    /// The transposition table could not be allocated.
    TableAllocation {
        /// The table size asked for, in MiB.
        megabytes: usize,
    },
    /// Board and stores do not hold 48 seeds.
    SeedCount {
        /// Seeds on the board plus both stores.
        total: u32,
    },
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::Unbounded => {
                write!(f, "the search needs a depth, node or time limit")
            }
            SearchError::DepthTooLarge { depth } => {
                write!(f, "depth {depth} is above the limit {MAX_DEPTH}")
            }
            SearchError::TableAllocation { megabytes } => {
                write!(f, "cannot allocate a transposition table of {megabytes} MiB")
            }
            SearchError::SeedCount { total } => {
                write!(f, "board and stores hold {total} seeds, not 48")
            }
        }
    }
}

impl std::error::Error for SearchError {}
