//! Whether a games' state read from a snapshot is one the threshold games
//! of `bounds` can leave between two thresholds (`docs/cycle-bounds.md`
//! §10): checked before a snapshot taken inside the games is resumed,
//! whoever took it (one process or the ranks).

use crate::tablebase::solve::components::Components;
use crate::tablebase::solve::games::StateGraph;
use crate::tablebase::solve::implicit::{ImplicitComponent, State};
use crate::tablebase::solve::members::MemberPositions;
use crate::tablebase::solve::solver::LayerSolver;

/// Moves a position has at most (a count of children not won is no more).
const MOST_MOVES: u8 = 6;

/// Why one member's games' state, read from a snapshot taken before
/// threshold `t` (thresholds above `t` played) in a layer of `n` seeds,
/// cannot be one the games left there, judged against the member's own
/// exits alone, `(lower, upper)` (`docs/cycle-bounds.md` §10, facts 1 to
/// 3): `state` is `win(q,0), win(q,1), open(q,0), open(q,1)`.
pub(crate) fn member_state_fault(n: u8, t: u8, (lower, upper): (u8, u8), state: [u8; 4]) -> Option<String> {
    let [won_x, won_y, open_x, open_y] = state;
    // The threshold from which the opponent state may join.
    let joins_from = n.saturating_sub(upper);
    if won_x != 0 && !(t < won_x && won_x <= n) {
        return Some(format!("player state won at threshold {won_x}"));
    }
    if won_y != 0 && !(t < won_y && won_y <= joins_from) {
        return Some(format!("opponent state won at threshold {won_y}, may join from {joins_from}"));
    }
    if lower > t && won_x < lower {
        return Some(format!("player state won at {won_x}, below its exit's threshold {lower}"));
    }
    if open_x != 0 {
        return Some("a count at a player state".into());
    }
    if open_y > MOST_MOVES {
        return Some(format!("a count of {open_y} children: a position has at most {MOST_MOVES} moves"));
    }
    if won_y == 0 && joins_from <= t && open_y != 0 {
        return Some(format!("a count at an opponent state that may join only from {joins_from}"));
    }
    None
}

/// Why a games' state read from a snapshot taken before threshold `t`
/// cannot be one the games of component `k` left there, or `None` if it
/// can: every member's state on its own ([`member_state_fault`]), then
/// against its children's (`docs/cycle-bounds.md` §10, facts 4 to 6: the
/// marks the games' rules give a state from its exits and its children's
/// marks, and an opponent's count of children not won). `state` holds
/// each member's four bytes, as snapshots store them. So every mark and
/// count is one the games can meet (resumed games neither wrap a count
/// nor write a bound outside `0..=n`), and only marks forged consistently
/// around cycles, all at one threshold, could pass.
pub(crate) fn games_state_fault(
    solver: &LayerSolver,
    components: &Components,
    k: usize,
    t: u8,
    state: &[u8],
) -> Option<String> {
    let members = components.of(k);
    if state.len() != 4 * members.len() {
        return Some(format!("{} bytes of games' state for {} members", state.len(), members.len()));
    }
    let n = solver.n as u8;
    // (Walked to, not stored: stored, the positions of a giant component
    // would take 16 bytes a member.)
    let positions = MemberPositions::with_limit(solver.n, members, 0);
    let graph = ImplicitComponent::new(components, k, &positions);
    let numbers = members.membership();
    // A child state's mark (children are members: `for_each_child` keeps
    // to the component).
    let mark = |child: &State| numbers.number(child.index()).map_or(0, |j| state[4 * j + child.parity()]);
    let fault = |i: usize, m: usize, position: crate::rules::Position| -> Option<String> {
        let bytes = [state[4 * i], state[4 * i + 1], state[4 * i + 2], state[4 * i + 3]];
        let [won_x, won_y, _, open_y] = bytes;
        let (lower, upper) = solver.entries.lower_upper(m);
        let say = |what: String| Some(format!("position {m} of component {k}, before threshold {t}: {what}"));
        if let Some(what) = member_state_fault(n, t, (lower, upper), bytes) {
            return say(what);
        }
        // Fact 4: the player joins at its exit's threshold or its first
        // child's, whichever comes first.
        let mut best_child = 0u8;
        graph.for_each_child(&State::new(&position, m, 0), |c| best_child = best_child.max(mark(&c)));
        let joins_at = best_child.max(if lower > t { lower } else { 0 });
        if won_x != joins_at {
            return say(format!("player state won at {won_x}, at {joins_at} by its exit and children"));
        }
        // Facts 5 and 6: the opponent joins once it may and its last
        // child has joined; until then it counts its children not won.
        let joins_from = n.saturating_sub(upper);
        let (mut not_won, mut last_child) = (0u32, u8::MAX);
        graph.for_each_child(&State::new(&position, m, 1), |c| {
            let w = mark(&c);
            not_won += (w == 0) as u32;
            last_child = last_child.min(w);
        });
        let joins_at = if joins_from > t && not_won == 0 { joins_from.min(last_child) } else { 0 };
        if won_y != joins_at {
            return say(format!("opponent state won at {won_y}, at {joins_at} by its exits and children"));
        }
        if won_y == 0 && joins_from > t && open_y as u32 != not_won {
            return say(format!("opponent state counts {open_y} children not won of {not_won}"));
        }
        None
    };
    // The first fault in member order: each chunk of members stops at its
    // first, and the chunks' are gathered in order.
    let faults = positions.par_collect(|i, m, position, out| {
        if out.is_empty() {
            out.extend(fault(i, m, position));
        }
    });
    faults.into_iter().next()
}
