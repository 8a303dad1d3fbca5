//! Move ordering: the table move, then captures (largest first), then
//! defensive moves (sowing a pit of 1 or 2 seeds, which the opponent could
//! otherwise capture), then the rest; inside each group the history
//! heuristic decides. Each step can be switched off, so docs/search.md can show
//! what each one is worth.

use crate::rules::{Pit, Played, Position, ROW};

/// Which ordering steps the search uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Ordering {
    /// Search the transposition table's best move first.
    pub table_move: bool,
    /// Captures before other moves, largest first.
    pub captures: bool,
    /// Then moves sowing a pit of 1 or 2 seeds.
    pub defensive: bool,
    /// Inside each group, moves that caused cutoffs before come first.
    pub history: bool,
}

impl Ordering {
    /// Pit order only (A to F).
    pub const NONE: Ordering =
        Ordering { table_move: false, captures: false, defensive: false, history: false };
    /// Every step.
    pub const FULL: Ordering = Ordering { table_move: true, captures: true, defensive: true, history: true };

    /// The cumulative steps, in the order docs/search.md measures them.
    pub fn steps() -> [(&'static str, Ordering); 5] {
        let tt = Ordering { table_move: true, ..Ordering::NONE };
        let captures = Ordering { captures: true, ..tt };
        let defensive = Ordering { defensive: true, ..captures };
        [
            ("none", Ordering::NONE),
            ("table-move", tt),
            ("captures", captures),
            ("defensive", defensive),
            ("history", Ordering::FULL),
        ]
    }
}

impl std::str::FromStr for Ordering {
    type Err = super::error::ParseOptionError;
    /// A step name of [`Ordering::steps`]: that step and those before it.
    fn from_str(name: &str) -> Result<Ordering, Self::Err> {
        Ordering::steps().into_iter().find(|(n, _)| *n == name).map(|(_, o)| o).ok_or_else(|| {
            super::error::ParseOptionError {
                option: "ordering",
                text: name.to_string(),
                expected: "none, table-move, captures, defensive or history",
            }
        })
    }
}

impl Default for Ordering {
    fn default() -> Ordering {
        Ordering::FULL
    }
}

/// History scores by (pit, seeds in it): the seed count tells which sowing
/// the move is, so the same pit with another count is another move.
pub struct History {
    scores: [[u32; 49]; ROW],
}

/// History scores stay below this (then everything is halved).
const HISTORY_CAP: u32 = 1 << 20;

impl History {
    /// Every score zero.
    pub fn new() -> History {
        History { scores: [[0; 49]; ROW] }
    }

    /// Resets every score to zero.
    pub fn clear(&mut self) {
        self.scores = [[0; 49]; ROW];
    }

    #[inline]
    fn score(&self, pit: Pit, seeds: u8) -> u32 {
        self.scores[pit][seeds.min(48) as usize]
    }

    /// The move caused a cutoff `depth` plies from the horizon.
    #[inline]
    pub fn reward(&mut self, pit: Pit, seeds: u8, depth: i32) {
        let bonus = (depth.max(1) as u32).pow(2);
        let cell = &mut self.scores[pit.min(ROW - 1)][seeds.min(48) as usize];
        *cell += bonus;
        if *cell >= HISTORY_CAP {
            for row in self.scores.iter_mut() {
                for s in row.iter_mut() {
                    *s /= 2;
                }
            }
        }
    }
}

impl Default for History {
    fn default() -> History {
        History::new()
    }
}

/// A legal move with its outcome and ordering key.
#[derive(Clone, Copy)]
pub struct Child {
    /// The move: the mover's pit, 0..6.
    pub pit: Pit,
    /// The position it leads to (from the opponent's view) and the seeds
    /// it captures.
    pub played: Played,
    key: u32,
}

/// Up to six children, best first.
pub struct Children {
    /// The children in search order; only the first `len` are moves, the
    /// rest are placeholders.
    pub list: [Child; ROW],
    /// How many legal moves `list` holds.
    pub len: usize,
}

impl Children {
    /// Plays every legal move of `position` and orders them.
    #[inline]
    pub fn new(
        position: &Position,
        ordering: &Ordering,
        history: &History,
        table_move: Option<Pit>,
    ) -> Children {
        let empty = Child { pit: 0, played: Played { child: Position::default(), captured: 0 }, key: 0 };
        let mut children = Children { list: [empty; ROW], len: 0 };
        for pit in position.legal_moves() {
            let played = position.play(pit);
            let seeds = position.pit(pit);
            let group = if ordering.table_move && table_move == Some(pit) {
                4
            } else if ordering.captures && played.captured > 0 {
                3
            } else if ordering.defensive && (seeds == 1 || seeds == 2) {
                2
            } else {
                1
            };
            let size = if ordering.captures { played.captured as u32 } else { 0 };
            let history = if ordering.history { history.score(pit, seeds).min(HISTORY_CAP - 1) } else { 0 };
            let key = group << 28 | size << 21 | history;
            // Insertion: keep the list sorted by key, earlier pits first on ties.
            let mut at = children.len;
            while at > 0 && children.list[at - 1].key < key {
                children.list[at] = children.list[at - 1];
                at -= 1;
            }
            children.list[at] = Child { pit, played, key };
            children.len += 1;
        }
        children
    }

    /// The legal moves, best first.
    #[inline]
    pub fn as_slice(&self) -> &[Child] {
        &self.list[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_come_in_order() {
        // A: 2 seeds (defensive), B: 5, C: 1 (defensive), D: 3 captures
        // a 2 and a 3 (on pits 7 and 8), E: 0, F: 1 captures 1+1 = 2.
        let p = Position::new([2, 5, 1, 5, 0, 1, 0, 2, 1, 4, 4, 4]);
        let h = History::new();
        let pits = |o: &Ordering, tt: Option<Pit>| -> Vec<Pit> {
            Children::new(&p, o, &h, tt).as_slice().iter().map(|c| c.pit).collect()
        };
        let captured: Vec<u8> =
            (0..6).map(|pit| if p.pit(pit) > 0 { p.play(pit).captured } else { 0 }).collect();
        assert_eq!(pits(&Ordering::NONE, Some(5)), vec![0, 1, 2, 3, 5]);
        let full = pits(&Ordering::FULL, Some(1));
        assert_eq!(full[0], 1);
        // Captures by size, then the defensive moves A and C, then the rest.
        let mut caps: Vec<Pit> = (0..6).filter(|&i| captured[i] > 0 && i != 1).collect();
        caps.sort_by_key(|&i| std::cmp::Reverse(captured[i]));
        assert_eq!(&full[1..1 + caps.len()], caps.as_slice());
    }

    #[test]
    fn history_breaks_ties() {
        let p = Position::new([4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4]);
        let mut h = History::new();
        h.reward(4, 4, 5);
        h.reward(2, 4, 3);
        let order: Vec<Pit> =
            Children::new(&p, &Ordering::FULL, &h, None).as_slice().iter().map(|c| c.pit).collect();
        assert_eq!(order, vec![4, 2, 0, 1, 3, 5]);
    }
}
