//! A damaged tablebase file never gives a wrong answer: flipped, truncated
//! or zeroed bytes are refused when the file is opened or when the damaged
//! layer is first read, and nothing panics.

use crate::common;

use std::fs;
use std::sync::OnceLock;

use common::{build_options, scratch};
use oware::progress::Silent;
use oware::rank::layer_positions;
use oware::tablebase::directory::build::BuildOptions;
use oware::tablebase::directory::names::{COMPRESSED_FILE, TABLEBASE_FILE};
use oware::tablebase::{build, BuildParams, Entry, PackedLayer, Tablebase};
use proptest::prelude::*;

const SEEDS: u32 = 6;

/// A 6-seed table built once: its two files and every entry.
struct Good {
    owtb: Vec<u8>,
    zst: Vec<u8>,
    entries: Vec<Entry>,
}

fn good() -> &'static Good {
    static GOOD: OnceLock<Good> = OnceLock::new();
    GOOD.get_or_init(|| {
        let dir = scratch("good");
        let options = BuildOptions { compress: true, ..build_options(&dir, SEEDS) };
        build(&options, &Silent).unwrap();
        let owtb = fs::read(dir.join(TABLEBASE_FILE)).unwrap();
        let zst = fs::read(dir.join(COMPRESSED_FILE)).unwrap();
        let table = Tablebase::open(&dir.join(TABLEBASE_FILE)).unwrap();
        let entries = all_entries(&table).into_iter().map(|e| e.unwrap()).collect();
        fs::remove_dir_all(&dir).unwrap();
        Good { owtb, zst, entries }
    })
}

/// Every entry the table answers, in layer order (`None`: refused).
fn all_entries(table: &Tablebase) -> Vec<Option<Entry>> {
    (0..=SEEDS).flat_map(layer_positions).map(|p| table.entry(&p).ok().flatten()).collect()
}

/// Every position of layer `refused` answers nothing, every other one its
/// entry.
fn assert_only_layer_refused(table: &Tablebase, refused: u32) {
    let answers = all_entries(table);
    let mut at = 0;
    for n in 0..=SEEDS {
        let size = layer_positions(n).count();
        let given = answers[at..at + size].iter().filter(|a| a.is_some()).count();
        assert_eq!(given, if n == refused { 0 } else { size }, "layer {n}");
        at += size;
    }
}

#[derive(Clone, Debug)]
enum Damage {
    Flip { at: usize, mask: u8 },
    Truncate { keep: usize },
    Zero { at: usize, len: usize },
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<prop::sample::Index>(), 1u8..=255)
            .prop_map(|(i, mask)| Damage::Flip { at: i.index(1 << 20), mask }),
        any::<prop::sample::Index>().prop_map(|i| Damage::Truncate { keep: i.index(1 << 20) }),
        (any::<prop::sample::Index>(), 1usize..64)
            .prop_map(|(i, len)| Damage::Zero { at: i.index(1 << 20), len }),
    ]
}

fn apply(bytes: &[u8], damage: &Damage) -> Vec<u8> {
    let mut out = bytes.to_vec();
    match *damage {
        Damage::Flip { at, mask } => {
            let at = at % out.len();
            out[at] ^= mask;
        }
        Damage::Truncate { keep } => out.truncate(keep % out.len()),
        Damage::Zero { at, len } => {
            let at = at % out.len();
            let end = (at + len).min(out.len());
            out[at..end].iter_mut().for_each(|b| *b = 0);
        }
    }
    out
}

/// Opens the damaged bytes; returns how many answers were given, after
/// checking each is the good one.
fn answers_of_damaged(name: &str, bytes: &[u8]) -> Result<usize, TestCaseError> {
    let dir = scratch(name);
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    let given = match Tablebase::open(&path) {
        Err(_) => 0,
        Ok(table) => {
            let answers = all_entries(&table);
            for (got, want) in answers.iter().zip(&good().entries) {
                if let Some(got) = got {
                    prop_assert_eq!(got, want, "a wrong answer from damaged {}", name);
                }
            }
            answers.iter().filter(|a| a.is_some()).count()
        }
    };
    fs::remove_dir_all(&dir).unwrap();
    Ok(given)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_damaged_owtb_file_never_answers_wrong(damage in damage()) {
        let bytes = apply(&good().owtb, &damage);
        let given = answers_of_damaged("table.owtb", &bytes)?;
        // Some layers survive a damage elsewhere; a damaged one answers
        // nothing.
        prop_assert!(given <= good().entries.len());
    }

    #[test]
    fn a_damaged_compressed_file_never_answers_wrong(damage in damage()) {
        let bytes = apply(&good().zst, &damage);
        answers_of_damaged("table.owtb.zst", &bytes)?;
    }
}

#[test]
fn a_damaged_layer_is_refused_by_name_and_the_others_still_answer() {
    let good = good();
    let table_dir = scratch("one-layer");
    let path = table_dir.join("t.owtb");
    fs::write(&path, &good.owtb).unwrap();
    let header = Tablebase::open(&path).unwrap().header().clone();
    // One byte inside layer 4.
    let mut bytes = good.owtb.clone();
    bytes[header.layers[4].offset as usize + 7] ^= 0x21;
    fs::write(&path, &bytes).unwrap();
    let table = Tablebase::open(&path).unwrap();
    let error = table.check_layer(4).unwrap_err();
    assert!(error.to_string().contains("checksum mismatch in layer 4"), "{error}");
    assert!(table.verify_checksums().is_err());
    assert_only_layer_refused(&table, 4);
    fs::remove_dir_all(&table_dir).unwrap();
}

/// A writer's bug (or an edit) behind checksums that agree: an entry no
/// writer makes is refused by name, with its layer, by the probe, by the
/// whole-file check and by the opening every long job uses; the other
/// layers still answer.
#[test]
fn a_malformed_entry_behind_good_checksums_is_refused() {
    let good = good();
    let dir = scratch("malformed");
    let path = dir.join("good.owtb");
    fs::write(&path, &good.owtb).unwrap();
    let table = Tablebase::open(&path).unwrap();
    let header = table.header().clone();
    let mut layers: Vec<Vec<u8>> = (0..=SEEDS).map(|n| table.layer(n).to_full_records()).collect();
    // Entry 5 of layer 4: a reserved bit set (the writer keeps the layer
    // in full records, as they are).
    layers[4][5 * 3 + 1] |= 0x80;
    let bad = dir.join("bad.owtb");
    oware::tablebase::owtb::write_tablebase(
        &bad,
        &BuildParams::new(SEEDS, header.budget).unwrap(),
        header.provenance,
        |n| PackedLayer::full(&layers[n as usize]),
    )
    .unwrap();
    let table = Tablebase::open(&bad).unwrap();
    table.verify_checksums().unwrap();
    let error = table.verify().unwrap_err();
    assert_eq!(error.to_string(), format!("{}: entry 5 of layer 4 is malformed", bad.display()));
    let malformed =
        |p| matches!(table.entry(&p), Err(oware::tablebase::FileError::Malformed { layer: 4, index: 5, .. }));
    assert!(layer_positions(4).all(malformed));
    assert_only_layer_refused(&table, 4);
    let opened = oware::tablebase::open_any(&bad).err().expect("refused on opening");
    assert!(opened.to_string().contains("entry 5 of layer 4 is malformed"), "{opened}");
    assert!(oware::tablebase::open_any(&path).is_ok());
    fs::remove_dir_all(&dir).unwrap();
}

/// A compressed table whose header declares more bytes than it holds is
/// read no further than the header says: a small file cannot make the
/// reader allocate without end.
#[test]
fn a_compressed_table_is_read_no_further_than_its_header_declares() {
    let good = good();
    let dir = scratch("bomb");
    // The good table followed by 64 MiB of zeros, compressed: a few
    // kilobytes more than the good file.
    let mut long = good.owtb.clone();
    long.resize(good.owtb.len() + (64 << 20), 0);
    let path = dir.join("long.owtb.zst");
    fs::write(&path, zstd::bulk::compress(&long, 3).unwrap()).unwrap();
    let error = Tablebase::open(&path).err().expect("refused");
    assert!(error.to_string().contains("decompresses to more than"), "{error}");
    let path = dir.join("good.owtb.zst");
    fs::write(&path, &good.zst).unwrap();
    assert_eq!(all_entries(&Tablebase::open(&path).unwrap()).len(), good.entries.len());
    fs::remove_dir_all(&dir).unwrap();
}
