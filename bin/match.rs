//! `match`: our engine with an opening book against itself without one (or
//! with another book), N games from the start, colours alternated.

mod common;

use common::say;
use std::path::PathBuf;

use anyhow::bail;
use clap::Parser;

use common::run;
use oware::book::eval::{LeafEvaluator, Negamax, SearchEvaluator};
use oware::book::play::{run_match, MatchOptions, Player};
use oware::book::AnyBook;

/// Plays engine + book A against engine + book B (or no book).
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// Games to play (A has South in the even ones).
    #[arg(long, short = 'g', default_value_t = 20)]
    games: usize,
    /// Node limit per move of the engine (both players).
    #[arg(long, default_value_t = 20_000)]
    nodes: u64,
    /// Player A's book (a book directory or an engine book file).
    #[arg(long)]
    book_a: Option<PathBuf>,
    /// Player B's book (default: none).
    #[arg(long)]
    book_b: Option<PathBuf>,
    /// Book moves within this many engine units of the best are played.
    #[arg(long, default_value_t = 10.0)]
    margin: f64,
    /// Uniformly random plies at the start of each pair of games (without
    /// them, two deterministic engines replay only a few distinct games).
    #[arg(long, default_value_t = 2)]
    random_plies: usize,
    /// Games longer than this are adjudicated (each side takes its row).
    #[arg(long, default_value_t = 400)]
    max_plies: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The engine: `search` (our alpha-beta search) or `negamax` (the
    /// simple fixed evaluator the book tests use).
    #[arg(long, default_value = "search")]
    engine: String,
    /// One line per game.
    #[arg(long, short)]
    verbose: bool,
}

/// The engine both players use, with a node limit per move.
fn engine(kind: &str, nodes: u64) -> anyhow::Result<Box<dyn LeafEvaluator>> {
    Ok(match kind {
        "search" => Box::new(SearchEvaluator { nodes }),
        "negamax" => Box::new(Negamax::nodes(nodes)),
        other => bail!("--engine {other}: choose search or negamax"),
    })
}

fn main() {
    run("match", || -> anyhow::Result<()> {
        let args = Args::parse();
        if args.games == 0 || args.nodes == 0 {
            bail!("--games and --nodes must be positive");
        }
        if !args.margin.is_finite() || args.margin < 0.0 {
            bail!("--margin must be a non-negative number");
        }
        let engine = engine(&args.engine, args.nodes)?;
        let book_a = args.book_a.as_deref().map(AnyBook::open).transpose()?;
        let book_b = args.book_b.as_deref().map(AnyBook::open).transpose()?;
        let name = |path: &Option<PathBuf>| match path {
            Some(p) => format!("engine + {}", p.display()),
            None => "engine without book".to_string(),
        };
        let a = Player {
            name: name(&args.book_a),
            engine: engine.as_ref(),
            book: book_a.as_ref().map(|b| b.source()),
        };
        let b = Player {
            name: name(&args.book_b),
            engine: engine.as_ref(),
            book: book_b.as_ref().map(|b| b.source()),
        };
        let options = MatchOptions {
            games: args.games,
            seed: args.seed,
            margin: args.margin,
            random_plies: args.random_plies,
            max_plies: args.max_plies,
        };
        let verbose = args.verbose;
        let report = run_match(&a, &b, &options, &mut |i, game| {
            if verbose {
                say!(
                    "game {:>3}: A {} {:>2}-{:<2} ({} A-book, {} B-book moves) {}",
                    i + 1,
                    if game.a_south { "South" } else { "North" },
                    game.score[0],
                    game.score[1],
                    game.book_moves[0],
                    game.book_moves[1],
                    game.moves
                );
            }
        })?;
        let n = report.games.len() as f64;
        let book_a_moves: usize = report.games.iter().map(|g| g.book_moves[0]).sum();
        let book_b_moves: usize = report.games.iter().map(|g| g.book_moves[1]).sum();
        say!("A: {}; B: {}; engine: {}", a.name, b.name, engine.describe());
        say!(
            "A scores {:.3} ± {:.3} (standard error) over {} games: {} wins, {} draws, {} losses; book moves per game: A {:.1}, B {:.1}",
            report.score,
            report.standard_error,
            report.games.len(),
            report.wins,
            report.draws,
            report.losses,
            book_a_moves as f64 / n,
            book_b_moves as f64 / n
        );
        Ok(())
    });
}
