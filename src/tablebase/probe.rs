//! Probing a game state: the call an engine author makes.
//!
//! [`AnyTable::probe_after_capture`] answers for a whole game state: the
//! bounds on what the mover captures from the board, the final scores and
//! outcomes they imply with the stores, how the value was established, and
//! the value of every legal move.
//!
//! The caveat is in the name. A tablebase value is the *as-root* value
//! (`docs/rules.md`): it assumes the state was reached by a capture, or
//! that play starts there, so that no earlier state can come back. It also
//! holds in any game when the position lies on no cycle of game states
//! (an earlier state that came back would put the position on a cycle).
//! [`StateProbe::holds_in`] tells whether it holds for the game at hand.

use std::fmt;

use crate::game::{GameEnd, GameState, Outcome, Side};
use crate::rules::{Pit, Position};
use crate::tablebase::entry::Proof;
use crate::tablebase::open::AnyTable;
use crate::tablebase::owtb::FileError;
use crate::tablebase::table::EndgameTable;

/// How far a value can be trusted.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Certainty {
    /// Our file, checked against its checksums: the bounds are proven, and
    /// the proof says how (or, for [`Proof::Open`], that they do not meet).
    Checked(Proof),
    /// The engine's layouts carry no checksum: the value is read as stored
    /// and only range-checked. A damaged file can answer wrongly, and even
    /// an intact one holds estimates on cycles and EXACT values that rest
    /// on them (the 2014 and 2021 files differ on 97,660 EXACT entries).
    Unverified,
}

/// The value of one legal move, for the side to move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MoveValue {
    /// The mover's pit (0..6, from the mover's left).
    pub pit: Pit,
    /// The move's letter (A..F for South, a..f for North).
    pub letter: char,
    /// Seeds this move captures at once.
    pub captured: u8,
    /// Bounds on the seeds of the current board the mover ends with when
    /// playing this move, under perfect play afterwards, from the child's
    /// as-root value: `seeds − child`.
    pub lower: u8,
    /// The upper bound (see `lower`).
    pub upper: u8,
    /// The best value inside `lower..=upper` the table gives (our files:
    /// the entry's best available value; engine files: what the file
    /// says), from the child's (`seeds − child estimate`): equal to both
    /// when they meet, otherwise a guide, not a proof.
    pub estimate: u8,
    /// The child's as-root value holds after this move: the move captures
    /// (nothing before it can come back) or the child is on no cycle. When
    /// false, the probed state itself can come back after this move and
    /// end the game by repetition, so the move's true value can differ
    /// from `lower..=upper` (the probed state's own value accounts for
    /// that; the move's does not).
    pub holds_after_this_move: bool,
}

/// What a table says of a game state ([`AnyTable::probe_after_capture`]).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct StateProbe {
    /// The side to move.
    pub mover: Side,
    /// Seeds on the board.
    pub seeds: u32,
    /// The stores (South, North) of the probed state.
    pub stores: [u8; 2],
    /// Bounds on the seeds of the board the mover captures from now to the
    /// end under perfect play, as-root: `lower ≤ value ≤ upper ≤ seeds`.
    pub lower: u8,
    /// The upper bound (see `lower`).
    pub upper: u8,
    /// The best available value inside the bounds (equal to both when
    /// exact).
    pub estimate: u8,
    /// The position lies on a cycle of game states (see [`Self::holds_in`]).
    pub on_cycle: bool,
    /// Proven and checked, or read from a file without a checksum.
    pub certainty: Certainty,
    /// Every legal move with its value, in pit order.
    pub moves: Vec<MoveValue>,
}

impl StateProbe {
    /// The bounds meet. With [`Certainty::Checked`] that is a proof; with
    /// [`Certainty::Unverified`] it is what the file says.
    pub fn is_exact(&self) -> bool {
        self.lower == self.upper
    }

    /// Whether the value holds in `state`'s game: the state was reached by
    /// a capture (or starts play), or its position is on no cycle.
    pub fn holds_in(&self, state: &GameState) -> bool {
        !self.on_cycle || state.plies_since_capture() == 0
    }

    /// The final scores (mover, other side) when the mover captures
    /// `captures` of the board's seeds (more than the board holds count
    /// as all of them).
    pub fn final_scores(&self, captures: u8) -> (u32, u32) {
        let captures = u32::from(captures).min(self.seeds);
        let mine = self.stores[self.mover.index()] as u32 + captures;
        let theirs = self.stores[self.mover.other().index()] as u32 + self.seeds - captures;
        (mine, theirs)
    }

    /// The outcome for the mover when it captures `captures` of the board.
    pub fn outcome(&self, captures: u8) -> Outcome {
        let (mine, theirs) = self.final_scores(captures);
        Outcome::of_scores(mine, theirs)
    }

    /// The worst and best outcomes the bounds allow for the mover.
    pub fn outcome_bounds(&self) -> (Outcome, Outcome) {
        (self.outcome(self.lower), self.outcome(self.upper))
    }

    /// The moves whose upper bound reaches the best lower bound. For a
    /// state on no cycle: every move that may be optimal (exactly the
    /// optimal ones when all are exact). On a cycle, a move that does not
    /// hold after it is played ([`MoveValue::holds_after_this_move`]) is
    /// judged by its child's history-free bounds, which a return to this
    /// state can change: there the list guides a search, it proves
    /// nothing.
    pub fn candidate_moves(&self) -> impl Iterator<Item = &MoveValue> {
        let best = self.moves.iter().map(|m| m.lower).max().unwrap_or(0);
        self.moves.iter().filter(move |m| m.upper >= best)
    }
}

/// Why a state could not be probed.
#[derive(Debug)]
pub enum ProbeError {
    /// The game is over: there is nothing to probe.
    GameOver(GameEnd),
    /// The board holds more seeds than the table covers.
    NotCovered {
        /// Seeds on the probed board.
        seeds: u32,
        /// The most seeds the table covers.
        max_seeds: u32,
    },
    /// A layer the answer needs failed its checksum, holds a malformed
    /// entry, or could not be read: the table answers nothing from it.
    Damaged(FileError),
    /// A file without checksum holds a value no position can have.
    OutOfRange {
        /// Seeds on the board of the position whose entry is impossible
        /// (the probed one or a child).
        seeds: u32,
    },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::GameOver(end) => write!(f, "the game is over ({end:?})"),
            ProbeError::NotCovered { seeds, max_seeds } => {
                write!(f, "{seeds} seeds on the board; the tablebase covers up to {max_seeds}")
            }
            ProbeError::Damaged(error) => error.fmt(f),
            ProbeError::OutOfRange { seeds } => {
                write!(f, "the table holds an impossible value for a {seeds}-seed position (damaged file?)")
            }
        }
    }
}

impl std::error::Error for ProbeError {}

impl From<FileError> for ProbeError {
    fn from(error: FileError) -> ProbeError {
        ProbeError::Damaged(error)
    }
}

/// One position's value as any table gives it.
struct Value {
    lower: u8,
    upper: u8,
    estimate: u8,
    on_cycle: bool,
    certainty: Certainty,
}

impl AnyTable {
    /// The value of a position, checked (ours) or range-checked (engine).
    fn value(&self, position: &Position) -> Result<Value, ProbeError> {
        let seeds = position.seeds();
        let not_covered = || ProbeError::NotCovered { seeds, max_seeds: self.max_seeds() };
        match self {
            AnyTable::Ours(table) => {
                let e = table.entry(position)?.ok_or_else(not_covered)?;
                Ok(Value {
                    lower: e.lower,
                    upper: e.upper,
                    estimate: e.value,
                    on_cycle: e.on_cycle,
                    certainty: Certainty::Checked(e.proof),
                })
            }
            AnyTable::Engine(file) => {
                if seeds > file.max_seeds() {
                    return Err(not_covered());
                }
                // `probe` refuses a byte claiming more captures than seeds.
                let p = file.probe(position).ok_or(ProbeError::OutOfRange { seeds })?;
                Ok(Value {
                    lower: p.lower,
                    upper: p.upper,
                    estimate: p.estimate,
                    on_cycle: p.on_cycle,
                    certainty: Certainty::Unverified,
                })
            }
        }
    }

    /// Probes a game state, **as if it was reached by a capture** (or play
    /// starts there): see the module documentation for when the value also
    /// holds in a game with moves since the last capture
    /// ([`StateProbe::holds_in`]). Every legal move is valued from its
    /// child's entry.
    ///
    /// Errors: the game is over, the board has more seeds than the table
    /// covers, a layer the answer needs is damaged (then nothing is
    /// answered, never a wrong value from our files), or an engine file
    /// holds a value no position can have.
    pub fn probe_after_capture(&self, state: &GameState) -> Result<StateProbe, ProbeError> {
        if let Some(end) = state.end() {
            return Err(ProbeError::GameOver(end));
        }
        let position = state.position();
        let seeds = position.seeds();
        let value = self.value(&position)?;
        let mover = state.to_move();
        let mut moves = Vec::new();
        for pit in position.legal_moves() {
            let played = position.play(pit);
            let child = self.value(&played.child)?;
            // The mover ends with what it captures now plus what the
            // opponent does not take of the child's board:
            // captured + (seeds − captured − child) = seeds − child.
            let (lower, upper) = (seeds as u8 - child.upper, seeds as u8 - child.lower);
            moves.push(MoveValue {
                pit,
                letter: mover.move_letter(pit),
                captured: played.captured,
                lower,
                upper,
                estimate: seeds as u8 - child.estimate,
                holds_after_this_move: played.captured > 0 || !child.on_cycle,
            });
        }
        Ok(StateProbe {
            mover,
            seeds,
            stores: state.stores(),
            lower: value.lower,
            upper: value.upper,
            estimate: value.estimate,
            on_cycle: value.on_cycle,
            certainty: value.certainty,
            moves,
        })
    }
}
