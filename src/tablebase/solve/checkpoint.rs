//! Snapshots of a layer under construction, so an interrupted build resumes
//! where it stood and ends with the same bytes as an uninterrupted one.
//!
//! Layout (little-endian, see [`crate::codec`]; the build directory stores it
//! as one zstd frame with a content checksum, and records the file's size and
//! checksum in the manifest):
//!
//! ```text
//! "OWCKPT03" | n: u32 | positions: u64
//! lo, hi, est, pending, flags: blob each (one byte per position)
//! stats (LayerStats::encode)
//! cursor: tag u8 (0 start, 1 propagating, 2 retrograded, 3 resolving)
//!   1: frontier: words
//!   3: k: u64 | step tag u8 (0 begin, 1 bounds, 2 search)
//!        1: t: u8 | safety_rounds: u32 | state: blob
//!        2: lower: blob | upper: blob | done: blob (pairs lower, upper)
//!        3: t: u8 | safety_rounds: u32 | sequence: u64 | parts: u32, then
//!           per part: bytes: u64 | checksum: u64 (bounds in parts)
//! components: 0 | 1 followed by ids: words (the cycle component of every
//!   position, sinks first; u32::MAX for positions on no cycle)
//! contradiction (Contradiction::encode_found: the first with the table
//!   the build starts from, if any, so a resumed build still reports it)
//! ```
//!
//! Step 3 is step 1 with the games' state held by the ranks of a
//! distributed build, each rank's in a part of its own (see
//! [`SnapshotParts`]): the state of the members in rank `r`'s index range,
//! four bytes each as in step 1's blob, so that the parts joined in rank
//! order are that blob. The snapshot records each part's size and checksum
//! and the sequence number that names them; restoring joins them into a
//! step 1, whatever the number of ranks that resumes.
//!
//! The first layout, "OWCKPT01", numbered every undecided position's
//! component, cycle or not, and is not resumed: a build that meets one
//! restarts that layer. The second, "OWCKPT02", is this one without the
//! contradiction; it is resumed only by a build that starts from no
//! table (which has no contradiction to lose), and restarts the layer of
//! one that does ([`lacks_contradiction`]).

use std::io::{self, Write};
use std::sync::Arc;

use crate::parallel;

use crate::codec::{DecodeError, Decoder, Encoder};
use crate::tablebase::layers::SolvedLayers;
use crate::tablebase::params::SearchBudget;
use crate::tablebase::snapshot::join_parts;
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::snapshot::GamesSnapshot;
use crate::tablebase::snapshot::PartRecord;
use crate::tablebase::snapshot::PartsOf;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::entries::Contradiction;
use crate::tablebase::solve::games_state::games_state_fault;
use crate::tablebase::solve::solver::{Cursor, LayerSolver, SavedGames, Step};
use crate::tablebase::stats::LayerStats;

pub(crate) const MAGIC: &[u8; 8] = b"OWCKPT03";

/// The most bytes a snapshot of layer `n` can hold (the layout above):
/// the entries' five arrays (5 bytes a position), the cursor's state (at
/// most 4: a frontier of indexes, 4 bytes a member of the games' state, or
/// a search's 4), the component numbers (4), and under a mebibyte of
/// headers, lengths and statistics. A distributed build's snapshot of a
/// layer kept spread names its parts and is smaller. What a reader of a
/// file that declares more refuses.
pub(crate) fn most_bytes(n: u32) -> u64 {
    16u64.saturating_mul(crate::rank::layer_size(n)).saturating_add(1 << 20)
}

/// The second layout's magic: no contradiction field.
const SECOND_MAGIC: &[u8; 8] = b"OWCKPT02";

/// The first layout's magic.
const EARLIER_MAGIC: &[u8; 8] = b"OWCKPT01";

/// Whether a snapshot has the first layout, which this version does not
/// resume (the layer is built again from its start).
pub(crate) fn earlier_layout(snapshot: &[u8]) -> bool {
    snapshot.starts_with(EARLIER_MAGIC)
}

/// Whether a snapshot has the second layout, which does not record a
/// contradiction found before it: a build that starts from a table does
/// not resume it (the layer is built again from its start).
pub(crate) fn lacks_contradiction(snapshot: &[u8]) -> bool {
    snapshot.starts_with(SECOND_MAGIC)
}

/// A solver rebuilt from a snapshot, where it stood, and its components
/// (if it had found them).
pub(crate) type Restored<'a> = (LayerSolver<'a>, Cursor, Option<Components>);

/// A snapshot inside the threshold games, however it was taken: the
/// games' state must be one the games can leave between two thresholds
/// (`docs/cycle-bounds.md` §10).
pub(crate) fn check_games_state((solver, cursor, components): &Restored) -> Result<(), DecodeError> {
    if let (Cursor::Resolving { k, step: Step::Bounds { t, state, .. } }, Some(c)) = (cursor, components) {
        if *k < c.count() {
            if let Some(fault) = games_state_fault(solver, c, *k, *t, state) {
                return Err(DecodeError::Invalid(format!("the threshold games' state: {fault}")));
            }
        }
    }
    Ok(())
}

/// Offers a snapshot of the current state to `checkpoints`.
pub(crate) fn checkpoint(
    solver: &LayerSolver,
    checkpoints: &mut dyn Checkpointer,
    cursor: &Cursor,
    components: Option<&Components>,
) -> io::Result<()> {
    checkpoints.save(&mut |out| write_snapshot(solver, cursor, components, None, out))
}

/// Offers a snapshot taken inside the threshold games of component `k`
/// (thresholds above `t` solved): their state is streamed from the
/// work arrays, not copied (at 24 seeds a copy would be 1.4 GB).
/// (Or, with [`GamesSnapshot::Parts`], their state is in the ranks'
/// parts, written already.)
pub(crate) fn checkpoint_games(
    solver: &LayerSolver,
    checkpoints: &mut dyn Checkpointer,
    (k, t, safety_rounds): (usize, u8, u32),
    components: &Components,
    games: &GamesSnapshot,
) -> io::Result<()> {
    let cursor = Cursor::Resolving { k, step: Step::Bounds { t, safety_rounds, state: Vec::new().into() } };
    checkpoints.save(&mut |out| write_snapshot(solver, &cursor, Some(components), Some(games), out))
}

/// Streams the whole state at a safe point (layout above); `games`,
/// if given, is the state of a `Step::Bounds` cursor.
pub(crate) fn write_snapshot(
    solver: &LayerSolver,
    cursor: &Cursor,
    components: Option<&Components>,
    games: Option<&GamesSnapshot>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut e = Encoder::default();
    e.bytes.extend_from_slice(MAGIC);
    e.u32(solver.n);
    e.u64(solver.size as u64);
    out.write_all(&e.bytes)?;
    solver.entries.write_arrays(out)?;
    let mut e = Encoder::default();
    solver.stats.encode(&mut e);
    match cursor {
        Cursor::Start => e.u8(0),
        Cursor::Propagating { frontier } => {
            e.u8(1);
            e.words(frontier);
        }
        Cursor::Retrograded => e.u8(2),
        Cursor::Resolving { k, step } => {
            e.u8(3);
            e.u64(*k as u64);
            match step {
                Step::Begin => e.u8(0),
                Step::Bounds { t, safety_rounds, state } => {
                    let in_parts = matches!(games, Some(GamesSnapshot::Parts { .. }));
                    e.u8(if in_parts { 3 } else { 1 });
                    e.u8(*t);
                    e.u32(*safety_rounds);
                    match games {
                        Some(GamesSnapshot::Arrays(games)) => {
                            out.write_all(&e.bytes)?;
                            e.bytes.clear();
                            out.write_all(&(4 * games.members.count() as u64).to_le_bytes())?;
                            games.write(out)?;
                        }
                        Some(GamesSnapshot::Parts { sequence, records }) => {
                            e.u64(*sequence);
                            e.u32(records.len() as u32);
                            for record in *records {
                                e.bytes.extend_from_slice(&record.encode());
                            }
                        }
                        None => e.blob(state),
                    }
                }
                Step::Search { lower, upper, done } => {
                    e.u8(2);
                    e.blob(lower);
                    e.blob(upper);
                    let pairs: Vec<u8> = done.iter().flat_map(|&(l, u)| [l, u]).collect();
                    e.blob(&pairs);
                }
            }
        }
        Cursor::Done => e.u8(4),
    }
    e.u8(components.is_some() as u8);
    out.write_all(&e.bytes)?;
    if let Some(c) = components {
        c.write_ids(out)?;
    }
    let mut e = Encoder::default();
    Contradiction::encode_found(solver.entries.contradiction().as_ref(), &mut e);
    out.write_all(&e.bytes)
}

/// A snapshot's content that stays readable while the layer resumes
/// (a mapped file): the games' state a resumed layer reads from it is
/// not copied ([`SavedGames`]).
pub(crate) type KeptSnapshot = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// [`decode_snapshot`] of a copy of `bytes`, then the games' state
/// checked, as a resume does (tests).
#[cfg(test)]
pub(crate) fn restore<'a>(
    n: u32,
    lower: &'a SolvedLayers,
    budget: SearchBudget,
    bytes: &[u8],
    parts: PartsOf,
) -> Result<Restored<'a>, DecodeError> {
    let restored = decode_snapshot(n, lower, budget, &kept(bytes), parts)?;
    check_games_state(&restored)?;
    Ok(restored)
}

/// `bytes` as a snapshot's content (tests).
#[cfg(test)]
pub(crate) fn kept(bytes: &[u8]) -> KeptSnapshot {
    Arc::new(bytes.to_vec())
}

/// Rebuilds a solver from a one-process snapshot of layer `n`, `content`,
/// short of the games' state's invariants ([`check_games_state`]); a
/// snapshot in parts gets its parts from `parts` (and comes back with
/// them joined), once the rest of it has been read and checked. A
/// snapshot of a layer kept spread over ranks is
/// `across::checkpoint::restore`'s to read. The games' state of a
/// snapshot that holds it in one piece is read where it lies in
/// `content`, not copied.
pub(crate) fn decode_snapshot<'a>(
    n: u32,
    lower: &'a SolvedLayers,
    budget: SearchBudget,
    content: &KeptSnapshot,
    parts: PartsOf,
) -> Result<Restored<'a>, DecodeError> {
    let bytes = (**content).as_ref();
    let mut d = Decoder::new(bytes);
    let magic = d.blob_exact(MAGIC.len())?;
    if magic != MAGIC && magic != SECOND_MAGIC {
        return Err(DecodeError::Invalid("not a layer checkpoint (bad magic)".into()));
    }
    let (found_n, size) = (d.u32()?, d.u64()? as usize);
    if found_n != n || lower.len() != n || size as u64 != crate::rank::layer_size(n) {
        return Err(DecodeError::Invalid(format!(
            "checkpoint of layer {found_n} ({size} positions), expected layer {n}"
        )));
    }
    let mut solver = LayerSolver::new(n, lower, budget);
    solver.entries.read_arrays(&mut d)?;
    solver.stats = LayerStats::decode(&mut d)?;
    // A snapshot in parts: the sequence number and part records it
    // holds (the parts are read once the rest has been checked).
    let mut in_parts: Option<(u64, Vec<PartRecord>)> = None;
    let mut cursor = match d.u8()? {
        0 => Cursor::Start,
        1 => {
            let frontier = d.words()?;
            if frontier.iter().any(|&i| i as usize >= size) {
                return Err(DecodeError::Invalid("frontier index outside the layer".into()));
            }
            // (The frontier holds positions decided in the last round.)
            if frontier.iter().any(|&i| !solver.entries.is_decided(i as usize)) {
                return Err(DecodeError::Invalid("an undecided position on the frontier".into()));
            }
            Cursor::Propagating { frontier }
        }
        2 => Cursor::Retrograded,
        3 => {
            let k = d.u64()? as usize;
            let step = match d.u8()? {
                0 => Step::Begin,
                1 => {
                    let (t, safety_rounds) = (d.u8()?, d.u32()?);
                    let blob = d.blob()?;
                    // (`blob` lies inside `bytes`, the content's.)
                    let start = blob.as_ptr() as usize - bytes.as_ptr() as usize;
                    let state = SavedGames::within(Arc::clone(content), start..start + blob.len());
                    Step::Bounds { t, safety_rounds, state }
                }
                3 => {
                    let (t, safety_rounds, sequence) = (d.u8()?, d.u32()?, d.u64()?);
                    let count = d.u32()? as usize;
                    if count > d.remaining() / PartRecord::BYTES {
                        return Err(DecodeError::Invalid(format!("{count} parts in a short snapshot")));
                    }
                    let records: Vec<PartRecord> =
                        (0..count).map(|_| PartRecord::decode(&mut d)).collect::<Result<_, _>>()?;
                    in_parts = Some((sequence, records));
                    Step::Bounds { t, safety_rounds, state: Vec::new().into() }
                }
                2 => {
                    let lower = d.blob()?.to_vec();
                    let upper = d.blob()?.to_vec();
                    let done = d.blob()?.chunks_exact(2).map(|p| (p[0], p[1])).collect();
                    Step::Search { lower, upper, done }
                }
                tag => return Err(DecodeError::Invalid(format!("unknown step {tag}"))),
            };
            Cursor::Resolving { k, step }
        }
        4 => Cursor::Done,
        tag => return Err(DecodeError::Invalid(format!("unknown cursor {tag}"))),
    };
    let components = match d.u8()? {
        0 => None,
        1 => {
            // (Read where they lie: a copy of the numbers would cost 4
            // bytes a position more while a big layer resumes.)
            let ids = d.word_bytes()?;
            let out_of_layer = |w: &[u8]| {
                let r = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                r != crate::tablebase::solve::components::NONE && r as usize >= size
            };
            let out_of_layer_in = |range: std::ops::Range<usize>| {
                ids[4 * range.start..4 * range.end].chunks_exact(4).any(out_of_layer)
            };
            if ids.len() != 4 * size || parallel::any_chunk(size, 1 << 16, &out_of_layer_in) {
                return Err(DecodeError::Invalid("component ids do not match the layer".into()));
            }
            Some(Components::from_id_bytes(ids))
        }
        tag => return Err(DecodeError::Invalid(format!("unknown components tag {tag}"))),
    };
    if magic == MAGIC {
        if let Some(found) = Contradiction::decode_found(&mut d, n)? {
            if found.index >= size as u64 {
                return Err(DecodeError::Invalid("a contradiction outside the layer".into()));
            }
            solver.entries.record_contradiction(found);
        }
    }
    d.finish()?;
    if let Cursor::Resolving { k, step } = &mut cursor {
        let c =
            components.as_ref().ok_or_else(|| DecodeError::Invalid("resolving without components".into()))?;
        if *k > c.count() {
            return Err(DecodeError::Invalid(format!("component {k} of {}", c.count())));
        }
        let members = if *k < c.count() { c.of(*k).len() } else { 0 };
        if let (Some((sequence, records)), Step::Bounds { state, .. }) = (in_parts, &mut *step) {
            *state = join_parts(parts, sequence, records, 4 * members)?.into();
        }
        let consistent = match step {
            Step::Begin => true,
            // (Taken before a threshold still to play: 1 at the least.)
            Step::Bounds { t, state, .. } => state.len() == 4 * members && 1 <= *t && (*t as u32) <= n,
            // The history-free bounds are intervals of the layer's
            // values, and a search only narrows a member's within them.
            Step::Search { lower, upper, done } => {
                lower.len() == members
                    && upper.len() == members
                    && done.len() <= members
                    && lower.iter().zip(upper.iter()).all(|(&l, &u)| l <= u && u as u32 <= n)
                    && done.iter().enumerate().all(|(i, &(l, u))| lower[i] <= l && l <= u && u <= upper[i])
            }
        };
        if !consistent {
            return Err(DecodeError::Invalid("component progress does not match its component".into()));
        }
    }
    Ok((solver, cursor, components))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tablebase::snapshot::frame_has_checksum;

    /// The premise of adopting an unnamed checkpoint: the decoder checks
    /// the frame's content checksum, so changed content is an error even
    /// where the frame stays well formed.
    #[test]
    fn a_frame_with_a_checksum_is_checked_when_decoded() {
        let content: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
        encoder.include_checksum(true).unwrap();
        encoder.write_all(&content).unwrap();
        let frame = encoder.finish().unwrap();
        assert!(frame_has_checksum(&frame));
        assert_eq!(zstd::stream::decode_all(&frame[..]).unwrap(), content);
        let mut changed = frame.clone();
        *changed.last_mut().unwrap() ^= 1; // the checksum's last byte
        assert!(zstd::stream::decode_all(&changed[..]).is_err());
        assert!(zstd::bulk::decompress(&changed, content.len()).is_err());
        assert_eq!(zstd::bulk::decompress(&frame, content.len()).unwrap(), content);
        assert!(zstd::bulk::decompress(&frame, content.len() - 1).is_err());
        assert!(!frame_has_checksum(&zstd::stream::encode_all(&content[..], 1).unwrap()));
        assert!(!frame_has_checksum(b"OWCKPT02"));
    }
}
