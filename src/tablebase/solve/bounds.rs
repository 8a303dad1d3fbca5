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

use crate::memory::{prefetch, release_free_memory};
use crate::rank::layer_index;
use crate::rules::Position;
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::snapshot::GamesSnapshot;
use crate::tablebase::snapshot::GamesState;
use crate::tablebase::solve::checkpoint;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::entries::{ExitBounds, LayerEntries};
use crate::tablebase::solve::frontier::PendingStates;
use crate::tablebase::solve::games::{
    as_atomic, attract, par_attract, par_peel, par_safety_set_of_marked, peel, safety_set, Candidate,
    Counters, ParallelStateGraph, SameMark, StateGraph,
};
use crate::tablebase::solve::implicit::{ImplicitComponent, PackedState, State, Y_OPEN};
use crate::tablebase::solve::members::{MemberPositions, Members};
use crate::tablebase::solve::solver::{LayerSolver, SavedGames};

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

/// The least member of component `k` that still waits for a move out
/// of it, if any. Every child outside the component is decided before
/// its turn (`docs/cycle-bounds.md` §9), so a member waits for its quiet
/// moves into the component only; one that waits for more would read its
/// exits incomplete, and the bounds made of them would not be bounds. The
/// games count each opponent state's children from the same pending
/// moves ([`ComponentGames::prepare`]), so `resolve` checks this before
/// any games start. (One pass of move generation over the members.)
pub(crate) fn member_waiting_outside(
    solver: &LayerSolver,
    components: &Components,
    k: usize,
    positions: &MemberPositions,
) -> Option<u64> {
    let inside_component = components.membership(k);
    let waiting = positions.par_collect(|_, m, position, out| {
        let mut inside = 0u8;
        for pit in position.legal_moves() {
            let played = position.play(pit);
            let child = layer_index(&played.child) as usize;
            inside += (played.captured == 0 && inside_component.contains(child)) as u8;
        }
        if solver.entries.pending(m) != inside {
            out.push(m as u32);
        }
    });
    waiting.into_iter().min().map(u64::from)
}

/// The bounds of one component and where they came from.
pub(crate) struct ComponentBounds {
    /// The lower end of every member's bounds, member by member.
    pub lower: Vec<u8>,
    /// `(member number, upper)` where the upper end is above the lower,
    /// by member number (from 14 seeds up, nowhere).
    pub wider: Vec<(u32, u8)>,
    /// Co-Büchi rounds that added states beyond the attractor.
    pub safety_rounds: u32,
}

impl ComponentBounds {
    /// The bounds of lists `lower` and `upper` (member by member).
    pub(crate) fn from_lists(lower: Vec<u8>, upper: Vec<u8>, safety_rounds: u32) -> ComponentBounds {
        assert_eq!(lower.len(), upper.len(), "a bound of each end a member");
        let wider = wider_than(&lower, upper.into_iter());
        ComponentBounds { lower, wider, safety_rounds }
    }
}

/// `(member number, upper)` for the members whose upper end, `upper` in
/// member order, is not their lower end.
fn wider_than(lower: &[u8], upper: impl Iterator<Item = u8>) -> Vec<(u32, u8)> {
    upper.enumerate().filter(|&(i, high)| high != lower[i]).map(|(i, high)| (i as u32, high)).collect()
}

/// A component's history-free bounds as they wait for its decisions.
pub(crate) enum MemberBounds {
    /// Beside the entries, whose members' bounds (their best exits) a
    /// search still reads: a byte a member where they meet (from 14 seeds
    /// up, every member), the upper ends listed only where they differ.
    Listed {
        lower: Vec<u8>,
        /// `(member number, upper)` where the upper end is above the
        /// lower, by member number.
        wider: Vec<(u32, u8)>,
    },
    /// Written over the members' own bounds in the entries, where nothing
    /// reads their exits any more (no search runs): at 25 seeds the list
    /// of lower ends beside the entries made the layer's peak, 4.2 bytes
    /// a position (`docs/tablebase-build.md`, "Memory, phase by phase",
    /// step 7).
    InEntries,
}

impl MemberBounds {
    /// The bounds of lists `lower` and `upper` (member by member), which
    /// are dropped.
    pub(crate) fn new(lower: Vec<u8>, upper: Vec<u8>) -> MemberBounds {
        MemberBounds::of(ComponentBounds::from_lists(lower, upper, 0))
    }

    /// A component's bounds, listed.
    pub(crate) fn of(bounds: ComponentBounds) -> MemberBounds {
        let ComponentBounds { lower, wider, .. } = bounds;
        MemberBounds::Listed { lower, wider }
    }

    /// Writes listed bounds over the bounds of `members` in `entries`, as
    /// [`LayerEntries::restore_writing_member_bounds`] takes the entries
    /// back from disk if they wait there: only when no search will read
    /// the members' exits.
    pub(crate) fn into_entries(
        self,
        entries: &mut LayerEntries,
        members: Members,
    ) -> std::io::Result<MemberBounds> {
        if let MemberBounds::Listed { lower, wider } = self {
            entries.restore_writing_member_bounds(members, lower, &wider)?;
        }
        Ok(MemberBounds::InEntries)
    }

    /// `(lower, upper)` of member number `i`, at layer index `m`.
    #[inline]
    pub(crate) fn get(&self, entries: &LayerEntries, i: usize, m: u32) -> (u8, u8) {
        match self {
            MemberBounds::Listed { lower, wider } => {
                let lower = lower[i];
                match wider.binary_search_by_key(&(i as u32), |&(j, _)| j) {
                    Ok(at) => (lower, wider[at].1),
                    Err(_) => (lower, lower),
                }
            }
            MemberBounds::InEntries => entries.lower_upper(m as usize),
        }
    }

    /// Both lists in full, member by member (for a search, which reads
    /// them at random, and its checkpoints).
    pub(crate) fn lists(&self, entries: &LayerEntries, members: Members) -> (Vec<u8>, Vec<u8>) {
        match self {
            MemberBounds::Listed { lower, wider } => {
                let mut upper = lower.clone();
                wider.iter().for_each(|&(i, high)| upper[i as usize] = high);
                (lower.clone(), upper)
            }
            MemberBounds::InEntries => members.iter().map(|m| entries.lower_upper(m as usize)).unzip(),
        }
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
/// one thread or with the parallel games (the tests compare them). The
/// attractors come first, checked once at the end (`docs/cycle-bounds.md`
/// §3, "Attractors first"); a component whose check fails is played
/// again with a safety set at every threshold.
// (A component, its work arrays, a resume point, checkpoints and the
// choice of games: each is needed.)
#[allow(clippy::too_many_arguments)]
pub(crate) fn cycle_bounds(
    solver: &LayerSolver,
    components: &Components,
    k: usize,
    positions: &MemberPositions,
    work: &mut BoundWork,
    resume: Option<(u8, u32, SavedGames)>,
    checkpoints: &mut dyn Checkpointer,
    parallel: bool,
) -> std::io::Result<ComponentBounds> {
    let games = ComponentGames::new(solver, components, k, positions, parallel);
    games.bounds(Order::AttractorsFirst, work, resume, checkpoints)
}

/// In which order a component's thresholds are played.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Order {
    /// The attractor alone at every threshold, then one check of the
    /// marks; the other order if it fails.
    AttractorsFirst,
    /// The attractor and the safety sets at every threshold.
    SafetySets,
}

/// The threshold games of one component: what they play on and read.
pub(crate) struct ComponentGames<'a> {
    solver: &'a LayerSolver<'a>,
    components: &'a Components,
    k: usize,
    graph: ImplicitComponent<'a>,
    positions: &'a MemberPositions<'a>,
    exits: ExitBounds<'a>,
    n: u8,
    parallel: bool,
}

impl<'a> ComponentGames<'a> {
    pub(crate) fn new(
        solver: &'a LayerSolver<'a>,
        components: &'a Components,
        k: usize,
        positions: &'a MemberPositions<'a>,
        parallel: bool,
    ) -> ComponentGames<'a> {
        ComponentGames {
            solver,
            components,
            k,
            graph: ImplicitComponent::new(components, k, positions),
            positions,
            exits: solver.entries.exit_bounds(),
            n: solver.n as u8,
            parallel,
        }
    }

    /// The component's bounds, its thresholds played in `order` (from a
    /// snapshot's if `resume`).
    pub(crate) fn bounds(
        &self,
        order: Order,
        work: &mut BoundWork,
        resume: Option<(u8, u32, SavedGames)>,
        checkpoints: &mut dyn Checkpointer,
    ) -> std::io::Result<ComponentBounds> {
        let members = self.components.of(self.k);
        let n = self.n;
        let (mut first, mut rounds) = match &resume {
            None => (n, 0),
            Some((t, rounds, _)) => (*t, *rounds),
        };
        self.prepare(work, first, resume.map(|(_, _, state)| state));
        // A snapshot whose safety sets added states continues in the order
        // that plays them; any other holds what the attractors alone left.
        let mut safety = order == Order::SafetySets || rounds > 0;
        loop {
            rounds = self.play(work, first, rounds, safety, checkpoints)?;
            if safety || self.marks_meet(work) || self.marks_are_final(work) {
                break;
            }
            // Some safety set would have added states: again, with them.
            self.prepare(work, n, None);
            (first, rounds, safety) = (n, 0, true);
        }
        let BoundWork { win, counts, .. } = work;
        if gives_work_back(self.solver, members.len()) {
            *counts = Vec::new();
        }
        // (Reserved whole: grown from nothing, a list of a giant component
        // leaves the pieces it outgrew with the allocator; at layer 20 this
        // took 0.16 bytes a position off the memory after the games.)
        // (The upper ends listed only where they differ: as a full list
        // beside `win` and the lower ends they made the cycle phase's peak
        // at layer 21, 4.6 bytes a position.)
        let mut lower = Vec::with_capacity(members.len());
        lower.extend(members.iter().map(|m| win[2 * m as usize]));
        let wider = wider_than(&lower, members.iter().map(|m| n - win[2 * m as usize + 1]));
        Ok(ComponentBounds { lower, wider, safety_rounds: rounds })
    }

    /// Sets the members' work entries for games starting at threshold
    /// `first`: nothing won, or the snapshot's `state`; the opponent
    /// states that may join at `first` are those of the thresholds played
    /// before it (none when the games start at `n`). Every opponent state
    /// not won counts its children not won, whether it may join yet or
    /// not (`docs/cycle-bounds.md` §3, item 2): at the start, its quiet
    /// moves still pending, which are its moves into the component once
    /// every child outside it is decided (`resolve` checks it first); from
    /// a snapshot, which counts only the opponent states that may join,
    /// the others counted again.
    fn prepare(&self, work: &mut BoundWork, first: u8, state: Option<SavedGames>) {
        let BoundWork { win, counts, may_join } = work;
        // (A component that gave its counts back leaves them empty.)
        if counts.len() != win.len() / 2 {
            *counts = vec![0; win.len() / 2];
        }
        let members = self.components.of(self.k);
        for m in members.iter() {
            let m = m as usize;
            win[2 * m..2 * m + 2].fill(0);
            counts[m] = Y_OPEN.with(0, self.exits.pending(m));
            let (word, bit) = bit(m);
            if self.n - self.exits.get(m).1 > first {
                may_join[word].fetch_or(bit, Relaxed);
            } else {
                may_join[word].fetch_and(!bit, Relaxed);
            }
        }
        if let Some(state) = state {
            for (i, m) in members.iter().enumerate() {
                let m = m as usize;
                win[2 * m..2 * m + 2].copy_from_slice(&state[4 * i..4 * i + 2]);
                // (A resumed count is at most 6, and a player state's 0:
                // `games_state` checked them.)
                counts[m] = Y_OPEN.with(0, state[4 * i + 3]);
            }
            let (win, counts) = (as_atomic(win), as_atomic(counts));
            let may_join: &[AtomicU64] = may_join;
            let uncounted = |m: usize| {
                let (word, bit) = bit(m);
                win[2 * m + 1].load(Relaxed) == 0 && may_join[word].load(Relaxed) & bit == 0
            };
            self.positions.par_collect_where(uncounted, |_, m, position, _: &mut Vec<()>| {
                let mut not_won = 0;
                self.graph.for_each_child(&State::new(&position, m, 1), |c| {
                    not_won += (win[self.graph.node(&c)].load(Relaxed) == 0) as u8
                });
                Y_OPEN.store(&counts[m], not_won);
            });
        }
    }

    /// Plays the thresholds from `first` down to 1, with a safety set at
    /// each or not, checkpointing between two; returns the safety rounds
    /// that added states, `rounds` before.
    fn play(
        &self,
        work: &mut BoundWork,
        first: u8,
        mut rounds: u32,
        safety: bool,
        checkpoints: &mut dyn Checkpointer,
    ) -> std::io::Result<u32> {
        let (graph, positions, exits, n) = (&self.graph, self.positions, &self.exits, self.n);
        let members = self.components.of(self.k);
        let big = members.len() > 1 << 16;
        let BoundWork { win, counts, may_join: joining } = work;
        let mut queue = VecDeque::new();
        // The parallel games' pending states, empty between two walks: a
        // quarter of a byte a position the component spans.
        let pending = PendingStates::new(if self.parallel { graph.nodes() } else { 0..0 });
        for t in (1..=first).rev() {
            if big {
                self.solver
                    .progress
                    .detail(&format!("{n} seeds: bounds of {} positions, threshold {t}", members.len()));
            }
            if t < first && checkpoints.due() {
                // (Snapshots count only the opponent states that may
                // join: `docs/cycle-bounds.md` §10.)
                let joinable = |m: usize| {
                    let (word, bit) = bit(m);
                    joining[word].load(Relaxed) & bit != 0
                };
                let open_of = |m: usize, c: u8| [0, if joinable(m) { Y_OPEN.of(c) } else { 0 }];
                let games = GamesState { members: &members, win, counts, open_of: &open_of };
                let games = GamesSnapshot::Arrays(&games);
                checkpoint::checkpoint_games(
                    self.solver,
                    checkpoints,
                    (self.k, t, rounds),
                    self.components,
                    &games,
                )?;
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
            rounds = rounds.saturating_add(if self.parallel {
                let (win, counts) = (as_atomic(win), as_atomic(counts));
                let touch = |s: &State| {
                    let node = graph.node(s);
                    prefetch(&win[node]);
                    if s.parity() == 1 {
                        prefetch(&counts[graph.counters(node).byte]);
                        prefetch(&joining[s.index() / 64]);
                    }
                };
                if safety {
                    let added = positions.par_collect(|_, m, position, out| {
                        scan_member(graph, exits, (win, counts, joining), m, (n, t), &mut |parity| {
                            pending.add_uncounted(2 * m + parity);
                            out.push(());
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
                    pending.count_added(added.len() as u64);
                    par_peel(graph, 0, win, counts, &pending, t, may_join, good, true, touch)
                } else {
                    self.entries_won((win, counts, joining), t, &pending);
                    par_attract(graph, 0, win, counts, &pending, t, &may_join, &touch);
                    0
                }
            } else {
                {
                    let (win, counts) = (as_atomic(win), as_atomic(counts));
                    if safety {
                        positions.for_each(|_, m, position| {
                            scan_member(graph, exits, (win, counts, joining), m, (n, t), &mut |parity| {
                                queue.push_back(State::new(&position, m, parity))
                            })
                        });
                    } else {
                        // (Pushed as they are won: a list of them beside
                        // the queue would hold the frontier twice.)
                        for (i, m) in members.iter().enumerate() {
                            let m = m as usize;
                            if self.acts(m, t) {
                                scan_member(graph, exits, (win, counts, joining), m, (n, t), &mut |parity| {
                                    queue.push_back(State::new(&positions.get_at(i, m), m, parity))
                                })
                            }
                        }
                    }
                }
                if safety {
                    let (_, rounds) = peel(
                        graph,
                        0,
                        win,
                        counts,
                        &mut queue,
                        t,
                        may_join,
                        good,
                        None,
                        None,
                        &mut |_, _| {},
                    );
                    rounds
                } else {
                    attract(graph, 0, win, counts, &mut queue, t, may_join, None, &mut |_, _| {});
                    0
                }
            });
            if big {
                // The frontiers' pieces, freed on many threads, would otherwise
                // stay with the allocator: at layer 20 they held 0.8 bytes a
                // position more by the last threshold.
                release_free_memory();
            }
        }
        Ok(rounds)
    }

    /// Whether the member at layer index `m` has anything to do at
    /// threshold `t` without the safety sets: whether one of its exits
    /// takes effect there ([`scan_member`]).
    #[inline]
    fn acts(&self, m: usize, t: u8) -> bool {
        let (lower, upper) = self.exits.get(m);
        lower == t || self.n - upper == t
    }

    /// Adds to `pending` the states threshold `t`'s entries win, without
    /// the safety sets, on every thread: only the members that act have
    /// anything to do, and no position is needed (a state's number is its
    /// member's layer index and its parity).
    fn entries_won(
        &self,
        arrays: (&[AtomicU8], &[AtomicU8], &[AtomicU64]),
        t: u8,
        pending: &PendingStates<PackedState>,
    ) {
        let (exits, n, positions) = (&self.exits, self.n, self.positions);
        let added = positions.par_collect_indexes_where(
            |m| self.acts(m, t),
            |_, m, out| {
                scan_member(&self.graph, exits, arrays, m, (n, t), &mut |parity| {
                    pending.add_uncounted(2 * m + parity);
                    out.push(());
                })
            },
        );
        pending.count_added(added.len() as u64);
    }

    /// Whether the marks the attractors alone left make every member's
    /// bounds meet: then they are the threshold games' bounds, and no
    /// safety set would have added a state (`docs/cycle-bounds.md` §3,
    /// "Attractors first": the attractors' bounds hold the games' between
    /// them).
    fn marks_meet(&self, work: &BoundWork) -> bool {
        let win = &work.win;
        self.components.of(self.k).iter().all(|m| win[2 * m as usize] + win[2 * m as usize + 1] == self.n)
    }

    /// Whether the marks the attractors alone left are the threshold
    /// games' regions: whether the level games of `docs/cycle-bounds.md`
    /// §3 ("Attractors first") leave the player nowhere to stay, solved
    /// as one safety set over the moves between states of one mark. Its
    /// candidates are the states whose level `λ` (the player's share, and
    /// for an opponent state at most what its exits leave the player) is
    /// above their mark. Leaves the safety counters at zero.
    fn marks_are_final(&self, work: &mut BoundWork) -> bool {
        let (graph, n) = (&self.graph, self.n);
        let members = self.components.of(self.k).len();
        if members > 1 << 16 {
            self.solver
                .progress
                .detail(&format!("{n} seeds: bounds of {members} positions, checking the attractors"));
        }
        let BoundWork { win, counts, .. } = work;
        let win = as_atomic(win);
        let level = |m: usize, position: &Position, parity: usize| {
            let own = position.own_seeds() as u8;
            match parity {
                0 => own,
                _ => (n - own).min(n - self.exits.get(m).1),
            }
        };
        let same_mark = SameMark::new(graph, win);
        let never_won = |_: usize| false;
        let left = if self.parallel {
            let counts = as_atomic(counts);
            self.positions.par_collect::<()>(|_, m, position, _| {
                for parity in 0..2 {
                    let node = 2 * m + parity;
                    if level(m, &position, parity) > win[node].load(Relaxed) {
                        let Counters { byte, safe, .. } = graph.counters(node);
                        safe.store(&counts[byte], 1);
                    }
                }
            });
            par_safety_set_of_marked(&same_mark, 0, &never_won, counts).len()
        } else {
            let candidate = |s: &State| {
                if level(s.index(), &s.position(), s.parity()) > win[s.node()].load(Relaxed) {
                    Candidate::Yes
                } else {
                    Candidate::No
                }
            };
            safety_set(&same_mark, 0, never_won, counts, candidate).len()
        };
        left == 0
    }
}

/// The member at layer index `m` (at `position`) at the start of
/// threshold `t`, for X, the player at parity 0: its player state is won
/// at once when its best exit, read pessimistically, is worth `t`; its
/// opponent state may join from the threshold at which its best exit
/// (read for X: `n` − its upper end) no longer keeps X below (no exit: 0,
/// harmless, since thresholds start at 1): its bit in `joining` is set
/// then, and it is won at once if its open count, kept since the games
/// began, has no child left that was won before `t`
/// (`docs/cycle-bounds.md` §3, item 2; `n`: the layer's seeds). The
/// states won are pushed (their parity). Each member writes only its own
/// entries and reads no other's, so members may be scanned on several
/// threads at once.
fn scan_member(
    graph: &ImplicitComponent,
    exits: &ExitBounds,
    (win, counts, joining): (&[AtomicU8], &[AtomicU8], &[AtomicU64]),
    m: usize,
    (n, t): (u8, u8),
    push: &mut dyn FnMut(usize),
) {
    let (lower, upper) = exits.get(m);
    if n - upper == t {
        // (Other members share the word: set atomically.)
        let (word, bit) = bit(m);
        joining[word].fetch_or(bit, Relaxed);
    }
    if n - upper == t && win[2 * m + 1].load(Relaxed) == 0 {
        let Counters { byte, open, .. } = graph.counters(2 * m + 1);
        if open.load(&counts[byte]) == 0 {
            win[2 * m + 1].store(t, Relaxed);
            push(1);
        }
    }
    if lower == t && win[2 * m].load(Relaxed) == 0 {
        win[2 * m].store(t, Relaxed);
        push(0);
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
    /// lists, member by member and in full; written over the members' own
    /// bounds in the entries (held, or parked for the games and taken
    /// back), they read back the same, and no other byte of the entries
    /// changes.
    #[test]
    fn member_bounds_read_the_same_listed_or_in_the_entries() {
        let dir = std::env::temp_dir().join(format!("oware-member-bounds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut solved = SolvedLayers::new();
        for n in 0..8 {
            let (bytes, _) = LayerSolver::new(n, &solved, SearchBudget::NONE).solve();
            solved.push(LayerBytes::Owned(bytes));
        }
        for parked in [false, true] {
            let mut solver = LayerSolver::new(8, &solved, SearchBudget::NONE);
            solver.retrograde_only();
            let components = components::components(&mut solver).expect("labels enough");
            let k = (0..components.count()).max_by_key(|&k| components.of(k).len()).unwrap();
            let members = components.of(k);
            assert!(members.len() > 1000, "{} members", members.len());
            let lower: Vec<u8> = (0..members.len()).map(|i| (i % 13) as u8).collect();
            let upper: Vec<u8> = lower.iter().enumerate().map(|(i, &l)| l + (i % 7 == 3) as u8 * 5).collect();
            let bounds = MemberBounds::new(lower.clone(), upper.clone());
            let MemberBounds::Listed { wider, .. } = &bounds else { unreachable!("listed") };
            assert_eq!(wider.len(), upper.iter().zip(&lower).filter(|(u, l)| u != l).count());
            let entries = &solver.entries;
            for (i, m) in members.iter().enumerate() {
                assert_eq!(bounds.get(entries, i, m), (lower[i], upper[i]), "member {i}");
            }
            assert_eq!(bounds.lists(entries, members), (lower.clone(), upper.clone()));
            let before: Vec<_> =
                (0..solver.size).map(|x| (entries.interval(x), entries.pending(x))).collect();
            let decided: Vec<bool> = (0..solver.size).map(|x| entries.is_decided(x)).collect();
            if parked {
                solver.entries.park_for_games(&dir).unwrap();
            }
            let bounds = bounds.into_entries(&mut solver.entries, members).unwrap();
            assert!(matches!(bounds, MemberBounds::InEntries));
            let entries = &solver.entries;
            assert_eq!(bounds.lists(entries, members), (lower.clone(), upper.clone()));
            let membership = components.membership(k);
            for x in 0..solver.size {
                let (lo, hi, est) = entries.interval(x);
                match membership.number(x) {
                    Some(i) => {
                        assert_eq!((lo, hi), (lower[i], upper[i]), "member {i}");
                        assert_eq!(bounds.get(entries, i, x as u32), (lower[i], upper[i]), "member {i}");
                        // (An estimate not held reads as its lower bound.)
                        let estimate = if entries.estimates_held() { before[x].0 .2 } else { lower[i] };
                        assert_eq!((est, entries.pending(x)), (estimate, before[x].1), "member {i}");
                    }
                    None => assert_eq!(((lo, hi, est), entries.pending(x)), before[x], "position {x}"),
                }
                assert_eq!(entries.is_decided(x), decided[x], "position {x}");
            }
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "a file left");
        }
        std::fs::remove_dir(&dir).unwrap();
    }

    /// Calls `visit(n, solver, components, k, work)` for every component
    /// of two members or more of layers 0 to 9 (retrograde analysis done,
    /// nothing of the cycles decided), each layer solved in full before
    /// the next.
    fn each_component_up_to_nine(
        mut visit: impl FnMut(u32, &LayerSolver, &Components, usize, &mut BoundWork),
    ) {
        let mut solved = SolvedLayers::new();
        for n in 0..=9 {
            let mut solver = LayerSolver::new(n, &solved, SearchBudget::NONE);
            solver.retrograde_only();
            let components = components::components(&mut solver).expect("labels enough");
            let mut work = BoundWork::new(solver.size);
            for k in (0..components.count()).filter(|&k| components.of(k).len() >= 2) {
                visit(n, &solver, &components, k, &mut work);
            }
            let (bytes, _) = LayerSolver::new(n, &solved, SearchBudget::NONE).solve();
            solved.push(LayerBytes::Owned(bytes));
        }
    }

    /// Playing the attractors first gives every component of layers up to
    /// 9 the bounds and safety rounds of a safety set at every threshold,
    /// on one thread and on three; and the check of the attractors' marks
    /// fails exactly for the components whose safety sets add states
    /// (`docs/cycle-bounds.md` §3, "Attractors first": the theorem's two
    /// directions), which happens in some of them.
    #[test]
    fn attractors_first_give_the_exact_bounds() {
        let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let (mut passed, mut failed) = (0, 0);
        each_component_up_to_nine(|n, solver, components, k, work| {
            let positions = MemberPositions::with_limit(n, components.of(k), usize::MAX);
            // (The games count a member's moves into the component from its
            // pending quiet moves: no member may wait for another.)
            assert_eq!(member_waiting_outside(solver, components, k, &positions), None, "layer {n}, {k}");
            let games = ComponentGames::new(solver, components, k, &positions, false);
            let exact = games.bounds(Order::SafetySets, work, None, &mut NoCheckpoints).unwrap();
            games.prepare(work, n as u8, None);
            games.play(work, n as u8, 0, false, &mut NoCheckpoints).unwrap();
            let final_marks = games.marks_are_final(work);
            assert_eq!(final_marks, exact.safety_rounds == 0, "layer {n}, component {k}");
            (passed, failed) = if final_marks { (passed + 1, failed) } else { (passed, failed + 1) };
            for parallel in [false, true] {
                let games = ComponentGames::new(solver, components, k, &positions, parallel);
                let first = three
                    .install(|| games.bounds(Order::AttractorsFirst, work, None, &mut NoCheckpoints))
                    .unwrap();
                assert_eq!(
                    (&first.lower, &first.wider, first.safety_rounds),
                    (&exact.lower, &exact.wider, exact.safety_rounds),
                    "layer {n}, component {k}, parallel {parallel}"
                );
            }
        });
        assert!(passed >= 1 && failed >= 5, "{passed} checks passed, {failed} failed");
    }

    /// The parallel games give every component of a layer the bounds and
    /// safety rounds of the sequential ones, on one thread or three, with
    /// the member positions stored or unranked on demand.
    #[test]
    fn the_parallel_games_give_the_sequential_bounds() {
        let pools: Vec<rayon::ThreadPool> =
            [1, 3].iter().map(|&t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap()).collect();
        let (mut compared, mut largest, mut rounds) = (0, 0, 0);
        each_component_up_to_nine(|n, solver, components, k, work| {
            let members = components.of(k);
            let stored = MemberPositions::with_limit(n, members, usize::MAX);
            let play = |positions: &MemberPositions, work: &mut BoundWork, parallel: bool| {
                cycle_bounds(solver, components, k, positions, work, None, &mut NoCheckpoints, parallel)
                    .unwrap()
            };
            let one = play(&stored, work, false);
            for (pool, limit) in pools.iter().zip([usize::MAX, 0]) {
                let positions = MemberPositions::with_limit(n, members, limit);
                let many = pool.install(|| play(&positions, work, true));
                assert_eq!(one.lower, many.lower, "layer {n}, component {k}");
                assert_eq!(one.wider, many.wider, "layer {n}, component {k}");
                assert_eq!(one.safety_rounds, many.safety_rounds, "layer {n}, component {k}");
            }
            compared += 1;
            largest = largest.max(members.len());
            rounds += one.safety_rounds;
        });
        assert!(
            compared >= 8 && largest > 100_000 && rounds > 0,
            "{compared} components, largest {largest}, {rounds} rounds"
        );
    }
}
