//! Phase 2: strongly connected components of the undecided positions, by
//! Pearce's space-efficient variant of Tarjan's algorithm ("A space-efficient
//! algorithm for finding strongly connected components", 2016), iterative.
//!
//! One `u32` per position serves as DFS rank while a position is active and
//! as component number once it is finished; the "root" flag lives in the
//! DFS frame, so memory is 4 bytes per position plus the two stacks.
//! Components come out in reverse topological order: a component is
//! finished only after every component it reaches.
//!
//! We run it on the normalized graph (positions seen from the mover) and
//! derive the components of game states (position and side to move, the
//! graph doubled by ply parity) from it: see `docs/cycle-bounds.md`,
//! "Game-state components". A normalized component S with an odd cycle is
//! one game-state component of 2|S| states; a bipartite one is two mirror
//! components of |S| states each. Either way each position of a component
//! of two or more positions lies on a cycle of game states.

use std::collections::VecDeque;

use super::layer::LayerSolver;
use crate::rank::{layer_index, layer_positions, layer_positions_from, position_in_layer};
use crate::rules::Position;

/// Marks a position outside the graph (decided before this phase).
pub(crate) const NONE: u32 = u32::MAX;

/// The components, numbered in the order they were finished (sinks first).
pub struct Components {
    /// Component of every undecided position, `NONE` for decided ones.
    pub id: Vec<u32>,
    /// Positions grouped by component, each group sorted by index.
    pub members: Vec<u32>,
    /// `members[starts[k]..starts[k + 1]]` is component `k`.
    pub starts: Vec<usize>,
}

impl Components {
    /// Groups positions by component number (`NONE`: in no component).
    pub fn from_ids(id: Vec<u32>) -> Components {
        let count = id.iter().filter(|&&r| r != NONE).map(|&r| r as usize + 1).max().unwrap_or(0);
        let mut starts = vec![0usize; count + 1];
        for &r in &id {
            if r != NONE {
                starts[r as usize + 1] += 1;
            }
        }
        for k in 0..count {
            starts[k + 1] += starts[k];
        }
        let mut fill = starts.clone();
        let mut members = vec![0u32; starts[count]];
        for (i, &r) in id.iter().enumerate() {
            if r != NONE {
                members[fill[r as usize]] = i as u32;
                fill[r as usize] += 1;
            }
        }
        Components { id, members, starts }
    }

    pub fn count(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn of(&self, k: usize) -> &[u32] {
        &self.members[self.starts[k]..self.starts[k + 1]]
    }
}

/// A DFS frame. The pits are stored unpacked (12 bytes, 4-byte aligned)
/// rather than as a `Position` (16-byte aligned): the DFS stack can hold a
/// large share of a layer, and this keeps a frame at 20 bytes.
struct Frame {
    index: u32,
    pits: [u8; 12],
    moves: u8,
    root: bool,
}

impl LayerSolver<'_> {
    /// Finds the components of the undecided positions and records their
    /// figures in the layer statistics.
    pub(crate) fn components(&mut self) -> Components {
        let size = self.size;
        let mut rank = vec![0u32; size];
        for (i, r) in rank.iter_mut().enumerate() {
            if self.entries.is_decided(i) {
                *r = NONE;
            }
        }
        // Ranks count up from 1 while active; finished components count down
        // from size - 1. Both stay below NONE and never meet (Pearce).
        let mut next_rank = 1u32;
        let mut next_component = size as u32 - 1;
        let mut finished: Vec<u32> = Vec::new();
        let mut frames: Vec<Frame> = Vec::new();
        let (mut deepest, mut most_finished) = (0usize, 0usize);
        self.progress.phase(&format!("{} seeds: components", self.n), size as u64, "positions");
        for (start, position) in layer_positions(self.n).enumerate() {
            if start % (1 << 16) == 0 {
                self.progress.position(start as u64);
            }
            if rank[start] != 0 {
                continue;
            }
            rank[start] = next_rank;
            next_rank += 1;
            frames.push(Frame {
                index: start as u32,
                pits: position.pits(),
                moves: position.legal_moves().bits(),
                root: true,
            });
            while let Some(frame) = frames.last_mut() {
                if frame.moves != 0 {
                    let pit = frame.moves.trailing_zeros() as usize;
                    frame.moves &= frame.moves - 1;
                    let played = Position::new(frame.pits).play(pit);
                    if played.captured > 0 {
                        continue;
                    }
                    let w = layer_index(&played.child) as usize;
                    if rank[w] == NONE {
                        continue;
                    }
                    if rank[w] == 0 {
                        rank[w] = next_rank;
                        next_rank += 1;
                        let moves = played.child.legal_moves().bits();
                        frames.push(Frame { index: w as u32, pits: played.child.pits(), moves, root: true });
                        deepest = deepest.max(frames.len());
                    } else if rank[w] < rank[frame.index as usize] {
                        rank[frame.index as usize] = rank[w];
                        frame.root = false;
                    }
                    continue;
                }
                let Frame { index: v, root, .. } = frames.pop().expect("a frame");
                let v = v as usize;
                if root {
                    next_rank -= 1;
                    while let Some(&w) = finished.last() {
                        if rank[v] > rank[w as usize] {
                            break;
                        }
                        finished.pop();
                        rank[w as usize] = next_component;
                        next_rank -= 1;
                    }
                    rank[v] = next_component;
                    next_component -= 1;
                } else {
                    finished.push(v as u32);
                    most_finished = most_finished.max(finished.len());
                }
                if let Some(parent) = frames.last_mut() {
                    if rank[v] < rank[parent.index as usize] {
                        rank[parent.index as usize] = rank[v];
                        parent.root = false;
                    }
                }
            }
        }
        // Measured peak: the rank array, Pearce's stack and the DFS frames.
        let peak = 4 * size + 4 * most_finished + std::mem::size_of::<Frame>() * deepest;
        self.stats.scc_memory_bytes_per_position = peak as f64 / size as f64;
        // Renumber in finishing order and group the members.
        for r in rank.iter_mut() {
            if *r != NONE {
                *r = size as u32 - 1 - *r;
            }
        }
        let components = Components::from_ids(rank);
        self.record_component_stats(&components);
        components
    }

    fn record_component_stats(&mut self, components: &Components) {
        let mut parity = vec![0u8; 0];
        for k in 0..components.count() {
            let members = components.of(k);
            if members.len() < 2 {
                continue;
            }
            let odd = has_odd_cycle(self.n, members, &components.id, k as u32, &mut parity);
            let s = &mut self.stats.components;
            s.cycle_components += 1;
            s.positions_on_cycles += members.len() as u64;
            s.largest = s.largest.max(members.len() as u64);
            s.game_state_components += if odd { 1 } else { 2 };
            s.largest_game_state = s.largest_game_state.max(if odd { 2 } else { 1 } * members.len() as u64);
            *s.size_histogram.entry(size_class(members.len())).or_default() += 1;
        }
    }
}

/// "1", "2-9", "10-99", … for the component size report.
fn size_class(size: usize) -> String {
    let mut low = 1usize;
    while low * 10 <= size {
        low *= 10;
    }
    if low == 1 {
        format!("{size}")
    } else {
        format!("{low}-{}", low * 10 - 1)
    }
}

/// Does the strongly connected component `k` hold a cycle of odd length?
/// It does exactly when no labelling by ply parity is consistent along
/// every edge.
fn has_odd_cycle(n: u32, members: &[u32], id: &[u32], k: u32, parity: &mut Vec<u8>) -> bool {
    parity.clear();
    parity.resize(members.len(), 0);
    let local = |index: usize| members.binary_search(&(index as u32)).ok();
    let mut queue = VecDeque::from([(0usize, 1u8)]);
    parity[0] = 1;
    while let Some((at, colour)) = queue.pop_front() {
        let position = position_in_layer(n, members[at] as u64).expect("member of the layer");
        for pit in position.legal_moves() {
            let played = position.play(pit);
            if played.captured > 0 {
                continue;
            }
            let w = layer_index(&played.child) as usize;
            if id[w] != k {
                continue;
            }
            let j = local(w).expect("member");
            if parity[j] == 0 {
                parity[j] = 3 - colour;
                queue.push_back((j, 3 - colour));
            } else if parity[j] == colour {
                return true;
            }
        }
    }
    false
}

/// Positions of the members of a component, in member order. Small
/// components keep them (16 bytes each); a giant one (at 24 seeds, some 380
/// million positions) unranks one on demand and walks the layer in index
/// order to visit them all, so it costs no memory.
pub(crate) struct MemberPositions<'a> {
    n: u32,
    members: &'a [u32],
    stored: Option<Vec<Position>>,
}

/// Components up to this size keep their positions in memory.
const STORE_LIMIT: usize = 1 << 22;

impl<'a> MemberPositions<'a> {
    pub fn new(n: u32, members: &'a [u32]) -> MemberPositions<'a> {
        MemberPositions::with_limit(n, members, STORE_LIMIT)
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

    pub fn len(&self) -> usize {
        self.members.len()
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

#[cfg(test)]
mod tests {
    use super::*;

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

    fn layer_size_u32(n: u32) -> u32 {
        crate::rank::layer_size(n) as u32
    }
}
