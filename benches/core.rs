//! Core benchmarks: ranks, move generation (table-driven copy-make against the
//! seed-by-seed rules and an in-place make/unmake), and perft.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use oware::perft::perft;
use oware::rank::{layer_index, layer_positions, layer_size, position_in_layer};
use oware::rules::{reference, Position, PITS, ROW};
use oware::GameState;

/// Positions with 8..40 seeds spread evenly through their layers.
fn sample_positions() -> Vec<Position> {
    let mut out = Vec::new();
    for n in (8..=40).step_by(4) {
        let size = layer_size(n);
        for k in 0..128u64 {
            out.push(position_in_layer(n, size / 128 * k + k).unwrap());
        }
    }
    out
}

fn ranks(c: &mut Criterion) {
    let positions = sample_positions();
    let mut group = c.benchmark_group("rank");
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function("rank", |b| {
        b.iter(|| positions.iter().map(|p| layer_index(black_box(p))).fold(0u64, u64::wrapping_add))
    });
    let ranked: Vec<(u32, u64)> = positions.iter().map(|p| (p.seeds(), layer_index(p))).collect();
    group.bench_function("unrank", |b| {
        b.iter(|| {
            ranked
                .iter()
                .map(|&(n, i)| position_in_layer(n, black_box(i)).unwrap().pits()[0] as u64)
                .sum::<u64>()
        })
    });
    group.throughput(Throughput::Elements(layer_size(8)));
    group.bench_function("iterate layer 8", |b| {
        b.iter(|| layer_positions(black_box(8)).map(|p| p.pits()[0] as u64).sum::<u64>())
    });
    group.finish();
}

/// In-place make/unmake, seed by seed: the alternative to copy-make.
fn make_unmake_all(board: &mut [u8; PITS]) -> u64 {
    let mut sum = 0u64;
    for pit in 0..ROW {
        let seeds = board[pit];
        if seeds == 0 {
            continue;
        }
        let saved = *board;
        board[pit] = 0;
        let (mut left, mut at) = (seeds, pit);
        while left > 0 {
            at = (at + 1) % PITS;
            if at != pit {
                board[at] += 1;
                left -= 1;
            }
        }
        let mut captured = 0;
        while at >= ROW && matches!(board[at], 2 | 3) {
            captured += board[at];
            board[at] = 0;
            at -= 1;
        }
        sum += captured as u64 + board[6] as u64;
        *board = saved; // unmake
    }
    sum
}

fn moves(c: &mut Criterion) {
    let positions = sample_positions();
    let mut group = c.benchmark_group("generate and play all moves");
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function("table copy-make", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            for p in &positions {
                for pit in black_box(p).legal_moves() {
                    let played = p.play(pit);
                    sum += played.captured as u64 + played.child.pits()[0] as u64;
                }
            }
            sum
        })
    });
    group.bench_function("seed-by-seed copy-make", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            for p in &positions {
                for pit in black_box(p).legal_moves() {
                    let played = reference::play(p, pit);
                    sum += played.captured as u64 + played.child.pits()[0] as u64;
                }
            }
            sum
        })
    });
    group.bench_function("seed-by-seed make-unmake", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            for p in &positions {
                let mut board = black_box(p).pits();
                sum += make_unmake_all(&mut board);
            }
            sum
        })
    });
    group.finish();
}

fn perft_start(c: &mut Criterion) {
    let start = GameState::start();
    let mut group = c.benchmark_group("perft");
    group.sample_size(20);
    group.throughput(Throughput::Elements(perft(&start, 8)));
    group.bench_function("perft 8 from the start", |b| b.iter(|| perft(black_box(&start), 8)));
    group.finish();
}

criterion_group!(benches, ranks, moves, perft_start);
criterion_main!(benches);
