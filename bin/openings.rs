//! `openings`: grow, probe, describe and export Oware Abapa opening books.

mod common;

use common::say;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{ArgGroup, Args, Parser, Subcommand};

use common::{parse_game, run, seconds_argument, thousands, Console, MAX_ARGUMENT_SECONDS};
use oware::book::eval::{
    evaluator_from_description, LeafEvaluator, Negamax, SearchEvaluator, NEGAMAX_MAX_DEPTH,
};
use oware::book::export::export;
use oware::book::probe::{probe, stats};
use oware::book::store::{load, read_manifest};
use oware::book::{grow, AnyBook, Budget, GrowOptions, Omega};
use oware::tablebase::{AnyTable, Tablebase};

/// Opening books for Oware Abapa, grown by drop-out expansion.
#[derive(Parser)]
#[command(version, about = "Grow, probe, describe and export Oware Abapa opening books")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Grow (or resume growing) a book directory.
    Grow(GrowArgs),
    /// Book moves of a state or game, the book line and the depth in book.
    Probe {
        /// A book directory, or a book file in either engine layout
        /// (.zst compressed or not).
        #[arg(long, short = 'b')]
        book: PathBuf,
        /// A state `p0-…-p11-S-N-T` (pits A–F then a–f, South's and
        /// North's stores, the side to move: the start is
        /// 4-4-4-4-4-4-4-4-4-4-4-4-0-0-S) or a game `STATE moves FfEe`
        /// (default: the start).
        game: Option<String>,
    },
    /// Size, depth profile, root value and principal line of a book.
    Stats {
        /// A book directory, or a book file in either engine layout.
        #[arg(long, short = 'b')]
        book: PathBuf,
    },
    /// How leaf values change with the search budget: a sample of the
    /// book's leaves valued at each node limit, against the largest.
    LeafStudy {
        /// The book directory whose leaves are studied.
        #[arg(long, short = 'b')]
        book: PathBuf,
        /// Leaves to value (every k-th leaf of the book).
        #[arg(long, default_value_t = 200)]
        sample: usize,
        /// Node limits, comma-separated, ascending; the last is the
        /// reference.
        #[arg(long, value_delimiter = ',', default_value = "100000,300000,1000000,3000000,10000000")]
        budgets: Vec<u64>,
        /// One of our endgame tables for the searches.
        #[arg(long)]
        tablebase: Option<PathBuf>,
    },
    /// Write a book directory in the engine's layouts.
    Export {
        /// The book directory to export.
        #[arg(long, short = 'b')]
        book: PathBuf,
        /// Output in "Oware Opening Book 1.0" (2014).
        #[arg(long)]
        classic: Option<PathBuf>,
        /// Output in "DOE Opening Book 1.0" (2022); not the --classic file.
        #[arg(long)]
        doe: Option<PathBuf>,
    },
}

/// Nodes per leaf of the search evaluator when a new book names no
/// evaluator.
const DEFAULT_LEAF_NODES: u64 = 200_000;

#[derive(Args)]
#[command(group(ArgGroup::new("budget").required(true).args(["expansions", "hours"])))]
struct GrowArgs {
    /// The book directory (created if missing, resumed if it holds a book).
    #[arg(long, short = 'b')]
    book: PathBuf,
    /// Grow until the book holds this many expansions in all.
    #[arg(long)]
    expansions: Option<u64>,
    /// Grow for this many hours (stops at a batch boundary).
    #[arg(long)]
    hours: Option<f64>,
    /// ω, plies per engine unit of deviation (new book default 0.04).
    #[arg(long)]
    omega: Option<f64>,
    /// Leaves selected per batch, 1 to 65,536 (new book default 16).
    #[arg(long)]
    batch: Option<u32>,
    /// Evaluation worker threads (default: all cores).
    #[arg(long, short = 't')]
    threads: Option<usize>,
    /// Value leaves with our alpha-beta search, this many nodes per leaf
    /// (the default evaluator of a new book: 200,000 nodes). `--search-nodes`,
    /// its name before, is still accepted (the nodes are per leaf, not per
    /// question as in `endgames --search-nodes`).
    #[arg(long, alias = "search-nodes", conflicts_with_all = ["eval_depth", "eval_nodes"])]
    leaf_nodes: Option<u64>,
    /// The endgame table the search evaluator probes (one of ours: a
    /// `.owtb` or `.owtb.zst` file or a build directory). A book grown
    /// with a table names it and needs the same table to resume.
    #[arg(long, conflicts_with_all = ["eval_depth", "eval_nodes"])]
    tablebase: Option<PathBuf>,
    /// Simple evaluator instead: fixed-depth negamax on the 2014 heuristic.
    #[arg(long)]
    eval_depth: Option<u32>,
    /// Simple evaluator: node limit per evaluation (iterative
    /// deepening; depth up to --eval-depth or 40).
    #[arg(long)]
    eval_nodes: Option<u64>,
    /// Seconds between checkpoints (0: after every batch).
    #[arg(long, default_value_t = 180.0)]
    checkpoint_seconds: f64,
    /// No progress bar or log lines.
    #[arg(long, short)]
    quiet: bool,
}

fn main() {
    run("openings", || {
        let cli = common::parse_args::<Cli>("openings");
        match cli.command {
            Command::Grow(args) => grow_command(args),
            Command::Probe { book, game } => {
                let book = AnyBook::open(&book)?;
                let game = parse_game(game.as_deref())?;
                say!("book: {}", book.kind());
                say!("{}", game.current.board());
                say!("{}", probe(&book, &game));
                Ok(())
            }
            Command::Stats { book } => stats_command(&book),
            Command::LeafStudy { book, sample, budgets, tablebase } => {
                leaf_study_command(&book, sample, &budgets, tablebase.as_deref())
            }
            Command::Export { book, classic, doe } => {
                if classic.is_none() && doe.is_none() {
                    bail!("nothing to export: give --classic and/or --doe");
                }
                let report = export(&book, classic.as_deref(), doe.as_deref())?;
                if let Some(path) = classic {
                    say!("{}: {} entries", path.display(), thousands(report.entries_2014 as u64));
                }
                if let Some(path) = doe {
                    say!("{}: {} entries", path.display(), thousands(report.entries_doe as u64));
                }
                Ok(())
            }
        }
    });
}

/// The evaluator of a growth: the options' if given, else the book's own,
/// else the search with its default node limit.
fn evaluator(args: &GrowArgs) -> anyhow::Result<Box<dyn LeafEvaluator>> {
    if let Some(nodes) = args.leaf_nodes {
        if nodes == 0 {
            bail!("--leaf-nodes must be positive");
        }
        return Ok(Box::new(match &args.tablebase {
            Some(path) => SearchEvaluator::with_tablebase(nodes, Arc::new(open_table(path)?)),
            None => SearchEvaluator::new(nodes),
        }));
    }
    if args.eval_depth.is_some() || args.eval_nodes.is_some() {
        // A node limit alone: as deep as the nodes allow.
        let depth = args.eval_depth.unwrap_or(NEGAMAX_MAX_DEPTH);
        if depth == 0 || depth > NEGAMAX_MAX_DEPTH {
            bail!("--eval-depth must be 1..={NEGAMAX_MAX_DEPTH}");
        }
        return Ok(Box::new(Negamax { depth, max_nodes: args.eval_nodes }));
    }
    let Some(manifest) = read_manifest(&args.book)? else {
        return Ok(Box::new(match &args.tablebase {
            Some(path) => SearchEvaluator::with_tablebase(DEFAULT_LEAF_NODES, Arc::new(open_table(path)?)),
            None => SearchEvaluator::new(DEFAULT_LEAF_NODES),
        }));
    };
    let recorded = &manifest.parameters.evaluator;
    if let Some((nodes, Some(name))) = SearchEvaluator::parse_description(recorded) {
        // The book names its table; the user says where it is.
        let Some(path) = &args.tablebase else {
            bail!("the book was grown with '{recorded}': give that table with --tablebase");
        };
        let table = open_table(path)?;
        let found = SearchEvaluator::table_name(&table);
        if found != name {
            bail!("{} is the table {found}, the book was grown with {name}", path.display());
        }
        return Ok(Box::new(SearchEvaluator::with_tablebase(nodes, Arc::new(table))));
    }
    if args.tablebase.is_some() {
        bail!("the book was grown with '{recorded}', without a tablebase: drop --tablebase");
    }
    evaluator_from_description(recorded)
        .with_context(|| format!("the book was grown with '{recorded}', which this build cannot rebuild"))
}

/// Opens one of our endgame tables (checked in full) for the search
/// evaluator.
fn open_table(path: &std::path::Path) -> anyhow::Result<Tablebase> {
    match AnyTable::open_verified(path)
        .with_context(|| format!("cannot open the tablebase {}", path.display()))?
    {
        AnyTable::Ours(table) => Ok(table),
        AnyTable::Engine(_) => {
            bail!("{}: an engine endgame file; books are grown with our checked tables only", path.display())
        }
    }
}

fn grow_command(args: GrowArgs) -> anyhow::Result<()> {
    let budget = match (args.expansions, args.hours) {
        (Some(k), _) => Budget::Expansions(k),
        (None, Some(h)) if h.is_finite() && h > 0.0 && h * 3600.0 <= MAX_ARGUMENT_SECONDS => {
            Budget::Time(Duration::from_secs_f64(h * 3600.0))
        }
        _ => bail!("--hours must be a positive number of hours, at most a century"),
    };
    let checkpoint_every = seconds_argument("--checkpoint-seconds", args.checkpoint_seconds, true)?;
    let omega = match args.omega {
        None => None,
        Some(w) => Some(Omega::from_plies_per_unit(w).with_context(|| {
            format!("--omega {w}: give plies per engine unit, 0 to {}", Omega::MAX_MICRO / 1_000_000)
        })?),
    };
    let threads = oware::cpu::thread_count(args.threads).with_context(|| "--threads".to_string())?;
    let evaluator = evaluator(&args)?;
    let options =
        GrowOptions { dir: args.book.clone(), omega, batch: args.batch, threads, budget, checkpoint_every };
    let report = grow(&options, evaluator.as_ref(), &Console::new(args.quiet))?;

    say!(
        "{} expansions in {:.1} s ({:.0} per hour, {} threads, {} leaves evaluated); the book holds {} expansions, {} nodes, root value {:+}{}",
        thousands(report.expansions - report.expansions_before),
        report.seconds,
        report.expansions_per_hour(),
        threads,
        thousands(report.evaluations),
        thousands(report.expansions),
        thousands(report.nodes as u64),
        report.root_value,
        if report.complete { " (complete)" } else { "" }
    );
    Ok(())
}

fn stats_command(book: &std::path::Path) -> anyhow::Result<()> {
    if !book.is_dir() {
        let loaded = AnyBook::open(book)?;
        let game = parse_game(None)?;
        say!("book: {}", loaded.kind());
        say!("{}", probe(&loaded, &game));
        return Ok(());
    }
    let stored = load(book)?;
    match stored.graph {
        None => say!("{}: {}; no checkpoint yet", book.display(), stored.manifest.parameters.describe()),
        Some(graph) => {
            say!("{}", stats(&graph, &stored.manifest.parameters).to_string().trim_end_matches('\n'))
        }
    }
    Ok(())
}

fn leaf_study_command(
    book: &std::path::Path,
    sample: usize,
    budgets: &[u64],
    tablebase: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    if budgets.is_empty() || budgets.contains(&0) || budgets.windows(2).any(|w| w[0] >= w[1]) {
        bail!("--budgets must be positive node limits in ascending order");
    }
    if sample == 0 {
        bail!("--sample must be positive");
    }
    let graph =
        load(book)?.graph.with_context(|| format!("{}: the book has no checkpoint yet", book.display()))?;
    let table = tablebase.map(open_table).transpose()?.map(Arc::new);
    let study = oware::book::study::leaf_budget_study(&graph, sample, budgets, table.as_ref())?;
    say!(
        "{} leaves of {}; reference: {} nodes",
        study.leaves,
        book.display(),
        thousands(budgets[budgets.len() - 1])
    );
    say!(
        "{:>12} {:>12} {:>9} {:>7} {:>12} {:>11} {:>10}",
        "budget",
        "mean nodes",
        "ms/leaf",
        "depth",
        "mean |Δ|",
        "within 25",
        "same move"
    );
    for r in study.rows {
        say!(
            "{:>12} {:>12} {:>9.1} {:>7.2} {:>12.1} {:>10.1}% {:>9.1}%",
            thousands(r.nodes),
            thousands(r.mean_nodes as u64),
            r.mean_seconds * 1000.0,
            r.mean_depth,
            r.mean_change,
            r.within_a_seed * 100.0,
            r.same_move * 100.0
        );
    }
    Ok(())
}
