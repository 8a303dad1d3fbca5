//! The transposition table: two slots per bucket, one keeping the deeper
//! result (depth-preferred, with aging), one the newest (always replaced).
//!
//! Entries are keyed by the full state: the twelve pits from the side to
//! move and the mover's store (the other store is 48 minus the rest), packed
//! six bits a count into 78 bits and stored whole, so two states never share
//! an entry. The side to move does not enter the key: a state and its mirror
//! image with the other side to move have the same value for the mover.
//!
//! Besides depth, bound, score and best move, an entry records the trace the
//! search needs for the graph-history interaction (see `engine.rs`): whether
//! a heuristic leaf influenced the score, and which pits the non-capture
//! lines explored below it sow (`mask`) and how long they get (`horizon`).

use crate::rules::{Pit, Position};

use super::error::SearchError;

/// How a stored score relates to the value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    /// Only the best move is stored: the score depended on the history.
    MoveOnly = 0,
    /// The value is at most the score (the search failed low).
    Upper = 1,
    /// The value is at least the score (the search failed high).
    Lower = 2,
    /// The score is the value.
    Exact = 3,
}

/// What the search stores and reads back.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Entry {
    /// Score relative to the node (proven results count plies from it).
    pub score: i32,
    pub depth: u8,
    pub bound: Bound,
    /// A heuristic leaf influenced the score (otherwise it is proven).
    pub heuristic: bool,
    pub best: Option<Pit>,
    /// Pits (node's view: own 0..6, opponent 6..12) sown on the explored
    /// non-capture lines below the node.
    pub mask: u16,
    /// Longest explored non-capture line below the node, saturated at 15.
    pub horizon: u8,
}

/// The packed full state: 72 bits of pits and 6 of the mover's store.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Key {
    low: u64,
    high: u16,
}

impl Key {
    #[inline]
    pub fn new(position: &Position, mover_store: u8) -> Key {
        // Squeeze each byte (≤ 48 < 64) to six bits, pairs then quads then
        // octets, and add the store above the 72 bits of pits.
        let mut x = u128::from_le_bytes(pad(position.pits()));
        x = (x & 0x00FF_00FF_00FF_00FF_00FF_00FF_00FF_00FF)
            | ((x & 0xFF00_FF00_FF00_FF00_FF00_FF00_FF00_FF00) >> 2);
        x = (x & 0x0000_FFFF_0000_FFFF_0000_FFFF_0000_FFFF)
            | ((x & 0xFFFF_0000_FFFF_0000_FFFF_0000_FFFF_0000) >> 4);
        x = (x & 0x0000_0000_FFFF_FFFF_0000_0000_FFFF_FFFF)
            | ((x & 0xFFFF_FFFF_0000_0000_FFFF_FFFF_0000_0000) >> 8);
        x = (x & 0xFFFF_FFFF_FFFF_FFFF) | ((x >> 64) << 48);
        x |= ((mover_store & 63) as u128) << 72;
        Key { low: x as u64, high: (x >> 64) as u16 }
    }

    #[inline]
    fn hash(&self) -> u64 {
        let h = (self.low ^ (self.high as u64).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 31)
    }
}

#[inline]
fn pad(pits: [u8; 12]) -> [u8; 16] {
    let mut bytes = [0u8; 16];
    bytes[..12].copy_from_slice(&pits);
    bytes
}

/// One slot: the low key word, then the high key bits and the data:
/// bits 0..14 key, 14..30 score, 30..38 depth, 38..40 bound, 40 heuristic,
/// 41..44 move (7 = none), 44..56 mask, 56..60 horizon, 60..64 age.
#[derive(Clone, Copy, Default)]
struct Slot {
    low: u64,
    data: u64,
}

const KEY_BITS: u64 = (1 << 14) - 1;
const NO_MOVE: u64 = 7;

impl Slot {
    #[inline]
    fn holds(&self, key: &Key) -> bool {
        self.low == key.low && self.data & KEY_BITS == key.high as u64 && self.data != 0
    }
    #[inline]
    fn depth(&self) -> u8 {
        (self.data >> 30) as u8
    }
    #[inline]
    fn bound(&self) -> Bound {
        match (self.data >> 38) & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            3 => Bound::Exact,
            _ => Bound::MoveOnly,
        }
    }
    #[inline]
    fn age(&self) -> u8 {
        (self.data >> 60) as u8
    }
    #[inline]
    fn is_empty(&self) -> bool {
        self.low == 0 && self.data == 0
    }
    /// Replacement priority: proven results count as the deepest.
    #[inline]
    fn worth(&self) -> u8 {
        if self.bound() != Bound::MoveOnly && (self.data >> 40) & 1 == 0 {
            u8::MAX
        } else {
            self.depth()
        }
    }

    fn pack(key: &Key, entry: &Entry, age: u8) -> Slot {
        let best = entry.best.map_or(NO_MOVE, |pit| pit as u64 & 7);
        let data = key.high as u64 & KEY_BITS
            | (entry.score as i16 as u16 as u64) << 14
            | (entry.depth as u64) << 30
            | (entry.bound as u64) << 38
            | (entry.heuristic as u64) << 40
            | best << 41
            | (entry.mask as u64 & 0xFFF) << 44
            | (entry.horizon.min(15) as u64) << 56
            | (age as u64 & 15) << 60;
        Slot { low: key.low, data }
    }

    fn unpack(&self) -> Entry {
        let best = (self.data >> 41) & 7;
        Entry {
            score: (self.data >> 14) as u16 as i16 as i32,
            depth: self.depth(),
            bound: self.bound(),
            heuristic: (self.data >> 40) & 1 != 0,
            best: (best != NO_MOVE).then_some(best as Pit),
            mask: ((self.data >> 44) & 0xFFF) as u16,
            horizon: ((self.data >> 56) & 15) as u8,
        }
    }
}

#[derive(Clone, Copy, Default)]
#[repr(align(32))]
struct Bucket {
    deep: Slot,
    newest: Slot,
}

/// The table: a power of two of 32-byte buckets.
pub struct Table {
    buckets: Vec<Bucket>,
    shift: u32,
    age: u8,
}

/// Bytes per bucket (two slots).
pub const BUCKET_BYTES: usize = std::mem::size_of::<Bucket>();

impl Table {
    /// A table of at most `megabytes` MiB (at least one bucket).
    pub fn new(megabytes: usize) -> Result<Table, SearchError> {
        let bytes = megabytes.saturating_mul(1 << 20);
        let wanted = (bytes / BUCKET_BYTES).max(1);
        let count = if wanted.is_power_of_two() { wanted } else { wanted.next_power_of_two() / 2 };
        let mut buckets = Vec::new();
        buckets.try_reserve_exact(count).map_err(|_| SearchError::TableAllocation { megabytes })?;
        // Probes land anywhere in the table: measured in docs/search.md.
        crate::memory::advise_huge_pages(&mut buckets);
        buckets.resize(count, Bucket::default());
        Ok(Table { buckets, shift: 64 - count.trailing_zeros(), age: 0 })
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.buckets.fill(Bucket::default());
        self.age = 0;
    }

    /// A new search begins: older entries become replaceable first.
    pub fn next_age(&mut self) {
        self.age = (self.age + 1) & 15;
    }

    pub fn megabytes(&self) -> f64 {
        (self.buckets.len() * BUCKET_BYTES) as f64 / (1 << 20) as f64
    }

    #[inline]
    fn bucket(&self, key: &Key) -> usize {
        if self.shift >= 64 {
            0
        } else {
            (key.hash() >> self.shift) as usize
        }
    }

    /// Starts loading `key`'s bucket into the cache, for a probe soon
    /// after: the probe then waits less for memory. Changes nothing else.
    #[inline]
    pub fn prefetch(&self, key: &Key) {
        crate::memory::prefetch(&self.buckets[self.bucket(key)]);
    }

    #[inline]
    pub fn probe(&self, key: &Key) -> Option<Entry> {
        let bucket = &self.buckets[self.bucket(key)];
        if bucket.deep.holds(key) {
            Some(bucket.deep.unpack())
        } else if bucket.newest.holds(key) {
            Some(bucket.newest.unpack())
        } else {
            None
        }
    }

    #[inline]
    pub fn store(&mut self, key: &Key, entry: &Entry) {
        let age = self.age;
        let index = self.bucket(key);
        let bucket = &mut self.buckets[index];
        let slot = Slot::pack(key, entry, age);
        for old in [&mut bucket.deep, &mut bucket.newest] {
            if old.holds(key) {
                // A history-dependent result never overwrites a value.
                if entry.bound != Bound::MoveOnly || old.bound() == Bound::MoveOnly {
                    *old = slot;
                }
                return;
            }
        }
        let deep = bucket.deep;
        if deep.is_empty() || deep.age() != age || slot.worth() >= deep.worth() {
            bucket.newest = deep;
            bucket.deep = slot;
        } else {
            bucket.newest = slot;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(score: i32, depth: u8) -> Entry {
        Entry { score, depth, bound: Bound::Exact, heuristic: true, best: Some(3), mask: 0xA5A, horizon: 9 }
    }

    #[test]
    fn keys_are_the_full_state() {
        let a = Position::new([48, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let b = Position::new([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 48]);
        assert_ne!(Key::new(&a, 0), Key::new(&b, 0));
        assert_ne!(Key::new(&a, 0), Key::new(&a, 1));
        let mut seen = std::collections::HashSet::new();
        for p in crate::rank::layer_positions(4) {
            for store in [0, 20, 44] {
                let k = Key::new(&p, store);
                assert!(seen.insert((k.low, k.high)));
            }
        }
    }

    #[test]
    fn entries_round_trip() {
        let mut table = Table::new(1).unwrap();
        let p = Position::new([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        let key = Key::new(&p, 7);
        for e in [
            entry(-9_873, 17),
            entry(1234, 0),
            Entry { best: None, heuristic: false, bound: Bound::Lower, horizon: 15, ..entry(0, 255) },
        ] {
            table.store(&key, &e);
            assert_eq!(table.probe(&key), Some(e));
        }
        assert_eq!(table.probe(&Key::new(&p, 8)), None);
    }

    #[test]
    fn the_deeper_result_survives_newer_shallow_ones() {
        let mut table = Table::new(0).unwrap(); // one bucket: every key collides
        let keys: Vec<Key> =
            (0..4u8).map(|i| Key::new(&Position::new([i, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), 20)).collect();
        table.store(&keys[0], &entry(1, 12));
        table.store(&keys[1], &entry(2, 3));
        table.store(&keys[2], &entry(3, 4));
        assert_eq!(table.probe(&keys[0]).map(|e| e.score), Some(1));
        assert_eq!(table.probe(&keys[1]), None);
        assert_eq!(table.probe(&keys[2]).map(|e| e.score), Some(3));
        // After aging, the old deep entry gives way.
        table.next_age();
        table.store(&keys[3], &entry(4, 2));
        assert_eq!(table.probe(&keys[3]).map(|e| e.score), Some(4));
        assert_eq!(table.probe(&keys[0]).map(|e| e.score), Some(1));
        assert_eq!(table.probe(&keys[2]), None);
    }
}
