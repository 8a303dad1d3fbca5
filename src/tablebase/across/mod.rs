//! The distributed twins of the solver's phases, over the ranks of a
//! distributed build (`docs/distributed-build.md`): each rank holds its
//! own range of a layer's indexes and the ranks exchange what crosses
//! ranges; every file they end with is the one-process build's, to the
//! byte.
//!
//! | module | the twin of | what it does |
//! |---|---|---|
//! | `propagate` | `solve::retrograde` | propagation rounds across the ranks' ranges |
//! | `layer` | `solve::retrograde`, `solve::components` | a layer's retrograde analysis and component search over the ranks |
//! | `bounds` | `solve::bounds` | the threshold games of a large component played by every rank |
//! | `spread` | `solve::resolve` | the cycle phases with the layer's entries kept spread |
//! | `checkpoint` | `solve::checkpoint` | snapshots of a spread layer, one part per rank |

pub(crate) mod bounds;
pub(crate) mod checkpoint;
pub mod layer;
pub(crate) mod propagate;
pub(crate) mod spread;
