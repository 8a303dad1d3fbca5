//! The searcher: iterative deepening over a negamax alpha-beta with
//! principal variation search, walking its own stack of positions (no
//! [`GameState`] clone per node), like `perft.rs`.
//!
//! # Exact knowledge at a node
//! In this order: after a capture, a store above 24 (or 24-24) ends the
//! game; after a non-capture move, a repetition of a state since the last
//! capture ends it with each side taking its own row; a mover without a
//! legal move ends it the same way; then a tablebase probe (entries and
//! proven bounds of positions on no cycle anywhere; those of cycle
//! positions only where the node was reached by a capture or is the root
//! with no history; a table that proves nothing gives estimates only,
//! never at the root); then the horizon's static evaluation.
//!
//! # The graph-history interaction
//! Repetitions make a node's value depend on the states played since the
//! last capture. The searcher handles it soundly with two facts of Oware:
//! a capture empties the history (positions before it can never recur,
//! they hold more seeds), and **every cycle of non-capture moves sows each
//! of the 12 pits at least once** (a pit that receives a seed on the cycle
//! must lose it again, and only sowing empties a pit; the pit after any
//! sown pit receives a seed, so by induction all twelve are sown). Hence a
//! cycle is at least 12 plies long, and a repetition of a state S
//! sows, between S and its repetition, every pit.
//!
//! Every search call returns, with its score, a trace of what it relied on:
//! * `reach`: the lowest stack index a repetition below matched;
//! * `mask`, `horizon`: the pits sown on the explored non-capture lines
//!   below, and the longest such line (table hits contribute their stored
//!   trace, captures nothing);
//! * `heuristic`: whether a static evaluation influenced the score.
//!
//! **Storing.** A result is stored as a value only if `reach` is at or
//! below the node: then no repetition of a state above the node was used,
//! and the same search from the node with an empty history (the *as-root*
//! search) explores the same lines to the same result. Otherwise only the
//! best move is stored (it orders moves, it never decides a value).
//!
//! **Using.** An as-root result is valid at a node with history H when no
//! explored line below can reach a state of H (then the same proof stands
//! under H). A state S of H since the last capture recurring below the node
//! closes a cycle through the node, whose part below the node must sow every
//! pit not sown between S and the node. With `sown` = the pits sown from
//! the last capture to the node, `missing` = the others, `behind` = plies
//! since the last capture, a recurrence needs an explored line sowing all of
//! `missing`, at least `max(|missing|, 12 − behind, 1)` plies long. The
//! entry is used only when its mask lacks a missing pit or its horizon is
//! shorter than that (always at a node reached by a capture). Table hits
//! refused this way are counted in [`Stats::table_unsafe`].
//!
//! The same reasoning makes tablebase entries of cycle positions usable
//! only at nodes reached by a capture, with a trace that no other history
//! accepts. The cheap filter also speeds up repetition detection: a node
//! scans its history only when all 12 pits were sown since the last
//! capture.

use std::time::Instant;

use crate::game::GameState;
use crate::rules::{Pit, Position};

use super::error::SearchError;
use super::eval::evaluate;
use super::limits::{Limits, StopHandle, MAX_DEPTH};
use super::options::Options;
use super::ordering::{Child, Children, History};
use super::result::{MoveScore, Score, SearchResult, Stats, Stop};
use super::tt::{Bound, Entry, Key, Table};

const INF: i32 = 32_000;
const WIN: i32 = Score::WIN;
const PROVEN: i32 = Score::PROVEN;
/// The most a heuristic score may say, below every proven score. An
/// unproven table's estimate of a decided game is this less the plies to
/// it: above every static evaluation the built-in weights give.
const HEURISTIC_MAX: i32 = PROVEN - MAX_PLY as i32 - 1;
/// Plies from the root a search can reach (depth ≤ MAX_DEPTH, no extensions).
const MAX_PLY: usize = MAX_DEPTH as usize + 2;
/// All twelve pits.
const FULL: u16 = 0xFFF;
const NO_REPEAT: usize = usize::MAX;
/// Nodes nearer the horizon neither probe nor fill the transposition table:
/// a probe is a cache miss that costs as much as searching a few plies
/// (bench positions, docs/search.md: depth 14, 6% more nodes and 30% less
/// time than probing at every depth; depth 17, 4% more nodes, 40% less).
const TABLE_MIN_DEPTH: i32 = 4;

/// A pit mask seen from the other side (rows swapped).
#[inline]
fn turn(mask: u16) -> u16 {
    ((mask << 6) | (mask >> 6)) & FULL
}

/// The result of a finished game, `ply` plies from the root.
#[inline]
fn result(mine: i32, theirs: i32, ply: usize) -> i32 {
    let win = WIN - ply as i32;
    match mine.cmp(&theirs) {
        std::cmp::Ordering::Greater => win,
        std::cmp::Ordering::Less => -win,
        std::cmp::Ordering::Equal => 0,
    }
}

/// Proven scores are stored relative to the node.
#[inline]
fn to_table(score: i32, ply: usize) -> i32 {
    if score >= PROVEN {
        score + ply as i32
    } else if score <= -PROVEN {
        score - ply as i32
    } else {
        score
    }
}

#[inline]
fn from_table(score: i32, ply: usize) -> i32 {
    if score >= PROVEN {
        score - ply as i32
    } else if score <= -PROVEN {
        score + ply as i32
    } else {
        score
    }
}

/// A node of the walk: the board from the mover, the stores `[mover,
/// other]`, the stack index of the first position since the last capture,
/// the pits sown since then (mover's view) and whether a capture led here.
#[derive(Clone, Copy)]
struct Node {
    position: Position,
    stores: [u8; 2],
    floor: usize,
    sown: u16,
    captured: bool,
}

impl Node {
    #[inline]
    fn child(&self, child: &Child, index: usize) -> Node {
        let [mine, theirs] = self.stores;
        let captured = child.played.captured;
        if captured > 0 {
            Node {
                position: child.played.child,
                stores: [theirs, mine.saturating_add(captured)],
                floor: index + 1,
                sown: 0,
                captured: true,
            }
        } else {
            Node {
                position: child.played.child,
                stores: [theirs, mine],
                floor: self.floor,
                sown: turn(self.sown | 1 << child.pit),
                captured: false,
            }
        }
    }

    /// Each side takes its own row (repetition, or a stuck mover).
    #[inline]
    fn split(&self, ply: usize) -> i32 {
        let [mine, theirs] = self.stores;
        result(
            mine as i32 + self.position.own_seeds() as i32,
            theirs as i32 + self.position.opponent_seeds() as i32,
            ply,
        )
    }
}

/// What a search result relied on (module documentation).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Trace {
    reach: usize,
    mask: u16,
    horizon: u8,
    heuristic: bool,
}

impl Trace {
    const EXACT: Trace = Trace { reach: NO_REPEAT, mask: 0, horizon: 0, heuristic: false };
    /// Valid only under the node's own history.
    const UNBOUNDED: Trace = Trace { mask: FULL, horizon: 15, ..Trace::EXACT };

    /// What a child's search relied on, seen from the parent: the move
    /// adds its pit and a ply to a non-capture line; a capture starts a new
    /// history, so nothing below it can meet the parent's.
    #[inline]
    fn lift(&self, pit: Pit, captured: bool) -> Trace {
        if captured {
            Trace { mask: 0, horizon: 0, ..*self }
        } else {
            Trace { mask: 1 << pit | turn(self.mask), horizon: (self.horizon + 1).min(15), ..*self }
        }
    }

    #[inline]
    fn merge(&mut self, other: &Trace) {
        self.reach = self.reach.min(other.reach);
        self.heuristic |= other.heuristic;
        self.mask |= other.mask;
        self.horizon = self.horizon.max(other.horizon);
    }
}

/// The pits sown (current mover's view) on the non-capture moves from the
/// first position of `history` to `current`; all of them if the history
/// is not a line of non-capture moves.
fn sown_since_capture(history: &[Position], current: Position) -> u16 {
    let mut sown = 0;
    let mut line = history.iter().copied().chain(std::iter::once(current));
    let Some(mut previous) = line.next() else {
        return 0;
    };
    for next in line {
        let pit = previous.legal_moves().find(|&pit| {
            let played = previous.play(pit);
            played.captured == 0 && played.child == next
        });
        match pit {
            Some(pit) => sown = turn(sown | 1 << pit),
            None => return FULL,
        }
        previous = next;
    }
    sown
}

/// An alpha-beta searcher. Keeps its transposition table between searches
/// (aged), so consecutive searches of a game help each other.
pub struct Searcher {
    options: Options,
    table: Option<Table>,
    history: History,
    /// Positions since the last capture of the game, then the current line.
    stack: Vec<Position>,
    /// Triangular principal-variation table: row `ply` holds the line from
    /// `ply` on.
    pv: Vec<[u8; MAX_PLY]>,
    pv_len: [usize; MAX_PLY],
    nodes: u64,
    node_limit: u64,
    deadline: Option<Instant>,
    /// Limits are checked (not during iteration 1).
    checking: bool,
    /// The options' tablebase's `max_seeds`, read once: a call through
    /// `dyn EndgameTable` at every node cost 3% of the search.
    tablebase_seeds: Option<u32>,
    /// A stop asked from outside (shared with the handles given out).
    interrupt: StopHandle,
    stopped: Option<Stop>,
    stats: Stats,
}

impl Searcher {
    /// A searcher with an empty transposition table; fails with
    /// [`SearchError::TableAllocation`] if the table cannot be allocated.
    pub fn new(options: Options) -> Result<Searcher, SearchError> {
        let table = if options.full_width || options.table_megabytes == 0 {
            None
        } else {
            Some(Table::new(options.table_megabytes)?)
        };
        let tablebase_seeds = options.tablebase.as_ref().map(|table| table.max_seeds());
        Ok(Searcher {
            options,
            table,
            history: History::new(),
            stack: Vec::with_capacity(256),
            pv: vec![[0; MAX_PLY]; MAX_PLY],
            pv_len: [0; MAX_PLY],
            nodes: 0,
            node_limit: u64::MAX,
            deadline: None,
            checking: false,
            tablebase_seeds,
            interrupt: StopHandle::default(),
            stopped: None,
            stats: Stats::default(),
        })
    }

    /// The options the searcher was made with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Size of the transposition table in MiB (0 without one).
    pub fn table_megabytes(&self) -> f64 {
        self.table.as_ref().map_or(0.0, Table::megabytes)
    }

    /// A handle that stops this searcher's searches from another thread
    /// (see [`StopHandle`] for when to clear it). Every handle given out
    /// is the same one.
    pub fn stop_handle(&self) -> StopHandle {
        self.interrupt.clone()
    }

    /// Forgets everything learnt in earlier searches.
    pub fn clear(&mut self) {
        if let Some(table) = &mut self.table {
            table.clear();
        }
        self.history.clear();
    }

    /// Searches `state` (its history since the last capture included) within
    /// `limits`.
    pub fn search(&mut self, state: &GameState, limits: &Limits) -> Result<SearchResult, SearchError> {
        let started = Instant::now();
        if limits.depth.is_none() && limits.nodes.is_none() && limits.time.is_none() {
            return Err(SearchError::Unbounded);
        }
        let max_depth = limits.depth.unwrap_or(MAX_DEPTH).max(1);
        if max_depth > MAX_DEPTH {
            return Err(SearchError::DepthTooLarge { depth: max_depth });
        }
        let position = state.position();
        let mover = state.to_move();
        let stores = state.stores_mover_first();
        let total = position.seeds() + stores[0] as u32 + stores[1] as u32;
        if total != crate::rules::TOTAL_SEEDS {
            return Err(SearchError::SeedCount { total });
        }

        self.nodes = 0;
        self.stats = Stats::default();
        self.stopped = None;
        self.history.clear();
        if let Some(table) = &mut self.table {
            table.next_age();
        }
        if let Some(score) = state.final_score() {
            let i = mover.index();
            return Ok(SearchResult {
                score: Score(result(score[i] as i32, score[1 - i] as i32, 0)),
                best_move: None,
                pv: Vec::new(),
                depth: 0,
                nodes: 0,
                elapsed: started.elapsed(),
                proven: true,
                stop: Stop::GameOver,
                stats: self.stats,
            });
        }

        self.stack.clear();
        self.stack.extend_from_slice(state.history());
        self.stack.push(position);
        let root = Node {
            position,
            stores,
            floor: 0,
            sown: sown_since_capture(state.history(), position),
            captured: false,
        };
        self.node_limit = limits.nodes.unwrap_or(u64::MAX);
        // (A time beyond what the clock can add is no limit.)
        self.deadline = limits.time.and_then(|t| started.checked_add(t));

        let mut done: Option<(i32, Vec<Pit>, u32, bool)> = None;
        let mut stop = Stop::Depth;
        for depth in 1..=max_depth {
            self.checking = depth > 1;
            if self.checking && self.interrupt.is_stopped() {
                self.stopped = Some(Stop::Interrupted);
                break;
            }
            let previous = done.as_ref().map(|d| d.0);
            let Some((score, trace)) = self.iteration(&root, depth, previous) else {
                break;
            };
            let pv: Vec<Pit> = self.pv[0][..self.pv_len[0]].iter().map(|&p| p as Pit).collect();
            done = Some((score, pv, depth, !trace.heuristic));
            if !trace.heuristic && !self.options.full_width {
                stop = Stop::Proven;
                break;
            }
        }
        if let Some(reason) = self.stopped {
            stop = reason;
        }
        // Iteration 1 always completes on a position with a legal move.
        let (score, pv, depth, proven) = done.unwrap_or((0, Vec::new(), 0, false));
        Ok(SearchResult {
            score: Score(score),
            best_move: pv.first().copied(),
            pv,
            depth,
            nodes: self.nodes,
            elapsed: started.elapsed(),
            proven,
            stop,
            stats: self.stats,
        })
    }

    /// The value of every legal move of `state` for its mover, best first
    /// (ties in pit order): each child is searched with `limits`, one ply
    /// shallower (but at least 1) when a depth is given. This is what an opening book stores
    /// per move; a plain [`Searcher::search`] only bounds the moves it
    /// refutes. The table carries over from child to child. While a
    /// [`StopHandle`] is set, each child's search stops after its first
    /// iteration.
    pub fn score_moves(&mut self, state: &GameState, limits: &Limits) -> Result<Vec<MoveScore>, SearchError> {
        let child_limits = Limits { depth: limits.depth.map(|d| d.saturating_sub(1).max(1)), ..*limits };
        let mut scores = Vec::new();
        for pit in state.legal_moves() {
            let mut child = state.clone();
            child.play_unchecked(pit);
            let result = self.search(&child, &child_limits)?;
            // The child's score is the opponent's, one ply further away.
            let s = result.score.0;
            let score = if s >= PROVEN {
                -s + 1
            } else if s <= -PROVEN {
                -s - 1
            } else {
                -s
            };
            scores.push(MoveScore { pit, score: Score(score), proven: result.proven, nodes: result.nodes });
        }
        scores.sort_by_key(|m| std::cmp::Reverse(m.score));
        Ok(scores)
    }

    /// One iteration with an aspiration window around the previous score;
    /// `None` when a limit stopped it.
    fn iteration(&mut self, root: &Node, depth: u32, previous: Option<i32>) -> Option<(i32, Trace)> {
        let mut delta = self.options.aspiration;
        let (mut alpha, mut beta) = (-INF, INF);
        if let Some(previous) = previous {
            if delta > 0 && depth >= 3 && previous.abs() < PROVEN && !self.options.full_width {
                // Saturating: `aspiration` is the caller's, any i32.
                alpha = previous.saturating_sub(delta).max(-INF);
                beta = previous.saturating_add(delta).min(INF);
            }
        }
        loop {
            self.stats.horizon_nodes = 0;
            let (score, trace) = self.node(root, 0, depth as i32, alpha, beta);
            if self.stopped.is_some() {
                return None;
            }
            delta = delta.saturating_mul(4);
            if score <= alpha && alpha > -INF {
                alpha = if score.abs() >= PROVEN || delta > 1_000 { -INF } else { score - delta };
            } else if score >= beta && beta < INF {
                beta = if score.abs() >= PROVEN || delta > 1_000 { INF } else { score + delta };
            } else if self.pv_len[0] == 0 && (alpha > -INF || beta < INF) {
                // No move reached the window, yet the root's score, clamped
                // into a tablebase's bounds (an engine file's estimates can
                // contradict the search), landed inside it. The full window
                // always gives a move.
                (alpha, beta) = (-INF, INF);
            } else {
                return Some((score, trace));
            }
        }
    }

    /// Sets `stopped` when a limit is reached.
    #[inline]
    fn out_of_budget(&mut self) -> bool {
        if self.stopped.is_none() {
            if self.nodes >= self.node_limit {
                self.stopped = Some(Stop::Nodes);
            } else if self.nodes & 1023 == 0 {
                if self.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                    self.stopped = Some(Stop::Time);
                } else if self.interrupt.is_stopped() {
                    self.stopped = Some(Stop::Interrupted);
                }
            }
        }
        self.stopped.is_some()
    }

    /// Does the position on top of the stack repeat a state since the last
    /// capture (same mover, so an even distance; a cycle is ≥ 12 plies)?
    #[inline]
    fn repeated(&self, index: usize, floor: usize) -> Option<usize> {
        let top = self.stack[index];
        let mut at = index.checked_sub(12)?;
        while at >= floor {
            if self.stack[at] == top {
                return Some(at);
            }
            at = at.checked_sub(2)?;
        }
        None
    }

    /// Can a table entry, an as-root result, be used at this node under the
    /// current history (module documentation)?
    #[inline]
    fn history_safe(entry: &Entry, node: &Node, index: usize) -> bool {
        let behind = index - node.floor;
        if behind == 0 {
            return true;
        }
        let missing = FULL & !node.sown;
        if missing & !entry.mask != 0 {
            return true;
        }
        let need = (missing.count_ones() as usize).max(12usize.saturating_sub(behind)).max(1);
        (entry.horizon as usize) < need
    }

    #[inline]
    fn depth_usable(&self, entry: &Entry, depth: i32) -> bool {
        let stored = entry.depth as i32;
        if self.options.strict_depth {
            stored == depth || (!entry.heuristic && stored <= depth)
        } else {
            stored >= depth || !entry.heuristic
        }
    }

    /// Proven bounds on the node's result from the tablebase, with the trace
    /// they bring: `None` if it has nothing usable here. A table that proves
    /// nothing ([`crate::tablebase::EndgameTable::proves`]) gives only its exact entries, and
    /// not at the root, as an estimate: a decided result below [`PROVEN`]
    /// (so that nothing takes it for a proof), with a heuristic trace.
    #[inline]
    fn tablebase(&mut self, node: &Node, index: usize, ply: usize) -> Option<(i32, i32, Trace)> {
        let seeds = node.position.seeds();
        if self.options.full_width || seeds > self.tablebase_seeds? {
            return None;
        }
        let table = self.options.tablebase.as_ref()?;
        self.stats.tablebase_probes += 1;
        let probe = table.probe(&node.position)?;
        if probe.on_cycle && node.floor != index {
            return None;
        }
        let (lower, upper) = (probe.lower as u32, probe.upper as u32);
        if lower > upper || upper > seeds {
            return None; // not a proof of anything
        }
        let [mine, theirs] = node.stores.map(|s| s as i32);
        let score = |v: u32| {
            let v = v as i32;
            result(mine + v, theirs + seeds as i32 - v, ply)
        };
        let mut trace = if probe.on_cycle { Trace::UNBOUNDED } else { Trace::EXACT };
        if !table.proves() {
            // The root is searched whatever an estimate says of it.
            if ply == 0 || lower != upper {
                return None;
            }
            // The decided result, rescaled below every proven score.
            let estimate = score(lower).signum() * (HEURISTIC_MAX - ply as i32);
            trace.heuristic = true;
            return Some((estimate, estimate, trace));
        }
        Some((score(lower), score(upper), trace))
    }

    /// The negamax search of `node` (on top of the stack), `ply` plies from
    /// the root, `depth` plies from the horizon, window `alpha..beta`.
    fn node(&mut self, node: &Node, ply: usize, depth: i32, mut alpha: i32, mut beta: i32) -> (i32, Trace) {
        self.nodes += 1;
        self.pv_len[ply] = 0;
        if depth <= 0 {
            self.stats.horizon_nodes += 1;
        }
        if self.checking && self.out_of_budget() {
            return (0, Trace::EXACT);
        }
        let index = self.stack.len() - 1;
        let [mine, theirs] = node.stores;
        if node.captured {
            if mine > 24 || theirs > 24 || (mine == 24 && theirs == 24) {
                return (result(mine as i32, theirs as i32, ply), Trace::EXACT);
            }
        } else if node.sown == FULL {
            if let Some(at) = self.repeated(index, node.floor) {
                self.stats.repetitions += 1;
                let trace = Trace { reach: at, ..Trace::EXACT };
                return (node.split(ply), trace);
            }
        }
        let moves = node.position.legal_moves();
        if moves.is_empty() {
            return (node.split(ply), Trace::EXACT);
        }

        // Proven bounds from the tablebase narrow the window (not at the
        // root, which must return a move).
        let mut trace = Trace::EXACT;
        let (mut low, mut high) = (-INF, INF);
        if let Some((lower, upper, probed)) = self.tablebase(node, index, ply) {
            trace = probed;
            low = lower;
            high = upper;
            if ply > 0 {
                if lower == upper {
                    self.stats.tablebase_hits += 1;
                    return (lower, trace);
                }
                if lower >= beta {
                    return (lower, trace);
                }
                if upper <= alpha {
                    return (upper, trace);
                }
                alpha = alpha.max(lower);
                beta = beta.min(upper);
            }
        }

        if depth <= 0 || ply + 1 >= MAX_PLY {
            // Weights of one's own could take the evaluation to a proven
            // score: it stays below.
            let score = evaluate(&self.options.weights, &node.position, node.stores)
                .clamp(-HEURISTIC_MAX, HEURISTIC_MAX);
            trace.heuristic = true;
            return (score.clamp(low, high), trace);
        }

        let pv_node = beta - alpha > 1;
        let key = Key::new(&node.position, mine);
        let mut table_move = None;
        let table = self.table.as_ref().filter(|_| depth >= TABLE_MIN_DEPTH);
        if let Some(table) = table {
            self.stats.table_probes += 1;
            if let Some(entry) = table.probe(&key) {
                self.stats.table_hits += 1;
                table_move = entry.best.filter(|&pit| moves.contains(pit));
                if entry.bound != Bound::MoveOnly && !pv_node && self.depth_usable(&entry, depth) {
                    if Self::history_safe(&entry, node, index) {
                        let score = from_table(entry.score, ply).clamp(low, high);
                        let cut = match entry.bound {
                            Bound::Exact => true,
                            Bound::Lower => score >= beta,
                            Bound::Upper => score <= alpha,
                            Bound::MoveOnly => false,
                        };
                        if cut {
                            self.stats.table_cutoffs += 1;
                            trace.merge(&Trace {
                                reach: NO_REPEAT,
                                mask: entry.mask,
                                horizon: entry.horizon,
                                heuristic: entry.heuristic,
                            });
                            return (score, trace);
                        }
                    } else {
                        self.stats.table_unsafe += 1;
                    }
                }
            }
        }

        let children = Children::new(&node.position, &self.options.ordering, &self.history, table_move);
        // The children (depth − 1 ≥ TABLE_MIN_DEPTH) will probe the table:
        // start loading their buckets now, so that each probe waits less.
        if let Some(table) = self.table.as_ref().filter(|_| depth > TABLE_MIN_DEPTH) {
            for child in children.as_slice() {
                // The child's mover is this node's opponent, whose store a
                // capture does not change.
                table.prefetch(&Key::new(&child.played.child, theirs));
            }
        }
        let full_width = self.options.full_width;
        let alpha0 = alpha;
        // The traces of the moves searched, and of a move that cut off.
        let mut searched = Trace::EXACT;
        let mut cut = false;
        let mut best = -INF;
        let mut best_move = None;
        // Whether the best move's own result rests on no heuristic leaf.
        let mut best_proven = false;
        for (k, child) in children.as_slice().iter().enumerate() {
            let next = node.child(child, index);
            let captured = child.played.captured > 0;
            self.stack.push(next.position);
            let (score, mut sub) = if full_width {
                self.node(&next, ply + 1, depth - 1, -INF, INF)
            } else if k == 0 {
                self.node(&next, ply + 1, depth - 1, -beta, -alpha)
            } else {
                let (s, mut t) = self.node(&next, ply + 1, depth - 1, -alpha - 1, -alpha);
                if -s > alpha && -s < beta && self.stopped.is_none() {
                    let (r, u) = self.node(&next, ply + 1, depth - 1, -beta, -alpha);
                    t.merge(&u);
                    (r, t)
                } else {
                    (s, t)
                }
            };
            let score = -score;
            sub = sub.lift(child.pit, captured);
            self.stack.pop();
            if self.stopped.is_some() {
                return (0, trace);
            }
            if score >= beta {
                // A lower bound rests on this move alone.
                trace.merge(&sub);
                cut = true;
            } else {
                searched.merge(&sub);
            }
            if score > best {
                best = score;
                best_move = Some(child.pit);
                best_proven = !sub.heuristic;
                if score > alpha {
                    alpha = score;
                    self.update_pv(ply, child.pit);
                    if score >= beta {
                        if !captured {
                            self.history.reward(child.pit, node.position.pit(child.pit), depth);
                        }
                        break;
                    }
                }
            }
        }

        if !cut {
            trace.merge(&searched);
        }
        let mut score = best.clamp(low, high);
        // A won or lost result is proven whatever the heuristic leaves said
        // of the other moves: nothing heuristic reaches a proven score (the
        // static evaluation and an unproven table's estimates stay below
        // PROVEN). At the root the result comes with a move, which must
        // achieve it: a tablebase that settles the root's value (low ==
        // high) settles no move, so the root is decided only when its best
        // move's own result is proven and has the table's outcome (a win or
        // loss by the rule above, a draw by the move's own trace); the
        // score is then the move's, with its distance. Otherwise the search
        // deepens until a move is proven.
        let decided = if ply > 0 {
            score.abs() >= PROVEN
        } else if low == high {
            let achieves = if score == 0 {
                best == 0 && best_proven
            } else {
                best.abs() >= PROVEN && best.signum() == score.signum()
            };
            if achieves {
                score = best;
            }
            achieves
        } else {
            best == score && best.abs() >= PROVEN
        };
        if decided {
            trace.heuristic = false;
        }
        if let Some(table) = self.table.as_mut().filter(|_| depth >= TABLE_MIN_DEPTH) {
            let bound = if trace.reach < index {
                Bound::MoveOnly
            } else if best <= alpha0 {
                Bound::Upper
            } else if best >= beta {
                Bound::Lower
            } else {
                Bound::Exact
            };
            let entry = Entry {
                score: to_table(score, ply),
                depth: depth.clamp(0, 255) as u8,
                bound,
                heuristic: trace.heuristic,
                best: best_move,
                mask: trace.mask,
                horizon: trace.horizon,
            };
            table.store(&key, &entry);
        }
        (score, trace)
    }

    #[inline]
    fn update_pv(&mut self, ply: usize, pit: Pit) {
        let below = if ply + 1 < MAX_PLY { self.pv_len[ply + 1] } else { 0 };
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let line = &mut head[ply];
        line[0] = pit as u8;
        line[1..=below].copy_from_slice(&tail[0][..below]);
        self.pv_len[ply] = below + 1;
    }
}
