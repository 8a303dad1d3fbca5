//! The states a parallel game has taken (won, or removed from a safety
//! set) and not yet told their parents: a bit per state number.
//!
//! As lists of 8-byte states, a threshold's first frontier and the
//! frontiers after it took up to 0.8 bytes a position of the layer at 25
//! seeds (the cycle phase's peak above its work arrays); as bits they take
//! a quarter of a byte a position, however many are pending. The walk
//! takes the pending states in no fixed order, a block of state numbers at
//! a time on every thread, rather than a generation at a time: the games'
//! regions and counts do not depend on the order in which each taken state
//! is expanded once (`docs/cycle-bounds.md` §8, "Pending states as bits").

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::AcqRel, Ordering::Relaxed};

use crate::parallel;

/// Words of state bits a dirty bit stands for: 4,096 states, 2,048
/// positions of the layer.
const BLOCK_WORDS: usize = 64;

/// Dirty words a thread takes at a time in a sweep (each stands for 64
/// blocks: 262,144 states).
const SWEEP_CHUNK: usize = 1;

/// A set of state numbers in `first..first + 64 × bits.len()`, to be
/// taken each exactly once by [`PendingStates::walk`].
pub(crate) struct PendingStates {
    first: usize,
    /// A bit a state number.
    bits: Vec<AtomicU64>,
    /// A bit a block of [`BLOCK_WORDS`] words of `bits`: set whenever a
    /// state is added to an empty word of the block, cleared by the sweep
    /// that takes the block. So a block holding a pending state always has
    /// its bit set (`add` and `walk` say why).
    dirty: Vec<AtomicU64>,
    /// States added and taken since the set was made (a walk checks that
    /// it took every state added).
    added: AtomicU64,
    taken: AtomicU64,
}

impl PendingStates {
    /// An empty set for the state numbers `nodes`.
    pub(crate) fn new(nodes: Range<usize>) -> PendingStates {
        let words = nodes.len().div_ceil(64);
        PendingStates {
            first: nodes.start,
            bits: parallel::atomics(vec![0u64; words]),
            dirty: parallel::atomics(vec![0u64; words.div_ceil(BLOCK_WORDS).div_ceil(64)]),
            added: AtomicU64::new(0),
            taken: AtomicU64::new(0),
        }
    }

    /// Adds state number `node`, which must not be pending (each state is
    /// added once a walk: when it is taken into a region, or out of a
    /// set, which happens once).
    #[inline]
    pub(crate) fn add(&self, node: usize) {
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

    /// Adds every state of `nodes` (on every thread).
    pub(crate) fn add_all(&self, nodes: &[usize]) {
        parallel::for_each_chunk(nodes.len(), 1 << 14, &|range| {
            nodes[range].iter().for_each(|&node| self.add(node))
        });
        self.added.fetch_add(nodes.len() as u64, Relaxed);
    }

    /// Counts `count` states added one by one with [`Self::add`] (the
    /// walk checks the count against the states it took).
    pub(crate) fn count_added(&self, count: u64) {
        self.added.fetch_add(count, Relaxed);
    }

    /// Takes every pending state, and every state added meanwhile, each
    /// once: `expand(nodes, added)` gets the numbers of taken states in
    /// ascending order (at most a block's) and returns how many states it
    /// added. Sweeps over the dirty blocks on every thread until one takes
    /// nothing; then nothing is pending (checked: the states taken are the
    /// states added).
    pub(crate) fn walk(&self, expand: impl Fn(&[usize]) -> u64 + Sync) {
        loop {
            let taken = parallel::sum_chunks(self.dirty.len(), SWEEP_CHUNK, &|range| {
                let (mut taken, mut added) = (0, 0);
                let mut nodes = Vec::new();
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
                            added += expand(&nodes);
                        }
                    }
                }
                self.added.fetch_add(added, Relaxed);
                self.taken.fetch_add(taken, Relaxed);
                taken
            });
            if taken == 0 {
                break;
            }
        }
        let (added, taken) = (self.added.load(Relaxed), self.taken.load(Relaxed));
        assert_eq!(added, taken, "a walk took {taken} states of {added} added");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walk takes every state added, before it or while it runs, once,
    /// on one thread and on three, in a range that starts anywhere.
    #[test]
    fn a_walk_takes_every_state_once() {
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            // States 1000..1000 + 300,000; state v adds 2v + 1 and 3v
            // (when in range and not added yet): a graph with long chains
            // that run backwards and forwards across blocks.
            let range = 1000..301_000;
            let pending = PendingStates::new(range.clone());
            let seen: Vec<AtomicU64> = parallel::atomics(vec![0u64; range.len()]);
            let claimed: Vec<AtomicU64> = parallel::atomics(vec![0u64; range.len()]);
            let claim = |v: usize| range.contains(&v) && claimed[v - range.start].swap(1, Relaxed) == 0;
            let starts = [1000usize, 1001, 150_000, 300_999];
            starts.iter().for_each(|&v| assert!(claim(v)));
            pending.add_all(&starts);
            pool.install(|| {
                pending.walk(|nodes| {
                    assert!(nodes.windows(2).all(|w| w[0] < w[1]), "ascending");
                    let mut added = 0;
                    for &v in nodes {
                        assert_eq!(seen[v - range.start].fetch_add(1, Relaxed), 0, "{v} taken twice");
                        for next in [2 * v + 1, 3 * v, v - 7] {
                            if claim(next) {
                                pending.add(next);
                                added += 1;
                            }
                        }
                    }
                    added
                })
            });
            let seen: Vec<u64> = parallel::plain(seen);
            let claimed: Vec<u64> = parallel::plain(claimed);
            assert_eq!(seen, claimed, "{threads} threads: every state claimed is taken once");
            assert!(seen.iter().filter(|&&s| s == 1).count() > 250_000, "the walk reached most states");
            // Reused once empty.
            pending.add_all(&[5000]);
            pending.walk(|nodes| {
                assert_eq!(nodes, [5000]);
                0
            });
        }
    }

    /// A state added twice to one walk is a fault, not a double expansion.
    #[test]
    #[should_panic(expected = "added twice")]
    fn a_state_added_twice_is_refused() {
        let pending = PendingStates::new(0..100);
        pending.add(7);
        pending.add(7);
    }
}
