//! Ranks of a distributed job and the few collective operations the
//! distributed tablebase build needs, behind one trait so that the same
//! code runs in one process, on threads standing in for ranks (the tests),
//! and over MPI (`oware_mpi::MpiWorld`, the package in mpi/).
//!
//! Every operation is collective: all ranks call it, in the same order.
//! The build combines what one rank has for another into one message per
//! destination per round ([`Communicator::exchange`]), so the traffic of a
//! round is at most `ranks × (ranks − 1)` messages whatever the number of
//! updates.

use std::ops::Range;

mod communicator;
pub mod gaps;
mod threads;

pub use communicator::{Communicator, Solo, Traffic};
pub use threads::run_ranks;

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
}
