//! Training data for the evaluation fit (`scripts/fit-eval.py`): random
//! quiet positions, their evaluation features and a deep search's score.
//!
//! ```sh
//! cargo run --release --example eval_samples -- --count 8000 --depth 12 > scratch/samples.csv
//! ```
//!
//! Positions come from games played from the start by a shallow search
//! (depth 4) with one move in three random, stopped after a random number
//! of plies; only positions where the mover has no capture are kept (the
//! static features say little while seeds are about to change hands).
//! Proven results are written too (column `proven`), the fit skips them.

use clap::Parser;

use oware::search::{eval::features, Features, Limits, Options, Searcher, Weights};
use oware::GameState;

#[derive(Parser)]
struct Args {
    /// Positions to write.
    #[arg(long, default_value_t = 8000)]
    count: usize,
    /// Depth of the search whose score is the target.
    #[arg(long, default_value_t = 12)]
    depth: u32,
    /// Seed of the random generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Weights of the searches: comma-separated store,big,empty,small,row;
    /// default the engine's 2014 heuristic.
    #[arg(long)]
    weights: Option<String>,
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let weights = match &args.weights {
        Some(text) => text.parse()?,
        None => Weights::ENGINE_2014,
    };
    let options = Options { weights, table_megabytes: 8, ..Options::default() };
    let mut player = Searcher::new(options.clone())?;
    let mut judge = Searcher::new(options)?;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ args.seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
    println!("{},score,proven,seeds,state", Features::NAMES.join(","));
    let mut written = 0;
    while written < args.count {
        let mut state = GameState::start();
        let plies = 2 + rng.below(90);
        for _ in 0..plies {
            if state.is_over() {
                break;
            }
            let moves: Vec<usize> = state.legal_moves().collect();
            let pit = if rng.below(3) == 0 {
                moves[rng.below(moves.len() as u64) as usize]
            } else {
                let result = player.search(&state, &Limits::depth(4))?;
                result.best_move.unwrap_or(moves[0])
            };
            state.play(pit)?;
        }
        let position = state.position();
        let quiet = position.legal_moves().all(|pit| position.play(pit).captured == 0);
        if state.is_over() || !quiet {
            continue;
        }
        let result = judge.search(&state, &Limits::depth(args.depth))?;
        let f = features(&position, state.stores_mover_first());
        let values: Vec<String> = f.to_array().iter().map(|v| v.to_string()).collect();
        println!(
            "{},{},{},{},{}",
            values.join(","),
            result.score.0,
            result.proven as u8,
            position.seeds(),
            state
        );
        written += 1;
    }
    Ok(())
}
