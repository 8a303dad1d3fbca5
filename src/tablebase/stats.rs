//! Figures of a layer build: what each phase decided and how long it took.
//! Written as a table at the end of a build and as JSON next to the
//! tablebase.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::codec::{DecodeError, Decoder, Encoder};
use crate::tablebase::entry::Proof;
use crate::tablebase::layers::PackedLayer;

/// First word of the second stats layout (the first layout began with the
/// seed count, at most 48).
const STATS_LAYOUT_2: u64 = u64::MAX - 1;

/// Wall time of each phase of a layer, in seconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseSeconds {
    /// Retrograde analysis.
    pub retrograde: f64,
    /// The component search.
    pub scc: f64,
    /// The cycle components' history-free bounds.
    pub bounds: f64,
    /// Wall time of the searches (history-proof sets included), and the
    /// CPU time of the process meanwhile (all threads).
    pub search: f64,
    /// CPU time of the searches.
    pub search_cpu: f64,
    /// The whole layer, these phases and the rest (decisions, packing).
    pub total: f64,
}

/// Peak resident memory of the whole process while each phase of a layer
/// ran, in bytes, as the system counts it (`crate::memory`; 0: not
/// measured). Anonymous memory is what the build holds; mapped memory is
/// mostly the lower layers' pages, which the kernel may evict.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseMemory {
    /// Anonymous memory during retrograde analysis,
    pub retrograde: u64,
    /// during the component search,
    pub components: u64,
    /// and while the cycle components are resolved (bounds, searches,
    /// decisions, packing the entries).
    pub cycles: u64,
    /// File-backed memory, the peak over all phases.
    pub mapped: u64,
}

impl PhaseMemory {
    /// The largest anonymous peak of the layer.
    pub fn peak(&self) -> u64 {
        self.retrograde.max(self.components).max(self.cycles)
    }

    /// Named as in the JSON file and in checkpoint order.
    fn fields(&self) -> [(&'static str, u64); 4] {
        [
            ("retrograde", self.retrograde),
            ("components", self.components),
            ("cycles", self.cycles),
            ("mapped", self.mapped),
        ]
    }
}

/// Counts of values (search nodes per question) in buckets a quarter of a
/// power of two wide, with the exact maximum: percentiles are known to
/// within 19%, whatever the number of questions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeHistogram {
    /// `buckets[k]` counts the values `v ≥ 1` with `floor(4 log2 v) = k`.
    pub buckets: BTreeMap<u16, u64>,
    pub count: u64,
    pub max: u64,
}

impl NodeHistogram {
    fn bucket(value: u64) -> u16 {
        let value = value.max(1);
        let log = 63 - value.leading_zeros() as u16; // floor(log2)
                                                     // The two bits below the leading one pick the quarter, compared
                                                     // against 2^(k/4) for k = 1, 2, 3 (1.19, 1.41, 1.68).
        let fraction = value as f64 / (1u64 << log) as f64;
        let quarter = [1.189_207_115, std::f64::consts::SQRT_2, 1.681_792_831]
            .iter()
            .filter(|&&q| fraction >= q)
            .count();
        4 * log + quarter as u16
    }

    /// The largest value a bucket holds (its upper edge, rounded down).
    fn upper_edge(bucket: u16) -> u64 {
        (2f64.powf((bucket + 1) as f64 / 4.0)).ceil() as u64 - 1
    }

    pub fn add(&mut self, value: u64) {
        *self.buckets.entry(Self::bucket(value)).or_insert(0) += 1;
        self.count += 1;
        self.max = self.max.max(value);
    }

    pub fn merge(&mut self, other: &NodeHistogram) {
        for (&k, &c) in &other.buckets {
            *self.buckets.entry(k).or_insert(0) += c;
        }
        self.count += other.count;
        self.max = self.max.max(other.max);
    }

    /// A value at least the `p`-quantile (`0 < p ≤ 1`) and at most 19%
    /// above it: the upper edge of its bucket (never above the maximum).
    pub fn quantile(&self, p: f64) -> u64 {
        let wanted = ((p * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (&k, &c) in &self.buckets {
            seen += c;
            if seen >= wanted {
                return Self::upper_edge(k).min(self.max);
            }
        }
        0
    }

    fn encode(&self, e: &mut Encoder) {
        e.u64(self.count);
        e.u64(self.max);
        e.u64(self.buckets.len() as u64);
        for (&k, &c) in &self.buckets {
            e.u64(k as u64);
            e.u64(c);
        }
    }

    fn decode(d: &mut Decoder) -> Result<NodeHistogram, DecodeError> {
        let (count, max) = (d.u64()?, d.u64()?);
        let mut buckets = BTreeMap::new();
        for _ in 0..d.u64()?.min(1 << 10) {
            let k = d.u64()?;
            if k >= 256 {
                return Err(DecodeError::Invalid(format!("node histogram bucket {k}")));
            }
            buckets.insert(k as u16, d.u64()?);
        }
        Ok(NodeHistogram { buckets, count, max })
    }

    fn to_json(&self) -> String {
        format!(
            "{{\"answered\": {}, \"median_at_most\": {}, \"p90_at_most\": {}, \"max\": {}}}",
            self.count,
            self.quantile(0.5),
            self.quantile(0.9),
            self.max
        )
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ComponentStats {
    /// Cycle components: strongly connected components of two or more
    /// positions (or one that moves to itself).
    pub cycle_components: u64,
    /// The same, counted on game states (1 or 2 per position component).
    pub game_state_components: u64,
    pub positions_on_cycles: u64,
    /// Positions in the largest component.
    pub largest: u64,
    /// Game states in the largest game-state component.
    pub largest_game_state: u64,
    /// Cycle components by size class.
    pub size_histogram: BTreeMap<String, u64>,
}

/// What [`LayerStats::finish`] counts in finished entries; the counts of
/// the parts of a layer add up to the layer's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct EntryCounts {
    pub exact: u64,
    pub gap_sum: u64,
    pub max_gap: u8,
}

impl EntryCounts {
    pub(crate) fn of(layer: PackedLayer) -> EntryCounts {
        let mut counts = EntryCounts::default();
        for e in layer.entries() {
            counts.exact += (e.proof != Proof::Open) as u64;
            let gap = e.upper - e.lower;
            counts.gap_sum += gap as u64;
            counts.max_gap = counts.max_gap.max(gap);
        }
        counts
    }

    pub(crate) fn add(&mut self, other: EntryCounts) {
        self.exact += other.exact;
        self.gap_sum += other.gap_sum;
        self.max_gap = self.max_gap.max(other.max_gap);
    }
}

/// Figures of one layer's build: what each phase decided, the searches'
/// work and the time each phase took.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerStats {
    /// The layer: seeds on the board of its positions.
    pub seeds: u32,
    /// Positions in the layer.
    pub positions: u64,
    /// Decided by the retrograde phase (no cycle involved).
    pub decided_by_retrograde: u64,
    /// Frontiers the retrograde phase propagated, one round each.
    pub retrograde_rounds: u64,
    /// Undecided after the retrograde phase, on no cycle: decided by
    /// retrograde propagation once the cycle components below them were.
    pub decided_acyclic: u64,
    /// The strongly connected components of the layer's quiet moves.
    pub components: ComponentStats,
    /// Cycle positions whose history-free bounds meet ([`Proof::Bounds`]).
    pub exact_by_bounds: u64,
    /// Cycle positions the searches made exact ([`Proof::Search`]).
    pub exact_by_search: u64,
    /// Questions the threshold search answered.
    pub searches: u64,
    /// Nodes of every search, threshold and path-cut together.
    pub search_nodes: u64,
    /// Co-Büchi rounds of the cycle bounds that added states beyond the
    /// attractor, summed over the layer's components.
    pub safety_rounds: u64,
    /// Cycle positions whose history-free bounds differ: what the searches
    /// start from.
    pub open_before_search: u64,
    /// Questions the threshold search answered, by nodes.
    pub question_nodes: NodeHistogram,
    /// Positions the threshold search left open, and how many of them the
    /// path-cut search then closed (with its nodes).
    pub left_open_by_threshold: u64,
    /// Of those, the positions the path-cut search made exact.
    pub closed_by_cut: u64,
    /// Nodes of the path-cut search (also counted in `search_nodes`).
    pub cut_nodes: u64,
    /// Cycle positions whose interval was narrowed to one value by the
    /// proven intervals of the table the build started from (before any
    /// search; `docs/cycle-bounds.md` §6).
    pub exact_from_seed: u64,
    /// Exact entries of every kind, and the rest.
    pub exact: u64,
    /// Positions left with `lower < upper` (proof `Open`).
    pub unresolved: u64,
    /// Gap `upper − lower` over all positions of the layer.
    pub mean_gap: f64,
    /// The widest gap `upper − lower` in the layer.
    pub max_gap: u8,
    /// Peak resident memory of the process while each phase ran.
    pub memory: PhaseMemory,
    /// Wall time (and the searches' CPU time) of each phase, in seconds.
    pub seconds: PhaseSeconds,
}

impl LayerStats {
    /// Empty figures for layer `seeds`, of `positions` positions.
    pub fn new(seeds: u32, positions: u64) -> LayerStats {
        LayerStats { seeds, positions, ..LayerStats::default() }
    }

    /// Adds the counts of positions another rank decided in its range of
    /// the same layer (a layer kept spread: `spread.rs`); what every rank
    /// counts alike (rounds, components, safety rounds) and the times stay
    /// this rank's.
    pub(crate) fn add_rank_counts(&mut self, other: &LayerStats) {
        self.decided_by_retrograde += other.decided_by_retrograde;
        self.decided_acyclic += other.decided_acyclic;
        self.exact_by_bounds += other.exact_by_bounds;
        self.exact_by_search += other.exact_by_search;
        self.exact_from_seed += other.exact_from_seed;
        self.open_before_search += other.open_before_search;
    }

    /// Counts exactness and gaps from the finished entries.
    pub fn finish(&mut self, layer: PackedLayer) {
        self.finish_with(EntryCounts::of(layer));
    }

    /// [`LayerStats::finish`] from the counts of every part of the layer.
    pub(crate) fn finish_with(&mut self, counts: EntryCounts) {
        self.exact = counts.exact;
        self.unresolved = self.positions - counts.exact;
        self.mean_gap = counts.gap_sum as f64 / self.positions.max(1) as f64;
        self.max_gap = counts.max_gap;
    }

    /// The counters, named as in the JSON file and in checkpoint order.
    pub(crate) fn counts(&self) -> [(&'static str, u64); 20] {
        let c = &self.components;
        [
            ("seeds", self.seeds as u64),
            ("positions", self.positions),
            ("decided_by_retrograde", self.decided_by_retrograde),
            ("retrograde_rounds", self.retrograde_rounds),
            ("decided_acyclic", self.decided_acyclic),
            ("cycle_components", c.cycle_components),
            ("game_state_components", c.game_state_components),
            ("positions_on_cycles", c.positions_on_cycles),
            ("largest_component", c.largest),
            ("largest_game_state_component", c.largest_game_state),
            ("exact_by_bounds", self.exact_by_bounds),
            ("exact_by_search", self.exact_by_search),
            ("searches", self.searches),
            ("search_nodes", self.search_nodes),
            ("safety_rounds", self.safety_rounds),
            ("open_before_search", self.open_before_search),
            ("left_open_by_threshold_search", self.left_open_by_threshold),
            ("closed_by_cut_search", self.closed_by_cut),
            ("cut_search_nodes", self.cut_nodes),
            ("exact_from_seed", self.exact_from_seed),
        ]
    }

    /// The timings, named as in the JSON file and in checkpoint order.
    fn timings(&self) -> [(&'static str, f64); 6] {
        let s = &self.seconds;
        [
            ("retrograde", s.retrograde),
            ("scc", s.scc),
            ("bounds", s.bounds),
            ("search", s.search),
            ("search_cpu", s.search_cpu),
            ("total", s.total),
        ]
    }

    /// For checkpoints: every field in a fixed order.
    /// The layout starts with [`STATS_LAYOUT_2`]; the first layout (no
    /// memory figures, a component-search estimate among the timings)
    /// started with the seed count and is still read.
    pub(crate) fn encode(&self, e: &mut Encoder) {
        e.u64(STATS_LAYOUT_2);
        for (_, v) in self.counts() {
            e.u64(v);
        }
        for (_, v) in self.timings() {
            e.f64(v);
        }
        for (_, v) in self.memory.fields() {
            e.u64(v);
        }
        e.u64(self.components.size_histogram.len() as u64);
        for (class, count) in &self.components.size_histogram {
            e.text(class);
            e.u64(*count);
        }
        self.question_nodes.encode(e);
    }

    pub(crate) fn decode(d: &mut Decoder) -> Result<LayerStats, DecodeError> {
        let first = d.u64()?;
        let layout_2 = first == STATS_LAYOUT_2;
        let mut v = [0u64; 20];
        for (k, slot) in v.iter_mut().enumerate() {
            *slot = if k == 0 && !layout_2 { first } else { d.u64()? };
        }
        if !layout_2 {
            d.f64()?; // the first layout's estimate of the component search's memory
        }
        let mut f = [0f64; 6];
        for slot in f.iter_mut() {
            *slot = d.f64()?;
        }
        let mut m = [0u64; 4];
        if layout_2 {
            for slot in m.iter_mut() {
                *slot = d.u64()?;
            }
        }
        let mut size_histogram = BTreeMap::new();
        for _ in 0..d.u64()?.min(1 << 16) {
            let class = d.text()?;
            size_histogram.insert(class, d.u64()?);
        }
        let question_nodes = NodeHistogram::decode(d)?;
        Ok(LayerStats {
            seeds: v[0] as u32,
            positions: v[1],
            decided_by_retrograde: v[2],
            retrograde_rounds: v[3],
            decided_acyclic: v[4],
            components: ComponentStats {
                cycle_components: v[5],
                game_state_components: v[6],
                positions_on_cycles: v[7],
                largest: v[8],
                largest_game_state: v[9],
                size_histogram,
            },
            exact_by_bounds: v[10],
            exact_by_search: v[11],
            searches: v[12],
            search_nodes: v[13],
            safety_rounds: v[14],
            open_before_search: v[15],
            left_open_by_threshold: v[16],
            closed_by_cut: v[17],
            cut_nodes: v[18],
            exact_from_seed: v[19],
            question_nodes,
            exact: 0,
            unresolved: 0,
            mean_gap: 0.0,
            max_gap: 0,
            memory: PhaseMemory { retrograde: m[0], components: m[1], cycles: m[2], mapped: m[3] },
            seconds: PhaseSeconds {
                retrograde: f[0],
                scc: f[1],
                bounds: f[2],
                search: f[3],
                search_cpu: f[4],
                total: f[5],
            },
        })
    }

    /// One JSON object (no external serializer needed for flat figures).
    pub fn to_json(&self) -> String {
        let mut out = String::from("{");
        for (name, value) in self.counts() {
            let _ = write!(out, "\"{name}\": {value}, ");
        }
        let _ = write!(
            out,
            "\"exact\": {}, \"unresolved\": {}, \"mean_gap\": {:.4}, \"max_gap\": {}, ",
            self.exact, self.unresolved, self.mean_gap, self.max_gap
        );
        let sizes: Vec<String> = self
            .components
            .size_histogram
            .iter()
            .map(|(class, count)| format!("\"{class}\": {count}"))
            .collect();
        let _ = write!(out, "\"component_sizes\": {{{}}}, ", sizes.join(", "));
        let _ = write!(out, "\"question_nodes\": {}, ", self.question_nodes.to_json());
        let memory: Vec<String> =
            self.memory.fields().iter().map(|(name, v)| format!("\"{name}\": {v}")).collect();
        let _ = write!(
            out,
            "\"peak_memory_bytes\": {{{}}}, \"peak_bytes_per_position\": {:.2}, \"seconds\": {{",
            memory.join(", "),
            self.memory.peak() as f64 / self.positions.max(1) as f64
        );
        let seconds: Vec<String> =
            self.timings().iter().map(|(name, v)| format!("\"{name}\": {v:.3}")).collect();
        out += &seconds.join(", ");
        out += "}}";
        out
    }

    /// Header of the per-layer summary table.
    pub fn table_header() -> String {
        format!(
            "{:>2} {:>11} {:>11} {:>10} {:>11} {:>9} {:>9} {:>10} {:>6} {:>3} {:>7} {:>7} {:>7} {:>7} {:>7} {:>5}",
            "n",
            "positions",
            "retrograde",
            "on cycles",
            "largest",
            "bounds",
            "search",
            "unresolved",
            "gap",
            "max",
            "retro s",
            "scc s",
            "bound s",
            "srch s",
            "total s",
            "B/pos"
        )
    }

    /// One row of the summary table.
    pub fn table_row(&self) -> String {
        let s = &self.seconds;
        format!(
            "{:>2} {:>11} {:>11} {:>10} {:>11} {:>9} {:>9} {:>10} {:>6.3} {:>3} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>5.1}",
            self.seeds,
            self.positions,
            self.decided_by_retrograde,
            self.components.positions_on_cycles,
            self.components.largest,
            self.exact_by_bounds,
            self.exact_by_search,
            self.unresolved,
            self.mean_gap,
            self.max_gap,
            s.retrograde,
            s.scc,
            s.bounds,
            s.search,
            s.total,
            self.memory.peak() as f64 / self.positions.max(1) as f64
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LayerStats {
        let mut stats = LayerStats::new(9, 167_960);
        stats.decided_by_retrograde = 6116;
        stats.components.cycle_components = 1;
        stats.components.size_histogram.insert("100000-999999".into(), 1);
        stats.question_nodes.add(5000);
        stats.seconds =
            PhaseSeconds { retrograde: 0.5, scc: 1.5, bounds: 2.5, search: 3.5, search_cpu: 4.5, total: 9.0 };
        stats
    }

    #[test]
    fn figures_round_trip_with_their_memory() {
        let mut stats = sample();
        stats.memory =
            PhaseMemory { retrograde: 1 << 20, components: 3 << 20, cycles: 5 << 20, mapped: 7 << 20 };
        let mut e = Encoder::default();
        stats.encode(&mut e);
        assert_eq!(LayerStats::decode(&mut Decoder::new(&e.bytes)).unwrap(), stats);
    }

    /// Build directories written before the memory figures keep opening:
    /// the first layout reads with its estimate dropped and no memory.
    #[test]
    fn the_first_layout_is_still_read() {
        let stats = sample();
        let mut e = Encoder::default();
        stats.encode(&mut e);
        // The first layout: no marker, the component search's estimate
        // before the six timings, no memory figures.
        let b = &e.bytes;
        let (counts, timings, memory) = (8..8 + 20 * 8, 168..168 + 6 * 8, 216..216 + 4 * 8);
        let mut first = b[counts].to_vec();
        first.extend_from_slice(&16.5f64.to_le_bytes());
        first.extend_from_slice(&b[timings]);
        first.extend_from_slice(&b[memory.end..]);
        let read = LayerStats::decode(&mut Decoder::new(&first)).unwrap();
        assert_eq!(read, stats);
        assert_eq!(read.memory, PhaseMemory::default());
    }
}
