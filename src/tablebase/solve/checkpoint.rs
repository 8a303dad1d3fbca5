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

use crate::codec::{DecodeError, Decoder, Encoder};
use crate::tablebase::layers::SolvedLayers;
use crate::tablebase::params::SearchBudget;
use crate::tablebase::snapshot::join_parts;
use crate::tablebase::snapshot::stream_words;
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::snapshot::GamesSnapshot;
use crate::tablebase::snapshot::PartRecord;
use crate::tablebase::snapshot::PartsOf;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::entries::Contradiction;
use crate::tablebase::solve::games_state::games_state_fault;
use crate::tablebase::solve::solver::{Cursor, LayerSolver, Step};
use crate::tablebase::stats::LayerStats;

const MAGIC: &[u8; 8] = b"OWCKPT03";

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
    let cursor = Cursor::Resolving { k, step: Step::Bounds { t, safety_rounds, state: Vec::new() } };
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
                            out.write_all(&(4 * games.members.len() as u64).to_le_bytes())?;
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
        stream_words(out, &c.id)?;
    }
    let mut e = Encoder::default();
    Contradiction::encode_found(solver.entries.contradiction().as_ref(), &mut e);
    out.write_all(&e.bytes)
}

/// Rebuilds a solver from a one-process snapshot of layer `n`; a
/// snapshot in parts gets its parts from `parts` (and comes back with
/// them joined), once the rest of it has been read and checked. A
/// snapshot of a layer kept spread over ranks is
/// `across::checkpoint::restore`'s to read.
pub(crate) fn restore<'a>(
    n: u32,
    lower: &'a SolvedLayers,
    budget: SearchBudget,
    bytes: &[u8],
    parts: PartsOf,
) -> Result<Restored<'a>, DecodeError> {
    let restored = decode_snapshot(n, lower, budget, bytes, parts)?;
    check_games_state(&restored)?;
    Ok(restored)
}

/// [`restore`] of a one-process snapshot, short of the
/// games' state's invariants.
fn decode_snapshot<'a>(
    n: u32,
    lower: &'a SolvedLayers,
    budget: SearchBudget,
    bytes: &[u8],
    parts: PartsOf,
) -> Result<Restored<'a>, DecodeError> {
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
                1 => Step::Bounds { t: d.u8()?, safety_rounds: d.u32()?, state: d.blob()?.to_vec() },
                3 => {
                    let (t, safety_rounds, sequence) = (d.u8()?, d.u32()?, d.u64()?);
                    let count = d.u32()? as usize;
                    if count > d.remaining() / PartRecord::BYTES {
                        return Err(DecodeError::Invalid(format!("{count} parts in a short snapshot")));
                    }
                    let records: Vec<PartRecord> =
                        (0..count).map(|_| PartRecord::decode(&mut d)).collect::<Result<_, _>>()?;
                    in_parts = Some((sequence, records));
                    Step::Bounds { t, safety_rounds, state: Vec::new() }
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
            let ids = d.words()?;
            if ids.len() != size
                || ids.iter().any(|&r| r != crate::tablebase::solve::components::NONE && r as usize >= size)
            {
                return Err(DecodeError::Invalid("component ids do not match the layer".into()));
            }
            Some(Components::from_ids(ids))
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
            *state = join_parts(parts, sequence, records, 4 * members)?;
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
    use crate::rank::layer_size;
    use crate::tablebase::snapshot::NoCheckpoints;
    use crate::tablebase::snapshot::{frame_has_checksum, GamesState};
    use crate::tablebase::solve::components;

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

    #[test]
    fn snapshots_round_trip_and_damage_is_an_error() {
        let lower = crate::tablebase::solve::run::solved_below(4, SearchBudget::default());
        let budget = SearchBudget::default();
        let mut solver = LayerSolver::new(4, &lower, budget);
        solver.retrograde_only();
        let mut bytes = Vec::new();
        write_snapshot(&solver, &Cursor::Retrograded, None, None, &mut bytes).unwrap();
        let (restored, cursor, components) = restore(4, &lower, budget, &bytes, None).unwrap();
        assert_eq!(cursor, Cursor::Retrograded);
        assert!(components.is_none());
        let mut again = Vec::new();
        write_snapshot(&restored, &cursor, None, None, &mut again).unwrap();
        assert_eq!(again, bytes);
        let (finished, _) = restored.run(cursor, None, &mut NoCheckpoints).unwrap();
        let (straight, _) = LayerSolver::new(4, &lower, budget).solve();
        assert_eq!(finished, straight);
        for cut in [0, 7, 20, bytes.len() / 2, bytes.len() - 1] {
            assert!(restore(4, &lower, budget, &bytes[..cut], None).is_err());
        }
        assert!(restore(3, &lower, budget, &bytes, None).is_err());
        // A bound above the layer's 4 seeds (the first lower bound: after
        // the magic, the layer, its size and the blob's length), which a
        // file forged with a matching checksum could hold.
        let first_lower = MAGIC.len() + 4 + 8 + 8;
        assert_eq!(bytes[first_lower - 8..first_lower], (layer_size(4)).to_le_bytes());
        let mut forged = bytes.clone();
        forged[first_lower] = 5;
        let error = restore(4, &lower, budget, &forged, None).err().expect("refused");
        assert!(error.to_string().contains("lower bounds: position 0 holds 5, above 4 seeds"), "{error}");
    }

    /// A contradiction with the table a build starts from, found before a
    /// snapshot, is restored with it (else a resumed build would write a
    /// layer it should refuse).
    #[test]
    fn a_contradiction_found_before_a_snapshot_is_restored_with_it() {
        let lower = crate::tablebase::solve::run::solved_below(4, SearchBudget::NONE);
        let solver = LayerSolver::new(4, &lower, SearchBudget::NONE);
        let found = Contradiction { seeds: 4, index: 17, ours: (1, 2), theirs: (3, 4) };
        solver.entries.record_contradiction(found);
        let mut bytes = Vec::new();
        write_snapshot(&solver, &Cursor::Start, None, None, &mut bytes).unwrap();
        let (restored, _, _) = restore(4, &lower, SearchBudget::NONE, &bytes, None).unwrap();
        assert_eq!(restored.entries.contradiction(), Some(found));
        // Outside the layer, it is damage.
        let mut outside = Vec::new();
        let solver = LayerSolver::new(4, &lower, SearchBudget::NONE);
        solver.entries.record_contradiction(Contradiction { index: 1 << 40, ..found });
        write_snapshot(&solver, &Cursor::Start, None, None, &mut outside).unwrap();
        assert!(restore(4, &lower, SearchBudget::NONE, &outside, None).is_err());
    }

    /// A snapshot inside the threshold games, streamed from the work
    /// arrays, has the bytes of one that copies their state, and resumes
    /// to the layer of a build never interrupted.
    #[test]
    fn games_states_are_streamed_as_they_would_be_copied() {
        let lower = crate::tablebase::solve::run::solved_below(6, SearchBudget::NONE);
        let mut solver = LayerSolver::new(6, &lower, SearchBudget::NONE);
        solver.retrograde_only();
        let components = components::components(&mut solver);
        let members = components.of(0);
        assert!(members.len() > 1000);
        // Some made-up state of the games, different per member.
        let size = solver.size;
        let win: Vec<u8> = (0..2 * size).map(|i| (i % 7) as u8).collect();
        let open: Vec<u8> = (0..2 * size).map(|i| (i % 5) as u8).collect();
        let mut state = Vec::new();
        for &m in members {
            let m = m as usize;
            state.extend_from_slice(&win[2 * m..2 * m + 2]);
            state.extend_from_slice(&open[2 * m..2 * m + 2]);
        }
        let cursor = Cursor::Resolving { k: 0, step: Step::Bounds { t: 3, safety_rounds: 2, state } };
        let mut copied = Vec::new();
        write_snapshot(&solver, &cursor, Some(&components), None, &mut copied).unwrap();
        let games = GamesState { members, win: &win, open: &open };
        struct Keep(Vec<u8>);
        impl Checkpointer for Keep {
            fn due(&mut self) -> bool {
                true
            }
            fn save(&mut self, write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
                write(&mut self.0)
            }
        }
        let mut streamed = Keep(Vec::new());
        checkpoint_games(&solver, &mut streamed, (0, 3, 2), &components, &GamesSnapshot::Arrays(&games))
            .unwrap();
        assert!(streamed.0 == copied);
        let (_, restored, _) = decode_snapshot(6, &lower, SearchBudget::NONE, &copied, None).unwrap();
        assert_eq!(restored, cursor);
        // (Made up, the state is none the games could leave.)
        let error = restore(6, &lower, SearchBudget::NONE, &copied, None).err().expect("refused");
        assert!(error.to_string().contains("threshold games' state"), "{error}");
    }

    /// Every snapshot the threshold games of a layer offer restores; one
    /// whose games' state breaks an invariant of `docs/cycle-bounds.md`
    /// §10 (as a file forged with a matching checksum could) is refused.
    #[test]
    fn games_states_that_break_the_games_invariants_are_refused() {
        let lower = crate::tablebase::solve::run::solved_below(8, SearchBudget::NONE);
        /// Restores every snapshot offered; keeps those taken inside the
        /// games.
        struct Restoring<'l> {
            lower: &'l SolvedLayers,
            inside_games: Vec<Vec<u8>>,
        }
        impl Checkpointer for Restoring<'_> {
            fn due(&mut self) -> bool {
                true
            }
            fn save(&mut self, write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
                let mut bytes = Vec::new();
                write(&mut bytes)?;
                let (_, cursor, _) = restore(8, self.lower, SearchBudget::NONE, &bytes, None)
                    .unwrap_or_else(|e| panic!("an offered snapshot is refused: {e}"));
                if let Cursor::Resolving { step: Step::Bounds { .. }, .. } = cursor {
                    self.inside_games.push(bytes);
                }
                Ok(())
            }
        }
        let mut offered = Restoring { lower: &lower, inside_games: Vec::new() };
        LayerSolver::new(8, &lower, SearchBudget::NONE).run(Cursor::Start, None, &mut offered).unwrap();
        let inside = offered.inside_games;
        assert!(inside.len() >= 5, "{} snapshots inside the games", inside.len());
        // One halfway through the giant component's thresholds.
        let largest = inside.iter().map(Vec::len).max().unwrap();
        let giants: Vec<&Vec<u8>> = inside.iter().filter(|bytes| bytes.len() == largest).collect();
        let (solver, cursor, components) =
            restore(8, &lower, SearchBudget::NONE, giants[giants.len() / 2], None).unwrap();
        let components = components.unwrap();
        let Cursor::Resolving { k, step: Step::Bounds { t, safety_rounds, state } } = cursor else {
            panic!("inside the games")
        };
        let members = components.of(k);
        assert!(members.len() > 1000 && t > 1);
        // (`says`: what the refusal names, "" for any of the invariants.)
        let refused = |forge: &dyn Fn(&mut Vec<u8>), what: &str, says: &str| {
            let mut forged = state.clone();
            forge(&mut forged);
            assert!(forged != state, "{what}: nothing changed");
            let cursor = Cursor::Resolving { k, step: Step::Bounds { t, safety_rounds, state: forged } };
            let mut bytes = Vec::new();
            write_snapshot(&solver, &cursor, Some(&components), None, &mut bytes).unwrap();
            let error = restore(8, &lower, SearchBudget::NONE, &bytes, None).err();
            let error = error.unwrap_or_else(|| panic!("{what}: restored"));
            let error = error.to_string();
            assert!(error.contains("threshold games' state") && error.contains(says), "{what}: {error}");
        };
        // No snapshot is taken after the last threshold, 1.
        let after_the_last =
            Cursor::Resolving { k, step: Step::Bounds { t: 0, safety_rounds, state: state.clone() } };
        let mut bytes = Vec::new();
        write_snapshot(&solver, &after_the_last, Some(&components), None, &mut bytes).unwrap();
        assert!(restore(8, &lower, SearchBudget::NONE, &bytes, None).is_err());
        let n = 8u8;
        let won_x = (0..members.len()).filter(|&i| state[4 * i] != 0).collect::<Vec<_>>();
        let counted_y = (0..members.len())
            .filter(|&i| state[4 * i + 1] == 0 && n - solver.entries.interval(members[i] as usize).1 > t)
            .collect::<Vec<_>>();
        assert!(won_x.len() > 100 && counted_y.len() > 100, "{} {}", won_x.len(), counted_y.len());
        // Marks outside the thresholds solved, or a Y mark above its exits.
        refused(&|s| s[4 * won_x[0]] = t, "a player mark at the threshold to come", "player state won at");
        refused(&|s| s[4 * won_x[0]] = n + 1, "a player mark above the seeds", "won at threshold 9");
        if let Some(i) = (0..members.len()).find(|&i| {
            let joins_from = n - solver.entries.interval(members[i] as usize).1;
            state[4 * i + 1] == 0 && joins_from > t && joins_from < n
        }) {
            let joins_from = n - solver.entries.interval(members[i] as usize).1;
            refused(&|s| s[4 * i + 1] = joins_from + 1, "an opponent mark above its exits", "may join from");
        }
        // A count at a player state, or a wrong one at an opponent state.
        refused(&|s| s[4 * won_x[0] + 2] = 1, "a count at a player state", "a count at a player state");
        for &i in counted_y.iter().step_by(counted_y.len() / 10) {
            refused(&|s| s[4 * i + 3] += 1, "an opponent count one too many", "children not won of");
            refused(&|s| s[4 * i + 3] -= 1, "an opponent count one too few", "children not won of");
        }
        let interval = |i: usize| solver.entries.interval(members[i] as usize);
        if let Some(i) = (0..members.len()).find(|&i| state[4 * i + 1] == 0 && n - interval(i).1 <= t) {
            refused(&|s| s[4 * i + 3] = 1, "a count before its state may join", "may join only from");
        }
        // A mark the member's own exits already deny (fact 3).
        let exit_won = (0..members.len()).find(|&i| interval(i).0 > t).expect("an exit above t");
        refused(&|s| s[4 * exit_won] = 0, "a player state not won at its exit", "below its exit's");
        // Marks moved within the thresholds played: the exits and the
        // children's marks say otherwise (facts 4 and 5).
        for &i in won_x.iter().step_by(won_x.len() / 20) {
            refused(&|s| s[4 * i] = 0, "a player state's mark dropped", "");
            if state[4 * i] < n {
                refused(&|s| s[4 * i] += 1, "a player state's mark raised", "");
            }
        }
        let won_y = (0..members.len()).filter(|&i| state[4 * i + 1] != 0).collect::<Vec<_>>();
        assert!(won_y.len() > 100, "{}", won_y.len());
        for &i in won_y.iter().step_by(won_y.len() / 20) {
            refused(&|s| s[4 * i + 1] = 0, "an opponent state's mark dropped", "");
            if state[4 * i + 1] > t + 1 {
                refused(&|s| s[4 * i + 1] -= 1, "an opponent state's mark lowered", "");
            }
        }
    }
}
