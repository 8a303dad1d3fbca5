//! The driver: a layer's phases in order, from wherever a snapshot left
//! it, with the memory each phase peaked at and a snapshot offered at
//! every safe point between them.

use crate::memory::release_free_memory;
use crate::memory::PeakSampler;
use crate::rank::layer_index;
use crate::rank::position_in_layer;
use crate::rules::PackedPosition;
use crate::tablebase::entry::EntryWidth;
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::snapshot::NoCheckpoints;
use crate::tablebase::solve::checkpoint;
use crate::tablebase::solve::components;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::resolve::{self, SharedGames};
use crate::tablebase::solve::retrograde;
use crate::tablebase::solve::solver::Audit;
use crate::tablebase::solve::solver::Cursor;
use crate::tablebase::solve::solver::LayerError;
use crate::tablebase::solve::solver::LayerSolver;
use crate::tablebase::solve::solver::Step;
use crate::tablebase::solve::solver::LEFT_UNDECIDED;
use crate::tablebase::stats::LayerStats;
use std::time::Instant;

impl LayerSolver<'_> {
    /// Runs every phase and returns the layer's records as a file stores
    /// them: value records when every entry is exact, else full records
    /// (`PackedLayer::new` tells them apart by their length).
    pub fn solve(self) -> (Vec<u8>, LayerStats) {
        // (Without checkpoints or a seed, only a builder bug fails: an
        // invariant broken.)
        let n = self.n;
        self.run(Cursor::Start, None, &mut NoCheckpoints).unwrap_or_else(|e| panic!("layer {n}: {e:?}"))
    }

    /// Solves the layer for its audit (see [`Audit`]) and returns what the
    /// audit found.
    pub(crate) fn solve_audit(self) -> Vec<(u32, u8, u8)> {
        let (_, _, audit) =
            self.run_to_end(Cursor::Start, None, &mut NoCheckpoints, None).expect("no checkpoints");
        audit.map(|a| a.found).unwrap_or_default()
    }

    /// Runs the build from `cursor` (with the components, once known),
    /// offering snapshots to `checkpoints` at safe points.
    /// A contradiction with the seed ([`LayerSolver::with_seed`]) is
    /// reported once the layer is done, for the least index.
    pub fn run(
        self,
        cursor: Cursor,
        components: Option<Components>,
        checkpoints: &mut dyn Checkpointer,
    ) -> Result<(Vec<u8>, LayerStats), LayerError> {
        self.run_to_end(cursor, components, checkpoints, None).map(|(bytes, stats, _)| (bytes, stats))
    }

    /// [`LayerSolver::run`] with the large components' threshold games
    /// played by `shared` (on rank 0 of a distributed build: by every
    /// rank, `across::bounds::RankGames`). The same bytes.
    pub(crate) fn run_sharing(
        self,
        cursor: Cursor,
        components: Option<Components>,
        checkpoints: &mut dyn Checkpointer,
        shared: &dyn SharedGames,
    ) -> Result<(Vec<u8>, LayerStats), LayerError> {
        self.run_to_end(cursor, components, checkpoints, Some(shared)).map(|(bytes, stats, _)| (bytes, stats))
    }

    fn run_to_end(
        mut self,
        mut cursor: Cursor,
        mut components: Option<Components>,
        checkpoints: &mut dyn Checkpointer,
        shared: Option<&dyn SharedGames>,
    ) -> Result<(Vec<u8>, LayerStats, Option<Audit>), LayerError> {
        let started = Instant::now();
        let seconds_before = self.stats.seconds.total;
        // (Memory freed before, such as a checkpoint just read, is handed
        // back first so that it does not count.)
        release_free_memory();
        let memory = PeakSampler::start(3);
        loop {
            release_free_memory();
            memory.enter(match cursor {
                Cursor::Start | Cursor::Propagating { .. } => 0,
                Cursor::Retrograded => 1,
                Cursor::Resolving { .. } | Cursor::Done => 2,
            });
            cursor = match cursor {
                Cursor::Start => {
                    let clock = Instant::now();
                    let frontier = retrograde::first_pass(&mut self);
                    self.stats.seconds.retrograde += clock.elapsed().as_secs_f64();
                    let indexes = frontier.iter().map(|p| layer_index(&p.position()) as u32).collect();
                    Cursor::Propagating { frontier: indexes }
                }
                Cursor::Propagating { frontier } => {
                    let clock = Instant::now();
                    let mut frontier: Vec<PackedPosition> = frontier
                        .iter()
                        .map(|&i| position_in_layer(self.n, i as u64).expect("index inside the layer"))
                        .map(|p| PackedPosition::of(&p))
                        .collect();
                    while !frontier.is_empty() {
                        if checkpoints.due() {
                            let indexes =
                                frontier.iter().map(|p| layer_index(&p.position()) as u32).collect();
                            let cursor = Cursor::Propagating { frontier: indexes };
                            checkpoint::checkpoint(&self, checkpoints, &cursor, None)?;
                        }
                        frontier = retrograde::propagate_round(&mut self, &frontier);
                    }
                    retrograde::finish_retrograde(&mut self);
                    self.stats.seconds.retrograde += clock.elapsed().as_secs_f64();
                    Cursor::Retrograded
                }
                Cursor::Retrograded => {
                    let clock = Instant::now();
                    components = Some(components::components(&mut self)?);
                    self.stats.seconds.scc += clock.elapsed().as_secs_f64();
                    Cursor::Resolving { k: 0, step: Step::Begin }
                }
                Cursor::Resolving { k, step } => {
                    let found = components.as_ref().expect("components before resolving");
                    resolve::resolve_components(&mut self, found, k, step, checkpoints, shared)?;
                    Cursor::Done
                }
                Cursor::Done => break,
            };
            self.record_memory(&memory);
            if cursor != Cursor::Done && checkpoints.due() {
                checkpoint::checkpoint(&self, checkpoints, &cursor, components.as_ref())?;
            }
        }
        self.progress.finish();
        if let Some(found) = self.entries.contradiction() {
            return Err(LayerError::Contradiction(found));
        }
        drop(components);
        release_free_memory();
        let (undecided, valued) = self.entries.check_records();
        if let Some(index) = undecided {
            return Err(LayerError::Invariant { index: index as u64, broken: LEFT_UNDECIDED });
        }
        let (bytes, width) = match valued {
            true => (self.entries.take_value_records(), EntryWidth::Value),
            false => (self.entries.packed().0, EntryWidth::Full),
        };
        self.record_memory(&memory);
        self.stats.finish(crate::tablebase::layers::PackedLayer::with_width(&bytes, width));
        self.stats.seconds.total = seconds_before + started.elapsed().as_secs_f64();
        Ok((bytes, self.stats, self.audit))
    }

    /// Folds the sampled peaks into the layer's figures (a resumed layer
    /// keeps the peaks seen before the interruption).
    fn record_memory(&mut self, sampler: &PeakSampler) {
        let m = &mut self.stats.memory;
        let phases = [&mut m.retrograde, &mut m.components, &mut m.cycles];
        for (phase, peak) in phases.into_iter().enumerate() {
            let (anonymous, file) = sampler.peak(phase);
            *peak = (*peak).max(anonymous);
            m.mapped = m.mapped.max(file);
        }
    }

    /// Runs the retrograde phase alone and returns how many positions it
    /// decided (for benchmarks comparing propagation strategies).
    pub fn retrograde_only(&mut self) -> u64 {
        let mut frontier = retrograde::first_pass(self);
        while !frontier.is_empty() {
            frontier = retrograde::propagate_round(self, &frontier);
        }
        retrograde::finish_retrograde(self);
        self.stats.decided_by_retrograde
    }

    /// The retrograde result of a position: `(decided, lower, upper)`.
    pub fn retrograde_entry(&self, index: usize) -> (bool, u8, u8) {
        let (lower, upper) = self.entries.lower_upper(index);
        (self.entries.is_decided(index), lower, upper)
    }
}

/// Layers 0 to `n − 1` solved in memory, one after the other (for tests
/// of a layer's solver on the layers below it).
#[cfg(test)]
pub(crate) fn solved_below(
    n: u32,
    budget: crate::tablebase::params::SearchBudget,
) -> crate::tablebase::layers::SolvedLayers {
    let mut lower = crate::tablebase::layers::SolvedLayers::new();
    for seeds in 0..n {
        let (bytes, _) = LayerSolver::new(seeds, &lower, budget).solve();
        lower.push(crate::tablebase::layers::LayerBytes::Owned(bytes));
    }
    lower
}

/// A layer interrupted anywhere and restored from its snapshot: these
/// tests run the whole solver, so they live with the driver.
#[cfg(test)]
mod tests {
    use std::io::{self, Write};

    use super::*;
    use crate::rank::layer_size;
    use crate::tablebase::layers::SolvedLayers;
    use crate::tablebase::params::SearchBudget;
    use crate::tablebase::snapshot::{GamesSnapshot, GamesState};
    use crate::tablebase::solve::checkpoint::{
        checkpoint_games, decode_snapshot, kept, restore, write_snapshot, MAGIC,
    };
    use crate::tablebase::solve::entries::Contradiction;
    use crate::tablebase::solve::implicit::Y_OPEN;

    #[test]
    fn snapshots_round_trip_and_damage_is_an_error() {
        let lower = solved_below(4, SearchBudget::default());
        let budget = SearchBudget::default();
        let mut solver = LayerSolver::new(4, &lower, budget);
        solver.retrograde_only();
        let mut bytes = Vec::new();
        write_snapshot(&solver, &Cursor::Retrograded, None, None, &mut bytes).unwrap();
        let (restored, cursor, components) = restore(4, &lower, budget, &bytes, None).unwrap();
        assert_eq!(cursor, Cursor::Retrograded);
        assert!(components.is_none());
        let mut again = Vec::new();
        write_snapshot(&restored, &cursor, None, None, &mut again).unwrap();
        assert_eq!(again, bytes);
        let (finished, _) = restored.run(cursor, None, &mut NoCheckpoints).unwrap();
        let (straight, _) = LayerSolver::new(4, &lower, budget).solve();
        assert_eq!(finished, straight);
        for cut in [0, 7, 20, bytes.len() / 2, bytes.len() - 1] {
            assert!(restore(4, &lower, budget, &bytes[..cut], None).is_err());
        }
        assert!(restore(3, &lower, budget, &bytes, None).is_err());
        // A bound above the layer's 4 seeds (the first lower bound: after
        // the magic, the layer, its size and the blob's length), which a
        // file forged with a matching checksum could hold.
        let first_lower = MAGIC.len() + 4 + 8 + 8;
        assert_eq!(bytes[first_lower - 8..first_lower], (layer_size(4)).to_le_bytes());
        let mut forged = bytes.clone();
        forged[first_lower] = 5;
        let error = restore(4, &lower, budget, &forged, None).err().expect("refused");
        assert!(error.to_string().contains("lower bounds: position 0 holds 5, above 4 seeds"), "{error}");
    }

    /// Estimates not held while every entry is exact change no byte: on
    /// layers 0 to 9 without searches (where some layers are left
    /// inexact, so that both ways of holding them again happen: a layer
    /// above an inexact one holds them from the start, and a layer whose
    /// own members are left inexact takes them up before deciding them),
    /// the same layers, figures and snapshots as with every estimate held.
    #[test]
    fn estimates_not_held_change_no_byte() {
        let mut lower = SolvedLayers::new();
        let (mut taken_up, mut from_the_start) = (0, 0);
        for n in 0..=9 {
            let (mut lean, mut held) = (
                LayerSolver::new(n, &lower, SearchBudget::NONE),
                LayerSolver::new(n, &lower, SearchBudget::NONE),
            );
            held.entries.hold_estimates();
            let lean_at_start = lean.entries.estimates_held();
            from_the_start += lean_at_start as usize;
            assert_eq!(lean_at_start, !lower.every_layer_exact(), "layer {n}");
            lean.retrograde_only();
            held.retrograde_only();
            let snapshot = |solver: &LayerSolver| {
                let mut bytes = Vec::new();
                write_snapshot(solver, &Cursor::Retrograded, None, None, &mut bytes).unwrap();
                bytes
            };
            assert!(snapshot(&lean) == snapshot(&held), "layer {n}: the snapshots");
            let mut lean = lean;
            let components = crate::tablebase::solve::components::components(&mut lean).unwrap();
            resolve::resolve_components(&mut lean, &components, 0, Step::Begin, &mut NoCheckpoints, None)
                .unwrap();
            taken_up += (!lean_at_start && lean.entries.estimates_held()) as usize;
            let (lean_bytes, lean_stats) = LayerSolver::new(n, &lower, SearchBudget::NONE).solve();
            let (held_bytes, held_stats) = held.run(Cursor::Retrograded, None, &mut NoCheckpoints).unwrap();
            assert!(lean_bytes == held_bytes, "layer {n}");
            assert_eq!(lean_stats.components, held_stats.components, "layer {n}");
            lower.push(crate::tablebase::layers::LayerBytes::Owned(lean_bytes));
        }
        assert!(
            taken_up >= 1 && from_the_start >= 1,
            "{taken_up} layers took them up, {from_the_start} held them"
        );
    }

    /// A contradiction with the table a build starts from, found before a
    /// snapshot, is restored with it (else a resumed build would write a
    /// layer it should refuse).
    #[test]
    fn a_contradiction_found_before_a_snapshot_is_restored_with_it() {
        let lower = solved_below(4, SearchBudget::NONE);
        let solver = LayerSolver::new(4, &lower, SearchBudget::NONE);
        let found = Contradiction { seeds: 4, index: 17, ours: (1, 2), theirs: (3, 4) };
        solver.entries.record_contradiction(found);
        let mut bytes = Vec::new();
        write_snapshot(&solver, &Cursor::Start, None, None, &mut bytes).unwrap();
        let (restored, _, _) = restore(4, &lower, SearchBudget::NONE, &bytes, None).unwrap();
        assert_eq!(restored.entries.contradiction(), Some(found));
        // Outside the layer, it is damage.
        let mut outside = Vec::new();
        let solver = LayerSolver::new(4, &lower, SearchBudget::NONE);
        solver.entries.record_contradiction(Contradiction { index: 1 << 40, ..found });
        write_snapshot(&solver, &Cursor::Start, None, None, &mut outside).unwrap();
        assert!(restore(4, &lower, SearchBudget::NONE, &outside, None).is_err());
    }

    /// A snapshot inside the threshold games, streamed from the work
    /// arrays, has the bytes of one that copies their state, and resumes
    /// to the layer of a build never interrupted.
    #[test]
    fn games_states_are_streamed_as_they_would_be_copied() {
        let lower = solved_below(6, SearchBudget::NONE);
        let mut solver = LayerSolver::new(6, &lower, SearchBudget::NONE);
        solver.retrograde_only();
        let components = components::components(&mut solver).expect("labels enough");
        let members = components.of(0);
        assert!(members.len() > 1000);
        // Some made-up state of the games, different per member.
        let size = solver.size;
        let win: Vec<u8> = (0..2 * size).map(|i| (i % 7) as u8).collect();
        // (A position's byte of counters, as `bounds` keeps them: the
        // opponent state's open count beside safety scratch that is zero.)
        let open: Vec<u8> = (0..size).map(|i| Y_OPEN.with(0, (i % 5) as u8)).collect();
        let mut state = Vec::new();
        for m in members.iter() {
            let m = m as usize;
            state.extend_from_slice(&win[2 * m..2 * m + 2]);
            state.extend_from_slice(&[0, (m % 5) as u8]);
        }
        let cursor =
            Cursor::Resolving { k: 0, step: Step::Bounds { t: 3, safety_rounds: 2, state: state.into() } };
        let mut copied = Vec::new();
        write_snapshot(&solver, &cursor, Some(&components), None, &mut copied).unwrap();
        let games =
            GamesState { members: &members, win: &win, counts: &open, open_of: &|_, c| [0, Y_OPEN.of(c)] };
        struct Keep(Vec<u8>);
        impl Checkpointer for Keep {
            fn due(&mut self) -> bool {
                true
            }
            fn save(&mut self, write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
                write(&mut self.0)
            }
        }
        let mut streamed = Keep(Vec::new());
        checkpoint_games(&solver, &mut streamed, (0, 3, 2), &components, &GamesSnapshot::Arrays(&games))
            .unwrap();
        assert!(streamed.0 == copied);
        let (_, restored, _) = decode_snapshot(6, &lower, SearchBudget::NONE, &kept(&copied), None).unwrap();
        assert_eq!(restored, cursor);
        // (Made up, the state is none the games could leave.)
        let error = restore(6, &lower, SearchBudget::NONE, &copied, None).err().expect("refused");
        assert!(error.to_string().contains("threshold games' state"), "{error}");
    }

    /// Every snapshot the threshold games of a layer offer restores; one
    /// whose games' state breaks an invariant of `docs/cycle-bounds.md`
    /// §10 (as a file forged with a matching checksum could) is refused.
    #[test]
    fn games_states_that_break_the_games_invariants_are_refused() {
        let lower = solved_below(8, SearchBudget::NONE);
        /// Restores every snapshot offered; keeps those taken inside the
        /// games.
        struct Restoring<'l> {
            lower: &'l SolvedLayers,
            inside_games: Vec<Vec<u8>>,
        }
        impl Checkpointer for Restoring<'_> {
            fn due(&mut self) -> bool {
                true
            }
            fn save(&mut self, write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
                let mut bytes = Vec::new();
                write(&mut bytes)?;
                let (_, cursor, _) = restore(8, self.lower, SearchBudget::NONE, &bytes, None)
                    .unwrap_or_else(|e| panic!("an offered snapshot is refused: {e}"));
                if let Cursor::Resolving { step: Step::Bounds { .. }, .. } = cursor {
                    self.inside_games.push(bytes);
                }
                Ok(())
            }
        }
        let mut offered = Restoring { lower: &lower, inside_games: Vec::new() };
        LayerSolver::new(8, &lower, SearchBudget::NONE).run(Cursor::Start, None, &mut offered).unwrap();
        let inside = offered.inside_games;
        assert!(inside.len() >= 5, "{} snapshots inside the games", inside.len());
        // One halfway through the giant component's thresholds.
        let largest = inside.iter().map(Vec::len).max().unwrap();
        let giants: Vec<&Vec<u8>> = inside.iter().filter(|bytes| bytes.len() == largest).collect();
        let (solver, cursor, components) =
            restore(8, &lower, SearchBudget::NONE, giants[giants.len() / 2], None).unwrap();
        let components = components.unwrap();
        let Cursor::Resolving { k, step: Step::Bounds { t, safety_rounds, state } } = cursor else {
            panic!("inside the games")
        };
        let members = components.of(k).to_vec();
        assert!(members.len() > 1000 && t > 1);
        // (`says`: what the refusal names, "" for any of the invariants.)
        let refused = |forge: &dyn Fn(&mut Vec<u8>), what: &str, says: &str| {
            let mut forged = state.to_vec();
            forge(&mut forged);
            assert!(forged[..] != state[..], "{what}: nothing changed");
            let cursor =
                Cursor::Resolving { k, step: Step::Bounds { t, safety_rounds, state: forged.into() } };
            let mut bytes = Vec::new();
            write_snapshot(&solver, &cursor, Some(&components), None, &mut bytes).unwrap();
            let error = restore(8, &lower, SearchBudget::NONE, &bytes, None).err();
            let error = error.unwrap_or_else(|| panic!("{what}: restored"));
            let error = error.to_string();
            assert!(error.contains("threshold games' state") && error.contains(says), "{what}: {error}");
        };
        // No snapshot is taken after the last threshold, 1.
        let after_the_last =
            Cursor::Resolving { k, step: Step::Bounds { t: 0, safety_rounds, state: state.clone() } };
        let mut bytes = Vec::new();
        write_snapshot(&solver, &after_the_last, Some(&components), None, &mut bytes).unwrap();
        assert!(restore(8, &lower, SearchBudget::NONE, &bytes, None).is_err());
        let n = 8u8;
        let won_x = (0..members.len()).filter(|&i| state[4 * i] != 0).collect::<Vec<_>>();
        let counted_y = (0..members.len())
            .filter(|&i| state[4 * i + 1] == 0 && n - solver.entries.lower_upper(members[i] as usize).1 > t)
            .collect::<Vec<_>>();
        assert!(won_x.len() > 100 && counted_y.len() > 100, "{} {}", won_x.len(), counted_y.len());
        // Marks outside the thresholds solved, or a Y mark above its exits.
        refused(&|s| s[4 * won_x[0]] = t, "a player mark at the threshold to come", "player state won at");
        refused(&|s| s[4 * won_x[0]] = n + 1, "a player mark above the seeds", "won at threshold 9");
        if let Some(i) = (0..members.len()).find(|&i| {
            let joins_from = n - solver.entries.lower_upper(members[i] as usize).1;
            state[4 * i + 1] == 0 && joins_from > t && joins_from < n
        }) {
            let joins_from = n - solver.entries.lower_upper(members[i] as usize).1;
            refused(&|s| s[4 * i + 1] = joins_from + 1, "an opponent mark above its exits", "may join from");
        }
        // A count at a player state, or a wrong one at an opponent state.
        refused(&|s| s[4 * won_x[0] + 2] = 1, "a count at a player state", "a count at a player state");
        for &i in counted_y.iter().step_by(counted_y.len() / 10) {
            refused(&|s| s[4 * i + 3] += 1, "an opponent count one too many", "children not won of");
            refused(&|s| s[4 * i + 3] -= 1, "an opponent count one too few", "children not won of");
        }
        let interval = |i: usize| solver.entries.lower_upper(members[i] as usize);
        if let Some(i) = (0..members.len()).find(|&i| state[4 * i + 1] == 0 && n - interval(i).1 <= t) {
            refused(&|s| s[4 * i + 3] = 1, "a count before its state may join", "may join only from");
        }
        // A mark the member's own exits already deny (fact 3).
        let exit_won = (0..members.len()).find(|&i| interval(i).0 > t).expect("an exit above t");
        refused(&|s| s[4 * exit_won] = 0, "a player state not won at its exit", "below its exit's");
        // Marks moved within the thresholds played: the exits and the
        // children's marks say otherwise (facts 4 and 5).
        for &i in won_x.iter().step_by(won_x.len() / 20) {
            refused(&|s| s[4 * i] = 0, "a player state's mark dropped", "");
            if state[4 * i] < n {
                refused(&|s| s[4 * i] += 1, "a player state's mark raised", "");
            }
        }
        let won_y = (0..members.len()).filter(|&i| state[4 * i + 1] != 0).collect::<Vec<_>>();
        assert!(won_y.len() > 100, "{}", won_y.len());
        // A count no position can have, even at a state won (where the
        // count is never read again: the games keep it beside the safety
        // scratch in one byte, so it must fit).
        refused(&|s| s[4 * won_y[0] + 3] = 7, "an opponent count of 7", "at most 6 moves");
        refused(&|s| s[4 * won_y[0] + 3] = 0x35, "an opponent count of 53", "at most 6 moves");
        for &i in won_y.iter().step_by(won_y.len() / 20) {
            refused(&|s| s[4 * i + 1] = 0, "an opponent state's mark dropped", "");
            if state[4 * i + 1] > t + 1 {
                refused(&|s| s[4 * i + 1] -= 1, "an opponent state's mark lowered", "");
            }
        }
    }

    /// Keeps every snapshot offered.
    struct Every(Vec<Vec<u8>>);

    impl Checkpointer for Every {
        fn due(&mut self) -> bool {
            true
        }
        fn save(&mut self, write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
            let mut bytes = Vec::new();
            write(&mut bytes)?;
            self.0.push(bytes);
            Ok(())
        }
    }

    /// Every snapshot taken inside the threshold games, resumed, finishes
    /// the layer a straight run makes, parking or not: the games' state
    /// and the bit of the opponent states that may join (rebuilt from the
    /// bounds and the threshold) carry all they need.
    #[test]
    fn every_snapshot_inside_the_games_resumes_to_the_same_layer() {
        let lower = solved_below(8, SearchBudget::NONE);
        let dir = std::env::temp_dir().join(format!("oware-games-resumes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (straight, _) = LayerSolver::new(8, &lower, SearchBudget::NONE).solve();
        let mut snapshots = Every(Vec::new());
        LayerSolver::new(8, &lower, SearchBudget::NONE).run(Cursor::Start, None, &mut snapshots).unwrap();
        let mut resumed = 0;
        for bytes in &snapshots.0 {
            for parking in [false, true] {
                let (solver, cursor, components) =
                    decode_snapshot(8, &lower, SearchBudget::NONE, &kept(bytes), None).expect("a snapshot");
                if !matches!(cursor, Cursor::Resolving { step: Step::Bounds { .. }, .. }) {
                    break;
                }
                let solver = if parking { solver.with_parking(&dir, 0) } else { solver };
                let (finished, _) = solver.run(cursor, components, &mut NoCheckpoints).unwrap();
                assert!(finished == straight, "resumed from snapshot {resumed}, parking {parking}");
                resumed += 1;
            }
        }
        assert!(resumed >= 2 * 6, "{resumed} resumed");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "a file left");
        std::fs::remove_dir(&dir).unwrap();
    }

    /// A layer that parks what its phases do not read (from its first
    /// position) offers the very snapshots of one that does not, byte for
    /// byte: inside the threshold games of its large component the
    /// estimates and state bytes are streamed from the scratch file. The same layer, and
    /// no file left behind.
    #[test]
    fn parking_offers_the_same_snapshots_and_layer() {
        let lower = solved_below(8, SearchBudget::NONE);
        let dir = std::env::temp_dir().join(format!("oware-parking-snapshots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut plain = Every(Vec::new());
        let (bytes, stats) =
            LayerSolver::new(8, &lower, SearchBudget::NONE).run(Cursor::Start, None, &mut plain).unwrap();
        let mut parking = Every(Vec::new());
        let solver = LayerSolver::new(8, &lower, SearchBudget::NONE).with_parking(&dir, 0);
        let (parked_bytes, _) = solver.run(Cursor::Start, None, &mut parking).unwrap();
        assert!(bytes == parked_bytes);
        // (A component of a quarter of the layer: its games park the
        // estimates and state bytes, and offer a snapshot at every
        // threshold but the first.)
        assert!(4 * stats.components.largest >= layer_size(8), "{:?}", stats.components);
        assert!(plain.0.len() > 8, "{} snapshots", plain.0.len());
        // (A snapshot also holds the times so far, which differ, and a
        // retrograde frontier in the order the threads found it: each is
        // decoded, and its entries, cursor (a frontier sorted) and
        // components compared.)
        assert_eq!(plain.0.len(), parking.0.len());
        let contents = |bytes: &[u8]| {
            let (solver, cursor, components) =
                decode_snapshot(8, &lower, SearchBudget::NONE, &kept(bytes), None).expect("a snapshot");
            let mut arrays = Vec::new();
            solver.entries.write_arrays(&mut arrays).unwrap();
            let cursor = match cursor {
                Cursor::Propagating { mut frontier } => {
                    frontier.sort_unstable();
                    Cursor::Propagating { frontier }
                }
                cursor => cursor,
            };
            (arrays, cursor, components.map(|c| (0..c.count()).map(|k| c.of(k).to_vec()).collect::<Vec<_>>()))
        };
        for (i, (plain, parking)) in plain.0.iter().zip(&parking.0).enumerate() {
            let (a, b) = (contents(plain), contents(parking));
            assert!(a.1 == b.1, "snapshot {i}: cursor {:?} vs {:?}", a.1, b.1);
            assert!(a.0 == b.0, "snapshot {i}: entries differ, cursor {:?}", a.1);
            assert!(a.2 == b.2, "snapshot {i}: components");
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "a file left");
        std::fs::remove_dir(&dir).unwrap();
    }
}
