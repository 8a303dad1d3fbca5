//! A cycle component as an implicit graph of game states, walked through
//! moves and un-moves: what the history-free bounds play their games on,
//! and what a snapshot's games' state is checked against.

use crate::rank::layer_index;
use crate::rules::Position;
use crate::tablebase::solve::games::{ParallelStateGraph, StateGraph};
use crate::tablebase::solve::members::MemberPositions;

/// A game state: position, its layer index, parity. Packed in 16 bytes
/// (the pits as bytes, `2 × index + parity`): the games' frontiers can
/// hold millions of them.
#[derive(Clone, Copy)]
pub(crate) struct State {
    pits: [u8; 12],
    node: u32,
}

impl State {
    #[inline]
    pub(crate) fn new(position: &Position, index: usize, parity: usize) -> State {
        debug_assert!(index < 1 << 31, "a layer index fits in 31 bits");
        State { pits: position.pits(), node: (2 * index + parity) as u32 }
    }

    #[inline]
    pub(crate) fn position(&self) -> Position {
        Position::new(self.pits)
    }

    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.node as usize / 2
    }

    #[inline]
    pub(crate) fn parity(&self) -> usize {
        self.node as usize & 1
    }
}

/// A component as a graph of game states, walked through moves and
/// un-moves: no edge lists, so a giant component of a big layer costs only
/// the layer-wide work arrays.
pub(crate) struct ImplicitComponent<'s> {
    pub ids: &'s [u32],
    pub component: u32,
    pub members: &'s [u32],
    pub positions: &'s MemberPositions<'s>,
}

impl StateGraph for ImplicitComponent<'_> {
    type State = State;

    #[inline]
    fn node(&self, s: &State) -> usize {
        s.node as usize
    }

    #[inline]
    fn parity(&self, s: &State) -> usize {
        s.parity()
    }

    fn for_each_state(&self, mut visit: impl FnMut(State)) {
        // (Members are walked again each time rather than listed: in a
        // giant component the list would not fit.)
        self.positions.for_each(|i, position| {
            let index = self.members[i] as usize;
            visit(State::new(&position, index, 0));
            visit(State::new(&position, index, 1));
        });
    }

    #[inline]
    fn for_each_child(&self, s: &State, mut visit: impl FnMut(State)) {
        let position = s.position();
        for pit in position.legal_moves() {
            let played = position.play(pit);
            if played.captured > 0 {
                continue;
            }
            let index = layer_index(&played.child) as usize;
            if self.ids[index] == self.component {
                visit(State::new(&played.child, index, 1 - s.parity()));
            }
        }
    }

    #[inline]
    fn for_each_parent(&self, s: &State, mut visit: impl FnMut(State)) {
        s.position().quiet_parents(|parent, _| {
            let index = layer_index(&parent) as usize;
            if self.ids[index] == self.component {
                visit(State::new(&parent, index, 1 - s.parity()));
            }
        });
    }
}

impl ParallelStateGraph for ImplicitComponent<'_> {
    fn par_collect<T: Send>(&self, visit: impl Fn(State, &mut Vec<T>) + Sync) -> Vec<T> {
        self.positions.par_collect(|i, position, out| {
            let index = self.members[i] as usize;
            visit(State::new(&position, index, 0), out);
            visit(State::new(&position, index, 1), out);
        })
    }
}
