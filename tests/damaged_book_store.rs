//! Our own book directory never gives a silent wrong answer: a damaged
//! checkpoint or manifest is refused, or reads as exactly the book that was
//! saved; nothing panics, and a damaged directory is left as it was found.
//!
//! * `store::decode` of a damaged checkpoint record fails, or gives the
//!   saved parameters and graph (the record ends in its own checksum).
//! * A record damaged and then given a matching checksum (so that the
//!   structural checks are reached) decodes to what encodes back to the
//!   same bytes, or fails: the decoder reads every byte as written.
//! * `store::load` and `BookDir::open` + `load_graph` of a directory whose
//!   manifest or checkpoint file is damaged fail, or give the saved book;
//!   neither changes or removes a file of the directory.
//! * `Manifest::parse` of any manifest-like text fails, or gives a
//!   manifest that renders to text parsing back to itself.

use crate::common;
use crate::damage;

use std::fs;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use common::Scratch;
use damage::{damage, Damage, Layout};
use oware::book::store::{self, checkpoint_path, BookDir, Manifest, MANIFEST_FILE};
use oware::book::{grow, BookError, BookGraph, Budget, GrowOptions, Negamax, Omega, Parameters};
use oware::checksum::checksum;
use proptest::prelude::*;

/// A book grown once: its directory's files and what they decode to.
struct Good {
    manifest_text: String,
    manifest: Manifest,
    /// The checkpoint file's name and (compressed) bytes.
    checkpoint_name: String,
    checkpoint: Vec<u8>,
    /// The decompressed checkpoint record.
    record: Vec<u8>,
    parameters: Parameters,
    graph: BookGraph,
}

fn good() -> &'static Good {
    static GOOD: OnceLock<Good> = OnceLock::new();
    GOOD.get_or_init(|| {
        let scratch = Scratch::new("book-store-grow");
        let options = GrowOptions {
            dir: scratch.path().to_path_buf(),
            omega: Omega::from_plies_per_unit(0.04),
            batch: Some(8),
            threads: 1,
            budget: Budget::Expansions(40),
            checkpoint_every: Duration::from_secs(3600),
        };
        grow(&options, &Negamax::depth(2), &oware::progress::Silent).unwrap();
        let manifest_text = fs::read_to_string(scratch.join(MANIFEST_FILE)).unwrap();
        let manifest = Manifest::parse(&manifest_text, Path::new(MANIFEST_FILE)).unwrap();
        let path = checkpoint_path(scratch.path(), manifest.checkpoint.unwrap().expansions);
        let checkpoint = fs::read(&path).unwrap();
        let record = zstd::decode_all(&checkpoint[..]).unwrap();
        let (parameters, graph) = store::decode(&record).unwrap();
        let checkpoint_name = path.file_name().unwrap().to_string_lossy().into_owned();
        Good { manifest_text, manifest, checkpoint_name, checkpoint, record, parameters, graph }
    })
}

/// The fixed fields before the first node (the parameters and counts).
fn record_layout(good: &Good) -> Layout {
    Layout::opaque(8 + 4 + 8 + 4 + 4 + good.parameters.evaluator.len() + 8 + 4)
}

/// Every file of `dir` but the lock, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), fs::read(e.path()).unwrap()))
        .filter(|(name, _)| name != "grow.lock")
        .collect();
    files.sort();
    files
}

/// A damage to one file of a book directory: the checkpoint (as a whole
/// file), or the manifest, either as bytes or by one word replaced.
#[derive(Clone, Debug)]
enum DirDamage {
    Checkpoint(Damage),
    ManifestBytes(Damage),
    ManifestWord { word: prop::sample::Index, replacement: String },
}

fn dir_damage() -> impl Strategy<Value = DirDamage> {
    prop_oneof![
        damage().prop_map(DirDamage::Checkpoint),
        damage().prop_map(DirDamage::ManifestBytes),
        (any::<prop::sample::Index>(), word())
            .prop_map(|(word, replacement)| DirDamage::ManifestWord { word, replacement }),
    ]
}

/// A manifest word: numbers in range or not, hex, signs, junk.
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{1,3}",
        "[0-9]{1,21}",
        "[+-][0-9]{1,4}",
        "[0-9a-fA-F]{1,17}",
        "[ -~]{0,6}",
        Just(String::new()),
    ]
}

/// `text` with its `word`-th space-separated word (over all lines) replaced.
fn replace_word(text: &str, word: prop::sample::Index, replacement: &str) -> String {
    let count = text.lines().map(|l| l.split(' ').count()).sum();
    let mut target = word.index(count);
    let mut out = String::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        let replaced: Vec<&str> =
            words.iter().enumerate().map(|(i, w)| if i == target { replacement } else { *w }).collect();
        target = target.wrapping_sub(words.len());
        out += &replaced.join(" ");
        out.push('\n');
    }
    out
}

/// A book directory holding the good files, with one damaged.
fn damaged_dir(scratch: &Scratch, damage: &DirDamage) {
    let good = good();
    let mut manifest = good.manifest_text.clone().into_bytes();
    let mut checkpoint = good.checkpoint.clone();
    match damage {
        DirDamage::Checkpoint(d) => checkpoint = d.apply(&checkpoint, &Layout::opaque(32)).0,
        DirDamage::ManifestBytes(d) => manifest = d.apply(&manifest, &Layout::opaque(manifest.len())).0,
        DirDamage::ManifestWord { word, replacement } => {
            manifest = replace_word(&good.manifest_text, *word, replacement).into_bytes()
        }
    }
    fs::write(scratch.join(MANIFEST_FILE), manifest).unwrap();
    fs::write(scratch.join(&good.checkpoint_name), checkpoint).unwrap();
}

/// A manifest-like text: the five lines in order, each well formed or
/// not, sometimes a line more, ended by LF or CRLF.
fn manifest_like() -> impl Strategy<Value = String> {
    let line = |name: &'static str, words: usize| {
        prop_oneof![
            3 => proptest::collection::vec(word(), words).prop_map(move |w| format!("{name} {}", w.join(" "))),
            1 => "[ -~\r\t]{0,24}",
        ]
    };
    let lines = (
        prop_oneof![4 => Just("oware-opening-book 1".to_string()), 1 => "[ -~]{0,24}"],
        line("omega-micro-plies-per-unit", 1),
        line("batch", 1),
        prop_oneof![3 => "[ -~\t]{0,12}\r?".prop_map(|e| format!("evaluator {e}")), 1 => "[ -~]{0,16}"],
        proptest::option::of(line("checkpoint", 3)),
        proptest::option::of("[ -~]{0,12}"),
    );
    (lines, prop_oneof![Just("\n"), Just("\r\n")], any::<bool>()).prop_map(
        |((signature, omega, batch, evaluator, checkpoint, extra), end, last_end)| {
            let mut lines = vec![signature, omega, batch, evaluator];
            lines.extend(checkpoint);
            lines.extend(extra);
            let mut text = lines.join(end);
            if last_end {
                text += end;
            }
            text
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_damaged_checkpoint_record_decodes_to_the_saved_book_or_fails(damage in damage()) {
        let good = good();
        let (bytes, _) = damage.apply(&good.record, &record_layout(good));
        if let Ok((parameters, graph)) = store::decode(&bytes) {
            prop_assert_eq!(&parameters, &good.parameters, "other parameters decoded");
            prop_assert!(graph == good.graph, "another graph decoded");
        }
    }

    #[test]
    fn a_resealed_record_decodes_to_what_encodes_back_to_it(damage in damage()) {
        let good = good();
        let body = &good.record[..good.record.len() - 8];
        let (mut bytes, _) = damage.apply(body, &record_layout(good));
        let sum = checksum(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        if let Ok((parameters, graph)) = store::decode(&bytes) {
            prop_assert!(store::encode(&graph, &parameters) == bytes, "a record decoded to another");
        }
    }

    #[test]
    fn manifest_like_text_parses_to_what_renders_back_to_it(text in manifest_like()) {
        if let Ok(manifest) = Manifest::parse(&text, Path::new(MANIFEST_FILE)) {
            let again = Manifest::parse(&manifest.render(), Path::new(MANIFEST_FILE));
            prop_assert_eq!(again.ok(), Some(manifest));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_damaged_book_directory_loads_the_saved_book_or_nothing(damage in dir_damage()) {
        let good = good();
        let scratch = Scratch::new("book-store-dir");
        damaged_dir(&scratch, &damage);
        let before = files(scratch.path());
        let text = String::from_utf8_lossy(&before.iter().find(|(n, _)| n == MANIFEST_FILE).unwrap().1).into_owned();
        if let Ok(manifest) = Manifest::parse(&text, Path::new(MANIFEST_FILE)) {
            let again = Manifest::parse(&manifest.render(), Path::new(MANIFEST_FILE));
            prop_assert_eq!(again.ok(), Some(manifest));
        }
        if let Ok(stored) = store::load(scratch.path()) {
            prop_assert_eq!(&stored.manifest, &good.manifest);
            prop_assert!(stored.graph.as_ref() == Some(&good.graph), "another graph loaded");
        }
        prop_assert!(files(scratch.path()) == before, "loading changed the directory");
        let keep = |found: Option<&Parameters>| {
            found.cloned().ok_or_else(|| BookError::BadOption("no parameters".into()))
        };
        if let Ok(book) = BookDir::open(scratch.path(), keep) {
            if let Ok(graph) = book.load_graph() {
                prop_assert!(graph.as_ref() == Some(&good.graph), "another graph loaded");
            }
        }
        // Unchanged, or, when all the damage did was lose the manifest's
        // checkpoint line (which an interrupted first save leaves too), the
        // checkpoint adopted and the good manifest written again.
        let after = files(scratch.path());
        let restored = after.iter().find(|(n, _)| n == MANIFEST_FILE).map(|(_, b)| b.as_slice())
            == Some(good.manifest_text.as_bytes())
            && after.iter().filter(|(n, _)| n != MANIFEST_FILE).eq(before.iter().filter(|(n, _)| n != MANIFEST_FILE));
        prop_assert!(after == before || restored, "opening for growth changed the directory");
    }
}
