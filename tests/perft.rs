//! Every line of the engine's perft file, reproduced by our rules.

use oware::perft::perft;
use oware::Game;

#[test]
fn reproduces_every_line_of_the_engine_perft_file() {
    let text = include_str!("reference/perft.txt");
    let mut lines = 0;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (game, counts) = line.split_once('|').expect("a '|' on every line");
        let game: Game = game.trim().parse().unwrap_or_else(|e| panic!("line {}: {e}", number + 1));
        let expected: Vec<u64> = counts.split_whitespace().map(|c| c.parse().unwrap()).collect();
        assert_eq!(expected.len(), 6, "line {}", number + 1);
        let found: Vec<u64> = (1..=6).map(|depth| perft(&game.current, depth)).collect();
        assert_eq!(found, expected, "line {}: {}", number + 1, game);
        lines += 1;
    }
    assert_eq!(lines, 235);
}
