//! A tablebase build in a directory: layer after layer, resumable after any
//! interruption, ending in the same bytes whatever happened.
//!
//! The directory holds
//! * `manifest`: the parameters, the finished layers and the latest
//!   checkpoint, with sizes and checksums. It is written last, atomically,
//!   so it only ever names files that are complete and durable;
//! * `layer-NN.bin` (packed entries) and `layer-NN.stats` per finished layer;
//! * `checkpoint-NN-SEQ.zst`: a snapshot of the layer in progress;
//! * once complete: `tablebase.owtb`, `tablebase.owtb.zst` and `stats.json`.
//!
//! Running the build again resumes: the parameters must match (a larger
//! largest layer extends a build, since no layer depends on the layers above
//! it), every file the manifest names must have its recorded size and
//! checksum, or the build stops with an error and touches nothing. A
//! layer's first checkpoint that the manifest does not yet name (the run
//! was killed between the two writes of that save) is adopted, checked by
//! its zstd frame's own checksum; any other unnamed checkpoint of the
//! unfinished layer is refused as damage (`check_checkpoint`).
//!
//! This file runs the build: [`build`] and [`build_across`], rank 0's part
//! (`lead`) and the others' (`follow`), opening the directory and each
//! layer's run, and making a layer durable. Its parts are beside it:
//! `options` (what is asked, why it stops), `manifest`, `checkpoints`,
//! `seed` (starting from a table), `protocol` (how the ranks keep in
//! step) and `outputs`.

use std::time::Instant;

use crate::checksum::checksum;
use crate::cluster::{Communicator, Solo};
use crate::codec::Encoder;
use crate::progress::{Observer, SILENT};
use crate::rank::layer_size;
use crate::resumable::{self, HeldDirectory, BUILD_DIRECTORY};
use crate::tablebase::across::bounds::RankGames;
use crate::tablebase::across::checkpoint::{restore, SpreadSnapshot};
use crate::tablebase::across::layer::{sum_traffic, Across, LayerTraffic};
use crate::tablebase::across::spread::{resume_spread, SpreadCheckpoints, SpreadError};
use crate::tablebase::directory::checkpoints::{
    check_checkpoint, discard_checkpoint, read_checkpoint, usable_checkpoint, DirectoryCheckpoints,
    DirectoryParts, SnapshotContent,
};
use crate::tablebase::directory::finished::open_layers;
use crate::tablebase::directory::manifest::Manifest;
use crate::tablebase::directory::names::{
    checkpoint_name, checkpoint_path, layer_name, layer_path, stats_name,
};
use crate::tablebase::directory::outputs::write_outputs;
use crate::tablebase::directory::protocol::{
    agree, parse_record, read_status, record_bytes, status_bytes, write_layer_slices, PLAN_ACROSS,
    PLAN_FROM_CHECKPOINT, PLAN_RESUME_SPREAD,
};
use crate::tablebase::directory::seed::{seed_layer, StartFrom};
use crate::tablebase::layers::{LayerBytes, PackedLayer, SolvedLayers};
use crate::tablebase::snapshot::SnapshotParts;
use crate::tablebase::solve::checkpoint::KeptSnapshot;
use crate::tablebase::solve::solver::{Cursor, LayerError, LayerSolver, Step, LEFT_UNDECIDED};
use crate::tablebase::solve::tuning::PARK_FROM;
use crate::tablebase::stats::LayerStats;

// The public names of a build, where they have always been.
pub use crate::tablebase::directory::options::{BuildError, BuildOptions, BuildReport};
pub use crate::tablebase::directory::outputs::stats_json;

/// Builds (or resumes building) the tablebase described by `options`,
/// reporting its progress and one line per event worth telling to
/// `observer`.
pub fn build(options: &BuildOptions, observer: &dyn Observer) -> Result<BuildReport, BuildError> {
    build_across(&Solo, options, observer)
}

/// [`build`] with every rank of `comm` taking part (all ranks call it with
/// the same options; the build directory must be the same directory for
/// all, on storage they share). Rank 0 leads: it alone writes to the
/// directory (but for each rank's part of a checkpoint taken in a layer
/// kept spread or inside the games the ranks play together, and its slice
/// of a layer kept spread), and it alone reports to its `observer`. Each
/// fresh layer's retrograde analysis and component search are spread over
/// the ranks by index range (`tablebase::across::layer`); then either the
/// layer is kept spread to its end (`BuildOptions::keep_layers_spread`),
/// or rank 0 leads its cycle phases, in which every rank plays the large
/// components' threshold games. A layer resumed from a checkpoint goes on
/// kept spread if it was, and as many ranks resume it; else rank 0 leads
/// it. The files are the same bytes as with one process
/// (`docs/distributed-build.md`).
pub fn build_across(
    comm: &dyn Communicator,
    options: &BuildOptions,
    observer: &dyn Observer,
) -> Result<BuildReport, BuildError> {
    // (`options.params` were checked when made: `BuildParams::new`.)
    if comm.rank() == 0 {
        lead(comm, options, observer)
    } else {
        follow(comm, options)
    }
}

/// A layer solved on rank 0: its packed entries, for rank 0 to write
/// (`finish_layer`); or, kept spread, its file written by every rank, of
/// this size and checksum (`write_layer_slices`).
enum LayerDone {
    Packed(Vec<u8>, LayerStats),
    Written((u64, u64), LayerStats),
}

/// Rank 0's part (the whole build when it is alone).
fn lead(
    comm: &dyn Communicator,
    options: &BuildOptions,
    observer: &dyn Observer,
) -> Result<BuildReport, BuildError> {
    let opened = open_build(options, observer);
    comm.broadcast(status_bytes(&opened, |o| o.manifest.render().into_bytes()));
    let Opened { held, mut manifest, mut solved, mut report, start_from } = opened?;
    agree(comm, Ok(()))?;
    for n in manifest.layers.len() as u32..=options.params.largest_layer() {
        let seed = agree(comm, seed_layer(&start_from, n))?;
        // A layer resumed from its checkpoint goes on from it: kept spread,
        // each rank from the parts that cover its range, if it was kept
        // spread and is not to be gathered; else led by rank 0.
        // (A checkpoint that cannot be read fails the layer below.)
        let checkpoint =
            read_checkpoint(&options.dir, &manifest, n).map(|c| usable_checkpoint(c, seed, n, observer));
        let spread_snapshot = checkpoint.as_ref().ok().and_then(Option::as_ref).and_then(|(_, bytes)| {
            let snapshot = SpreadSnapshot::decode(bytes, n).ok()?;
            let ranks = comm.ranks();
            (ranks > 1 && options.keep_layers_spread).then_some(snapshot)
        });
        let plan = match (&checkpoint, &spread_snapshot) {
            (Ok(None), _) if comm.ranks() > 1 => PLAN_ACROSS,
            (_, Some(_)) => PLAN_RESUME_SPREAD,
            _ => PLAN_FROM_CHECKPOINT,
        };
        comm.broadcast(vec![plan]);
        // The other ranks play the large components' games either way.
        let others = (comm.ranks() > 1).then_some(comm);
        let mut games_from = comm.traffic();
        let mut kept_spread = false;
        let layer_file = layer_path(&options.dir, manifest.generation, n as usize);
        let result = if plan == PLAN_ACROSS || plan == PLAN_RESUME_SPREAD {
            let parts = DirectoryParts { dir: options.dir.clone(), n: n as usize };
            let (across, saved) = {
                let mut checkpoints = DirectoryCheckpoints {
                    held: &held,
                    parts,
                    manifest: &mut manifest,
                    every: options.checkpoint_every,
                    last: Instant::now(),
                    saved: 0,
                };
                let lead = SpreadCheckpoints::Lead(&mut checkpoints);
                let across = match &spread_snapshot {
                    Some(snapshot) => {
                        comm.broadcast(snapshot.encode());
                        let from = if snapshot.ranks == comm.ranks() {
                            "its part".to_string()
                        } else {
                            format!("the parts of {} ranks that cover its range", snapshot.ranks)
                        };
                        observer.line(&format!(
                            "layer {n}: resuming from checkpoint {}, each of {} ranks from {from}",
                            snapshot.sequence,
                            comm.ranks()
                        ));
                        report.resumed_checkpoint = true;
                        let before = comm.traffic();
                        let finished = resume_spread(
                            comm,
                            n,
                            &solved,
                            options.params.budget(),
                            seed,
                            observer,
                            snapshot,
                            lead,
                        );
                        let bounds_traffic = sum_traffic(comm, comm.traffic().since(before));
                        let ranks = comm.ranks();
                        let traffic = LayerTraffic {
                            seeds: n,
                            ranks,
                            bounds_traffic,
                            kept_spread: true,
                            ..Default::default()
                        };
                        Ok((Across::Finished(finished), traffic))
                    }
                    None => {
                        let keep = options.keep_layers_spread.then_some(lead);
                        crate::tablebase::across::layer::layer_across(
                            comm,
                            n,
                            &solved,
                            options.params.budget(),
                            seed,
                            observer,
                            keep,
                        )
                    }
                };
                (across, checkpoints.saved)
            };
            report.checkpoints_written += saved;
            match across {
                Ok((Across::Finished(spread), traffic)) => {
                    kept_spread = true;
                    if plan == PLAN_ACROSS {
                        observer.line(&traffic.line());
                    }
                    observer.line(&traffic.bounds_line());
                    report.traffic.push(traffic);
                    let verdict = match spread.finished.expect("rank 0 gets the figures") {
                        Ok(stats) => Ok(stats),
                        Err(SpreadError::Contradiction(contradiction)) => Err(BuildError::Contradiction {
                            source: options.start_from.clone().unwrap_or_default(),
                            contradiction,
                        }),
                        Err(SpreadError::Undecided(index)) => {
                            Err(BuildError::Invariant { layer: n, index, broken: LEFT_UNDECIDED })
                        }
                        Err(SpreadError::Failed { rank, problem }) => {
                            Err(BuildError::Peer { rank, problem: format!("layer {n}: {problem}") })
                        }
                    };
                    let go = verdict.as_ref().map(|_| ());
                    let written = write_layer_slices(
                        comm,
                        &layer_file,
                        n,
                        (&spread.slice, spread.width),
                        &spread.slice_sums,
                        go,
                    );
                    verdict
                        .and_then(|stats| Ok(LayerDone::Written(written?.expect("rank 0's record"), stats)))
                }
                Ok((Across::Gathered(whole), traffic)) => {
                    let whole = whole.expect("rank 0 gets the layer");
                    observer.line(&traffic.line());
                    report.traffic.push(traffic);
                    games_from = comm.traffic();
                    let cursor = Cursor::Resolving { k: 0, step: Step::Begin };
                    let start = (whole.solver, cursor, Some(whole.components));
                    run_layer(&held, &mut manifest, options, start, &mut report, others)
                        .map(|(bytes, stats)| LayerDone::Packed(bytes, stats))
                }
                Err(e) => {
                    Err(BuildError::Peer { rank: 0, problem: format!("layer {n}: a rank's arrays: {e}") })
                }
            }
        } else {
            layer_start(checkpoint, options, &solved, seed, observer, &mut report)
                .and_then(|start| run_layer(&held, &mut manifest, options, start, &mut report, others))
                .map(|(bytes, stats)| LayerDone::Packed(bytes, stats))
        }
        .and_then(|done| {
            let stats = match done {
                LayerDone::Packed(bytes, stats) => {
                    finish_layer(&held, &mut manifest, n, &bytes, &stats)?;
                    stats
                }
                LayerDone::Written(record, stats) => {
                    record_layer(&held, &mut manifest, n, record, &stats)?;
                    stats
                }
            };
            observer.line(&stats.table_row());
            report.layers.push(stats);
            Ok(manifest.layers[n as usize])
        });
        // (A layer kept spread played its games in `layer_across`.)
        if others.is_some() && !kept_spread {
            crate::tablebase::across::bounds::end_bounds(comm);
            let games = sum_traffic(comm, comm.traffic().since(games_from));
            match report.traffic.last_mut().filter(|t| plan == PLAN_ACROSS && t.seeds == n) {
                Some(traffic) => {
                    traffic.bounds_traffic = games;
                    observer.line(&traffic.bounds_line());
                }
                // (A resumed layer's games have no layer traffic to join.)
                None => {
                    let ranks = comm.ranks();
                    let resumed =
                        LayerTraffic { seeds: n, ranks, bounds_traffic: games, ..Default::default() };
                    observer.line(&resumed.bounds_line());
                }
            }
        }
        comm.broadcast(status_bytes(&result, |&(bytes, sum, _, _)| record_bytes(bytes, sum)));
        let (layer_bytes, layer_sum, _, _) = result?;
        let path = layer_path(&options.dir, manifest.generation, n as usize);
        let map =
            agree(comm, resumable::map_checked(&path, layer_bytes, layer_sum).map_err(BuildError::from))?;
        let len = map.len();
        solved.push(LayerBytes::Mapped { map, offset: 0, len });
    }
    let written = write_outputs(options, manifest.seed, &solved, &report, observer);
    comm.broadcast(status_bytes(&written, |_| Vec::new()));
    written?;
    Ok(report)
}

/// The part of a rank other than 0: the retrograde analysis of its range
/// of each fresh layer, its share of the large components' games, and the
/// finished layers mapped read-only from the shared directory. It writes
/// only its parts of the checkpoints taken inside those games, and its
/// slice of each layer kept spread.
fn follow(comm: &dyn Communicator, options: &BuildOptions) -> Result<BuildReport, BuildError> {
    let dir = &options.dir;
    let text = String::from_utf8_lossy(&read_status(comm.broadcast(Vec::new()))?).into_owned();
    let manifest = Manifest::parse(&text, &dir.join("manifest"));
    let opened = manifest.and_then(|manifest| {
        let start_from = match &options.start_from {
            Some(path) => Some(StartFrom::open(path, options.params.largest_layer())?),
            None => None,
        };
        let (solved, _) = open_layers(dir, &manifest)?;
        Ok((manifest, solved, start_from))
    });
    let (manifest, mut solved, start_from) = agree(comm, opened)?;
    let mut report = BuildReport { reused_layers: manifest.layers.len() as u32, ..BuildReport::default() };
    for n in manifest.layers.len() as u32..=options.params.largest_layer() {
        let seed = agree(comm, seed_layer(&start_from, n))?;
        let mut kept_spread = false;
        let plan = comm.broadcast(Vec::new());
        let parts = DirectoryParts { dir: dir.clone(), n: n as usize };
        let across = if plan == [PLAN_ACROSS] {
            let keep = options.keep_layers_spread.then_some(SpreadCheckpoints::Follow(&parts));
            // Only rank 0 reads what the ranks send (and reports its errors).
            crate::tablebase::across::layer::layer_across(
                comm,
                n,
                &solved,
                options.params.budget(),
                seed,
                &SILENT,
                keep,
            )
            .ok()
        } else if plan == [PLAN_RESUME_SPREAD] {
            // (Rank 0 has checked the snapshot; a damaged one stops all.)
            let snapshot = comm.broadcast(Vec::new());
            let snapshot =
                SpreadSnapshot::decode(&snapshot, n).unwrap_or_else(|_| SpreadSnapshot::unreadable(n));
            let checkpoints = SpreadCheckpoints::Follow(&parts);
            let before = comm.traffic();
            let finished = resume_spread(
                comm,
                n,
                &solved,
                options.params.budget(),
                seed,
                &SILENT,
                &snapshot,
                checkpoints,
            );
            let bounds_traffic = sum_traffic(comm, comm.traffic().since(before));
            let traffic = LayerTraffic {
                seeds: n,
                ranks: comm.ranks(),
                kept_spread: true,
                bounds_traffic,
                ..Default::default()
            };
            Some((Across::Finished(finished), traffic))
        } else {
            None
        };
        if let Some((across, traffic)) = across {
            if let Across::Finished(spread) = across {
                kept_spread = true;
                // (Rank 0 says whether to write, and reports failures.)
                let path = layer_path(dir, manifest.generation, n as usize);
                let _ = write_layer_slices(comm, &path, n, (&spread.slice, spread.width), &[], Ok(()));
            }
            report.traffic.push(traffic);
        }
        if !kept_spread {
            let games_from = comm.traffic();
            crate::tablebase::across::bounds::serve_bounds(comm, n, &parts);
            let games = sum_traffic(comm, comm.traffic().since(games_from));
            if let Some(traffic) = report.traffic.last_mut().filter(|t| t.seeds == n) {
                traffic.bounds_traffic = games;
            }
        }
        let record = read_status(comm.broadcast(Vec::new()))?;
        let mapped = parse_record(&record)
            .ok_or_else(|| BuildError::Peer { rank: 0, problem: "a malformed layer record".into() })
            .and_then(|(bytes, sum)| {
                let path = layer_path(dir, manifest.generation, n as usize);
                resumable::map_checked(&path, bytes, sum).map_err(BuildError::from)
            });
        let map = agree(comm, mapped)?;
        let len = map.len();
        solved.push(LayerBytes::Mapped { map, offset: 0, len });
    }
    read_status(comm.broadcast(Vec::new()))?;
    Ok(report)
}

/// A build directory taken and checked, ready for its next layer.
struct Opened {
    held: HeldDirectory,
    manifest: Manifest,
    solved: SolvedLayers,
    report: BuildReport,
    start_from: Option<StartFrom>,
}

/// Takes the directory, reads or writes its manifest, checks every file it
/// names, and maps the finished layers.
fn open_build(options: &BuildOptions, observer: &dyn Observer) -> Result<Opened, BuildError> {
    let dir = &options.dir;
    let held = HeldDirectory::take(dir, &BUILD_DIRECTORY)?;
    let start_from = match &options.start_from {
        Some(path) => Some(StartFrom::open(path, options.params.largest_layer())?),
        None => None,
    };
    if let (Some(path), Some(source)) = (&options.start_from, &start_from) {
        observer.line(&format!(
            "starting from {}: its layers 0 to {} are intersected with this build's",
            path.display(),
            source.provenance.layers - 1
        ));
    }
    let wanted = Manifest {
        params: options.params,
        seed: start_from.as_ref().map(|s| s.provenance),
        generation: 0,
        layers: Vec::new(),
        checkpoint: None,
    };
    let manifest_path = dir.join("manifest");
    // Nothing is written before every check has passed: a damaged or
    // foreign directory is left exactly as it was found.
    let (mut manifest, extended) = match resumable::read_manifest(dir)? {
        Some(text) => {
            let mut found = Manifest::parse(&text, &manifest_path)?;
            // A layer does not depend on how many layers follow it: a build
            // may be extended to more seeds (or cut to fewer, down to its
            // finished layers) with the same budget.
            let (had, wants) = (found.params.largest_layer(), wanted.params.largest_layer());
            let extendable = (found.params.budget(), found.seed) == (wanted.params.budget(), wanted.seed)
                && found.layers.len() <= wants as usize + 1;
            let extended = (had != wants && extendable).then_some(had);
            if extended.is_some() {
                found.params = wanted.params;
            }
            if !found.same_build(&wanted) {
                return Err(BuildError::Parameters {
                    dir: dir.clone(),
                    found: found.parameters(),
                    wanted: wanted.parameters(),
                });
            }
            (found, extended)
        }
        None => {
            // A new build, unless a file only a build writes is there: then
            // its manifest was lost, and its work is not thrown away.
            if let Some(name) = resumable::names::first_owned(dir, &BUILD_DIRECTORY) {
                return Err(BuildError::Corrupt {
                    path: manifest_path,
                    problem: format!(
                        "there is no manifest, yet {name} is there: this is a build whose manifest is \
                         lost, and nothing was changed (start a new build in an empty directory)"
                    ),
                });
            }
            held.commit_manifest(&wanted.render())?;
            (wanted, None)
        }
    };
    let mut report = BuildReport { reused_layers: manifest.layers.len() as u32, ..BuildReport::default() };
    let (solved, stats) = open_layers(dir, &manifest)?;
    report.layers = stats;
    let adopted = check_checkpoint(dir, &mut manifest)?;
    // The manifest changes only now: extended, or naming the checkpoint
    // of a first save that was interrupted before it could.
    if extended.is_some() || adopted.is_some() {
        held.commit_manifest(&manifest.render())?;
    }
    if let Some(was) = extended {
        observer.line(&format!("now building up to {} seeds (was {was})", manifest.params.largest_layer()));
    }
    if let Some(name) = adopted {
        observer.line(&format!(
            "layer {}: adopted {name}, saved just before the run stopped and before the manifest could name it",
            manifest.layers.len()
        ));
    }
    let current =
        manifest.checkpoint.map(|(sequence, _, _)| checkpoint_name(manifest.layers.len(), sequence));
    held.remove_strays(current.as_deref());
    if report.reused_layers > 0 {
        observer
            .line(&format!("resuming: layers 0..={} are finished and verified", report.reused_layers - 1));
    }
    Ok(Opened { held, manifest, solved, report, start_from })
}

/// The next layer's start on rank 0: its solver restored from its
/// checkpoint (as read by [`read_checkpoint`] and kept by
/// [`usable_checkpoint`]), or a fresh one.
fn layer_start<'a>(
    checkpoint: Result<Option<(u64, SnapshotContent)>, BuildError>,
    options: &BuildOptions,
    solved: &'a SolvedLayers,
    seed: Option<PackedLayer<'a>>,
    observer: &'a dyn Observer,
    report: &mut BuildReport,
) -> Result<LayerStart<'a>, BuildError> {
    let dir = &options.dir;
    let n = solved.len();
    let (solver, cursor, components) = match checkpoint? {
        Some((sequence, snapshot)) => {
            let path = checkpoint_path(dir, n as usize, sequence);
            let corrupt = |problem: String| BuildError::Corrupt { path: path.clone(), problem };
            let parts = DirectoryParts { dir: dir.clone(), n: n as usize };
            let parts = Some((&parts as &dyn SnapshotParts, sequence));
            // (Kept, mapped, while the layer runs: a resumed layer's games
            // read their state from it.)
            let content: KeptSnapshot = std::sync::Arc::new(snapshot);
            // (A snapshot taken inside the threshold games is checked
            // member by member against its children before it is resumed:
            // a pass over the layer, minutes at 27 seeds.)
            observer.line(&format!("layer {n}: reading and checking checkpoint {sequence}"));
            let restored = restore(n, solved, options.params.budget(), &content, parts)
                .map_err(|e| corrupt(format!("unreadable checkpoint: {e}")))?;
            observer.line(&format!("layer {n}: resuming from checkpoint {sequence}"));
            report.resumed_checkpoint = true;
            restored
        }
        None => (LayerSolver::new(n, solved, options.params.budget()), Cursor::Start, None),
    };
    let solver = match seed {
        Some(entries) => solver.with_seed(entries),
        None => solver,
    };
    // (The entries wait in the build's own directory during the component
    // search: a disk known to take the layer's files.)
    let solver = solver.with_parking(dir, PARK_FROM);
    Ok((solver.with_observer(observer), cursor, components))
}

/// A layer's solver, where it starts, and its components once known.
type LayerStart<'a> = (LayerSolver<'a>, Cursor, Option<crate::tablebase::solve::components::Components>);

/// Runs a layer's solver from `cursor` to its end, with checkpoints.
/// On rank 0 of several, `others` are the ranks that play the large
/// components' threshold games with it.
fn run_layer(
    held: &HeldDirectory,
    manifest: &mut Manifest,
    options: &BuildOptions,
    (solver, cursor, components): LayerStart,
    report: &mut BuildReport,
    others: Option<&dyn Communicator>,
) -> Result<(Vec<u8>, LayerStats), BuildError> {
    let dir = &options.dir;
    let n = manifest.layers.len();
    let parts = DirectoryParts { dir: dir.clone(), n };
    let mut checkpoints = DirectoryCheckpoints {
        held,
        parts,
        manifest,
        every: options.checkpoint_every,
        last: Instant::now(),
        saved: 0,
    };
    let result = match others {
        Some(comm) => solver.run_sharing(cursor, components, &mut checkpoints, &RankGames(comm)),
        None => solver.run(cursor, components, &mut checkpoints),
    };
    report.checkpoints_written += checkpoints.saved;
    result.map_err(|error| match error {
        LayerError::Io(error) => BuildError::Io { path: dir.clone(), error },
        LayerError::Contradiction(contradiction) => BuildError::Contradiction {
            source: options.start_from.clone().unwrap_or_default(),
            contradiction,
        },
        LayerError::Invariant { index, broken } => BuildError::Invariant { layer: n as u32, index, broken },
        LayerError::Labels(exhausted) => BuildError::Labels { layer: n as u32, exhausted },
    })
}

/// [`BuildError::Invariant`]: the solver handed over bytes of no record
/// width for its layer.
const NOT_A_LAYER: &str = "is in a layer handed over in bytes of no record width";

/// Makes layer `n` durable, then records it in the manifest.
fn finish_layer(
    held: &HeldDirectory,
    manifest: &mut Manifest,
    n: u32,
    bytes: &[u8],
    stats: &LayerStats,
) -> Result<(), BuildError> {
    // The solver hands the layer over in the width it is stored in
    // (`LayerEntries::records`: value records when every entry has one, a
    // third of the bytes on disk and in the page cache, where every layer
    // above reads them), so it is stored as it is, once its length is one
    // of a layer.
    if PackedLayer::new(bytes, layer_size(n)).is_none() {
        return Err(BuildError::Invariant { layer: n, index: 0, broken: NOT_A_LAYER });
    }
    held.commit(&layer_name(manifest.generation, n as usize), bytes)?;
    record_layer(held, manifest, n, (bytes.len() as u64, checksum(bytes)), stats)
}

/// Records layer `n`, whose file (of `size` bytes and checksum `sum`) is
/// written and durable: its statistics, then the manifest.
fn record_layer(
    held: &HeldDirectory,
    manifest: &mut Manifest,
    n: u32,
    (size, sum): (u64, u64),
    stats: &LayerStats,
) -> Result<(), BuildError> {
    let mut encoded = Encoder::default();
    stats.encode(&mut encoded);
    held.commit(&stats_name(manifest.generation, n as usize), &encoded.bytes)?;
    let old_checkpoint = manifest.checkpoint.take();
    manifest.layers.push((size, sum, encoded.bytes.len() as u64, checksum(&encoded.bytes)));
    held.commit_manifest(&manifest.render())?;
    if let Some((sequence, _, _)) = old_checkpoint {
        discard_checkpoint(held, n as usize, sequence);
    }
    Ok(())
}

#[cfg(test)]
mod resume_tests {
    //! Snapshots taken inside a large component's threshold games, resumed
    //! with another number of ranks (threads): one process's, resumed by a
    //! build across ranks, which play the rest of the games together; and
    //! one in parts written by three ranks, resumed by one process and by
    //! two ranks. Each ends with the files of a build never interrupted.

    use super::*;
    use crate::cluster::run_ranks;
    use crate::progress::SILENT;
    use crate::tablebase::across::bounds::{end_bounds, serve_bounds};
    use crate::tablebase::directory::checkpoints::read_checked;
    use crate::tablebase::directory::names::{part_name, ENGINE_FILE, TABLEBASE_FILE};
    use crate::tablebase::params::BuildParams;
    use crate::tablebase::params::SearchBudget;
    use crate::tablebase::snapshot::Checkpointer;
    use std::cell::Cell;
    use std::fs;
    use std::io;
    use std::path::Path;
    use std::sync::Mutex;
    use std::time::Duration;

    /// Keeps the largest snapshot offered: inside the giant component's
    /// games it carries their state, 4 bytes a member, on top of what every
    /// snapshot of the layer holds.
    #[derive(Default)]
    struct Largest(Vec<u8>);

    impl Checkpointer for Largest {
        fn due(&mut self) -> bool {
            true
        }
        fn save(&mut self, write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>) -> io::Result<()> {
            let mut bytes = Vec::new();
            write(&mut bytes)?;
            if bytes.len() > self.0.len() {
                self.0 = bytes;
            }
            Ok(())
        }
    }

    /// Builds to 10 seeds: the threshold search stops at layer 6, not 7
    /// (layer 7's search is most of such a build's time, and these tests
    /// are about resuming the layers above it).
    fn options(dir: &Path, max_seeds: u32) -> BuildOptions {
        let budget = SearchBudget { threshold_max_seeds: 6, ..SearchBudget::default() };
        BuildOptions {
            dir: dir.to_path_buf(),
            params: BuildParams::new(max_seeds, budget).unwrap(),
            checkpoint_every: Duration::from_secs(3600),
            plain_table: true,
            compress: false,
            start_from: None,
            keep_layers_spread: false,
        }
    }

    /// The lines a build reports.
    #[derive(Default)]
    struct Lines(std::sync::Mutex<Vec<String>>);

    impl Observer for Lines {
        fn line(&self, text: &str) {
            self.0.lock().unwrap().push(text.to_string());
        }
    }

    #[test]
    fn ranks_resume_a_snapshot_taken_inside_the_games() {
        let base = std::env::temp_dir().join(format!("oware-games-resume-{}", std::process::id()));
        let (straight, resumed) = (base.join("straight"), base.join("resumed"));
        let _ = fs::remove_dir_all(&base);
        build(&options(&straight, 10), &SILENT).unwrap();
        build(&options(&resumed, 8), &SILENT).unwrap();
        // Layer 9's snapshot inside its giant component's games.
        let mut solved = SolvedLayers::new();
        for n in 0..9 {
            solved.push(LayerBytes::Owned(fs::read(layer_path(&straight, 0, n)).unwrap()));
        }
        let mut largest = Largest::default();
        LayerSolver::new(9, &solved, SearchBudget::default()).run(Cursor::Start, None, &mut largest).unwrap();
        let (_, cursor, _) = crate::tablebase::solve::checkpoint::restore(
            9,
            &solved,
            SearchBudget::default(),
            &largest.0,
            None,
        )
        .unwrap();
        assert!(matches!(cursor, Cursor::Resolving { step: Step::Bounds { .. }, .. }), "{cursor:?}");
        // Named by the manifest as the build's own checkpoint would be.
        let compressed = zstd::stream::encode_all(&largest.0[..], 1).unwrap();
        fs::write(resumed.join(checkpoint_name(9, 1)), &compressed).unwrap();
        let path = resumed.join("manifest");
        let mut manifest = Manifest::parse(&fs::read_to_string(&path).unwrap(), &path).unwrap();
        manifest.checkpoint = Some((1, compressed.len() as u64, crate::checksum::checksum(&compressed)));
        fs::write(&path, manifest.render()).unwrap();
        let lines = Lines::default();
        let reports = run_ranks(2, |comm| {
            let observer: &dyn Observer = if comm.rank() == 0 { &lines } else { &SILENT };
            build_across(comm, &options(&resumed, 10), observer)
        });
        let report = reports.into_iter().next().unwrap().unwrap();
        assert!(report.resumed_checkpoint);
        // Both ranks played the rest of the giant component's games.
        let lines = lines.0.into_inner().unwrap();
        let games = lines.iter().find(|l| l.starts_with("layer 9 across 2 ranks: threshold games"));
        let exchanges: Option<u64> = games.and_then(|l| l.split(' ').nth(7)).and_then(|w| w.parse().ok());
        assert!(exchanges.is_some_and(|e| e > 10), "{lines:?}");
        for name in [TABLEBASE_FILE, ENGINE_FILE] {
            assert!(
                fs::read(straight.join(name)).unwrap() == fs::read(resumed.join(name)).unwrap(),
                "{name}"
            );
        }
        fs::remove_dir_all(&base).unwrap();
    }

    /// The build directory's checkpoints, until one in parts has been
    /// saved; the next save then fails, as a killed job stops.
    struct StopAfterParts<'m> {
        inner: DirectoryCheckpoints<'m>,
        asked_for_parts: Cell<bool>,
        saved_parts: bool,
    }

    impl Checkpointer for StopAfterParts<'_> {
        fn due(&mut self) -> bool {
            true
        }
        fn save(&mut self, write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>) -> io::Result<()> {
            if self.saved_parts {
                return Err(io::Error::other("stopped after a snapshot in parts"));
            }
            self.inner.save(write)?;
            self.saved_parts = self.asked_for_parts.get();
            Ok(())
        }
        fn parts(&self) -> Option<(&dyn SnapshotParts, u64)> {
            self.asked_for_parts.set(true);
            self.inner.parts()
        }
    }

    fn copy_dir(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }

    fn checkpoint_files(dir: &Path) -> Vec<String> {
        let mut found = resumable::names::find_all(dir, "checkpoint-", BUILD_DIRECTORY.checkpoint);
        found.extend(resumable::names::find_all(dir, "checkpoint-", "checkpoint-#-#-r#.zst"));
        found
    }

    /// A build of layers 0 to 8 in `dir`, held, with its manifest and its
    /// layers: where the tests below solve layer 9 with checkpoints.
    fn built_to_eight(dir: &Path) -> (HeldDirectory, Mutex<Manifest>, SolvedLayers) {
        build(&options(dir, 8), &SILENT).unwrap();
        let held = HeldDirectory::take(dir, &BUILD_DIRECTORY).unwrap();
        let path = dir.join("manifest");
        let manifest = Manifest::parse(&fs::read_to_string(&path).unwrap(), &path).unwrap();
        let mut solved = SolvedLayers::new();
        for n in 0..9 {
            solved.push(LayerBytes::Owned(fs::read(layer_path(dir, 0, n)).unwrap()));
        }
        (held, Mutex::new(manifest), solved)
    }

    #[test]
    fn a_snapshot_in_parts_resumes_with_any_number_of_ranks() {
        let base = std::env::temp_dir().join(format!("oware-parts-resume-{}", std::process::id()));
        let (straight, alone, two) = (base.join("straight"), base.join("alone"), base.join("two"));
        let _ = fs::remove_dir_all(&base);
        build(&options(&straight, 10), &SILENT).unwrap();
        // Three ranks play layer 9's games with checkpoints at every
        // threshold, until the first snapshot in parts has been saved.
        let (held, manifest, solved) = built_to_eight(&alone);
        let stopped = run_ranks(3, |comm| {
            let parts = DirectoryParts { dir: alone.clone(), n: 9 };
            if comm.rank() != 0 {
                serve_bounds(comm, 9, &parts);
                return None;
            }
            let mut manifest = manifest.lock().unwrap();
            let inner = DirectoryCheckpoints {
                held: &held,
                parts,
                manifest: &mut manifest,
                every: Duration::ZERO,
                last: Instant::now(),
                saved: 0,
            };
            let mut checkpoints =
                StopAfterParts { inner, asked_for_parts: Cell::new(false), saved_parts: false };
            let solver = LayerSolver::new(9, &solved, SearchBudget::default());
            let result = solver.run_sharing(Cursor::Start, None, &mut checkpoints, &RankGames(comm));
            end_bounds(comm);
            Some(result.err().map(|e| format!("{e:?}")))
        });
        let error = stopped[0].clone().flatten().unwrap_or_default();
        assert!(error.contains("stopped after a snapshot in parts"), "{error}");
        drop(held);
        // The manifest names the snapshot; its three parts are beside it.
        let path = alone.join("manifest");
        let text = fs::read_to_string(&path).unwrap();
        let sequence = Manifest::parse(&text, &path).unwrap().checkpoint.expect("a checkpoint").0;
        let parts: Vec<String> = (0..3).map(|rank| part_name(9, sequence, rank)).collect();
        assert!(parts.iter().all(|p| alone.join(p).exists()), "{:?}", checkpoint_files(&alone));
        copy_dir(&alone, &two);
        // Resumed by one process and by two ranks: the straight files, and
        // no checkpoint or part left.
        let report = build(&options(&alone, 10), &SILENT).unwrap();
        assert!(report.resumed_checkpoint);
        let reports = run_ranks(2, |comm| build_across(comm, &options(&two, 10), &SILENT));
        assert!(reports.into_iter().next().unwrap().unwrap().resumed_checkpoint);
        for dir in [&alone, &two] {
            for name in [TABLEBASE_FILE, ENGINE_FILE] {
                let same = fs::read(straight.join(name)).unwrap() == fs::read(dir.join(name)).unwrap();
                assert!(same, "{}: {name}", dir.display());
            }
            assert!(checkpoint_files(dir).is_empty(), "{:?}", checkpoint_files(dir));
        }
        fs::remove_dir_all(&base).unwrap();
    }

    /// Saves `left` snapshots, then fails every save, as a killed job
    /// stops.
    struct StopAfter<'m> {
        inner: DirectoryCheckpoints<'m>,
        left: usize,
    }

    impl Checkpointer for StopAfter<'_> {
        fn due(&mut self) -> bool {
            true
        }
        fn save(&mut self, write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>) -> io::Result<()> {
            if self.left == 0 {
                return Err(io::Error::other("stopped as planned"));
            }
            self.left -= 1;
            self.inner.save(write)
        }
        fn parts(&self) -> Option<(&dyn SnapshotParts, u64)> {
            self.inner.parts()
        }
    }

    /// A layer kept spread by three ranks, stopped after its first
    /// snapshot (before the games) or its third (inside them), resumes
    /// to the straight build's files: by three ranks each from its own
    /// part, by two and four ranks each from the parts that cover its
    /// range, and by one process from the parts joined. A damaged part is
    /// refused by every rank, with the rank that read it. (Builds of
    /// layers 0 to 9: the layer resumed is the last, which halves the
    /// test's time; a resumed layer carried on to the next is
    /// [`a_snapshot_in_parts_resumes_with_any_number_of_ranks`]'s case.)
    #[test]
    fn a_layer_kept_spread_resumes_from_its_parts_with_any_number_of_ranks() {
        let base = std::env::temp_dir().join(format!("oware-spread-resume-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let straight = base.join("straight");
        let expected = build(&options(&straight, 9), &SILENT).unwrap();
        // A resumed build's figures for every layer: one process's.
        let same_counts = |report: BuildReport| {
            assert!(report.resumed_checkpoint);
            for layer in &report.layers {
                let straight = &expected.layers[layer.seeds as usize];
                assert_eq!(layer.counts(), straight.counts(), "layer {}", layer.seeds);
            }
            assert_eq!(report.layers.len(), 10);
        };
        let spread = |dir: &Path| BuildOptions { keep_layers_spread: true, ..options(dir, 9) };
        for (saves, inside) in [(1, false), (3, true)] {
            let stopped = base.join(format!("stopped-{saves}"));
            let (held, manifest, solved) = built_to_eight(&stopped);
            let errors = run_ranks(3, |comm| {
                let parts = DirectoryParts { dir: stopped.clone(), n: 9 };
                // (Only rank 0 holds the manifest.)
                let mut manifest = (comm.rank() == 0).then(|| manifest.lock().unwrap());
                let mut stop = manifest.as_deref_mut().map(|manifest| {
                    let inner = DirectoryCheckpoints {
                        held: &held,
                        parts: DirectoryParts { dir: stopped.clone(), n: 9 },
                        manifest,
                        every: Duration::ZERO,
                        last: Instant::now(),
                        saved: 0,
                    };
                    StopAfter { inner, left: saves }
                });
                let checkpoints = match stop.as_mut() {
                    Some(stop) => SpreadCheckpoints::Lead(stop),
                    None => SpreadCheckpoints::Follow(&parts),
                };
                let budget = SearchBudget::default();
                let across = crate::tablebase::across::layer::layer_across(
                    comm,
                    9,
                    &solved,
                    budget,
                    None,
                    &SILENT,
                    Some(checkpoints),
                );
                match across {
                    Ok((Across::Finished(spread), _)) => {
                        spread.finished.map(|f| f.err().map(|e| format!("{e:?}")))
                    }
                    _ => Some(Some("not kept spread".into())),
                }
            });
            let error = errors[0].clone().flatten().unwrap_or_default();
            assert!(error.contains("stopped as planned"), "{error}");
            drop(held);
            // The manifest names rank 0's snapshot; the three parts are beside it.
            let path = stopped.join("manifest");
            let text = fs::read_to_string(&path).unwrap();
            let (sequence, bytes, sum) =
                Manifest::parse(&text, &path).unwrap().checkpoint.expect("a checkpoint");
            assert_eq!(sequence, saves as u64);
            let snapshot = zstd::stream::decode_all(
                &read_checked(&checkpoint_path(&stopped, 9, sequence), bytes, sum).unwrap()[..],
            )
            .unwrap();
            let snapshot = SpreadSnapshot::decode(&snapshot, 9).unwrap();
            assert_eq!((snapshot.ranks, snapshot.games.is_some()), (3, inside), "{snapshot:?}");
            let parts: Vec<String> = (0..3).map(|rank| part_name(9, sequence, rank)).collect();
            assert!(parts.iter().all(|p| stopped.join(p).exists()), "{:?}", checkpoint_files(&stopped));
            let (one, two, damaged) = (
                base.join(format!("one-{saves}")),
                base.join(format!("two-{saves}")),
                base.join(format!("damaged-{saves}")),
            );
            for dir in [&one, &two, &damaged] {
                copy_dir(&stopped, dir);
            }
            // Killed before the manifest named the first snapshot: it is
            // adopted, with its parts.
            let unnamed = base.join("unnamed");
            if saves == 1 {
                copy_dir(&stopped, &unnamed);
                let path = unnamed.join("manifest");
                let mut manifest = Manifest::parse(&fs::read_to_string(&path).unwrap(), &path).unwrap();
                manifest.checkpoint = None;
                fs::write(&path, manifest.render()).unwrap();
                let reports = run_ranks(3, |comm| build_across(comm, &spread(&unnamed), &SILENT));
                same_counts(reports.into_iter().next().unwrap().unwrap());
                for name in [TABLEBASE_FILE, ENGINE_FILE] {
                    assert!(fs::read(straight.join(name)).unwrap() == fs::read(unnamed.join(name)).unwrap());
                }
                assert!(checkpoint_files(&unnamed).is_empty(), "{:?}", checkpoint_files(&unnamed));
            }
            // A damaged part: every rank stops, nothing is written.
            let part = damaged.join(&parts[1]);
            let mut data = fs::read(&part).unwrap();
            let middle = data.len() / 2;
            data[middle] ^= 0x10;
            fs::write(&part, data).unwrap();
            let results = run_ranks(3, |comm| {
                build_across(comm, &spread(&damaged), &SILENT).err().map(|e| e.to_string())
            });
            for error in &results {
                let error = error.clone().unwrap_or_default();
                assert!(
                    error.contains("rank 1 of the build stopped: layer 9: its range of checkpoint"),
                    "{error}"
                );
            }
            assert!(!layer_path(&damaged, 0, 9).exists());
            let temporary = fs::read_dir(&damaged)
                .unwrap()
                .flatten()
                .find(|e| e.path().extension() == Some("tmp".as_ref()));
            assert!(temporary.is_none(), "{temporary:?}");
            // Three ranks, each from its own part.
            let lines = Lines::default();
            let reports = run_ranks(3, |comm| {
                let observer: &dyn Observer = if comm.rank() == 0 { &lines } else { &SILENT };
                build_across(comm, &spread(&stopped), observer)
            });
            same_counts(reports.into_iter().next().unwrap().unwrap());
            let lines = lines.0.into_inner().unwrap();
            assert!(lines.iter().any(|l| l.contains("each of 3 ranks from its part")), "{lines:?}");
            // One process, from the parts joined; two and four ranks, each
            // from the parts that cover its range.
            same_counts(build(&spread(&one), &SILENT).unwrap());
            let four = base.join(format!("four-{saves}"));
            copy_dir(&two, &four);
            for (ranks, dir) in [(2, &two), (4, &four)] {
                let lines = Lines::default();
                let reports = run_ranks(ranks, |comm| {
                    let observer: &dyn Observer = if comm.rank() == 0 { &lines } else { &SILENT };
                    build_across(comm, &spread(dir), observer)
                });
                same_counts(reports.into_iter().next().unwrap().unwrap());
                let lines = lines.0.into_inner().unwrap();
                let wanted = format!("each of {ranks} ranks from the parts of 3 ranks that cover its range");
                assert!(lines.iter().any(|l| l.contains(&wanted)), "{lines:?}");
            }
            for dir in [&stopped, &one, &two, &four] {
                for name in [TABLEBASE_FILE, ENGINE_FILE] {
                    let same = fs::read(straight.join(name)).unwrap() == fs::read(dir.join(name)).unwrap();
                    assert!(same, "{}: {name}", dir.display());
                }
                assert!(checkpoint_files(dir).is_empty(), "{:?}", checkpoint_files(dir));
            }
        }
        fs::remove_dir_all(&base).unwrap();
    }
}
