//! History-free bounds for the positions of one cycle component
//! (`docs/cycle-bounds.md` proves them sound).
//!
//! Game states are nodes `(q, b)`: position `q` of the component, `b` the
//! ply parity from a root player X (X moves at `b = 0`, the opponent Y at
//! `b = 1`). For each threshold `t = n, n − 1, …, 1` we solve the game Γ_t
//! in which X wins a play that
//! * leaves the component through an option worth at least `t` to X
//!   (judged pessimistically for X when the option's value is an interval),
//! * or stays in the component forever and, from some point on, only visits
//!   states where X's own row holds at least `t` seeds (co-Büchi).
//!
//! `W_t`, the states X wins, shrinks as `t` grows, so we compute it
//! incrementally from `W_{t+1}`: grow the X-attractor, then repeatedly add
//! the states from which X can stay forever inside good states of the rest
//! (a safety game, solved as a greatest fixpoint), and attract again.
//! Finally `lower(q) = max{t : (q, 0) ∈ W_t}` and
//! `upper(q) = n − max{t : (q, 1) ∈ W_t}`.

use std::collections::VecDeque;

use super::games::{peel, StateGraph};
use super::layer::{Checkpointer, Cursor, LayerSolver, Step};
use super::scc::{Components, MemberPositions};
use crate::rank::layer_index;
use crate::rules::Position;

/// Per-state scratch arrays over the whole layer (two states a position),
/// reused by every component.
pub(crate) struct BoundWork {
    /// Threshold at which a state entered `W` (0: not yet).
    win: Vec<u8>,
    /// Opponent states: children not in `W` yet (counted once the state
    /// may join, see [`LayerSolver::cycle_bounds`]).
    open: Vec<u8>,
    /// The safety game's scratch.
    safe: Vec<u8>,
}

impl BoundWork {
    pub fn new(size: usize) -> BoundWork {
        BoundWork { win: vec![0; 2 * size], open: vec![0; 2 * size], safe: vec![0; 2 * size] }
    }
}

/// A game state: position, its layer index, parity.
#[derive(Clone, Copy)]
pub(crate) struct State {
    position: Position,
    index: usize,
    parity: usize,
}

/// A component as a graph of game states, walked through moves and
/// un-moves: no edge lists, so a giant component of a big layer costs only
/// the layer-wide work arrays.
struct ImplicitComponent<'s> {
    ids: &'s [u32],
    component: u32,
    members: &'s [u32],
    positions: &'s MemberPositions<'s>,
}

impl StateGraph for ImplicitComponent<'_> {
    type State = State;

    #[inline]
    fn node(&self, s: &State) -> usize {
        2 * s.index + s.parity
    }

    #[inline]
    fn parity(&self, s: &State) -> usize {
        s.parity
    }

    fn for_each_state(&self, mut visit: impl FnMut(State)) {
        // (Members are walked again each time rather than listed: in a
        // giant component the list would not fit.)
        self.positions.for_each(|i, position| {
            let index = self.members[i] as usize;
            visit(State { position, index, parity: 0 });
            visit(State { position, index, parity: 1 });
        });
    }

    #[inline]
    fn for_each_child(&self, s: &State, mut visit: impl FnMut(State)) {
        for pit in s.position.legal_moves() {
            let played = s.position.play(pit);
            if played.captured > 0 {
                continue;
            }
            let index = layer_index(&played.child) as usize;
            if self.ids[index] == self.component {
                visit(State { position: played.child, index, parity: 1 - s.parity });
            }
        }
    }

    #[inline]
    fn for_each_parent(&self, s: &State, mut visit: impl FnMut(State)) {
        s.position.quiet_parents(|parent, _| {
            let index = layer_index(&parent) as usize;
            if self.ids[index] == self.component {
                visit(State { position: parent, index, parity: 1 - s.parity });
            }
        });
    }
}

/// The bounds of one component and where they came from.
pub(crate) struct ComponentBounds {
    pub lower: Vec<u8>,
    pub upper: Vec<u8>,
    /// Co-Büchi rounds that added states beyond the attractor.
    pub safety_rounds: u32,
}

impl LayerSolver<'_> {
    /// Solves Γ_t for every threshold on component `k`, or for those up to
    /// `t` when resuming from a snapshot taken after threshold `t + 1`.
    pub(crate) fn cycle_bounds(
        &self,
        components: &Components,
        k: usize,
        positions: &MemberPositions,
        work: &mut BoundWork,
        resume: Option<(u8, u32, Vec<u8>)>,
        checkpoints: &mut dyn Checkpointer,
    ) -> std::io::Result<ComponentBounds> {
        let members = components.of(k);
        let n = self.n as u8;
        let graph = ImplicitComponent { ids: &components.id, component: k as u32, members, positions };
        let BoundWork { win, open, safe } = work;
        // X = the player at parity 0. X-states enter `W` at the threshold
        // of their best exit read pessimistically; Y-states may join from
        // the threshold at which their best exit (read for X: n − its
        // upper end) no longer keeps X below, and only then count their
        // children not won. (No exit: 0, harmless, since thresholds start
        // at 1.)
        let mut x_entry: Vec<Vec<usize>> = vec![Vec::new(); n as usize + 1];
        let mut y_eligible: Vec<Vec<usize>> = vec![Vec::new(); n as usize + 1];
        for (i, &m) in members.iter().enumerate() {
            let m = m as usize;
            win[2 * m] = 0;
            win[2 * m + 1] = 0;
            open[2 * m] = 0;
            open[2 * m + 1] = 0;
            let (exit_lower, exit_upper, _) = self.entries.interval(m);
            x_entry[exit_lower as usize].push(i);
            y_eligible[(n - exit_upper) as usize].push(i);
        }
        let (mut safety_rounds, first) = match resume {
            None => (0, n),
            Some((t, rounds, state)) => {
                for (i, &m) in members.iter().enumerate() {
                    let m = m as usize;
                    win[2 * m..2 * m + 2].copy_from_slice(&state[4 * i..4 * i + 2]);
                    open[2 * m..2 * m + 2].copy_from_slice(&state[4 * i + 2..4 * i + 4]);
                }
                (rounds, t)
            }
        };
        let big = members.len() > 1 << 16;
        let mut queue = VecDeque::new();
        for t in (1..=first).rev() {
            if big {
                self.progress
                    .detail(&format!("{n} seeds: bounds of {} positions, threshold {t}", members.len()));
            }
            if t < first && checkpoints.due() {
                let mut state = Vec::with_capacity(4 * members.len());
                for &m in members {
                    let m = m as usize;
                    state.extend_from_slice(&win[2 * m..2 * m + 2]);
                    state.extend_from_slice(&open[2 * m..2 * m + 2]);
                }
                let step = Step::Bounds { t, safety_rounds, state };
                self.checkpoint(checkpoints, &Cursor::Resolving { k, step }, Some(components))?;
            }
            // Opponent states that may join from now on count their
            // children not won, before anything new is queued (attract
            // counts down only for what it dequeues).
            for &i in &y_eligible[t as usize] {
                let m = members[i] as usize;
                if win[2 * m + 1] != 0 {
                    continue;
                }
                let state = State { position: positions.get(i), index: m, parity: 1 };
                let mut not_won = 0;
                graph.for_each_child(&state, |c| not_won += (win[graph.node(&c)] == 0) as u8);
                open[2 * m + 1] = not_won;
                if not_won == 0 {
                    win[2 * m + 1] = t;
                    queue.push_back(state);
                }
            }
            for &i in &x_entry[t as usize] {
                let m = members[i] as usize;
                if win[2 * m] == 0 {
                    win[2 * m] = t;
                    queue.push_back(State { position: positions.get(i), index: m, parity: 0 });
                }
            }
            let entries = &self.entries;
            let (_, rounds) = peel(
                &graph,
                0,
                win,
                open,
                safe,
                &mut queue,
                t,
                |s| s.parity == 0 || entries.interval(s.index).1 <= n - t,
                |s| {
                    let own = s.position.own_seeds() as u8;
                    (if s.parity == 0 { own } else { n - own }) >= t
                },
                None,
                None,
                &mut |_, _| {},
            );
            safety_rounds += rounds;
        }
        let lower = members.iter().map(|&m| win[2 * m as usize]).collect();
        let upper = members.iter().map(|&m| n - win[2 * m as usize + 1]).collect();
        Ok(ComponentBounds { lower, upper, safety_rounds })
    }
}
