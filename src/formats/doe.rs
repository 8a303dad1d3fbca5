//! "DOE Opening Book 1.0": the engine's 2022 opening book, one row per
//! edge of its opening tree.
//!
//! # Layout
//!
//! ```text
//! offset         length  what
//! 0              h       header, UTF-8 lines (see `header`):
//!                          "DOE Opening Book 1.0" 0A
//!                          "Entries: 73192" 0A        (the engine's fields:
//!                          "Date: Thu Feb 24 …" 0A     Entries, Date)
//!                        then 00 0A (a UTF-16BE newline) ends the header
//! h + 36·i       8       entry i: parent state key, u64
//! h + 36·i + 8   8       child state key, u64
//! h + 36·i + 16  4       move, i32: the pit sown, 0..11 in absolute order
//!                        (South A..F = 0..5, North a..f = 6..11)
//! h + 36·i + 20  8       score, IEEE 754 double: the backed-up search value
//!                        of the child for the side to move in the child
//!                        (so the parent's best move has the lowest score)
//! h + 36·i + 28  8       count, u64: visits of the child through this edge
//! ```
//!
//! All numbers are big-endian; the body is a whole number of 36-byte
//! entries, sorted by (parent, child) strictly ascending, so the children of
//! a parent are one contiguous run ([`DoeBook::children`]).
//!
//! # What the engine's file holds
//!
//! Its header says `Entries: 73192`, but the body holds 71,473 entries:
//! readers trust the body and keep the header as it is. All 71,473 entries
//! are consistent: every key decodes to a 48-seed state, the move belongs to
//! the parent's side to move, and playing it from the parent gives the child
//! (18,996 distinct parents, 70,680 distinct children). At the start state,
//! F has score −0.92 over 1,289,084 visits; A..E score +24.98 (D)
//! to +52.49 (A) over 8,368 to 31,140 visits.
//!
//! # Reading and writing
//!
//! The reader checks the signature, whole entries, state keys, moves
//! 0..=11 and the strict order, refusing a repeated (parent, child) pair,
//! and that every edge is a legal move of the parent's side to move that
//! leads to the child. The writer ([`DoeBook::new`], then
//! [`DoeBook::write_to`] or [`DoeBook::save`]) refuses the same edges,
//! sorts the entries and keeps, of entries sharing a (parent, child) pair,
//! the one with the larger count (the first given on a tie). Scores are
//! kept bit for bit, NaN payloads included.

use std::cmp::Reverse;
use std::io::Write;
use std::path::Path;

use super::error::FormatError;
use super::header::{Header, HeaderEncoding};
use super::records::{be_i32, be_u64, check_version, is_state_key, read_file, read_records, write_records};
use super::signature::FileKind;
use crate::game::{GameState, Side};
use crate::rank::{state_from_key, state_key};
use crate::resumable::atomic::write_atomically;
use crate::rules::{PITS, ROW};

/// The format name in the signature.
pub const FORMAT: &str = FileKind::Doe.format();
/// The one version there is.
pub const VERSION: &str = "1.0";
/// Bytes per entry.
pub const ENTRY_LEN: usize = 36;

/// One edge of the opening tree.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct DoeEntry {
    /// The state key before the move.
    pub parent: u64,
    /// The state key after it.
    pub child: u64,
    /// The pit sown, absolute: 0..6 South's A..F, 6..12 North's a..f.
    pub pit: u8,
    /// The child's value for the side to move in the child.
    pub score: f64,
    /// Visits.
    pub count: u64,
}

impl DoeEntry {
    /// The side that plays the move (from the pit number).
    pub fn mover(&self) -> Side {
        if (self.pit as usize) < ROW {
            Side::South
        } else {
            Side::North
        }
    }

    /// The move's pit from the mover's left (0..6), as
    /// [`GameState::play`] takes it.
    pub fn relative_pit(&self) -> usize {
        self.pit as usize % ROW
    }

    /// The move letter: `A..F` for South, `a..f` for North.
    pub fn letter(&self) -> char {
        self.mover().move_letter(self.relative_pit())
    }

    /// The 36 bytes of this entry.
    pub fn to_bytes(&self) -> [u8; ENTRY_LEN] {
        let mut bytes = [0u8; ENTRY_LEN];
        bytes[..8].copy_from_slice(&self.parent.to_be_bytes());
        bytes[8..16].copy_from_slice(&self.child.to_be_bytes());
        bytes[16..20].copy_from_slice(&(self.pit as i32).to_be_bytes());
        bytes[20..28].copy_from_slice(&self.score.to_bits().to_be_bytes());
        bytes[28..].copy_from_slice(&self.count.to_be_bytes());
        bytes
    }

    fn sort_key(&self) -> (u64, u64) {
        (self.parent, self.child)
    }
}

/// A DOE book: header and entries sorted by (parent, child).
#[derive(Clone, PartialEq, Debug)]
pub struct DoeBook {
    header: Header,
    entries: Vec<DoeEntry>,
}

impl DoeBook {
    /// Reads the book at `path`. Only I/O errors name the path; callers
    /// add it to the others.
    pub fn open(path: &Path) -> Result<DoeBook, FormatError> {
        DoeBook::from_bytes(&read_file(path)?)
    }

    /// Reads a whole book held in memory. The `Entries` field is not
    /// checked (the engine's own file overstates it): the body decides, so
    /// a body cut on an entry boundary reads as the shorter book.
    pub fn from_bytes(bytes: &[u8]) -> Result<DoeBook, FormatError> {
        let (header, start, records) =
            read_records(bytes, FORMAT, &[VERSION], HeaderEncoding::Utf8, ENTRY_LEN)?;
        let mut entries: Vec<DoeEntry> = Vec::with_capacity(records.len());
        for (i, record) in records.enumerate() {
            let number = i as u64;
            let offset = (start + i * ENTRY_LEN) as u64;
            let parent = be_u64(&record[..8]);
            let child = be_u64(&record[8..16]);
            for key in [parent, child] {
                if !is_state_key(key) {
                    return Err(FormatError::BadKey {
                        format: FORMAT,
                        key,
                        entry: number,
                        offset: Some(offset),
                    });
                }
            }
            let value = be_i32(&record[16..20]);
            let pit = match u8::try_from(value) {
                Ok(pit) if (pit as usize) < PITS => pit,
                _ => {
                    return Err(FormatError::BadMove {
                        value: value as i64,
                        entry: number,
                        offset: Some(offset),
                    })
                }
            };
            let entry = DoeEntry {
                parent,
                child,
                pit,
                score: f64::from_bits(be_u64(&record[20..28])),
                count: be_u64(&record[28..36]),
            };
            if let Some(previous) = entries.last() {
                if entry.sort_key() == previous.sort_key() {
                    return Err(FormatError::DuplicateEdge { parent, child, entry: number, offset });
                }
                if entry.sort_key() < previous.sort_key() {
                    return Err(FormatError::Unsorted { format: FORMAT, entry: number, offset });
                }
            }
            check_edge(&entry, number, Some(offset))?;
            entries.push(entry);
        }
        Ok(DoeBook { header, entries })
    }

    /// A book of `entries` (any order) under `header`, which must be a
    /// `DOE Opening Book 1.0` header. Entries sharing a (parent, child)
    /// pair collapse to the one with the larger count (the first given on a
    /// tie). Refuses keys that are no state keys, pits above 11, and edges
    /// that are no legal move from the parent to the child.
    pub fn new(header: Header, mut entries: Vec<DoeEntry>) -> Result<DoeBook, FormatError> {
        check_version(&header, FORMAT, &[VERSION])?;
        header.encode(HeaderEncoding::Utf8)?;
        for (i, entry) in entries.iter().enumerate() {
            let number = i as u64;
            if let Some(&key) = [entry.parent, entry.child].iter().find(|&&k| !is_state_key(k)) {
                return Err(FormatError::BadKey { format: FORMAT, key, entry: number, offset: None });
            }
            if entry.pit as usize >= PITS {
                return Err(FormatError::BadMove { value: entry.pit as i64, entry: number, offset: None });
            }
            check_edge(entry, number, None)?;
        }
        // Stable: equal counts keep their given order, and dedup keeps the
        // first of each run, the largest count.
        entries.sort_by_key(|e| (e.parent, e.child, Reverse(e.count)));
        entries.dedup_by_key(|e| e.sort_key());
        Ok(DoeBook { header, entries })
    }

    /// A book of `entries` with a fresh header: the signature, `fields` in
    /// order, and `Entries` set to the number of entries kept (where
    /// `fields` lists it, else first).
    pub fn from_entries(entries: Vec<DoeEntry>, fields: &[(&str, &str)]) -> Result<DoeBook, FormatError> {
        let mut book = DoeBook::new(Header::new(FORMAT, VERSION)?, entries)?;
        book.header = Header::with_count(FORMAT, VERSION, fields, "Entries", book.entries.len() as u64)?;
        Ok(book)
    }

    /// The header, as read or given. Its `Entries` field is not checked
    /// against [`DoeBook::len`].
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The header, to change its fields (the signature stays).
    pub fn header_mut(&mut self) -> &mut Header {
        &mut self.header
    }

    /// The entries, sorted by (parent, child).
    pub fn entries(&self) -> &[DoeEntry] {
        &self.entries
    }

    /// The number of entries (edges), from the body.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the book has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in (parent, child) order.
    pub fn iter(&self) -> std::slice::Iter<'_, DoeEntry> {
        self.entries.iter()
    }

    /// The entries whose parent is `parent`, by child key (binary search).
    pub fn children(&self, parent: u64) -> &[DoeEntry] {
        let first = self.entries.partition_point(|e| e.parent < parent);
        let end = first + self.entries[first..].partition_point(|e| e.parent == parent);
        &self.entries[first..end]
    }

    /// The entries leaving a game state (its history is ignored).
    pub fn children_of_state(&self, state: &GameState) -> &[DoeEntry] {
        self.children(state_key(state))
    }

    /// The entry of the edge `parent` → `child`.
    pub fn get(&self, parent: u64, child: u64) -> Option<&DoeEntry> {
        self.entries.binary_search_by_key(&(parent, child), DoeEntry::sort_key).ok().map(|i| &self.entries[i])
    }

    /// The distinct parent keys, ascending.
    pub fn parents(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter(|(i, e)| *i == 0 || self.entries[i - 1].parent != e.parent)
            .map(|(_, e)| e.parent)
    }

    /// Writes the book: header, then the entries in order.
    pub fn write_to<W: Write>(&self, out: &mut W) -> Result<(), FormatError> {
        let header = self.header.encode(HeaderEncoding::Utf8)?;
        self.write_encoded(out, &header).map_err(FormatError::stream)
    }

    /// Saves the book atomically to `path`.
    pub fn save(&self, path: &Path) -> Result<(), FormatError> {
        let header = self.header.encode(HeaderEncoding::Utf8)?;
        write_atomically(path, |out| self.write_encoded(out, &header))
            .map_err(|e| FormatError::io("write", path, e))
    }

    fn write_encoded<W: Write>(&self, out: &mut W, header: &[u8]) -> std::io::Result<()> {
        write_records(out, header, self.entries.iter().map(|e| e.to_bytes()))
    }
}

/// How the engine (samurai's `UCTRoots`, 2022) picks a move from a DOE
/// book; `docs/engine-formats.md` cites the code. For each legal move with
/// an entry, `U = score + max_score / √count` (the child's value for the
/// child's mover plus a confidence term: lower is better for the player
/// choosing). The entry with the lowest `U` is the secure one; entries
/// with `U` above the secure one's plus `disturbance`, or above
/// `threshold`, are dropped; the engine picks among the rest at random,
/// weighted by count. None left: it leaves the book for the rest of the
/// game.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct EnginePick {
    /// The numerator of the confidence term (the engine's `MAX_SCORE`).
    pub max_score: f64,
    /// Entries whose `U` exceeds this are dropped (the engine's
    /// `ROOT_THRESHOLD`, negated).
    pub threshold: f64,
    /// Entries whose `U` exceeds the secure entry's by more are dropped
    /// (`ROOT_DISTURBANCE`).
    pub disturbance: f64,
}

impl Default for EnginePick {
    /// The engine's settings: 1000, 27, 13.5.
    fn default() -> EnginePick {
        EnginePick { max_score: 1000.0, threshold: 27.0, disturbance: 13.5 }
    }
}

impl DoeBook {
    /// The moves the engine would pick from in `state` under `rule`: the
    /// mover's pits (0..6) in pit order, each with its weight (its count).
    /// Empty: the engine leaves the book here.
    pub fn engine_choices(&self, state: &GameState, rule: &EnginePick) -> Vec<(usize, u64)> {
        let parent = state_key(state);
        let bounded: Vec<(usize, u64, f64)> = state
            .legal_moves()
            .filter_map(|pit| {
                let mut child = state.clone();
                child.play_unchecked(pit);
                let entry = self.get(parent, state_key(&child))?;
                (entry.relative_pit() == pit)
                    .then(|| (pit, entry.count, entry.score + rule.max_score / (entry.count as f64).sqrt()))
            })
            .collect();
        // Java's `<` on doubles: a NaN is never the secure entry, and never
        // "above" a limit either.
        let Some(secure) = bounded.iter().map(|b| b.2).filter(|u| !u.is_nan()).min_by(f64::total_cmp) else {
            return Vec::new();
        };
        bounded
            .into_iter()
            .filter(|&(_, _, u)| !(u > secure + rule.disturbance || u > rule.threshold))
            .map(|(pit, count, _)| (pit, count))
            .collect()
    }
}

/// Refuses an edge (with state keys and a pit 0..=11) that is not a legal
/// move of the parent's side to move, or does not lead to the child. The
/// layout has no checksum: a damaged key or move would otherwise give a
/// book move the parent cannot play, or the wrong child. Every edge of the
/// engine's book is consistent.
fn check_edge(edge: &DoeEntry, number: u64, offset: Option<u64>) -> Result<(), FormatError> {
    let illegal = || FormatError::IllegalMove {
        format: FORMAT,
        key: edge.parent,
        pit: edge.pit,
        entry: number,
        offset,
    };
    let mut state = state_from_key(edge.parent).ok_or_else(illegal)?;
    if state.to_move() != edge.mover() || state.play(edge.relative_pit()).is_err() {
        return Err(illegal());
    }
    let reached = state_key(&state);
    if reached != edge.child {
        return Err(FormatError::WrongChild {
            parent: edge.parent,
            child: edge.child,
            reached,
            entry: number,
            offset,
        });
    }
    Ok(())
}

impl<'a> IntoIterator for &'a DoeBook {
    type Item = &'a DoeEntry;
    type IntoIter = std::slice::Iter<'a, DoeEntry>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The edge of the mover's pit `pit` from `state`, visited `count` times.
    fn edge(state: &GameState, pit: usize, count: u64) -> DoeEntry {
        let mut child = state.clone();
        child.play(pit).unwrap();
        let north = state.to_move() == Side::North;
        DoeEntry {
            parent: state_key(state),
            child: state_key(&child),
            pit: (pit + if north { ROW } else { 0 }) as u8,
            score: count as f64 / 4.0,
            count,
        }
    }

    fn after(pit: usize) -> GameState {
        let mut state = GameState::start();
        state.play(pit).unwrap();
        state
    }

    #[test]
    fn entries_encode_big_endian() {
        let e =
            DoeEntry { parent: 0xDD0094F6488, child: 0x5D0094F6400, pit: 5, score: -0.5, count: 1_289_084 };
        let bytes = e.to_bytes();
        assert_eq!(&bytes[16..20], &[0, 0, 0, 5]);
        assert_eq!(&bytes[20..28], &[0xBF, 0xE0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&bytes[28..], &1_289_084u64.to_be_bytes());
        assert_eq!(e.letter(), 'F');
        let north = DoeEntry { pit: 6, ..e };
        assert_eq!((north.mover(), north.relative_pit(), north.letter()), (Side::North, 0, 'a'));
    }

    #[test]
    fn writer_sorts_and_keeps_the_larger_count() {
        let start = GameState::start();
        // North moves from `after(5)`: its key (no South bit) sorts first.
        let (b, e, c) = (edge(&start, 1, 0), edge(&start, 4, 0), edge(&after(5), 2, 0));
        let counted = |edge: DoeEntry, count| DoeEntry { count, ..edge };
        let entries = vec![counted(b, 10), counted(c, 3), counted(b, 30), counted(e, 5), counted(b, 20)];
        let book = DoeBook::from_entries(entries, &[("Date", "today")]).unwrap();
        assert_eq!(book.header().lines(), ["Entries: 3", "Date: today"]);
        let keys: Vec<_> = book.iter().map(|e| (e.parent, e.child, e.count)).collect();
        let mut expected = vec![(c.parent, c.child, 3), (b.parent, b.child, 30), (e.parent, e.child, 5)];
        expected.sort();
        assert_eq!(keys, expected);
        assert_eq!(book.children(b.parent).len(), 2);
        assert_eq!(book.children(b.parent - 1).len(), 0);
        assert_eq!(book.children(b.parent + 1).len(), 0);
        assert_eq!(book.get(b.parent, b.child).unwrap().count, 30);
        assert_eq!(book.parents().collect::<Vec<_>>(), [c.parent, b.parent]);
        let mut bytes = Vec::new();
        book.write_to(&mut bytes).unwrap();
        assert_eq!(DoeBook::from_bytes(&bytes).unwrap(), book);

        let tie = DoeBook::from_entries(vec![counted(b, 7), DoeEntry { score: 9.0, ..counted(b, 7) }], &[])
            .unwrap();
        assert_eq!(tie.entries()[0].score, b.score);
        assert!(matches!(
            DoeBook::from_entries(vec![DoeEntry { pit: 12, ..b }], &[]),
            Err(FormatError::BadMove { value: 12, entry: 0, offset: None })
        ));
        assert!(matches!(
            DoeBook::from_entries(vec![DoeEntry { child: 1 << 50, ..b }], &[]),
            Err(FormatError::BadKey { entry: 0, .. })
        ));
    }

    #[test]
    fn edges_must_be_legal_moves_to_their_child() {
        let start = GameState::start();
        let (b, e) = (edge(&start, 1, 1), edge(&start, 4, 1));
        // North's b from the start, where South moves.
        assert!(matches!(
            DoeBook::from_entries(vec![e, DoeEntry { pit: 7, ..b }], &[]),
            Err(FormatError::IllegalMove { pit: 7, entry: 1, offset: None, .. })
        ));
        assert!(matches!(
            DoeBook::from_entries(vec![DoeEntry { child: e.child, ..b }], &[]),
            Err(FormatError::WrongChild { entry: 0, .. })
        ));
        // South's C, emptied by C a.
        let mut emptied = after(2);
        emptied.play(0).unwrap();
        assert!(matches!(
            DoeBook::from_entries(vec![DoeEntry { pit: 2, ..edge(&emptied, 0, 1) }], &[]),
            Err(FormatError::IllegalMove { pit: 2, .. })
        ));
        // The reader: North's a after C read as South's C.
        let mut bytes = Vec::new();
        DoeBook::from_entries(vec![edge(&after(2), 0, 1)], &[]).unwrap().write_to(&mut bytes).unwrap();
        let at = bytes.len() - ENTRY_LEN;
        assert_eq!(bytes[at + 19], ROW as u8);
        bytes[at + 19] = 2;
        assert!(matches!(
            DoeBook::from_bytes(&bytes),
            Err(FormatError::IllegalMove { pit: 2, entry: 0, offset: Some(o), .. }) if o == at as u64
        ));
    }

    #[test]
    fn reader_checks_moves_order_and_duplicates() {
        let start = GameState::start();
        let mut edges: Vec<DoeEntry> = (0..ROW).map(|pit| edge(&start, pit, 1)).collect();
        edges.sort_by_key(DoeEntry::sort_key);
        let header = Header::new(FORMAT, VERSION).unwrap();
        let encoded = header.encode(HeaderEncoding::Utf8).unwrap();
        let book = |entries: &[DoeEntry]| {
            let mut bytes = encoded.clone();
            entries.iter().for_each(|e| bytes.extend_from_slice(&e.to_bytes()));
            bytes
        };
        let start = encoded.len();
        let twice = book(&[edges[0], edges[1], DoeEntry { count: 2, ..edges[1] }]);
        assert!(matches!(DoeBook::from_bytes(&twice), Err(FormatError::DuplicateEdge { entry: 2, .. })));
        assert!(matches!(
            DoeBook::from_bytes(&book(&[edges[1], edges[0]])),
            Err(FormatError::Unsorted { entry: 1, .. })
        ));
        let mut bytes = book(&edges[..2]);
        bytes[start + 36 + 16..start + 36 + 20].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(matches!(
            DoeBook::from_bytes(&bytes),
            Err(FormatError::BadMove { value: -1, entry: 1, offset: Some(o) }) if o == (start + 36) as u64
        ));
        bytes.truncate(start + 40);
        assert!(matches!(
            DoeBook::from_bytes(&bytes),
            Err(FormatError::TruncatedEntry { entry: 1, missing: 32, .. })
        ));
    }

    #[test]
    fn nan_scores_keep_their_bits() {
        let weird = f64::from_bits(0x7FF0_0000_0000_0001);
        let e = DoeEntry { score: weird, ..edge(&GameState::start(), 0, 1) };
        let book = DoeBook::from_entries(vec![e], &[]).unwrap();
        let mut bytes = Vec::new();
        book.write_to(&mut bytes).unwrap();
        let again = DoeBook::from_bytes(&bytes).unwrap();
        assert_eq!(again.entries()[0].score.to_bits(), 0x7FF0_0000_0000_0001);
    }
}
