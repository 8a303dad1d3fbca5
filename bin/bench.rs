//! `bench`: the search on every position of the benchmark games (the
//! engine's own benchmark: tests/reference/bench-games.txt, 669 positions).
//! Prints nodes, time, nodes/s and depths, aggregated.

mod common;

use common::say;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;

use common::{progress_bar, run, seconds_argument, thousands};
use oware::search::{bench_positions, Limits, Options, Ordering, Searcher, Weights};

/// Benchmark the search on the positions of the benchmark games.
#[derive(Parser)]
#[command(
    version,
    about = "Time the search on every position of the benchmark games",
    after_help = "--ordering also takes `all`: each ordering step in turn."
)]
struct Args {
    /// The games: one move string per line from the start, '#' comments
    /// (default: the engine's benchmark, tests/reference/bench-games.txt of
    /// this repository, wherever bench is run from).
    #[arg(long)]
    file: Option<PathBuf>,
    /// Search every position to this depth (at least 1; default 13 without
    /// --time).
    #[arg(short, long, value_parser = clap::value_parser!(u32).range(1..))]
    depth: Option<u32>,
    /// Search every position for this many seconds instead; reports the
    /// depth reached.
    #[arg(long, conflicts_with = "depth")]
    time: Option<f64>,
    /// Only every K-th position (a quick subset; at least 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    every: u64,
    #[command(flatten)]
    engine: common::EngineArgs,
    /// Aspiration half-width in engine units (0: full window).
    #[arg(long, default_value_t = 30)]
    aspiration: i32,
    /// Keep the transposition table from one position to the next (as in a
    /// game) instead of clearing it.
    #[arg(long)]
    keep_table: bool,
}

fn main() {
    run("bench", || {
        let args = common::parse_args::<Args>("bench");
        let file = args.file.clone().unwrap_or_else(|| {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference/bench-games.txt"))
        });
        let text =
            std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
        let positions =
            bench_positions(&text).with_context(|| format!("cannot read the games of {}", file.display()))?;
        let every = usize::try_from(args.every).unwrap_or(usize::MAX);
        let states: Vec<_> = positions.iter().map(|(_, state)| state).step_by(every).collect();
        let limits = match args.time {
            Some(t) => Limits::time(seconds_argument("--time", t, false)?),
            None => Limits::depth(args.depth.unwrap_or(13)),
        };
        let weights: Weights = args.engine.weights.parse()?;
        let steps: Vec<(&str, Ordering)> = if args.engine.ordering == "all" {
            Ordering::steps().to_vec()
        } else {
            let ordering: Ordering = args.engine.ordering.parse()?;
            vec![(args.engine.ordering.as_str(), ordering)]
        };
        say!(
            "{} positions of {} ({} games), every {every}: {} searched; {limits}, hash {} MiB",
            positions.len(),
            file.display(),
            positions.last().map_or(0, |(g, _)| g + 1),
            states.len(),
            args.engine.hash
        );
        say!(
            "{:>10} {:>16} {:>9} {:>9} {:>9} {:>10} {:>10} {:>8}",
            "ordering",
            "nodes",
            "time s",
            "cpu s",
            "M n/s",
            "mean depth",
            "max time s",
            "proven"
        );
        for (name, ordering) in steps {
            let options = Options {
                table_megabytes: args.engine.hash,
                ordering,
                weights,
                aspiration: args.aspiration,
                ..Options::default()
            };
            let mut searcher = Searcher::new(options)?;
            let bar = progress_bar(states.len() as u64, name, "positions");
            let (mut nodes, mut seconds, mut depths, mut slowest) = (0u64, 0f64, 0u64, 0f64);
            let mut cpu = 0f64;
            let (mut searched, mut proven) = (0u64, 0u64);
            for state in &states {
                if !args.keep_table {
                    searcher.clear();
                }
                let cpu_before = cpu_seconds();
                let result = searcher.search(state, &limits)?;
                cpu += cpu_seconds() - cpu_before;
                bar.inc(1);
                if result.best_move.is_none() {
                    continue; // the game is over here
                }
                searched += 1;
                nodes += result.nodes;
                let s = result.elapsed.as_secs_f64();
                seconds += s;
                slowest = slowest.max(s);
                depths += result.depth as u64;
                proven += result.proven as u64;
            }
            bar.finish_and_clear();
            // Nodes per second of CPU time where the system tells it (the
            // machine is shared), of wall time otherwise.
            let busy = if cpu > 0.0 { cpu } else { seconds };
            say!(
                "{:>10} {:>16} {:>9.2} {:>9.2} {:>9.2} {:>10.2} {:>10.3} {:>8}",
                name,
                thousands(nodes),
                seconds,
                cpu,
                nodes as f64 / busy.max(1e-9) / 1e6,
                depths as f64 / searched.max(1) as f64,
                slowest,
                proven
            );
        }
        Ok::<(), anyhow::Error>(())
    });
}

/// CPU time of this thread in seconds (Linux: /proc/thread-self/schedstat),
/// 0 where unknown.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e9)
}
