//! `endgames`: build, probe, verify and export Oware Abapa endgame
//! tablebases.

mod common;

use common::say;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};

use common::{parse_game, run, seconds_argument, thousands, Console};
use oware::formats::endgames::EndgamesVersion;
use oware::tablebase::directory::build::BuildOptions;
use oware::tablebase::directory::improve::{improve, ImproveOptions, Improvement};
use oware::tablebase::directory::names::TABLEBASE_FILE;
use oware::tablebase::engine::export_engine;
use oware::tablebase::excerpt::Excerpt;
use oware::tablebase::params::ENGINE_MAX_SEEDS;
use oware::tablebase::verify::{verify, verify_deep, DeepSample, VerifyReport};
use oware::tablebase::{
    AnyTable, BuildParams, BuildReport, Certainty, EntryWidth, LayerStats, Outcome, Param, ParamError, Proof,
    SearchBudget, Tablebase,
};
use oware::{GameEnd, GameState, Pit};

/// Endgame tablebases for Oware Abapa: every position with up to N seeds.
#[derive(Parser)]
#[command(version, about = "Build, improve, probe, verify and export Oware Abapa endgame tablebases")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Worker threads (default: all cores).
    #[arg(short, long, global = true)]
    threads: Option<usize>,
}

#[derive(Subcommand)]
enum Command {
    /// Build (or resume building) a tablebase in a directory.
    Build(BuildArgs),
    /// Search chosen layers of a finished build again with a larger budget,
    /// keep every proven interval, carry the gains to the layers above and
    /// replace the outputs (resumable; rerun the same command after an
    /// interruption).
    Improve(ImproveArgs),
    /// Show the value of a state or game, and of each move.
    Probe {
        /// A tablebase file (.owtb, .owtb.zst) or a build directory.
        #[arg(long, short = 'b')]
        tablebase: PathBuf,
        /// A state `p0-…-p11-S-N-T` (pits A–F then a–f, South's and
        /// North's stores, the side to move, e.g.
        /// 0-0-0-0-1-2-0-0-0-1-0-2-23-19-S) or a game `STATE moves FfEe`.
        game: String,
    },
    /// Check every entry against its children, one ply deep.
    Verify {
        /// A tablebase file (.owtb, .owtb.zst, or the engine's layout) or a
        /// build directory (its layer files are checked too).
        #[arg(long, short = 'b')]
        tablebase: PathBuf,
        /// Also re-prove a random sample of search-proven entries with a
        /// second algorithm (the path-cut search).
        #[arg(long)]
        deep: bool,
        /// Search-proven entries re-proven per layer with --deep.
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        sample: u64,
        /// Nodes per path-cut question with --deep.
        #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
        deep_nodes: u64,
        /// Seed of the sample.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Layers above this many seeds are not sampled with --deep (a
        /// table that stops below it is sampled to its largest layer).
        #[arg(long, default_value_t = 7)]
        deep_max_seeds: u32,
    },
    /// Write the tablebase in the engine's "Oware Endgames" layout.
    Export {
        /// The tablebase to export: a file (.owtb, .owtb.zst) or a build
        /// directory.
        #[arg(long, short = 'b')]
        tablebase: PathBuf,
        /// The file to write (replaced atomically).
        #[arg(long, short)]
        out: PathBuf,
        /// Layout version: 1.0 (2014) or 2.0 (2021).
        #[arg(long, default_value = "2.0")]
        layout: String,
        /// A Date header field (left out by default: same input, same bytes).
        #[arg(long)]
        date: Option<String>,
    },
    /// Write a random sample of one layer, each position with its entry
    /// and every child's, as text: a reader with its own rules checks each
    /// sampled entry against its children without the table.
    Excerpt {
        /// The tablebase to sample: a file (.owtb, .owtb.zst) or a build
        /// directory.
        #[arg(long, short = 'b')]
        tablebase: PathBuf,
        /// The layer (seeds on the board) to sample.
        #[arg(long)]
        layer: u32,
        /// Positions to sample (at most the layer's).
        #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(1..))]
        count: u64,
        /// Seed of the sample (the same seed, the same excerpt).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The file to write (replaced atomically).
        #[arg(long, short)]
        out: PathBuf,
    },
    /// Check an excerpt: its checksum, its moves against the rules and
    /// every sampled entry against its children, one ply deep.
    CheckExcerpt {
        /// The excerpt (written by `endgames excerpt`).
        file: PathBuf,
    },
}

#[derive(Args)]
struct BuildArgs {
    /// The build directory (created if missing; resumed if it holds a build).
    #[arg(long)]
    dir: PathBuf,
    /// Largest number of seeds on the board: the largest layer built.
    #[arg(long, short = 'n', default_value_t = 12)]
    max_seeds: u32,
    /// Most nodes per threshold question inside cycle components (0: no
    /// threshold search).
    #[arg(long, default_value_t = SearchBudget::default().nodes_per_search)]
    search_nodes: u64,
    /// Layers above this many seeds get no threshold search.
    #[arg(long, default_value_t = SearchBudget::default().threshold_max_seeds)]
    search_max_seeds: u32,
    /// Layers below this many seeds get no search of either kind.
    #[arg(long, default_value_t = SearchBudget::default().min_seeds)]
    search_min_seeds: u32,
    /// Start from a proven table (.owtb or .owtb.zst): every layer it covers
    /// is intersected with its intervals (a disagreement stops the build),
    /// so its exact entries need no search.
    #[arg(long, value_name = "TABLE")]
    from: Option<PathBuf>,
    /// Longest path a search explores (plies, at most 4,096).
    #[arg(long, default_value_t = SearchBudget::default().max_path)]
    search_max_path: usize,
    /// Nodes per question of the path-cut search (0: none).
    #[arg(long, default_value_t = SearchBudget::default().cut_nodes)]
    cut_nodes: u64,
    /// Layers above this many seeds get no path-cut search.
    #[arg(long, default_value_t = SearchBudget::default().cut_max_seeds)]
    cut_max_seeds: u32,
    /// Skip the zstd-compressed copy.
    #[arg(long)]
    no_compress: bool,
    /// Write no tablebase.owtb: the layer files are the table (verify,
    /// probe, export and --from read the build directory), so the disk
    /// holds one full copy of it, not two. For the largest builds.
    #[arg(long)]
    no_plain_table: bool,
    /// Under mpirun: gather every layer to rank 0 for its cycle phases.
    /// By default a layer that gets no search is finished with its entries
    /// kept spread over the ranks, so that no rank holds a whole layer.
    #[arg(long)]
    gather_layers: bool,
    /// The default since layers kept spread take checkpoints (accepted for
    /// the commands written before).
    #[arg(long, hide = true, conflicts_with = "gather_layers")]
    keep_layers_spread: bool,
    #[command(flatten)]
    run: RunArgs,
}

/// How a long run reports and checkpoints.
#[derive(Args)]
struct RunArgs {
    /// Seconds between checkpoints inside a layer.
    #[arg(long, default_value_t = 120.0)]
    checkpoint_seconds: f64,
    /// No progress bars, per-layer lines or table of layers: only the
    /// one-line summary (and errors).
    #[arg(long, short)]
    quiet: bool,
}

impl RunArgs {
    fn checkpoint_every(&self) -> anyhow::Result<Duration> {
        seconds_argument("--checkpoint-seconds", self.checkpoint_seconds, true)
    }
}

#[derive(Args)]
struct ImproveArgs {
    /// A directory holding a finished build.
    #[arg(long)]
    dir: PathBuf,
    /// The layers to search again: one (`8`) or a range (`8-10`).
    #[arg(long, value_parser = parse_layers)]
    layers: (u32, u32),
    /// Most nodes per threshold question.
    #[arg(long, default_value_t = 10_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    search_nodes: u64,
    /// Longest path a search explores (plies, at most 4,096).
    #[arg(long, default_value_t = SearchBudget::default().max_path)]
    search_max_path: usize,
    /// Nodes per question of the path-cut search on what the threshold
    /// search leaves open (0: none).
    #[arg(long, default_value_t = 0)]
    cut_nodes: u64,
    /// Do not rewrite the zstd-compressed copy (unless the directory has one).
    #[arg(long)]
    no_compress: bool,
    #[command(flatten)]
    run: RunArgs,
}

/// Why a `--layers` value is refused.
#[derive(Debug)]
enum LayersError {
    /// A part that is not a seed count, as written.
    NotACount(String),
    /// A range whose first layer is above its last, as written.
    Decreasing(String),
}

impl std::fmt::Display for LayersError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayersError::NotACount(part) => write!(f, "'{part}' is not a seed count"),
            LayersError::Decreasing(text) => {
                write!(f, "'{text}': expected a layer or an increasing range of layers")
            }
        }
    }
}

impl std::error::Error for LayersError {}

/// `8` or `8-10` (how far layers go is the library's to check).
fn parse_layers(text: &str) -> Result<(u32, u32), LayersError> {
    let number = |t: &str| t.trim().parse::<u32>().map_err(|_| LayersError::NotACount(t.to_string()));
    let (first, last) = match text.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => (number(text)?, number(text)?),
    };
    if first > last {
        return Err(LayersError::Decreasing(text.to_string()));
    }
    Ok((first, last))
}

fn main() {
    run("endgames", || {
        let cli = common::parse_args::<Cli>("endgames");
        oware::cpu::use_threads(cli.threads).map_err(|e| anyhow::anyhow!("--threads: {e}"))?;
        match cli.command {
            Command::Build(args) => build_command(args),
            Command::Improve(args) => improve_command(args),
            Command::Probe { tablebase, game } => probe(&tablebase, &game),
            Command::Verify { tablebase, deep, sample, deep_nodes, seed, deep_max_seeds } => {
                let sample = DeepSample {
                    per_layer: sample as usize,
                    cut_nodes: deep_nodes,
                    seed,
                    sample_max_seeds: deep_max_seeds,
                };
                verify_command(&tablebase, deep.then_some(sample))
            }
            Command::Export { tablebase, out, layout, date } => {
                let version = EndgamesVersion::parse(&layout)
                    .with_context(|| format!("--layout {layout}: the engine's layouts are 1.0 and 2.0"))?;
                let table = open(&tablebase)?;
                export_engine(&table, table.path(), version, date.as_deref(), &out)?;
                let layers = oware::tablebase::engine::engine_layers(&table);
                let note = if layers < table.header().max_seeds {
                    format!(": the engine's index covers at most {ENGINE_MAX_SEEDS} seeds")
                } else {
                    String::new()
                };
                say!("wrote {} (Oware Endgames {layout}, layers 0 to {layers}{note})", out.display());
                Ok(())
            }
            Command::Excerpt { tablebase, layer, count, seed, out } => {
                let table = open(&tablebase)?;
                let excerpt = Excerpt::write(&table, layer, count, seed, &out)?;
                let moves: usize = excerpt.samples.iter().map(|s| s.children.len()).sum();
                say!(
                    "wrote {}: {} positions of layer {layer} with their {} children (seed {seed})",
                    out.display(),
                    thousands(excerpt.samples.len() as u64),
                    thousands(moves as u64)
                );
                Ok(())
            }
            Command::CheckExcerpt { file } => check_excerpt(&file),
        }
    });
}

fn build_command(args: BuildArgs) -> anyhow::Result<()> {
    let budget = SearchBudget {
        nodes_per_search: args.search_nodes,
        max_path: args.search_max_path,
        threshold_max_seeds: args.search_max_seeds,
        cut_nodes: args.cut_nodes,
        cut_max_seeds: args.cut_max_seeds,
        min_seeds: args.search_min_seeds,
    };
    // The library checks every value against its limit; the error names
    // the option that set it.
    let params = BuildParams::new(args.max_seeds, budget).map_err(|error| match &error {
        ParamError::TooLarge { param, .. } => anyhow::anyhow!("{}: {error}", build_option(*param)),
    })?;
    let options = BuildOptions {
        dir: args.dir,
        params,
        checkpoint_every: args.run.checkpoint_every()?,
        plain_table: !args.no_plain_table,
        compress: !args.no_compress,
        start_from: args.from,
        keep_layers_spread: !args.gather_layers,
    };
    let Some(report) = build_on_every_rank(&options, args.run.quiet)? else {
        return Ok(());
    };
    let seconds: f64 = report.layers.iter().map(|l| l.seconds.total).sum();
    let summary = print_layers(&report.layers, args.run.quiet);
    let table = match options.plain_table {
        true => options.dir.join(TABLEBASE_FILE).display().to_string(),
        false => format!("the layer files of {}", options.dir.display()),
    };
    say!("{summary}, {seconds:.1} s of layer work; tablebase in {table}");
    Ok(())
}

/// The option of `endgames build` that sets a parameter.
fn build_option(param: Param) -> &'static str {
    match param {
        Param::LargestLayer => "--max-seeds",
        Param::SearchNodesPerQuestion => "--search-nodes",
        Param::SearchMaxPath => "--search-max-path",
        Param::SearchMinSeeds => "--search-min-seeds",
        Param::ThresholdMaxSeeds => "--search-max-seeds",
        Param::CutNodesPerQuestion => "--cut-nodes",
        Param::CutMaxSeeds => "--cut-max-seeds",
    }
}

/// Builds in this process alone; rank 0 returns the report.
#[cfg(not(feature = "mpi"))]
fn build_on_every_rank(options: &BuildOptions, quiet: bool) -> anyhow::Result<Option<BuildReport>> {
    Ok(Some(oware::tablebase::build(options, &layer_log(quiet))?))
}

/// Builds with every rank of the MPI job this process belongs to (one rank
/// when started without `mpirun`): rank 0 logs and returns the report, the
/// others build quietly and return `None`.
#[cfg(feature = "mpi")]
fn build_on_every_rank(options: &BuildOptions, quiet: bool) -> anyhow::Result<Option<BuildReport>> {
    use oware::cluster::Communicator;
    let mut world = oware_mpi::MpiWorld::init()?;
    // For the checks: long messages in small pieces (scripts/mpi-check.sh).
    if let Some(bytes) = std::env::var("OWARE_MPI_PIECE_BYTES").ok().and_then(|v| v.parse().ok()) {
        world = world.with_piece_bytes(bytes);
    }
    let rank = world.rank();
    let report = oware::tablebase::build_across(&world, options, &layer_log(quiet || rank != 0))
        .with_context(|| format!("rank {rank} of {}", world.ranks()))?;
    Ok((rank == 0).then_some(report))
}

/// Where a build's log lines go: stderr, under the table header (shown
/// with the first line), unless quiet; progress bars on a terminal.
fn layer_log(quiet: bool) -> Console {
    Console::new(quiet).with_header(LayerStats::table_header())
}

/// Prints one row per layer (unless `quiet`); returns "P positions, E
/// exact (x%)".
fn print_layers(layers: &[LayerStats], quiet: bool) -> String {
    if !quiet {
        say!("{}", LayerStats::table_header());
        for layer in layers {
            say!("{}", layer.table_row());
        }
    }
    let positions: u64 = layers.iter().map(|l| l.positions).sum();
    let exact: u64 = layers.iter().map(|l| l.exact).sum();
    format!(
        "{} positions, {} exact ({:.1}%)",
        thousands(positions),
        thousands(exact),
        100.0 * exact as f64 / positions.max(1) as f64
    )
}

fn improve_command(args: ImproveArgs) -> anyhow::Result<()> {
    let (first, last) = args.layers;
    let budget = SearchBudget {
        nodes_per_search: args.search_nodes,
        max_path: args.search_max_path,
        min_seeds: first,
        threshold_max_seeds: last,
        cut_nodes: args.cut_nodes,
        cut_max_seeds: if args.cut_nodes > 0 { last } else { 0 },
    };
    // (`improve` checks the budget too; here the error names the option.)
    budget.check().map_err(|error| match &error {
        ParamError::TooLarge { param: Param::SearchMaxPath, .. } => {
            anyhow::anyhow!("--search-max-path: {error}")
        }
        ParamError::TooLarge { .. } => anyhow::anyhow!("--layers: {error}"),
    })?;
    let options = ImproveOptions {
        dir: args.dir,
        budget,
        checkpoint_every: args.run.checkpoint_every()?,
        compress: !args.no_compress,
    };
    let outcome = improve(&options, &layer_log(args.run.quiet))?;
    match outcome {
        Improvement::FinishedEarlierCommit { generation } => say!(
            "finished committing an interrupted pass (generation {generation}); run again for a new pass"
        ),
        Improvement::Committed { generation, pass } => {
            let summary = print_layers(&pass.layers, args.run.quiet);
            say!(
                "generation {generation}: {summary}; tablebase in {}",
                options.dir.join(TABLEBASE_FILE).display()
            );
        }
    }
    Ok(())
}

/// A tablebase file, or a finished build directory (its table file, or
/// its layer files when it wrote none).
fn open(path: &Path) -> anyhow::Result<Tablebase> {
    Ok(oware::tablebase::open::open_ours(path)?)
}

fn probe(path: &Path, game: &str) -> anyhow::Result<()> {
    let table = AnyTable::open(path)?;
    let game = parse_game(Some(game))?;
    let state: &GameState = &game.current;
    say!("state: {state}");
    say!("{}", state.board());
    if !table.is_checked() {
        say!("table: the engine's layout, which has no checksum: values are read as stored, unverified");
    }
    if state.is_over() {
        let [south, north] = state.final_score().unwrap_or([0, 0]);
        say!(
            "the game is over ({}): final score South {south}, North {north}",
            state.end().unwrap_or(GameEnd::Decided)
        );
        return Ok(());
    }
    let probe = table.probe_after_capture(state)?;
    let mover = probe.mover;
    let describe = |lower: u8, upper: u8| {
        if lower == upper {
            format!("{lower}")
        } else {
            format!("{lower}..{upper}")
        }
    };
    let how = match probe.certainty {
        Certainty::Checked(Proof::Retrograde) => "exact, retrograde".to_string(),
        Certainty::Checked(Proof::Bounds) => "exact, cycle bounds".to_string(),
        Certainty::Checked(Proof::Search) => "exact, cycle search".to_string(),
        Certainty::Checked(Proof::Open) => format!("not exact, estimate {}", probe.estimate),
        Certainty::Unverified if probe.is_exact() => "EXACT in the file".to_string(),
        Certainty::Unverified => format!("estimate {}", probe.estimate),
    };
    say!(
        "{mover:?} to move, {} seeds on the board: {mover:?} captures {} of them ({how})",
        probe.seeds,
        describe(probe.lower, probe.upper)
    );
    let result = |v: u8| {
        let (mine, theirs) = probe.final_scores(v);
        match probe.outcome(v) {
            Outcome::Win => format!("{mover:?} wins {mine}-{theirs}"),
            Outcome::Loss => format!("{mover:?} loses {mine}-{theirs}"),
            Outcome::Draw => format!("draw {mine}-{theirs}"),
        }
    };
    if probe.is_exact() {
        say!("result: {}", result(probe.lower));
    } else {
        say!("result: between '{}' and '{}'", result(probe.lower), result(probe.upper));
    }
    if probe.on_cycle {
        let note = if probe.holds_in(state) {
            "this state was reached by a capture (or starts play), so the value holds"
        } else {
            "the value holds only where the position is reached by a capture: this game has moves since the last capture that may repeat"
        };
        say!("on a cycle of game states: {note}");
    }
    say!("moves (value for {mover:?}):");
    let best: Vec<Pit> = probe.candidate_moves().map(|m| m.pit).collect();
    for m in &probe.moves {
        let marker = if best.contains(&m.pit) { "  best" } else { "" };
        let capture = if m.captured > 0 { format!(" captures {},", m.captured) } else { String::new() };
        let caveat =
            if m.holds_after_this_move { "" } else { " (if nothing repeats: the child is on a cycle)" };
        say!("  {}:{capture} {}{marker}{caveat}", m.letter, describe(m.lower, m.upper));
    }
    Ok(())
}

fn check_excerpt(file: &Path) -> anyhow::Result<()> {
    let text = std::fs::read(file).with_context(|| format!("{}", file.display()))?;
    let text = String::from_utf8(text)
        .map_err(|_| anyhow::anyhow!("{}: not an excerpt (not text)", file.display()))?;
    let excerpt = Excerpt::parse(&text).with_context(|| format!("{}", file.display()))?;
    let report = excerpt.check();
    let head = format!(
        "layer {} of table {:016x}: {} positions checked, ",
        excerpt.layer,
        excerpt.table_checksum,
        thousands(report.positions)
    );
    print_one_ply(&report, &head, "sampled entries fail the check")?;
    say!("check-excerpt: all sampled entries consistent with their children");
    Ok(())
}

/// Prints what a one-ply check found after `head`, and each failure
/// described; fails with "N `failed`" if any entry failed.
fn print_one_ply(report: &VerifyReport, head: &str, failed: &str) -> anyhow::Result<()> {
    say!(
        "{head}{} on no cycle re-derived from their children ({} exact), {} on cycles checked against their exits",
        thousands(report.rederived),
        thousands(report.exact_rederived),
        thousands(report.cycle_checked)
    );
    for example in &report.examples {
        say!("  failure: {example}");
    }
    if report.failures > 0 {
        bail!("{} {failed}", report.failures);
    }
    Ok(())
}

fn verify_command(path: &Path, deep: Option<DeepSample>) -> anyhow::Result<()> {
    let table = match AnyTable::open(path)? {
        AnyTable::Ours(table) => table,
        AnyTable::Engine(file) => {
            // No checksum and no bounds to re-derive: what can be checked is
            // the layout itself.
            if deep.is_some() {
                bail!("--deep re-proves our search proofs; the engine's layout records none");
            }
            file.verify()?;
            say!(
                "engine layout {}, layers 0 to {}: Positions agrees with the body and all {} entries are in range \
                 (the layout has no checksum, so a damaged value in range cannot be detected)",
                file.version().as_str(),
                file.max_seeds(),
                thousands(file.index_count())
            );
            return Ok(());
        }
    };
    table.verify_checksums()?;
    let header = table.header();
    let narrow = header.layers.iter().filter(|layer| layer.width == EntryWidth::Value).count();
    say!(
        "checksums: header, {} layers and body agree (format version {}; {narrow} layers in one byte a position, \
         every entry exact)",
        header.max_seeds + 1,
        header.version
    );
    if path.is_dir() {
        let layers = oware::tablebase::directory::check_layer_files(path)?;
        say!("the build directory's {layers} layer files and their statistics agree with its manifest");
    }
    let report = verify(&table);
    let head = format!("{} positions: ", thousands(report.positions));
    print_one_ply(&report, &head, "entries fail the one-ply check")?;
    say!("verify: all entries consistent");
    if let Some(sample) = deep {
        let nodes = sample.cut_nodes;
        let deep = verify_deep(&table, sample);
        let stops_below = if deep.last_layer < sample.sample_max_seeds {
            format!(" (the table's last layer; --deep-max-seeds {})", sample.sample_max_seeds)
        } else {
            String::new()
        };
        say!(
            "deep, layers 0 to {}{stops_below}: {} search-proven entries re-proven by the path-cut search \
             ({} nodes per question): {} confirmed, {} consistent but not closed, {} disagreements",
            deep.last_layer,
            thousands(deep.sampled),
            thousands(nodes),
            thousands(deep.confirmed),
            thousands(deep.undecided),
            deep.disagreements
        );
        for example in &deep.examples {
            say!("  disagreement: {example}");
        }
        if deep.disagreements > 0 {
            bail!("{} entries disagree with the second opinion", deep.disagreements);
        }
    }
    Ok(())
}
