//! Phase 3: cycle components in reverse topological order. After each,
//! its decided members are propagated to their parents by retrograde
//! analysis, which decides every position on no cycle whose children are
//! then all decided. So when a component's turn comes every child outside
//! it is decided (`docs/cycle-bounds.md` §9), and a play that leaves a
//! component never returns, so the history before entering it cannot
//! repeat: the children's as-root values are the values that count.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use crate::parallel;

use crate::tablebase::entry::Proof;
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::solve::bounds;
use crate::tablebase::solve::bounds::{BoundWork, ComponentBounds, MemberBounds};
use crate::tablebase::solve::checkpoint;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::entries::LayerEntries;
use crate::tablebase::solve::graph::ComponentGraph;
use crate::tablebase::solve::members::MemberPositions;
use crate::tablebase::solve::retrograde;
use crate::tablebase::solve::search::threshold::ProofLeaves;
use crate::tablebase::solve::search::{self, SearchView};
use crate::tablebase::solve::solver::{Cursor, LayerError, LayerSolver, SavedGames, Step};
use crate::tablebase::solve::tuning::SEARCH_BATCH;

/// [`LayerError::Invariant`]: a cycle member whose exits are incomplete.
const WAITS_OUTSIDE: &str = "waits for a move out of its cycle component";

/// Where the threshold games of a large cycle component are played when
/// not on this process's threads: on rank 0 of a distributed build, by
/// every rank (`across::bounds` implements it). The phases never name the
/// ranks; they ask this.
pub(crate) trait SharedGames {
    /// Whether component `k`'s games are played elsewhere.
    fn takes(&self, solver: &LayerSolver, components: &Components, k: usize) -> bool;
    /// The history-free bounds of component `k` (the ones
    /// `bounds::cycle_bounds` finds), its games resumed from
    /// `resume` (threshold, safety rounds, state) if given, snapshots
    /// offered to `checkpoints` at the same thresholds.
    fn bounds(
        &self,
        solver: &LayerSolver,
        components: &Components,
        k: usize,
        resume: Option<(u8, u32, SavedGames)>,
        checkpoints: &mut dyn Checkpointer,
    ) -> std::io::Result<ComponentBounds>;
}

pub(crate) fn resolve_components(
    solver: &mut LayerSolver,
    components: &Components,
    first: usize,
    mut step: Step,
    checkpoints: &mut dyn Checkpointer,
    shared: Option<&dyn SharedGames>,
) -> Result<(), LayerError> {
    let mut work: Option<BoundWork> = None;
    solver.progress.phase(
        &format!("{} seeds: cycles", solver.n),
        components.total_members() as u64,
        "positions",
    );
    solver.progress.position(components.members_before(first) as u64);
    for k in first..components.count() {
        let members = components.of(k);
        resolve_cycle(
            solver,
            components,
            k,
            std::mem::replace(&mut step, Step::Begin),
            &mut work,
            checkpoints,
            shared,
        )?;
        // Where the bar stands: every member of the components so far (a
        // long threshold search moves it as its members are done).
        solver.progress.position(components.members_before(k) as u64 + members.len() as u64);
        if k + 1 < components.count() && checkpoints.due() {
            let cursor = Cursor::Resolving { k: k + 1, step: Step::Begin };
            checkpoint::checkpoint(solver, checkpoints, &cursor, Some(components))?;
        }
    }
    Ok(())
}

/// Tells the parents of a decided component's members, and so on by
/// retrograde analysis: the positions on no cycle that only waited for
/// this component are decided.
///
/// Depth first on every thread: what a thread's telling decides goes on a
/// stack of its own, and is told on at once, rather than into a
/// layer-wide frontier of 8-byte positions (at layer 20 the first held
/// 0.6 bytes a position, twice while its pieces were joined: the cycle
/// phase's peak). The positions decided, and their entries, do not
/// depend on the order (`docs/cycle-bounds.md` §5).
fn propagate_component(solver: &mut LayerSolver, positions: &MemberPositions) {
    let decided = AtomicU64::new(0);
    let _: Vec<()> = positions.par_collect(|_, _, position, _| {
        let mut stack = Vec::new();
        retrograde::propagate(solver, &position, &mut stack);
        let mut count = 0;
        while let Some(next) = stack.pop() {
            count += 1;
            retrograde::propagate(solver, &next.position(), &mut stack);
        }
        if count > 0 {
            decided.fetch_add(count, Relaxed);
        }
    });
    solver.stats.decided_acyclic += decided.into_inner();
}

/// Bounds, then search, then the decision of one cycle component, and
/// what that decides by propagation.
fn resolve_cycle(
    solver: &mut LayerSolver,
    components: &Components,
    k: usize,
    step: Step,
    work: &mut Option<BoundWork>,
    checkpoints: &mut dyn Checkpointer,
    shared: Option<&dyn SharedGames>,
) -> Result<(), LayerError> {
    let members = components.of(k);
    let positions = MemberPositions::new(solver.n, members);
    if let Some(index) = bounds::member_waiting_outside(solver, components, k, &positions) {
        return Err(LayerError::Invariant { index, broken: WAITS_OUTSIDE });
    }
    let b = &solver.budget;
    let searching = b.threshold_search_at(solver.n) || b.cut_search_at(solver.n);
    let (bounds, mut done) = match step {
        // The history-free bounds, saved when the search began.
        Step::Search { lower, upper, done } => (MemberBounds::new(lower, upper), done),
        step => {
            let clock = Instant::now();
            let resume = match step {
                Step::Bounds { t, safety_rounds, state } => Some((t, safety_rounds, state)),
                _ => None,
            };
            let bounds = match shared {
                Some(shared) if shared.takes(solver, components, k) => {
                    // (The ranks hold the games' bytes: the layer-wide
                    // work arrays make room, as below, for a component
                    // of a quarter of the layer or more.)
                    if bounds::gives_work_back(solver, members.len()) {
                        *work = None;
                    }
                    shared.bounds(solver, components, k, resume, checkpoints)?
                }
                _ => {
                    let parallel = bounds::parallel_games(solver, components, k);
                    // A component of a quarter of the layer or more, in a
                    // layer that parks: its games' peak without the
                    // entries, of which the games read only the bounds,
                    // once a threshold, from the file they wait in.
                    let big = bounds::gives_work_back(solver, members.len());
                    if let Some(dir) = solver.parking_place().filter(|_| big) {
                        solver.entries.park_for_games(&dir)?;
                    }
                    let arrays = work.get_or_insert_with(|| BoundWork::new(solver.size));
                    let bounds = bounds::cycle_bounds(
                        solver,
                        components,
                        k,
                        &positions,
                        arrays,
                        resume,
                        checkpoints,
                        parallel,
                    )?;
                    // The work arrays (3 bytes a position) are kept for
                    // the next component, unless this one was a quarter
                    // of the layer or more: then they make room for its
                    // decisions.
                    if big {
                        *work = None;
                    }
                    bounds
                }
            };
            let safety_rounds = bounds.safety_rounds;
            // The bounds shrink to a byte a member (where they meet)
            // before the entries come back from disk, if they waited
            // there; and unless a search will read the members' exits
            // from the entries, they are written over them as they come
            // back (`docs/tablebase-build.md`, memory step 7).
            let bounds = MemberBounds::of(bounds);
            let search_may_run = solver.audit.is_some()
                || searching
                    && members.iter().enumerate().any(|(i, m)| {
                        let (lower, upper) = bounds.get(&solver.entries, i, m);
                        let (low, high) = solver.entries.meet_seed(m as usize, lower, upper);
                        low < high
                    });
            let bounds = if search_may_run {
                solver.entries.restore_after_games()?;
                bounds
            } else {
                bounds.into_entries(&mut solver.entries, members)?
            };
            solver.stats.seconds.bounds += clock.elapsed().as_secs_f64();
            solver.stats.safety_rounds += safety_rounds as u64;
            (bounds, Vec::new())
        }
    };
    // The searches start from the history-free bounds met with the
    // seed's as-root intervals; inside a search only the history-free
    // bounds may be used (for move ordering), never the seed's. (Met
    // where they are read, and listed only for a search: listed, they
    // take 2 bytes a member, the games' room at the largest component.)
    let root = |entries: &LayerEntries, i: usize, m: u32| {
        let (lower, upper) = bounds.get(entries, i, m);
        entries.meet_seed(m as usize, lower, upper)
    };
    if done.is_empty() {
        solver.stats.open_before_search += members
            .iter()
            .enumerate()
            .filter(|&(i, m)| {
                let (low, high) = root(&solver.entries, i, m);
                low < high
            })
            .count() as u64;
    }
    let open_left = searching
        && members.iter_from(done.len()).enumerate().any(|(j, m)| {
            let (low, high) = root(&solver.entries, done.len() + j, m);
            low < high
        });
    let mut roots: Option<(Vec<u8>, Vec<u8>)> = None;
    if open_left {
        let (root_lower, root_upper): (Vec<u8>, Vec<u8>) =
            members.iter().enumerate().map(|(i, m)| root(&solver.entries, i, m)).unzip();
        let clock = Instant::now();
        let cpu = crate::cpu::process_seconds();
        let graph = ComponentGraph::new(solver, components, k, &positions);
        let leaves = ProofLeaves::new(&graph);
        let (lower, upper) = bounds.lists(&solver.entries, members);
        let view = SearchView { graph: &graph, leaves: &leaves, lower: &lower, upper: &upper };
        solver.stats.seconds.search += clock.elapsed().as_secs_f64();
        solver.stats.seconds.search_cpu += crate::cpu::process_seconds() - cpu;
        while done.len() < members.len() {
            if checkpoints.due() {
                let step = Step::Search { lower: lower.clone(), upper: upper.clone(), done: done.clone() };
                checkpoint::checkpoint(
                    solver,
                    checkpoints,
                    &Cursor::Resolving { k, step },
                    Some(components),
                )?;
            }
            let clock = Instant::now();
            let cpu = crate::cpu::process_seconds();
            // The next members up to SEARCH_BATCH open ones.
            let start = done.len();
            let mut end = start;
            let mut open = 0;
            while end < members.len() && open < SEARCH_BATCH {
                open += (root_lower[end] < root_upper[end]) as usize;
                end += 1;
            }
            solver.progress.detail(&format!(
                "{} seeds: searching cycle positions, {} of {}",
                solver.n,
                start,
                members.len()
            ));
            let outcome = search::search_members(solver, &view, &root_lower, &root_upper, start..end);
            solver.stats.seconds.search += clock.elapsed().as_secs_f64();
            solver.stats.seconds.search_cpu += crate::cpu::process_seconds() - cpu;
            solver.stats.searches += outcome.answered.count;
            solver.stats.search_nodes += outcome.nodes + outcome.cut_nodes;
            solver.stats.question_nodes.merge(&outcome.answered);
            solver.stats.left_open_by_threshold += outcome.left_open;
            solver.stats.closed_by_cut += outcome.closed_by_cut;
            solver.stats.cut_nodes += outcome.cut_nodes;
            done.extend(outcome.bounds);
            solver.progress.position(components.members_before(k) as u64 + done.len() as u64);
        }
        roots = Some((root_lower, root_upper));
    }
    if let Some(audit) = solver.audit.as_ref() {
        let (lower, upper) = bounds.lists(&solver.entries, members);
        let found = audit_component(solver, audit, components, k, &positions, &lower, &upper);
        solver.audit.as_mut().expect("audit").found.extend(found);
    }
    // Members no search reached keep their bounds (met with the seed),
    // read where they lie: listed with the searched ones, at 27 seeds
    // they would take 2 bytes a member more, and 6 while the list grows.
    // (As-root bounds, then the final ones.)
    let member_bounds = |entries: &LayerEntries, i: usize, m: u32| {
        let (root_lower, root_upper) = match &roots {
            Some((root_lower, root_upper)) => (root_lower[i], root_upper[i]),
            None => root(entries, i, m),
        };
        ((root_lower, root_upper), done.get(i).copied().unwrap_or((root_lower, root_upper)))
    };
    // A member left inexact needs the estimates held (none is, while every
    // entry so far is exact: `LayerEntries::without_estimates`).
    if members.iter().enumerate().any(|(i, m)| {
        let (_, (low, high)) = member_bounds(&solver.entries, i, m);
        low < high
    }) {
        solver.entries.hold_estimates();
    }
    for (i, m) in members.iter().enumerate() {
        let ((root_lower, root_upper), (low, high)) = member_bounds(&solver.entries, i, m);
        let (lower, upper) = bounds.get(&solver.entries, i, m);
        let proof = if lower == upper {
            solver.stats.exact_by_bounds += 1;
            Proof::Bounds
        } else if root_lower == root_upper {
            solver.stats.exact_from_seed += 1;
            solver.entries.seed_entry(m as usize).map_or(Proof::Search, |seed| seed.proof)
        } else {
            solver.stats.exact_by_search += (low == high) as u64;
            Proof::Search
        };
        solver.entries.decide(m as usize, low, high, low + (high - low) / 2, proof, true);
    }
    // (The bounds, 2 bytes a member, make room for the propagation's
    // frontiers.)
    drop((bounds, roots, done));
    propagate_component(solver, &positions);
    Ok(())
}

/// The path-cut search's bounds for the audited members of component
/// `k`, from their history-free bounds.
fn audit_component(
    solver: &LayerSolver,
    audit: &crate::tablebase::solve::solver::Audit,
    components: &Components,
    k: usize,
    positions: &MemberPositions,
    lower: &[u8],
    upper: &[u8],
) -> Vec<(u32, u8, u8)> {
    let members = components.of(k);
    let audited: Vec<(usize, u32)> =
        members.iter().enumerate().filter(|&(_, m)| audit.wanted.binary_search(&m).is_ok()).collect();
    if audited.is_empty() {
        return Vec::new();
    }
    let graph = ComponentGraph::new(solver, components, k, positions);
    parallel::map_indexes(audited.len(), &|a| {
        let (i, m) = audited[a];
        let mut search = crate::tablebase::solve::search::cut::CutSearch::new(&graph);
        let (low, high) = search.tighten(i, lower[i], upper[i], audit.cut_nodes);
        (m, low, high)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tablebase::layers::SolvedLayers;
    use crate::tablebase::params::SearchBudget;
    use crate::tablebase::snapshot::NoCheckpoints;
    use crate::tablebase::solve::components;

    /// Layers 0 to 9 through to their components (8 in all): when each
    /// component's turn comes no member waits for a move out of it, and a
    /// member told to wait for one move more is caught.
    #[test]
    fn members_wait_only_for_moves_into_their_component() {
        let mut solved = SolvedLayers::new();
        let mut checked = 0;
        for n in 0..=9 {
            let mut solver = LayerSolver::new(n, &solved, SearchBudget::NONE);
            solver.retrograde_only();
            let components = components::components(&mut solver).expect("labels enough");
            let count = components.count();
            for k in 0..count {
                let positions = MemberPositions::new(n, components.of(k));
                assert_eq!(
                    bounds::member_waiting_outside(&solver, &components, k, &positions),
                    None,
                    "layer {n}, {k}"
                );
                let member = components.of(k).get(0) as usize;
                let (interval, pending) = (solver.entries.interval(member), solver.entries.pending(member));
                solver.entries.start(member, interval, pending + 1);
                let found = bounds::member_waiting_outside(&solver, &components, k, &positions);
                assert_eq!(found, Some(member as u64), "layer {n}, {k}");
                solver.entries.start(member, interval, pending);
                checked += 1;
                resolve_cycle(&mut solver, &components, k, Step::Begin, &mut None, &mut NoCheckpoints, None)
                    .unwrap();
            }
            let (bytes, undecided) = solver.entries.packed();
            assert_eq!(undecided, None, "layer {n}");
            solved.push(crate::tablebase::layers::LayerBytes::Owned(bytes));
        }
        assert_eq!(checked, 8);
    }
}
