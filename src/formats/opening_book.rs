//! "Oware Opening Book 1.0": the engine's 2014 opening book.
//!
//! # Layout
//!
//! ```text
//! offset        length  what
//! 0             h       header, UTF-16BE (see `header`): signature
//!                       "Oware Opening Book 1.0", fields (the engine writes
//!                       Date, Positions, Name, Author, License), empty line
//! h + 20·i      8       entry i: state key (section 1 of formats.md), u64
//! h + 20·i + 8  2 × 6   scores of the six moves of the side to move, i16,
//!                       pit order A..F (a..f when North moves)
//! h + 20·n      20      the sentinel (books we write): key 2^63 − 1, six
//!                       −32768 scores
//! ```
//!
//! All numbers are big-endian; the body is a whole number of 20-byte
//! entries, keys strictly ascending (the engine binary-searches them). A
//! score is the book's value of the move for the side to move (±1000 won or
//! lost, higher is better); −32768 ([`NO_SCORE`]) marks an illegal or
//! unevaluated move.
//!
//! # What the engine's file holds
//!
//! 33,658 entries, sorted, every key a valid state key. The start state
//! reads −72 −34 −20 −37 −35 +5 (F is the book move). `Positions` (162,889)
//! is not the entry count: it is the number of distinct states the book
//! knows, the entries' own states together with every state reached by a
//! scored move ([`OpeningBook::distinct_states`] reproduces it). Its 164,588
//! scores sit on legal moves only, and every legal move is scored.
//!
//! # The sentinel
//!
//! The engine's binary search (`OwareRoots.findBestMoves`, 2014 and 2021
//! alike) starts with `max` at the number of entries, one past the last.
//! A searched key above the book's last key therefore ends with a read at
//! index `n`, the end of the file, and the engine fails there with an
//! end-of-file exception. Books we write end with one more entry, the
//! [`SENTINEL_KEY`] (`i64::MAX`, above every 44-bit state key also as a
//! Java signed long) with no score: the engine then reads the sentinel,
//! and never index `n + 1`, which would need a key above `i64::MAX`. A key
//! never equals it, and had one done so, an entry with no score reads as
//! "not in the book" to the engine. The reader accepts the sentinel as the
//! last entry only, and does not count it among the entries
//! (`docs/engine-formats.md`).
//!
//! # Reading and writing
//!
//! The reader checks the signature, that the body is whole entries, that
//! every key is a state key, that only legal moves of the key's state are
//! scored, that keys strictly ascend, and that `Positions`, when present,
//! is the number of states the entries know (a body cut at an entry
//! boundary passes every other check). The writer ([`OpeningBook::new`],
//! then [`OpeningBook::write_to`] or [`OpeningBook::save`]) sorts the
//! entries and refuses a key given twice or a score on an illegal move.

use std::io::Write;
use std::path::Path;

use super::error::FormatError;
use super::header::{Header, HeaderEncoding};
use super::records::{be_i16, be_u64, check_version, is_state_key, read_file, read_records, write_records};
use super::signature::FileKind;
use crate::game::GameState;
use crate::rank::{state_from_key, state_key};
use crate::resumable::atomic::write_atomically;
use crate::rules::{Moves, ROW};

/// The format name in the signature.
pub const FORMAT: &str = FileKind::OpeningBook.format();
/// The one version there is.
pub const VERSION: &str = "1.0";
/// Bytes per entry.
pub const ENTRY_LEN: usize = 20;
/// The score of an illegal or unevaluated move.
pub const NO_SCORE: i16 = i16::MIN;
/// The key of the sentinel entry that ends the books we write (see the
/// module documentation): the largest Java `long`.
pub const SENTINEL_KEY: u64 = i64::MAX as u64;
/// The sentinel entry: [`SENTINEL_KEY`] and no score.
pub const SENTINEL: BookEntry = BookEntry { key: SENTINEL_KEY, scores: [NO_SCORE; ROW] };

/// One state of the book and the scores of its six moves.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct BookEntry {
    /// The state key (bit 43: South to move).
    pub key: u64,
    /// Scores of pits A..F (a..f for North), [`NO_SCORE`] for none.
    pub scores: [i16; ROW],
}

impl BookEntry {
    /// The score of the mover's pit `pit` (0..6), if it has one.
    pub fn score(&self, pit: usize) -> Option<i16> {
        self.scores.get(pit).copied().filter(|&s| s != NO_SCORE)
    }

    /// The state this entry describes.
    pub fn state(&self) -> Option<GameState> {
        state_from_key(self.key)
    }

    /// The best-scored move and its score (lowest pit on ties).
    pub fn best(&self) -> Option<(usize, i16)> {
        (0..ROW).filter_map(|pit| self.score(pit).map(|s| (pit, s))).fold(None, |best, (pit, s)| match best {
            Some((_, b)) if b >= s => best,
            _ => Some((pit, s)),
        })
    }

    /// The moves the engine picks from: those scored within `margin` of the
    /// best (the engine uses 10).
    pub fn choices(&self, margin: i16) -> Vec<usize> {
        let Some((_, best)) = self.best() else {
            return Vec::new();
        };
        (0..ROW)
            .filter(|&pit| self.score(pit).is_some_and(|s| s as i32 >= best as i32 - margin as i32))
            .collect()
    }

    /// The 20 bytes of this entry.
    pub fn to_bytes(&self) -> [u8; ENTRY_LEN] {
        let mut bytes = [0u8; ENTRY_LEN];
        bytes[..8].copy_from_slice(&self.key.to_be_bytes());
        for (pit, score) in self.scores.iter().enumerate() {
            bytes[8 + 2 * pit..10 + 2 * pit].copy_from_slice(&score.to_be_bytes());
        }
        bytes
    }

    /// An entry from its 20 bytes.
    pub fn from_bytes(bytes: &[u8; ENTRY_LEN]) -> BookEntry {
        let mut scores = [0i16; ROW];
        for (pit, score) in scores.iter_mut().enumerate() {
            *score = be_i16(&bytes[8 + 2 * pit..10 + 2 * pit]);
        }
        BookEntry { key: be_u64(&bytes[..8]), scores }
    }
}

/// A 2014 opening book: header and entries sorted by key.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct OpeningBook {
    header: Header,
    entries: Vec<BookEntry>,
    /// The body ends with [`SENTINEL`] (not one of `entries`).
    sentinel: bool,
}

impl OpeningBook {
    /// Reads the book at `path`. Only I/O errors name the path; callers
    /// add it to the others.
    pub fn open(path: &Path) -> Result<OpeningBook, FormatError> {
        OpeningBook::from_bytes(&read_file(path)?)
    }

    /// Reads a whole book held in memory.
    pub fn from_bytes(bytes: &[u8]) -> Result<OpeningBook, FormatError> {
        let (header, start, records) =
            read_records(bytes, FORMAT, &[VERSION], HeaderEncoding::Utf16Be, ENTRY_LEN)?;
        let count = records.len();
        let mut entries: Vec<BookEntry> = Vec::with_capacity(count);
        let mut sentinel = false;
        for (i, record) in records.enumerate() {
            let mut array = [0u8; ENTRY_LEN];
            array.copy_from_slice(record);
            let entry = BookEntry::from_bytes(&array);
            let number = i as u64;
            if entry == SENTINEL && i + 1 == count {
                sentinel = true;
                break;
            }
            let offset = (start + i * ENTRY_LEN) as u64;
            if !is_state_key(entry.key) {
                return Err(FormatError::BadKey {
                    format: FORMAT,
                    key: entry.key,
                    entry: number,
                    offset: Some(offset),
                });
            }
            check_scores(&entry, number, Some(offset))?;
            if let Some(previous) = entries.last() {
                if entry.key == previous.key {
                    return Err(FormatError::DuplicateKey {
                        key: entry.key,
                        entry: Some(number),
                        offset: Some(offset),
                    });
                }
                if entry.key < previous.key {
                    return Err(FormatError::Unsorted { format: FORMAT, entry: number, offset });
                }
            }
            entries.push(entry);
        }
        let book = OpeningBook { header, entries, sentinel };
        // The format has no checksum; `Positions` is what betrays a body
        // cut at an entry boundary (or emptied): it counts the states the
        // whole book knows.
        if let Some(claimed) = book.header.number("Positions")? {
            let actual = book.distinct_states();
            if claimed != actual {
                return Err(FormatError::HeaderMismatch {
                    format: FORMAT,
                    field: "Positions",
                    claimed,
                    actual,
                });
            }
        }
        Ok(book)
    }

    /// A book of `entries` (any order) under `header`, which must be an
    /// `Oware Opening Book 1.0` header, ending with the sentinel. Refuses a key that is no state key
    /// or appears twice, and a score on a move its state cannot play.
    pub fn new(header: Header, mut entries: Vec<BookEntry>) -> Result<OpeningBook, FormatError> {
        check_version(&header, FORMAT, &[VERSION])?;
        header.encode(HeaderEncoding::Utf16Be)?;
        if let Some((i, entry)) = entries.iter().enumerate().find(|(_, e)| !is_state_key(e.key)) {
            return Err(FormatError::BadKey {
                format: FORMAT,
                key: entry.key,
                entry: i as u64,
                offset: None,
            });
        }
        for (i, entry) in entries.iter().enumerate() {
            check_scores(entry, i as u64, None)?;
        }
        entries.sort_unstable_by_key(|e| e.key);
        if let Some(pair) = entries.windows(2).find(|pair| pair[0].key == pair[1].key) {
            return Err(FormatError::DuplicateKey { key: pair[0].key, entry: None, offset: None });
        }
        Ok(OpeningBook { header, entries, sentinel: true })
    }

    /// A book of `entries` with a fresh header: the signature, `fields` in
    /// order, and `Positions` set to [`OpeningBook::distinct_states`]
    /// (where `fields` lists it, else first).
    pub fn from_entries(
        entries: Vec<BookEntry>,
        fields: &[(&str, &str)],
    ) -> Result<OpeningBook, FormatError> {
        let mut book = OpeningBook::new(Header::new(FORMAT, VERSION)?, entries)?;
        book.header = Header::with_count(FORMAT, VERSION, fields, "Positions", book.distinct_states())?;
        Ok(book)
    }

    /// The header, as read or given.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The header, to change its fields (the signature stays).
    pub fn header_mut(&mut self) -> &mut Header {
        &mut self.header
    }

    /// Whether the body ends with the [`SENTINEL`]: books this crate
    /// creates do; a book read keeps what its file had (the engine's own
    /// file has none).
    pub fn has_sentinel(&self) -> bool {
        self.sentinel
    }

    /// The entries, sorted by key (the sentinel is not one).
    pub fn entries(&self) -> &[BookEntry] {
        &self.entries
    }

    /// The number of entries, one per state; not the `Positions`
    /// field, which is [`OpeningBook::distinct_states`].
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the book has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in key order.
    pub fn iter(&self) -> std::slice::Iter<'_, BookEntry> {
        self.entries.iter()
    }

    /// The entry of state key `key` (binary search).
    pub fn get(&self, key: u64) -> Option<&BookEntry> {
        self.entries.binary_search_by_key(&key, |e| e.key).ok().map(|i| &self.entries[i])
    }

    /// The entry of a game state (its history is ignored).
    pub fn get_state(&self, state: &GameState) -> Option<&BookEntry> {
        self.get(state_key(state))
    }

    /// The states the book knows: its entries' states and every state a
    /// scored legal move leads to, counted once. The engine's `Positions`.
    pub fn distinct_states(&self) -> u64 {
        // Sorted keys rather than a hash set: the same count, several times
        // faster on a book of a hundred thousand entries (every opening of
        // a book counts them).
        let mut states: Vec<u64> = self.entries.iter().map(|e| e.key).collect();
        for entry in &self.entries {
            let Some(state) = entry.state() else { continue };
            for pit in state.legal_moves() {
                if entry.score(pit).is_some() {
                    let mut child = state.clone();
                    child.play_unchecked(pit);
                    states.push(state_key(&child));
                }
            }
        }
        states.sort_unstable();
        states.dedup();
        states.len() as u64
    }

    /// Writes the book: header, the entries in key order, the sentinel if
    /// the book has one.
    pub fn write_to<W: Write>(&self, out: &mut W) -> Result<(), FormatError> {
        let header = self.header.encode(HeaderEncoding::Utf16Be)?;
        self.write_encoded(out, &header).map_err(FormatError::stream)
    }

    /// Saves the book atomically to `path`.
    pub fn save(&self, path: &Path) -> Result<(), FormatError> {
        let header = self.header.encode(HeaderEncoding::Utf16Be)?;
        write_atomically(path, |out| self.write_encoded(out, &header))
            .map_err(|e| FormatError::io("write", path, e))
    }

    fn write_encoded<W: Write>(&self, out: &mut W, header: &[u8]) -> std::io::Result<()> {
        let sentinel = self.sentinel.then_some(&SENTINEL);
        write_records(out, header, self.entries.iter().chain(sentinel).map(|e| e.to_bytes()))
    }
}

/// Refuses a score on a move that is not legal in the entry's state (or in
/// none, the game being over): `best` and `choices` would name a move the
/// state cannot play. The layout has no checksum, and a damaged
/// [`NO_SCORE`] reads as a score; the engine's book scores legal moves only.
fn check_scores(entry: &BookEntry, number: u64, offset: Option<u64>) -> Result<(), FormatError> {
    let legal = entry.state().map_or(Moves::default(), |state| state.legal_moves());
    match (0..ROW).find(|&pit| entry.scores[pit] != NO_SCORE && !legal.contains(pit)) {
        Some(pit) => Err(FormatError::IllegalMove {
            format: FORMAT,
            key: entry.key,
            pit: pit as u8,
            entry: number,
            offset,
        }),
        None => Ok(()),
    }
}

impl<'a> IntoIterator for &'a OpeningBook {
    type Item = &'a BookEntry;
    type IntoIter = std::slice::Iter<'a, BookEntry>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Side;

    fn entry(key: u64, scores: [i16; 6]) -> BookEntry {
        BookEntry { key, scores }
    }

    #[test]
    fn entries_encode_big_endian() {
        let e = entry(0xDD0094F6488, [-72, -34, -20, -37, -35, 5]);
        let bytes = e.to_bytes();
        assert_eq!(&bytes[..8], &[0, 0, 0x0D, 0xD0, 0x09, 0x4F, 0x64, 0x88]);
        assert_eq!(&bytes[8..10], &[0xFF, 0xB8]);
        assert_eq!(&bytes[18..], &[0x00, 0x05]);
        assert_eq!(BookEntry::from_bytes(&bytes), e);
        assert_eq!(e.best(), Some((5, 5)));
        assert_eq!(e.choices(10), vec![5]);
        assert_eq!(e.choices(30), vec![2, 5]);
        let none = entry(1, [NO_SCORE; 6]);
        assert_eq!(none.best(), None);
        assert!(none.choices(10).is_empty());
        assert_eq!(none.score(6), None);
    }

    #[test]
    fn writer_sorts_and_refuses_duplicates() {
        let start = state_key(&GameState::start());
        // Key 7's legal moves but the first are scored 0.
        let seven = state_from_key(7).unwrap();
        let mut scores = [NO_SCORE; ROW];
        seven.legal_moves().filter(|&p| p > 0).for_each(|p| scores[p] = 0);
        let book = OpeningBook::from_entries(
            vec![entry(start, [1, 2, 3, 4, 5, 6]), entry(7, scores)],
            &[("Date", "now")],
        )
        .unwrap();
        assert_eq!(book.entries()[0].key, 7);
        // The start and its six children, plus key 7's state and children.
        let expected = 7 + 1 + seven.legal_moves().filter(|&p| p > 0).count() as u64;
        assert_eq!(book.header().number("Positions").unwrap(), Some(expected));
        assert_eq!(book.header().lines()[0], format!("Positions: {expected}"));
        let mut bytes = Vec::new();
        book.write_to(&mut bytes).unwrap();
        let again = OpeningBook::from_bytes(&bytes).unwrap();
        assert_eq!(again, book);
        assert_eq!(again.get(start).unwrap().scores[5], 6);
        assert_eq!(again.get_state(&GameState::start()), again.get(start));
        assert_eq!(again.get(8), None);

        let twice = vec![entry(5, [NO_SCORE; 6]), entry(3, [NO_SCORE; 6]), entry(5, [NO_SCORE; 6])];
        assert!(matches!(
            OpeningBook::from_entries(twice, &[]),
            Err(FormatError::DuplicateKey { key: 5, entry: None, .. })
        ));
        assert!(matches!(
            OpeningBook::from_entries(vec![entry(1 << 44, [0; 6])], &[]),
            Err(FormatError::BadKey { entry: 0, .. })
        ));
    }

    #[test]
    fn scores_on_illegal_moves_are_refused() {
        // South's A..E are empty: only F is legal.
        let state = GameState::from_parts([0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4], [10, 10], Side::South);
        let key = state_key(&state);
        assert!(state.legal_moves().eq([5]));
        let illegal = entry(key, [NO_SCORE, NO_SCORE, 0, NO_SCORE, NO_SCORE, 7]);
        assert!(matches!(
            OpeningBook::from_entries(vec![illegal], &[]),
            Err(FormatError::IllegalMove { pit: 2, entry: 0, offset: None, .. })
        ));
        let legal = OpeningBook::from_entries(
            vec![entry(key, [NO_SCORE, NO_SCORE, NO_SCORE, NO_SCORE, NO_SCORE, 7])],
            &[],
        )
        .unwrap();
        let mut bytes = Vec::new();
        legal.write_to(&mut bytes).unwrap();
        let at = bytes.len() - 2 * ENTRY_LEN;
        bytes[at + 8 + 2 * 2..at + 8 + 2 * 3].copy_from_slice(&0i16.to_be_bytes());
        assert!(matches!(
            OpeningBook::from_bytes(&bytes),
            Err(FormatError::IllegalMove { pit: 2, entry: 0, offset: Some(o), .. }) if o == at as u64
        ));
    }

    #[test]
    fn reader_checks_order_and_whole_entries() {
        let header = Header::new(FORMAT, VERSION).unwrap();
        let mut bytes = header.encode(HeaderEncoding::Utf16Be).unwrap();
        let start = bytes.len() as u64;
        for key in [3u64, 9, 9] {
            bytes.extend_from_slice(&entry(key, [NO_SCORE; 6]).to_bytes());
        }
        assert!(matches!(
            OpeningBook::from_bytes(&bytes),
            Err(FormatError::DuplicateKey { key: 9, entry: Some(2), offset: Some(o) }) if o == start + 40
        ));
        bytes[start as usize + 47] = 2;
        assert!(matches!(
            OpeningBook::from_bytes(&bytes),
            Err(FormatError::Unsorted { entry: 2, offset, .. }) if offset == start + 40
        ));
        bytes.pop();
        assert!(matches!(
            OpeningBook::from_bytes(&bytes),
            Err(FormatError::TruncatedEntry { entry: 2, missing: 1, offset, .. }) if offset == start + 40
        ));
    }

    /// The engine's lookup (`OwareRoots.findBestMoves`, 2014), step by
    /// step: `min = 0`, `max = n` (one past the last entry), signed
    /// comparisons, a read at `middle` each round. `Err` where the engine
    /// reads past the end of the file; else the scores found, if any.
    fn engine_lookup(bytes: &[u8], body: usize, key: u64) -> Result<Option<[i16; 6]>, usize> {
        let n = (bytes.len() - body) / ENTRY_LEN;
        let (mut min, mut max) = (0i64, n as i64);
        while min <= max {
            let middle = ((min + max) as u64 >> 1) as usize;
            let at = body + middle * ENTRY_LEN;
            let Some(record) = bytes.get(at..at + ENTRY_LEN) else { return Err(middle) };
            let entry = BookEntry::from_bytes(record.try_into().unwrap());
            match (entry.key as i64).cmp(&(key as i64)) {
                std::cmp::Ordering::Less => min = middle as i64 + 1,
                std::cmp::Ordering::Greater => max = middle as i64 - 1,
                std::cmp::Ordering::Equal => {
                    return Ok(entry.scores.iter().any(|&s| s != NO_SCORE).then_some(entry.scores));
                }
            }
        }
        Ok(None)
    }

    #[test]
    fn the_sentinel_keeps_the_engines_search_inside_the_file() {
        // A few states of the game, the start's children among them.
        let mut states = vec![GameState::start()];
        for pit in 0..ROW {
            let mut child = GameState::start();
            child.play(pit).unwrap();
            states.push(child);
        }
        let scores = |state: &GameState| {
            let mut s = [NO_SCORE; ROW];
            state.legal_moves().for_each(|p| s[p] = p as i16);
            s
        };
        let entries: Vec<BookEntry> = states.iter().map(|s| entry(state_key(s), scores(s))).collect();
        let book = OpeningBook::from_entries(entries.clone(), &[("Name", "test")]).unwrap();
        assert!(book.has_sentinel());
        let mut bytes = Vec::new();
        book.write_to(&mut bytes).unwrap();
        let body = bytes.len() - (entries.len() + 1) * ENTRY_LEN;
        assert_eq!(bytes[bytes.len() - ENTRY_LEN..], SENTINEL.to_bytes());
        let read = OpeningBook::from_bytes(&bytes).unwrap();
        assert_eq!((read.len(), read.has_sentinel()), (entries.len(), true));
        assert_eq!(read, book);

        // Every key the book holds, keys between and around them, and the
        // largest state key: found or not, never a read past the end.
        let last = entries.iter().map(|e| e.key).max().unwrap();
        let mut probes: Vec<u64> = vec![0, 1, last + 1, (1 << 44) - 1, SENTINEL_KEY - 1];
        for e in &entries {
            probes.extend([e.key - 1, e.key, e.key + 1]);
        }
        for &key in &probes {
            let found = engine_lookup(&bytes, body, key).unwrap();
            assert_eq!(found, book.get(key).map(|e| e.scores), "key {key:#x}");
        }
        // Without the sentinel the engine fails exactly above the last key.
        let bare = &bytes[..bytes.len() - ENTRY_LEN];
        assert_eq!(engine_lookup(bare, body, last + 1), Err(entries.len()));
        assert!(engine_lookup(bare, body, last).unwrap().is_some());
        let read = OpeningBook::from_bytes(bare).unwrap();
        assert!(!read.has_sentinel());
        let mut again = Vec::new();
        read.write_to(&mut again).unwrap();
        assert_eq!(again, bare, "a book without the sentinel is written back as read");

        // The sentinel anywhere but last is a bad key.
        let mut twice = bytes.clone();
        twice.extend_from_slice(&SENTINEL.to_bytes());
        assert!(matches!(
            OpeningBook::from_bytes(&twice),
            Err(FormatError::BadKey { key: SENTINEL_KEY, .. })
        ));
    }
}
