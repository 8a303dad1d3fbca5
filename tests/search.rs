//! The alpha-beta search against independent oracles: perft, a brute-force
//! endgame solver with history-aware repetitions, the search without its
//! transposition table, and hand-made tablebases.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common::{on_quiet_cycles, run};
use oware::perft::perft;
use oware::rank::{index, layer_offset, layer_positions};
use oware::rules::Position;
use oware::search::{
    bench_positions, Limits, Options, Ordering, Outcome, SearchError, SearchResult, Searcher, Stop,
};
use oware::tablebase::{EndgameTable, Probe};
use oware::{Game, GameState, Side};

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn search(options: &Options, state: &GameState, limits: Limits) -> SearchResult {
    Searcher::new(options.clone()).unwrap().search(state, &limits).unwrap()
}

fn no_table() -> Options {
    Options { table_megabytes: 0, ..Options::default() }
}

/// A state with South to move, from pits seen by South and South's store.
fn state(pits: [u8; 12], south_store: u8) -> GameState {
    let on_board: u32 = pits.iter().map(|&s| s as u32).sum();
    let north = 48 - on_board as u8 - south_store;
    GameState::from_parts(pits, [south_store, north], Side::South)
}

/// The result a tablebase value implies for the mover, stores `[mover, other]`.
fn outcome_of(value: u32, seeds: u32, stores: [u8; 2]) -> Outcome {
    let mine = stores[0] as u32 + value;
    let theirs = stores[1] as u32 + seeds - value;
    Outcome::of_scores(mine, theirs)
}

/// Brute-force as-root values: the most seeds the mover captures from a
/// position reached by a capture, by alpha-beta over every line of play
/// with the repetition rule (a line ends when a state since the last
/// capture recurs with the same mover; each side takes its own row).
#[derive(Default)]
struct Solver {
    as_root: HashMap<Position, u32>,
}

impl Solver {
    fn as_root(&mut self, p: Position) -> u32 {
        if let Some(&v) = self.as_root.get(&p) {
            return v;
        }
        let mut line = vec![p];
        let v = self.value(&mut line, 0, p.seeds());
        self.as_root.insert(p, v);
        v
    }

    /// The value of the last position of `line` (the states since the last
    /// capture), clamped to `alpha..=beta` (fail-hard).
    fn value(&mut self, line: &mut Vec<Position>, mut alpha: u32, beta: u32) -> u32 {
        let p = *line.last().unwrap();
        let n = p.seeds();
        let moves = p.legal_moves();
        if moves.is_empty() {
            return p.own_seeds().clamp(alpha, beta);
        }
        for pit in moves {
            let played = p.play(pit);
            let child = played.child;
            let captured = played.captured as u32;
            let v = if captured > 0 {
                captured + (n - captured) - self.as_root(child)
            } else if repeats(line, &child) {
                child.opponent_seeds()
            } else {
                line.push(child);
                let v = n - self.value(line, n - beta, n - alpha);
                line.pop();
                v
            };
            if v >= beta {
                return beta;
            }
            alpha = alpha.max(v);
        }
        alpha
    }

    /// The value of a game state: its history matters.
    fn state_value(&mut self, state: &GameState) -> u32 {
        let mut line = state.history().to_vec();
        line.push(state.position());
        self.value(&mut line, 0, state.position().seeds())
    }
}

/// Would `child`, appended to `line`, repeat a state with the same mover?
fn repeats(line: &[Position], child: &Position) -> bool {
    line.iter().rev().skip(1).step_by(2).any(|p| p == child)
}

/// A tablebase of every position with at most `max` seeds, from the brute
/// force solver. Positions in a non-trivial strongly connected component of
/// same-layer moves are flagged `on_cycle` (a superset of those on a cycle
/// of game states, which is sound). `slack` widens the proven bounds.
struct BruteTable {
    max: u32,
    entries: Vec<Probe>,
}

impl BruteTable {
    fn new(max: u32, solver: &mut Solver, slack: u8) -> BruteTable {
        let size = layer_offset(max + 1);
        let mut entries = vec![Probe { lower: 0, upper: 0, estimate: 0, on_cycle: false }; size as usize];
        for n in 0..=max {
            let layer: Vec<Position> = layer_positions(n).collect();
            let cyclic = on_quiet_cycles(n);
            for (p, on_cycle) in layer.iter().zip(cyclic) {
                let v = solver.as_root(*p) as u8;
                entries[index(p) as usize] = Probe {
                    lower: v.saturating_sub(slack),
                    upper: (v + slack).min(n as u8),
                    estimate: v,
                    on_cycle,
                };
            }
        }
        BruteTable { max, entries }
    }
}

impl EndgameTable for BruteTable {
    fn max_seeds(&self) -> u32 {
        self.max
    }
    fn proves(&self) -> bool {
        true
    }
    fn probe(&self, position: &Position) -> Option<Probe> {
        (position.seeds() <= self.max).then(|| self.entries[index(position) as usize])
    }
}

/// Random states along random games from the start, with their history,
/// taken once the board holds at most `max_seeds` seeds.
fn random_states(seed: u64, count: usize, max_seeds: u32) -> Vec<GameState> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    while out.len() < count {
        let mut state = GameState::start();
        while !state.is_over() && out.len() < count {
            let moves: Vec<usize> = state.legal_moves().collect();
            state.play(moves[rng.below(moves.len())]).unwrap();
            if !state.is_over() && state.position().seeds() <= max_seeds && rng.below(3) == 0 {
                out.push(state.clone());
            }
        }
    }
    out
}

#[test]
fn perft_counts_through_the_search() {
    let text = include_str!("reference/perft.txt");
    let options = Options { full_width: true, ..Options::default() };
    let mut searcher = Searcher::new(options).unwrap();
    for line in text.lines().filter(|l| !l.starts_with('#') && l.contains('|')).step_by(3) {
        let (game, _) = line.split_once('|').unwrap();
        let game: Game = game.trim().parse().unwrap();
        for depth in 1..=5 {
            let result = searcher.search(&game.current, &Limits::depth(depth)).unwrap();
            let expected = perft(&game.current, depth);
            if result.stop == Stop::GameOver {
                assert_eq!(expected, 0);
            } else {
                assert_eq!(result.depth, depth);
                assert_eq!(result.stats.horizon_nodes, expected, "{game} depth {depth}");
            }
        }
    }
}

#[test]
fn the_table_does_not_change_fixed_depth_scores() {
    let text = include_str!("reference/bench-games.txt");
    let mut states: Vec<GameState> =
        bench_positions(text).unwrap().into_iter().map(|(_, s)| s).step_by(11).collect();
    let bench = states.len();
    // Endgames with long histories, where repetitions happen in the search.
    states.extend(random_states(7, 40, 6));
    states.extend(random_states(8, 80, 4));
    let strict = Options { strict_depth: true, table_megabytes: 4, ..Options::default() };
    let plain = Options { ordering: Ordering::NONE, aspiration: 0, ..no_table() };
    let mut with_table = Searcher::new(strict).unwrap();
    let (mut repetitions, mut refused) = (0, 0);
    for (i, state) in states.iter().enumerate() {
        let depth = if i < bench {
            7
        } else if state.position().seeds() > 4 {
            16
        } else {
            26
        };
        let limits = Limits::depth(depth);
        // The table persists from search to search, as in a game.
        let a = with_table.search(state, &limits).unwrap();
        let b = search(&plain, state, limits);
        assert_eq!(a.score, b.score, "{state}: table {a:?}, none {b:?}");
        repetitions += b.stats.repetitions;
        refused += a.stats.table_unsafe;
    }
    eprintln!("repetitions {repetitions}, refused {refused}");
    // The endgames exercise the graph-history interaction.
    assert!(repetitions > 1000, "{repetitions} {refused}");
}

/// The aspiration window is the caller's choice of any width, up to
/// `i32::MAX` (which once overflowed the window's bounds): every width
/// gives the full window's score at a fixed depth.
#[test]
fn any_aspiration_width_gives_the_full_windows_score() {
    let text = include_str!("reference/bench-games.txt");
    let states: Vec<GameState> =
        bench_positions(text).unwrap().into_iter().map(|(_, s)| s).step_by(67).collect();
    let options = |aspiration| Options { strict_depth: true, aspiration, ..no_table() };
    for state in &states {
        let full = search(&options(0), state, Limits::depth(9));
        for width in [1, 30, 1 << 20, i32::MAX - 1, i32::MAX] {
            let narrow = search(&options(width), state, Limits::depth(9));
            assert_eq!(narrow.score, full.score, "{state}: aspiration {width}");
        }
    }
}

#[test]
fn endgames_agree_with_brute_force() {
    let mut solver = Solver::default();
    let mut searcher = Searcher::new(Options::default()).unwrap();
    let mut checked = 0;
    for n in 1..=3u32 {
        for p in layer_positions(n) {
            let v = solver.as_root(p);
            // Stores that make every result possible: 24 − n .. 24 for the mover.
            for mine in (24 - n as u8)..=24 {
                let s = state(p.pits(), mine);
                if s.is_over() {
                    continue;
                }
                let result = searcher.search(&s, &Limits::depth(100)).unwrap();
                let expected = outcome_of(v, n, [mine, 48 - n as u8 - mine]);
                assert_eq!(result.outcome(), Some(expected), "{s}: value {v}, {result:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 1000);
}

#[test]
fn the_history_changes_values_as_the_brute_force_says() {
    // Low-seed states reached in play, with their histories.
    let mut solver = Solver::default();
    let mut searcher = Searcher::new(Options::default()).unwrap();
    let mut changed = 0;
    for state in random_states(11, 150, 3) {
        let n = state.position().seeds();
        let v = solver.state_value(&state);
        changed += (v != solver.as_root(state.position())) as u32;
        let mover = state.to_move();
        let stores = [state.store(mover), state.store(mover.other())];
        let result = searcher.search(&state, &Limits::depth(100)).unwrap();
        assert_eq!(result.outcome(), Some(outcome_of(v, n, stores)), "{state} history {:?}", state.history());
    }
    assert!(changed > 5, "only {changed} states where the history matters");
}

/// Equal results but for the time taken.
fn same(a: &SearchResult, b: &SearchResult) -> bool {
    let strip = |r: &SearchResult| SearchResult { elapsed: Duration::ZERO, ..r.clone() };
    strip(a) == strip(b)
}

#[test]
fn a_node_limit_gives_the_same_result_every_time() {
    let game: Game = "4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves FfBeBcDaAbCcDbAcCa".parse().unwrap();
    let limits = Limits::nodes(200_000);
    let mut searcher = Searcher::new(Options::default()).unwrap();
    let first = searcher.search(&game.current, &limits).unwrap();
    assert_eq!(first.stop, Stop::Nodes);
    assert!(first.depth >= 8 && first.nodes == 200_000, "{first:?}");
    // A fresh searcher, and the same one after clearing, agree exactly.
    let fresh = search(&Options::default(), &game.current, limits);
    searcher.clear();
    let again = searcher.search(&game.current, &limits).unwrap();
    assert!(same(&first, &fresh) && same(&first, &again), "{first:?} {fresh:?}");
    // So do two searchers replaying the same sequence of searches.
    let mut a = Searcher::new(Options::default()).unwrap();
    let mut b = Searcher::new(Options::default()).unwrap();
    for (_, state) in bench_positions(include_str!("reference/bench-games.txt")).unwrap().iter().take(12) {
        let x = a.search(state, &Limits::nodes(20_000)).unwrap();
        let y = b.search(state, &Limits::nodes(20_000)).unwrap();
        assert!(same(&x, &y), "{state}");
    }
}

#[test]
fn a_time_limit_stops_with_a_move() {
    let limits = Limits { depth: Some(100), time: Some(Duration::from_millis(30)), nodes: None };
    let result = search(&Options::default(), &GameState::start(), limits);
    assert_eq!(result.stop, Stop::Time);
    assert!(result.best_move.is_some() && result.depth >= 1);
    assert!(result.elapsed < Duration::from_millis(500), "{result:?}");
}

/// A search handed to another thread stops when told, with the move of
/// its last completed iteration; the request stays until cleared.
#[test]
fn a_stop_from_another_thread_ends_the_search_with_a_move() {
    let mut searcher = Searcher::new(Options::default()).unwrap();
    let handle = searcher.stop_handle();
    handle.clear();
    // The time limit only keeps a broken stop from hanging the test.
    let limits = Limits { time: Some(Duration::from_secs(60)), ..Limits::until_stopped() };
    let worker = std::thread::spawn(move || {
        let result = searcher.search(&GameState::start(), &limits).unwrap();
        (searcher, result)
    });
    std::thread::sleep(Duration::from_millis(50));
    handle.stop();
    let (mut searcher, result) = worker.join().unwrap();
    assert_eq!(result.stop, Stop::Interrupted, "{result:?}");
    assert!(result.best_move.is_some() && result.depth >= 1, "{result:?}");
    assert!(result.elapsed < Duration::from_secs(30), "{result:?}");

    let again = searcher.search(&GameState::start(), &limits).unwrap();
    assert_eq!((again.stop, again.depth), (Stop::Interrupted, 1), "{again:?}");
    assert!(again.best_move.is_some());
    handle.clear();
    let depth_4 = searcher.search(&GameState::start(), &Limits::depth(4)).unwrap();
    assert_eq!((depth_4.stop, depth_4.depth), (Stop::Depth, 4));
}

#[test]
fn bad_requests_are_typed_errors() {
    let mut searcher = Searcher::new(Options::default()).unwrap();
    let start = GameState::start();
    assert_eq!(searcher.search(&start, &Limits::default()), Err(SearchError::Unbounded));
    assert_eq!(searcher.search(&start, &Limits::depth(101)), Err(SearchError::DepthTooLarge { depth: 101 }));
    let wrong = GameState::from_parts([4; 12], [1, 0], Side::South);
    assert_eq!(searcher.search(&wrong, &Limits::depth(3)), Err(SearchError::SeedCount { total: 49 }));
}

#[test]
fn a_repetition_can_be_the_only_escape() {
    // (game, the move that repeats a state, its result, whether the result
    // differs without the history): found by the brute-force solver.
    let cases = [
        // South's D recreates the state after "…FfAaBb": each side keeps
        // its row, 24-24. South's F loses.
        ("0-0-1-0-0-1-0-0-0-0-0-1-22-23-S moves CfFaAbBcCdDeFfAaBbEcCd", 'D', Outcome::Draw, true),
        // North's a repeats and draws; f loses.
        ("0-0-0-0-0-1-0-0-0-0-1-1-23-22-S moves FfAaBeCfDbAcEdBeF", 'a', Outcome::Draw, false),
        // North's b repeats and wins (each keeps its row); f only draws.
        ("0-1-0-0-0-0-0-0-1-1-0-0-22-23-S moves BdCeDcEfAdFaBeC", 'b', Outcome::Win, false),
    ];
    let mut solver = Solver::default();
    for (text, letter, outcome, differs) in cases {
        let game: Game = text.parse().unwrap();
        let s = &game.current;
        let result = search(&Options::default(), s, Limits::depth(100));
        assert_eq!(result.outcome(), Some(outcome), "{game}: {result:?}");
        let pit = s.letter_pit(letter).unwrap();
        assert_eq!(result.best_move, Some(pit), "{game}: {result:?}");
        let mut after = s.clone();
        after.play(pit).unwrap();
        assert_eq!(after.end(), Some(oware::GameEnd::Repetition));
        // The brute force agrees; without the history the move does not
        // end the game, and the result may differ.
        let mover = s.to_move();
        let stores = [s.store(mover), s.store(mover.other())];
        let n = s.position().seeds();
        assert_eq!(outcome_of(solver.state_value(s), n, stores), outcome);
        let fresh = GameState::from_parts(s.pits(), s.stores(), mover);
        let as_root = search(&Options::default(), &fresh, Limits::depth(100));
        assert_eq!(as_root.outcome() != Some(outcome), differs, "{game}");
    }
}

#[test]
fn must_feed_positions() {
    // North's row is empty: South must sow into it. A and E (one seed
    // each) cannot reach; F can.
    let single = state([1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0], 22);
    let result = search(&Options::default(), &single, Limits::depth(100));
    assert_eq!(result.best_move, Some(5));
    // E (2 seeds) and F (1) both feed; the brute force knows which is best.
    let mut solver = Solver::default();
    for mine in 21..=24 {
        let s = state([0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0], mine);
        let moves: Vec<usize> = s.legal_moves().collect();
        assert_eq!(moves, vec![4, 5]);
        let v = solver.state_value(&s);
        let result = search(&Options::default(), &s, Limits::depth(100));
        assert_eq!(result.outcome(), Some(outcome_of(v, 3, [mine, 45 - mine])));
    }
    // Nothing can reach North: the game is over, each takes its own row.
    let stuck = state([1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 22);
    let result = search(&Options::default(), &stuck, Limits::depth(5));
    assert_eq!(result.stop, Stop::GameOver);
    assert_eq!(result.best_move, None);
    assert_eq!(result.outcome(), Some(Outcome::Draw)); // 22 + 2 against 24
}

#[test]
fn tablebase_probes_agree_with_brute_force() {
    let mut solver = Solver::default();
    let exact: Arc<dyn EndgameTable> = Arc::new(BruteTable::new(3, &mut solver, 0));
    let loose: Arc<dyn EndgameTable> = Arc::new(BruteTable::new(3, &mut solver, 1));
    let small: Arc<dyn EndgameTable> = Arc::new(BruteTable::new(2, &mut solver, 0));
    let with =
        |table: &Arc<dyn EndgameTable>| Options { tablebase: Some(table.clone()), ..Options::default() };
    let mut searchers: Vec<Searcher> =
        [&exact, &loose, &small].into_iter().map(|t| Searcher::new(with(t)).unwrap()).collect();
    // States of at most 3 seeds reached in play, histories included: the
    // tablebase holds the roots themselves, so cycle entries must be
    // refused where the history matters.
    let mut probes = 0;
    for s in random_states(21, 120, 3) {
        let mover = s.to_move();
        let stores = [s.store(mover), s.store(mover.other())];
        let n = s.position().seeds();
        let expected = outcome_of(solver.state_value(&s), n, stores);
        for searcher in searchers.iter_mut() {
            let result = searcher.search(&s, &Limits::depth(100)).unwrap();
            assert_eq!(result.outcome(), Some(expected), "{s}: {result:?}");
            probes += result.stats.tablebase_hits;
        }
    }
    assert!(probes > 100);
    // Larger endgames: the exact and the loose tables find the same
    // proven results as the search without one, where it proves them.
    let mut plain = Searcher::new(Options::default()).unwrap();
    let mut compared = 0;
    for s in random_states(5, 50, 6) {
        let limits = Limits::nodes(100_000);
        let reference = plain.search(&s, &limits).unwrap();
        for searcher in searchers.iter_mut().take(2) {
            let result = searcher.search(&s, &limits).unwrap();
            if let (Some(a), Some(b)) = (reference.outcome(), result.outcome()) {
                assert_eq!(a, b, "{s}");
                compared += 1;
            }
        }
    }
    eprintln!("compared {compared}");
    assert!(compared > 30, "{compared}");
}

#[test]
fn move_scores_agree_with_the_search() {
    // Without a table, the root's value at depth d is exactly the best of
    // its children's values at depth d - 1.
    let positions = bench_positions(include_str!("reference/bench-games.txt")).unwrap();
    let mut searcher = Searcher::new(no_table()).unwrap();
    for (_, state) in positions.iter().step_by(37) {
        let limits = Limits::depth(6);
        let best = searcher.search(state, &limits).unwrap();
        let moves = searcher.score_moves(state, &limits).unwrap();
        if best.best_move.is_none() {
            assert!(moves.is_empty());
            continue;
        }
        assert_eq!(moves.len(), state.legal_moves().len());
        assert_eq!(moves[0].score, best.score, "{state}");
        assert!(moves.windows(2).all(|w| w[0].score >= w[1].score));
    }
}

#[test]
fn engine_units() {
    use oware::search::Score;
    assert_eq!(Score(Score::WIN - 7).engine_units(), 1000);
    assert_eq!(Score(-Score::WIN + 40).engine_units(), -1000);
    assert_eq!(Score(1234).engine_units(), 999);
    assert_eq!(Score(-75).engine_units(), -75);
    assert_eq!(Score(Score::WIN - 7).to_string(), "win in 7");
    assert_eq!(Score(-75).to_string(), "-75");
}

#[test]
fn the_binaries_search_and_fail_in_one_line() {
    let search = env!("CARGO_BIN_EXE_search");
    let (ok, stdout, _) =
        run(search, &["4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves FfEe", "--depth", "6", "--moves"]);
    assert!(ok && stdout.contains("best move: ") && stdout.contains("pv: "), "{stdout}");
    // One line per legal move, "  X: …" (the board's lines are not moves).
    let is_move = |l: &&str| l.len() > 3 && l.starts_with("  ") && l.as_bytes()[3] == b':';
    assert_eq!(stdout.lines().filter(is_move).count(), 5, "{stdout}");
    assert!(stdout.contains("South, store "), "{stdout}");
    for args in [
        vec!["--depth", "101"],
        vec!["4-4-4-4-4-4-4-4-4-4-4-4-0-0-S moves Fx"],
        vec!["--ordering", "best"],
        vec!["--time", "0"],
    ] {
        let (ok, _, stderr) = run(search, &args);
        assert!(!ok && stderr.lines().count() == 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("search: error: "), "{stderr}");
    }
    let bench = env!("CARGO_BIN_EXE_bench");
    let (ok, stdout, _) = run(bench, &["--depth", "5", "--every", "50"]);
    assert!(ok && stdout.contains("14 searched"), "{stdout}");
    let (ok, _, stderr) = run(bench, &["--file", "/nonexistent/games.txt"]);
    assert!(!ok && stderr.lines().count() == 1, "{stderr}");
}

/// The engine's endgame files hold estimates, which can contradict the
/// search: the root's score, clamped into them, once landed inside the
/// aspiration window with no move found (a match stopped on it). Every
/// root with a legal move gets one, whatever the table says.
#[test]
fn a_root_always_gets_a_move_even_against_an_engine_tables_estimates() {
    let path = std::path::Path::new("tests/reference/aalina-2021-leaves.bin.zst");
    let table = oware::tablebase::open_any(path).unwrap();
    // A small transposition table: a searcher per search, and zeroing the
    // default 16 MB 1,200 times was most of the test's time.
    let options = Options { tablebase: Some(table), table_megabytes: 1, ..Options::default() };
    let found: GameState = "1-0-0-0-0-0-1-1-0-1-0-0-24-20-S".parse().unwrap();
    let mut states = vec![found];
    states.extend(random_states(5, 300, 12));
    for s in states.iter().filter(|s| !s.is_over()) {
        for nodes in [2_000, 100_000] {
            let result = search(&options, s, Limits::nodes(nodes));
            let pit = result.best_move.unwrap_or_else(|| panic!("{s}: no move at {nodes} nodes: {result:?}"));
            assert!(s.legal_moves().contains(pit), "{s}");
        }
    }
}

/// An engine endgame file's entries are what the file says, not proofs (the
/// engine's two files disagree on 97,660 EXACT entries), and its 2-seed
/// entries are EXACT even on a cycle: a score resting on one is never
/// reported proven. Here South's only move, F, recreates the state of ten
/// plies before: the game ends, North takes its 2 seeds, South loses 23 to
/// 25. The 2021 file calls the position a draw (its as-root value).
#[test]
fn an_engine_files_entries_never_make_a_proven_score() {
    let state: GameState =
        "0-0-0-0-0-0-1-0-0-0-0-1-23-23-N moves fAaBbCcDdEe".parse::<Game>().unwrap().current;
    let engine =
        oware::tablebase::open_any(std::path::Path::new("tests/reference/aalina-2021-leaves.bin.zst"))
            .unwrap();
    let ours = oware::tablebase::open_any(std::path::Path::new("data/endgames-12.owtb.zst")).unwrap();
    for table in [engine.clone(), ours] {
        let result =
            search(&Options { tablebase: Some(table), ..Options::default() }, &state, Limits::depth(10));
        assert_eq!((result.outcome(), result.proven), (Some(Outcome::Loss), true), "{result:?}");
    }
    // Random endgames with histories: what the search proves with the
    // engine's file, it proves without any table too, and the same.
    let with_file = Options { tablebase: Some(engine), ..Options::default() };
    let mut agreed = 0;
    for s in random_states(9, 200, 12) {
        let limits = Limits::nodes(20_000);
        let result = search(&with_file, &s, limits);
        if !result.proven {
            continue;
        }
        let deep = search(&Options::default(), &s, Limits::nodes(2_000_000));
        assert!(deep.proven, "{s}: proven with the file, {result:?}, not without: {deep:?}");
        assert_eq!(deep.outcome(), result.outcome(), "{s}: {result:?}");
        agreed += 1;
    }
    eprintln!("proven with the engine's file and confirmed: {agreed}");
    assert!(agreed > 20, "{agreed}");
}

/// A root the tablebase settles is reported proven only with a move that
/// achieves the table's value: the table fixes the score, not the move,
/// and a quiet move to a position on a cycle is not settled by it. The
/// move's own value comes from a search without any table.
#[test]
fn a_proven_root_comes_with_a_move_that_achieves_it() {
    let table = oware::tablebase::open_any(std::path::Path::new("data/endgames-12.owtb.zst")).unwrap();
    // A small transposition table: a searcher per search (see above).
    let options = Options { tablebase: Some(table), table_megabytes: 1, ..Options::default() };
    // Roots with no history, as a game goes on after a capture.
    let mut rng = Rng(77);
    let mut states: Vec<GameState> = Vec::new();
    while states.len() < 300 {
        let n = 6 + rng.below(5) as u32;
        let mut pits = [0u8; 12];
        for _ in 0..n {
            pits[rng.below(12)] += 1;
        }
        let south = rng.below(25) as u8;
        let north = 48 - n as u8 - south;
        let state = GameState::from_parts(pits, [south, north], Side::South);
        if north <= 24 && !state.is_over() && !state.legal_moves().is_empty() {
            states.push(state);
        }
    }
    let mut plain = Searcher::new(Options::default()).unwrap();
    let (mut proven, mut checked) = (0, 0);
    for s in &states {
        for limits in [Limits::depth(1), Limits::depth(4), Limits::nodes(20_000)] {
            let result = search(&options, s, limits);
            if !result.proven {
                continue;
            }
            proven += 1;
            let pit = result.best_move.unwrap();
            let mut child = s.clone();
            child.play(pit).unwrap();
            let answer = plain.search(&child, &Limits::nodes(300_000)).unwrap();
            let Some(answer) = answer.proven.then(|| answer.outcome()).flatten() else { continue };
            let achieved = answer.for_other_side();
            assert_eq!(Some(achieved), result.outcome(), "{s}: move {pit} at {limits:?}: {result:?}");
            checked += 1;
        }
    }
    eprintln!("proven roots: {proven}, their moves checked: {checked}");
    assert!(checked > 100, "{checked} of {proven}");
}

/// Weights of one's own can take the static evaluation past a proven
/// score's magnitude: it is kept below, so a heuristic score is never
/// reported proven. Weights too large for the evaluation's arithmetic are
/// refused.
#[test]
fn no_weights_make_a_heuristic_score_proven() {
    let weights: oware::search::Weights = "1000,0,0,0,0".parse().unwrap();
    // South leads by 12 seeds; nothing is decided within two plies.
    let state = GameState::from_parts([3; 12], [12, 0], Side::South);
    for depth in 1..=2 {
        let result = search(&Options { weights, ..Options::default() }, &state, Limits::depth(depth));
        assert!(!result.proven && result.score.0 > 1000, "{result:?}");
        assert!(result.score.0 < oware::search::Score::PROVEN, "{result:?}");
    }
    for bad in ["10001,0,0,0,0", "0,0,0,0,-10001", "2147483647,0,0,0,0", "-2147483648,0,0,0,0"] {
        assert!(bad.parse::<oware::search::Weights>().is_err(), "{bad}");
    }
    assert!("10000,-10000,0,0,0".parse::<oware::search::Weights>().is_ok());
}
