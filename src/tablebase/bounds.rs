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
use std::sync::atomic::Ordering::Relaxed;

use super::layer::{Checkpointer, Cursor, LayerSolver, Step};
use super::scc::{Components, MemberPositions};
use crate::rank::layer_index;
use crate::rules::Position;

/// Per-state scratch arrays over the whole layer (two states a position),
/// reused by every component.
pub(crate) struct BoundWork {
    /// Threshold at which a state entered `W` (0: not yet).
    win: Vec<u8>,
    /// Children not in `W` yet.
    open: Vec<u8>,
    /// Safety-game membership: 0 outside; for X-states 1 + children inside.
    safe: Vec<u8>,
}

impl BoundWork {
    pub fn new(size: usize) -> BoundWork {
        BoundWork { win: vec![0; 2 * size], open: vec![0; 2 * size], safe: vec![0; 2 * size] }
    }
}

/// A game state: position, its layer index, parity.
#[derive(Clone, Copy)]
struct State {
    position: Position,
    index: usize,
    parity: usize,
}

impl State {
    #[inline]
    fn node(&self) -> usize {
        2 * self.index + self.parity
    }
}

/// The bounds of one component and where they came from.
pub(crate) struct ComponentBounds {
    pub lower: Vec<u8>,
    pub upper: Vec<u8>,
    /// Co-Büchi rounds that added states beyond the attractor.
    pub safety_rounds: u32,
}

struct Game<'s, 'w> {
    solver: &'s LayerSolver<'s>,
    work: &'w mut BoundWork,
    component: u32,
    ids: &'s [u32],
    n: u8,
    queue: VecDeque<State>,
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
        let mut game =
            Game { solver: self, work, component: k as u32, ids: &components.id, n, queue: VecDeque::new() };
        // Exits: the best option leaving the component, pessimistic and
        // optimistic for its mover (0 when there is none: harmless, since
        // thresholds start at 1 and an upper bound of 0 never beats n − t).
        let mut x_entry: Vec<Vec<usize>> = vec![Vec::new(); n as usize + 1];
        let mut y_eligible: Vec<Vec<usize>> = vec![Vec::new(); n as usize + 1];
        for (i, &m) in members.iter().enumerate() {
            let m = m as usize;
            let degree = self.pending[m].load(Relaxed);
            game.work.win[2 * m] = 0;
            game.work.win[2 * m + 1] = 0;
            game.work.open[2 * m] = degree;
            game.work.open[2 * m + 1] = degree;
            x_entry[self.lo[m].load(Relaxed) as usize].push(i);
            y_eligible[(n - self.hi[m].load(Relaxed)) as usize].push(i);
        }
        let (mut safety_rounds, first) = match resume {
            None => (0, n),
            Some((t, rounds, state)) => {
                for (i, &m) in members.iter().enumerate() {
                    let m = m as usize;
                    game.work.win[2 * m..2 * m + 2].copy_from_slice(&state[4 * i..4 * i + 2]);
                    game.work.open[2 * m..2 * m + 2].copy_from_slice(&state[4 * i + 2..4 * i + 4]);
                }
                (rounds, t)
            }
        };
        let big = members.len() > 1 << 16;
        for t in (1..=first).rev() {
            if big {
                self.progress
                    .set_message(format!("{n} seeds: bounds of {} positions, threshold {t}", members.len()));
            }
            if t < first && checkpoints.due() {
                let mut state = Vec::with_capacity(4 * members.len());
                for &m in members {
                    let m = m as usize;
                    state.extend_from_slice(&game.work.win[2 * m..2 * m + 2]);
                    state.extend_from_slice(&game.work.open[2 * m..2 * m + 2]);
                }
                let step = Step::Bounds { t, safety_rounds, state };
                self.checkpoint(checkpoints, &Cursor::Resolving { k, step }, Some(components))?;
            }
            for &i in &x_entry[t as usize] {
                let m = members[i] as usize;
                if game.work.win[2 * m] == 0 {
                    game.enter(State { position: positions.get(i), index: m, parity: 0 }, t);
                }
            }
            for &i in &y_eligible[t as usize] {
                let m = members[i] as usize;
                if game.work.open[2 * m + 1] == 0 && game.work.win[2 * m + 1] == 0 {
                    game.enter(State { position: positions.get(i), index: m, parity: 1 }, t);
                }
            }
            game.attract(t);
            loop {
                let safe = game.safe_states(members, positions, t);
                if safe.is_empty() {
                    break;
                }
                safety_rounds += 1;
                for state in safe {
                    game.enter(state, t);
                }
                game.attract(t);
            }
        }
        let lower = members.iter().map(|&m| game.work.win[2 * m as usize]).collect();
        let upper = members.iter().map(|&m| n - game.work.win[2 * m as usize + 1]).collect();
        Ok(ComponentBounds { lower, upper, safety_rounds })
    }
}

impl Game<'_, '_> {
    #[inline]
    fn in_component(&self, index: usize) -> bool {
        self.ids[index] == self.component
    }

    /// Y at `index` has no exit that X loses at threshold `t`.
    #[inline]
    fn y_may_join(&self, index: usize, t: u8) -> bool {
        self.solver.hi[index].load(Relaxed) <= self.n - t
    }

    /// X's own row holds at least `t` seeds in this state.
    #[inline]
    fn good(&self, state: &State, t: u8) -> bool {
        let own = state.position.own_seeds() as u8;
        let x_share = if state.parity == 0 { own } else { self.n - own };
        x_share >= t
    }

    #[inline]
    fn enter(&mut self, state: State, t: u8) {
        self.work.win[state.node()] = t;
        self.queue.push_back(state);
    }

    /// Grows `W` to its X-attractor at threshold `t`.
    fn attract(&mut self, t: u8) {
        while let Some(state) = self.queue.pop_front() {
            let parity = 1 - state.parity;
            let mut joined = Vec::new();
            state.position.quiet_parents(|parent, _| {
                let index = layer_index(&parent) as usize;
                if !self.in_component(index) {
                    return;
                }
                let node = 2 * index + parity;
                if self.work.win[node] != 0 {
                    return;
                }
                self.work.open[node] -= 1;
                if parity == 0 || (self.work.open[node] == 0 && self.y_may_join(index, t)) {
                    self.work.win[node] = t;
                    joined.push(State { position: parent, index, parity });
                }
            });
            self.queue.extend(joined);
        }
    }

    /// Counts a candidate's children inside the candidates (X-states) or
    /// checks that none escapes to a losing state (Y-states); true if the
    /// candidate must go at once.
    fn first_removal(&mut self, state: &State) -> bool {
        let child_parity = 1 - state.parity;
        let mut inside = 0u8;
        let mut escapes = false;
        for pit in state.position.legal_moves() {
            let played = state.position.play(pit);
            if played.captured > 0 {
                continue;
            }
            let index = layer_index(&played.child) as usize;
            if !self.in_component(index) {
                continue;
            }
            let node = 2 * index + child_parity;
            if self.work.safe[node] != 0 {
                inside += 1;
            } else if self.work.win[node] == 0 {
                escapes = true;
            }
        }
        if state.parity == 0 {
            self.work.safe[state.node()] = 1 + inside;
            inside == 0
        } else {
            escapes
        }
    }

    /// The states outside `W` from which X can stay forever in good states
    /// outside `W` or move into `W`: the greatest set Z of good states,
    /// without exits losing at `t` for Y-states, where every X-state has a
    /// child in Z and every Y-state has all its children in Z or `W`.
    fn safe_states(&mut self, members: &[u32], positions: &MemberPositions, t: u8) -> Vec<State> {
        // Pass 1: mark the candidates. (Passes walk the members again rather
        // than keep a list: in a giant component the list would not fit.)
        positions.for_each(|i, position| {
            let index = members[i] as usize;
            for parity in 0..2 {
                let state = State { position, index, parity };
                if self.work.win[state.node()] == 0
                    && self.good(&state, t)
                    && (parity == 0 || self.y_may_join(index, t))
                {
                    self.work.safe[state.node()] = 1;
                }
            }
        });
        // Pass 2: count children inside; find the first removals.
        let mut removed = Vec::new();
        positions.for_each(|i, position| {
            let index = members[i] as usize;
            for parity in 0..2 {
                let state = State { position, index, parity };
                if self.work.safe[state.node()] != 0 && self.first_removal(&state) {
                    removed.push(state);
                }
            }
        });
        // Counts were taken against the initial candidates; removals now
        // propagate to parents still inside.
        for state in &removed {
            self.work.safe[state.node()] = 0;
        }
        while let Some(state) = removed.pop() {
            let parity = 1 - state.parity;
            state.position.quiet_parents(|parent, _| {
                let index = layer_index(&parent) as usize;
                if !self.in_component(index) {
                    return;
                }
                let node = 2 * index + parity;
                let inside = self.work.safe[node];
                if inside == 0 {
                    return;
                }
                if parity == 1 || inside == 2 {
                    self.work.safe[node] = 0;
                    removed.push(State { position: parent, index, parity });
                } else {
                    self.work.safe[node] = inside - 1;
                }
            });
        }
        let mut safe = Vec::new();
        positions.for_each(|i, position| {
            for parity in 0..2 {
                let state = State { position, index: members[i] as usize, parity };
                if self.work.safe[state.node()] != 0 {
                    safe.push(state);
                }
            }
        });
        for state in &safe {
            self.work.safe[state.node()] = 0;
        }
        safe
    }
}
