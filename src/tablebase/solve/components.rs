//! Phase 2: the cycle components of the undecided positions, sinks first.
//!
//! After retrograde analysis every undecided position has an undecided
//! quiet child, so each lies on a cycle or reaches one. Only the strongly
//! connected components that hold a cycle need the cycle phases; every
//! other undecided position is decided by retrograde propagation as soon
//! as the components below it are (`resolve.rs`). The components are
//! found on every thread by [`crate::tablebase::solve::split`] over the layer's quiet moves.
//!
//! We work on the normalized graph (positions seen from the mover) and
//! derive the components of game states (position and side to move, the
//! graph doubled by ply parity) from it: see `docs/cycle-bounds.md`,
//! "Game-state components". A normalized component S with an odd cycle is
//! one game-state component of 2|S| states; a bipartite one is two mirror
//! components of |S| states each.

use std::sync::atomic::AtomicU32;

use crate::parallel;

use crate::rank::{for_each_position_at, layer_index, position_in_layer};
use crate::rules::Position;
use crate::tablebase::solve::members::{MemberIndexes, MemberNumbers, Members, Membership};
use crate::tablebase::solve::solver::{LayerError, LayerSolver};
use crate::tablebase::solve::split::{
    cycle_components, cycle_components_up_to, ComponentIds, CycleComponents, LabelWord, LabelsExhausted,
    SplitGraph, TO_SPLIT,
};

pub(crate) use crate::tablebase::solve::split::NONE;

/// Positions handed to one thread at a time in a pass over the layer.
const GROUP_CHUNK: usize = 1 << 16;

/// The cycle components, sinks first: each one's members, sorted by
/// layer index. No component number per position is kept: at 26 seeds
/// that array would take 4 bytes a position of the layer (3.4 GB) through
/// the cycle phases, where a component's own bits ([`Membership`]) answer
/// "is this position a member" for 3/16 of a byte a position it spans.
/// A large component dense in its stretch of the layer is kept as those
/// bits alone ([`Members::Marked`]); the others list their members.
pub struct Components {
    /// Positions in the layer.
    size: usize,
    /// Members of the components before `k`, at `k`; all of them last.
    starts: Vec<usize>,
    /// The members of the listed components, grouped by component, each
    /// group sorted by index.
    listed: Vec<u32>,
    /// The marked components, by component number.
    marked: Vec<(usize, MemberNumbers)>,
}

/// A component of at least this many members whose stretch of the layer
/// is at most [`MARKED_SPAN`] positions a member is marked, not listed.
const MARKED_AT_LEAST: usize = 1 << 12;

/// Marked, a component costs 3/16 of a byte a position of its stretch:
/// at most 3 bytes a member, against the list's 4.
const MARKED_SPAN: usize = 16;

impl Components {
    /// Groups positions by component number (`NONE`: in no component);
    /// the numbers are dropped once grouped.
    pub(crate) fn from_ids(id: ComponentIds) -> Components {
        Components::grouped(id.len(), |i| id.get(i))
    }

    /// [`Components::from_ids`] from the numbers as a snapshot stores them
    /// (little-endian `u32`s, `bytes.len() / 4` positions), read where
    /// they lie: at 27 seeds a copy would take 4.8 GB more while a build
    /// resumes.
    pub fn from_id_bytes(bytes: &[u8]) -> Components {
        let id = |i: usize| {
            u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]])
        };
        Components::grouped(bytes.len() / 4, id)
    }

    /// Groups the `size` positions by their component number `id(i)`.
    fn grouped(size: usize, id: impl Fn(usize) -> u32 + Sync) -> Components {
        // (Numbers plus one, so that 0 means none: the maximum is the count.)
        let count = parallel::map_indexes(size.div_ceil(GROUP_CHUNK), &|c| {
            (c * GROUP_CHUNK..(c * GROUP_CHUNK + GROUP_CHUNK).min(size))
                .map(&id)
                .filter(|&r| r != NONE)
                .map(|r| r as usize + 1)
                .max()
                .unwrap_or(0)
        });
        let count = count.into_iter().max().unwrap_or(0);
        // Each component's size, first and last member.
        let mut sizes = vec![0usize; count];
        let mut first = vec![usize::MAX; count];
        let mut last = vec![0usize; count];
        for i in 0..size {
            let r = id(i);
            if r != NONE {
                let r = r as usize;
                sizes[r] += 1;
                first[r] = first[r].min(i);
                last[r] = i;
            }
        }
        let marks = |k: usize| {
            sizes[k] >= MARKED_AT_LEAST && last[k] + 1 - first[k] <= MARKED_SPAN.saturating_mul(sizes[k])
        };
        let mut starts = vec![0usize; count + 1];
        // Where each listed component's members start in `listed`.
        let mut fill = vec![0usize; count];
        let mut listed_total = 0;
        for k in 0..count {
            starts[k + 1] = starts[k] + sizes[k];
            fill[k] = listed_total;
            if !marks(k) {
                listed_total += sizes[k];
            }
        }
        let mut listed = vec![0u32; listed_total];
        let mut marked = Vec::new();
        for k in (0..count).filter(|&k| marks(k)) {
            let numbers = MemberNumbers::marking(first[k], last[k], |mark| {
                (first[k]..=last[k]).filter(|&i| id(i) == k as u32).for_each(mark)
            });
            marked.push((k, numbers));
        }
        for i in 0..size {
            let r = id(i);
            if r != NONE && !marks(r as usize) {
                listed[fill[r as usize]] = i as u32;
                fill[r as usize] += 1;
            }
        }
        Components { size, starts, listed, marked }
    }

    pub fn count(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn of(&self, k: usize) -> Members<'_> {
        if let Ok(at) = self.marked.binary_search_by_key(&k, |&(j, _)| j) {
            return Members::Marked(&self.marked[at].1);
        }
        // The listed members before `k`: all before it, but the marked.
        let marked_before: usize = self
            .marked
            .iter()
            .take_while(|&&(j, _)| j < k)
            .map(|&(j, _)| self.starts[j + 1] - self.starts[j])
            .sum();
        let start = self.starts[k] - marked_before;
        Members::Listed(&self.listed[start..start + self.starts[k + 1] - self.starts[k]])
    }

    /// Members of the components before `k`.
    pub fn members_before(&self, k: usize) -> usize {
        self.starts[k]
    }

    /// Members of all components.
    pub fn total_members(&self) -> usize {
        self.starts[self.count()]
    }

    /// Whether some component has no member (a snapshot that says so was
    /// not written by a build).
    pub fn has_empty(&self) -> bool {
        self.starts.windows(2).any(|w| w[0] == w[1])
    }

    /// Which positions are members of component `k`.
    pub(crate) fn membership(&self, k: usize) -> Membership<'_> {
        self.of(k).membership()
    }

    /// Bytes held for the members (a list or bits per component).
    pub fn member_bytes(&self) -> usize {
        4 * self.listed.len() + self.marked.iter().map(|(_, numbers)| numbers.bytes()).sum::<usize>()
    }

    /// Writes the component number of every position of the layer, in
    /// layer order, as [`crate::codec::Encoder::words`] would (`NONE` for
    /// positions on no cycle): what snapshots store. Made a stretch at a
    /// time, never the whole array.
    pub fn write_ids(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        const STRETCH: usize = 1 << 16;
        out.write_all(&(self.size as u64).to_le_bytes())?;
        // The components by their next member not written yet (a heap:
        // the work is the members and the runs, not components × stretches).
        let mut at: Vec<MemberIndexes> = (0..self.count()).map(|k| self.of(k).iter()).collect();
        let mut next: std::collections::BinaryHeap<std::cmp::Reverse<(u32, usize)>> = at
            .iter_mut()
            .enumerate()
            .filter_map(|(k, members)| Some(std::cmp::Reverse((members.next()?, k))))
            .collect();
        let mut ids = vec![NONE; STRETCH];
        let mut buffer = Vec::with_capacity(4 * STRETCH);
        for start in (0..self.size).step_by(STRETCH) {
            let end = (start + STRETCH).min(self.size);
            ids[..end - start].fill(NONE);
            while let Some(&std::cmp::Reverse((first, k))) = next.peek() {
                if first as usize >= end {
                    break;
                }
                next.pop();
                let mut member = Some(first);
                while let Some(m) = member.filter(|&m| (m as usize) < end) {
                    ids[m as usize - start] = k as u32;
                    member = at[k].next();
                }
                if let Some(m) = member {
                    next.push(std::cmp::Reverse((m, k)));
                }
            }
            buffer.clear();
            buffer.extend(ids[..end - start].iter().flat_map(|w| w.to_le_bytes()));
            out.write_all(&buffer)?;
        }
        Ok(())
    }
}

/// Finds the cycle components of the undecided positions and records
/// their figures in the layer statistics.
///
/// The split reads only its labels and the moves: once the labels are
/// made, a solver given a place to park them (`LayerSolver::with_parking`)
/// moves the entries to disk for the search's duration.
pub(crate) fn components(solver: &mut LayerSolver) -> Result<Components, LayerError> {
    components_with_labels_up_to(solver, u16::LAST_LABEL)
}

/// [`components`], with 2-byte part labels up to `narrow_last_label`
/// (tests make it small, to make the split start again in 4 bytes).
fn components_with_labels_up_to(
    solver: &mut LayerSolver,
    narrow_last_label: u32,
) -> Result<Components, LayerError> {
    let graph = QuietMoves::of(solver);
    // Which positions are decided, a bit each, so that the labels are
    // made once the entries are gone (and made again if they must widen).
    let decided = decided_bits(solver);
    let parked = match solver.parking_place() {
        Some(dir) => {
            solver.progress.detail(&format!(
                "{} seeds: the entries wait in a scratch file in {} while the components are found",
                solver.n,
                dir.display()
            ));
            Some(solver.entries.park(&dir)?)
        }
        None => None,
    };
    let len = solver.entries.window_range().len();
    let (pearce_up_to, progress, what) = (solver.pearce_up_to, solver.progress, graph.what());
    // Labels of 2 bytes a position; if the split needs more than they
    // hold, it starts again with 4 (the same parts: `docs/cycle-bounds.md`
    // §9, "Labels in two bytes").
    let narrow = labels_from_bits::<u16>(&decided, len);
    let found = match cycle_components_up_to::<_, u16>(
        &graph,
        narrow,
        pearce_up_to,
        progress,
        &what,
        narrow_last_label,
    ) {
        Err(LabelsExhausted { splits }) => {
            progress.detail(&format!(
                "{what}: {splits} splits used every 2-byte part label; the search starts again with 4-byte labels"
            ));
            cycle_components::<_, u32>(
                &graph,
                labels_from_bits::<u32>(&decided, len),
                pearce_up_to,
                progress,
                &what,
            )
        }
        found => found,
    };
    drop(decided);
    // Grouped before the entries come back: the component number of every
    // position (4 bytes) is gone by then.
    let grouped = found.map(|found| (Components::from_ids(found.id), found.odd));
    if let Some(parked) = parked {
        solver.entries.restore(parked)?;
    }
    let (components, odd) = grouped.map_err(LayerError::Labels)?;
    record_component_stats(solver, &components, &odd);
    Ok(components)
}

/// The labels the split starts from, for the positions these arrays
/// hold: the undecided ones are to split.
pub(crate) fn labels_to_split(solver: &LayerSolver) -> Vec<AtomicU32> {
    labels_from_bits::<u32>(&decided_bits(solver), solver.entries.window_range().len())
}

/// Bit `j % 64` of word `j / 64`: whether the `j`-th position these
/// arrays hold is decided.
fn decided_bits(solver: &LayerSolver) -> Vec<u64> {
    let window = solver.entries.window_range();
    parallel::bits_where(window.len(), GROUP_CHUNK, &|j| solver.entries.is_decided(window.start + j))
}

/// [`labels_to_split`] from [`decided_bits`] of `len` positions, in
/// words `W`.
fn labels_from_bits<W: LabelWord>(decided: &[u64], len: usize) -> Vec<W::Atomic> {
    let (none, to_split) = (W::from_label(NONE), W::from_label(TO_SPLIT));
    let labels = parallel::fill_chunks(len, GROUP_CHUNK, &|start, labels| {
        for (j, label) in (start..).zip(labels) {
            *label = if decided[j / 64] >> (j % 64) & 1 != 0 { none } else { to_split };
        }
    });
    parallel::atomics(labels)
}

/// The components the split found, grouped, their figures recorded in
/// the layer statistics.
pub(crate) fn components_found(solver: &mut LayerSolver, found: CycleComponents) -> Components {
    let components = Components::from_ids(found.id);
    record_component_stats(solver, &components, &found.odd);
    components
}

fn record_component_stats(solver: &mut LayerSolver, components: &Components, odd: &[bool]) {
    let sizes: Vec<u64> = (0..odd.len()).map(|k| components.of(k).len() as u64).collect();
    record_component_sizes(solver, &sizes, odd);
}

/// Records the figures of components of `sizes` members, with whether
/// each holds an odd cycle.
pub(crate) fn record_component_sizes(solver: &mut LayerSolver, sizes: &[u64], odd: &[bool]) {
    for (&size, &odd) in sizes.iter().zip(odd) {
        let size = size as usize;
        let s = &mut solver.stats.components;
        s.cycle_components += 1;
        s.positions_on_cycles += size as u64;
        s.largest = s.largest.max(size as u64);
        s.game_state_components += if odd { 1 } else { 2 };
        s.largest_game_state = s.largest_game_state.max(if odd { 2 } else { 1 } * size as u64);
        *s.size_histogram.entry(size_class(size)).or_default() += 1;
    }
}

/// The quiet moves of a layer, between its positions.
pub(crate) struct QuietMoves {
    n: u32,
    size: usize,
}

impl QuietMoves {
    /// The quiet moves of the solver's layer (all of it, whatever the
    /// solver's arrays hold).
    pub(crate) fn of(solver: &LayerSolver) -> QuietMoves {
        QuietMoves { n: solver.n, size: solver.size }
    }

    /// The name of the split in progress reports.
    pub(crate) fn what(&self) -> String {
        format!("{} seeds", self.n)
    }
}

impl SplitGraph for QuietMoves {
    type Node = Position;

    fn size(&self) -> usize {
        self.size
    }

    #[inline]
    fn index(&self, position: &Position) -> usize {
        layer_index(position) as usize
    }

    fn node(&self, index: usize) -> Position {
        position_in_layer(self.n, index as u64).expect("index inside the layer")
    }

    fn walk_sorted(&self, indexes: &[u32], visit: impl FnMut(usize, Position)) {
        for_each_position_at(self.n, indexes.iter().map(|&i| i as usize), visit);
    }

    #[inline]
    fn for_each_child(&self, position: &Position, mut visit: impl FnMut(Position)) {
        for pit in position.legal_moves() {
            let played = position.play(pit);
            if played.captured == 0 {
                visit(played.child);
            }
        }
    }

    #[inline]
    fn for_each_parent(&self, position: &Position, mut visit: impl FnMut(Position)) {
        position.quiet_parents(|parent, _| visit(parent));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tablebase::layers::{LayerBytes, SolvedLayers};
    use crate::tablebase::params::SearchBudget;
    use crate::tablebase::snapshot::NoCheckpoints;
    use crate::tablebase::solve::solver::Cursor;
    use crate::tablebase::solve::split::tests::check_split;
    use std::sync::atomic::AtomicU16;

    /// What snapshots store of the components, the number of every
    /// position, is written from the members alone byte for byte as the
    /// numbers themselves would be, across stretches and with components
    /// that interleave; and each component's membership answers as the
    /// numbers do.
    #[test]
    fn component_numbers_are_written_from_the_members_alone() {
        let (mut marked, mut listed) = (0, 0);
        for (size, count) in [(0usize, 0u32), (5, 1), (70_000, 1), (200_000, 7), (140_000, 3000)] {
            // A fixed scramble: components interleave, some positions are
            // on no cycle, the last component is dense in a stretch.
            let ids: Vec<u32> = (0..size)
                .map(|i| {
                    let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
                    if count == 0 || h.is_multiple_of(5) {
                        NONE
                    } else if i > size / 2 && i < size / 2 + 5000 {
                        count - 1
                    } else {
                        (h % count as u64) as u32
                    }
                })
                .collect();
            let mut expected = crate::codec::Encoder::default();
            expected.words(&ids);
            let components = Components::from_ids(ComponentIds::Wide(ids.clone()));
            let mut written = Vec::new();
            components.write_ids(&mut written).unwrap();
            assert!(written == expected.bytes, "{size} positions, {count} components");
            // Grouped again from those bytes as a snapshot holds them.
            let read = Components::from_id_bytes(&written[8..]);
            assert!(read.listed == components.listed && read.starts == components.starts);
            assert_eq!(read.marked.len(), components.marked.len());
            for &(k, _) in &components.marked {
                assert!(read.of(k).iter().eq(components.of(k).iter()));
            }
            marked += components.marked.len();
            listed += components.count() - components.marked.len();
            for k in (0..components.count()).step_by(1 + components.count() / 5) {
                let inside = components.membership(k);
                for (i, &id) in ids.iter().enumerate() {
                    assert_eq!(inside.contains(i), id == k as u32, "{i}");
                    let number = inside.number(i);
                    assert_eq!(
                        number.map(|j| components.of(k).get(j) as usize),
                        (id == k as u32).then_some(i)
                    );
                }
                assert!(!inside.contains(size) && inside.number(usize::MAX).is_none());
                // Listed or marked, the members in order, from any one.
                let members = components.of(k);
                let expected: Vec<u32> = (0..size as u32).filter(|&i| ids[i as usize] == k as u32).collect();
                assert_eq!(members.len(), expected.len());
                assert_eq!(members.to_vec(), expected);
                for from in [0, 1, expected.len() / 2, expected.len().saturating_sub(1), expected.len()] {
                    assert!(members.iter_from(from).eq(expected[from.min(expected.len())..].iter().copied()));
                }
            }
        }
        assert!(marked >= 2 && listed >= 100, "{marked} marked, {listed} listed");
    }

    /// On the layers themselves, whatever the parts sent to Pearce's
    /// algorithm (all, none, some): Kosaraju's components, and the same
    /// layer bytes.
    #[test]
    fn the_layers_components_and_bytes_do_not_depend_on_the_split() {
        let mut solved = SolvedLayers::new();
        let mut split = 0;
        for n in 0..=9u32 {
            let mut reference: Option<Vec<u8>> = None;
            for pearce_up_to in [usize::MAX, 0, 40] {
                let mut solver = LayerSolver::new(n, &solved, SearchBudget::NONE);
                solver.pearce_up_to = pearce_up_to;
                solver.retrograde_only();
                let inside: Vec<bool> = (0..solver.size).map(|i| !solver.entries.is_decided(i)).collect();
                let graph = QuietMoves { n, size: solver.size };
                split += check_split(&graph, &inside, pearce_up_to);
                let mut solver = LayerSolver::new(n, &solved, SearchBudget::NONE);
                solver.pearce_up_to = pearce_up_to;
                let (bytes, _) = solver.solve();
                match &reference {
                    None => reference = Some(bytes),
                    Some(reference) => assert!(reference == &bytes, "layer {n}, Pearce up to {pearce_up_to}"),
                }
            }
            solved.push(LayerBytes::Owned(reference.expect("a solve")));
        }
        assert!(split >= 3 * 8, "{split} components");
    }

    /// A split that uses up its 2-byte part labels starts again in 4
    /// bytes and finds the same components, numbered alike, as one that
    /// does not run out (every part split: Pearce's share 0).
    #[test]
    fn a_split_out_of_two_byte_labels_starts_again_in_four() {
        let mut solved = SolvedLayers::new();
        let mut widened = 0;
        for n in 0..=9u32 {
            let found = |narrow_last_label: u32| {
                let mut solver = LayerSolver::new(n, &solved, SearchBudget::NONE);
                solver.pearce_up_to = 0;
                solver.retrograde_only();
                let components =
                    components_with_labels_up_to(&mut solver, narrow_last_label).expect("labels");
                let mut ids = Vec::new();
                components.write_ids(&mut ids).unwrap();
                (ids, solver.stats.components)
            };
            // (No split's labels: the layers with a component run out,
            // the others do not.)
            let no_split = TO_SPLIT;
            let mut solver = LayerSolver::new(n, &solved, SearchBudget::NONE);
            solver.pearce_up_to = 0;
            solver.retrograde_only();
            let graph = QuietMoves::of(&solver);
            let labels = labels_to_split(&solver)
                .into_iter()
                .map(|l| AtomicU16::new(u16::from_label(l.into_inner())))
                .collect();
            let runs_out = cycle_components_up_to::<_, u16>(
                &graph,
                labels,
                0,
                &crate::progress::SILENT,
                "test",
                no_split,
            )
            .is_err();
            widened += runs_out as usize;
            assert!(found(no_split) == found(u16::LAST_LABEL), "layer {n}");
            let (bytes, _) = LayerSolver::new(n, &solved, SearchBudget::NONE).solve();
            solved.push(LayerBytes::Owned(bytes));
        }
        assert!(widened >= 3, "{widened} layers ran out of labels");
    }

    /// Entries parked on disk during the component search come back byte
    /// for byte: the same layers, the same figures, and no file left.
    #[test]
    fn parking_the_entries_changes_no_byte() {
        let dir = std::env::temp_dir().join(format!("oware-parking-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut solved = SolvedLayers::new();
        for n in 0..=9u32 {
            let (bytes, stats) = LayerSolver::new(n, &solved, SearchBudget::NONE).solve();
            let parking = LayerSolver::new(n, &solved, SearchBudget::NONE).with_parking(&dir, 0);
            let (parked_bytes, parked_stats) = parking.solve();
            assert!(bytes == parked_bytes, "layer {n}");
            assert_eq!(stats.components, parked_stats.components, "layer {n}");
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "layer {n}: a file left");
            solved.push(LayerBytes::Owned(bytes));
        }
        // The labels, made from a bit a position, say which positions are
        // decided (a layer whose size is not a multiple of 64).
        let mut solver = LayerSolver::new(10, &solved, SearchBudget::NONE);
        solver.retrograde_only();
        assert_ne!(solver.size % 64, 0);
        let labels: Vec<u32> = labels_to_split(&solver).into_iter().map(AtomicU32::into_inner).collect();
        assert_eq!(labels.len(), solver.size);
        for (i, &label) in labels.iter().enumerate() {
            assert_eq!(label, if solver.entries.is_decided(i) { NONE } else { TO_SPLIT }, "{i}");
        }
        assert!(labels.contains(&NONE) && labels.contains(&TO_SPLIT));
        // A place that cannot take the file stops the layer with an error
        // that names it, rather than solving without its entries.
        let missing = dir.join("missing");
        let solver = LayerSolver::new(10, &solved, SearchBudget::NONE).with_parking(&missing, 0);
        let error = solver.run(Cursor::Start, None, &mut NoCheckpoints).expect_err("no place to park");
        assert!(format!("{error:?}").contains("missing"), "{error:?}");
        std::fs::remove_dir(&dir).unwrap();
    }
}
