//! A layer's cycle phases with its entries kept spread over the ranks of a
//! distributed build: no rank ever holds the whole layer's work arrays
//! (`docs/distributed-build.md` §6, stage 1).
//!
//! It applies when the layer gets no search (the searches read any
//! position of the layer). The small parts the split leaves go to rank 0
//! for Pearce's algorithm (`split::components_across`); each rank then
//! numbers the components of its range as one process does, and for each
//! component in order (from 8 seeds on a layer has one):
//!
//! 1. the ranks play its threshold games together, each on its own
//!    members, with the intervals of their best exits from its own arrays
//!    (`bounds_across::spread_bounds`), and get every member's bounds;
//! 2. each rank decides its members, as one process does without a search:
//!    the bounds met with the table started from, if any;
//! 3. the decided members tell their parents by retrograde rounds across
//!    the ranks (`distributed::propagate_across`), which decide the
//!    positions on no cycle that only waited for this component.
//!
//! Each step gives the one-process result: the bounds by §2 of the
//! document, the decisions because they read only the member's bounds and
//! seed entry, and the rounds because telling a parent commutes (§2). So
//! the entries are those of one process. Each rank then writes its range's
//! packed entries into the layer's file where they belong, and rank 0
//! gathers only the ranks' figures, which add up to one process's counts.

use std::time::Instant;

use super::bounds_across::spread_bounds;
use super::codec::{DecodeError, Decoder, Encoder};
use super::distributed::propagate_across;
use super::entry::Proof;
use super::layer::LayerSolver;
use super::layer_entries::Contradiction;
use super::split::NONE;
use super::stats::{EntryCounts, LayerStats};
use crate::cluster::{Communicator, Partition};
use crate::memory::release_free_memory;

/// What rank 0 gets of a layer finished spread: its figures, or why it
/// could not be finished.
pub(crate) type Finished = Result<LayerStats, SpreadError>;

/// What a rank has of a layer finished spread: the packed entries of its
/// range (to write into the layer's file where they belong), and on rank
/// 0 the layer's [`Finished`] and every rank's checksum of its slice (to
/// check the file against, slice by slice).
pub(crate) struct FinishedSpread {
    pub slice: Vec<u8>,
    pub finished: Option<Finished>,
    pub slice_sums: Vec<u64>,
}

#[derive(Debug)]
pub(crate) enum SpreadError {
    /// The first contradiction with the table started from.
    Contradiction(Contradiction),
    /// The games stopped, or a rank's message could not be read.
    Failed(String),
}

/// Resolves the cycle components of `part` (this rank's range of layer
/// `part.n`, retrograde analysis done) from `ids`, the component of every
/// position of the range (`NONE` off cycles), with `odd` per component;
/// returns every rank's entries, and on rank 0 the layer's figures (or
/// why there are none). Collective.
pub(crate) fn resolve_spread(
    comm: &dyn Communicator,
    part: &mut LayerSolver,
    ids: Vec<u32>,
    odd: &[bool],
) -> FinishedSpread {
    match resolve_components(comm, part, ids, odd) {
        Ok(()) => {
            let slice = part.entries.packed();
            let (finished, slice_sums) = match gather_figures(comm, part, &slice) {
                Some((finished, sums)) => (Some(finished), sums),
                None => (None, Vec::new()),
            };
            FinishedSpread { slice, finished, slice_sums }
        }
        // (Every rank stops at the same step.)
        Err(error) => FinishedSpread {
            slice: Vec::new(),
            finished: (comm.rank() == 0).then(|| Err(SpreadError::Failed(error.to_string()))),
            slice_sums: Vec::new(),
        },
    }
}

fn resolve_components(
    comm: &dyn Communicator,
    part: &mut LayerSolver,
    ids: Vec<u32>,
    odd: &[bool],
) -> std::io::Result<()> {
    let n = part.n;
    let partition = Partition::new(part.size as u64, comm.ranks());
    let base = partition.range(comm.rank()).start as usize;
    // Every component's members in this range, in index order.
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); odd.len()];
    for (offset, &k) in ids.iter().enumerate() {
        if k != NONE {
            members[k as usize].push((base + offset) as u32);
        }
    }
    drop(ids);
    // (What the split freed goes back to the system first.)
    release_free_memory();
    let sizes: Vec<u64> = members.iter().map(|m| comm.sum(m.len() as u64)).collect();
    part.record_component_sizes(&sizes, odd);
    for (k, mine) in members.into_iter().enumerate() {
        let clock = Instant::now();
        let (lower, upper): (Vec<u8>, Vec<u8>) = mine
            .iter()
            .map(|&m| {
                let (lower, upper, _) = part.entries.interval(m as usize);
                (lower, upper)
            })
            .unzip();
        part.progress.detail(&format!("{n} seeds: component {k} of {}, kept across ranks", odd.len()));
        let (bounds, added, mine) = spread_bounds(comm, n, mine, lower, upper, part.progress, sizes[k])?;
        part.stats.seconds.bounds += clock.elapsed().as_secs_f64();
        part.stats.safety_rounds += added as u64;
        // As one process decides a component without a search.
        for (&m, &(lower, upper)) in mine.iter().zip(&bounds) {
            let m = m as usize;
            let (root_lower, root_upper) = part.entries.meet_seed(m, lower, upper);
            part.stats.open_before_search += (root_lower < root_upper) as u64;
            let proof = if lower == upper {
                part.stats.exact_by_bounds += 1;
                Proof::Bounds
            } else if root_lower == root_upper {
                part.stats.exact_from_seed += 1;
                part.entries.seed_entry(m).map_or(Proof::Search, |seed| seed.proof)
            } else {
                Proof::Search
            };
            let estimate = root_lower + (root_upper - root_lower) / 2;
            part.entries.decide(m, root_lower, root_upper, estimate, proof, true);
        }
        drop(bounds);
        let (_, decided) = propagate_across(comm, part, &partition, mine, |round| {
            format!("{n} seeds: component {k} decided, propagate {round} across {} ranks", comm.ranks())
        });
        part.stats.decided_acyclic += decided;
        release_free_memory();
    }
    Ok(())
}

/// Rank 0 gathers every rank's figures, the counts of its entries, its
/// contradiction, if any, and the checksum of its slice.
fn gather_figures(comm: &dyn Communicator, part: &LayerSolver, slice: &[u8]) -> Option<(Finished, Vec<u64>)> {
    let mut e = Encoder::default();
    part.stats.encode(&mut e);
    Contradiction::encode_found(part.entries.contradiction().as_ref(), &mut e);
    let counts = EntryCounts::of(slice);
    e.u64(counts.exact);
    e.u64(counts.gap_sum);
    e.u8(counts.max_gap);
    e.u64(crate::checksum::checksum(slice));
    let parts = comm.gather(e.bytes)?;
    let mut sums = Vec::new();
    let finished = join_figures(part, parts, &mut sums)
        .unwrap_or_else(|e| Err(SpreadError::Failed(format!("a rank's figures: {e}"))));
    Some((finished, sums))
}

fn join_figures(
    part: &LayerSolver,
    parts: Vec<Vec<u8>>,
    sums: &mut Vec<u64>,
) -> Result<Finished, DecodeError> {
    let mut stats = part.stats.clone();
    let mut counts = EntryCounts::default();
    let mut contradiction: Option<Contradiction> = None;
    for (rank, message) in parts.into_iter().enumerate() {
        let mut d = Decoder::new(&message);
        let theirs = LayerStats::decode(&mut d)?;
        if rank > 0 {
            stats.add_rank_counts(&theirs);
        }
        if let Some(found) = Contradiction::decode_found(&mut d, part.n)? {
            // (Ranks hold increasing indexes: the first found is the least.)
            contradiction.get_or_insert(found);
        }
        counts.add(EntryCounts { exact: d.u64()?, gap_sum: d.u64()?, max_gap: d.u8()? });
        sums.push(d.u64()?);
        d.finish()?;
    }
    if counts.exact > part.size as u64 {
        return Err(DecodeError(format!("{} exact entries in {} positions", counts.exact, part.size)));
    }
    Ok(match contradiction {
        Some(c) => Err(SpreadError::Contradiction(c)),
        None => {
            stats.finish_with(counts);
            Ok(stats)
        }
    })
}
