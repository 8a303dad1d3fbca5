//! A message of 32-bit words whose order does not matter (the offsets a
//! step sends to one rank), written small: sorted, then each word as the
//! LEB128 varint of its gap from the word before. A step's offsets for one
//! rank are dense in that rank's range, so most gaps take one byte instead
//! of four.
//!
//! Layout: blocks, each `count: u32 LE`, `length: u32 LE` (bytes of gaps
//! that follow), then `count` varints: the block's first word (its gap from
//! 0), then the gap from each word to the next. Blocks of at most
//! [`BLOCK`] words let both ends work on several threads. An empty message
//! has no block.

use rayon::slice::ParallelSliceMut;

use crate::parallel;

/// Words per block.
pub const BLOCK: usize = 1 << 14;

/// A message that is not made of whole, consistent blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedGaps(pub String);

impl std::fmt::Display for MalformedGaps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a malformed message of gaps: {}", self.0)
    }
}

impl std::error::Error for MalformedGaps {}

/// Sorts `words` and writes them as gaps.
pub fn encode(words: &mut [u32]) -> Vec<u8> {
    if words.len() > BLOCK {
        words.par_sort_unstable();
    } else {
        words.sort_unstable();
    }
    let blocks: Vec<Vec<u8>> = parallel::map_slices(words, BLOCK, &encode_block);
    blocks.concat()
}

fn encode_block(words: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + words.len() + words.len() / 4);
    out.extend_from_slice(&(words.len() as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    let mut previous = 0;
    for &word in words {
        let mut gap = word - previous;
        previous = word;
        while gap >= 0x80 {
            out.push(gap as u8 | 0x80);
            gap >>= 7;
        }
        out.push(gap as u8);
    }
    let length = (out.len() - 8) as u32;
    out[4..8].copy_from_slice(&length.to_le_bytes());
    out
}

/// The words of a message, sorted, block by block (decoded on every
/// thread).
pub fn decode(message: &[u8]) -> Result<Vec<Vec<u32>>, MalformedGaps> {
    let mut blocks = Vec::new();
    let mut at = 0;
    while at < message.len() {
        let header = message.get(at..at + 8).ok_or_else(|| MalformedGaps("a cut block header".into()))?;
        let count = u32::from_le_bytes(header[..4].try_into().expect("four bytes")) as usize;
        let length = u32::from_le_bytes(header[4..].try_into().expect("four bytes")) as usize;
        let body = (at + 8)
            .checked_add(length)
            .and_then(|end| message.get(at + 8..end))
            .ok_or_else(|| MalformedGaps(format!("a block of {length} bytes past the end")))?;
        blocks.push((count, body));
        at += 8 + length;
    }
    parallel::map_indexes(blocks.len(), &|b| decode_block(blocks[b].0, blocks[b].1)).into_iter().collect()
}

fn decode_block(count: usize, body: &[u8]) -> Result<Vec<u32>, MalformedGaps> {
    if count > body.len() {
        return Err(MalformedGaps(format!("{count} words in {} bytes", body.len())));
    }
    let mut words = Vec::with_capacity(count);
    let (mut previous, mut gap, mut shift) = (0u32, 0u32, 0u32);
    for &byte in body {
        if shift > 28 || (shift == 28 && byte & 0x70 != 0) {
            return Err(MalformedGaps("a gap beyond 32 bits".into()));
        }
        gap |= ((byte & 0x7F) as u32) << shift;
        if byte & 0x80 != 0 {
            shift += 7;
            continue;
        }
        previous = previous.checked_add(gap).ok_or_else(|| MalformedGaps("a word beyond 32 bits".into()))?;
        words.push(previous);
        (gap, shift) = (0, 0);
    }
    if shift != 0 {
        return Err(MalformedGaps("a block that ends inside a gap".into()));
    }
    if words.len() != count {
        return Err(MalformedGaps(format!("{} words where the header says {count}", words.len())));
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random words (xorshift).
    fn words(len: usize, spread: u32, seed: u64) -> Vec<u32> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x as u32) % spread
            })
            .collect()
    }

    #[test]
    fn words_come_back_sorted_with_their_repeats() {
        let cases = [
            Vec::new(),
            vec![0],
            vec![u32::MAX, 0, u32::MAX, 7],
            words(1000, 50, 1),
            words(3 * BLOCK + 17, 1 << 20, 2),
            words(BLOCK, u32::MAX, 3),
        ];
        for case in cases {
            let mut sent = case.clone();
            let message = encode(&mut sent);
            let mut expected = case.clone();
            expected.sort_unstable();
            assert_eq!(decode(&message).unwrap().concat(), expected, "{} words", case.len());
        }
    }

    #[test]
    fn dense_words_take_about_a_byte_each() {
        let mut dense = words(1 << 20, 1 << 21, 4);
        let message = encode(&mut dense);
        assert!(message.len() < (1 << 20) * 5 / 4, "{} bytes", message.len());
    }

    #[test]
    fn a_malformed_message_is_an_error_not_a_panic() {
        let mut some = words(100, 1 << 30, 5);
        let message = encode(&mut some);
        for cut in 0..message.len() {
            assert!(decode(&message[..cut]).is_err() || cut == 0, "cut at {cut}");
        }
        let mut wrong_count = message.clone();
        wrong_count[0] += 1;
        assert!(decode(&wrong_count).is_err());
        let mut too_long = encode(&mut [5]);
        too_long.truncate(8);
        too_long[4] = 6;
        too_long.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0]);
        too_long[0] = 2;
        assert!(decode(&too_long).is_err());
        let overflow = [2, 0, 0, 0, 6, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 1];
        assert!(decode(&overflow).is_err());
    }
}
