//! An independent check of a finished tablebase, one ply deep, using only
//! the rules and the entries themselves (none of the builder's code).
//!
//! * Every entry is well formed: `lower ≤ value ≤ upper ≤ n`, and marked
//!   exact exactly when its bounds meet.
//! * A position with no legal move is exact, worth its own row.
//! * A position on no cycle cannot be reached again from its children, so
//!   their as-root values are their values after it: its bounds must equal
//!   the best of its options' bounds (an option worth `n − V(child)`).
//! * A position on a cycle can always leave through a capture or through a
//!   child on no cycle, whose values do not depend on the history: its upper
//!   bound must reach the best such option's lower bound. (Children on
//!   cycles may share its component, where values depend on the path.) And
//!   the cycle through it leaves it by a quiet move to a position on the
//!   same cycle: one of its quiet moves must lead to a position on a cycle.

use crate::parallel;

use crate::rank::{layer_index, layer_positions_from, layer_size};
use crate::rules::Position;
use crate::tablebase::entry::{Entry, EntryWidth, Proof};
use crate::tablebase::layers::{PackedLayer, SolvedLayers};
use crate::tablebase::owtb::Tablebase;
use crate::tablebase::params::SearchBudget;

/// Anything that holds packed layers.
pub trait LayerSource: Sync {
    /// The largest layer held: layers `0..=max_seeds` are there.
    fn max_seeds(&self) -> u32;
    /// The records of layer `n`, as stored (not checked against any
    /// checksum); `n` must be at most [`LayerSource::max_seeds`].
    fn layer(&self, n: u32) -> PackedLayer<'_>;
    /// Layer `n` after checking it against its checksum, where the source
    /// has one (a file); layers in memory are returned as they are.
    fn checked_layer(&self, n: u32) -> Result<PackedLayer<'_>, crate::tablebase::owtb::FileError> {
        Ok(self.layer(n))
    }
}

impl LayerSource for Tablebase {
    fn max_seeds(&self) -> u32 {
        self.header().max_seeds
    }
    fn layer(&self, n: u32) -> PackedLayer<'_> {
        Tablebase::layer(self, n)
    }
    fn checked_layer(&self, n: u32) -> Result<PackedLayer<'_>, crate::tablebase::owtb::FileError> {
        Tablebase::checked_layer(self, n)
    }
}

impl LayerSource for SolvedLayers {
    fn max_seeds(&self) -> u32 {
        self.len().saturating_sub(1)
    }
    fn layer(&self, n: u32) -> PackedLayer<'_> {
        SolvedLayers::layer(self, n)
    }
}

/// What the check found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VerifyReport {
    /// Positions checked, every layer together.
    pub positions: u64,
    /// Positions on no cycle whose bounds were re-derived from children.
    pub rederived: u64,
    /// Exact entries among them.
    pub exact_rederived: u64,
    /// Positions on cycles whose upper bound was checked against exits.
    pub cycle_checked: u64,
    /// Entries that failed a check (malformed or inconsistent with their
    /// children); 0 for a sound table.
    pub failures: u64,
    /// The first few failures, described.
    pub examples: Vec<String>,
}

const CHUNK: usize = 1 << 14;
pub(crate) const EXAMPLES: usize = 10;

/// A position's record as stored, and its width.
fn record_at<'a>(source: &'a dyn LayerSource, position: &Position) -> (&'a [u8], EntryWidth) {
    let layer = source.layer(position.seeds());
    let w = layer.width().bytes();
    let at = layer_index(position) as usize * w;
    (&layer.bytes()[at..at + w], layer.width())
}

/// A position's entry; `None` if it is malformed (reported where that
/// position itself is checked).
fn entry_at(source: &dyn LayerSource, position: &Position) -> Option<Entry> {
    let (record, width) = record_at(source, position);
    Entry::is_well_formed_record(record, width, position.seeds()).then(|| Entry::from_record(record, width))
}

/// Checks layers `0..=max_seeds` of `source`.
pub fn verify(source: &dyn LayerSource) -> VerifyReport {
    let mut report = VerifyReport::default();
    for n in 0..=source.max_seeds() {
        let size = layer_size(n) as usize;
        let parts: Vec<VerifyReport> = parallel::map_indexes(size.div_ceil(CHUNK), &|c| {
            let mut part = VerifyReport::default();
            let start = c * CHUNK;
            let count = CHUNK.min(size - start);
            for position in layer_positions_from(n, start as u64).take(count) {
                check_position(source, n, &position, &mut part);
            }
            part
        });
        for part in parts {
            report.positions += part.positions;
            report.rederived += part.rederived;
            report.exact_rederived += part.exact_rederived;
            report.cycle_checked += part.cycle_checked;
            report.failures += part.failures;
            for e in part.examples {
                if report.examples.len() < EXAMPLES {
                    report.examples.push(e);
                }
            }
        }
    }
    report
}

fn check_position(source: &dyn LayerSource, n: u32, position: &Position, report: &mut VerifyReport) {
    check_one_ply(n, position, record_at(source, position), |child| entry_at(source, child), report);
}

/// The one-ply check of one position (the module's doc lists its rules):
/// `record` is its record as stored and the record's width, `child_entry` gives each child's entry
/// (`None`: malformed or missing, reported where it is itself checked, so
/// this position is skipped). Shared by [`verify`] and the excerpts'
/// check (`crate::tablebase::excerpt`), which hold the children in
/// different places.
pub(crate) fn check_one_ply(
    n: u32,
    position: &Position,
    (record, width): (&[u8], EntryWidth),
    child_entry: impl Fn(&Position) -> Option<Entry>,
    report: &mut VerifyReport,
) {
    report.positions += 1;
    let nn = n as u8;
    let fail = |report: &mut VerifyReport, what: String| {
        report.failures += 1;
        if report.examples.len() < EXAMPLES {
            report.examples.push(format!("{position:?} ({n} seeds): {what}"));
        }
    };
    if !Entry::is_well_formed_record(record, width, n) {
        fail(report, format!("malformed entry {record:02x?}"));
        return;
    }
    let entry = Entry::from_record(record, width);
    let moves = position.legal_moves();
    if moves.is_empty() {
        let own = position.own_seeds() as u8;
        report.rederived += 1;
        report.exact_rederived += 1;
        if entry.lower != own || entry.upper != own || entry.on_cycle {
            let cycle = if entry.on_cycle { ", on a cycle" } else { "" };
            fail(
                report,
                format!(
                    "no legal move: must be exactly {own}, found {}..{}{cycle}",
                    entry.lower, entry.upper
                ),
            );
        }
        return;
    }
    // Best option bounds over all moves, and over history-proof exits.
    let (mut best_lower, mut best_upper, mut exit_lower) = (0u8, 0u8, 0u8);
    let mut quiet_to_cycle = false;
    for pit in moves {
        let played = position.play(pit);
        let Some(child) = child_entry(&played.child) else {
            return;
        };
        let (lower, upper) = (nn - child.upper, nn - child.lower);
        best_lower = best_lower.max(lower);
        best_upper = best_upper.max(upper);
        if played.captured > 0 || !child.on_cycle {
            exit_lower = exit_lower.max(lower);
        } else {
            quiet_to_cycle = true;
        }
    }
    if entry.on_cycle {
        report.cycle_checked += 1;
        if !quiet_to_cycle {
            fail(report, "on a cycle, but no quiet move leads to a position on a cycle".to_string());
        }
        if entry.upper < exit_lower {
            fail(report, format!("upper bound {} below an exit worth at least {exit_lower}", entry.upper));
        }
    } else {
        report.rederived += 1;
        if entry.is_exact() {
            report.exact_rederived += 1;
        }
        if (entry.lower, entry.upper) != (best_lower, best_upper) {
            fail(
                report,
                format!(
                    "bounds {}..{} but children give {best_lower}..{best_upper}",
                    entry.lower, entry.upper
                ),
            );
        }
        if entry.proof == Proof::Bounds || entry.proof == Proof::Search {
            fail(report, format!("position on no cycle marked {:?}", entry.proof));
        }
    }
}

/// What the second opinion found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeepReport {
    /// Layers `0..=last_layer` were sampled: the sample's
    /// [`DeepSample::sample_max_seeds`], or the table's largest layer if
    /// that is smaller ([`DeepSample::last_layer`]).
    pub last_layer: u32,
    /// Search-proven entries re-proven from scratch.
    pub sampled: u64,
    /// The path-cut search proved the same exact value.
    pub confirmed: u64,
    /// It proved bounds that contain the entry's value but do not meet.
    pub undecided: u64,
    /// It proved bounds that exclude the entry's value: one of the two
    /// algorithms is wrong.
    pub disagreements: u64,
    /// The first few disagreements, described.
    pub examples: Vec<String>,
}

/// Which entries `verify_deep` re-proves, and with how much work.
#[derive(Clone, Copy, Debug)]
pub struct DeepSample {
    /// Entries per layer.
    pub per_layer: usize,
    /// Nodes per path-cut question.
    pub cut_nodes: u64,
    /// The sample depends only on this.
    pub seed: u64,
    /// Layers above this are not sampled: a path-cut node re-solves two
    /// threshold games on the whole component, and layer 8's single
    /// component of 65,036 positions makes that minutes per question.
    pub sample_max_seeds: u32,
}

impl DeepSample {
    /// The last layer sampled in `source`: [`DeepSample::sample_max_seeds`],
    /// or the table's largest layer when the table stops below it (a
    /// sample bound is a most, not a demand; [`DeepReport::last_layer`]
    /// says which layers were sampled).
    pub fn last_layer(&self, source: &dyn LayerSource) -> u32 {
        source.max_seeds().min(self.sample_max_seeds)
    }
}

/// Re-proves up to `per_layer` randomly chosen search-proven entries of
/// every layer up to [`DeepSample::last_layer`] with a second, independent algorithm: the
/// layer is solved again from the table's lower layers with the
/// history-free bounds only, and the path-cut search (`docs/cycle-bounds.md`,
/// section 4b; not the threshold search that proved the entries) narrows
/// each sampled entry's bounds. Its bounds must contain the entry's value.
pub fn verify_deep(source: &dyn LayerSource, sample: DeepSample) -> DeepReport {
    let DeepSample { per_layer, cut_nodes, seed, .. } = sample;
    use crate::tablebase::layers::LayerBytes;
    use crate::tablebase::solve::solver::{Audit, LayerSolver};
    let last_layer = sample.last_layer(source);
    let mut report = DeepReport { last_layer, ..DeepReport::default() };
    let mut lower = SolvedLayers::new();
    let mut random = seed | 1;
    for n in 0..=last_layer {
        let layer = source.layer(n);
        // Every search-proven entry, then a seeded partial shuffle.
        let mut proven: Vec<u32> =
            (0..layer_size(n)).filter(|&i| layer.entry(i).proof == Proof::Search).map(|i| i as u32).collect();
        let take = per_layer.min(proven.len());
        for k in 0..take {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            let pick = k + (random % (proven.len() - k) as u64) as usize;
            proven.swap(k, pick);
        }
        proven.truncate(take);
        proven.sort_unstable();
        if !proven.is_empty() {
            let mut solver = LayerSolver::new(n, &lower, SearchBudget::NONE);
            solver.audit = Some(Audit { wanted: proven.clone(), cut_nodes, found: Vec::new() });
            let found = solver.solve_audit();
            report.sampled += proven.len() as u64;
            for (index, low, high) in found {
                let entry = layer.entry(index as u64);
                if entry.value < low || entry.value > high {
                    report.disagreements += 1;
                    if report.examples.len() < EXAMPLES {
                        let position = crate::rank::position_in_layer(n, index as u64).expect("in layer");
                        report.examples.push(format!(
                            "{position:?} ({n} seeds): entry {}, the path-cut search proves {low}..{high}",
                            entry.value
                        ));
                    }
                } else if low == high {
                    report.confirmed += 1;
                } else {
                    report.undecided += 1;
                }
            }
        }
        lower.push(LayerBytes::Owned(layer.bytes().to_vec()));
    }
    report
}
