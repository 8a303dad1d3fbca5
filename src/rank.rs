//! Perfect, minimal binomial ranks (`docs/engine-formats.md`, "Binomial ranks").
//!
//! Both ranks of the engine are one formula. For counts `v_0 … v_{k-1}`
//! summing to `T`, write `R_i = v_0 + … + v_i` (prefix sums, so
//! `R_{k-1} = T`). Then
//!
//! ```text
//! rank(v) = Σ_{i = 0}^{k-2} C(R_i + i, i + 1)
//! ```
//!
//! is a bijection from the arrangements of `T` seeds in `k` places onto
//! `0 .. C(T + k - 1, k - 1)`: it is the combinatorial number system of the
//! non-decreasing sequence `R_0 ≤ … ≤ R_{k-2} ≤ T`, with `R_{k-2}` the most
//! significant digit. So the index grows fastest with `v_0` and the last
//! place varies slowest (its count falls as the index rises).
//!
//! * The **tablebase index** of a 12-pit position with `n` seeds adds the
//!   term `i = 11`, `C(n + 11, 12)`, the number of positions with fewer
//!   seeds: layers are ordered by seed count and the index is global. The
//!   engine writes the loop with a bound `M = 15`, but `M` cancels out, so
//!   the same index extends to every `n ≤ 48` (`C(60, 12) < 2^41`).
//! * The **state key** ranks the 14 counts `s_0 … s_11, S, N` (48 seeds) and
//!   sets bit 43 when South is to move.

use crate::game::{GameState, Side};
use crate::rules::{Position, PITS};

/// The most seeds a layer can hold.
pub const MAX_SEEDS: u32 = 48;

/// Bit 43 of a state key: South to move.
pub const SOUTH_TO_MOVE_BIT: u64 = 1 << 43;

/// `TERM[i][r] = C(r + i, i + 1)` for `i ≤ 13`, `r ≤ 48`: one row per place,
/// so unranking scans contiguous memory.
static TERM: [[u64; 49]; 14] = term_table();

const fn term_table() -> [[u64; 49]; 14] {
    let mut table = [[0u64; 49]; 14];
    let mut i = 0;
    while i < 14 {
        let mut r = 0;
        while r < 49 {
            table[i][r] = binomial((r + i) as u64, (i + 1) as u64);
            r += 1;
        }
        i += 1;
    }
    table
}

/// `C(n, k)`, exact for every value this crate needs (`n ≤ 62`).
pub const fn binomial(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    let k = if k > n - k { n - k } else { k };
    let mut result = 1u64;
    let mut i = 0;
    while i < k {
        // result * (n - i) is divisible by i + 1 after this step.
        result = result * (n - i) / (i + 1);
        i += 1;
    }
    result
}

/// Positions with exactly `n` seeds: `C(n + 11, 11)`.
pub const fn layer_size(n: u32) -> u64 {
    binomial(n as u64 + 11, 11)
}

/// Global tablebase index of the first position with `n` seeds:
/// `C(n + 11, 12)`, the number of positions with fewer seeds.
pub const fn layer_offset(n: u32) -> u64 {
    binomial(n as u64 + 11, 12)
}

/// The rank of `values` among arrangements of their total in as many places.
#[inline]
fn rank_counts(values: &[u8]) -> u64 {
    let mut prefix = 0usize;
    let mut rank = 0u64;
    for (i, &v) in values[..values.len() - 1].iter().enumerate() {
        prefix += v as usize;
        rank += TERM[i][prefix];
    }
    rank
}

/// Writes into `values` the arrangement of `total` seeds with rank `rank`.
/// The caller checks `rank < C(total + k - 1, k - 1)`.
#[inline]
fn unrank_counts(total: u32, mut rank: u64, values: &mut [u8]) {
    let k = values.len();
    let mut above = total as usize; // R_{i+1}
    for i in (0..k - 1).rev() {
        let term = &TERM[i];
        let mut prefix = above;
        while term[prefix] > rank {
            prefix -= 1;
        }
        rank -= term[prefix];
        values[i + 1] = (above - prefix) as u8;
        above = prefix;
    }
    values[0] = above as u8;
}

/// The engine's tablebase index of a position (global over all layers).
#[inline]
pub fn index(position: &Position) -> u64 {
    layer_offset(position.seeds()) + layer_index(position)
}

/// The rank of a position inside its own seed layer.
#[inline]
pub fn layer_index(position: &Position) -> u64 {
    rank_counts(&position.pits())
}

/// The seed layer holding global index `index`, if it has at most 48 seeds.
pub fn layer_of_index(index: u64) -> Option<u32> {
    (0..=MAX_SEEDS).find(|&n| index < layer_offset(n + 1))
}

/// The position with global tablebase index `index`.
pub fn position_at(index: u64) -> Option<Position> {
    let n = layer_of_index(index)?;
    position_in_layer(n, index - layer_offset(n))
}

/// The position of rank `local` in layer `n`.
#[inline]
pub fn position_in_layer(n: u32, local: u64) -> Option<Position> {
    if n > MAX_SEEDS || local >= layer_size(n) {
        return None;
    }
    let mut pits = [0u8; PITS];
    unrank_counts(n, local, &mut pits);
    Some(Position::new(pits))
}

/// Every position of layer `n` in index order, without unranking each one.
pub fn layer_positions(n: u32) -> LayerPositions {
    let mut first = [0u8; PITS];
    first[PITS - 1] = n.min(MAX_SEEDS) as u8;
    LayerPositions { next: Some(first) }
}

/// The positions of layer `n` from local index `start` on, in index order.
pub fn layer_positions_from(n: u32, start: u64) -> LayerPositions {
    LayerPositions { next: position_in_layer(n, start).map(|p| p.pits()) }
}

/// Gaps between two wanted positions up to this many are stepped across
/// rather than unranked: stepping to the next position costs a few
/// nanoseconds, unranking about a hundred.
const STEP_ACROSS: usize = 24;

/// Calls `visit(index, position)` for each of `indexes`, local indexes of
/// layer `n` in ascending order (an index may come more than once),
/// stepping across short gaps and unranking across long ones. Panics on an
/// index outside the layer.
pub fn for_each_position_at(
    n: u32,
    indexes: impl IntoIterator<Item = usize>,
    mut visit: impl FnMut(usize, Position),
) {
    // (The next index the walk gives, and the walk.)
    let mut walker: Option<(usize, LayerPositions)> = None;
    let mut last: Option<(usize, Position)> = None;
    for index in indexes {
        let position = match (&mut walker, last) {
            (_, Some((at, position))) if at == index => position,
            (Some((at, positions)), _) if index >= *at && index - *at <= STEP_ACROSS => {
                let position = positions.nth(index - *at).expect("index inside the layer");
                *at = index + 1;
                position
            }
            _ => {
                let mut positions = layer_positions_from(n, index as u64);
                let position = positions.next().expect("index inside the layer");
                walker = Some((index + 1, positions));
                position
            }
        };
        last = Some((index, position));
        visit(index, position);
    }
}

/// Iterator of [`layer_positions`]: the successor of a position in index
/// order moves the seeds of the first nonempty run `p_0..=p_j` (where
/// `p_{j+1} > 0`) into `p_j`, plus one seed taken from `p_{j+1}`.
pub struct LayerPositions {
    next: Option<[u8; PITS]>,
}

impl Iterator for LayerPositions {
    type Item = Position;
    #[inline]
    fn next(&mut self) -> Option<Position> {
        let pits = self.next?;
        let mut successor = pits;
        let mut carried = 0u8;
        let mut j = 0;
        self.next = loop {
            if j + 1 >= PITS {
                break None; // all seeds in p0: the last position of the layer
            }
            carried += successor[j];
            successor[j] = 0;
            if successor[j + 1] > 0 {
                successor[j] = carried + 1;
                successor[j + 1] -= 1;
                break Some(successor);
            }
            j += 1;
        };
        Some(Position::new(pits))
    }
}

/// The engine's 44-bit key of a full game state (history not included).
pub fn state_key(state: &GameState) -> u64 {
    let mut counts = [0u8; PITS + 2];
    counts[..PITS].copy_from_slice(&state.pits());
    counts[PITS] = state.store(Side::South);
    counts[PITS + 1] = state.store(Side::North);
    let side_bit = if state.to_move() == Side::South { SOUTH_TO_MOVE_BIT } else { 0 };
    rank_counts(&counts) + side_bit
}

/// The keys of the game states since `state`'s last capture, oldest
/// first, `state`'s own last: the states a move can repeat.
pub fn keys_since_capture(state: &GameState) -> Vec<u64> {
    let history = state.history();
    // No capture since: every one of them has the current stores.
    let stores = state.stores();
    let keys = history.iter().enumerate().map(|(i, position)| {
        let ago = history.len() - i;
        let mover = if ago.is_multiple_of(2) { state.to_move() } else { state.to_move().other() };
        // A position lists the mover's pits first.
        let mut pits = position.pits();
        if mover == Side::North {
            pits.rotate_left(PITS / 2);
        }
        state_key(&GameState::from_parts(pits, stores, mover))
    });
    keys.chain(std::iter::once(state_key(state))).collect()
}

/// The state (without history) of a key, if it is one.
pub fn state_from_key(key: u64) -> Option<GameState> {
    let (side, rank) = if key & SOUTH_TO_MOVE_BIT != 0 {
        (Side::South, key - SOUTH_TO_MOVE_BIT)
    } else {
        (Side::North, key)
    };
    if rank >= binomial(48 + 13, 13) || rank >= SOUTH_TO_MOVE_BIT {
        return None;
    }
    let mut counts = [0u8; PITS + 2];
    unrank_counts(48, rank, &mut counts);
    let mut pits = [0u8; PITS];
    pits.copy_from_slice(&counts[..PITS]);
    Some(GameState::from_parts(pits, [counts[PITS], counts[PITS + 1]], side))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_since_capture_are_the_keys_of_the_states_played() {
        let mut state = GameState::start();
        let mut played = vec![state_key(&state)];
        // Quiet moves and captures (at least one: checked below).
        for (k, letter) in "FfEeDdCcBbAaFfEe".chars().enumerate() {
            let captured = state.play_letter(letter).unwrap();
            if captured > 0 {
                played.clear();
            }
            played.push(state_key(&state));
            assert_eq!(keys_since_capture(&state), played, "after {k} moves");
        }
        assert!(played.len() < 17, "no capture: the test does not cover one");
    }

    #[test]
    fn layer_offsets_match_the_engine() {
        let expected = [
            0u64, 1, 13, 91, 455, 1820, 6188, 18564, 50388, 125970, 293930, 646646, 1352078, 2704156,
            5200300, 9657700, 17383860,
        ];
        for (n, &offset) in expected.iter().enumerate() {
            assert_eq!(layer_offset(n as u32), offset);
        }
        for n in 0..=MAX_SEEDS {
            assert_eq!(layer_offset(n) + layer_size(n), layer_offset(n + 1));
        }
        assert_eq!(layer_size(24), 417_225_900);
    }

    #[test]
    fn first_indexes() {
        assert_eq!(index(&Position::new([0; 12])), 0);
        let mut pits = [0u8; 12];
        pits[11] = 1;
        assert_eq!(index(&Position::new(pits)), 1);
        assert_eq!(position_at(1), Some(Position::new(pits)));
    }

    #[test]
    fn start_state_key() {
        assert_eq!(state_key(&GameState::start()), 0xDD0094F6488);
        assert_eq!(state_from_key(0xDD0094F6488), Some(GameState::start()));
    }

    #[test]
    fn out_of_range_ranks_are_refused() {
        assert_eq!(position_in_layer(3, layer_size(3)), None);
        assert_eq!(position_in_layer(49, 0), None);
        assert_eq!(position_at(layer_offset(49)), None);
        assert_eq!(state_from_key(u64::MAX), None);
    }
}
