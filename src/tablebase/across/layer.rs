//! A layer's retrograde analysis and component search spread over the
//! ranks of a distributed build (`docs/distributed-build.md`).
//!
//! Each rank owns one contiguous range of the layer's indexes
//! ([`Partition`]) and holds the five per-position arrays of that range
//! only. It runs the first pass over its range, then rounds: its frontier
//! tells the parents it holds directly, and what it has for the parents
//! other ranks hold goes out in one message per destination (7 bytes an
//! update: the parent's offset in its owner's range and the option's
//! lower bound, upper bound and estimate); each rank applies what it
//! receives, and the positions decided either way are its next frontier.
//! The rounds end when every rank's frontier is empty (one sum per round).
//!
//! Telling a parent is a maximum and a decrement, which commute, so every
//! position is decided in the same round and with the same entry as in the
//! single-process build: the same bytes. The ranks then split the
//! undecided positions into cycle components together (`split::split_labels`:
//! each holds the labels of its range); rank 0 gathers the arrays and the
//! labels, runs Pearce's algorithm on the small parts and numbers the
//! components as one process numbers them, and leads their resolution
//! (the large components' threshold games are played by every rank:
//! `across::bounds`).

use std::time::Instant;

use crate::cluster::{Communicator, Partition, Traffic};
use crate::codec::{DecodeError, Decoder, Encoder};
use crate::progress::{Observer, SILENT};
use crate::rank::{layer_index, layer_size};
use crate::tablebase::across::propagate::propagate_across;
use crate::tablebase::across::spread::{
    members_by_component, resolve_spread, SpreadCheckpoints, SpreadStart,
};
use crate::tablebase::layers::{PackedLayer, SolvedLayers};
use crate::tablebase::params::SearchBudget;
use crate::tablebase::solve::components;
use crate::tablebase::solve::components::{Components, QuietMoves};
use crate::tablebase::solve::entries::Contradiction;
use crate::tablebase::solve::retrograde;
use crate::tablebase::solve::solver::LayerSolver;
use crate::tablebase::solve::split::{number_components, split_labels};

/// What spreading one layer's retrograde analysis and component search
/// cost, over all ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LayerTraffic {
    /// The layer.
    pub seeds: u32,
    /// How many ranks shared it.
    pub ranks: usize,
    /// Propagation rounds (one exchange each).
    pub rounds: u64,
    /// Messages and bytes of the rounds, all ranks together.
    pub rounds_traffic: Traffic,
    /// Exchanges (trimming, forward and backward floods: one or more per
    /// frontier), messages and bytes of the component search, all ranks
    /// together.
    pub split_traffic: Traffic,
    /// Messages and bytes that brought the ranks' arrays and labels to
    /// rank 0 (for a layer kept spread: the small parts' members to rank
    /// 0, and their components back).
    pub gather_traffic: Traffic,
    /// Exchanges, messages and bytes of the cycle phases: the large
    /// components' threshold games played by every rank (shares handed
    /// out, attractor and safety steps, bounds gathered), all ranks
    /// together.
    pub bounds_traffic: Traffic,
    /// Wall-clock seconds of the first pass and the rounds.
    pub retrograde_seconds: f64,
    /// Wall-clock seconds of the component search across the ranks.
    pub split_seconds: f64,
    /// Wall-clock seconds of the gathering.
    pub gather_seconds: f64,
    /// Whether the layer finished with its entries kept spread
    /// (`spread.rs`): then `bounds_traffic` also counts the propagation
    /// rounds after each component, and the entries sent to rank 0.
    pub kept_spread: bool,
}

impl LayerTraffic {
    /// One line for the build's log.
    pub fn line(&self) -> String {
        let ending = if self.kept_spread {
            format!("kept spread (small parts: {} bytes)", self.gather_traffic.bytes)
        } else {
            format!(
                "gathered to rank 0 in {:.2} s ({} bytes)",
                self.gather_seconds, self.gather_traffic.bytes
            )
        };
        format!(
            "layer {} across {} ranks: retrograde {:.2} s, {} rounds, {} messages, {} bytes; \
             components {:.2} s, {} exchanges, {} messages, {} bytes; {ending}",
            self.seeds,
            self.ranks,
            self.retrograde_seconds,
            self.rounds,
            self.rounds_traffic.messages,
            self.rounds_traffic.bytes,
            self.split_seconds,
            self.split_traffic.exchanges,
            self.split_traffic.messages,
            self.split_traffic.bytes,
        )
    }

    /// The line for the cycle phases' games across the ranks.
    pub fn bounds_line(&self) -> String {
        format!(
            "layer {} across {} ranks: threshold games{} {} exchanges, {} messages, {} bytes",
            self.seeds,
            self.ranks,
            if self.kept_spread { " and propagation kept spread:" } else { "" },
            self.bounds_traffic.exchanges,
            self.bounds_traffic.messages,
            self.bounds_traffic.bytes
        )
    }
}

/// Rank 0's share of a layer spread over the ranks: the whole layer's
/// solver in the state the single-process build reaches once it has found
/// the components (the cursor `Resolving { k: 0, step: Begin }`), and the
/// components.
pub(crate) struct Gathered<'a> {
    pub solver: LayerSolver<'a>,
    pub components: Components,
}

/// How a layer spread over the ranks goes on after its component search.
// (One value a layer: the sizes of its variants do not matter.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Across<'a> {
    /// Gathered: rank 0 gets the whole layer to lead its cycle phases, the
    /// other ranks `None`.
    Gathered(Option<Gathered<'a>>),
    /// Finished with its entries kept spread (`spread.rs`): every rank
    /// holds the packed entries of its range, rank 0 the layer's figures.
    Finished(crate::tablebase::across::spread::FinishedSpread),
}

/// Whether layer `n` can finish with its entries kept spread, when the
/// build asks for it: the layer gets no search (`spread.rs`).
fn may_stay_spread(budget: &SearchBudget, n: u32) -> bool {
    !budget.threshold_search_at(n) && !budget.cut_search_at(n)
}

/// Runs layer `n`'s retrograde analysis and component search across the
/// ranks of `comm`; then, if `keep_spread` and the layer allows it, its
/// cycle phases with its entries kept spread, else gathers it for rank 0
/// to lead them ([`Across`]). Every rank calls it; `seed` is the layer's
/// entries in the table the build starts from, if any; a layer kept
/// spread offers its snapshots to `keep_spread`'s checkpoints.
pub(crate) fn layer_across<'a>(
    comm: &dyn Communicator,
    n: u32,
    lower: &'a SolvedLayers,
    budget: SearchBudget,
    seed: Option<PackedLayer<'a>>,
    observer: &'a dyn Observer,
    keep_spread: Option<SpreadCheckpoints>,
) -> Result<(Across<'a>, LayerTraffic), DecodeError> {
    let started = Instant::now();
    let clock = Instant::now();
    let partition = Partition::new(layer_size(n), comm.ranks());
    let window = partition.range(comm.rank());
    let mut part = LayerSolver::window(n, lower, budget, window.start as usize..window.end as usize);
    if let Some(seed) = seed {
        part = part.with_seed(seed);
    }
    let part = part.with_observer(if comm.rank() == 0 { observer } else { &SILENT });
    let before = comm.traffic();
    let (part, rounds) = run_rounds(comm, part, &partition);
    let rounds_traffic = comm.traffic().since(before);
    let retrograde_seconds = clock.elapsed().as_secs_f64();

    let clock = Instant::now();
    let graph = QuietMoves::of(&part);
    let mut split = split_labels(
        comm,
        &partition,
        &graph,
        components::labels_to_split(&part),
        part.pearce_up_to,
        part.progress,
        &graph.what(),
    )
    .map_err(|exhausted| DecodeError::Invalid(format!("layer {n}: {exhausted}")))?;
    let split_seconds = clock.elapsed().as_secs_f64();

    if let Some(checkpoints) = keep_spread.filter(|_| may_stay_spread(&budget, n)) {
        let clock = Instant::now();
        let split_traffic = split.traffic;
        let before = comm.traffic();
        let numbered = crate::tablebase::solve::split::components_across(comm, &partition, &graph, split);
        let numbering_traffic = comm.traffic().since(before);
        let split_seconds = split_seconds + clock.elapsed().as_secs_f64();
        let mut part = part;
        part.stats.seconds.retrograde = retrograde_seconds;
        part.stats.seconds.scc = split_seconds;
        let before = comm.traffic();
        // (Rank 0's numbering is read by every rank: all fail alike.)
        let mut finished = match numbered {
            Ok((ids, odd)) => {
                let members = members_by_component(ids, window.start as usize, odd.len());
                resolve_spread(comm, &mut part, members, &odd, SpreadStart::FIRST, checkpoints)
            }
            Err(problem) => crate::tablebase::across::spread::FinishedSpread {
                slice: Vec::new(),
                width: crate::tablebase::entry::EntryWidth::Full,
                finished: (comm.rank() == 0).then_some(Err(
                    crate::tablebase::across::spread::SpreadError::Failed {
                        rank: 0,
                        problem: problem.to_string(),
                    },
                )),
                slice_sums: Vec::new(),
            },
        };
        let games_traffic = comm.traffic().since(before);
        let traffic = LayerTraffic {
            seeds: n,
            ranks: comm.ranks(),
            rounds,
            rounds_traffic: sum_traffic(comm, rounds_traffic),
            split_traffic: sum_traffic(comm, split_traffic),
            gather_traffic: sum_traffic(comm, numbering_traffic),
            bounds_traffic: sum_traffic(comm, games_traffic),
            retrograde_seconds,
            split_seconds,
            gather_seconds: 0.0,
            kept_spread: true,
        };
        if let Some(Ok(stats)) = finished.finished.as_mut() {
            stats.seconds.total = started.elapsed().as_secs_f64();
        }
        return Ok((Across::Finished(finished), traffic));
    }

    let clock = Instant::now();
    let mut e = Encoder::default();
    e.u64(part.stats.decided_by_retrograde);
    Contradiction::encode_found(part.entries.contradiction().as_ref(), &mut e);
    let mut arrays = Vec::new();
    part.entries.write_arrays(&mut arrays).expect("writing to memory");
    e.bytes.extend_from_slice(&arrays);
    drop(arrays);
    drop(part);
    e.words(&std::mem::take(&mut split.labels));
    let before = comm.traffic();
    let gathered = comm.gather(e.bytes);
    let gather_traffic = comm.traffic().since(before);
    let mut traffic = LayerTraffic {
        seeds: n,
        ranks: comm.ranks(),
        rounds,
        rounds_traffic: sum_traffic(comm, rounds_traffic),
        split_traffic: sum_traffic(comm, split.traffic),
        gather_traffic: sum_traffic(comm, gather_traffic),
        bounds_traffic: Traffic::default(),
        retrograde_seconds,
        split_seconds,
        gather_seconds: 0.0,
        kept_spread: false,
    };
    let Some(parts) = gathered else {
        return Ok((Across::Gathered(None), traffic));
    };
    let mut whole = LayerSolver::new(n, lower, budget);
    // (The ranks' arrays, estimates among them, are read into it.)
    whole.entries.hold_estimates();
    if let Some(seed) = seed {
        whole = whole.with_seed(seed);
    }
    let mut whole = whole.with_observer(observer);
    let mut labels = Vec::with_capacity(whole.size);
    for (rank, bytes) in parts.into_iter().enumerate() {
        let mut d = Decoder::new(&bytes);
        whole.stats.decided_by_retrograde += d.u64()?;
        if let Some(found) = Contradiction::decode_found(&mut d, n)? {
            whole.entries.record_contradiction(found);
        }
        let range = partition.range(rank);
        whole.entries.read_window_arrays(range.start as usize..range.end as usize, &mut d)?;
        let mine = d.words()?;
        if mine.len() as u64 != range.end - range.start {
            return Err(DecodeError::Invalid(format!(
                "rank {rank} sent {} labels for {} positions",
                mine.len(),
                range.end - range.start
            )));
        }
        labels.extend(mine);
        d.finish()?;
    }
    traffic.gather_seconds = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    split.labels = labels;
    let found = number_components(&graph, split, whole.progress, &graph.what());
    let components = components::components_found(&mut whole, found);
    whole.stats.retrograde_rounds = rounds;
    whole.stats.seconds.retrograde = retrograde_seconds;
    whole.stats.seconds.scc = split_seconds + clock.elapsed().as_secs_f64();
    // The layer's time counts from here on (`LayerSolver::run` adds its own).
    whole.stats.seconds.total = started.elapsed().as_secs_f64();
    Ok((Across::Gathered(Some(Gathered { solver: whole, components })), traffic))
}

/// The traffic of all ranks together, on every rank.
/// (Every rank takes part in every exchange: their count is the most any
/// rank counted.)
pub(crate) fn sum_traffic(comm: &dyn Communicator, mine: Traffic) -> Traffic {
    Traffic {
        exchanges: comm.max(mine.exchanges),
        messages: comm.sum(mine.messages),
        bytes: comm.sum(mine.bytes),
    }
}

/// The first pass and the propagation rounds of one rank's part; returns
/// the part and the number of rounds.
fn run_rounds<'a>(
    comm: &dyn Communicator,
    mut part: LayerSolver<'a>,
    partition: &Partition,
) -> (LayerSolver<'a>, u64) {
    let frontier =
        retrograde::first_pass(&mut part).iter().map(|p| layer_index(&p.position()) as u32).collect();
    let (rounds, _) = propagate_across(comm, &part, partition, frontier, |rounds| {
        format!("{} seeds: propagate {rounds} across {} ranks", part.n, comm.ranks())
    });
    part.stats.retrograde_rounds = rounds;
    retrograde::finish_retrograde(&mut part);
    (part, rounds)
}
