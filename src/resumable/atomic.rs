//! Crash-safe file output: write to a temporary file in the same directory,
//! fsync it, rename it over the target, fsync the directory. A reader sees
//! the old file or the new one, never a torn one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `path` atomically with the bytes `write` produces. On error the
/// target is untouched and the temporary file removed.
pub fn write_atomically<F>(path: &Path, write: F) -> io::Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> io::Result<()>,
{
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

    #[test]
    fn directories_are_created_with_their_missing_parents_or_found() {
        let top = std::env::temp_dir().join(format!("oware-durable-{}", std::process::id()));
        let deep = top.join("a").join("b");
        create_directory_durably(&deep).unwrap();
        assert!(deep.is_dir());
        create_directory_durably(&deep).unwrap();
        let file = top.join("a").join("file");
        fs::write(&file, b"x").unwrap();
        assert!(create_directory_durably(&file.join("c")).is_err(), "a file is no parent");
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
