//! A build directory's finished layers: mapped read-only and checked
//! against the manifest (a build reopens them to go on), and a finished
//! build read as a table from them, for a build that wrote no
//! `tablebase.owtb` (`BuildOptions::plain_table`): the layer files are
//! then the one full copy of the table on disk.

use std::fs;
use std::path::{Path, PathBuf};

use crate::codec::Decoder;
use crate::rank::layer_size;
use crate::resumable;
use crate::tablebase::directory::checkpoints::read_checked;
use crate::tablebase::directory::manifest::Manifest;
use crate::tablebase::directory::names::{layer_path, stats_path, TABLEBASE_FILE};
use crate::tablebase::directory::options::{io_at, BuildError};
use crate::tablebase::layers::{LayerBytes, PackedLayer, SolvedLayers};
use crate::tablebase::owtb::{table_header, Tablebase};
use crate::tablebase::stats::LayerStats;

/// Maps and checks every finished layer the manifest names, with its
/// statistics.
pub(super) fn open_layers(
    dir: &Path,
    manifest: &Manifest,
) -> Result<(SolvedLayers, Vec<LayerStats>), BuildError> {
    let mut solved = SolvedLayers::new();
    let mut all_stats = Vec::new();
    for (n, &(bytes, sum, stats_bytes, stats_sum)) in manifest.layers.iter().enumerate() {
        let layer_file = layer_path(dir, manifest.generation, n);
        let map = resumable::map_checked(&layer_file, bytes, sum)?;
        // A checksum that matches proves the file is what was written, not
        // that it was written by a build: the entries' form is checked too,
        // as for any table read (the statistics below rely on it). Its
        // length gives its width: full records, or value records.
        let Some(layer) = PackedLayer::new(&map, layer_size(n as u32)) else {
            let problem = format!(
                "{} bytes do not hold the {} positions of layer {n}",
                map.len(),
                layer_size(n as u32)
            );
            return Err(BuildError::Corrupt { path: layer_file, problem });
        };
        if let Some(index) = layer.first_malformed(n as u32) {
            return Err(BuildError::Corrupt {
                path: layer_file,
                problem: format!("entry {index} is malformed"),
            });
        }
        let len = map.len();
        solved.push(LayerBytes::Mapped { map, offset: 0, len });
        let stats_file = stats_path(dir, manifest.generation, n);
        let data = read_checked(&stats_file, stats_bytes, stats_sum)?;
        let mut stats = LayerStats::decode(&mut Decoder::new(&data))
            .map_err(|e| BuildError::Corrupt { path: stats_file.clone(), problem: e.to_string() })?;
        if stats.positions != layer_size(n as u32) || stats.seeds != n as u32 {
            return Err(BuildError::Corrupt {
                path: stats_file,
                problem: format!(
                    "statistics of layer {} with {} positions, expected layer {n} with {}",
                    stats.seeds,
                    stats.positions,
                    layer_size(n as u32)
                ),
            });
        }
        stats.finish(solved.layer(n as u32));
        all_stats.push(stats);
    }
    Ok((solved, all_stats))
}

/// The finished build in `dir` as a table: its header is the one its
/// `tablebase.owtb` has or would have (the same parameters, layer
/// widths and checksums), its layers the mapped layer files. Opening
/// reads every layer once, for the checksums the manifest records and
/// the header's.
pub fn open_finished(dir: &Path) -> Result<Tablebase, BuildError> {
    let manifest_path = dir.join("manifest");
    let text = fs::read_to_string(&manifest_path).map_err(io_at(&manifest_path))?;
    let manifest = Manifest::parse(&text, &manifest_path)?;
    if !manifest.complete() {
        let problem = format!(
            "the build is not finished: {} of its {} layers are",
            manifest.layers.len(),
            manifest.params.largest_layer() + 1
        );
        return Err(BuildError::Corrupt { path: dir.to_path_buf(), problem });
    }
    let (solved, _) = open_layers(dir, &manifest)?;
    let header = table_header(&manifest.params, manifest.seed, |n| solved.layer(n)).map_err(io_at(dir))?;
    Tablebase::from_layers(header, solved.into_layers(), dir)
        .map_err(|e| BuildError::Corrupt { path: dir.to_path_buf(), problem: e.to_string() })
}

/// Where the table a path names is.
pub enum TableAt {
    /// In one file: a `.owtb` or `.owtb.zst` file named, or a build
    /// directory's `tablebase.owtb`.
    File(PathBuf),
    /// In the layer files of a build directory that wrote no
    /// `tablebase.owtb` ([`open_finished`]).
    Layers(PathBuf),
}

/// Where the table `path` names is: the file itself, a build directory's
/// `tablebase.owtb`, or the layers of a build directory with a manifest
/// and no `tablebase.owtb`. Any other directory is named as a file, for
/// the reader to refuse it as a directory.
pub fn table_at(path: &Path) -> TableAt {
    let file = path.join(TABLEBASE_FILE);
    if !path.is_dir() {
        TableAt::File(path.to_path_buf())
    } else if file.exists() {
        TableAt::File(file)
    } else if path.join("manifest").is_file() {
        TableAt::Layers(path.to_path_buf())
    } else {
        TableAt::File(path.to_path_buf())
    }
}
