//! Checkpoints on disk: the snapshot of the layer in progress that the
//! manifest names (`checkpoint-NN-SEQ.zst`), the parts ranks write beside
//! it, and the checks that decide whether a run resumes from one.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::checksum::checksum;
use crate::progress::Observer;
use crate::resumable::{self, HeldDirectory, BUILD_DIRECTORY};
use crate::tablebase::directory::manifest::Manifest;
use crate::tablebase::directory::names::{
    checkpoint_content_path, checkpoint_name, checkpoint_path, part_name,
};
use crate::tablebase::directory::options::{io_at, BuildError};
use crate::tablebase::layers::PackedLayer;
use crate::tablebase::snapshot::{Checkpointer, PartRecord, SnapshotParts};

/// Where the ranks keep their parts of layer `n`'s checkpoints: files
/// beside them in the build directory (shared by the ranks), each a zstd
/// frame with its own checksum; the checkpoint records each part's size
/// and checksum.
pub(super) struct DirectoryParts {
    pub(super) dir: PathBuf,
    pub(super) n: usize,
}

impl SnapshotParts for DirectoryParts {
    fn write_part_with(
        &self,
        sequence: u64,
        rank: usize,
        write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>,
    ) -> io::Result<PartRecord> {
        let path = self.dir.join(part_name(self.n, sequence, rank));
        // Streamed: compressed as it is produced, checksummed as written.
        let (bytes, checksum) = resumable::write_counted(&path, |file| {
            let mut encoder = zstd::stream::Encoder::new(file, 1)?;
            encoder.include_checksum(true)?;
            write(&mut encoder)?;
            encoder.finish()?;
            Ok(())
        })?;
        Ok(PartRecord { bytes, checksum })
    }

    fn read_part(&self, sequence: u64, rank: usize, record: PartRecord, limit: usize) -> io::Result<Vec<u8>> {
        let path = self.dir.join(part_name(self.n, sequence, rank));
        let compressed = resumable::read_checked(&path, record.bytes, record.checksum)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        // (The frame's own checksum is checked too.)
        zstd::bulk::decompress(&compressed, limit).map_err(|e| {
            let e = crate::compressed::in_words(e);
            io::Error::new(e.kind(), format!("{}: {e}", path.display()))
        })
    }
}

/// Removes checkpoint `sequence` of layer `n` and its parts, once the
/// manifest no longer names it.
pub(super) fn discard_checkpoint(held: &HeldDirectory, n: usize, sequence: u64) {
    held.discard(&checkpoint_name(n, sequence));
    let prefix = format!("checkpoint-{n:02}-{sequence:06}-r");
    if let Some(pattern) = BUILD_DIRECTORY.checkpoint_part {
        for part in resumable::names::find_all(held.path(), &prefix, pattern) {
            held.discard(&part);
        }
    }
}

/// Reads a file the manifest names and checks its size and checksum.
pub(super) fn read_checked(path: &Path, bytes: u64, sum: u64) -> Result<Vec<u8>, BuildError> {
    Ok(resumable::read_checked(path, bytes, sum)?)
}

/// Saves snapshots of the layer in progress.
pub(super) struct DirectoryCheckpoints<'m> {
    pub(super) held: &'m HeldDirectory,
    pub(super) parts: DirectoryParts,
    pub(super) manifest: &'m mut Manifest,
    /// Least time between two saves.
    pub(super) every: Duration,
    /// When the last save ended (or the layer started).
    pub(super) last: Instant,
    /// Saves made.
    pub(super) saved: u64,
}

impl Checkpointer for DirectoryCheckpoints<'_> {
    fn due(&mut self) -> bool {
        self.last.elapsed() >= self.every
    }

    fn save(&mut self, write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>) -> io::Result<()> {
        let n = self.manifest.layers.len();
        let sequence = self.manifest.checkpoint.map_or(1, |c| c.0 + 1);
        // Streamed: compressed as it is produced, checksummed as written.
        let (bytes, sum) = self
            .held
            .commit_streamed(&checkpoint_name(n, sequence), |file| {
                let mut encoder = zstd::stream::Encoder::new(file, 1)?;
                // The frame's checksum checks a checkpoint adopted without
                // a manifest record (`check_checkpoint`).
                encoder.include_checksum(true)?;
                write(&mut encoder)?;
                encoder.finish()?;
                Ok(())
            })
            .map_err(directory_io)?;
        let previous = self.manifest.checkpoint.replace((sequence, bytes, sum));
        self.held.commit_manifest(&self.manifest.render()).map_err(directory_io)?;
        if let Some((old, _, _)) = previous {
            discard_checkpoint(self.held, n, old);
        }
        self.saved += 1;
        self.last = Instant::now();
        Ok(())
    }

    fn parts(&self) -> Option<(&dyn SnapshotParts, u64)> {
        Some((&self.parts, self.manifest.checkpoint.map_or(1, |c| c.0 + 1)))
    }
}

/// A protocol error where the layer solver expects an I/O error.
fn directory_io(error: resumable::DirectoryError) -> io::Error {
    match error {
        resumable::DirectoryError::Io { error, .. } => error,
        other => io::Error::other(other.to_string()),
    }
}

/// The checkpoint of layer `n` the manifest names, if any: its sequence
/// number and content (its size and checksum checked, and its frame's).
pub(super) fn read_checkpoint(
    dir: &Path,
    manifest: &Manifest,
    n: u32,
) -> Result<Option<(u64, SnapshotContent)>, BuildError> {
    let Some((sequence, bytes, sum)) = manifest.checkpoint else { return Ok(None) };
    let path = checkpoint_path(dir, n as usize, sequence);
    let compressed = read_checked(&path, bytes, sum)?;
    let content_path = checkpoint_content_path(dir, n as usize, sequence);
    let most = crate::tablebase::solve::checkpoint::most_bytes(n);
    let content = SnapshotContent::decompress(&compressed[..], most, &content_path).map_err(|e| {
        // (The decoder's errors are the checkpoint's; the others, such as
        // a full disk, the content file's.)
        if e.kind() == io::ErrorKind::InvalidData {
            BuildError::Corrupt { path: path.clone(), problem: e.to_string() }
        } else {
            io_at(&content_path)(e)
        }
    })?;
    Ok(Some((sequence, content)))
}

/// A checkpoint's content, decompressed into a file of the build
/// directory and mapped read-only. A snapshot taken inside a big layer's
/// threshold games is as large as the layer's state (15 GB at 27 seeds);
/// held in memory beside the state rebuilt from it, it would take twice
/// what the layer needs, and the kernel would kill the resume. Mapped, its
/// pages are the file's, which the kernel drops as the state is rebuilt.
/// The file is unlinked as soon as it is mapped (the mapping keeps it
/// until dropped); one left by a crash before that is a stray temporary,
/// which the next run removes.
pub(super) struct SnapshotContent {
    map: memmap2::Mmap,
}

impl SnapshotContent {
    /// The content of the zstd frame `compressed`, at most `most` bytes
    /// (what its layout allows), written to `path` and mapped. An error of
    /// kind `InvalidData` is the frame's.
    fn decompress(compressed: &[u8], most: u64, path: &Path) -> io::Result<SnapshotContent> {
        let file =
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
        let mapped = (|| {
            let mut out = io::BufWriter::new(&file);
            let size = crate::compressed::copy_at_most(compressed, most, &mut out)?;
            io::Write::flush(&mut out)?;
            if size == 0 {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "an empty checkpoint"));
            }
            // Safety: the file is this process's own, just written, in the
            // build directory its lock keeps to this run; nothing writes
            // it while the map lives (it is unlinked below).
            unsafe { memmap2::Mmap::map(&file) }
        })();
        let removed = std::fs::remove_file(path);
        let map = mapped?;
        removed?;
        Ok(SnapshotContent { map })
    }
}

impl AsRef<[u8]> for SnapshotContent {
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}

impl std::ops::Deref for SnapshotContent {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

/// `checkpoint` of layer `n` if this version resumes it: not in the first
/// layout, and not in the second (which does not record a contradiction)
/// if the build starts from a table (`seed`); else none, and the layer is
/// built from its start.
pub(super) fn usable_checkpoint(
    checkpoint: Option<(u64, SnapshotContent)>,
    seed: Option<PackedLayer<'_>>,
    n: u32,
    observer: &dyn Observer,
) -> Option<(u64, SnapshotContent)> {
    let (sequence, snapshot) = checkpoint?;
    let lacks_contradiction =
        crate::tablebase::solve::checkpoint::lacks_contradiction(&snapshot) && seed.is_some();
    if crate::tablebase::solve::checkpoint::earlier_layout(&snapshot) || lacks_contradiction {
        observer.line(&format!(
            "layer {n}: checkpoint {sequence} has the layout of an earlier version; building the layer from its start"
        ));
        return None;
    }
    Some((sequence, snapshot))
}

/// Checks the checkpoint the manifest names. If it names none, a first
/// checkpoint of the unfinished layer whose save was interrupted before
/// the manifest named it is adopted once its zstd frame's own checksum has
/// been checked (the caller commits a manifest that names it) and its name
/// returned; any other checkpoint of that layer is refused (see
/// [`resumable::unnamed_checkpoint`]).
pub(super) fn check_checkpoint(dir: &Path, manifest: &mut Manifest) -> Result<Option<String>, BuildError> {
    let layer = manifest.layers.len();
    if let Some((sequence, bytes, sum)) = manifest.checkpoint {
        read_checked(&checkpoint_path(dir, layer, sequence), bytes, sum)?;
        return Ok(None);
    }
    let first = checkpoint_name(layer, 1);
    let unnamed = resumable::unnamed_checkpoint(
        dir,
        &BUILD_DIRECTORY,
        &format!("checkpoint-{layer:02}-"),
        &format!(" of layer {layer}"),
        true,
        |name| name == first,
    )?;
    let Some(name) = unnamed else { return Ok(None) };
    let path = dir.join(&name);
    let data = std::fs::read(&path).map_err(io_at(&path))?;
    let corrupt = |problem: String| BuildError::Corrupt { path: path.clone(), problem };
    // A frame without a checksum (written by an earlier version) cannot be
    // checked without the manifest's record.
    if !crate::tablebase::snapshot::frame_has_checksum(&data) {
        return Err(corrupt(
            "the manifest does not name this checkpoint, and it carries no checksum of its own (an \
             earlier version wrote it): remove it to build the layer from its start"
                .into(),
        ));
    }
    // Decoding checks the frame's checksum; the content is checked again
    // when the layer is restored from it.
    // (No further than a resume would read it.)
    let limit = crate::tablebase::solve::checkpoint::most_bytes(layer as u32);
    crate::compressed::copy_at_most(&data[..], limit, &mut io::sink())
        .map_err(|e| corrupt(format!("unreadable checkpoint: {e}")))?;
    manifest.checkpoint = Some((1, data.len() as u64, checksum(&data)));
    Ok(Some(name))
}
