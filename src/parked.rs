//! Byte arrays parked on disk while a phase does not read them, so that
//! their room goes to the phase that runs (`docs/tablebase-build.md`,
//! "Memory, phase by phase").
//!
//! The arrays go to a scratch file that loses its name as soon as it is
//! made: nothing of it is left in the directory if the process dies, and
//! the kernel frees its blocks when the file is closed. They are written
//! in order, each freed once written, synced, and their pages dropped from
//! the page cache; reading them back checks a checksum of every byte, so a
//! disk that returns other bytes is an error, never a changed array.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

use crate::checksum::Checksum;

/// Bytes moved between memory and the file at a time.
const CHUNK: usize = 1 << 20;

/// Arrays parked in a scratch file, to be read back by [`Parked::restore_each`].
#[derive(Debug)]
pub(crate) struct Parked {
    file: File,
    /// The directory the file was made in (for messages).
    dir: PathBuf,
    /// Per array, in order: its length and the checksum of its bytes.
    arrays: Vec<(usize, u64)>,
}

/// Makes each scratch file's name unique within the process (a build may
/// park more than once; tests park on several threads).
static NEXT: AtomicU64 = AtomicU64::new(0);

/// An error of the scratch file, with what was being done and where.
fn failed(what: &str, dir: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what} arrays parked in {}: {e}", dir.display()))
}

impl Parked {
    /// Writes `arrays`, in order, to a new scratch file in `dir`, freeing
    /// each once it is written.
    pub(crate) fn park(dir: &Path, arrays: Vec<Vec<AtomicU8>>) -> io::Result<Parked> {
        let name = format!(".parked-{}-{}", std::process::id(), NEXT.fetch_add(1, Relaxed));
        let path = dir.join(name);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| failed("making a file for", dir, e))?;
        // (The open file keeps its blocks; the directory keeps nothing.)
        std::fs::remove_file(&path).map_err(|e| failed("unlinking the file of", dir, e))?;
        let mut parked = Vec::with_capacity(arrays.len());
        let mut buffer = Vec::with_capacity(CHUNK);
        for array in arrays {
            let mut checksum = Checksum::new();
            for chunk in array.chunks(CHUNK) {
                buffer.clear();
                buffer.extend(chunk.iter().map(|a| a.load(Relaxed)));
                checksum.update(&buffer);
                file.write_all(&buffer).map_err(|e| failed("writing", dir, e))?;
            }
            parked.push((array.len(), checksum.finish()));
            drop(array);
        }
        file.sync_data().map_err(|e| failed("syncing", dir, e))?;
        drop_cached_pages(&file);
        Ok(Parked { file, dir: dir.to_path_buf(), arrays: parked })
    }

    /// Reads array `k` back a chunk at a time, handing each to `take`,
    /// then checks its checksum: an error means some chunk handed over was
    /// not what was written (the caller discards what it made of them).
    fn read_array(&self, k: usize, mut take: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let (len, written) = self.arrays[k];
        let start: usize = self.arrays[..k].iter().map(|&(len, _)| len).sum();
        let mut checksum = Checksum::new();
        let mut buffer = vec![0u8; CHUNK.min(len)];
        let mut done = 0;
        while done < len {
            let chunk = &mut buffer[..(len - done).min(CHUNK)];
            self.file
                .read_exact_at(chunk, (start + done) as u64)
                .map_err(|e| failed("reading back", &self.dir, e))?;
            checksum.update(chunk);
            take(chunk)?;
            done += chunk.len();
        }
        if checksum.finish() != written {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the arrays parked in {} read back other bytes than were written",
                    self.dir.display()
                ),
            ));
        }
        Ok(())
    }

    /// Writes array `k`'s bytes to `out` as they were parked (for a
    /// snapshot taken while it waits), its checksum checked.
    pub(crate) fn write_array(&self, k: usize, out: &mut dyn Write) -> io::Result<()> {
        self.read_array(k, |chunk| out.write_all(chunk))
    }

    /// Writes `byte(b)` for each byte `b` of array `k` to `out`, its
    /// checksum checked (a snapshot stores some arrays transformed).
    pub(crate) fn write_array_mapped(
        &self,
        k: usize,
        out: &mut dyn Write,
        byte: impl Fn(u8) -> u8,
    ) -> io::Result<()> {
        let mut mapped = Vec::new();
        self.read_array(k, |chunk| {
            mapped.clear();
            mapped.extend(chunk.iter().map(|&b| byte(b)));
            out.write_all(&mapped)
        })
    }

    /// The parked arrays mapped read-only, once the checksum of each of
    /// `arrays` has been checked through the mapping: a phase that reads a
    /// few arrays in passes (the threshold games read the bounds once a
    /// threshold) reads them from the page cache, which the kernel may
    /// reclaim, rather than from memory of its own.
    pub(crate) fn map_checked(&self, arrays: &[usize]) -> io::Result<ParkedMap> {
        // Safety: the file has no name, so no other process can open it,
        // and this process wrote it once, in `park`, before mapping it:
        // the mapping is never written under.
        let map = unsafe { memmap2::Mmap::map(&self.file) }.map_err(|e| failed("mapping", &self.dir, e))?;
        let mut starts = Vec::with_capacity(self.arrays.len());
        let mut start = 0;
        for &(len, _) in &self.arrays {
            starts.push(start);
            start += len;
        }
        if map.len() != start {
            return Err(failed(
                "mapping",
                &self.dir,
                io::Error::new(io::ErrorKind::InvalidData, format!("{} bytes, not {start}", map.len())),
            ));
        }
        let mapped = ParkedMap { map, starts, lens: self.arrays.iter().map(|&(len, _)| len).collect() };
        for &k in arrays {
            if crate::checksum::checksum(mapped.array(k)) != self.arrays[k].1 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the arrays parked in {} map to other bytes than were written",
                        self.dir.display()
                    ),
                ));
            }
        }
        Ok(mapped)
    }

    /// The arrays, in the order they were parked, once every byte read back
    /// matches the checksum of what was written. `arrived(back)` is called
    /// as each array is back and checked, with the arrays back so far (the
    /// one just read last), before the next is read: the caller may free
    /// what an arrived array makes unneeded before the next one takes its
    /// room.
    pub(crate) fn restore_each(
        self,
        mut arrived: impl FnMut(&[Vec<AtomicU8>]),
    ) -> io::Result<Vec<Vec<AtomicU8>>> {
        let mut arrays = Vec::with_capacity(self.arrays.len());
        for (k, &(len, _)) in self.arrays.iter().enumerate() {
            let mut array: Vec<AtomicU8> = Vec::with_capacity(len);
            self.read_array(k, |chunk| {
                array.extend(chunk.iter().map(|&b| AtomicU8::new(b)));
                Ok(())
            })?;
            arrays.push(array);
            arrived(&arrays);
        }
        Ok(arrays)
    }
}

/// Parked arrays mapped read-only ([`Parked::map_checked`]).
#[derive(Debug)]
pub(crate) struct ParkedMap {
    map: memmap2::Mmap,
    /// Per array: where it starts in the file, and its length.
    starts: Vec<usize>,
    lens: Vec<usize>,
}

impl ParkedMap {
    /// The bytes of array `k`.
    pub(crate) fn array(&self, k: usize) -> &[u8] {
        &self.map[self.starts[k]..self.starts[k] + self.lens[k]]
    }
}

/// Asks the kernel to drop the file's pages from its cache: they were
/// synced, so this frees their room at once rather than when memory runs
/// short. Only advice: nothing depends on it.
fn drop_cached_pages(file: &File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: posix_fadvise reads the descriptor and the range only; an
        // error is harmless (the pages stay cached until reclaimed).
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atomics(bytes: &[u8]) -> Vec<AtomicU8> {
        bytes.iter().map(|&b| AtomicU8::new(b)).collect()
    }

    fn plain(arrays: &[Vec<AtomicU8>]) -> Vec<Vec<u8>> {
        arrays.iter().map(|a| a.iter().map(|b| b.load(Relaxed)).collect()).collect()
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("oware-parked-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn arrays_come_back_byte_for_byte_and_leave_no_file() {
        let dir = scratch("round-trip");
        // Lengths across the chunk size, an empty array among them.
        let arrays: Vec<Vec<u8>> = [0, 1, CHUNK - 1, CHUNK, 2 * CHUNK + 17]
            .iter()
            .enumerate()
            .map(|(k, &len)| (0..len).map(|i| (i * 31 + k * 7) as u8).collect())
            .collect();
        let parked = Parked::park(&dir, arrays.iter().map(|a| atomics(a)).collect()).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the scratch file has no name");
        assert_eq!(plain(&parked.restore_each(|_| ()).unwrap()), arrays);
        // Each array is handed over as it arrives, before the next is read.
        let parked = Parked::park(&dir, arrays.iter().map(|a| atomics(a)).collect()).unwrap();
        let mut arrived = Vec::new();
        let back = parked.restore_each(|back| arrived.push(plain(back))).unwrap();
        assert_eq!(plain(&back), arrays);
        assert_eq!(arrived, (1..=arrays.len()).map(|k| arrays[..k].to_vec()).collect::<Vec<_>>());
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn a_changed_byte_on_disk_is_refused() {
        let dir = scratch("changed");
        let parked = Parked::park(&dir, vec![atomics(&[1, 2, 3]), atomics(&[4; 5000])]).unwrap();
        let mut out = Vec::new();
        parked.write_array(1, &mut out).unwrap();
        assert_eq!(out, [4; 5000]);
        parked.file.write_all_at(&[5], 1000).unwrap();
        assert_eq!(parked.write_array(0, &mut Vec::new()).unwrap(), ());
        let error = parked.write_array(1, &mut Vec::new()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        let error = parked.restore_each(|_| ()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn mapped_arrays_are_the_parked_bytes_and_a_changed_one_is_refused() {
        let dir = scratch("mapped");
        let arrays: Vec<Vec<u8>> = [3, CHUNK + 5, 0, 700]
            .iter()
            .map(|&len| (0..len).map(|i| (i * 13 + len) as u8).collect())
            .collect();
        let parked = Parked::park(&dir, arrays.iter().map(|a| atomics(a)).collect()).unwrap();
        let mapped = parked.map_checked(&[0, 1, 2, 3]).unwrap();
        for (k, array) in arrays.iter().enumerate() {
            assert_eq!(mapped.array(k), &array[..], "array {k}");
        }
        drop(mapped);
        parked.file.write_all_at(&[9], 3 + 10).unwrap();
        assert_eq!(parked.map_checked(&[0, 3]).unwrap().array(3), &arrays[3][..]);
        let error = parked.map_checked(&[1]).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn a_missing_directory_is_an_error_that_names_it() {
        let dir = std::env::temp_dir().join(format!("oware-parked-none-{}", std::process::id()));
        let error = Parked::park(&dir, vec![atomics(&[1])]).unwrap_err();
        assert!(error.to_string().contains(&dir.display().to_string()), "{error}");
    }
}
