//! The opening book: drop-out priorities on hand-built books, deterministic
//! and resumable growth (kill -9 included), exports through the `formats`
//! readers, the engine's own books through the probe logic, and matches.

use crate::common;

use std::collections::HashMap;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Scratch;
use oware::book::dropout::{descend, select_batch, PLY};
use oware::book::eval::Negamax;
use oware::book::export::{header_fields, to_doe, to_opening_book};
use oware::book::play::{run_match, BookRule, MatchOptions, Mover, Player};
use oware::book::probe::{best_move, book_line, probe, stats};
use oware::book::store::{self, checkpoint_path, MANIFEST_FILE};
use oware::book::{
    grow, AnyBook, BookError, BookGraph, BookSource, Budget, GrowOptions, NodeEval, NodeKind, Omega,
};
use oware::formats::doe::DoeBook;
use oware::formats::opening_book::{OpeningBook, NO_SCORE};
use oware::progress::Silent;
use oware::rank::state_key;
use oware::{Game, GameState};

// ------------------------------------------------------------ helpers

fn eval(score: i16) -> NodeEval {
    NodeEval { score, depth: 1, nodes: 1, best: None }
}

fn omega(w: f64) -> Omega {
    Omega::from_plies_per_unit(w).unwrap()
}

fn child(state: &GameState, letter: char) -> GameState {
    let mut next = state.clone();
    next.play_letter(letter).unwrap();
    GameState::from_parts(next.pits(), next.stores(), next.to_move())
}

fn options(dir: &Path, threads: usize, expansions: u64) -> GrowOptions {
    GrowOptions {
        dir: dir.to_path_buf(),
        omega: Some(omega(0.04)),
        batch: Some(8),
        threads,
        budget: Budget::Expansions(expansions),
        checkpoint_every: Duration::from_secs(3600),
    }
}

/// The manifest and the checkpoint it names.
fn book_files(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let manifest = fs::read(dir.join(MANIFEST_FILE)).unwrap();
    let record = store::read_manifest(dir).unwrap().unwrap().checkpoint.unwrap();
    let checkpoint = fs::read(checkpoint_path(dir, record.expansions)).unwrap();
    (manifest, checkpoint)
}

/// Asserts two books hold the same bytes (without printing them).
fn assert_same_book(a: &Path, b: &Path, note: &str) {
    let (ma, ca) = book_files(a);
    let (mb, cb) = book_files(b);
    assert_eq!(String::from_utf8_lossy(&ma), String::from_utf8_lossy(&mb), "{note}");
    assert!(ca == cb, "{note}: checkpoints differ ({} and {} bytes)", ca.len(), cb.len());
}

fn loaded_graph(dir: &Path) -> BookGraph {
    store::load(dir).unwrap().graph.unwrap()
}

fn reference(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference").join(name)
}

// ------------------------------------------------------------ priorities

/// The start expanded by hand: the move values for South are
/// A −50, B −20, C −10, D 0, E +5, F +30 (children valued from North's
/// view, so negated), then F expanded with North's move values
/// a −40, b −30, c −35, d −60, e −25, f −50.
fn hand_built(w: f64) -> BookGraph {
    let start = GameState::start();
    let south: HashMap<u64, i16> = "ABCDEF"
        .chars()
        .zip([50, 20, 10, 0, -5, -30])
        .map(|(l, v)| (state_key(&child(&start, l)), v))
        .collect();
    let mut graph = BookGraph::start(omega(w), eval(0));
    graph.expand_with(graph.root(), |s| eval(south[&state_key(s)])).unwrap();
    let after_f = child(&start, 'F');
    let north: HashMap<u64, i16> = "abcdef"
        .chars()
        .zip([40, 30, 35, 60, 25, 50])
        .map(|(l, v)| (state_key(&child(&after_f, l)), v))
        .collect();
    let f = graph.get(state_key(&after_f)).unwrap();
    graph.expand_with(f, |s| eval(north[&state_key(s)])).unwrap();
    graph
}

#[test]
fn priorities_follow_the_formula_from_each_movers_view() {
    let w = 0.04;
    let micro = omega(w).micro();
    let graph = hand_built(w);
    let start = GameState::start();
    let f = graph.get(state_key(&child(&start, 'F'))).unwrap();
    // North's node: values from North's view, best move e (−25).
    let node_f = graph.node(f);
    assert_eq!(node_f.kind, NodeKind::Expanded);
    assert_eq!(node_f.value, -25);
    // priority(F) = min over children of 0 + 1 + w·(−25 − m): e gives 1 ply.
    assert_eq!(node_f.priority, PLY);
    let terms: Vec<i64> =
        [-40, -30, -35, -60, -25, -50].iter().map(|m: &i64| PLY + micro * (-25 - m)).collect();
    assert_eq!(*terms.iter().min().unwrap(), node_f.priority);
    // The root (South): F is now worth +25 for South, E +5.
    let root = graph.node(graph.root());
    assert_eq!(root.value, 25);
    let expect_root = [(-50i64, 0i64), (-20, 0), (-10, 0), (0, 0), (5, 0), (25, node_f.priority)]
        .iter()
        .map(|&(m, p)| p + PLY + micro * (25 - m))
        .min()
        .unwrap();
    assert_eq!(root.priority, expect_root);
    // 2 plies through F, against 1 + 0.04·20 = 1.8 through E: E wins.
    assert_eq!(root.priority, PLY + 800_000);
    let selection = descend(&graph).unwrap();
    assert_eq!(graph.node(selection.leaf).key, state_key(&child(&start, 'E')));
    assert_eq!(selection.path, vec![(graph.root(), 4)]);
}

#[test]
fn omega_moves_growth_from_breadth_to_the_principal_line() {
    let start = GameState::start();
    let e = state_key(&child(&start, 'E'));
    let fe = state_key(&child(&child(&start, 'F'), 'e'));
    // ω = 0: breadth first, the first unexpanded root move (A).
    let flat = hand_built(0.0);
    assert_eq!(flat.node(flat.root()).priority, PLY);
    let leaf = descend(&flat).unwrap().leaf;
    assert_eq!(flat.node(leaf).key, state_key(&child(&start, 'A')));
    // Small ω: the near-best deviation E (1 + 0.01·20 = 1.2 plies < 2).
    let small = hand_built(0.01);
    assert_eq!(small.node(descend(&small).unwrap().leaf).key, e);
    // Large ω: deeper along the principal line F e (2 < 1 + 0.1·20 = 3).
    let large = hand_built(0.1);
    assert_eq!(large.node(large.root()).priority, 2 * PLY);
    let selection = descend(&large).unwrap();
    assert_eq!(large.node(selection.leaf).key, fe);
    assert_eq!(selection.path.len(), 2);
}

#[test]
fn batches_hold_distinct_leaves_and_release_restores_priorities() {
    let mut graph = hand_built(0.04);
    let before: Vec<(i32, i64)> = graph.nodes().iter().map(|n| (n.value, n.priority)).collect();
    let batch = select_batch(&mut graph, 20);
    // 5 root leaves + 6 leaves under F.
    assert_eq!(batch.len(), 11);
    let mut leaves: Vec<u32> = batch.iter().map(|s| s.leaf).collect();
    assert_eq!(graph.node(graph.root()).priority, i64::MAX);
    leaves.sort();
    leaves.dedup();
    assert_eq!(leaves.len(), 11);
    // The first choices follow the priorities: E, then F e.
    assert_eq!(batch[0].leaf, descend(&hand_built(0.04)).unwrap().leaf);
    let again = select_batch(&mut hand_built(0.04), 20);
    assert_eq!(batch, again, "selection is deterministic");
    graph.release(&leaves);
    let after: Vec<(i32, i64)> = graph.nodes().iter().map(|n| (n.value, n.priority)).collect();
    assert_eq!(before, after);
}

#[test]
fn finished_games_are_exact_and_never_expanded() {
    // South to move with 24 in store: F captures the 2 in a and wins.
    let state: GameState = "1-0-0-0-0-1-1-0-0-0-0-1-24-20-S".parse().unwrap();
    let w = omega(0.04);
    let mut graph = BookGraph::new(w, state_key(&state), 44, NodeKind::Leaf, eval(0));
    graph.expand_with(graph.root(), |_| eval(0)).unwrap();
    let won = graph.get(state_key(&child(&state, 'F'))).unwrap();
    let node = graph.node(won);
    assert_eq!(node.kind, NodeKind::Terminal);
    assert_eq!(node.value, -1000, "lost for North, to move there");
    assert_eq!(node.priority, i64::MAX);
    let root = graph.node(graph.root());
    assert_eq!(root.value, 1000);
    // Only A is open; it is 1000 units worse than the winning F.
    assert_eq!(root.priority, PLY + w.micro() * 1000);
    let selection = descend(&graph).unwrap();
    assert_eq!(graph.node(selection.leaf).key, state_key(&child(&state, 'A')));
}

// ------------------------------------------------------------ growth

#[test]
fn growth_is_the_same_with_one_or_two_threads() {
    let one = Scratch::new("threads-1");
    let two = Scratch::new("threads-2");
    let evaluator = Negamax::depth(3);
    let a = grow(&options(one.path(), 1, 300), &evaluator, &Silent).unwrap();
    let b = grow(&options(two.path(), 2, 300), &evaluator, &Silent).unwrap();
    assert_eq!(a.expansions, 300);
    assert_eq!((a.nodes, a.root_value), (b.nodes, b.root_value));
    assert_same_book(one.path(), two.path(), "1 and 2 threads");
    // Only manifest, checkpoint and lock remain.
    let mut names: Vec<String> = fs::read_dir(one.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["checkpoint-0000000300.owbook", "grow.lock", "manifest"]);
}

#[test]
fn resumed_growth_equals_uninterrupted_growth() {
    let whole = Scratch::new("whole");
    let parts = Scratch::new("parts");
    let evaluator = Negamax::depth(3);
    grow(&options(whole.path(), 2, 250), &evaluator, &Silent).unwrap();
    // 250 is inside a batch of 8: six leaves of it wait in the book.
    let pending = |dir: &Path| store::load(dir).unwrap().graph.unwrap().pending().len();
    assert_eq!(pending(whole.path()), 6);
    // Stops inside batches and on their boundaries, then resumes, with
    // other thread counts and checkpoints after every batch.
    for (threads, target) in [(1, 37), (2, 40), (1, 163), (2, 165), (1, 250)] {
        let mut o = options(parts.path(), threads, target);
        o.checkpoint_every = Duration::ZERO;
        if target != 37 {
            o.omega = None; // taken from the book
            o.batch = None;
        }
        let report = grow(&o, &evaluator, &Silent).unwrap();
        assert_eq!(report.expansions, target);
        assert_eq!(report.resumed, target != 37);
        assert_eq!(pending(parts.path()) as u64, (8 - target % 8) % 8, "after {target}");
    }
    assert_same_book(whole.path(), parts.path(), "resumed");
    // Growing to the same target again changes nothing.
    let report = grow(&options(parts.path(), 2, 250), &evaluator, &Silent).unwrap();
    assert_eq!(report.expansions_before, 250);
    assert_same_book(whole.path(), parts.path(), "grown again");
    // Both finish the batch and go on alike.
    for dir in [whole.path(), parts.path()] {
        grow(&options(dir, 1, 261), &evaluator, &Silent).unwrap();
    }
    assert_same_book(whole.path(), parts.path(), "grown on to 261");
    let straight = Scratch::new("straight");
    grow(&options(straight.path(), 2, 261), &evaluator, &Silent).unwrap();
    assert_same_book(whole.path(), straight.path(), "261 in one run");
}

/// The shipped books' leaves hold what today's search gives them. A change
/// to the search that moves a leaf's value (or its depth or node count)
/// would make the shipped files stale and a resumed growth mix two
/// evaluators: it fails here. (`data/book-10m` may be growing beside the
/// test: its checkpoint can be replaced between the manifest's read and
/// its own, so a failed load is tried again.)
#[test]
fn shipped_books_hold_what_the_search_gives_today() {
    use oware::book::eval::{LeafEvaluator, SearchEvaluator};
    let table = std::sync::Arc::new(
        oware::tablebase::Tablebase::open(Path::new("data/endgames-12.owtb.zst")).unwrap(),
    );
    for (dir, samples) in [("data/book", 8), ("data/book-10m", 1)] {
        let stored = (0..3)
            .find_map(|_| store::load(Path::new(dir)).ok())
            .unwrap_or_else(|| panic!("{dir} cannot be loaded"));
        let parameters = stored.manifest.parameters;
        let (nodes, _) = SearchEvaluator::parse_description(&parameters.evaluator).unwrap();
        let evaluator = SearchEvaluator::with_tablebase(nodes, table.clone());
        assert_eq!(evaluator.describe(), parameters.evaluator, "{dir}: grown with the shipped table");
        let graph = stored.graph.unwrap();
        let leaves: Vec<&oware::book::Node> =
            graph.nodes().iter().filter(|n| n.kind == NodeKind::Leaf).collect();
        for leaf in leaves.iter().step_by((leaves.len() / samples).max(1)).take(samples) {
            let state = oware::rank::state_from_key(leaf.key).unwrap();
            let now = evaluator.evaluate(&state).unwrap();
            let again = oware::book::grow::node_eval(&now);
            assert_eq!(again, leaf.eval, "{dir}: the leaf {state}");
        }
    }
}

/// Keeps the log lines a job reports.
#[derive(Default)]
struct LogLines(std::sync::Mutex<Vec<String>>);

impl oware::progress::Observer for LogLines {
    fn line(&self, text: &str) {
        self.0.lock().unwrap().push(text.to_string());
    }
}

#[test]
fn each_checkpoint_is_logged_with_the_book_size() {
    let dir = Scratch::new("logged");
    let evaluator = Negamax::depth(3);
    let mut o = options(dir.path(), 1, 40);
    o.checkpoint_every = Duration::ZERO;
    let log = LogLines::default();
    let report = grow(&o, &evaluator, &log).unwrap();
    let lines = log.0.into_inner().unwrap();
    // A checkpoint after each batch: the root alone, its six children, one
    // leaf to reach a multiple of 8, then batches of 8. The final save
    // repeats the last one and is not counted.
    let at = [1, 7, 8, 16, 24, 32, 40];
    assert_eq!(report.checkpoints, at.len() as u64);
    assert_eq!(lines.len(), at.len(), "{lines:?}");
    for (line, expansions) in lines.iter().zip(at) {
        let prefix = format!("checkpoint at {expansions} expansions (");
        assert!(line.starts_with(&prefix), "{line}");
        assert!(line.contains(&format!("this run: {expansions} expansions, ")), "{line}");
    }
    let last = &lines[at.len() - 1];
    let size = format!("({} nodes, root {:+})", report.nodes, report.root_value);
    assert!(last.contains(&size), "{last} lacks {size}");
}

#[test]
fn other_parameters_and_a_held_lock_are_refused() {
    let dir = Scratch::new("params");
    let evaluator = Negamax::depth(2);
    grow(&options(dir.path(), 1, 16), &evaluator, &Silent).unwrap();
    let before = book_files(dir.path());
    let mut other = options(dir.path(), 1, 32);
    other.omega = Some(omega(0.5));
    let error = grow(&other, &evaluator, &Silent).unwrap_err();
    assert!(matches!(error, BookError::Parameters { .. }), "{error}");
    let error = grow(&options(dir.path(), 1, 32), &Negamax::depth(3), &Silent).unwrap_err();
    assert!(matches!(error, BookError::Parameters { .. }), "{error}");
    let lock = fs::File::open(dir.join("grow.lock")).unwrap();
    lock.lock().unwrap();
    let error = grow(&options(dir.path(), 1, 32), &evaluator, &Silent).unwrap_err();
    assert!(matches!(error, BookError::Busy { .. }), "{error}");
    drop(lock);
    assert!(before == book_files(dir.path()), "the book changed");
}

#[test]
fn a_damaged_book_is_refused_and_left_as_it_is() {
    let dir = Scratch::new("damaged");
    let evaluator = Negamax::depth(2);
    grow(&options(dir.path(), 1, 40), &evaluator, &Silent).unwrap();
    let record = store::read_manifest(dir.path()).unwrap().unwrap().checkpoint.unwrap();
    let path = checkpoint_path(dir.path(), record.expansions);
    let good = fs::read(&path).unwrap();
    let manifest = fs::read(dir.join(MANIFEST_FILE)).unwrap();
    for damage in 0..3 {
        let mut bad = good.clone();
        match damage {
            0 => bad[good.len() / 2] ^= 0x10,
            1 => bad.truncate(good.len() - 3),
            _ => bad.clear(),
        }
        fs::write(&path, &bad).unwrap();
        let error = grow(&options(dir.path(), 1, 80), &evaluator, &Silent).unwrap_err();
        assert!(matches!(error, BookError::Corrupt { .. }), "{error}");
        assert!(error.to_string().contains("left as it is"), "{error}");
        assert!(store::load(dir.path()).is_err());
        assert!(fs::read(&path).unwrap() == bad, "never overwritten");
        assert!(fs::read(dir.join(MANIFEST_FILE)).unwrap() == manifest);
    }
    fs::write(&path, &good).unwrap();
    for text in ["", "oware-opening-book 1\nomega-micro-plies-per-unit x\n", "something else"] {
        fs::write(dir.join(MANIFEST_FILE), text).unwrap();
        let error = store::load(dir.path()).unwrap_err();
        assert!(matches!(error, BookError::Corrupt { .. }), "{error}");
        assert!(grow(&options(dir.path(), 1, 80), &evaluator, &Silent).is_err());
        assert_eq!(fs::read(dir.join(MANIFEST_FILE)).unwrap(), text.as_bytes());
    }
}

/// A first save killed between its checkpoint and its manifest leaves a
/// manifest that names no checkpoint beside the one checkpoint: the
/// growth adopts it. Any other unnamed checkpoint (two of them, or one
/// without a manifest) is damage, refused with nothing deleted; an adopted
/// checkpoint is checked like a named one.
#[test]
fn an_interrupted_first_save_is_adopted_and_other_unnamed_checkpoints_refused() {
    let dir = Scratch::new("lost-line");
    let evaluator = Negamax::depth(2);
    grow(&options(dir.path(), 1, 24), &evaluator, &Silent).unwrap();
    let before = book_files(dir.path());
    let saved = store::load(dir.path()).unwrap();
    let manifest = fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap();
    let without: String =
        manifest.lines().filter(|l| !l.starts_with("checkpoint")).map(|l| format!("{l}\n")).collect();
    let checkpoint = checkpoint_path(dir.path(), 24);
    let another = checkpoint_path(dir.path(), 16);
    let refused = |note: &str| {
        let error = store::load(dir.path()).unwrap_err();
        assert!(matches!(error, BookError::Corrupt { .. }), "{note}: {error}");
        let error = grow(&options(dir.path(), 1, 48), &evaluator, &Silent).unwrap_err();
        assert!(matches!(error, BookError::Corrupt { .. }), "{note}: {error}");
        error.to_string()
    };
    // No manifest: never taken for a new book.
    fs::remove_file(dir.join(MANIFEST_FILE)).unwrap();
    assert!(refused("no manifest").contains("checkpoint-0000000024.owbook"));
    // Two unnamed checkpoints: no interrupted save leaves that.
    fs::write(dir.join(MANIFEST_FILE), &without).unwrap();
    fs::write(&another, &before.1).unwrap();
    assert!(refused("two").contains("checkpoint-0000000016.owbook, checkpoint-0000000024.owbook"));
    assert!(fs::read(&another).unwrap() == before.1 && fs::read(&checkpoint).unwrap() == before.1);
    fs::remove_file(&another).unwrap();
    // The one unnamed checkpoint, damaged: adopted, then refused by its
    // own checks.
    let mut damaged = before.1.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x08;
    fs::write(&checkpoint, &damaged).unwrap();
    refused("damaged");
    assert!(fs::read(&checkpoint).unwrap() == damaged);
    assert_eq!(fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap(), without);
    // Intact: adopted, by a reader and by a growth.
    fs::write(&checkpoint, &before.1).unwrap();
    let adopted = store::load(dir.path()).unwrap();
    assert_eq!(adopted.manifest, saved.manifest);
    assert!(adopted.graph == saved.graph, "another graph adopted");
    assert_eq!(fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap(), without, "a reader wrote");
    // A growth names it in the manifest at once, even with nothing to do.
    grow(&options(dir.path(), 1, 24), &evaluator, &Silent).unwrap();
    assert_eq!(fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap(), manifest);
    grow(&options(dir.path(), 1, 48), &evaluator, &Silent).unwrap();
    let straight = Scratch::new("lost-line-straight");
    grow(&options(straight.path(), 1, 48), &evaluator, &Silent).unwrap();
    assert_same_book(dir.path(), straight.path(), "grown on from an adopted checkpoint");
}

#[test]
fn the_checkpoint_decoder_survives_any_bytes() {
    let dir = Scratch::new("decoder");
    grow(&options(dir.path(), 1, 24), &Negamax::depth(2), &Silent).unwrap();
    let (_, compressed) = book_files(dir.path());
    let raw = zstd::decode_all(&compressed[..]).unwrap();
    let (parameters, graph) = store::decode(&raw).unwrap();
    assert_eq!(store::encode(&graph, &parameters), raw);
    // Mutations with a valid inner checksum reach the structural checks.
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let body_len = raw.len() - 8;
    for round in 0..3000 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let mut bytes = raw[..body_len].to_vec();
        match round % 3 {
            0 => bytes[(rng as usize) % body_len] ^= 1 << ((rng >> 32) % 8),
            1 => bytes.truncate((rng as usize) % body_len),
            _ => bytes[(rng as usize) % body_len] = (rng >> 40) as u8,
        }
        let sum = oware::checksum::checksum(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        let _ = store::decode(&bytes);
    }
    assert!(store::decode(&raw[..raw.len() - 1]).is_err());
    assert!(store::decode(b"").is_err());
}

// ------------------------------------------------------------ kill -9

fn openings(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_openings")).args(args).output().expect("runs")
}

fn random_below(n: u64) -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(n);
    h.finish() % n.max(1)
}

#[test]
fn kill_nine_never_corrupts_and_resumes_to_the_same_bytes() {
    let whole = Scratch::new("kill-whole");
    let killed = Scratch::new("kill-killed");
    let args = |dir: &Path| -> Vec<String> {
        [
            "grow",
            "--book",
            &dir.to_string_lossy(),
            "--expansions",
            "1200",
            "--batch",
            "8",
            "--omega",
            "0.04",
            "--eval-depth",
            "5",
            "--threads",
            "2",
            "--checkpoint-seconds",
            "0",
            "--quiet",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_openings")).args(args(whole.path())).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let full = started.elapsed().as_millis() as u64;

    // Three kills at random moments of the remaining work; if a run ends
    // before its kill (a slow machine), start the killed book over.
    let mut kills = 0;
    let mut progress = Vec::new();
    let mut attempts = 0;
    while kills < 3 && attempts < 20 {
        attempts += 1;
        let done = progress.last().copied().unwrap_or(0);
        let remaining = full * (1200 - done) / 1200;
        let mut child = Command::new(env!("CARGO_BIN_EXE_openings"))
            .args(args(killed.path()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let wait = remaining / 10 + random_below(remaining / 2);
        std::thread::sleep(Duration::from_millis(wait));
        if child.try_wait().unwrap().is_some() {
            fs::remove_dir_all(killed.path()).unwrap();
            (kills, progress) = (0, Vec::new());
            continue;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        kills += 1;
        // Whatever the moment, the book reads back (or has no manifest yet).
        let mut at = 0;
        if killed.join(MANIFEST_FILE).exists() {
            let out = openings(&["stats", "--book", &killed.path().to_string_lossy()]);
            assert!(
                out.status.success(),
                "kill {kills} after {wait} ms: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            at = store::read_manifest(killed.path()).unwrap().unwrap().checkpoint.map_or(0, |c| c.expansions);
        }
        progress.push(at);
    }
    assert_eq!(kills, 3, "the growth kept finishing before its kill ({full} ms)");
    eprintln!("uninterrupted: {full} ms; checkpoints found after the kills: {progress:?}");
    assert!(progress.iter().any(|&p| p > 0 && p < 1200), "no kill landed mid-growth: {progress:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_openings")).args(args(killed.path())).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_same_book(whole.path(), killed.path(), &format!("killed with checkpoints at {progress:?}"));
    for dir in [&whole, &killed] {
        let out = openings(&[
            "export",
            "--book",
            &dir.path().to_string_lossy(),
            "--classic",
            &dir.join("book.bin").to_string_lossy(),
            "--doe",
            &dir.join("doe.bin").to_string_lossy(),
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    for name in ["book.bin", "doe.bin"] {
        assert!(fs::read(whole.join(name)).unwrap() == fs::read(killed.join(name)).unwrap(), "{name}");
    }
}

// ------------------------------------------------------------ exports

#[test]
fn exports_round_trip_through_the_format_readers() {
    let dir = Scratch::new("export");
    let report = grow(&options(dir.path(), 2, 120), &Negamax::depth(3), &Silent).unwrap();
    let stored = store::load(dir.path()).unwrap();
    let graph = stored.graph.unwrap();
    let fields = header_fields(&graph, &stored.manifest.parameters);
    let classic_path = dir.join("book.bin");
    let doe_path = dir.join("doe.bin");
    let written = oware::book::export::export(dir.path(), Some(&classic_path), Some(&doe_path)).unwrap();

    let classic = OpeningBook::open(&classic_path).unwrap();
    assert!(classic == to_opening_book(&graph, &fields).unwrap());
    let mut bytes = Vec::new();
    classic.write_to(&mut bytes).unwrap();
    assert!(bytes == fs::read(&classic_path).unwrap());
    assert_eq!(classic.len() as u64, report.expansions);
    assert_eq!(written.entries_2014, classic.len());
    assert_eq!(classic.header().get("Expansions"), Some("120"));
    for entry in classic.iter() {
        let state = entry.state().unwrap();
        let id = graph.get(entry.key).unwrap();
        for pit in 0..6 {
            assert_eq!(state.legal_moves().contains(pit), entry.scores[pit] != NO_SCORE);
        }
        let best = graph.best_edge(id).unwrap();
        assert_eq!(entry.best().unwrap(), (best.pit as usize, graph.node(id).value as i16));
    }
    let start = classic.get_state(&GameState::start()).unwrap();
    assert_eq!(start.best().unwrap().1 as i32, graph.node(graph.root()).value);

    let doe = DoeBook::open(&doe_path).unwrap();
    assert!(doe == to_doe(&graph, &fields).unwrap());
    let mut bytes = Vec::new();
    doe.write_to(&mut bytes).unwrap();
    assert!(bytes == fs::read(&doe_path).unwrap());
    let edges: usize = graph.nodes().iter().map(|n| n.edges.len()).sum();
    assert_eq!(doe.len(), edges);
    for entry in doe.iter() {
        let mut state = oware::rank::state_from_key(entry.parent).unwrap();
        assert_eq!(entry.mover(), state.to_move());
        state.play(entry.relative_pit()).unwrap();
        assert_eq!(state_key(&state), entry.child);
        assert!(entry.count >= 1);
    }
    // The parent's best move has the lowest DOE score.
    let root_children = doe.children_of_state(&GameState::start());
    let lowest = root_children.iter().min_by(|a, b| a.score.total_cmp(&b.score)).unwrap();
    assert_eq!(-lowest.score as i32, graph.node(graph.root()).value);
    // All three sources agree on the book moves of every expanded node.
    let from_classic = AnyBook::Classic(classic);
    let from_doe = AnyBook::Doe(doe);
    for node in graph.nodes().iter().filter(|n| n.kind == NodeKind::Expanded).take(50) {
        let state = oware::rank::state_from_key(node.key).unwrap();
        let ours = graph.book_moves(&state);
        for other in [from_classic.source(), from_doe.source()] {
            let theirs = other.book_moves(&state);
            let pits = |m: &[oware::book::BookMove]| m.iter().map(|m| (m.pit, m.score)).collect::<Vec<_>>();
            assert_eq!(pits(&ours), pits(&theirs));
        }
    }
    // Both layouts to one file (however it is spelled) is refused, and
    // nothing is written.
    let one = dir.join("one.bin");
    let spelled_apart = dir.path().join(".").join("one.bin");
    for (a, b) in [(&one, &one), (&one, &spelled_apart)] {
        let error = oware::book::export::export(dir.path(), Some(a), Some(b)).unwrap_err();
        assert!(matches!(error, BookError::WouldOverwrite { .. }), "{error}");
        assert!(!one.exists());
    }
    let error =
        oware::book::export::export(dir.path(), Some(&classic_path), Some(&classic_path)).unwrap_err();
    assert!(error.to_string().contains("2014 layout"), "{error}");
}

/// The engine's DOE pick rule, followed along our book's principal line:
/// it stays in the book as long as the line does (unless the line turns so
/// bad for the mover that the engine would leave its own book too), and
/// picks only our best move or moves within its 13.5-unit window.
#[test]
fn the_engine_follows_our_doe_export_along_the_principal_line() {
    use oware::formats::doe::EnginePick;
    let dir = Scratch::new("doe-follow");
    grow(&options(dir.path(), 2, 300), &Negamax::depth(3), &Silent).unwrap();
    let stored = store::load(dir.path()).unwrap();
    let graph = stored.graph.unwrap();
    let doe = to_doe(&graph, &header_fields(&graph, &stored.manifest.parameters)).unwrap();
    // The engine's rule, and the same with its threshold switched off (its
    // `--threshold` option): this small book's evaluator rates the start
    // more than a seed behind, where the engine leaves even its own book.
    let engine = EnginePick::default();
    let no_threshold = EnginePick { threshold: 2000.0, ..engine };
    let mut state = GameState::start();
    let line = graph.principal_line(graph.root());
    assert!(line.len() >= 6, "a principal line of {} plies", line.len());
    // The depth of book a move carries is its principal line's length.
    let first = graph.best_edge(graph.root()).unwrap();
    assert_eq!(graph.move_depth(first) as usize, line.len());
    let start_moves = graph.book_moves(&GameState::start());
    let best = start_moves.iter().find(|m| m.pit == first.pit as usize).unwrap();
    assert_eq!(best.depth, Some(line.len() as u32));
    for (id, edge) in &line {
        assert_eq!(state_key(&state), graph.node(*id).key);
        let best = graph.move_value(edge) as f64;
        let choices = doe.engine_choices(&state, &no_threshold);
        assert!(choices.iter().any(|&(pit, _)| pit == edge.pit as usize), "{state}: {choices:?}");
        for &(pit, _) in &choices {
            let e = graph.node(*id).edges.iter().find(|e| e.pit as usize == pit).unwrap();
            assert!(graph.move_value(e) as f64 >= best - no_threshold.disturbance - 1.0, "{state}: {pit}");
        }
        // Our doubt term is at most 1 unit: the threshold is our value's.
        let stays = !doe.engine_choices(&state, &engine).is_empty();
        if best >= -(engine.threshold - 1.0) {
            assert!(stays, "{state}: {best}");
        } else if best < -engine.threshold {
            assert!(!stays, "{state}: {best}");
        }
        state.play(edge.pit as usize).unwrap();
    }
    // A leaf edge's count is one expansion's: its doubt 1000/√count is 1.
    assert!(doe.iter().all(|e| e.count % oware::book::export::DOE_COUNT_PER_EXPANSION == 0));
    assert!(doe.iter().any(|e| e.count == oware::book::export::DOE_COUNT_PER_EXPANSION));
}

/// The engine's own DOE book under its own rule: from the start only F
/// survives (B's 28.07 + 1000/√25,542 = 34.3 is over the threshold 27).
#[test]
fn the_engines_rule_on_its_own_doe_book_plays_f() {
    use oware::formats::doe::EnginePick;
    let doe = DoeBook::from_bytes(
        &zstd::stream::decode_all(&fs::read(reference("aalina-2022-roots.bin.zst")).unwrap()[..]).unwrap(),
    )
    .unwrap();
    assert_eq!(doe.engine_choices(&GameState::start(), &EnginePick::default()), [(5, 1_289_084)]);
    // With no threshold, the window of 13.5 above F's −0.04 still keeps F alone.
    let wide = EnginePick { threshold: 2000.0, ..EnginePick::default() };
    assert_eq!(doe.engine_choices(&GameState::start(), &wide), [(5, 1_289_084)]);
    let wider = EnginePick { threshold: 2000.0, disturbance: 40.0, ..EnginePick::default() };
    let pits: Vec<usize> = doe.engine_choices(&GameState::start(), &wider).iter().map(|c| c.0).collect();
    assert_eq!(pits, [1, 2, 3, 4, 5], "A's 52.49 + 10.9 is over −0.04 + 40");
}

#[test]
fn the_engines_books_parse_and_give_plausible_start_moves() {
    for name in ["aalina-2014-book.bin.zst", "aalina-2022-roots.bin.zst"] {
        let book = AnyBook::open(&reference(name)).unwrap();
        let game: Game = "4-4-4-4-4-4-4-4-4-4-4-4-0-0-S".parse().unwrap();
        let report = probe(&book, &game);
        assert_eq!(report.moves.len(), 6, "{name}");
        assert_eq!(best_move(&report.moves).unwrap().pit, 5, "{name}: F");
        assert_eq!(report.depth, Some(0));
        assert!(report.line.len() >= 4, "{name}: {:?}", report.line);
        assert_eq!(report.line[0].0, 'F');
        // One ply deeper along the book line, still in book.
        let after: Game =
            format!("4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves F{}", report.line[1].0).parse().unwrap();
        let deeper = probe(&book, &after);
        assert_eq!(deeper.depth, Some(2), "{name}");
        assert_eq!(deeper.game_in_book, Some((2, 2)));
        assert!(!deeper.moves.is_empty());
    }
    let book = AnyBook::open(&reference("aalina-2014-book.bin.zst")).unwrap();
    let scores: Vec<f64> = book.source().book_moves(&GameState::start()).iter().map(|m| m.score).collect();
    assert_eq!(scores, [-72.0, -34.0, -20.0, -37.0, -35.0, 5.0]);
    let doe = AnyBook::open(&reference("aalina-2022-roots.bin.zst")).unwrap();
    let f = doe.source().book_moves(&GameState::start())[5];
    assert_eq!(f.count, Some(1_289_084));
    assert!((f.score - 0.92).abs() < 0.01);
    // Formats are told apart by their bytes, not their names: compressed
    // under a plain name, plain under a compressed name, or not a book.
    let scratch = Scratch::new("sniff");
    let compressed = fs::read(reference("aalina-2014-book.bin.zst")).unwrap();
    fs::write(scratch.path().join("book.bin"), &compressed).unwrap();
    let plain = zstd::stream::decode_all(&compressed[..]).unwrap();
    fs::write(scratch.path().join("book.zst"), &plain).unwrap();
    for name in ["book.bin", "book.zst"] {
        let sniffed = AnyBook::open(&scratch.path().join(name)).unwrap();
        assert!(!sniffed.is_checked());
        assert_eq!(sniffed.book_moves(&GameState::start()).len(), 6, "{name}");
    }
    fs::write(scratch.path().join("notes.txt"), b"Oware? no").unwrap();
    let refused = AnyBook::open(&scratch.path().join("notes.txt")).unwrap_err();
    assert!(matches!(refused, oware::book::BookError::UnknownFormat { .. }), "{refused}");
    // The probe command reads them too.
    let out = openings(&["probe", "--book", &reference("aalina-2014-book.bin.zst").to_string_lossy()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("* F       +5"), "{text}");
}

#[test]
fn probe_and_stats_describe_our_books() {
    let dir = Scratch::new("probe");
    grow(&options(dir.path(), 1, 64), &Negamax::depth(3), &Silent).unwrap();
    let graph = loaded_graph(dir.path());
    let s = stats(&graph, &store::load(dir.path()).unwrap().manifest.parameters);
    assert_eq!(s.expansions, 64);
    assert_eq!(s.expanded, 64);
    assert_eq!(s.nodes, s.expanded + s.leaves + s.terminal);
    assert_eq!(s.profile[0].expanded, 1);
    assert_eq!(s.root_moves.len(), 6);
    assert!(!s.principal_line.is_empty());
    let line = book_line(&graph, &GameState::start());
    assert_eq!(line.len(), s.principal_line.len());
    let out = openings(&["stats", "--book", &dir.path().to_string_lossy()]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("64 expansions"));
    let game = format!("4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves {}", s.principal_line[0].0);
    let out = openings(&["probe", "--book", &dir.path().to_string_lossy(), &game]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("depth in book: 1 plies"), "{text}");
    // Bad input: one line, non-zero exit.
    // A book grown with a table needs the table to resume; an engine
    // endgame file is no table to grow with.
    let fresh = dir.join("fresh").to_string_lossy().to_string();
    let engine_table = reference("aalina-2021-leaves.bin.zst").to_string_lossy().to_string();
    let with_table = dir.join("with-table").to_string_lossy().to_string();
    let grown = openings(&[
        "grow",
        "--book",
        &with_table,
        "--expansions",
        "16",
        "--leaf-nodes",
        "100",
        "--tablebase",
        "data/endgames-12.owtb.zst",
        "--quiet",
    ]);
    assert!(grown.status.success(), "{}", String::from_utf8_lossy(&grown.stderr));
    for args in [
        vec!["probe", "--book", "/nonexistent/book"],
        vec!["stats", "--book", "/nonexistent/book"],
        vec!["probe", "--book", &dir.path().to_string_lossy(), "4-4-4-S"],
        vec!["grow", "--book", &dir.path().to_string_lossy(), "--expansions", "70", "--omega=-1"],
        vec!["leaf-study", "--book", &dir.path().to_string_lossy(), "--budgets", "500,300"],
        vec!["leaf-study", "--book", &dir.path().to_string_lossy(), "--sample", "0"],
        vec![
            "grow",
            "--book",
            &fresh,
            "--expansions",
            "16",
            "--search-nodes",
            "100",
            "--tablebase",
            &engine_table,
        ],
        vec!["grow", "--book", &with_table, "--expansions", "32"],
    ] {
        let out = openings(&args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("openings: error: "), "{err}");
    }
}

// ------------------------------------------------------------ matches

#[test]
fn a_short_match_runs_and_counts() {
    let dir = Scratch::new("match");
    grow(&options(dir.path(), 1, 40), &Negamax::depth(3), &Silent).unwrap();
    let book = AnyBook::open(dir.path()).unwrap();
    let engine = Negamax::nodes(300);
    let rule = BookRule::default();
    let a = Player {
        name: "with book".into(),
        mover: Mover::Evaluator(&engine),
        book: Some(book.source()),
        rule,
    };
    let b = Player { name: "without".into(), mover: Mover::Evaluator(&engine), book: None, rule };
    let options = MatchOptions { openings: vec![vec![]], seed: 1, max_plies: 400 };
    let report = run_match(&a, &b, &options, &|_| {}).unwrap();
    assert_eq!(report.games.len(), 2);
    assert_eq!(report.wins + report.draws + report.losses, 2);
    assert!(report.games[0].a_south && !report.games[1].a_south);
    assert!(report.games.iter().all(|g| g.book_moves[0] > 0 && g.book_moves[1] == 0));
    assert!(report.games.iter().all(|g| g.score[0] + g.score[1] <= 48 && g.end.is_some()));
    let again = run_match(&a, &b, &options, &|_| {}).unwrap();
    assert_eq!(report, again, "matches are reproducible");
    // Our search with a tablebase on one side, two openings.
    let table = oware::tablebase::open_any(std::path::Path::new("data/endgames-12.owtb.zst")).unwrap();
    let search = |tablebase| Mover::Search { limits: oware::search::Limits::nodes(2_000), tablebase };
    let a =
        Player { name: "book and table".into(), mover: search(Some(table)), book: Some(book.source()), rule };
    let b = Player { name: "bare".into(), mover: search(None), book: None, rule };
    let options = MatchOptions { openings: vec![vec![0, 1], vec![5, 5]], seed: 3, max_plies: 300 };
    let report = run_match(&a, &b, &options, &|_| {}).unwrap();
    assert_eq!(report.games.len(), 4);
    assert_eq!(report.games.iter().map(|g| g.opening).collect::<Vec<_>>(), [0, 0, 1, 1]);
    assert!(report.games[2].moves.starts_with("Ff"), "{}", report.games[2].moves);
    assert_eq!(report, run_match(&a, &b, &options, &|_| {}).unwrap(), "node limits: reproducible");
    let out = Command::new(env!("CARGO_BIN_EXE_match"))
        .args([
            "--openings",
            "3",
            "--opening-plies",
            "2",
            "--nodes",
            "200",
            "--book-a",
            &dir.path().to_string_lossy(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("over 6 games"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The same openings with and without A's book, games written, then
    // compared game by game.
    let play = |book: bool, games: &Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_match"));
        command.args(["--openings", "3", "--opening-plies", "2", "--nodes", "200", "--games"]).arg(games);
        if book {
            command.arg("--book-a").arg(dir.path());
        }
        let out = command.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        oware::book::games_file::read(games).unwrap()
    };
    let (with, without) = (dir.join("with.games"), dir.join("without.games"));
    let (first, second) = (play(true, &with), play(false, &without));
    assert_eq!(first.len(), 6);
    let paired = oware::book::games_file::paired_difference(&first, &second).unwrap();
    let mean = |games: &[oware::book::play::GameRecord]| games.iter().map(|g| g.points_a).sum::<f64>() / 6.0;
    assert!((paired.difference - (mean(&first) - mean(&second))).abs() < 1e-12);
    let out =
        Command::new(env!("CARGO_BIN_EXE_match")).arg("--compare").arg(&with).arg(&without).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("over 6 games"), "{stdout}");
    assert!(stdout.contains(&format!("{:+.3} ± ", paired.difference)), "{stdout}");
    // The same pair twice, pooled, is the pair over twice the games; an
    // odd number of files is refused.
    let out = Command::new(env!("CARGO_BIN_EXE_match"))
        .arg("--compare")
        .args([&with, &without, &with, &without])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("over 12 games"), "{stdout}");
    assert!(stdout.contains(&format!("{:+.3} ± ", paired.difference)), "{stdout}");
    let out = Command::new(env!("CARGO_BIN_EXE_match"))
        .arg("--compare")
        .args([&with, &without, &with])
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("pairs of games files"));
    // A games file is never written over a book's files, and an opening
    // longer than the game is refused before anything is played.
    let refused = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_match"))
            .args(["--openings", "1", "--nodes", "200"])
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let manifest = dir.join(MANIFEST_FILE);
    let manifest_before = fs::read(&manifest).unwrap();
    let error = refused(&["--games", &manifest.to_string_lossy()]);
    assert!(error.contains("will not write"), "{error}");
    assert_eq!(fs::read(&manifest).unwrap(), manifest_before);
    let error = refused(&["--max-plies", "4"]);
    assert!(error.contains("--max-plies must be above --opening-plies"), "{error}");
}

/// The shortest line of book moves from node `from` to node `to`, if any.
fn book_path(graph: &BookGraph, from: u32, to: u32) -> Option<Vec<u8>> {
    let mut came_by: HashMap<u32, (u32, u8)> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(id) = queue.pop_front() {
        if id == to {
            let mut line = Vec::new();
            let mut at = to;
            while at != from {
                let (parent, pit) = came_by[&at];
                line.push(pit);
                at = parent;
            }
            line.reverse();
            return Some(line);
        }
        for edge in &graph.node(id).edges {
            if edge.child != from && !came_by.contains_key(&edge.child) {
                came_by.insert(edge.child, (id, edge.pit));
                queue.push_back(edge.child);
            }
        }
    }
    None
}

/// An endgame book expanded to the end of every line (3 seeds on a board
/// with cycles of quiet moves, where repetition edges appear). Each
/// repetition edge is a repetition the rules declare, in a game that came
/// through its repeated state. Each move's value is the result where its
/// principal line ends (a finished game or a repetition edge), and the
/// move is marked exactly when the rules, playing that line in the game at
/// hand, do not end it that way: games with no history, and games that
/// came to the probed state from a state a repetition edge returns to.
#[test]
fn moves_whose_value_is_not_the_games_are_marked() {
    use oware::rank::state_from_key;
    use oware::Side;

    let root = GameState::from_parts([0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1], [22, 23], Side::South);
    let mut graph = BookGraph::new(omega(0.04), state_key(&root), 45, NodeKind::Leaf, eval(0));
    loop {
        let leaves: Vec<u32> =
            (0..graph.len() as u32).filter(|&id| graph.node(id).kind == NodeKind::Leaf).collect();
        if leaves.is_empty() {
            break;
        }
        assert!(graph.len() < 100_000, "the endgame does not end");
        for id in leaves {
            graph.expand_with(id, |_| eval(0)).unwrap();
        }
    }
    let nodes = graph.len() as u32;
    let edges = || (0..nodes).flat_map(|id| graph.node(id).edges.iter().map(move |e| (id, *e)));

    // Every repetition edge, replayed from its repeated state.
    let targets: Vec<u32> = edges().filter(|(_, e)| e.repetition.is_some()).map(|(_, e)| e.child).collect();
    for (from, edge) in edges().filter(|(_, e)| e.repetition.is_some()) {
        let mut game = state_from_key(graph.node(edge.child).key).unwrap();
        let mover = game.to_move();
        let mut line =
            book_path(&graph, edge.child, from).expect("a repetition edge's child reaches its node");
        line.push(edge.pit);
        for &pit in &line {
            assert_eq!(game.end(), None, "the line ends before it is played: {line:?}");
            game.play(pit as oware::Pit).unwrap();
        }
        assert_eq!(game.end(), Some(oware::GameEnd::Repetition), "{line:?}");
        let score = game.final_score().unwrap();
        let expected = match oware::Outcome::of_scores(score[mover.index()], score[mover.other().index()]) {
            oware::Outcome::Win => 1000,
            oware::Outcome::Draw => 0,
            oware::Outcome::Loss => -1000,
        };
        assert_eq!(edge.repetition, Some(expected), "{line:?}");
    }

    // The probed games: each node with no history, and each node reached
    // from every state a repetition edge returns to that reaches it.
    let mut games = Vec::new();
    for id in 0..nodes {
        games.push((id, state_from_key(graph.node(id).key).unwrap()));
        for &target in &targets {
            if let Some(path) = book_path(&graph, target, id).filter(|p| !p.is_empty()) {
                let mut game = state_from_key(graph.node(target).key).unwrap();
                for pit in path {
                    game.play(pit as oware::Pit).unwrap();
                }
                games.push((id, game));
            }
        }
    }
    let (mut marked, mut repeats_as_counted, mut uncounted) = (0, 0, 0);
    for (id, game) in &games {
        let moves = graph.book_moves(game);
        assert_eq!(moves.len(), graph.node(*id).edges.len());
        for (edge, m) in graph.node(*id).edges.iter().zip(&moves) {
            // The book's principal line from the move.
            let mut line = vec![*edge];
            if edge.repetition.is_none() {
                line.extend(graph.principal_line(edge.child).into_iter().map(|(_, e)| e));
            }
            let last = *line.last().unwrap();
            if last.repetition.is_none() {
                assert_eq!(graph.node(last.child).kind, NodeKind::Terminal);
            }
            // Negamax along the line: the move's value is ± the last one's.
            let sign = if line.len() % 2 == 1 { 1 } else { -1 };
            assert_eq!(m.score as i32, sign * graph.move_value(&last), "node {id}, pit {}", edge.pit);
            // The rules play the line in this game.
            let mut played = game.clone();
            let mut repeated_at = None;
            for (k, e) in line.iter().enumerate() {
                played.play(e.pit as oware::Pit).unwrap();
                if played.end() == Some(oware::GameEnd::Repetition) {
                    repeated_at = Some(k);
                }
                if played.is_over() {
                    break;
                }
            }
            let as_the_book_says = match (last.repetition, repeated_at) {
                (Some(_), Some(k)) => k == line.len() - 1,
                (Some(_), None) => false,
                (None, Some(_)) => false,
                (None, None) => true,
            };
            assert_eq!(m.repetition_caveat, Some(!as_the_book_says), "node {id}, pit {}, {game}", edge.pit);
            marked += usize::from(!as_the_book_says);
            repeats_as_counted += usize::from(last.repetition.is_some() && as_the_book_says);
            uncounted += usize::from(last.repetition.is_none() && repeated_at.is_some());
        }
    }
    eprintln!(
        "{nodes} nodes, {} repetition edges, {} games: {marked} moves marked, {repeats_as_counted} repetitions as the book counts them, {uncounted} the book does not count",
        targets.len(),
        games.len()
    );
    assert!(!targets.is_empty() && marked > 0 && repeats_as_counted > 0 && uncounted > 0);
}
