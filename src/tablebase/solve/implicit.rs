//! A cycle component as an implicit graph of game states, walked through
//! moves and un-moves: what the history-free bounds play their games on,
//! and what a snapshot's games' state is checked against.

use crate::rank::layer_index;
use crate::rules::Position;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::games::{ParallelStateGraph, StateGraph};
use crate::tablebase::solve::members::{MemberPositions, Membership};

/// A game state: position, its layer index, parity. Packed in 16 bytes
/// (the games' frontiers can hold millions of them): the pits as bytes,
/// the parity in the top bit of the first (a pit holds at most 48 seeds),
/// the index in 32 bits (every layer up to 30 seeds has fewer than 2³²
/// positions; layer 31 has more, and a state of it is refused).
#[derive(Clone, Copy)]
pub(crate) struct State {
    pits: [u8; 12],
    index: u32,
}

/// The bit of the first pit's byte that holds the parity.
const PARITY_BIT: u8 = 0x80;

impl State {
    #[inline]
    pub(crate) fn new(position: &Position, index: usize, parity: usize) -> State {
        let mut pits = position.pits();
        pits[0] |= PARITY_BIT * parity as u8;
        State {
            pits,
            index: u32::try_from(index).expect("a layer of at most 30 seeds: indexes fit in 32 bits"),
        }
    }

    #[inline]
    pub(crate) fn position(&self) -> Position {
        let mut pits = self.pits;
        pits[0] &= !PARITY_BIT;
        Position::new(pits)
    }

    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index as usize
    }

    #[inline]
    pub(crate) fn parity(&self) -> usize {
        (self.pits[0] >> 7) as usize
    }

    /// The state's number in the games' work arrays: `2 × index + parity`.
    #[inline]
    pub(crate) fn node(&self) -> usize {
        2 * self.index() + self.parity()
    }
}

/// A component as a graph of game states, walked through moves and
/// un-moves: no edge lists, so a giant component of a big layer costs only
/// the layer-wide work arrays.
pub(crate) struct ImplicitComponent<'s> {
    pub members: &'s [u32],
    pub positions: &'s MemberPositions<'s>,
    inside: Membership<'s>,
}

impl<'s> ImplicitComponent<'s> {
    /// Component `k` of `components`, whose members' positions are
    /// `positions`.
    pub(crate) fn new(components: &'s Components, k: usize, positions: &'s MemberPositions<'s>) -> Self {
        ImplicitComponent { members: components.of(k), positions, inside: components.membership(k) }
    }

    /// Whether layer position `index` is a member.
    #[inline]
    fn contains(&self, index: usize) -> bool {
        self.inside.contains(index)
    }
}

impl StateGraph for ImplicitComponent<'_> {
    type State = State;

    #[inline]
    fn node(&self, s: &State) -> usize {
        s.node()
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
            if self.contains(index) {
                visit(State::new(&played.child, index, 1 - s.parity()));
            }
        }
    }

    #[inline]
    fn for_each_parent(&self, s: &State, mut visit: impl FnMut(State)) {
        s.position().quiet_parents(|parent, _| {
            let index = layer_index(&parent) as usize;
            if self.contains(index) {
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

    fn par_collect_where<T: Send>(
        &self,
        keep: impl Fn(usize) -> bool + Sync,
        visit: impl Fn(State, &mut Vec<T>) + Sync,
    ) -> Vec<T> {
        // (A member's two states are numbers 2m and 2m + 1.)
        let member_kept = |i: usize| {
            let m = self.members[i] as usize;
            keep(2 * m) || keep(2 * m + 1)
        };
        self.positions.par_collect_where(member_kept, |i, position, out| {
            let index = self.members[i] as usize;
            for parity in 0..2 {
                if keep(2 * index + parity) {
                    visit(State::new(&position, index, parity), out);
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state gives back its position, index and parity, up to the last
    /// index of layer 30 and with a pit of 48 seeds.
    #[test]
    fn states_pack_position_index_and_parity() {
        let last_of_thirty = crate::rank::layer_size(30) as usize - 1;
        assert!(last_of_thirty < 1 << 32);
        for pits in [[0; 12], [48, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]]
        {
            let position = Position::new(pits);
            for index in [0, 1, (1 << 31) + 5, last_of_thirty] {
                for parity in 0..2 {
                    let state = State::new(&position, index, parity);
                    assert_eq!(state.position().pits(), pits);
                    assert_eq!((state.index(), state.parity()), (index, parity));
                    assert_eq!(state.node(), 2 * index + parity);
                }
            }
        }
        assert_eq!(std::mem::size_of::<State>(), 16);
    }
}
