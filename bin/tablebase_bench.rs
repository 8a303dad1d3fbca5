//! `tablebase-bench`: where the time of a tablebase build goes, next to what
//! the memory allows. For each layer: seconds and positions per second per
//! thread of every phase; a memory-bound ceiling measured in the same run
//! (random one-byte reads over an array the size of the layer); and the
//! retrograde phase with un-moves against a precomputed reverse graph (CSR).

mod common;

use common::say;
use std::time::Instant;

use clap::Parser;
use rayon::prelude::*;

use common::{run, thousands};
use oware::rank::{layer_index, layer_positions, layer_size};
use oware::tablebase::{LayerBytes, LayerSolver, SearchBudget, SolvedLayers};

/// Benchmark the tablebase builder layer by layer.
#[derive(Parser)]
#[command(
    version,
    about = "Where the time of a tablebase build goes, layer by layer, next to what the memory allows"
)]
struct Options {
    /// Build layers 0..=MAX_SEEDS (in memory).
    #[arg(short = 'n', long, default_value_t = 12)]
    max_seeds: u32,
    /// Compare un-moves with a reverse graph from this layer on.
    #[arg(long, default_value_t = 10)]
    compare_from: u32,
    /// Worker threads (default: all cores).
    #[arg(short, long)]
    threads: Option<usize>,
    /// From this layer on, also solve each layer on one thread, in the
    /// same run, and report the speed-up of every phase (and that the
    /// bytes are identical).
    #[arg(long)]
    compare_threads: Option<u32>,
    /// With --compare-threads: the one-thread solve uses the sequential
    /// threshold games (the builder's before they ran in parallel) rather
    /// than the parallel ones on a pool of one thread.
    #[arg(long)]
    sequential_games: bool,
}

fn main() {
    run("tablebase-bench", || -> anyhow::Result<()> {
        let options = common::parse_args::<Options>("tablebase-bench");
        // The builder's limit on the largest layer, checked by the library.
        oware::tablebase::Param::LargestLayer
            .check(options.max_seeds as u64)
            .map_err(|e| anyhow::anyhow!("-n: {e}"))?;
        oware::cpu::use_threads(options.threads).map_err(|e| anyhow::anyhow!("--threads: {e}"))?;
        let threads = rayon::current_num_threads() as f64;
        say!("threads: {threads}");
        say!(
            "{:>2} {:>11} {:>8} {:>8} {:>8} {:>8} {:>8} | {:>9} {:>9} {:>9} | {:>10} | {:>8} {:>8}",
            "n",
            "positions",
            "retro s",
            "scc s",
            "bound s",
            "search s",
            "total s",
            "retro/s/t",
            "scc/s/t",
            "bound/s/t",
            "ceiling/s/t",
            "unmove s",
            "csr s"
        );
        let mut solved = SolvedLayers::new();
        let mut total = 0.0;
        for n in 0..=options.max_seeds {
            let size = layer_size(n);
            let ceiling = random_reads_per_second_per_thread(size as usize);
            let (unmove, csr) =
                if n >= options.compare_from { compare_retrograde(n, &solved) } else { (0.0, 0.0) };
            let single = match options.compare_threads {
                Some(from) if n >= from => Some(solve_on_one_thread(n, &solved, options.sequential_games)?),
                _ => None,
            };
            let clock = Instant::now();
            let (bytes, stats) = LayerSolver::new(n, &solved, SearchBudget::default()).solve();
            let seconds = clock.elapsed().as_secs_f64();
            if let Some((one_bytes, one_stats, one_seconds)) = &single {
                let s = &stats.seconds;
                let o = &one_stats.seconds;
                let ratio = |one: f64, many: f64| if many > 0.0 { one / many } else { 0.0 };
                say!(
                    "{n:>2} one thread: retro {:.2} s, scc {:.2} s, bounds {:.2} s, total {:.2} s; {threads} threads: \
                     speed-up retro {:.2}x, scc {:.2}x, bounds {:.2}x, total {:.2}x; bytes {}",
                    o.retrograde,
                    o.scc,
                    o.bounds,
                    one_seconds,
                    ratio(o.retrograde, s.retrograde),
                    ratio(o.scc, s.scc),
                    ratio(o.bounds, s.bounds),
                    ratio(*one_seconds, seconds),
                    if *one_bytes == bytes { "identical" } else { "DIFFER" }
                );
                if *one_bytes != bytes {
                    anyhow::bail!("layer {n}: one thread and {threads} threads give different bytes");
                }
            }
            total += seconds;
            let s = &stats.seconds;
            let rate = |t: f64| if t > 0.0 { size as f64 / t / threads } else { 0.0 };
            say!(
                "{n:>2} {:>11} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} | {:>9.2e} {:>9.2e} {:>9.2e} | {:>10.2e} | {:>8.2} {:>8.2}",
                thousands(size),
                s.retrograde,
                s.scc,
                s.bounds,
                s.search,
                seconds,
                rate(s.retrograde),
                // Pearce runs on one thread (the bounds on all of them).
                rate(s.scc) * threads,
                rate(s.bounds),
                ceiling,
                unmove,
                csr
            );
            solved.push(LayerBytes::Owned(bytes));
        }
        say!("all layers: {total:.1} s");
        Ok(())
    });
}

/// Solves layer `n` in a pool of one thread: its bytes, statistics and
/// wall seconds.
fn solve_on_one_thread(
    n: u32,
    solved: &SolvedLayers,
    sequential_games: bool,
) -> anyhow::Result<(Vec<u8>, oware::tablebase::LayerStats, f64)> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let from = if sequential_games { usize::MAX } else { oware::tablebase::PARALLEL_GAMES_FROM };
    Ok(pool.install(|| {
        let clock = Instant::now();
        let solver = LayerSolver::new(n, solved, SearchBudget::default()).with_parallel_games_from(from);
        let (bytes, stats) = solver.solve();
        (bytes, stats, clock.elapsed().as_secs_f64())
    }))
}

/// Random one-byte reads per second per thread over an array of `len`
/// bytes: the speed limit of any pass that looks up children at random.
fn random_reads_per_second_per_thread(len: usize) -> f64 {
    let array: Vec<u8> = (0..len.max(1)).map(|i| (i * 31 + 7) as u8).collect();
    let reads = (len * 4).clamp(1 << 20, 1 << 26);
    let threads = rayon::current_num_threads();
    let clock = Instant::now();
    let sum: u64 = (0..threads)
        .into_par_iter()
        .map(|t| {
            let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1);
            let mut sum = 0u64;
            for _ in 0..reads {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                sum += array[(x % array.len() as u64) as usize] as u64;
            }
            sum
        })
        .sum();
    std::hint::black_box(sum);
    reads as f64 / clock.elapsed().as_secs_f64()
}

/// Times the retrograde phase with un-moves (the builder's way) and with a
/// reverse graph built from forward moves, and checks they agree.
fn compare_retrograde(n: u32, lower: &SolvedLayers) -> (f64, f64) {
    let clock = Instant::now();
    let mut with_unmoves = LayerSolver::new(n, lower, SearchBudget::default());
    with_unmoves.retrograde_only();
    let unmove_seconds = clock.elapsed().as_secs_f64();

    let clock = Instant::now();
    let size = layer_size(n) as usize;
    // Reverse edges in compressed sparse rows: parents of each child.
    let mut count = vec![0u32; size + 1];
    let mut pending = vec![0u8; size];
    let mut best = vec![(0u8, 0u8); size];
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let nn = n as u8;
    for (i, p) in layer_positions(n).enumerate() {
        let moves = p.legal_moves();
        if moves.is_empty() {
            let own = p.own_seeds() as u8;
            best[i] = (own, own);
            continue;
        }
        for pit in moves {
            let played = p.play(pit);
            if played.captured > 0 {
                let e = lower.entry(&played.child);
                best[i].0 = best[i].0.max(nn - e.upper);
                best[i].1 = best[i].1.max(nn - e.lower);
            } else {
                let c = layer_index(&played.child) as u32;
                edges.push((c, i as u32));
                count[c as usize + 1] += 1;
                pending[i] += 1;
            }
        }
    }
    for k in 0..size {
        count[k + 1] += count[k];
    }
    let mut parents = vec![0u32; edges.len()];
    let mut fill = count.clone();
    for &(c, p) in &edges {
        parents[fill[c as usize] as usize] = p;
        fill[c as usize] += 1;
    }
    drop(edges);
    let mut frontier: Vec<u32> = (0..size as u32).filter(|&i| pending[i as usize] == 0).collect();
    let mut decided = vec![false; size];
    for &i in &frontier {
        decided[i as usize] = true;
    }
    while let Some(c) = frontier.pop() {
        let (lo, hi) = best[c as usize];
        for &p in &parents[count[c as usize] as usize..count[c as usize + 1] as usize] {
            let p = p as usize;
            best[p].0 = best[p].0.max(nn - hi);
            best[p].1 = best[p].1.max(nn - lo);
            pending[p] -= 1;
            if pending[p] == 0 {
                decided[p] = true;
                frontier.push(p as u32);
            }
        }
    }
    let csr_seconds = clock.elapsed().as_secs_f64();
    for (i, &d) in decided.iter().enumerate() {
        let (found, lo, hi) = with_unmoves.retrograde_entry(i);
        assert_eq!(found, d, "layer {n} index {i}: the two strategies disagree");
        if d {
            assert_eq!((lo, hi), best[i], "layer {n} index {i}");
        }
    }
    (unmove_seconds, csr_seconds)
}
