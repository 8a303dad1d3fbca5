//! Improving a finished build in place: chosen layers are searched again
//! with a larger budget, every layer is intersected with the proven
//! intervals it had (`docs/cycle-bounds.md` §6), the tightened bounds
//! reach every layer above, and all outputs are replaced together.
//!
//! A pass is an ordinary resumable build in the subdirectory `improve/`
//! that starts from the directory's own `tablebase.owtb`, so it survives
//! kill -9 like any build and a rerun with the same options resumes it.
//! When it is done it is committed:
//! 1. its layer files are linked (or copied) into the directory under the
//!    next generation's names (`layer-NN-gG.bin`), which no manifest names;
//! 2. the directory's manifest is replaced (atomically) by the pass's
//!    manifest with the new generation: this is the commit point;
//! 3. the pass's outputs replace the directory's, the compressed copy is
//!    rewritten, the previous generation's files and `improve/` are removed.
//!
//! A crash before 2 leaves the directory as it was (and the pass resumable);
//! a crash after 2 is finished by the next `improve`, before anything else.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::progress::Observer;
use crate::resumable::atomic::write_bytes_atomically;
use crate::resumable::{HeldDirectory, BUILD_DIRECTORY};
use crate::tablebase::directory::build::build;
use crate::tablebase::directory::manifest::Manifest;
use crate::tablebase::directory::names::layer_path;
use crate::tablebase::directory::names::stats_path;
use crate::tablebase::directory::names::COMPRESSED_FILE;
use crate::tablebase::directory::names::ENGINE_FILE;
use crate::tablebase::directory::names::STATS_FILE;
use crate::tablebase::directory::names::TABLEBASE_FILE;
use crate::tablebase::directory::options::{io_at, BuildError, BuildOptions, BuildReport};
use crate::tablebase::layers::PackedLayer;
use crate::tablebase::owtb::{write_compressed, Tablebase};
use crate::tablebase::params::{BuildParams, SearchBudget};

/// The subdirectory holding a pass in progress.
pub const PASS_DIR: &str = "improve";

/// What to improve and how.
#[derive(Clone, Debug)]
pub struct ImproveOptions {
    /// A directory holding a finished build.
    pub dir: PathBuf,
    /// The pass's budget: `min_seeds..=threshold_max_seeds` are the layers searched
    /// again (their open positions only).
    pub budget: SearchBudget,
    /// Least time between two checkpoints inside a layer, as for a build.
    pub checkpoint_every: Duration,
    /// Rewrite the zstd-compressed copy.
    pub compress: bool,
}

/// What an improvement did.
#[derive(Debug)]
pub enum Improvement {
    /// A pass ran (or resumed) and was committed as this generation.
    Committed {
        /// The generation the directory's layers now belong to.
        generation: u32,
        /// What the pass's build did.
        pass: BuildReport,
    },
    /// An interrupted commit was finished; no new pass ran.
    FinishedEarlierCommit {
        /// The generation whose commit was finished.
        generation: u32,
    },
}

/// Runs one improvement pass on `options.dir` (see the module comment).
pub fn improve(options: &ImproveOptions, observer: &dyn Observer) -> Result<Improvement, BuildError> {
    options.budget.check()?;
    let dir = &options.dir;
    if !dir.join("manifest").is_file() {
        let problem = "no build here (no manifest): build one with `endgames build` first".to_string();
        return Err(BuildError::Corrupt { path: dir.clone(), problem });
    }
    let held = HeldDirectory::take(dir, &BUILD_DIRECTORY)?;
    let manifest = read_manifest(dir)?;
    let Some(next_generation) = manifest.generation.checked_add(1) else {
        let problem = "the last generation number is taken: build the table anew to improve it".to_string();
        return Err(BuildError::Corrupt { path: dir.join("manifest"), problem });
    };
    if !manifest.complete() {
        let problem = format!(
            "the build is not finished ({} of {} layers): finish it with `endgames build` first",
            manifest.layers.len(),
            manifest.params.largest_layer() + 1
        );
        return Err(BuildError::Corrupt { path: dir.join("manifest"), problem });
    }
    let pass_dir = dir.join(PASS_DIR);
    if pass_dir.join("manifest").is_file() {
        let pass = read_manifest(&pass_dir)?;
        if pass.complete() && pass.layers == manifest.layers && manifest.generation > 0 {
            observer.line(&format!("finishing the commit of generation {}", manifest.generation));
            finish_commit(options, &manifest, None, observer)?;
            return Ok(Improvement::FinishedEarlierCommit { generation: manifest.generation });
        }
    }
    let largest = manifest.params.largest_layer();
    let asked = (options.budget.min_seeds, options.budget.threshold_max_seeds);
    if asked.1 > largest || asked.0 > asked.1 {
        return Err(BuildError::LayersOutside { dir: dir.clone(), asked, largest });
    }
    let table_path = dir.join(TABLEBASE_FILE);
    check_outputs_current(&table_path, &manifest)?;

    let pass_options = BuildOptions {
        dir: pass_dir.clone(),
        params: BuildParams::new(manifest.params.largest_layer(), options.budget)?,
        checkpoint_every: options.checkpoint_every,
        // (The commit renames the pass's plain table into place.)
        plain_table: true,
        compress: false,
        start_from: Some(table_path),
        keep_layers_spread: false,
    };
    let report = build(&pass_options, observer).map_err(|error| match error {
        BuildError::Parameters { found, wanted, .. } => BuildError::Corrupt {
            path: pass_dir.clone(),
            problem: format!(
                "an interrupted improvement pass with other parameters is here ({found}; asked for \
                 {wanted}): finish it with its own options, or remove this directory to drop it"
            ),
        },
        error => error,
    })?;

    // 1. The new generation's files, under names no manifest uses yet.
    let mut committed = read_manifest(&pass_dir)?;
    committed.generation = next_generation;
    for n in 0..=manifest.params.largest_layer() as usize {
        for path_in in [layer_path, stats_path] {
            let (from, to) = (path_in(&pass_dir, 0, n), path_in(dir, committed.generation, n));
            link_or_copy(&from, &to)?;
        }
    }
    crate::resumable::atomic::sync_directory(&dir.join("manifest")).map_err(io_at(dir))?;
    // 2. The commit point.
    held.commit_manifest(&committed.render())?;
    // 3. Outputs and cleaning up.
    finish_commit(options, &committed, Some(&manifest), observer)?;
    observer.line(&format!("committed generation {}", committed.generation));
    Ok(Improvement::Committed { generation: committed.generation, pass: report })
}

fn read_manifest(dir: &Path) -> Result<Manifest, BuildError> {
    let path = dir.join("manifest");
    let text = fs::read_to_string(&path).map_err(io_at(&path))?;
    Manifest::parse(&text, &path)
}

/// Refuses to start from a `tablebase.owtb` that is not the build's
/// layers: its per-layer checksums must be the manifest's, or (a layer
/// file of full records the table holds as value records) the checksum of
/// the layer file's entries in the table's width.
fn check_outputs_current(table_path: &Path, manifest: &Manifest) -> Result<(), BuildError> {
    let table = Tablebase::open(table_path).map_err(BuildError::StartFrom)?;
    let header = table.header();
    let dir = table_path.parent().unwrap_or(Path::new("."));
    let same_layer = |n: usize, h: &crate::tablebase::owtb::LayerRecord, m: &(u64, u64, u64, u64)| {
        h.checksum == m.1
            || crate::resumable::map_checked(&layer_path(dir, manifest.generation, n), m.0, m.1).is_ok_and(
                |map| {
                    PackedLayer::new(&map, h.entries)
                        .is_some_and(|layer| layer.canonical_checksum() == h.checksum)
                },
            )
    };
    let same = header.max_seeds == manifest.params.largest_layer()
        && header.layers.iter().zip(&manifest.layers).enumerate().all(|(n, (h, m))| same_layer(n, h, m));
    if !same {
        let problem = "does not hold the layers the manifest names: run `endgames build` on the directory \
                       to rewrite it"
            .to_string();
        return Err(BuildError::Corrupt { path: table_path.to_path_buf(), problem });
    }
    Ok(())
}

/// A hard link where the file system allows one, else a durable copy.
fn link_or_copy(from: &Path, to: &Path) -> Result<(), BuildError> {
    // Only a crashed commit can have left this name (no manifest names it).
    match fs::remove_file(to) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_at(to)(e)),
        _ => {}
    }
    if fs::hard_link(from, to).is_err() {
        let bytes = fs::read(from).map_err(io_at(from))?;
        write_bytes_atomically(to, &bytes).map_err(io_at(to))?;
    }
    Ok(())
}

/// After the commit point: the pass's outputs become the directory's, then
/// the files of the replaced generation and the pass directory go.
fn finish_commit(
    options: &ImproveOptions,
    committed: &Manifest,
    replaced: Option<&Manifest>,
    observer: &dyn Observer,
) -> Result<(), BuildError> {
    let dir = &options.dir;
    let pass_dir = dir.join(PASS_DIR);
    for name in [TABLEBASE_FILE, ENGINE_FILE, STATS_FILE] {
        let from = pass_dir.join(name);
        if from.is_file() {
            fs::rename(&from, dir.join(name)).map_err(io_at(&from))?;
        }
    }
    crate::resumable::atomic::sync_directory(&dir.join("manifest")).map_err(io_at(dir))?;
    let compressed = dir.join(COMPRESSED_FILE);
    if options.compress || compressed.is_file() {
        write_compressed(&dir.join(TABLEBASE_FILE), &compressed, observer).map_err(io_at(&compressed))?;
    }
    // The previous generation (when this run made the commit; otherwise
    // its number is all that is known, and its files are found by name).
    let previous = replaced.map_or(committed.generation - 1, |m| m.generation);
    for n in 0..=committed.params.largest_layer() as usize {
        let _ = fs::remove_file(layer_path(dir, previous, n));
        let _ = fs::remove_file(stats_path(dir, previous, n));
        let _ = fs::remove_file(layer_path(&pass_dir, 0, n));
        let _ = fs::remove_file(stats_path(&pass_dir, 0, n));
    }
    for name in ["manifest", "build.lock", TABLEBASE_FILE, ENGINE_FILE, STATS_FILE] {
        let _ = fs::remove_file(pass_dir.join(name));
    }
    // Only if nothing else is left in it: never someone else's files.
    let _ = fs::remove_dir(&pass_dir);
    Ok(())
}
