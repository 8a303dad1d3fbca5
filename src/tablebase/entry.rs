//! One tablebase entry: the value, its proven bounds and how it was proven,
//! packed into three bytes (the record of our own file format,
//! `docs/tablebase-format.md`).
//!
//! ```text
//! byte 0: value (bits 0-5) | proof (bits 6-7)
//! byte 1: lower (bits 0-5) | on_cycle (bit 6) | 0 (bit 7)
//! byte 2: upper (bits 0-5) | 0 (bits 6-7)
//! ```

use crate::tablebase::table::Probe;

/// Size of a packed entry in bytes.
pub const ENTRY_BYTES: usize = 3;

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
}
