use oware::tablebase::*;
fn main() {
    let max: u32 = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(8);
    let nodes: u64 = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(0);
    let mut solved = SolvedLayers::new();
    println!("{}", LayerStats::table_header());
    let t = std::time::Instant::now();
    for n in 0..=max {
        let started = std::time::Instant::now();
        let solver = LayerSolver::new(
            n,
            &solved,
            SearchBudget {
                nodes_per_search: nodes,
                max_path: 1000,
                max_seeds: std::env::args().nth(3).map(|s| s.parse().unwrap()).unwrap_or(48),
            },
        );
        let (bytes, mut stats) = solver.solve();
        stats.seconds.total = started.elapsed().as_secs_f64();
        println!("{}  exact={}", stats.table_row(), stats.exact);
        solved.push(LayerBytes::Owned(bytes));
    }
    println!("total {:.2}s", t.elapsed().as_secs_f64());
}
