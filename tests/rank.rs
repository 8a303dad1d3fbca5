//! Binomial ranks: bijective, minimal, in the engine's order.

use oware::rank::{
    binomial, index, layer_index, layer_offset, layer_positions, layer_size, position_at, position_in_layer,
    state_from_key, state_key,
};
use oware::{GameState, Position, Side};
use proptest::prelude::*;

#[test]
fn every_index_of_every_layer_up_to_12_seeds_round_trips() {
    for n in 0..=12u32 {
        assert_eq!(layer_size(n), binomial(n as u64 + 11, 11));
        let mut count = 0u64;
        for (local, position) in layer_positions(n).enumerate() {
            let local = local as u64;
            assert_eq!(position.seeds(), n);
            assert_eq!(layer_index(&position), local);
            assert_eq!(position_in_layer(n, local), Some(position));
            assert_eq!(index(&position), layer_offset(n) + local);
            count += 1;
        }
        assert_eq!(count, layer_size(n), "layer {n}");
    }
}

#[test]
fn the_engine_loop_gives_the_same_index() {
    // formats.md, section 1, transcribed with its bound M = 15.
    fn engine_index(p: &[u8; 12]) -> u64 {
        const M: u64 = 15;
        let n: u64 = p.iter().map(|&s| s as u64).sum();
        let (mut index, mut m, mut i) = (0u64, M - n, 11i64);
        while m < M && i >= 0 {
            index += binomial(M - m + i as u64, i as u64 + 1);
            m += p[i as usize] as u64;
            i -= 1;
        }
        index
    }
    for n in 0..=15 {
        for position in layer_positions(n).step_by(97) {
            assert_eq!(index(&position), engine_index(&position.pits()));
        }
    }
}

fn any_position() -> impl Strategy<Value = Position> {
    (0u32..=48)
        .prop_flat_map(|n| (Just(n), 0..layer_size(n)))
        .prop_map(|(n, local)| position_in_layer(n, local).expect("in range"))
}

proptest! {
    #[test]
    fn unrank_then_rank_is_identity_up_to_48_seeds(n in 0u32..=48, fraction in 0.0f64..1.0) {
        let local = ((layer_size(n) as f64) * fraction) as u64 % layer_size(n);
        let position = position_in_layer(n, local).unwrap();
        prop_assert_eq!(position.seeds(), n);
        prop_assert_eq!(layer_index(&position), local);
        prop_assert_eq!(position_at(layer_offset(n) + local), Some(position));
    }

    #[test]
    fn rank_then_unrank_is_identity(position in any_position()) {
        prop_assert_eq!(position_at(index(&position)), Some(position));
    }

    #[test]
    fn state_keys_round_trip(position in any_position(), south_store in 0u8..=48, south in any::<bool>()) {
        let on_board = position.seeds() as u8;
        let south_store = south_store % (48 - on_board + 1);
        let stores = [south_store, 48 - on_board - south_store];
        let side = if south { Side::South } else { Side::North };
        let state = GameState::from_parts(position.pits(), stores, side);
        let key = state_key(&state);
        prop_assert!(key < 1 << 44);
        prop_assert_eq!(state_from_key(key), Some(state));
    }
}
