//! How the ranks of a distributed build keep in step: rank 0's status
//! after each step and every rank's agreement on it, the plan of each
//! layer, a finished layer's record, and the layer file every rank writes
//! its slice of. (`build::lead` and `build::follow` are the two sides.)

use std::io;
use std::path::Path;

use crate::cluster::{Communicator, Partition};
use crate::rank::layer_size;
use crate::resumable;
use crate::tablebase::directory::options::{io_at, BuildError};
use crate::tablebase::entry::EntryWidth;

/// How rank 0 tells the others how a step ended: `[0]` and a payload, or
/// `[1]` and the error's text.
pub(super) fn status_bytes<T>(
    result: &Result<T, BuildError>,
    payload: impl FnOnce(&T) -> Vec<u8>,
) -> Vec<u8> {
    match result {
        Ok(value) => [vec![0], payload(value)].concat(),
        Err(error) => [vec![1], error.to_string().into_bytes()].concat(),
    }
}

/// Reads rank 0's status: its payload, or the error it stopped with.
pub(super) fn read_status(bytes: Vec<u8>) -> Result<Vec<u8>, BuildError> {
    match bytes.split_first() {
        Some((0, payload)) => Ok(payload.to_vec()),
        Some((_, text)) => {
            Err(BuildError::Peer { rank: 0, problem: String::from_utf8_lossy(text).into_owned() })
        }
        None => Err(BuildError::Peer { rank: 0, problem: "an empty status".into() }),
    }
}

/// Every rank's outcome of a step, so that all go on or all stop: a rank
/// that failed returns its own error, the others the first failing rank's.
pub(super) fn agree<T>(comm: &dyn Communicator, result: Result<T, BuildError>) -> Result<T, BuildError> {
    if comm.ranks() == 1 {
        return result;
    }
    let verdict = comm.gather(status_bytes(&result, |_| Vec::new())).map(|statuses| {
        statuses
            .into_iter()
            .enumerate()
            .find(|(_, status)| status.first() != Some(&0))
            .map(|(rank, status)| [(rank as u64).to_le_bytes().to_vec(), status[1..].to_vec()].concat())
            .unwrap_or_default()
    });
    let verdict = comm.broadcast(verdict.unwrap_or_default());
    match (result, verdict.len() >= 8) {
        (Ok(_), true) => {
            let rank = u64::from_le_bytes(verdict[..8].try_into().expect("eight bytes")) as usize;
            Err(BuildError::Peer { rank, problem: String::from_utf8_lossy(&verdict[8..]).into_owned() })
        }
        (result, _) => result,
    }
}

/// How a layer is built, as rank 0 tells the others: from its start, its
/// retrograde analysis and component search spread; or from rank 0's
/// checkpoint. (Either way every rank then plays the large components'
/// threshold games.)
pub(super) const PLAN_ACROSS: u8 = 0;
pub(super) const PLAN_FROM_CHECKPOINT: u8 = 1;
/// A layer kept spread resumed from its checkpoint, each rank from the
/// parts that cover its range: rank 0 sends the snapshot after the plan.
pub(super) const PLAN_RESUME_SPREAD: u8 = 2;

/// A finished layer's size and checksum, as rank 0 sends them.
pub(super) fn record_bytes(bytes: u64, sum: u64) -> Vec<u8> {
    [bytes.to_le_bytes(), sum.to_le_bytes()].concat()
}

pub(super) fn parse_record(record: &[u8]) -> Option<(u64, u64)> {
    let bytes = u64::from_le_bytes(record.get(..8)?.try_into().ok()?);
    let sum = u64::from_le_bytes(record.get(8..16)?.try_into().ok()?);
    (record.len() == 16).then_some((bytes, sum))
}

/// Writes layer `n` of a layer kept spread into `path`, every rank the
/// records of its range (`slice`, of a width every rank shares) at their
/// place: rank 0 makes a
/// temporary file of the layer's size, every rank writes and syncs its
/// slice, and rank 0 reads the file back, checks every rank's slice
/// against the checksum that rank sent (`slice_sums`, rank 0's only), then
/// renames it into place and syncs the directory. Returns on rank 0 the
/// file's size and checksum. Collective; `go` is rank 0's verdict (an
/// error: nothing is written and every rank stops; rank 0 reports the
/// error itself).
pub(super) fn write_layer_slices(
    comm: &dyn Communicator,
    path: &Path,
    n: u32,
    (slice, width): (&[u8], EntryWidth),
    slice_sums: &[u64],
    go: Result<(), &BuildError>,
) -> Result<Option<(u64, u64)>, BuildError> {
    use std::os::unix::fs::FileExt;
    let w = width.bytes() as u64;
    let size = layer_size(n) * w;
    let temporary = resumable::atomic::temporary_path(path);
    let prepared: Result<(), BuildError> = if comm.rank() == 0 {
        // (The others hear rank 0's error as text: it crosses the ranks.)
        go.map_err(|error| BuildError::Peer { rank: 0, problem: error.to_string() }).and_then(|()| {
            let file = std::fs::File::create(&temporary).map_err(io_at(&temporary))?;
            file.set_len(size).map_err(io_at(&temporary)).inspect_err(|_| {
                let _ = std::fs::remove_file(&temporary);
            })
        })
    } else {
        Ok(())
    };
    let status = read_status(comm.broadcast(status_bytes(&prepared, |_| Vec::new())));
    prepared?;
    status?;
    let partition = Partition::new(layer_size(n), comm.ranks());
    let range = partition.range(comm.rank());
    let written = (|| {
        if slice.len() as u64 != (range.end - range.start) * w {
            return Err(io::Error::other(format!(
                "{} bytes for a range of {} positions",
                slice.len(),
                range.end - range.start
            )));
        }
        let file = std::fs::OpenOptions::new().write(true).open(&temporary)?;
        file.write_all_at(slice, range.start * w)?;
        file.sync_all()
    })()
    .map_err(io_at(&temporary));
    let agreed = agree(comm, written);
    if comm.rank() != 0 {
        return agreed.map(|()| None);
    }
    // Read back in pieces, slice by slice: each must be what its rank
    // wrote (a write lost on the way would leave zeros), and the whole
    // file's checksum is what the manifest records.
    let read_back = || {
        let mut file = std::fs::File::open(&temporary)?;
        if file.metadata()?.len() != size || slice_sums.len() != comm.ranks() {
            return Err(io::Error::other(format!("not the layer's {size} bytes in {} slices", comm.ranks())));
        }
        let mut whole = crate::checksum::Checksum::new();
        let mut buffer = vec![0u8; 1 << 20];
        for (rank, &expected) in slice_sums.iter().enumerate() {
            let range = partition.range(rank);
            let mut left = (range.end - range.start) * w;
            let mut summed = crate::checksum::Checksum::new();
            while left > 0 {
                let piece = &mut buffer[..left.min(1 << 20) as usize];
                io::Read::read_exact(&mut file, piece)?;
                summed.update(piece);
                whole.update(piece);
                left -= piece.len() as u64;
            }
            if summed.finish() != expected {
                return Err(io::Error::other(format!("rank {rank}'s slice is not what it wrote")));
            }
        }
        std::fs::rename(&temporary, path)?;
        resumable::atomic::sync_directory(path)?;
        Ok(whole.finish())
    };
    let sum = agreed.and_then(|()| read_back().map_err(io_at(&temporary)));
    // (What failed leaves no temporary file behind.)
    if sum.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    Ok(Some((size, sum?)))
}
