//! `search`: the best move, score and principal variation of a state or
//! game, from the alpha-beta search.

mod common;

use common::say;

use clap::Parser;

use common::{parse_game, run, seconds_argument, thousands};
use oware::search::{Limits, Options, Searcher};

/// Search a state or game with the alpha-beta engine.
#[derive(Parser)]
#[command(version, about = "The best move, score and principal variation of an Oware Abapa state or game")]
struct Args {
    /// A state `p0-…-p11-S-N-T` (pits A–F then a–f, South's and North's
    /// stores, the side to move: the start is 4-4-4-4-4-4-4-4-4-4-4-4-0-0-S)
    /// or a game `STATE moves FfEe`; default the start.
    game: Option<String>,
    /// Deepest iteration, in plies (at least 1).
    #[arg(short, long, value_parser = clap::value_parser!(u32).range(1..))]
    depth: Option<u32>,
    /// Stop after this many nodes (deterministic; at least 1).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    nodes: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long)]
    time: Option<f64>,
    #[command(flatten)]
    engine: common::EngineArgs,
    /// An endgame tablebase: our .owtb / .owtb.zst file or build directory
    /// (proven values), or an engine "Oware Endgames" file (estimates only:
    /// never a proof, never at the root).
    #[arg(long, short = 'b')]
    tablebase: Option<std::path::PathBuf>,
    /// Also search every legal move and print its score (as an opening
    /// book stores them), in engine units.
    #[arg(long)]
    moves: bool,
}

fn main() {
    run("search", || {
        let args = common::parse_args::<Args>("search");
        let game = parse_game(args.game.as_deref())?;
        let options = options(&args)?;
        let limits = limits(&args)?;
        let mut searcher = Searcher::new(options)?;
        let result = searcher.search(&game.current, &limits)?;
        let side = game.current.to_move();
        let letters = |pits: &[usize]| -> String {
            let mut mover = side;
            let mut out = Vec::new();
            for &pit in pits {
                out.push(mover.move_letter(pit).to_string());
                mover = mover.other();
            }
            out.join(" ")
        };
        say!("state:     {}", game.current);
        say!("{}", game.current.board());
        match result.best_move {
            Some(pit) => say!("best move: {}", side.move_letter(pit)),
            None => say!("best move: none (the game is over)"),
        }
        let proven = if result.proven { ", proven" } else { "" };
        say!(
            "score:     {} for {side:?} (engine units {:+}{proven})",
            result.score,
            result.score.engine_units()
        );
        say!("pv:        {}", letters(&result.pv));
        say!("depth:     {} (stopped: {})", result.depth, result.stop);
        say!(
            "nodes:     {} in {:.3} s ({:.2} M nodes/s)",
            thousands(result.nodes),
            result.elapsed.as_secs_f64(),
            result.nodes_per_second() / 1e6
        );
        let stats = &result.stats;
        say!(
            "table:     {} probes, {} hits, {} cutoffs, {} refused for the history; {} repetitions",
            thousands(stats.table_probes),
            thousands(stats.table_hits),
            thousands(stats.table_cutoffs),
            thousands(stats.table_unsafe),
            thousands(stats.repetitions)
        );
        if args.moves {
            for m in searcher.score_moves(&game.current, &limits)? {
                let proven = if m.proven { " (proven)" } else { "" };
                say!("  {}: {:>+5}  {}{proven}", side.move_letter(m.pit), m.score.engine_units(), m.score);
            }
        }
        Ok::<(), anyhow::Error>(())
    });
}

fn options(args: &Args) -> anyhow::Result<Options> {
    let tablebase: Option<std::sync::Arc<dyn oware::tablebase::EndgameTable>> = match &args.tablebase {
        Some(path) => Some(oware::tablebase::open_any(path)?),
        None => None,
    };
    Ok(Options {
        tablebase,
        table_megabytes: args.engine.hash,
        ordering: args.engine.ordering.parse()?,
        weights: args.engine.weights.parse()?,
        ..Options::default()
    })
}

fn limits(args: &Args) -> anyhow::Result<Limits> {
    let time = args.time.map(|t| seconds_argument("--time", t, false)).transpose()?;
    let limits = Limits { depth: args.depth, nodes: args.nodes, time };
    if limits == Limits::default() {
        return Ok(Limits::depth(13));
    }
    Ok(limits)
}
