//! What the integration tests share: scratch directories, the options of a
//! small tablebase build, the shipped table, and a reproducible
//! pseudo-random sequence.

// Each test binary includes this module and uses only part of it.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use oware::tablebase::build::BuildOptions;
use oware::tablebase::SearchBudget;

/// The shipped 12-seed tablebase.
pub const SHIPPED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/endgames-12.owtb.zst");

/// A fresh empty directory for one test: `oware-<test file>-<name>-<pid>`
/// in the system's temporary directory, emptied of whatever an earlier
/// run left there. Test binaries run side by side, and the tests of one
/// binary on threads: the process id and the name keep them apart.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "oware-{}-{name}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// A [`scratch`] directory removed when dropped, for tests that may stop
/// early (a failed `prop_assert!` returns before any clean-up line).
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        Scratch(scratch(name))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A one-process build of layers `0..=max_seeds` into `dir`: the default
/// search budget, no checkpoint inside a layer (a small layer takes well
/// under the hour), uncompressed, from scratch.
pub fn build_options(dir: &Path, max_seeds: u32) -> BuildOptions {
    BuildOptions {
        dir: dir.to_path_buf(),
        max_seeds,
        budget: SearchBudget::default(),
        checkpoint_every: Duration::from_secs(3600),
        compress: false,
        start_from: None,
        keep_layers_spread: false,
    }
}

/// The next number of a xorshift64 sequence (Marsaglia's 13, 7, 17): the
/// same times and choices on every run. `state` must not be 0.
pub fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
