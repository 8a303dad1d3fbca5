//! `perft`: move-path counts from a state or game, and a checker for perft
//! files (`state-or-game | c1 c2 … cd` per line).

mod common;

use common::say;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Parser;
use rayon::prelude::*;

use common::{parse_game, run, thousands};
use oware::perft::{perft, perft_divide};
use oware::Game;

/// Count legal move sequences (perft) under the Aalina engine's rules.
#[derive(Parser)]
#[command(version, about = "Count the move paths from a state or game, or check a perft file")]
struct Options {
    /// A state `p0-…-p11-S-N-T` (pits A–F then a–f, South's and North's
    /// stores, the side to move: the start is 4-4-4-4-4-4-4-4-4-4-4-4-0-0-S)
    /// or a game `STATE moves FfEe`; default the start.
    game: Option<String>,
    /// Count sequences of every length 1..=DEPTH (at most 20: the count
    /// grows about sixfold a ply, and depth 15 from the start already takes
    /// days).
    #[arg(short, long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=20))]
    depth: u32,
    /// Also print the count below each legal move at DEPTH.
    #[arg(long)]
    divide: bool,
    /// Check every line of a perft file instead (e.g. tests/reference/perft.txt).
    #[arg(long, value_name = "FILE", conflicts_with = "game")]
    check: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(short, long)]
    threads: Option<usize>,
}

fn main() {
    run("perft", || {
        let options = common::parse_args::<Options>("perft");
        oware::cpu::use_threads(options.threads).map_err(|e| anyhow::anyhow!("--threads: {e}"))?;
        match &options.check {
            Some(path) => check_file(path),
            None => count(&options),
        }
    });
}

fn count(options: &Options) -> anyhow::Result<()> {
    let game = parse_game(options.game.as_deref())?;
    say!("state: {}", game.current);
    for depth in 1..=options.depth {
        let started = Instant::now();
        let total = moves_in_parallel(&game, depth);
        let seconds = started.elapsed().as_secs_f64();
        say!(
            "depth {depth:>2}: {:>20}  {:>8.3} s  {:>8.1} M paths/s",
            thousands(total),
            seconds,
            total as f64 / seconds.max(1e-9) / 1e6
        );
    }
    if options.divide {
        for (pit, n) in perft_divide(&game.current, options.depth) {
            say!("  {}: {}", game.current.to_move().move_letter(pit), thousands(n));
        }
    }
    Ok(())
}

/// Counts at `depth` with one task per root move.
fn moves_in_parallel(game: &Game, depth: u32) -> u64 {
    let children: Vec<_> = game
        .current
        .legal_moves()
        .map(|pit| {
            let mut child = game.current.clone();
            child.play_unchecked(pit);
            child
        })
        .collect();
    if game.current.is_over() {
        return 0;
    }
    children.par_iter().map(|child| perft(child, depth - 1)).sum()
}

fn check_file(path: &PathBuf) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let (mut checked, mut wrong) = (0, 0);
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), number + 1);
        let Some((game, counts)) = line.split_once('|') else {
            bail!("{}: no '|' between the game and its counts", at());
        };
        let game: Game = game.trim().parse().with_context(at)?;
        let expected = counts
            .split_whitespace()
            .map(|c| c.parse::<u64>().with_context(|| format!("{}: bad count '{c}'", at())))
            .collect::<anyhow::Result<Vec<u64>>>()?;
        let found: Vec<u64> = (1..=expected.len() as u32).map(|d| perft(&game.current, d)).collect();
        checked += 1;
        if found != expected {
            wrong += 1;
            say!("{}: expected {expected:?}, found {found:?}", at());
        }
    }
    if checked == 0 {
        bail!("{} holds no perft line (`state-or-game | c1 c2 …`): nothing was checked", path.display());
    }
    say!("{checked} lines checked, {wrong} wrong");
    if wrong > 0 {
        bail!("{wrong} of {checked} lines of {} disagree", path.display());
    }
    Ok(())
}
