//! History-free bounds for the positions of one cycle component
//! (`docs/cycle-bounds.md` proves them sound).
//!
//! Game states are nodes `(q, b)`: position `q` of the component, `b` the
//! ply parity from a root player X (X moves at `b = 0`, the opponent Y at
//! `b = 1`). For each threshold `t = n, n − 1, …, 1` we solve the game Γ_t
//! in which X wins a play that
//! * leaves the component through an option worth at least `t` to X
//!   (judged pessimistically for X when the option's value is an interval),
//! * or stays in the component forever and, from some point on, only visits
//!   states where X's own row holds at least `t` seeds (co-Büchi).
//!
//! `W_t`, the states X wins, shrinks as `t` grows, so we compute it
//! incrementally from `W_{t+1}`: grow the X-attractor, then repeatedly add
//! the states from which X can stay forever inside good states of the rest
//! (a safety game, solved as a greatest fixpoint), and attract again.
//! Finally `lower(q) = max{t : (q, 0) ∈ W_t}` and
//! `upper(q) = n − max{t : (q, 1) ∈ W_t}`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

use crate::memory::release_free_memory;
use crate::rules::Position;
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::snapshot::GamesSnapshot;
use crate::tablebase::snapshot::GamesState;
use crate::tablebase::solve::checkpoint;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::entries::ExitBounds;
use crate::tablebase::solve::games::{
    as_atomic, par_peel, peel, prefetch, Counters, ParallelStateGraph, StateGraph,
};
use crate::tablebase::solve::implicit::{ImplicitComponent, State, Y_OPEN};
use crate::tablebase::solve::members::MemberPositions;
use crate::tablebase::solve::solver::LayerSolver;

/// Scratch arrays over the whole layer, reused by every component.
pub(crate) struct BoundWork {
    /// Per state (two a position): the threshold at which it entered `W`
    /// (0: not yet).
    win: Vec<u8>,
    /// Per position, the counters of its two states in one byte
    /// (`implicit::X_SAFE`, `Y_OPEN`, `Y_SAFE`): the opponent state's
    /// children not in `W` yet (counted once the state may join, see
    /// [`cycle_bounds`]), and the safety game's scratch of both.
    counts: Vec<u8>,
    /// A bit a position: whether its opponent state may join `W` at the
    /// threshold being played, that is whether the threshold is at most
    /// `n − upper` (see [`cycle_bounds`]). Set by the scan of that
    /// threshold, so the games never read a member's bounds at random
    /// (the bounds may wait on disk while they run).
    may_join: Vec<AtomicU64>,
}

impl BoundWork {
    pub fn new(size: usize) -> BoundWork {
        BoundWork {
            win: vec![0; 2 * size],
            counts: vec![0; size],
            may_join: crate::parallel::atomics(vec![0u64; size.div_ceil(64)]),
        }
    }
}

/// The word and bit of `index` in a bit a position.
#[inline]
fn bit(index: usize) -> (usize, u64) {
    (index / 64, 1 << (index % 64))
}

/// The bounds of one component and where they came from.
pub(crate) struct ComponentBounds {
    pub lower: Vec<u8>,
    pub upper: Vec<u8>,
    /// Co-Büchi rounds that added states beyond the attractor.
    pub safety_rounds: u32,
}

/// A component's history-free bounds as they wait for its decisions: a
/// byte a member where they meet (from 14 seeds up, every member), the
/// upper ends listed only where they differ. At layer 20 the two full
/// lists (2 bytes a member) stood beside the entries as they came back
/// from disk, and made the cycle phase's peak.
pub(crate) struct MemberBounds {
    lower: Vec<u8>,
    /// `(member number, upper)` where the upper end is above the lower,
    /// by member number.
    wider: Vec<(u32, u8)>,
}

impl MemberBounds {
    /// The bounds of lists `lower` and `upper` (member by member), which
    /// are dropped.
    pub(crate) fn new(lower: Vec<u8>, upper: Vec<u8>) -> MemberBounds {
        assert_eq!(lower.len(), upper.len(), "a bound of each end a member");
        let wider =
            (0..lower.len()).filter(|&i| upper[i] != lower[i]).map(|i| (i as u32, upper[i])).collect();
        MemberBounds { lower, wider }
    }

    /// `(lower, upper)` of member number `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> (u8, u8) {
        let lower = self.lower[i];
        match self.wider.binary_search_by_key(&(i as u32), |&(j, _)| j) {
            Ok(at) => (lower, self.wider[at].1),
            Err(_) => (lower, lower),
        }
    }

    /// Both lists in full (for a search, which reads them at random, and
    /// its checkpoints).
    pub(crate) fn lists(&self) -> (Vec<u8>, Vec<u8>) {
        let mut upper = self.lower.clone();
        self.wider.iter().for_each(|&(i, high)| upper[i as usize] = high);
        (self.lower.clone(), upper)
    }
}

/// Whether a component of `members` members gives the layer-wide work
/// arrays back once its bounds are found (its caller drops them): one of a
/// quarter of the layer or more, whose decisions need their room. Its
/// `counts` go before its bounds are listed, which take their place.
pub(crate) fn gives_work_back(solver: &LayerSolver, members: usize) -> bool {
    4 * members >= solver.size
}

/// Whether component `k` gets the parallel games: a large component
/// when more than one thread runs (on one, the sequential games are
/// the faster form). The bounds are the same either way.
pub(crate) fn parallel_games(solver: &LayerSolver, components: &Components, k: usize) -> bool {
    components.of(k).len() >= solver.parallel_members && rayon::current_num_threads() > 1
}

/// Solves Γ_t for every threshold on component `k`, or for those up to
/// `t` when resuming from a snapshot taken after threshold `t + 1`, on
/// one thread or with the parallel games (the tests compare them).
// (A component, its work arrays, a resume point, checkpoints and the
// choice of games: each is needed.)
#[allow(clippy::too_many_arguments)]
pub(crate) fn cycle_bounds(
    solver: &LayerSolver,
    components: &Components,
    k: usize,
    positions: &MemberPositions,
    work: &mut BoundWork,
    resume: Option<(u8, u32, Vec<u8>)>,
    checkpoints: &mut dyn Checkpointer,
    parallel: bool,
) -> std::io::Result<ComponentBounds> {
    let members = components.of(k);
    let n = solver.n as u8;
    let graph = ImplicitComponent::new(components, k, positions);
    let BoundWork { win, counts, may_join: joining } = work;
    // (A component that gave its counts back leaves them empty.)
    if counts.len() != win.len() / 2 {
        *counts = vec![0; win.len() / 2];
    }
    let (mut safety_rounds, first) = match &resume {
        None => (0, n),
        Some((t, rounds, _)) => (*rounds, *t),
    };
    let exits = solver.entries.exit_bounds();
    for m in members.iter() {
        let m = m as usize;
        win[2 * m..2 * m + 2].fill(0);
        counts[m] = 0;
        // The opponent states that may join at the first threshold
        // played: those of the thresholds played before it (none when
        // the games start at `n`).
        let (word, bit) = bit(m);
        if n - exits.get(m).1 > first {
            joining[word].fetch_or(bit, Relaxed);
        } else {
            joining[word].fetch_and(!bit, Relaxed);
        }
    }
    if let Some((_, _, state)) = resume {
        for (i, m) in members.iter().enumerate() {
            let m = m as usize;
            win[2 * m..2 * m + 2].copy_from_slice(&state[4 * i..4 * i + 2]);
            // (A resumed count is at most 6, and a player state's 0:
            // `games_state` checked them.)
            counts[m] = Y_OPEN.with(0, state[4 * i + 3]);
        }
    }
    let big = members.len() > 1 << 16;
    let mut queue = VecDeque::new();
    for t in (1..=first).rev() {
        if big {
            solver
                .progress
                .detail(&format!("{n} seeds: bounds of {} positions, threshold {t}", members.len()));
        }
        if t < first && checkpoints.due() {
            let games = GamesState { members: &members, win, counts, open_of: |c| [0, Y_OPEN.of(c)] };
            let games = GamesSnapshot::Arrays(&games);
            checkpoint::checkpoint_games(solver, checkpoints, (k, t, safety_rounds), components, &games)?;
        }
        // (`upper(q) <= n - t`, read from the bit the scans of this
        // threshold and those before it set.)
        let joining: &[AtomicU64] = joining;
        let may_join = |s: &State| {
            let (word, bit) = bit(s.index());
            s.parity() == 0 || joining[word].load(Relaxed) & bit != 0
        };
        let good = |s: &State| {
            let own = s.position().own_seeds() as u8;
            (if s.parity() == 0 { own } else { n - own }) >= t
        };
        // One pass over the members for the threshold's new entries, then
        // the games from them. (In member order; the attractor's region
        // and counts do not depend on the order of its first frontier.)
        // (Saturating: a resumed count comes from a file.)
        safety_rounds = safety_rounds.saturating_add(if parallel {
            let (win, counts) = (as_atomic(win), as_atomic(counts));
            // The frontier as the parallel games keep it, packed.
            let frontier = positions.par_collect(|_, m, position, out| {
                scan_member(&graph, &exits, (win, counts, joining), (m, &position), (n, t), &mut |s| {
                    out.push(graph.store(&s))
                });
                // The first safety set's candidates (`par_peel`).
                for parity in 0..2 {
                    let state = State::new(&position, m, parity);
                    if win[2 * m + parity].load(Relaxed) == 0 && may_join(&state) && good(&state) {
                        let Counters { byte, safe, .. } = graph.counters(2 * m + parity);
                        safe.store(&counts[byte], 1);
                    }
                }
            });
            let touch = |s: &State| {
                let node = graph.node(s);
                prefetch(&win[node]);
                if s.parity() == 1 {
                    prefetch(&counts[graph.counters(node).byte]);
                    prefetch(&joining[s.index() / 64]);
                }
            };
            par_peel(&graph, 0, win, counts, frontier, t, may_join, good, true, touch)
        } else {
            {
                let (win, counts) = (as_atomic(win), as_atomic(counts));
                positions.for_each(|_, m, position| {
                    scan_member(&graph, &exits, (win, counts, joining), (m, &position), (n, t), &mut |s| {
                        queue.push_back(s)
                    })
                });
            }
            let (_, rounds) =
                peel(&graph, 0, win, counts, &mut queue, t, may_join, good, None, None, &mut |_, _| {});
            rounds
        });
        if big {
            // The frontiers' pieces, freed on many threads, would otherwise
            // stay with the allocator: at layer 20 they held 0.8 bytes a
            // position more by the last threshold.
            release_free_memory();
        }
    }
    if gives_work_back(solver, members.len()) {
        *counts = Vec::new();
    }
    // (Reserved whole: grown from nothing, a list of a giant component
    // leaves the pieces it outgrew with the allocator; at layer 20 this
    // took 0.16 bytes a position off the memory after the games.)
    let mut lower = Vec::with_capacity(members.len());
    let mut upper = Vec::with_capacity(members.len());
    lower.extend(members.iter().map(|m| win[2 * m as usize]));
    upper.extend(members.iter().map(|m| n - win[2 * m as usize + 1]));
    Ok(ComponentBounds { lower, upper, safety_rounds })
}

/// The member at layer index `m` (at `position`) at the start of threshold `t`, for X, the
/// player at parity 0: its player state is won at once when its best
/// exit, read pessimistically, is worth `t`; its opponent state may join
/// from the threshold at which its best exit (read for X: `n` − its upper
/// end) no longer keeps X below (no exit: 0, harmless, since thresholds
/// start at 1): its bit in `joining` is set then, and it counts
/// its children not won before `t` (`docs/cycle-bounds.md` §3) into its
/// open counter, and is won at once if there are none (`n`: the layer's
/// seeds). The states won are pushed to `out`. Each member writes only
/// its own entries, so members may be scanned on several threads at once.
fn scan_member(
    graph: &ImplicitComponent,
    exits: &ExitBounds,
    (win, counts, joining): (&[AtomicU8], &[AtomicU8], &[AtomicU64]),
    (m, position): (usize, &Position),
    (n, t): (u8, u8),
    push: &mut dyn FnMut(State),
) {
    let (lower, upper) = exits.get(m);
    if n - upper == t {
        // (Other members share the word: set atomically.)
        let (word, bit) = bit(m);
        joining[word].fetch_or(bit, Relaxed);
    }
    if n - upper == t && win[2 * m + 1].load(Relaxed) == 0 {
        let state = State::new(position, m, 1);
        // Not won before `t`: no mark, or the mark `t` of a player state
        // this pass has just won (no state holds a mark below `t` yet).
        let mut not_won = 0;
        graph.for_each_child(&state, |c| not_won += (win[graph.node(&c)].load(Relaxed) <= t) as u8);
        let Counters { byte, open, .. } = graph.counters(2 * m + 1);
        open.store(&counts[byte], not_won);
        if not_won == 0 {
            win[2 * m + 1].store(t, Relaxed);
            push(state);
        }
    }
    if lower == t && win[2 * m].load(Relaxed) == 0 {
        win[2 * m].store(t, Relaxed);
        push(State::new(position, m, 0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tablebase::layers::{LayerBytes, SolvedLayers};
    use crate::tablebase::params::SearchBudget;
    use crate::tablebase::snapshot::NoCheckpoints;
    use crate::tablebase::solve::components;

    /// Member bounds kept a byte a member where they meet give back both
    /// lists, member by member and in full.
    #[test]
    fn member_bounds_give_back_both_lists() {
        let lower: Vec<u8> = (0..1000).map(|i| (i % 13) as u8).collect();
        let upper: Vec<u8> = lower.iter().enumerate().map(|(i, &l)| l + (i % 7 == 3) as u8 * 5).collect();
        let bounds = MemberBounds::new(lower.clone(), upper.clone());
        assert_eq!(bounds.wider.len(), upper.iter().zip(&lower).filter(|(u, l)| u != l).count());
        for i in 0..lower.len() {
            assert_eq!(bounds.get(i), (lower[i], upper[i]), "member {i}");
        }
        assert_eq!(bounds.lists(), (lower.clone(), upper));
        let exact = MemberBounds::new(lower.clone(), lower.clone());
        assert!(exact.wider.is_empty());
        assert_eq!(exact.lists(), (lower.clone(), lower));
    }

    /// The parallel games give every component of a layer the bounds and
    /// safety rounds of the sequential ones, on one thread or three, with
    /// the member positions stored or unranked on demand.
    #[test]
    fn the_parallel_games_give_the_sequential_bounds() {
        let pools: Vec<rayon::ThreadPool> =
            [1, 3].iter().map(|&t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap()).collect();
        let (mut compared, mut largest, mut rounds) = (0, 0, 0);
        let mut solved = SolvedLayers::new();
        for n in 0..=9 {
            let mut solver = LayerSolver::new(n, &solved, SearchBudget::NONE);
            solver.retrograde_only();
            let components = components::components(&mut solver).expect("labels enough");
            let mut work = BoundWork::new(solver.size);
            for k in 0..components.count() {
                let members = components.of(k);
                if members.len() < 2 {
                    continue;
                }
                let stored = MemberPositions::with_limit(n, members, usize::MAX);
                let one = cycle_bounds(
                    &solver,
                    &components,
                    k,
                    &stored,
                    &mut work,
                    None,
                    &mut NoCheckpoints,
                    false,
                );
                let one = one.unwrap();
                for (pool, limit) in pools.iter().zip([usize::MAX, 0]) {
                    let positions = MemberPositions::with_limit(n, members, limit);
                    let many = pool.install(|| {
                        cycle_bounds(
                            &solver,
                            &components,
                            k,
                            &positions,
                            &mut work,
                            None,
                            &mut NoCheckpoints,
                            true,
                        )
                    });
                    let many = many.unwrap();
                    assert_eq!(one.lower, many.lower, "layer {n}, component {k}");
                    assert_eq!(one.upper, many.upper, "layer {n}, component {k}");
                    assert_eq!(one.safety_rounds, many.safety_rounds, "layer {n}, component {k}");
                }
                compared += 1;
                largest = largest.max(members.len());
                rounds += one.safety_rounds;
            }
            let (bytes, _) = LayerSolver::new(n, &solved, SearchBudget::NONE).solve();
            solved.push(LayerBytes::Owned(bytes));
        }
        assert!(
            compared >= 8 && largest > 100_000 && rounds > 0,
            "{compared} components, largest {largest}, {rounds} rounds"
        );
    }
}
