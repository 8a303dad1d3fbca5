//! Solves layers 0..=N in memory and prints each layer's statistics:
//! `cargo run --release --example layers -- N [search-nodes] [search-max-seeds] [cut-nodes] [cut-max-seeds]`.
use oware::tablebase::*;

fn main() {
    let arg = |k: usize, default: u64| -> u64 {
        std::env::args().nth(k).map(|s| s.parse().expect("a number")).unwrap_or(default)
    };
    let defaults = SearchBudget::default();
    let max = arg(1, 8) as u32;
    let budget = SearchBudget {
        nodes_per_search: arg(2, defaults.nodes_per_search),
        max_path: std::env::var("MAX_PATH").map(|s| s.parse().unwrap()).unwrap_or(defaults.max_path),
        threshold_max_seeds: arg(3, defaults.threshold_max_seeds as u64) as u32,
        cut_nodes: arg(4, defaults.cut_nodes),
        cut_max_seeds: arg(5, defaults.cut_max_seeds as u64) as u32,
        min_seeds: 0,
    };
    let mut solved = SolvedLayers::new();
    println!("{}", LayerStats::table_header());
    let clock = std::time::Instant::now();
    for n in 0..=max {
        let started = std::time::Instant::now();
        let (bytes, mut stats) = LayerSolver::new(n, &solved, budget).solve();
        stats.seconds.total = started.elapsed().as_secs_f64();
        println!(
            "{}  exact={} open_before={} answered={} med={} p90={} max={} left={} cut_closed={} cpu={:.2}",
            stats.table_row(),
            stats.exact,
            stats.open_before_search,
            stats.question_nodes.count,
            stats.question_nodes.quantile(0.5),
            stats.question_nodes.quantile(0.9),
            stats.question_nodes.max,
            stats.left_open_by_threshold,
            stats.closed_by_cut,
            stats.seconds.search_cpu
        );
        solved.push(LayerBytes::Owned(bytes));
    }
    println!("total {:.2}s", clock.elapsed().as_secs_f64());
}
