//! The endgame tablebase: known figures, an independent brute force, the
//! engine's proven entries, verification, determinism and file round trips.

use std::collections::HashMap;
use std::io::Read;

use oware::formats::endgames::EndgameFile;
use oware::rank::{layer_offset, layer_positions, layer_size};
use oware::tablebase::verify::verify;
use oware::tablebase::{
    EndgameTable, EntryWidth, LayerBytes, LayerSolver, LayerStats, PackedLayer, Proof, SearchBudget,
    SolvedLayers,
};
use oware::Position;

fn solve_layers(max: u32, budget: SearchBudget) -> (SolvedLayers, Vec<LayerStats>) {
    let mut solved = SolvedLayers::new();
    let mut stats = Vec::new();
    for n in 0..=max {
        let (bytes, s) = LayerSolver::new(n, &solved, budget).solve();
        solved.push(LayerBytes::Owned(bytes));
        stats.push(s);
    }
    (solved, stats)
}

const NO_SEARCH: SearchBudget = SearchBudget::NONE;

#[test]
fn cycle_bounds_reproduce_the_reference_figures() {
    // docs/measurements.md ("The independent prototype's figures"): giant component sizes, and the
    // positions the co-Büchi bounds prove exact when no search is done.
    let (solved, stats) = solve_layers(9, NO_SEARCH);
    let largest = [0, 0, 12, 140, 757, 2_933, 9_412, 26_127, 65_036, 148_666];
    let exact = [1, 12, 65, 300, 994, 4_090, 10_194, 26_130, 47_027, 110_656];
    let max_gap = [0, 0, 1, 1, 2, 1, 3, 3, 3, 3];
    for (n, s) in stats.iter().enumerate() {
        assert_eq!(s.components.largest, largest[n], "largest component, layer {n}");
        assert_eq!(s.exact, exact[n], "exact positions, layer {n}");
        assert_eq!(s.max_gap, max_gap[n], "largest gap, layer {n}");
    }
    assert_eq!((stats[8].mean_gap * 100.0).round(), 80.0);
    let report = verify(&solved);
    assert_eq!(report.failures, 0, "{:?}", report.examples);
    assert_eq!(report.positions, layer_offset(10));
}

/// As-root values by minimax over simple paths (alpha-beta, which is
/// exact), written from the rules text alone: a repeated state (same
/// position, same side to move) ends the game and each side takes its own
/// row.
struct BruteForce {
    as_root: HashMap<Position, u32>,
}

impl BruteForce {
    fn value(&mut self, root: Position) -> u32 {
        if let Some(&v) = self.as_root.get(&root) {
            return v;
        }
        let mut path = vec![root];
        let n = root.seeds() as i32;
        let v = self.from(root, &mut path, -1, n + 1) as u32;
        self.as_root.insert(root, v);
        v
    }

    fn from(&mut self, p: Position, path: &mut Vec<Position>, mut alpha: i32, beta: i32) -> i32 {
        let n = p.seeds() as i32;
        let moves = p.legal_moves();
        if moves.is_empty() {
            return p.own_seeds() as i32;
        }
        let mut best = -1;
        for pit in moves {
            let played = p.play(pit);
            let child = played.child;
            let value = if played.captured > 0 {
                n - self.value(child) as i32
            } else if path.iter().rev().skip(1).step_by(2).any(|&q| q == child) {
                n - child.own_seeds() as i32
            } else {
                path.push(child);
                let v = n - self.from(child, path, n - beta, n - alpha);
                path.pop();
                v
            };
            best = best.max(value);
            alpha = alpha.max(best);
            if alpha >= beta {
                break;
            }
        }
        best
    }
}

#[test]
fn exact_values_up_to_three_seeds_match_a_brute_force_and_the_engine() {
    let (solved, _) = solve_layers(3, SearchBudget::default());
    let mut brute = BruteForce { as_root: HashMap::new() };
    let engine: Vec<EndgameFile> = ["aalina-2014-leaves.bin.zst", "aalina-2021-leaves.bin.zst"]
        .iter()
        .map(|name| {
            let mut bytes = Vec::new();
            let file = std::fs::File::open(format!("{}/tests/reference/{name}", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
            zstd::stream::Decoder::new(file).unwrap().read_to_end(&mut bytes).unwrap();
            EndgameFile::from_bytes(bytes).unwrap()
        })
        .collect();
    for n in 0..=3 {
        for p in layer_positions(n) {
            let ours = solved.entry(&p);
            assert!(ours.is_exact(), "{p:?} not exact");
            assert_eq!(ours.lower as u32, brute.value(p), "{p:?}: brute force");
            for file in &engine {
                let probe = file.probe(&p).unwrap();
                assert_eq!(ours.lower, probe.estimate, "{p:?}: engine file");
            }
        }
    }
}

/// Searches up to layer 6: the threshold search, then the path-cut search
/// for what it leaves.
const TO_SIX: SearchBudget = SearchBudget {
    nodes_per_search: 1_000_000,
    threshold_max_seeds: 6,
    cut_nodes: 600,
    cut_max_seeds: 6,
    ..NO_SEARCH
};

#[test]
fn search_proves_layers_two_to_six_and_verify_agrees() {
    let (solved, stats) = solve_layers(8, TO_SIX);
    // The searches close every gap of layers 2 to 6 (the bounds alone
    // leave 13, 64, 371, 278 and 2,182 open), and the exact lower layers
    // tighten everything above.
    for (n, layer) in stats.iter().enumerate().take(7) {
        assert_eq!(layer.unresolved, 0, "layer {n}");
    }
    assert_eq!(stats[4].exact_by_search, 219);
    assert_eq!(stats[6].open_before_search, 1_262);
    // The threshold search answers every question by itself (the path-cut
    // search, which runs on what it leaves, has nothing to do).
    assert_eq!(stats[6].left_open_by_threshold, 0);
    assert_eq!(stats[6].closed_by_cut, 0);
    assert!(stats[8].exact > 47_027, "{}", stats[8].exact);
    let report = verify(&solved);
    assert_eq!(report.failures, 0, "{:?}", report.examples);
    // Proof kinds are consistent with the flags.
    for n in 0..=8 {
        for p in layer_positions(n) {
            let e = solved.entry(&p);
            match e.proof {
                Proof::Bounds | Proof::Search => assert!(e.on_cycle && e.is_exact()),
                Proof::Retrograde => assert!(!e.on_cycle && e.is_exact()),
                Proof::Open => assert!(!e.is_exact()),
            }
        }
    }
}

/// Two independent proofs of the gaps of layers 2 to 4: the threshold
/// search with history-proof leaves alone, and the path-cut search alone.
/// Every entry must come out the same, byte for byte.
#[test]
fn the_path_cut_search_agrees_with_the_threshold_search() {
    let threshold = SearchBudget { nodes_per_search: 3_000_000, threshold_max_seeds: 4, ..NO_SEARCH };
    let cut = SearchBudget { cut_nodes: 600, cut_max_seeds: 4, ..NO_SEARCH };
    let (a, a_stats) = solve_layers(4, threshold);
    let (b, b_stats) = solve_layers(4, cut);
    for n in 0..=4 {
        assert_eq!(a_stats[n as usize].unresolved, 0, "layer {n}, threshold search");
        assert_eq!(b_stats[n as usize].unresolved, 0, "layer {n}, path cuts");
        assert!(a.layer_bytes(n) == b.layer_bytes(n), "layer {n}");
    }
    assert_eq!(b_stats[4].exact_by_search, 219);
}

#[test]
fn layers_do_not_depend_on_the_thread_count() {
    // Small budgets on layer 7, so that some questions run out: what is
    // left open must not depend on threads either.
    let budget = SearchBudget { nodes_per_search: 1_000, threshold_max_seeds: 7, ..NO_SEARCH };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let (a, _) = one.install(|| solve_layers(7, budget));
    let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let (b, b_stats) = three.install(|| solve_layers(7, budget));
    assert!(b_stats[7].unresolved > 0 && b_stats[7].exact_by_search > 0, "{:?}", b_stats[7]);
    for n in 0..=7 {
        assert!(a.layer_bytes(n) == b.layer_bytes(n), "layer {n}");
        // Each layer in the width a file stores it in: value records
        // exactly when every entry is exact.
        let layer = PackedLayer::new(a.layer_bytes(n), layer_size(n)).expect("a layer of records");
        assert_eq!(layer.width() == EntryWidth::Value, b_stats[n as usize].unresolved == 0, "layer {n}");
    }
    assert_eq!(PackedLayer::new(a.layer_bytes(7), layer_size(7)).map(|l| l.width()), Some(EntryWidth::Full));
}

#[test]
fn probes_give_bounds_and_flags() {
    let (solved, _) = solve_layers(4, SearchBudget::default());
    let mut empty_board = Position::default();
    assert_eq!(solved.probe(&empty_board).map(|p| p.estimate), Some(0));
    // One seed in each player's last pit: the shuttle repeats, each side
    // keeps its seed.
    let mut pits = [0u8; 12];
    pits[5] = 1;
    pits[11] = 1;
    empty_board = Position::new(pits);
    let probe = solved.probe(&empty_board).unwrap();
    assert!(probe.on_cycle);
    assert_eq!((probe.lower, probe.upper), (1, 1));
    let mut five = [0u8; 12];
    five[0] = 5;
    assert_eq!(solved.probe(&Position::new(five)), None);
}

/// Issue 4's check with a real tablebase: on random positions of up to 8
/// seeds whose entry is exact, the search with the tablebase gives the
/// tablebase's outcome as its score and proves it wherever it proves a
/// move achieving it (at least as often as the search without the table),
/// and the search without it, wherever it proves an outcome on its own,
/// proves the same one.
#[test]
fn the_search_agrees_with_exact_tablebase_entries() {
    use oware::rank::position_in_layer;
    use oware::search::{Limits, Options, Outcome, Searcher};
    use oware::{GameState, Side};
    use std::sync::Arc;

    let (solved, _) = solve_layers(8, TO_SIX);
    let table: Arc<dyn EndgameTable> = Arc::new(solved);
    let mut with_table =
        Searcher::new(Options { tablebase: Some(table.clone()), ..Options::default() }).unwrap();
    let mut alone = Searcher::new(Options::default()).unwrap();
    let mut seed = 0x1234_5678_9ABC_DEF1u64;
    let (mut checked, mut proven_alone, mut proven_with_table) = (0, 0, 0);
    while checked < 150 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let n = 1 + (seed % 8) as u32;
        let position = position_in_layer(n, (seed >> 8) % layer_size(n)).unwrap();
        let entry = table.probe(&position).unwrap();
        if !entry.is_exact() {
            continue;
        }
        // Stores that leave the outcome to the board: the mover needs more
        // than half of what is left.
        let rest = 48 - n as u8;
        let stores = [rest / 2, rest - rest / 2];
        let state = GameState::from_parts(position.pits(), stores, Side::South);
        if state.is_over() {
            continue;
        }
        let mine = stores[0] as u32 + entry.lower as u32;
        let theirs = stores[1] as u32 + n - entry.lower as u32;
        let expected = match mine.cmp(&theirs) {
            std::cmp::Ordering::Greater => Outcome::Win,
            std::cmp::Ordering::Less => Outcome::Loss,
            std::cmp::Ordering::Equal => Outcome::Draw,
        };
        with_table.clear();
        let limits = Limits { depth: Some(30), nodes: Some(200_000), time: None };
        let result = with_table.search(&state, &limits).unwrap();
        // The table settles the root's value; the result is proven once a
        // move is proven to achieve it (tests/search.rs checks the move).
        if result.proven {
            assert_eq!(result.outcome(), Some(expected), "{state} with the tablebase");
            proven_with_table += 1;
        }
        alone.clear();
        let result = alone.search(&state, &limits).unwrap();
        if let Some(outcome) = result.outcome() {
            assert_eq!(outcome, expected, "{state} searched alone");
            proven_alone += 1;
        }
        checked += 1;
    }
    assert!(proven_alone >= 30, "the search alone proved only {proven_alone} outcomes");
    eprintln!("proven with the table: {proven_with_table}, alone: {proven_alone}, of {checked}");
    assert!(
        proven_with_table >= proven_alone,
        "with the table {proven_with_table} proven, alone {proven_alone}"
    );
}

/// The shipped table's layer 6 was proven by the threshold search. Check
/// it two more ways: every entry is consistent with its moves (`verify`),
/// and the game-playing search, which knows nothing of threshold games,
/// proves the same outcome wherever it proves one, probing only layers up
/// to 5 (cross-checked above) after captures.
#[test]
fn the_shipped_search_proofs_agree_with_the_game_search() {
    use oware::search::{Limits, Options, Outcome, Searcher};
    use oware::tablebase::Tablebase;
    use oware::{GameState, Side};

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/endgames-12.owtb.zst");
    let shipped = Tablebase::open(std::path::Path::new(path)).unwrap();
    let report = verify(&shipped);
    assert_eq!(report.failures, 0, "{:?}", report.examples);
    let (lower, _) = solve_layers(5, SearchBudget::default());
    let lower: std::sync::Arc<dyn EndgameTable> = std::sync::Arc::new(lower);
    let mut searcher = Searcher::new(Options { tablebase: Some(lower), ..Options::default() }).unwrap();
    let (mut proven, mut compared) = (0, 0);
    for p in layer_positions(6) {
        let entry = shipped.entry(&p).unwrap().unwrap();
        if entry.proof != Proof::Search {
            continue;
        }
        proven += 1;
        // Stores that leave the outcome to the board, either way round.
        for stores in [[21u8, 21], [20, 22], [22, 20]] {
            let state = GameState::from_parts(p.pits(), stores, Side::South);
            let mine = stores[0] as u32 + entry.lower as u32;
            let theirs = stores[1] as u32 + 6 - entry.lower as u32;
            let expected = match mine.cmp(&theirs) {
                std::cmp::Ordering::Greater => Outcome::Win,
                std::cmp::Ordering::Less => Outcome::Loss,
                std::cmp::Ordering::Equal => Outcome::Draw,
            };
            searcher.clear();
            // A small budget for every entry rather than a large one for a
            // few: what a plain search settles, it settles in a few
            // thousand nodes (measured: 300,000 nodes on every eighth
            // entry compared 30 outcomes in 16 s; 3,000 on every entry
            // compares 153 in 4 s).
            let limits = Limits { depth: Some(60), nodes: Some(3_000), time: None };
            let result = searcher.search(&state, &limits).unwrap();
            if let Some(outcome) = result.outcome() {
                assert_eq!(outcome, expected, "{state}: entry {entry:?}");
                compared += 1;
            }
        }
    }
    eprintln!("{proven} proven by search, {compared} outcomes compared");
    assert_eq!(proven, 1_262);
    // Few: these are the positions a plain search cannot settle (153 of
    // the 3,786 tried at the time of writing).
    assert!(compared >= 100, "only {compared} outcomes compared");
}

/// `verify --deep`: the path-cut search, a second algorithm, re-proves
/// entries the threshold search proved, and notices a wrong one.
#[test]
fn a_second_algorithm_confirms_search_proofs_and_catches_a_wrong_one() {
    use oware::tablebase::verify::{verify_deep, DeepSample};
    let (solved, stats) = solve_layers(6, TO_SIX);
    // 40 entries of each layer up to 5, then 8 of each up to 6: a path-cut
    // question on layer 6 re-solves its largest component (measured: 0.46 s
    // per entry there, against 1.4 ms on layers 2 to 5).
    for (per_layer, sample_max_seeds) in [(40, 5), (8, 6)] {
        let report =
            verify_deep(&solved, DeepSample { per_layer, cut_nodes: 2_000, seed: 7, sample_max_seeds });
        let proven: u64 =
            stats[..=sample_max_seeds as usize].iter().map(|s| s.exact_by_search.min(per_layer as u64)).sum();
        assert_eq!(report.sampled, proven);
        assert_eq!(report.disagreements, 0, "{:?}", report.examples);
        assert!(report.confirmed * 10 >= report.sampled * 9, "{report:?}");
    }

    // Raise one search-proven entry of layer 4 by a seed: the second
    // opinion, which re-proves every such entry of layer 4, must object.
    let mut layers = SolvedLayers::new();
    let mut wrong = None;
    for n in 0..=4u32 {
        let mut bytes = solved.layer_bytes(n).to_vec();
        if n == 4 {
            let i = (0..layer_size(4) as usize)
                .find(|&i| {
                    let e =
                        oware::tablebase::Entry::unpack([bytes[3 * i], bytes[3 * i + 1], bytes[3 * i + 2]]);
                    e.proof == Proof::Search && e.value < 4
                })
                .unwrap();
            let mut e = oware::tablebase::Entry::unpack([bytes[3 * i], bytes[3 * i + 1], bytes[3 * i + 2]]);
            e.value += 1;
            e.lower = e.value;
            e.upper = e.value;
            bytes[3 * i..3 * i + 3].copy_from_slice(&e.pack());
            wrong = Some(i);
        }
        layers.push(LayerBytes::Owned(bytes));
    }
    assert!(wrong.is_some());
    let report =
        verify_deep(&layers, DeepSample { per_layer: 1_000, cut_nodes: 2_000, seed: 7, sample_max_seeds: 4 });
    assert_eq!(report.last_layer, 4);
    assert!(report.disagreements >= 1, "{report:?}");
    assert!(report.examples.iter().any(|e| e.contains("(4 seeds)")), "{:?}", report.examples);
}

/// The library's probe (`AnyTable::probe_after_capture`) on the shipped
/// table and on the engine file exported from it: the state's bounds are
/// the entry's, off a cycle the best move's value is the state's value,
/// the caveat flags follow the rule, and the engine file, which has no
/// checksum, is labelled unverified and agrees wherever it says exact.
#[test]
fn the_state_probe_agrees_with_entries_moves_and_the_engine_export() {
    use oware::tablebase::{AnyTable, Certainty, Outcome, ProbeError};
    use oware::{GameState, Side};

    let data = |name: &str| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data").join(name);
    let ours = AnyTable::open(&data("endgames-12.owtb.zst")).unwrap();
    let engine = AnyTable::open(&data("endgames-12-2.0.bin")).unwrap();
    let AnyTable::Ours(table) = &ours else { panic!("our file opened as the engine's") };
    let (mut states, mut off_cycle, mut engine_exact) = (0, 0, 0);
    for n in 1..=9u32 {
        for (i, p) in layer_positions(n).enumerate() {
            if i % 7 != 0 {
                continue;
            }
            let rest = 48 - n as u8;
            let stores = [rest / 2, rest - rest / 2];
            let state = GameState::from_parts(p.pits(), stores, Side::South);
            if state.is_over() {
                assert!(matches!(ours.probe_after_capture(&state), Err(ProbeError::GameOver(_))));
                continue;
            }
            let entry = table.entry(&p).unwrap().unwrap();
            let probe = ours.probe_after_capture(&state).unwrap();
            states += 1;
            assert_eq!(
                (probe.lower, probe.upper, probe.on_cycle),
                (entry.lower, entry.upper, entry.on_cycle)
            );
            assert_eq!(probe.certainty, Certainty::Checked(entry.proof));
            assert_eq!(probe.moves.len(), p.legal_moves().count());
            for m in &probe.moves {
                let played = p.play(m.pit);
                let child = table.entry(&played.child).unwrap().unwrap();
                assert_eq!((m.lower, m.upper), (n as u8 - child.upper, n as u8 - child.lower));
                assert_eq!(m.estimate, n as u8 - child.value);
                assert!(m.lower <= m.estimate && m.estimate <= m.upper, "{state}: {m:?}");
                assert_eq!(m.holds_after_this_move, played.captured > 0 || !child.on_cycle);
            }
            if !probe.on_cycle {
                off_cycle += 1;
                let best = probe.moves.iter().map(|m| m.lower).max().unwrap();
                assert_eq!(best, probe.lower, "{state}");
                assert!(probe.candidate_moves().all(|m| m.lower == probe.lower));
            }
            let (mine, theirs) = probe.final_scores(probe.lower);
            assert_eq!(mine + theirs, 48);
            let expected = match mine.cmp(&theirs) {
                std::cmp::Ordering::Less => Outcome::Loss,
                std::cmp::Ordering::Equal => Outcome::Draw,
                std::cmp::Ordering::Greater => Outcome::Win,
            };
            assert_eq!(probe.outcome_bounds().0, expected);
            let theirs = engine.probe_after_capture(&state).unwrap();
            assert_eq!(theirs.certainty, Certainty::Unverified);
            for m in &theirs.moves {
                assert!(m.lower <= m.estimate && m.estimate <= m.upper, "{state}: {m:?}");
            }
            if theirs.is_exact() {
                assert_eq!(theirs.lower, probe.lower, "{state}");
                engine_exact += 1;
            }
        }
    }
    // The handle `open_any` gives is the search's table and the rich probe
    // at once, and both answer as the table opened directly does.
    let shared = oware::tablebase::open_any(&data("endgames-12.owtb.zst")).unwrap();
    let for_search: Option<std::sync::Arc<dyn oware::tablebase::EndgameTable>> = Some(shared.clone());
    for p in layer_positions(8).step_by(97) {
        let state = GameState::from_parts(p.pits(), [20, 20], Side::North);
        if state.is_over() {
            continue;
        }
        assert_eq!(shared.probe_after_capture(&state).unwrap(), ours.probe_after_capture(&state).unwrap());
        let entry = table.entry(&p).unwrap().unwrap();
        let probed = for_search.as_ref().unwrap().probe(&p).unwrap();
        assert_eq!((probed.lower, probed.upper), (entry.lower, entry.upper));
    }
    let big = GameState::from_parts([2, 2, 2, 2, 2, 2, 1, 0, 0, 0, 0, 0], [17, 18], Side::South);
    assert!(matches!(
        ours.probe_after_capture(&big),
        Err(ProbeError::NotCovered { seeds: 13, max_seeds: 12 })
    ));
    eprintln!("{states} states probed, {off_cycle} off a cycle, {engine_exact} exact in the engine file");
    assert!(off_cycle > 1_000 && engine_exact > 1_000);
}

/// Issue 39: a layer is written in value records (one byte per position)
/// exactly when every entry has one, whatever width it was handed over in;
/// the file reads back to the very entries, with the length its widths
/// give, and the shipped table (version 3, full records) reads as before.
#[test]
fn exact_layers_are_written_in_one_byte_and_read_back_to_the_same_entries() {
    use oware::tablebase::owtb::{write_tablebase, Header};
    use oware::tablebase::{BuildParams, Entry, Tablebase};
    let shipped = Tablebase::open(std::path::Path::new(crate::common::SHIPPED)).unwrap();
    assert_eq!(shipped.header().version, 3);
    let mut layers: Vec<Vec<u8>> = (0..=6).map(|n| shipped.layer(n).to_full_records()).collect();
    // Layer 4 gets one open entry; layer 5 one exact entry whose cycle flag
    // its proof does not imply (as a seed table's proof may leave it).
    let open = Entry { value: 1, lower: 0, upper: 2, on_cycle: true, proof: Proof::Open };
    layers[4][3 * 7..3 * 8].copy_from_slice(&open.pack());
    let odd = Entry::exact(2, Proof::Bounds, false);
    layers[5][3 * 11..3 * 12].copy_from_slice(&odd.pack());
    // Layer 2 handed over in value records already.
    let two = PackedLayer::full(&layers[2]).value_records().expect("an exact layer");
    let given = |n: u32| match n {
        2 => PackedLayer::new(&two, layer_size(2)).unwrap(),
        _ => PackedLayer::full(&layers[n as usize]),
    };
    let dir = crate::common::scratch("value-records");
    let path = dir.join("t.owtb");
    write_tablebase(&path, &BuildParams::new(6, shipped.header().budget).unwrap(), None, given).unwrap();
    let table = Tablebase::open(&path).unwrap();
    table.verify().unwrap();
    table.verify_checksums().unwrap();
    assert_eq!(table.header().version, 4);
    let mut length = Header::length(6) as u64;
    for n in 0..=6u32 {
        let width = if n == 4 || n == 5 { EntryWidth::Full } else { EntryWidth::Value };
        assert_eq!(table.header().layers[n as usize].width, width, "layer {n}");
        length += layer_size(n) * width.bytes() as u64;
        assert!(table.layer(n).entries().eq(given(n).entries()), "layer {n}");
        for (i, p) in layer_positions(n).enumerate() {
            assert_eq!(table.entry(&p).unwrap(), Some(given(n).entry(i as u64)), "{p:?}");
        }
    }
    assert_eq!(std::fs::metadata(&path).unwrap().len(), length);
    // Written again from its own layers: the same bytes.
    let again = dir.join("again.owtb");
    write_tablebase(&again, &BuildParams::new(6, shipped.header().budget).unwrap(), None, |n| table.layer(n))
        .unwrap();
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&path).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}
