//! A match between two evaluation weight sets: every random opening is
//! played twice, each set taking South once. Reports wins, draws and losses
//! of the first set.
//!
//! ```sh
//! cargo run --release --example eval_match -- --a 25,28,-54,-36,0 --b 25,101,-66,-23,-3 --openings 100 --depth 9
//! ```

use clap::Parser;

use oware::search::{Limits, Options, Searcher};
use oware::GameState;

#[derive(Parser)]
struct Args {
    /// First weights: store,big,empty,small,row.
    #[arg(long)]
    a: String,
    /// Second weights.
    #[arg(long)]
    b: String,
    /// Random openings (each played twice).
    #[arg(long, default_value_t = 100)]
    openings: usize,
    /// Random plies of an opening.
    #[arg(long, default_value_t = 6)]
    opening_plies: usize,
    /// Search depth per move.
    #[arg(long, default_value_t = 9)]
    depth: u32,
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

/// Plays one game; returns South's and North's final seeds.
fn play(
    mut state: GameState,
    south: &mut Searcher,
    north: &mut Searcher,
    limits: &Limits,
) -> anyhow::Result<[u32; 2]> {
    south.clear();
    north.clear();
    for _ in 0..600 {
        if let Some(score) = state.final_score() {
            return Ok(score);
        }
        let player = if state.to_move() == oware::Side::South { &mut *south } else { &mut *north };
        let result = player.search(&state, limits)?;
        let pit = result.best_move.ok_or_else(|| anyhow::anyhow!("no move in {state}"))?;
        state.play(pit)?;
    }
    // Unfinished after 600 plies (never seen): count it as a draw.
    Ok([24, 24])
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let options = |w| Options { weights: w, table_megabytes: 8, ..Options::default() };
    let mut a = Searcher::new(options(args.a.parse()?))?;
    let mut b = Searcher::new(options(args.b.parse()?))?;
    let limits = Limits::depth(args.depth);
    let mut rng = args.seed.max(1);
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    let mut seeds = 0i64;
    let mut played = 0;
    while played < args.openings {
        let mut opening = GameState::start();
        for _ in 0..args.opening_plies {
            let moves: Vec<usize> = opening.legal_moves().collect();
            if moves.is_empty() {
                break;
            }
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            opening.play(moves[(rng % moves.len() as u64) as usize])?;
        }
        if opening.is_over() {
            continue;
        }
        played += 1;
        for a_is_south in [true, false] {
            let score = if a_is_south {
                play(opening.clone(), &mut a, &mut b, &limits)?
            } else {
                play(opening.clone(), &mut b, &mut a, &limits)?
            };
            let (mine, theirs) = if a_is_south { (score[0], score[1]) } else { (score[1], score[0]) };
            seeds += mine as i64 - theirs as i64;
            match mine.cmp(&theirs) {
                std::cmp::Ordering::Greater => wins += 1,
                std::cmp::Ordering::Equal => draws += 1,
                std::cmp::Ordering::Less => losses += 1,
            }
        }
    }
    let games = (wins + draws + losses) as f64;
    let points = wins as f64 + draws as f64 / 2.0;
    println!(
        "a against b: +{wins} ={draws} -{losses} of {games} games, {:.1}% of the points, mean seed difference {:+.2}",
        100.0 * points / games,
        seeds as f64 / games
    );
    Ok(())
}
