//! Reading books: what a state's book moves are, in our own books and in
//! the engine's two layouts alike ([`BookSource`]), the book line, the depth
//! in book, and the statistics of a grown book.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::path::Path;

use super::error::BookError;
use super::graph::{BookGraph, NodeKind};
use super::store::Parameters;
use crate::formats::doe::DoeBook;
use crate::formats::opening_book::OpeningBook;
use crate::formats::{detect, FileKind};
use crate::game::{GameState, Side};
use crate::notation::Game;
use crate::rank::{state_key, SOUTH_TO_MOVE_BIT};
use crate::rules::Pit;

/// A move a book knows.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct BookMove {
    /// The mover's pit, 0..6.
    pub pit: Pit,
    /// The move's value for the player who plays it, engine units (higher
    /// is better).
    pub score: f64,
    /// The move's count, where the book records one: in our books 1 + the
    /// expansions whose selection went through the move; in DOE books the
    /// engine's visits (our DOE exports store our count × 1,000,000).
    pub count: Option<u64>,
    /// Plies of book along the principal line from the move on, the move
    /// included, where the book tells (our books); `u32::MAX` for a move
    /// that ends the game or closes a cycle in the book's graph (its value
    /// is then exact, unless [`BookMove::repetition_caveat`] says it is not
    /// this game's).
    pub depth: Option<u32>,
    /// Where the book tells (our books): the move's value is not this
    /// game's because of a repetition along the move's principal line. The
    /// book's graph merges transpositions, so a repetition edge (a move
    /// back to a state from which its own node can be reached) has its
    /// value only in a game that came through the repeated state; this is
    /// set when the line ends with one the game would not repeat, or when
    /// the line comes back to a state of the game since its last capture
    /// (docs/book-format.md, on repetition edges). An engine may want to
    /// search such a move rather than trust it; [`crate::book::play::BookRule`]
    /// does not play it.
    pub repetition_caveat: Option<bool>,
}

/// Anything that knows book moves.
pub trait BookSource: Sync {
    /// The book moves of `state` in pit order; empty if it is not in the
    /// book.
    fn book_moves(&self, state: &GameState) -> Vec<BookMove>;
}

impl BookSource for BookGraph {
    fn book_moves(&self, state: &GameState) -> Vec<BookMove> {
        let Some(id) = self.get(state_key(state)) else {
            return Vec::new();
        };
        let seen = crate::rank::keys_since_capture(state);
        self.node(id)
            .edges
            .iter()
            .map(|edge| BookMove {
                pit: edge.pit as Pit,
                score: self.move_value(edge) as f64,
                count: Some(edge.visits + 1),
                depth: Some(self.move_depth(edge)),
                repetition_caveat: Some(self.repetition_caveat(edge, &seen)),
            })
            .collect()
    }
}

impl BookSource for OpeningBook {
    fn book_moves(&self, state: &GameState) -> Vec<BookMove> {
        let Some(entry) = self.get_state(state) else {
            return Vec::new();
        };
        state
            .legal_moves()
            .filter_map(|pit| {
                entry.score(pit).map(|score| BookMove {
                    pit,
                    score: score as f64,
                    count: None,
                    depth: None,
                    repetition_caveat: None,
                })
            })
            .collect()
    }
}

impl BookSource for DoeBook {
    fn book_moves(&self, state: &GameState) -> Vec<BookMove> {
        let mut moves: Vec<BookMove> = self
            .children_of_state(state)
            .iter()
            .filter(|e| e.mover() == state.to_move() && state.legal_moves().contains(e.relative_pit()))
            .map(|e| BookMove {
                pit: e.relative_pit(),
                score: -e.score,
                count: Some(e.count),
                depth: None,
                repetition_caveat: None,
            })
            .collect();
        moves.sort_by_key(|m| m.pit);
        moves.dedup_by_key(|m| m.pit);
        moves
    }
}

/// The best of some book moves: the highest score, the first pit on a tie
/// (NaN scores never win).
pub fn best_move(moves: &[BookMove]) -> Option<&BookMove> {
    let mut best: Option<&BookMove> = None;
    for m in moves.iter().filter(|m| !m.score.is_nan()) {
        if best.is_none_or(|b| m.score > b.score) {
            best = Some(m);
        }
    }
    best
}

/// A book in any of the layouts we read.
#[derive(Clone, Debug)]
pub enum AnyBook {
    /// Our own book directory.
    Graph {
        /// The book's graph, from its latest checkpoint.
        graph: BookGraph,
        /// The parameters its manifest records.
        parameters: Parameters,
    },
    /// "Oware Opening Book 1.0".
    Classic(OpeningBook),
    /// "DOE Opening Book 1.0".
    Doe(DoeBook),
}

impl AnyBook {
    /// Opens a book directory (checked: manifest and checkpoint
    /// checksums), or a file in either engine layout, "Oware Opening Book
    /// 1.0" or "DOE Opening Book 1.0", compressed with zstd or not, told
    /// apart by their first bytes. The engine's layouts carry no checksum:
    /// their entries are range-checked when read.
    pub fn open(path: &Path) -> Result<AnyBook, BookError> {
        if path.is_dir() {
            let stored = super::store::load(path)?;
            let graph = stored.graph.ok_or_else(|| BookError::Empty { dir: path.to_path_buf() })?;
            return Ok(AnyBook::Graph { graph, parameters: stored.manifest.parameters });
        }
        let io = |error| BookError::Io { path: path.to_path_buf(), error };
        let mut bytes = std::fs::read(path).map_err(io)?;
        if crate::compressed::is_zstd(&bytes) {
            bytes = crate::compressed::read_within_memory(&bytes[..]).map_err(io)?;
        }
        let format = |error| BookError::Format { path: Some(path.to_path_buf()), error };
        match detect(&bytes) {
            Some(FileKind::OpeningBook) => {
                Ok(AnyBook::Classic(OpeningBook::from_bytes(&bytes).map_err(format)?))
            }
            Some(FileKind::Doe) => Ok(AnyBook::Doe(DoeBook::from_bytes(&bytes).map_err(format)?)),
            _ => Err(BookError::UnknownFormat { path: path.to_path_buf() }),
        }
    }

    /// Whether the book's contents are checked against checksums (our
    /// directories) or not (the engine's layouts have none).
    pub fn is_checked(&self) -> bool {
        matches!(self, AnyBook::Graph { .. })
    }

    /// The book as a [`BookSource`], whatever its layout.
    pub fn source(&self) -> &dyn BookSource {
        match self {
            AnyBook::Graph { graph, .. } => graph,
            AnyBook::Classic(book) => book,
            AnyBook::Doe(book) => book,
        }
    }

    /// The layout's name, for messages: "book directory", "Oware Opening
    /// Book 1.0" or "DOE Opening Book 1.0".
    pub fn kind(&self) -> &'static str {
        match self {
            AnyBook::Graph { .. } => "book directory",
            AnyBook::Classic(_) => "Oware Opening Book 1.0",
            AnyBook::Doe(_) => "DOE Opening Book 1.0",
        }
    }
}

impl BookSource for AnyBook {
    fn book_moves(&self, state: &GameState) -> Vec<BookMove> {
        self.source().book_moves(state)
    }
}

/// The longest book line [`book_line`] follows.
pub const MAX_LINE: usize = 200;

/// The book line from `state`: the best book move while there is one
/// (the game's own end and repetition rules apply).
pub fn book_line(source: &dyn BookSource, state: &GameState) -> Vec<(char, f64)> {
    let mut state = state.clone();
    let mut line = Vec::new();
    while line.len() < MAX_LINE && !state.is_over() {
        let moves = source.book_moves(&state);
        let Some(best) = best_move(&moves).copied() else {
            break;
        };
        let letter = state.to_move().move_letter(best.pit);
        if state.play(best.pit).is_err() {
            break;
        }
        line.push((letter, best.score));
    }
    line
}

/// Shortest distance in plies from the start of the game to `target`
/// along book moves (breadth first over at most `cap` states).
pub fn book_depth(source: &dyn BookSource, target: u64, cap: usize) -> Option<u32> {
    let start = GameState::start();
    let mut seen = HashSet::from([state_key(&start)]);
    let mut queue = VecDeque::from([(start, 0u32)]);
    while let Some((state, depth)) = queue.pop_front() {
        if state_key(&state) == target {
            return Some(depth);
        }
        for m in source.book_moves(&state) {
            let mut next = state.clone();
            if next.play(m.pit).is_err() {
                continue;
            }
            let next = GameState::from_parts(next.pits(), next.stores(), next.to_move());
            if seen.len() < cap && seen.insert(state_key(&next)) {
                queue.push_back((next, depth + 1));
            }
        }
    }
    None
}

/// What `openings probe` prints.
#[derive(Clone, Debug)]
pub struct ProbeReport {
    /// The state probed: where the game stands after its moves.
    pub state: GameState,
    /// The state's book moves, in pit order (empty if it is not in the
    /// book).
    pub moves: Vec<BookMove>,
    /// Plies from the start to the state along book moves.
    pub depth: Option<u32>,
    /// For a game: how many of its moves were played from book states with
    /// a book move, and how many it has.
    pub game_in_book: Option<(usize, usize)>,
    /// The book line from the state: each move's letter and its value for
    /// the player who plays it (engine units).
    pub line: Vec<(char, f64)>,
    /// Our own books: what the node holds.
    pub node: Option<String>,
}

/// Probes a book with a game (or a bare state).
pub fn probe(book: &AnyBook, game: &Game) -> ProbeReport {
    let source = book.source();
    let state = game.current.clone();
    let key = state_key(&state);
    let depth = match book {
        AnyBook::Graph { graph, .. } => {
            graph.get(key).map(|id| graph.depths()[id as usize]).filter(|&d| d != u32::MAX)
        }
        _ => book_depth(source, key, 2_000_000),
    };
    let game_in_book = (!game.moves.is_empty()).then(|| {
        let mut s = game.start.clone();
        let mut inside = 0;
        for letter in game.moves.chars() {
            let Ok(pit) = s.letter_pit(letter) else { break };
            if !source.book_moves(&s).iter().any(|m| m.pit == pit) || s.play_past_decision(pit).is_err() {
                break;
            }
            inside += 1;
        }
        (inside, game.moves.chars().count())
    });
    let node = match book {
        AnyBook::Graph { graph, .. } => graph.get(key).map(|id| {
            let n = graph.node(id);
            let kind = match n.kind {
                NodeKind::Leaf => "leaf",
                NodeKind::Expanded => "expanded",
                NodeKind::Terminal => "finished game",
            };
            let best = n
                .eval
                .best
                .map(|p| state.to_move().move_letter(p as usize).to_string())
                .unwrap_or_else(|| "-".into());
            format!(
                "{kind}, value {:+} (search {:+} at depth {}, {} nodes, best {best}), {} visits",
                n.value, n.eval.score, n.eval.depth, n.eval.nodes, n.visits
            )
        }),
        _ => None,
    };
    ProbeReport {
        line: book_line(source, &state),
        moves: source.book_moves(&state),
        depth,
        game_in_book,
        node,
        state,
    }
}

fn score_text(score: f64) -> String {
    if score.fract() == 0.0 {
        format!("{score:+}")
    } else {
        format!("{score:+.2}")
    }
}

impl fmt::Display for ProbeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "state: {}", self.state)?;
        if let Some(node) = &self.node {
            writeln!(f, "node: {node}")?;
        }
        match self.depth {
            Some(d) => writeln!(f, "depth in book: {d} plies from the start")?,
            None => writeln!(f, "depth in book: not reached from the start along book moves")?,
        }
        if let Some((inside, total)) = self.game_in_book {
            writeln!(f, "game: {inside} of its {total} moves were book moves")?;
        }
        if self.moves.is_empty() {
            writeln!(f, "book moves: none (the state is not in the book)")?;
        } else {
            let best = best_move(&self.moves).map(|m| m.pit);
            writeln!(f, "book moves (value for {:?}, best first marked *):", self.state.to_move())?;
            for m in &self.moves {
                let mark = if Some(m.pit) == best { '*' } else { ' ' };
                let count = m.count.map(|c| format!("  count {c}")).unwrap_or_default();
                let repetition = if m.repetition_caveat == Some(true) {
                    "  (not this game's value: repetition)"
                } else {
                    ""
                };
                writeln!(
                    f,
                    "  {mark} {} {:>8}{count}{repetition}",
                    self.state.to_move().move_letter(m.pit),
                    score_text(m.score)
                )?;
            }
        }
        let letters: String = self.line.iter().map(|(l, _)| *l).collect();
        write!(
            f,
            "book line: {} ({} plies)",
            if letters.is_empty() { "-" } else { &letters },
            self.line.len()
        )
    }
}

// ------------------------------------------------------------ statistics

/// Nodes at one distance from the root.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct DepthRow {
    /// Expanded nodes at this distance.
    pub expanded: usize,
    /// Leaves (evaluated, not expanded) at this distance.
    pub leaves: usize,
    /// Finished games at this distance.
    pub terminal: usize,
}

/// The shape and values of a grown book.
#[derive(Clone, Debug, PartialEq)]
pub struct BookStats {
    /// The parameters the book was grown with.
    pub parameters: Parameters,
    /// Leaves expanded so far.
    pub expansions: u64,
    /// Nodes in the graph, the root included.
    pub nodes: usize,
    /// Expanded nodes reachable from the root.
    pub expanded: usize,
    /// Leaves (evaluated, not expanded) reachable from the root.
    pub leaves: usize,
    /// Finished games reachable from the root.
    pub terminal: usize,
    /// Edges of the reachable nodes, repetition edges included.
    pub edges: usize,
    /// Edges into a node that already had another parent.
    pub transpositions: usize,
    /// Edges whose move ends the game by repetition.
    pub repetition_edges: usize,
    /// The root's backed-up value for its side to move (South in a book
    /// grown from the start), engine units.
    pub root_value: i32,
    /// The root's priority in plies (`None`: nothing left to expand).
    pub root_priority: Option<f64>,
    /// Index = plies from the root (shortest path).
    pub profile: Vec<DepthRow>,
    /// Mean depth of the leaves (open and finished).
    pub mean_leaf_depth: f64,
    /// Per root move: letter, value for South, expansions below it.
    pub root_moves: Vec<(char, i32, u64)>,
    /// Letters and move values (mover's view) of the principal line.
    pub principal_line: Vec<(char, i32)>,
}

fn side_of(key: u64) -> Side {
    if key & SOUTH_TO_MOVE_BIT != 0 {
        Side::South
    } else {
        Side::North
    }
}

/// The root's priority with the pending leaves of a batch (in flight)
/// counted as the leaves they are.
fn free_root_priority(graph: &BookGraph) -> i64 {
    if graph.pending().is_empty() {
        return graph.node(graph.root()).priority;
    }
    let mut free = graph.clone();
    let leaves: Vec<_> = graph.pending().iter().map(|s| s.leaf).collect();
    free.release(&leaves);
    free.node(free.root()).priority
}

/// The statistics of a book.
pub fn stats(graph: &BookGraph, parameters: &Parameters) -> BookStats {
    let depths = graph.depths();
    let mut profile: Vec<DepthRow> = Vec::new();
    let (mut expanded, mut leaves, mut terminal, mut edges, mut repetition_edges) = (0, 0, 0, 0, 0);
    let mut leaf_depths = 0u64;
    for (node, &depth) in graph.nodes().iter().zip(&depths) {
        if depth == u32::MAX {
            continue;
        }
        let d = depth as usize;
        if profile.len() <= d {
            profile.resize(d + 1, DepthRow::default());
        }
        match node.kind {
            NodeKind::Expanded => {
                expanded += 1;
                profile[d].expanded += 1;
            }
            NodeKind::Leaf => {
                leaves += 1;
                profile[d].leaves += 1;
                leaf_depths += d as u64;
            }
            NodeKind::Terminal => {
                terminal += 1;
                profile[d].terminal += 1;
                leaf_depths += d as u64;
            }
        }
        edges += node.edges.len();
        repetition_edges += node.edges.iter().filter(|e| e.repetition.is_some()).count();
    }
    let root = graph.node(graph.root());
    let root_side = side_of(root.key);
    let root_moves = root
        .edges
        .iter()
        .map(|e| {
            let value = graph.move_value(e);
            let south = if root_side == Side::South { value } else { -value };
            (root_side.move_letter(e.pit as usize), south, e.visits)
        })
        .collect();
    let principal_line = graph
        .principal_line(graph.root())
        .iter()
        .map(|(id, e)| {
            let side = side_of(graph.node(*id).key);
            (side.move_letter(e.pit as usize), graph.move_value(e))
        })
        .collect();
    BookStats {
        parameters: parameters.clone(),
        expansions: graph.expansions(),
        nodes: graph.len(),
        expanded,
        leaves,
        terminal,
        edges,
        transpositions: (edges - repetition_edges).saturating_sub(graph.len() - 1),
        repetition_edges,
        root_value: root.value,
        root_priority: Some(free_root_priority(graph))
            .filter(|&p| p != super::dropout::INFINITE)
            .map(|p| p as f64 / super::dropout::PLY as f64),
        profile,
        mean_leaf_depth: leaf_depths as f64 / (leaves + terminal).max(1) as f64,
        root_moves,
        principal_line,
    }
}

impl fmt::Display for BookStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::text::thousands;
        let p = &self.parameters;
        writeln!(
            f,
            "parameters: omega {} plies/unit, batch {}, evaluator '{}'",
            p.omega, p.batch, p.evaluator
        )?;
        writeln!(
            f,
            "size: {} expansions, {} nodes ({} expanded, {} leaves, {} finished games), {} edges ({} transpositions, {} repetitions)",
            thousands(self.expansions),
            thousands(self.nodes as u64),
            thousands(self.expanded as u64),
            thousands(self.leaves as u64),
            thousands(self.terminal as u64),
            thousands(self.edges as u64),
            thousands(self.transpositions as u64),
            self.repetition_edges
        )?;
        writeln!(f, "root value: {:+} (South to move)", self.root_value)?;
        match self.root_priority {
            Some(p) => writeln!(f, "root priority: {p:.3} plies")?,
            None => writeln!(f, "root priority: infinite (nothing left to expand)")?,
        }
        let moves: Vec<String> =
            self.root_moves.iter().map(|(l, v, n)| format!("{l} {v:+} ({} exp)", thousands(*n))).collect();
        writeln!(f, "root moves: {}", moves.join(", "))?;
        let line: String = self.principal_line.iter().map(|(l, _)| *l).collect();
        writeln!(f, "principal line ({} plies): {line}", self.principal_line.len())?;
        writeln!(f, "mean leaf depth: {:.2} plies", self.mean_leaf_depth)?;
        writeln!(f, "depth profile (plies from the start: expanded / leaves / finished):")?;
        for (d, row) in self.profile.iter().enumerate() {
            writeln!(f, "  {d:>3}: {:>8} {:>8} {:>6}", row.expanded, row.leaves, row.terminal)?;
        }
        Ok(())
    }
}
