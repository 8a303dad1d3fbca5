//! History-aware search with path-cut bounds: closes gaps that neither the
//! history-free bounds nor the plain simple-path search can.
//!
//! A position reached with history `H` (the game states since the last
//! capture) plays the as-root game of the component in which the states of
//! `H` have become terminals: moving into one repeats it, and each side
//! takes its own row. So the threshold games Γ_t of [`bounds`](super::bounds)
//! can be solved again at any search node on this *path-cut* graph, and
//! they prove bounds for that node under its history
//! (`docs/cycle-bounds.md`, "Path-cut bounds"). The search asks one
//! question at a time, "does the root player P get at least `t`?", and at
//! every node first solves Γ_t for P and Γ_{n−t+1} for the opponent on the
//! cut graph; only when both fail does it expand the node's quiet moves.
//! Each answer is a proof: a `true` is a strategy tree whose leaves are
//! path-cut wins for P, a `false` one whose leaves are path-cut wins for the
//! opponent.
//!
//! The component is copied once into a compact graph (local numbers, edges
//! both ways, exit bounds and row counts per member), so a solve touches
//! only small arrays. Every question has a budget of search nodes; a
//! question that runs out proves nothing. Answers depend only on the
//! question, not on threads or order.

use std::sync::atomic::Ordering::Relaxed;

use super::layer::LayerSolver;
use super::scc::{Components, MemberPositions};
use crate::rank::layer_index;

/// One cycle component as the cut search sees it. Member `i` has game
/// states `2i` (the root player to move) and `2i + 1`.
pub(crate) struct CutGraph {
    n: u8,
    /// Quiet moves inside the component: `children[first[i]..first[i + 1]]`.
    first: Vec<u32>,
    children: Vec<u32>,
    /// The same edges reversed.
    parent_first: Vec<u32>,
    parents: Vec<u32>,
    /// Seeds in the mover's row.
    own: Vec<u8>,
    /// The best option leaving the component, pessimistic and optimistic
    /// for the mover (0, 0 when there is none).
    exit_lo: Vec<u8>,
    exit_hi: Vec<u8>,
}

impl CutGraph {
    /// Copies component `k`; must run before its members are decided (the
    /// exit bounds live in the solver's arrays until then).
    pub(crate) fn new(
        solver: &LayerSolver,
        components: &Components,
        k: usize,
        positions: &MemberPositions,
        local: &[u32],
    ) -> CutGraph {
        let members = components.of(k);
        let m = members.len();
        let mut first = Vec::with_capacity(m + 1);
        let mut children = Vec::new();
        let mut own = Vec::with_capacity(m);
        first.push(0);
        positions.for_each(|_, position| {
            for pit in position.legal_moves() {
                let played = position.play(pit);
                if played.captured == 0 {
                    let index = layer_index(&played.child) as usize;
                    if components.id[index] == k as u32 {
                        children.push(local[index]);
                    }
                }
            }
            first.push(children.len() as u32);
            own.push(position.own_seeds() as u8);
        });
        let mut parent_first = vec![0u32; m + 1];
        for &c in &children {
            parent_first[c as usize + 1] += 1;
        }
        for i in 0..m {
            parent_first[i + 1] += parent_first[i];
        }
        let mut fill = parent_first.clone();
        let mut parents = vec![0u32; children.len()];
        for i in 0..m {
            for &c in &children[first[i] as usize..first[i + 1] as usize] {
                parents[fill[c as usize] as usize] = i as u32;
                fill[c as usize] += 1;
            }
        }
        let exit_lo = members.iter().map(|&x| solver.lo[x as usize].load(Relaxed)).collect();
        let exit_hi = members.iter().map(|&x| solver.hi[x as usize].load(Relaxed)).collect();
        CutGraph { n: solver.n as u8, first, children, parent_first, parents, own, exit_lo, exit_hi }
    }

    pub(crate) fn len(&self) -> usize {
        self.own.len()
    }

    #[inline]
    fn children_of(&self, i: usize) -> &[u32] {
        &self.children[self.first[i] as usize..self.first[i + 1] as usize]
    }

    #[inline]
    fn parents_of(&self, i: usize) -> &[u32] {
        &self.parents[self.parent_first[i] as usize..self.parent_first[i + 1] as usize]
    }

    /// The root player's share of the board when the game ends by
    /// repetition at game state `s`: the mover keeps its row.
    #[inline]
    fn share(&self, s: usize, player: usize) -> u8 {
        let own = self.own[s / 2];
        if s % 2 == player {
            own
        } else {
            self.n - own
        }
    }
}

/// `open` of a path state other than the node searched: the game ends
/// there.
const TERMINAL: u8 = 0xFE;
/// `open` of an opponent state with a way out that may keep the player
/// below the threshold: it never joins the player's region.
const BLOCKED: u8 = 0xFF;

/// A threshold game's starting point, the same at every node of a
/// question: per game state, won at once (1) or not (0), the opponent's
/// count of moves to win (or `BLOCKED`), and whether the player's share
/// there reaches the threshold.
struct ThresholdGame {
    player: usize,
    t: u8,
    win: Vec<u8>,
    open: Vec<u8>,
    good: Vec<bool>,
}

impl ThresholdGame {
    fn new(g: &CutGraph, player: usize, t: u8) -> ThresholdGame {
        let states = 2 * g.len();
        let (mut win, mut open, mut good) = (vec![0; states], vec![0; states], vec![false; states]);
        for s in 0..states {
            let i = s / 2;
            good[s] = g.share(s, player) >= t;
            if s % 2 == player {
                win[s] = (g.exit_lo[i] >= t) as u8;
            } else if g.n - g.exit_hi[i] >= t {
                open[s] = g.children_of(i).len() as u8;
            } else {
                open[s] = BLOCKED;
            }
        }
        ThresholdGame { player, t, win, open, good }
    }
}

/// Searches one position's gaps; `path` holds the game states of the
/// current line (bits `2i + parity`, parity from the root's mover).
pub(crate) struct CutSearch<'g> {
    graph: &'g CutGraph,
    path: Vec<u64>,
    /// The same states in order.
    line: Vec<u32>,
    /// Working copies of a `ThresholdGame`'s arrays, and the safety game's: 0
    /// outside; for the player's states 1 + children inside.
    win: Vec<u8>,
    open: Vec<u8>,
    safe: Vec<u8>,
    queue: Vec<u32>,
    removed: Vec<u32>,
    nodes: u64,
    budget: u64,
    pub questions: u64,
}

/// What a question came to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Answer {
    Yes,
    No,
    Unknown,
}

impl<'g> CutSearch<'g> {
    pub(crate) fn new(graph: &'g CutGraph) -> CutSearch<'g> {
        let states = 2 * graph.len();
        CutSearch {
            graph,
            path: vec![0; states.div_ceil(64)],
            line: Vec::new(),
            win: vec![0; states],
            open: vec![0; states],
            safe: vec![0; states],
            queue: Vec::new(),
            removed: Vec::new(),
            nodes: 0,
            budget: 0,
            questions: 0,
        }
    }

    pub(crate) fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Narrows `[lower, upper]`, the proven as-root interval of member
    /// `root`, with questions of at most `budget` nodes each.
    pub(crate) fn tighten(&mut self, root: usize, mut lower: u8, mut upper: u8, budget: u64) -> (u8, u8) {
        let state = 2 * root;
        self.mark(state, true);
        // Raise the lower bound while the answers are yes; a no settles it.
        while lower < upper {
            match self.question(state, lower + 1, budget) {
                Answer::Yes => lower += 1,
                Answer::No => upper = lower,
                Answer::Unknown => break,
            }
        }
        while lower < upper {
            match self.question(state, upper, budget) {
                Answer::Yes => lower = upper,
                Answer::No => upper -= 1,
                Answer::Unknown => break,
            }
        }
        self.mark(state, false);
        (lower, upper)
    }

    /// Does the root's mover get at least `t`?
    fn question(&mut self, root: usize, t: u8, budget: u64) -> Answer {
        self.budget = self.nodes + budget;
        self.questions += 1;
        let games =
            [ThresholdGame::new(self.graph, 0, t), ThresholdGame::new(self.graph, 1, self.graph.n + 1 - t)];
        self.ask(root, &games)
    }

    #[inline]
    fn on_path(&self, s: usize) -> bool {
        self.path[s / 64] & (1 << (s % 64)) != 0
    }

    #[inline]
    fn mark(&mut self, s: usize, on: bool) {
        if on {
            self.path[s / 64] |= 1 << (s % 64);
            self.line.push(s as u32);
        } else {
            self.path[s / 64] &= !(1 << (s % 64));
            self.line.pop();
        }
    }

    /// Does the root player (`games[0]`) get at least its threshold from
    /// state `s`, reached along the current path (which includes `s`)?
    fn ask(&mut self, s: usize, games: &[ThresholdGame; 2]) -> Answer {
        self.nodes += 1;
        if self.nodes > self.budget {
            return Answer::Unknown;
        }
        let g = self.graph;
        let (player, t) = (games[0].player, games[0].t);
        if self.solve(s, &games[0]) {
            return Answer::Yes;
        }
        if self.solve(s, &games[1]) {
            return Answer::No;
        }
        // (A sure exit would have won a solve above.) The player's best
        // exit may still reach t; the opponent's may still keep it below.
        let players_move = s % 2 == player;
        let hi = g.exit_hi[s / 2];
        let mut open = if players_move { hi >= t } else { g.n - hi < t };
        for &c in g.children_of(s / 2) {
            let child = 2 * c as usize + (1 - s % 2);
            let answer = if self.on_path(child) {
                if g.share(child, player) >= t {
                    Answer::Yes
                } else {
                    Answer::No
                }
            } else {
                self.mark(child, true);
                let answer = self.ask(child, games);
                self.mark(child, false);
                answer
            };
            match (answer, players_move) {
                (Answer::Yes, true) => return Answer::Yes,
                (Answer::No, false) => return Answer::No,
                (Answer::Unknown, _) => open = true,
                _ => {}
            }
        }
        if open {
            Answer::Unknown
        } else if players_move {
            Answer::No
        } else {
            Answer::Yes
        }
    }

    /// Solves `game` on the graph cut at the path (path states other than
    /// `start` are terminals); true if its player wins from `start`.
    fn solve(&mut self, start: usize, game: &ThresholdGame) -> bool {
        self.win.copy_from_slice(&game.win);
        self.open.copy_from_slice(&game.open);
        self.queue.clear();
        for &s in &self.line {
            let s = s as usize;
            if s != start {
                // The repetition's shares.
                self.win[s] = game.good[s] as u8;
                self.open[s] = TERMINAL;
            }
        }
        // States won at once (unreachable ones included: they cannot
        // change the start's fate).
        for (s, &won) in self.win.iter().enumerate() {
            if won != 0 {
                self.queue.push(s as u32);
            }
        }
        loop {
            if self.attract(start, game.player) {
                return true;
            }
            if !self.safe_states(game) {
                return false;
            }
        }
    }

    /// Attracts to the won states queued; true once `start` is won.
    fn attract(&mut self, start: usize, player: usize) -> bool {
        let g = self.graph;
        if self.win[start] != 0 {
            return true;
        }
        let mut next = 0;
        while next < self.queue.len() {
            let s = self.queue[next] as usize;
            next += 1;
            let parity = 1 - s % 2;
            for &p in g.parents_of(s / 2) {
                let parent = 2 * p as usize + parity;
                if self.win[parent] != 0 {
                    continue;
                }
                let open = &mut self.open[parent];
                let joins = match *open {
                    TERMINAL | BLOCKED => false,
                    _ if parity == player => true,
                    _ => {
                        *open -= 1;
                        *open == 0
                    }
                };
                if joins {
                    if parent == start {
                        return true;
                    }
                    self.win[parent] = 1;
                    self.queue.push(parent as u32);
                }
            }
        }
        self.queue.clear();
        false
    }

    /// Adds to the won region (and queues) the greatest set of states from
    /// which the player can stay forever in states worth at least the
    /// threshold to it, or move into the won region; false if that set is
    /// empty.
    fn safe_states(&mut self, game: &ThresholdGame) -> bool {
        let g = self.graph;
        let states = self.win.len();
        let player = game.player;
        for s in 0..states {
            // (Player states are never BLOCKED; terminals never count.)
            self.safe[s] = (self.win[s] == 0 && game.good[s] && self.open[s] < TERMINAL) as u8;
        }
        let mut removed = std::mem::take(&mut self.removed);
        removed.clear();
        for s in 0..states {
            if self.safe[s] == 0 {
                continue;
            }
            let child_parity = 1 - s % 2;
            let (mut inside, mut escapes) = (0u8, false);
            for &c in g.children_of(s / 2) {
                let child = 2 * c as usize + child_parity;
                if self.safe[child] != 0 {
                    inside += 1;
                } else if self.win[child] == 0 {
                    escapes = true;
                }
            }
            if s % 2 == player {
                self.safe[s] = 1 + inside;
                if inside == 0 {
                    removed.push(s as u32);
                }
            } else if escapes {
                removed.push(s as u32);
            }
        }
        for &s in &removed {
            self.safe[s as usize] = 0;
        }
        while let Some(s) = removed.pop() {
            let parity = 1 - s as usize % 2;
            for &p in g.parents_of(s as usize / 2) {
                let parent = 2 * p as usize + parity;
                let inside = self.safe[parent];
                if inside == 0 {
                    continue;
                }
                if parity != player || inside == 2 {
                    self.safe[parent] = 0;
                    removed.push(parent as u32);
                } else {
                    self.safe[parent] = inside - 1;
                }
            }
        }
        self.removed = removed;
        self.queue.clear();
        for s in 0..states {
            if self.safe[s] != 0 {
                self.safe[s] = 0;
                self.win[s] = 1;
                self.queue.push(s as u32);
            }
        }
        !self.queue.is_empty()
    }
}
