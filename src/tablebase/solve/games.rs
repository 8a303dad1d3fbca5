//! The threshold games of `docs/cycle-bounds.md`, written once: attractors,
//! safety sets (greatest fixed points) and co-Büchi peeling, over any graph
//! of game states.
//!
//! Three users share them: the history-free bounds of a whole component
//! ([`bounds`](crate::tablebase::solve::bounds), over the layer's implicit graph of moves and
//! un-moves, which needs no edge lists even at 24 seeds), the path-cut
//! re-solves ([`cut_search`](crate::tablebase::solve::search::cut)) and the history-proof
//! leaves of the threshold search ([`threshold_search`](crate::tablebase::solve::search::threshold)),
//! both over a component copied into edge lists
//! ([`ComponentGraph`](crate::tablebase::solve::graph::ComponentGraph)). A distributed
//! build plays the large components' games across its ranks in a form of
//! their own (`across::bounds`: every read of a
//! neighbour turned into a message from it), checked against these.
//!
//! Vocabulary: the *player* wants at least the threshold; it moves at the
//! states whose parity equals `player`, the opponent at the others. Work
//! arrays are indexed by [`StateGraph::node`]: `win` holds a non-zero mark
//! for states in the player's won region. `counts` holds two small
//! counters a state: the opponent states' count of children not won yet
//! (`open`, at most 6: a position has at most six moves) and the safety
//! game's scratch (`safe`, at most 8). Where a state's counters are is the
//! graph's to say ([`StateGraph::counters`]): by default both in a byte of
//! the state's own ([`OPEN`], [`SAFE`]); the bounds of a whole component
//! keep a position's two states' counters in one byte
//! ([`ImplicitComponent`](crate::tablebase::solve::implicit::ImplicitComponent)).
//! Every write of a counter read-modify-writes its byte and changes only
//! the counter's bits, so counters that share a byte never lose each
//! other's writes (`docs/cycle-bounds.md` §8).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use crate::memory::prefetch;
use crate::parallel;

use crate::tablebase::solve::frontier::{Adder, PendingStates};

/// One of the counters a `counts` byte holds: its bits.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Counter {
    shift: u32,
    /// The counter's bits, shifted down: the most it holds.
    mask: u8,
}

/// The opponent states' children not won yet, in a byte of the state's
/// own: bits 0 to 3.
pub(crate) const OPEN: Counter = Counter::bits(0, 0x0F);
/// The safety game's scratch, in a byte of the state's own: bits 4 to 7.
pub(crate) const SAFE: Counter = Counter::bits(4, 0x0F);
/// A safety count kept alone in its byte (as the distributed games keep
/// theirs): its low bits.
pub(crate) const SAFE_ALONE: Counter = Counter::bits(0, 0x0F);
/// No counter (a state that never counts: it holds 0 and takes no write).
pub(crate) const NO_COUNTER: Counter = Counter::bits(0, 0);

/// Where a state's two counters are: the byte of `counts`, and their bits
/// in it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Counters {
    pub byte: usize,
    pub open: Counter,
    pub safe: Counter,
}

impl Counter {
    /// The counter of the `mask` bits from bit `shift` up.
    pub(crate) const fn bits(shift: u32, mask: u8) -> Counter {
        Counter { shift, mask }
    }

    /// The counter's value in `byte`.
    #[inline]
    pub(crate) fn of(self, byte: u8) -> u8 {
        (byte >> self.shift) & self.mask
    }

    /// `byte` with the counter set to `value` (at most its mask), the
    /// other counters kept.
    #[inline]
    pub(crate) fn with(self, byte: u8, value: u8) -> u8 {
        debug_assert!(value <= self.mask, "{value} in a counter of at most {}", self.mask);
        // (Masked: a value out of range, which the games never write, could
        // not reach the other counters.)
        (byte & !(self.mask << self.shift)) | ((value & self.mask) << self.shift)
    }

    /// The byte's change when the counter, at least 1, goes down by one:
    /// subtracted, it borrows from no other counter.
    #[inline]
    pub(crate) fn one(self) -> u8 {
        1 << self.shift
    }

    /// Sets the counter by an atomic read-modify-write of its byte, which
    /// keeps the byte's other counters whatever other threads write to
    /// them meanwhile.
    #[inline]
    pub(crate) fn store(self, cell: &AtomicU8, value: u8) {
        let _ = cell.fetch_update(Relaxed, Relaxed, |byte| Some(self.with(byte, value)));
    }

    /// The counter's value in `cell`.
    #[inline]
    pub(crate) fn load(self, cell: &AtomicU8) -> u8 {
        self.of(cell.load(Relaxed))
    }
}

/// A graph of game states: every move goes from a state of one parity to a
/// state of the other.
pub(crate) trait StateGraph {
    type State: Copy;
    /// Dense number of a state: the index into the work arrays.
    fn node(&self, s: &Self::State) -> usize;
    /// Where the counters of the state numbered `node` are: by default
    /// in a byte of its own, `counts[node]`.
    #[inline]
    fn counters(&self, node: usize) -> Counters {
        Counters { byte: node, open: OPEN, safe: SAFE }
    }
    /// Who moves: 0 or 1.
    fn parity(&self, s: &Self::State) -> usize;
    /// Every state of the graph, once each.
    fn for_each_state(&self, visit: impl FnMut(Self::State));
    /// The successors of a state inside the graph.
    fn for_each_child(&self, s: &Self::State, visit: impl FnMut(Self::State));
    /// The predecessors of a state inside the graph.
    fn for_each_parent(&self, s: &Self::State, visit: impl FnMut(Self::State));
}

/// How a state enters the safety game.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Candidate {
    /// Not in the safe set.
    No,
    /// In it while the closure conditions hold.
    Yes,
    /// A player state that stays whatever its children do (it has an exit
    /// worth the threshold).
    Anchored,
}

/// Grows the player's won region from the states queued (already marked
/// in `win`): a player state joins when a child is won, an opponent state
/// when its open count of children not won reaches zero. Only states for
/// which `may_join` holds join. Every opponent state not won is counted
/// down by each child dequeued, whether it may join or not, so its count
/// must start at its children not won (an opponent state counted out
/// that may not join yet is left to the caller, who may let it join
/// later: the bounds' scans do). Joined states get `mark`, and
/// `joined(state, via)` hears of each with the dequeued state that let
/// it join. Returns true, and stops at once, when the state numbered
/// `stop` joins.
// The caller owns the per-state arrays of every threshold game it runs
// (they are reused across thresholds and checkpointed between them), so
// they are passed one by one rather than bundled.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attract<G: StateGraph>(
    g: &G,
    player: usize,
    win: &mut [u8],
    counts: &mut [u8],
    queue: &mut VecDeque<G::State>,
    mark: u8,
    may_join: impl Fn(&G::State) -> bool,
    stop: Option<usize>,
    joined: &mut impl FnMut(usize, usize),
) -> bool {
    while let Some(s) = queue.pop_front() {
        let via = g.node(&s);
        let mut stopped = false;
        g.for_each_parent(&s, |p| {
            if stopped {
                return;
            }
            let node = g.node(&p);
            if win[node] != 0 {
                return;
            }
            let joins = if g.parity(&p) == player {
                may_join(&p)
            } else {
                let Counters { byte, open: counter, .. } = g.counters(node);
                let open = counter.of(counts[byte]) - 1;
                counts[byte] = counter.with(counts[byte], open);
                open == 0 && may_join(&p)
            };
            if joins {
                win[node] = mark;
                joined(node, via);
                if stop == Some(node) {
                    stopped = true;
                }
                queue.push_back(p);
            }
        });
        if stopped {
            queue.clear();
            return true;
        }
    }
    false
}

/// The greatest set `Z` of candidate states outside the won region (the
/// states numbered `node` for which `won(node)` holds) such that every
/// player state of `Z` has a child in `Z` (or is anchored) and every
/// opponent state of `Z` has all its children in `Z` or won. From `Z` the
/// player can stay in `Z` forever or move into the won region. Every
/// safety counter of `counts` must be zero; they are left so (the open
/// counters are kept).
pub(crate) fn safety_set<G: StateGraph>(
    g: &G,
    player: usize,
    won: impl Fn(usize) -> bool,
    counts: &mut [u8],
    candidate: impl Fn(&G::State) -> Candidate,
) -> Vec<G::State> {
    let safe = |counts: &[u8], node: usize| {
        let Counters { byte, safe, .. } = g.counters(node);
        safe.of(counts[byte])
    };
    let set = |counts: &mut [u8], node: usize, value: u8| {
        let Counters { byte, safe, .. } = g.counters(node);
        counts[byte] = safe.with(counts[byte], value)
    };
    // Pass 1: candidates get 1 (anchored player states 2: one child that
    // never leaves).
    g.for_each_state(|s| {
        let node = g.node(&s);
        if !won(node) {
            match candidate(&s) {
                Candidate::No => {}
                Candidate::Yes => set(counts, node, 1),
                Candidate::Anchored => set(counts, node, 2),
            }
        }
    });
    // Pass 2: player states count their children inside (on top of the
    // anchor); opponent states check that no child escapes. Counts are
    // taken against the first candidates; removals then propagate (a
    // player state goes when its count would fall to 1: no child left and
    // no anchor; an anchored one never falls that low, since each removal
    // takes back one child it counted).
    let mut removed = Vec::new();
    g.for_each_state(|s| {
        let node = g.node(&s);
        let base = safe(counts, node); // 1, or 2 when anchored
        if base == 0 {
            return;
        }
        let (mut inside, mut escapes) = (0u8, false);
        g.for_each_child(&s, |c| {
            let child = g.node(&c);
            if safe(counts, child) != 0 {
                inside += 1;
            } else if !won(child) {
                escapes = true;
            }
        });
        if g.parity(&s) == player {
            set(counts, node, base + inside);
            if base + inside == 1 {
                removed.push(s);
            }
        } else if escapes {
            removed.push(s);
        }
    });
    for s in &removed {
        set(counts, g.node(s), 0);
    }
    while let Some(s) = removed.pop() {
        g.for_each_parent(&s, |p| {
            let node = g.node(&p);
            let count = safe(counts, node);
            if count == 0 {
                return;
            }
            if g.parity(&p) != player || count == 2 {
                set(counts, node, 0);
                removed.push(p);
            } else {
                set(counts, node, count - 1);
            }
        });
    }
    let mut found = Vec::new();
    g.for_each_state(|s| {
        let node = g.node(&s);
        if safe(counts, node) != 0 {
            set(counts, node, 0);
            found.push(s);
        }
    });
    found
}

/// Co-Büchi peeling from the won region as it stands (the states queued
/// not yet attracted): attract, then add the states from which the player
/// can stay forever among `good` states or move into the won region, and
/// attract again, until no such state is left. The won region is then the
/// player's winning region of the game in which it wins a play that
/// reaches a won state, or that stays among good states from some point
/// on. Returns whether the state numbered `stop` was won (stopping as soon
/// as it is) and the number of safety rounds that added states. `joined`
/// hears of every state that joins: `(state, via)` for the attractor,
/// `(state, usize::MAX)` for a safety set (one call per set ends with
/// `(usize::MAX, usize::MAX)`). `most_sets` cuts the peeling short after
/// that many safety sets (each costs a pass over the graph): the states
/// that joined by then joined in the same order as without the cut.
// The caller owns the per-state arrays of every threshold game it runs
// (they are reused across thresholds and checkpointed between them), so
// they are passed one by one rather than bundled.
#[allow(clippy::too_many_arguments)]
pub(crate) fn peel<G: StateGraph>(
    g: &G,
    player: usize,
    win: &mut [u8],
    counts: &mut [u8],
    queue: &mut VecDeque<G::State>,
    mark: u8,
    may_join: impl Fn(&G::State) -> bool,
    good: impl Fn(&G::State) -> bool,
    stop: Option<usize>,
    most_sets: Option<u32>,
    joined: &mut impl FnMut(usize, usize),
) -> (bool, u32) {
    if let Some(node) = stop.filter(|&node| win[node] != 0) {
        let _ = node;
        queue.clear();
        return (true, 0);
    }
    let mut rounds = 0;
    loop {
        if attract(g, player, win, counts, queue, mark, &may_join, stop, joined) {
            return (true, rounds);
        }
        // A cut-short peeling: every state that joined has the round it
        // has in the whole peeling; the rest is left out.
        if most_sets.is_some_and(|most| rounds >= most) {
            return (false, rounds);
        }
        let found = safety_set(
            g,
            player,
            |node| win[node] != 0,
            counts,
            |s| {
                if may_join(s) && good(s) {
                    Candidate::Yes
                } else {
                    Candidate::No
                }
            },
        );
        if found.is_empty() {
            return (false, rounds);
        }
        rounds += 1;
        for s in found {
            let node = g.node(&s);
            win[node] = mark;
            joined(node, usize::MAX);
            if stop == Some(node) {
                queue.clear();
                return (true, rounds);
            }
            queue.push_back(s);
        }
        joined(usize::MAX, usize::MAX);
    }
}

// ------------------------------------------------------------------
// The same games, frontier-parallel, for a whole layer's components
// (`docs/cycle-bounds.md` §8 proves they compute the same regions).

/// A state graph whose states several threads can visit at once.
pub(crate) trait ParallelStateGraph: StateGraph + Sync
where
    Self::State: Send + Sync,
{
    /// A state as the games' lists of pending states keep it: smaller
    /// than the state as it is used, when the graph can rebuild the rest
    /// cheaply.
    type Stored: Copy + Send + Sync;
    /// `s` as it is kept; [`ParallelStateGraph::load`] gives it back.
    fn store(&self, s: &Self::State) -> Self::Stored;
    /// The state `s` keeps.
    fn load(&self, s: &Self::Stored) -> Self::State;
    /// The numbers ([`StateGraph::node`]) every state lies in.
    fn nodes(&self) -> std::ops::Range<usize>;
    /// Calls `visit` with the state numbered `node` for each of `nodes`,
    /// in ascending order (the pending states of a walk, taken a block of
    /// numbers at a time: [`PendingStates`]).
    fn states_at(&self, nodes: &[usize], visit: impl FnMut(Self::State));
    /// Calls `visit(state, out)` for every state, from several threads,
    /// and returns what the calls pushed to `out`, in state order whatever
    /// the threads did.
    fn par_collect<T: Send>(&self, visit: impl Fn(Self::State, &mut Vec<T>) + Sync) -> Vec<T>;
    /// [`ParallelStateGraph::par_collect`] over the states whose number
    /// `keep` accepts. The graph may skip stretches of states in which
    /// `keep` accepts none without visiting them: the safety sets' later
    /// passes look at their candidates only, often a few.
    fn par_collect_where<T: Send>(
        &self,
        keep: impl Fn(usize) -> bool + Sync,
        visit: impl Fn(Self::State, &mut Vec<T>) + Sync,
    ) -> Vec<T>;
}

/// States of a list handed to one thread at a time.
const FRONTIER_CHUNK: usize = 1024;

/// Views work bytes as atomics for the parallel games.
pub(crate) fn as_atomic(bytes: &mut [u8]) -> &[AtomicU8] {
    // Safety: `AtomicU8` has the size, alignment and bit validity of `u8`,
    // and the exclusive borrow keeps every other access out while the
    // atomics are in use.
    unsafe { &*(bytes as *mut [u8] as *const [AtomicU8]) }
}

/// [`attract`] from the states `pending` holds (already marked in `win`),
/// taken in no fixed order on every thread ([`PendingStates::walk`]). The
/// region reached and the open counts left are those of [`attract`]
/// (opponent states counted down whether they may join or not); there is
/// no stop and no report of who joined how. `pending` is empty after.
// (The work arrays are the caller's, as for `peel`.)
#[allow(clippy::too_many_arguments)]
pub(crate) fn par_attract<G: ParallelStateGraph>(
    g: &G,
    player: usize,
    win: &[AtomicU8],
    counts: &[AtomicU8],
    pending: &PendingStates<G::Stored>,
    mark: u8,
    may_join: &(impl Fn(&G::State) -> bool + Sync),
    touch: &(impl Fn(&G::State) + Sync),
) where
    G::State: Send + Sync,
{
    let takes = |p: &G::State| {
        let node = g.node(p);
        if win[node].load(Relaxed) != 0 {
            return false;
        }
        if g.parity(p) == player {
            // The first thread to reach it claims it.
            return may_join(p) && win[node].compare_exchange(0, mark, Relaxed, Relaxed).is_ok();
        }
        let Counters { byte, open, .. } = g.counters(node);
        let last = open.of(counts[byte].fetch_sub(open.one(), Relaxed)) == 1 && may_join(p);
        if last {
            // Its last child not won: no other decrement can follow (§8),
            // so the store races with none. (The decrement leaves the
            // other counters alone: a count it lowers is at least 1.) One
            // counted out that may not join yet is the caller's to take.
            win[node].store(mark, Relaxed);
        }
        last
    };
    walk_to_parents(g, pending, touch, &takes);
}

/// Expands `states` of `g`: lists the parents of a few states at a time,
/// `touch`es them (it prefetches what `takes` will read), then offers
/// each to `takes`, adding to `pending` those it takes (it claims them: it
/// must hold once per state).
fn expand_to_parents<G: ParallelStateGraph>(
    g: &G,
    pending: &mut Adder<'_, G::Stored>,
    states: impl FnOnce(&mut dyn FnMut(G::State)),
    touch: &(impl Fn(&G::State) + Sync),
    takes: &(impl Fn(&G::State) -> bool + Sync),
) where
    G::State: Send + Sync,
{
    let mut batch = Vec::with_capacity(PREFETCH_BATCH);
    let mut parents = Vec::new();
    let mut expand_batch = |batch: &mut Vec<G::State>| {
        parents.clear();
        for s in batch.iter() {
            g.for_each_parent(s, |p| {
                touch(&p);
                parents.push(p);
            });
        }
        for p in &parents {
            if takes(p) {
                pending.add(g.node(p), || g.store(p));
            }
        }
        batch.clear();
    };
    states(&mut |s| {
        batch.push(s);
        if batch.len() == PREFETCH_BATCH {
            expand_batch(&mut batch);
        }
    });
    expand_batch(&mut batch);
}

/// Walks `pending` to the end, expanding each state it takes with
/// [`expand_to_parents`].
fn walk_to_parents<G: ParallelStateGraph>(
    g: &G,
    pending: &PendingStates<G::Stored>,
    touch: &(impl Fn(&G::State) + Sync),
    takes: &(impl Fn(&G::State) -> bool + Sync),
) where
    G::State: Send + Sync,
{
    pending.walk(
        |listed, adder| {
            expand_to_parents(g, adder, |visit| listed.iter().for_each(|s| visit(g.load(s))), touch, takes)
        },
        |nodes, adder| expand_to_parents(g, adder, |visit| g.states_at(nodes, visit), touch, takes),
    );
}

/// States whose parents are listed and prefetched together.
const PREFETCH_BATCH: usize = 16;

/// [`safety_set`], with each pass over the states shared among threads and
/// the removals propagated on every thread ([`PendingStates`]). The set is
/// the same (the greatest fixed point); it is returned as state numbers, in
/// state order.
pub(crate) fn par_safety_set<G: ParallelStateGraph>(
    g: &G,
    player: usize,
    won: &(impl Fn(usize) -> bool + Sync),
    counts: &[AtomicU8],
    candidate: &(impl Fn(&G::State) -> Candidate + Sync),
) -> Vec<usize>
where
    G::State: Send + Sync,
{
    g.par_collect::<()>(|s, _| {
        let node = g.node(&s);
        if !won(node) {
            let Counters { byte, safe, .. } = g.counters(node);
            match candidate(&s) {
                Candidate::No => {}
                Candidate::Yes => safe.store(&counts[byte], 1),
                Candidate::Anchored => safe.store(&counts[byte], 2),
            }
        }
    });
    par_safety_set_of_marked(g, player, won, counts)
}

/// [`par_safety_set`] once its candidates are marked in their safety
/// counters (1, or 2 when anchored). A state marked and won since (its candidates were
/// marked before the attractor ran) is no candidate: it is unmarked as it
/// is met (`docs/cycle-bounds.md` §3 says why that is the same set).
pub(crate) fn par_safety_set_of_marked<G: ParallelStateGraph>(
    g: &G,
    player: usize,
    won: &(impl Fn(usize) -> bool + Sync),
    counts: &[AtomicU8],
) -> Vec<usize>
where
    G::State: Send + Sync,
{
    // (Only the safe counters change here, each by the one thread that
    // meets its state, or by an update that reads it first: the open
    // counters are kept as they are.)
    // Counting: a state only rewrites its own count, and a non-zero count
    // stays non-zero, so what other threads read ("inside or not") holds.
    // A won child is neither inside nor an escape, marked or not.
    // (Only candidates are visited from here on: nothing else is marked.)
    let safe = |node: usize| {
        let Counters { byte, safe, .. } = g.counters(node);
        (&counts[byte], safe)
    };
    let marked = |node: usize| {
        let (cell, counter) = safe(node);
        counter.load(cell) != 0
    };
    let removed = g.par_collect_where(marked, |s, out| {
        let node = g.node(&s);
        let (cell, counter) = safe(node);
        if won(node) {
            counter.store(cell, 0);
            return;
        }
        let base = counter.load(cell);
        let (mut inside, mut escapes) = (0u8, false);
        g.for_each_child(&s, |c| {
            let child = g.node(&c);
            if won(child) {
                return;
            }
            if marked(child) {
                inside += 1;
            } else {
                escapes = true;
            }
        });
        if g.parity(&s) == player {
            counter.store(cell, base + inside);
            if base + inside == 1 {
                out.push(node);
            }
        } else if escapes {
            out.push(node);
        }
    });
    parallel::for_each_chunk(removed.len(), FRONTIER_CHUNK, &|range| {
        removed[range].iter().for_each(|&node| {
            let (cell, counter) = safe(node);
            counter.store(cell, 0)
        })
    });
    let pending = PendingStates::new(g.nodes());
    pending.add_all(&removed);
    drop(removed);
    let touch = |p: &G::State| prefetch(safe(g.node(p)).0);
    let takes = |p: &G::State| {
        let (cell, counter) = safe(g.node(p));
        leaves_with_child(cell, counter, g.parity(p) == player)
    };
    walk_to_parents(g, &pending, &touch, &takes);
    g.par_collect_where(marked, |s, out| {
        let node = g.node(&s);
        let (cell, counter) = safe(node);
        counter.store(cell, 0);
        out.push(node);
    })
}

/// A safety set's removals, on several threads: a child of the state
/// whose safety count is `counter` of `cell` has left the set. An
/// opponent state leaves with it; a player state leaves with its last
/// child inside, its count falling from 2 (an anchored state never gets
/// that low, see [`safety_set`]). True for the one call that takes the
/// state out. The cell's other bits are kept.
pub(crate) fn leaves_with_child(cell: &AtomicU8, counter: Counter, player_state: bool) -> bool {
    cell.fetch_update(Relaxed, Relaxed, |byte| match counter.of(byte) {
        0 => None,
        2 => Some(counter.with(byte, 0)),
        _ if !player_state => Some(counter.with(byte, 0)),
        count => Some(counter.with(byte, count - 1)),
    })
    .is_ok_and(|byte| !player_state || counter.of(byte) == 2)
}

/// [`peel`] with the parallel attractor and safety sets: the same won
/// region, without stop, cut or report, from the states `pending` holds
/// (already marked in `win`; empty after). With `premarked`, the caller has
/// marked in their safety counters the first safety set's candidates (the
/// states for which `may_join` and `good` hold, not won when it marked
/// them), which saves that set its pass over the graph. `touch` prefetches
/// what `may_join` and the attractor read of a state (`win`, and for an
/// opponent state its counters). Returns the number of safety rounds that added
/// states.
// (The work arrays are the caller's, as for `peel`.)
#[allow(clippy::too_many_arguments)]
pub(crate) fn par_peel<G: ParallelStateGraph>(
    g: &G,
    player: usize,
    win: &[AtomicU8],
    counts: &[AtomicU8],
    pending: &PendingStates<G::Stored>,
    mark: u8,
    may_join: impl Fn(&G::State) -> bool + Sync,
    good: impl Fn(&G::State) -> bool + Sync,
    premarked: bool,
    touch: impl Fn(&G::State) + Sync,
) -> u32
where
    G::State: Send + Sync,
{
    let mut rounds = 0;
    let won = |node: usize| win[node].load(Relaxed) != 0;
    loop {
        par_attract(g, player, win, counts, pending, mark, &may_join, &touch);
        let found = if premarked && rounds == 0 {
            par_safety_set_of_marked(g, player, &won, counts)
        } else {
            let candidate =
                |s: &G::State| if may_join(s) && good(s) { Candidate::Yes } else { Candidate::No };
            par_safety_set(g, player, &won, counts, &candidate)
        };
        if found.is_empty() {
            return rounds;
        }
        rounds += 1;
        parallel::for_each_chunk(found.len(), FRONTIER_CHUNK, &|range| {
            found[range].iter().for_each(|&node| win[node].store(mark, Relaxed))
        });
        pending.add_all(&found);
    }
}

/// A graph's moves between two states of the same mark in `win`, and no
/// others: the level games of `docs/cycle-bounds.md` §3 ("Attractors
/// first"), each the states won at one threshold (or never), played all
/// at once as one safety set over this graph. Its states, numbers and
/// counters are the graph's.
pub(crate) struct SameMark<'a, G> {
    graph: &'a G,
    win: &'a [AtomicU8],
}

impl<'a, G: StateGraph> SameMark<'a, G> {
    pub(crate) fn new(graph: &'a G, win: &'a [AtomicU8]) -> SameMark<'a, G> {
        SameMark { graph, win }
    }

    #[inline]
    fn mark(&self, s: &G::State) -> u8 {
        self.win[self.graph.node(s)].load(Relaxed)
    }
}

impl<G: StateGraph> StateGraph for SameMark<'_, G> {
    type State = G::State;

    #[inline]
    fn node(&self, s: &G::State) -> usize {
        self.graph.node(s)
    }

    #[inline]
    fn counters(&self, node: usize) -> Counters {
        self.graph.counters(node)
    }

    #[inline]
    fn parity(&self, s: &G::State) -> usize {
        self.graph.parity(s)
    }

    fn for_each_state(&self, visit: impl FnMut(G::State)) {
        self.graph.for_each_state(visit)
    }

    #[inline]
    fn for_each_child(&self, s: &G::State, mut visit: impl FnMut(G::State)) {
        let mark = self.mark(s);
        self.graph.for_each_child(s, |c| {
            if self.mark(&c) == mark {
                visit(c)
            }
        })
    }

    #[inline]
    fn for_each_parent(&self, s: &G::State, mut visit: impl FnMut(G::State)) {
        let mark = self.mark(s);
        self.graph.for_each_parent(s, |p| {
            if self.mark(&p) == mark {
                visit(p)
            }
        })
    }
}

impl<G: ParallelStateGraph> ParallelStateGraph for SameMark<'_, G>
where
    G::State: Send + Sync,
{
    type Stored = G::Stored;

    #[inline]
    fn store(&self, s: &G::State) -> G::Stored {
        self.graph.store(s)
    }

    #[inline]
    fn load(&self, s: &G::Stored) -> G::State {
        self.graph.load(s)
    }

    fn nodes(&self) -> std::ops::Range<usize> {
        self.graph.nodes()
    }

    fn states_at(&self, nodes: &[usize], visit: impl FnMut(G::State)) {
        self.graph.states_at(nodes, visit)
    }

    fn par_collect<T: Send>(&self, visit: impl Fn(G::State, &mut Vec<T>) + Sync) -> Vec<T> {
        self.graph.par_collect(visit)
    }

    fn par_collect_where<T: Send>(
        &self,
        keep: impl Fn(usize) -> bool + Sync,
        visit: impl Fn(G::State, &mut Vec<T>) + Sync,
    ) -> Vec<T> {
        self.graph.par_collect_where(keep, visit)
    }
}

/// What a threshold question ("does the player get at least `t`?") came to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Answer {
    Yes,
    No,
    Unknown,
}

/// Narrows a proven interval `[lower, upper]` with threshold questions:
/// ask `t = lower + 1` while the answers are yes (a no settles the value),
/// then `t = upper` while they are no (a yes settles it). Stops at the
/// first Unknown of each direction. Both searches of a component use it.
pub(crate) fn narrow(lower: &mut u8, upper: &mut u8, mut ask: impl FnMut(u8) -> Answer) {
    while *lower < *upper {
        let t = *lower + 1;
        match ask(t) {
            Answer::Yes => *lower = t,
            Answer::No => *upper = t - 1,
            Answer::Unknown => break,
        }
    }
    while *lower < *upper {
        let t = *upper;
        match ask(t) {
            Answer::Yes => *lower = t,
            Answer::No => *upper = t - 1,
            Answer::Unknown => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each counter of a byte is set and read without touching the other;
    /// a safety set's removal of a child changes the safety counter only,
    /// as it changed a byte of its own before (an opponent state leaves at
    /// once; a player state leaves when its count falls from 2; a state
    /// out of the set is left alone).
    #[test]
    fn the_two_counters_of_a_byte_are_independent() {
        for open in 0..=6u8 {
            for safe in 0..=8u8 {
                let byte = SAFE.with(OPEN.with(0, open), safe);
                assert_eq!((OPEN.of(byte), SAFE.of(byte)), (open, safe));
                assert_eq!(OPEN.of(SAFE.with(byte, 3)), open);
                assert_eq!(SAFE.of(OPEN.with(byte, 5)), safe);
                for player_state in [false, true] {
                    let cell = AtomicU8::new(byte);
                    let left = leaves_with_child(&cell, SAFE, player_state);
                    let after = cell.load(Relaxed);
                    assert_eq!(OPEN.of(after), open);
                    let (expect_left, expect_safe) = match (safe, player_state) {
                        (0, _) => (false, 0),
                        (_, false) | (2, true) => (true, 0),
                        (count, true) => (false, count - 1),
                    };
                    assert_eq!(
                        (left, SAFE.of(after)),
                        (expect_left, expect_safe),
                        "{open} {safe} {player_state}"
                    );
                    let alone = AtomicU8::new(safe);
                    assert_eq!(leaves_with_child(&alone, SAFE_ALONE, player_state), expect_left);
                    assert_eq!(alone.load(Relaxed), expect_safe);
                }
            }
        }
    }
}
