//! Distributed builds (ranks as threads here; `scripts/mpi-check.sh` runs
//! the same over MPI): the files are byte-identical to the one-process
//! build for 1, 2 and 4 ranks, a distributed build resumes and extends
//! builds of either kind, and a rank that stops stops them all with its
//! reason.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{build_options, scratch, SHIPPED};
use oware::cluster::run_ranks;
use oware::progress::Silent;
use oware::tablebase::directory::build::BuildOptions;
use oware::tablebase::directory::names::{COMPRESSED_FILE, ENGINE_FILE, TABLEBASE_FILE};
use oware::tablebase::{build, build_across, BuildError, BuildParams, BuildReport, SearchBudget};

/// The search budget of these builds: the default one, but the threshold
/// search stops at layer 6 instead of 7. Layer 7's search is most of a
/// ≤ 9 build's time and these tests pay it a dozen times; without it
/// layers 2 to 6 are still searched (gathered to rank 0) and layers 7 to
/// 9 still hold the giant components whose games the ranks play
/// together, and every build is compared with one process on the same
/// budget.
fn budget() -> SearchBudget {
    SearchBudget { threshold_max_seeds: 6, ..SearchBudget::default() }
}

/// Every build here also writes the compressed table, to compare it too.
fn options(dir: &Path, max_seeds: u32) -> BuildOptions {
    let params = BuildParams::new(max_seeds, budget()).unwrap();
    BuildOptions { compress: true, params, ..build_options(dir, max_seeds) }
}

/// Files by name, with their bytes.
type Files = Vec<(String, Vec<u8>)>;

/// The finished files and every layer's entries.
fn outputs(dir: &Path, max_seeds: u32) -> Files {
    let mut names: Vec<String> = [TABLEBASE_FILE, COMPRESSED_FILE, ENGINE_FILE].map(String::from).to_vec();
    names.extend((0..=max_seeds).map(|n| format!("layer-{n:02}.bin")));
    names.into_iter().map(|name| (name.clone(), fs::read(dir.join(&name)).unwrap())).collect()
}

fn build_with_ranks(dir: &Path, max_seeds: u32, ranks: usize) -> Vec<Result<BuildReport, BuildError>> {
    let options = options(dir, max_seeds);
    run_ranks(ranks, |comm| build_across(comm, &options, &Silent))
}

/// The one-process build of layers 0 to 9 that the distributed builds
/// are compared with: its report and its files, built once for every test
/// that asks.
fn alone_to_nine() -> &'static (BuildReport, Files) {
    static ALONE: OnceLock<(BuildReport, Files)> = OnceLock::new();
    ALONE.get_or_init(|| {
        let dir = scratch("alone");
        let report = build(&options(&dir, 9), &Silent).unwrap();
        let files = outputs(&dir, 9);
        fs::remove_dir_all(&dir).unwrap();
        (report, files)
    })
}

#[test]
fn one_two_and_four_ranks_write_the_same_bytes_as_one_process() {
    let expected = &alone_to_nine().1;
    for ranks in [1, 2, 4] {
        let dir = scratch(&format!("ranks{ranks}"));
        let reports: Vec<_> = build_with_ranks(&dir, 9, ranks).into_iter().map(Result::unwrap).collect();
        for (name, bytes) in outputs(&dir, 9) {
            let want = &expected.iter().find(|(n, _)| *n == name).unwrap().1;
            assert!(&bytes == want, "{name} differs with {ranks} ranks");
        }
        if ranks > 1 {
            // Every layer's retrograde analysis was spread, and the ranks
            // agree on what it cost; with updates across ranks from layer
            // 2 on (a layer of one or two positions has few to send).
            let traffic = &reports[0].traffic;
            assert_eq!(traffic.len(), 10);
            let agreed = |t: &oware::tablebase::LayerTraffic| {
                (t.rounds, t.rounds_traffic, t.split_traffic, t.gather_traffic, t.bounds_traffic)
            };
            for report in &reports[1..] {
                let theirs: Vec<_> = report.traffic.iter().map(agreed).collect();
                let ours: Vec<_> = traffic.iter().map(agreed).collect();
                assert_eq!(theirs, ours);
            }
            assert!(
                traffic[6..].iter().all(|t| t.rounds_traffic.messages > 0 && t.rounds > 0),
                "{traffic:?}"
            );
            // Layer 9 holds more undecided positions than Pearce's
            // algorithm takes at once: the ranks split them together.
            assert!(
                traffic[9..].iter().all(|t| t.split_traffic.exchanges > 0 && t.split_traffic.bytes > 0),
                "{traffic:?}"
            );
            // Its giant component's threshold games too (the smaller
            // components of every layer stay on rank 0).
            assert!(
                traffic[9..].iter().all(|t| t.bounds_traffic.exchanges > 10 && t.bounds_traffic.bytes > 0),
                "{traffic:?}"
            );
            // The rounds are the single-process build's rounds.
            for (t, layer) in traffic.iter().zip(&reports[0].layers) {
                assert_eq!(t.rounds, layer.retrograde_rounds, "layer {}", t.seeds);
            }
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// The figures a layer kept spread must count as one process does.
fn counts(stats: &oware::tablebase::LayerStats) -> Vec<u64> {
    let c = &stats.components;
    vec![
        stats.decided_by_retrograde,
        stats.retrograde_rounds,
        stats.decided_acyclic,
        c.cycle_components,
        c.game_state_components,
        c.positions_on_cycles,
        c.largest,
        c.largest_game_state,
        stats.exact_by_bounds,
        stats.exact_by_search,
        stats.safety_rounds,
        stats.open_before_search,
        stats.exact_from_seed,
        stats.exact,
        stats.unresolved,
    ]
}

/// With `keep_layers_spread`, the layers without a search finish with
/// their entries kept spread: the same bytes and counts as one process,
/// with 2 and 3 ranks, from scratch (searches up to 6 seeds here: layers
/// 7 to 9 kept spread) and from a proven table without a search
/// (every layer kept spread).
#[test]
fn layers_kept_spread_give_the_one_process_bytes_and_counts() {
    for (name, budget, start_from, kept) in [
        ("default", budget(), None, 7..=9),
        ("from-table", SearchBudget::NONE, Some(PathBuf::from(SHIPPED)), 0..=9),
    ] {
        let params = BuildParams::new(9, budget).unwrap();
        // One process on the same parameters (from scratch: the build the
        // other tests compare with).
        let from_table;
        let (expected_report, expected) = match &start_from {
            None => alone_to_nine(),
            Some(_) => {
                let reference = scratch(&format!("spread-alone-{name}"));
                let alone = BuildOptions { params, start_from: start_from.clone(), ..options(&reference, 9) };
                from_table = (build(&alone, &Silent).unwrap(), outputs(&reference, 9));
                fs::remove_dir_all(&reference).unwrap();
                &from_table
            }
        };
        for ranks in [2, 3] {
            let dir = scratch(&format!("spread-{name}-{ranks}"));
            let spread = BuildOptions {
                params,
                start_from: start_from.clone(),
                keep_layers_spread: true,
                ..options(&dir, 9)
            };
            let reports: Vec<_> = run_ranks(ranks, |comm| build_across(comm, &spread, &Silent))
                .into_iter()
                .map(Result::unwrap)
                .collect();
            for (name, bytes) in outputs(&dir, 9) {
                let want = &expected.iter().find(|(n, _)| *n == name).unwrap().1;
                assert!(&bytes == want, "{name} differs with {ranks} ranks kept spread");
            }
            let report = &reports[0];
            for (ours, theirs) in report.layers.iter().zip(&expected_report.layers) {
                assert_eq!(counts(ours), counts(theirs), "layer {} with {ranks} ranks", ours.seeds);
            }
            // Which layers were kept spread (games and propagation across
            // the ranks); the others, searched, were gathered.
            let traffic = &report.traffic;
            let found: Vec<u32> = traffic.iter().filter(|t| t.kept_spread).map(|t| t.seeds).collect();
            assert_eq!(found, kept.clone().collect::<Vec<u32>>(), "{traffic:?}");
            assert!(traffic[7..].iter().all(|t| t.bounds_traffic.bytes > 0), "{traffic:?}");
            fs::remove_dir_all(&dir).unwrap();
        }
    }
}

#[test]
fn a_distributed_build_extends_a_build_of_either_kind() {
    let expected = &alone_to_nine().1;
    // One process to 6, then three ranks to 9.
    let dir = scratch("extend");
    build(&options(&dir, 6), &Silent).unwrap();
    for result in build_with_ranks(&dir, 9, 3) {
        assert_eq!(result.unwrap().reused_layers, 7);
    }
    assert!(&outputs(&dir, 9) == expected);
    // Three ranks to 6, then one process to 9.
    let dir2 = scratch("extend2");
    build_with_ranks(&dir2, 6, 3).into_iter().for_each(|r| drop(r.unwrap()));
    build(&options(&dir2, 9), &Silent).unwrap();
    assert!(&outputs(&dir2, 9) == expected);
    for d in [dir, dir2] {
        fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn a_rank_that_stops_stops_them_all_with_its_reason() {
    // Rank 0 finds a build with other parameters and stops before any
    // layer; the others stop with its reason.
    let dir = scratch("refused");
    build(&options(&dir, 4), &Silent).unwrap();
    let mut other = options(&dir, 6);
    let budget = SearchBudget::default();
    other.params =
        BuildParams::new(6, SearchBudget { nodes_per_search: budget.nodes_per_search + 1, ..budget })
            .unwrap();
    let results = run_ranks(3, |comm| build_across(comm, &other, &Silent));
    assert!(matches!(results[0], Err(BuildError::Parameters { .. })), "{:?}", results[0]);
    for result in &results[1..] {
        match result {
            Err(BuildError::Peer { rank: 0, problem }) => {
                assert!(problem.contains("other parameters"), "{problem}")
            }
            other => panic!("{other:?}"),
        }
    }
    // A follower that cannot map a finished layer: all stop, rank 0 with
    // the follower's reason. The followers read the layers through their
    // own options' directory, so give one of them a directory without
    // them: the same manifest, but the layers missing.
    let dir2 = scratch("missing");
    build(&options(&dir2, 4), &Silent).unwrap();
    let copy = scratch("missing-copy");
    fs::create_dir_all(&copy).unwrap();
    fs::copy(dir2.join("manifest"), copy.join("manifest")).unwrap();
    let results = run_ranks(2, |comm| {
        let dir = if comm.rank() == 0 { &dir2 } else { &copy };
        build_across(comm, &options(dir, 6), &Silent)
    });
    assert!(matches!(results[1], Err(BuildError::Io { .. })), "{:?}", results[1]);
    match &results[0] {
        Err(BuildError::Peer { rank: 1, problem }) => assert!(problem.contains("layer-00.bin"), "{problem}"),
        other => panic!("{other:?}"),
    }
    for d in [dir, dir2, copy] {
        fs::remove_dir_all(d).unwrap();
    }
}
