//! A tablebase build in a directory: resumable after any interruption,
//! ending in the same bytes whatever happened.
//!
//! | module | what it does |
//! |---|---|
//! | [`options`] | what a build is asked, why it stops, what it did |
//! | [`names`] | the names of every file in a build directory |
//! | `manifest` | the manifest's text: its one writer and reader |
//! | `checkpoints` | checkpoints on disk: a layer's snapshot and its parts, whether to resume from them |
//! | [`finished`] | the finished layers, mapped and checked; a finished build opened as a table from them |
//! | `seed` | starting from a proven table |
//! | `outputs` | the finished products: `tablebase.owtb`, its compressed copy, the engine's file, `stats.json` |
//! | `protocol` | how the ranks of a distributed build keep in step, and write a layer's slices |
//! | [`build`] | the build itself: rank 0's part and the others', opening the directory, each layer's run |
//! | [`improve`] | a finished build searched again in place, its outputs replaced together |
//!
//! Each file uses only those above it in this table (`names` none of
//! them), so there is no import circle among them.

pub mod build;
mod checkpoints;
pub mod finished;
pub mod improve;
mod manifest;
pub use manifest::check_layer_files;
pub mod names;
pub mod options;
mod outputs;
mod protocol;
mod seed;
