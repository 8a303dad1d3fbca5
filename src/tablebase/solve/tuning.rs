//! The solver's tuning constants: each changes how fast a layer is solved,
//! never a byte of what it proves (the tests vary the first two and
//! compare the bytes). They sit below the phases that read them.

/// Components at least this large are solved by the parallel threshold
/// games (`games::par_peel`); below, one thread's sequential `peel` is
/// faster than sharing out a few hundred states per frontier.
pub const PARALLEL_GAMES_FROM: usize = 1 << 13;

/// Parts of the component search of at most this many positions go to
/// Pearce's algorithm (`split`).
pub(crate) const PEARCE_UP_TO: usize = 1 << 16;

/// Layers of at least this many positions park their entries on disk
/// while the component search runs (`LayerSolver::with_parking`): from
/// 20 seeds (85 million positions, 0.34 GB parked; about a second each
/// way), where the search's peak starts to matter.
pub const PARK_FROM: usize = 1 << 26;

/// Nodes of a member's first round of threshold-search questions; each
/// further round gets eight times more, up to the budget's
/// `nodes_per_search`.
pub(crate) const FIRST_BUDGET: u64 = 4_096;

/// Open members searched between two checkpoint opportunities.
pub(crate) const SEARCH_BATCH: usize = 256;
