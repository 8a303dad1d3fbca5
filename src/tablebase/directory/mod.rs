//! A tablebase build in a directory: resumable after any interruption,
//! ending in the same bytes whatever happened.
//!
//! | module | what it does |
//! |---|---|
//! | `names` | the names of every file in a build directory |
//! | [`build`] | options, the manifest, checkpoints on disk, the layer loop and the rank protocol, the outputs |
//! | [`improve`] | a finished build searched again in place, its outputs replaced together |

pub mod build;
pub mod improve;
pub mod names;
