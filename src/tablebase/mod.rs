//! Endgame tablebases: building them layer by layer, checking, probing and
//! exporting them.
//!
//! Value semantics (`docs/rules.md`, "What a tablebase value means"): for a
//! position `p` with `n` seeds on the board, seen from the side to move,
//! the **as-root value** is the most seeds out of those `n` that the mover
//! captures from now to the end under perfect play, when `p` was reached by
//! a capture (or play starts there), so nothing before `p` can repeat. It
//! obeys `value(p) = max over legal m of captured(m) + n' − value(child)`,
//! with `n' = n − captured(m)`; with no legal move the mover takes its own
//! row.
//!
//! # The map
//! The folders follow a build's pipeline; `docs/tablebase-build.md` gives
//! each phase's file, the state it owns and the proof it rests on. Arrows
//! of `use` only point down this list's layers (a test,
//! `tests/import_circles.rs`, keeps the crate free of import circles).
//!
//! | layer | module | what it holds |
//! |---|---|---|
//! | base | [`table`] | [`Probe`] and [`EndgameTable`]: what every table answers |
//! | base | [`entry`] | an entry's records in our files and layers: 3 bytes, or 1 when exact |
//! | base | [`params`] | the build's parameters: largest layer, search budget, every limit, their names in the files |
//! | base | `stats` | one layer's figures (positions, times, memory, proofs) |
//! | base | `layers` | finished layers, in memory or mapped read-only |
//! | base | `snapshot` | snapshot primitives: checkpoint hooks, parts of ranks |
//! | phases | `solve` | one layer in one process: its arrays' owner, then retrograde analysis → components → threshold games and bounds → cycle searches → resolve; its checkpoint |
//! | phases | `across` | the same phases spread over the ranks of a distributed build, and their checkpoints in parts |
//! | files | [`owtb`] | our `.owtb` file: its one reader and writer |
//! | files | [`engine`] | the engine's "Oware Endgames" files: export, and reading them as a table |
//! | files | [`verify`] | checking a finished table (and a second opinion on search proofs) |
//! | files | [`excerpt`] | a sample of a layer with every sampled position's children, and its check without the table |
//! | top | [`directory`] | a resumable build in a directory: names, manifest, checkpoints on disk, the rank protocol, improve passes |
//! | top | [`open`], [`probe`] | opening any table file; probing a game state |

pub(crate) mod across;
pub mod directory;
pub mod engine;
pub mod entry;
pub mod excerpt;
mod layers;
pub mod open;
pub mod owtb;
pub mod params;
pub mod probe;
pub(crate) mod snapshot;
pub(crate) mod solve;
mod stats;
pub mod table;
pub mod verify;

pub use crate::game::Outcome;
pub use across::layer::LayerTraffic;
pub use directory::build::{build, build_across};
pub use directory::options::{BuildError, BuildOptions, BuildReport};
pub use entry::{Entry, EntryWidth, Proof};
pub use layers::{LayerBytes, PackedLayer, SolvedLayers};
pub use open::{open_any, AnyTable, OpenError};
pub use owtb::{FileError, Tablebase};
pub use params::{BuildParams, Param, ParamError, SearchBudget};
pub use probe::{Certainty, MoveValue, ProbeError, StateProbe};
pub use solve::solver::LayerSolver;
pub use solve::tuning::PARALLEL_GAMES_FROM;
pub use stats::{LayerStats, PhaseMemory, PhaseSeconds};
pub use table::{EndgameTable, Probe};
