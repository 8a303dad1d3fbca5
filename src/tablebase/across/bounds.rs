//! The history-free bounds of a large cycle component with its threshold
//! games spread over the ranks of a distributed build
//! (`docs/distributed-build.md` §2 proves they are the bounds one process
//! finds, and that a snapshot taken here is the one it takes).
//!
//! Rank 0 resolves the components in order, as one process does; for a
//! large one it hands every rank the members in its index range with the
//! intervals of their best exits (and, when resuming, the games' state of
//! those members). Then all ranks play the games of
//! [`bounds`](crate::tablebase::solve::bounds) together, threshold by threshold: the
//! attractor, the safety sets and the co-Büchi peeling. Each rule that
//! reads a neighbour's state in one process is turned around into a
//! message from the neighbour:
//!
//! * a state that joins the won region tells its parents (a player parent
//!   joins; an opponent parent counts one child fewer not won);
//! * an opponent state keeps the count of its children not won from the
//!   start, not only from the threshold at which it may join (one pass
//!   counts them, each child telling its parents);
//! * a safety game's counts are told by the children: each candidate is
//!   one child inside for each parent, and an opponent state has a child
//!   that escapes when it has fewer children inside than not won.
//!
//! What a step has for a parent held by another rank goes to that rank in
//! one message per destination: the states as `2 × offset + parity` (the
//! offset in the holder's range), sorted and sent as gaps
//! ([`gaps`](crate::cluster::gaps), about a byte a state in the dense
//! steps); the holder applies them. Rank 0
//! gathers the threshold at which every state was won, which gives the
//! bounds. The other ranks wait for rank 0's next component in
//! [`serve_bounds`] until it calls [`end_bounds`].
//!
//! A snapshot taken inside these games is kept in parts: when rank 0's
//! checkpointer wants one, every rank writes the games' state of its own
//! members as its part ([`SnapshotParts`]), and rank 0 saves the snapshot
//! that names the parts with their sizes and checksums; the manifest that
//! names the snapshot comes last. Joined in rank order, the parts are the
//! state one process's snapshot holds (§2 of the document).

use std::io;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use crate::cluster::{Communicator, Partition};
use crate::codec::{DecodeError, Decoder, Encoder};
use crate::parallel;
use crate::rank::{layer_index, layer_size};
use crate::rules::Position;
use crate::tablebase::snapshot::Checkpointer;
use crate::tablebase::snapshot::GamesSnapshot;
use crate::tablebase::snapshot::PartRecord;
use crate::tablebase::snapshot::SnapshotParts;
use crate::tablebase::solve::bounds::ComponentBounds;
use crate::tablebase::solve::checkpoint;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::games::{leaves_with_child, SAFE_ALONE};
use crate::tablebase::solve::members::{MemberPositions, Members};
use crate::tablebase::solve::resolve::SharedGames;
use crate::tablebase::solve::solver::{LayerSolver, SavedGames};
use crate::tablebase::solve::split::exchange_parts;

/// Rank 0's commands to the ranks waiting in [`serve_bounds`].
const END: u8 = 0;
const BOUNDS: u8 = 1;

/// A position of the rank's range outside the component.
const NOT_MEMBER: u32 = u32::MAX;

/// Frontier states handed to one thread at a time.
const FRONTIER_CHUNK: usize = 1 << 10;

/// Members walked by one thread at a time.
const MEMBER_CHUNK: usize = 1 << 14;

/// States a rank expands per exchange (what it sends in one exchange is
/// at most 4 bytes per parent of these, before the gaps shrink it).
const EXCHANGE_SLICE: usize = 1 << 22;

/// Whether component `k` of a distributed build gets the games across the
/// ranks: a component of at least `parallel_members` members, the size
/// from which one process plays the parallel games (when it has threads).
pub(crate) fn spread(solver: &LayerSolver, components: &Components, k: usize) -> bool {
    components.of(k).len() >= solver.parallel_members
}

/// The threshold games of the large components played by every rank of
/// a distributed build (the solver runs on rank 0, the other ranks wait
/// in [`serve_bounds`]).
pub(crate) struct RankGames<'c>(pub &'c dyn Communicator);

impl SharedGames for RankGames<'_> {
    fn takes(&self, solver: &LayerSolver, components: &Components, k: usize) -> bool {
        spread(solver, components, k)
    }

    fn bounds(
        &self,
        solver: &LayerSolver,
        components: &Components,
        k: usize,
        resume: Option<(u8, u32, SavedGames)>,
        checkpoints: &mut dyn Checkpointer,
    ) -> io::Result<ComponentBounds> {
        bounds_across(solver, self.0, components, k, resume, checkpoints)
    }
}

/// `bounds::cycle_bounds` of component `k` with every rank of
/// `comm` taking part (rank 0 calls this while the others wait in
/// [`serve_bounds`]): the same bounds and safety rounds. The ranks play
/// a safety set at every threshold (`bounds::Order::SafetySets`, not
/// the attractors first), and offer `checkpoints` the snapshots that
/// order offers, at the same thresholds, which are the same once their
/// parts (written where `checkpoints` keeps them) are joined.
pub(crate) fn bounds_across(
    solver: &LayerSolver,
    comm: &dyn Communicator,
    components: &Components,
    k: usize,
    resume: Option<(u8, u32, SavedGames)>,
    checkpoints: &mut dyn Checkpointer,
) -> io::Result<ComponentBounds> {
    let members = components.of(k);
    let n = solver.n as u8;
    let partition = Partition::new(solver.size as u64, comm.ranks());
    let (first, rounds_before, state) = match resume {
        Some((t, rounds, state)) => (t, rounds, Some(state)),
        None => (n, 0, None),
    };
    comm.broadcast(vec![BOUNDS]);
    let outgoing = (0..comm.ranks())
        .map(|rank| {
            let range = partition.range(rank);
            let (from, to) = (members.below(range.start as usize), members.below(range.end as usize));
            let mine: Vec<u32> = members.iter_from(from).take(to - from).collect();
            let interval = |m: u32| solver.entries.lower_upper(m as usize);
            Assignment {
                first,
                members: mine.clone(),
                lower: mine.iter().map(|&m| interval(m).0).collect(),
                upper: mine.iter().map(|&m| interval(m).1).collect(),
                state: state.as_ref().map(|s| s[4 * from..4 * to].to_vec()),
            }
            .encode()
        })
        .collect();
    let message = comm.exchange(outgoing).swap_remove(0);
    let mut lead =
        RankZero { solver, checkpoints, components, k, rounds_before, members: members.len(), error: None };
    let played = play(comm, n, &partition, message, &mut lead);
    let stopped = |lead: RankZero| {
        lead.error.unwrap_or_else(|| io::Error::other("a rank could not take its share of a component"))
    };
    let Ok((added, Some(wins))) = played else { return Err(stopped(lead)) };
    let wins = wins.concat();
    if wins.len() != 2 * members.len() {
        return Err(io::Error::other(format!(
            "the ranks sent {} won thresholds for {} states",
            wins.len(),
            2 * members.len()
        )));
    }
    let lower = wins.iter().step_by(2).copied().collect();
    let upper = wins.iter().skip(1).step_by(2).map(|&w| n - w).collect();
    Ok(ComponentBounds::from_lists(lower, upper, rounds_before.saturating_add(added)))
}

/// The part of a rank other than 0 in the cycle phases of layer `n`: it
/// plays each component's games rank 0 hands out, until rank 0 ends them
/// with [`end_bounds`], and writes its parts of their snapshots to
/// `parts`. Collective.
pub(crate) fn serve_bounds(comm: &dyn Communicator, n: u32, parts: &dyn SnapshotParts) {
    let partition = Partition::new(layer_size(n), comm.ranks());
    while comm.broadcast(Vec::new()) == [BOUNDS] {
        let message = comm.exchange(vec![Vec::new(); comm.ranks()]).swap_remove(0);
        // (Only rank 0 reports a failure: it stops every rank's games.)
        let _ = play(comm, n as u8, &partition, message, &mut Follower { parts, rank: comm.rank() });
    }
}

/// Tells the ranks in [`serve_bounds`] that layer's cycle phases are over
/// (rank 0, after its last component, whether or not it finished).
pub(crate) fn end_bounds(comm: &dyn Communicator) {
    comm.broadcast(vec![END]);
}

/// What rank 0 hands a rank for one component's games.
struct Assignment {
    /// The first threshold to solve: `n`, or where a snapshot stopped.
    first: u8,
    /// The component's members in the rank's range (layer indexes, sorted).
    members: Vec<u32>,
    /// Per member: the interval of its best exit, lower and upper end.
    lower: Vec<u8>,
    upper: Vec<u8>,
    /// Per member, when resuming: `win(q,0), win(q,1), open(q,0),
    /// open(q,1)` as the snapshot holds them.
    state: Option<Vec<u8>>,
}

impl Assignment {
    fn encode(&self) -> Vec<u8> {
        let mut e = Encoder::default();
        e.u8(self.first);
        e.words(&self.members);
        e.blob(&self.lower);
        e.blob(&self.upper);
        match &self.state {
            Some(state) => {
                e.u8(1);
                e.blob(state);
            }
            None => e.u8(0),
        }
        e.bytes
    }

    /// Reads rank 0's message for the range `range` of layer `n`.
    fn decode(bytes: &[u8], n: u8, range: std::ops::Range<u64>) -> Result<Assignment, DecodeError> {
        let mut d = Decoder::new(bytes);
        let first = d.u8()?;
        let members = d.words()?;
        let lower = d.blob()?.to_vec();
        let upper = d.blob()?.to_vec();
        let state = match d.u8()? {
            0 => None,
            1 => Some(d.blob()?.to_vec()),
            tag => return Err(DecodeError::Invalid(format!("a games' state tagged {tag}"))),
        };
        d.finish()?;
        let sorted = members.windows(2).all(|w| w[0] < w[1]);
        // (Offsets travel as 2 × offset + parity in 32 bits.)
        let inside =
            range.end - range.start <= 1 << 31 && members.iter().all(|&m| range.contains(&(m as u64)));
        let lengths = lower.len() == members.len()
            && upper.len() == members.len()
            && state.as_ref().is_none_or(|s| s.len() == 4 * members.len());
        let values = first <= n && lower.iter().chain(&upper).all(|&v| v <= n);
        if !(sorted && inside && lengths && values) {
            return Err(DecodeError::Invalid(
                "a component's share that does not fit the rank's range".into(),
            ));
        }
        Ok(Assignment { first, members, lower, upper, state })
    }
}

/// Where a snapshot is taken: before a component's games (a layer kept
/// spread, `spread.rs`), or inside them before threshold `t`, after
/// `added` safety rounds that added states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SnapshotAt {
    Begin,
    Threshold { t: u8, added: u32 },
}

/// What differs between rank 0 and the others, and between the cycle
/// phases led by rank 0 and a layer kept spread: snapshots and progress.
pub(crate) trait Lead {
    /// The sequence number of a snapshot wanted now, if one is (rank 0's
    /// checkpointer decides, if it keeps parts; the others say `None`).
    fn snapshot_due(&mut self) -> Option<u64>;
    /// Writes this rank's part of snapshot `sequence` (called only once
    /// rank 0 has said one is due): `members` are the members of the
    /// component in this rank's range, `state` their games' state (four
    /// bytes each as one process's snapshot holds it; empty before the
    /// games).
    fn write_part(&self, sequence: u64, members: &[u32], state: &[u8]) -> io::Result<PartRecord>;
    /// Saves snapshot `sequence` taken `at`, from every rank's reply about
    /// its part ([`part_reply`]); false if it could not be saved.
    fn save(&mut self, at: SnapshotAt, sequence: u64, replies: Vec<Vec<u8>>) -> bool;
    /// Reports that threshold `t` starts.
    fn threshold(&self, t: u8);
}

/// A snapshot opportunity, taken by every rank together: rank 0's lead
/// says whether one is due and its number; each rank writes its part
/// (`write`), then rank 0 saves the snapshot naming them. False if a part
/// or the snapshot could not be written: then every rank stops.
/// Collective.
pub(crate) fn offer_snapshot(
    comm: &dyn Communicator,
    lead: &mut dyn Lead,
    at: SnapshotAt,
    write: impl FnOnce(&dyn Lead, u64) -> io::Result<PartRecord>,
) -> bool {
    let due = lead.snapshot_due();
    let order = comm.broadcast(due.map_or_else(Vec::new, |s| s.to_le_bytes().to_vec()));
    let Ok(sequence) = <[u8; 8]>::try_from(order.as_slice()).map(u64::from_le_bytes) else {
        return true;
    };
    let reply = part_reply(write(lead, sequence));
    let saved = match comm.gather(reply) {
        Some(replies) => lead.save(at, sequence, replies),
        None => true,
    };
    !comm.any(!saved)
}

struct Follower<'p> {
    parts: &'p dyn SnapshotParts,
    rank: usize,
}

impl Lead for Follower<'_> {
    fn snapshot_due(&mut self) -> Option<u64> {
        None
    }
    fn write_part(&self, sequence: u64, _: &[u32], state: &[u8]) -> io::Result<PartRecord> {
        self.parts.write_part(sequence, self.rank, state)
    }
    fn save(&mut self, _: SnapshotAt, _: u64, _: Vec<Vec<u8>>) -> bool {
        true
    }
    fn threshold(&self, _: u8) {}
}

/// What a rank tells rank 0 about its part: `[0]` and the part's record,
/// or `[1]` and why it could not be written.
fn part_reply(written: io::Result<PartRecord>) -> Vec<u8> {
    match written {
        Ok(record) => [vec![0], record.encode()].concat(),
        Err(error) => [vec![1], error.to_string().into_bytes()].concat(),
    }
}

/// The records of every rank's part, in rank order, or the first failure.
pub(crate) fn part_records(replies: Vec<Vec<u8>>) -> io::Result<Vec<PartRecord>> {
    let mut records = Vec::with_capacity(replies.len());
    for (rank, reply) in replies.into_iter().enumerate() {
        let failed =
            |problem: String| io::Error::other(format!("rank {rank}'s part of a snapshot: {problem}"));
        match reply.split_first() {
            Some((0, record)) => {
                let mut d = Decoder::new(record);
                let record = PartRecord::decode(&mut d).and_then(|r| d.finish().map(|_| r));
                records.push(record.map_err(|e| failed(e.to_string()))?);
            }
            Some((_, text)) => return Err(failed(String::from_utf8_lossy(text).into_owned())),
            None => return Err(failed("an empty reply".into())),
        }
    }
    Ok(records)
}

struct RankZero<'s, 'l> {
    solver: &'s LayerSolver<'l>,
    checkpoints: &'s mut dyn Checkpointer,
    components: &'s Components,
    k: usize,
    rounds_before: u32,
    members: usize,
    error: Option<io::Error>,
}

impl Lead for RankZero<'_, '_> {
    fn snapshot_due(&mut self) -> Option<u64> {
        let sequence = self.checkpoints.parts()?.1;
        self.checkpoints.due().then_some(sequence)
    }

    fn write_part(&self, sequence: u64, _: &[u32], state: &[u8]) -> io::Result<PartRecord> {
        match self.checkpoints.parts() {
            Some((parts, _)) => parts.write_part(sequence, 0, state),
            None => Err(io::Error::other("no place to write a snapshot's part")),
        }
    }

    fn save(&mut self, at: SnapshotAt, sequence: u64, replies: Vec<Vec<u8>>) -> bool {
        let SnapshotAt::Threshold { t, added } = at else {
            self.error = Some(io::Error::other("a snapshot before the games led by rank 0"));
            return false;
        };
        let saved = part_records(replies).and_then(|records| {
            let games = GamesSnapshot::Parts { sequence, records: &records };
            let at = (self.k, t, self.rounds_before.saturating_add(added));
            checkpoint::checkpoint_games(self.solver, self.checkpoints, at, self.components, &games)
        });
        self.error = saved.err();
        self.error.is_none()
    }

    fn threshold(&self, t: u8) {
        // (As one process reports them: for components above 65,536.)
        if self.members > 1 << 16 {
            self.solver.progress.detail(&format!(
                "{} seeds: bounds of {} positions across ranks, threshold {t}",
                self.solver.n, self.members
            ));
        }
    }
}

/// The games were stopped: a rank could not read its share, or a
/// snapshot could not be saved.
pub(crate) struct Stopped;

/// On rank 0, every rank's won thresholds (`win(q,0), win(q,1)` per
/// member), by rank; `None` on the others.
type Wins = Option<Vec<Vec<u8>>>;

/// One rank's games on the share `message` holds; returns the safety
/// rounds that added states and the [`Wins`]. Collective.
fn play(
    comm: &dyn Communicator,
    n: u8,
    partition: &Partition,
    message: Vec<u8>,
    lead: &mut dyn Lead,
) -> Result<(u32, Wins), Stopped> {
    let range = partition.range(comm.rank());
    let assignment = Assignment::decode(&message, n, range.clone());
    drop(message);
    if comm.any(assignment.is_err()) {
        return Err(Stopped);
    }
    let mut assignment = assignment.map_err(|_| Stopped)?;
    let (added, wins) = play_share(comm, n, partition, &mut assignment, lead)?;
    Ok((added, comm.gather(wins)))
}

/// One rank's games on `assignment` (members of its range); returns the
/// safety rounds that added states and the won thresholds of its members
/// (`win(q,0), win(q,1)` each). Collective.
fn play_share(
    comm: &dyn Communicator,
    n: u8,
    partition: &Partition,
    assignment: &mut Assignment,
    lead: &mut dyn Lead,
) -> Result<(u32, Vec<u8>), Stopped> {
    let range = partition.range(comm.rank());
    // (The snapshot's bytes are copied into the work bytes, then freed.)
    let state = assignment.state.take();
    let share = Share::new(n, partition, range, assignment, state);
    let added = share.play(comm, lead)?;
    Ok((added, share.win.iter().map(|w| w.load(Relaxed)).collect()))
}

/// Per member `(lower, upper)`, the safety rounds that added states, and
/// the members.
pub(crate) type SpreadBounds = (Vec<(u8, u8)>, u32, Vec<u32>);

/// The history-free bounds of one cycle component whose members stay with
/// the ranks that hold them (a layer kept spread: `spread.rs`): every rank
/// calls this with the component's members in its range (sorted layer
/// indexes) and the intervals of their best exits, and gets their bounds,
/// `(lower, upper)` per member, the safety rounds that added states and
/// the members back, the same on every rank and as one process finds
/// them (section 2 of `docs/distributed-build.md`). `resume` is where a
/// snapshot stopped: its first threshold and this rank's members' state;
/// `lead` takes the snapshots and reports progress. Collective.
pub(crate) fn spread_bounds(
    comm: &dyn Communicator,
    n: u32,
    members: Vec<u32>,
    lower: Vec<u8>,
    upper: Vec<u8>,
    resume: Option<(u8, Vec<u8>)>,
    lead: &mut dyn Lead,
) -> Result<SpreadBounds, Stopped> {
    let partition = Partition::new(layer_size(n), comm.ranks());
    let n = n as u8;
    let (first, state) = match resume {
        Some((t, state)) => (t, Some(state)),
        None => (n, None),
    };
    let mut assignment = Assignment { first, members, lower, upper, state };
    let (added, wins) = play_share(comm, n, &partition, &mut assignment, lead)?;
    let bounds = wins.chunks_exact(2).map(|w| (w[0], n - w[1])).collect();
    Ok((bounds, added, assignment.members))
}

/// A game state of this rank: a member's position and `2 × member +
/// parity` (the player moves at parity 0).
#[derive(Clone, Copy)]
struct State {
    pits: [u8; 12],
    node: u32,
}

/// One rank's part of a component's games.
struct Share<'a> {
    n: u8,
    partition: Partition,
    /// The first layer index of the rank's range.
    base: usize,
    /// Per position of the range: its member number, or `NOT_MEMBER`.
    slot: Vec<u32>,
    assignment: &'a Assignment,
    positions: MemberPositions<'a>,
    /// Per state (two per member), as in [`crate::tablebase::solve::bounds::BoundWork`]:
    /// the threshold at which it was won, children not won (opponent
    /// states, counted from the start), the safety game's scratch.
    win: Vec<AtomicU8>,
    open: Vec<AtomicU8>,
    safe: Vec<AtomicU8>,
}

impl<'a> Share<'a> {
    fn new(
        n: u8,
        partition: &Partition,
        range: std::ops::Range<u64>,
        assignment: &'a Assignment,
        state: Option<Vec<u8>>,
    ) -> Share<'a> {
        let base = range.start as usize;
        let mut slot = vec![NOT_MEMBER; (range.end - range.start) as usize];
        for (i, &m) in assignment.members.iter().enumerate() {
            slot[m as usize - base] = i as u32;
        }
        let states = 2 * assignment.members.len();
        let zeros = || (0..states).map(|_| AtomicU8::new(0)).collect::<Vec<_>>();
        let (win, open, safe) = (zeros(), zeros(), zeros());
        if let Some(state) = state {
            for (i, bytes) in state.chunks_exact(4).enumerate() {
                win[2 * i].store(bytes[0], Relaxed);
                win[2 * i + 1].store(bytes[1], Relaxed);
                open[2 * i].store(bytes[2], Relaxed);
                open[2 * i + 1].store(bytes[3], Relaxed);
            }
        }
        Share {
            n,
            partition: *partition,
            base,
            slot,
            assignment,
            positions: MemberPositions::new(n as u32, Members::Listed(&assignment.members)),
            win,
            open,
            safe,
        }
    }

    fn members(&self) -> usize {
        self.assignment.members.len()
    }

    /// Whether the opponent state of member `i` may join at threshold `t`:
    /// its best exit no longer keeps the player below `t`.
    #[inline]
    fn eligible(&self, i: usize, t: u8) -> bool {
        self.assignment.upper[i] <= self.n - t
    }

    /// A candidate of the safety game at `t`: not won, may join, and the
    /// player's row holds at least `t` seeds there.
    #[inline]
    fn candidate(&self, i: usize, parity: usize, position: &Position, t: u8) -> bool {
        let own = position.own_seeds() as u8;
        let players = if parity == 0 { own } else { self.n - own };
        self.win[2 * i + parity].load(Relaxed) == 0 && (parity == 0 || self.eligible(i, t)) && players >= t
    }

    /// Every threshold from the assignment's first down to 1; returns the
    /// safety rounds that added states.
    fn play(&self, comm: &dyn Communicator, lead: &mut dyn Lead) -> Result<u32, Stopped> {
        let (n, first) = (self.n, self.assignment.first);
        // Every opponent state not won counts its children not won: each
        // player state not won tells its parents.
        parallel::for_each_chunk(self.members(), MEMBER_CHUNK, &|range| {
            for i in range.filter(|&i| self.win[2 * i + 1].load(Relaxed) == 0) {
                self.open[2 * i + 1].store(0, Relaxed);
            }
        });
        self.tell_parents(
            comm,
            |i, parity| parity == 0 && self.win[2 * i].load(Relaxed) == 0,
            |node| {
                if node & 1 == 1 && self.win[node].load(Relaxed) == 0 {
                    self.open[node].fetch_add(1, Relaxed);
                }
                false
            },
        );
        let mut added = 0;
        for t in (1..=first).rev() {
            // (None before the first threshold: a snapshot there is the
            // one taken before the games, or the one resumed from.)
            let write = |lead: &dyn Lead, sequence| {
                lead.write_part(sequence, &self.assignment.members, &self.snapshot(t))
            };
            if t < first && !offer_snapshot(comm, lead, SnapshotAt::Threshold { t, added }, write) {
                return Err(Stopped);
            }
            lead.threshold(t);
            // The threshold's entries: player states whose best exit is
            // worth `t`, opponent states that may join from `t` on and
            // have no child left that is not won.
            let mut frontier = self.positions.par_collect(|i, _, position, out| {
                if self.assignment.lower[i] == t && self.win[2 * i].load(Relaxed) == 0 {
                    self.win[2 * i].store(t, Relaxed);
                    out.push(State { pits: position.pits(), node: 2 * i as u32 });
                }
                let y = 2 * i + 1;
                if n - self.assignment.upper[i] == t
                    && self.win[y].load(Relaxed) == 0
                    && self.open[y].load(Relaxed) == 0
                {
                    self.win[y].store(t, Relaxed);
                    out.push(State { pits: position.pits(), node: y as u32 });
                }
            });
            loop {
                self.attract(comm, frontier, t);
                let found = self.safety_set(comm, t);
                if comm.sum(found.len() as u64) == 0 {
                    break;
                }
                added += 1;
                parallel::for_each_chunk(found.len(), MEMBER_CHUNK, &|range| {
                    found[range].iter().for_each(|s| self.win[s.node as usize].store(t, Relaxed))
                });
                frontier = found;
            }
        }
        Ok(added)
    }

    /// The four bytes a member has in one process's snapshot taken before
    /// threshold `t`: that process counts an opponent state's children
    /// only from the threshold at which it may join (0 before).
    fn snapshot(&self, t: u8) -> Vec<u8> {
        parallel::fill_chunks(4 * self.members(), 4 * MEMBER_CHUNK, &|start, bytes| {
            for (i, four) in (start / 4..).zip(bytes.chunks_exact_mut(4)) {
                let (x, y) = (2 * i, 2 * i + 1);
                let won = self.win[y].load(Relaxed) != 0;
                let counted = won || self.n - self.assignment.upper[i] > t;
                let open_y = if counted { self.open[y].load(Relaxed) } else { 0 };
                four.copy_from_slice(&[
                    self.win[x].load(Relaxed),
                    self.win[y].load(Relaxed),
                    self.open[x].load(Relaxed),
                    open_y,
                ]);
            }
        })
    }

    /// Grows the won region at threshold `t` from `frontier` (won already).
    fn attract(&self, comm: &dyn Communicator, mut frontier: Vec<State>, t: u8) {
        while let Some(next) = self.expand(comm, &frontier, |node| {
            if self.win[node].load(Relaxed) != 0 {
                return false;
            }
            if node & 1 == 0 {
                // A player state: the first to reach it claims it.
                self.win[node].compare_exchange(0, t, Relaxed, Relaxed).is_ok()
            } else {
                // An opponent state: one child fewer not won. Only the
                // last one can take it to zero, so the store races
                // with no other (each child joins once).
                let last = self.open[node].fetch_sub(1, Relaxed) == 1;
                let joins = last && self.eligible(node / 2, t);
                if joins {
                    self.win[node].store(t, Relaxed);
                }
                joins
            }
        }) {
            frontier = next;
        }
    }

    /// The safety set at threshold `t` (as [`crate::tablebase::solve::games::safety_set`]:
    /// the greatest set of candidates from which the player can stay among
    /// them or move into the won region), in any order; `safe` is left
    /// all zero.
    fn safety_set(&self, comm: &dyn Communicator, t: u8) -> Vec<State> {
        let safe = &self.safe;
        self.positions.par_collect::<()>(|i, _, position, _| {
            for parity in 0..2 {
                if self.candidate(i, parity, &position, t) {
                    safe[2 * i + parity].store(1, Relaxed);
                }
            }
        });
        // Counts told by the children: every candidate adds one to each
        // parent candidate ("one child inside"). A player candidate with
        // none cannot stay; an opponent candidate can only if every child
        // not won is inside, and by the count of children not won it
        // keeps (`open`) that is: as many inside as not won. (Telling
        // changes no count from zero to non-zero or back, so what a child
        // reads of itself holds.)
        self.tell_parents(
            comm,
            |i, parity| safe[2 * i + parity].load(Relaxed) != 0,
            |node| {
                let _ = safe[node].fetch_update(Relaxed, Relaxed, |c| (c != 0).then(|| c + 1));
                false
            },
        );
        // Those that cannot stay go, and take away what relied on them.
        let mut removed = self.positions.par_collect(|i, _, position, out| {
            for parity in 0..2 {
                let node = 2 * i + parity;
                let count = safe[node].load(Relaxed);
                let goes = count != 0
                    && if parity == 0 { count == 1 } else { count - 1 < self.open[node].load(Relaxed) };
                if goes {
                    safe[node].store(0, Relaxed);
                    out.push(State { pits: position.pits(), node: node as u32 });
                }
            }
        });
        while let Some(next) =
            self.expand(comm, &removed, |node| leaves_with_child(&safe[node], SAFE_ALONE, node & 1 == 0))
        {
            removed = next;
        }
        self.positions.par_collect(|i, _, position, out| {
            for parity in 0..2 {
                let node = 2 * i + parity;
                if safe[node].swap(0, Relaxed) != 0 {
                    out.push(State { pits: position.pits(), node: node as u32 });
                }
            }
        })
    }

    /// Offers every parent of `s` in the component to `take` on the rank
    /// that holds it: here directly (what it claims goes to `mine`),
    /// elsewhere as a message in that rank's buffer.
    #[inline]
    fn offer_parents(
        &self,
        s: &State,
        take: &impl Fn(usize) -> bool,
        mine: &mut Vec<State>,
        outgoing: &mut [Vec<u32>],
    ) {
        let parity = 1 - (s.node & 1);
        Position::new(s.pits).quiet_parents(|parent, _| {
            let index = layer_index(&parent) as usize;
            match self.slot.get(index.wrapping_sub(self.base)) {
                Some(&NOT_MEMBER) => {}
                Some(&member) => {
                    let node = 2 * member + parity;
                    if take(node as usize) {
                        mine.push(State { pits: parent.pits(), node });
                    }
                }
                None => {
                    let (owner, offset) = self.partition.locate(index as u64);
                    outgoing[owner].push(2 * offset + parity);
                }
            }
        });
    }

    /// One exchange: sends what `parts` hold for other ranks, applies
    /// `take` to what arrives, and returns the states claimed here and on
    /// arrival.
    fn route(
        &self,
        comm: &dyn Communicator,
        parts: Vec<(Vec<State>, Vec<Vec<u32>>)>,
        take: &(impl Fn(usize) -> bool + Sync),
    ) -> Vec<State> {
        let mut claimed = Vec::new();
        let blocks = exchange_parts(comm, parts, &mut claimed);
        let received: Vec<State> = parallel::collect_chunks(blocks.len(), 1, &|range, out| {
            out.extend(blocks[range].iter().flatten().filter_map(|&word| {
                let member = *self.slot.get(word as usize / 2)?;
                if member == NOT_MEMBER {
                    return None;
                }
                let node = 2 * member + (word & 1);
                take(node as usize).then(|| State { pits: self.positions.get(member as usize).pits(), node })
            }))
        });
        claimed.extend(received);
        claimed
    }

    /// Offers every parent of the states of `frontier` to `take` on its
    /// holder and returns the states claimed on this rank; `None` when every
    /// rank's frontier is empty (then nothing is exchanged). Collective;
    /// one exchange per slice of the longest frontier, after one maximum.
    fn expand(
        &self,
        comm: &dyn Communicator,
        frontier: &[State],
        take: impl Fn(usize) -> bool + Sync,
    ) -> Option<Vec<State>> {
        let ranks = comm.ranks();
        let slices = comm.max(frontier.len().div_ceil(EXCHANGE_SLICE) as u64);
        if slices == 0 {
            return None;
        }
        let mut own = frontier.chunks(EXCHANGE_SLICE);
        let mut next = Vec::new();
        for _ in 0..slices {
            let slice = own.next().unwrap_or(&[]);
            let parts = parallel::map_slices(slice, FRONTIER_CHUNK, &|chunk| {
                let (mut mine, mut outgoing) = (Vec::new(), vec![Vec::new(); ranks]);
                chunk.iter().for_each(|s| self.offer_parents(s, &take, &mut mine, &mut outgoing));
                (mine, outgoing)
            });
            next.extend(self.route(comm, parts, &take));
        }
        Some(next)
    }

    /// Every member state `(i, parity)` for which `tells` holds offers its
    /// parents to `take`, which claims none. Collective; one exchange per
    /// slice of members.
    fn tell_parents(
        &self,
        comm: &dyn Communicator,
        tells: impl Fn(usize, usize) -> bool + Sync,
        take: impl Fn(usize) -> bool + Sync,
    ) {
        let (ranks, members) = (comm.ranks(), self.members());
        let slices = comm.max(members.div_ceil(EXCHANGE_SLICE) as u64) as usize;
        for s in 0..slices {
            let slice = (s * EXCHANGE_SLICE).min(members)..((s + 1) * EXCHANGE_SLICE).min(members);
            let parts = parallel::map_indexes(slice.len().div_ceil(MEMBER_CHUNK), &|c| {
                let (mut mine, mut outgoing) = (Vec::new(), vec![Vec::new(); ranks]);
                let start = slice.start + c * MEMBER_CHUNK;
                let end = (start + MEMBER_CHUNK).min(slice.end);
                self.positions.for_each_in(start..end, |i, _, position| {
                    for parity in 0..2 {
                        if tells(i, parity) {
                            let state = State { pits: position.pits(), node: (2 * i + parity) as u32 };
                            self.offer_parents(&state, &take, &mut mine, &mut outgoing);
                        }
                    }
                });
                (mine, outgoing)
            });
            let claimed = self.route(comm, parts, &take);
            debug_assert!(claimed.is_empty(), "telling claims nothing");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::run_ranks;
    use crate::tablebase::layers::{LayerBytes, SolvedLayers};
    use crate::tablebase::params::SearchBudget;
    use crate::tablebase::snapshot::NoCheckpoints;
    use crate::tablebase::solve::bounds;
    use crate::tablebase::solve::bounds::{BoundWork, ComponentGames, Order};
    use crate::tablebase::solve::components;
    use crate::tablebase::solve::solver::{Cursor, Step};

    use std::collections::HashMap;
    use std::sync::Mutex;

    /// Snapshot parts kept in memory, by sequence and rank.
    #[derive(Default)]
    struct MemoryParts(Mutex<HashMap<(u64, usize), Vec<u8>>>);

    impl SnapshotParts for MemoryParts {
        fn write_part_with(
            &self,
            sequence: u64,
            rank: usize,
            write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>,
        ) -> io::Result<PartRecord> {
            let mut state = Vec::new();
            write(&mut state)?;
            let checksum = crate::checksum::checksum(&state);
            let bytes = state.len() as u64;
            self.0.lock().unwrap().insert((sequence, rank), state);
            Ok(PartRecord { bytes, checksum })
        }
        fn read_part(
            &self,
            sequence: u64,
            rank: usize,
            record: PartRecord,
            limit: usize,
        ) -> io::Result<Vec<u8>> {
            let parts = self.0.lock().unwrap();
            let part = parts.get(&(sequence, rank)).ok_or_else(|| io::Error::other("no such part"))?;
            let found = PartRecord { bytes: part.len() as u64, checksum: crate::checksum::checksum(part) };
            if part.len() > limit {
                return Err(io::Error::other("too long"));
            }
            (found == record).then(|| part.clone()).ok_or_else(|| io::Error::other("another part"))
        }
    }

    /// Keeps every snapshot offered (always due), and their parts.
    struct Keep<'p> {
        kept: Vec<Vec<u8>>,
        parts: &'p dyn SnapshotParts,
    }

    impl<'p> Keep<'p> {
        fn new(parts: &'p dyn SnapshotParts) -> Keep<'p> {
            Keep { kept: Vec::new(), parts }
        }

        /// The snapshots with their parts joined: what one process offers.
        fn joined(&self, n: u32, solved: &SolvedLayers) -> Vec<Vec<u8>> {
            self.kept
                .iter()
                .enumerate()
                .map(|(i, bytes)| {
                    let parts = Some((self.parts, i as u64 + 1));
                    let (solver, cursor, components) =
                        checkpoint::restore(n, solved, SearchBudget::NONE, bytes, parts).unwrap();
                    let mut joined = Vec::new();
                    checkpoint::write_snapshot(&solver, &cursor, components.as_ref(), None, &mut joined)
                        .unwrap();
                    joined
                })
                .collect()
        }
    }

    impl Checkpointer for Keep<'_> {
        fn due(&mut self) -> bool {
            true
        }
        fn save(
            &mut self,
            write: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
        ) -> std::io::Result<()> {
            let mut bytes = Vec::new();
            write(&mut bytes)?;
            self.kept.push(bytes);
            Ok(())
        }
        fn parts(&self) -> Option<(&dyn SnapshotParts, u64)> {
            Some((self.parts, self.kept.len() as u64 + 1))
        }
    }

    /// Always due; fails every save it is offered; keeps its parts in the
    /// store given, if any.
    struct Failing<'p>(Option<&'p dyn SnapshotParts>);

    impl Checkpointer for Failing<'_> {
        fn due(&mut self) -> bool {
            true
        }
        fn save(
            &mut self,
            _: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
        ) -> std::io::Result<()> {
            Err(std::io::Error::other("the disk is full"))
        }
        fn parts(&self) -> Option<(&dyn SnapshotParts, u64)> {
            self.0.map(|parts| (parts, 1))
        }
    }

    /// Fails to write the part of rank 2.
    struct NoRoomOnTwo(MemoryParts);

    impl SnapshotParts for NoRoomOnTwo {
        fn write_part_with(
            &self,
            sequence: u64,
            rank: usize,
            write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>,
        ) -> io::Result<PartRecord> {
            match rank {
                2 => Err(io::Error::other("no room for this part")),
                _ => self.0.write_part_with(sequence, rank, write),
            }
        }
        fn read_part(
            &self,
            sequence: u64,
            rank: usize,
            record: PartRecord,
            limit: usize,
        ) -> io::Result<Vec<u8>> {
            self.0.read_part(sequence, rank, record, limit)
        }
    }

    /// A snapshot rank 0 cannot write, or a part another rank cannot
    /// write, stops every rank's games with that error, and leaves the
    /// ranks in step: the next component's games give the one-process
    /// bounds.
    #[test]
    fn a_failed_snapshot_stops_the_games_and_the_ranks_stay_in_step() {
        let solved = crate::tablebase::solve::run::solved_below(8, SearchBudget::NONE);
        let mut solver = LayerSolver::new(8, &solved, SearchBudget::NONE);
        solver.retrograde_only();
        let components = components::components(&mut solver).expect("labels enough");
        let k = (0..components.count()).max_by_key(|&k| components.of(k).len()).expect("a component");
        let positions = MemberPositions::new(8, components.of(k));
        let mut work = BoundWork::new(solver.size);
        let one = bounds::cycle_bounds(
            &solver,
            &components,
            k,
            &positions,
            &mut work,
            None,
            &mut NoCheckpoints,
            false,
        );
        let one = one.unwrap();
        let (memory, no_room) = (MemoryParts::default(), NoRoomOnTwo(MemoryParts::default()));
        for (parts, error) in [
            (&memory as &dyn SnapshotParts, "the disk is full"),
            (&no_room, "rank 2's part of a snapshot: no room for this part"),
        ] {
            let results = run_ranks(3, |comm| {
                if comm.rank() != 0 {
                    serve_bounds(comm, 8, parts);
                    return None;
                }
                // (Rank 0 writes its own part where the others do.)
                let failed = if error.starts_with("rank") {
                    bounds_across(&solver, comm, &components, k, None, &mut Keep::new(&no_room.0))
                } else {
                    bounds_across(&solver, comm, &components, k, None, &mut Failing(Some(parts)))
                };
                let again = bounds_across(&solver, comm, &components, k, None, &mut NoCheckpoints);
                end_bounds(comm);
                Some((failed.err().map(|e| e.to_string()), again.unwrap()))
            });
            let (failed, again) = results[0].as_ref().expect("rank 0");
            assert_eq!(failed.as_deref(), Some(error));
            assert_eq!((&again.lower, &again.wider), (&one.lower, &one.wider));
            assert_eq!(again.safety_rounds, one.safety_rounds);
        }
        // A checkpointer that keeps no parts gets no snapshot from these
        // games, and they go on.
        let results = run_ranks(3, |comm| {
            if comm.rank() != 0 {
                serve_bounds(comm, 8, &memory);
                return None;
            }
            let bounds = bounds_across(&solver, comm, &components, k, None, &mut Failing(None));
            end_bounds(comm);
            Some(bounds.unwrap())
        });
        let without = results[0].as_ref().expect("rank 0");
        assert_eq!((&without.lower, &without.wider), (&one.lower, &one.wider));
    }

    /// On 1, 2 and 3 ranks the games across ranks give every cycle
    /// component of layers 0 to 9 the bounds and safety rounds of the
    /// one-process games, and offer byte-identical snapshots at the same
    /// thresholds, and resumed from one of those they end with the same
    /// bounds (checked on the largest component of each layer).
    #[test]
    fn the_games_across_ranks_give_the_one_process_bounds_and_snapshots() {
        let (mut compared, mut largest, mut rounds, mut snapshots, mut resumes) = (0, 0, 0, 0, 0);
        let mut solved = SolvedLayers::new();
        for n in 0..=9 {
            let mut solver = LayerSolver::new(n, &solved, SearchBudget::NONE);
            solver.retrograde_only();
            let components = components::components(&mut solver).expect("labels enough");
            let mut work = BoundWork::new(solver.size);
            let ks: Vec<usize> = (0..components.count()).filter(|&k| components.of(k).len() >= 2).collect();
            let biggest = ks.iter().copied().max_by_key(|&k| components.of(k).len());
            let one_process: Vec<(ComponentBounds, Vec<Vec<u8>>)> = ks
                .iter()
                .map(|&k| {
                    let positions = MemberPositions::new(n, components.of(k));
                    let unused = MemoryParts::default();
                    let mut keep = Keep::new(&unused);
                    let checkpoints: &mut dyn Checkpointer =
                        if Some(k) == biggest { &mut keep } else { &mut NoCheckpoints };
                    // (The games across ranks play a safety set at every
                    // threshold: their snapshots are those of that order.)
                    let games = ComponentGames::new(&solver, &components, k, &positions, false);
                    let bounds = games.bounds(Order::SafetySets, &mut work, None, checkpoints);
                    (bounds.unwrap(), keep.kept)
                })
                .collect();
            for ranks in 1..=3 {
                let parts = MemoryParts::default();
                let results = run_ranks(ranks, |comm| {
                    if comm.rank() != 0 {
                        serve_bounds(comm, n, &parts);
                        return Vec::new();
                    }
                    let found = ks
                        .iter()
                        .map(|&k| {
                            let mut keep = Keep::new(&parts);
                            let checkpoints: &mut dyn Checkpointer =
                                if Some(k) == biggest { &mut keep } else { &mut NoCheckpoints };
                            let bounds = bounds_across(&solver, comm, &components, k, None, checkpoints);
                            (bounds.unwrap(), keep.joined(n, &solved))
                        })
                        .collect();
                    end_bounds(comm);
                    found
                });
                for (k, ((one, kept), (many, offered))) in ks.iter().zip(one_process.iter().zip(&results[0]))
                {
                    assert_eq!(one.lower, many.lower, "layer {n}, component {k}, {ranks} ranks");
                    assert_eq!(one.wider, many.wider, "layer {n}, component {k}, {ranks} ranks");
                    assert_eq!(one.safety_rounds, many.safety_rounds, "layer {n}, component {k}");
                    assert!(kept == offered, "layer {n}, component {k}, {ranks} ranks: snapshots differ");
                    snapshots += kept.len();
                }
            }
            // Resumed from a snapshot the one-process games offered
            // halfway, the games across ranks end with the same bounds.
            if let Some((k, (one, kept))) = ks.iter().zip(&one_process).find(|(&k, _)| Some(k) == biggest) {
                let halfway = &kept[kept.len() / 2];
                let (resumed, cursor, found) =
                    checkpoint::restore(n, &solved, SearchBudget::NONE, halfway, None).expect("a snapshot");
                let Cursor::Resolving { step: Step::Bounds { t, safety_rounds, state }, .. } = cursor else {
                    panic!("a snapshot inside the games")
                };
                let found = found.expect("components");
                for ranks in 1..=3 {
                    let results = run_ranks(ranks, |comm| {
                        if comm.rank() != 0 {
                            serve_bounds(comm, n, &MemoryParts::default());
                            return None;
                        }
                        let resume = Some((t, safety_rounds, state.clone()));
                        let bounds = bounds_across(&resumed, comm, &found, *k, resume, &mut NoCheckpoints);
                        end_bounds(comm);
                        Some(bounds.unwrap())
                    });
                    let many = results[0].as_ref().expect("rank 0's bounds");
                    assert_eq!(
                        (&one.lower, &one.wider),
                        (&many.lower, &many.wider),
                        "layer {n}, resumed at {t}"
                    );
                    assert_eq!(one.safety_rounds, many.safety_rounds, "layer {n}, resumed at {t}");
                }
                resumes += 1;
            }
            for (bounds, _) in &one_process {
                rounds += bounds.safety_rounds;
            }
            compared += ks.len();
            largest = largest.max(biggest.map_or(0, |k| components.of(k).len()));
            let (bytes, _) = LayerSolver::new(n, &solved, SearchBudget::NONE).solve();
            solved.push(LayerBytes::Owned(bytes));
        }
        assert!(
            compared >= 8 && largest > 100_000 && rounds > 0 && snapshots > 20 && resumes >= 5,
            "{compared} components, largest {largest}, {rounds} rounds, {snapshots} snapshots, {resumes} resumed"
        );
    }
}
