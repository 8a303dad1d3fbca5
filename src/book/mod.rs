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
//! * [`eval`]: the evaluator trait, the search evaluator and [`Negamax`].
//! * [`study`]: how leaf values change with the search budget.
//!
//! # Evaluators
//! A book's leaves are valued by a [`LeafEvaluator`]: [`eval::SearchEvaluator`]
//! (our alpha-beta search with a node limit per leaf and optionally one of
//! our endgame tables; a fresh transposition table per leaf, so values do
//! not depend on which thread asked) or the small [`eval::Negamax`] the
//! tests use.
//!
//! A book directory records its evaluator's description: a book resumes
//! only with the same evaluator, limit and table (the values would not
//! mix); another evaluator needs another directory.

pub mod dropout;
mod error;
pub mod eval;
pub mod export;
pub mod games_file;
pub mod graph;
pub mod grow;
pub mod play;
mod priority;
pub mod probe;
pub mod store;
pub mod study;

pub use dropout::{Omega, Selection};
pub use error::BookError;
pub use eval::{Evaluation, EvaluationError, LeafEvaluator, Negamax};
pub use graph::{BookGraph, Edge, GraphError, Node, NodeEval, NodeId, NodeKind};
pub use grow::{grow, Budget, GrowOptions, GrowReport};
pub use probe::{AnyBook, BookMove, BookSource, BookStats, ProbeReport};
pub use store::{Manifest, Parameters};
