//! The drop-out expansion priority in integers: one ply, ∞, the weight ω
//! of a deviation, and what a child contributes to its parent's priority.
//! The formula and its units are explained in `dropout`; the graph keeps
//! every node's priority with it, and `dropout` descends along it.

use std::fmt;

/// One ply, in priority units.
pub const PLY: i64 = 1_000_000;
/// The priority of what cannot be expanded.
pub const INFINITE: i64 = i64::MAX;
/// The largest finite priority (sums saturate here).
const MAX_FINITE: i64 = i64::MAX - 1;

/// ω, the weight of a deviation: micro-plies per engine unit.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Omega(i64);

impl Omega {
    /// The largest ω accepted: 1000 plies per engine unit.
    pub const MAX_MICRO: i64 = 1000 * PLY;

    /// ω given in plies per engine unit (0.04: one seed weighs one ply),
    /// rounded to the micro-ply.
    pub fn from_plies_per_unit(plies: f64) -> Option<Omega> {
        let micro = (plies * PLY as f64).round();
        (plies.is_finite() && micro >= 0.0 && micro <= Self::MAX_MICRO as f64).then_some(Omega(micro as i64))
    }

    /// ω given in micro-plies per engine unit; `None` outside
    /// `0..=MAX_MICRO`.
    pub fn from_micro(micro: i64) -> Option<Omega> {
        (0..=Self::MAX_MICRO).contains(&micro).then_some(Omega(micro))
    }

    /// ω in micro-plies per engine unit (the unit of priorities).
    pub fn micro(self) -> i64 {
        self.0
    }

    /// ω in plies per engine unit (what `Display` prints).
    pub fn plies_per_unit(self) -> f64 {
        self.0 as f64 / PLY as f64
    }
}

impl fmt::Display for Omega {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.plies_per_unit())
    }
}

/// What child `c` contributes to its parent's priority:
/// `priority(c) + 1 ply + ω · (best − value)`, or ∞ if `c` is ∞.
/// `best` and `value` are from the parent's mover's view.
#[inline]
pub fn child_term(child_priority: i64, best: i32, value: i32, omega: Omega) -> i64 {
    if child_priority == INFINITE {
        return INFINITE;
    }
    let deviation = (best as i64 - value as i64).max(0);
    child_priority.saturating_add(PLY).saturating_add(omega.0.saturating_mul(deviation)).min(MAX_FINITE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omega_rounds_to_micro_plies() {
        assert_eq!(Omega::from_plies_per_unit(0.04).unwrap().micro(), 40_000);
        assert_eq!(Omega::from_plies_per_unit(0.0).unwrap().micro(), 0);
        assert!(Omega::from_plies_per_unit(-0.1).is_none());
        assert!(Omega::from_plies_per_unit(f64::NAN).is_none());
        assert!(Omega::from_plies_per_unit(1e9).is_none());
        assert_eq!(Omega::from_micro(40_000).unwrap().to_string(), "0.04");
    }

    #[test]
    fn terms_saturate_and_keep_infinity_apart() {
        let w = Omega::from_micro(Omega::MAX_MICRO).unwrap();
        assert_eq!(child_term(INFINITE, 0, 0, w), INFINITE);
        assert_eq!(child_term(MAX_FINITE, 1000, -1000, w), MAX_FINITE);
        assert_eq!(child_term(0, 10, 10, w), PLY);
        let w = Omega::from_plies_per_unit(0.5).unwrap();
        assert_eq!(child_term(3 * PLY, 10, 4, w), 3 * PLY + PLY + 3 * PLY);
    }
}
