//! A full game state: the board in absolute orientation, both stores, the
//! side to move and the states since the last capture, with the end-of-game
//! rules of `docs/rules.md` ("End of the game").

use crate::error::{MoveError, NotationError};
use crate::rules::{Moves, Pit, Position, PITS, ROW, TOTAL_SEEDS};

// The players and the ways a game ends are defined with the rules, below
// the errors that name them (`error`), so that this module can return
// those errors without the two importing each other; callers keep naming
// them `game::Side` and `game::GameEnd`.
pub use crate::rules::{GameEnd, Side};

/// A game result from one side's point of view, worst first. The search
/// ([`crate::search::SearchResult::outcome`]) and the tablebase probe
/// ([`crate::tablebase::StateProbe::outcome`]) both answer with it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Outcome {
    /// The side ends with fewer seeds than the other.
    Loss,
    /// Both sides end with 24 seeds.
    Draw,
    /// The side ends with more seeds than the other.
    Win,
}

impl Outcome {
    /// The outcome of final scores `mine` against `theirs`.
    pub fn of_scores(mine: u32, theirs: u32) -> Outcome {
        match mine.cmp(&theirs) {
            std::cmp::Ordering::Less => Outcome::Loss,
            std::cmp::Ordering::Equal => Outcome::Draw,
            std::cmp::Ordering::Greater => Outcome::Win,
        }
    }

    /// The same result seen from the other side.
    pub fn for_other_side(self) -> Outcome {
        match self {
            Outcome::Loss => Outcome::Win,
            Outcome::Draw => Outcome::Draw,
            Outcome::Win => Outcome::Loss,
        }
    }
}

/// A game state with the history the repetition rule needs.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct GameState {
    /// The board seen from the side to move (own pits first).
    position: Position,
    stores: [u8; 2],
    to_move: Side,
    /// Positions (mover's view) since the last capture, oldest first, not
    /// including the current one. Entry `len - k` was `k` plies ago.
    since_capture: Vec<Position>,
    end: Option<GameEnd>,
}

impl GameState {
    /// The start: four seeds in every pit, South to move.
    pub fn start() -> GameState {
        GameState::from_parts([4; PITS], [0, 0], Side::South)
    }

    /// A state with no history, checked: pits and stores must hold 48
    /// seeds in all ([`NotationError::BadTotal`] otherwise).
    pub fn try_from_parts(
        pits: [u8; PITS],
        stores: [u8; 2],
        to_move: Side,
    ) -> Result<GameState, NotationError> {
        let total: u64 = pits.iter().chain(&stores).map(|&n| u64::from(n)).sum();
        if total != TOTAL_SEEDS as u64 {
            return Err(NotationError::BadTotal { total });
        }
        Ok(GameState::from_parts(pits, stores, to_move))
    }

    /// A state with no history, unchecked: the caller guarantees 48 seeds
    /// in all. Any other total makes later calls panic (a book lookup
    /// ranks the board, a move indexes its sowing table);
    /// [`GameState::try_from_parts`] checks it.
    pub fn from_parts(pits: [u8; PITS], stores: [u8; 2], to_move: Side) -> GameState {
        let absolute = Position::new(pits);
        let position = if to_move == Side::South { absolute } else { absolute.flipped() };
        let mut state = GameState { position, stores, to_move, since_capture: Vec::new(), end: None };
        state.end = state.end_before_moving();
        state
    }

    /// Pits in absolute order: South's A..F, then North's a..f.
    pub fn pits(&self) -> [u8; PITS] {
        match self.to_move {
            Side::South => self.position.pits(),
            Side::North => self.position.flipped().pits(),
        }
    }

    /// The board from the side to move: what the tablebase indexes.
    pub fn position(&self) -> Position {
        self.position
    }
    /// Seeds captured so far, `[South, North]` (not the side to move first).
    pub fn stores(&self) -> [u8; 2] {
        self.stores
    }
    /// Seeds captured so far, the side to move first: the order of
    /// [`GameState::position`]'s rows, which the evaluator
    /// ([`crate::search::eval::evaluate`]) takes.
    pub fn stores_mover_first(&self) -> [u8; 2] {
        [self.store(self.to_move), self.store(self.to_move.other())]
    }
    /// Seeds captured so far by `side`.
    pub fn store(&self, side: Side) -> u8 {
        self.stores[side.index()]
    }
    /// The side whose turn it is (after the game ends: the side that would
    /// move next).
    pub fn to_move(&self) -> Side {
        self.to_move
    }
    /// How the game ended, or `None` while it is still in play.
    pub fn end(&self) -> Option<GameEnd> {
        self.end
    }
    /// Whether the game has ended (by any of the [`GameEnd`] rules).
    pub fn is_over(&self) -> bool {
        self.end.is_some()
    }
    /// Plies since the last capture (the history repetitions can reach).
    pub fn plies_since_capture(&self) -> usize {
        self.since_capture.len()
    }
    /// The positions since the last capture, oldest first, without the
    /// current one (each seen from the side to move at the time).
    pub fn history(&self) -> &[Position] {
        &self.since_capture
    }

    /// Legal moves of the side to move (none once the game is over).
    pub fn legal_moves(&self) -> Moves {
        if self.is_over() {
            Moves::default()
        } else {
            self.position.legal_moves()
        }
    }

    /// Final seeds of each player (South, North) once the game is over:
    /// the stores, plus each player's own side after a repetition or when the
    /// mover is stuck.
    pub fn final_score(&self) -> Option<[u32; 2]> {
        let end = self.end?;
        let mut score = [self.stores[0] as u32, self.stores[1] as u32];
        if end != GameEnd::Decided {
            score[self.to_move.index()] += self.position.own_seeds();
            score[self.to_move.other().index()] += self.position.opponent_seeds();
        }
        Some(score)
    }

    /// Plays the move on the mover's pit `pit` (0..6), checking it.
    pub fn play(&mut self, pit: Pit) -> Result<u8, MoveError> {
        if let Some(end) = self.end {
            return Err(MoveError::GameOver(end));
        }
        self.check_legal(pit)?;
        Ok(self.play_unchecked(pit))
    }

    /// Plays a move written as its letter (`A..F` for South, `a..f` North).
    pub fn play_letter(&mut self, letter: char) -> Result<u8, MoveError> {
        if let Some(end) = self.end {
            return Err(MoveError::GameOver(end));
        }
        let pit = self.letter_pit(letter)?;
        self.play(pit)
    }

    /// The pit of a move letter for the side to move.
    pub fn letter_pit(&self, letter: char) -> Result<Pit, MoveError> {
        let (side, pit) = match letter {
            'A'..='F' => (Side::South, letter as usize - 'A' as usize),
            'a'..='f' => (Side::North, letter as usize - 'a' as usize),
            _ => return Err(MoveError::BadLetter(letter)),
        };
        if side != self.to_move {
            return Err(MoveError::WrongSide { letter, to_move: self.to_move });
        }
        Ok(pit)
    }

    /// Plays a move after the game was decided by the store rule. Recorded
    /// games sometimes play on after a player passed 24 seeds, and the
    /// engine replays those moves; the game stays decided.
    pub fn play_past_decision(&mut self, pit: Pit) -> Result<u8, MoveError> {
        if self.end != Some(GameEnd::Decided) {
            return self.play(pit);
        }
        self.check_legal(pit)?;
        Ok(self.play_unchecked(pit))
    }

    fn check_legal(&self, pit: Pit) -> Result<(), MoveError> {
        if pit >= ROW {
            return Err(MoveError::NoSuchPit(pit));
        }
        if self.position.legal_moves().contains(pit) {
            Ok(())
        } else if self.position.pits()[pit] == 0 {
            Err(MoveError::EmptyPit(self.to_move.move_letter(pit)))
        } else {
            Err(MoveError::MustFeed(self.to_move.move_letter(pit)))
        }
    }

    /// Plays a move known to be legal in a game not over; returns the
    /// seeds captured. Unchecked: an empty pit plays a null move, a move
    /// after the end plays on, and a pit of 6 or more panics;
    /// [`GameState::play`] checks all three.
    pub fn play_unchecked(&mut self, pit: Pit) -> u8 {
        let decided = self.end == Some(GameEnd::Decided);
        let played = self.position.play(pit);
        self.stores[self.to_move.index()] += played.captured;
        if played.captured > 0 {
            self.since_capture.clear();
        } else {
            self.since_capture.push(self.position);
        }
        self.position = played.child;
        self.to_move = self.to_move.other();
        self.end = if decided {
            Some(GameEnd::Decided)
        } else if played.captured == 0 && self.repeats() {
            Some(GameEnd::Repetition)
        } else {
            self.end_before_moving()
        };
        played.captured
    }

    /// A state repeats when the same position, seen from the same side to
    /// move, occurred an even number of plies ago since the last capture.
    fn repeats(&self) -> bool {
        self.since_capture.iter().rev().skip(1).step_by(2).any(|p| *p == self.position)
    }

    fn end_before_moving(&self) -> Option<GameEnd> {
        let [south, north] = self.stores;
        if south > 24 || north > 24 || (south == 24 && north == 24) {
            Some(GameEnd::Decided)
        } else if self.position.legal_moves().is_empty() {
            Some(GameEnd::NoLegalMove)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_has_six_moves_and_no_end() {
        let s = GameState::start();
        assert_eq!(s.legal_moves().len(), 6);
        assert_eq!(s.end(), None);
    }

    #[test]
    fn a_shuttle_repeats_after_twelve_plies() {
        // One seed each side in the last pit: F, f, A..., a cycle of plies.
        let mut pits = [0u8; 12];
        pits[5] = 1;
        pits[11] = 1;
        let mut s = GameState::from_parts(pits, [23, 23], Side::South);
        let mut plies = 0;
        while !s.is_over() {
            let pit = s.legal_moves().next().unwrap();
            assert_eq!(s.play(pit).unwrap(), 0);
            plies += 1;
            assert!(plies <= 12);
        }
        assert_eq!(s.end(), Some(GameEnd::Repetition));
        assert_eq!(plies, 12);
        assert_eq!(s.final_score(), Some([24, 24]));
    }

    #[test]
    fn illegal_moves_are_refused_with_a_reason() {
        let mut s = GameState::start();
        assert_eq!(s.play_letter('a'), Err(MoveError::WrongSide { letter: 'a', to_move: Side::South }));
        assert_eq!(s.play_letter('x'), Err(MoveError::BadLetter('x')));
        s.play_letter('A').unwrap();
        s.play_letter('a').unwrap();
        assert_eq!(s.play_letter('A'), Err(MoveError::EmptyPit('A')));
    }
}
