//! A fast 64-bit checksum for files and checkpoints (not cryptographic):
//! four independent multiply-rotate lanes over 8-byte words, folded at the
//! end. It detects truncation, torn writes and bit rot; it is not meant to
//! resist tampering.

const PRIME_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME_3: u64 = 0x1656_67B1_9E37_79F9;

/// Streaming checksum: feed bytes with [`Checksum::update`] in any split.
#[derive(Clone, Debug)]
pub struct Checksum {
    lanes: [u64; 4],
    pending: [u8; 32],
    pending_len: usize,
    total: u64,
}

impl Default for Checksum {
    fn default() -> Checksum {
        Checksum::new()
    }
}

#[inline]
fn round(lane: u64, word: u64) -> u64 {
    lane.wrapping_add(word.wrapping_mul(PRIME_2)).rotate_left(31).wrapping_mul(PRIME_1)
}

impl Checksum {
    /// An empty checksum, before any bytes.
    pub fn new() -> Checksum {
        Checksum {
            lanes: [PRIME_1.wrapping_add(PRIME_2), PRIME_2, 0, PRIME_1.wrapping_neg()],
            pending: [0; 32],
            pending_len: 0,
            total: 0,
        }
    }

    fn block(&mut self, block: &[u8]) {
        for (lane, word) in self.lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane = round(*lane, u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
    }

    /// Feeds the next bytes; the result does not depend on how the input is
    /// split between calls.
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.pending_len > 0 {
            let take = (32 - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&bytes[..take]);
            self.pending_len += take;
            bytes = &bytes[take..];
            if self.pending_len < 32 {
                return;
            }
            let block = self.pending;
            self.block(&block);
            self.pending_len = 0;
        }
        let mut blocks = bytes.chunks_exact(32);
        for block in &mut blocks {
            self.block(block);
        }
        let rest = blocks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    /// The checksum of every byte fed so far. It does not reset the state,
    /// so more bytes may follow.
    pub fn finish(&self) -> u64 {
        let mut hash = self.total.wrapping_mul(PRIME_3);
        for &lane in &self.lanes {
            hash = (hash ^ round(0, lane)).wrapping_mul(PRIME_1).wrapping_add(PRIME_3);
        }
        for &byte in &self.pending[..self.pending_len] {
            hash = (hash ^ (byte as u64).wrapping_mul(PRIME_3)).rotate_left(11).wrapping_mul(PRIME_1);
        }
        hash ^= hash >> 33;
        hash = hash.wrapping_mul(PRIME_2);
        hash ^ (hash >> 29)
    }
}

/// The checksum of a byte slice.
pub fn checksum(bytes: &[u8]) -> u64 {
    let mut c = Checksum::new();
    c.update(bytes);
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_points_do_not_matter_and_changes_show() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        let whole = checksum(&data);
        for split in [0, 1, 31, 32, 33, 500, 999, 1000] {
            let mut c = Checksum::new();
            c.update(&data[..split]);
            c.update(&data[split..]);
            assert_eq!(c.finish(), whole);
        }
        let mut flipped = data.clone();
        flipped[517] ^= 4;
        assert_ne!(checksum(&flipped), whole);
        assert_ne!(checksum(&data[..999]), whole);
        assert_ne!(checksum(&[]), checksum(&[0]));
    }
}
