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
pub fn lock_file(dir: &Path, name: &str) -> io::Result<Option<File>> {
    let file = OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(name))?;
    Ok(file.try_lock().is_ok().then_some(file))
}

/// Makes a rename in `path`'s directory durable.
pub(crate) fn sync_directory(path: &Path) -> io::Result<()> {
    let directory = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(directory)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

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
