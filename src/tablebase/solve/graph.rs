//! One cycle component copied into edge lists, for the searches that visit
//! it millions of times: local member numbers, quiet moves both ways, the
//! mover's row and the best exit of every member.
//!
//! Member `i` has two game states: `2i` (the root player to move) and
//! `2i + 1` (the opponent to move). A quiet move from `i` to `j` links
//! `2i → 2j + 1` and `2i + 1 → 2j`.

use crate::rank::layer_index;
use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::games::StateGraph;
use crate::tablebase::solve::members::MemberPositions;
use crate::tablebase::solve::solver::LayerSolver;

pub(crate) struct ComponentGraph {
    pub n: u8,
    /// Quiet moves inside the component: `children[first[i]..first[i + 1]]`.
    first: Vec<u32>,
    children: Vec<u32>,
    /// The same edges reversed.
    parent_first: Vec<u32>,
    parents: Vec<u32>,
    /// Seeds in the mover's row.
    pub own: Vec<u8>,
    /// The best option leaving the component, pessimistic and optimistic
    /// for the mover (0, 0 when there is none).
    pub exit_lo: Vec<u8>,
    pub exit_hi: Vec<u8>,
}

impl ComponentGraph {
    /// Copies component `k`; must run before its members are decided (the
    /// exit bounds live in the solver's arrays until then).
    pub(crate) fn new(
        solver: &LayerSolver,
        components: &Components,
        k: usize,
        positions: &MemberPositions,
    ) -> ComponentGraph {
        let members = components.of(k);
        let m = members.len();
        // (States are numbered `2 × member + parity` in 32 bits: a copy
        // holds fewer than 2^31 members, which a layer's giant component
        // passes only from 30 seeds on, and only searched layers are
        // copied.)
        assert!(m < 1 << 31, "a component of {m} members is too large to copy into edge lists");
        // Member number of every member's layer index.
        let numbers = components.membership(k);
        let mut first = Vec::with_capacity(m + 1);
        let mut children = Vec::new();
        let mut own = Vec::with_capacity(m);
        first.push(0);
        positions.for_each(|_, _, position| {
            for pit in position.legal_moves() {
                let played = position.play(pit);
                if played.captured == 0 {
                    let index = layer_index(&played.child) as usize;
                    if let Some(number) = numbers.number(index) {
                        children.push(number as u32);
                    }
                }
            }
            first.push(
                u32::try_from(children.len())
                    .expect("a component copied into edge lists has fewer than 2^32 moves"),
            );
            own.push(position.own_seeds() as u8);
        });
        let mut parent_first = vec![0u32; m + 1];
        for &c in &children {
            parent_first[c as usize + 1] += 1;
        }
        for i in 0..m {
            parent_first[i + 1] += parent_first[i];
        }
        let mut fill = parent_first.clone();
        let mut parents = vec![0u32; children.len()];
        for i in 0..m {
            for &c in &children[first[i] as usize..first[i + 1] as usize] {
                parents[fill[c as usize] as usize] = i as u32;
                fill[c as usize] += 1;
            }
        }
        let exit_lo = members.iter().map(|x| solver.entries.lower_upper(x as usize).0).collect();
        let exit_hi = members.iter().map(|x| solver.entries.lower_upper(x as usize).1).collect();
        ComponentGraph { n: solver.n as u8, first, children, parent_first, parents, own, exit_lo, exit_hi }
    }

    /// Members.
    pub(crate) fn len(&self) -> usize {
        self.own.len()
    }

    /// Game states (two per member).
    pub(crate) fn states(&self) -> usize {
        2 * self.own.len()
    }

    #[inline]
    pub(crate) fn children_of(&self, i: usize) -> &[u32] {
        &self.children[self.first[i] as usize..self.first[i + 1] as usize]
    }

    #[inline]
    pub(crate) fn parents_of(&self, i: usize) -> &[u32] {
        &self.parents[self.parent_first[i] as usize..self.parent_first[i + 1] as usize]
    }

    /// What `player` (0 or 1, by parity) receives when the game ends by
    /// repetition at state `s`: the mover there keeps its own row.
    #[inline]
    pub(crate) fn share(&self, s: usize, player: usize) -> u8 {
        let own = self.own[s / 2];
        if s % 2 == player {
            own
        } else {
            self.n - own
        }
    }

    /// The best exit of the mover at state `s`, read for `player`:
    /// `(pessimistic, optimistic)` value to the player of the best exit its
    /// side can take there — for the player's own states the mover's
    /// bounds; for the opponent's, `n −` the opponent's bounds, so the
    /// opponent's best exit is the player's *worst*: `(n − hi, n − lo)`.
    #[inline]
    pub(crate) fn exit_for(&self, s: usize, player: usize) -> (u8, u8) {
        let i = s / 2;
        if s % 2 == player {
            (self.exit_lo[i], self.exit_hi[i])
        } else {
            (self.n - self.exit_hi[i], self.n - self.exit_lo[i])
        }
    }
}

impl StateGraph for ComponentGraph {
    type State = u32;

    #[inline]
    fn node(&self, s: &u32) -> usize {
        *s as usize
    }

    #[inline]
    fn parity(&self, s: &u32) -> usize {
        *s as usize & 1
    }

    fn for_each_state(&self, mut visit: impl FnMut(u32)) {
        (0..self.states() as u32).for_each(&mut visit);
    }

    #[inline]
    fn for_each_child(&self, s: &u32, mut visit: impl FnMut(u32)) {
        let flip = 1 - (s & 1);
        for &c in self.children_of(*s as usize / 2) {
            visit(2 * c + flip);
        }
    }

    #[inline]
    fn for_each_parent(&self, s: &u32, mut visit: impl FnMut(u32)) {
        let flip = 1 - (s & 1);
        for &p in self.parents_of(*s as usize / 2) {
            visit(2 * p + flip);
        }
    }
}
