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
use std::sync::atomic::Ordering::Relaxed;

use rayon::prelude::*;

use crate::rank::layer_index;
use crate::rules::Position;
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::snapshot::GamesSnapshot;
use crate::tablebase::snapshot::GamesState;
use crate::tablebase::solve::checkpoint;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::games::{as_atomic, par_peel, peel, ParallelStateGraph, StateGraph};
use crate::tablebase::solve::members::{MemberNumbers, MemberPositions};
use crate::tablebase::solve::solver::LayerSolver;

/// Per-state scratch arrays over the whole layer (two states a position),
/// reused by every component.
pub(crate) struct BoundWork {
    /// Threshold at which a state entered `W` (0: not yet).
    win: Vec<u8>,
    /// Opponent states: children not in `W` yet (counted once the state
    /// may join, see [`cycle_bounds`]).
    open: Vec<u8>,
    /// The safety game's scratch.
    safe: Vec<u8>,
}

impl BoundWork {
    pub fn new(size: usize) -> BoundWork {
        BoundWork { win: vec![0; 2 * size], open: vec![0; 2 * size], safe: vec![0; 2 * size] }
    }
}

/// A game state: position, its layer index, parity. Packed in 16 bytes
/// (the pits as bytes, `2 × index + parity`): the games' frontiers can
/// hold millions of them.
#[derive(Clone, Copy)]
pub(crate) struct State {
    pits: [u8; 12],
    node: u32,
}

impl State {
    #[inline]
    fn new(position: &Position, index: usize, parity: usize) -> State {
        debug_assert!(index < 1 << 31, "a layer index fits in 31 bits");
        State { pits: position.pits(), node: (2 * index + parity) as u32 }
    }

    #[inline]
    fn position(&self) -> Position {
        Position::new(self.pits)
    }

    #[inline]
    fn index(&self) -> usize {
        self.node as usize / 2
    }

    #[inline]
    fn parity(&self) -> usize {
        self.node as usize & 1
    }
}

/// A component as a graph of game states, walked through moves and
/// un-moves: no edge lists, so a giant component of a big layer costs only
/// the layer-wide work arrays.
struct ImplicitComponent<'s> {
    ids: &'s [u32],
    component: u32,
    members: &'s [u32],
    positions: &'s MemberPositions<'s>,
}

impl StateGraph for ImplicitComponent<'_> {
    type State = State;

    #[inline]
    fn node(&self, s: &State) -> usize {
        s.node as usize
    }

    #[inline]
    fn parity(&self, s: &State) -> usize {
        s.parity()
    }

    fn for_each_state(&self, mut visit: impl FnMut(State)) {
        // (Members are walked again each time rather than listed: in a
        // giant component the list would not fit.)
        self.positions.for_each(|i, position| {
            let index = self.members[i] as usize;
            visit(State::new(&position, index, 0));
            visit(State::new(&position, index, 1));
        });
    }

    #[inline]
    fn for_each_child(&self, s: &State, mut visit: impl FnMut(State)) {
        let position = s.position();
        for pit in position.legal_moves() {
            let played = position.play(pit);
            if played.captured > 0 {
                continue;
            }
            let index = layer_index(&played.child) as usize;
            if self.ids[index] == self.component {
                visit(State::new(&played.child, index, 1 - s.parity()));
            }
        }
    }

    #[inline]
    fn for_each_parent(&self, s: &State, mut visit: impl FnMut(State)) {
        s.position().quiet_parents(|parent, _| {
            let index = layer_index(&parent) as usize;
            if self.ids[index] == self.component {
                visit(State::new(&parent, index, 1 - s.parity()));
            }
        });
    }
}

impl ParallelStateGraph for ImplicitComponent<'_> {
    fn par_collect<T: Send>(&self, visit: impl Fn(State, &mut Vec<T>) + Sync) -> Vec<T> {
        self.positions.par_collect(|i, position, out| {
            let index = self.members[i] as usize;
            visit(State::new(&position, index, 0), out);
            visit(State::new(&position, index, 1), out);
        })
    }
}

/// The bounds of one component and where they came from.
pub(crate) struct ComponentBounds {
    pub lower: Vec<u8>,
    pub upper: Vec<u8>,
    /// Co-Büchi rounds that added states beyond the attractor.
    pub safety_rounds: u32,
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
    let graph = ImplicitComponent { ids: &components.id, component: k as u32, members, positions };
    let BoundWork { win, open, safe } = work;
    // X = the player at parity 0. X-states enter `W` at the threshold
    // of their best exit read pessimistically; Y-states may join from
    // the threshold at which their best exit (read for X: n − its
    // upper end) no longer keeps X below, and only then count their
    // children not won. (No exit: 0, harmless, since thresholds start
    // at 1.) The members are scanned for them at each threshold: lists
    // by threshold would cost more than the games' own arrays.
    let x_entry = |i: usize, t: u8| solver.entries.interval(members[i] as usize).0 == t;
    let y_eligible = |i: usize, t: u8| n - solver.entries.interval(members[i] as usize).1 == t;
    for &m in members {
        let m = m as usize;
        win[2 * m..2 * m + 2].fill(0);
        open[2 * m..2 * m + 2].fill(0);
    }
    let (mut safety_rounds, first) = match resume {
        None => (0, n),
        Some((t, rounds, state)) => {
            for (i, &m) in members.iter().enumerate() {
                let m = m as usize;
                win[2 * m..2 * m + 2].copy_from_slice(&state[4 * i..4 * i + 2]);
                open[2 * m..2 * m + 2].copy_from_slice(&state[4 * i + 2..4 * i + 4]);
            }
            (rounds, t)
        }
    };
    let big = members.len() > 1 << 16;
    let mut queue = VecDeque::new();
    for t in (1..=first).rev() {
        if big {
            solver
                .progress
                .detail(&format!("{n} seeds: bounds of {} positions, threshold {t}", members.len()));
        }
        if t < first && checkpoints.due() {
            let games = GamesState { members, win, open };
            let games = GamesSnapshot::Arrays(&games);
            checkpoint::checkpoint_games(solver, checkpoints, (k, t, safety_rounds), components, &games)?;
        }
        let entries = &solver.entries;
        let may_join = |s: &State| s.parity() == 0 || entries.interval(s.index()).1 <= n - t;
        let good = |s: &State| {
            let own = s.position().own_seeds() as u8;
            (if s.parity() == 0 { own } else { n - own }) >= t
        };
        // The threshold's new entries, then the games from them.
        let frontier = {
            let (win, open) = (as_atomic(win), as_atomic(open));
            let count = |i: usize| {
                y_eligible(i, t).then(|| count_not_won(&graph, positions, win, open, i, t)).flatten()
            };
            let enter = |i: usize| {
                let m = members[i] as usize;
                (x_entry(i, t) && win[2 * m].load(Relaxed) == 0).then(|| {
                    win[2 * m].store(t, Relaxed);
                    State::new(&positions.get(i), m, 0)
                })
            };
            // (All counts first: they are taken before anything new is
            // won at t.)
            let all = 0..members.len();
            if parallel {
                let mut frontier: Vec<State> =
                    all.clone().into_par_iter().with_min_len(1 << 12).filter_map(count).collect();
                frontier.par_extend(all.into_par_iter().with_min_len(1 << 12).filter_map(enter));
                frontier
            } else {
                let mut frontier: Vec<State> = all.clone().filter_map(count).collect();
                frontier.extend(all.filter_map(enter));
                frontier
            }
        };
        // (Saturating: a resumed count comes from a file.)
        safety_rounds = safety_rounds.saturating_add(if parallel {
            let (win, open, safe) = (as_atomic(win), as_atomic(open), as_atomic(safe));
            par_peel(&graph, 0, win, open, safe, frontier, t, may_join, good)
        } else {
            queue.extend(frontier);
            let (_, rounds) =
                peel(&graph, 0, win, open, safe, &mut queue, t, may_join, good, None, None, &mut |_, _| {});
            rounds
        });
    }
    let lower = members.iter().map(|&m| win[2 * m as usize]).collect();
    let upper = members.iter().map(|&m| n - win[2 * m as usize + 1]).collect();
    Ok(ComponentBounds { lower, upper, safety_rounds })
}

/// Why one member's games' state, read from a snapshot taken before
/// threshold `t` (thresholds above `t` played) in a layer of `n` seeds,
/// cannot be one the games left there, judged against the member's own
/// exits alone, `(lower, upper)` (`docs/cycle-bounds.md` §10, facts 1 to
/// 3): `state` is `win(q,0), win(q,1), open(q,0), open(q,1)`.
pub(crate) fn member_state_fault(n: u8, t: u8, (lower, upper): (u8, u8), state: [u8; 4]) -> Option<String> {
    let [won_x, won_y, open_x, open_y] = state;
    // The threshold from which the opponent state may join.
    let joins_from = n.saturating_sub(upper);
    if won_x != 0 && !(t < won_x && won_x <= n) {
        return Some(format!("player state won at threshold {won_x}"));
    }
    if won_y != 0 && !(t < won_y && won_y <= joins_from) {
        return Some(format!("opponent state won at threshold {won_y}, may join from {joins_from}"));
    }
    if lower > t && won_x < lower {
        return Some(format!("player state won at {won_x}, below its exit's threshold {lower}"));
    }
    if open_x != 0 {
        return Some("a count at a player state".into());
    }
    if won_y == 0 && joins_from <= t && open_y != 0 {
        return Some(format!("a count at an opponent state that may join only from {joins_from}"));
    }
    None
}

/// Why a games' state read from a snapshot taken before threshold `t`
/// cannot be one the games of component `k` left there, or `None` if it
/// can: every member's state on its own ([`member_state_fault`]), then
/// against its children's (`docs/cycle-bounds.md` §10, facts 4 to 6: the
/// marks the games' rules give a state from its exits and its children's
/// marks, and an opponent's count of children not won). `state` holds
/// each member's four bytes, as snapshots store them. So every mark and
/// count is one the games can meet (resumed games neither wrap a count
/// nor write a bound outside `0..=n`), and only marks forged consistently
/// around cycles, all at one threshold, could pass.
pub(crate) fn games_state_fault(
    solver: &LayerSolver,
    components: &Components,
    k: usize,
    t: u8,
    state: &[u8],
) -> Option<String> {
    let members = components.of(k);
    if state.len() != 4 * members.len() {
        return Some(format!("{} bytes of games' state for {} members", state.len(), members.len()));
    }
    let n = solver.n as u8;
    // (Unranked one by one: stored, the positions of a giant component
    // would take 16 bytes a member.)
    let positions = MemberPositions::with_limit(solver.n, members, 0);
    let graph =
        ImplicitComponent { ids: &components.id, component: k as u32, members, positions: &positions };
    let numbers = MemberNumbers::new(members);
    // A child state's mark (children are members: `for_each_child` keeps
    // to the component).
    let mark = |child: &State| numbers.of(child.index()).map_or(0, |j| state[4 * j + child.parity()]);
    let fault = |i: usize| -> Option<String> {
        let m = members[i] as usize;
        let bytes = [state[4 * i], state[4 * i + 1], state[4 * i + 2], state[4 * i + 3]];
        let [won_x, won_y, _, open_y] = bytes;
        let (lower, upper, _) = solver.entries.interval(m);
        let say = |what: String| Some(format!("position {m} of component {k}, before threshold {t}: {what}"));
        if let Some(what) = member_state_fault(n, t, (lower, upper), bytes) {
            return say(what);
        }
        let position = positions.get(i);
        // Fact 4: the player joins at its exit's threshold or its first
        // child's, whichever comes first.
        let mut best_child = 0u8;
        graph.for_each_child(&State::new(&position, m, 0), |c| best_child = best_child.max(mark(&c)));
        let joins_at = best_child.max(if lower > t { lower } else { 0 });
        if won_x != joins_at {
            return say(format!("player state won at {won_x}, at {joins_at} by its exit and children"));
        }
        // Facts 5 and 6: the opponent joins once it may and its last
        // child has joined; until then it counts its children not won.
        let joins_from = n.saturating_sub(upper);
        let (mut not_won, mut last_child) = (0u32, u8::MAX);
        graph.for_each_child(&State::new(&position, m, 1), |c| {
            let w = mark(&c);
            not_won += (w == 0) as u32;
            last_child = last_child.min(w);
        });
        let joins_at = if joins_from > t && not_won == 0 { joins_from.min(last_child) } else { 0 };
        if won_y != joins_at {
            return say(format!("opponent state won at {won_y}, at {joins_at} by its exits and children"));
        }
        if won_y == 0 && joins_from > t && open_y as u32 != not_won {
            return say(format!("opponent state counts {open_y} children not won of {not_won}"));
        }
        None
    };
    (0..members.len()).into_par_iter().with_min_len(1 << 12).find_map_first(fault)
}

/// An opponent state (member `i`) that may join from threshold `t` on
/// counts its children not won, before anything new is won at `t`
/// (the attractor counts down only for what it takes from a frontier);
/// with none, it is won at once and returned for the frontier. It
/// writes only its own (parity 1) entries and reads only parity 0
/// ones, so members may be counted on several threads.
fn count_not_won(
    graph: &ImplicitComponent,
    positions: &MemberPositions,
    win: &[std::sync::atomic::AtomicU8],
    open: &[std::sync::atomic::AtomicU8],
    i: usize,
    t: u8,
) -> Option<State> {
    let m = graph.members[i] as usize;
    if win[2 * m + 1].load(Relaxed) != 0 {
        return None;
    }
    let state = State::new(&positions.get(i), m, 1);
    let mut not_won = 0;
    graph.for_each_child(&state, |c| not_won += (win[graph.node(&c)].load(Relaxed) == 0) as u8);
    open[2 * m + 1].store(not_won, Relaxed);
    (not_won == 0).then(|| {
        win[2 * m + 1].store(t, Relaxed);
        state
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tablebase::snapshot::NoCheckpoints;
    use crate::tablebase::solve::components;
    use crate::tablebase::{LayerBytes, SearchBudget, SolvedLayers};

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
            let components = components::components(&mut solver);
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
