//! Tablebase builds in a directory: kill -9 and resume give the same bytes,
//! other parameters or damaged files are refused and left alone, and the
//! result matches the shipped tablebase.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::Duration;

use common::{build_options, scratch, xorshift, SHIPPED};
use oware::checksum::checksum;
use oware::progress::Silent;
use oware::tablebase::directory::build::BuildOptions;
use oware::tablebase::directory::names::{COMPRESSED_FILE, ENGINE_FILE, TABLEBASE_FILE};
use oware::tablebase::{build, BuildError, BuildParams, SearchBudget, Tablebase};

/// `endgames build` of the layers up to `max_seeds`, with the threshold
/// search on the layers up to `search_max_seeds`, a checkpoint inside a
/// layer every 0.05 s. (A ≤ 8 build with the default search to layer 7
/// takes about 8 s, most of it layer 7's search; a ≤ 9 build searched to
/// layer 6 about 2 s, with checkpoints in the components and games of
/// layers 7 to 9.)
fn endgames(dir: &Path, max_seeds: u32, search_max_seeds: u32) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_endgames"));
    command
        .args(["build", "--dir"])
        .arg(dir)
        .args([
            "--max-seeds",
            &max_seeds.to_string(),
            "--search-max-seeds",
            &search_max_seeds.to_string(),
            "--checkpoint-seconds",
            "0.05",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

fn outputs(dir: &Path) -> Vec<Vec<u8>> {
    [TABLEBASE_FILE, COMPRESSED_FILE, ENGINE_FILE].iter().map(|f| fs::read(dir.join(f)).unwrap()).collect()
}

#[test]
fn killed_builds_resume_to_identical_files() {
    let straight = scratch("straight");
    assert!(endgames(&straight, 8, 7).status().unwrap().success());
    // Its layers 0 to 7 are exact, and so are the shipped table's bytes:
    // which positions the bounds prove and which the search does not
    // depend on the search's budget once every one is proven (the shipped
    // table was built with 300 times as many nodes per question).
    let shipped = Tablebase::open(Path::new(SHIPPED)).unwrap();
    let rebuilt = Tablebase::open(&straight.join(TABLEBASE_FILE)).unwrap();
    rebuilt.verify_checksums().unwrap();
    for n in 0..=7 {
        assert!(rebuilt.layer(n).entries().eq(shipped.layer(n).entries()), "layer {n}");
    }
    let killed = scratch("killed");
    // Deterministic pseudo-random kill times, spread over the whole build.
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut kills = 0;
    let mut resumed_from_checkpoint = false;
    for _attempt in 0..16 {
        if kills >= 3 && resumed_from_checkpoint {
            break;
        }
        xorshift(&mut seed);
        let mut child = endgames(&killed, 8, 7).spawn().unwrap();
        sleep(Duration::from_millis(20 + seed % 700));
        if child.try_wait().unwrap().is_some() {
            break; // finished before the kill: nothing left to interrupt
        }
        child.kill().unwrap(); // SIGKILL
        let output = child.wait_with_output().unwrap();
        resumed_from_checkpoint |=
            String::from_utf8_lossy(&output.stderr).contains("resuming from checkpoint");
        kills += 1;
    }
    let last = endgames(&killed, 8, 7).output().unwrap();
    assert!(last.status.success(), "{}", String::from_utf8_lossy(&last.stderr));
    resumed_from_checkpoint |= String::from_utf8_lossy(&last.stderr).contains("resuming from checkpoint");
    assert!(kills >= 2, "the build finished before it could be killed twice");
    assert!(resumed_from_checkpoint, "no run resumed from a checkpoint inside a layer");
    assert!(outputs(&straight) == outputs(&killed), "interrupted build differs");
    // Nothing stray is left behind.
    for entry in fs::read_dir(&killed).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        assert!(!name.ends_with(".tmp") && !name.starts_with("checkpoint-"), "{name}");
    }
    fs::remove_dir_all(&straight).unwrap();
    fs::remove_dir_all(&killed).unwrap();
}

#[test]
fn other_parameters_are_refused_and_nothing_is_touched() {
    let dir = scratch("params");
    build(&build_options(&dir, 4), &Silent).unwrap();
    let manifest = fs::read(dir.join("manifest")).unwrap();
    let table = fs::read(dir.join(TABLEBASE_FILE)).unwrap();
    let error = build(&build_options(&dir, 3), &Silent).unwrap_err();
    assert!(matches!(error, BuildError::Parameters { .. }), "{error}");
    assert!(error.to_string().contains("largest_layer 4"), "{error}");
    let mut other_budget = build_options(&dir, 4);
    let budget = SearchBudget::default();
    other_budget.params =
        BuildParams::new(4, SearchBudget { nodes_per_search: budget.nodes_per_search + 1, ..budget })
            .unwrap();
    assert!(matches!(build(&other_budget, &Silent), Err(BuildError::Parameters { .. })));
    assert_eq!(fs::read(dir.join("manifest")).unwrap(), manifest);
    assert_eq!(fs::read(dir.join(TABLEBASE_FILE)).unwrap(), table);
    // The same parameters again: everything is reused and rewritten alike.
    let report = build(&build_options(&dir, 4), &Silent).unwrap();
    assert_eq!(report.reused_layers, 5);
    assert_eq!(fs::read(dir.join(TABLEBASE_FILE)).unwrap(), table);
    // More seeds with the same budget extend the build, to the bytes of a
    // build made that size at once.
    let report = build(&build_options(&dir, 6), &Silent).unwrap();
    assert_eq!(report.reused_layers, 5);
    let at_once = scratch("params-at-once");
    build(&build_options(&at_once, 6), &Silent).unwrap();
    assert_eq!(fs::read(dir.join(TABLEBASE_FILE)).unwrap(), fs::read(at_once.join(TABLEBASE_FILE)).unwrap());
    fs::remove_dir_all(&dir).unwrap();
    fs::remove_dir_all(&at_once).unwrap();
}

/// A build directory whose manifest an earlier builder wrote (version 4:
/// the parameters under their old names) resumes and extends like any,
/// to the bytes of a build made at once, and its manifest is written
/// again in version 5. `stats.json` names every parameter as the manifest
/// does, apart from the per-layer figures.
#[test]
fn a_version_4_manifest_resumes() {
    let dir = scratch("version-4");
    build(&build_options(&dir, 4), &Silent).unwrap();
    let manifest = fs::read_to_string(dir.join("manifest")).unwrap();
    let (parameters, records) = manifest.split_at(manifest.find("\nlayer 0 ").unwrap() + 1);
    assert!(parameters.starts_with("oware-tablebase-build 5\nlargest_layer 4\n"), "{manifest}");
    let version_4 = "oware-tablebase-build 4\nmax-seeds 4\nsearch-nodes 1000000\nsearch-max-path 1000\n\
                     search-min-seeds 0\nsearch-max-seeds 7\ncut-nodes 0\ncut-max-seeds 0\n";
    fs::write(dir.join("manifest"), format!("{version_4}{records}")).unwrap();
    let report = build(&build_options(&dir, 6), &Silent).unwrap();
    assert_eq!(report.reused_layers, 5);
    let at_once = scratch("version-4-at-once");
    build(&build_options(&at_once, 6), &Silent).unwrap();
    for name in [TABLEBASE_FILE, ENGINE_FILE] {
        assert_eq!(fs::read(dir.join(name)).unwrap(), fs::read(at_once.join(name)).unwrap(), "{name}");
    }
    let manifest = fs::read_to_string(dir.join("manifest")).unwrap();
    assert!(manifest.starts_with("oware-tablebase-build 5\nlargest_layer 6\n"), "{manifest}");
    let parameters = |text: &str| text.lines().take(8).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(parameters(&manifest), parameters(&fs::read_to_string(at_once.join("manifest")).unwrap()));
    let stats = fs::read_to_string(dir.join("stats.json")).unwrap();
    let head = "{\n  \"largest_layer\": 6,\n  \"search_nodes_per_question\": 1000000,\n  \"search_max_path\": 1000,\n  \
                \"search_min_seeds\": 0,\n  \"threshold_max_seeds\": 7,\n  \"cut_nodes_per_question\": 0,\n  \
                \"cut_max_seeds\": 0,\n  \"positions\": ";
    assert!(stats.starts_with(head), "{stats}");
    // Each layer's figures: the nodes its searches spent.
    assert_eq!(stats.matches("\"search_nodes\": ").count(), 7, "{stats}");
    fs::remove_dir_all(&dir).unwrap();
    fs::remove_dir_all(&at_once).unwrap();
}

/// Layer files of full records, three bytes a position, as every builder
/// before the value records wrote them: read as they are, kept as they
/// are, and the table written from them is the table of a build made at
/// once (which writes its exact layers in one byte a position), and an
/// improvement pass takes that table for the directory's own.
#[test]
fn layer_files_of_full_records_are_read_and_extended() {
    let dir = scratch("full-records");
    build(&build_options(&dir, 4), &Silent).unwrap();
    let manifest = fs::read_to_string(dir.join("manifest")).unwrap();
    let mut rewritten = String::new();
    for line in manifest.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        if fields[0] != "layer" {
            rewritten += &format!("{line}\n");
            continue;
        }
        let n: u32 = fields[1].parse().unwrap();
        let path = dir.join(format!("layer-{n:02}.bin"));
        let values = fs::read(&path).unwrap();
        assert_eq!(values.len() as u64, oware::rank::layer_size(n), "layer {n} in value records");
        let full = oware::tablebase::PackedLayer::new(&values, oware::rank::layer_size(n))
            .unwrap()
            .to_full_records();
        fs::write(&path, &full).unwrap();
        let record = format!("layer {n} {} {:016x} {} {}", full.len(), checksum(&full), fields[4], fields[5]);
        rewritten += &format!("{record}\n");
    }
    fs::write(dir.join("manifest"), rewritten).unwrap();
    let report = build(&build_options(&dir, 6), &Silent).unwrap();
    assert_eq!(report.reused_layers, 5);
    let at_once = scratch("full-records-at-once");
    build(&build_options(&at_once, 6), &Silent).unwrap();
    for name in [TABLEBASE_FILE, ENGINE_FILE] {
        assert_eq!(fs::read(dir.join(name)).unwrap(), fs::read(at_once.join(name)).unwrap(), "{name}");
    }
    for n in 0..=6u32 {
        let width = if n <= 4 { 3 } else { 1 };
        let length = fs::metadata(dir.join(format!("layer-{n:02}.bin"))).unwrap().len();
        assert_eq!(length, width * oware::rank::layer_size(n), "layer {n}");
    }
    // The table the build wrote holds layers 0 to 4 in value records, their
    // files in full records: an improvement pass recognises it as the
    // directory's own, and writes its layers anew, in value records.
    let check = oware::tablebase::directory::improve::ImproveOptions {
        dir: dir.clone(),
        budget: SearchBudget { min_seeds: 6, threshold_max_seeds: 6, ..SearchBudget::default() },
        checkpoint_every: Duration::from_secs(3600),
        compress: false,
    };
    oware::tablebase::directory::improve::improve(&check, &Silent).unwrap();
    let manifest = fs::read_to_string(dir.join("manifest")).unwrap();
    let sizes: Vec<u64> = manifest
        .lines()
        .filter(|l| l.starts_with("layer "))
        .map(|l| l.split(' ').nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(sizes, (0..=6).map(oware::rank::layer_size).collect::<Vec<u64>>(), "{manifest}");
    fs::remove_dir_all(&dir).unwrap();
    fs::remove_dir_all(&at_once).unwrap();
}

#[test]
fn damaged_files_are_refused_and_left_as_they_are() {
    let dir = scratch("damaged");
    build(&build_options(&dir, 5), &Silent).unwrap();
    // A truncated layer.
    let layer = dir.join("layer-03.bin");
    let bytes = fs::read(&layer).unwrap();
    fs::write(&layer, &bytes[..bytes.len() - 1]).unwrap();
    let error = build(&build_options(&dir, 5), &Silent).unwrap_err();
    assert!(matches!(error, BuildError::Corrupt { .. }), "{error}");
    assert!(error.to_string().contains("layer-03.bin"), "{error}");
    assert_eq!(fs::read(&layer).unwrap().len(), bytes.len() - 1);
    fs::write(&layer, &bytes).unwrap();
    // Files whose checksums match but which no build wrote: a layer
    // holding an entry whose value exceeds its 3 seeds, and layer 4's
    // statistics claiming one position more; the manifest forged to match.
    let manifest = fs::read_to_string(dir.join("manifest")).unwrap();
    let forge = |file: &str, edit: &dyn Fn(&mut Vec<u8>)| {
        let path = dir.join(file);
        let good = fs::read(&path).unwrap();
        let mut forged = good.clone();
        edit(&mut forged);
        fs::write(&path, &forged).unwrap();
        let (old, new) = (format!("{:016x}", checksum(&good)), format!("{:016x}", checksum(&forged)));
        assert!(manifest.contains(&old), "{manifest}");
        fs::write(dir.join("manifest"), manifest.replace(&old, &new)).unwrap();
        let error = build(&build_options(&dir, 5), &Silent).unwrap_err();
        assert!(matches!(error, BuildError::Corrupt { .. }), "{error}");
        assert!(error.to_string().contains(file), "{error}");
        assert_eq!(fs::read(&path).unwrap(), forged, "the forged file was touched");
        fs::write(&path, &good).unwrap();
        fs::write(dir.join("manifest"), &manifest).unwrap();
        error.to_string()
    };
    // (Layer 3 is exact: its file holds one value record per position.)
    assert_eq!(fs::metadata(dir.join("layer-03.bin")).unwrap().len(), oware::rank::layer_size(3));
    let error = forge("layer-03.bin", &|entries| entries[0] = 4);
    assert!(error.contains("entry 0 is malformed"), "{error}");
    // The statistics: a layout word, then the seeds, then the positions.
    let error = forge("layer-04.stats", &|stats| {
        let positions = u64::from_le_bytes(stats[16..24].try_into().unwrap());
        stats[16..24].copy_from_slice(&(positions + 1).to_le_bytes());
    });
    assert!(error.contains("1366 positions, expected layer 4 with 1365"), "{error}");
    build(&build_options(&dir, 5), &Silent).unwrap();
    // A corrupt checkpoint: kill a build once it has one inside layer 9
    // (the largest), then flip a byte of it.
    fs::remove_dir_all(&dir).unwrap();
    let (path, manifest) = killed_with_a_checkpoint(&dir, 9);
    let mut damaged = fs::read(&path).unwrap();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x40;
    fs::write(&path, &damaged).unwrap();
    let output = endgames(&dir, 9, 6).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().filter(|l| l.starts_with("endgames: error:")).count(), 1, "{stderr}");
    assert!(stderr.contains("checksum mismatch"), "{stderr}");
    assert_eq!(fs::read(&path).unwrap(), damaged, "the damaged checkpoint was touched");
    assert_eq!(fs::read_to_string(dir.join("manifest")).unwrap(), manifest);
    // A manifest that names no checkpoint beside a later one than the
    // first (which only an interrupted first save leaves): refused, the
    // checkpoint kept.
    let without: String =
        manifest.lines().filter(|l| !l.starts_with("checkpoint ")).map(|l| format!("{l}\n")).collect();
    fs::write(dir.join("manifest"), &without).unwrap();
    let later = dir.join("checkpoint-09-000002.zst");
    fs::rename(&path, &later).unwrap();
    let output = endgames(&dir, 9, 6).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("names no checkpoint of layer 9"), "{stderr}");
    assert_eq!(fs::read(&later).unwrap(), damaged, "the checkpoint was touched");
    assert_eq!(fs::read_to_string(dir.join("manifest")).unwrap(), without);
    fs::remove_dir_all(&dir).unwrap();
}

/// Builds up to `n` seeds in `dir` (searched up to layer 6) and kills the
/// build once the manifest names a checkpoint of layer `n`; returns that checkpoint's path and the
/// manifest.
fn killed_with_a_checkpoint(dir: &Path, n: u32) -> (PathBuf, String) {
    let mut child = endgames(dir, n, 6).spawn().unwrap();
    loop {
        sleep(Duration::from_millis(2));
        if fs::read_to_string(dir.join("manifest")).unwrap_or_default().contains(&format!("checkpoint {n} "))
        {
            child.kill().unwrap();
            child.wait().unwrap();
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the build ended before a layer-{n} checkpoint");
    }
    let manifest = fs::read_to_string(dir.join("manifest")).unwrap();
    // (The build may have moved on between the look and the kill.)
    let live =
        manifest.lines().find(|l| l.starts_with("checkpoint ")).expect("a live checkpoint").to_string();
    let fields: Vec<u64> = live.split(' ').skip(1).take(2).map(|f| f.parse().unwrap()).collect();
    let path = dir.join(format!("checkpoint-{:02}-{:06}.zst", fields[0], fields[1]));
    assert!(path.exists(), "{}", path.display());
    (path, manifest)
}

/// A build killed between the first checkpoint of a layer and the
/// manifest that names it leaves the manifest of the finished layers
/// beside `checkpoint-NN-000001.zst`: the next run adopts that checkpoint
/// (checked by its own frame checksum) and ends with a straight build's
/// files.
#[test]
fn an_interrupted_first_save_is_adopted() {
    let straight = scratch("straight-9-adopt");
    assert!(endgames(&straight, 9, 6).status().unwrap().success());
    let dir = scratch("adopt");
    let (path, manifest) = killed_with_a_checkpoint(&dir, 9);
    // The state between the two writes of the layer's first save.
    let first = dir.join("checkpoint-09-000001.zst");
    fs::rename(&path, &first).unwrap();
    let before: String =
        manifest.lines().filter(|l| !l.starts_with("checkpoint ")).map(|l| format!("{l}\n")).collect();
    fs::write(dir.join("manifest"), &before).unwrap();
    // Damaged, it is refused and left as it is. The damage is in the
    // frame's content checksum (its last 4 bytes), which the content then
    // no longer matches. (A bit flipped elsewhere can leave the content as
    // it was: 22 of 9,181 positions of one such checkpoint, some header
    // and padding bits, which `zstd -t` accepts too. Such a checkpoint is
    // rightly adopted, and the checkpoint's bytes differ from run to run,
    // so a flip in the middle made this test fail about once in 400.)
    let good = fs::read(&first).unwrap();
    let mut damaged = good.clone();
    *damaged.last_mut().unwrap() ^= 0x20;
    fs::write(&first, &damaged).unwrap();
    let output = endgames(&dir, 9, 6).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("checkpoint-09-000001.zst"), "{stderr}");
    assert_eq!(fs::read(&first).unwrap(), damaged);
    assert_eq!(fs::read_to_string(dir.join("manifest")).unwrap(), before);
    // Intact, it is adopted.
    fs::write(&first, &good).unwrap();
    let output = endgames(&dir, 9, 6).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("layer 9: adopted checkpoint-09-000001.zst"), "{stderr}");
    assert!(stderr.contains("layer 9: resuming from checkpoint 1"), "{stderr}");
    assert_eq!(outputs(&dir), outputs(&straight));
    fs::remove_dir_all(&dir).unwrap();
    fs::remove_dir_all(&straight).unwrap();
}

/// A checkpoint in the first layout (whose components meant something
/// else) is not resumed: its layer is built again from the start, to the
/// same files as a build never interrupted. One in the second layout
/// (without the contradiction field) is resumed by a build that starts
/// from no table.
#[test]
fn checkpoints_of_earlier_layouts_restart_their_layer_or_resume() {
    let straight = scratch("straight-9");
    assert!(endgames(&straight, 9, 6).status().unwrap().success());
    for (layout, resumed) in [(&b"OWCKPT01"[..], false), (&b"OWCKPT02"[..], true)] {
        let dir = scratch("earlier-layout");
        let (path, manifest) = killed_with_a_checkpoint(&dir, 9);
        let mut snapshot = zstd::stream::decode_all(&fs::read(&path).unwrap()[..]).unwrap();
        assert_eq!(&snapshot[..8], b"OWCKPT03");
        // (The last byte says there is no contradiction: the second
        // layout ends before it.)
        assert_eq!(snapshot.pop(), Some(0));
        snapshot[..8].copy_from_slice(layout);
        let earlier = zstd::stream::encode_all(&snapshot[..], 3).unwrap();
        fs::write(&path, &earlier).unwrap();
        let rewritten: String = manifest
            .lines()
            .map(|line| match line.strip_prefix("checkpoint ") {
                Some(rest) => {
                    let fields: Vec<&str> = rest.split(' ').collect();
                    let (bytes, sum) = (earlier.len(), checksum(&earlier));
                    format!("checkpoint {} {} {bytes} {sum:016x}\n", fields[0], fields[1])
                }
                None => format!("{line}\n"),
            })
            .collect();
        fs::write(dir.join("manifest"), rewritten).unwrap();
        let output = endgames(&dir, 9, 6).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        let restarted = stderr.contains("has the layout of an earlier version");
        assert_eq!((restarted, stderr.contains("resuming from checkpoint")), (!resumed, resumed), "{stderr}");
        assert!(outputs(&straight) == outputs(&dir), "the layer differs");
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::remove_dir_all(&straight).unwrap();
}

#[test]
fn the_shipped_tablebase_is_exact_and_carries_one_layer_up() {
    let shipped = Tablebase::open(Path::new(SHIPPED)).unwrap();
    shipped.verify_checksums().unwrap();
    // `make endgames` is one build with the threshold search on layers up
    // to 11 at up to 300 million nodes per question; the header says so.
    let budget =
        SearchBudget { nodes_per_search: 300_000_000, threshold_max_seeds: 11, ..SearchBudget::default() };
    assert_eq!(shipped.header().budget, budget);
    assert_eq!(shipped.header().provenance, None);
    for n in 0..=12 {
        let open = shipped.layer(n).entries().filter(|e| !e.is_exact()).count();
        assert_eq!(open, 0, "layer {n}");
    }
    // Layer 13 on top of it: the bounds leave 136 cycle positions open and
    // the threshold search closes every one of them.
    let dir = scratch("thirteen");
    let budget = SearchBudget {
        nodes_per_search: 1_000_000,
        min_seeds: 13,
        threshold_max_seeds: 13,
        ..SearchBudget::default()
    };
    let report = build(
        &BuildOptions {
            params: BuildParams::new(13, budget).unwrap(),
            start_from: Some(PathBuf::from(SHIPPED)),
            ..build_options(&dir, 13)
        },
        &Silent,
    )
    .unwrap();
    let layer = &report.layers[13];
    assert_eq!(layer.positions, 2_496_144);
    assert_eq!((layer.open_before_search, layer.exact_by_search), (136, 136));
    assert_eq!(layer.exact, layer.positions);
    engine_files_of_thirteen_seeds_read_as_the_engine_reads_them(&dir);
    fs::remove_dir_all(&dir).unwrap();
}

/// The engine's own hash of a position (the side to move's pits first),
/// written from its source (`OwareLeaves.computeHash`): a rank among the
/// positions of at most 15 seeds, summing `C(i + 15 − k, i + 1)` from the
/// opponent's last pit down while `k`, the seeds counted so far plus the
/// 15 the index leaves room for minus those on the board, is below 15.
fn engine_hash(pits: [u8; 12]) -> usize {
    fn choose(n: u64, k: u64) -> u64 {
        (0..k).fold(1, |acc, j| acc * (n - j) / (j + 1))
    }
    let board: i64 = pits.iter().map(|&p| p as i64).sum();
    let mut k = 15 - board;
    let mut hash = 0;
    for i in (0..12).rev() {
        if k >= 15 {
            break;
        }
        hash += choose(i as u64 + 15 - k as u64, i as u64 + 1);
        k += pits[i] as i64;
    }
    hash as usize
}

/// Issue 10: engine files past 12 seeds. Both layouts of a 13-seed table
/// say `Positions` = the bytes after the header (index bytes and the one
/// trailing byte), and the byte at the engine's own hash of a position is
/// our entry's engine byte, for every 13-seed position sampled and a few
/// below.
fn engine_files_of_thirteen_seeds_read_as_the_engine_reads_them(dir: &Path) {
    use oware::formats::endgames::{EndgameFile, EndgamesVersion};
    use oware::rank::{layer_offset, layer_positions};
    use oware::tablebase::engine::{engine_byte, export_engine};
    let table = Tablebase::open(&dir.join(TABLEBASE_FILE)).unwrap();
    for version in [EndgamesVersion::V1_0, EndgamesVersion::V2_0] {
        let path = dir.join(format!("engine-{}.bin", version.as_str()));
        export_engine(&table, table.path(), version, None, &path).unwrap();
        let file = EndgameFile::open(&path).unwrap();
        assert_eq!(file.version(), version);
        assert_eq!(file.max_seeds(), 13);
        assert_eq!(file.index_count(), layer_offset(14));
        assert_eq!(file.index_count(), 5_200_300, "OwareLeaves.OFFSETS[13]");
        assert_eq!(file.trailing(), [0u8]);
        assert_eq!(file.header().number("Positions").unwrap(), Some(file.index_count() + 1));
        file.verify().unwrap();
        let bytes = file.bytes();
        let mut checked = 0;
        for n in [1, 7, 12, 13] {
            for p in layer_positions(n).step_by(97) {
                let ours = engine_byte(&table.entry(&p).unwrap().unwrap());
                assert_eq!(bytes[engine_hash(p.pits())], ours, "{n} seeds: {:?}", p.pits());
                checked += 1;
            }
        }
        assert!(checked > 30_000, "{checked}");
    }
}

#[test]
fn a_build_removes_only_files_it_could_have_written() {
    let dir = scratch("strays");
    build(&build_options(&dir, 2), &Silent).unwrap();
    let theirs = ["notes.tmp", "checkpoint-mine.txt", "checkpoint-03-000001.zst.orig", "manifest.old.tmp"];
    let ours = [
        "manifest.tmp",
        "layer-02.bin.tmp",
        "checkpoint-01-000004.zst",
        "checkpoint-01-000004-r0001.zst",
        "stats.json.tmp",
    ];
    for name in theirs.iter().chain(&ours) {
        fs::write(dir.join(name), b"not a build's").unwrap();
    }
    build(&build_options(&dir, 4), &Silent).unwrap();
    for name in theirs {
        assert_eq!(fs::read(dir.join(name)).unwrap(), b"not a build's", "{name}");
    }
    for name in ours {
        assert!(!dir.join(name).exists(), "{name} left behind");
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// Without a manifest, a file only a build writes means a build whose
/// manifest is lost: refused, and nothing is written or removed (but the
/// lock).
#[test]
fn a_build_whose_manifest_is_lost_is_refused() {
    let dir = scratch("lost-manifest");
    fs::create_dir_all(&dir).unwrap();
    let found = ["checkpoint-05-000003.zst", "manifest.tmp", "notes.txt"];
    for name in found {
        fs::write(dir.join(name), b"found here").unwrap();
    }
    let error = build(&build_options(&dir, 6), &Silent).unwrap_err();
    assert!(matches!(error, BuildError::Corrupt { .. }), "{error}");
    assert!(
        error.to_string().contains("there is no manifest, yet checkpoint-05-000003.zst is there"),
        "{error}"
    );
    let mut names: Vec<String> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["build.lock", "checkpoint-05-000003.zst", "manifest.tmp", "notes.txt"]);
    for name in found {
        assert_eq!(fs::read(dir.join(name)).unwrap(), b"found here", "{name}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// A finished build run again keeps its table and the compressed copy
/// (the same files, not rewritten: a large table's copy takes minutes to
/// compress), and writes them again if one no longer holds the layers.
#[test]
fn a_finished_build_run_again_keeps_its_outputs() {
    use std::os::unix::fs::MetadataExt;
    let dir = scratch("again");
    assert!(endgames(&dir, 5, 5).status().unwrap().success());
    let inode = |name: &str| fs::metadata(dir.join(name)).unwrap().ino();
    let before = [inode(TABLEBASE_FILE), inode(COMPRESSED_FILE)];
    let bytes = outputs(&dir);
    let again = endgames(&dir, 5, 5).output().unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert_eq!(stderr.matches("already holds these layers: kept").count(), 2, "{stderr}");
    assert_eq!([inode(TABLEBASE_FILE), inode(COMPRESSED_FILE)], before);
    assert!(outputs(&dir) == bytes);
    // A copy that is not the table's (here: an empty file) is written again.
    fs::write(dir.join(COMPRESSED_FILE), b"").unwrap();
    let again = endgames(&dir, 5, 5).output().unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert_eq!(stderr.matches("already holds these layers: kept").count(), 1, "{stderr}");
    assert!(outputs(&dir) == bytes);
    fs::remove_dir_all(&dir).unwrap();
}

/// A build that writes no `tablebase.owtb` keeps one full copy of the
/// table on disk (its layer files) and loses nothing: its compressed
/// copy, streamed from the layers, has the bytes of the plain file
/// compressed; the directory opens as the same table (header and
/// entries), `endgames verify` and `--from` read it, and a damaged layer
/// file is refused.
#[test]
fn a_build_without_the_plain_table_is_the_same_table_on_one_copy() {
    use oware::tablebase::open::open_ours;
    let plain = scratch("with-plain-table");
    let lean = scratch("without-plain-table");
    build(&BuildOptions { compress: true, ..build_options(&plain, 6) }, &Silent).unwrap();
    build(&BuildOptions { compress: true, plain_table: false, ..build_options(&lean, 6) }, &Silent).unwrap();
    assert!(!lean.join(TABLEBASE_FILE).exists());
    let compressed = fs::read(lean.join(COMPRESSED_FILE)).unwrap();
    assert_eq!(compressed, fs::read(plain.join(COMPRESSED_FILE)).unwrap());
    // The plain file compressed on its own gives the same bytes.
    let again = plain.join("again.owtb.zst");
    oware::tablebase::owtb::write_compressed(&plain.join(TABLEBASE_FILE), &again, &Silent).unwrap();
    assert_eq!(fs::read(&again).unwrap(), compressed);
    let file = Tablebase::open(&plain.join(TABLEBASE_FILE)).unwrap();
    let layers = open_ours(&lean).unwrap();
    assert_eq!(layers.header(), file.header());
    layers.verify().unwrap();
    for n in 0..=6 {
        assert!(layers.layer(n).entries().eq(file.layer(n).entries()), "layer {n}");
    }
    // Run again: the copy is kept, and still no plain file.
    build(&BuildOptions { compress: true, plain_table: false, ..build_options(&lean, 6) }, &Silent).unwrap();
    assert_eq!(fs::read(lean.join(COMPRESSED_FILE)).unwrap(), compressed);
    assert!(!lean.join(TABLEBASE_FILE).exists());
    let verify = Command::new(env!("CARGO_BIN_EXE_endgames"))
        .args(["verify", "--tablebase"])
        .arg(&lean)
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", String::from_utf8_lossy(&verify.stderr));
    // A build from it, and from the plain file (layer 7 unsearched): the
    // same files.
    let (from_lean, from_plain) = (scratch("from-lean"), scratch("from-plain"));
    for (from, dir) in [(&lean, &from_lean), (&plain.join(TABLEBASE_FILE), &from_plain)] {
        let options = BuildOptions {
            start_from: Some(from.to_path_buf()),
            params: BuildParams::new(7, SearchBudget::NONE).unwrap(),
            ..build_options(dir, 7)
        };
        build(&options, &Silent).unwrap();
    }
    assert_eq!(
        fs::read(from_lean.join(TABLEBASE_FILE)).unwrap(),
        fs::read(from_plain.join(TABLEBASE_FILE)).unwrap()
    );
    // One changed byte in a layer file: the directory is refused.
    let layer_file = lean.join("layer-05.bin");
    let mut bytes = fs::read(&layer_file).unwrap();
    bytes[17] ^= 1;
    fs::write(&layer_file, bytes).unwrap();
    let error = open_ours(&lean).err().expect("a damaged layer is refused").to_string();
    assert!(error.contains("layer-05.bin"), "{error}");
    for dir in [plain, lean, from_lean, from_plain] {
        fs::remove_dir_all(dir).unwrap();
    }
}
