//! The [`Communicator`] trait every kind of rank implements, what it counts
//! ([`Traffic`]), and the one-process [`Solo`]. Below the implementations
//! (threads, MPI), which `cluster` re-exports.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traffic_counts_only_other_ranks_non_empty_messages() {
        let mut t = Traffic::default();
        t.add_exchange(1, &[vec![1, 2], vec![3; 10], Vec::new(), vec![4]]);
        assert_eq!(t, Traffic { exchanges: 1, messages: 2, bytes: 3 });
    }
}
