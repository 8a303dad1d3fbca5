//! One layer solved in one process, given every lower layer: the phases
//! in the order they run (`docs/tablebase-build.md` maps each to its proof).
//!
//! | order | module | what it does |
//! |---|---|---|
//! | state | `entries` | the one owner of the layer's per-position arrays |
//! | state | `solver` | a layer being solved: its entries, budget, figures; where it stands (`Cursor`) |
//! | state | `tuning` | constants that change the speed, never the bytes |
//! | 1 | `retrograde` | terminal positions, captures into lower layers, propagation to a fixpoint |
//! | 2 | `components` over `split` | the cycle components of what is left, sinks first (forward–backward split, Pearce for small parts) |
//! | 3a | `members`, `graph` | a component's members: their positions, and the component as edge lists |
//! | 3b | `games`, `implicit`, `bounds` | the threshold games, written once, on a component's implicit graph of game states, and the history-free bounds they prove |
//! | 3b | `games_state` | whether a snapshot's games' state is one the games can leave |
//! | 3c | `search` | the cycle searches that close what the bounds leave open |
//! | 3d | `resolve` | component by component: bounds, searches, decisions, propagation |
//! | driver | `run` | the phases in order, with memory figures and checkpoints |
//! | snapshot | `checkpoint` | the one-process snapshot of a layer under construction |

pub(crate) mod bounds;
pub(crate) mod checkpoint;
pub(crate) mod components;
pub(crate) mod entries;
pub(crate) mod frontier;
pub(crate) mod games;
pub(crate) mod games_state;
pub(crate) mod graph;
pub(crate) mod implicit;
pub(crate) mod members;
pub(crate) mod resolve;
pub(crate) mod retrograde;
pub(crate) mod run;
pub(crate) mod search;
pub(crate) mod solver;
pub(crate) mod split;
pub(crate) mod tuning;
