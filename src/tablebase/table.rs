//! What every endgame table answers, whatever file it came from: the
//! entry of one position ([`Probe`]) and the trait a search consults
//! ([`EndgameTable`]).

use crate::rules::Position;

/// What a tablebase says of one position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Probe {
    /// Bounds on the as-root value: `lower ≤ value ≤ upper`, proven when the
    /// table proves ([`EndgameTable::proves`]: ours do, the engine's files
    /// do not, whose non-EXACT entries give `0` and `n` and whose EXACT
    /// ones are the file's claim).
    pub lower: u8,
    /// The upper bound (see `lower`).
    pub upper: u8,
    /// The best available value, inside `lower..=upper`; equal to both when
    /// the entry is exact.
    pub estimate: u8,
    /// The position lies on a cycle of game states (board and side to move):
    /// its value holds only where it was reached by a capture (or is the
    /// root of play). Elsewhere the history can change it.
    pub on_cycle: bool,
}

impl Probe {
    /// Lower and upper bound meet: the as-root value is known (proven if
    /// the table proves).
    #[inline]
    pub fn is_exact(&self) -> bool {
        self.lower == self.upper
    }

    /// The value usable at a node reached without a capture (proven if the
    /// table proves): only positions on no cycle have a value independent
    /// of the history.
    #[inline]
    pub fn exact_anywhere(&self) -> Option<u8> {
        (self.is_exact() && !self.on_cycle).then_some(self.lower)
    }
}

/// Any endgame tablebase a search can consult.
pub trait EndgameTable: Send + Sync {
    /// Positions with at most this many seeds on the board are covered.
    /// It must not change while the table lives: a
    /// [`crate::search::Searcher`] reads it once, when it is made.
    fn max_seeds(&self) -> u32;
    /// The entry of a position (side to move first), `None` if the position
    /// holds more than [`EndgameTable::max_seeds`] seeds, or if its entry
    /// cannot be read (a damaged layer of our files, an impossible byte of
    /// the engine's): a search takes both for "not covered", which is
    /// sound but silent. [`crate::tablebase::open_any`] checks a whole file on opening, so
    /// that the second cannot happen later.
    fn probe(&self, position: &Position) -> Option<Probe>;
    /// Whether the bounds of [`EndgameTable::probe`] are proofs (our tables,
    /// checked against their checksums) or what a file says (the engine's
    /// files: estimates on cycles, and values resting on them). A search
    /// never reports a score resting on an unproven entry as proven.
    fn proves(&self) -> bool;
}
