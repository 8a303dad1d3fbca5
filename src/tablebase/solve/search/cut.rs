//! History-aware search with path-cut bounds: closes gaps that neither the
//! history-free bounds nor the plain simple-path search can.
//!
//! A position reached with history `H` (the game states since the last
//! capture) plays the as-root game of the component in which the states of
//! `H` have become terminals: moving into one repeats it, and each side
//! takes its own row. So the threshold games Γ_t of [`bounds`](crate::tablebase::solve::bounds)
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

use std::collections::VecDeque;

use crate::tablebase::params::SearchBudget;
use crate::tablebase::solve::games::{narrow, peel, Answer};
use crate::tablebase::solve::graph::ComponentGraph;

/// A threshold game's starting point, the same at every node of a
/// question: per game state, won at once (1) or not (0), the opponent's
/// count of moves to win, whether an opponent state has a way out that may
/// keep the player below the threshold (it never joins the player's
/// region), and whether the player's share there reaches the threshold.
struct ThresholdGame {
    player: usize,
    t: u8,
    win: Vec<u8>,
    open: Vec<u8>,
    blocked: Vec<bool>,
    good: Vec<bool>,
}

impl ThresholdGame {
    fn new(g: &ComponentGraph, player: usize, t: u8) -> ThresholdGame {
        let states = g.states();
        let mut game = ThresholdGame {
            player,
            t,
            win: vec![0; states],
            open: vec![0; states],
            blocked: vec![false; states],
            good: vec![false; states],
        };
        for s in 0..states {
            let (pessimistic, _) = g.exit_for(s, player);
            game.good[s] = g.share(s, player) >= t;
            if s % 2 == player {
                game.win[s] = (pessimistic >= t) as u8;
            } else {
                game.open[s] = g.children_of(s / 2).len() as u8;
                game.blocked[s] = pessimistic < t;
            }
        }
        game
    }
}

/// Searches one position's gaps; `path` holds the game states of the
/// current line (bits `2i + parity`, parity from the root's mover).
pub(crate) struct CutSearch<'g> {
    graph: &'g ComponentGraph,
    path: Vec<u64>,
    /// The same states in order.
    line: Vec<u32>,
    /// Working copies of a `ThresholdGame`'s arrays (its `open` counts
    /// with the safety game's scratch, `games::OPEN` and `games::SAFE`).
    win: Vec<u8>,
    counts: Vec<u8>,
    queue: VecDeque<u32>,
    nodes: u64,
    budget: u64,
    pub questions: u64,
}

impl<'g> CutSearch<'g> {
    pub(crate) fn new(graph: &'g ComponentGraph) -> CutSearch<'g> {
        let states = graph.states();
        CutSearch {
            graph,
            path: vec![0; states.div_ceil(64)],
            line: Vec::new(),
            win: vec![0; states],
            counts: vec![0; states],
            queue: VecDeque::new(),
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
        narrow(&mut lower, &mut upper, |t| self.question(state, t, budget));
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
        if self.nodes > self.budget || self.line.len() > SearchBudget::MAX_PATH {
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
        let (pessimistic, optimistic) = g.exit_for(s, player);
        let mut open = if players_move { optimistic >= t } else { pessimistic < t };
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
        // (The counts as bytes: each at most 6, the safety scratch 0.)
        self.counts.copy_from_slice(&game.open);
        self.queue.clear();
        for &s in &self.line {
            let s = s as usize;
            if s != start {
                // The repetition's shares.
                self.win[s] = game.good[s] as u8;
            }
        }
        // States won at once (unreachable ones included: they cannot
        // change the start's fate).
        for (s, &won) in self.win.iter().enumerate() {
            if won != 0 {
                self.queue.push_back(s as u32);
            }
        }
        let path = &self.path;
        let terminal = |s: usize| s != start && path[s / 64] & (1 << (s % 64)) != 0;
        let (won, _) = peel(
            self.graph,
            game.player,
            &mut self.win,
            &mut self.counts,
            &mut self.queue,
            1,
            |&s| !game.blocked[s as usize] && !terminal(s as usize),
            |&s| game.good[s as usize],
            Some(start),
            None,
            &mut |_, _| {},
        );
        won
    }
}
