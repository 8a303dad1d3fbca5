//! The engine's four files (vendored in `tests/reference/`): read, checked
//! against what `formats.md` and `rules-and-values.md` promise, written
//! back byte for byte; synthetic round trips; and no panic on any input.

use crate::common;

use std::fs::File;
use std::path::PathBuf;
use std::sync::OnceLock;

use common::{on_quiet_cycles, Scratch};
use oware::formats::doe::{self, DoeBook, DoeEntry};
use oware::formats::endgames::{self, EndgameFile, EndgamesVersion, Entry, Flag};
use oware::formats::opening_book::{self, BookEntry, OpeningBook, NO_SCORE};
use oware::formats::{detect, FileKind, FormatError};
use oware::rank::{layer_offset, layer_positions, position_in_layer, state_from_key, state_key};
use oware::tablebase::EndgameTable;
use oware::{GameState, Position, Side};
use proptest::prelude::*;

// ---------------------------------------------------------------- files

fn decompress(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference").join(format!("{name}.zst"));
    let file = File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    zstd::decode_all(file).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

macro_rules! reference_file {
    ($fn:ident, $name:literal) => {
        fn $fn() -> &'static [u8] {
            static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
            BYTES.get_or_init(|| decompress($name))
        }
    };
}

reference_file!(leaves_2014, "aalina-2014-leaves.bin");
reference_file!(leaves_2021, "aalina-2021-leaves.bin");
reference_file!(book_2014, "aalina-2014-book.bin");
reference_file!(roots_2022, "aalina-2022-roots.bin");

fn table_2014() -> &'static EndgameFile {
    static TABLE: OnceLock<EndgameFile> = OnceLock::new();
    TABLE.get_or_init(|| EndgameFile::from_bytes(leaves_2014().to_vec()).unwrap())
}

fn table_2021() -> &'static EndgameFile {
    static TABLE: OnceLock<EndgameFile> = OnceLock::new();
    TABLE.get_or_init(|| EndgameFile::from_bytes(leaves_2021().to_vec()).unwrap())
}

fn seeds_of(state: &GameState) -> u32 {
    let [south, north] = state.stores();
    state.pits().iter().map(|&s| s as u32).sum::<u32>() + south as u32 + north as u32
}

// ---------------------------------------------------------------- endgames

#[test]
fn leaves_headers_layers_and_trailing_bytes() {
    for (table, version, date, trailing) in [
        (table_2014(), EndgamesVersion::V1_0, "Tue Oct 28 15:33:23 CET 2014", 0x18u8),
        (table_2021(), EndgamesVersion::V2_0, "Sun Mar 21 21:09:01 CET 2021", 0x00),
    ] {
        let header = table.header();
        assert_eq!(table.version(), version);
        assert_eq!(header.version(), version.as_str());
        assert_eq!(header.signature(), format!("Oware Endgames {}", version.as_str()));
        let fields: Vec<_> = header.fields().collect();
        assert_eq!(
            fields,
            [
                ("Date", date),
                ("Positions", "2704157"),
                ("Name", "Aalina's Endgames"),
                ("Author", "Joan Sala Soler"),
                ("License", "GNU General Public License version 3"),
            ]
        );
        assert_eq!(table.header_len(), 336);
        assert_eq!(table.max_seeds(), 12);
        assert_eq!(EndgameTable::max_seeds(table), 12);
        assert_eq!(table.index_count(), 2_704_156);
        assert_eq!(table.index_count(), layer_offset(13));
        // Positions counts the bytes after the header, trailing byte included.
        assert_eq!(table.trailing(), [trailing]);
        // Every entry's captures are at most the seeds of its position.
        table.verify().unwrap();
        // Only flags 1 (on a cycle) and 3 (exact).
        assert_eq!(table.flag_counts(), [0, 2_447_342, 0, 256_814]);
    }
}

#[test]
fn leaves_agree_up_to_three_seeds_and_differ_only_in_estimates() {
    let (old, new) = (table_2014(), table_2021());
    for n in 0..=3 {
        assert_eq!(old.layer(n), new.layer(n), "layer {n}");
    }
    // Up to 2 seeds every entry is exact; with 3, the 140 positions on a
    // same-layer cycle carry flag 1 (their values are still the proven ones,
    // rules-and-values.md, "Known ground truth").
    for n in 0..=2 {
        assert!(old.layer(n).unwrap().iter().all(|&b| b & 3 == 3));
    }
    let layer3 = old.layer(3).unwrap();
    assert_eq!(layer3.iter().filter(|&&b| b & 3 == 3).count(), 224);
    assert_eq!(layer3.iter().filter(|&&b| b & 3 == 1).count(), 140);

    // Entries differing between the two files, per layer: the flags agree
    // everywhere, only the captures differ: the estimates of cycle
    // positions (flag 1) and, from 6 seeds up, exact entries whose value
    // rests on such estimates.
    let cycle = [0u64, 0, 0, 0, 1, 0, 284, 2_409, 19_128, 40_770, 166_839, 356_270, 832_995];
    let exact = [0u64, 0, 0, 0, 0, 0, 71, 211, 1_440, 2_683, 10_608, 23_876, 58_771];
    let mut total = [0u64; 4];
    for n in 0..=12 {
        let (a, b) = (old.layer(n).unwrap(), new.layer(n).unwrap());
        let mut differing = [0u64; 4];
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x & 3, y & 3, "layer {n}: flags differ");
            if x != y {
                differing[(x & 3) as usize] += 1;
            }
        }
        assert_eq!(differing, [0, cycle[n as usize], 0, exact[n as usize]], "layer {n}");
        for flag in 0..4 {
            total[flag] += differing[flag];
        }
    }
    assert_eq!(total, [0, 1_418_696, 0, 97_660]);
    assert_eq!(total.iter().sum::<u64>(), 1_516_356);
    // The one 4-seed difference: a cycle position estimated at 0 in 2014
    // and 1 in 2021.
    let four = old.layer(4).unwrap();
    let at = four.iter().zip(new.layer(4).unwrap()).position(|(x, y)| x != y).unwrap();
    assert_eq!(at, 710);
    let position = position_in_layer(4, at as u64).unwrap();
    let (a, b) = (old.probe(&position).unwrap(), new.probe(&position).unwrap());
    assert!(a.on_cycle && b.on_cycle);
    assert_eq!((a.estimate, b.estimate), (0, 1));
}

#[test]
fn flag_1_marks_the_positions_on_same_layer_cycles_from_three_seeds() {
    for n in 0..=8 {
        let cyclic = on_quiet_cycles(n);
        for table in [table_2014(), table_2021()] {
            let layer = table.layer(n).unwrap();
            for (i, (&byte, &on_cycle)) in layer.iter().zip(&cyclic).enumerate() {
                let flag = Entry::from_byte(byte).flag();
                let expected = if on_cycle && n >= 3 { Flag::Lower } else { Flag::Exact };
                assert_eq!(flag, expected, "layer {n}, local index {i}");
            }
        }
        let cycles = cyclic.iter().filter(|&&c| c).count();
        if n == 2 {
            // One seed a side chasing each other round the board.
            assert_eq!(cycles, 12);
        }
    }
}

#[test]
fn probes_follow_the_flag_mapping() {
    let table = table_2021();
    let mut checked = [0u32; 4];
    for position in layer_positions(7).step_by(37) {
        let entry = table.entry_of(&position).unwrap();
        let probe = table.probe(&position).unwrap();
        let c = entry.captures();
        match entry.flag() {
            Flag::Exact => {
                assert_eq!((probe.lower, probe.upper, probe.estimate), (c, c, c));
                assert!(!probe.on_cycle);
                assert_eq!(probe.exact_anywhere(), Some(c));
            }
            Flag::Lower => {
                assert_eq!((probe.lower, probe.upper, probe.estimate), (0, 7, c));
                assert!(probe.on_cycle);
                assert_eq!(probe.exact_anywhere(), None);
            }
            other => panic!("flag {other:?} in the engine's file"),
        }
        checked[entry.flag() as usize] += 1;
    }
    assert!(checked[1] > 0 && checked[3] > 0);
    // One seed in the mover's pit F: it sows into the opponent's row and
    // the opponent captures nothing, so the mover ends with 0.
    let mut pits = [0u8; 12];
    pits[5] = 1;
    let probe = table.probe(&Position::new(pits)).unwrap();
    // EXACT, but with at most 2 seeds the file's EXACT says nothing of
    // cycles (its twelve 2-seed shuttles are EXACT too): used only where
    // reached by a capture, and never as a proof.
    assert_eq!((probe.lower, probe.upper, probe.on_cycle), (0, 0, true));
    assert!(!table.proves());
    // One seed in the opponent's row: the mover has no move and takes 0.
    pits = [0; 12];
    pits[6] = 1;
    assert_eq!(table.probe(&Position::new(pits)).unwrap().estimate, 0);
    // Beyond the covered layers: no entry.
    assert_eq!(table.probe(&GameState::start().position()), None);
    pits = [0; 12];
    pits[0] = 13;
    assert_eq!(table.probe(&Position::new(pits)), None);
    pits[0] = 12;
    assert!(table.probe(&Position::new(pits)).is_some());
}

// ---------------------------------------------------------------- 2014 book

#[test]
fn book_2014_reads_as_documented() {
    let book = OpeningBook::from_bytes(book_2014()).unwrap();
    let header = book.header();
    assert_eq!(header.signature(), "Oware Opening Book 1.0");
    assert_eq!(
        header.fields().collect::<Vec<_>>(),
        [
            ("Date", "Tue Jun 03 11:05:38 CEST 2014"),
            ("Positions", "162889"),
            ("Name", "Aalina's Openings"),
            ("Author", "Joan Sala Soler"),
            ("License", "GNU General Public License version 3"),
        ]
    );
    assert_eq!(book.len(), 33_658);
    assert!(book.entries().windows(2).all(|w| w[0].key < w[1].key));
    // Positions is the number of distinct states the book knows.
    assert_eq!(header.number("Positions").unwrap(), Some(162_889));
    assert_eq!(book.distinct_states(), 162_889);

    let start = GameState::start();
    assert_eq!(state_key(&start), 0xDD0094F6488);
    let entry = book.get_state(&start).unwrap();
    assert_eq!(entry.key, 0xDD0094F6488);
    assert_eq!(entry.scores, [-72, -34, -20, -37, -35, 5]);
    assert_eq!(entry.best(), Some((5, 5)));
    assert_eq!(entry.choices(10), [5]);
    assert_eq!(book.get(0xDD0094F6489), None);

    // Every key is a 48-seed state; scores sit on legal moves only, and
    // every legal move but a few is scored.
    let (mut south, mut scored, mut unscored_legal) = (0, 0, 0);
    for entry in &book {
        let state = state_from_key(entry.key).expect("a state key");
        assert_eq!(seeds_of(&state), 48, "key 0x{:X}", entry.key);
        assert_eq!(state_key(&state), entry.key);
        south += (state.to_move() == Side::South) as u32;
        let legal = state.legal_moves();
        for pit in 0..6 {
            match (entry.scores[pit] != NO_SCORE, legal.contains(pit)) {
                (true, true) => scored += 1,
                (true, false) => panic!("key 0x{:X}: illegal move {pit} scored", entry.key),
                (false, true) => unscored_legal += 1,
                (false, false) => {}
            }
            assert!(entry.scores[pit] == NO_SCORE || entry.scores[pit].abs() <= 1000);
        }
    }
    assert_eq!(south, 17_658);
    assert_eq!(scored, 164_588);
    assert_eq!(unscored_legal, 0);
}

// ---------------------------------------------------------------- DOE book

#[test]
fn doe_book_reads_as_documented() {
    let book = DoeBook::from_bytes(roots_2022()).unwrap();
    let header = book.header();
    assert_eq!(header.signature(), "DOE Opening Book 1.0");
    assert_eq!(
        header.fields().collect::<Vec<_>>(),
        [("Entries", "73192"), ("Date", "Thu Feb 24 08:48:59 CET 2022")]
    );
    // The header overstates the body: the body decides.
    assert_eq!(book.len(), 71_473);
    assert_eq!(roots_2022().len(), 73 + 71_473 * doe::ENTRY_LEN);
    assert!(book.entries().windows(2).all(|w| (w[0].parent, w[0].child) < (w[1].parent, w[1].child)));

    let start = GameState::start();
    let children = book.children_of_state(&start);
    assert_eq!(children.len(), 6);
    let mut letters: Vec<char> = children.iter().map(|e| e.letter()).collect();
    letters.sort();
    assert_eq!(letters, ['A', 'B', 'C', 'D', 'E', 'F']);
    for edge in children {
        let mut child = start.clone();
        child.play(edge.relative_pit()).unwrap();
        assert_eq!(state_key(&child), edge.child, "move {}", edge.letter());
        assert_eq!(book.get(edge.parent, edge.child), Some(edge));
        if edge.pit == 5 {
            assert!((edge.score - -0.92).abs() < 0.01, "F scores {}", edge.score);
            assert_eq!(edge.count, 1_289_084);
        } else {
            // D is the lowest, at 24.98.
            assert!((24.9..=53.0).contains(&edge.score), "{} scores {}", edge.letter(), edge.score);
            assert!(edge.count < 40_000);
        }
    }

    // Every key decodes to a 48-seed state; every edge is a legal move of
    // the parent's side to move, leading to the child.
    let mut consistent = 0;
    for edge in &book {
        let parent = state_from_key(edge.parent).expect("parent key");
        let child = state_from_key(edge.child).expect("child key");
        assert_eq!(seeds_of(&parent), 48);
        assert_eq!(seeds_of(&child), 48);
        let mut played = parent.clone();
        if parent.to_move() == edge.mover()
            && played.play(edge.relative_pit()).is_ok()
            && state_key(&played) == edge.child
        {
            consistent += 1;
        }
    }
    assert_eq!(consistent, 71_473);
    assert_eq!(book.parents().count(), 18_996);
}

// ---------------------------------------------------------------- round trips

#[test]
fn reference_files_round_trip_byte_for_byte() {
    let mut out = Vec::new();
    table_2014().write_to(&mut out).unwrap();
    assert!(out == leaves_2014(), "2014 leaves");
    out.clear();
    table_2021().write_to(&mut out).unwrap();
    assert!(out == leaves_2021(), "2021 leaves");
    out.clear();
    OpeningBook::from_bytes(book_2014()).unwrap().write_to(&mut out).unwrap();
    assert!(out == book_2014(), "2014 book");
    out.clear();
    DoeBook::from_bytes(roots_2022()).unwrap().write_to(&mut out).unwrap();
    assert!(out == roots_2022(), "2022 roots");
}

#[test]
fn files_saved_to_paths_read_back_mapped_and_identical() {
    let scratch = Scratch::new("paths");
    let leaves = scratch.join("leaves.bin");
    table_2021().save(&leaves).unwrap();
    assert!(std::fs::read(&leaves).unwrap() == leaves_2021());
    let mapped = EndgameFile::open(&leaves).unwrap();
    assert!(format!("{mapped:?}").contains("mapped: true"));
    assert_eq!(mapped.bytes(), table_2021().bytes());
    assert_eq!(mapped.trailing(), [0]);
    // Replacing the file under a live map is safe: the map keeps the old one.
    table_2014().save(&leaves).unwrap();
    assert_eq!(mapped.bytes(), table_2021().bytes());
    assert_eq!(EndgameFile::open(&leaves).unwrap().version(), EndgamesVersion::V1_0);

    let book_path = scratch.join("book.bin");
    let book = OpeningBook::from_bytes(book_2014()).unwrap();
    book.save(&book_path).unwrap();
    assert_eq!(OpeningBook::open(&book_path).unwrap(), book);
    let doe_path = scratch.join("roots.bin");
    let roots = DoeBook::from_bytes(roots_2022()).unwrap();
    roots.save(&doe_path).unwrap();
    assert!(std::fs::read(&doe_path).unwrap() == roots_2022());
    assert_eq!(DoeBook::open(&doe_path).unwrap().len(), roots.len());

    let missing = scratch.join("missing.bin");
    let error = EndgameFile::open(&missing).unwrap_err();
    assert!(matches!(error, FormatError::Io { operation: "open", .. }));
    assert!(error.to_string().contains("missing.bin"));
    assert!(matches!(OpeningBook::open(&missing), Err(FormatError::Io { operation: "read", .. })));
    let empty = scratch.join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(EndgameFile::open(&empty), Err(FormatError::TruncatedHeader { offset: 0, .. })));
}

#[test]
fn synthetic_tablebase_round_trips_through_a_file() {
    let scratch = Scratch::new("table");
    let path = scratch.join("small.bin");
    // Layers 0..=4 of the 2014 file, in a fresh engine-style file.
    let indexes = &table_2014().bytes()[..layer_offset(5) as usize];
    endgames::save_table(
        &path,
        EndgamesVersion::V2_0,
        &[("Date", "today"), ("Positions", "0"), ("Name", "small")],
        indexes,
    )
    .unwrap();
    let table = EndgameFile::open(&path).unwrap();
    assert_eq!(table.max_seeds(), 4);
    assert_eq!(table.bytes(), indexes);
    assert_eq!(table.trailing(), endgames::ENGINE_TRAILING);
    assert_eq!(table.header().number("Positions").unwrap(), Some(1821));
    table.verify().unwrap();
    for position in layer_positions(4).step_by(11) {
        assert_eq!(table.probe(&position), table_2014().probe(&position));
    }
    let mut again = Vec::new();
    table.write_to(&mut again).unwrap();
    assert_eq!(again, std::fs::read(&path).unwrap());
    // Without a trailing byte, Positions counts only the index bytes.
    let header = endgames::new_header(EndgamesVersion::V1_0, &[], indexes.len() as u64).unwrap();
    let mut bare = Vec::new();
    endgames::write_parts(&mut bare, &header, indexes, &[]).unwrap();
    let table = EndgameFile::from_bytes(bare).unwrap();
    assert_eq!(table.trailing(), [] as [u8; 0]);
    table.verify().unwrap();
}

#[test]
fn wrong_kinds_and_cut_files_are_named() {
    assert_eq!(detect(leaves_2014()), Some(FileKind::Endgames));
    assert_eq!(detect(book_2014()), Some(FileKind::OpeningBook));
    assert_eq!(detect(roots_2022()), Some(FileKind::Doe));
    let error = EndgameFile::from_bytes(roots_2022().to_vec()).unwrap_err();
    assert!(matches!(
        error,
        FormatError::UnknownSignature {
            expected: "Oware Endgames",
            looks_like: Some("DOE Opening Book"),
            ..
        }
    ));
    assert!(error.to_string().contains("DOE Opening Book"));
    assert!(matches!(
        DoeBook::from_bytes(book_2014()),
        Err(FormatError::UnknownSignature { looks_like: Some("Oware Opening Book"), .. })
    ));
    assert!(matches!(
        OpeningBook::from_bytes(&leaves_2014()[..1000]),
        Err(FormatError::UnknownSignature { looks_like: Some("Oware Endgames"), .. })
    ));
    assert!(matches!(
        EndgameFile::from_bytes(leaves_2014()[..300].to_vec()),
        Err(FormatError::TruncatedHeader { offset: 300, .. })
    ));
    assert!(matches!(
        EndgameFile::from_bytes(leaves_2014()[..2_000_000].to_vec()),
        Err(FormatError::BadTablebaseLength { length: 1_999_664, header_len: 336 })
    ));
    let cut = &book_2014()[..book_2014().len() - 3];
    assert!(matches!(
        OpeningBook::from_bytes(cut),
        Err(FormatError::TruncatedEntry { entry: 33_657, missing: 3, .. })
    ));
    let mut future = leaves_2014()[..1000].to_vec();
    future[31] = b'3'; // "Oware Endgames 1.0" → "3.0"
    let error = EndgameFile::from_bytes(future).unwrap_err();
    assert!(matches!(error, FormatError::UnsupportedVersion { ref version, .. } if version == "3.0"));
}

// ---------------------------------------------------------------- properties

/// Exercises whatever a reader accepted: nothing may panic.
fn use_table(table: &EndgameFile) {
    let _ = table.verify();
    let _ = table.flag_counts();
    for n in [0, 1, table.max_seeds()] {
        if let Some(position) = layer_positions(n).nth(3) {
            let _ = table.probe(&position);
        }
    }
    let mut out = Vec::new();
    if table.write_to(&mut out).is_ok() {
        let again = EndgameFile::from_bytes(out).unwrap();
        assert_eq!(again.bytes(), table.bytes());
    }
}

fn use_book(book: &OpeningBook) {
    let _ = book.get(0xDD0094F6488);
    let _ = book.entries().first().map(|e| (e.best(), e.state()));
    let mut out = Vec::new();
    book.write_to(&mut out).unwrap();
    assert_eq!(&OpeningBook::from_bytes(&out).unwrap(), book);
}

fn use_doe(book: &DoeBook) {
    let _ = book.children(0xDD0094F6488);
    let _ = book.parents().count();
    let mut out = Vec::new();
    book.write_to(&mut out).unwrap();
    assert_eq!(DoeBook::from_bytes(&out).unwrap().len(), book.len());
}

fn read_everything(bytes: &[u8]) {
    let _ = detect(bytes);
    if let Ok(table) = EndgameFile::from_bytes(bytes.to_vec()) {
        use_table(&table);
    }
    if let Ok(book) = OpeningBook::from_bytes(bytes) {
        use_book(&book);
    }
    if let Ok(book) = DoeBook::from_bytes(bytes) {
        use_doe(&book);
    }
}

fn utf16(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(|u| u.to_be_bytes()).collect()
}

/// A plausible header of any kind, then a body of plausible length.
fn header_shaped() -> impl Strategy<Value = Vec<u8>> {
    let header = prop_oneof![
        Just(utf16("Oware Endgames 1.0\nPositions: 14\n\n")),
        Just(utf16("Oware Endgames 2.0\n\n")),
        Just(utf16("Oware Opening Book 1.0\nPositions: 3\n\n")),
        Just(b"DOE Opening Book 1.0\nEntries: 2\n\x00\x0A".to_vec()),
        "[ -~\n]{0,40}".prop_map(|t| utf16(&format!("Oware Endgames {t}"))),
        "[ -~\n\x00]{0,40}".prop_map(|t| format!("DOE Opening Book {t}").into_bytes()),
    ];
    let length = prop_oneof![
        Just(1usize),
        Just(2),
        Just(13),
        Just(14),
        Just(92),
        Just(40),
        Just(36),
        Just(72),
        Just(108),
        0usize..200,
    ];
    (header, length, any::<u64>()).prop_map(|(mut bytes, length, seed)| {
        // Mostly zeros with small numbers every fourth byte: small keys,
        // moves often below 12, so that some books parse.
        let mut state = seed | 1;
        for i in 0..length {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bytes.push(if i % 4 == 3 { (state % 16) as u8 } else { 0 });
        }
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        read_everything(&bytes);
    }

    #[test]
    fn header_shaped_bytes_never_panic(bytes in header_shaped()) {
        read_everything(&bytes);
    }

    #[test]
    fn cut_or_mutated_books_never_panic(
        which in 0usize..2,
        cut in 0.0f64..1.0,
        mutations in proptest::collection::vec((0.0f64..1.0, any::<u8>(), any::<bool>()), 0..4),
    ) {
        let file = [book_2014(), roots_2022()][which];
        let mut bytes = file[..(file.len() as f64 * cut) as usize].to_vec();
        bytes.extend_from_slice(&file[bytes.len()..(bytes.len() + 700).min(file.len())]);
        for (at, value, in_header) in mutations {
            let span = if in_header { 400.min(bytes.len()) } else { bytes.len() };
            if span > 0 {
                bytes[(span as f64 * at) as usize % span] = value;
            }
        }
        read_everything(&bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn cut_or_mutated_tables_never_panic(
        cut in prop_oneof![Just(1.0f64), 0.0f64..1.0],
        mutations in proptest::collection::vec((0.0f64..1.0, any::<u8>(), any::<bool>()), 0..4),
    ) {
        let file = leaves_2014();
        let mut bytes = file[..(file.len() as f64 * cut) as usize].to_vec();
        for (at, value, in_header) in mutations {
            let span = if in_header { 400.min(bytes.len()) } else { bytes.len() };
            if span > 0 {
                bytes[(span as f64 * at) as usize % span] = value;
            }
        }
        if let Ok(table) = EndgameFile::from_bytes(bytes) {
            use_table(&table);
        }
    }
}

/// An entry scoring legal moves only (the readers refuse others).
fn book_entry() -> impl Strategy<Value = BookEntry> {
    (0u64..(1 << 20), any::<bool>(), proptest::array::uniform6(prop_oneof![Just(NO_SCORE), -1000i16..=1000]))
        .prop_map(|(rank, south, mut scores)| {
            let key = rank | if south { 1 << 43 } else { 0 };
            let legal = state_from_key(key).unwrap().legal_moves();
            (0..6).filter(|&pit| !legal.contains(pit)).for_each(|pit| scores[pit] = NO_SCORE);
            BookEntry { key, scores }
        })
}

/// A legal edge from the start or one of its children (the readers refuse
/// others); few enough that edges repeat.
fn doe_entry() -> impl Strategy<Value = DoeEntry> {
    (0usize..7, 0usize..6, any::<f64>(), 0u64..1000).prop_map(|(first, nth, score, count)| {
        let mut state = GameState::start();
        if first < 6 {
            state.play(first).unwrap();
        }
        let parent = state_key(&state);
        let moves: Vec<usize> = state.legal_moves().collect();
        let pit = moves[nth % moves.len()];
        let north = state.to_move() == Side::North;
        state.play(pit).unwrap();
        DoeEntry {
            parent,
            child: state_key(&state),
            pit: (pit + if north { 6 } else { 0 }) as u8,
            score,
            count,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn synthetic_books_round_trip(entries in proptest::collection::vec(book_entry(), 0..60)) {
        let mut keys: Vec<u64> = entries.iter().map(|e| e.key).collect();
        keys.sort_unstable();
        let unique = keys.windows(2).all(|w| w[0] != w[1]);
        match OpeningBook::from_entries(entries.clone(), &[("Date", "x")]) {
            Ok(book) => {
                prop_assert!(unique);
                let mut bytes = Vec::new();
                book.write_to(&mut bytes).unwrap();
                prop_assert_eq!(bytes.len(), book.header().encode(
                    oware::formats::HeaderEncoding::Utf16Be).unwrap().len()
                    + opening_book::ENTRY_LEN * (entries.len() + 1), "the entries and the sentinel");
                let again = OpeningBook::from_bytes(&bytes).unwrap();
                prop_assert_eq!(&again, &book);
                for entry in &entries {
                    prop_assert_eq!(again.get(entry.key), Some(entry));
                }
                let mut rewritten = Vec::new();
                again.write_to(&mut rewritten).unwrap();
                prop_assert_eq!(rewritten, bytes);
            }
            Err(FormatError::DuplicateKey { .. }) => prop_assert!(!unique),
            Err(other) => prop_assert!(false, "unexpected {}", other),
        }
    }

    #[test]
    fn synthetic_doe_books_keep_the_largest_count(entries in proptest::collection::vec(doe_entry(), 0..60)) {
        let book = DoeBook::from_entries(entries.clone(), &[]).unwrap();
        prop_assert_eq!(book.header().number("Entries").unwrap(), Some(book.len() as u64));
        for entry in &entries {
            let kept = book.get(entry.parent, entry.child).unwrap();
            prop_assert!(kept.count >= entry.count);
            let best = entries
                .iter()
                .filter(|e| (e.parent, e.child) == (entry.parent, entry.child))
                .map(|e| e.count)
                .max();
            prop_assert_eq!(Some(kept.count), best);
            prop_assert!(book.children(entry.parent).contains(kept));
        }
        let mut bytes = Vec::new();
        book.write_to(&mut bytes).unwrap();
        let again = DoeBook::from_bytes(&bytes).unwrap();
        let mut rewritten = Vec::new();
        again.write_to(&mut rewritten).unwrap();
        prop_assert_eq!(rewritten, bytes);
        prop_assert!(again.entries().windows(2).all(|w| (w[0].parent, w[0].child) < (w[1].parent, w[1].child)));
    }
}

#[test]
fn a_2014_book_cut_at_an_entry_boundary_is_refused() {
    let bytes = book_2014();
    let body = OpeningBook::from_bytes(bytes).unwrap().len() * 20;
    let header = bytes.len() - body;
    // Whole entries lost at the end, all of them, or one in the middle.
    let mut middle = bytes.to_vec();
    middle.drain(header + 20 * 1000..header + 20 * 1001);
    for cut in [bytes[..bytes.len() - 20].to_vec(), bytes[..header].to_vec(), middle] {
        match OpeningBook::from_bytes(&cut) {
            Err(FormatError::HeaderMismatch { field: "Positions", claimed: 162_889, .. }) => {}
            other => panic!("a cut book read as {:?}", other.map(|b| b.len())),
        }
    }
}
