//! Cross-checks search-proven entries of one layer of a tablebase with the
//! game-playing search, which knows nothing of threshold games: for a sample
//! of entries it plays from the position with stores that make the entry's
//! value decide between win, draw and loss (probing only the layers below
//! after captures), and counts where a proven outcome disagrees.
//!
//! `cargo run --release --example cross_check -- TABLE LAYER [EVERY] [NODES] [OLDER]`
//!
//! With `OLDER` (an earlier table of the same layers), the entries sampled
//! are those exact in `TABLE` and open in `OLDER`, whatever proved them:
//! what a new pass proved, and what the bounds then proved above it.
use std::sync::Arc;

use oware::rank::layer_positions;
use oware::search::{Limits, Options, Outcome, Searcher};
use oware::tablebase::{EndgameTable, Probe, Proof, Tablebase};
use oware::{GameState, Position, Side};

/// The table, cut below one layer.
struct Below {
    table: Tablebase,
    max_seeds: u32,
}

impl EndgameTable for Below {
    fn max_seeds(&self) -> u32 {
        self.max_seeds
    }
    fn probe(&self, position: &Position) -> Option<Probe> {
        (position.seeds() <= self.max_seeds).then(|| self.table.probe(position)).flatten()
    }
    fn proves(&self) -> bool {
        self.table.proves()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = std::path::Path::new(&args[1]);
    let n: u32 = args[2].parse().expect("a layer");
    let every: usize = args.get(3).map_or(50, |a| a.parse().expect("a number"));
    let nodes: u64 = args.get(4).map_or(300_000, |a| a.parse().expect("a number"));
    let table = Tablebase::open(path).expect("a tablebase");
    let older = args.get(5).map(|p| Tablebase::open(std::path::Path::new(p)).expect("the older tablebase"));
    let probe_table = Tablebase::open(path).expect("a tablebase");
    let below: Arc<dyn EndgameTable> = Arc::new(Below { table: probe_table, max_seeds: n - 1 });
    let mut searcher =
        Searcher::new(Options { tablebase: Some(below), ..Options::default() }).expect("searcher");
    let (mut proven, mut tried, mut compared, mut disagreements) = (0u64, 0u64, 0u64, 0u64);
    for p in layer_positions(n) {
        let entry = table.entry(&p).expect("an intact table").expect("in the table");
        let wanted = match &older {
            None => entry.proof == Proof::Search,
            Some(older) => {
                let before = older.entry(&p).expect("an intact table").expect("in the older table");
                entry.lower == entry.upper && before.lower < before.upper
            }
        };
        if !wanted {
            continue;
        }
        proven += 1;
        if proven % every as u64 != 0 {
            continue;
        }
        tried += 1;
        let v = entry.lower as u32;
        // Stores [a, 48 - n - a]: the mover ends with a + v, the other with
        // 48 - a - v; a = 24 - v is a draw, one more a win, one less a loss.
        for a in [23i64 - v as i64, 24 - v as i64, 25 - v as i64] {
            let b = 48 - n as i64 - a;
            if !(0..=24).contains(&a) || !(0..=24).contains(&b) {
                continue;
            }
            let state = GameState::from_parts(p.pits(), [a as u8, b as u8], Side::South);
            let expected = match (a + v as i64).cmp(&24) {
                std::cmp::Ordering::Greater => Outcome::Win,
                std::cmp::Ordering::Less => Outcome::Loss,
                std::cmp::Ordering::Equal => Outcome::Draw,
            };
            searcher.clear();
            let limits = Limits { depth: Some(80), nodes: Some(nodes), time: None };
            let result = searcher.search(&state, &limits).expect("a search");
            if let Some(outcome) = result.outcome() {
                compared += 1;
                if outcome != expected {
                    disagreements += 1;
                    println!("DISAGREE {state}: entry {entry:?}, search {outcome:?}");
                }
            }
        }
    }
    println!(
        "layer {n}: {proven} sampled from, {tried} tried, {compared} outcomes proven by the game search, \
         {disagreements} disagreements"
    );
}
