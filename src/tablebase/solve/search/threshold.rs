//! The fast resolver of cycle positions: a threshold search over simple
//! paths whose leaves are history-proof (`docs/cycle-bounds.md`, section 4).
//!
//! A question asks of a member `q` of a cycle component: "does the mover at
//! `q`, call it P, get at least `t` when `q` is the root?" The search plays
//! the real game from `q`: a quiet move that recreates a game state of the
//! current path ends the game (each side takes its own row), a move that
//! leaves the component is worth its proven interval. It stops at a node
//! as soon as the node is a *history-proof leaf*:
//!
//! * for P: the node lies in `L_t`, the controllable predecessors of the
//!   safety set `S_t` from which P can make sure that every state entered
//!   gives it a share of at least `t` and every exit is worth at least `t`;
//!   from there P gets at least `t` whatever the path so far, so the answer
//!   is yes;
//! * for the opponent O: the node lies in O's set for `n + 1 − t`; O keeps P
//!   below `t` whatever the path, so the answer is no.
//!
//! These sets are one greatest fixed point per threshold, computed once per
//! component and threshold, when a question first asks for that threshold
//! ([`ProofLeaves`]), so a leaf test is a byte lookup and a node
//! costs a few memory reads per move. Questions are independent: each uses
//! only the component's structure, its proven exits and these sets, so
//! answers do not depend on thread count or order. A question that exceeds
//! its node budget, or a line longer than the path cap, proves nothing.

use std::collections::VecDeque;
use std::sync::OnceLock;

use crate::tablebase::solve::games::{narrow, peel, safety_set, Answer, Candidate};
use crate::tablebase::solve::graph::ComponentGraph;

/// The history-proof leaves of one component, one [`ThresholdLeaves`] per
/// threshold `0..=n`, each computed the first time a question asks for it:
/// a layer's searches usually ask a few thresholds of the `n`, and each set
/// costs passes over the whole component. A set is a function of the
/// component and its threshold alone, so when and on which thread it is
/// computed changes nothing in the answers.
pub(crate) struct ProofLeaves<'g> {
    graph: &'g ComponentGraph,
    sets: Vec<OnceLock<ThresholdLeaves>>,
}

/// The leaves at one threshold `t`: `bits[i]` has bit 0 set when the mover
/// at member `i` can secure at least `t` whatever the history, bit 1 when
/// the player not to move there can. `ranks[s]` is the round at which
/// state `s` joined the player-0 co-Büchi region `W_t` (0: never), for the
/// ranked leaf.
pub(crate) struct ThresholdLeaves {
    bits: Vec<u8>,
    ranks: Vec<u32>,
}

/// What a search holds before its first question sets its thresholds.
static NO_LEAVES: ThresholdLeaves = ThresholdLeaves { bits: Vec::new(), ranks: Vec::new() };

impl<'g> ProofLeaves<'g> {
    /// One safety game per threshold `1..=n`, solved for the player at
    /// parity 0 when first asked (the graph is the same for both players
    /// up to the parity swap, so its states `2i` and `2i + 1` answer for
    /// the mover at `i` and for the other player).
    pub(crate) fn new(graph: &'g ComponentGraph) -> ProofLeaves<'g> {
        ProofLeaves { graph, sets: (0..=graph.n).map(|_| OnceLock::new()).collect() }
    }

    /// The leaves at threshold `t` (`0..=n`), computed on the first call.
    pub(crate) fn at(&self, t: u8) -> &ThresholdLeaves {
        let g = self.graph;
        self.sets[t as usize].get_or_init(|| {
            if t == 0 {
                // Always secured.
                ThresholdLeaves { bits: vec![3; g.len()], ranks: vec![1; g.states()] }
            } else {
                ThresholdLeaves { bits: Self::threshold(g, t), ranks: Self::ranks(g, t) }
            }
        })
    }

    /// The player-0 co-Büchi region `W_t` of section 3 on this component,
    /// with the round at which each state joined: exits worth `t` are
    /// round 1; a state attracted joins one round after the state that let
    /// it join (the queue is in round order, so an opponent state's last
    /// child has its largest round); each safety set gets one new round.
    /// Along the player's positional strategy rounds never grow, and stay
    /// equal only inside one safety set, whose states are all good.
    fn ranks(g: &ComponentGraph, t: u8) -> Vec<u32> {
        let states = g.states();
        // (`counts`: the open counts, at most 6, and the safety scratch.)
        let (mut win, mut counts) = (vec![0u8; states], vec![0u8; states]);
        let mut rank = vec![0u32; states];
        let mut queue = VecDeque::new();
        for s in 0..states {
            let (pessimistic, _) = g.exit_for(s, 0);
            if s % 2 == 0 {
                if pessimistic >= t {
                    win[s] = 1;
                    rank[s] = 1;
                    queue.push_back(s as u32);
                }
            } else {
                counts[s] = g.children_of(s / 2).len() as u8;
            }
        }
        let mut top = 1u32;
        let mut set_rank = 0u32;
        peel(
            g,
            0,
            &mut win,
            &mut counts,
            &mut queue,
            1,
            |&s| s % 2 == 0 || g.exit_for(s as usize, 0).0 >= t,
            |&s| g.share(s as usize, 0) >= t,
            None,
            Some(RANK_SETS),
            &mut |state, via| {
                if state == usize::MAX {
                    set_rank = 0; // the set is complete
                } else if via == usize::MAX {
                    if set_rank == 0 {
                        top += 1;
                        set_rank = top;
                    }
                    rank[state] = set_rank;
                } else {
                    rank[state] = rank[via] + 1;
                    top = top.max(rank[state]);
                }
            },
        );
        rank
    }

    fn threshold(g: &ComponentGraph, t: u8) -> Vec<u8> {
        let states = g.states();
        let mut safe = vec![0u8; states];
        // S_t: states worth entering (share ≥ t), where the player can stay
        // (or take an exit worth t) and the opponent cannot get out (no exit
        // below t, every move into S_t).
        let inside = safety_set(
            g,
            0,
            |_| false,
            &mut safe,
            |&s| {
                let s = s as usize;
                let (pessimistic, _) = g.exit_for(s, 0);
                if g.share(s, 0) < t {
                    Candidate::No
                } else if s.is_multiple_of(2) && pessimistic >= t {
                    Candidate::Anchored
                } else if s.is_multiple_of(2) || pessimistic >= t {
                    Candidate::Yes
                } else {
                    Candidate::No
                }
            },
        );
        for &s in &inside {
            safe[s as usize] = 1;
        }
        // L_t: one controlled step into S_t (or an exit worth t). A state
        // of L_t need not be worth entering itself: it is already entered
        // when the search tests it, and play from it never comes back to it
        // unless it lies in S_t.
        let mut bits = vec![0u8; g.len()];
        for s in 0..states {
            let (pessimistic, _) = g.exit_for(s, 0);
            let children = g.children_of(s / 2);
            let flip = 1 - s % 2;
            let child_safe = |c: &u32| safe[2 * *c as usize + flip] != 0;
            let secured = if s % 2 == 0 {
                pessimistic >= t || children.iter().any(child_safe)
            } else {
                pessimistic >= t && children.iter().all(child_safe)
            };
            if secured {
                bits[s / 2] |= 1 << (s % 2);
            }
        }
        bits
    }
}

impl ThresholdLeaves {
    /// Whether the player at parity `role` of member `i` (0: its mover)
    /// secures at least this threshold whatever the history.
    #[inline]
    pub(crate) fn secures(&self, i: usize, role: usize) -> bool {
        self.bits[i] >> role & 1 != 0
    }

    /// The round at which state `s` of the player at parity `role` joined
    /// its co-Büchi region at this threshold (0: not in it).
    #[inline]
    pub(crate) fn rank(&self, s: usize, role: usize) -> u32 {
        // The other player's game is the player-0 game with parities
        // flipped.
        self.ranks[s ^ role]
    }
}

/// Safety sets the ranked leaf's peeling computes at most per threshold.
/// Each costs a pass over the component and nothing bounds their number in
/// advance (up to one per state), so the cap bounds the cost; the rounds
/// cut away are simply not leaves (`docs/cycle-bounds.md` §4). Measured:
/// layer 7 closes the same with 1, 4, 16 and 64 sets; on layer 8 the
/// peeling ends before the cap (0.04 s for every threshold, cut or not).
const RANK_SETS: u32 = 64;

/// Searches the questions of one member at a time; reusable.
pub(crate) struct ThresholdSearch<'g> {
    graph: &'g ComponentGraph,
    leaves: &'g ProofLeaves<'g>,
    /// The leaves at the question's threshold for P, and at the opponent's.
    leaves_p: &'g ThresholdLeaves,
    leaves_o: &'g ThresholdLeaves,
    /// History-free bounds of every member (move ordering only).
    lower: &'g [u8],
    upper: &'g [u8],
    /// Game states on the current line: bit `2i + parity`, parity 0 for P.
    path: Vec<u64>,
    depth: usize,
    max_path: usize,
    /// The question's threshold for P, and the opponent's.
    t: u8,
    t_opponent: u8,
    nodes: u64,
    budget: u64,
}

impl<'g> ThresholdSearch<'g> {
    pub(crate) fn new(
        graph: &'g ComponentGraph,
        leaves: &'g ProofLeaves<'g>,
        lower: &'g [u8],
        upper: &'g [u8],
        max_path: usize,
    ) -> ThresholdSearch<'g> {
        ThresholdSearch {
            graph,
            leaves,
            leaves_p: &NO_LEAVES,
            leaves_o: &NO_LEAVES,
            lower,
            upper,
            path: vec![0; graph.states().div_ceil(64)],
            depth: 0,
            max_path,
            t: 0,
            t_opponent: 0,
            nodes: 0,
            budget: 0,
        }
    }

    /// Does the mover at member `root` (as root) get at least `t`? Returns
    /// the answer and the nodes searched.
    pub(crate) fn question(&mut self, root: usize, t: u8, budget: u64) -> (Answer, u64) {
        debug_assert!(t >= 1 && t <= self.graph.n);
        self.t = t;
        self.t_opponent = self.graph.n + 1 - t;
        self.leaves_p = self.leaves.at(self.t);
        self.leaves_o = self.leaves.at(self.t_opponent);
        self.nodes = 0;
        self.budget = budget;
        let s = 2 * root;
        self.mark(s, true);
        let (bad_p, bad_o) = self.with_state(u32::MAX, u32::MAX, s);
        let answer = self.ask(s, bad_p, bad_o);
        self.mark(s, false);
        debug_assert_eq!(self.depth, 0);
        (answer, self.nodes)
    }

    #[inline]
    fn on_path(&self, s: usize) -> bool {
        self.path[s / 64] >> (s % 64) & 1 != 0
    }

    #[inline]
    fn mark(&mut self, s: usize, on: bool) {
        self.path[s / 64] ^= 1 << (s % 64);
        if on {
            self.depth += 1;
        } else {
            self.depth -= 1;
        }
    }

    /// P secures `t` from state `s` whatever the history.
    #[inline]
    fn yes_leaf(&self, s: usize) -> bool {
        self.leaves_p.secures(s / 2, s % 2)
    }

    /// The opponent secures `n + 1 − t` from state `s` whatever the history.
    #[inline]
    fn no_leaf(&self, s: usize) -> bool {
        self.leaves_o.secures(s / 2, 1 - s % 2)
    }

    /// P reaches `t` from state `s` by its co-Büchi strategy whatever the
    /// history, because no state of the path that would repeat below `t`
    /// is reachable: every path state bad for P in P's region joined it at
    /// a round no earlier than `s` (`bad_p` is the least such round).
    #[inline]
    fn yes_by_rank(&self, s: usize, bad_p: u32) -> bool {
        let rank = self.leaves_p.rank(s, 0);
        rank != 0 && rank <= bad_p
    }

    /// The same for the opponent at its threshold.
    #[inline]
    fn no_by_rank(&self, s: usize, bad_o: u32) -> bool {
        let rank = self.leaves_o.rank(s, 1);
        rank != 0 && rank <= bad_o
    }

    /// The least rounds of the path's bad states once `s` joins the path:
    /// a state is bad for P if its share for P is below `t`, else bad for
    /// the opponent (whose share is then below `n + 1 − t`).
    #[inline]
    fn with_state(&self, bad_p: u32, bad_o: u32, s: usize) -> (u32, u32) {
        if self.graph.share(s, 0) < self.t {
            match self.leaves_p.rank(s, 0) {
                0 => (bad_p, bad_o),
                rank => (bad_p.min(rank), bad_o),
            }
        } else {
            match self.leaves_o.rank(s, 1) {
                0 => (bad_p, bad_o),
                rank => (bad_p, bad_o.min(rank)),
            }
        }
    }

    /// The answer at state `s`, on the path already (its own repetition
    /// and leaf tests were made by the caller, or it is the root). `bad_p`
    /// and `bad_o`: see [`Self::with_state`].
    fn ask(&mut self, s: usize, bad_p: u32, bad_o: u32) -> Answer {
        self.nodes += 1;
        if self.nodes > self.budget || self.depth > self.max_path {
            return Answer::Unknown;
        }
        let g = self.graph;
        let t = self.t;
        let players_move = s.is_multiple_of(2);
        let (pessimistic, optimistic) = g.exit_for(s, 0);
        // Where the mover's own exit settles the node, or may still count.
        let mut unknown = if players_move {
            if pessimistic >= t {
                return Answer::Yes;
            }
            optimistic >= t
        } else {
            if optimistic < t {
                return Answer::No;
            }
            pessimistic < t
        };
        // One pass over the moves for what is settled without searching:
        // repetitions and history-proof leaves. The rest, ordered.
        let i = s / 2;
        let flip = 1 - s % 2;
        let mut pending: [(i32, u32); 12] = [(0, 0); 12];
        let mut count = 0;
        for &c in g.children_of(i) {
            let child = 2 * c as usize + flip;
            let verdict = if self.on_path(child) {
                if g.share(child, 0) >= t {
                    Answer::Yes
                } else {
                    Answer::No
                }
            } else if self.yes_leaf(child) || self.yes_by_rank(child, bad_p) {
                Answer::Yes
            } else if self.no_leaf(child) || self.no_by_rank(child, bad_o) {
                Answer::No
            } else {
                // Most promising for the mover first: a child whose
                // history-free bounds (its own mover's, the other side)
                // already settle the question for the mover, then one they
                // leave open, then the rest; among equals, the fewest
                // replies to refute.
                let c = c as usize;
                let (low, high) = (self.lower[c], self.upper[c]);
                let category = if players_move {
                    // P's value there is n − V(c).
                    if g.n - high >= t {
                        0
                    } else if g.n - low >= t {
                        1
                    } else {
                        2
                    }
                } else if high < t {
                    0
                } else if low < t {
                    1
                } else {
                    2
                };
                let hope = category * 16 + g.children_of(c).len() as i32;
                pending[count] = (hope, child as u32);
                count += 1;
                continue;
            };
            match (verdict, players_move) {
                (Answer::Yes, true) => return Answer::Yes,
                (Answer::No, false) => return Answer::No,
                _ => {}
            }
        }
        let pending = &mut pending[..count];
        pending.sort_unstable();
        for &(_, child) in pending.iter() {
            let child = child as usize;
            self.mark(child, true);
            let (bad_p, bad_o) = self.with_state(bad_p, bad_o, child);
            let answer = self.ask(child, bad_p, bad_o);
            self.mark(child, false);
            match (answer, players_move) {
                (Answer::Yes, true) => return Answer::Yes,
                (Answer::No, false) => return Answer::No,
                (Answer::Unknown, _) => {
                    unknown = true;
                    if self.nodes > self.budget {
                        return Answer::Unknown;
                    }
                }
                _ => {}
            }
        }
        if unknown {
            Answer::Unknown
        } else if players_move {
            Answer::No
        } else {
            Answer::Yes
        }
    }
}

/// What the questions of one member came to.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Tightened {
    pub lower: u8,
    pub upper: u8,
    /// Questions answered, with the nodes of the attempt that answered
    /// each.
    pub answered: Vec<u64>,
    /// Nodes of every attempt, answered or not.
    pub nodes: u64,
}

impl ThresholdSearch<'_> {
    /// Narrows `[lower, upper]`, the proven as-root interval of member
    /// `root`, with questions under growing budgets: `first`, then eight
    /// times more at each round, up to `most` nodes per question.
    pub(crate) fn tighten(&mut self, root: usize, lower: u8, upper: u8, first: u64, most: u64) -> Tightened {
        let mut result = Tightened { lower, upper, ..Tightened::default() };
        let mut budget = first.min(most);
        while result.lower < result.upper {
            let (mut lower, mut upper) = (result.lower, result.upper);
            narrow(&mut lower, &mut upper, |t| {
                let (answer, nodes) = self.question(root, t, budget);
                result.nodes += nodes;
                if answer != Answer::Unknown {
                    result.answered.push(nodes);
                }
                answer
            });
            (result.lower, result.upper) = (lower, upper);
            if result.lower == result.upper || budget >= most {
                break;
            }
            budget = budget.saturating_mul(8).min(most);
        }
        result
    }
}
