//! Move-path counting (perft): the number of legal move sequences of a given
//! length from a state, under every end-of-game rule including repetition.
//! `tests/reference/perft.txt` holds the engine's counts.

use crate::game::GameState;
use crate::rules::{Pit, Position};

/// Legal move sequences of length `depth` from `state` (1 for depth 0).
pub fn perft(state: &GameState, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if state.is_over() {
        return 0;
    }
    let mut walker = Walker::new(state);
    walker.count(state.position(), mover_first(state), depth)
}

/// The count below each legal move of `state` (in pit order), for
/// `perft --divide` and for splitting the work between threads.
pub fn perft_divide(state: &GameState, depth: u32) -> Vec<(Pit, u64)> {
    state
        .legal_moves()
        .map(|pit| {
            let mut child = state.clone();
            child.play_unchecked(pit);
            (pit, perft(&child, depth.saturating_sub(1)))
        })
        .collect()
}

/// Stores ordered (side to move, other side).
fn mover_first(state: &GameState) -> [u8; 2] {
    let stores = state.stores();
    let mover = state.to_move().index();
    [stores[mover], stores[1 - mover]]
}

/// Depth-first walker with one shared stack of positions; `floor` marks the
/// first position since the last capture, the only ones that can repeat.
struct Walker {
    stack: Vec<Position>,
    floor: usize,
}

impl Walker {
    fn new(state: &GameState) -> Walker {
        let mut stack = state.history().to_vec();
        stack.push(state.position());
        Walker { stack, floor: 0 }
    }

    /// Counts paths from `position` (the top of the stack), which is not over.
    fn count(&mut self, position: Position, stores: [u8; 2], depth: u32) -> u64 {
        let moves = position.legal_moves();
        if depth == 1 {
            return moves.len() as u64;
        }
        let mut total = 0;
        for pit in moves {
            let played = position.play(pit);
            let child = played.child;
            let child_stores = [stores[1], stores[0] + played.captured];
            let saved_floor = self.floor;
            if played.captured > 0 {
                let [a, b] = child_stores;
                if a > 24 || b > 24 || (a == 24 && b == 24) {
                    continue; // decided: no move follows
                }
                self.floor = self.stack.len();
            } else if self.repeats(&child) {
                continue; // the repetition ends the game
            }
            self.stack.push(child);
            total += self.count(child, child_stores, depth - 1);
            self.stack.pop();
            self.floor = saved_floor;
        }
        total
    }

    /// Would `child`, pushed next, repeat a state since the last capture with
    /// the same side to move (an even number of plies back)?
    #[inline]
    fn repeats(&self, child: &Position) -> bool {
        let len = self.stack.len();
        (self.floor..len).rev().skip(1).step_by(2).any(|i| self.stack[i] == *child)
    }
}
