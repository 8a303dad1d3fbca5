//! What asking for lower-layer entries by message would cost a distributed
//! build (`docs/distributed-build.md` §4): for each layer, how many entries
//! of lower layers its first pass reads (one per capture move), and how
//! many of those a rank would have to ask another rank for when every
//! layer is split into K equal index ranges. Usage:
//! `cargo run --release --example capture_reads -- [LAYER ...]`.

use oware::cluster::Partition;
use oware::rank::{layer_index, layer_positions_from, layer_size};
use rayon::prelude::*;

fn main() {
    let layers: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let layers = if layers.is_empty() { vec![12, 14, 16] } else { layers };
    let ranks = [2usize, 4, 16];
    println!("| layer | positions | capture reads | reads a position | asked of another rank, K = 2, 4, 16 (a position) |");
    println!("|---|---|---|---|---|");
    for n in layers {
        let size = layer_size(n);
        let chunk = 1u64 << 16;
        let (reads, remote) = (0..size.div_ceil(chunk))
            .into_par_iter()
            .map(|c| {
                let mut reads = 0u64;
                let mut remote = [0u64; 3];
                let start = c * chunk;
                let end = (start + chunk).min(size);
                for (offset, position) in
                    layer_positions_from(n, start).take((end - start) as usize).enumerate()
                {
                    let index = start + offset as u64;
                    for pit in position.legal_moves() {
                        let played = position.play(pit);
                        if played.captured == 0 {
                            continue;
                        }
                        reads += 1;
                        let lower = n - played.captured as u32;
                        let child = layer_index(&played.child);
                        for (r, &k) in ranks.iter().enumerate() {
                            let here = Partition::new(size, k).owner(index);
                            let there = Partition::new(layer_size(lower), k).owner(child);
                            remote[r] += (here != there) as u64;
                        }
                    }
                }
                (reads, remote)
            })
            .reduce(|| (0, [0; 3]), |(a, x), (b, y)| (a + b, [x[0] + y[0], x[1] + y[1], x[2] + y[2]]));
        let per = |v: u64| v as f64 / size as f64;
        println!(
            "| {n} | {size} | {reads} | {:.2} | {:.2}, {:.2}, {:.2} |",
            per(reads),
            per(remote[0]),
            per(remote[1]),
            per(remote[2])
        );
    }
}
