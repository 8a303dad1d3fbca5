//! Ranks of a distributed job and the few collective operations the
//! distributed tablebase build needs, behind one trait so that the same
//! code runs in one process, on threads standing in for ranks (the tests),
//! and over MPI (feature `mpi`: `cluster::mpi::MpiWorld`).
//!
//! Every operation is collective: all ranks call it, in the same order.
//! The build combines what one rank has for another into one message per
//! destination per round ([`Communicator::exchange`]), so the traffic of a
//! round is at most `ranks × (ranks − 1)` messages whatever the number of
//! updates.

use std::ops::Range;

pub mod gaps;
#[cfg(feature = "mpi")]
pub mod mpi;
mod threads;

pub use threads::run_ranks;

/// What a rank sent to the other ranks (what it keeps for itself is not
/// counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Exchanges taken part in (a broadcast and a gather are one each).
    pub exchanges: u64,
    /// Non-empty messages sent.
    pub messages: u64,
    /// Their bytes.
    pub bytes: u64,
}

impl Traffic {
    /// Adds the messages of one exchange sent by `rank`.
    pub fn add_exchange(&mut self, rank: usize, outgoing: &[Vec<u8>]) {
        self.exchanges += 1;
        for (to, message) in outgoing.iter().enumerate() {
            if to != rank && !message.is_empty() {
                self.messages += 1;
                self.bytes += message.len() as u64;
            }
        }
    }

    /// What was sent between `earlier` and `self`.
    pub fn since(&self, earlier: Traffic) -> Traffic {
        Traffic {
            exchanges: self.exchanges - earlier.exchanges,
            messages: self.messages - earlier.messages,
            bytes: self.bytes - earlier.bytes,
        }
    }
}

/// The ranks of a job, from the point of view of one of them.
pub trait Communicator {
    /// This rank, `0..ranks()`.
    fn rank(&self) -> usize;

    /// How many ranks take part.
    fn ranks(&self) -> usize;

    /// Sends `outgoing[d]` to rank `d` (there must be one message, possibly
    /// empty, per rank; this rank's own is handed back without a copy) and
    /// returns the message each rank sent to this one, by source rank.
    fn exchange(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>>;

    /// The sum of `value` over all ranks, on every rank.
    fn sum(&self, value: u64) -> u64;

    /// The least `value` over all ranks, on every rank.
    fn min(&self, value: u64) -> u64;

    /// Everything this rank has sent so far.
    fn traffic(&self) -> Traffic;

    /// Rank 0's `bytes`, on every rank (the others' are ignored).
    fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8> {
        let outgoing = if self.rank() == 0 {
            let mut all = vec![bytes.clone(); self.ranks() - 1];
            all.insert(0, bytes);
            all
        } else {
            vec![Vec::new(); self.ranks()]
        };
        self.exchange(outgoing).swap_remove(0)
    }

    /// Every rank's `bytes` by rank, on rank 0 (`None` on the others).
    fn gather(&self, bytes: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        let mut outgoing = vec![Vec::new(); self.ranks()];
        outgoing[0] = bytes;
        let incoming = self.exchange(outgoing);
        (self.rank() == 0).then_some(incoming)
    }

    /// The greatest `value` over all ranks, on every rank.
    fn max(&self, value: u64) -> u64 {
        u64::MAX - self.min(u64::MAX - value)
    }

    /// Whether `ok` holds on every rank.
    fn all(&self, ok: bool) -> bool {
        self.sum(!ok as u64) == 0
    }

    /// Whether `found` holds on some rank.
    fn any(&self, found: bool) -> bool {
        self.sum(found as u64) > 0
    }

    /// Every rank's `values` added up place by place, on every rank (all
    /// ranks give as many): one gather and one broadcast, however many
    /// values.
    fn sum_each(&self, values: &[u64]) -> Vec<u64> {
        let bytes = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let total = self.gather(bytes(values)).map(|all| {
            let mut total = vec![0u64; values.len()];
            for message in all {
                for (sum, word) in total.iter_mut().zip(message.chunks_exact(8)) {
                    *sum += u64::from_le_bytes(word.try_into().expect("eight bytes"));
                }
            }
            bytes(&total)
        });
        let total = self.broadcast(total.unwrap_or_default());
        total.chunks_exact(8).map(|w| u64::from_le_bytes(w.try_into().expect("eight bytes"))).collect()
    }
}

/// One process alone: rank 0 of 1.
#[derive(Debug, Default)]
pub struct Solo;

impl Communicator for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn ranks(&self) -> usize {
        1
    }
    fn exchange(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        assert_eq!(outgoing.len(), 1, "one message per rank");
        outgoing
    }
    fn sum(&self, value: u64) -> u64 {
        value
    }
    fn min(&self, value: u64) -> u64 {
        value
    }
    fn traffic(&self) -> Traffic {
        Traffic::default()
    }
}

/// Contiguous, nearly equal index ranges of `0..size`, one per rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    size: u64,
    ranks: usize,
    /// Indexes per rank (the last rank may hold fewer).
    chunk: u64,
}

impl Partition {
    /// `0..size` over `ranks` ranks (at least one).
    pub fn new(size: u64, ranks: usize) -> Partition {
        let ranks = ranks.max(1);
        Partition { size, ranks, chunk: size.div_ceil(ranks as u64).max(1) }
    }

    /// The indexes rank `rank` owns (possibly none).
    pub fn range(&self, rank: usize) -> Range<u64> {
        let start = (rank as u64 * self.chunk).min(self.size);
        start..(start + self.chunk).min(self.size)
    }

    /// The rank owning `index` (`index < size`).
    #[inline]
    pub fn owner(&self, index: u64) -> usize {
        (index / self.chunk) as usize
    }

    /// The rank owning `index` (`index < size`) and the index's offset in
    /// that rank's range (ranges hold fewer than 2^32 indexes).
    #[inline]
    pub fn locate(&self, index: u64) -> (usize, u32) {
        ((index / self.chunk) as usize, (index % self.chunk) as u32)
    }

    /// How many ranks.
    pub fn ranks(&self) -> usize {
        self.ranks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_covers_every_index_once_and_owners_agree() {
        for size in [0u64, 1, 2, 3, 10, 97, 1000] {
            for ranks in 1..=6 {
                let p = Partition::new(size, ranks);
                let mut next = 0;
                for r in 0..ranks {
                    let range = p.range(r);
                    assert_eq!(range.start, next, "size {size} ranks {ranks}");
                    for i in range.clone() {
                        assert_eq!(p.owner(i), r);
                        assert_eq!(p.locate(i), (r, (i - range.start) as u32));
                    }
                    next = range.end;
                }
                assert_eq!(next, size);
            }
        }
    }

    #[test]
    fn traffic_counts_only_other_ranks_non_empty_messages() {
        let mut t = Traffic::default();
        t.add_exchange(1, &[vec![1, 2], vec![3; 10], Vec::new(), vec![4]]);
        assert_eq!(t, Traffic { exchanges: 1, messages: 2, bytes: 3 });
    }
}
