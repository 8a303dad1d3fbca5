//! The entries of the layer being solved: one owner for its per-position
//! arrays. Every phase (retrograde analysis, components, bounds, searches,
//! checkpoints) reads and changes them through these methods only, so the
//! rules that keep them consistent live in one place: an undecided
//! position's bytes hold the best options seen so far and the quiet moves
//! still pending; `decide` fixes a position once (first writer wins, after
//! meeting the seed); a decided position's bytes are its entry.

use std::io::{self, Write};
use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering::{AcqRel, Relaxed};
use std::sync::Mutex;

use crate::codec::{DecodeError, Decoder};
use crate::parallel;
use crate::parked::{Parked, ParkedMap};
use crate::rank::{layer_index, layer_size, position_in_layer};
use crate::rules::Position;
use crate::tablebase::entry::{Entry, Proof, ENTRY_BYTES};
use crate::tablebase::layers::{PackedLayer, SolvedLayers, PIECE};
use crate::tablebase::solve::members::Members;

/// The state byte of a position under construction: its flags and the
/// count of its quiet moves still pending, in one byte (until 2026-11-29
/// a byte each; checkpoints still store them as two arrays, the counts
/// then the flags, byte for byte as before).
const DECIDED: u8 = 0x80;
const ON_CYCLE: u8 = 0x40;
const PROOF_MASK: u8 = 0x03;
/// The flags' bits.
const FLAGS: u8 = DECIDED | ON_CYCLE | PROOF_MASK;
/// The pending count, in bits 2 to 5 (a position has at most 6 moves).
const PENDING_SHIFT: u32 = 2;
const PENDING: u8 = 0x0F << PENDING_SHIFT;
const PENDING_ONE: u8 = 1 << PENDING_SHIFT;
/// The most a pending count can hold.
const MOST_PENDING: u8 = PENDING >> PENDING_SHIFT;

/// A position whose interval proven by this build and the interval of the
/// table it started from do not meet: one of the two tables is wrong (or
/// made for other rules), and nothing built on both may be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contradiction {
    pub seeds: u32,
    pub index: u64,
    /// The interval this build proves, and the seed's entry.
    pub ours: (u8, u8),
    pub theirs: (u8, u8),
}

impl Contradiction {
    /// Appends `found` (a rank's contradiction, if any) to a message.
    pub(crate) fn encode_found(found: Option<&Contradiction>, e: &mut crate::codec::Encoder) {
        match found {
            Some(c) => {
                e.u8(1);
                e.u64(c.index);
                for b in [c.ours.0, c.ours.1, c.theirs.0, c.theirs.1] {
                    e.u8(b);
                }
            }
            None => e.u8(0),
        }
    }

    /// Reads what [`Contradiction::encode_found`] wrote, for layer `seeds`.
    pub(crate) fn decode_found(
        d: &mut crate::codec::Decoder,
        seeds: u32,
    ) -> Result<Option<Contradiction>, crate::codec::DecodeError> {
        if d.u8()? == 0 {
            return Ok(None);
        }
        let index = d.u64()?;
        let (ours, theirs) = ((d.u8()?, d.u8()?), (d.u8()?, d.u8()?));
        Ok(Some(Contradiction { seeds, index, ours, theirs }))
    }
}

impl std::fmt::Display for Contradiction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let position = position_in_layer(self.seeds, self.index)
            .map(|p| p.pits().iter().map(|s| s.to_string()).collect::<Vec<_>>().join("-"))
            .unwrap_or_else(|| format!("index {}", self.index));
        write!(
            f,
            "layer {} position {position}: this build proves {}..{}, the table it starts from says {}..{}",
            self.seeds, self.ours.0, self.ours.1, self.theirs.0, self.theirs.1
        )
    }
}

/// The bounds and pending counts of a layer's positions as the threshold
/// games read them: from the entries, or mapped from the file they wait
/// in ([`LayerEntries::park_for_games`]).
pub(crate) enum ExitBounds<'e> {
    Held { base: usize, lo: &'e [AtomicU8], hi: &'e [AtomicU8], state: &'e [AtomicU8] },
    Mapped { base: usize, lo: &'e [u8], hi: &'e [u8], state: &'e [u8] },
}

impl ExitBounds<'_> {
    /// `(lower, upper)` of layer position `index`, as
    /// [`LayerEntries::lower_upper`] reads it.
    #[inline]
    pub(crate) fn get(&self, index: usize) -> (u8, u8) {
        match *self {
            ExitBounds::Held { base, lo, hi, .. } => {
                (lo[index - base].load(Relaxed), hi[index - base].load(Relaxed))
            }
            ExitBounds::Mapped { base, lo, hi, .. } => (lo[index - base], hi[index - base]),
        }
    }

    /// The quiet moves position `index` waits for, as
    /// [`LayerEntries::pending`] reads them.
    #[inline]
    pub(crate) fn pending(&self, index: usize) -> u8 {
        let byte = match *self {
            ExitBounds::Held { base, state, .. } => state[index - base].load(Relaxed),
            ExitBounds::Mapped { base, state, .. } => state[index - base],
        };
        (byte & PENDING) >> PENDING_SHIFT
    }
}

/// The per-position state of a layer under construction.
pub(crate) struct LayerEntries<'a> {
    n: u32,
    /// Positions in the whole layer.
    size: usize,
    /// The layer indexes the arrays hold: `base..base + len`.
    base: usize,
    len: usize,
    lower: &'a SolvedLayers,
    /// Best option bounds and estimate seen so far (mover-relative); once a
    /// position is decided, its own lower bound, upper bound and value.
    lo: Vec<AtomicU8>,
    hi: Vec<AtomicU8>,
    /// Empty while every estimate equals its lower bound and nothing can
    /// make one differ (`estimates_held` false): see
    /// [`Self::without_estimates`].
    est: Vec<AtomicU8>,
    estimates_held: bool,
    /// All four arrays while they wait on disk during the threshold games
    /// (the arrays are then empty), with the bounds and state bytes
    /// mapped read-only: the games read a member's bounds in passes, once
    /// a threshold, its pending count once, and nothing else of its entry
    /// ([`Self::park_for_games`]).
    parked_for_games: Option<(Parked, ParkedMap)>,
    /// `DECIDED | ON_CYCLE | proof` ([`FLAGS`]) and the quiet moves whose
    /// child is not decided yet ([`PENDING`]).
    state: Vec<AtomicU8>,
    /// This layer's packed entries in the table the build starts from:
    /// proven intervals, intersected with what this build proves
    /// (`docs/cycle-bounds.md` §6).
    seed: Option<PackedLayer<'a>>,
    /// The first position where this build and the seed disagree.
    contradiction: Mutex<Option<Contradiction>>,
}

fn atomic_bytes(len: usize) -> Vec<AtomicU8> {
    (0..len).map(|_| AtomicU8::new(0)).collect()
}

fn atomics_from(bytes: &[u8], size: usize, what: &str) -> Result<Vec<AtomicU8>, DecodeError> {
    if bytes.len() != size {
        return Err(DecodeError::Invalid(format!("{what}: {} bytes for {size} positions", bytes.len())));
    }
    Ok(bytes.iter().map(|&b| AtomicU8::new(b)).collect())
}

/// `bytes`, if each is a value of a position with `seeds` seeds (at most
/// `seeds`): a checkpoint's bounds and estimates are subtracted from the
/// layer's seed count, so one out of range must be refused, not used.
fn values_at_most<'b>(bytes: &'b [u8], seeds: u8, what: &str) -> Result<&'b [u8], DecodeError> {
    match bytes.iter().position(|&b| b > seeds) {
        Some(i) => {
            Err(DecodeError::Invalid(format!("{what}: position {i} holds {}, above {seeds} seeds", bytes[i])))
        }
        None => Ok(bytes),
    }
}

/// Writes a length-prefixed blob of atomic bytes in chunks, without a copy
/// of the whole array (at 24 seeds a layer array is 400 MB).
/// Streams `array` as a blob, each byte as `byte` makes it.
fn stream_blob(out: &mut dyn Write, array: &[AtomicU8], byte: impl Fn(u8) -> u8) -> io::Result<()> {
    out.write_all(&(array.len() as u64).to_le_bytes())?;
    let mut buffer = Vec::with_capacity(1 << 16);
    for chunk in array.chunks(1 << 16) {
        buffer.clear();
        buffer.extend(chunk.iter().map(|a| byte(a.load(Relaxed))));
        out.write_all(&buffer)?;
    }
    Ok(())
}

/// A position's state byte from its pending count and flags as a
/// checkpoint stores them, refused if either holds what no build writes.
fn state_byte(count: u8, flags: u8) -> Result<u8, DecodeError> {
    if count > MOST_PENDING || flags & !FLAGS != 0 {
        return Err(DecodeError::Invalid(format!("a pending count of {count} with flags {flags:#04x}")));
    }
    Ok(flags | count << PENDING_SHIFT)
}

impl<'a> LayerEntries<'a> {
    /// The positions `window` of layer `n` (all: `0..layer_size(n)`),
    /// nothing decided; `lower` holds layers `0..n`.
    pub(crate) fn window(
        n: u32,
        lower: &'a SolvedLayers,
        window: std::ops::Range<usize>,
    ) -> LayerEntries<'a> {
        let size = layer_size(n) as usize;
        assert!(window.end <= size, "window {window:?} outside layer {n}");
        let len = window.len();
        LayerEntries {
            n,
            size,
            base: window.start,
            len,
            lower,
            lo: atomic_bytes(len),
            hi: atomic_bytes(len),
            est: atomic_bytes(len),
            estimates_held: true,
            parked_for_games: None,
            state: atomic_bytes(len),
            seed: None,
            contradiction: Mutex::new(None),
        }
    }

    /// Keeps no estimates (1 byte a position less in every phase that
    /// holds the entries) if every layer below is stored in value records,
    /// all exact: then every option a capture gives is exact, and an
    /// estimate can differ from its lower bound only once a position of
    /// this layer is decided inexact, which [`Self::hold_estimates`] must
    /// precede (`docs/tablebase-build.md`, "Estimates implied"). While none
    /// is held an estimate reads as its lower bound, and a write that
    /// would make one differ panics rather than be lost.
    pub(crate) fn without_estimates(&mut self) {
        if self.lower.every_layer_exact() && self.estimates_held {
            self.est = Vec::new();
            self.estimates_held = false;
        }
    }

    /// Holds an estimate a position again, each its lower bound (what it
    /// has been while none was held), before a decision that may leave a
    /// position inexact; nothing to do if they are held.
    pub(crate) fn hold_estimates(&mut self) {
        assert!(self.parked_for_games.is_none(), "the entries are parked");
        if !self.estimates_held {
            self.est = self.lo.iter().map(|b| AtomicU8::new(b.load(Relaxed))).collect();
            self.estimates_held = true;
        }
    }

    /// Whether the estimates are held (see [`Self::without_estimates`]).
    #[cfg(test)]
    pub(crate) fn estimates_held(&self) -> bool {
        self.estimates_held
    }

    /// The estimate of the `offset`-th position these arrays hold.
    #[inline]
    fn estimate_at(&self, offset: usize) -> u8 {
        if self.estimates_held { &self.est[offset] } else { &self.lo[offset] }.load(Relaxed)
    }

    /// Moves the four arrays to a scratch file in `dir`, for a phase that
    /// does not read them (the component search, once its labels are
    /// made). Until [`Self::restore`] they are empty: a read of any
    /// position panics rather than see a wrong byte. If parking fails the
    /// arrays are lost with the error, and the layer with them (a build
    /// resumes it from its last checkpoint).
    pub(crate) fn park(&mut self, dir: &std::path::Path) -> io::Result<Parked> {
        let arrays = [&mut self.lo, &mut self.hi, &mut self.est, &mut self.state].map(std::mem::take);
        Parked::park(dir, arrays.into())
    }

    /// Moves the four arrays to a scratch file in `dir` while the
    /// threshold games run, and maps the bounds and state bytes back
    /// read-only. The games read a member's bounds (its exits) in one pass
    /// a threshold, and its pending count once, as they start (their
    /// opponent states' first counts), through [`Self::exit_bounds`], and
    /// nothing else of its entry: only a decision reads an estimate, and
    /// the flags are read before the games (`member_waiting_outside`) and
    /// after them (the decisions). A snapshot taken meanwhile streams the arrays from
    /// the file. Until [`Self::restore_after_games`] any other read of an
    /// entry panics.
    pub(crate) fn park_for_games(&mut self, dir: &std::path::Path) -> io::Result<()> {
        assert!(self.parked_for_games.is_none(), "parked for the games already");
        let arrays = [&mut self.lo, &mut self.hi, &mut self.est, &mut self.state].map(std::mem::take);
        let parked = Parked::park(dir, arrays.into())?;
        let bounds = parked.map_checked(&[0, 1, 3])?;
        self.parked_for_games = Some((parked, bounds));
        Ok(())
    }

    /// Takes back what [`Self::park_for_games`] moved out, byte for byte
    /// (nothing to do if nothing was parked).
    pub(crate) fn restore_after_games(&mut self) -> io::Result<()> {
        if let Some((parked, bounds)) = self.parked_for_games.take() {
            drop(bounds);
            [self.lo, self.hi, self.est, self.state] = self.arrays_back(parked, |_| ())?;
        }
        Ok(())
    }

    /// [`Self::restore_after_games`], writing a component's bounds from
    /// its games over its members' own as they come back: the member
    /// numbered `i` (the `i`-th of `members`) gets `[lower[i], upper]`,
    /// where `upper` is its entry in `wider` (`(member number, upper)`, by
    /// member number) or else `lower[i]`. What the members' bounds held,
    /// their best exits, is gone: only a search reads it after the games,
    /// so the caller does this only when none will run
    /// (`docs/tablebase-build.md`, "Memory, phase by phase", step 7).
    /// The lower ends are written, and dropped, as the lower bounds
    /// arrive, before the other arrays take their room: the bounds never
    /// stand beside all the entries.
    pub(crate) fn restore_writing_member_bounds(
        &mut self,
        members: Members,
        lower: Vec<u8>,
        wider: &[(u32, u8)],
    ) -> io::Result<()> {
        assert_eq!(lower.len(), members.len(), "a lower bound a member");
        let base = self.base;
        let mut lower = Some(lower);
        let mut write_lower = |lo: &[AtomicU8]| {
            if let Some(lower) = lower.take() {
                members.iter().zip(lower).for_each(|(m, low)| lo[m as usize - base].store(low, Relaxed));
            }
        };
        let write_upper = |lo: &[AtomicU8], hi: &[AtomicU8]| {
            let mut wider = wider.iter().peekable();
            for (i, m) in members.iter().enumerate() {
                let m = m as usize - base;
                let high = match wider.next_if(|&&(j, _)| j as usize == i) {
                    Some(&(_, high)) => high,
                    None => lo[m].load(Relaxed),
                };
                hi[m].store(high, Relaxed);
            }
            assert!(wider.next().is_none(), "an upper end listed for no member");
        };
        match self.parked_for_games.take() {
            Some((parked, bounds)) => {
                drop(bounds);
                // (Arrays of other lengths are refused once back.)
                let len = self.len;
                let arrived = |back: &[Vec<AtomicU8>]| match back {
                    [lo] if lo.len() == len => write_lower(lo),
                    [lo, hi] if hi.len() == len => write_upper(lo, hi),
                    _ => {}
                };
                [self.lo, self.hi, self.est, self.state] = self.arrays_back(parked, arrived)?;
            }
            None => {
                write_lower(&self.lo);
                write_upper(&self.lo, &self.hi);
            }
        }
        Ok(())
    }

    /// The bounds of the positions, held or parked for the games.
    pub(crate) fn exit_bounds(&self) -> ExitBounds<'_> {
        match &self.parked_for_games {
            Some((_, mapped)) => ExitBounds::Mapped {
                base: self.base,
                lo: mapped.array(0),
                hi: mapped.array(1),
                state: mapped.array(3),
            },
            None => ExitBounds::Held { base: self.base, lo: &self.lo, hi: &self.hi, state: &self.state },
        }
    }

    /// Takes back the arrays [`Self::park`] moved out, byte for byte.
    pub(crate) fn restore(&mut self, parked: Parked) -> io::Result<()> {
        [self.lo, self.hi, self.est, self.state] = self.arrays_back(parked, |_| ())?;
        Ok(())
    }

    /// The `K` arrays of `parked`, each of a byte a position these arrays
    /// hold, or an error; `arrived` as in [`Parked::restore_each`].
    fn arrays_back<const K: usize>(
        &self,
        parked: Parked,
        arrived: impl FnMut(&[Vec<AtomicU8>]),
    ) -> io::Result<[Vec<AtomicU8>; K]> {
        let arrays = parked.restore_each(arrived)?;
        let lengths: Vec<usize> = arrays.iter().map(Vec::len).collect();
        // (The estimates, third, are empty while none is held.)
        let expected = |k: usize| if k == 2 && !self.estimates_held { 0 } else { self.len };
        if lengths.len() != K || lengths.iter().enumerate().any(|(k, &l)| l != expected(k)) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("parked arrays of {lengths:?} bytes, not {K} of {}", self.len),
            ));
        }
        Ok(arrays.try_into().unwrap_or_else(|_| unreachable!("{K} arrays, counted above")))
    }

    /// Streams the arrays (five blobs, in the checkpoint layout: the
    /// three values, the pending counts, the flags).
    pub(crate) fn write_arrays(&self, out: &mut dyn Write) -> io::Result<()> {
        fn pending(b: u8) -> u8 {
            (b & PENDING) >> PENDING_SHIFT
        }
        fn flags(b: u8) -> u8 {
            b & FLAGS
        }
        match &self.parked_for_games {
            Some((parked, _)) => {
                let len = (self.len as u64).to_le_bytes();
                // (Estimates not held are the lower bounds.)
                let estimates = if self.estimates_held { 2 } else { 0 };
                for (k, byte) in [
                    (0, None),
                    (1, None),
                    (estimates, None),
                    (3, Some(pending as fn(u8) -> u8)),
                    (3, Some(flags)),
                ] {
                    out.write_all(&len)?;
                    match byte {
                        None => parked.write_array(k, out)?,
                        Some(byte) => parked.write_array_mapped(k, out, byte)?,
                    }
                }
                Ok(())
            }
            None => {
                stream_blob(out, &self.lo, |b| b)?;
                stream_blob(out, &self.hi, |b| b)?;
                stream_blob(out, if self.estimates_held { &self.est } else { &self.lo }, |b| b)?;
                stream_blob(out, &self.state, pending)?;
                stream_blob(out, &self.state, flags)
            }
        }
    }

    /// Reads back what [`Self::write_arrays`] wrote.
    pub(crate) fn read_arrays(&mut self, d: &mut Decoder) -> Result<(), DecodeError> {
        let size = self.len;
        let seeds = self.n as u8;
        let mut values = |what| atomics_from(values_at_most(d.blob()?, seeds, what)?, size, what);
        self.lo = values("lower bounds")?;
        self.hi = values("upper bounds")?;
        // (Read where they lie until they are known to be needed: a copy
        // made first took a byte a position more at a big layer's resume.)
        let estimates = values_at_most(d.blob()?, seeds, "estimates")?;
        if estimates.len() != size {
            return Err(DecodeError::Invalid(format!(
                "estimates: {} bytes for {size} positions",
                estimates.len()
            )));
        }
        let counts = d.blob()?;
        let flags = d.blob()?;
        if counts.len() != size || flags.len() != size {
            return Err(DecodeError::Invalid(format!(
                "{} counters and {} flags for {size} positions",
                counts.len(),
                flags.len()
            )));
        }
        self.state = counts
            .iter()
            .zip(flags)
            .map(|(&c, &f)| state_byte(c, f).map(AtomicU8::new))
            .collect::<Result<_, _>>()?;
        // Estimates need not be held again if none was, each equals its
        // lower bound and every position decided is exact: the state a
        // build that held none would be in (`docs/tablebase-build.md`,
        // "Estimates implied"). Otherwise they are held from now on.
        let implied = (0..size).all(|i| {
            let (lower, upper) = (self.lo[i].load(Relaxed), self.hi[i].load(Relaxed));
            estimates[i] == lower && (self.state[i].load(Relaxed) & DECIDED == 0 || lower == upper)
        });
        if self.estimates_held || !implied {
            self.est = atomics_from(estimates, size, "estimates")?;
            self.estimates_held = true;
        }
        Ok(())
    }

    /// Stores the five arrays of another window (as [`Self::write_arrays`]
    /// streamed them) at their place in these arrays, which must cover it.
    pub(crate) fn read_window_arrays(
        &self,
        window: std::ops::Range<usize>,
        d: &mut Decoder,
    ) -> Result<(), DecodeError> {
        if window.start < self.base || window.end > self.base + self.len {
            return Err(DecodeError::Invalid(format!("window {window:?} outside the arrays")));
        }
        self.read_overlapping_arrays(window, d)
    }

    /// Stores, of the five arrays of another window (as
    /// [`Self::write_arrays`] streamed them), the positions these arrays
    /// hold, and skips the others.
    pub(crate) fn read_overlapping_arrays(
        &self,
        window: std::ops::Range<usize>,
        d: &mut Decoder,
    ) -> Result<(), DecodeError> {
        // The stretch both cover, if any, in these arrays and in the blobs.
        let (from, to) = (window.start.max(self.base), window.end.min(self.base + self.len));
        let (ours, theirs) = if from < to {
            (from - self.base..to - self.base, from - window.start..to - window.start)
        } else {
            (0..0, 0..0)
        };
        let mut blob = |what: &str, is_value: bool| -> Result<&[u8], DecodeError> {
            let bytes = d.blob()?;
            let bytes = if is_value { values_at_most(bytes, self.n as u8, what)? } else { bytes };
            if bytes.len() != window.len() {
                return Err(DecodeError::Invalid(format!(
                    "{what}: {} bytes for {} positions",
                    bytes.len(),
                    window.len()
                )));
            }
            Ok(&bytes[theirs.clone()])
        };
        assert!(self.estimates_held, "another window's arrays are read into held estimates");
        for (array, what) in
            [(&self.lo, "lower bounds"), (&self.hi, "upper bounds"), (&self.est, "estimates")]
        {
            for (slot, &b) in array[ours.clone()].iter().zip(blob(what, true)?) {
                slot.store(b, Relaxed);
            }
        }
        let counts = blob("counters", false)?;
        let flags = blob("flags", false)?;
        for ((slot, &c), &f) in self.state[ours].iter().zip(counts).zip(flags) {
            slot.store(state_byte(c, f)?, Relaxed);
        }
        Ok(())
    }

    /// A position's first look: the best capture options and the quiet
    /// moves to wait for.
    #[inline]
    pub(crate) fn start(&self, index: usize, options: (u8, u8, u8), quiet: u8) {
        let index = index - self.base;
        self.lo[index].store(options.0, Relaxed);
        self.hi[index].store(options.1, Relaxed);
        if self.estimates_held {
            self.est[index].store(options.2, Relaxed);
        } else {
            assert_eq!(options.2, options.0, "an estimate apart from its lower bound, none held");
        }
        assert!(quiet <= MOST_PENDING, "{quiet} quiet moves: a position has at most 6 moves");
        let keep_flags = |b: u8| Some(b & FLAGS | quiet << PENDING_SHIFT);
        let _ = self.state[index].fetch_update(Relaxed, Relaxed, keep_flags);
    }

    /// The quiet moves an undecided position still waits for.
    pub(crate) fn pending(&self, index: usize) -> u8 {
        (self.state[index - self.base].load(Relaxed) & PENDING) >> PENDING_SHIFT
    }

    /// `(lower, upper)` of [`Self::interval`], without the estimate (which
    /// the threshold games, never reading it, may have parked).
    #[inline]
    pub(crate) fn lower_upper(&self, index: usize) -> (u8, u8) {
        let index = index - self.base;
        (self.lo[index].load(Relaxed), self.hi[index].load(Relaxed))
    }

    /// `(lower, upper, estimate)`: the best options so far of an undecided
    /// position, the entry of a decided one.
    #[inline]
    pub(crate) fn interval(&self, index: usize) -> (u8, u8, u8) {
        let index = index - self.base;
        (self.lo[index].load(Relaxed), self.hi[index].load(Relaxed), self.estimate_at(index))
    }

    /// Intersects every interval this layer proves with `entries`, the
    /// packed entries of the same layer in a table proven before (an
    /// interval that does not meet is a [`Contradiction`]).
    pub(crate) fn set_seed(&mut self, entries: PackedLayer<'a>) {
        assert_eq!(entries.len(), self.size as u64, "the seed holds layer {}", self.n);
        self.seed = Some(entries);
    }

    /// The seed's proven interval of a position, if there is a seed.
    #[inline]
    pub(crate) fn seed_entry(&self, index: usize) -> Option<Entry> {
        Some(self.seed?.entry(index as u64))
    }

    /// `[lower, upper]` intersected with the seed's interval; a seed entry
    /// that does not meet it (or is no interval of this layer) is recorded
    /// as the layer's contradiction and leaves `[lower, upper]` as it is.
    pub(crate) fn meet_seed(&self, index: usize, lower: u8, upper: u8) -> (u8, u8) {
        let Some(seed) = self.seed_entry(index) else {
            return (lower, upper);
        };
        let (low, high) = (lower.max(seed.lower), upper.min(seed.upper));
        if low > high || seed.upper > self.n as u8 {
            self.record_contradiction(Contradiction {
                seeds: self.n,
                index: index as u64,
                ours: (lower, upper),
                theirs: (seed.lower, seed.upper),
            });
            return (lower, upper);
        }
        (low, high)
    }

    /// The layer indexes these arrays hold.
    pub(crate) fn window_range(&self) -> std::ops::Range<usize> {
        self.base..self.base + self.len
    }

    /// Whether layer index `index` is in this window.
    #[inline]
    pub(crate) fn holds(&self, index: usize) -> bool {
        index.wrapping_sub(self.base) < self.len
    }

    #[inline]
    pub(crate) fn is_decided(&self, index: usize) -> bool {
        self.state[index - self.base].load(Relaxed) & DECIDED != 0
    }

    /// The interval and estimate of the mover's option leading to `child`
    /// (reached by a capture into a lower layer, or a decided position of
    /// this layer): `n − V(child)`.
    #[inline]
    pub(crate) fn option_of(&self, child: &Position, captured: u8) -> (u8, u8, u8) {
        let n = self.n as u8;
        let (lower, upper, value) = if captured > 0 {
            let e = self.lower.entry(child);
            (e.lower, e.upper, e.value)
        } else {
            let i = layer_index(child) as usize - self.base;
            (self.lo[i].load(Relaxed), self.hi[i].load(Relaxed), self.estimate_at(i))
        };
        (n - upper, n - lower, n - value)
    }

    /// Records a decided child's option at an undecided parent; returns
    /// the quiet moves of the parent still pending.
    #[inline]
    pub(crate) fn tell_parent(&self, parent: usize, option: (u8, u8, u8)) -> u8 {
        let parent = parent - self.base;
        self.lo[parent].fetch_max(option.0, Relaxed);
        self.hi[parent].fetch_max(option.1, Relaxed);
        if self.estimates_held {
            self.est[parent].fetch_max(option.2, Relaxed);
        } else {
            assert_eq!(option.2, option.0, "an option's estimate apart from its lower bound, none held");
        }
        // Release/acquire: whoever takes the count to zero sees every option.
        // (A count is lowered once for each quiet move it counted, so it
        // never goes below zero, which would borrow from the flags.)
        let before = self.state[parent].fetch_sub(PENDING_ONE, AcqRel);
        assert!(before & PENDING != 0, "a pending count lowered below zero");
        ((before & PENDING) >> PENDING_SHIFT) - 1
    }

    /// Marks a position decided with its final values; false if another
    /// thread decided it first.
    pub(crate) fn decide(
        &self,
        index: usize,
        lower: u8,
        upper: u8,
        value: u8,
        proof: Proof,
        cycle: bool,
    ) -> bool {
        let (lower, upper, value, proof) = match self.seed_entry(index) {
            Some(seed) => {
                let (low, high) = self.meet_seed(index, lower, upper);
                // Exact by our own proof, else by the seed's; two open
                // intervals that meet in one value count as searched (at
                // least one of them narrowed by a search).
                let proof = match (lower == upper, seed.is_exact()) {
                    (true, _) => proof,
                    (false, true) => seed.proof,
                    (false, false) => Proof::Search,
                };
                // Our own estimate (clamped below): a seed that adds
                // nothing leaves the bytes of a build from scratch.
                (low, high, value, proof)
            }
            None => (lower, upper, value, proof),
        };
        let proof = if lower == upper { proof } else { Proof::Open };
        let flags = DECIDED | if cycle { ON_CYCLE } else { 0 } | proof as u8;
        let index = index - self.base;
        // The first writer sets the flags (none are set before); the
        // pending count beside them stays as it is.
        let undecided_to_decided = |b: u8| (b & FLAGS == 0).then_some(b | flags);
        let value = value.clamp(lower, upper);
        assert!(
            self.estimates_held || lower == upper,
            "a position decided inexact, its estimate not held (hold_estimates first)"
        );
        if self.state[index].fetch_update(Relaxed, Relaxed, undecided_to_decided).is_err() {
            return false;
        }
        self.lo[index].store(lower, Relaxed);
        self.hi[index].store(upper, Relaxed);
        if self.estimates_held {
            self.est[index].store(value, Relaxed);
        }
        true
    }

    /// The final entry of a decided position.
    pub(crate) fn entry(&self, index: usize) -> Entry {
        let index = index - self.base;
        let flags = self.state[index].load(Relaxed);
        Entry {
            value: self.estimate_at(index),
            lower: self.lo[index].load(Relaxed),
            upper: self.hi[index].load(Relaxed),
            on_cycle: flags & ON_CYCLE != 0,
            proof: Proof::from_bits(flags & PROOF_MASK),
        }
    }

    /// The least layer index these arrays leave undecided, if any, and
    /// whether every position has a value record (1 byte,
    /// [`Entry::value_record`]): then a file stores the layer in value
    /// records ([`Self::take_value_records`]), else in full records
    /// ([`Self::packed`]).
    pub(crate) fn check_records(&self) -> (Option<usize>, bool) {
        let found = parallel::map_indexes(self.len.div_ceil(PIECE), &|c| {
            let start = self.base + c * PIECE;
            let pieces = start..(start + PIECE).min(self.base + self.len);
            let undecided = pieces.clone().find(|&i| !self.is_decided(i));
            (undecided, pieces.into_iter().all(|i| self.entry(i).value_record().is_some()))
        });
        (found.iter().find_map(|&(undecided, _)| undecided), found.iter().all(|&(_, valued)| valued))
    }

    /// The value records of these positions, written over the upper
    /// bounds as they are made, the other arrays freed: the layer's end
    /// holds the entries and nothing more (before, 1 byte a position more
    /// for the records beside them). Each record is made from its own
    /// position's bytes alone, so writing it over one of them once read
    /// changes no other. Only once [`Self::check_records`] says every
    /// position has one; the entries are gone afterwards (a read panics).
    pub(crate) fn take_value_records(&mut self) -> Vec<u8> {
        assert!(self.parked_for_games.is_none(), "the entries are parked");
        parallel::for_each_chunk(self.len, PIECE, &|offsets| {
            for offset in offsets {
                let record = self.entry(self.base + offset).value_record();
                self.hi[offset].store(record.expect("checked: every entry has a value record"), Relaxed);
            }
        });
        let records = std::mem::take(&mut self.hi);
        [self.lo, self.est, self.state] = Default::default();
        parallel::plain(records)
    }

    /// The packed entries of the window, and the least layer index left
    /// undecided, if any. Every position is decided when a layer ends
    /// (docs/cycle-bounds.md §9); one that is not would pack as an exact,
    /// off-cycle entry made of the options seen so far, so callers refuse
    /// the layer rather than write it.
    pub(crate) fn packed(&self) -> (Vec<u8>, Option<usize>) {
        let mut bytes = vec![0u8; self.len * ENTRY_BYTES];
        let mut undecided = None;
        for (offset, chunk) in bytes.chunks_exact_mut(ENTRY_BYTES).enumerate() {
            let index = self.base + offset;
            if undecided.is_none() && !self.is_decided(index) {
                undecided = Some(index);
            }
            chunk.copy_from_slice(&self.entry(index).pack());
        }
        (bytes, undecided)
    }

    /// Keeps the contradiction of least index (so that the report does not
    /// depend on thread timing, nor on which rank found it).
    pub(crate) fn record_contradiction(&self, found: Contradiction) {
        let mut first = self.contradiction.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none_or(|c| c.index > found.index) {
            *first = Some(found);
        }
    }

    /// The first contradiction with the seed, if any.
    pub(crate) fn contradiction(&self) -> Option<Contradiction> {
        *self.contradiction.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_left_undecided_is_named_not_packed_silently() {
        let lower = SolvedLayers::new();
        let entries = LayerEntries::window(2, &lower, 0..layer_size(2) as usize);
        let size = layer_size(2) as usize;
        for index in (0..size).filter(|&i| i != 7) {
            assert!(entries.decide(index, 1, 2, 1, Proof::Open, true));
        }
        let (bytes, undecided) = entries.packed();
        assert_eq!((bytes.len(), undecided), (size * ENTRY_BYTES, Some(7)));
        assert_eq!(entries.check_records().0, Some(7));
        assert!(entries.decide(7, 2, 2, 2, Proof::Retrograde, false));
        assert_eq!(entries.packed().1, None);
        assert_eq!(entries.check_records(), (None, false));
    }

    /// The records a layer ends with are its full records converted as a
    /// file stores them: value records, made over the arrays, when every
    /// entry is exact (over several of the pieces the threads fill, with
    /// estimates held or not), full records as soon as one is not, and
    /// the least undecided index named either way.
    #[test]
    fn a_layers_records_are_its_entries_in_the_stored_width() {
        let lower = SolvedLayers::new();
        let n = 14;
        let size = layer_size(n) as usize;
        assert!(size > 3 * PIECE, "{size} positions");
        for held in [true, false] {
            let mut entries = LayerEntries::window(n, &lower, 0..size);
            if !held {
                entries.without_estimates();
            }
            assert_eq!(entries.estimates_held(), held);
            for index in 0..size {
                let value = (index % 10) as u8;
                let (proof, cycle) =
                    [(Proof::Retrograde, false), (Proof::Bounds, true), (Proof::Search, true)][index % 3];
                assert!(entries.decide(index, value, value, value, proof, cycle));
            }
            let (full, undecided) = entries.packed();
            assert_eq!(undecided, None);
            let values = PackedLayer::full(&full).value_records().expect("every entry exact");
            assert_eq!(entries.check_records(), (None, true));
            assert!(entries.take_value_records() == values);
            assert!(entries.lo.is_empty() && entries.hi.is_empty() && entries.state.is_empty());
        }
        // One inexact entry near the end: full records, the same bytes as
        // packing.
        let inexact = LayerEntries::window(n, &lower, 0..size);
        for index in 0..size {
            let upper = if index == size - 3 { 2 } else { 1 };
            assert!(inexact.decide(index, 1, upper, 1, Proof::Bounds, true));
        }
        assert_eq!(inexact.check_records(), (None, false));
        // An undecided one, named.
        let open = LayerEntries::window(n, &lower, 0..size);
        for index in (0..size).filter(|&i| i != size - 5) {
            assert!(open.decide(index, 3, 3, 3, Proof::Bounds, true));
        }
        assert_eq!(open.check_records().0, Some(size - 5));
    }
}
