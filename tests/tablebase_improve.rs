//! Builds that start from a proven table, and improvement passes on a
//! finished build: same bytes as a build from scratch where the earlier
//! table adds nothing, no search where it settles a position, a
//! contradiction stops the build, and a killed pass resumes to the same
//! bytes.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::Duration;

use common::{build_options, scratch, xorshift, SHIPPED};
use oware::cluster::run_ranks;
use oware::progress::Silent;
use oware::tablebase::directory::build::BuildOptions;
use oware::tablebase::directory::improve::{improve, ImproveOptions, Improvement, PASS_DIR};
use oware::tablebase::directory::names::{COMPRESSED_FILE, TABLEBASE_FILE};
use oware::tablebase::entry::{Entry, ENTRY_BYTES};
use oware::tablebase::owtb::{write_tablebase, Provenance};
use oware::tablebase::{
    build, build_across, BuildError, BuildParams, PackedLayer, Proof, SearchBudget, Tablebase,
};

fn options(dir: &Path, max_seeds: u32, budget: SearchBudget) -> BuildOptions {
    BuildOptions { params: BuildParams::new(max_seeds, budget).unwrap(), ..build_options(dir, max_seeds) }
}

fn no_search() -> SearchBudget {
    SearchBudget { nodes_per_search: 0, ..SearchBudget::default() }
}

#[test]
fn a_build_from_the_shipped_table_needs_no_search_and_gives_its_bytes() {
    let shipped = Tablebase::open(Path::new(SHIPPED)).unwrap();
    let dir = scratch("from-shipped");
    let from = BuildOptions { start_from: Some(SHIPPED.into()), ..options(&dir, 8, no_search()) };
    let report = build(&from, &Silent).unwrap();
    let rebuilt = Tablebase::open(&dir.join(TABLEBASE_FILE)).unwrap();
    for n in 0..=8 {
        assert!(rebuilt.layer(n).entries().eq(shipped.layer(n).entries()), "layer {n}");
    }
    // Layers 6 and 7 are exact only by the shipped searches.
    assert_eq!(report.layers[6].exact_from_seed, 1_262);
    assert_eq!(report.layers[7].exact_from_seed, 4_340);
    assert_eq!(report.layers.iter().map(|l| l.search_nodes).sum::<u64>(), 0);
    let provenance = rebuilt.header().provenance.expect("provenance recorded");
    assert_eq!(provenance, Provenance { body_checksum: shipped.header().body_checksum, layers: 9 });
    // Resuming the finished build needs the same table to start from.
    let error = build(&options(&dir, 8, no_search()), &Silent).unwrap_err();
    assert!(matches!(error, BuildError::Parameters { .. }), "{error}");
    assert!(error.to_string().contains("starting from table"), "{error}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_table_that_contradicts_the_build_stops_it() {
    let shipped = Tablebase::open(Path::new(SHIPPED)).unwrap();
    // A position of layer 5 exact by retrograde analysis, off by one seed,
    // in a table whose checksums are all right.
    let mut layers: Vec<Vec<u8>> = (0..=5).map(|n| shipped.layer(n).to_full_records()).collect();
    let at = layers[5]
        .chunks_exact(ENTRY_BYTES)
        .position(|c| {
            let e = Entry::unpack([c[0], c[1], c[2]]);
            e.proof == Proof::Retrograde && e.value < 5
        })
        .expect("a retrograde entry below 5");
    let chunk = &mut layers[5][at * ENTRY_BYTES..(at + 1) * ENTRY_BYTES];
    let mut wrong = Entry::unpack([chunk[0], chunk[1], chunk[2]]);
    let truth = wrong.value;
    (wrong.value, wrong.lower, wrong.upper) = (truth + 1, truth + 1, truth + 1);
    chunk.copy_from_slice(&wrong.pack());
    let dir = scratch("contradiction");
    fs::create_dir_all(&dir).unwrap();
    let bad_table = dir.join("wrong.owtb");
    write_tablebase(&bad_table, &BuildParams::new(5, SearchBudget::NONE).unwrap(), None, |n| {
        PackedLayer::full(&layers[n as usize])
    })
    .unwrap();

    let build_dir = dir.join("build");
    let from = BuildOptions { start_from: Some(bad_table.clone()), ..options(&build_dir, 6, no_search()) };
    let error = build(&from, &Silent).unwrap_err();
    match &error {
        BuildError::Contradiction { contradiction, .. } => {
            assert_eq!((contradiction.seeds, contradiction.index), (5, at as u64));
            assert_eq!(contradiction.ours, (truth, truth));
            assert_eq!(contradiction.theirs, (truth + 1, truth + 1));
        }
        other => panic!("expected a contradiction, got {other}"),
    }
    assert!(error.to_string().contains("layer 5 position"), "{error}");
    assert!(!build_dir.join("layer-05.bin").exists(), "the contradicted layer was written");
    assert!(build_dir.join("layer-04.bin").exists());
    // The same on three ranks with the layers kept spread: rank 0 reports
    // the contradiction, the others stop with it, and nothing is written.
    let spread_dir = dir.join("spread");
    let spread =
        BuildOptions { keep_layers_spread: true, ..BuildOptions { dir: spread_dir.clone(), ..from } };
    let results = run_ranks(3, |comm| build_across(comm, &spread, &Silent));
    match &results[0] {
        Err(BuildError::Contradiction { contradiction, .. }) => {
            assert_eq!((contradiction.seeds, contradiction.index), (5, at as u64));
            assert_eq!((contradiction.ours, contradiction.theirs), ((truth, truth), (truth + 1, truth + 1)));
        }
        other => panic!("expected a contradiction on rank 0, got {other:?}"),
    }
    assert!(results[1..].iter().all(|r| matches!(r, Err(BuildError::Peer { rank: 0, .. }))), "{results:?}");
    assert!(!spread_dir.join("layer-05.bin").exists() && !spread_dir.join("layer-05.bin.tmp").exists());
    assert!(spread_dir.join("layer-04.bin").exists());
    fs::remove_dir_all(&dir).unwrap();
}

fn improve_options(dir: &Path, first: u32, last: u32) -> ImproveOptions {
    ImproveOptions {
        dir: dir.to_path_buf(),
        budget: SearchBudget { min_seeds: first, threshold_max_seeds: last, ..SearchBudget::default() },
        checkpoint_every: Duration::from_secs(3600),
        compress: true,
    }
}

#[test]
fn an_improvement_pass_equals_the_build_that_searched_from_the_start() {
    let shipped = Tablebase::open(Path::new(SHIPPED)).unwrap();
    let dir = scratch("pass");
    build(&options(&dir, 6, no_search()), &Silent).unwrap();
    let before = Tablebase::open(&dir.join(TABLEBASE_FILE)).unwrap();
    let before_exact = (0..=6).map(|n| exact_count(before.layer(n))).sum::<u64>();
    // Layers the build does not hold are refused, nothing done.
    let manifest = fs::read_to_string(dir.join("manifest")).unwrap();
    for (first, last) in [(7, 7), (5, 9)] {
        let error = improve(&improve_options(&dir, first, last), &Silent).unwrap_err();
        assert!(matches!(error, BuildError::LayersOutside { largest: 6, .. }), "{error}");
        assert!(error.to_string().contains("the build holds layers 0 to 6"), "{error}");
    }
    assert_eq!(fs::read_to_string(dir.join("manifest")).unwrap(), manifest);
    assert!(!dir.join(PASS_DIR).exists());
    // Layers 0..=4 first (they were left open without a search), then
    // 5..=6. (Layer 7's search would take most of the test's time.)
    for (first, last, generation) in [(0, 4, 1), (5, 6, 2)] {
        match improve(&improve_options(&dir, first, last), &Silent).unwrap() {
            Improvement::Committed { generation: g, .. } => assert_eq!(g, generation),
            other => panic!("{other:?}"),
        }
    }
    let after = Tablebase::open(&dir.join(TABLEBASE_FILE)).unwrap();
    after.verify_checksums().unwrap();
    let after_exact = (0..=6).map(|n| exact_count(after.layer(n))).sum::<u64>();
    assert!(after_exact > before_exact);
    // Every position of 6 seeds or fewer is exact, as in the shipped table,
    // so the entries are the shipped ones.
    for n in 0..=6 {
        assert!(after.layer(n).entries().eq(shipped.layer(n).entries()), "layer {n}");
    }
    // Only the newest generation's files are left, and no pass directory.
    let names: Vec<String> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().any(|n| n == "layer-06-g2.bin"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.ends_with("-g1.bin") || n == "layer-06.bin" || n == PASS_DIR),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == COMPRESSED_FILE));
    let compressed = Tablebase::open(&dir.join(COMPRESSED_FILE)).unwrap();
    assert_eq!(compressed.header().body_checksum, after.header().body_checksum);
    fs::remove_dir_all(&dir).unwrap();
}

fn exact_count(layer: PackedLayer) -> u64 {
    layer.entries().filter(|e| e.is_exact()).count() as u64
}

fn endgames_improve(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_endgames"));
    command
        .args(["improve", "--dir"])
        .arg(dir)
        .args(["--layers", "2-6", "--search-nodes", "1000000", "--checkpoint-seconds", "0.05", "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

#[test]
fn a_killed_improvement_pass_resumes_to_the_same_bytes() {
    let straight = scratch("straight");
    let killed = scratch("killed");
    // Searched again: layers 2 to 6 (seconds less than with layer 7's
    // search); carried up: layers 7 to 9, about a second of the pass.
    for dir in [&straight, &killed] {
        build(&options(dir, 9, no_search()), &Silent).unwrap();
    }
    assert!(endgames_improve(&straight).status().unwrap().success());
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut kills = 0;
    for _attempt in 0..12 {
        if kills >= 3 {
            break;
        }
        xorshift(&mut seed);
        let mut child = endgames_improve(&killed).spawn().unwrap();
        sleep(Duration::from_millis(50 + seed % 800));
        if child.try_wait().unwrap().is_some() {
            break;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        kills += 1;
    }
    assert!(kills >= 1, "the pass finished before it could be killed");
    // Finish whatever was interrupted: a pass, or the end of a commit.
    for _ in 0..2 {
        let committed = fs::read_to_string(killed.join("manifest")).unwrap().contains("generation 1\n");
        if committed && !killed.join(PASS_DIR).exists() {
            break;
        }
        let output = endgames_improve(&killed).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    let read = |dir: &Path| fs::read(dir.join(TABLEBASE_FILE)).unwrap();
    let manifest = fs::read_to_string(killed.join("manifest")).unwrap();
    assert!(manifest.contains("generation 1\n"), "{manifest}");
    assert_eq!(read(&straight), read(&killed), "interrupted pass differs");
    assert!(!killed.join(PASS_DIR).exists());
    fs::remove_dir_all(&straight).unwrap();
    fs::remove_dir_all(&killed).unwrap();
}
