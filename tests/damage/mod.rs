//! The damage the `damaged_*` property tests do to a good file: one
//! flipped byte, an overwritten or zeroed range, or a cut, anywhere or
//! aimed at the header (a few bytes there decide how the rest is read).

use proptest::prelude::*;
use proptest::sample::Index;

/// What a damage needs to know of a file.
pub struct Layout {
    /// Bytes before the body; header damage lands there.
    pub header_len: usize,
    /// Lengths at which the body ends on a record boundary, shorter than
    /// the whole file: the cuts a length check alone cannot see.
    pub boundaries: Vec<usize>,
}

impl Layout {
    /// A header followed by `records` records of `record_len` bytes.
    pub fn records(header_len: usize, record_len: usize, records: usize) -> Layout {
        Layout { header_len, boundaries: (0..records).map(|k| header_len + k * record_len).collect() }
    }

    /// A file with no known structure beyond its first `header_len` bytes.
    pub fn opaque(header_len: usize) -> Layout {
        Layout { header_len, boundaries: Vec::new() }
    }
}

/// Where a damage lands.
#[derive(Clone, Debug)]
pub enum Spot {
    Anywhere(Index),
    InHeader(Index),
}

#[derive(Clone, Debug)]
pub enum Damage {
    Flip {
        at: Spot,
        mask: u8,
    },
    Overwrite {
        at: Spot,
        bytes: Vec<u8>,
    },
    Zero {
        at: Spot,
        len: usize,
    },
    /// Keeps the bytes before a cut anywhere.
    Cut {
        keep: Index,
    },
    /// Keeps the bytes before one of [`Layout::boundaries`] (anywhere if
    /// the layout names none).
    CutAtBoundary {
        boundary: Index,
    },
}

impl Damage {
    pub fn is_cut(&self) -> bool {
        matches!(self, Damage::Cut { .. } | Damage::CutAtBoundary { .. })
    }

    /// The damaged copy of `good`, and the offset of the first byte
    /// changed (for a cut: the length kept).
    pub fn apply(&self, good: &[u8], layout: &Layout) -> (Vec<u8>, usize) {
        let mut bytes = good.to_vec();
        let spot = |spot: &Spot| match spot {
            Spot::Anywhere(i) => i.index(good.len()),
            Spot::InHeader(i) => i.index(layout.header_len.clamp(1, good.len())),
        };
        match self {
            Damage::Flip { at, mask } => {
                let at = spot(at);
                bytes[at] ^= mask;
                (bytes, at)
            }
            Damage::Overwrite { at, bytes: new } => {
                let at = spot(at);
                let end = (at + new.len()).min(bytes.len());
                bytes[at..end].copy_from_slice(&new[..end - at]);
                (bytes, at)
            }
            Damage::Zero { at, len } => {
                let at = spot(at);
                let end = (at + len).min(bytes.len());
                bytes[at..end].fill(0);
                (bytes, at)
            }
            Damage::Cut { keep } => {
                let keep = keep.index(good.len());
                bytes.truncate(keep);
                (bytes, keep)
            }
            Damage::CutAtBoundary { boundary } => {
                let keep = match layout.boundaries.len() {
                    0 => boundary.index(good.len()),
                    n => layout.boundaries[boundary.index(n)],
                };
                bytes.truncate(keep);
                (bytes, keep)
            }
        }
    }
}

fn spot() -> impl Strategy<Value = Spot> {
    prop_oneof![any::<Index>().prop_map(Spot::Anywhere), any::<Index>().prop_map(Spot::InHeader)]
}

/// Any one damage; flips are the most common.
pub fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        3 => (spot(), 1u8..=255).prop_map(|(at, mask)| Damage::Flip { at, mask }),
        2 => (spot(), proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Damage::Overwrite { at, bytes }),
        1 => (spot(), 1usize..64).prop_map(|(at, len)| Damage::Zero { at, len }),
        1 => any::<Index>().prop_map(|keep| Damage::Cut { keep }),
        1 => any::<Index>().prop_map(|boundary| Damage::CutAtBoundary { boundary }),
    ]
}

/// The bytes of a file of `tests/reference/`, as stored.
pub fn reference(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The content of a zstd file.
pub fn decompress(bytes: &[u8]) -> Vec<u8> {
    zstd::decode_all(bytes).expect("a good zstd file")
}
