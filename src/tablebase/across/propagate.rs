//! Retrograde propagation across the ranks of a distributed build: each
//! rank tells the parents it holds directly, and sends what it has for the
//! parents other ranks hold, 7 bytes an update (the parent's offset in its
//! owner's range and the option's lower bound, upper bound and estimate).

use crate::parallel;

use crate::cluster::{Communicator, Partition};
use crate::rank::position_in_layer;
use crate::tablebase::solve::retrograde;
use crate::tablebase::solve::solver::LayerSolver;

/// Bytes of one update: `u32` offset, then lower, upper, estimate.
const UPDATE_BYTES: usize = 7;

/// Frontier positions handed to one thread at a time.
const CHILD_CHUNK: usize = 1 << 12;

/// Frontier positions told per exchange: a round whose frontier is longer
/// on some rank goes in several exchanges, so that what a rank sends at
/// once stays near 7 bytes times the parents of this many positions.
const PROPAGATION_SLICE: usize = 1 << 20;

/// Rounds of retrograde propagation across the ranks from `frontier`
/// (layer indexes of positions of this rank's part just decided) until no
/// rank decides a position; returns the rounds and how many positions
/// this rank decided in them. Telling a parent is a maximum and a
/// decrement, which commute: the positions decided, and their entries, are
/// those of one process's rounds from the same frontiers, however a round
/// is cut into exchanges. Collective.
pub(crate) fn propagate_across(
    comm: &dyn Communicator,
    part: &LayerSolver,
    partition: &Partition,
    mut frontier: Vec<u32>,
    detail: impl Fn(u64) -> String,
) -> (u64, u64) {
    let (ranks, n) = (comm.ranks(), part.n);
    let start = partition.range(comm.rank()).start as usize;
    let (mut rounds, mut decided_here) = (0, 0);
    while comm.sum(frontier.len() as u64) > 0 {
        rounds += 1;
        part.progress.detail(&detail(rounds));
        let slices = comm.max(frontier.len().div_ceil(PROPAGATION_SLICE) as u64) as usize;
        let mut next: Vec<u32> = Vec::new();
        for s in 0..slices {
            let slice = &frontier[(s * PROPAGATION_SLICE).min(frontier.len())
                ..((s + 1) * PROPAGATION_SLICE).min(frontier.len())];
            // Each task tells the parents held here and writes one buffer
            // per rank for the others; the buffers are then joined per rank.
            let parts = parallel::map_slices(slice, CHILD_CHUNK, &|children| {
                let mut decided = Vec::new();
                let mut outgoing = vec![Vec::new(); ranks];
                for &child in children {
                    let child = position_in_layer(n, child as u64).expect("an index of the layer");
                    let here = |index: usize, _: &_| decided.push(index as u32);
                    retrograde::propagate_to(part, &child, here, |index, option| {
                        let (owner, offset) = partition.locate(index as u64);
                        let buffer: &mut Vec<u8> = &mut outgoing[owner];
                        buffer.extend_from_slice(&offset.to_le_bytes());
                        buffer.extend_from_slice(&[option.0, option.1, option.2]);
                    });
                }
                (decided, outgoing)
            });
            let mut outgoing = vec![Vec::new(); ranks];
            for (decided, buffers) in parts {
                next.extend(decided);
                for (all, buffer) in outgoing.iter_mut().zip(buffers) {
                    all.extend_from_slice(&buffer);
                }
            }
            let incoming = comm.exchange(outgoing);
            let received: Vec<u32> = parallel::collect_chunks(incoming.len(), 1, &|range, out| {
                let updates = incoming[range].iter().flat_map(|message| message.chunks_exact(UPDATE_BYTES));
                out.extend(updates.filter_map(|update| {
                    let offset = u32::from_le_bytes([update[0], update[1], update[2], update[3]]) as usize;
                    let index = start + offset;
                    retrograde::receive(part, index, (update[4], update[5], update[6]))
                        .then_some(index as u32)
                }))
            });
            next.extend(received);
        }
        decided_here += next.len() as u64;
        frontier = next;
    }
    (rounds, decided_here)
}
