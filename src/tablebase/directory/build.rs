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

use std::fmt;

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::checksum::checksum;
use crate::cluster::{Communicator, Partition, Solo};
use crate::codec::{Decoder, Encoder};
use crate::formats::endgames::EndgamesVersion;
use crate::progress::{Observer, SILENT};
use crate::rank::layer_size;
use crate::resumable::atomic::write_atomically;
use crate::resumable::{self, HeldDirectory, BUILD_DIRECTORY};
use crate::tablebase::across::bounds::RankGames;
use crate::tablebase::across::checkpoint::{restore, SpreadSnapshot};
use crate::tablebase::across::layer::{sum_traffic, Across, LayerTraffic};
use crate::tablebase::across::spread::{resume_spread, SpreadCheckpoints, SpreadError};
use crate::tablebase::directory::names::{
    checkpoint_name, checkpoint_path, layer_name, layer_path, part_name, stats_name, stats_path,
    COMPRESSED_FILE, ENGINE_FILE, STATS_FILE, TABLEBASE_FILE,
};
use crate::tablebase::entry::ENTRY_BYTES;
use crate::tablebase::layers::{LayerBytes, SolvedLayers};
use crate::tablebase::owtb::{write_compressed, write_tablebase, FileError, Provenance, Tablebase};
use crate::tablebase::params::{BuildParams, Param, ParamError, ENGINE_MAX_SEEDS};
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::snapshot::PartRecord;
use crate::tablebase::snapshot::SnapshotParts;
use crate::tablebase::solve::solver::{Contradiction, Cursor, LayerError, LayerSolver, Step, LEFT_UNDECIDED};
use crate::tablebase::stats::LayerStats;

/// The manifest's first line. Version 5 names the parameters as
/// `stats.json` does ([`Param::name`]).
const MANIFEST_SIGNATURE: &str = "oware-tablebase-build 5";
/// Manifests of version 4 (the same records, the parameters under other
/// names) are still read, and written again as version 5.
const V4_SIGNATURE: &str = "oware-tablebase-build 4";
/// The names of the parameters in a version 4 manifest, in
/// [`Param::ALL`]'s order.
const V4_NAMES: [&str; 7] = [
    "max-seeds",
    "search-nodes",
    "search-max-path",
    "search-min-seeds",
    "search-max-seeds",
    "cut-nodes",
    "cut-max-seeds",
];
/// Manifests of builds made by older builders: before the path-cut search
/// (1), before the threshold search with history-proof leaves (2), before
/// builds could start from a proven table (3).
const OLD_SIGNATURES: [&str; 3] =
    ["oware-tablebase-build 1", "oware-tablebase-build 2", "oware-tablebase-build 3"];
/// What to build and how.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The build directory, created if missing; an existing build there is
    /// resumed.
    pub dir: PathBuf,
    /// The largest layer to build and how hard to search cycle positions
    /// (checked when made); a resumed build must use the budget it was
    /// started with.
    pub params: BuildParams,
    /// Least time between two checkpoints inside a layer (zero: at every
    /// safe point, which the kill tests use).
    pub checkpoint_every: Duration,
    /// Also write the zstd-compressed copy of the tablebase.
    pub compress: bool,
    /// A proven table (`.owtb` or `.owtb.zst`) whose intervals every layer
    /// it covers is intersected with (`docs/cycle-bounds.md` §6): its exact
    /// entries need no search, and a disagreement stops the build.
    pub start_from: Option<PathBuf>,
    /// With several ranks: finish each layer that gets no search with its
    /// entries kept spread over the ranks, so that no rank holds a whole
    /// layer's work arrays (`docs/distributed-build.md` §1 and §6), each
    /// rank writing its part of the layer's checkpoints; else rank 0
    /// gathers each layer for its cycle phases. The files are the same.
    pub keep_layers_spread: bool,
}

/// Why a build stopped.
#[derive(Debug)]
pub enum BuildError {
    /// A file or directory could not be read or written.
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        error: io::Error,
    },
    /// The directory holds a build with other parameters.
    Parameters {
        /// The build directory.
        dir: PathBuf,
        /// The parameters its manifest records, as text.
        found: String,
        /// The parameters asked for, as text.
        wanted: String,
    },
    /// A file the manifest names is damaged.
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// Another build holds the directory.
    Busy {
        /// The build directory.
        dir: PathBuf,
    },
    /// A parameter out of its range.
    Param(ParamError),
    /// The table to start from could not be used.
    StartFrom(FileError),
    /// Another rank of a distributed build stopped, for this reason.
    Peer {
        /// The rank that stopped first.
        rank: usize,
        /// Its error, as text.
        problem: String,
    },
    /// This build and the table it starts from disagree about a position.
    Contradiction {
        /// The table the build started from.
        source: PathBuf,
        /// The position and the two intervals that do not meet.
        contradiction: Contradiction,
    },
    /// A position broke an invariant the proofs rest on (it was left
    /// undecided, or it waited for a move out of its cycle component; a
    /// layer kept spread across ranks checks the first only): a bug of
    /// this builder, caught before the layer was written.
    Invariant {
        /// The layer.
        layer: u32,
        /// The least such position's index in the layer.
        index: u64,
        /// What it broke, in words.
        broken: &'static str,
    },
}

impl From<ParamError> for BuildError {
    fn from(error: ParamError) -> BuildError {
        BuildError::Param(error)
    }
}

impl From<resumable::DirectoryError> for BuildError {
    fn from(error: resumable::DirectoryError) -> BuildError {
        match error {
            resumable::DirectoryError::Io { path, error } => BuildError::Io { path, error },
            resumable::DirectoryError::Busy { dir } => BuildError::Busy { dir },
            resumable::DirectoryError::Corrupt { path, problem } => BuildError::Corrupt { path, problem },
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            BuildError::Parameters { dir, found, wanted } => write!(
                f,
                "{} holds a build with other parameters ({found}; asked for {wanted}): use another directory",
                dir.display()
            ),
            BuildError::Corrupt { path, problem } => {
                write!(f, "{}: {problem}; the build directory is left as it is", path.display())
            }
            BuildError::Busy { dir } => {
                write!(f, "{}: another build is running in this directory", dir.display())
            }
            BuildError::Param(error) => error.fmt(f),
            BuildError::StartFrom(error) => write!(f, "the table to start from: {error}"),
            BuildError::Peer { rank, problem } => write!(f, "rank {rank} of the build stopped: {problem}"),
            BuildError::Invariant { layer, index, broken } => write!(
                f,
                "layer {layer}: position {index} {broken} (a builder bug; please report it); \
                 the layer is not written"
            ),
            BuildError::Contradiction { source, contradiction } => write!(
                f,
                "{contradiction} ({}): one of the two tables is wrong; the layer is not written",
                source.display()
            ),
        }
    }
}

impl std::error::Error for BuildError {}

pub(super) fn io_at(path: &Path) -> impl Fn(io::Error) -> BuildError + '_ {
    move |error| BuildError::Io { path: path.to_path_buf(), error }
}

/// The manifest's content.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Manifest {
    pub params: BuildParams,
    /// The proven table the layers it covers were intersected with.
    pub seed: Option<Provenance>,
    /// How many improvement passes replaced the layers (it names the layer
    /// files: `layer-NN.bin` in generation 0, `layer-NN-gG.bin` after).
    pub generation: u32,
    /// Finished layers: (entries bytes, checksum, stats bytes, stats checksum).
    pub layers: Vec<(u64, u64, u64, u64)>,
    /// Latest snapshot of the next layer: (sequence, bytes, checksum).
    pub checkpoint: Option<(u64, u64, u64)>,
}

impl Manifest {
    /// Whether every layer is finished.
    pub fn complete(&self) -> bool {
        self.layers.len() == self.params.largest_layer() as usize + 1
    }

    pub fn parameters(&self) -> String {
        let seed = match self.seed {
            Some(p) => format!(", starting from table {:016x} (layers 0..{})", p.body_checksum, p.layers),
            None => String::new(),
        };
        format!("{}{seed}", self.params.describe())
    }

    /// Same parameters (what the build computes), whatever its progress.
    fn same_build(&self, other: &Manifest) -> bool {
        (self.params, self.seed) == (other.params, other.seed)
    }

    pub fn render(&self) -> String {
        let mut text = format!("{MANIFEST_SIGNATURE}\n");
        for (param, value) in self.params.fields() {
            text += &format!("{param} {value}\n");
        }
        if let Some(p) = self.seed {
            text += &format!("start-from {:016x} {}\n", p.body_checksum, p.layers);
        }
        if self.generation > 0 {
            text += &format!("generation {}\n", self.generation);
        }
        for (n, (bytes, sum, stats_bytes, stats_sum)) in self.layers.iter().enumerate() {
            text += &format!("layer {n} {bytes} {sum:016x} {stats_bytes} {stats_sum:016x}\n");
        }
        if let Some((sequence, bytes, sum)) = self.checkpoint {
            text += &format!("checkpoint {} {sequence} {bytes} {sum:016x}\n", self.layers.len());
        }
        text
    }

    pub fn parse(text: &str, path: &Path) -> Result<Manifest, BuildError> {
        let corrupt = |line: usize, what: &str| BuildError::Corrupt {
            path: path.to_path_buf(),
            problem: format!("manifest line {line}: {what}"),
        };
        let mut lines = text.lines().enumerate();
        let signature = lines.next().map(|(_, l)| l);
        if signature.is_some_and(|s| OLD_SIGNATURES.contains(&s)) {
            return Err(corrupt(
                1,
                "made by an older builder (other searches, other statistics); build into a new directory",
            ));
        }
        let version_4 = signature == Some(V4_SIGNATURE);
        if signature != Some(MANIFEST_SIGNATURE) && !version_4 {
            return Err(corrupt(1, "not a tablebase build manifest"));
        }
        // Every parameter on its line, in order, each checked against its
        // limit there (so that the error names the line).
        let mut values = [0u64; 7];
        for (k, param) in Param::ALL.into_iter().enumerate() {
            let key = if version_4 { V4_NAMES[k] } else { param.name() };
            let (i, line) = lines.next().ok_or_else(|| corrupt(0, "truncated"))?;
            let rest = line.strip_prefix(key).and_then(|r| r.strip_prefix(' '));
            let number = rest
                .and_then(|r| r.parse().ok())
                .ok_or_else(|| corrupt(i + 1, &format!("expected '{key} <number>'")))?;
            values[k] = param.check(number).map_err(|e| corrupt(i + 1, &e.to_string()))?;
        }
        let value_of = |param| values[Param::ALL.iter().position(|&p| p == param).expect("every parameter")];
        let params = BuildParams::from_fields(value_of).map_err(|e| corrupt(0, &e.to_string()))?;
        let max_seeds = params.largest_layer();
        let mut manifest =
            Manifest { params, seed: None, generation: 0, layers: Vec::new(), checkpoint: None };
        for (i, line) in lines {
            let fields: Vec<&str> = line.split(' ').collect();
            let number = |k: usize| fields.get(k).and_then(|f| f.parse::<u64>().ok());
            let hex = |k: usize| fields.get(k).and_then(|f| u64::from_str_radix(f, 16).ok());
            match fields.first() {
                Some(&"start-from") if fields.len() == 3 && manifest.layers.is_empty() => {
                    match (hex(1), number(2)) {
                        (Some(sum), Some(layers)) if layers > 0 && layers <= u32::MAX as u64 => {
                            manifest.seed = Some(Provenance { body_checksum: sum, layers: layers as u32 })
                        }
                        _ => return Err(corrupt(i + 1, "bad start-from record")),
                    }
                }
                Some(&"generation") if fields.len() == 2 && manifest.layers.is_empty() => match number(1) {
                    Some(g) if g > 0 && g <= u32::MAX as u64 => manifest.generation = g as u32,
                    _ => return Err(corrupt(i + 1, "bad generation record")),
                },
                Some(&"layer") if manifest.layers.len() > max_seeds as usize => {
                    return Err(corrupt(i + 1, "more layers than the build asks for"));
                }
                Some(&"layer") if fields.len() == 6 && number(1) == Some(manifest.layers.len() as u64) => {
                    let record = (number(2), hex(3), number(4), hex(5));
                    // A layer file holds every entry of its layer: a size
                    // that does not would be read past its end.
                    let whole = layer_size(manifest.layers.len() as u32) * ENTRY_BYTES as u64;
                    match record {
                        (Some(a), Some(b), Some(c), Some(d)) if a == whole => {
                            manifest.layers.push((a, b, c, d))
                        }
                        _ => return Err(corrupt(i + 1, "bad layer record")),
                    }
                }
                Some(&"checkpoint")
                    if fields.len() == 5 && number(1) == Some(manifest.layers.len() as u64) =>
                {
                    match (number(2), number(3), hex(4)) {
                        (Some(a), Some(b), Some(c)) => manifest.checkpoint = Some((a, b, c)),
                        _ => return Err(corrupt(i + 1, "bad checkpoint record")),
                    }
                }
                _ => return Err(corrupt(i + 1, "unexpected line")),
            }
        }
        Ok(manifest)
    }
}

/// Where the ranks keep their parts of layer `n`'s checkpoints: files
/// beside them in the build directory (shared by the ranks), each a zstd
/// frame with its own checksum; the checkpoint records each part's size
/// and checksum.
pub(super) struct DirectoryParts {
    dir: PathBuf,
    n: usize,
}

impl SnapshotParts for DirectoryParts {
    fn write_part_with(
        &self,
        sequence: u64,
        rank: usize,
        write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>,
    ) -> io::Result<PartRecord> {
        let path = self.dir.join(part_name(self.n, sequence, rank));
        // Streamed: compressed as it is produced, checksummed as written.
        let (bytes, checksum) = resumable::write_counted(&path, |file| {
            let mut encoder = zstd::stream::Encoder::new(file, 1)?;
            encoder.include_checksum(true)?;
            write(&mut encoder)?;
            encoder.finish()?;
            Ok(())
        })?;
        Ok(PartRecord { bytes, checksum })
    }

    fn read_part(
        &self,
        sequence: u64,
        rank: usize,
        record: PartRecord,
        limit: usize,
    ) -> Result<Vec<u8>, String> {
        let path = self.dir.join(part_name(self.n, sequence, rank));
        let compressed =
            resumable::read_checked(&path, record.bytes, record.checksum).map_err(|e| e.to_string())?;
        // (The frame's own checksum is checked too.)
        zstd::bulk::decompress(&compressed, limit).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Removes checkpoint `sequence` of layer `n` and its parts, once the
/// manifest no longer names it.
fn discard_checkpoint(held: &HeldDirectory, n: usize, sequence: u64) {
    held.discard(&checkpoint_name(n, sequence));
    let prefix = format!("checkpoint-{n:02}-{sequence:06}-r");
    if let Some(pattern) = BUILD_DIRECTORY.checkpoint_part {
        for part in resumable::names::find_all(held.path(), &prefix, pattern) {
            held.discard(&part);
        }
    }
}

/// Reads a file the manifest names and checks its size and checksum.
pub(super) fn read_checked(path: &Path, bytes: u64, sum: u64) -> Result<Vec<u8>, BuildError> {
    Ok(resumable::read_checked(path, bytes, sum)?)
}

/// Saves snapshots of the layer in progress.
struct DirectoryCheckpoints<'m> {
    held: &'m HeldDirectory,
    parts: DirectoryParts,
    manifest: &'m mut Manifest,
    every: Duration,
    last: Instant,
    saved: u64,
}

impl Checkpointer for DirectoryCheckpoints<'_> {
    fn due(&mut self) -> bool {
        self.last.elapsed() >= self.every
    }

    fn save(&mut self, write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>) -> io::Result<()> {
        let n = self.manifest.layers.len();
        let sequence = self.manifest.checkpoint.map_or(1, |c| c.0 + 1);
        // Streamed: compressed as it is produced, checksummed as written.
        let (bytes, sum) = self
            .held
            .commit_streamed(&checkpoint_name(n, sequence), |file| {
                let mut encoder = zstd::stream::Encoder::new(file, 1)?;
                // The frame's checksum checks a checkpoint adopted without
                // a manifest record (`check_checkpoint`).
                encoder.include_checksum(true)?;
                write(&mut encoder)?;
                encoder.finish()?;
                Ok(())
            })
            .map_err(directory_io)?;
        let previous = self.manifest.checkpoint.replace((sequence, bytes, sum));
        self.held.commit_manifest(&self.manifest.render()).map_err(directory_io)?;
        if let Some((old, _, _)) = previous {
            discard_checkpoint(self.held, n, old);
        }
        self.saved += 1;
        self.last = Instant::now();
        Ok(())
    }

    fn parts(&self) -> Option<(&dyn SnapshotParts, u64)> {
        Some((&self.parts, self.manifest.checkpoint.map_or(1, |c| c.0 + 1)))
    }
}

/// A protocol error where the layer solver expects an I/O error.
fn directory_io(error: resumable::DirectoryError) -> io::Error {
    match error {
        resumable::DirectoryError::Io { error, .. } => error,
        other => io::Error::other(other.to_string()),
    }
}

/// What a build did.
#[derive(Debug, Default)]
pub struct BuildReport {
    /// The figures of every layer, those found finished included, by seed
    /// count.
    pub layers: Vec<LayerStats>,
    /// Layers found finished, and whether a layer resumed from a snapshot.
    pub reused_layers: u32,
    /// Whether a layer resumed from a checkpoint.
    pub resumed_checkpoint: bool,
    /// Per layer whose retrograde analysis was spread over several ranks,
    /// what that cost (all ranks together).
    pub traffic: Vec<crate::tablebase::across::layer::LayerTraffic>,
    /// Checkpoints this run wrote.
    pub checkpoints_written: u64,
}

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
/// the ranks by index range ([`crate::tablebase::across::layer`]); then either the
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

/// How rank 0 tells the others how a step ended: `[0]` and a payload, or
/// `[1]` and the error's text.
fn status_bytes<T>(result: &Result<T, BuildError>, payload: impl FnOnce(&T) -> Vec<u8>) -> Vec<u8> {
    match result {
        Ok(value) => [vec![0], payload(value)].concat(),
        Err(error) => [vec![1], error.to_string().into_bytes()].concat(),
    }
}

/// Reads rank 0's status: its payload, or the error it stopped with.
fn read_status(bytes: Vec<u8>) -> Result<Vec<u8>, BuildError> {
    match bytes.split_first() {
        Some((0, payload)) => Ok(payload.to_vec()),
        Some((_, text)) => {
            Err(BuildError::Peer { rank: 0, problem: String::from_utf8_lossy(text).into_owned() })
        }
        None => Err(BuildError::Peer { rank: 0, problem: "an empty status".into() }),
    }
}

/// Every rank's outcome of a step, so that all go on or all stop: a rank
/// that failed returns its own error, the others the first failing rank's.
fn agree<T>(comm: &dyn Communicator, result: Result<T, BuildError>) -> Result<T, BuildError> {
    if comm.ranks() == 1 {
        return result;
    }
    let verdict = comm.gather(status_bytes(&result, |_| Vec::new())).map(|statuses| {
        statuses
            .into_iter()
            .enumerate()
            .find(|(_, status)| status.first() != Some(&0))
            .map(|(rank, status)| [(rank as u64).to_le_bytes().to_vec(), status[1..].to_vec()].concat())
            .unwrap_or_default()
    });
    let verdict = comm.broadcast(verdict.unwrap_or_default());
    match (result, verdict.len() >= 8) {
        (Ok(_), true) => {
            let rank = u64::from_le_bytes(verdict[..8].try_into().expect("eight bytes")) as usize;
            Err(BuildError::Peer { rank, problem: String::from_utf8_lossy(&verdict[8..]).into_owned() })
        }
        (result, _) => result,
    }
}

/// How a layer is built, as rank 0 tells the others: from its start, its
/// retrograde analysis and component search spread; or from rank 0's
/// checkpoint. (Either way every rank then plays the large components'
/// threshold games.)
const PLAN_ACROSS: u8 = 0;
const PLAN_FROM_CHECKPOINT: u8 = 1;
/// A layer kept spread resumed from its checkpoint, each rank from the
/// parts that cover its range: rank 0 sends the snapshot after the plan.
const PLAN_RESUME_SPREAD: u8 = 2;

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
                    let go = verdict.as_ref().map(|_| ()).map_err(|e| e.to_string());
                    let written =
                        write_layer_slices(comm, &layer_file, n, &spread.slice, &spread.slice_sums, go);
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
                let _ = write_layer_slices(comm, &path, n, &spread.slice, &[], Ok(()));
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

/// Layer `n` of the table the build starts from, if it covers it.
fn seed_layer(start_from: &Option<StartFrom>, n: u32) -> Result<Option<&[u8]>, BuildError> {
    match start_from {
        Some(source) if n < source.provenance.layers => source.layer(n).map(Some),
        _ => Ok(None),
    }
}

/// A finished layer's size and checksum, as rank 0 sends them.
fn record_bytes(bytes: u64, sum: u64) -> Vec<u8> {
    [bytes.to_le_bytes(), sum.to_le_bytes()].concat()
}

fn parse_record(record: &[u8]) -> Option<(u64, u64)> {
    let bytes = u64::from_le_bytes(record.get(..8)?.try_into().ok()?);
    let sum = u64::from_le_bytes(record.get(8..16)?.try_into().ok()?);
    (record.len() == 16).then_some((bytes, sum))
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

/// The checkpoint of layer `n` the manifest names, if any: its sequence
/// number and content (its size and checksum checked, and its frame's).
fn read_checkpoint(dir: &Path, manifest: &Manifest, n: u32) -> Result<Option<(u64, Vec<u8>)>, BuildError> {
    let Some((sequence, bytes, sum)) = manifest.checkpoint else { return Ok(None) };
    let path = checkpoint_path(dir, n as usize, sequence);
    let compressed = read_checked(&path, bytes, sum)?;
    let snapshot = crate::compressed::read_within_memory(&compressed[..])
        .map_err(|e| BuildError::Corrupt { path: path.clone(), problem: e.to_string() })?;
    Ok(Some((sequence, snapshot)))
}

/// `checkpoint` of layer `n` if this version resumes it: not in the first
/// layout, and not in the second (which does not record a contradiction)
/// if the build starts from a table (`seed`); else none, and the layer is
/// built from its start.
fn usable_checkpoint(
    checkpoint: Option<(u64, Vec<u8>)>,
    seed: Option<&[u8]>,
    n: u32,
    observer: &dyn Observer,
) -> Option<(u64, Vec<u8>)> {
    let (sequence, snapshot) = checkpoint?;
    let lacks_contradiction =
        crate::tablebase::solve::checkpoint::lacks_contradiction(&snapshot) && seed.is_some();
    if crate::tablebase::solve::checkpoint::earlier_layout(&snapshot) || lacks_contradiction {
        observer.line(&format!(
            "layer {n}: checkpoint {sequence} has the layout of an earlier version; building the layer from its start"
        ));
        return None;
    }
    Some((sequence, snapshot))
}

/// The next layer's start on rank 0: its solver restored from its
/// checkpoint (as read by [`read_checkpoint`] and kept by
/// [`usable_checkpoint`]), or a fresh one.
fn layer_start<'a>(
    checkpoint: Result<Option<(u64, Vec<u8>)>, BuildError>,
    options: &BuildOptions,
    solved: &'a SolvedLayers,
    seed: Option<&'a [u8]>,
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
            let restored = restore(n, solved, options.params.budget(), &snapshot, parts)
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
    })
}

/// The proven table a build starts from.
struct StartFrom {
    table: Tablebase,
    provenance: Provenance,
}

impl StartFrom {
    /// Opens the table (header checked: format, rules, header checksum)
    /// for a build of layers `0..=largest_layer`.
    fn open(path: &Path, largest_layer: u32) -> Result<StartFrom, BuildError> {
        let table = Tablebase::open(path).map_err(BuildError::StartFrom)?;
        let header = table.header();
        // The layers both tables have: a larger table's layers above the
        // build are not read, a smaller one's end where it ends; the
        // manifest and the header record which (`Provenance::layers`).
        let shared = header.max_seeds.min(largest_layer);
        let provenance = Provenance { body_checksum: header.body_checksum, layers: shared + 1 };
        Ok(StartFrom { table, provenance })
    }

    /// Layer `n`'s entries, after checking them (checksum and form).
    fn layer(&self, n: u32) -> Result<&[u8], BuildError> {
        self.table.checked_layer(n).map_err(BuildError::StartFrom)
    }
}

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
        // as for any table read (the statistics below rely on it).
        if let Some(index) = crate::tablebase::owtb::first_malformed(&map, n as u32) {
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
        stats.finish(solved.layer_bytes(n as u32));
        all_stats.push(stats);
    }
    Ok((solved, all_stats))
}

/// Makes layer `n` durable, then records it in the manifest.
fn finish_layer(
    held: &HeldDirectory,
    manifest: &mut Manifest,
    n: u32,
    bytes: &[u8],
    stats: &LayerStats,
) -> Result<(), BuildError> {
    debug_assert_eq!(bytes.len() as u64, layer_size(n) * ENTRY_BYTES as u64);
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

/// Writes layer `n` of a layer kept spread into `path`, every rank the
/// packed entries of its range (`slice`) at their place: rank 0 makes a
/// temporary file of the layer's size, every rank writes and syncs its
/// slice, and rank 0 reads the file back, checks every rank's slice
/// against the checksum that rank sent (`slice_sums`, rank 0's only), then
/// renames it into place and syncs the directory. Returns on rank 0 the
/// file's size and checksum. Collective; `go` is rank 0's verdict (an
/// error: nothing is written and every rank stops; rank 0 reports the
/// error itself).
fn write_layer_slices(
    comm: &dyn Communicator,
    path: &Path,
    n: u32,
    slice: &[u8],
    slice_sums: &[u64],
    go: Result<(), String>,
) -> Result<Option<(u64, u64)>, BuildError> {
    use std::os::unix::fs::FileExt;
    let size = layer_size(n) * ENTRY_BYTES as u64;
    let temporary = resumable::atomic::temporary_path(path);
    let prepared: Result<(), BuildError> = if comm.rank() == 0 {
        go.map_err(|problem| BuildError::Peer { rank: 0, problem }).and_then(|()| {
            let file = std::fs::File::create(&temporary).map_err(io_at(&temporary))?;
            file.set_len(size).map_err(io_at(&temporary)).inspect_err(|_| {
                let _ = std::fs::remove_file(&temporary);
            })
        })
    } else {
        Ok(())
    };
    let status = read_status(comm.broadcast(status_bytes(&prepared, |_| Vec::new())));
    prepared?;
    status?;
    let partition = Partition::new(layer_size(n), comm.ranks());
    let range = partition.range(comm.rank());
    let written = (|| {
        if slice.len() as u64 != (range.end - range.start) * ENTRY_BYTES as u64 {
            return Err(io::Error::other(format!(
                "{} bytes for a range of {} positions",
                slice.len(),
                range.end - range.start
            )));
        }
        let file = std::fs::OpenOptions::new().write(true).open(&temporary)?;
        file.write_all_at(slice, range.start * ENTRY_BYTES as u64)?;
        file.sync_all()
    })()
    .map_err(io_at(&temporary));
    let agreed = agree(comm, written);
    if comm.rank() != 0 {
        return agreed.map(|()| None);
    }
    // Read back in pieces, slice by slice: each must be what its rank
    // wrote (a write lost on the way would leave zeros), and the whole
    // file's checksum is what the manifest records.
    let read_back = || {
        let mut file = std::fs::File::open(&temporary)?;
        if file.metadata()?.len() != size || slice_sums.len() != comm.ranks() {
            return Err(io::Error::other(format!("not the layer's {size} bytes in {} slices", comm.ranks())));
        }
        let mut whole = crate::checksum::Checksum::new();
        let mut buffer = vec![0u8; 1 << 20];
        for (rank, &expected) in slice_sums.iter().enumerate() {
            let range = partition.range(rank);
            let mut left = (range.end - range.start) * ENTRY_BYTES as u64;
            let mut summed = crate::checksum::Checksum::new();
            while left > 0 {
                let piece = &mut buffer[..left.min(1 << 20) as usize];
                io::Read::read_exact(&mut file, piece)?;
                summed.update(piece);
                whole.update(piece);
                left -= piece.len() as u64;
            }
            if summed.finish() != expected {
                return Err(io::Error::other(format!("rank {rank}'s slice is not what it wrote")));
            }
        }
        std::fs::rename(&temporary, path)?;
        resumable::atomic::sync_directory(path)?;
        Ok(whole.finish())
    };
    let sum = agreed.and_then(|()| read_back().map_err(io_at(&temporary)));
    // (What failed leaves no temporary file behind.)
    if sum.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    Ok(Some((size, sum?)))
}

/// Checks the checkpoint the manifest names. If it names none, a first
/// checkpoint of the unfinished layer whose save was interrupted before
/// the manifest named it is adopted once its zstd frame's own checksum has
/// been checked (the caller commits a manifest that names it) and its name
/// returned; any other checkpoint of that layer is refused (see
/// [`resumable::unnamed_checkpoint`]).
fn check_checkpoint(dir: &Path, manifest: &mut Manifest) -> Result<Option<String>, BuildError> {
    let layer = manifest.layers.len();
    if let Some((sequence, bytes, sum)) = manifest.checkpoint {
        read_checked(&checkpoint_path(dir, layer, sequence), bytes, sum)?;
        return Ok(None);
    }
    let first = checkpoint_name(layer, 1);
    let unnamed = resumable::unnamed_checkpoint(
        dir,
        &BUILD_DIRECTORY,
        &format!("checkpoint-{layer:02}-"),
        &format!(" of layer {layer}"),
        true,
        |name| name == first,
    )?;
    let Some(name) = unnamed else { return Ok(None) };
    let path = dir.join(&name);
    let data = std::fs::read(&path).map_err(io_at(&path))?;
    let corrupt = |problem: String| BuildError::Corrupt { path: path.clone(), problem };
    // A frame without a checksum (written by an earlier version) cannot be
    // checked without the manifest's record.
    if !crate::tablebase::snapshot::frame_has_checksum(&data) {
        return Err(corrupt(
            "the manifest does not name this checkpoint, and it carries no checksum of its own (an \
             earlier version wrote it): remove it to build the layer from its start"
                .into(),
        ));
    }
    // Decoding checks the frame's checksum; the content is checked again
    // when the layer is restored from it.
    let mut decoder = zstd::stream::Decoder::new(&data[..]).map_err(|e| corrupt(e.to_string()))?;
    // (No further than a resume would read it.)
    let limit = crate::compressed::machine_memory();
    let content = io::copy(&mut io::Read::take(&mut decoder, limit.saturating_add(1)), &mut io::sink())
        .map_err(|e| corrupt(format!("unreadable checkpoint: {e}")))?;
    if content > limit {
        return Err(corrupt(format!("a checkpoint of more than this machine's {limit} bytes of memory")));
    }
    manifest.checkpoint = Some((1, data.len() as u64, checksum(&data)));
    Ok(Some(name))
}

/// The finished products: our file, its compressed copy, the statistics.
fn write_outputs(
    options: &BuildOptions,
    provenance: Option<Provenance>,
    solved: &SolvedLayers,
    report: &BuildReport,
    observer: &dyn Observer,
) -> Result<(), BuildError> {
    let dir = &options.dir;
    let table = dir.join(TABLEBASE_FILE);
    write_tablebase(&table, &options.params, provenance, |n| solved.layer_bytes(n)).map_err(io_at(&table))?;
    if options.compress {
        let compressed = dir.join(COMPRESSED_FILE);
        write_compressed(&table, &compressed).map_err(io_at(&compressed))?;
    }
    let engine = dir.join(ENGINE_FILE);
    crate::tablebase::engine::write_engine_file(solved, EndgamesVersion::V2_0, None, &engine)
        .map_err(|e| BuildError::Io { path: engine.clone(), error: io::Error::other(e.to_string()) })?;
    let exported = crate::tablebase::engine::engine_layers(solved);
    if exported < options.params.largest_layer() {
        observer.line(&format!(
            "wrote {} with layers 0 to {exported}: the engine's index covers at most {ENGINE_MAX_SEEDS} seeds",
            engine.display()
        ));
    }
    let stats = dir.join(STATS_FILE);
    let json = stats_json(&options.params, &report.layers);
    write_atomically(&stats, |w| io::Write::write_all(w, json.as_bytes())).map_err(io_at(&stats))?;
    observer.line(&format!("wrote {}", table.display()));
    Ok(())
}

/// The statistics of every layer as one JSON document, after every build
/// parameter under its name in the manifest ([`Param::name`]: a budget's
/// names differ from the per-layer figures', such as the nodes a layer's
/// searches spent, `search_nodes`).
pub fn stats_json(params: &BuildParams, layers: &[LayerStats]) -> String {
    let mut json = String::from("{\n");
    for (param, value) in params.fields() {
        json += &format!("  \"{param}\": {value},\n");
    }
    let rows: Vec<String> = layers.iter().map(|l| format!("    {}", l.to_json())).collect();
    let positions: u64 = layers.iter().map(|l| l.positions).sum();
    let exact: u64 = layers.iter().map(|l| l.exact).sum();
    let seconds: f64 = layers.iter().map(|l| l.seconds.total).sum();
    json += &format!(
        "  \"positions\": {positions},\n  \"exact\": {exact},\n  \"seconds\": {seconds:.3},\n  \"layers\": [\n{}\n  ]\n}}\n",
        rows.join(",\n")
    );
    json
}

#[cfg(test)]
mod tests {
    //! `Manifest::parse` of arbitrary and damaged text (the type is private
    //! to the tablebase module, so these are unit tests): it never panics,
    //! reads every number as written or refuses it, and what it accepts
    //! renders to text that parses back to the same manifest.

    use super::*;
    use crate::tablebase::params::SearchBudget;
    use proptest::prelude::*;

    fn parse(text: &str) -> Result<Manifest, BuildError> {
        Manifest::parse(text, Path::new("manifest"))
    }

    /// Small numbers, numbers just past `u32::MAX`, and any.
    fn number() -> impl Strategy<Value = u64> {
        prop_oneof![0u64..40, (u32::MAX as u64 - 1)..=(u32::MAX as u64 + 2), any::<u64>()]
    }

    /// Manifest text in `render`'s layout with any numbers in its fields,
    /// and the same manifest in version 4's layout.
    fn canonical_text() -> impl Strategy<Value = (String, String)> {
        let records = proptest::collection::vec((number(), any::<u64>(), number(), any::<u64>()), 0..4);
        let optional = proptest::option::of((number(), number(), any::<u64>()));
        // (Mostly parameters a build accepts, so that most texts are read.)
        let parameter = prop_oneof![4 => 0u64..25, 1 => number()];
        (
            proptest::array::uniform7(parameter),
            proptest::option::of((any::<u64>(), number())),
            proptest::option::of(number()),
            records,
            optional,
        )
            .prop_map(|(fields, start_from, generation, layers, checkpoint)| {
                let mut text = String::new();
                for (param, value) in Param::ALL.iter().zip(fields) {
                    text += &format!("{param} {value}\n");
                }
                if let Some((sum, layers)) = start_from {
                    text += &format!("start-from {sum:016x} {layers}\n");
                }
                if let Some(g) = generation {
                    text += &format!("generation {g}\n");
                }
                for (n, (a, b, c, d)) in layers.iter().enumerate() {
                    text += &format!("layer {n} {a} {b:016x} {c} {d:016x}\n");
                }
                if let Some((sequence, bytes, sum)) = checkpoint {
                    text += &format!("checkpoint {} {sequence} {bytes} {sum:016x}\n", layers.len());
                }
                let mut version_4 = text.clone();
                for (param, old) in Param::ALL.iter().zip(V4_NAMES) {
                    version_4 = version_4.replacen(&format!("{param} "), &format!("{old} "), 1);
                }
                (format!("{MANIFEST_SIGNATURE}\n{text}"), format!("{V4_SIGNATURE}\n{version_4}"))
            })
    }

    /// A manifest of a build with two finished layers and a checkpoint.
    fn good_text() -> String {
        let manifest = Manifest {
            params: BuildParams::new(6, SearchBudget::default()).unwrap(),
            seed: Some(Provenance { body_checksum: 0x1234_5678_9ABC_DEF0, layers: 3 }),
            generation: 2,
            // (Layers 0 and 1: 1 and 12 positions of 3 bytes.)
            layers: vec![(3, 0xAB, 40, 0xCD), (36, 0xEF01, 44, 0x2345)],
            checkpoint: Some((7, 1_000, 0xFEDC_BA98_7654_3210)),
        };
        manifest.render()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn a_manifest_is_read_as_written_or_refused((text, version_4) in canonical_text()) {
            let read = parse(&text);
            if let Ok(manifest) = &read {
                prop_assert_eq!(manifest.render(), text);
            }
            // Version 4 is read alike (and written again as version 5).
            prop_assert_eq!(parse(&version_4).ok(), read.ok());
        }

        #[test]
        fn a_damaged_manifest_parses_to_what_renders_back_to_it(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            cut in proptest::option::of(any::<prop::sample::Index>()),
        ) {
            let mut bytes = good_text().into_bytes();
            for (at, byte) in edits {
                let at = at.index(bytes.len());
                bytes[at] = byte;
            }
            if let Some(cut) = cut {
                bytes.truncate(cut.index(bytes.len()));
            }
            if let Ok(manifest) = parse(&String::from_utf8_lossy(&bytes)) {
                prop_assert_eq!(parse(&manifest.render()).ok(), Some(manifest));
            }
        }
    }

    #[test]
    fn a_good_manifest_round_trips() {
        let text = good_text();
        assert_eq!(parse(&text).unwrap().render(), text);
    }

    /// Values a build never writes: layer files of another size (they
    /// would be read past their end), more seeds than a build supports,
    /// layers out of order.
    #[test]
    fn values_no_build_writes_are_refused() {
        let good = good_text();
        assert!(parse(&good).is_ok());
        for (from, to) in [
            ("layer 1 36 ", "layer 1 35 "),
            ("layer 0 3 ", "layer 0 4 "),
            ("largest_layer 6\n", "largest_layer 25\n"),
            ("layer 1 36 000000000000ef01", "layer 2 36 000000000000ef01"),
            ("largest_layer 6\n", "largest_layer 0\n"),
            ("search_max_path 1000\n", "search_max_path 4097\n"),
            ("threshold_max_seeds 7\n", "threshold_max_seeds 25\n"),
            ("cut_max_seeds 0\n", "cut_max_seeds 4294967296\n"),
            // (Version 5's names under version 4's signature.)
            (MANIFEST_SIGNATURE, V4_SIGNATURE),
        ] {
            assert!(good.contains(from), "{from}");
            let text = good.replace(from, to);
            let error = parse(&text).err().unwrap_or_else(|| panic!("{to} accepted"));
            assert!(error.to_string().contains("manifest line"), "{error}");
        }
        assert!(parse(&good.replace("largest_layer 6\n", "largest_layer 24\n")).is_ok());
        // A limit is named with the value refused.
        let error = parse(&good.replace("largest_layer 6\n", "largest_layer 25\n")).err().unwrap();
        assert!(
            error.to_string().contains("manifest line 2: largest_layer 25 is out of range: at most 24"),
            "{error}"
        );
    }

    /// A manifest written by the builder before version 5 (its parameters
    /// under their old names) is read as the same manifest; older ones are
    /// refused as before.
    #[test]
    fn a_version_4_manifest_is_read() {
        let version_4 = "oware-tablebase-build 4\nmax-seeds 6\nsearch-nodes 1000000\nsearch-max-path 1000\n\
                         search-min-seeds 0\nsearch-max-seeds 7\ncut-nodes 0\ncut-max-seeds 0\n\
                         start-from 123456789abcdef0 3\ngeneration 2\n\
                         layer 0 3 00000000000000ab 40 00000000000000cd\n\
                         layer 1 36 000000000000ef01 44 0000000000002345\n\
                         checkpoint 2 7 1000 fedcba9876543210\n";
        assert_eq!(parse(version_4).unwrap().render(), good_text());
        let version_3 = version_4.replace("build 4", "build 3");
        assert!(parse(&version_3).unwrap_err().to_string().contains("made by an older builder"));
    }
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
    use crate::tablebase::params::SearchBudget;
    use std::cell::Cell;
    use std::fs;
    use std::sync::Mutex;

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

    fn options(dir: &Path, max_seeds: u32) -> BuildOptions {
        BuildOptions {
            dir: dir.to_path_buf(),
            params: BuildParams::new(max_seeds, SearchBudget::default()).unwrap(),
            checkpoint_every: Duration::from_secs(3600),
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

    #[test]
    fn a_snapshot_in_parts_resumes_with_any_number_of_ranks() {
        let base = std::env::temp_dir().join(format!("oware-parts-resume-{}", std::process::id()));
        let (straight, alone, two) = (base.join("straight"), base.join("alone"), base.join("two"));
        let _ = fs::remove_dir_all(&base);
        build(&options(&straight, 10), &SILENT).unwrap();
        build(&options(&alone, 8), &SILENT).unwrap();
        // Three ranks play layer 9's games with checkpoints at every
        // threshold, until the first snapshot in parts has been saved.
        let held = HeldDirectory::take(&alone, &BUILD_DIRECTORY).unwrap();
        let path = alone.join("manifest");
        let manifest = Manifest::parse(&fs::read_to_string(&path).unwrap(), &path).unwrap();
        let manifest = Mutex::new(manifest);
        let mut solved = SolvedLayers::new();
        for n in 0..9 {
            solved.push(LayerBytes::Owned(fs::read(layer_path(&alone, 0, n)).unwrap()));
        }
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
    /// refused by every rank, with the rank that read it.
    #[test]
    fn a_layer_kept_spread_resumes_from_its_parts_with_any_number_of_ranks() {
        let base = std::env::temp_dir().join(format!("oware-spread-resume-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let straight = base.join("straight");
        let expected = build(&options(&straight, 10), &SILENT).unwrap();
        // A resumed build's figures for every layer: one process's.
        let same_counts = |report: BuildReport| {
            assert!(report.resumed_checkpoint);
            for layer in &report.layers {
                let straight = &expected.layers[layer.seeds as usize];
                assert_eq!(layer.counts(), straight.counts(), "layer {}", layer.seeds);
            }
            assert_eq!(report.layers.len(), 11);
        };
        let spread = |dir: &Path| BuildOptions { keep_layers_spread: true, ..options(dir, 10) };
        for (saves, inside) in [(1, false), (3, true)] {
            let stopped = base.join(format!("stopped-{saves}"));
            build(&options(&stopped, 8), &SILENT).unwrap();
            let held = HeldDirectory::take(&stopped, &BUILD_DIRECTORY).unwrap();
            let path = stopped.join("manifest");
            let manifest = Manifest::parse(&fs::read_to_string(&path).unwrap(), &path).unwrap();
            let manifest = Mutex::new(manifest);
            let mut solved = SolvedLayers::new();
            for n in 0..9 {
                solved.push(LayerBytes::Owned(fs::read(layer_path(&stopped, 0, n)).unwrap()));
            }
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
