//! The names of the files in a build directory, in one place
//! (`resumable::BUILD_DIRECTORY` lists their patterns, so that a build
//! never touches a file it did not create).

use std::path::{Path, PathBuf};

/// The finished tablebase in a build directory (our format).
pub const TABLEBASE_FILE: &str = "tablebase.owtb";
/// Its zstd-compressed copy, written when [`crate::tablebase::BuildOptions::compress`] asks.
pub const COMPRESSED_FILE: &str = "tablebase.owtb.zst";
/// The build's parameters and per-layer figures, as JSON.
pub const STATS_FILE: &str = "stats.json";
/// The same table in the engine's "Oware Endgames 2.0" layout.
pub const ENGINE_FILE: &str = "endgames-2.0.bin";

/// The file of finished layer `n` in a generation (`Manifest::generation`).
pub(crate) fn layer_path(dir: &Path, generation: u32, n: usize) -> PathBuf {
    dir.join(layer_name(generation, n))
}

pub(crate) fn layer_name(generation: u32, n: usize) -> String {
    match generation {
        0 => format!("layer-{n:02}.bin"),
        g => format!("layer-{n:02}-g{g}.bin"),
    }
}

/// The statistics of finished layer `n` in a generation.
pub(crate) fn stats_path(dir: &Path, generation: u32, n: usize) -> PathBuf {
    dir.join(stats_name(generation, n))
}

pub(crate) fn stats_name(generation: u32, n: usize) -> String {
    match generation {
        0 => format!("layer-{n:02}.stats"),
        g => format!("layer-{n:02}-g{g}.stats"),
    }
}

pub(crate) fn checkpoint_path(dir: &Path, n: usize, sequence: u64) -> PathBuf {
    dir.join(checkpoint_name(n, sequence))
}

/// The name of [`checkpoint_path`] (`resumable::BUILD_DIRECTORY` lists its
/// pattern).
pub(crate) fn checkpoint_name(n: usize, sequence: u64) -> String {
    format!("checkpoint-{n:02}-{sequence:06}.zst")
}

/// Where checkpoint `sequence` of layer `n` is decompressed to be read
/// (mapped, then unlinked at once: a file left by a crash is a stray
/// temporary, `resumable::BUILD_DIRECTORY` lists its pattern).
pub(crate) fn checkpoint_content_path(dir: &Path, n: usize, sequence: u64) -> PathBuf {
    dir.join(format!("checkpoint-{n:02}-{sequence:06}.content.tmp"))
}

/// The name of rank `rank`'s part of checkpoint `sequence` of layer `n`
/// (`resumable::BUILD_DIRECTORY` lists its pattern).
pub(crate) fn part_name(n: usize, sequence: u64, rank: usize) -> String {
    format!("checkpoint-{n:02}-{sequence:06}-r{rank:04}.zst")
}
