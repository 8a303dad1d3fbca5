//! Growing a book: deterministic batches of leaves, their new children
//! evaluated by a pool of worker threads, results applied in batch order,
//! checkpoints at batch boundaries.
//!
//! One step:
//! 1. **Select** up to `B` distinct leaves ([`select_batch`]: descent along
//!    minimum priority, each chosen leaf in flight until the batch is
//!    applied). Batches are aligned: the batch that starts after `e`
//!    expansions holds `B − e mod B` leaves, so a resumed growth replays
//!    exactly the batches of an uninterrupted one. When the budget ends
//!    inside a batch, the whole batch is still selected: the leaves it has
//!    no room for stay pending (in flight, saved with the book) and the
//!    next growth expands them before selecting anything. Growing to `a`
//!    then to `b` therefore gives the book grown straight to `b`, for any
//!    `a` and `b`.
//! 2. **Plan**: every legal move of every chosen leaf, in batch order then
//!    pit order. A child already in the book is linked (a transposition); a
//!    new state gets a new node, numbered in order of first appearance. A
//!    new finished game gets its exact value; the others go to the workers.
//! 3. **Evaluate** the new states in parallel: jobs go to the workers over
//!    a crossbeam channel, results come back tagged with their index.
//! 4. **Apply** in batch order: new nodes, edges, visit counts along each
//!    descent, then values and priorities refreshed up the graph.
//!
//! Nothing in steps 1, 2 and 4 depends on which worker evaluated what or
//! when, and evaluators are deterministic, so a book grown with the same
//! parameters to the same number of expansions has the same bytes at any
//! thread count, however often it was interrupted.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam::channel::{unbounded, Receiver, Sender};

use super::dropout::{select_batch, Omega, Selection, INFINITE};
use super::error::BookError;
use super::eval::{terminal_value, Evaluation, EvaluationError, LeafEvaluator};
use super::graph::{BookGraph, NodeEval, NodeId, NodeKind};
use super::store::{usable_batch, BookDir, Parameters, MAX_BATCH};
use crate::game::GameState;
use crate::progress::Observer;
use crate::rank::{state_from_key, state_key};
use crate::text::thousands;

/// ω of a new book unless given: 0.04 plies per engine unit (a seed of
/// deviation weighs one ply).
pub const DEFAULT_OMEGA_MICRO: i64 = 40_000;
/// Leaves per batch of a new book unless given.
pub const DEFAULT_BATCH: u32 = 16;

/// When to stop.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Budget {
    /// Until the book holds this many expansions in all (deterministic).
    Expansions(u64),
    /// For this long (stops at the first batch boundary after it).
    Time(Duration),
}

/// What to grow and how.
#[derive(Clone, Debug)]
pub struct GrowOptions {
    /// The book directory, created if missing; a book already there is
    /// resumed (with the same parameters and evaluator).
    pub dir: PathBuf,
    /// ω; `None`: the book's own, or [`DEFAULT_OMEGA_MICRO`] for a new one.
    pub omega: Option<Omega>,
    /// Leaves per batch, 1 to [`super::store::MAX_BATCH`]; `None`: the
    /// book's own, or [`DEFAULT_BATCH`].
    pub batch: Option<u32>,
    /// Worker threads evaluating leaves (at least 1).
    pub threads: usize,
    /// When this run stops.
    pub budget: Budget,
    /// Least time between two checkpoints (zero: after every batch).
    pub checkpoint_every: Duration,
}

/// What a growth did.
#[derive(Clone, Debug, PartialEq)]
pub struct GrowReport {
    /// The book's parameters (ω, batch, evaluator) the growth used.
    pub parameters: Parameters,
    /// Expansions the book held when this run started.
    pub expansions_before: u64,
    /// Expansions it holds now.
    pub expansions: u64,
    /// Nodes it holds now.
    pub nodes: usize,
    /// Leaves evaluated by the workers in this run.
    pub evaluations: u64,
    /// The root's backed-up value, for South (to move at the start), in
    /// engine units.
    pub root_value: i32,
    /// Wall time of this run, in seconds.
    pub seconds: f64,
    /// Checkpoints this run wrote (the final save included).
    pub checkpoints: u64,
    /// Nothing is left to expand (every line ends in a finished game).
    pub complete: bool,
    /// The run started from a checkpoint.
    pub resumed: bool,
}

impl GrowReport {
    /// This run's expansions per hour of wall time.
    pub fn expansions_per_hour(&self) -> f64 {
        (self.expansions - self.expansions_before) as f64 * 3600.0 / self.seconds.max(1e-9)
    }
}

/// The parameters a growth uses: given ones must match a book's recorded
/// ones; missing ones come from the book or the defaults.
fn choose_parameters(
    options: &GrowOptions,
    evaluator: &dyn LeafEvaluator,
    found: Option<&Parameters>,
) -> Result<Parameters, BookError> {
    let default_omega = Omega::from_micro(DEFAULT_OMEGA_MICRO)
        .ok_or_else(|| BookError::BadOption("the default omega is out of range".into()))?;
    Ok(Parameters {
        omega: options.omega.or(found.map(|p| p.omega)).unwrap_or(default_omega),
        batch: options.batch.or(found.map(|p| p.batch)).unwrap_or(DEFAULT_BATCH),
        evaluator: evaluator.describe(),
    })
}

/// Grows (or resumes growing) the book in `options.dir`, reporting its
/// progress and a line per event worth telling to `observer`.
pub fn grow(
    options: &GrowOptions,
    evaluator: &dyn LeafEvaluator,
    observer: &dyn Observer,
) -> Result<GrowReport, BookError> {
    if options.batch.is_some_and(|batch| !usable_batch(batch)) {
        return Err(BookError::BadOption(format!("the batch size must be 1 to {MAX_BATCH}")));
    }
    let mut dir = BookDir::open(&options.dir, |found| choose_parameters(options, evaluator, found))?;
    let parameters = dir.manifest().parameters.clone();
    let started = Instant::now();
    let (mut graph, resumed) = match dir.load_graph()? {
        Some(graph) => {
            observer.line(&format!(
                "resuming from the checkpoint at {} expansions ({} nodes)",
                thousands(graph.expansions()),
                thousands(graph.len() as u64)
            ));
            (graph, true)
        }
        None => (new_book(parameters.omega, evaluator)?, false),
    };
    let expansions_before = graph.expansions();
    let batch_size = parameters.batch as u64;
    start_phase(observer, options, expansions_before);
    let mut evaluations = 0;
    let mut checkpoints = 0;
    let mut last_checkpoint = Instant::now();
    let threads =
        crate::cpu::thread_count(Some(options.threads)).map_err(|e| BookError::BadOption(e.to_string()))?;

    let outcome = std::thread::scope(|scope| -> Result<bool, BookError> {
        let (job_sender, job_receiver) = unbounded::<(usize, GameState)>();
        let (done_sender, done_receiver) = unbounded();
        for _ in 0..threads {
            let jobs = job_receiver.clone();
            let done = done_sender.clone();
            scope.spawn(move || worker(evaluator, jobs, done));
        }
        drop(done_sender);
        let pool = Pool { jobs: job_sender, done: done_receiver };
        loop {
            let done = graph.expansions();
            let room = match options.budget {
                Budget::Expansions(target) if done >= target => return Ok(false),
                Budget::Expansions(target) => (target - done) as usize,
                Budget::Time(limit) if started.elapsed() >= limit => return Ok(false),
                Budget::Time(_) => usize::MAX,
            };
            // The rest of a batch an earlier run stopped inside, or a new
            // aligned batch; what the budget has no room for waits, in
            // flight, for the next run.
            let mut batch = graph.take_pending();
            if batch.is_empty() {
                let aligned = batch_size - done % batch_size;
                batch = select_batch(&mut graph, aligned as usize);
            }
            if batch.is_empty() {
                return Ok(true);
            }
            graph.set_pending(batch.split_off(room.min(batch.len())));
            let plan = plan(&graph, &batch)?;
            let (results, evaluated) = pool.evaluate(&plan)?;
            evaluations += evaluated;
            apply(&mut graph, &batch, &plan, &results);
            update(observer, options, &graph, started);
            if last_checkpoint.elapsed() >= options.checkpoint_every {
                dir.save(&graph)?;
                checkpoints += 1;
                last_checkpoint = Instant::now();
                observer.line(&checkpoint_line(&graph, expansions_before, started));
            }
        }
    });
    // Workers stop once the pool (and its job sender) is dropped, which
    // happened when the scope's closure returned.
    // (Pending leaves are in flight: with them the root's ∞ means nothing.)
    let complete = outcome? || (graph.pending().is_empty() && graph.node(graph.root()).priority == INFINITE);
    let before_save = dir.manifest().checkpoint.map(|c| c.expansions);
    dir.save(&graph)?;
    if before_save != Some(graph.expansions()) {
        checkpoints += 1;
    }
    observer.finish();
    if complete {
        observer.line("the book is complete: every line ends in a finished game");
    }
    Ok(GrowReport {
        parameters,
        expansions_before,
        expansions: graph.expansions(),
        nodes: graph.len(),
        evaluations,
        root_value: graph.node(graph.root()).value,
        seconds: started.elapsed().as_secs_f64(),
        checkpoints,
        complete,
        resumed,
    })
}

/// A book holding the start of the game, evaluated.
fn new_book(omega: Omega, evaluator: &dyn LeafEvaluator) -> Result<BookGraph, BookError> {
    let start = GameState::start();
    let eval = evaluator.evaluate(&start).map_err(BookError::Evaluation)?;
    Ok(BookGraph::new(omega, state_key(&start), 0, NodeKind::Leaf, node_eval(&eval)))
}

/// What a node keeps of an evaluation (score clamped to ±1000).
pub fn node_eval(eval: &Evaluation) -> NodeEval {
    NodeEval {
        score: eval.score.clamp(-1000, 1000) as i16,
        depth: eval.depth.min(u16::MAX as u32) as u16,
        nodes: eval.nodes,
        best: eval.best_move.filter(|&p| p < 6).map(|p| p as u8),
    }
}

type Outcome = Result<Evaluation, EvaluationError>;

/// A worker: evaluates states until the job channel closes. A panicking
/// evaluator becomes an error, so the selector never waits forever.
fn worker(evaluator: &dyn LeafEvaluator, jobs: Receiver<(usize, GameState)>, done: Sender<(usize, Outcome)>) {
    for (index, state) in jobs {
        let outcome = catch_unwind(AssertUnwindSafe(|| evaluator.evaluate(&state))).unwrap_or_else(|_| {
            Err(EvaluationError { state: state.to_string(), reason: "the evaluator panicked".into() })
        });
        if done.send((index, outcome)).is_err() {
            return;
        }
    }
}

struct Pool {
    jobs: Sender<(usize, GameState)>,
    done: Receiver<(usize, Outcome)>,
}

impl Pool {
    /// Evaluates the plan's new open states: `results[i]` is the kind and
    /// valuation of `plan.new[i]` (finished games get their exact value).
    fn evaluate(&self, plan: &Plan) -> Result<(Vec<(NodeKind, NodeEval)>, u64), BookError> {
        let mut results: Vec<Option<(NodeKind, NodeEval)>> = plan
            .new
            .iter()
            .map(|new| {
                new.terminal.map(|value| {
                    let eval = NodeEval { score: value as i16, depth: 0, nodes: 0, best: None };
                    (NodeKind::Terminal, eval)
                })
            })
            .collect();
        let mut pending = 0u64;
        for (i, new) in plan.new.iter().enumerate() {
            if new.terminal.is_none() {
                self.jobs.send((i, new.state.clone())).map_err(|_| worker_gone())?;
                pending += 1;
            }
        }
        let mut errors = Vec::new();
        for _ in 0..pending {
            let (i, outcome) = self.done.recv().map_err(|_| worker_gone())?;
            match outcome {
                Ok(eval) => results[i] = Some((NodeKind::Leaf, node_eval(&eval))),
                Err(e) => errors.push((i, e)),
            }
        }
        // The error of the earliest state, whatever finished first.
        if let Some((_, e)) = errors.into_iter().min_by_key(|(i, _)| *i) {
            return Err(BookError::Evaluation(e));
        }
        let results: Option<Vec<_>> = results.into_iter().collect();
        Ok((results.ok_or_else(worker_gone)?, pending))
    }
}

fn worker_gone() -> BookError {
    BookError::Evaluation(EvaluationError {
        state: "a book leaf".into(),
        reason: "the evaluation workers stopped".into(),
    })
}

/// A state that enters the book with this batch.
struct NewNode {
    key: u64,
    state: GameState,
    /// The exact value of a finished game.
    terminal: Option<i32>,
}

enum ChildRef {
    Existing(NodeId),
    New(usize),
}

struct Plan {
    /// Per selected leaf, its moves in pit order.
    children: Vec<Vec<(u8, ChildRef)>>,
    new: Vec<NewNode>,
}

fn plan(graph: &BookGraph, batch: &[Selection]) -> Result<Plan, BookError> {
    let mut new: Vec<NewNode> = Vec::new();
    let mut new_index: HashMap<u64, usize> = HashMap::new();
    let mut children = Vec::with_capacity(batch.len());
    for selection in batch {
        let key = graph.node(selection.leaf).key;
        let state = state_from_key(key).ok_or_else(|| BookError::Corrupt {
            path: PathBuf::from("(memory)"),
            problem: format!("node {}: 0x{key:X} is not a state key", selection.leaf),
        })?;
        let mut moves = Vec::with_capacity(6);
        for pit in state.legal_moves() {
            let mut next = state.clone();
            next.play_unchecked(pit);
            // Book states carry no history: they are merged by key.
            let child = GameState::from_parts(next.pits(), next.stores(), next.to_move());
            let child_key = state_key(&child);
            let reference = if let Some(id) = graph.get(child_key) {
                ChildRef::Existing(id)
            } else if let Some(&i) = new_index.get(&child_key) {
                ChildRef::New(i)
            } else {
                new_index.insert(child_key, new.len());
                new.push(NewNode { key: child_key, terminal: terminal_value(&child), state: child });
                ChildRef::New(new.len() - 1)
            };
            moves.push((pit as u8, reference));
        }
        children.push(moves);
    }
    Ok(Plan { children, new })
}

fn apply(graph: &mut BookGraph, batch: &[Selection], plan: &Plan, results: &[(NodeKind, NodeEval)]) {
    let mut ids = Vec::with_capacity(plan.new.len());
    for (new, &(kind, eval)) in plan.new.iter().zip(results) {
        let stores = new.state.stores();
        ids.push(graph.add_node(new.key, stores[0] + stores[1], kind, eval));
    }
    let mut leaves = Vec::with_capacity(batch.len());
    for (selection, moves) in batch.iter().zip(&plan.children) {
        let resolved: Vec<(u8, NodeId)> = moves
            .iter()
            .map(|(pit, child)| match child {
                ChildRef::Existing(id) => (*pit, *id),
                ChildRef::New(i) => (*pit, ids[*i]),
            })
            .collect();
        graph.expand(selection.leaf, &resolved);
        graph.record_visits(selection);
        leaves.push(selection.leaf);
    }
    graph.refresh(&leaves);
}

fn start_phase(observer: &dyn Observer, options: &GrowOptions, done: u64) {
    match options.budget {
        Budget::Expansions(target) => {
            observer.phase("", target, "expansions");
            observer.position(done.min(target));
        }
        Budget::Time(limit) => observer.phase("", limit.as_secs().max(1), "s"),
    }
}

/// What a log (where no progress bar is drawn) keeps of a checkpoint: the
/// book's size and root, and this run's rate so far.
fn checkpoint_line(graph: &BookGraph, expansions_before: u64, started: Instant) -> String {
    let run = graph.expansions() - expansions_before;
    let per_hour = run as f64 * 3600.0 / started.elapsed().as_secs_f64().max(1e-9);
    format!(
        "checkpoint at {} expansions ({} nodes, root {:+}); this run: {} expansions, {} an hour",
        thousands(graph.expansions()),
        thousands(graph.len() as u64),
        graph.node(graph.root()).value,
        thousands(run),
        thousands(per_hour.round() as u64)
    )
}

fn update(observer: &dyn Observer, options: &GrowOptions, graph: &BookGraph, started: Instant) {
    let root = graph.node(graph.root()).value;
    let size = thousands(graph.len() as u64);
    match options.budget {
        Budget::Expansions(_) => {
            observer.detail(&format!("{size} nodes, root {root:+}"));
            observer.position(graph.expansions());
        }
        Budget::Time(_) => {
            observer.detail(&format!("{} exp, {size} nodes, root {root:+}", thousands(graph.expansions())));
            observer.position(started.elapsed().as_secs());
        }
    }
}
