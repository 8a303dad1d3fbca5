//! The positions of a component's members, stored or unranked on demand.

use crate::rank::{layer_positions_from, position_in_layer};
use crate::rules::Position;

/// Positions of the members of a component, in member order. A sparse
/// component keeps them (16 bytes each); a dense one (at 24 seeds the giant
/// component holds 86% of the layer) walks the layer from its first member
/// and picks its members on the way, which costs no memory and, at a few
/// positions walked per member, about as much time as unranking each.
pub(crate) struct MemberPositions<'a> {
    n: u32,
    members: &'a [u32],
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
    pub fn new(n: u32, members: &'a [u32]) -> MemberPositions<'a> {
        let span = match (members.first(), members.last()) {
            (Some(&first), Some(&last)) => (last - first) as usize + 1,
            _ => 0,
        };
        let store = members.len() <= ALWAYS_STORED || members.len().saturating_mul(SPARSE_SPAN) < span;
        MemberPositions::with_limit(n, members, if store { usize::MAX } else { 0 })
    }

    pub(crate) fn with_limit(n: u32, members: &'a [u32], limit: usize) -> MemberPositions<'a> {
        // (Unranked on every thread: a few million members cost a
        // noticeable part of a layer's bounds on one.)
        let stored = (members.len() <= limit).then(|| {
            use rayon::prelude::*;
            members
                .par_iter()
                .map(|&m| position_in_layer(n, m as u64).expect("member of the layer"))
                .collect()
        });
        MemberPositions { n, members, stored }
    }

    /// The position of member `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Position {
        match &self.stored {
            Some(positions) => positions[i],
            None => position_in_layer(self.n, self.members[i] as u64).expect("member of the layer"),
        }
    }

    /// Calls `visit(i, position)` for every member in order.
    pub fn for_each(&self, visit: impl FnMut(usize, Position)) {
        self.for_each_in(0..self.members.len(), visit);
    }

    /// Calls `visit(i, position, out)` for every member, a chunk of
    /// members at a time on every thread, and gathers what it pushes, in
    /// member order.
    pub fn par_collect<T: Send>(&self, visit: impl Fn(usize, Position, &mut Vec<T>) + Sync) -> Vec<T> {
        self.par_chunks(|range, out| self.for_each_in(range, |i, position| visit(i, position, out)))
    }

    /// [`MemberPositions::par_collect`] over the members `keep` accepts:
    /// a chunk of members in which it accepts none is skipped without its
    /// positions being walked or unranked; in the others, a few members
    /// kept are unranked one by one, many are walked to.
    pub fn par_collect_where<T: Send>(
        &self,
        keep: impl Fn(usize) -> bool + Sync,
        visit: impl Fn(usize, Position, &mut Vec<T>) + Sync,
    ) -> Vec<T> {
        self.par_chunks(|range, out| {
            let kept = range.clone().filter(|&i| keep(i)).count();
            if self.stored.is_some() || kept * UNRANK_AT_MOST < range.len() {
                for i in range.filter(|&i| keep(i)) {
                    visit(i, self.get(i), out);
                }
            } else {
                self.for_each_in(range, |i, position| {
                    if keep(i) {
                        visit(i, position, out);
                    }
                });
            }
        })
    }

    /// Hands each chunk of members to `per_chunk` on every thread and
    /// gathers what it pushes, in member order.
    fn par_chunks<T: Send>(&self, per_chunk: impl Fn(std::ops::Range<usize>, &mut Vec<T>) + Sync) -> Vec<T> {
        use rayon::prelude::*;
        let members = self.members.len();
        (0..members.div_ceil(MEMBER_CHUNK))
            .into_par_iter()
            .flat_map_iter(|c| {
                let mut out = Vec::new();
                per_chunk(c * MEMBER_CHUNK..((c + 1) * MEMBER_CHUNK).min(members), &mut out);
                out.into_iter()
            })
            .collect()
    }

    /// Calls `visit(i, position)` for the members `range`, in order (the
    /// parallel passes of the bounds hand each thread a range).
    pub fn for_each_in(&self, range: std::ops::Range<usize>, mut visit: impl FnMut(usize, Position)) {
        match &self.stored {
            Some(positions) => positions[range.clone()].iter().zip(range).for_each(|(&p, i)| visit(i, p)),
            None => {
                let Some(&first) = self.members.get(range.start) else { return };
                let mut next = range.start;
                for (offset, position) in layer_positions_from(self.n, first as u64).enumerate() {
                    if next == range.end {
                        break;
                    }
                    if first as usize + offset == self.members[next] as usize {
                        visit(next, position);
                        next += 1;
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
pub(crate) struct MemberNumbers {
    first: usize,
    bits: Vec<u64>,
    before: Vec<u32>,
}

impl MemberNumbers {
    pub fn new(members: &[u32]) -> MemberNumbers {
        let first = members.first().map_or(0, |&m| m as usize);
        let span = members.last().map_or(0, |&last| last as usize + 1 - first);
        let mut bits = vec![0u64; span.div_ceil(64)];
        for &m in members {
            let offset = m as usize - first;
            bits[offset / 64] |= 1 << (offset % 64);
        }
        let mut total = 0u32;
        let before = bits
            .iter()
            .map(|word| {
                let here = total;
                total += word.count_ones();
                here
            })
            .collect();
        MemberNumbers { first, bits, before }
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
        let stored = MemberPositions::with_limit(6, &members, usize::MAX);
        let unranked = MemberPositions::with_limit(6, &members, 0);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        stored.for_each(|i, p| a.push((i, p)));
        unranked.for_each(|i, p| b.push((i, p)));
        assert_eq!(a.len(), members.len());
        assert_eq!(a, b);
        // Any split into ranges visits the same members in the same order.
        for cut in [0, 1, members.len() / 3, members.len() - 1, members.len()] {
            let mut c = Vec::new();
            unranked.for_each_in(0..cut, |i, p| c.push((i, p)));
            stored.for_each_in(cut..members.len(), |i, p| c.push((i, p)));
            assert_eq!(a, c, "cut at {cut}");
        }
        for i in [0, 5, members.len() - 1] {
            assert_eq!(stored.get(i), unranked.get(i));
            assert_eq!(layer_index(&stored.get(i)), members[i] as u64);
        }
    }

    /// Collecting over the kept members visits exactly those, in member
    /// order, whether a chunk is walked (many kept) or its members are
    /// unranked one by one (few kept), positions stored or not.
    #[test]
    fn collecting_where_visits_the_kept_members_in_order() {
        let members: Vec<u32> = (0..layer_size_u32(7)).filter(|i| i % 3 != 1).collect();
        assert!(members.len() > MEMBER_CHUNK, "more than one chunk");
        for limit in [usize::MAX, 0] {
            let positions = MemberPositions::with_limit(7, &members, limit);
            let all: Vec<(usize, Position)> = positions.par_collect(|i, p, out| out.push((i, p)));
            assert_eq!(all.len(), members.len());
            for every in [1, 2, 5000] {
                let keep = |i: usize| i.is_multiple_of(every);
                let kept = positions.par_collect_where(keep, |i, p, out| out.push((i, p)));
                let expected: Vec<_> = all.iter().copied().filter(|&(i, _)| keep(i)).collect();
                assert!(!kept.is_empty());
                assert_eq!(kept, expected, "every {every}, limit {limit}");
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
            }
        }
    }

    fn layer_size_u32(n: u32) -> u32 {
        crate::rank::layer_size(n) as u32
    }
}
