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

/// Per-search scratch of the threshold solver, indexed by region slot.
#[derive(Default)]
struct Scratch {
    /// The region: the game states reachable from the node in the cut
    /// graph, nearest first (a solve touches nothing else).
    region: Vec<u32>,
    /// Region slot of every game state, valid where `stamp` is current.
    slot: Vec<u32>,
    stamp: Vec<u32>,
    current: u32,
    /// 1 once a state is won by the player asked about.
    win: Vec<u8>,
    /// Opponent states: children not won yet (`BLOCKED`: never joins).
    open: Vec<u8>,
    /// Safety-game membership (0 outside; for the player's states
    /// 1 + children inside).
    safe: Vec<u8>,
    queue: Vec<u32>,
    removed: Vec<u32>,
}

/// An opponent state with a way out that may keep the player below the
/// threshold.
const BLOCKED: u8 = u8::MAX;

/// Searches one position's gaps; `path` holds the game states of the
/// current line (bits `2i + parity`, parity from the root's mover).
pub(crate) struct CutSearch<'g> {
    graph: &'g CutGraph,
    path: Vec<u64>,
    scratch: Scratch,
    nodes: u64,
    budget: u64,
    pub solves: u64,
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
        let scratch = Scratch { slot: vec![0; states], stamp: vec![0; states], ..Scratch::default() };
        CutSearch {
            graph,
            path: vec![0; states.div_ceil(64)],
            scratch,
            nodes: 0,
            budget: 0,
            solves: 0,
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
            self.budget = self.nodes + budget;
            self.questions += 1;
            match self.ask(state, 0, lower + 1) {
                Answer::Yes => lower += 1,
                Answer::No => upper = lower,
                Answer::Unknown => break,
            }
        }
        while lower < upper {
            self.budget = self.nodes + budget;
            self.questions += 1;
            match self.ask(state, 0, upper) {
                Answer::Yes => lower = upper,
                Answer::No => upper -= 1,
                Answer::Unknown => break,
            }
        }
        self.mark(state, false);
        (lower, upper)
    }

    #[inline]
    fn on_path(&self, s: usize) -> bool {
        self.path[s / 64] & (1 << (s % 64)) != 0
    }

    #[inline]
    fn mark(&mut self, s: usize, on: bool) {
        if on {
            self.path[s / 64] |= 1 << (s % 64);
        } else {
            self.path[s / 64] &= !(1 << (s % 64));
        }
    }

    /// Does `player` (the parity of its states) get at least `t` from state
    /// `s`, reached along the current path (which includes `s`)?
    fn ask(&mut self, s: usize, player: usize, t: u8) -> Answer {
        self.nodes += 1;
        if self.nodes > self.budget {
            return Answer::Unknown;
        }
        let g = self.graph;
        let n = g.n;
        self.build_region(s);
        if self.solve(player, t) {
            return Answer::Yes;
        }
        if self.solve(1 - player, n + 1 - t) {
            return Answer::No;
        }
        // (A sure exit would have won a solve above.) The player's best
        // exit may still reach t; the opponent's may still keep it below.
        let players_move = s % 2 == player;
        let hi = g.exit_hi[s / 2];
        let mut open = if players_move { hi >= t } else { n - hi < t };
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
                let answer = self.ask(child, player, t);
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

    /// Collects the game states reachable from `start` in the graph cut at
    /// the path (path states other than `start` are terminals), breadth
    /// first.
    fn build_region(&mut self, start: usize) {
        let g = self.graph;
        let sc = &mut self.scratch;
        sc.current = sc.current.wrapping_add(1);
        if sc.current == 0 {
            sc.stamp.fill(0);
            sc.current = 1;
        }
        sc.region.clear();
        sc.region.push(start as u32);
        sc.stamp[start] = sc.current;
        sc.slot[start] = 0;
        let mut next = 0;
        while next < sc.region.len() {
            let s = sc.region[next] as usize;
            next += 1;
            if s != start && self.path[s / 64] & (1 << (s % 64)) != 0 {
                continue;
            }
            for &c in g.children_of(s / 2) {
                let child = 2 * c as usize + (1 - s % 2);
                if sc.stamp[child] != sc.current {
                    sc.stamp[child] = sc.current;
                    sc.slot[child] = sc.region.len() as u32;
                    sc.region.push(child as u32);
                }
            }
        }
        let len = sc.region.len();
        sc.win.resize(len, 0);
        sc.open.resize(len, 0);
        sc.safe.resize(len, 0);
    }

    /// The region slot of game state `s`, if it is in the region.
    #[inline]
    fn slot(&self, s: usize) -> Option<usize> {
        (self.scratch.stamp[s] == self.scratch.current).then(|| self.scratch.slot[s] as usize)
    }

    /// A path state other than the region's start: the game ends there.
    #[inline]
    fn is_terminal(&self, slot: usize) -> bool {
        slot != 0 && self.on_path(self.scratch.region[slot] as usize)
    }

    /// Solves Γ_t for `player` on the region (cut at the path); true if
    /// `player` wins from the region's start.
    fn solve(&mut self, player: usize, t: u8) -> bool {
        self.solves += 1;
        let g = self.graph;
        let n = g.n;
        self.scratch.queue.clear();
        for l in 0..self.scratch.region.len() {
            let s = self.scratch.region[l] as usize;
            let i = s / 2;
            let (win, open) = if self.is_terminal(l) {
                // The repetition's shares.
                (g.share(s, player) >= t, 0)
            } else if s % 2 == player {
                (g.exit_lo[i] >= t, 0)
            } else if n - g.exit_hi[i] >= t {
                // Joins once every quiet move is won.
                (false, g.children_of(i).len() as u8)
            } else {
                (false, BLOCKED)
            };
            self.scratch.win[l] = win as u8;
            self.scratch.open[l] = open;
            if win {
                self.scratch.queue.push(l as u32);
            }
        }
        loop {
            if self.attract(player) {
                return true;
            }
            if !self.safe_states(player, t) {
                return false;
            }
        }
    }

    /// Attracts to the won states queued; true once the start is won.
    fn attract(&mut self, player: usize) -> bool {
        let g = self.graph;
        if self.scratch.win[0] != 0 {
            return true;
        }
        let mut next = 0;
        while next < self.scratch.queue.len() {
            let s = self.scratch.region[self.scratch.queue[next] as usize] as usize;
            next += 1;
            let parity = 1 - s % 2;
            for &p in g.parents_of(s / 2) {
                let Some(l) = self.slot(2 * p as usize + parity) else { continue };
                if self.scratch.win[l] != 0 || self.is_terminal(l) {
                    continue;
                }
                let joins = parity == player || {
                    let open = &mut self.scratch.open[l];
                    *open != BLOCKED && {
                        *open -= 1;
                        *open == 0
                    }
                };
                if joins {
                    if l == 0 {
                        return true;
                    }
                    self.scratch.win[l] = 1;
                    self.scratch.queue.push(l as u32);
                }
            }
        }
        self.scratch.queue.clear();
        false
    }

    /// Adds to the won region (and queues) the greatest set of states from
    /// which `player` can stay forever in states worth at least `t` to it,
    /// or move into the won region; false if that set is empty.
    fn safe_states(&mut self, player: usize, t: u8) -> bool {
        let g = self.graph;
        let len = self.scratch.region.len();
        for l in 0..len {
            let s = self.scratch.region[l] as usize;
            let candidate = self.scratch.win[l] == 0
                && !self.is_terminal(l)
                && g.share(s, player) >= t
                && (s % 2 == player || self.scratch.open[l] != BLOCKED);
            self.scratch.safe[l] = candidate as u8;
        }
        let mut removed = std::mem::take(&mut self.scratch.removed);
        removed.clear();
        for l in 0..len {
            if self.scratch.safe[l] == 0 {
                continue;
            }
            let s = self.scratch.region[l] as usize;
            let (mut inside, mut escapes) = (0u8, false);
            for &c in g.children_of(s / 2) {
                match self.slot(2 * c as usize + 1 - s % 2) {
                    Some(child) if self.scratch.safe[child] != 0 => inside += 1,
                    Some(child) if self.scratch.win[child] != 0 => {}
                    _ => escapes = true,
                }
            }
            if s % 2 == player {
                self.scratch.safe[l] = 1 + inside;
                if inside == 0 {
                    removed.push(l as u32);
                }
            } else if escapes {
                removed.push(l as u32);
            }
        }
        for &l in &removed {
            self.scratch.safe[l as usize] = 0;
        }
        while let Some(l) = removed.pop() {
            let s = self.scratch.region[l as usize] as usize;
            let parity = 1 - s % 2;
            for &p in g.parents_of(s / 2) {
                let Some(parent) = self.slot(2 * p as usize + parity) else { continue };
                let inside = self.scratch.safe[parent];
                if inside == 0 {
                    continue;
                }
                if parity != player || inside == 2 {
                    self.scratch.safe[parent] = 0;
                    removed.push(parent as u32);
                } else {
                    self.scratch.safe[parent] = inside - 1;
                }
            }
        }
        self.scratch.removed = removed;
        self.scratch.queue.clear();
        for l in 0..len {
            if self.scratch.safe[l] != 0 {
                self.scratch.safe[l] = 0;
                self.scratch.win[l] = 1;
                self.scratch.queue.push(l as u32);
            }
        }
        !self.scratch.queue.is_empty()
    }
}
