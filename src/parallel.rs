//! Parallel loops whose thread machinery is compiled once.
//!
//! Every rayon iterator chain is a type of its own, and rayon compiles its
//! splitting, joining and job code again for each one: about two thousand
//! lines of LLVM IR a chain, which made rayon's generics 38% of the
//! library's IR (`cargo llvm-lines --profile ci --lib`) and most of a fresh
//! clone's compile. The loops here take their body as `&dyn Fn`, so that
//! code exists once for the crate. Callers keep their generic bodies:
//! a body is compiled (and inlined into) the caller as before, and costs
//! one indirect call per chunk or per index, never per element of a chunk.
//!
//! Results come back in index order, so a caller's output does not depend
//! on how the work was shared among threads. An output of one value per
//! index is written in place ([`fill_chunks`]): gathering it in pieces
//! and joining them would hold it twice for a moment, and at 30 seeds a
//! layer's labels alone are 12.6 GB.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;

use rayon::prelude::*;

/// Calls `body(i)` for every `i` in `0..count`, on rayon's threads.
pub(crate) fn for_each_index(count: usize, body: &(dyn Fn(usize) + Sync)) {
    (0..count).into_par_iter().for_each(body);
}

/// The `c`-th range of `0..len` cut into ranges of `chunk` (the last one
/// shorter).
fn chunk_range(c: usize, chunk: usize, len: usize) -> Range<usize> {
    c * chunk..(c * chunk + chunk).min(len)
}

/// Calls `body` on each range of `0..len` cut into ranges of `chunk` (at
/// least 1), on rayon's threads.
pub(crate) fn for_each_chunk(len: usize, chunk: usize, body: &(dyn Fn(Range<usize>) + Sync)) {
    let chunk = chunk.max(1);
    for_each_index(len.div_ceil(chunk), &|c| body(chunk_range(c, chunk, len)));
}

/// `body(i)` for every `i` in `0..count`, computed on rayon's threads and
/// returned in index order.
pub(crate) fn map_indexes<T: Send>(count: usize, body: &(dyn Fn(usize) -> T + Sync)) -> Vec<T> {
    // (A slot per index; a mutex, not a `OnceLock`, so `T` need only be
    // `Send`. Each slot is locked once, by the thread that fills it.)
    let slots: Vec<Mutex<Option<T>>> = (0..count).map(|_| Mutex::new(None)).collect();
    for_each_index(count, &|i| {
        let value = body(i);
        *slots[i].lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(value);
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .expect("every index was visited")
        })
        .collect()
}

/// `body(part)` for each part of `items` cut into parts of `chunk` (at
/// least 1, the last part shorter), on rayon's threads, in part order.
pub(crate) fn map_slices<T: Sync, U: Send>(
    items: &[T],
    chunk: usize,
    body: &(dyn Fn(&[T]) -> U + Sync),
) -> Vec<U> {
    let chunk = chunk.max(1);
    map_indexes(items.len().div_ceil(chunk), &|c| body(&items[chunk_range(c, chunk, items.len())]))
}

/// What `body` pushes for each range of `0..len` cut into ranges of
/// `chunk` (at least 1), on rayon's threads, concatenated in range order.
pub(crate) fn collect_chunks<T: Send>(
    len: usize,
    chunk: usize,
    body: &(dyn Fn(Range<usize>, &mut Vec<T>) + Sync),
) -> Vec<T> {
    let chunk = chunk.max(1);
    let parts = map_indexes(len.div_ceil(chunk), &|c| {
        let mut out = Vec::new();
        body(chunk_range(c, chunk, len), &mut out);
        out
    });
    let mut all = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    parts.into_iter().for_each(|part| all.extend(part));
    all
}

/// The sum of `body` over the ranges of `0..len` cut into ranges of
/// `chunk` (at least 1), on rayon's threads.
pub(crate) fn sum_chunks(len: usize, chunk: usize, body: &(dyn Fn(Range<usize>) -> u64 + Sync)) -> u64 {
    let total = AtomicU64::new(0);
    for_each_chunk(len, chunk, &|range| {
        total.fetch_add(body(range), Relaxed);
    });
    total.into_inner()
}

/// `len` values, zero first, that `body(start, part)` writes chunk by
/// chunk on rayon's threads (`part` holding the values `start..` of at
/// most `chunk`, at least 1). One allocation, written in place; zeroed
/// pages come from the system untouched, so nothing is written twice.
pub(crate) fn fill_chunks<T: Send + Copy + Default>(
    len: usize,
    chunk: usize,
    body: &(dyn Fn(usize, &mut [T]) + Sync),
) -> Vec<T> {
    let mut out = vec![T::default(); len];
    for_each_chunk_mut(&mut out, chunk, body);
    out
}

/// A bit for each of `0..len`, `holds(j)` in bit `j % 64` of word
/// `j / 64`, computed a chunk of `chunk` values (a multiple of 64) at a
/// time on rayon's threads.
pub(crate) fn bits_where(len: usize, chunk: usize, holds: &(dyn Fn(usize) -> bool + Sync)) -> Vec<u64> {
    fill_chunks(len.div_ceil(64), (chunk / 64).max(1), &|start, words| {
        for (w, word) in (start..).zip(words) {
            let first = 64 * w;
            *word =
                (first..(first + 64).min(len)).fold(0u64, |bits, j| bits | (holds(j) as u64) << (j - first));
        }
    })
}

/// An integer type and its atomic twin.
///
/// # Safety
/// `Atomic` must have the size, alignment and bit validity of `Self` (as
/// the standard library documents for each atomic integer type).
pub(crate) unsafe trait AtomicTwin: Copy {
    type Atomic;
}

// Safety: each atomic integer type has the size, alignment and bit
// validity of its integer type (the standard library's documentation).
unsafe impl AtomicTwin for u8 {
    type Atomic = AtomicU8;
}
unsafe impl AtomicTwin for u16 {
    type Atomic = AtomicU16;
}
unsafe impl AtomicTwin for u32 {
    type Atomic = AtomicU32;
}
unsafe impl AtomicTwin for u64 {
    type Atomic = AtomicU64;
}

/// The same values as atomics, without a copy (so zeroed pages that came
/// from the system untouched stay untouched).
pub(crate) fn atomics<T: AtomicTwin>(values: Vec<T>) -> Vec<T::Atomic> {
    let mut values = std::mem::ManuallyDrop::new(values);
    let (pointer, len, capacity) = (values.as_mut_ptr(), values.len(), values.capacity());
    // Safety: the twin has the size, alignment and bit validity of `T`
    // (`AtomicTwin`), so the allocation, its length and its capacity
    // describe the same vector of atomics; the original is never dropped.
    unsafe { Vec::from_raw_parts(pointer.cast::<T::Atomic>(), len, capacity) }
}

/// The values of atomics no other thread holds any more, without a copy.
pub(crate) fn plain<T: AtomicTwin>(atomics: Vec<T::Atomic>) -> Vec<T> {
    let mut atomics = std::mem::ManuallyDrop::new(atomics);
    let (pointer, len, capacity) = (atomics.as_mut_ptr(), atomics.len(), atomics.capacity());
    // Safety: as in `atomics`, the other way round; owning the vector, we
    // hold the only reference to its atomics.
    unsafe { Vec::from_raw_parts(pointer.cast::<T>(), len, capacity) }
}

/// Whether `body` holds for some range of `0..len` cut into ranges of
/// `chunk` (at least 1), on rayon's threads; once one does, the ranges
/// not yet started are skipped.
pub(crate) fn any_chunk(len: usize, chunk: usize, body: &(dyn Fn(Range<usize>) -> bool + Sync)) -> bool {
    let found = AtomicBool::new(false);
    for_each_chunk(len, chunk, &|range| {
        if !found.load(Relaxed) && body(range) {
            found.store(true, Relaxed);
        }
    });
    found.into_inner()
}

/// Calls `body(start, part)` on each part of `items` cut into parts of
/// `chunk` (at least 1), `start` being the part's first index, on rayon's
/// threads. (Generic in `T`: one copy of rayon's code per element type,
/// not per loop.)
pub(crate) fn for_each_chunk_mut<T: Send>(
    items: &mut [T],
    chunk: usize,
    body: &(dyn Fn(usize, &mut [T]) + Sync),
) {
    let chunk = chunk.max(1);
    items.par_chunks_mut(chunk).enumerate().for_each(|(c, part)| body(c * chunk, part));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every loop covers its range once, in order where it returns one,
    /// whatever the pool's size, including empty ranges and a last chunk
    /// shorter than the others.
    /// The bits of a predicate, over lengths around a word and a chunk.
    #[test]
    fn bits_where_sets_the_bits_of_the_values_that_hold() {
        let holds = |j: usize| j.is_multiple_of(3) || j % 7 == 5;
        for len in [0, 1, 63, 64, 65, 1000, 4096 + 17] {
            let words = bits_where(len, 128, &holds);
            assert_eq!(words.len(), len.div_ceil(64));
            for j in 0..64 * words.len() {
                assert_eq!(words[j / 64] >> (j % 64) & 1 == 1, j < len && holds(j), "len {len}, bit {j}");
            }
        }
    }

    #[test]
    fn the_loops_cover_their_range_once_in_order() {
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
            pool.install(|| {
                for (len, chunk) in [(0, 4), (1, 4), (10, 3), (12, 3), (1000, 7), (5, 0)] {
                    let expected: Vec<usize> = (0..len).collect();
                    assert_eq!(collect_chunks(len, chunk, &|range, out| out.extend(range)), expected);
                    assert_eq!(map_indexes(len, &|i| i), expected);
                    let parts = map_slices(&expected, chunk, &|part: &[usize]| part.to_vec());
                    assert!(parts.iter().all(|part| !part.is_empty() && part.len() <= chunk.max(1)));
                    assert_eq!(parts.concat(), expected);
                    assert_eq!(
                        sum_chunks(len, chunk, &|range| range.map(|i| i as u64).sum()),
                        expected.iter().sum::<usize>() as u64
                    );
                    for target in [0, len / 2, len.saturating_sub(1), len] {
                        assert_eq!(
                            any_chunk(len, chunk, &|mut range| range.any(|i| i == target)),
                            target < len
                        );
                    }
                    let seen: Vec<AtomicU64> = (0..len).map(|_| AtomicU64::new(0)).collect();
                    for_each_chunk(len, chunk, &|range| {
                        range.for_each(|i| _ = seen[i].fetch_add(1, Relaxed))
                    });
                    for_each_index(len, &|i| _ = seen[i].fetch_add(1, Relaxed));
                    assert!(seen.iter().all(|s| s.load(Relaxed) == 2), "{len} by {chunk}");
                    let filled = fill_chunks(len, chunk, &|start, part: &mut [usize]| {
                        part.iter_mut().enumerate().for_each(|(k, item)| *item = start + k)
                    });
                    assert_eq!(filled, expected);
                    let words: Vec<u32> = (0..len as u32).collect();
                    let same = atomics(words.clone());
                    assert!(same.iter().map(|a| a.load(Relaxed)).eq(words.iter().copied()));
                    let bytes = atomics(words.iter().map(|&w| w as u8).collect());
                    assert!(bytes.iter().map(|a| a.load(Relaxed)).eq(words.iter().map(|&w| w as u8)));
                    let longs = atomics(words.iter().map(|&w| u64::from(w) << 32).collect());
                    assert!(longs
                        .iter()
                        .map(|a| a.load(Relaxed))
                        .eq(words.iter().map(|&w| u64::from(w) << 32)));
                    let mut items = vec![0usize; len];
                    for_each_chunk_mut(&mut items, chunk, &|start, part| {
                        part.iter_mut().enumerate().for_each(|(k, item)| *item += start + k)
                    });
                    assert_eq!(items, expected);
                }
            });
        }
    }
}
