//! The cycle components of a graph, sinks first, on every thread and, in a
//! distributed build, on every rank: trimming, forward–backward splits, and
//! Pearce's algorithm for the small parts. `docs/cycle-bounds.md` §9 proves
//! what this module relies on; `docs/distributed-build.md` §6 why the ranks
//! find what one process finds.
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
//! Steps 1 and 2 run frontier by frontier with a label per node (4 bytes)
//! and a counter (1 byte); a frontier is a sorted list of nodes, or a bit
//! per node once it is dense ([`Wave`]). Each rank holds the labels and
//! counters of one range of nodes ([`Partition`]); what a frontier has
//! for a node of another range goes to its rank in one message per
//! destination (the node's offset; each message sorted and sent as varint
//! gaps, [`gaps`]), and the holder applies it. Which thread or rank
//! relabels a node changes nothing, so the components and their order are
//! the same for any thread count and any number of ranks. Step 3 runs
//! where all the labels are: one process, or rank 0 once it has gathered
//! them.

use std::ops::Range;
use std::sync::atomic::Ordering::{self, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, AtomicU8};

use rayon::prelude::*;

use crate::cluster::{gaps, Communicator, Partition, Solo, Traffic};
use crate::codec::{DecodeError, Decoder, Encoder};
use crate::memory::prefetch;
use crate::parallel;
use crate::parallel::AtomicTwin;
use crate::progress::Observer;
use crate::text::thousands;

/// Marks a node in no cycle component (or outside the graph).
pub(crate) const NONE: u32 = u32::MAX;

/// Nodes of a frontier whose relatives are prefetched together before
/// any is offered (about 5 relatives a node).
const PREFETCH_NODES: usize = 16;

/// The label of the nodes to split, before the first split.
pub(crate) const TO_SPLIT: u32 = 1 << 31;

/// The width of a label: 4 bytes a node ([`u32`]), or 2 ([`u16`]).
///
/// The split reasons in `u32` labels (`TO_SPLIT`, the parts' labels
/// above it, `NONE`); a word stores one. A `u16` stores a part label as
/// its distance above `TO_SPLIT` and `NONE` as `u16::MAX`, so it holds
/// the labels of 32,767 splits, and the split's steps, which only compare
/// labels and take new ones in order, make the same parts in either
/// width (`docs/cycle-bounds.md` §9, "Labels in two bytes"). After the
/// split the same words hold the component numbers, `NONE` as the
/// largest word.
pub(crate) trait LabelWord:
    AtomicTwin<Atomic: Send + Sync> + Eq + Default + Send + Sync + 'static
{
    /// The last part label the word holds.
    const LAST_LABEL: u32;
    /// Component numbers the word holds: `0..NUMBERS`.
    const NUMBERS: u32;
    fn from_label(label: u32) -> Self;
    fn label(self) -> u32;
    /// Component number `k` (below [`Self::NUMBERS`]) or `NONE`.
    fn from_number(k: u32) -> Self;
    fn number(self) -> u32;
    fn load(cell: &Self::Atomic, order: Ordering) -> Self;
    fn store(cell: &Self::Atomic, word: Self, order: Ordering);
    fn compare_exchange(cell: &Self::Atomic, from: Self, to: Self) -> bool;
    /// The component numbers of every node, in these words.
    fn into_ids(words: Vec<Self>) -> ComponentIds;
}

impl LabelWord for u32 {
    const LAST_LABEL: u32 = NONE - 1;
    const NUMBERS: u32 = NONE;
    #[inline]
    fn from_label(label: u32) -> u32 {
        label
    }
    #[inline]
    fn label(self) -> u32 {
        self
    }
    #[inline]
    fn from_number(k: u32) -> u32 {
        k
    }
    #[inline]
    fn number(self) -> u32 {
        self
    }
    #[inline]
    fn load(cell: &AtomicU32, order: Ordering) -> u32 {
        cell.load(order)
    }
    #[inline]
    fn store(cell: &AtomicU32, word: u32, order: Ordering) {
        cell.store(word, order)
    }
    #[inline]
    fn compare_exchange(cell: &AtomicU32, from: u32, to: u32) -> bool {
        cell.compare_exchange(from, to, Release, Relaxed).is_ok()
    }
    fn into_ids(words: Vec<u32>) -> ComponentIds {
        ComponentIds::Wide(words)
    }
}

impl LabelWord for u16 {
    const LAST_LABEL: u32 = TO_SPLIT + u16::MAX as u32 - 1;
    const NUMBERS: u32 = u16::MAX as u32;
    #[inline]
    fn from_label(label: u32) -> u16 {
        match label {
            NONE => u16::MAX,
            label => (label - TO_SPLIT) as u16,
        }
    }
    #[inline]
    fn label(self) -> u32 {
        match self {
            u16::MAX => NONE,
            word => TO_SPLIT + word as u32,
        }
    }
    #[inline]
    fn from_number(k: u32) -> u16 {
        match k {
            NONE => u16::MAX,
            k => k as u16,
        }
    }
    #[inline]
    fn number(self) -> u32 {
        match self {
            u16::MAX => NONE,
            k => k as u32,
        }
    }
    #[inline]
    fn load(cell: &AtomicU16, order: Ordering) -> u16 {
        cell.load(order)
    }
    #[inline]
    fn store(cell: &AtomicU16, word: u16, order: Ordering) {
        cell.store(word, order)
    }
    #[inline]
    fn compare_exchange(cell: &AtomicU16, from: u16, to: u16) -> bool {
        cell.compare_exchange(from, to, Release, Relaxed).is_ok()
    }
    fn into_ids(words: Vec<u16>) -> ComponentIds {
        ComponentIds::Narrow(words)
    }
}

/// The component number of every node (`NONE` off the components), in
/// the width the split worked in.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ComponentIds {
    Wide(Vec<u32>),
    Narrow(Vec<u16>),
}

impl ComponentIds {
    pub(crate) fn len(&self) -> usize {
        match self {
            ComponentIds::Wide(ids) => ids.len(),
            ComponentIds::Narrow(ids) => ids.len(),
        }
    }

    /// The component of node `i`, or `NONE`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> u32 {
        match self {
            ComponentIds::Wide(ids) => ids[i],
            ComponentIds::Narrow(ids) => ids[i].number(),
        }
    }

    /// Every node's component in 4 bytes.
    #[cfg(test)]
    pub(crate) fn to_wide(&self) -> Vec<u32> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }
}

/// A graph of nodes numbered `0..size()`.
pub(crate) trait SplitGraph: Sync {
    /// A node with what it takes to find its neighbours quickly.
    type Node: Copy + Send + Sync;
    fn size(&self) -> usize;
    fn index(&self, node: &Self::Node) -> usize;
    fn node(&self, index: usize) -> Self::Node;
    /// Calls `visit(index, node)` for the nodes of `indexes` (sorted).
    fn walk_sorted(&self, indexes: &[u32], mut visit: impl FnMut(usize, Self::Node)) {
        indexes.iter().for_each(|&i| visit(i as usize, self.node(i as usize)));
    }
    fn for_each_child(&self, node: &Self::Node, visit: impl FnMut(Self::Node));
    fn for_each_parent(&self, node: &Self::Node, visit: impl FnMut(Self::Node));
}

/// The split ran out of labels for its parts: every label strictly
/// between [`TO_SPLIT`] and [`NONE`] (2³¹ − 2 of them, two a split) was
/// used. Each split settles at least its pivot, so this needs 2³⁰ − 1
/// splits, each of a part larger than Pearce's share (65,536 positions in
/// a build): no layer of this game has come near it (layer 26, with 722
/// million positions on cycles, needed few); a graph that did would be
/// refused by name rather than split wrongly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelsExhausted {
    /// Splits made when the labels ran out.
    pub splits: u64,
}

impl std::fmt::Display for LabelsExhausted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the component search ran out of part labels after {} splits", self.splits)
    }
}

impl std::error::Error for LabelsExhausted {}

/// What the split found.
pub(crate) struct CycleComponents {
    /// Component of every node, numbered sinks first (a component's
    /// number is above that of every other component it reaches); `NONE`
    /// for nodes on no cycle.
    pub id: ComponentIds,
    /// Per component: whether it holds a cycle of odd length.
    pub odd: Vec<bool>,
}

/// The cycle components among the nodes labelled [`TO_SPLIT`] in `labels`
/// (the others `NONE`): components of two nodes or more, and single nodes
/// with a move to themselves. One process: [`split_labels`] alone, then
/// [`number_components`].
pub(crate) fn cycle_components<G: SplitGraph, W: LabelWord>(
    graph: &G,
    labels: Vec<W::Atomic>,
    pearce_up_to: usize,
    progress: &dyn Observer,
    what: &str,
) -> Result<CycleComponents, LabelsExhausted> {
    cycle_components_up_to::<G, W>(graph, labels, pearce_up_to, progress, what, W::LAST_LABEL)
}

/// [`cycle_components`] with part labels up to `last_label` (tests make
/// it small to run out).
pub(crate) fn cycle_components_up_to<G: SplitGraph, W: LabelWord>(
    graph: &G,
    labels: Vec<W::Atomic>,
    pearce_up_to: usize,
    progress: &dyn Observer,
    what: &str,
    last_label: u32,
) -> Result<CycleComponents, LabelsExhausted> {
    let partition = Partition::new(graph.size() as u64, 1);
    let dense_at = labels.len() / DENSE_FROM;
    let limits = (last_label, dense_at);
    let split =
        split_labels_up_to::<G, W>(&Solo, &partition, graph, labels, pearce_up_to, progress, what, limits)?;
    Ok(number_components(graph, split, progress, what))
}

/// One rank's share of the split: the labels of its range, and what every
/// rank knows alike.
pub(crate) struct SplitLabels<W: LabelWord> {
    /// The final label of every node of the rank's range (the whole graph
    /// for [`number_components`]): a component's label, a small part's
    /// label, or `NONE`.
    pub labels: Vec<W>,
    /// The pieces, in component order (the same on every rank).
    pieces: Vec<Piece>,
    /// Labels used are `TO_SPLIT..next_label`.
    next_label: u32,
    /// The exchanges this rank took part in, and what it sent in them.
    pub traffic: Traffic,
}

/// The cycle components of every rank's range, numbered as
/// [`number_components`] numbers them, without the whole graph's labels:
/// the members of the small parts (few, and small) are gathered to rank 0,
/// which runs Pearce's algorithm on them and tells every rank the cycle
/// components it found. Returns the component of every node of the rank's
/// range (`NONE` off cycles) and, per component, whether it holds an odd
/// cycle. Collective: every rank calls it with its own [`split_labels`].
pub(crate) fn components_across<G: SplitGraph, W: LabelWord>(
    comm: &dyn Communicator,
    partition: &Partition,
    graph: &G,
    split: SplitLabels<W>,
) -> Result<(Vec<u32>, Vec<bool>), DecodeError> {
    let SplitLabels { labels, pieces, next_label, .. } = split;
    let base = partition.range(comm.rank()).start as u32;
    // Small parts by their place among the small parts.
    let mut slot = vec![NONE; (next_label - TO_SPLIT) as usize];
    let mut smalls = 0u32;
    for piece in &pieces {
        if let Piece::Small { label } = piece {
            slot[(label - TO_SPLIT) as usize] = smalls;
            smalls += 1;
        }
    }
    let small_slot = |label: u32| if label == NONE { NONE } else { slot[(label - TO_SPLIT) as usize] };
    let mut mine = Encoder::default();
    for (offset, &label) in labels.iter().enumerate() {
        let s = small_slot(label.label());
        if s != NONE {
            mine.u32(s);
            mine.u32(base + offset as u32);
        }
    }
    // Rank 0: every small part's members (sorted: ranks hold increasing
    // ranges), Pearce's components, and the numbering of all components.
    let told = comm.gather(mine.bytes).map(|parts| {
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); smalls as usize];
        for part in &parts {
            for pair in part.chunks_exact(8) {
                let s = u32::from_le_bytes(pair[..4].try_into().expect("four bytes")) as usize;
                let index = u32::from_le_bytes(pair[4..].try_into().expect("four bytes"));
                if let Some(list) = members.get_mut(s) {
                    list.push(index);
                }
            }
        }
        let lists: Vec<Vec<(Vec<u32>, bool)>> =
            parallel::map_indexes(members.len(), &|s| pearce(graph, &members[s]));
        // Per small part in order: its cycle components, each with whether
        // it holds an odd cycle and its members.
        let mut e = Encoder::default();
        for found in &lists {
            e.u64(found.len() as u64);
            for (list, odd) in found {
                e.u8(*odd as u8);
                e.words(list);
            }
        }
        e.bytes
    });
    let told = comm.broadcast(told.unwrap_or_default());
    // Every rank numbers the components in piece order, as
    // `number_components` does.
    let read = |e: DecodeError| DecodeError::Invalid(format!("rank 0's components of the small parts: {e}"));
    let mut d = Decoder::new(&told);
    let mut number = vec![NONE; (next_label - TO_SPLIT) as usize];
    let mut odd = Vec::new();
    let mut listed: Vec<(u32, Vec<u32>)> = Vec::new();
    for piece in &pieces {
        match piece {
            Piece::Component { label, odd: o } => {
                number[(label - TO_SPLIT) as usize] = odd.len() as u32;
                odd.push(*o);
            }
            Piece::Small { .. } => {
                for _ in 0..d.u64().map_err(read)? {
                    let o = d.u8().map_err(read)? == 1;
                    listed.push((odd.len() as u32, d.words().map_err(read)?));
                    odd.push(o);
                }
            }
        }
    }
    d.finish().map_err(read)?;
    let mut ids: Vec<u32> = parallel::fill_chunks(labels.len(), WALK_CHUNK, &|start, ids| {
        for (id, &label) in ids.iter_mut().zip(&labels[start..]) {
            *id = match label.label() {
                NONE => NONE,
                label => number[(label - TO_SPLIT) as usize],
            };
        }
    });
    let range = partition.range(comm.rank());
    for (k, list) in listed {
        for index in list.into_iter().filter(|&i| range.contains(&(i as u64))) {
            ids[(index - base) as usize] = k;
        }
    }
    Ok((ids, odd))
}

/// Splits the nodes labelled [`TO_SPLIT`] down to cycle components and
/// small parts. Collective: every rank of `comm` calls it with the labels
/// of its range of `partition` (`partition.range(comm.rank())`).
pub(crate) fn split_labels<G: SplitGraph, W: LabelWord>(
    comm: &dyn Communicator,
    partition: &Partition,
    graph: &G,
    labels: Vec<W::Atomic>,
    pearce_up_to: usize,
    progress: &dyn Observer,
    what: &str,
) -> Result<SplitLabels<W>, LabelsExhausted> {
    let dense_at = labels.len() / DENSE_FROM;
    split_labels_up_to(
        comm,
        partition,
        graph,
        labels,
        pearce_up_to,
        progress,
        what,
        (W::LAST_LABEL, dense_at),
    )
}

/// [`split_labels`] with part labels up to `last_label` (tests make it
/// small to run out) and frontiers of `dense_at` nodes or more making the
/// next as bits (tests try both forms on every step).
// (The arguments of `split_labels`, and the limits.)
#[allow(clippy::too_many_arguments)]
fn split_labels_up_to<G: SplitGraph, W: LabelWord>(
    comm: &dyn Communicator,
    partition: &Partition,
    graph: &G,
    labels: Vec<W::Atomic>,
    pearce_up_to: usize,
    progress: &dyn Observer,
    what: &str,
    (last_label, dense_at): (u32, usize),
) -> Result<SplitLabels<W>, LabelsExhausted> {
    // (Labels count up from TO_SPLIT + 1, two a split, and stay below
    // NONE: `new_label` refuses to go past `last_label`. Every rank makes
    // the same splits, so all of them run out at the same one.)
    let window = partition.range(comm.rank());
    assert_eq!(labels.len() as u64, window.end - window.start, "labels of the rank's range");
    let traffic_before = comm.traffic();
    let mut finder = Finder::<G, W> {
        graph,
        partition: *partition,
        base: window.start as usize,
        degree: parallel::atomics(vec![0u8; labels.len()]),
        labels,
        next_label: TO_SPLIT + 1,
        last_label: last_label.min(W::LAST_LABEL),
        splits: 0,
        dense_at,
        pearce_up_to,
        progress,
        what,
    };
    let pieces = finder.split_all(comm)?;
    Ok(SplitLabels {
        labels: parallel::plain(finder.labels),
        pieces,
        next_label: finder.next_label,
        traffic: comm.traffic().since(traffic_before),
    })
}

/// The cycle components from the labels of the whole graph
/// (`split.labels`, every rank's range in order): the small parts go to
/// Pearce's algorithm, and everything is numbered in component order.
pub(crate) fn number_components<G: SplitGraph, W: LabelWord>(
    graph: &G,
    split: SplitLabels<W>,
    progress: &dyn Observer,
    what: &str,
) -> CycleComponents {
    let batch_at_most = (split.labels.len() / SMALL_BATCHES).max(1 << 16);
    number_components_in_batches(graph, split, progress, what, batch_at_most)
}

/// [`number_components`], the small parts' members listed in batches of
/// at most `batch_at_most` (or one part): the batches change no number.
fn number_components_in_batches<G: SplitGraph, W: LabelWord>(
    graph: &G,
    split: SplitLabels<W>,
    progress: &dyn Observer,
    what: &str,
    batch_at_most: usize,
) -> CycleComponents {
    let SplitLabels { labels: id, pieces, next_label, .. } = split;
    assert_eq!(id.len(), graph.size(), "the labels of the whole graph");
    progress.detail(&format!("{what}: components of the small parts"));
    // The members of every small part, each list sorted, in one pass.
    let mut slot = vec![NONE; (next_label - TO_SPLIT) as usize];
    let mut smalls = 0usize;
    for piece in &pieces {
        if let Piece::Small { label } = piece {
            slot[(label - TO_SPLIT) as usize] = smalls as u32;
            smalls += 1;
        }
    }
    // (Counted, then filled, in walks over the labels: a list of (part,
    // node) pairs would take 8 bytes more a member of the small parts,
    // which at layer 20 hold a tenth of the layer and made the search's
    // peak. Filled a batch of parts at a time, each batch at most
    // 1/SMALL_BATCHES of the graph: at layer 26 the members of every small
    // part at once, 4 bytes each, took 0.8 bytes a position beside the
    // labels, the search's peak.)
    let small_part = |label: W| match label.label() {
        NONE => None,
        label => Some(slot[(label - TO_SPLIT) as usize]).filter(|&s| s != NONE),
    };
    let mut starts = vec![0usize; smalls + 1];
    id.iter().filter_map(|&label| small_part(label)).for_each(|s| starts[s as usize + 1] += 1);
    (0..smalls).for_each(|s| starts[s + 1] += starts[s]);
    let mut lists: Vec<Vec<(Vec<u32>, bool)>> = Vec::with_capacity(smalls);
    while lists.len() < smalls {
        // Parts `first..end`: one at least, then as many as fit.
        let first = lists.len();
        let end = (first + 1..=smalls).take_while(|&end| starts[end] - starts[first] <= batch_at_most).last();
        let end = end.unwrap_or(first + 1);
        let mut fill: Vec<usize> = starts[first..end].iter().map(|&start| start - starts[first]).collect();
        let mut members = vec![0u32; starts[end] - starts[first]];
        for (i, &label) in id.iter().enumerate() {
            match small_part(label).map(|s| s as usize) {
                Some(s) if (first..end).contains(&s) => {
                    members[fill[s - first]] = i as u32;
                    fill[s - first] += 1;
                }
                _ => {}
            }
        }
        let part = |s: usize| &members[starts[s] - starts[first]..starts[s + 1] - starts[first]];
        lists.extend(parallel::map_indexes(end - first, &|j| pearce(graph, part(first + j))));
    }
    let mut lists = lists.into_iter();
    let found: Vec<Found> = pieces
        .iter()
        .map(|piece| match *piece {
            Piece::Component { label, odd } => Found::Labelled { label, odd },
            Piece::Small { .. } => Found::Listed(lists.next().expect("a list of each small part")),
        })
        .collect();
    // Numbers in order. A label maps to its component, or to NONE (parts
    // trimmed away or handed to Pearce); Pearce's lists are numbered after.
    let mut number = vec![NONE; (next_label - TO_SPLIT) as usize];
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
    // The numbers take the labels' place, in their width if it holds
    // them all (at 2 bytes, 65,535 components: every layer so far has a
    // handful), else in 4 bytes.
    let id = if (odd.len() as u64) < u64::from(W::NUMBERS) {
        W::into_ids(numbered(id, &number, found))
    } else {
        let wide: Vec<u32> = id.iter().map(|&label| label.label()).collect();
        drop(id);
        u32::into_ids(numbered(wide, &number, found))
    };
    CycleComponents { id, odd }
}

/// The labels `id` turned into component numbers in place: a label's
/// component by `number`, then the members of Pearce's lists in order
/// after the labelled components before them (`W` must hold every
/// number).
fn numbered<W: LabelWord>(mut id: Vec<W>, number: &[u32], found: Vec<Found>) -> Vec<W> {
    let none = W::from_label(NONE);
    parallel::for_each_chunk_mut(&mut id, WALK_CHUNK, &|_, labels| {
        for label in labels.iter_mut().filter(|label| **label != none) {
            *label = W::from_number(number[(label.label() - TO_SPLIT) as usize]);
        }
    });
    let mut next = 0u32;
    for piece in found {
        match piece {
            Found::Labelled { .. } => next += 1,
            Found::Listed(lists) => {
                for (members, _) in lists {
                    members.iter().for_each(|&m| id[m as usize] = W::from_number(next));
                    next += 1;
                }
            }
        }
    }
    id
}

/// Nodes a thread takes at a time when it walks the graph.
const WALK_CHUNK: usize = 1 << 14;

/// The small parts' members are listed for Pearce's algorithm a batch of
/// parts at a time, each batch at most this fraction of the graph's nodes
/// (or one part, or 65,536 members): at most 1/8 of a byte a node.
const SMALL_BATCHES: usize = 32;

/// Frontier nodes a thread takes at a time.
const FRONTIER_CHUNK: usize = 1 << 10;

/// Labels counted by one thread at a time (a read each: larger than
/// [`WALK_CHUNK`], so a count over a layer is a few hundred tasks).
const COUNT_CHUNK: usize = 1 << 18;

/// Frontier nodes a rank expands per exchange: what it sends in one
/// exchange stays near 4 × 6 bytes times this (the neighbours' offsets).
const EXCHANGE_SLICE: usize = 1 << 22;

/// A frontier of at least 1/`DENSE_FROM` of a rank's range makes the next
/// one as bits ([`Wave`]): then the list could hold more than 1/16 of a
/// byte a node of the range, six times that with six moves a node, and
/// bits cost 1/8; a scan of the bits per step is a small cost beside
/// the moves of so many nodes.
const DENSE_FROM: usize = 256;

/// Moves a pivot walks inside its part before it settles.
const PIVOT_WALK: usize = 1 << 10;

/// A counter that has overflowed: never decremented, so its node is never
/// trimmed (trimming is only a shortcut; the splits find the rest).
const STUCK: u8 = u8::MAX;

/// A flood's frontier on this rank: the nodes one step reached. Sparse,
/// a sorted list of indexes (4 bytes a node); dense, a bit per node of
/// the rank's range (1/8 byte a node of the range, however many it
/// holds) and how many are set. The forward flood of a giant part has
/// frontiers of a fifth of a layer: as lists, the one walked and the one
/// made (held twice while its pieces are joined) took up to 2.9 bytes a
/// position at layer 20; as bits, 1/4. Either form walks its nodes in
/// order, and the nodes claimed do not depend on the form.
enum Wave {
    List(Vec<u32>),
    Bits(Vec<AtomicU64>, usize),
}

impl Wave {
    /// Nodes in the frontier.
    fn len(&self) -> usize {
        match self {
            Wave::List(list) => list.len(),
            Wave::Bits(_, set) => *set,
        }
    }

    /// The frontier cut into slices of at most [`EXCHANGE_SLICE`] nodes
    /// (and at least one each), each cut into the tasks a thread takes:
    /// ranges of the list, or of the words, of about [`FRONTIER_CHUNK`]
    /// nodes (a sparse stretch of bits is one task, not many empty ones).
    fn slices(&self) -> Vec<Vec<Range<usize>>> {
        let cut = |ranges: Vec<Range<usize>>| -> Vec<Vec<Range<usize>>> {
            let per_slice = EXCHANGE_SLICE / FRONTIER_CHUNK;
            ranges.chunks(per_slice).map(<[Range<usize>]>::to_vec).collect()
        };
        match self {
            Wave::List(list) => cut((0..list.len())
                .step_by(FRONTIER_CHUNK)
                .map(|s| s..(s + FRONTIER_CHUNK).min(list.len()))
                .collect()),
            Wave::Bits(words, _) => {
                let mut tasks = Vec::new();
                let (mut first, mut nodes) = (0, 0);
                for (w, word) in words.iter().enumerate() {
                    let set = word.load(Relaxed).count_ones() as usize;
                    if nodes + set > FRONTIER_CHUNK {
                        tasks.push(first..w);
                        (first, nodes) = (w, 0);
                    }
                    nodes += set;
                }
                if nodes > 0 {
                    tasks.push(first..words.len());
                }
                cut(tasks)
            }
        }
    }
}

/// The nodes whose bits are set in `words`, the first word's bit 0 being
/// node `first`, in order.
fn set_bits(words: &[AtomicU64], first: usize) -> Vec<u32> {
    let mut nodes = Vec::new();
    for (w, word) in words.iter().enumerate() {
        let mut bits = word.load(Relaxed);
        while bits != 0 {
            nodes.push((first + 64 * w + bits.trailing_zeros() as usize) as u32);
            bits &= bits - 1;
        }
    }
    nodes
}

/// What the split leaves, in component order.
enum Piece {
    /// A cycle component: the nodes labelled `label`.
    Component { label: u32, odd: bool },
    /// A small part for Pearce's algorithm: the nodes labelled `label`.
    Small { label: u32 },
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

/// One rank's split. It holds no communicator (threads share it, and a
/// communicator is used by its rank's main thread only): the collective
/// steps take one.
struct Finder<'s, G: SplitGraph, W: LabelWord> {
    graph: &'s G,
    partition: Partition,
    /// The first node of this rank's range.
    base: usize,
    /// Per node of the range: the label of its part, a component's label
    /// once the part is one, `NONE` once trimmed (or from the start).
    labels: Vec<W::Atomic>,
    /// Per node of the range: parents or children left in its part while
    /// trimming; for a component's members, the parity of their distance
    /// to the pivot.
    degree: Vec<AtomicU8>,
    next_label: u32,
    /// The last label a part may get.
    last_label: u32,
    /// Splits made so far.
    splits: u64,
    /// Frontiers of at least this many nodes make the next one as bits.
    dense_at: usize,
    pearce_up_to: usize,
    progress: &'s dyn Observer,
    what: &'s str,
}

impl<G: SplitGraph, W: LabelWord> Finder<'_, G, W> {
    /// The labels of a split's two new parts: what the pivot reaches, and
    /// its component.
    fn new_labels(&mut self) -> Result<(u32, u32), LabelsExhausted> {
        let first = self.next_label;
        if first >= self.last_label {
            return Err(LabelsExhausted { splits: self.splits });
        }
        self.next_label += 2;
        self.splits += 1;
        Ok((first, first + 1))
    }

    /// Whether node `index` is in this rank's range.
    #[inline]
    fn holds(&self, index: usize) -> bool {
        index.wrapping_sub(self.base) < self.labels.len()
    }

    #[inline]
    fn label_cell(&self, index: usize) -> &W::Atomic {
        &self.labels[index - self.base]
    }

    /// Whether node `index` (of this rank) is labelled `label`.
    #[inline]
    fn has_label(&self, index: usize, label: u32) -> bool {
        W::load(self.label_cell(index), Relaxed) == W::from_label(label)
    }

    /// Whether the `j`-th node of this rank's range is labelled `label`.
    #[inline]
    fn has_label_at(&self, j: usize, label: u32) -> bool {
        W::load(&self.labels[j], Relaxed) == W::from_label(label)
    }

    #[inline]
    fn set_label(&self, index: usize, label: u32, order: Ordering) {
        W::store(self.label_cell(index), W::from_label(label), order)
    }

    #[inline]
    fn degree_cell(&self, index: usize) -> &AtomicU8 {
        &self.degree[index - self.base]
    }

    /// Splits the nodes to split down to cycle components and small parts,
    /// in component order. Every rank takes the same decisions, from
    /// counts and answers summed over all of them.
    fn split_all(&mut self, comm: &dyn Communicator) -> Result<Vec<Piece>, LabelsExhausted> {
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
            let mut count = self.count(comm, label);
            if count > self.pearce_up_to && trim {
                count = self.trim(comm, label, count);
            }
            if count == 0 {
                continue;
            }
            if count <= self.pearce_up_to {
                pieces.push(Piece::Small { label });
                continue;
            }
            let (reached, component) = self.forward_backward(comm, label, count)?;
            // Sinks first: what the pivot reaches, its component, the rest.
            stack.push(Task::Split { label, trim: true });
            if let Some(piece) = component {
                stack.push(Task::Emit(piece));
            }
            stack.push(Task::Split { label: reached, trim: true });
        }
        Ok(pieces)
    }

    /// Nodes labelled `label`, on all ranks.
    fn count(&self, comm: &dyn Communicator, label: u32) -> usize {
        let word = W::from_label(label);
        let mine = parallel::sum_chunks(self.labels.len(), COUNT_CHUNK, &|range| {
            self.labels[range].iter().filter(|&l| W::load(l, Relaxed) == word).count() as u64
        });
        comm.sum(mine) as usize
    }

    /// Takes one from a trimming counter; true when it reaches zero.
    #[inline]
    fn release(&self, index: usize) -> bool {
        let previous =
            self.degree_cell(index).fetch_update(Relaxed, Relaxed, |d| (d != STUCK && d > 0).then(|| d - 1));
        previous == Ok(1)
    }

    /// Removes from part `label` its nodes with no parent in it, then those
    /// with no child in it, each to a fixpoint; returns how many are left.
    fn trim(&self, comm: &dyn Communicator, label: u32, count: usize) -> usize {
        self.progress.detail(&format!(
            "{}: components: trimming {} positions",
            self.what,
            thousands(count as u64)
        ));
        // (Removing a node with no parent takes no child from a node that
        // stays, and removing one with no child no parent: one pass each.)
        for forward in [true, false] {
            // Each node's parents (forward) or children in the part: every
            // member counts itself at its children (parents). The counters
            // are cleared before the first exchange, so on every rank.
            let members = self.members(label, count);
            self.expand(comm, &members, (forward, true), |index| {
                if self.has_label(index, label) {
                    let _ = self
                        .degree_cell(index)
                        .fetch_update(Relaxed, Relaxed, |d| (d != STUCK).then(|| d + 1));
                }
                false
            });
            drop(members);
            // Then peel those with none, and what that frees. (The
            // members are the nodes still labelled `label`: counting
            // changes no label. The first nodes peeled as bits: as a list
            // they took up to 0.4 bytes a position at layer 20, the
            // component search's peak.)
            let alone = parallel::bits_where(self.labels.len(), COUNT_CHUNK, &|j| {
                let i = self.base + j;
                let alone = self.has_label(i, label) && self.degree_cell(i).load(Relaxed) == 0;
                if alone {
                    self.set_label(i, NONE, Relaxed);
                }
                alone
            });
            let set = alone.iter().map(|word| word.count_ones() as usize).sum();
            let mut frontier = Wave::Bits(parallel::atomics(alone), set);
            while let Some(next) = self.expand(comm, &frontier, (forward, true), |index| {
                self.has_label(index, label) && self.release(index) && {
                    self.set_label(index, NONE, Relaxed);
                    true
                }
            }) {
                frontier = next;
            }
        }
        self.count(comm, label)
    }

    /// The nodes of this rank labelled `label` (`count` of them on every
    /// rank together), their trimming counters cleared, as a frontier:
    /// bits once they are as many as a dense frontier. (As a list, the
    /// part left beside a giant component at layer 20, a tenth of the
    /// layer, took 4 bytes a node, held twice while its pieces were
    /// joined: the component search's peak.)
    fn members(&self, label: u32, count: usize) -> Wave {
        let member = |j: usize| {
            let member = self.has_label_at(j, label);
            if member {
                self.degree[j].store(0, Relaxed);
            }
            member
        };
        let len = self.labels.len();
        if count < self.dense_at {
            return Wave::List(parallel::collect_chunks(len, WALK_CHUNK, &|range, out| {
                out.extend(range.filter(|&j| member(j)).map(|j| (self.base + j) as u32))
            }));
        }
        let words = parallel::bits_where(len, COUNT_CHUNK, &member);
        let set = words.iter().map(|w| w.count_ones() as usize).sum();
        Wave::Bits(parallel::atomics(words), set)
    }

    /// Offers every child (`forward`) or parent of the nodes of `frontier`
    /// (nodes of this rank) to `take` on the rank that holds it (which
    /// reads the node's label, and its trimming counter if
    /// `touches_counter`: both are prefetched), and
    /// returns the nodes of this rank `take` claimed; `None` when every
    /// rank's frontier is empty (then nothing is exchanged). `take` must
    /// claim a node at most once. Collective; one exchange per slice of
    /// the longest frontier, after one maximum. The frontier is walked in
    /// node order; what is claimed comes back as bits when this frontier
    /// is dense ([`Wave`]), else as a sorted list.
    fn expand(
        &self,
        comm: &dyn Communicator,
        frontier: &Wave,
        (forward, touches_counter): (bool, bool),
        take: impl Fn(usize) -> bool + Sync,
    ) -> Option<Wave> {
        let ranks = comm.ranks();
        let slices = frontier.slices();
        let count = comm.max(slices.len() as u64) as usize;
        if count == 0 {
            return None;
        }
        // (Every rank decides alone: the form changes no node claimed.)
        let bits: Option<Vec<AtomicU64>> = (frontier.len() >= self.dense_at)
            .then(|| parallel::atomics(vec![0u64; self.labels.len().div_ceil(64)]));
        // A node claimed: its bit set, or `Some(node)` for the list.
        let claimed_node = |index: usize| match &bits {
            Some(bits) => {
                let offset = index - self.base;
                bits[offset / 64].fetch_or(1 << (offset % 64), Relaxed);
                None
            }
            None => Some(index as u32),
        };
        let mut claimed = Vec::new();
        for s in 0..count {
            let step = |chunk: &[u32]| {
                let (mut mine, mut outgoing) = (Vec::new(), vec![Vec::new(); ranks]);
                // The relatives of this rank met at the last few nodes,
                // offered once their cells are prefetched: `take` waits
                // for memory at nearly every node it is offered, and a
                // batch of cells on their way waits for all at once. (The
                // order of the offers within a step changes no claim:
                // `take` claims a node at most once, whoever offers it.)
                let mut batch: Vec<usize> = Vec::with_capacity(8 * PREFETCH_NODES);
                let offer_batch = |batch: &mut Vec<usize>, mine: &mut Vec<u32>| {
                    for &index in batch.iter() {
                        if take(index) {
                            mine.extend(claimed_node(index));
                        }
                    }
                    batch.clear();
                };
                let mut nodes = 0;
                self.graph.walk_sorted(chunk, |_, node| {
                    let mut offer = |relative: G::Node| {
                        let index = self.graph.index(&relative);
                        if self.holds(index) {
                            prefetch(self.label_cell(index));
                            if touches_counter {
                                prefetch(self.degree_cell(index));
                            }
                            batch.push(index);
                        } else {
                            let (owner, offset) = self.partition.locate(index as u64);
                            outgoing[owner].push(offset);
                        }
                    };
                    if forward {
                        self.graph.for_each_child(&node, &mut offer);
                    } else {
                        self.graph.for_each_parent(&node, &mut offer);
                    }
                    nodes += 1;
                    if nodes % PREFETCH_NODES == 0 {
                        offer_batch(&mut batch, &mut mine);
                    }
                });
                offer_batch(&mut batch, &mut mine);
                (mine, outgoing)
            };
            // (A rank with fewer slices takes part with nothing. A short
            // slice on one thread: sharing it out costs more. The floods
            // keep rayon's own chain here, not `parallel`'s loops: through
            // those the component search took up to a third longer at
            // layers 17 to 20, all of it in this step; docs/measurements.md,
            // "Parallel loops compiled once".)
            let task = |range: &Range<usize>| match frontier {
                Wave::List(list) => step(&list[range.clone()]),
                Wave::Bits(words, _) => step(&set_bits(&words[range.clone()], self.base + 64 * range.start)),
            };
            let parts: Vec<(Vec<u32>, Vec<Vec<u32>>)> = match slices.get(s).map(Vec::as_slice) {
                None | Some([]) => vec![step(&[])],
                Some([one]) => vec![task(one)],
                Some(tasks) => tasks.par_iter().map(task).collect(),
            };
            let blocks = exchange_parts(comm, parts, &mut claimed);
            let received: Vec<u32> = blocks
                .into_par_iter()
                .flat_map_iter(|block| block.into_iter())
                .filter_map(|offset| {
                    let index = self.base + offset as usize;
                    if take(index) {
                        claimed_node(index)
                    } else {
                        None
                    }
                })
                .collect();
            claimed.extend(received);
        }
        Some(match bits {
            Some(bits) => {
                let set = parallel::sum_chunks(bits.len(), COUNT_CHUNK, &|range| {
                    bits[range].iter().map(|w| w.load(Relaxed).count_ones() as u64).sum()
                });
                Wave::Bits(bits, set as usize)
            }
            None => {
                claimed.par_sort_unstable();
                Wave::List(claimed)
            }
        })
    }

    /// A pivot for part `label`: the end of a walk along moves inside the
    /// part from its first node. Any member would do; one met after a long
    /// walk tends to lie in the component most nodes flow into, the one
    /// worth finding first. Every rank walks: at each step each looks at
    /// the children it holds, and the first child inside the part, in move
    /// order, is found by a minimum over the ranks. The walk stops where
    /// it comes back to a node: it would go round that cycle, inside one
    /// component, and any node of a component gives the split the same
    /// parts (its reach is the component's).
    fn pivot(&self, comm: &dyn Communicator, label: u32) -> usize {
        let word = W::from_label(label);
        let first = self.labels.par_iter().position_first(|l| W::load(l, Relaxed) == word);
        let mut at = comm.min(first.map_or(u64::MAX, |i| (self.base + i) as u64)) as usize;
        let mut children = Vec::new();
        let mut visited = std::collections::HashSet::new();
        for _ in 0..PIVOT_WALK {
            if !visited.insert(at) {
                break;
            }
            children.clear();
            self.graph.for_each_child(&self.graph.node(at), |child| children.push(self.graph.index(&child)));
            let here = children.iter().position(|&i| self.holds(i) && self.has_label(i, label));
            match comm.min(here.map_or(u64::MAX, |k| k as u64)) {
                u64::MAX => break,
                k => at = children[k as usize],
            }
        }
        at
    }

    /// Relabels, from a pivot of part `label`, the nodes it reaches and
    /// among them its component; leaves the rest labelled `label`. Returns
    /// the label of the nodes it reaches outside its component, and the
    /// component unless that holds no cycle.
    fn forward_backward(
        &mut self,
        comm: &dyn Communicator,
        label: u32,
        count: usize,
    ) -> Result<(u32, Option<Piece>), LabelsExhausted> {
        let (reached, component) = self.new_labels()?;
        let pivot = self.pivot(comm, label);
        let start = self.graph.node(pivot);
        let count = thousands(count as u64);
        self.progress.detail(&format!("{}: components: forward in {count} positions", self.what));
        let mut frontier = Wave::List(Vec::new());
        if self.holds(pivot) {
            self.set_label(pivot, reached, Relaxed);
            frontier = Wave::List(vec![pivot as u32]);
        }
        while let Some(next) =
            self.expand(comm, &frontier, (true, false), |index| self.claim(index, label, reached))
        {
            frontier = next;
        }
        // Backward inside what was reached: what reaches the pivot is its
        // component. A member keeps the parity of its distance to the
        // pivot, written before it is claimed (so whoever sees the claim
        // sees the parity); a move between two members of the same parity
        // means an odd cycle.
        self.progress.detail(&format!("{}: components: backward in {count} positions", self.what));
        // (The forward flood ended on an empty frontier.)
        if self.holds(pivot) {
            self.degree_cell(pivot).store(0, Relaxed);
            self.set_label(pivot, component, Release);
            frontier = Wave::List(vec![pivot as u32]);
        }
        let odd = AtomicBool::new(false);
        let mut parity = 0u8;
        while let Some(next) = self.expand(comm, &frontier, (false, true), |index| {
            let found = W::load(self.label_cell(index), Acquire).label();
            if found == component {
                if self.degree_cell(index).load(Relaxed) == parity {
                    odd.store(true, Relaxed);
                }
                return false;
            }
            if found != reached {
                return false;
            }
            self.degree_cell(index).store(parity ^ 1, Relaxed);
            self.claim(index, reached, component)
        }) {
            frontier = next;
            parity ^= 1;
        }
        let odd = comm.any(odd.into_inner());
        // A cycle through the pivot exists exactly when one of its children
        // is in its component (itself, for a one-node cycle).
        let mut cycle = false;
        self.graph.for_each_child(&start, |child| {
            let index = self.graph.index(&child);
            cycle |= self.holds(index) && self.has_label(index, component);
        });
        let piece = comm.any(cycle).then_some(Piece::Component { label: component, odd });
        Ok((reached, piece))
    }

    /// Relabels node `index` from `from` to `to`; true if this call did.
    /// (A read first: most nodes are met again after they are claimed,
    /// and a failed exchange costs more than a read.)
    #[inline]
    fn claim(&self, index: usize, from: u32, to: u32) -> bool {
        let cell = self.label_cell(index);
        let (from, to) = (W::from_label(from), W::from_label(to));
        W::load(cell, Acquire) == from && W::compare_exchange(cell, from, to)
    }
}

/// One step's exchange. Each part of the step (one thread's share) holds
/// what it claimed on this rank, which goes to `claimed`, and per rank
/// `d` the offsets in `d`'s range it has for it, in any order; those go to
/// rank `d` as sorted gaps ([`gaps`]). Returns the offsets every rank sent
/// to this one, in blocks (this rank's own come back as they were sent).
/// Collective: one exchange.
pub(crate) fn exchange_parts<T>(
    comm: &dyn Communicator,
    parts: Vec<(Vec<T>, Vec<Vec<u32>>)>,
    claimed: &mut Vec<T>,
) -> Vec<Vec<u32>> {
    let mut outgoing = vec![Vec::new(); comm.ranks()];
    for (mine, offsets) in parts {
        claimed.extend(mine);
        for (all, offsets) in outgoing.iter_mut().zip(offsets) {
            all.extend_from_slice(&offsets);
        }
    }
    let me = comm.rank();
    let own = std::mem::take(&mut outgoing[me]);
    let messages = outgoing.iter_mut().map(|offsets| gaps::encode(offsets)).collect();
    let incoming = comm.exchange(messages);
    let mut blocks = vec![own];
    for (from, message) in incoming.iter().enumerate() {
        if from != me {
            // (Encoded by this same code on the other rank: a malformed
            // message is a broken transport, not an input to recover from.)
            blocks.extend(gaps::decode(message).unwrap_or_else(|e| panic!("from rank {from}: {e}")));
        }
    }
    blocks
}

/// The cycle components of a small part (its nodes, sorted), sinks first,
/// by Pearce's algorithm on the part alone (local numbers, local arrays).
fn pearce<G: SplitGraph>(graph: &G, members: &[u32]) -> Vec<(Vec<u32>, bool)> {
    let m = members.len();
    let local = |index: usize| members.binary_search(&(index as u32)).ok();
    // Children of a node inside the part, as local numbers.
    let children = |v: usize, out: &mut Vec<u32>| {
        graph.for_each_child(&graph.node(members[v] as usize), |child| {
            if let Some(j) = local(graph.index(&child)) {
                out.push(j as u32);
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
        let found =
            cycle_components::<G, u32>(graph, labels, pearce_up_to, &SILENT, "test").expect("labels enough");
        // Every frontier as bits, or every one as a list: the same labels;
        // and the small parts listed one at a time, or all at once: the
        // same numbers.
        for (dense_at, batch_at_most) in [(0, 1), (usize::MAX, usize::MAX)] {
            let labels = inside.iter().map(|&i| AtomicU32::new(if i { TO_SPLIT } else { NONE })).collect();
            let partition = Partition::new(graph.size() as u64, 1);
            let limits = (NONE - 1, dense_at);
            let split =
                split_labels_up_to(&Solo, &partition, graph, labels, pearce_up_to, &SILENT, "test", limits);
            let split = split.expect("labels enough");
            let other = number_components_in_batches::<G, u32>(graph, split, &SILENT, "test", batch_at_most);
            assert!(other.id == found.id && other.odd == found.odd, "frontiers as bits from {dense_at}");
        }
        // Labels in 2 bytes: the same components, numbered alike.
        let narrow_labels = inside.iter().map(|&i| AtomicU16::new(if i { 0 } else { u16::MAX })).collect();
        let narrow = cycle_components::<G, u16>(graph, narrow_labels, pearce_up_to, &SILENT, "test")
            .expect("labels enough");
        assert!(matches!(narrow.id, ComponentIds::Narrow(_)), "2-byte numbers for a few components");
        assert!(narrow.id.to_wide() == found.id.to_wide() && narrow.odd == found.odd, "labels in 2 bytes");
        let found = CycleComponents { id: ComponentIds::Wide(found.id.to_wide()), odd: found.odd };
        let ComponentIds::Wide(id) = &found.id else { unreachable!("made wide above") };
        let mut ours: Vec<(Vec<u32>, bool)> = vec![(Vec::new(), false); found.odd.len()];
        for (i, &k) in id.iter().enumerate() {
            if k != NONE {
                ours[k as usize].0.push(i as u32);
                ours[k as usize].1 = found.odd[k as usize];
            }
        }
        assert!(ours.iter().all(|(members, _)| !members.is_empty()), "a component without members");
        for (i, &k) in id.iter().enumerate() {
            if k != NONE {
                graph.for_each_child(&graph.node(i), |c| {
                    let j = id[graph.index(&c)];
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
    /// them, self-moves, odd and even cycles), with some nodes left out.
    fn random_graphs(count: usize) -> Vec<(Edges, Vec<bool>)> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut random = |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        (0..count)
            .map(|_| {
                let size = 2 + random(400) as usize;
                // Clusters with dense edges inside, sparse edges between.
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
                let inside = (0..size).map(|_| random(10) != 0).collect();
                (Edges::new(size, &edges), inside)
            })
            .collect()
    }

    /// The split with every part sent to Pearce, none, or the small ones,
    /// on one thread and four, against Kosaraju's components.
    #[test]
    fn the_split_finds_kosarajus_components_in_order() {
        let pools: Vec<rayon::ThreadPool> =
            [1, 4].iter().map(|&t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap()).collect();
        let mut components = 0;
        for (graph, inside) in random_graphs(60) {
            for pearce_up_to in [usize::MAX, 0, 5] {
                for pool in &pools {
                    let found = pool.install(|| check_split(&graph, &inside, pearce_up_to));
                    if pearce_up_to == 0 {
                        components += found;
                    }
                }
            }
        }
        assert!(components > 1000, "{components} components split");
    }

    /// Split across 2, 3 and 5 ranks (threads standing in for them), the
    /// labels gathered and numbered: the very components and numbers of
    /// one process, with traffic between the ranks.
    #[test]
    fn ranks_split_as_one_process_does() {
        let mut sent = 0;
        for (graph, inside) in random_graphs(30) {
            let initial = |range: std::ops::Range<u64>| -> Vec<AtomicU32> {
                range.map(|i| AtomicU32::new(if inside[i as usize] { TO_SPLIT } else { NONE })).collect()
            };
            for pearce_up_to in [0, 5] {
                let alone = cycle_components::<_, u32>(
                    &graph,
                    initial(0..graph.size() as u64),
                    pearce_up_to,
                    &SILENT,
                    "test",
                )
                .expect("labels enough");
                for ranks in [2, 3, 5] {
                    // (Ranks of both parities keep frontiers in both forms.)
                    let splits = crate::cluster::run_ranks(ranks, |comm| {
                        let partition = Partition::new(graph.size() as u64, comm.ranks());
                        let labels = initial(partition.range(comm.rank()));
                        let dense_at = if comm.rank() % 2 == 0 { 0 } else { usize::MAX };
                        let limits = (NONE - 1, dense_at);
                        split_labels_up_to::<_, u32>(
                            comm,
                            &partition,
                            &graph,
                            labels,
                            pearce_up_to,
                            &SILENT,
                            "test",
                            limits,
                        )
                        .expect("labels enough")
                    });
                    sent += splits.iter().map(|s| s.traffic.bytes).sum::<u64>();
                    let exchanges: Vec<u64> = splits.iter().map(|s| s.traffic.exchanges).collect();
                    assert!(exchanges.iter().all(|&e| e == exchanges[0]), "{exchanges:?}");
                    let mut splits = splits.into_iter();
                    let mut whole = splits.next().expect("rank 0");
                    splits.for_each(|s| whole.labels.extend(s.labels));
                    let found = number_components(&graph, whole, &SILENT, "test");
                    assert!(
                        found.id == alone.id && found.odd == alone.odd,
                        "{ranks} ranks, Pearce up to {pearce_up_to}"
                    );
                }
            }
        }
        assert!(sent > 10_000, "{sent} bytes between ranks");
    }

    /// A split that runs out of part labels says so, after as many splits
    /// as the labels allowed, on one process and on every rank alike; with
    /// one more split's labels it goes one split further.
    #[test]
    fn running_out_of_labels_is_an_error_on_every_rank() {
        let (graph, inside) = random_graphs(30)
            .into_iter()
            .max_by_key(|(_, inside)| inside.iter().filter(|&&i| i).count())
            .expect("a graph");
        let initial = |range: std::ops::Range<u64>| -> Vec<AtomicU32> {
            range.map(|i| AtomicU32::new(if inside[i as usize] { TO_SPLIT } else { NONE })).collect()
        };
        // Splits the graph needs with every part split (Pearce's share 0).
        let partition = Partition::new(graph.size() as u64, 1);
        let all = split_labels::<_, u32>(
            &Solo,
            &partition,
            &graph,
            initial(0..graph.size() as u64),
            0,
            &SILENT,
            "test",
        )
        .expect("labels enough");
        let needed = u64::from((all.next_label - TO_SPLIT - 1) / 2);
        assert!(needed >= 3, "{needed} splits");
        // One process with labels up to `last`.
        let alone = |last: u32| {
            let labels = initial(0..graph.size() as u64);
            split_labels_up_to::<_, u32>(&Solo, &partition, &graph, labels, 0, &SILENT, "test", (last, 0))
        };
        for allowed in [0, 1, needed - 1] {
            let last = TO_SPLIT + 2 * allowed as u32;
            assert_eq!(alone(last).err(), Some(LabelsExhausted { splits: allowed }));
            let ranks = crate::cluster::run_ranks(3, |comm| {
                let partition = Partition::new(graph.size() as u64, comm.ranks());
                let labels = initial(partition.range(comm.rank()));
                split_labels_up_to::<_, u32>(comm, &partition, &graph, labels, 0, &SILENT, "test", (last, 0))
                    .err()
            });
            assert!(ranks.iter().all(|e| *e == Some(LabelsExhausted { splits: allowed })), "{ranks:?}");
        }
        let enough = alone(TO_SPLIT + 2 * needed as u32);
        assert!(enough.is_ok_and(|split| split.next_label == all.next_label));
    }

    /// More components than 2-byte numbers hold (each node of a graph of
    /// 70,000 with a move to itself is one): numbered in 4 bytes, the
    /// same numbers as a split in 4-byte labels; one fewer than they hold
    /// stays in 2 bytes.
    #[test]
    fn components_beyond_two_byte_numbers_are_numbered_in_four() {
        for (size, narrow) in [(70_000u32, false), (u16::MAX as u32 - 1, true)] {
            let edges: Vec<(u32, u32)> = (0..size).map(|i| (i, i)).collect();
            let graph = Edges::new(size as usize, &edges);
            let wide = cycle_components::<_, u32>(
                &graph,
                (0..size).map(|_| AtomicU32::new(TO_SPLIT)).collect(),
                usize::MAX,
                &SILENT,
                "test",
            )
            .expect("labels enough");
            let found = cycle_components::<_, u16>(
                &graph,
                (0..size).map(|_| AtomicU16::new(0)).collect(),
                usize::MAX,
                &SILENT,
                "test",
            )
            .expect("labels enough");
            assert_eq!(found.odd.len(), size as usize);
            assert_eq!(matches!(found.id, ComponentIds::Narrow(_)), narrow, "{size} components");
            assert!(found.id.to_wide() == wide.id.to_wide() && found.odd == wide.odd, "{size} components");
        }
    }
}
