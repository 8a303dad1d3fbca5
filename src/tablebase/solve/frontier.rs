//! The states a parallel game has taken (won, or removed from a safety
//! set) and not yet told their parents.
//!
//! As lists of 8-byte states, a generation at a time, a threshold's first
//! frontier and the generations after it rose up to 0.8 bytes a position
//! of the layer above the games' arrays at 25 seeds (the cycle phase's
//! peak). Now the lists hold at most 1/[`LISTED_FROM`] of the component's
//! states (1/8 of a byte a position), and the states beyond wait as a bit
//! a state number (a quarter of a byte a position, however many). A listed
//! state keeps its position; one taken from the bits has it walked to or
//! unranked (about 100 ns, against 6 for a listed one), which made the
//! games a quarter slower at 22 seeds when every state waited as a bit.
//! The walk takes the pending states in no fixed order on every thread:
//! the games' regions and counts do not depend on the order in which each
//! taken state is expanded once (`docs/cycle-bounds.md` §8, "Pending
//! states as bits").

use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::AcqRel, Ordering::Relaxed};
use std::sync::Mutex;

use crate::parallel;

/// Words of state bits a dirty bit stands for: 4,096 states, 2,048
/// positions of the layer.
const BLOCK_WORDS: usize = 64;

/// Dirty words a thread takes at a time in a sweep (each stands for 64
/// blocks: 262,144 states).
const SWEEP_CHUNK: usize = 1;

/// The lists hold at most one state in this many of the component's
/// state numbers: 8 bytes each, 1/8 of a byte a position.
const LISTED_FROM: usize = 128;

/// Room in the lists a thread takes at a time.
const ROOM: usize = 1024;

/// Listed states handed to one thread at a time.
const LIST_CHUNK: usize = 1024;

/// A set of states of numbers in `first..first + 64 × bits.len()`, to be
/// taken each exactly once by [`PendingStates::walk`]: some listed as `T`
/// (a state as the caller keeps it), the others as bits.
pub(crate) struct PendingStates<T> {
    first: usize,
    /// A bit a state number.
    bits: Vec<AtomicU64>,
    /// A bit a block of [`BLOCK_WORDS`] words of `bits`: set whenever a
    /// state is added to an empty word of the block, cleared by the sweep
    /// that takes the block. So a block holding a pending state always has
    /// its bit set (`docs/cycle-bounds.md` §8 says why).
    dirty: Vec<AtomicU64>,
    /// The listed states, in pieces, and how many the lists may hold (the
    /// room taken, by the pieces and by the adders that fill them).
    listed: Mutex<Vec<Vec<T>>>,
    room_taken: AtomicUsize,
    room: usize,
    /// States added and taken since the set was made (a walk checks that
    /// it took every state added).
    added: AtomicU64,
    taken: AtomicU64,
}

/// Adds states to a [`PendingStates`] from one thread: listed while the
/// lists have room, else as bits. Its list joins the set's when dropped.
pub(crate) struct Adder<'p, T> {
    pending: &'p PendingStates<T>,
    list: Vec<T>,
    /// Room taken and not filled yet; `full` once the lists had none.
    room: usize,
    full: bool,
    added: u64,
}

impl<T> Adder<'_, T> {
    /// Adds state number `node`, kept as `stored()` if listed. A state
    /// must not be pending already: each is added once a walk, when it is
    /// taken into a region or out of a set, which happens once.
    #[inline]
    pub(crate) fn add(&mut self, node: usize, stored: impl FnOnce() -> T) {
        self.added += 1;
        if self.room == 0 && !self.full {
            self.room = self.pending.take_room();
            self.full = self.room == 0;
        }
        if self.room > 0 {
            self.room -= 1;
            self.list.push(stored());
        } else {
            self.pending.add_bit(node);
        }
    }
}

impl<T> Drop for Adder<'_, T> {
    fn drop(&mut self) {
        self.pending.room_taken.fetch_sub(self.room, Relaxed);
        self.pending.added.fetch_add(self.added, Relaxed);
        if !self.list.is_empty() {
            let list = std::mem::take(&mut self.list);
            self.pending.listed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(list);
        }
    }
}

impl<T> PendingStates<T> {
    /// An empty set for the state numbers `nodes`.
    pub(crate) fn new(nodes: Range<usize>) -> PendingStates<T> {
        let words = nodes.len().div_ceil(64);
        PendingStates {
            first: nodes.start,
            bits: parallel::atomics(vec![0u64; words]),
            dirty: parallel::atomics(vec![0u64; words.div_ceil(BLOCK_WORDS).div_ceil(64)]),
            listed: Mutex::new(Vec::new()),
            room_taken: AtomicUsize::new(0),
            room: nodes.len() / LISTED_FROM,
            added: AtomicU64::new(0),
            taken: AtomicU64::new(0),
        }
    }

    /// An adder for one thread.
    pub(crate) fn adder(&self) -> Adder<'_, T> {
        Adder { pending: self, list: Vec::new(), room: 0, full: false, added: 0 }
    }

    /// Room for [`ROOM`] more listed states, or none.
    fn take_room(&self) -> usize {
        if self.room_taken.fetch_add(ROOM, Relaxed) + ROOM <= self.room {
            ROOM
        } else {
            self.room_taken.fetch_sub(ROOM, Relaxed);
            0
        }
    }

    /// Sets state `node`'s bit (and its block's dirty bit if its word was
    /// empty).
    #[inline]
    fn add_bit(&self, node: usize) {
        let offset = node - self.first;
        let (word, bit) = (offset / 64, 1u64 << (offset % 64));
        // (Acquire-release on the word and on the dirty bit: a sweep
        // clears a block's dirty bit before it takes the block's words,
        // so an add that finds a word the sweep emptied sets the dirty bit
        // after the sweep cleared it, never before.)
        let before = self.bits[word].fetch_or(bit, AcqRel);
        assert!(before & bit == 0, "state {node} added twice to a walk");
        if before == 0 {
            let block = word / BLOCK_WORDS;
            self.dirty[block / 64].fetch_or(1 << (block % 64), AcqRel);
        }
    }

    /// Adds state `node` as a bit, uncounted: the caller counts the
    /// states it added so with [`Self::count_added`].
    #[inline]
    pub(crate) fn add_uncounted(&self, node: usize) {
        self.add_bit(node);
    }

    /// Counts `count` states added with [`Self::add_uncounted`] (the walk
    /// checks the count against the states it took).
    pub(crate) fn count_added(&self, count: u64) {
        self.added.fetch_add(count, Relaxed);
    }
}

impl<T: Send + Sync> PendingStates<T> {
    /// Adds every state of `nodes` as bits (on every thread).
    pub(crate) fn add_all(&self, nodes: &[usize]) {
        parallel::for_each_chunk(nodes.len(), 1 << 14, &|range| {
            nodes[range].iter().for_each(|&node| self.add_bit(node))
        });
        self.added.fetch_add(nodes.len() as u64, Relaxed);
    }

    /// Takes every pending state, and every state added meanwhile, each
    /// once, on every thread: the listed ones a generation at a time,
    /// given to `expand_listed`, then the bits, a block of numbers at a
    /// time, their numbers in ascending order given to `expand_nodes`;
    /// both add what they find through the adder they get. Ends when the
    /// lists are empty and a sweep of the bits takes nothing; then nothing
    /// is pending (checked: the states taken are the states added).
    pub(crate) fn walk(
        &self,
        expand_listed: impl Fn(&[T], &mut Adder<'_, T>) + Sync,
        expand_nodes: impl Fn(&[usize], &mut Adder<'_, T>) + Sync,
    ) {
        loop {
            let generation = std::mem::take(&mut *self.listed.lock().unwrap_or_else(|p| p.into_inner()));
            let listed: usize = generation.iter().map(Vec::len).sum();
            if listed > 0 {
                let runs: Vec<&[T]> = generation.iter().flat_map(|piece| piece.chunks(LIST_CHUNK)).collect();
                parallel::for_each_index(runs.len(), &|r| expand_listed(runs[r], &mut self.adder()));
                drop(runs);
                drop(generation);
                self.room_taken.fetch_sub(listed, Relaxed);
                self.taken.fetch_add(listed as u64, Relaxed);
                continue;
            }
            if self.sweep(&expand_nodes) == 0 {
                break;
            }
        }
        let (added, taken) = (self.added.load(Relaxed), self.taken.load(Relaxed));
        assert_eq!(added, taken, "a walk took {taken} states of {added} added");
    }

    /// Takes the bits of every dirty block on every thread, each block's
    /// states expanded by `expand_nodes`; returns how many it took.
    fn sweep(&self, expand_nodes: &(impl Fn(&[usize], &mut Adder<'_, T>) + Sync)) -> u64 {
        let taken = parallel::sum_chunks(self.dirty.len(), SWEEP_CHUNK, &|range| {
            let mut taken = 0;
            let mut nodes = Vec::new();
            let mut adder = self.adder();
            for d in range {
                let mut blocks = self.dirty[d].swap(0, AcqRel);
                while blocks != 0 {
                    let block = 64 * d + blocks.trailing_zeros() as usize;
                    blocks &= blocks - 1;
                    nodes.clear();
                    let words = BLOCK_WORDS * block..(BLOCK_WORDS * (block + 1)).min(self.bits.len());
                    for w in words {
                        let mut bits = self.bits[w].swap(0, AcqRel);
                        while bits != 0 {
                            nodes.push(self.first + 64 * w + bits.trailing_zeros() as usize);
                            bits &= bits - 1;
                        }
                    }
                    taken += nodes.len() as u64;
                    if !nodes.is_empty() {
                        expand_nodes(&nodes, &mut adder);
                    }
                }
            }
            taken
        });
        self.taken.fetch_add(taken, Relaxed);
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walk takes every state added, before it or while it runs, once,
    /// on one thread and on three, in a range that starts anywhere; some
    /// are listed and some wait as bits.
    #[test]
    fn a_walk_takes_every_state_once() {
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            // States 1000..1000 + 300,000; state v adds 2v + 1, 3v and
            // v - 7 (when in range and not added yet): a graph with long
            // chains that run backwards and forwards across blocks.
            let range = 1000..301_000;
            let pending = PendingStates::<usize>::new(range.clone());
            let seen: Vec<AtomicU64> = parallel::atomics(vec![0u64; range.len()]);
            let claimed: Vec<AtomicU64> = parallel::atomics(vec![0u64; range.len()]);
            let claim = |v: usize| range.contains(&v) && claimed[v - range.start].swap(1, Relaxed) == 0;
            let starts = [1000usize, 1001, 150_000, 300_999];
            starts.iter().for_each(|&v| assert!(claim(v)));
            pending.add_all(&starts);
            let (from_lists, from_bits) = (AtomicU64::new(0), AtomicU64::new(0));
            let visit = |v: usize, adder: &mut Adder<'_, usize>| {
                assert_eq!(seen[v - range.start].fetch_add(1, Relaxed), 0, "{v} taken twice");
                for next in [2 * v + 1, 3 * v, v - 7] {
                    if claim(next) {
                        adder.add(next, || next);
                    }
                }
            };
            pool.install(|| {
                pending.walk(
                    |listed, adder| {
                        from_lists.fetch_add(listed.len() as u64, Relaxed);
                        listed.iter().for_each(|&v| visit(v, adder));
                    },
                    |nodes, adder| {
                        assert!(nodes.windows(2).all(|w| w[0] < w[1]), "ascending");
                        from_bits.fetch_add(nodes.len() as u64, Relaxed);
                        nodes.iter().for_each(|&v| visit(v, adder));
                    },
                )
            });
            let seen: Vec<u64> = parallel::plain(seen);
            let claimed: Vec<u64> = parallel::plain(claimed);
            assert_eq!(seen, claimed, "{threads} threads: every state claimed is taken once");
            assert!(seen.iter().filter(|&&s| s == 1).count() > 250_000, "the walk reached most states");
            let (lists, bits) = (from_lists.into_inner(), from_bits.into_inner());
            assert!(lists > 10_000 && bits > 10_000, "{lists} states listed, {bits} as bits");
            // Reused once empty.
            pending.add_all(&[5000]);
            pending.walk(|_, _| unreachable!("none listed"), |nodes, _| assert_eq!(nodes, [5000]));
        }
    }

    /// A state added twice to one walk is a fault, not a double expansion.
    #[test]
    #[should_panic(expected = "added twice")]
    fn a_state_added_twice_is_refused() {
        let pending = PendingStates::<usize>::new(0..100);
        pending.add_all(&[7]);
        pending.add_all(&[7]);
    }
}
