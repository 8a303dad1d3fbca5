//! Crash-safe file output: write to a temporary file in the same directory,
//! fsync it, rename it over the target, fsync the directory. A reader sees
//! the old file or the new one, never a torn one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `path` atomically with the bytes `write` produces. On error the
/// target is untouched and the temporary file removed. What stands at
/// `path` decides where the bytes go ([`output_target`]): a symbolic link
/// is followed and its target replaced; a directory, device, FIFO or
/// socket is refused before anything is written.
pub fn write_atomically<F>(path: &Path, write: F) -> io::Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
    let target = output_target(path)?;
    let path = target.as_path();
    let temporary = temporary_path(path);
    let result = (|| {
        let file = OpenOptions::new().write(true).create(true).truncate(true).open(&temporary)?;
        let mut writer = BufWriter::with_capacity(1 << 20, file);
        write(&mut writer)?;
        let file = writer.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        fs::rename(&temporary, path)?;
        sync_directory(path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

/// Writes a whole byte slice atomically.
pub fn write_bytes_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomically(path, |w| w.write_all(bytes))
}

/// Most symbolic links followed from one output path (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The file an output written to `path` replaces, found before anything is
/// written, so that an output never replaces what it should not:
///
/// * nothing there, or a regular file: `path` itself;
/// * a symbolic link: followed (to the end of a chain of links), and the
///   file it leads to is the target, replaced atomically in its own
///   directory, the link kept; a link to nothing creates the file it names,
///   as writing through it would;
/// * a directory, a character or block device, a FIFO or a socket: an
///   error of kind [`io::ErrorKind::InvalidInput`] that says what stands
///   there. A device or FIFO cannot be replaced atomically, and replacing
///   it by a file would lose it (and a reader waiting on a FIFO would get
///   nothing).
///
/// Also refused: a path whose directory does not exist (kind
/// [`io::ErrorKind::NotFound`], naming the directory), so that work whose
/// output would be lost is refused before it starts.
pub fn output_target(path: &Path) -> io::Result<PathBuf> {
    let mut target = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let kind = match fs::symlink_metadata(&target) {
            Ok(meta) => meta.file_type(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return in_existing_directory(target),
            Err(e) => return Err(e),
        };
        if kind.is_file() {
            return Ok(target);
        }
        if !kind.is_symlink() {
            let what = in_words(&kind);
            let shown = if target == path {
                String::new()
            } else {
                format!(" (the link leads to {})", target.display())
            };
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{what} is there{shown}, not a regular file: an output never replaces one"),
            ));
        }
        let link = fs::read_link(&target)?;
        target = directory_of(&target).join(link);
    }
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("more than {MAX_LINKS} symbolic links in a row")))
}

/// `path` when its directory exists (and is a directory).
fn in_existing_directory(path: PathBuf) -> io::Result<PathBuf> {
    let dir = directory_of(&path);
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(path),
        Ok(_) => {
            Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a directory", dir.display())))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(io::Error::new(io::ErrorKind::NotFound, format!("no directory {}", dir.display())))
        }
        Err(e) => Err(e),
    }
}

/// What a file type is, in words.
fn in_words(kind: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_file() {
        "a file"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "something else"
    }
}

/// The temporary name used while `path` is being written.
pub fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Takes an exclusive lock on `dir/name` (created if missing) for as long
/// as the returned file lives; `Ok(None)` if another process holds it. The
/// kernel drops the lock when its holder dies, even by `kill -9`.
///
/// A lock can outlive its owner by a moment: the lock belongs to the open
/// file, and a process forked by any thread of the owner's program holds a
/// copy of every open file until it executes its program (which closes
/// them). On a busy machine that moment lasts milliseconds, so a lock that
/// was just released may still look held. A lock found held is therefore
/// asked for again for up to [`LOCK_PATIENCE`] before it counts as another
/// owner's; a real owner (a build, a growth) holds it far longer.
pub fn lock_file(dir: &Path, name: &str) -> io::Result<Option<File>> {
    let file = OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(name))?;
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(error)) => return Err(error),
        }
        if started.elapsed() >= LOCK_PATIENCE {
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(100));
    }
}

/// How long [`lock_file`] waits for a lock held only by a forked child's
/// copy of the owner's file to clear.
pub const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(1500);

/// Creates `dir` and its missing parents durably: each new directory's
/// entry is synced in its parent, so a power cut cannot take away a
/// directory whose files were synced.
pub(crate) fn create_directory_durably(dir: &Path) -> io::Result<()> {
    // What stands in the way, said in words ("File exists" named no cause).
    if let Some(blocked) = dir.ancestors().find(|d| !d.as_os_str().is_empty() && d.exists() && !d.is_dir()) {
        let what = fs::metadata(blocked).map(|m| in_words(&m.file_type())).unwrap_or("something else");
        let message = if blocked == dir {
            format!("{what} is there, not a directory")
        } else {
            format!("{} is {what}, not a directory", blocked.display())
        };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
    }
    let missing: Vec<&Path> =
        dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).collect();
    fs::create_dir_all(dir)?;
    for created in missing.iter().rev() {
        sync_directory(created)?;
    }
    Ok(())
}

/// The directory `path` names a file in: its parent, or the current
/// directory for a bare name.
pub(crate) fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Makes a rename in `path`'s directory durable.
pub(crate) fn sync_directory(path: &Path) -> io::Result<()> {
    File::open(directory_of(path))?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind of thing at an output path: a regular file is replaced, a
    /// link is followed (the link kept, what it leads to replaced or
    /// created), a directory, a device or a FIFO is refused and left as it
    /// is, and so is a path whose directory is missing.
    #[test]
    fn outputs_replace_files_follow_links_and_refuse_the_rest() {
        use std::os::unix::fs::{symlink, FileTypeExt};
        let dir = std::env::temp_dir().join(format!("oware-output-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("sub")).unwrap();
        // A regular file, and nothing.
        let file = dir.join("file");
        fs::write(&file, b"old").unwrap();
        write_bytes_atomically(&file, b"new").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"new");
        write_bytes_atomically(&dir.join("fresh"), b"x").unwrap();
        // A link to a file in another directory, by a relative path, and a
        // link to that link.
        let target = dir.join("sub").join("target");
        fs::write(&target, b"old").unwrap();
        let link = dir.join("link");
        symlink("sub/target", &link).unwrap();
        let chain = dir.join("chain");
        symlink("link", &chain).unwrap();
        write_bytes_atomically(&chain, b"through").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(fs::symlink_metadata(&chain).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"through");
        assert!(!dir.join("sub").join("target.tmp").exists() && !dir.join("chain.tmp").exists());
        // A link to nothing: the file it names is created.
        let dangling = dir.join("dangling");
        symlink("sub/created", &dangling).unwrap();
        write_bytes_atomically(&dangling, b"made").unwrap();
        assert_eq!(fs::read(dir.join("sub").join("created")).unwrap(), b"made");
        // A link cycle.
        symlink("loop-b", dir.join("loop-a")).unwrap();
        symlink("loop-a", dir.join("loop-b")).unwrap();
        let error = write_bytes_atomically(&dir.join("loop-a"), b"x").unwrap_err();
        assert!(error.to_string().contains("symbolic links in a row"), "{error}");
        // Refused, and left as they are.
        let fifo = dir.join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let to_fifo = dir.join("to-fifo");
        symlink("fifo", &to_fifo).unwrap();
        for (path, what) in [
            (dir.join("sub"), "a directory"),
            (PathBuf::from("/dev/null"), "a character device"),
            (fifo.clone(), "a FIFO"),
            (to_fifo, "a FIFO"),
        ] {
            let error = write_bytes_atomically(&path, b"x").unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{}", path.display());
            assert!(error.to_string().contains(what), "{error}");
        }
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        assert!(!Path::new("/dev/null.tmp").exists());
        // No such directory: refused, nothing created.
        let error = write_bytes_atomically(&dir.join("missing").join("file"), b"x").unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        assert!(error.to_string().contains("no directory"), "{error}");
        assert!(!dir.join("missing").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn directories_are_created_with_their_missing_parents_or_found() {
        let top = std::env::temp_dir().join(format!("oware-durable-{}", std::process::id()));
        let deep = top.join("a").join("b");
        create_directory_durably(&deep).unwrap();
        assert!(deep.is_dir());
        create_directory_durably(&deep).unwrap();
        let file = top.join("a").join("file");
        fs::write(&file, b"x").unwrap();
        let error = create_directory_durably(&file.join("c")).unwrap_err();
        assert!(error.to_string().ends_with("/a/file is a file, not a directory"), "{error}");
        let error = create_directory_durably(&file).unwrap_err();
        assert_eq!(error.to_string(), "a file is there, not a directory");
        fs::remove_dir_all(&top).unwrap();
    }

    /// The cause of a flaky test: while another thread forks children, a
    /// lock just dropped is still held by a child's copy of its file.
    #[test]
    fn a_lock_just_released_is_taken_again_while_children_are_forked() {
        let dir = std::env::temp_dir().join(format!("oware-lock-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let forking = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::process::Command::new("true").status();
                }
            })
        };
        let mut refused = 0;
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(1) {
            match lock_file(&dir, "test.lock").unwrap() {
                Some(lock) => drop(lock),
                None => refused += 1,
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        forking.join().unwrap();
        // Held for real, it is refused (after the patience).
        let held = lock_file(&dir, "test.lock").unwrap().expect("free");
        assert!(lock_file(&dir, "test.lock").unwrap().is_none());
        drop(held);
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(refused, 0);
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("oware-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("out.bin");
        write_bytes_atomically(&target, b"first").unwrap();
        write_bytes_atomically(&target, b"second").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"second");
        let failed = write_atomically(&target, |w| {
            w.write_all(b"torn")?;
            Err(io::Error::other("disk full"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&target).unwrap(), b"second");
        assert!(!temporary_path(&target).exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
