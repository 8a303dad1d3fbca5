//! The frontier of the parallel threshold games: a bit per game state,
//! which threads set as states join and take out in state order.
//!
//! A listed frontier cost 16 bytes a state, and the widest held a fifth of
//! a layer's states: about 5 bytes a position at 27 seeds. A bit per state
//! of the component's span costs a quarter of a byte a position, however
//! wide the frontier. States are taken out a block at a time, in order, so
//! a dense stretch is walked position by position rather than unranked.
//!
//! The set is drained while it grows: a state added during a sweep is
//! taken out later in the same sweep or in the next one
//! (`docs/cycle-bounds.md` §8, "A frontier of bits", says why the games
//! may take their states in any order).

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

use rayon::prelude::*;

/// Words of state bits per block: what a summary bit stands for, and what
/// a thread takes out at once (4,096 states).
const BLOCK_WORDS: usize = 64;

/// A set of game states, numbered from `first`, that threads add to at
/// once.
///
/// Invariant (outside [`StateBits::drain`]'s hold on a block): a word
/// holding a bit has its block's summary bit set. An addition that finds
/// its word empty sets the summary bit after the word's; a drain clears
/// the summary bit before it empties the block's words. Every operation is
/// sequentially consistent, so an addition to a word already emptied sets
/// the summary bit again after the drain cleared it.
pub(crate) struct StateBits {
    first: usize,
    words: Vec<AtomicU64>,
    /// A bit per block of [`BLOCK_WORDS`] words.
    summary: Vec<AtomicU64>,
}

impl StateBits {
    /// An empty set for the states numbered `states`.
    pub(crate) fn new(states: std::ops::Range<usize>) -> StateBits {
        let words = states.len().div_ceil(64);
        let blocks = words.div_ceil(BLOCK_WORDS);
        let zeros = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect();
        StateBits { first: states.start, words: zeros(words), summary: zeros(blocks.div_ceil(64)) }
    }

    /// Adds state `state` (one of the set's range).
    #[inline]
    pub(crate) fn insert(&self, state: usize) {
        let offset = state - self.first;
        let word = offset / 64;
        if self.words[word].fetch_or(1 << (offset % 64), SeqCst) == 0 {
            let block = word / BLOCK_WORDS;
            self.summary[block / 64].fetch_or(1 << (block % 64), SeqCst);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.summary.iter().all(|s| s.load(SeqCst) == 0)
    }

    /// Takes every state out, a block at a time on every thread:
    /// `visit(states)` gets a block's states in increasing order, and may
    /// add states, which are taken out in turn; returns once the set is
    /// empty. A state is visited once for each time it was added to the
    /// set while it was not in it.
    pub(crate) fn drain(&self, visit: impl Fn(&[usize]) + Sync) {
        while !self.is_empty() {
            self.sweep(|block| self.summary_bit_taken(block), |word| word.swap(0, SeqCst), &visit);
        }
    }

    /// Calls `visit(states)` with the states of each block, in increasing
    /// order, on every thread, leaving the set as it is. Nothing may add
    /// to the set meanwhile.
    pub(crate) fn for_each(&self, visit: impl Fn(&[usize]) + Sync) {
        self.sweep(|block| self.summary_bit(block), |word| word.load(SeqCst), &visit);
    }

    /// One pass over the blocks `take_block` accepts, each word read by
    /// `take_word`.
    fn sweep(
        &self,
        take_block: impl Fn(usize) -> bool + Sync,
        take_word: impl Fn(&AtomicU64) -> u64 + Sync,
        visit: &(impl Fn(&[usize]) + Sync),
    ) {
        let blocks = self.words.len().div_ceil(BLOCK_WORDS);
        (0..blocks).into_par_iter().with_min_len(64).for_each(|block| {
            if !self.summary_bit(block) || !take_block(block) {
                return;
            }
            let mut states = Vec::new();
            let words = block * BLOCK_WORDS..((block + 1) * BLOCK_WORDS).min(self.words.len());
            for w in words {
                let mut bits = take_word(&self.words[w]);
                while bits != 0 {
                    states.push(self.first + 64 * w + bits.trailing_zeros() as usize);
                    bits &= bits - 1;
                }
            }
            if !states.is_empty() {
                visit(&states);
            }
        });
    }

    fn summary_bit(&self, block: usize) -> bool {
        self.summary[block / 64].load(SeqCst) & (1 << (block % 64)) != 0
    }

    /// Clears a block's summary bit; true if this call cleared it.
    fn summary_bit_taken(&self, block: usize) -> bool {
        let bit = 1 << (block % 64);
        self.summary[block / 64].fetch_and(!bit, SeqCst) & bit != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// Drained as the games drain it (a state is added by the one visit
    /// that claims it), the set visits every state reachable from the first
    /// ones exactly once, a block's states in increasing order, and leaves
    /// no state behind; `for_each` sees the set as it is.
    #[test]
    fn a_drain_visits_every_state_claimed_once() {
        let range = 1_000..1_000 + 300_000;
        let successors = |s: usize| [s + 1, 2 * s - 1_000, s + 4_097].into_iter().filter(|&t| t < 301_000);
        let allowed = |s: usize| !s.is_multiple_of(7) && s % 4_096 != 5;
        let starts = [1_000, 1_001, 1_003, 150_000, 300_999];
        // The states reached, found one at a time.
        let mut expected = vec![false; range.len()];
        let mut stack: Vec<usize> = starts.to_vec();
        starts.iter().for_each(|&s| expected[s - range.start] = true);
        while let Some(s) = stack.pop() {
            for t in successors(s).filter(|&t| allowed(t)) {
                if !std::mem::replace(&mut expected[t - range.start], true) {
                    stack.push(t);
                }
            }
        }
        let set = StateBits::new(range.clone());
        let claimed: Vec<AtomicBool> = (0..range.len()).map(|_| AtomicBool::new(false)).collect();
        for s in starts {
            claimed[s - range.start].store(true, SeqCst);
            set.insert(s);
        }
        let listed = std::sync::Mutex::new(Vec::new());
        set.for_each(|states| listed.lock().unwrap().extend_from_slice(states));
        let mut listed = listed.into_inner().unwrap();
        listed.sort();
        assert_eq!(listed, starts);
        let visits: Vec<AtomicU64> = (0..range.len()).map(|_| AtomicU64::new(0)).collect();
        set.drain(|states| {
            assert!(states.windows(2).all(|w| w[0] < w[1]));
            for &s in states {
                visits[s - range.start].fetch_add(1, SeqCst);
                for t in successors(s).filter(|&t| allowed(t)) {
                    if !claimed[t - range.start].swap(true, SeqCst) {
                        set.insert(t);
                    }
                }
            }
        });
        assert!(set.is_empty());
        let visits: Vec<u64> = visits.iter().map(|c| c.load(SeqCst)).collect();
        assert_eq!(visits, expected.iter().map(|&e| e as u64).collect::<Vec<_>>());
        assert!(expected.iter().filter(|&&e| e).count() > 100_000);
    }
}
