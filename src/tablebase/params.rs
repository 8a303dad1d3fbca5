//! The parameters of a tablebase build, and every limit on them, in one
//! place: the library validates them here, once, and every phase, file
//! and report reads them from here.

use std::fmt;

/// The most seeds a build takes: layer 24 alone holds 417 million
/// positions, and the arrays are indexed for that size.
pub const MAX_BUILD_SEEDS: u32 = 24;

/// The largest N a file of ours may declare (positions up to 48 seeds
/// exist, but a table of every layer beyond this would not fit any disk).
pub const MAX_FILE_SEEDS: u32 = 32;

/// The most seeds the engine's endgame index covers (`OwareLeaves.MAX_SEEDS`
/// in its source: its hash ranks positions of up to 15 seeds), so the most
/// layers an export to its files holds.
pub const ENGINE_MAX_SEEDS: u32 = 15;

/// Budget of the searches inside cycle components.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchBudget {
    /// Most nodes a threshold question may use (questions start at
    /// 4,096 nodes and get eight times more each round until they are
    /// answered or reach this); 0 turns the threshold search off.
    pub nodes_per_search: u64,
    /// Longest line (plies from the root) a threshold search explores
    /// (at most [`SearchBudget::MAX_PATH`]).
    pub max_path: usize,
    /// Layers above this many seeds get no threshold search.
    pub max_seeds: u32,
    /// Nodes per question of the path-cut search (each node solves two
    /// threshold games on its component), for what the threshold search
    /// leaves open; 0 turns it off.
    pub cut_nodes: u64,
    /// Layers above this many seeds get no path-cut search.
    pub cut_max_seeds: u32,
    /// Layers below this many seeds get no search of either kind (an
    /// improvement pass that re-proves chosen layers only).
    pub min_seeds: u32,
}

impl SearchBudget {
    /// The longest line either cycle search explores: both recurse once a
    /// ply, and a line this long fits a worker thread's stack
    /// (`cpu::use_threads` gives them 32 MiB). A search that would go
    /// deeper answers "unknown", which never becomes a proof.
    pub const MAX_PATH: usize = 4_096;

    /// No search at all: the history-free bounds only.
    pub const NONE: SearchBudget = SearchBudget {
        nodes_per_search: 0,
        max_path: 1_000,
        max_seeds: 0,
        cut_nodes: 0,
        cut_max_seeds: 0,
        min_seeds: 0,
    };

    /// Refuses what no search can do: paths longer than
    /// [`SearchBudget::MAX_PATH`].
    pub fn check(&self) -> Result<(), ParamError> {
        match self.max_path {
            path if path > SearchBudget::MAX_PATH => Err(ParamError::PathTooLong { max_path: path }),
            _ => Ok(()),
        }
    }

    /// Whether layer `n` gets the threshold search.
    pub fn threshold_search_at(&self, n: u32) -> bool {
        self.nodes_per_search > 0 && (self.min_seeds..=self.max_seeds).contains(&n)
    }

    /// Whether layer `n` gets the path-cut search.
    pub fn cut_search_at(&self, n: u32) -> bool {
        self.cut_nodes > 0 && (self.min_seeds..=self.cut_max_seeds).contains(&n)
    }
}

impl Default for SearchBudget {
    /// What a default build affords (≤ 12 seeds in well under a minute on
    /// two cores): the threshold search to layer 7, which closes every gap
    /// there; the path-cut search off (it has nothing left to close).
    fn default() -> SearchBudget {
        SearchBudget {
            nodes_per_search: 1_000_000,
            max_path: 1_000,
            max_seeds: 7,
            cut_nodes: 0,
            cut_max_seeds: 0,
            min_seeds: 0,
        }
    }
}

/// A build parameter out of its range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// A search path longer than [`SearchBudget::MAX_PATH`].
    PathTooLong {
        /// The path asked for.
        max_path: usize,
    },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::PathTooLong { max_path } => {
                write!(f, "search paths of {max_path} plies: at most {}", SearchBudget::MAX_PATH)
            }
        }
    }
}

impl std::error::Error for ParamError {}
