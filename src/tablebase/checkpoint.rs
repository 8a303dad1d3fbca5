//! Snapshots of a layer under construction, so an interrupted build resumes
//! where it stood and ends with the same bytes as an uninterrupted one.
//!
//! Layout (little-endian, see [`super::codec`]; the build directory stores it
//! zstd-compressed, with its checksum in the manifest):
//!
//! ```text
//! "OWCKPT01" | n: u32 | positions: u64
//! lo, hi, est, pending, flags: blob each (one byte per position)
//! stats (LayerStats::encode)
//! cursor: tag u8 (0 start, 1 propagating, 2 retrograded, 3 resolving)
//!   1: frontier: words
//!   3: k: u64 | step tag u8 (0 begin, 1 bounds, 2 search)
//!        1: t: u8 | safety_rounds: u32 | state: blob
//!        2: lower: blob | upper: blob | done: blob (pairs lower, upper)
//! components: 0 | 1 followed by ids: words
//! ```

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use super::codec::{DecodeError, Decoder, Encoder};
use super::layer::{Cursor, LayerSolver, SearchBudget, Step};
use super::scc::Components;
use super::solved::SolvedLayers;
use super::stats::LayerStats;

const MAGIC: &[u8; 8] = b"OWCKPT01";

fn bytes_of(array: &[AtomicU8]) -> Vec<u8> {
    array.iter().map(|a| a.load(Relaxed)).collect()
}

fn atomics_from(bytes: &[u8], size: usize, what: &str) -> Result<Vec<AtomicU8>, DecodeError> {
    if bytes.len() != size {
        return Err(DecodeError(format!("{what}: {} bytes for {size} positions", bytes.len())));
    }
    Ok(bytes.iter().map(|&b| AtomicU8::new(b)).collect())
}

impl LayerSolver<'_> {
    /// Serializes the whole state at a safe point.
    pub(crate) fn snapshot(&self, cursor: &Cursor, components: Option<&Components>) -> Vec<u8> {
        let mut e = Encoder::default();
        e.bytes.extend_from_slice(MAGIC);
        e.u32(self.n);
        e.u64(self.size as u64);
        for array in [&self.lo, &self.hi, &self.est, &self.pending, &self.flags] {
            e.blob(&bytes_of(array));
        }
        self.stats.encode(&mut e);
        match cursor {
            Cursor::Start => e.u8(0),
            Cursor::Propagating { frontier } => {
                e.u8(1);
                e.words(frontier);
            }
            Cursor::Retrograded => e.u8(2),
            Cursor::Resolving { k, step } => {
                e.u8(3);
                e.u64(*k as u64);
                match step {
                    Step::Begin => e.u8(0),
                    Step::Bounds { t, safety_rounds, state } => {
                        e.u8(1);
                        e.u8(*t);
                        e.u32(*safety_rounds);
                        e.blob(state);
                    }
                    Step::Search { lower, upper, done } => {
                        e.u8(2);
                        e.blob(lower);
                        e.blob(upper);
                        let pairs: Vec<u8> = done.iter().flat_map(|&(l, u)| [l, u]).collect();
                        e.blob(&pairs);
                    }
                }
            }
            Cursor::Done => e.u8(4),
        }
        match components {
            None => e.u8(0),
            Some(c) => {
                e.u8(1);
                e.words(&c.id);
            }
        }
        e.bytes
    }

    /// Rebuilds a solver from a snapshot of layer `n`.
    pub fn restore<'a>(
        n: u32,
        lower: &'a SolvedLayers,
        budget: SearchBudget,
        bytes: &[u8],
    ) -> Result<(LayerSolver<'a>, Cursor, Option<Components>), DecodeError> {
        let mut d = Decoder::new(bytes);
        if d.blob_exact(MAGIC.len())? != MAGIC {
            return Err(DecodeError("not a layer checkpoint (bad magic)".into()));
        }
        let (found_n, size) = (d.u32()?, d.u64()? as usize);
        let mut solver = LayerSolver::new(n, lower, budget);
        if found_n != n || size != solver.size {
            return Err(DecodeError(format!(
                "checkpoint of layer {found_n} ({size} positions), expected layer {n}"
            )));
        }
        solver.lo = atomics_from(d.blob()?, size, "lower bounds")?;
        solver.hi = atomics_from(d.blob()?, size, "upper bounds")?;
        solver.est = atomics_from(d.blob()?, size, "estimates")?;
        solver.pending = atomics_from(d.blob()?, size, "counters")?;
        solver.flags = atomics_from(d.blob()?, size, "flags")?;
        solver.stats = LayerStats::decode(&mut d)?;
        let cursor = match d.u8()? {
            0 => Cursor::Start,
            1 => {
                let frontier = d.words()?;
                if frontier.iter().any(|&i| i as usize >= size) {
                    return Err(DecodeError("frontier index outside the layer".into()));
                }
                Cursor::Propagating { frontier }
            }
            2 => Cursor::Retrograded,
            3 => {
                let k = d.u64()? as usize;
                let step = match d.u8()? {
                    0 => Step::Begin,
                    1 => Step::Bounds { t: d.u8()?, safety_rounds: d.u32()?, state: d.blob()?.to_vec() },
                    2 => {
                        let lower = d.blob()?.to_vec();
                        let upper = d.blob()?.to_vec();
                        let done = d.blob()?.chunks_exact(2).map(|p| (p[0], p[1])).collect();
                        Step::Search { lower, upper, done }
                    }
                    tag => return Err(DecodeError(format!("unknown step {tag}"))),
                };
                Cursor::Resolving { k, step }
            }
            4 => Cursor::Done,
            tag => return Err(DecodeError(format!("unknown cursor {tag}"))),
        };
        let components = match d.u8()? {
            0 => None,
            1 => {
                let ids = d.words()?;
                if ids.len() != size || ids.iter().any(|&r| r != super::scc::NONE && r as usize >= size) {
                    return Err(DecodeError("component ids do not match the layer".into()));
                }
                Some(Components::from_ids(ids))
            }
            tag => return Err(DecodeError(format!("unknown components tag {tag}"))),
        };
        d.finish()?;
        if let Cursor::Resolving { k, step } = &cursor {
            let c = components.as_ref().ok_or_else(|| DecodeError("resolving without components".into()))?;
            if *k > c.count() {
                return Err(DecodeError(format!("component {k} of {}", c.count())));
            }
            let members = if *k < c.count() { c.of(*k).len() } else { 0 };
            let consistent = match step {
                Step::Begin => true,
                Step::Bounds { t, state, .. } => state.len() == 4 * members && (*t as u32) <= n,
                Step::Search { lower, upper, done } => {
                    lower.len() == members && upper.len() == members && done.len() <= members
                }
            };
            if !consistent {
                return Err(DecodeError("component progress does not match its component".into()));
            }
        }
        Ok((solver, cursor, components))
    }
}
