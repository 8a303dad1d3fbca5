//! What every snapshot of a layer under construction is made of, whoever
//! takes it (one process, `solve::checkpoint`, or the ranks of a
//! distributed build, `across::checkpoint`) and wherever it is kept (a
//! build directory, `directory::checkpoints`): the hook a solver offers
//! snapshots to, the games' state it streams, and the parts the ranks
//! write of it.

use std::io::{self, Write};

use crate::codec::{DecodeError, Decoder};

/// Receives snapshots of a layer build at safe points.
pub trait Checkpointer {
    /// Whether a snapshot is wanted now (cheap: called often).
    fn due(&mut self) -> bool;
    /// Persists a snapshot: `write` streams it into the writer given; an
    /// error stops the build.
    fn save(&mut self, write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> io::Result<()>;
    /// Where the ranks of a distributed build write their parts of the
    /// next snapshot taken inside games spread over them, and the sequence
    /// number that names that snapshot (the parts are written before it).
    /// None by default: no snapshot is taken inside such games.
    fn parts(&self) -> Option<(&dyn SnapshotParts, u64)> {
        None
    }
}

/// A checkpointer that never asks for snapshots.
pub struct NoCheckpoints;

impl Checkpointer for NoCheckpoints {
    fn due(&mut self) -> bool {
        false
    }
    fn save(&mut self, _: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
        Ok(())
    }
}

/// The layer indexes of a component's members, in order, however the
/// component keeps them.
pub(crate) trait MemberIndexList {
    fn count(&self) -> usize;
    fn indexes(&self) -> Box<dyn Iterator<Item = u32> + '_>;
}

/// The threshold games' state of a component, read from the work arrays:
/// per member `win(q,0), win(q,1), open(q,0), open(q,1)`.
pub(crate) struct GamesState<'s> {
    pub members: &'s dyn MemberIndexList,
    pub win: &'s [u8],
    /// The games' counters, a byte a position: the open counts of its two
    /// states are stored, read from its byte by `open_of(m, byte)` for
    /// the member at layer index `m` (the safety scratch beside them is
    /// zero between thresholds, where snapshots are taken).
    pub counts: &'s [u8],
    pub open_of: &'s dyn Fn(usize, u8) -> [u8; 2],
}

impl GamesState<'_> {
    pub(crate) fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        const CHUNK: usize = 1 << 18;
        let mut buffer = Vec::with_capacity(CHUNK + 4);
        for m in self.members.indexes() {
            let m = m as usize;
            buffer.extend_from_slice(&self.win[2 * m..2 * m + 2]);
            buffer.extend((self.open_of)(m, self.counts[m]));
            if buffer.len() >= CHUNK {
                out.write_all(&buffer)?;
                buffer.clear();
            }
        }
        out.write_all(&buffer)
    }
}

/// A rank's part of a snapshot taken inside games spread over the ranks
/// (step 3 above): what the snapshot records of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartRecord {
    /// Size of the part as stored.
    pub bytes: u64,
    /// [`crate::checksum::checksum`] of the part as stored.
    pub checksum: u64,
}

impl PartRecord {
    pub(crate) const BYTES: usize = 16;

    pub(crate) fn encode(&self) -> Vec<u8> {
        [self.bytes.to_le_bytes(), self.checksum.to_le_bytes()].concat()
    }

    pub(crate) fn decode(d: &mut Decoder) -> Result<PartRecord, DecodeError> {
        Ok(PartRecord { bytes: d.u64()?, checksum: d.u64()? })
    }
}

/// Where the ranks of a distributed build keep their parts of snapshots
/// (in a build directory: one file per part beside the snapshot).
pub trait SnapshotParts: Sync {
    /// Writes rank `rank`'s part of snapshot `sequence`, the bytes `write`
    /// streams, durably and atomically, before the snapshot that names it
    /// is saved.
    fn write_part_with(
        &self,
        sequence: u64,
        rank: usize,
        write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<PartRecord>;
    /// [`SnapshotParts::write_part_with`] of the bytes `state`.
    fn write_part(&self, sequence: u64, rank: usize, state: &[u8]) -> io::Result<PartRecord> {
        self.write_part_with(sequence, rank, &mut |out| out.write_all(state))
    }
    /// Reads a part back, checked against its record: its state bytes,
    /// refused if they would be more than `limit` (an error of kind
    /// `InvalidData` for a part that is not the one recorded).
    fn read_part(&self, sequence: u64, rank: usize, record: PartRecord, limit: usize) -> io::Result<Vec<u8>>;
}

/// The parts of the snapshot being restored: where they are kept, and the
/// sequence number of the snapshot (which it records too).
pub(crate) type PartsOf<'p> = Option<(&'p dyn SnapshotParts, u64)>;

/// The games' state a snapshot inside the threshold games holds: streamed
/// from one process's work arrays, or kept by the ranks in parts.
pub(crate) enum GamesSnapshot<'s> {
    Arrays(&'s GamesState<'s>),
    Parts { sequence: u64, records: &'s [PartRecord] },
}

/// Whether a compressed checkpoint starts with a zstd frame that carries a
/// content checksum (checked by the decoder), as this version writes them.
pub(crate) fn frame_has_checksum(compressed: &[u8]) -> bool {
    const CONTENT_CHECKSUM_FLAG: u8 = 0x04;
    crate::compressed::is_zstd(compressed)
        && compressed.len() > 4
        && compressed[4] & CONTENT_CHECKSUM_FLAG != 0
}

/// The games' state of snapshot `sequence` joined from its parts, each
/// checked against its record, at most `expected` bytes in all.
pub(crate) fn join_parts(
    parts: PartsOf,
    sequence: u64,
    records: Vec<PartRecord>,
    expected: usize,
) -> Result<Vec<u8>, DecodeError> {
    let Some((store, restoring)) = parts else {
        return Err(DecodeError::Invalid("a snapshot in parts, and nowhere to read them from".into()));
    };
    if sequence != restoring {
        return Err(DecodeError::Invalid(format!(
            "snapshot {restoring} records the parts of snapshot {sequence}"
        )));
    }
    let mut state = Vec::with_capacity(expected);
    for (rank, record) in records.into_iter().enumerate() {
        let part = store
            .read_part(sequence, rank, record, expected - state.len())
            .map_err(|e| DecodeError::Invalid(format!("part {rank} of the games' state: {e}")))?;
        state.extend_from_slice(&part);
    }
    Ok(state)
}

/// Writes length-prefixed `u32` words in chunks.
pub(crate) fn stream_words(out: &mut dyn Write, words: &[u32]) -> io::Result<()> {
    out.write_all(&(words.len() as u64).to_le_bytes())?;
    let mut buffer = Vec::with_capacity(1 << 18);
    for chunk in words.chunks(1 << 16) {
        buffer.clear();
        buffer.extend(chunk.iter().flat_map(|w| w.to_le_bytes()));
        out.write_all(&buffer)?;
    }
    Ok(())
}
