//! Damaged engine endgame files ("Oware Endgames" 1.0 and 2.0, plain or
//! zstd-compressed) are refused with a typed error or answer in range;
//! nothing panics.
//!
//! The layout carries no checksum: a damaged entry byte reads as another
//! value, and no reader can tell. What holds whatever the damage, for
//! `EndgameFile::from_bytes`, `EndgameFile::open` and `AnyTable::open`:
//! * every lookup (`entry`, `entry_of`, `probe`) of an opened file returns,
//!   over every position of the small tables and a sample of the large;
//! * a probe of a position with `n` seeds on the board has
//!   `lower <= estimate <= upper <= n` (so the opponent's share `n - c` is
//!   never negative), is exact unless on a cycle, and is refused (`None`)
//!   exactly when its entry claims more than `n` captures; a position above
//!   the covered layers has no entry;
//! * the `Positions` count of an opened file is the number of bytes after
//!   its header;
//! * a cut at any length is refused. A cut on a layer boundary leaves a
//!   body of a valid length (a smaller table); every file here carries
//!   `Positions`, which then disagrees. Only a file without `Positions`
//!   cut on a layer boundary is accepted, as the smaller table it now is
//!   (`a_cut_file_without_positions_reads_as_the_smaller_table`).

use crate::common;
use crate::damage;

use std::fs;
use std::sync::OnceLock;

use common::{build_options, Scratch};
use damage::{damage, decompress, reference, Damage, Layout};
use oware::formats::endgames::{self, EndgameFile, EndgamesVersion};
use oware::formats::FormatError;
use oware::rank::{self, layer_offset, layer_positions, position_at};
use oware::tablebase::directory::names::TABLEBASE_FILE;
use oware::tablebase::engine::export_engine;
use oware::tablebase::{build, AnyTable, EndgameTable, Tablebase};
use oware::Position;
use proptest::prelude::*;

/// Seeds of the table built here; all its positions are probed.
const BUILT_SEEDS: u32 = 5;
/// One index in this many is probed in the engine's 12-seed files.
const SAMPLE_STEP: usize = 997;

/// A good engine file, plain and zstd-compressed.
struct GoodFile {
    name: &'static str,
    plain: Vec<u8>,
    compressed: Vec<u8>,
    layout: Layout,
    /// The positions probed after any damage: the whole table, or a
    /// sample, and a layer above it.
    positions: Vec<Position>,
}

/// Our export of a table built here (1.0 and 2.0, compressed without a
/// content checksum, so damage often decompresses to other bytes), and
/// the engine's files of 2014 and 2021 (compressed with one).
fn good_files() -> &'static [GoodFile] {
    static GOOD: OnceLock<Vec<GoodFile>> = OnceLock::new();
    GOOD.get_or_init(|| {
        let scratch = Scratch::new("engine-tables-build");
        build(&build_options(scratch.path(), BUILT_SEEDS), &oware::progress::Silent).unwrap();
        let owtb = scratch.join(TABLEBASE_FILE);
        let table = Tablebase::open(&owtb).unwrap();
        let mut files = Vec::new();
        for (name, version) in [("built-1.0", EndgamesVersion::V1_0), ("built-2.0", EndgamesVersion::V2_0)] {
            let path = scratch.join(name);
            export_engine(&table, &owtb, version, None, &path).unwrap();
            let plain = fs::read(&path).unwrap();
            let compressed = zstd::bulk::compress(&plain, 3).unwrap();
            files.push(good_file(name, plain, compressed));
        }
        for (name, file) in [("2014", "aalina-2014-leaves.bin.zst"), ("2021", "aalina-2021-leaves.bin.zst")] {
            let compressed = reference(file);
            files.push(good_file(name, decompress(&compressed), compressed));
        }
        files
    })
}

fn good_file(name: &'static str, plain: Vec<u8>, compressed: Vec<u8>) -> GoodFile {
    let table = EndgameFile::from_bytes(plain.clone()).unwrap();
    table.verify().unwrap();
    let header_len = table.header_len();
    let n = table.max_seeds();
    // Cuts leaving layers 0..k, with or without one more byte.
    let boundaries = (0..=n)
        .flat_map(|k| [layer_offset(k), layer_offset(k) + 1])
        .map(|body| header_len + body as usize)
        .filter(|&len| len < plain.len())
        .collect();
    let covered: Vec<Position> = if n <= BUILT_SEEDS {
        (0..=n).flat_map(layer_positions).collect()
    } else {
        (0..layer_offset(n + 1)).step_by(SAMPLE_STEP).filter_map(position_at).collect()
    };
    let above = layer_positions(n + 1).step_by(101).take(64);
    let positions = covered.into_iter().chain(above).collect();
    GoodFile { name, plain, compressed, layout: Layout { header_len, boundaries }, positions }
}

/// The positions whose entries sit near byte `at` of a file whose index
/// bytes start at `header_len`.
fn near(at: usize, header_len: usize) -> Vec<Position> {
    let index = at.saturating_sub(header_len) as u64;
    (index.saturating_sub(4)..index + 4).filter_map(position_at).collect()
}

/// A probe of `position` is in range and agrees with its entry.
fn check_position(table: &EndgameFile, position: &Position) -> Result<(), TestCaseError> {
    let seeds = position.seeds();
    let probe = table.probe(position);
    if seeds > table.max_seeds() {
        prop_assert_eq!(probe, None);
        prop_assert_eq!(table.entry_of(position), None);
        return Ok(());
    }
    let entry = table.entry_of(position);
    prop_assert!(entry.is_some(), "no entry for a covered position");
    let entry = entry.unwrap();
    prop_assert_eq!(table.entry(rank::index(position)), Some(entry));
    match probe {
        None => prop_assert!(entry.captures() as u32 > seeds, "a good entry refused"),
        Some(p) => {
            prop_assert!(p.lower <= p.estimate && p.estimate <= p.upper, "{:?}", p);
            prop_assert!(p.upper as u32 <= seeds, "{:?} with {} seeds", p, seeds);
            prop_assert!(p.on_cycle || p.is_exact(), "{:?}", p);
        }
    }
    Ok(())
}

/// Everything an opened file answers is in range (the module's promise).
fn check_table(table: &EndgameFile, positions: &[Position]) -> Result<(), TestCaseError> {
    let body = table.index_count() + table.trailing().len() as u64;
    prop_assert!(table.trailing().len() <= 1);
    prop_assert_eq!(table.index_count(), layer_offset(table.max_seeds() + 1));
    if let Ok(Some(claimed)) = table.header().number("Positions") {
        prop_assert_eq!(claimed, body, "Positions disagrees with the body");
    }
    prop_assert_eq!(table.entry(table.index_count()), None);
    prop_assert_eq!(table.entry(u64::MAX), None);
    for position in positions {
        check_position(table, position)?;
    }
    // `verify` names the first corrupt entry, or there is none.
    match table.verify() {
        Ok(()) => {
            prop_assert!(positions.iter().all(|p| p.seeds() > table.max_seeds() || table.probe(p).is_some()))
        }
        Err(FormatError::CapturesExceedSeeds { index, seeds, captures, .. }) => {
            prop_assert_eq!(rank::layer_of_index(index), Some(seeds));
            prop_assert_eq!(table.entry(index).map(|e| e.captures()), Some(captures));
            prop_assert!(captures as u32 > seeds);
        }
        Err(other) => prop_assert!(false, "verify: {}", other),
    }
    Ok(())
}

/// The probes of any table `AnyTable::open` gave.
fn check_any(table: &AnyTable, positions: &[Position]) -> Result<(), TestCaseError> {
    match table {
        AnyTable::Engine(file) => check_table(file, positions),
        AnyTable::Ours(_) => {
            for position in positions {
                if let Some(p) = table.probe(position) {
                    prop_assert!(p.lower <= p.estimate && p.estimate <= p.upper);
                    prop_assert!(p.upper as u32 <= position.seeds());
                }
            }
            Ok(())
        }
    }
}

/// A damaged copy of good file `which`, and the positions to probe in it:
/// the file's own and those whose entries sit near the damage.
fn damaged(which: usize, damage: &Damage) -> (&'static GoodFile, Vec<u8>, Vec<Position>) {
    let good = &good_files()[which];
    let (bytes, at) = damage.apply(&good.plain, &good.layout);
    let mut positions = good.positions.clone();
    positions.extend(near(at, good.layout.header_len));
    (good, bytes, positions)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// `EndgameFile::from_bytes` of a damaged file.
    #[test]
    fn a_damaged_engine_file_is_refused_or_answers_in_range(which in 0usize..4, damage in damage()) {
        let (good, bytes, positions) = damaged(which, &damage);
        match EndgameFile::from_bytes(bytes) {
            Ok(table) => {
                prop_assert!(!damage.is_cut(), "{}: a cut file was accepted", good.name);
                check_table(&table, &positions)?;
            }
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }

    /// `AnyTable::open` (which maps the file with `EndgameFile::open`) of a
    /// damaged file on disk.
    #[test]
    fn a_damaged_engine_file_on_disk_is_refused_or_answers_in_range(
        which in 0usize..4,
        damage in damage(),
    ) {
        let (good, bytes, positions) = damaged(which, &damage);
        let scratch = Scratch::new("engine-tables-disk");
        let path = scratch.join(good.name);
        fs::write(&path, &bytes).unwrap();
        match AnyTable::open(&path) {
            Ok(table) => {
                prop_assert!(!damage.is_cut(), "{}: a cut file was accepted", good.name);
                check_any(&table, &positions)?;
            }
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
        if let Ok(file) = EndgameFile::open(&path) {
            check_table(&file, &positions)?;
        }
    }

    /// `AnyTable::open` of a damaged zstd-compressed file: the damage may
    /// fail the decompression or change the bytes it gives.
    #[test]
    fn a_damaged_compressed_engine_file_is_refused_or_answers_in_range(
        which in 0usize..4,
        damage in damage(),
    ) {
        let good = &good_files()[which];
        let (bytes, _) = damage.apply(&good.compressed, &Layout::opaque(32));
        let scratch = Scratch::new("engine-tables-zst");
        let path = scratch.join(&format!("{}.zst", good.name));
        fs::write(&path, &bytes).unwrap();
        match AnyTable::open(&path) {
            Ok(table) => {
                prop_assert!(!damage.is_cut(), "{}: a cut file was accepted", good.name);
                check_any(&table, &good.positions)?;
            }
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }
}

/// The one cut a reader accepts: on a layer boundary of a file without a
/// `Positions` field, which is then the smaller table (and a whole one).
#[test]
fn a_cut_file_without_positions_reads_as_the_smaller_table() {
    let good = EndgameFile::from_bytes(good_files()[0].plain.clone()).unwrap();
    let header = endgames::new_header(EndgamesVersion::V1_0, &[], 0).unwrap();
    let mut header = header;
    header.remove("Positions");
    let mut bytes = Vec::new();
    endgames::write_parts(&mut bytes, &header, good.bytes(), &[]).unwrap();
    let header_len = bytes.len() - good.bytes().len();
    for n in 0..BUILT_SEEDS {
        let cut = bytes[..header_len + layer_offset(n + 1) as usize].to_vec();
        let table = EndgameFile::from_bytes(cut).unwrap();
        assert_eq!(table.max_seeds(), n);
        assert_eq!(table.bytes(), &good.bytes()[..layer_offset(n + 1) as usize]);
    }
    // With `Positions`, the same cut is refused.
    let with_count = &good_files()[0];
    let cut = with_count.plain[..with_count.layout.header_len + layer_offset(BUILT_SEEDS) as usize].to_vec();
    assert!(matches!(
        EndgameFile::from_bytes(cut),
        Err(FormatError::HeaderMismatch { field: "Positions", .. })
    ));
}
