//! Ranks as threads of one process, meeting at a barrier: the distributed
//! code paths, tested and measured without MPI.

use std::cell::Cell;
use std::sync::{Barrier, Mutex};

use super::communicator::{Communicator, Traffic};

/// What the threads share. Every collective operation is a round: each
/// rank writes its part into the round's board, all meet at the barrier,
/// then each reads what it needs. Rounds alternate between two boards, so
/// one barrier a round is enough: a rank writes round r + 2 (the same
/// board as round r) only after the barrier of round r + 1, which every
/// rank reaches only once it has read round r. (A second barrier a round,
/// as a single board would need, doubled the time of the tests whose
/// ranks meet thousands of times on small layers.)
struct Board {
    ranks: usize,
    rounds: [Round; 2],
    barrier: Barrier,
}

/// One board: a mailbox slot per (source, destination) and a value per
/// rank.
struct Round {
    slots: Mutex<Vec<Vec<u8>>>,
    values: Mutex<Vec<u64>>,
}

/// One thread's view of the ranks.
struct ThreadRank<'b> {
    rank: usize,
    board: &'b Board,
    traffic: Cell<Traffic>,
    /// Collective operations done so far (the same on every rank, as
    /// every rank calls them in the same order).
    rounds: Cell<usize>,
}

impl Communicator for ThreadRank<'_> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.board.ranks
    }

    fn exchange(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let k = self.board.ranks;
        assert_eq!(outgoing.len(), k, "one message per rank");
        let mut traffic = self.traffic.get();
        traffic.add_exchange(self.rank, &outgoing);
        self.traffic.set(traffic);
        let round = self.next_round();
        {
            let mut slots = round.slots.lock().unwrap_or_else(|e| e.into_inner());
            for (to, message) in outgoing.into_iter().enumerate() {
                slots[self.rank * k + to] = message;
            }
        }
        self.board.barrier.wait();
        let mut slots = round.slots.lock().unwrap_or_else(|e| e.into_inner());
        (0..k).map(|from| std::mem::take(&mut slots[from * k + self.rank])).collect()
    }

    fn sum(&self, value: u64) -> u64 {
        self.reduce(value, |values| values.iter().sum())
    }

    fn min(&self, value: u64) -> u64 {
        self.reduce(value, |values| values.iter().copied().min().unwrap_or(u64::MAX))
    }

    fn traffic(&self) -> Traffic {
        self.traffic.get()
    }
}

impl ThreadRank<'_> {
    /// The board of this rank's next collective operation.
    fn next_round(&self) -> &Round {
        let r = self.rounds.get();
        self.rounds.set(r + 1);
        &self.board.rounds[r % 2]
    }

    /// `fold` over every rank's `value`, on every rank.
    fn reduce(&self, value: u64, fold: impl Fn(&[u64]) -> u64) -> u64 {
        let round = self.next_round();
        round.values.lock().unwrap_or_else(|e| e.into_inner())[self.rank] = value;
        self.board.barrier.wait();
        let values = round.values.lock().unwrap_or_else(|e| e.into_inner());
        fold(&values)
    }
}

/// Runs `job` on `ranks` threads, each given its rank's communicator, and
/// returns their results by rank. A panic in one rank leaves the others
/// waiting at their next collective operation, so `job` must not panic
/// (the tests that use this fail by their timeout if one does).
///
/// Each rank runs its parallel loops on a pool of one thread of its own,
/// as a rank of an MPI job has its node's cores to itself: ranks feeding
/// one shared pool kept waking its threads for loops of a few hundred
/// positions, and the unit tests spent a third of their time in the
/// scheduler.
pub fn run_ranks<T: Send>(ranks: usize, job: impl Fn(&dyn Communicator) -> T + Sync) -> Vec<T> {
    assert!(ranks >= 1, "at least one rank");
    let round =
        || Round { slots: Mutex::new(vec![Vec::new(); ranks * ranks]), values: Mutex::new(vec![0; ranks]) };
    let board = Board { ranks, rounds: [round(), round()], barrier: Barrier::new(ranks) };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..ranks)
            .map(|rank| {
                let (board, job) = (&board, &job);
                scope.spawn(move || {
                    let run = || {
                        job(&ThreadRank {
                            rank,
                            board,
                            traffic: Cell::new(Traffic::default()),
                            rounds: Cell::new(0),
                        })
                    };
                    match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
                        Ok(pool) => pool.install(run),
                        Err(_) => run(),
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_arrive_by_source_and_collectives_agree() {
        let results = run_ranks(3, |comm| {
            let me = comm.rank() as u8;
            let outgoing = (0..3u8).map(|to| vec![me, to]).collect();
            let incoming = comm.exchange(outgoing);
            let total = comm.sum(comm.rank() as u64 + 1);
            let least = comm.min(7 - comm.rank() as u64);
            let most = comm.max(7 - comm.rank() as u64);
            assert_eq!((least, most), (5, 7));
            assert!(comm.any(comm.rank() == 2) && !comm.any(false) && !comm.all(comm.rank() != 1));
            let root = comm.broadcast(vec![me + 10]);
            let gathered = comm.gather(vec![me; me as usize]);
            (incoming, total, root, gathered, comm.traffic())
        });
        for (rank, (incoming, total, root, gathered, traffic)) in results.into_iter().enumerate() {
            let expected: Vec<Vec<u8>> = (0..3u8).map(|from| vec![from, rank as u8]).collect();
            assert_eq!(incoming, expected);
            assert_eq!(total, 6);
            assert_eq!(root, vec![10]);
            match rank {
                0 => assert_eq!(gathered, Some(vec![vec![], vec![1], vec![2, 2]])),
                _ => assert_eq!(gathered, None),
            }
            // The exchange: two messages of 2 bytes to the others; then the
            // broadcast (rank 0: 2 of 1 byte) and the gather (ranks 1, 2:
            // their bytes to rank 0).
            let want = match rank {
                0 => Traffic { exchanges: 3, messages: 4, bytes: 6 },
                1 => Traffic { exchanges: 3, messages: 3, bytes: 5 },
                _ => Traffic { exchanges: 3, messages: 3, bytes: 6 },
            };
            assert_eq!(traffic, want, "rank {rank}");
        }
    }

    #[test]
    fn values_are_summed_place_by_place_on_every_rank() {
        let sums = run_ranks(3, |comm| {
            let r = comm.rank() as u64;
            comm.sum_each(&[r, 1, 10 * r, u32::MAX as u64])
        });
        for sum in sums {
            assert_eq!(sum, vec![3, 3, 30, 3 * u32::MAX as u64]);
        }
        assert_eq!(crate::cluster::communicator::Solo.sum_each(&[4, 5]), vec![4, 5]);
    }
}
