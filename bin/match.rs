//! `match`: our engine against itself, each side with its own opening book
//! and endgame table (ours or the engine's files, or none), from a set of
//! distinct balanced openings, each played with both colours; or, with
//! `--compare`, two matches' games files compared game by game (or several
//! pairs of them, pooled).

mod common;

use common::{note, say};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Parser;

use common::run;
use oware::book::eval::Negamax;
use oware::book::games_file::{self, pooled_paired_difference};
use oware::book::play::{
    a_and_b_seeds, opening_set, run_match, BookRule, GameRecord, MatchOptions, Mover, OpeningSetOptions,
    Player,
};
use oware::book::AnyBook;
use oware::search::Limits;
use oware::tablebase::{open_any, EndgameTable};

/// Plays engine + A's books against engine + B's books; with --compare,
/// compares two games files instead (the other options are then unused).
#[derive(Parser)]
#[command(
    version,
    about = "Play our engine against itself from balanced openings, or compare two games files"
)]
struct Args {
    /// Openings to play, each twice with colours swapped.
    #[arg(long, default_value_t = 200)]
    openings: usize,
    /// Plies from the start of every opening (at most 8).
    #[arg(long, default_value_t = 4)]
    opening_plies: usize,
    /// Openings a depth-10 search values further than this from 0 (engine
    /// units, 25 per seed) are left out.
    #[arg(long, default_value_t = 50)]
    max_imbalance: i32,
    /// Openings are made of moves a depth-10 search values within this
    /// many units of the best (plausible moves).
    #[arg(long, default_value_t = 50, conflicts_with = "any_moves")]
    max_move_loss: i32,
    /// Openings of any legal moves instead of plausible ones.
    #[arg(long)]
    any_moves: bool,
    /// Node limit of each move's search (both players; default 100,000
    /// when --time-ms is not given).
    #[arg(long, conflicts_with = "time_ms")]
    nodes: Option<u64>,
    /// Time limit of each move's search in milliseconds (both players; the
    /// result then depends on the machine and its load).
    #[arg(long)]
    time_ms: Option<u64>,
    /// Player A's opening book (a book directory or an engine book file).
    #[arg(long)]
    book_a: Option<PathBuf>,
    /// Player B's opening book (default: none).
    #[arg(long)]
    book_b: Option<PathBuf>,
    /// Player A's endgame table (ours, a build directory, or an engine file,
    /// whose entries the search takes as estimates only).
    #[arg(long)]
    tablebase_a: Option<PathBuf>,
    /// Player B's endgame table (default: none).
    #[arg(long)]
    tablebase_b: Option<PathBuf>,
    /// Book moves within this many engine units of the best are played, at
    /// random (0: the best only, the rule that measured best and the
    /// library's `BookRule::default`; the engine uses 10).
    #[arg(long, default_value_t = 0.0)]
    margin: f64,
    /// Leave the book when the best move's count (1 + the expansions through
    /// it in our books, the visits in DOE books, which are ours × 1,000,000
    /// in our DOE exports) is below this.
    #[arg(long, default_value_t = 0)]
    min_count: u64,
    /// Leave the book when the best move has fewer plies of book beneath it
    /// (along its principal line, the move included; our books only).
    #[arg(long, default_value_t = 0)]
    min_depth: u32,
    /// Player B's --margin (default: A's).
    #[arg(long)]
    margin_b: Option<f64>,
    /// Player B's --min-count (default: A's).
    #[arg(long)]
    min_count_b: Option<u64>,
    /// Player B's --min-depth (default: A's).
    #[arg(long)]
    min_depth_b: Option<u32>,
    /// Also write every game to this file (one line each; `match --compare`
    /// reads two of them).
    #[arg(long)]
    games: Option<PathBuf>,
    /// Play nothing: compare two games files of matches played from the
    /// same openings, game by game (the first's score minus the second's).
    /// More pairs (FIRST SECOND FIRST SECOND …) are pooled: one difference
    /// over all their games, clustered by opening across the pairs.
    #[arg(long, num_args = 2.., value_names = ["FIRST", "SECOND"])]
    compare: Option<Vec<PathBuf>>,
    /// Games longer than this are adjudicated (each side takes its row);
    /// above --opening-plies.
    #[arg(long, default_value_t = 400)]
    max_plies: usize,
    /// The seed of the opening sample and of random book choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The engine: `search` (our alpha-beta search) or `negamax` (the
    /// simple fixed evaluator the book tests use; no tablebase).
    #[arg(long, default_value = "search")]
    engine: String,
    /// One line per game.
    #[arg(long, short)]
    verbose: bool,
}

fn main() {
    run("match", || -> anyhow::Result<()> {
        let args = common::parse_args::<Args>("match");
        if let Some(files) = &args.compare {
            return compare(files);
        }
        if args.openings == 0 {
            bail!("--openings must be positive");
        }
        if args.max_move_loss < 0 || args.max_imbalance < 0 {
            bail!("--max-move-loss and --max-imbalance must not be negative");
        }
        for margin in [Some(args.margin), args.margin_b].into_iter().flatten() {
            if !margin.is_finite() || margin < 0.0 {
                bail!("--margin and --margin-b must be non-negative numbers");
            }
        }
        if args.max_plies <= args.opening_plies {
            bail!("--max-plies must be above --opening-plies ({})", args.opening_plies);
        }
        let limits = match (args.nodes, args.time_ms) {
            (Some(0), _) | (_, Some(0)) => bail!("--nodes and --time-ms must be positive"),
            (Some(nodes), _) => Limits::nodes(nodes),
            (None, Some(ms)) => Limits::time(Duration::from_millis(ms)),
            (None, None) => Limits::nodes(100_000),
        };
        let negamax = Negamax::nodes(limits.nodes.unwrap_or(100_000));
        let open_book = |path: &Option<PathBuf>| {
            path.as_deref()
                .map(|p| AnyBook::open(p).with_context(|| format!("cannot open the book {}", p.display())))
                .transpose()
        };
        let open_table = |path: &Option<PathBuf>| {
            path.as_deref()
                .map(|p| {
                    open_any(p)
                        .map(|table| table as Arc<dyn EndgameTable>)
                        .with_context(|| format!("cannot open the tablebase {}", p.display()))
                })
                .transpose()
        };
        let (book_a, book_b) = (open_book(&args.book_a)?, open_book(&args.book_b)?);
        let rule_a = BookRule { margin: args.margin, min_count: args.min_count, min_depth: args.min_depth };
        let rule_b = BookRule {
            margin: args.margin_b.unwrap_or(args.margin),
            min_count: args.min_count_b.unwrap_or(args.min_count),
            min_depth: args.min_depth_b.unwrap_or(args.min_depth),
        };
        let mut players = Vec::new();
        for (book_path, table_path, book, rule) in [
            (&args.book_a, &args.tablebase_a, &book_a, rule_a),
            (&args.book_b, &args.tablebase_b, &book_b, rule_b),
        ] {
            let mover = match args.engine.as_str() {
                "search" => Mover::Search { limits, tablebase: open_table(table_path)? },
                "negamax" if args.time_ms.is_some() => bail!("--engine negamax takes --nodes, not --time-ms"),
                "negamax" if table_path.is_none() => Mover::Evaluator(&negamax),
                "negamax" => bail!("--engine negamax probes no tablebase"),
                other => bail!("--engine {other}: choose search or negamax"),
            };
            let name = format!(
                "{}; book {}; tablebase {}",
                mover.describe(),
                book_path.as_ref().map_or("none".into(), |p| p.display().to_string()),
                table_path.as_ref().map_or("none".into(), |p| p.display().to_string()),
            );
            players.push(Player { name, mover, book: book.as_ref().map(|b| b.source()), rule });
        }
        let set = OpeningSetOptions {
            plies: args.opening_plies,
            count: args.openings,
            max_imbalance: args.max_imbalance,
            max_move_loss: if args.any_moves { i32::MAX } else { args.max_move_loss },
            seed: args.seed,
            ..OpeningSetOptions::default()
        };
        let picked = opening_set(&set)?;
        if picked.openings.is_empty() {
            bail!("no opening {} plies deep is within {} units of balance", set.plies, set.max_imbalance);
        }
        let reads: Vec<&std::path::Path> = [&args.book_a, &args.book_b, &args.tablebase_a, &args.tablebase_b]
            .into_iter()
            .flatten()
            .map(|p| p.as_path())
            .collect();
        if let Some(path) = &args.games {
            games_file::check_destination(path, &reads)?;
        }
        let options = MatchOptions { openings: picked.openings, seed: args.seed, max_plies: args.max_plies };
        let verbose = args.verbose;
        let report = run_match(&players[0], &players[1], &options, &|game| {
            if verbose {
                let (a_seeds, b_seeds) = a_and_b_seeds(game.a_south, game.score);
                note!(
                    "opening {:>3}: A as {}, A {:>2}-{:<2} B ({} A-book, {} B-book moves) {}",
                    game.opening + 1,
                    if game.a_south { "South" } else { "North" },
                    a_seeds,
                    b_seeds,
                    game.book_moves[0],
                    game.book_moves[1],
                    game.moves
                );
            }
        })?;
        say!("A: {}", players[0].name);
        say!("B: {}", players[1].name);
        let describe = |r: &BookRule| {
            format!("margin {}, min count {}, min depth {}", r.margin, r.min_count, r.min_depth)
        };
        let rules = if rule_a == rule_b {
            describe(&rule_a)
        } else {
            format!("A {}; B {}", describe(&rule_a), describe(&rule_b))
        };
        say!(
            "book rule: {rules}; {} openings of {} plies (of the {} distinct positions reached by {} and valued within {} of balance), each played with both colours",
            options.openings.len(),
            args.opening_plies,
            picked.qualifying,
            if args.any_moves { "any moves".to_string() } else { format!("moves within {} of the best", args.max_move_loss) },
            args.max_imbalance
        );
        say!(
            "A scores {:.3} ± {} (standard error clustered by opening) over {} games: {} wins, {} draws, {} losses; book moves per game: A {:.1}, B {:.1}",
            report.score,
            report.standard_error.map_or("n/a".to_string(), |e| format!("{e:.3}")),
            report.games.len(),
            report.wins,
            report.draws,
            report.losses,
            report.book_moves[0],
            report.book_moves[1]
        );
        if let Some(path) = &args.games {
            games_file::write(path, &report.games, &reads)?;
            say!("games: {}", path.display());
        }
        Ok(())
    });
}

/// `--compare FIRST SECOND [FIRST SECOND …]`.
fn compare(files: &[PathBuf]) -> anyhow::Result<()> {
    if !files.len().is_multiple_of(2) {
        bail!("--compare takes pairs of games files (FIRST SECOND …), not {} files", files.len());
    }
    let mut matches = Vec::with_capacity(files.len());
    for path in files {
        matches.push(games_file::read(path)?);
    }
    let pairs: Vec<(&[GameRecord], &[GameRecord])> =
        matches.chunks(2).map(|pair| (pair[0].as_slice(), pair[1].as_slice())).collect();
    let paired = pooled_paired_difference(&pairs)?;
    let names = |side: usize| {
        files.iter().skip(side).step_by(2).map(|p| p.display().to_string()).collect::<Vec<_>>().join(" + ")
    };
    say!(
        "{} minus {}: {:+.3} ± {} (paired by game, standard error clustered by opening) over {} games, {} of them identical",
        names(0),
        names(1),
        paired.difference,
        paired.standard_error.map_or("n/a".to_string(), |e| format!("{e:.3}")),
        paired.games,
        paired.identical
    );
    Ok(())
}
