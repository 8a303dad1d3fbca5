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

use std::io;
use std::time::Instant;

use crate::cluster::{Communicator, Partition};
use crate::codec::{DecodeError, Decoder, Encoder};
use crate::memory::release_free_memory;
use crate::progress::{Observer, SILENT};
use crate::tablebase::across::bounds::{
    offer_snapshot, part_records, spread_bounds, Lead, SnapshotAt, Stopped,
};
use crate::tablebase::across::checkpoint::{read_range, RankPart, SpreadSnapshot};
use crate::tablebase::across::propagate::propagate_across;
use crate::tablebase::entry::{EntryWidth, Proof};
use crate::tablebase::layers::{PackedLayer, SolvedLayers};
use crate::tablebase::params::SearchBudget;
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::snapshot::PartRecord;
use crate::tablebase::snapshot::SnapshotParts;
use crate::tablebase::solve::components;
use crate::tablebase::solve::entries::Contradiction;
use crate::tablebase::solve::solver::LayerSolver;
use crate::tablebase::solve::split::NONE;
use crate::tablebase::stats::{EntryCounts, LayerStats};

/// What rank 0 gets of a layer finished spread: its figures, or why it
/// could not be finished.
pub(crate) type Finished = Result<LayerStats, SpreadError>;

/// What a rank has of a layer finished spread: the records of its range
/// (to write into the layer's file where they belong) and their width, the
/// same on every rank (value records when every entry of the layer has
/// one, as a one-process build writes it), and on rank 0 the layer's
/// [`Finished`] and every rank's checksum of its slice (to check the file
/// against, slice by slice).
pub(crate) struct FinishedSpread {
    pub slice: Vec<u8>,
    pub width: EntryWidth,
    pub finished: Option<Finished>,
    pub slice_sums: Vec<u64>,
}

#[derive(Debug)]
pub(crate) enum SpreadError {
    /// The first contradiction with the table started from.
    Contradiction(Contradiction),
    /// The least position of the layer left undecided (a builder bug).
    Undecided(u64),
    /// A rank failed (it could not read its range of the checkpoint
    /// resumed from, a part or a snapshot could not be written, a rank's
    /// message could not be read), with its reason: the rank where it is
    /// known, else 0.
    Failed { rank: usize, problem: String },
}

/// Where the ranks keep a layer kept spread's snapshots: rank 0 through
/// the build's checkpointer, which says when one is due, keeps its parts
/// and saves it; the other ranks write their parts where it keeps them.
pub(crate) enum SpreadCheckpoints<'c> {
    Lead(&'c mut dyn Checkpointer),
    Follow(&'c dyn SnapshotParts),
}

impl SpreadCheckpoints<'_> {
    /// Where this rank writes and reads its parts.
    fn parts(&self) -> Option<&dyn SnapshotParts> {
        match self {
            SpreadCheckpoints::Lead(checkpoints) => checkpoints.parts().map(|(parts, _)| parts),
            SpreadCheckpoints::Follow(parts) => Some(*parts),
        }
    }
}

/// Where the cycle phases of a layer kept spread start: component `k`,
/// before its games or inside them (the next threshold, the safety rounds
/// so far and this rank's members' state); `fresh` when they start for
/// the first time (the components' figures are recorded then).
pub(crate) struct SpreadStart {
    pub k: usize,
    pub games: Option<(u8, u32, Vec<u8>)>,
    pub fresh: bool,
}

impl SpreadStart {
    pub(crate) const FIRST: SpreadStart = SpreadStart { k: 0, games: None, fresh: true };
}

/// Every component's members in this rank's range, in index order, from
/// `ids` (the component of every position of the range, `NONE` off
/// cycles; `count` components).
pub(crate) fn members_by_component(ids: Vec<u32>, base: usize, count: usize) -> Vec<Vec<u32>> {
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); count];
    for (offset, &k) in ids.iter().enumerate() {
        if k != NONE {
            members[k as usize].push((base + offset) as u32);
        }
    }
    members
}

/// Resolves the cycle components of `part` (this rank's range of layer
/// `part.n`, retrograde analysis done) from `start`: `members` are every
/// component's members in the range, `odd` whether each holds an odd
/// cycle; snapshots go to `checkpoints`. Returns every rank's entries,
/// and on rank 0 the layer's figures (or why there are none). Collective.
pub(crate) fn resolve_spread(
    comm: &dyn Communicator,
    part: &mut LayerSolver,
    members: Vec<Vec<u32>>,
    odd: &[bool],
    start: SpreadStart,
    mut checkpoints: SpreadCheckpoints,
) -> FinishedSpread {
    let memory = crate::memory::PeakSampler::start(1);
    let mut error = None;
    match resolve_components(comm, part, members, odd, start, (&mut checkpoints, &mut error)) {
        Ok(()) => {
            // Every rank's slice in value records, or every one in full.
            let (undecided, valued) = part.entries.check_records();
            let (slice, width) = match comm.all(valued) {
                true => (part.entries.take_value_records(), EntryWidth::Value),
                false => (part.entries.packed().0, EntryWidth::Full),
            };
            let layer = PackedLayer::with_width(&slice, width);
            let (mut finished, slice_sums) = match gather_figures(comm, part, layer, undecided) {
                Some((finished, sums)) => (Some(finished), sums),
                None => (None, Vec::new()),
            };
            if let Some(Ok(stats)) = finished.as_mut() {
                let (anonymous, file) = memory.peak(0);
                stats.memory.cycles = stats.memory.cycles.max(anonymous);
                stats.memory.mapped = stats.memory.mapped.max(file);
            }
            FinishedSpread { slice, width, finished, slice_sums }
        }
        // (Every rank stops at the same step; rank 0 knows why.)
        Err(Stopped) => {
            let why = error.map_or_else(|| "a rank could not take its share".to_string(), |e| e.to_string());
            FinishedSpread {
                slice: Vec::new(),
                width: EntryWidth::Full,
                finished: (comm.rank() == 0).then_some(Err(SpreadError::Failed { rank: 0, problem: why })),
                slice_sums: Vec::new(),
            }
        }
    }
}

fn resolve_components(
    comm: &dyn Communicator,
    part: &mut LayerSolver,
    mut members: Vec<Vec<u32>>,
    odd: &[bool],
    start: SpreadStart,
    (checkpoints, error): (&mut SpreadCheckpoints, &mut Option<io::Error>),
) -> Result<(), Stopped> {
    let n = part.n;
    let count = members.len();
    // (What the split freed goes back to the system first.)
    release_free_memory();
    let sizes = comm.sum_each(&members.iter().map(|m| m.len() as u64).collect::<Vec<_>>());
    if start.fresh {
        components::record_component_sizes(part, &sizes, odd);
    }
    let mut resume = start.games;
    for k in start.k..count {
        let clock = Instant::now();
        let rounds_before = resume.as_ref().map_or(0, |&(_, rounds, _)| rounds);
        let mine = std::mem::take(&mut members[k]);
        let mut lead = SpreadLead {
            checkpoints: &mut *checkpoints,
            part,
            members: &members,
            odd,
            at: (comm.rank(), comm.ranks(), k, rounds_before),
            progress: (comm.rank() == 0 && sizes[k] > 1 << 16).then_some((n, sizes[k])),
            error: &mut *error,
        };
        // A snapshot before the games (not where one was resumed from).
        if resume.is_none() && (start.fresh || k != start.k) {
            let write = |lead: &dyn Lead, sequence| lead.write_part(sequence, &mine, &[]);
            if !offer_snapshot(comm, &mut lead, SnapshotAt::Begin, write) {
                return Err(Stopped);
            }
        }
        let (lower, upper): (Vec<u8>, Vec<u8>) = mine
            .iter()
            .map(|&m| {
                let (lower, upper) = part.entries.lower_upper(m as usize);
                (lower, upper)
            })
            .unzip();
        part.progress.detail(&format!("{n} seeds: component {k} of {count}, kept across ranks"));
        let games = resume.take().map(|(t, _, state)| (t, state));
        let (bounds, added, mut mine) = spread_bounds(comm, n, mine, lower, upper, games, &mut lead)?;
        part.stats.seconds.bounds += clock.elapsed().as_secs_f64();
        part.stats.safety_rounds += rounds_before as u64 + added as u64;
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
        let partition = Partition::new(part.size as u64, comm.ranks());
        // (The members are kept for the snapshots of the components after.)
        let frontier = if k + 1 < count { mine.clone() } else { std::mem::take(&mut mine) };
        let (_, decided) = propagate_across(comm, part, &partition, frontier, |round| {
            format!("{n} seeds: component {k} decided, propagate {round} across {} ranks", comm.ranks())
        });
        members[k] = mine;
        part.stats.decided_acyclic += decided;
        release_free_memory();
    }
    Ok(())
}

/// Resumes layer `n` kept spread from rank 0's `snapshot`, each rank from
/// the parts that cover its range (its own part alone, with as many ranks
/// as wrote them: `crate::tablebase::across::checkpoint::read_range`), and finishes it as
/// [`resolve_spread`] does; `seed` is the layer's entries
/// in the table the build starts from, if any. Collective.
#[allow(clippy::too_many_arguments)]
pub(crate) fn resume_spread(
    comm: &dyn Communicator,
    n: u32,
    lower: &SolvedLayers,
    budget: SearchBudget,
    seed: Option<PackedLayer<'_>>,
    observer: &dyn Observer,
    snapshot: &SpreadSnapshot,
    checkpoints: SpreadCheckpoints,
) -> FinishedSpread {
    let started = Instant::now();
    let rank = comm.rank();
    let read = match checkpoints.parts() {
        Some(store) if n == snapshot.n => read_range(snapshot, store, (rank, comm.ranks()), lower, budget),
        _ => Err(DecodeError::Invalid("no snapshot of this layer to resume from".into())),
    };
    // Every rank goes on, or all stop with the first failing rank's reason.
    let sequence = snapshot.sequence;
    let problem = read.as_ref().err().map(|e| format!("its range of checkpoint {sequence}: {e}"));
    let problems = comm.gather(problem.clone().unwrap_or_default().into_bytes());
    let failed = comm.any(problem.is_some());
    let RankPart { solver, members, games } = match read {
        Ok(part) if !failed => part,
        _ => {
            let first = problems.and_then(|all| all.into_iter().enumerate().find(|(_, p)| !p.is_empty()));
            let (rank, problem) = first.map_or((0, Vec::new()), |(r, p)| (r, p));
            let problem = String::from_utf8_lossy(&problem).into_owned();
            let finished = (comm.rank() == 0).then_some(Err(SpreadError::Failed { rank, problem }));
            return FinishedSpread {
                slice: Vec::new(),
                width: EntryWidth::Full,
                finished,
                slice_sums: Vec::new(),
            };
        }
    };
    let solver = match seed {
        Some(entries) => solver.with_seed(entries),
        None => solver,
    };
    let mut part = solver.with_observer(if rank == 0 { observer } else { &SILENT });
    let seconds_before = part.stats.seconds.retrograde + part.stats.seconds.scc + part.stats.seconds.bounds;
    let start = SpreadStart {
        k: snapshot.k,
        games: snapshot.games.map(|(t, rounds)| (t, rounds, games)),
        fresh: false,
    };
    let mut finished = resolve_spread(comm, &mut part, members, &snapshot.odd, start, checkpoints);
    if let Some(Ok(stats)) = finished.finished.as_mut() {
        stats.seconds.total = seconds_before + started.elapsed().as_secs_f64();
    }
    finished
}

/// The lead of a layer kept spread's games and snapshots (see
/// [`Lead`]): rank 0's checkpointer decides when a snapshot is due; each
/// rank writes its whole state as its part (`across::checkpoint`).
struct SpreadLead<'l, 's> {
    checkpoints: &'l mut SpreadCheckpoints<'s>,
    part: &'l LayerSolver<'l>,
    /// Every component's members in the range (component `k`'s are in
    /// the games while they are played).
    members: &'l [Vec<u32>],
    odd: &'l [bool],
    /// This rank, the ranks, the component, its safety rounds before.
    at: (usize, usize, usize, u32),
    /// On rank 0 of a large component: the layer and the members.
    progress: Option<(u32, u64)>,
    /// Why rank 0 could not save a snapshot.
    error: &'l mut Option<io::Error>,
}

impl Lead for SpreadLead<'_, '_> {
    fn snapshot_due(&mut self) -> Option<u64> {
        match self.checkpoints {
            SpreadCheckpoints::Lead(checkpoints) => {
                let sequence = checkpoints.parts()?.1;
                checkpoints.due().then_some(sequence)
            }
            SpreadCheckpoints::Follow(_) => None,
        }
    }

    fn write_part(&self, sequence: u64, members: &[u32], state: &[u8]) -> io::Result<PartRecord> {
        let parts = self
            .checkpoints
            .parts()
            .ok_or_else(|| io::Error::other("no place to write a snapshot's part"))?;
        let (rank, ranks, k, _) = self.at;
        parts.write_part_with(sequence, rank, &mut |out| {
            crate::tablebase::across::checkpoint::write_part(
                out,
                self.part,
                (rank, ranks),
                self.members,
                (k, members),
                state,
            )
        })
    }

    fn save(&mut self, at: SnapshotAt, sequence: u64, replies: Vec<Vec<u8>>) -> bool {
        let SpreadCheckpoints::Lead(checkpoints) = self.checkpoints else { return true };
        let (_, ranks, k, rounds_before) = self.at;
        let saved = part_records(replies).and_then(|records| {
            let snapshot = SpreadSnapshot {
                n: self.part.n,
                ranks,
                k,
                games: match at {
                    SnapshotAt::Begin => None,
                    SnapshotAt::Threshold { t, added } => Some((t, rounds_before.saturating_add(added))),
                },
                odd: self.odd.to_vec(),
                sequence,
                records,
            };
            checkpoints.save(&mut |out| out.write_all(&snapshot.encode()))
        });
        let failed = saved.err();
        let ok = failed.is_none();
        *self.error = failed;
        ok
    }

    fn threshold(&self, t: u8) {
        if let Some((n, members)) = self.progress {
            self.part.progress.detail(&format!(
                "{n} seeds: bounds of {members} positions kept across ranks, threshold {t}"
            ));
        }
    }
}

/// Rank 0 gathers every rank's figures, the counts of its entries, its
/// contradiction, if any, the least position it left undecided, if any
/// (`undecided`), and the checksum of its slice.
fn gather_figures(
    comm: &dyn Communicator,
    part: &LayerSolver,
    slice: PackedLayer,
    undecided: Option<usize>,
) -> Option<(Finished, Vec<u64>)> {
    let mut e = Encoder::default();
    part.stats.encode(&mut e);
    Contradiction::encode_found(part.entries.contradiction().as_ref(), &mut e);
    // (u64::MAX: every position of the rank's window is decided.)
    e.u64(undecided.map_or(u64::MAX, |index| index as u64));
    let counts = EntryCounts::of(slice);
    e.u64(counts.exact);
    e.u64(counts.gap_sum);
    e.u8(counts.max_gap);
    e.u64(crate::checksum::checksum(slice.bytes()));
    let parts = comm.gather(e.bytes)?;
    let mut sums = Vec::new();
    let finished = join_figures(part, parts, &mut sums)
        .unwrap_or_else(|e| Err(SpreadError::Failed { rank: 0, problem: format!("a rank's figures: {e}") }));
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
    let mut undecided: Option<u64> = None;
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
        match d.u64()? {
            u64::MAX => {}
            // (Ranks hold increasing indexes: the first found is the least.)
            index if index < part.size as u64 => _ = undecided.get_or_insert(index),
            index => {
                return Err(DecodeError::Invalid(format!(
                    "undecided index {index} in {} positions",
                    part.size
                )))
            }
        }
        counts.add(EntryCounts { exact: d.u64()?, gap_sum: d.u64()?, max_gap: d.u8()? });
        sums.push(d.u64()?);
        d.finish()?;
    }
    if counts.exact > part.size as u64 {
        return Err(DecodeError::Invalid(format!(
            "{} exact entries in {} positions",
            counts.exact, part.size
        )));
    }
    // (A contradiction first, as in one process.)
    Ok(match (contradiction, undecided) {
        (Some(c), _) => Err(SpreadError::Contradiction(c)),
        (None, Some(index)) => Err(SpreadError::Undecided(index)),
        (None, None) => {
            stats.finish_with(counts);
            Ok(stats)
        }
    })
}
