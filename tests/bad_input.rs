//! The parsers never panic, and reject bad input with a typed error.

use oware::{Game, GameState, NotationError};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn random_strings_never_panic(text in "\\PC{0,80}") {
        let _ = text.parse::<Game>();
    }

    #[test]
    fn near_miss_states_never_panic(text in "[0-9SN\\- ]{0,40}( moves [A-Fa-fx ]{0,30})?") {
        if let Ok(game) = text.parse::<Game>() {
            // Whatever parses prints back to something that parses the same.
            let again: Game = game.to_string().parse().unwrap();
            prop_assert_eq!(again.current, game.current);
        }
    }

    #[test]
    fn random_moves_from_the_start_are_replayed_or_refused(moves in "[A-Fa-f]{0,60}") {
        let text = format!("4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves {moves}");
        match text.parse::<Game>() {
            Ok(game) => prop_assert_eq!(game.moves, moves),
            Err(NotationError::BadMove { ply, .. }) => prop_assert!(ply >= 1 && ply <= moves.len()),
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }
}

#[test]
fn oversized_and_negative_counts_are_refused() {
    let huge = "4-4-4-4-4-4-4-4-4-4-4-99999999999999999999999-0-0-S";
    let error = huge.parse::<GameState>().unwrap_err();
    assert!(matches!(error, NotationError::CountTooLarge { field: 12, .. }), "{error}");
    // The number as typed, not as an integer type would clamp it.
    assert!(error.to_string().contains("'99999999999999999999999' seeds, more than 48"), "{error}");
    let negative = "4-4-4-4-4-4-4-4-4-4-4-4--1-0-S";
    assert!(negative.parse::<GameState>().is_err());
    let short_total = "4-4-4-4-4-4-4-4-4-4-4-3-0-0-S";
    assert_eq!(short_total.parse::<GameState>(), Err(NotationError::BadTotal { total: 47 }));
}

#[test]
fn states_built_from_parts_are_checked_for_48_seeds() {
    use oware::Side;
    assert_eq!(GameState::try_from_parts([4; 12], [0, 0], Side::South), Ok(GameState::start()));
    assert_eq!(
        GameState::try_from_parts([4; 12], [1, 0], Side::South),
        Err(NotationError::BadTotal { total: 49 })
    );
    let total = 12 * 255 + 2 * 255;
    assert_eq!(
        GameState::try_from_parts([255; 12], [255; 2], Side::North),
        Err(NotationError::BadTotal { total })
    );
}
