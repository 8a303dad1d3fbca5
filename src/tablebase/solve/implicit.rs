//! A cycle component as an implicit graph of game states, walked through
//! moves and un-moves: what the history-free bounds play their games on,
//! and what a snapshot's games' state is checked against.

use crate::rank::{for_each_position_at, layer_index};
use crate::rules::Position;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::games::{Counter, Counters, ParallelStateGraph, StateGraph, NO_COUNTER};
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

/// A game state in 8 bytes, as the parallel games' frontiers keep it:
/// the pits in 5 bits each (pit `i` in bits `5i..5i + 5`) and the parity
/// in bit 63. The layer index is ranked again when the state is unpacked
/// (5.7 ns, once for each state taken from a frontier, against 8 bytes
/// more for each state a frontier holds). A state's layer has at most 30
/// seeds (its index fits 32 bits, [`State::new`]), so a pit holds at most
/// 30 seeds; one of 32 or more is refused rather than cut.
#[derive(Clone, Copy)]
pub(crate) struct PackedState(u64);

impl PackedState {
    #[inline]
    pub(crate) fn of(s: &State) -> PackedState {
        let pits = s.position().pits();
        assert!(pits.iter().fold(0, |all, &p| all | p) < 32, "a pit of at most 31 seeds");
        let packed = pits.iter().enumerate().fold(0u64, |packed, (i, &p)| packed | (p as u64) << (5 * i));
        PackedState(packed | (s.parity() as u64) << 63)
    }

    #[inline]
    pub(crate) fn state(self) -> State {
        let pits: [u8; 12] = std::array::from_fn(|i| (self.0 >> (5 * i)) as u8 & 31);
        let position = Position::new(pits);
        State::new(&position, layer_index(&position) as usize, (self.0 >> 63) as usize)
    }
}

/// The counters of a position's two states, in one byte of `counts`
/// indexed by its layer index, for games whose player moves at parity 0
/// (the bounds'): the player state's safety count in bits 0 to 3 (at most
/// 8: a mark of 1 or 2 and a child inside for each of at most 6 moves),
/// the opponent state's count of children not won in bits 4 to 6 (at
/// most 6) and its safety mark in bit 7 (an opponent candidate is marked
/// 1, never anchored, and its mark is only ever cleared). A player state
/// counts no children: it has no open counter.
pub(crate) const X_SAFE: Counter = Counter::bits(0, 0x0F);
pub(crate) const Y_OPEN: Counter = Counter::bits(4, 0x07);
pub(crate) const Y_SAFE: Counter = Counter::bits(7, 0x01);

/// A component as a graph of game states, walked through moves and
/// un-moves: no edge lists, so a giant component of a big layer costs only
/// the layer-wide work arrays.
pub(crate) struct ImplicitComponent<'s> {
    pub positions: &'s MemberPositions<'s>,
    inside: Membership<'s>,
    /// The state numbers of the members, first to last.
    nodes: std::ops::Range<usize>,
}

impl<'s> ImplicitComponent<'s> {
    /// Component `k` of `components`, whose members' positions are
    /// `positions`.
    pub(crate) fn new(components: &'s Components, k: usize, positions: &'s MemberPositions<'s>) -> Self {
        let members = components.of(k);
        let nodes = match (members.first(), members.last()) {
            (Some(first), Some(last)) => 2 * first as usize..2 * last as usize + 2,
            _ => 0..0,
        };
        ImplicitComponent { positions, inside: components.membership(k), nodes }
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

    /// A position's two states share a byte ([`X_SAFE`], [`Y_OPEN`],
    /// [`Y_SAFE`]).
    #[inline]
    fn counters(&self, node: usize) -> Counters {
        match node % 2 {
            0 => Counters { byte: node / 2, open: NO_COUNTER, safe: X_SAFE },
            _ => Counters { byte: node / 2, open: Y_OPEN, safe: Y_SAFE },
        }
    }

    #[inline]
    fn parity(&self, s: &State) -> usize {
        s.parity()
    }

    fn for_each_state(&self, mut visit: impl FnMut(State)) {
        // (Members are walked again each time rather than listed: in a
        // giant component the list would not fit.)
        self.positions.for_each(|_, index, position| {
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
    type Stored = PackedState;

    #[inline]
    fn store(&self, s: &State) -> PackedState {
        PackedState::of(s)
    }

    #[inline]
    fn load(&self, s: &PackedState) -> State {
        s.state()
    }

    fn nodes(&self) -> std::ops::Range<usize> {
        self.nodes.clone()
    }

    fn states_at(&self, nodes: &[usize], mut visit: impl FnMut(State)) {
        // (A position's two states are numbers 2m and 2m + 1.)
        let mut parities = nodes.iter().map(|node| node % 2);
        for_each_position_at(self.positions.seeds(), nodes.iter().map(|node| node / 2), |index, position| {
            visit(State::new(&position, index, parities.next().expect("a parity a state")))
        });
    }

    fn par_collect<T: Send>(&self, visit: impl Fn(State, &mut Vec<T>) + Sync) -> Vec<T> {
        self.positions.par_collect(|_, index, position, out| {
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
        let member_kept = |m: usize| keep(2 * m) || keep(2 * m + 1);
        self.positions.par_collect_where(member_kept, |_, index, position, out| {
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

    /// A position's byte of counters: each of the three is set and read
    /// without touching the others, a decrement of the open count and a
    /// removal from a safety set change only their own, for every value
    /// the games hold.
    #[test]
    fn a_positions_counters_share_a_byte_independently() {
        use crate::tablebase::solve::games::leaves_with_child;
        use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
        let fields = |byte: u8| (X_SAFE.of(byte), Y_OPEN.of(byte), Y_SAFE.of(byte));
        for x in 0..=8u8 {
            for open in 0..=6u8 {
                for y in 0..=1u8 {
                    let byte = Y_SAFE.with(Y_OPEN.with(X_SAFE.with(0, x), open), y);
                    assert_eq!(fields(byte), (x, open, y));
                    assert_eq!(fields(X_SAFE.with(byte, 5)), (5, open, y));
                    assert_eq!(fields(Y_OPEN.with(byte, 3)), (x, 3, y));
                    assert_eq!(fields(Y_SAFE.with(byte, 1 - y)), (x, open, 1 - y));
                    if open > 0 {
                        assert_eq!(fields(byte - Y_OPEN.one()), (x, open - 1, y));
                    }
                    let cell = AtomicU8::new(byte);
                    let left = leaves_with_child(&cell, X_SAFE, true);
                    let expect = match x {
                        0 => (false, 0),
                        2 => (true, 0),
                        x => (false, x - 1),
                    };
                    assert_eq!((left, fields(cell.load(Relaxed))), (expect.0, (expect.1, open, y)));
                    let cell = AtomicU8::new(byte);
                    let left = leaves_with_child(&cell, Y_SAFE, false);
                    assert_eq!((left, fields(cell.load(Relaxed))), (y == 1, (x, open, 0)));
                }
            }
        }
    }

    /// Three threads write the three counters of one byte at once, each
    /// its own, as the games' threads may: none ever sees its counter
    /// changed by another's write (a plain read and write of the byte
    /// would lose some of them).
    #[test]
    fn counters_sharing_a_byte_keep_each_others_writes() {
        use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
        let cell = AtomicU8::new(0);
        let rounds = 2_000_000u32;
        // (Started together, so that their writes interleave.)
        let start = std::sync::Barrier::new(3);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                start.wait();
                for _ in 0..rounds {
                    Y_OPEN.store(&cell, 6);
                    for expect in (1..=6u8).rev() {
                        assert_eq!(Y_OPEN.of(cell.fetch_sub(Y_OPEN.one(), Relaxed)), expect);
                    }
                }
            });
            scope.spawn(|| {
                start.wait();
                for round in 0..rounds {
                    let value = (round % 9) as u8;
                    X_SAFE.store(&cell, value);
                    assert_eq!(X_SAFE.load(&cell), value);
                }
            });
            scope.spawn(|| {
                start.wait();
                for round in 0..rounds {
                    let value = (round % 2) as u8;
                    Y_SAFE.store(&cell, value);
                    assert_eq!(Y_SAFE.load(&cell), value);
                }
            });
        });
        let last = cell.load(Relaxed);
        assert_eq!(
            (X_SAFE.of(last), Y_OPEN.of(last), Y_SAFE.of(last)),
            (((rounds - 1) % 9) as u8, 0, ((rounds - 1) % 2) as u8)
        );
    }

    /// A packed state gives back the state, with its index ranked again,
    /// up to a pit of 30 seeds; a pit of 32 is refused, not cut.
    #[test]
    fn packed_states_give_back_the_state() {
        let mut thirty = [0; 12];
        thirty[11] = 30;
        for pits in
            [[0; 12], [30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], thirty, [3, 0, 2, 0, 1, 5, 0, 0, 4, 2, 1, 2]]
        {
            let position = Position::new(pits);
            let index = layer_index(&position) as usize;
            for parity in 0..2 {
                let back = PackedState::of(&State::new(&position, index, parity)).state();
                assert_eq!((back.position().pits(), back.index(), back.parity()), (pits, index, parity));
            }
        }
        let mut too_many = [0; 12];
        too_many[4] = 32;
        let state = State::new(&Position::new(too_many), 0, 1);
        assert!(std::panic::catch_unwind(|| PackedState::of(&state)).is_err());
        assert_eq!(std::mem::size_of::<PackedState>(), 8);
    }
}
