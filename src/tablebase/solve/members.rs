//! A component's members: which layer positions they are (listed, or
//! marked in a bit per position of the stretch they span), their
//! positions (stored or unranked on demand), and the member number of a
//! layer index.

use crate::parallel;
use crate::rank::{layer_positions_from, position_in_layer};
use crate::rules::Position;

/// The members of one component, sorted by layer index. A small or
/// sparse component lists them (4 bytes a member); a large dense one
/// marks them in the bits of [`MemberNumbers`], 3/16 of a byte a position
/// it spans: at 28 seeds the giant component's list would take 5.6 GB
/// (3.4 bytes a position of the layer), its bits 0.3 GB. The same
/// members, in the same order, either way.
#[derive(Clone, Copy)]
pub enum Members<'a> {
    Listed(&'a [u32]),
    Marked(&'a MemberNumbers),
}

impl<'a> Members<'a> {
    pub fn len(&self) -> usize {
        match self {
            Members::Listed(list) => list.len(),
            Members::Marked(numbers) => numbers.count,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The layer index of member `i` (a marked component finds it by a
    /// binary search over its words' counts: for a first member or a
    /// chunk's start, not inside a pass).
    pub fn get(&self, i: usize) -> u32 {
        match self {
            Members::Listed(list) => list[i],
            Members::Marked(numbers) => numbers.select(i),
        }
    }

    pub fn first(&self) -> Option<u32> {
        (!self.is_empty()).then(|| self.get(0))
    }

    pub fn last(&self) -> Option<u32> {
        (!self.is_empty()).then(|| self.get(self.len() - 1))
    }

    /// Layer positions from the first member to the last.
    pub fn span(&self) -> usize {
        match (self.first(), self.last()) {
            (Some(first), Some(last)) => (last - first) as usize + 1,
            _ => 0,
        }
    }

    /// How many members lie below layer index `index`.
    pub fn below(&self, index: usize) -> usize {
        match self {
            Members::Listed(list) => list.partition_point(|&m| (m as usize) < index),
            Members::Marked(numbers) => numbers.below(index),
        }
    }

    /// The members' layer indexes, in order.
    pub fn iter(&self) -> MemberIndexes<'a> {
        self.iter_from(0)
    }

    /// The layer indexes of members `i`, `i + 1`, … in order.
    pub fn iter_from(&self, i: usize) -> MemberIndexes<'a> {
        match *self {
            Members::Listed(list) => MemberIndexes::Listed(list[i.min(list.len())..].iter()),
            Members::Marked(numbers) => MemberIndexes::Marked(numbers.iter_from(i)),
        }
    }

    pub fn to_vec(self) -> Vec<u32> {
        match self {
            Members::Listed(list) => list.to_vec(),
            Members::Marked(_) => self.iter().collect(),
        }
    }

    /// Which layer positions are members.
    pub(crate) fn membership(&self) -> Membership<'a> {
        match *self {
            Members::Listed(list) => Membership::of(list),
            Members::Marked(numbers) => Membership::Marked(numbers),
        }
    }
}

impl crate::tablebase::snapshot::MemberIndexList for Members<'_> {
    fn count(&self) -> usize {
        self.len()
    }

    fn indexes(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        Box::new(self.iter())
    }
}

/// The layer indexes of a component's members, in order.
pub enum MemberIndexes<'a> {
    Listed(std::slice::Iter<'a, u32>),
    Marked(MarkedIndexes<'a>),
}

impl Iterator for MemberIndexes<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            MemberIndexes::Listed(list) => list.next().copied(),
            MemberIndexes::Marked(marked) => marked.next(),
        }
    }
}

/// The set bits of [`MemberNumbers`], as layer indexes, in order.
pub struct MarkedIndexes<'a> {
    numbers: &'a MemberNumbers,
    /// The word being read, and its bits not read yet.
    word: usize,
    bits: u64,
}

impl Iterator for MarkedIndexes<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.numbers.bits.get(self.word)?;
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some((self.numbers.first + 64 * self.word + bit) as u32)
    }
}

/// Positions of the members of a component, in member order. A sparse
/// component keeps them (16 bytes each); a dense one (at 24 seeds the giant
/// component holds 86% of the layer) walks the layer from its first member
/// and picks its members on the way, which costs no memory and, at a few
/// positions walked per member, about as much time as unranking each.
pub(crate) struct MemberPositions<'a> {
    n: u32,
    members: Members<'a>,
    stored: Option<Vec<Position>>,
}

/// Members handed to one thread at a time in a pass over a component.
const MEMBER_CHUNK: usize = 1 << 14;

/// A chunk of members in which fewer than one in this many are visited
/// has them unranked one by one rather than walked to (unranking one
/// costs about as much as walking this many positions).
const UNRANK_AT_MOST: usize = 16;

/// Components up to this size always keep their positions.
const ALWAYS_STORED: usize = 1 << 12;

/// A component spanning more than this many layer positions per member is
/// sparse: walking it would cost more than unranking its members, and
/// storing them costs at most a quarter of a byte per position it spans.
const SPARSE_SPAN: usize = 64;

impl<'a> MemberPositions<'a> {
    pub fn new(n: u32, members: Members<'a>) -> MemberPositions<'a> {
        let store =
            members.len() <= ALWAYS_STORED || members.len().saturating_mul(SPARSE_SPAN) < members.span();
        MemberPositions::with_limit(n, members, if store { usize::MAX } else { 0 })
    }

    pub(crate) fn with_limit(n: u32, members: Members<'a>, limit: usize) -> MemberPositions<'a> {
        // (Unranked on every thread: a few million members cost a
        // noticeable part of a layer's bounds on one.)
        let stored = (members.len() <= limit).then(|| {
            let unrank = |m: u32| position_in_layer(n, m as u64).expect("member of the layer");
            let unrank_all = |list: &[u32]| {
                parallel::fill_chunks(list.len(), MEMBER_CHUNK, &|start, positions| {
                    positions.iter_mut().zip(&list[start..]).for_each(|(p, &m)| *p = unrank(m))
                })
            };
            match members {
                Members::Listed(list) => unrank_all(list),
                Members::Marked(_) => unrank_all(&members.to_vec()),
            }
        });
        MemberPositions { n, members, stored }
    }

    /// The seeds of the members' layer.
    pub(crate) fn seeds(&self) -> u32 {
        self.n
    }

    /// The position of member `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Position {
        // (The layer index is looked up only when it is needed.)
        match &self.stored {
            Some(positions) => positions[i],
            None => self.get_at(i, self.members.get(i) as usize),
        }
    }

    /// The position of member `i`, at layer `index` (as a pass over the
    /// members gives both): stored, or unranked.
    #[inline]
    pub fn get_at(&self, i: usize, index: usize) -> Position {
        match &self.stored {
            Some(positions) => positions[i],
            None => position_in_layer(self.n, index as u64).expect("member of the layer"),
        }
    }

    /// Calls `visit(i, index, out)` for the members whose layer index
    /// `keep` accepts, a chunk of members at a time on every thread, and
    /// gathers what it pushes, in member order. No position is walked to
    /// or unranked: a visit that needs its member's asks
    /// ([`MemberPositions::get_at`]), for when few of the members kept
    /// need one.
    pub fn par_collect_indexes_where<T: Send>(
        &self,
        keep: impl Fn(usize) -> bool + Sync,
        visit: impl Fn(usize, usize, &mut Vec<T>) + Sync,
    ) -> Vec<T> {
        self.par_chunks(&|range, out| {
            let indexes = range.clone().zip(self.members.iter_from(range.start));
            for (i, m) in indexes.filter(|&(_, m)| keep(m as usize)) {
                visit(i, m as usize, out);
            }
        })
    }

    /// Calls `visit(i, index, position)` for every member in order: its
    /// number, layer index and position.
    pub fn for_each(&self, visit: impl FnMut(usize, usize, Position)) {
        self.for_each_in(0..self.members.len(), visit);
    }

    /// Calls `visit(i, index, position, out)` for every member, a chunk
    /// of members at a time on every thread, and gathers what it pushes,
    /// in member order.
    pub fn par_collect<T: Send>(&self, visit: impl Fn(usize, usize, Position, &mut Vec<T>) + Sync) -> Vec<T> {
        self.par_chunks(&|range, out| {
            self.for_each_in(range, |i, index, position| visit(i, index, position, out))
        })
    }

    /// [`MemberPositions::par_collect`] over the members whose layer
    /// index `keep` accepts: a chunk of members in which it accepts none
    /// is skipped without its positions being walked or unranked; in the
    /// others, a few members kept are unranked one by one, many are
    /// walked to.
    pub fn par_collect_where<T: Send>(
        &self,
        keep: impl Fn(usize) -> bool + Sync,
        visit: impl Fn(usize, usize, Position, &mut Vec<T>) + Sync,
    ) -> Vec<T> {
        self.par_chunks(&|range, out| {
            let indexes = || range.clone().zip(self.members.iter_from(range.start));
            let kept = indexes().filter(|&(_, m)| keep(m as usize)).count();
            if self.stored.is_some() || kept * UNRANK_AT_MOST < range.len() {
                for (i, m) in indexes().filter(|&(_, m)| keep(m as usize)) {
                    let position = match &self.stored {
                        Some(positions) => positions[i],
                        None => position_in_layer(self.n, m as u64).expect("member of the layer"),
                    };
                    visit(i, m as usize, position, out);
                }
            } else {
                self.for_each_in(range, |i, index, position| {
                    if keep(index) {
                        visit(i, index, position, out);
                    }
                });
            }
        })
    }

    /// Hands each chunk of members to `per_chunk` on every thread and
    /// gathers what it pushes, in member order.
    fn par_chunks<T: Send>(
        &self,
        per_chunk: &(dyn Fn(std::ops::Range<usize>, &mut Vec<T>) + Sync),
    ) -> Vec<T> {
        parallel::collect_chunks(self.members.len(), MEMBER_CHUNK, per_chunk)
    }

    /// Calls `visit(i, index, position)` for the members `range`, in
    /// order (the parallel passes of the bounds hand each thread a range).
    pub fn for_each_in(&self, range: std::ops::Range<usize>, mut visit: impl FnMut(usize, usize, Position)) {
        let range = range.start..range.end.min(self.members.len());
        let mut indexes = self.members.iter_from(range.start);
        match &self.stored {
            Some(positions) => positions[range.clone()]
                .iter()
                .zip(range)
                .zip(indexes)
                .for_each(|((&p, i), m)| visit(i, m as usize, p)),
            None => {
                if range.is_empty() {
                    return;
                }
                let Some(first) = indexes.next() else { return };
                let (first, mut wanted) = (first as usize, first as usize);
                let mut next = range.start;
                for (offset, position) in layer_positions_from(self.n, first as u64).enumerate() {
                    if first + offset == wanted {
                        visit(next, wanted, position);
                        next += 1;
                        match indexes.next() {
                            Some(m) if next < range.end => wanted = m as usize,
                            _ => break,
                        }
                    }
                }
            }
        }
    }
}

/// The member number of a layer index, for a sorted list of members: a bit
/// per position from the first member to the last, and the members before
/// each 64-position word. 3/16 of a byte per position spanned (at 24 seeds
/// about 78 MB for the giant component, where a table of member numbers
/// would take 1.7 GB), and a lookup reads two words where a binary search
/// over the members reads about 28 scattered ones.
pub struct MemberNumbers {
    first: usize,
    bits: Vec<u64>,
    before: Vec<u32>,
    count: usize,
}

impl MemberNumbers {
    pub fn new(members: &[u32]) -> MemberNumbers {
        let (Some(&first), Some(&last)) = (members.first(), members.last()) else {
            return MemberNumbers { first: 0, bits: Vec::new(), before: Vec::new(), count: 0 };
        };
        let (first, last) = (first as usize, last as usize);
        MemberNumbers::marking(first, last, |mark| members.iter().for_each(|&m| mark(m as usize)))
    }

    /// The numbers of the members that `mark_all` marks (each once, from
    /// `first` to `last`, in any order) by calling the function it is
    /// given with each member's layer index.
    pub(crate) fn marking(
        first: usize,
        last: usize,
        mark_all: impl FnOnce(&mut dyn FnMut(usize)),
    ) -> MemberNumbers {
        let span = last + 1 - first;
        let mut bits = vec![0u64; span.div_ceil(64)];
        mark_all(&mut |m: usize| {
            let offset = m - first;
            bits[offset / 64] |= 1 << (offset % 64);
        });
        let mut total = 0usize;
        let before = bits
            .iter()
            .map(|word| {
                // (Fewer than 2^32 members: a layer up to 30 seeds has
                // fewer than 2^32 positions, and `Components` marks no
                // larger one.)
                let here = total as u32;
                total += word.count_ones() as usize;
                here
            })
            .collect();
        MemberNumbers { first, bits, before, count: total }
    }

    /// How many members lie below layer index `index`.
    fn below(&self, index: usize) -> usize {
        let Some(offset) = index.checked_sub(self.first) else { return 0 };
        match self.bits.get(offset / 64) {
            Some(word) => {
                self.before[offset / 64] as usize
                    + (word & ((1u64 << (offset % 64)) - 1)).count_ones() as usize
            }
            None => self.count,
        }
    }

    /// The layer index of member `i` (`i` below the member count).
    pub fn select(&self, i: usize) -> u32 {
        self.iter_from(i).next().expect("a member number below the count")
    }

    /// The layer indexes of members `i`, `i + 1`, … in order.
    fn iter_from(&self, i: usize) -> MarkedIndexes<'_> {
        if i >= self.count {
            return MarkedIndexes { numbers: self, word: self.bits.len(), bits: 0 };
        }
        // The last word with at most `i` members before it holds it.
        let word = self.before.partition_point(|&b| b as usize <= i) - 1;
        let mut bits = self.bits[word];
        for _ in 0..i - self.before[word] as usize {
            bits &= bits - 1;
        }
        MarkedIndexes { numbers: self, word, bits }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        8 * self.bits.len() + 4 * self.before.len()
    }

    /// Whether layer index `index` is a member.
    #[inline]
    pub fn contains(&self, index: usize) -> bool {
        let Some(offset) = index.checked_sub(self.first) else { return false };
        self.bits.get(offset / 64).is_some_and(|word| word & (1 << (offset % 64)) != 0)
    }

    /// The member number of layer index `index`, if it is a member.
    #[inline]
    pub fn of(&self, index: usize) -> Option<usize> {
        let offset = index.checked_sub(self.first)?;
        let word = *self.bits.get(offset / 64)?;
        let bit = 1u64 << (offset % 64);
        (word & bit != 0)
            .then(|| self.before[offset / 64] as usize + (word & (bit - 1)).count_ones() as usize)
    }
}

/// Which positions of the layer are members of one component: every move
/// and un-move of the games asks, and a few passes over a component
/// besides. A component dense in its stretch of the layer answers from a
/// bit per position of that stretch ([`MemberNumbers`]: at 24 seeds 78 MB
/// for the giant component, which stays in the caches); a sparse one by a
/// binary search of its sorted members (its bits would cost more than 6
/// bytes a member). The same answers.
pub(crate) enum Membership<'a> {
    Bits(MemberNumbers),
    Marked(&'a MemberNumbers),
    Sorted(&'a [u32]),
}

/// A component gets its own bits when it holds at least one position in
/// this many of its stretch (1.5 bits a position of the stretch with
/// their counts, so at most 6 bytes a member).
const DENSE_SPAN: usize = 32;

impl<'a> Membership<'a> {
    /// The membership of the sorted `members`.
    pub fn of(members: &'a [u32]) -> Membership<'a> {
        let span = match (members.first(), members.last()) {
            (Some(&first), Some(&last)) => (last - first) as usize + 1,
            _ => 0,
        };
        if span <= DENSE_SPAN.saturating_mul(members.len()) {
            Membership::Bits(MemberNumbers::new(members))
        } else {
            Membership::Sorted(members)
        }
    }

    /// Whether layer index `index` is a member.
    #[inline]
    pub fn contains(&self, index: usize) -> bool {
        match self {
            Membership::Bits(numbers) => numbers.contains(index),
            Membership::Marked(numbers) => numbers.contains(index),
            Membership::Sorted(members) => {
                u32::try_from(index).is_ok_and(|i| members.binary_search(&i).is_ok())
            }
        }
    }

    /// The member number of layer index `index`, if it is a member.
    #[inline]
    pub fn number(&self, index: usize) -> Option<usize> {
        match self {
            Membership::Bits(numbers) => numbers.of(index),
            Membership::Marked(numbers) => numbers.of(index),
            Membership::Sorted(members) => {
                u32::try_from(index).ok().and_then(|i| members.binary_search(&i).ok())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::layer_index;

    #[test]
    fn stored_and_unranked_member_positions_agree() {
        let members: Vec<u32> = (0..layer_size_u32(6)).filter(|i| i % 7 == 3 || i % 11 == 0).collect();
        let numbers = MemberNumbers::new(&members);
        let mut a = Vec::new();
        for listed in [Members::Listed(&members), Members::Marked(&numbers)] {
            let stored = MemberPositions::with_limit(6, listed, usize::MAX);
            let unranked = MemberPositions::with_limit(6, listed, 0);
            let b = {
                let mut b = Vec::new();
                stored.for_each(|i, m, p| b.push((i, m, p)));
                b
            };
            let mut c = Vec::new();
            unranked.for_each(|i, m, p| c.push((i, m, p)));
            assert_eq!(b.len(), members.len());
            assert!(b.iter().all(|&(i, m, p)| members[i] as usize == m && layer_index(&p) == m as u64));
            assert_eq!(b, c);
            if a.is_empty() {
                a = b;
            }
            assert_eq!(a, c, "listed and marked alike");
            // Any split into ranges visits the same members in the same order.
            for cut in [0, 1, members.len() / 3, members.len() - 1, members.len()] {
                let mut d = Vec::new();
                unranked.for_each_in(0..cut, |i, m, p| d.push((i, m, p)));
                stored.for_each_in(cut..members.len(), |i, m, p| d.push((i, m, p)));
                assert_eq!(a, d, "cut at {cut}");
                let mut e = Vec::new();
                unranked.for_each_in(cut..cut + 3, |i, m, p| e.push((i, m, p)));
                assert_eq!(e, a[cut.min(a.len())..(cut + 3).min(a.len())], "three from {cut}");
            }
            for i in [0, 5, members.len() - 1] {
                assert_eq!(stored.get(i), unranked.get(i));
                assert_eq!(layer_index(&stored.get(i)), members[i] as u64);
            }
        }
    }

    /// Collecting over the kept members visits exactly those, in member
    /// order, whether a chunk is walked (many kept) or its members are
    /// unranked one by one (few kept), positions stored or not.
    #[test]
    fn collecting_where_visits_the_kept_members_in_order() {
        let members: Vec<u32> = (0..layer_size_u32(7)).filter(|i| i % 3 != 1).collect();
        assert!(members.len() > MEMBER_CHUNK, "more than one chunk");
        let numbers = MemberNumbers::new(&members);
        for listed in [Members::Listed(&members), Members::Marked(&numbers)] {
            for limit in [usize::MAX, 0] {
                let positions = MemberPositions::with_limit(7, listed, limit);
                let all: Vec<(usize, usize, Position)> =
                    positions.par_collect(|i, m, p, out| out.push((i, m, p)));
                assert_eq!(all.len(), members.len());
                assert!(all.iter().all(|&(i, m, p)| members[i] as usize == m && layer_index(&p) == m as u64));
                for every in [1, 2, 5000] {
                    let keep = |m: usize| m.is_multiple_of(every);
                    let kept = positions.par_collect_where(keep, |i, m, p, out| out.push((i, m, p)));
                    let expected: Vec<_> = all.iter().copied().filter(|&(_, m, _)| keep(m)).collect();
                    assert!(!kept.is_empty());
                    assert_eq!(kept, expected, "every {every}, limit {limit}");
                }
            }
        }
    }

    #[test]
    fn member_numbers_are_the_members_order() {
        for members in [
            vec![],
            vec![0],
            vec![63, 64],
            (0..layer_size_u32(6)).filter(|i| i % 7 == 3 || i % 11 == 0).collect::<Vec<u32>>(),
            (5..4000).step_by(63).collect(),
        ] {
            let numbers = MemberNumbers::new(&members);
            let top = members.last().map_or(10, |&m| m as usize + 130);
            for index in 0..top {
                let number = members.binary_search(&(index as u32)).ok();
                assert_eq!(numbers.of(index), number, "{index}");
                assert_eq!(numbers.contains(index), number.is_some(), "{index}");
                let below = members.partition_point(|&m| (m as usize) < index);
                assert_eq!(Members::Marked(&numbers).below(index), below, "{index}");
                assert_eq!(Members::Listed(&members).below(index), below, "{index}");
            }
            // Selected, and walked from any member, as listed.
            let marked = Members::Marked(&numbers);
            assert_eq!((marked.len(), marked.span()), (members.len(), Members::Listed(&members).span()));
            for (i, &m) in members.iter().enumerate() {
                assert_eq!(marked.get(i), m);
            }
            for from in (0..=members.len()).step_by(1 + members.len() / 7) {
                assert!(marked.iter_from(from).eq(members[from..].iter().copied()), "from {from}");
            }
        }
    }

    fn layer_size_u32(n: u32) -> u32 {
        crate::rank::layer_size(n) as u32
    }
}
