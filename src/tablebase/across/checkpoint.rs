//! Snapshots of a layer kept spread over the ranks (`spread.rs`): no rank
//! holds the whole layer, so each writes its own state as a part, and
//! rank 0's snapshot names the parts (`docs/distributed-build.md` §3).
//!
//! Rank 0's snapshot, stored as every checkpoint is (one zstd frame with
//! its checksum, named by the manifest, which is written last):
//!
//! ```text
//! "OWSPRD01" | n: u32 | positions: u64 | ranks: u32
//! k: u64 (the component being resolved)
//! step: u8 (0 before its games, 1 inside them)
//!   1: t: u8 (the next threshold) | safety_rounds: u32 (so far, in k)
//! odd: blob (per component: 1 if it holds an odd cycle, else 0)
//! sequence: u64 | per rank: bytes: u64 | checksum: u64 (its part)
//! ```
//!
//! Rank `r`'s part, `checkpoint-NN-SEQ-rRRRR.zst` (one zstd frame with its
//! checksum; the snapshot records its size and checksum), holds the
//! state of the rank's index range `Partition::new(positions,
//! ranks).range(r)`:
//!
//! ```text
//! "OWSPPT01" | n: u32 | rank: u32 | ranks: u32
//! lo, hi, est, pending, flags: blob each (one byte per position of the range)
//! stats (LayerStats::encode: this rank's counts)
//! contradiction (Contradiction::encode_found: this rank's first, if any)
//! per component: members: words (those in the range, sorted)
//! games: blob (step 1: per member of component k, win(q,0), win(q,1),
//!   open(q,0), open(q,1) as one process's snapshot holds them; step 0:
//!   empty)
//! ```
//!
//! Each rank of a resumed job reads the parts that cover its range
//! ([`read_range`]: its own part alone when the ranks are as many as those
//! that wrote them); one process, or a gathered resume, has [`join`] put
//! the parts together into the one-process snapshot of the same moment
//! (§2 of the document proves it is that snapshot), which rank 0 resumes
//! as any other.

use std::io::{self, Write};

use crate::cluster::Partition;
use crate::codec::{DecodeError, Decoder, Encoder};
use crate::rank::layer_size;
use crate::tablebase::layers::SolvedLayers;
use crate::tablebase::params::SearchBudget;
use crate::tablebase::snapshot::stream_words;
use crate::tablebase::snapshot::PartRecord;
use crate::tablebase::snapshot::PartsOf;
use crate::tablebase::snapshot::SnapshotParts;
use crate::tablebase::solve::checkpoint::{self, check_games_state, KeptSnapshot, Restored};
use crate::tablebase::solve::components::{Components, NONE};
use crate::tablebase::solve::entries::Contradiction;
use crate::tablebase::solve::games_state::member_state_fault;
use crate::tablebase::solve::solver::{Cursor, LayerSolver, Step};
use crate::tablebase::stats::LayerStats;

const MAGIC: &[u8; 8] = b"OWSPRD01";
const PART_MAGIC: &[u8; 8] = b"OWSPPT01";

/// Whether a checkpoint's content is a snapshot of a layer kept spread.
pub(crate) fn is_spread(snapshot: &[u8]) -> bool {
    snapshot.starts_with(MAGIC)
}

/// Rank 0's snapshot of a layer kept spread (layout above).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SpreadSnapshot {
    pub n: u32,
    pub ranks: usize,
    /// The component being resolved.
    pub k: usize,
    /// Inside its games: the next threshold and the safety rounds so far.
    pub games: Option<(u8, u32)>,
    /// Per component, whether it holds an odd cycle.
    pub odd: Vec<bool>,
    /// The sequence number that names the parts.
    pub sequence: u64,
    /// Every rank's part, in rank order.
    pub records: Vec<PartRecord>,
}

impl SpreadSnapshot {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut e = Encoder::default();
        e.bytes.extend_from_slice(MAGIC);
        e.u32(self.n);
        e.u64(layer_size(self.n));
        e.u32(self.ranks as u32);
        e.u64(self.k as u64);
        match self.games {
            None => e.u8(0),
            Some((t, rounds)) => {
                e.u8(1);
                e.u8(t);
                e.u32(rounds);
            }
        }
        e.blob(&self.odd.iter().map(|&o| o as u8).collect::<Vec<_>>());
        e.u64(self.sequence);
        for record in &self.records {
            e.bytes.extend_from_slice(&record.encode());
        }
        e.bytes
    }

    /// A snapshot no rank can resume from (it names no part): what a rank
    /// that could not read rank 0's snapshot takes part with.
    pub(crate) fn unreadable(n: u32) -> SpreadSnapshot {
        SpreadSnapshot { n, ranks: 0, k: 0, games: None, odd: Vec::new(), sequence: 0, records: Vec::new() }
    }

    /// Reads a snapshot of layer `n`, checked for consistency.
    pub(crate) fn decode(bytes: &[u8], n: u32) -> Result<SpreadSnapshot, DecodeError> {
        let mut d = Decoder::new(bytes);
        if d.blob_exact(MAGIC.len())? != MAGIC {
            return Err(DecodeError::Invalid("not a snapshot of a layer kept spread (bad magic)".into()));
        }
        let (found, positions, ranks) = (d.u32()?, d.u64()?, d.u32()? as usize);
        if found != n || positions != layer_size(n) {
            return Err(DecodeError::Invalid(format!(
                "snapshot of layer {found} ({positions} positions), expected {n}"
            )));
        }
        let k = d.u64()? as usize;
        let games = match d.u8()? {
            0 => None,
            1 => Some((d.u8()?, d.u32()?)),
            tag => return Err(DecodeError::Invalid(format!("unknown step {tag}"))),
        };
        let odd: Vec<bool> = d
            .blob()?
            .iter()
            .map(|&o| match o {
                0 | 1 => Ok(o == 1),
                _ => Err(DecodeError::Invalid(format!("odd flag {o}"))),
            })
            .collect::<Result<_, _>>()?;
        let sequence = d.u64()?;
        if ranks == 0 || ranks > d.remaining() / 16 {
            return Err(DecodeError::Invalid(format!("{ranks} parts")));
        }
        let records = (0..ranks).map(|_| PartRecord::decode(&mut d)).collect::<Result<_, _>>()?;
        d.finish()?;
        if k >= odd.len() || games.is_some_and(|(t, _)| t as u32 > n || t == 0) {
            return Err(DecodeError::Invalid(format!("component {k} of {}, step {games:?}", odd.len())));
        }
        Ok(SpreadSnapshot { n, ranks, k, games, odd, sequence, records })
    }
}

/// Streams rank `rank`'s part (layout above): `part` is its solver (its
/// range's arrays, its counts), `members` its members of every component
/// but `k`, whose members are `members_k` with `games` their state.
pub(crate) fn write_part(
    out: &mut dyn Write,
    part: &LayerSolver,
    (rank, ranks): (usize, usize),
    members: &[Vec<u32>],
    (k, members_k): (usize, &[u32]),
    games: &[u8],
) -> io::Result<()> {
    let mut e = Encoder::default();
    e.bytes.extend_from_slice(PART_MAGIC);
    e.u32(part.n);
    e.u32(rank as u32);
    e.u32(ranks as u32);
    out.write_all(&e.bytes)?;
    part.entries.write_arrays(out)?;
    let mut e = Encoder::default();
    part.stats.encode(&mut e);
    Contradiction::encode_found(part.entries.contradiction().as_ref(), &mut e);
    out.write_all(&e.bytes)?;
    for (j, list) in members.iter().enumerate() {
        stream_words(out, if j == k { members_k } else { list })?;
    }
    out.write_all(&(games.len() as u64).to_le_bytes())?;
    out.write_all(games)
}

/// A rank's part read back: its solver (arrays, counts and contradiction
/// restored), its members per component, and the games' state of its
/// members of component `k` (empty before the games).
pub(crate) struct RankPart<'a> {
    pub solver: LayerSolver<'a>,
    pub members: Vec<Vec<u32>>,
    pub games: Vec<u8>,
}

/// Rank `rank` of `ranks` resuming from `snapshot`: reads, from `store`,
/// every part whose range meets its own range and keeps of each what
/// falls in its range (its own part alone when the ranks are as many as
/// those that wrote them). The per-position counts of each part go to the
/// rank that holds the part's first position, and the counts every rank
/// keeps alike come from part 0, to rank 0: so the ranks' counts add up
/// to the parts' (`docs/distributed-build.md` §2).
pub(crate) fn read_range<'a>(
    snapshot: &SpreadSnapshot,
    store: &dyn SnapshotParts,
    (rank, ranks): (usize, usize),
    lower: &'a SolvedLayers,
    budget: SearchBudget,
) -> Result<RankPart<'a>, DecodeError> {
    if snapshot.ranks == 0 || snapshot.records.len() != snapshot.ranks {
        return Err(DecodeError::Invalid(format!(
            "a snapshot of {} parts records {}",
            snapshot.ranks,
            snapshot.records.len()
        )));
    }
    let size = layer_size(snapshot.n);
    let mine = Partition::new(size, ranks).range(rank);
    let theirs = Partition::new(size, snapshot.ranks);
    let mut solver = LayerSolver::window(snapshot.n, lower, budget, mine.start as usize..mine.end as usize);
    let mut members = vec![Vec::new(); snapshot.odd.len()];
    let mut games = Vec::new();
    for (part, &record) in snapshot.records.iter().enumerate() {
        let range = theirs.range(part);
        let counted_here = range.start < range.end && mine.contains(&range.start);
        if range.end <= mine.start || range.start >= mine.end || range.start == range.end {
            continue;
        }
        let bytes = read_rank_part(store, snapshot, part, record, &range)?;
        let window = range.start as usize..range.end as usize;
        let (stats, contradiction, lists, state) =
            decode_part(&bytes, snapshot, part, |d| solver.entries.read_overlapping_arrays(window, d))
                .map_err(|e| DecodeError::Invalid(format!("part {part}: {e}")))?;
        drop(bytes);
        if counted_here {
            if part == 0 {
                solver.stats = stats;
            } else {
                solver.stats.add_rank_counts(&stats);
            }
        }
        if let Some(found) = contradiction.filter(|c| mine.contains(&c.index)) {
            solver.entries.record_contradiction(found);
        }
        let inside = |m: &u32| mine.contains(&(*m as u64));
        if let Some((t, _)) = snapshot.games {
            // Each member's state, checked against its own exits (the
            // rest of `docs/cycle-bounds.md` §10 needs its children's,
            // which other ranks may hold).
            let k = &lists[snapshot.k];
            for (&m, bytes) in k.iter().zip(state.chunks_exact(4)) {
                if inside(&m) {
                    let (lower, upper) = solver.entries.lower_upper(m as usize);
                    let four = [bytes[0], bytes[1], bytes[2], bytes[3]];
                    if let Some(fault) = member_state_fault(snapshot.n as u8, t, (lower, upper), four) {
                        return Err(DecodeError::Invalid(format!(
                            "part {part}: the threshold games' state: position {m} of component {}, \
                             before threshold {t}: {fault}",
                            snapshot.k
                        )));
                    }
                    games.extend_from_slice(bytes);
                }
            }
        }
        for (all, list) in members.iter_mut().zip(lists) {
            all.extend(list.into_iter().filter(inside));
        }
    }
    Ok(RankPart { solver, members, games })
}

/// What a part holds but its arrays, which `read_arrays` reads.
type PartRest = (LayerStats, Option<Contradiction>, Vec<Vec<u32>>, Vec<u8>);

fn decode_part(
    bytes: &[u8],
    snapshot: &SpreadSnapshot,
    rank: usize,
    read_arrays: impl FnOnce(&mut Decoder) -> Result<(), DecodeError>,
) -> Result<PartRest, DecodeError> {
    let n = snapshot.n;
    let range = Partition::new(layer_size(n), snapshot.ranks).range(rank);
    let mut d = Decoder::new(bytes);
    if d.blob_exact(PART_MAGIC.len())? != PART_MAGIC {
        return Err(DecodeError::Invalid("not a part of a layer kept spread (bad magic)".into()));
    }
    let (found, found_rank, ranks) = (d.u32()?, d.u32()? as usize, d.u32()? as usize);
    if (found, found_rank, ranks) != (n, rank, snapshot.ranks) {
        return Err(DecodeError::Invalid(format!(
            "part {found_rank} of {ranks} of layer {found}, expected part {rank} of {} of layer {n}",
            snapshot.ranks
        )));
    }
    read_arrays(&mut d)?;
    let stats = LayerStats::decode(&mut d)?;
    let contradiction = Contradiction::decode_found(&mut d, n)?;
    if contradiction.is_some_and(|c| !range.contains(&c.index)) {
        return Err(DecodeError::Invalid("a contradiction outside the part's range".into()));
    }
    let mut members = Vec::with_capacity(snapshot.odd.len());
    let mut count = 0u64;
    // One bit per position of the range: a position is in one component.
    let mut seen = vec![0u64; ((range.end - range.start) as usize).div_ceil(64)];
    for _ in 0..snapshot.odd.len() {
        let list = d.words()?;
        let sorted = list.windows(2).all(|w| w[0] < w[1]);
        if !sorted || list.iter().any(|&m| !range.contains(&(m as u64))) {
            return Err(DecodeError::Invalid(
                "a component's members outside the part's range or unsorted".into(),
            ));
        }
        for &m in &list {
            let offset = (m as u64 - range.start) as usize;
            let (word, bit) = (offset / 64, 1u64 << (offset % 64));
            if seen[word] & bit != 0 {
                return Err(DecodeError::Invalid(format!("position {m} in two components")));
            }
            seen[word] |= bit;
        }
        count += list.len() as u64;
        members.push(list);
    }
    let games = d.blob()?.to_vec();
    d.finish()?;
    let expected = if snapshot.games.is_some() { 4 * members[snapshot.k].len() } else { 0 };
    if count > range.end - range.start || games.len() != expected {
        return Err(DecodeError::Invalid(format!(
            "{count} members in {} positions, {} bytes of games' state for {expected}",
            range.end - range.start,
            games.len()
        )));
    }
    Ok((stats, contradiction, members, games))
}

/// The one-process snapshot `snapshot` and its parts (read from `parts`)
/// stand for, restored: the whole layer's solver, the cursor and the
/// components (`docs/distributed-build.md` §3). Rank 0 holds the whole
/// layer, and one part at a time beside it.
pub(crate) fn join<'a>(
    snapshot: &SpreadSnapshot,
    parts: PartsOf,
    lower: &'a SolvedLayers,
    budget: SearchBudget,
) -> Result<(LayerSolver<'a>, Cursor, Components), DecodeError> {
    let Some((store, sequence)) = parts else {
        return Err(DecodeError::Invalid("a snapshot in parts, and nowhere to read them from".into()));
    };
    if sequence != snapshot.sequence {
        return Err(DecodeError::Invalid(format!(
            "snapshot {sequence} records the parts of {}",
            snapshot.sequence
        )));
    }
    let n = snapshot.n;
    let size = layer_size(n) as usize;
    let partition = Partition::new(size as u64, snapshot.ranks);
    let mut whole = LayerSolver::new(n, lower, budget);
    // (The ranks' arrays, estimates among them, are read into it.)
    whole.entries.hold_estimates();
    let mut ids = vec![NONE; size];
    let mut games = Vec::new();
    for (rank, &record) in snapshot.records.iter().enumerate() {
        let range = partition.range(rank);
        let bytes = read_rank_part(store, snapshot, rank, record, &range)?;
        let window = range.start as usize..range.end as usize;
        let (stats, contradiction, members, state) =
            decode_part(&bytes, snapshot, rank, |d| whole.entries.read_window_arrays(window, d))?;
        drop(bytes);
        if rank == 0 {
            whole.stats = stats;
        } else {
            whole.stats.add_rank_counts(&stats);
        }
        if let Some(found) = contradiction {
            whole.entries.record_contradiction(found);
        }
        // (`decode_part` checked that each position is in one component
        // and in the part's range; the ranges do not overlap.)
        for (k, list) in members.iter().enumerate() {
            for &m in list {
                ids[m as usize] = k as u32;
            }
        }
        games.extend_from_slice(&state);
    }
    let components = Components::from_ids(crate::tablebase::solve::split::ComponentIds::Wide(ids));
    if components.count() != snapshot.odd.len() || components.has_empty() {
        return Err(DecodeError::Invalid(format!(
            "{} components with members, {} recorded",
            components.count(),
            snapshot.odd.len()
        )));
    }
    let step = match snapshot.games {
        None => Step::Begin,
        Some((t, safety_rounds)) => Step::Bounds { t, safety_rounds, state: games.into() },
    };
    Ok((whole, Cursor::Resolving { k: snapshot.k, step }, components))
}

/// The part of rank `rank` (its index range `range`) of a spread snapshot,
/// read and checked, read no further than such a part can reach.
fn read_rank_part(
    store: &dyn SnapshotParts,
    snapshot: &SpreadSnapshot,
    rank: usize,
    record: PartRecord,
    range: &std::ops::Range<u64>,
) -> Result<Vec<u8>, DecodeError> {
    store
        .read_part(snapshot.sequence, rank, record, part_limit(range.end - range.start, snapshot.odd.len()))
        .map_err(|e| DecodeError::Invalid(format!("part {rank}: {e}")))
}

/// The most bytes a part of a range of `positions` may hold in a layer of
/// `components` components: the five arrays, every position a member (an
/// index each) with its games' state, a list header per component, the
/// counts.
fn part_limit(positions: u64, components: usize) -> usize {
    (13 * positions + 8 * components as u64 + (1 << 20)) as usize
}

/// Rebuilds a solver from any snapshot of layer `n` a build writes: one
/// kept spread over ranks, its parts joined, or a one-process snapshot
/// (`solve::checkpoint::restore`); the games' state of either is checked
/// ([`check_games_state`]). The games' state of a one-process snapshot is
/// read where it lies in `content`, which the resumed layer keeps.
pub(crate) fn restore<'a>(
    n: u32,
    lower: &'a SolvedLayers,
    budget: SearchBudget,
    content: &KeptSnapshot,
    parts: PartsOf,
) -> Result<Restored<'a>, DecodeError> {
    let bytes = (**content).as_ref();
    if !is_spread(bytes) {
        let restored = checkpoint::decode_snapshot(n, lower, budget, content, parts)?;
        check_games_state(&restored)?;
        return Ok(restored);
    }
    if lower.len() != n {
        return Err(DecodeError::Invalid(format!("a checkpoint of layer {n} above {} layers", lower.len())));
    }
    let snapshot = SpreadSnapshot::decode(bytes, n)?;
    let (solver, cursor, components) = join(&snapshot, parts, lower, budget)?;
    let restored = (solver, cursor, Some(components));
    check_games_state(&restored)?;
    Ok(restored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tablebase::solve::components;

    /// Hands back the bytes it was given for every part, unchecked (so the
    /// decoder meets damage a checksum would have caught).
    struct Given(Vec<u8>);

    impl SnapshotParts for Given {
        fn write_part_with(
            &self,
            _: u64,
            _: usize,
            _: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
        ) -> io::Result<PartRecord> {
            Err(io::Error::other("read only"))
        }
        fn read_part(&self, _: u64, _: usize, _: PartRecord, limit: usize) -> io::Result<Vec<u8>> {
            (self.0.len() <= limit).then(|| self.0.clone()).ok_or_else(|| io::Error::other("too long"))
        }
    }

    /// Layer 6 after its retrograde analysis, with its components, as one
    /// rank's part inside the games of component 0 before threshold 3:
    /// some state per member, different from member to member, that each
    /// member's own exits allow (`games_state::member_state_fault`); `forge`
    /// may change it before it is written.
    fn one_part_forged(
        lower: &SolvedLayers,
        forge: impl FnOnce(&mut Vec<u8>),
    ) -> (SpreadSnapshot, Vec<u8>, Vec<Vec<u32>>, Vec<u8>) {
        let mut solver = LayerSolver::new(6, lower, SearchBudget::NONE);
        solver.retrograde_only();
        let components = components::components(&mut solver).expect("labels enough");
        let members: Vec<Vec<u32>> = (0..components.count()).map(|k| components.of(k).to_vec()).collect();
        let (n, t) = (6u8, 3u8);
        let mut games: Vec<u8> = members[0]
            .iter()
            .enumerate()
            .flat_map(|(i, &m)| {
                let (lower, upper) = solver.entries.lower_upper(m as usize);
                let joins_from = n - upper;
                let won_x = match (lower > t, i % 2) {
                    (true, _) => lower.max(t + 1 + (i % 3) as u8),
                    (false, 1) => t + 1 + (i % 3) as u8,
                    (false, _) => 0,
                };
                let won_y = if joins_from > t && i % 3 == 0 {
                    t + 1 + (i % (joins_from - t) as usize) as u8
                } else {
                    0
                };
                let open_y = if won_y == 0 && joins_from <= t { 0 } else { (i % 5) as u8 };
                [won_x, won_y, 0, open_y]
            })
            .collect();
        forge(&mut games);
        let mut bytes = Vec::new();
        write_part(&mut bytes, &solver, (0, 1), &members, (0, &members[0]), &games).unwrap();
        let snapshot = SpreadSnapshot {
            n: 6,
            ranks: 1,
            k: 0,
            games: Some((3, 2)),
            odd: vec![true; members.len()],
            sequence: 1,
            records: vec![PartRecord {
                bytes: bytes.len() as u64,
                checksum: crate::checksum::checksum(&bytes),
            }],
        };
        (snapshot, bytes, members, games)
    }

    fn one_part(lower: &SolvedLayers) -> (SpreadSnapshot, Vec<u8>, Vec<Vec<u32>>, Vec<u8>) {
        one_part_forged(lower, |_| {})
    }

    fn lower_layers() -> SolvedLayers {
        crate::tablebase::solve::run::solved_below(6, SearchBudget::NONE)
    }

    /// A part read back by one rank is what was written; read by two
    /// ranks, each keeps its range's members and their games' state, in
    /// order, which together are the whole.
    #[test]
    fn parts_read_back_whole_or_split_by_range() {
        let lower = lower_layers();
        let (snapshot, bytes, members, games) = one_part(&lower);
        assert_eq!(SpreadSnapshot::decode(&snapshot.encode(), 6).unwrap(), snapshot);
        let store = Given(bytes);
        let whole = read_range(&snapshot, &store, (0, 1), &lower, SearchBudget::NONE).unwrap();
        assert_eq!((&whole.members, &whole.games), (&members, &games));
        let mut written = Vec::new();
        whole.solver.entries.write_arrays(&mut written).unwrap();
        let (mut joined_members, mut joined_games) = (vec![Vec::new(); members.len()], Vec::new());
        for rank in 0..2 {
            let half = read_range(&snapshot, &store, (rank, 2), &lower, SearchBudget::NONE).unwrap();
            let range = half.solver.entries.window_range();
            assert!(half.members.iter().flatten().all(|&m| range.contains(&(m as usize))));
            for (all, list) in joined_members.iter_mut().zip(half.members) {
                all.extend(list);
            }
            joined_games.extend(half.games);
            // Only rank 0 holds the part's first position, and its counts.
            let counted = half.solver.stats.decided_by_retrograde;
            assert_eq!(counted, if rank == 0 { whole.solver.stats.decided_by_retrograde } else { 0 });
        }
        assert_eq!((joined_members, joined_games), (members, games));
    }

    /// Damaged snapshots and parts are errors, never panics.
    #[test]
    fn damaged_snapshots_and_parts_are_errors() {
        let lower = lower_layers();
        let (snapshot, bytes, _, _) = one_part(&lower);
        let encoded = snapshot.encode();
        for cut in 0..encoded.len() {
            assert!(SpreadSnapshot::decode(&encoded[..cut], 6).is_err(), "cut at {cut}");
        }
        assert!(SpreadSnapshot::decode(&encoded, 7).is_err());
        for at in 0..encoded.len() {
            for flip in [0x01, 0x80, 0xFF] {
                let mut damaged = encoded.clone();
                damaged[at] ^= flip;
                let _ = SpreadSnapshot::decode(&damaged, 6);
            }
        }
        let step = (bytes.len() / 300).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            let store = Given(bytes[..cut].to_vec());
            assert!(
                read_range(&snapshot, &store, (0, 1), &lower, SearchBudget::NONE).is_err(),
                "cut at {cut}"
            );
        }
        for at in (0..bytes.len()).step_by(step) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0xA5;
            let _ = read_range(&snapshot, &Given(damaged), (0, 2), &lower, SearchBudget::NONE);
        }
        // Well formed, but a state no games leave (a player state won at
        // a threshold above the layer's seeds), as a part forged with a
        // matching checksum could hold.
        let (snapshot, bytes, _, _) = one_part_forged(&lower, |games| games[4] = 7);
        let error = read_range(&snapshot, &Given(bytes.clone()), (0, 1), &lower, SearchBudget::NONE);
        let error = error.err().expect("refused").to_string();
        assert!(error.contains("threshold games' state") && error.contains("won at threshold 7"), "{error}");
        let none = SpreadSnapshot::unreadable(6);
        assert!(read_range(&none, &Given(bytes), (0, 1), &lower, SearchBudget::NONE).is_err());
    }
}
