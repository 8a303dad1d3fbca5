//! The rules of Oware Abapa exactly as the Aalina engine plays them
//! (`docs/rules.md`), on the side-to-move view.
//!
//! A [`Position`] is the twelve pits seen from the side to move: its own pits
//! are `0..6` (A..F from its left), the opponent's `6..12`, and the board runs
//! counter-clockwise `0, 1, …, 11, 0`. Stores and history are not part of a
//! position: they live in [`crate::game::GameState`]. The tablebase works on
//! positions only, so this module is the hot path of every builder.
//!
//! Playing a move returns the child *normalized to the new side to move*
//! (halves swapped) and the number of seeds captured.
//!
//! The two players ([`Side`]) and the ways a game ends ([`GameEnd`]) are
//! rules too; [`crate::game`] applies them to full game states.

use std::fmt;

/// Pits on the board.
pub const PITS: usize = 12;
/// Pits per player.
pub const ROW: usize = 6;
/// Seeds in the game (board plus stores).
pub const TOTAL_SEEDS: u32 = 48;

/// A move: the pit sown, 0..6 from the mover's left (A..F or a..f).
pub type Pit = usize;

/// A player. South moves first and owns pits A..F (0..6 absolute).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Side {
    /// The first player, owner of pits A..F; index 0 in store pairs.
    South,
    /// The second player, owner of pits a..f; index 1 in store pairs.
    North,
}

impl Side {
    /// The opponent.
    #[inline]
    pub fn other(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }
    /// 0 for South, 1 for North: the index into `[south, north]` pairs
    /// such as [`crate::game::GameState::stores`].
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    /// The letter of this side's pit `pit` (0..6): `A..F` or `a..f`.
    pub fn move_letter(self, pit: Pit) -> char {
        let base = if self == Side::South { b'A' } else { b'a' };
        (base + pit as u8) as char
    }
}

/// How a game ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GameEnd {
    /// A player has more than 24 seeds, or both have 24.
    Decided,
    /// The side to move had no legal move; each player took their own side.
    NoLegalMove,
    /// The last move recreated an earlier state; each took their own side.
    Repetition,
}

/// A board packed one pit per byte into the low 12 bytes of a `u128` (pit
/// `i` in byte `i`). Sowing is then one addition, swapping the rows one
/// rotation, and the legality tests a few word operations: every count is
/// at most 48, so no byte ever carries into the next.
type Cells = u128;

const BYTE: u32 = 8;
/// The six bytes of a row, as a `u64` lane.
const ROW_MASK: u64 = 0xFFFF_FFFF_FFFF;
const BOARD_MASK: Cells = (1 << (PITS as u32 * BYTE)) - 1;
const HIGH_BITS: u64 = 0x8080_8080_8080;
const HIGH_BITS_12: Cells = 0x8080_8080_8080_8080_8080_8080;

/// Every sowing, precomputed, indexed `[pit][seeds]` (seeds 0..=48).
struct Sowings {
    /// What sowing `seeds` seeds from `pit` adds to every pit, packed like a
    /// board. Rule 2: one seed per following pit, counter-clockwise, never
    /// back into the emptied origin pit, on every lap.
    added: [[Cells; 49]; ROW],
    /// [`last_pit`] of the sowing (0 for none): a table read is faster than
    /// its two modulo operations in the search's hottest path.
    last: [[u8; 49]; ROW],
}

static SOWINGS: Sowings = sowings();

const fn sowings() -> Sowings {
    let mut table = Sowings { added: [[0; 49]; ROW], last: [[0; 49]; ROW] };
    let mut origin = 0;
    while origin < ROW {
        let mut seeds = 1;
        while seeds <= 48 {
            let last = last_pit(origin, seeds);
            table.added[origin][seeds] = table.added[origin][seeds - 1] + (1 << (last as u32 * BYTE));
            table.last[origin][seeds] = last as u8;
            seeds += 1;
        }
        origin += 1;
    }
    table
}

/// The pit that receives the last of `seeds` (≥ 1) seeds sown from `origin`:
/// 11 pits per lap, since the origin is skipped.
#[inline]
pub const fn last_pit(origin: Pit, seeds: usize) -> usize {
    (origin + 1 + (seeds - 1) % (PITS - 1)) % PITS
}

/// Sum of the six bytes of a row lane (each ≤ 48, so the sum fits a byte).
#[inline]
fn row_sum(row: u64) -> u32 {
    (row.wrapping_mul(0x0101_0101_0101_0101) >> 56) as u32
}

/// The set of legal moves of a position, as a bit mask over pits 0..6.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Moves(u8);

impl Moves {
    /// Whether there is no legal move (the mover is stuck).
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether sowing `pit` is legal; false for any pit outside 0..6.
    #[inline]
    pub fn contains(self, pit: Pit) -> bool {
        pit < ROW && self.0 & (1 << pit) != 0
    }
    /// How many moves are legal (at most 6), or left to iterate.
    #[inline]
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }
    /// The raw mask: bit `k` set when pit `k` is a legal move.
    #[inline]
    pub fn bits(self) -> u8 {
        self.0
    }
}

impl Iterator for Moves {
    type Item = Pit;
    #[inline]
    fn next(&mut self) -> Option<Pit> {
        if self.0 == 0 {
            return None;
        }
        let pit = self.0.trailing_zeros() as Pit;
        self.0 &= self.0 - 1;
        Some(pit)
    }
}

/// Twelve pits seen from the side to move (own pits first).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Position {
    cells: Cells,
}

/// The result of playing a move on a [`Position`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Played {
    /// The board after the move, seen from the opponent (now to move).
    pub child: Position,
    /// Seeds the mover captured (0 for a quiet move or a grand slam).
    pub captured: u8,
}

impl Position {
    /// A position from its twelve pits, own pits first. Counts above 48 are
    /// the caller's bug: the parsers reject them before building a position.
    #[inline]
    pub const fn new(pits: [u8; PITS]) -> Position {
        let mut bytes = [0u8; 16];
        let mut i = 0;
        while i < PITS {
            bytes[i] = pits[i];
            i += 1;
        }
        Position { cells: Cells::from_le_bytes(bytes) }
    }

    /// The twelve pit counts, own pits first.
    #[inline]
    pub fn pits(&self) -> [u8; PITS] {
        let bytes = self.cells.to_le_bytes();
        let mut pits = [0u8; PITS];
        pits.copy_from_slice(&bytes[..PITS]);
        pits
    }

    /// Seeds in pit `pit` (0..12).
    #[inline]
    pub fn pit(&self, pit: usize) -> u8 {
        (self.cells >> (pit as u32 * BYTE)) as u8
    }

    #[inline]
    fn own_row(&self) -> u64 {
        self.cells as u64 & ROW_MASK
    }

    #[inline]
    fn opponent_row(&self) -> u64 {
        (self.cells >> (ROW as u32 * BYTE)) as u64 & ROW_MASK
    }

    /// Seeds on the board.
    #[inline]
    pub fn seeds(&self) -> u32 {
        self.own_seeds() + self.opponent_seeds()
    }

    /// Seeds in the mover's own row.
    #[inline]
    pub fn own_seeds(&self) -> u32 {
        row_sum(self.own_row())
    }

    /// Seeds in the opponent's row.
    #[inline]
    pub fn opponent_seeds(&self) -> u32 {
        row_sum(self.opponent_row())
    }

    /// The same board seen from the other player (rows swapped).
    #[inline]
    pub fn flipped(&self) -> Position {
        let half = ROW as u32 * BYTE;
        Position { cells: ((self.cells >> half) | (self.cells << half)) & BOARD_MASK }
    }

    /// Rule 1: a pit of the mover holding seeds; when the opponent's row is
    /// empty, only moves that reach it (pit k needs more than 5 − k seeds).
    #[inline]
    pub fn legal_moves(&self) -> Moves {
        // Per byte: the fewest seeds pit k needs (1, or 6 − k to feed).
        let needed: u64 = if self.opponent_row() == 0 { 0x01_02_03_04_05_06 } else { 0x01_01_01_01_01_01 };
        // Bytes are below 0x80, so (byte | 0x80) − needed keeps bit 7 set
        // exactly when byte ≥ needed, without borrowing from its neighbour.
        let enough = ((self.own_row() | HIGH_BITS) - needed) & HIGH_BITS;
        // Gather the six bit-7 flags into bits 0..6.
        Moves(((enough >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8)
    }

    /// Plays a legal move (rules 2–4). The caller checks legality with
    /// [`Position::legal_moves`]; an empty pit sows nothing. `pit` counts
    /// from the mover's first pit (0..6): 6 or more panics.
    #[inline(always)]
    pub fn play(&self, pit: Pit) -> Played {
        let seeds = self.pit(pit) as usize;
        let shift = pit as u32 * BYTE;
        let mut board = Position { cells: (self.cells & !(0xFF << shift)) + SOWINGS.added[pit][seeds] };
        let captured = if seeds > 0 { board.capture(SOWINGS.last[pit][seeds] as usize) } else { 0 };
        Played { child: board.flipped(), captured }
    }

    /// Every quiet move (no capture; grand slams included) that leads to this
    /// position: calls `found(parent, pit)` with the parent seen from its
    /// mover and the pit it sowed. Retrograde analysis walks these un-moves.
    ///
    /// The sown pit is always empty afterwards (the origin is skipped on
    /// every lap), and a sowing of `s + 1` seeds covers every pit a sowing of
    /// `s` seeds covers, so for each empty pit the candidate seed counts
    /// are `1, 2, …` until one needs a seed the board lacks.
    #[inline]
    pub fn quiet_parents(&self, mut found: impl FnMut(Position, Pit)) {
        let board = self.flipped(); // the previous mover's view
        for (pit, sowings) in SOWINGS.added.iter().enumerate() {
            if board.pit(pit) != 0 {
                continue;
            }
            for (seeds, &sown) in sowings.iter().enumerate().skip(1) {
                // Bytes are below 0x80: a byte keeps bit 7 after the
                // subtraction exactly when it held at least the seeds sown.
                if ((board.cells | HIGH_BITS_12) - sown) & HIGH_BITS_12 != HIGH_BITS_12 {
                    break;
                }
                let parent =
                    Position { cells: board.cells - sown + ((seeds as Cells) << (pit as u32 * BYTE)) };
                let mut after = board;
                if after.capture(last_pit(pit, seeds)) == 0 && parent.legal_moves().contains(pit) {
                    found(parent, pit);
                }
            }
        }
    }

    /// Rules 3 and 4: take the opponent's pits holding 2 or 3, from the last
    /// pit sown backwards, unless that would take the whole opponent row.
    #[inline]
    fn capture(&mut self, last: usize) -> u8 {
        let mut first = last + 1;
        let mut taken = 0u32;
        while first > ROW && matches!(self.pit(first - 1), 2 | 3) {
            first -= 1;
            taken += self.pit(first) as u32;
        }
        if taken == 0 || taken == self.opponent_seeds() {
            return 0; // no capture, or a grand slam: the sowing stands
        }
        let width = (last + 1 - first) as u32 * BYTE;
        self.cells &= !(((1 << width) - 1) << (first as u32 * BYTE));
        taken as u8
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pits: Vec<String> = self.pits().iter().map(|s| s.to_string()).collect();
        write!(f, "Position({})", pits.join("-"))
    }
}

/// A position in 8 bytes rather than 16, for long lists of them (a
/// retrograde frontier can hold a tenth of a layer): its pits as stars and
/// bars, each pit's seeds as that many 1 bits with a 0 bit after every pit,
/// the first pit lowest. `seeds + 12` bits, so every position of the game
/// (48 seeds) fits, whatever its pits hold. (The threshold games' states
/// keep a packing of their own, 5 bits a pit, `implicit::PackedState`:
/// decoded without this one's chain of shifts in the games' hottest
/// loop, and limited to pits of 31 seeds, which no layer up to 31 seeds
/// exceeds.)
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct PackedPosition(u64);

impl PackedPosition {
    #[inline]
    pub(crate) fn of(position: &Position) -> PackedPosition {
        debug_assert!(position.seeds() as usize + PITS <= 64, "{position:?} has more than 52 seeds");
        let (mut bits, mut shift) = (0u64, 0u32);
        for seeds in position.pits() {
            bits |= ((1u64 << seeds) - 1) << shift;
            shift += seeds as u32 + 1;
        }
        PackedPosition(bits)
    }

    #[inline]
    pub(crate) fn position(self) -> Position {
        let mut bits = self.0;
        let mut pits = [0u8; PITS];
        for pit in &mut pits {
            let seeds = bits.trailing_ones();
            *pit = seeds as u8;
            // (At most 52 seeds, so the shift is below 64.)
            bits >>= seeds + 1;
        }
        Position::new(pits)
    }
}

/// The rules transcribed seed by seed, with no tables: the oracle the fast
/// path is tested against, and the baseline of the sowing benchmark.
pub mod reference {
    use super::{Pit, Played, Position, PITS, ROW};

    /// Plays `pit` like [`Position::play`], one seed at a time: same
    /// caveats (the caller checks legality), same result.
    pub fn play(position: &Position, pit: Pit) -> Played {
        let mut board = position.pits();
        let mut seeds = board[pit];
        board[pit] = 0;
        let mut at = pit;
        while seeds > 0 {
            at = (at + 1) % PITS;
            if at != pit {
                board[at] += 1;
                seeds -= 1;
            }
        }
        let mut captured = 0;
        if at >= ROW && matches!(board[at], 2 | 3) {
            let mut take = Vec::new();
            let mut i = at;
            while i >= ROW && matches!(board[i], 2 | 3) {
                take.push(i);
                i -= 1;
            }
            let sum: u8 = take.iter().map(|&i| board[i]).sum();
            let row: u8 = board[ROW..].iter().sum();
            if sum < row {
                for i in take {
                    board[i] = 0;
                }
                captured = sum;
            }
        }
        Played { child: Position::new(board).flipped(), captured }
    }
}

impl std::fmt::Display for GameEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GameEnd::Decided => "a player has more than half the seeds, or both have half",
            GameEnd::NoLegalMove => "the side to move has no legal move: each takes their own side",
            GameEnd::Repetition => "a position repeated: each takes their own side",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every position of layers 0 to 8 and boards of 48 seeds with a full
    /// pit at each end come back from their 8 bytes, and no two of a layer
    /// share them.
    #[test]
    fn packed_positions_come_back_whole() {
        for n in 0..=8 {
            let mut seen = std::collections::HashSet::new();
            for position in boards_of(n) {
                let packed = PackedPosition::of(&position);
                assert_eq!(packed.position(), position);
                assert!(seen.insert(packed.0), "{position:?}");
            }
        }
        for pit in [0, 5, 6, 11] {
            let mut pits = [0u8; PITS];
            pits[pit] = 48;
            let full = Position::new(pits);
            assert_eq!(PackedPosition::of(&full).position(), full);
        }
        let spread = Position::new([4; PITS]);
        assert_eq!(PackedPosition::of(&spread).position(), spread);
    }

    fn pos(pits: [u8; 12]) -> Position {
        Position::new(pits)
    }

    #[test]
    fn sowing_skips_the_origin_on_every_lap() {
        let mut pits = [0u8; 12];
        pits[0] = 23; // two laps of 11, then one more seed
        let played = pos(pits).play(0);
        let board = played.child.flipped();
        assert_eq!(board.pits()[0], 0);
        assert_eq!(board.pits()[1], 3);
        assert!(board.pits()[2..].iter().all(|&s| s == 2));
        assert_eq!(last_pit(0, 23), 1);
        assert_eq!(last_pit(0, 11), 11);
        assert_eq!(last_pit(5, 7), 0);
    }

    #[test]
    fn chained_capture_stops_at_the_opponent_row() {
        // Own pit F (5) holds 3: sows into a(6), b(7), c(8), which hold 1, 2, 1.
        let p = pos([1, 0, 0, 0, 0, 3, 1, 2, 1, 5, 0, 0]);
        let played = p.play(5);
        assert_eq!(played.captured, 2 + 3 + 2);
        assert_eq!(played.child, pos([0, 0, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0]));
    }

    #[test]
    fn capture_breaks_on_a_pit_outside_two_or_three() {
        let p = pos([0, 0, 0, 0, 0, 2, 3, 1, 0, 0, 0, 0]);
        let played = p.play(5); // a: 4, b: 2 → only b taken
        assert_eq!(played.captured, 2);
    }

    #[test]
    fn grand_slam_captures_nothing() {
        let p = pos([0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 0]);
        let played = p.play(5);
        assert_eq!(played.captured, 0);
        assert_eq!(played.child, pos([2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
    }

    #[test]
    fn must_feed_restricts_moves() {
        let p = pos([1, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0]);
        let moves: Vec<Pit> = p.legal_moves().collect();
        assert_eq!(moves, vec![4, 5]);
        let starved = pos([1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(starved.legal_moves().is_empty());
    }

    /// Every board of `seeds` seeds, enumerated here rather than by
    /// `crate::rank` (which builds on this module).
    fn boards_of(seeds: u8) -> Vec<Position> {
        fn fill(pit: usize, left: u8, pits: &mut [u8; PITS], boards: &mut Vec<Position>) {
            if pit == PITS - 1 {
                pits[pit] = left;
                boards.push(Position::new(*pits));
                return;
            }
            for here in 0..=left {
                pits[pit] = here;
                fill(pit + 1, left - here, pits, boards);
            }
        }
        let mut boards = Vec::new();
        fill(0, seeds, &mut [0; PITS], &mut boards);
        boards
    }

    #[test]
    fn every_board_of_a_few_seeds_is_enumerated_once() {
        // C(n + 11, 11) boards of n seeds in 12 pits.
        let counts: Vec<usize> = (0..=3).map(|n| boards_of(n).len()).collect();
        assert_eq!(counts, [1, 12, 78, 364]);
        let mut boards = boards_of(3);
        boards.sort();
        boards.dedup();
        assert_eq!(boards.len(), 364);
    }

    #[test]
    fn quiet_parents_invert_quiet_moves() {
        for n in 0..=7 {
            let mut forward = Vec::new();
            let mut backward = Vec::new();
            for p in boards_of(n) {
                for pit in p.legal_moves() {
                    let played = p.play(pit);
                    if played.captured == 0 {
                        forward.push((p, pit, played.child));
                    }
                }
                p.quiet_parents(|parent, pit| backward.push((parent, pit, p)));
            }
            forward.sort();
            backward.sort();
            assert_eq!(forward.len(), backward.len(), "layer {n}");
            assert!(forward == backward, "layer {n}");
        }
    }

    /// The same inverse on sampled positions of up to 48 seeds, laps
    /// included (a pit of 12 seeds or more sows past its origin): every
    /// quiet move's parent is listed by its child exactly once, with its
    /// pit, and every parent listed plays to the child without capture.
    /// (Retrograde analysis and every game across ranks count on it.)
    #[test]
    fn quiet_parents_invert_quiet_moves_with_laps() {
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let (mut moves, mut laps) = (0, 0);
        for _ in 0..100_000 {
            let mut pits = [0u8; 12];
            let mut left = (next() % 49) as u32;
            for pit in pits.iter_mut() {
                let take = (next() % (left as u64 + 1)) as u32 % 6;
                *pit = take as u8;
                left -= take;
            }
            pits[(next() % 6) as usize] += left as u8;
            let p = pos(pits);
            for pit in p.legal_moves() {
                let played = p.play(pit);
                let mut listed = 0;
                played.child.quiet_parents(|parent, from| {
                    listed += (parent == p && from == pit) as u32;
                    assert!(parent.legal_moves().contains(from), "{parent:?} pit {from}");
                    let back = parent.play(from);
                    assert_eq!((back.child, back.captured), (played.child, 0), "{parent:?} pit {from}");
                });
                let quiet = played.captured == 0;
                assert_eq!(listed, quiet as u32, "{p:?} pit {pit}");
                moves += quiet as u32;
                laps += (quiet && p.pits()[pit] >= 12) as u32;
            }
        }
        assert!(moves > 100_000 && laps > 1_000, "{moves} quiet moves, {laps} with laps");
    }

    #[test]
    fn table_sowing_matches_the_reference_on_many_positions() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            let mut pits = [0u8; 12];
            let mut left = 48u32;
            for pit in pits.iter_mut() {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let take = (rng % (left as u64 + 1)) as u32 % 9;
                *pit = take.min(left) as u8;
                left -= *pit as u32;
            }
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            pits[(rng % 6) as usize] += left as u8;
            let p = pos(pits);
            for pit in 0..ROW {
                if p.pits()[pit] > 0 {
                    assert_eq!(p.play(pit), reference::play(&p, pit), "{p:?} pit {pit}");
                }
            }
        }
    }
}
