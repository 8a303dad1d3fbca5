//! Damaged engine opening books ("Oware Opening Book 1.0" of 2014, "DOE
//! Opening Book 1.0" of 2022) are refused with a typed error or answer
//! with legal moves; nothing panics.
//!
//! Neither layout carries a checksum: a damaged score reads as another
//! score, and no reader can tell. What holds whatever the damage:
//!
//! 2014 book (`OpeningBook::from_bytes`; `get`, `get_state`,
//! `BookEntry::state`, `score`, `best`, `choices`):
//! * every entry a lookup returns has the key asked for, a key that
//!   decodes to its state, and scores on legal moves of that state only, so
//!   `best` and `choices` name legal moves;
//! * `Positions` (the states the book knows) agrees with the body;
//! * a cut at any length is refused: off an entry boundary as a cut entry;
//!   on one because `Positions` disagrees (in the engine's book, no shorter
//!   run of entries knows as many states). A book without `Positions` cut
//!   on an entry boundary would be accepted as the shorter book.
//!
//! DOE book (`DoeBook::from_bytes`; `children`, `children_of_state`, `get`,
//! `DoeEntry::mover`, `relative_pit`, `letter`):
//! * every edge a lookup returns belongs to the parent asked for, is a
//!   legal move of the parent's side to move, and leads to its child;
//! * a cut off an entry boundary is refused. A cut on one is accepted as
//!   the book's first entries: the only count, `Entries`, is not checked,
//!   since the engine's own file overstates it (73,192 for 71,473 entries).

use crate::damage;

use std::sync::OnceLock;

use damage::{damage, decompress, reference, Layout};
use oware::formats::doe::{self, DoeBook, DoeEntry};
use oware::formats::opening_book::{self, BookEntry, OpeningBook};
use oware::formats::FormatError;
use oware::rank::{state_from_key, state_key};
use oware::{GameState, Side};
use proptest::prelude::*;

/// Keys looked up whatever the book: none of them is in it, or the start.
const ODD_KEYS: [u64; 5] = [0, 1, 0xDD0094F6488, 1 << 43, u64::MAX];

/// A good book: its bytes, where its entries start, and the keys to look
/// up in a damaged copy.
struct Good<B> {
    bytes: Vec<u8>,
    book: B,
    layout: Layout,
    /// A sample of the book's keys (2014: entry keys; DOE: parents).
    keys: Vec<u64>,
}

fn book_2014() -> &'static Good<OpeningBook> {
    static GOOD: OnceLock<Good<OpeningBook>> = OnceLock::new();
    GOOD.get_or_init(|| {
        let bytes = decompress(&reference("aalina-2014-book.bin.zst"));
        let book = OpeningBook::from_bytes(&bytes).unwrap();
        let header_len = bytes.len() - book.len() * opening_book::ENTRY_LEN;
        let layout = Layout::records(header_len, opening_book::ENTRY_LEN, book.len());
        let keys = book.iter().step_by(13).map(|e| e.key).collect();
        Good { bytes, book, layout, keys }
    })
}

fn book_doe() -> &'static Good<DoeBook> {
    static GOOD: OnceLock<Good<DoeBook>> = OnceLock::new();
    GOOD.get_or_init(|| {
        let bytes = decompress(&reference("aalina-2022-roots.bin.zst"));
        let book = DoeBook::from_bytes(&bytes).unwrap();
        let header_len = bytes.len() - book.len() * doe::ENTRY_LEN;
        let layout = Layout::records(header_len, doe::ENTRY_LEN, book.len());
        let keys = book.parents().step_by(7).collect();
        Good { bytes, book, layout, keys }
    })
}

/// The entries whose records sit near byte `at`.
fn near<T>(entries: &[T], at: usize, header_len: usize, entry_len: usize) -> &[T] {
    let entry = at.saturating_sub(header_len) / entry_len;
    let first = entry.saturating_sub(2).min(entries.len());
    &entries[first..(entry + 3).min(entries.len())]
}

// ------------------------------------------------------------ 2014 book

/// An entry a lookup returned: its key decodes, its scores sit on legal
/// moves, and its best move and choices are legal and best.
fn check_entry(entry: &BookEntry) -> Result<(), TestCaseError> {
    let state = entry.state();
    prop_assert!(state.is_some(), "key 0x{:X} is no state", entry.key);
    let state = state.unwrap();
    prop_assert_eq!(state_key(&state), entry.key);
    let legal = state.legal_moves();
    for pit in 0..=6 {
        if entry.score(pit).is_some() {
            prop_assert!(legal.contains(pit), "key 0x{:X}: illegal move {} scored", entry.key, pit);
        }
    }
    let scores: Vec<i16> = (0..6).filter_map(|pit| entry.score(pit)).collect();
    match entry.best() {
        None => prop_assert!(scores.is_empty()),
        Some((pit, score)) => {
            prop_assert!(legal.contains(pit));
            prop_assert_eq!(entry.score(pit), Some(score));
            prop_assert!(scores.iter().all(|&s| s <= score));
        }
    }
    let choices = entry.choices(10);
    prop_assert!(choices.iter().all(|&pit| legal.contains(pit)));
    prop_assert_eq!(choices.is_empty(), scores.is_empty());
    Ok(())
}

fn check_book(book: &OpeningBook, keys: impl Iterator<Item = u64>) -> Result<(), TestCaseError> {
    if let Ok(Some(claimed)) = book.header().number("Positions") {
        prop_assert_eq!(claimed, book.distinct_states());
    }
    for key in keys {
        let Some(entry) = book.get(key) else { continue };
        prop_assert_eq!(entry.key, key);
        check_entry(entry)?;
        prop_assert_eq!(book.get_state(&entry.state().unwrap()), Some(entry));
    }
    Ok(())
}

// ------------------------------------------------------------ DOE book

/// An edge a lookup returned: a legal move of the parent's side to move,
/// leading to the child, with the letter of its side and pit.
fn check_edge(edge: &DoeEntry) -> Result<(), TestCaseError> {
    let parent = state_from_key(edge.parent);
    prop_assert!(parent.is_some(), "parent 0x{:X} is no state", edge.parent);
    let parent: GameState = parent.unwrap();
    prop_assert_eq!(edge.mover(), parent.to_move(), "a move of the side not to move");
    let mut child = parent.clone();
    prop_assert!(child.play(edge.relative_pit()).is_ok(), "illegal move {}", edge.letter());
    prop_assert_eq!(state_key(&child), edge.child, "the move does not lead to the child");
    let letter = edge.letter();
    let first = if edge.mover() == Side::South { 'A' } else { 'a' };
    prop_assert_eq!(letter as usize - first as usize, edge.relative_pit());
    Ok(())
}

fn check_doe(book: &DoeBook, parents: impl Iterator<Item = u64>) -> Result<(), TestCaseError> {
    for parent in parents {
        let children = book.children(parent);
        prop_assert!(children.windows(2).all(|w| w[0].child < w[1].child));
        for edge in children {
            prop_assert_eq!(edge.parent, parent);
            check_edge(edge)?;
            prop_assert_eq!(book.get(parent, edge.child), Some(edge));
        }
    }
    for edge in book.children_of_state(&GameState::start()) {
        check_edge(edge)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_damaged_2014_book_is_refused_or_answers_legal_moves(damage in damage()) {
        let good = book_2014();
        let (bytes, at) = damage.apply(&good.bytes, &good.layout);
        match OpeningBook::from_bytes(&bytes) {
            Ok(book) => {
                prop_assert!(!damage.is_cut(), "a cut book was accepted");
                let around = near(good.book.entries(), at, good.layout.header_len, opening_book::ENTRY_LEN);
                let keys = good.keys.iter().copied().chain(around.iter().map(|e| e.key)).chain(ODD_KEYS);
                check_book(&book, keys)?;
            }
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }

    #[test]
    fn a_damaged_doe_book_is_refused_or_answers_legal_moves(damage in damage()) {
        let good = book_doe();
        let (bytes, at) = damage.apply(&good.bytes, &good.layout);
        match DoeBook::from_bytes(&bytes) {
            Ok(book) => {
                if damage.is_cut() {
                    prop_assert_eq!((bytes.len() - good.layout.header_len) % doe::ENTRY_LEN, 0);
                    prop_assert_eq!(book.entries(), &good.book.entries()[..book.len()]);
                }
                let around = near(good.book.entries(), at, good.layout.header_len, doe::ENTRY_LEN);
                let parents = good.keys.iter().copied().chain(around.iter().map(|e| e.parent)).chain(ODD_KEYS);
                check_doe(&book, parents)?;
            }
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }
}

/// A cut on an entry boundary in each book: refused by `Positions` in the
/// 2014 book, accepted as a shorter DOE book.
#[test]
fn cuts_on_entry_boundaries_are_refused_where_a_count_tells() {
    let good = book_2014();
    let cut = &good.bytes[..good.bytes.len() - opening_book::ENTRY_LEN];
    assert!(matches!(
        OpeningBook::from_bytes(cut),
        Err(FormatError::HeaderMismatch { field: "Positions", .. })
    ));
    let good = book_doe();
    let cut = &good.bytes[..good.bytes.len() - doe::ENTRY_LEN];
    let book = DoeBook::from_bytes(cut).unwrap();
    assert_eq!(book.entries(), &good.book.entries()[..good.book.len() - 1]);
}
