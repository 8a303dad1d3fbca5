//! The book directory: a manifest, one checkpoint, a lock. Our own format,
//! documented byte by byte in `docs/book-format.md`.
//!
//! * `manifest` (text): the growth parameters (ω, batch size, evaluator)
//!   and the current checkpoint with its size and checksum. It is written
//!   last, atomically (temporary file, fsync, rename, directory fsync), so
//!   it only ever names a checkpoint that is complete and durable.
//! * `checkpoint-NNNNNNNNNN.owbook`: the whole graph after N expansions, a
//!   zstd frame of a versioned binary record that ends in its own checksum.
//! * `grow.lock`: held (an OS file lock) while a growth runs.
//!
//! Loading checks everything: the manifest's syntax and batch size (1 to
//! [`MAX_BATCH`]), the checkpoint's size and checksum, the inner checksum,
//! every key, every edge (the child must be the state the move reaches),
//! acyclicity, finished games' and repetition edges' values, visit counts
//! (docs/book-format.md lists it all). A failure is a [`BookError::Corrupt`]
//! naming the file (an [`BookError::Io`] when a file cannot be read, a
//! missing checkpoint included), and nothing is written.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::dropout::{Omega, Selection};
use super::error::BookError;
use super::eval::{repetition_value, terminal_value};
use super::graph::{BookGraph, Edge, GraphError, Node, NodeEval, NodeKind};
use crate::checksum::checksum;
use crate::codec::{DecodeError, Decoder, Encoder};
use crate::formats::is_state_key;
use crate::game::GameState;
use crate::rank::{state_from_key, state_key};
use crate::resumable::{self, HeldDirectory, BOOK_DIRECTORY};
use crate::rules::ROW;

/// The manifest's file name in a book directory.
pub const MANIFEST_FILE: &str = "manifest";
/// The file locked while a growth runs (empty; not part of the book).
pub const LOCK_FILE: &str = "grow.lock";
const MANIFEST_SIGNATURE: &str = "oware-opening-book 1";
/// First bytes of a decompressed checkpoint, then the version.
pub const CHECKPOINT_MAGIC: &[u8; 8] = b"OWBOOK\r\n";
/// The record version [`encode`] writes after [`CHECKPOINT_MAGIC`];
/// [`decode`] reads versions 1 and 2.
pub const CHECKPOINT_VERSION: u32 = 2;
/// zstd level of checkpoints (deterministic output for a given input).
const ZSTD_LEVEL: i32 = 7;

/// The largest batch: a batch is selected and held in memory whole, and
/// beyond a few hundred leaves the parallel growth gains nothing.
pub const MAX_BATCH: u32 = 65_536;

/// Whether `batch` leaves per batch is a batch size a book may record.
pub fn usable_batch(batch: u32) -> bool {
    (1..=MAX_BATCH).contains(&batch)
}

/// What a book is grown with; a resumed growth must use the same.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Parameters {
    /// ω, the drop-out weight of a deviation, in micro-plies per engine
    /// unit.
    pub omega: Omega,
    /// Leaves per batch (selection and checkpoints happen per batch).
    pub batch: u32,
    /// [`super::eval::LeafEvaluator::describe`] of the evaluator.
    pub evaluator: String,
}

impl Parameters {
    /// The parameters on one line, for messages (ω in plies per unit).
    pub fn describe(&self) -> String {
        format!("omega {}, batch {}, evaluator '{}'", self.omega, self.batch, self.evaluator)
    }
}

/// The current checkpoint as the manifest records it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CheckpointRecord {
    /// The expansions it holds; they name its file ([`checkpoint_path`]).
    pub expansions: u64,
    /// The size of the compressed file, in bytes.
    pub bytes: u64,
    /// [`crate::checksum::checksum`] of the compressed file.
    pub checksum: u64,
}

/// The contents of a book directory's `manifest` file.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Manifest {
    /// The growth parameters (lines 2 to 4).
    pub parameters: Parameters,
    /// The current checkpoint (line 5); `None` until the first is saved.
    pub checkpoint: Option<CheckpointRecord>,
}

impl Manifest {
    /// The manifest's text, as written to the file: one `\n`-ended line
    /// per field.
    pub fn render(&self) -> String {
        let p = &self.parameters;
        let mut text = format!(
            "{MANIFEST_SIGNATURE}\nomega-micro-plies-per-unit {}\nbatch {}\nevaluator {}\n",
            p.omega.micro(),
            p.batch,
            p.evaluator
        );
        if let Some(c) = self.checkpoint {
            text += &format!("checkpoint {} {} {:016x}\n", c.expansions, c.bytes, c.checksum);
        }
        text
    }

    /// Reads a manifest's text; `path` only names the file in errors. A
    /// missing signature or field, an ω out of range, a batch size outside
    /// 1..=[`MAX_BATCH`] or a carriage return in the evaluator is a
    /// [`BookError::Corrupt`] naming the line. (The reader is lenient about
    /// what [`Manifest::render`] never writes but means the same: CRLF line
    /// ends, no final line end, a `+` before a number, a checksum with
    /// fewer than 16 hex digits.)
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, BookError> {
        let corrupt = |line: usize, what: &str| BookError::Corrupt {
            path: path.to_path_buf(),
            problem: format!("manifest line {line}: {what}"),
        };
        let lines: Vec<&str> = text.lines().collect();
        if lines.first() != Some(&MANIFEST_SIGNATURE) {
            return Err(corrupt(1, "not an opening book manifest"));
        }
        let field = |n: usize, name: &str| -> Result<&str, BookError> {
            lines
                .get(n)
                .and_then(|l| l.strip_prefix(name))
                .and_then(|r| r.strip_prefix(' '))
                .ok_or_else(|| corrupt(n + 1, &format!("expected '{name} …'")))
        };
        let omega = field(1, "omega-micro-plies-per-unit")?
            .parse()
            .ok()
            .and_then(Omega::from_micro)
            .ok_or_else(|| corrupt(2, "bad omega"))?;
        let batch = field(2, "batch")?
            .parse()
            .ok()
            .filter(|&b| usable_batch(b))
            .ok_or_else(|| corrupt(3, "bad batch size"))?;
        let evaluator = field(3, "evaluator")?.to_string();
        // A carriage return would not survive `render` and `parse` (a
        // line's last one is taken for its CRLF end); growth refuses such
        // parameters anyway.
        if evaluator.contains('\r') {
            return Err(corrupt(4, "bad evaluator"));
        }
        let checkpoint = match lines.get(4) {
            None => None,
            Some(_) => {
                let words: Vec<&str> = field(4, "checkpoint")?.split(' ').collect();
                let record = match words[..] {
                    [e, b, c] => match (e.parse(), b.parse(), u64::from_str_radix(c, 16)) {
                        (Ok(expansions), Ok(bytes), Ok(checksum)) => {
                            Some(CheckpointRecord { expansions, bytes, checksum })
                        }
                        _ => None,
                    },
                    _ => None,
                };
                Some(record.ok_or_else(|| corrupt(5, "bad checkpoint record"))?)
            }
        };
        if lines.len() > 5 {
            return Err(corrupt(6, "unexpected line"));
        }
        Ok(Manifest { parameters: Parameters { omega, batch, evaluator }, checkpoint })
    }
}

/// The checkpoint file of a book after `expansions` expansions.
pub fn checkpoint_path(dir: &Path, expansions: u64) -> PathBuf {
    dir.join(checkpoint_name(expansions))
}

/// The name of [`checkpoint_path`] (`resumable::BOOK_DIRECTORY` lists its
/// pattern).
fn checkpoint_name(expansions: u64) -> String {
    format!("checkpoint-{expansions:010}.owbook")
}

fn io_at(path: &Path) -> impl Fn(io::Error) -> BookError + '_ {
    move |error| BookError::Io { path: path.to_path_buf(), error }
}

/// Reads the manifest of a book directory (`None` if there is none).
///
/// The manifest is written when the book is created and names its
/// checkpoint from the first save on. A manifest that names none beside
/// exactly one checkpoint is a first save interrupted between its two
/// writes: the checkpoint is adopted (the record returned names it;
/// nothing is written here, and its own checksum, parameters and
/// expansion count are checked when it is loaded; a growth then commits a
/// manifest that names it). Any other checkpoint where the manifest names
/// none (or where there is no manifest) is refused as damage: the book
/// would otherwise be taken for a new one and its checkpoint for a stray.
pub fn read_manifest(dir: &Path) -> Result<Option<Manifest>, BookError> {
    Ok(read_manifest_adopting(dir)?.0)
}

/// [`read_manifest`], and whether it adopted a checkpoint.
fn read_manifest_adopting(dir: &Path) -> Result<(Option<Manifest>, bool), BookError> {
    let other = |what| BookError::OtherThanABook { dir: dir.to_path_buf(), what };
    if fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(other("a file is there"));
    }
    let path = dir.join(MANIFEST_FILE);
    let text = resumable::read_manifest(dir)?;
    if text.as_deref().is_some_and(|t| t.starts_with(resumable::names::BUILD_DIRECTORY.manifest_signature)) {
        return Err(other("a tablebase build directory"));
    }
    let mut manifest = match text {
        Some(text) => Some(Manifest::parse(&text, &path)?),
        None => None,
    };
    if manifest.as_ref().is_none_or(|m| m.checkpoint.is_none()) {
        let unnamed =
            resumable::unnamed_checkpoint(dir, &BOOK_DIRECTORY, "", "", manifest.is_some(), |name| {
                expansions_of(name).is_some()
            })?;
        if let (Some(name), Some(found)) = (unnamed, manifest.as_mut()) {
            let checkpoint = dir.join(&name);
            let data = fs::read(&checkpoint).map_err(io_at(&checkpoint))?;
            found.checkpoint = expansions_of(&name).map(|expansions| CheckpointRecord {
                expansions,
                bytes: data.len() as u64,
                checksum: checksum(&data),
            });
            return Ok((manifest, true));
        }
    }
    Ok((manifest, false))
}

/// The expansion count in a checkpoint's name ([`checkpoint_name`]).
fn expansions_of(name: &str) -> Option<u64> {
    name.strip_prefix("checkpoint-")?.strip_suffix(".owbook")?.parse().ok()
}

/// A book read from its directory.
#[derive(Clone, Debug)]
pub struct StoredBook {
    /// The directory's manifest.
    pub manifest: Manifest,
    /// `None` until the first checkpoint.
    pub graph: Option<BookGraph>,
}

/// Loads the book in `dir` (read-only; no lock). A growth running
/// meanwhile may save between reading the manifest and the files: a load
/// that fails while the manifest changed under it is tried again.
pub fn load(dir: &Path) -> Result<StoredBook, BookError> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let mut attempt = 0;
    loop {
        let before = fs::read(&manifest_path).ok();
        match load_once(dir) {
            Err(_) if attempt < 3 && fs::read(&manifest_path).ok() != before => attempt += 1,
            loaded => return loaded,
        }
    }
}

fn load_once(dir: &Path) -> Result<StoredBook, BookError> {
    let manifest = read_manifest(dir)?.ok_or_else(|| BookError::NotABook { dir: dir.to_path_buf() })?;
    let graph = match manifest.checkpoint {
        Some(record) => Some(load_checkpoint(dir, &manifest.parameters, record)?),
        None => None,
    };
    Ok(StoredBook { manifest, graph })
}

/// Reads, checks and decodes the checkpoint the manifest names.
pub fn load_checkpoint(
    dir: &Path,
    parameters: &Parameters,
    record: CheckpointRecord,
) -> Result<BookGraph, BookError> {
    let path = checkpoint_path(dir, record.expansions);
    let corrupt = |problem: String| BookError::Corrupt { path: path.clone(), problem };
    let data = resumable::read_checked(&path, record.bytes, record.checksum)?;
    let raw = crate::compressed::read_within_memory(&data[..]).map_err(|e| corrupt(e.to_string()))?;
    let (found, graph) = decode(&raw).map_err(|e| corrupt(e.to_string()))?;
    if found != *parameters {
        return Err(corrupt(format!(
            "made with {}, the manifest says {}",
            found.describe(),
            parameters.describe()
        )));
    }
    if graph.expansions() != record.expansions {
        return Err(corrupt(format!(
            "holds {} expansions, the manifest says {}",
            graph.expansions(),
            record.expansions
        )));
    }
    Ok(graph)
}

/// A book directory held for growth (the lock is released on drop).
pub struct BookDir {
    held: HeldDirectory,
    manifest: Manifest,
}

impl BookDir {
    /// Creates or opens `dir` for growth: takes the lock, reads the
    /// manifest or writes a new one with `parameters`, checks the size and
    /// checksum of the checkpoint it names, then removes temporary files
    /// and checkpoints the manifest does not name. `choose` gets the
    /// recorded parameters (if any) and returns the ones to use; a book
    /// with other parameters is refused.
    pub fn open(
        dir: &Path,
        choose: impl FnOnce(Option<&Parameters>) -> Result<Parameters, BookError>,
    ) -> Result<BookDir, BookError> {
        let held = HeldDirectory::take(dir, &BOOK_DIRECTORY)?;
        let (found, adopted) = read_manifest_adopting(dir)?;
        let parameters = choose(found.as_ref().map(|m| &m.parameters))?;
        if parameters.evaluator.contains(['\n', '\r']) || !usable_batch(parameters.batch) {
            return Err(BookError::BadOption(format!("unusable parameters: {}", parameters.describe())));
        }
        let manifest = match found {
            Some(found) => {
                if found.parameters != parameters {
                    return Err(BookError::Parameters {
                        dir: dir.to_path_buf(),
                        found: found.parameters.describe(),
                        wanted: parameters.describe(),
                    });
                }
                found
            }
            None => {
                let manifest = Manifest { parameters, checkpoint: None };
                held.commit_manifest(&manifest.render())?;
                manifest
            }
        };
        // Strays go only once the checkpoint the manifest names is found
        // intact: a damaged manifest naming another checkpoint would
        // otherwise have the real one removed as a stray. (It is read
        // again, and decoded, when the growth loads it.)
        if let Some(record) = manifest.checkpoint {
            resumable::read_checked(&checkpoint_path(dir, record.expansions), record.bytes, record.checksum)?;
            // An adopted checkpoint is named once it has passed every check
            // a load makes (so the next save cannot leave two unnamed).
            if adopted {
                load_checkpoint(dir, &manifest.parameters, record)?;
                held.commit_manifest(&manifest.render())?;
            }
        }
        held.remove_strays(manifest.checkpoint.map(|c| checkpoint_name(c.expansions)).as_deref());
        Ok(BookDir { held, manifest })
    }

    /// The manifest: as read or written on opening, updated by each
    /// [`BookDir::save`].
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The book directory.
    pub fn path(&self) -> &Path {
        self.held.path()
    }

    /// The graph of the current checkpoint, if there is one.
    pub fn load_graph(&self) -> Result<Option<BookGraph>, BookError> {
        match self.manifest.checkpoint {
            None => Ok(None),
            Some(record) => load_checkpoint(self.path(), &self.manifest.parameters, record).map(Some),
        }
    }

    /// Writes a checkpoint of `graph` (atomically), then the manifest that
    /// names it, then removes the previous checkpoint. A crash at any point
    /// leaves the old manifest and checkpoint, or the new ones.
    pub fn save(&mut self, graph: &BookGraph) -> Result<(), BookError> {
        let expansions = graph.expansions();
        if self.manifest.checkpoint.map(|c| c.expansions) == Some(expansions) {
            return Ok(());
        }
        let raw = encode(graph, &self.manifest.parameters);
        let name = checkpoint_name(expansions);
        let compressed = zstd::bulk::compress(&raw, ZSTD_LEVEL).map_err(io_at(&self.path().join(&name)))?;
        self.held.commit(&name, &compressed)?;
        let previous = self.manifest.checkpoint.replace(CheckpointRecord {
            expansions,
            bytes: compressed.len() as u64,
            checksum: checksum(&compressed),
        });
        self.held.commit_manifest(&self.manifest.render())?;
        if let Some(old) = previous {
            self.held.discard(&checkpoint_name(old.expansions));
        }
        Ok(())
    }
}

// ------------------------------------------------------------ the record

const KIND_LEAF: u8 = 0;
const KIND_EXPANDED: u8 = 1;
const KIND_TERMINAL: u8 = 2;
const NO_MOVE: u8 = 0xFF;
const FLAG_REPETITION: u8 = 1;

/// The decompressed checkpoint: see `docs/book-format.md`.
pub fn encode(graph: &BookGraph, parameters: &Parameters) -> Vec<u8> {
    let mut out = Encoder::with_capacity(64 + graph.len() * 48);
    out.raw(CHECKPOINT_MAGIC);
    out.u32(CHECKPOINT_VERSION);
    out.i64(parameters.omega.micro());
    out.u32(parameters.batch);
    // The evaluator's length is a u32 (the codec's blobs count in u64).
    out.u32(parameters.evaluator.len() as u32);
    out.raw(parameters.evaluator.as_bytes());
    out.u64(graph.expansions());
    out.u32(graph.len() as u32);
    for node in graph.nodes() {
        out.u64(node.key);
        out.u8(match node.kind {
            NodeKind::Leaf => KIND_LEAF,
            NodeKind::Expanded => KIND_EXPANDED,
            NodeKind::Terminal => KIND_TERMINAL,
        });
        out.i16(node.eval.score);
        out.u16(node.eval.depth);
        out.u64(node.eval.nodes);
        out.u8(node.eval.best.unwrap_or(NO_MOVE));
        out.u64(node.visits);
        out.u8(node.edges.len() as u8);
        for edge in &node.edges {
            out.u8(edge.pit);
            out.u8(if edge.repetition.is_some() { FLAG_REPETITION } else { 0 });
            out.u32(edge.child);
            out.u64(edge.visits);
            out.i16(edge.repetition.unwrap_or(0));
        }
    }
    out.u32(graph.pending().len() as u32);
    for selection in graph.pending() {
        out.u32(selection.leaf);
        out.u32(selection.path.len() as u32);
        for &(node, edge) in &selection.path {
            out.u32(node);
            out.u8(edge as u8);
        }
    }
    let sum = checksum(&out.bytes);
    out.u64(sum);
    out.into_bytes()
}

/// Why a decompressed checkpoint record was refused ([`decode`]).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum CheckpointError {
    /// Too short, or not starting with [`CHECKPOINT_MAGIC`].
    NotACheckpoint,
    /// The checksum at the end is not the record's.
    ChecksumMismatch,
    /// A record version this reader does not know.
    UnknownVersion(u32),
    /// ω outside what [`Omega::from_micro`] accepts.
    OmegaOutOfRange(i64),
    /// A batch size outside 1..=[`MAX_BATCH`].
    BadBatch(u32),
    /// The record ends inside a value, holds an evaluator that is not
    /// UTF-8, or goes on after its last value.
    Decode(DecodeError),
    /// No node, or more than the record's bytes can hold.
    NodeCount(usize),
    /// More pending leaves than a batch holds.
    PendingCount {
        /// The pending leaves recorded.
        count: usize,
        /// The batch size.
        batch: u32,
    },
    /// A pending path of more steps than the record's bytes can hold.
    PathLength(usize),
    /// Node 0 is not the start of the game.
    NotFromTheStart,
    /// The expanded nodes are not as many as the expansions recorded.
    ExpansionCount {
        /// Expanded nodes found.
        expanded: u64,
        /// Expansions recorded.
        recorded: u64,
    },
    /// One node is wrong.
    Node {
        /// The node's id.
        id: usize,
        /// What is wrong with it.
        problem: NodeProblem,
    },
    /// The nodes do not make a graph: an edge outside it, a cycle, a key
    /// twice, a pending leaf off it.
    Graph(GraphError),
}

/// What is wrong with one node of a checkpoint ([`CheckpointError::Node`]).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum NodeProblem {
    /// The key is no 44-bit state key.
    NotAStateKey(u64),
    /// The key does not decode to a state.
    UndecodableKey,
    /// A kind other than leaf, expanded, terminal.
    UnknownKind(u8),
    /// A score outside ±1000.
    ScoreOutOfRange(i16),
    /// A best move that is no pit of the mover's row.
    BadBestMove(u8),
    /// More visits than expansions.
    TooManyVisits {
        /// The node's visits.
        visits: u64,
        /// The book's expansions.
        expansions: u64,
    },
    /// Edge flags other than "repetition", or a repetition value without
    /// the flag.
    BadEdgeFlags,
    /// An edge to a node past the last.
    EdgeOutside {
        /// Where the edge points.
        child: u32,
        /// How many nodes there are.
        count: usize,
    },
    /// An edge visited more often than its node.
    EdgeVisits {
        /// The edge's visits.
        edge: u64,
        /// The node's visits.
        node: u64,
    },
    /// Marked terminal, but the game goes on.
    TerminalNotOver,
    /// The game is over, but the node is not marked terminal.
    OverNotTerminal,
    /// An expanded node whose edges are not its legal moves in pit order.
    EdgesNotTheLegalMoves {
        /// The edges' pits.
        pits: Vec<u8>,
        /// The legal moves.
        legal: Vec<u8>,
    },
    /// Edges on a node that is not expanded.
    EdgesOnUnexpanded,
    /// A finished game valued other than its result.
    FinishedGameScore(i16),
    /// An edge's move leads to another state than its child's.
    MoveLeadsElsewhere {
        /// The move.
        pit: u8,
        /// The edge's child.
        child: u32,
    },
    /// A capture marked as closing a cycle (only quiet moves can).
    CaptureClosesCycle {
        /// The move.
        pit: u8,
    },
    /// A cycle valued other than each side taking its own row.
    CycleValue {
        /// The move closing the cycle.
        pit: u8,
        /// The value recorded.
        value: i16,
    },
}

impl fmt::Display for NodeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeProblem::NotAStateKey(key) => write!(f, "0x{key:X} is not a state key"),
            NodeProblem::UndecodableKey => write!(f, "undecodable key"),
            NodeProblem::UnknownKind(kind) => write!(f, "unknown kind {kind}"),
            NodeProblem::ScoreOutOfRange(score) => write!(f, "score {score} outside ±1000"),
            NodeProblem::BadBestMove(pit) => write!(f, "best move {pit}"),
            NodeProblem::TooManyVisits { visits, expansions } => {
                write!(f, "{visits} visits in a book of {expansions} expansions")
            }
            NodeProblem::BadEdgeFlags => write!(f, "bad edge flags"),
            NodeProblem::EdgeOutside { child, count } => write!(f, "edge to node {child} of {count}"),
            NodeProblem::EdgeVisits { edge, node } => {
                write!(f, "an edge of {edge} visits below a node of {node}")
            }
            NodeProblem::TerminalNotOver => write!(f, "terminal, but the game is not over"),
            NodeProblem::OverNotTerminal => write!(f, "the game is over, but the node is not terminal"),
            NodeProblem::EdgesNotTheLegalMoves { pits, legal } => {
                write!(f, "edges {pits:?}, legal moves {legal:?}")
            }
            NodeProblem::EdgesOnUnexpanded => write!(f, "edges on a node that is not expanded"),
            NodeProblem::FinishedGameScore(score) => {
                write!(f, "a finished game scored {score}, not its result")
            }
            NodeProblem::MoveLeadsElsewhere { pit, child } => {
                write!(f, "move {pit} does not lead to node {child}")
            }
            NodeProblem::CaptureClosesCycle { pit } => write!(f, "move {pit} captures, yet closes a cycle"),
            NodeProblem::CycleValue { pit, value } => {
                write!(f, "move {pit} closes a cycle valued {value}, not its split")
            }
        }
    }
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::NotACheckpoint => write!(f, "not an opening book checkpoint"),
            CheckpointError::ChecksumMismatch => write!(f, "inner checksum mismatch"),
            CheckpointError::UnknownVersion(version) => {
                write!(f, "version {version}, this reader knows 1 to {CHECKPOINT_VERSION}")
            }
            CheckpointError::OmegaOutOfRange(micro) => write!(f, "omega out of range ({micro} micro-plies)"),
            CheckpointError::BadBatch(batch) => write!(f, "batch size {batch} outside 1..={MAX_BATCH}"),
            CheckpointError::Decode(error) => write!(f, "{error}"),
            CheckpointError::NodeCount(count) => write!(f, "{count} nodes cannot fit in the record"),
            CheckpointError::PendingCount { count, batch } => {
                write!(f, "{count} pending leaves in batches of {batch}")
            }
            CheckpointError::PathLength(steps) => {
                write!(f, "a path of {steps} steps cannot fit in the record")
            }
            CheckpointError::NotFromTheStart => write!(f, "node 0 is not the start of the game"),
            CheckpointError::ExpansionCount { expanded, recorded } => {
                write!(f, "{expanded} expanded nodes, the record says {recorded} expansions")
            }
            CheckpointError::Node { id, problem } => write!(f, "node {id}: {problem}"),
            CheckpointError::Graph(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckpointError::Decode(error) => Some(error),
            CheckpointError::Graph(error) => Some(error),
            _ => None,
        }
    }
}

impl From<DecodeError> for CheckpointError {
    fn from(error: DecodeError) -> CheckpointError {
        CheckpointError::Decode(error)
    }
}

impl From<GraphError> for CheckpointError {
    fn from(error: GraphError) -> CheckpointError {
        CheckpointError::Graph(error)
    }
}

/// Bytes of the smallest node record (a leaf).
const MIN_NODE_BYTES: usize = 8 + 1 + 2 + 2 + 8 + 1 + 8 + 1;
/// Bytes of one step of a pending path (node, edge).
const PATH_STEP_BYTES: usize = 4 + 1;

/// Decodes and checks a decompressed checkpoint. Never panics: any
/// inconsistency is an error, naming the node where there is one.
pub fn decode(bytes: &[u8]) -> Result<(Parameters, BookGraph), CheckpointError> {
    if bytes.len() < 8 + 8 || &bytes[..8] != CHECKPOINT_MAGIC {
        return Err(CheckpointError::NotACheckpoint);
    }
    let (body, trailer) = bytes.split_at(bytes.len() - 8);
    let mut sum = [0u8; 8];
    sum.copy_from_slice(trailer);
    if checksum(body) != u64::from_le_bytes(sum) {
        return Err(CheckpointError::ChecksumMismatch);
    }
    let mut r = Decoder::new(body);
    r.reading("the magic").blob_exact(CHECKPOINT_MAGIC.len())?;
    let version = r.reading("the version").u32()?;
    // Version 1 had no pending leaves; otherwise it is the same record.
    if !(1..=CHECKPOINT_VERSION).contains(&version) {
        return Err(CheckpointError::UnknownVersion(version));
    }
    let micro = r.reading("omega").i64()?;
    let omega = Omega::from_micro(micro).ok_or(CheckpointError::OmegaOutOfRange(micro))?;
    let batch = r.reading("the batch size").u32()?;
    if !usable_batch(batch) {
        return Err(CheckpointError::BadBatch(batch));
    }
    let evaluator_len = r.reading("the evaluator").u32()? as usize;
    let evaluator = r.reading("the evaluator").text_exact(evaluator_len)?.to_string();
    let expansions = r.reading("the expansions").u64()?;
    let count = r.reading("the node count").u32()? as usize;
    if count == 0 || count > r.remaining() / MIN_NODE_BYTES {
        return Err(CheckpointError::NodeCount(count));
    }
    let mut nodes = Vec::with_capacity(count);
    for id in 0..count {
        let at = |problem| CheckpointError::Node { id, problem };
        let key = r.reading("a key").u64()?;
        if !is_state_key(key) {
            return Err(at(NodeProblem::NotAStateKey(key)));
        }
        let kind = match r.reading("a kind").u8()? {
            KIND_LEAF => NodeKind::Leaf,
            KIND_EXPANDED => NodeKind::Expanded,
            KIND_TERMINAL => NodeKind::Terminal,
            k => return Err(at(NodeProblem::UnknownKind(k))),
        };
        let score = r.reading("a score").i16()?;
        if !(-1000..=1000).contains(&score) {
            return Err(at(NodeProblem::ScoreOutOfRange(score)));
        }
        let depth = r.reading("a depth").u16()?;
        let evaluated = r.reading("a node count").u64()?;
        let best = match r.reading("a best move").u8()? {
            NO_MOVE => None,
            pit if (pit as usize) < ROW => Some(pit),
            pit => return Err(at(NodeProblem::BadBestMove(pit))),
        };
        let visits = r.reading("visits").u64()?;
        // Each expansion's selection passes a node, and an edge, once.
        if visits > expansions {
            return Err(at(NodeProblem::TooManyVisits { visits, expansions }));
        }
        let edge_count = r.reading("an edge count").u8()? as usize;
        let mut edges = Vec::with_capacity(edge_count);
        for _ in 0..edge_count {
            let pit = r.reading("a pit").u8()?;
            let flags = r.reading("edge flags").u8()?;
            let child = r.reading("a child").u32()?;
            let edge_visits = r.reading("edge visits").u64()?;
            let repetition = r.reading("a repetition value").i16()?;
            if flags & !FLAG_REPETITION != 0 || (flags == 0 && repetition != 0) {
                return Err(at(NodeProblem::BadEdgeFlags));
            }
            if child as usize >= count {
                return Err(at(NodeProblem::EdgeOutside { child, count }));
            }
            if edge_visits > visits {
                return Err(at(NodeProblem::EdgeVisits { edge: edge_visits, node: visits }));
            }
            edges.push(Edge {
                pit,
                child,
                repetition: (flags & FLAG_REPETITION != 0).then_some(repetition),
                visits: edge_visits,
            });
        }
        let state = state_from_key(key).ok_or_else(|| at(NodeProblem::UndecodableKey))?;
        check_node(&state, kind, &edges).map_err(at)?;
        if kind == NodeKind::Terminal && terminal_value(&state) != Some(score as i32) {
            return Err(at(NodeProblem::FinishedGameScore(score)));
        }
        nodes.push(Node {
            key,
            kind,
            eval: NodeEval { score, depth, nodes: evaluated, best },
            visits,
            value: score as i32,
            priority: 0,
            edges,
            parents: Vec::new(),
            captured: state.stores()[0] + state.stores()[1],
            in_flight: false,
        });
    }
    let mut pending = Vec::new();
    if version >= 2 {
        let count = r.reading("the pending count").u32()? as usize;
        if count > batch as usize {
            return Err(CheckpointError::PendingCount { count, batch });
        }
        for _ in 0..count {
            let leaf = r.reading("a pending leaf").u32()?;
            let steps = r.reading("a path length").u32()? as usize;
            if steps > r.remaining() / PATH_STEP_BYTES {
                return Err(CheckpointError::PathLength(steps));
            }
            let mut path = Vec::with_capacity(steps);
            for _ in 0..steps {
                path.push((r.reading("a path node").u32()?, r.reading("a path edge").u8()? as usize));
            }
            pending.push(Selection { leaf, path });
        }
    }
    r.finish()?;
    if nodes[0].key != state_key(&GameState::start()) {
        return Err(CheckpointError::NotFromTheStart);
    }
    for (id, node) in nodes.iter().enumerate() {
        if node.edges.is_empty() {
            continue;
        }
        let at = |problem| CheckpointError::Node { id, problem };
        let parent = state_from_key(node.key).ok_or_else(|| at(NodeProblem::UndecodableKey))?;
        for edge in &node.edges {
            let child_key = nodes[edge.child as usize].key;
            let mut state = parent.clone();
            state.play_unchecked(edge.pit as usize);
            if state_key(&state) != child_key {
                return Err(at(NodeProblem::MoveLeadsElsewhere { pit: edge.pit, child: edge.child }));
            }
            // Only a move without capture can close a cycle, and the game
            // then ends with each side taking its own row.
            if let Some(value) = edge.repetition {
                if node.captured != nodes[edge.child as usize].captured {
                    return Err(at(NodeProblem::CaptureClosesCycle { pit: edge.pit }));
                }
                if value as i32 != repetition_value(&state) {
                    return Err(at(NodeProblem::CycleValue { pit: edge.pit, value }));
                }
            }
        }
    }
    let expanded = nodes.iter().filter(|n| n.kind == NodeKind::Expanded).count() as u64;
    if expanded != expansions {
        return Err(CheckpointError::ExpansionCount { expanded, recorded: expansions });
    }
    let graph = BookGraph::from_parts(omega, nodes, expansions, pending)?;
    Ok((Parameters { omega, batch, evaluator }, graph))
}

/// A node's kind agrees with its state, and an expanded node has exactly
/// one edge per legal move, in pit order.
fn check_node(state: &GameState, kind: NodeKind, edges: &[Edge]) -> Result<(), NodeProblem> {
    match kind {
        NodeKind::Terminal if !state.is_over() => Err(NodeProblem::TerminalNotOver),
        NodeKind::Leaf | NodeKind::Expanded if state.is_over() => Err(NodeProblem::OverNotTerminal),
        NodeKind::Expanded => {
            let pits: Vec<u8> = edges.iter().map(|e| e.pit).collect();
            let legal: Vec<u8> = state.legal_moves().map(|p| p as u8).collect();
            if pits == legal {
                Ok(())
            } else {
                Err(NodeProblem::EdgesNotTheLegalMoves { pits, legal })
            }
        }
        _ if !edges.is_empty() => Err(NodeProblem::EdgesOnUnexpanded),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::dropout::{descend, select_batch};

    fn shipped() -> (Parameters, BookGraph) {
        let stored = load(Path::new("data/book-dir")).unwrap();
        (stored.manifest.parameters, stored.graph.unwrap())
    }

    #[test]
    fn pending_leaves_round_trip_and_return_in_flight() {
        let (parameters, mut graph) = shipped();
        let batch = select_batch(&mut graph, 5);
        graph.set_pending(batch.clone());
        let (_, read) = decode(&encode(&graph, &parameters)).unwrap();
        assert_eq!(read.pending(), &batch[..]);
        assert!(batch.iter().all(|s| read.node(s.leaf).in_flight));
        assert_eq!(read, graph, "values and priorities as before the save");
        // With the leaves in flight the next descent goes elsewhere.
        assert!(!batch.iter().any(|s| Some(s.leaf) == descend(&read).map(|d| d.leaf)));
    }

    #[test]
    fn pending_leaves_off_the_graph_are_refused() {
        let (parameters, graph) = shipped();
        let good = descend(&graph).unwrap();
        let root = graph.root();
        let cases: Vec<(Vec<Selection>, &str)> = vec![
            (vec![Selection { leaf: good.leaf, path: vec![(root, 9)] }], "leaves the graph"),
            (vec![good.clone(), good.clone()], "not a distinct leaf"),
            (vec![Selection { leaf: root, path: vec![] }], "not a distinct leaf"),
            (vec![Selection { leaf: good.leaf, path: good.path[1..].to_vec() }], "leaves the graph"),
            (vec![good.clone(); parameters.batch as usize + 1], "pending leaves in batches of"),
        ];
        for (pending, expected) in cases {
            let mut bad = graph.clone();
            bad.set_pending(pending);
            let error = decode(&encode(&bad, &parameters)).unwrap_err();
            assert!(error.to_string().contains(expected), "{error}");
        }
    }
}

#[cfg(test)]
mod content_checks {
    //! The decoder refuses contents no growth writes, even under intact
    //! checksums: values of finished games and cycles, visit counts and
    //! batch sizes.
    use super::*;
    use crate::game::Side;

    const LEAF: NodeEval = NodeEval { score: 0, depth: 1, nodes: 1, best: None };

    /// The start, and beside it (unreachable from it, which the record
    /// allows) a four-seed endgame expanded breadth-first: its quiet moves
    /// close cycles and its captures finish games.
    fn book_with_cycles() -> (Parameters, BookGraph) {
        let omega = Omega::from_micro(40_000).unwrap();
        let mut graph = BookGraph::start(omega, LEAF);
        let endgame = GameState::from_parts([0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0], [22, 22], Side::South);
        let mut next = graph.add_node(state_key(&endgame), 44, NodeKind::Leaf, LEAF);
        while (next as usize) < graph.len() && graph.expansions() < 2_000 {
            if graph.node(next).kind == NodeKind::Leaf {
                graph.expand_with(next, |_| LEAF).unwrap();
            }
            next += 1;
        }
        (Parameters { omega, batch: 16, evaluator: "test".into() }, graph)
    }

    /// Decodes `graph` with one node changed by `change`.
    fn decode_changed(
        parameters: &Parameters,
        graph: &BookGraph,
        change: impl FnOnce(&mut Vec<Node>),
    ) -> Result<(Parameters, BookGraph), CheckpointError> {
        let mut nodes = graph.nodes().to_vec();
        change(&mut nodes);
        let changed = BookGraph::from_parts(graph.omega(), nodes, graph.expansions(), Vec::new())?;
        decode(&encode(&changed, parameters))
    }

    /// The first edge (node, edge index) that `wanted` accepts.
    fn find_edge(graph: &BookGraph, wanted: impl Fn(&Node, &Edge) -> bool) -> (usize, usize) {
        graph
            .nodes()
            .iter()
            .enumerate()
            .find_map(|(id, node)| node.edges.iter().position(|e| wanted(node, e)).map(|e| (id, e)))
            .expect("the endgame book has such an edge")
    }

    #[test]
    fn cycles_and_finished_games_round_trip_with_their_exact_values() {
        let (parameters, graph) = book_with_cycles();
        let mut cycles = 0;
        for node in graph.nodes() {
            for edge in &node.edges {
                let child = graph.node(edge.child);
                let Some(value) = edge.repetition else { continue };
                cycles += 1;
                assert_eq!(node.captured, child.captured, "only a quiet move closes a cycle");
                let state = state_from_key(child.key).unwrap();
                assert_eq!(value as i32, repetition_value(&state));
            }
        }
        let finished = graph.nodes().iter().filter(|n| n.kind == NodeKind::Terminal).count();
        assert!(cycles > 0 && finished > 0, "{cycles} cycles, {finished} finished games");
        let (_, read) = decode(&encode(&graph, &parameters)).unwrap();
        assert_eq!(read, graph);
    }

    #[test]
    fn wrong_values_of_cycles_and_finished_games_are_refused() {
        let (parameters, graph) = book_with_cycles();
        let (id, e) = find_edge(&graph, |_, edge| edge.repetition.is_some());
        let error = decode_changed(&parameters, &graph, |nodes| {
            let value = nodes[id].edges[e].repetition.as_mut().unwrap();
            *value = if *value == 0 { 1 } else { -*value };
        })
        .unwrap_err();
        assert!(error.to_string().contains("closes a cycle valued"), "{error}");

        let captures = |node: &Node, edge: &Edge| graph.node(edge.child).captured != node.captured;
        let (id, e) = find_edge(&graph, |node, edge| captures(node, edge) && edge.repetition.is_none());
        let value =
            repetition_value(&state_from_key(graph.node(graph.nodes()[id].edges[e].child).key).unwrap());
        let error =
            decode_changed(&parameters, &graph, |nodes| nodes[id].edges[e].repetition = Some(value as i16))
                .unwrap_err();
        assert!(error.to_string().contains("captures, yet closes a cycle"), "{error}");

        let finished = graph.nodes().iter().position(|n| n.kind == NodeKind::Terminal).unwrap();
        let error = decode_changed(&parameters, &graph, |nodes| {
            let score = &mut nodes[finished].eval.score;
            *score = if *score == 0 { 1000 } else { 0 };
        })
        .unwrap_err();
        assert!(error.to_string().contains("a finished game scored"), "{error}");
    }

    #[test]
    fn visits_beyond_the_expansions_and_batches_out_of_range_are_refused() {
        let (parameters, graph) = book_with_cycles();
        let expansions = graph.expansions();
        let error =
            decode_changed(&parameters, &graph, |nodes| nodes[1].visits = expansions + 1).unwrap_err();
        assert!(error.to_string().contains("visits in a book of"), "{error}");
        let (id, e) = find_edge(&graph, |_, _| true);
        let error = decode_changed(&parameters, &graph, |nodes| nodes[id].edges[e].visits = 1).unwrap_err();
        assert!(error.to_string().contains("an edge of 1 visits below a node of 0"), "{error}");
        for batch in [0, MAX_BATCH + 1, u32::MAX] {
            let error = decode(&encode(&graph, &Parameters { batch, ..parameters.clone() })).unwrap_err();
            assert!(error.to_string().contains("batch size"), "{error}");
        }
        let error = decode(&encode(&graph, &Parameters { batch: MAX_BATCH, ..parameters })).map(|_| ());
        assert_eq!(error, Ok(()));
    }
}
