//! The resumable-directory protocol that tablebase builds
//! (`tablebase::build`, `tablebase::improve`) and opening books
//! (`book::store`) share: what makes a long job survive being killed at
//! any instant, and a damaged directory stay as it was found.
//!
//! * **One owner.** A lock file is held for the whole run
//!   ([`HeldDirectory::take`]); the kernel releases it when the process
//!   dies, even by `kill -9`.
//! * **Whole files.** Every file is committed atomically (temporary file,
//!   fsync, rename, fsync of the directory): a reader finds it whole or
//!   not at all ([`atomic`]).
//! * **The manifest is the commit point.** A text manifest names every
//!   file that counts, with its size and checksum, and is written after
//!   them: a crash in between leaves the old manifest naming old, intact
//!   files.
//! * **Checked reads.** Every file the manifest names is checked (size and
//!   checksum) before it is used ([`read_checked`], [`map_checked`]).
//! * **Nothing lost.** Where the manifest names no checkpoint, the one
//!   checkpoint of an interrupted first save is adopted; any other
//!   checkpoint means the manifest is damaged, and the job stops and
//!   deletes nothing ([`unnamed_checkpoint`]). Once
//!   everything the manifest names is checked, leftovers (temporary files
//!   and checkpoints it no longer names) are removed, only under names
//!   this kind of directory writes ([`names`]); no other file is touched.
//!
//! Each kind of directory owns the text of its manifest; this module owns
//! the protocol.

pub(crate) mod atomic;
pub(crate) mod names;

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::checksum::{checksum, Checksum};

pub(crate) use names::{DirectoryKind, BOOK_DIRECTORY, BUILD_DIRECTORY};

/// The manifest's name, in every kind of directory.
pub(crate) const MANIFEST: &str = "manifest";

/// Why the protocol refused or failed; each kind of directory turns it
/// into its own error type.
#[derive(Debug)]
pub(crate) enum DirectoryError {
    Io {
        path: PathBuf,
        error: io::Error,
    },
    /// Another process holds the directory.
    Busy {
        dir: PathBuf,
    },
    /// A file the manifest names (or the manifest) is damaged.
    Corrupt {
        path: PathBuf,
        problem: String,
    },
}

impl std::fmt::Display for DirectoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DirectoryError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            DirectoryError::Busy { dir } => {
                write!(f, "{}: another process holds this directory", dir.display())
            }
            DirectoryError::Corrupt { path, problem } => write!(f, "{}: {problem}", path.display()),
        }
    }
}

fn io_at(path: &Path) -> impl Fn(io::Error) -> DirectoryError + '_ {
    move |error| DirectoryError::Io { path: path.to_path_buf(), error }
}

/// A resumable directory this process holds (the lock is released on
/// drop).
pub(crate) struct HeldDirectory {
    dir: PathBuf,
    kind: &'static DirectoryKind,
    _lock: File,
}

impl HeldDirectory {
    /// Creates `dir` if needed and takes its lock, or reports it
    /// [`DirectoryError::Busy`].
    pub fn take(dir: &Path, kind: &'static DirectoryKind) -> Result<HeldDirectory, DirectoryError> {
        atomic::create_directory_durably(dir).map_err(io_at(dir))?;
        let lock = atomic::lock_file(dir, kind.lock)
            .map_err(io_at(&dir.join(kind.lock)))?
            .ok_or_else(|| DirectoryError::Busy { dir: dir.to_path_buf() })?;
        Ok(HeldDirectory { dir: dir.to_path_buf(), kind, _lock: lock })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes the file `name` atomically.
    pub fn commit(&self, name: &str, bytes: &[u8]) -> Result<(), DirectoryError> {
        let path = self.dir.join(name);
        atomic::write_bytes_atomically(&path, bytes).map_err(io_at(&path))
    }

    /// Writes the file `name` atomically from a stream, and returns its
    /// size and checksum (what the manifest records).
    pub fn commit_streamed(
        &self,
        name: &str,
        write: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
    ) -> Result<(u64, u64), DirectoryError> {
        let path = self.dir.join(name);
        write_counted(&path, write).map_err(io_at(&path))
    }

    /// Writes the manifest: the commit point of everything written
    /// before it.
    pub fn commit_manifest(&self, text: &str) -> Result<(), DirectoryError> {
        self.commit(MANIFEST, text.as_bytes())
    }

    /// Removes a file the manifest no longer names (a superseded
    /// checkpoint). A failure is harmless: the file is a stray that the
    /// next run removes.
    pub fn discard(&self, name: &str) {
        let _ = fs::remove_file(self.dir.join(name));
    }

    /// Removes temporary files of interrupted writes, and checkpoints and
    /// checkpoint parts other than `current` (the one the manifest names)
    /// and its parts; call it only once everything the manifest names has
    /// been checked.
    pub fn remove_strays(&self, current: Option<&str>) {
        names::remove_strays(&self.dir, self.kind, current);
    }
}

/// The manifest's text, `None` if there is none.
pub(crate) fn read_manifest(dir: &Path) -> Result<Option<String>, DirectoryError> {
    let path = dir.join(MANIFEST);
    match fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::InvalidData => {
            Err(DirectoryError::Corrupt { path, problem: "the manifest is not text".into() })
        }
        Err(e) => Err(io_at(&path)(e)),
    }
}

/// What a directory holds of a checkpoint the manifest does not name,
/// where the manifest names none (of the scope `prefix` selects).
///
/// A save writes the checkpoint, then the manifest that names it; from the
/// first save on the manifest names one. So where it names none:
/// * no checkpoint: nothing to resume, `Ok(None)`;
/// * exactly one, which `first_save` recognises as a scope's first
///   checkpoint, beside a manifest: a first save interrupted between its
///   two writes. The file is whole (committed atomically), and the caller
///   adopts it: `Ok(Some(name))`. Its content is checked when it is
///   decoded (each kind's checkpoint carries its own checksum), as the
///   manifest's record would have been;
/// * anything else (several, a later one, or no manifest at all) no
///   interrupted save leaves: the manifest is damaged, and the job stops
///   rather than throw the work away. `scope` says which checkpoint the
///   manifest should name (" of layer 7"), if it matters.
pub(crate) fn unnamed_checkpoint(
    dir: &Path,
    kind: &DirectoryKind,
    prefix: &str,
    scope: &str,
    manifest_found: bool,
    first_save: impl Fn(&str) -> bool,
) -> Result<Option<String>, DirectoryError> {
    let mut found = names::find_all(dir, prefix, kind.checkpoint);
    match found.len() {
        0 => Ok(None),
        1 if manifest_found && first_save(&found[0]) => Ok(found.pop()),
        _ => Err(DirectoryError::Corrupt {
            path: dir.join(MANIFEST),
            problem: format!(
                "{} names no checkpoint{scope}, yet {} {} there, which no interrupted save leaves: the manifest \
                 may be damaged (nothing was changed)",
                if manifest_found { "the manifest" } else { "there is no manifest: it" },
                found.join(", "),
                if found.len() == 1 { "is" } else { "are" },
            ),
        }),
    }
}

/// Reads a file the manifest names and checks its size and checksum.
pub(crate) fn read_checked(path: &Path, bytes: u64, sum: u64) -> Result<Vec<u8>, DirectoryError> {
    // The size first, so that a wrong file under the name is not read whole.
    let size = fs::metadata(path).map_err(io_at(path))?.len();
    if size != bytes {
        return Err(size_mismatch(path, size, bytes));
    }
    let data = fs::read(path).map_err(io_at(path))?;
    check(path, &data, bytes, sum)?;
    Ok(data)
}

/// Maps a file the manifest names read-only, after checking its size and
/// checksum.
pub(crate) fn map_checked(path: &Path, bytes: u64, sum: u64) -> Result<Mmap, DirectoryError> {
    let file = File::open(path).map_err(io_at(path))?;
    // Safety: files a manifest names are never modified in place (they are
    // replaced by renames), so the mapping stays what was checked.
    let map = unsafe { Mmap::map(&file) }.map_err(io_at(path))?;
    check(path, &map, bytes, sum)?;
    Ok(map)
}

fn size_mismatch(path: &Path, found: u64, recorded: u64) -> DirectoryError {
    let problem = format!("{found} bytes, the manifest records {recorded} (truncated?)");
    DirectoryError::Corrupt { path: path.to_path_buf(), problem }
}

fn check(path: &Path, data: &[u8], bytes: u64, sum: u64) -> Result<(), DirectoryError> {
    if data.len() as u64 != bytes {
        return Err(size_mismatch(path, data.len() as u64, bytes));
    }
    if checksum(data) != sum {
        return Err(DirectoryError::Corrupt {
            path: path.to_path_buf(),
            problem: "checksum mismatch".into(),
        });
    }
    Ok(())
}

/// Writes `path` atomically from a stream, and returns its size and
/// checksum.
pub(crate) fn write_counted(
    path: &Path,
    write: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
) -> io::Result<(u64, u64)> {
    let mut record = (0, 0);
    atomic::write_atomically(path, |file| {
        let mut counted = CountingWriter { inner: file, sum: Checksum::new(), bytes: 0 };
        write(&mut counted)?;
        record = (counted.bytes, counted.sum.finish());
        Ok(())
    })?;
    Ok(record)
}

/// Passes bytes through, counting them and their checksum.
struct CountingWriter<W> {
    inner: W,
    sum: Checksum,
    bytes: u64,
}

impl<W: io::Write> io::Write for CountingWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(data)?;
        self.sum.update(&data[..written]);
        self.bytes += written as u64;
        Ok(written)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
