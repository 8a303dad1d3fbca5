//! The cycle components of a graph, sinks first, on every thread:
//! trimming, forward–backward splits, and Pearce's algorithm for the small
//! parts. `docs/cycle-bounds.md` §9 proves what this module relies on.
//!
//! 1. **Trimming.** A node with no parent left in its part, or no child,
//!    lies on no cycle of the part; removing it may expose more. Both are
//!    peeled to a fixpoint with a counter per node.
//! 2. **Forward–backward.** From a pivot, the nodes it reaches (F); among
//!    them, those that reach it: its component S. F \ S and the rest are
//!    two parts with no component in common, each split the same way, in
//!    the order F \ S, S, rest, which puts every component after those it
//!    reaches.
//! 3. **Pearce.** Parts of at most `pearce_up_to` nodes go to Pearce's
//!    space-efficient variant of Tarjan's algorithm ("A space-efficient
//!    algorithm for finding strongly connected components", 2016),
//!    iterative, all such parts at once on every thread.
//!
//! Steps 1 and 2 run frontier by frontier on every thread with a label per
//! node (4 bytes) and a counter (1 byte). Which thread relabels a node
//! changes nothing, so the components and their order are the same for any
//! thread count.

use std::ops::Range;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8};

use rayon::prelude::*;

use super::frontier::Frontier;
use crate::progress::Observer;
use crate::text::thousands;

/// Marks a node in no cycle component (or outside the graph).
pub(crate) const NONE: u32 = u32::MAX;

/// The label of the nodes to split, before the first split.
pub(crate) const TO_SPLIT: u32 = 1 << 31;

/// A graph of nodes numbered `0..size()`.
pub(crate) trait SplitGraph: Sync {
    /// A node with what it takes to find its neighbours quickly.
    type Node: Copy + Send + Sync;
    fn size(&self) -> usize;
    fn index(&self, node: &Self::Node) -> usize;
    fn node(&self, index: usize) -> Self::Node;
    /// Calls `visit(index, node)` for the nodes of `range`, in order.
    fn walk(&self, range: Range<usize>, visit: impl FnMut(usize, Self::Node));
    /// Calls `visit(index, node)` for the nodes of `indexes` (sorted).
    fn walk_sorted(&self, indexes: &[u32], mut visit: impl FnMut(usize, Self::Node)) {
        indexes.iter().for_each(|&i| visit(i as usize, self.node(i as usize)));
    }
    fn for_each_child(&self, node: &Self::Node, visit: impl FnMut(Self::Node));
    fn for_each_parent(&self, node: &Self::Node, visit: impl FnMut(Self::Node));
}

/// What the split found.
pub(crate) struct CycleComponents {
    /// Component of every node, numbered sinks first (a component's
    /// number is above that of every other component it reaches); `NONE`
    /// for nodes on no cycle.
    pub id: Vec<u32>,
    /// Per component: whether it holds a cycle of odd length.
    pub odd: Vec<bool>,
}

/// The cycle components among the nodes labelled [`TO_SPLIT`] in `labels`
/// (the others `NONE`): components of two nodes or more, and single nodes
/// with a move to themselves.
pub(crate) fn cycle_components<G: SplitGraph>(
    graph: &G,
    labels: Vec<AtomicU32>,
    pearce_up_to: usize,
    progress: &dyn Observer,
    what: &str,
) -> CycleComponents {
    let size = graph.size();
    // Labels count up from TO_SPLIT + 1, two per split, at most one split
    // per node (each settles its pivot), and stay below NONE.
    assert!(size < (1 << 30) - 1, "graph too large for 32-bit labels");
    let mut finder = Finder {
        graph,
        labels,
        degree: (0..size).into_par_iter().map(|_| AtomicU8::new(0)).collect(),
        next_label: TO_SPLIT + 1,
        pearce_up_to,
        progress,
        what,
    };
    let pieces = finder.split_all();
    progress.detail(&format!("{what}: components of the small parts"));
    let found: Vec<Found> = pieces
        .into_par_iter()
        .map(|piece| match piece {
            Piece::Component { label, odd } => Found::Labelled { label, odd },
            Piece::Small { members, label } => Found::Listed(finder.pearce(&members, label)),
        })
        .collect();
    // Numbers in order. A label maps to its component, or to NONE (parts
    // trimmed away or handed to Pearce); Pearce's lists are numbered after.
    let mut number = vec![NONE; (finder.next_label - TO_SPLIT) as usize];
    let mut odd = Vec::new();
    for piece in &found {
        match piece {
            Found::Labelled { label, odd: o } => {
                number[(label - TO_SPLIT) as usize] = odd.len() as u32;
                odd.push(*o);
            }
            Found::Listed(lists) => odd.extend(lists.iter().map(|(_, o)| *o)),
        }
    }
    drop(finder.degree);
    let mut id: Vec<u32> = finder.labels.into_iter().map(AtomicU32::into_inner).collect();
    id.par_iter_mut().for_each(|label| {
        if *label != NONE {
            *label = number[(*label - TO_SPLIT) as usize];
        }
    });
    let mut next = 0u32;
    for piece in found {
        match piece {
            Found::Labelled { .. } => next += 1,
            Found::Listed(lists) => {
                for (members, _) in lists {
                    members.iter().for_each(|&m| id[m as usize] = next);
                    next += 1;
                }
            }
        }
    }
    CycleComponents { id, odd }
}

/// Nodes a thread takes at a time when it walks the graph.
const WALK_CHUNK: usize = 1 << 14;

/// Frontier nodes a thread takes at a time.
const FRONTIER_CHUNK: usize = 1 << 10;

/// Moves a pivot walks inside its part before it settles.
const PIVOT_WALK: usize = 1 << 10;

/// A counter that has overflowed: never decremented, so its node is never
/// trimmed (trimming is only a shortcut; the splits find the rest).
const STUCK: u8 = u8::MAX;

/// What the split leaves, in component order.
enum Piece {
    /// A cycle component: the nodes labelled `label`.
    Component { label: u32, odd: bool },
    /// A small part for Pearce's algorithm.
    Small { members: Vec<u32>, label: u32 },
}

/// A piece's components: a labelled one, or Pearce's lists (each sorted,
/// with whether it holds an odd cycle), sinks first.
enum Found {
    Labelled { label: u32, odd: bool },
    Listed(Vec<(Vec<u32>, bool)>),
}

/// Work on the stack of the split.
enum Task {
    /// Split the part `label`, trimmed first or not.
    Split {
        label: u32,
        trim: bool,
    },
    Emit(Piece),
}

struct Finder<'s, G: SplitGraph> {
    graph: &'s G,
    /// Per node: the label of its part, a component's label once the part
    /// is one, `NONE` once trimmed (or from the start).
    labels: Vec<AtomicU32>,
    /// Per node: parents or children left in its part while trimming;
    /// for a component's members, the parity of their distance to the
    /// pivot.
    degree: Vec<AtomicU8>,
    next_label: u32,
    pearce_up_to: usize,
    progress: &'s dyn Observer,
    what: &'s str,
}

impl<G: SplitGraph> Finder<'_, G> {
    fn new_label(&mut self) -> u32 {
        let label = self.next_label;
        // (Two labels per split, each split settles at least its pivot, and
        // the graph has fewer than 2^30 - 1 nodes: this cannot fail.)
        assert!(label < NONE, "component labels exhausted");
        self.next_label += 1;
        label
    }

    #[inline]
    fn label(&self, index: usize) -> u32 {
        self.labels[index].load(Relaxed)
    }

    /// Splits the nodes to split down to cycle components and small parts,
    /// in component order.
    fn split_all(&mut self) -> Vec<Piece> {
        let mut pieces = Vec::new();
        // (The whole graph is not trimmed first: after retrograde analysis
        // no undecided position is childless and few are on no cycle; those
        // few are trimmed from the parts the first split leaves.)
        let mut stack = vec![Task::Split { label: TO_SPLIT, trim: false }];
        while let Some(task) = stack.pop() {
            let (label, trim) = match task {
                Task::Emit(piece) => {
                    pieces.push(piece);
                    continue;
                }
                Task::Split { label, trim } => (label, trim),
            };
            let mut count = self.count(label);
            if count > self.pearce_up_to && trim {
                count = self.trim(label, count);
            }
            if count == 0 {
                continue;
            }
            if count <= self.pearce_up_to {
                pieces.push(Piece::Small { members: self.collect(label), label });
                continue;
            }
            let (reached, component) = self.forward_backward(label, count);
            // Sinks first: what the pivot reaches, its component, the rest.
            stack.push(Task::Split { label, trim: true });
            if let Some(piece) = component {
                stack.push(Task::Emit(piece));
            }
            stack.push(Task::Split { label: reached, trim: true });
        }
        pieces
    }

    /// Nodes labelled `label`.
    fn count(&self, label: u32) -> usize {
        self.labels.par_iter().filter(|l| l.load(Relaxed) == label).count()
    }

    /// The indexes labelled `label`, in order.
    fn collect(&self, label: u32) -> Vec<u32> {
        self.labels
            .par_iter()
            .enumerate()
            .filter(|(_, l)| l.load(Relaxed) == label)
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// Calls `visit` for every node labelled `label` (on every thread) and
    /// gathers what it pushes.
    fn walk<T: Send>(&self, label: u32, visit: impl Fn(usize, &G::Node, &mut Vec<T>) + Sync) -> Vec<T> {
        let size = self.graph.size();
        (0..size.div_ceil(WALK_CHUNK))
            .into_par_iter()
            .flat_map_iter(|c| {
                let range = c * WALK_CHUNK..((c + 1) * WALK_CHUNK).min(size);
                let mut out = Vec::new();
                if self.labels[range.clone()].iter().any(|l| l.load(Relaxed) == label) {
                    self.graph.walk(range, |i, node| {
                        if self.label(i) == label {
                            visit(i, &node, &mut out);
                        }
                    });
                }
                out.into_iter()
            })
            .collect()
    }

    /// Takes one from a trimming counter; true when it reaches zero.
    #[inline]
    fn release(&self, index: usize) -> bool {
        let previous =
            self.degree[index].fetch_update(Relaxed, Relaxed, |d| (d != STUCK && d > 0).then(|| d - 1));
        previous == Ok(1)
    }

    /// Removes from part `label` its nodes with no parent in it, then those
    /// with no child in it, each to a fixpoint; returns how many are left.
    fn trim(&self, label: u32, count: usize) -> usize {
        self.progress.detail(&format!(
            "{}: components: trimming {} positions",
            self.what,
            thousands(count as u64)
        ));
        // (Removing a node with no parent takes no child from a node that
        // stays, and removing one with no child no parent: one pass each.)
        for forward in [true, false] {
            // Count each node's parents (forward) or children in the part,
            // then peel those with none, and what that frees.
            self.walk(label, |i, node, _: &mut Vec<()>| {
                let mut degree = 0u32;
                let mut seen =
                    |relative: G::Node| degree += (self.label(self.graph.index(&relative)) == label) as u32;
                if forward {
                    self.graph.for_each_parent(node, &mut seen);
                } else {
                    self.graph.for_each_child(node, &mut seen);
                }
                self.degree[i].store(degree.min(STUCK as u32) as u8, Relaxed);
            });
            let mut frontier = self.walk(label, |i, _, out| {
                if self.degree[i].load(Relaxed) == 0 {
                    self.labels[i].store(NONE, Relaxed);
                    out.push(i as u32);
                }
            });
            while !frontier.is_empty() {
                frontier = self.expand(frontier, forward, |index| {
                    self.label(index) == label && self.release(index) && {
                        self.labels[index].store(NONE, Relaxed);
                        true
                    }
                });
            }
        }
        self.count(label)
    }

    /// The next frontier: the children (`forward`) or parents of the nodes
    /// of `frontier` that `take` claims (it must claim each at most once),
    /// sorted. (Frontiers hold indexes, 4 bytes a node, and are walked in
    /// order: a frontier can hold a fifth of a layer.)
    fn expand(&self, frontier: Vec<u32>, forward: bool, take: impl Fn(usize) -> bool + Sync) -> Vec<u32> {
        let next = Frontier::new(frontier).expand(FRONTIER_CHUNK, |chunk, out| {
            self.graph.walk_sorted(chunk, |_, node| {
                let mut offer = |relative: G::Node| {
                    let index = self.graph.index(&relative);
                    if take(index) {
                        out.push(index as u32);
                    }
                };
                if forward {
                    self.graph.for_each_child(&node, &mut offer);
                } else {
                    self.graph.for_each_parent(&node, &mut offer);
                }
            })
        });
        let mut next = next.into_vec();
        next.par_sort_unstable();
        next
    }

    /// A pivot for part `label`: the end of a walk along moves inside the
    /// part from its first node. Any member would do; one met after a long
    /// walk tends to lie in the component most nodes flow into, the one
    /// worth finding first.
    fn pivot(&self, label: u32) -> usize {
        let first = self.labels.par_iter().position_first(|l| l.load(Relaxed) == label).expect("a member");
        let mut at = first;
        for _ in 0..PIVOT_WALK {
            let mut next = None;
            self.graph.for_each_child(&self.graph.node(at), |child| {
                let index = self.graph.index(&child);
                if next.is_none() && self.label(index) == label {
                    next = Some(index);
                }
            });
            match next {
                Some(index) => at = index,
                None => break,
            }
        }
        at
    }

    /// Relabels, from a pivot of part `label`, the nodes it reaches and
    /// among them its component; leaves the rest labelled `label`. Returns
    /// the label of the nodes it reaches outside its component, and the
    /// component unless that holds no cycle.
    fn forward_backward(&mut self, label: u32, count: usize) -> (u32, Option<Piece>) {
        let (reached, component) = (self.new_label(), self.new_label());
        let pivot = self.pivot(label);
        let start = self.graph.node(pivot);
        // (A read first: most nodes are met again after they are claimed,
        // and a failed exchange costs more than a read.)
        let claim = |index: usize, from: u32, to: u32| {
            self.labels[index].load(Acquire) == from
                && self.labels[index].compare_exchange(from, to, Release, Relaxed).is_ok()
        };
        let count = thousands(count as u64);
        self.progress.detail(&format!("{}: components: forward in {count} positions", self.what));
        self.labels[pivot].store(reached, Relaxed);
        let mut frontier = vec![pivot as u32];
        while !frontier.is_empty() {
            frontier = self.expand(frontier, true, |index| claim(index, label, reached));
        }
        // Backward inside what was reached: what reaches the pivot is its
        // component. A member keeps the parity of its distance to the
        // pivot, written before it is claimed (so whoever sees the claim
        // sees the parity); a move between two members of the same parity
        // means an odd cycle.
        self.progress.detail(&format!("{}: components: backward in {count} positions", self.what));
        self.degree[pivot].store(0, Relaxed);
        self.labels[pivot].store(component, Release);
        let odd = AtomicBool::new(false);
        let mut frontier = vec![pivot as u32];
        let mut parity = 0u8;
        while !frontier.is_empty() {
            frontier = self.expand(frontier, false, |index| {
                let found = self.labels[index].load(Acquire);
                if found == component {
                    if self.degree[index].load(Relaxed) == parity {
                        odd.store(true, Relaxed);
                    }
                    return false;
                }
                if found != reached {
                    return false;
                }
                self.degree[index].store(parity ^ 1, Relaxed);
                claim(index, reached, component)
            });
            parity ^= 1;
        }
        // A cycle through the pivot exists exactly when one of its children
        // is in its component (itself, for a one-node cycle).
        let mut cycle = false;
        self.graph.for_each_child(&start, |child| cycle |= self.label(self.graph.index(&child)) == component);
        let piece = cycle.then(|| Piece::Component { label: component, odd: odd.into_inner() });
        (reached, piece)
    }

    /// The cycle components of a small part, sinks first, by Pearce's
    /// algorithm on the part alone (local numbers, local arrays).
    fn pearce(&self, members: &[u32], label: u32) -> Vec<(Vec<u32>, bool)> {
        let m = members.len();
        let local = |index: usize| members.binary_search(&(index as u32)).expect("member of the part");
        // Children of a node inside the part, as local numbers.
        let children = |v: usize, out: &mut Vec<u32>| {
            self.graph.for_each_child(&self.graph.node(members[v] as usize), |child| {
                let index = self.graph.index(&child);
                if self.label(index) == label {
                    out.push(local(index) as u32);
                }
            });
        };
        let mut rank = vec![0u32; m];
        // Ranks count up from 1 while active; finished components count
        // down from m - 1. Both stay below u32::MAX and never meet (Pearce).
        let mut next_rank = 1u32;
        let mut next_component = m as u32 - 1;
        let mut finished: Vec<u32> = Vec::new();
        // Frames: node, where its children start on `pending`, root flag.
        let mut frames: Vec<(u32, usize, bool)> = Vec::new();
        let mut pending: Vec<u32> = Vec::new();
        for start in 0..m {
            if rank[start] != 0 {
                continue;
            }
            rank[start] = next_rank;
            next_rank += 1;
            frames.push((start as u32, pending.len(), true));
            children(start, &mut pending);
            while let Some(&mut (v, first_child, ref mut root)) = frames.last_mut() {
                let v = v as usize;
                if pending.len() > first_child {
                    let w = pending.pop().expect("a child") as usize;
                    if rank[w] == 0 {
                        rank[w] = next_rank;
                        next_rank += 1;
                        frames.push((w as u32, pending.len(), true));
                        children(w, &mut pending);
                    } else if rank[w] < rank[v] {
                        rank[v] = rank[w];
                        *root = false;
                    }
                    continue;
                }
                let root = *root;
                frames.pop();
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
                    next_component = next_component.wrapping_sub(1);
                } else {
                    finished.push(v as u32);
                }
                if let Some((parent, _, parent_root)) = frames.last_mut() {
                    if rank[v] < rank[*parent as usize] {
                        rank[*parent as usize] = rank[v];
                        *parent_root = false;
                    }
                }
            }
        }
        // Finishing order (sinks first) is decreasing component number.
        let count = (m as u32 - 1).wrapping_sub(next_component) as usize;
        let mut groups: Vec<Vec<u32>> = vec![Vec::new(); count];
        for (v, &r) in rank.iter().enumerate() {
            groups[(m as u32 - 1 - r) as usize].push(v as u32);
        }
        let mut out = Vec::new();
        let mut seen = Vec::new();
        for group in groups {
            // Two-colour the component along moves from its first node.
            let mut colour = vec![u8::MAX; group.len()];
            let inside = |v: u32| group.binary_search(&v).ok();
            colour[0] = 0;
            let mut queue = vec![0usize];
            let (mut cycle, mut odd) = (group.len() > 1, false);
            while let Some(at) = queue.pop() {
                seen.clear();
                children(group[at] as usize, &mut seen);
                for &w in &seen {
                    let Some(j) = inside(w) else { continue };
                    cycle |= j == at;
                    if colour[j] == u8::MAX {
                        colour[j] = colour[at] ^ 1;
                        queue.push(j);
                    } else {
                        odd |= colour[j] == colour[at];
                    }
                }
            }
            if cycle {
                out.push((group.into_iter().map(|v| members[v as usize]).collect(), odd));
            }
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::progress::SILENT;

    /// The cycle components by Kosaraju's algorithm, written separately as
    /// the oracle: each sorted, with whether it holds an odd cycle, sinks
    /// first (one order among others).
    pub(crate) fn kosaraju<G: SplitGraph>(graph: &G, inside: &[bool]) -> Vec<(Vec<u32>, bool)> {
        let size = graph.size();
        let children = |i: usize| {
            let mut out = Vec::new();
            graph.for_each_child(&graph.node(i), |c| out.push(graph.index(&c)));
            out.retain(|&c| inside[c]);
            out
        };
        let parents = |i: usize| {
            let mut out = Vec::new();
            graph.for_each_parent(&graph.node(i), |p| out.push(graph.index(&p)));
            out.retain(|&p| inside[p]);
            out
        };
        // Finishing order of a depth-first search along moves.
        let mut seen = vec![false; size];
        let mut order = Vec::new();
        for root in (0..size).filter(|&i| inside[i]) {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            let mut stack = vec![(root, children(root), 0usize)];
            while let Some((v, next, at)) = stack.last_mut() {
                if let Some(&w) = next.get(*at) {
                    *at += 1;
                    if !seen[w] {
                        seen[w] = true;
                        stack.push((w, children(w), 0));
                    }
                } else {
                    order.push(*v);
                    stack.pop();
                }
            }
        }
        // Components along parents, in reverse finishing order: sources
        // first, so reversed at the end.
        let mut component = vec![usize::MAX; size];
        let mut found = Vec::new();
        for &root in order.iter().rev() {
            if component[root] != usize::MAX {
                continue;
            }
            let k = found.len();
            component[root] = k;
            let (mut members, mut stack) = (vec![root], vec![root]);
            while let Some(v) = stack.pop() {
                for w in parents(v) {
                    if component[w] == usize::MAX {
                        component[w] = k;
                        members.push(w);
                        stack.push(w);
                    }
                }
            }
            members.sort();
            found.push(members);
        }
        found.reverse();
        found
            .into_iter()
            .filter(|m| m.len() > 1 || children(m[0]).contains(&m[0]))
            .map(|members| {
                let mut colour = std::collections::HashMap::from([(members[0], 0u8)]);
                let (mut queue, mut odd) = (vec![members[0]], false);
                while let Some(v) = queue.pop() {
                    for w in children(v).into_iter().filter(|w| members.binary_search(w).is_ok()) {
                        match colour.get(&w) {
                            None => {
                                colour.insert(w, colour[&v] ^ 1);
                                queue.push(w);
                            }
                            Some(&c) => odd |= c == colour[&v],
                        }
                    }
                }
                (members.into_iter().map(|m| m as u32).collect(), odd)
            })
            .collect()
    }

    /// A graph from edge lists.
    struct Edges {
        children: Vec<Vec<u32>>,
        parents: Vec<Vec<u32>>,
    }

    impl Edges {
        fn new(size: usize, edges: &[(u32, u32)]) -> Edges {
            let (mut children, mut parents) = (vec![Vec::new(); size], vec![Vec::new(); size]);
            for &(a, b) in edges {
                children[a as usize].push(b);
                parents[b as usize].push(a);
            }
            Edges { children, parents }
        }
    }

    impl SplitGraph for Edges {
        type Node = u32;
        fn size(&self) -> usize {
            self.children.len()
        }
        fn index(&self, node: &u32) -> usize {
            *node as usize
        }
        fn node(&self, index: usize) -> u32 {
            index as u32
        }
        fn walk(&self, range: Range<usize>, mut visit: impl FnMut(usize, u32)) {
            range.for_each(|i| visit(i, i as u32));
        }
        fn for_each_child(&self, node: &u32, visit: impl FnMut(u32)) {
            self.children[*node as usize].iter().copied().for_each(visit);
        }
        fn for_each_parent(&self, node: &u32, visit: impl FnMut(u32)) {
            self.parents[*node as usize].iter().copied().for_each(visit);
        }
    }

    /// Checks the split of `graph` (nodes `inside` only) against Kosaraju:
    /// the same components, the same odd ones, and every move between two
    /// components going to an earlier one.
    pub(crate) fn check_split<G: SplitGraph>(graph: &G, inside: &[bool], pearce_up_to: usize) -> usize {
        let labels = inside.iter().map(|&i| AtomicU32::new(if i { TO_SPLIT } else { NONE })).collect();
        let found = cycle_components(graph, labels, pearce_up_to, &SILENT, "test");
        let mut ours: Vec<(Vec<u32>, bool)> = vec![(Vec::new(), false); found.odd.len()];
        for (i, &k) in found.id.iter().enumerate() {
            if k != NONE {
                ours[k as usize].0.push(i as u32);
                ours[k as usize].1 = found.odd[k as usize];
            }
        }
        assert!(ours.iter().all(|(members, _)| !members.is_empty()), "a component without members");
        for (i, &k) in found.id.iter().enumerate() {
            if k != NONE {
                graph.for_each_child(&graph.node(i), |c| {
                    let j = found.id[graph.index(&c)];
                    assert!(j == NONE || j <= k, "component {k} reaches the later {j}");
                });
            }
        }
        let count = ours.len();
        let mut expected = kosaraju(graph, inside);
        ours.sort();
        expected.sort();
        assert_eq!(ours, expected, "Pearce up to {pearce_up_to}");
        count
    }

    /// Random graphs with many components of every kind (chains between
    /// them, self-moves, odd and even cycles), split with every part sent
    /// to Pearce, none, or the small ones, on one thread and four.
    #[test]
    fn the_split_finds_kosarajus_components_in_order() {
        let pools: Vec<rayon::ThreadPool> =
            [1, 4].iter().map(|&t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap()).collect();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut random = |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let (mut components, mut graphs) = (0, 0);
        for _ in 0..60 {
            let size = 2 + random(400) as usize;
            // Clusters with dense edges inside, sparse edges between, and
            // some nodes left out.
            let cluster = 1 + random(12);
            let mut edges = Vec::new();
            for _ in 0..size * (1 + random(3) as usize) {
                let a = random(size as u64);
                let b = if random(5) == 0 {
                    random(size as u64)
                } else {
                    (a / cluster * cluster + random(cluster)).min(size as u64 - 1)
                };
                edges.push((a as u32, b as u32));
            }
            let graph = Edges::new(size, &edges);
            let inside: Vec<bool> = (0..size).map(|_| random(10) != 0).collect();
            for pearce_up_to in [usize::MAX, 0, 5] {
                for pool in &pools {
                    let found = pool.install(|| check_split(&graph, &inside, pearce_up_to));
                    if pearce_up_to == 0 {
                        components += found;
                    }
                }
            }
            graphs += 1;
        }
        assert!(graphs == 60 && components > 1000, "{components} components split");
    }
}
