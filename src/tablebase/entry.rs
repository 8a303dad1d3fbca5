//! One tablebase entry: the value, its proven bounds and how it was proven,
//! packed into three bytes, or into one when it is exact (the records of
//! our own file format, `docs/tablebase-format.md`).
//!
//! ```text
//! full record (3 bytes), any entry:
//! byte 0: value (bits 0-5) | proof (bits 6-7)
//! byte 1: lower (bits 0-5) | on_cycle (bit 6) | 0 (bit 7)
//! byte 2: upper (bits 0-5) | 0 (bits 6-7)
//!
//! value record (1 byte), an exact entry whose cycle flag its proof implies:
//! byte 0: value (bits 0-5) | proof (bits 6-7: 0, 1 or 2)
//! ```
//!
//! The value record drops the bounds (both equal the value) and the cycle
//! flag: an entry has one only when `on_cycle` is false for a retrograde
//! proof and true for a bounds or search proof. That is how a build proves
//! them (retrograde analysis settles positions off the cycle components,
//! the bounds and the searches settle positions on them), but a proof
//! taken over from a seed table may break it: such an entry has no value
//! record and its layer keeps full records, so the short form never loses
//! a field.

use crate::tablebase::table::Probe;

/// Size of a full record (any entry) in bytes.
pub const ENTRY_BYTES: usize = 3;

/// How many bytes each entry of a layer takes: every layer of a file has
/// one width for all its entries.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EntryWidth {
    /// Full records: value, bounds, cycle flag, proof.
    Full,
    /// Value records: every entry of the layer is exact.
    Value,
}

impl EntryWidth {
    /// Bytes per entry.
    #[inline]
    pub fn bytes(self) -> usize {
        match self {
            EntryWidth::Full => ENTRY_BYTES,
            EntryWidth::Value => 1,
        }
    }

    /// The width of a layer of `positions` entries held in `len` bytes, if
    /// one fits (a layer has at least one position, so the two never
    /// coincide).
    pub fn of_length(len: u64, positions: u64) -> Option<EntryWidth> {
        if len == positions * ENTRY_BYTES as u64 {
            Some(EntryWidth::Full)
        } else if len == positions {
            Some(EntryWidth::Value)
        } else {
            None
        }
    }

    /// The width as the files record it (bytes per entry), if known.
    pub fn from_code(code: u64) -> Option<EntryWidth> {
        match code {
            3 => Some(EntryWidth::Full),
            1 => Some(EntryWidth::Value),
            _ => None,
        }
    }
}

/// How an entry's value was established.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Proof {
    /// Exact by retrograde analysis: no cycle is involved.
    Retrograde = 0,
    /// Exact because the history-free cycle bounds meet.
    Bounds = 1,
    /// Exact by alpha-beta search over simple paths.
    Search = 2,
    /// Not exact: only `lower ≤ value ≤ upper` is proven; `value` is an
    /// estimate inside the bounds.
    Open = 3,
}

impl Proof {
    /// The proof stored in the two low bits of `bits` (higher bits are
    /// ignored).
    pub fn from_bits(bits: u8) -> Proof {
        match bits & 3 {
            0 => Proof::Retrograde,
            1 => Proof::Bounds,
            2 => Proof::Search,
            _ => Proof::Open,
        }
    }
}

/// A decoded entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Entry {
    /// The as-root value (seeds of the board the mover captures), or an
    /// estimate inside the bounds when not exact.
    pub value: u8,
    /// Proven lower bound on the as-root value.
    pub lower: u8,
    /// Proven upper bound on the as-root value.
    pub upper: u8,
    /// The position lies on a cycle of game states, so the value holds only
    /// where it was reached by a capture (or starts play).
    pub on_cycle: bool,
    /// How the value was established.
    pub proof: Proof,
}

impl Entry {
    /// An exact entry.
    pub fn exact(value: u8, proof: Proof, on_cycle: bool) -> Entry {
        Entry { value, lower: value, upper: value, on_cycle, proof }
    }

    /// Lower and upper bound meet: the value is proven.
    #[inline]
    pub fn is_exact(&self) -> bool {
        self.lower == self.upper
    }

    /// The three bytes of the file record. The values must fit in six
    /// bits (any entry of a position, at most 48, does).
    #[inline]
    pub fn pack(&self) -> [u8; ENTRY_BYTES] {
        [self.value | (self.proof as u8) << 6, self.lower | (self.on_cycle as u8) << 6, self.upper]
    }

    /// Decodes a file record without checking it (reserved bits are
    /// ignored): see [`Entry::is_well_formed`] for the check.
    #[inline]
    pub fn unpack(bytes: [u8; ENTRY_BYTES]) -> Entry {
        Entry {
            value: bytes[0] & 63,
            proof: Proof::from_bits(bytes[0] >> 6),
            lower: bytes[1] & 63,
            on_cycle: bytes[1] & 64 != 0,
            upper: bytes[2] & 63,
        }
    }

    /// Checks the invariants a well-formed entry of an `n`-seed position
    /// obeys: `lower ≤ value ≤ upper ≤ n`, reserved bits clear, exact
    /// exactly when not `Open`.
    pub fn is_well_formed(bytes: [u8; ENTRY_BYTES], n: u32) -> bool {
        let e = Entry::unpack(bytes);
        bytes[1] & 0x80 == 0
            && bytes[2] & 0xC0 == 0
            && e.lower <= e.value
            && e.value <= e.upper
            && e.upper as u32 <= n
            && (e.proof == Proof::Open) != e.is_exact()
    }

    /// The one-byte value record of this entry, if it has one: exact, and
    /// off the cycles exactly when proven by retrograde analysis.
    #[inline]
    pub fn value_record(&self) -> Option<u8> {
        let implied = self.proof != Proof::Retrograde;
        (self.is_exact() && self.proof != Proof::Open && self.on_cycle == implied && self.value < 64)
            .then_some(self.value | (self.proof as u8) << 6)
    }

    /// Decodes a value record without checking it: see
    /// [`Entry::is_well_formed_value`].
    #[inline]
    pub fn from_value_record(byte: u8) -> Entry {
        let proof = Proof::from_bits(byte >> 6);
        Entry::exact(byte & 63, proof, proof != Proof::Retrograde)
    }

    /// Checks a value record of an `n`-seed position: a value of at most
    /// `n`, a proof other than `Open`.
    pub fn is_well_formed_value(byte: u8, n: u32) -> bool {
        (byte & 63) as u32 <= n && byte >> 6 != Proof::Open as u8
    }

    /// Decodes one record of a layer of the given width (`record` holds
    /// exactly `width.bytes()` bytes).
    #[inline]
    pub fn from_record(record: &[u8], width: EntryWidth) -> Entry {
        match width {
            EntryWidth::Full => Entry::unpack([record[0], record[1], record[2]]),
            EntryWidth::Value => Entry::from_value_record(record[0]),
        }
    }

    /// Checks one record of an `n`-seed position, of the given width.
    pub fn is_well_formed_record(record: &[u8], width: EntryWidth, n: u32) -> bool {
        match width {
            EntryWidth::Full => Entry::is_well_formed([record[0], record[1], record[2]], n),
            EntryWidth::Value => Entry::is_well_formed_value(record[0], n),
        }
    }

    /// The entry as a search sees it: bounds, the value as the estimate,
    /// and the cycle flag.
    pub fn probe(&self) -> Probe {
        Probe { lower: self.lower, upper: self.upper, estimate: self.value, on_cycle: self.on_cycle }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_unpacks() {
        for proof in [Proof::Retrograde, Proof::Bounds, Proof::Search, Proof::Open] {
            for on_cycle in [false, true] {
                let e = Entry { value: 17, lower: 15, upper: 48, on_cycle, proof };
                assert_eq!(Entry::unpack(e.pack()), e);
            }
        }
        assert!(Entry::is_well_formed(Entry::exact(3, Proof::Bounds, true).pack(), 3));
        assert!(!Entry::is_well_formed(Entry::exact(3, Proof::Open, true).pack(), 3));
        assert!(!Entry::is_well_formed(Entry::exact(4, Proof::Search, false).pack(), 3));
    }

    #[test]
    fn value_records_keep_every_field_of_the_entries_that_have_one() {
        let mut with_record = 0;
        for value in 0..=48u8 {
            for proof in [Proof::Retrograde, Proof::Bounds, Proof::Search, Proof::Open] {
                for on_cycle in [false, true] {
                    for upper in [value, value + 1] {
                        let e = Entry { value, lower: value, upper, on_cycle, proof };
                        match e.value_record() {
                            Some(byte) => {
                                with_record += 1;
                                assert_eq!(Entry::from_value_record(byte), e);
                                assert!(Entry::is_well_formed_value(byte, value as u32));
                                assert!(value == 0 || !Entry::is_well_formed_value(byte, value as u32 - 1));
                                assert_eq!(Entry::from_record(&[byte], EntryWidth::Value), e);
                            }
                            // Only an open entry, or a cycle flag the proof
                            // does not imply, has none.
                            None => assert!(
                                upper != value
                                    || proof == Proof::Open
                                    || on_cycle != (proof != Proof::Retrograde)
                            ),
                        }
                    }
                }
            }
        }
        assert_eq!(with_record, 49 * 3);
        // The proof bits 3 (`Open`) make no value record.
        assert!(!Entry::is_well_formed_value(0xC5, 48));
        assert_eq!(EntryWidth::of_length(30, 10), Some(EntryWidth::Full));
        assert_eq!(EntryWidth::of_length(10, 10), Some(EntryWidth::Value));
        assert_eq!(EntryWidth::of_length(20, 10), None);
    }
}
