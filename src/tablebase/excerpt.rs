//! Excerpts of a table: a random sample of one layer's positions, each with
//! its entry and, for every legal move, the child's position and entry. A
//! reader with its own rules checks every sampled entry against its
//! children one ply deep, as [`crate::tablebase::verify::verify`] checks a
//! whole table, without holding the table: the excerpt of a layer of
//! billions of positions is a text file of a few hundred kilobytes.
//!
//! The text is this module's one writer ([`Excerpt::render`]) and reader
//! ([`Excerpt::parse`]); `docs/tablebase-format.md` ("Excerpts") documents
//! it line by line. What a check can prove of a position on a cycle is
//! weaker than of one on no cycle (`docs/rules.md`: below the root, a
//! child on a cycle is worth what its history allows); the check says how
//! many of each it saw.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::checksum::checksum;
use crate::rank::{layer_index, layer_size, position_in_layer};
use crate::rules::{Pit, Position, PITS};
use crate::tablebase::entry::{Entry, EntryWidth, Proof};
use crate::tablebase::owtb::{FileError, Tablebase};
use crate::tablebase::verify::{check_one_ply, VerifyReport, EXAMPLES};

/// The first line of every excerpt (format version 1).
pub const SIGNATURE: &str = "oware-excerpt 1";

/// A sample of one layer of a table, with every sampled position's
/// children.
#[derive(Clone, Debug, PartialEq)]
pub struct Excerpt {
    /// The body checksum of the table it was taken from (its header's).
    pub table_checksum: u64,
    /// That table's largest layer.
    pub largest_layer: u32,
    /// The layer sampled.
    pub layer: u32,
    /// The seed of the sample: the same table, layer, count and seed give
    /// the same excerpt, byte for byte.
    pub seed: u64,
    /// The sampled positions, by increasing index in their layer.
    pub samples: Vec<Sample>,
}

/// One sampled position.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Its index in its layer (the engine's binomial rank).
    pub index: u64,
    /// The position, seen from the side to move.
    pub position: Position,
    /// Its entry in the table.
    pub entry: Entry,
    /// One per legal move, by increasing pit.
    pub children: Vec<Child>,
}

/// A legal move of a sampled position and where it leads.
#[derive(Clone, Debug, PartialEq)]
pub struct Child {
    /// The pit sown, 0 to 5 from the mover's left.
    pub pit: Pit,
    /// Seeds it captures (0 for a quiet move and for a grand slam).
    pub captured: u8,
    /// The board after the move, seen from the opponent (now to move).
    pub position: Position,
    /// The child's entry in the table.
    pub entry: Entry,
}

/// Why an excerpt could not be taken or read.
#[derive(Debug)]
pub enum ExcerptError {
    /// The layer asked for is not in the table.
    LayerOutside {
        /// The layer asked for.
        layer: u32,
        /// The table's largest layer.
        largest: u32,
    },
    /// More positions asked for than the layer holds (or none).
    Count {
        /// Positions asked for.
        asked: u64,
        /// Positions in the layer.
        positions: u64,
    },
    /// The table could not be read (a damaged layer, with its checksum).
    Table(FileError),
    /// The excerpt would replace what it must not (its table, a file of a
    /// build or book directory, a directory): nothing was sampled.
    WouldOverwrite {
        /// The output asked for.
        path: std::path::PathBuf,
        /// Why it is refused.
        reason: String,
    },
    /// The excerpt could not be written.
    Write {
        /// The output.
        path: std::path::PathBuf,
        /// What failed.
        error: std::io::Error,
    },
    /// The text is not an excerpt this reader writes.
    Corrupt {
        /// The line, from 1 (0: the whole text).
        line: usize,
        /// What is wrong with it.
        problem: String,
    },
}

impl std::fmt::Display for ExcerptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExcerptError::LayerOutside { layer, largest } => {
                write!(f, "layer {layer} is not in the table (its layers are 0 to {largest})")
            }
            ExcerptError::Count { asked, positions } => {
                write!(f, "cannot sample {asked} positions of a layer of {positions}: from 1 to {positions}")
            }
            ExcerptError::Table(error) => write!(f, "{error}"),
            ExcerptError::WouldOverwrite { path, reason } => {
                write!(f, "will not write '{}': {reason}", path.display())
            }
            ExcerptError::Write { path, error } => write!(f, "{}: {error}", path.display()),
            ExcerptError::Corrupt { line: 0, problem } => write!(f, "not a valid excerpt: {problem}"),
            ExcerptError::Corrupt { line, problem } => write!(f, "excerpt line {line}: {problem}"),
        }
    }
}

impl std::error::Error for ExcerptError {}

impl From<FileError> for ExcerptError {
    fn from(error: FileError) -> ExcerptError {
        ExcerptError::Table(error)
    }
}

/// SplitMix64: the sample's indexes, the same on every machine.
fn split_mix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `count` distinct indexes below `size`, drawn from `seed`, sorted.
fn sample_indexes(size: u64, count: u64, seed: u64) -> BTreeSet<u64> {
    let mut state = seed;
    let mut chosen = BTreeSet::new();
    // Drawing past half the layer would repeat itself more and more:
    // choose the positions left out instead.
    let leave_out = count > size / 2;
    let wanted = if leave_out { size - count } else { count };
    while (chosen.len() as u64) < wanted {
        // (The modulo's bias is below 2^-30 for any layer of the game.)
        chosen.insert(split_mix(&mut state) % size);
    }
    if leave_out {
        (0..size).filter(|i| !chosen.contains(i)).collect()
    } else {
        chosen
    }
}

/// The entry of `position`, from a table holding its layer.
fn entry_of(table: &Tablebase, position: &Position) -> Result<Entry, ExcerptError> {
    table
        .entry(position)?
        .ok_or(ExcerptError::LayerOutside { layer: position.seeds(), largest: table.header().max_seeds })
}

impl Excerpt {
    /// Samples `count` positions of layer `layer` of `table` (drawn from
    /// `seed`), with their children. Every layer it reads is checked
    /// against its checksum first.
    pub fn take(table: &Tablebase, layer: u32, count: u64, seed: u64) -> Result<Excerpt, ExcerptError> {
        let largest = table.header().max_seeds;
        if layer > largest {
            return Err(ExcerptError::LayerOutside { layer, largest });
        }
        let size = layer_size(layer);
        if count == 0 || count > size {
            return Err(ExcerptError::Count { asked: count, positions: size });
        }
        let mut samples = Vec::with_capacity(count as usize);
        for index in sample_indexes(size, count, seed) {
            let position = position_in_layer(layer, index).expect("an index below the layer's size");
            let mut children = Vec::new();
            for pit in position.legal_moves() {
                let played = position.play(pit);
                let entry = entry_of(table, &played.child)?;
                children.push(Child { pit, captured: played.captured, position: played.child, entry });
            }
            samples.push(Sample { index, position, entry: entry_of(table, &position)?, children });
        }
        Ok(Excerpt {
            table_checksum: table.header().body_checksum,
            largest_layer: largest,
            layer,
            seed,
            samples,
        })
    }

    /// [`Excerpt::take`], written to `out` atomically (refused before any
    /// sampling if `out` is the table or something an output never
    /// replaces).
    pub fn write(
        table: &Tablebase,
        layer: u32,
        count: u64,
        seed: u64,
        out: &std::path::Path,
    ) -> Result<Excerpt, ExcerptError> {
        if let Some(reason) = crate::resumable::names::refuse_output(out, &[table.path()]) {
            return Err(ExcerptError::WouldOverwrite { path: out.to_path_buf(), reason });
        }
        let excerpt = Excerpt::take(table, layer, count, seed)?;
        crate::resumable::atomic::write_bytes_atomically(out, excerpt.render().as_bytes())
            .map_err(|error| ExcerptError::Write { path: out.to_path_buf(), error })?;
        Ok(excerpt)
    }

    /// The excerpt's text: a header line, a line per sampled position
    /// followed by a line per move, and a last line holding the checksum
    /// of everything before it.
    pub fn render(&self) -> String {
        let mut text = format!(
            "{SIGNATURE}\ntable {:016x} largest-layer {} layer {} positions {} seed {} samples {}\n",
            self.table_checksum,
            self.largest_layer,
            self.layer,
            layer_size(self.layer),
            self.seed,
            self.samples.len()
        );
        for sample in &self.samples {
            let _ = writeln!(
                text,
                "position {} {} {}",
                sample.index,
                pits_text(&sample.position),
                entry_text(&sample.entry)
            );
            for child in &sample.children {
                let _ = writeln!(
                    text,
                    "move {} {} {} {}",
                    child.pit,
                    child.captured,
                    pits_text(&child.position),
                    entry_text(&child.entry)
                );
            }
        }
        let sum = checksum(text.as_bytes());
        let _ = writeln!(text, "checksum {sum:016x}");
        text
    }

    /// Reads what [`Excerpt::render`] writes, refusing anything else (a
    /// wrong checksum, a number out of range, a position of another layer,
    /// a child whose seeds do not add up), with the line.
    pub fn parse(text: &str) -> Result<Excerpt, ExcerptError> {
        let corrupt =
            |line: usize, problem: &str| ExcerptError::Corrupt { line, problem: problem.to_string() };
        let body_end = text
            .trim_end_matches('\n')
            .rfind('\n')
            .map(|i| i + 1)
            .ok_or_else(|| corrupt(0, "too short (no checksum line)"))?;
        let (body, last) = text.split_at(body_end);
        let lines: Vec<&str> = body.lines().collect();
        if lines.first() != Some(&SIGNATURE) {
            return Err(corrupt(1, &format!("expected '{SIGNATURE}'")));
        }
        let last_line = lines.len() + 1;
        let written = last
            .trim_end_matches('\n')
            .strip_prefix("checksum ")
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .ok_or_else(|| corrupt(last_line, "expected 'checksum <16 hex digits>'"))?;
        if checksum(body.as_bytes()) != written {
            return Err(corrupt(
                last_line,
                "the checksum does not match the text above it (the file was changed or cut short)",
            ));
        }
        let header: Vec<&str> = lines.get(1).copied().unwrap_or("").split(' ').collect();
        let (table_checksum, largest_layer, layer, positions, seed, count) = match header[..] {
            ["table", sum, "largest-layer", largest, "layer", layer, "positions", positions, "seed", seed, "samples", count] => {
                match (
                    u64::from_str_radix(sum, 16),
                    largest.parse::<u32>(),
                    layer.parse::<u32>(),
                    positions.parse::<u64>(),
                    seed.parse::<u64>(),
                    count.parse::<usize>(),
                ) {
                    (Ok(a), Ok(b), Ok(c), Ok(d), Ok(e), Ok(f)) => (a, b, c, d, e, f),
                    _ => return Err(corrupt(2, "a number of the header is not one")),
                }
            }
            _ => {
                return Err(corrupt(
                    2,
                    "expected 'table … largest-layer … layer … positions … seed … samples …'",
                ))
            }
        };
        if layer > largest_layer || largest_layer > 48 {
            return Err(corrupt(2, "the layer is not one of the table's"));
        }
        if positions != layer_size(layer) {
            return Err(corrupt(2, &format!("layer {layer} has {} positions", layer_size(layer))));
        }
        let mut samples: Vec<Sample> = Vec::new();
        for (i, line) in lines.iter().enumerate().skip(2) {
            let number = i + 1;
            let words: Vec<&str> = line.split(' ').collect();
            match words.first() {
                Some(&"position") => {
                    let [_, index, pits, entry @ ..] = &words[..] else {
                        return Err(corrupt(number, "expected 'position <index> <pits> <entry>'"));
                    };
                    let position = parse_pits(pits).ok_or_else(|| corrupt(number, "bad pits"))?;
                    let entry = parse_entry(entry).ok_or_else(|| corrupt(number, "bad entry"))?;
                    if position.seeds() != layer {
                        return Err(corrupt(
                            number,
                            &format!("a position of {} seeds, not {layer}", position.seeds()),
                        ));
                    }
                    let index: u64 = index.parse().map_err(|_| corrupt(number, "bad index"))?;
                    if index != layer_index(&position) {
                        return Err(corrupt(number, "the index is not the position's"));
                    }
                    if samples.last().is_some_and(|s| s.index >= index) {
                        return Err(corrupt(number, "positions out of order"));
                    }
                    samples.push(Sample { index, position, entry, children: Vec::new() });
                }
                Some(&"move") => {
                    let [_, pit, captured, pits, entry @ ..] = &words[..] else {
                        return Err(corrupt(number, "expected 'move <pit> <captured> <pits> <entry>'"));
                    };
                    let sample =
                        samples.last_mut().ok_or_else(|| corrupt(number, "a move before any position"))?;
                    let pit: Pit =
                        pit.parse().ok().filter(|&p| p < 6).ok_or_else(|| corrupt(number, "bad pit"))?;
                    if sample.children.last().is_some_and(|c| c.pit >= pit) {
                        return Err(corrupt(number, "moves out of order"));
                    }
                    let captured: u8 = captured
                        .parse()
                        .ok()
                        .filter(|&c| c as u32 <= layer)
                        .ok_or_else(|| corrupt(number, "bad capture count"))?;
                    let position = parse_pits(pits).ok_or_else(|| corrupt(number, "bad pits"))?;
                    if position.seeds() + captured as u32 != layer {
                        return Err(corrupt(
                            number,
                            "the child's seeds and the capture do not add up to the layer",
                        ));
                    }
                    let entry = parse_entry(entry).ok_or_else(|| corrupt(number, "bad entry"))?;
                    sample.children.push(Child { pit, captured, position, entry });
                }
                _ => return Err(corrupt(number, "expected a 'position' or a 'move' line")),
            }
        }
        if samples.len() != count {
            return Err(corrupt(2, &format!("says {count} samples, the text holds {}", samples.len())));
        }
        Ok(Excerpt { table_checksum, largest_layer, layer, seed, samples })
    }

    /// Checks every sampled entry against the rules and its children: the
    /// moves listed are the position's legal moves with the captures and
    /// children the rules give, every entry is well formed, and the entry
    /// passes the one-ply check of `verify` (on no cycle: bounds equal to
    /// the best of the options'; on a cycle: an upper bound that reaches
    /// every exit that cannot repeat). Failures are counted and the first
    /// few described, as `verify` does.
    pub fn check(&self) -> VerifyReport {
        let mut report = VerifyReport::default();
        for sample in &self.samples {
            let n = self.layer;
            let position = &sample.position;
            let fail = |report: &mut VerifyReport, what: String| {
                report.failures += 1;
                if report.examples.len() < EXAMPLES {
                    report.examples.push(format!("{position:?} ({n} seeds): {what}"));
                }
            };
            let rules: Vec<(Pit, u8, Position)> = position
                .legal_moves()
                .into_iter()
                .map(|pit| {
                    let played = position.play(pit);
                    (pit, played.captured, played.child)
                })
                .collect();
            let listed: Vec<(Pit, u8, Position)> =
                sample.children.iter().map(|c| (c.pit, c.captured, c.position)).collect();
            if rules != listed {
                report.positions += 1;
                fail(
                    &mut report,
                    format!("the moves listed are not the rules' ({listed:?}, the rules give {rules:?})"),
                );
                continue;
            }
            let malformed =
                sample.children.iter().find(|c| !Entry::is_well_formed(c.entry.pack(), c.position.seeds()));
            if let Some(child) = malformed {
                report.positions += 1;
                fail(
                    &mut report,
                    format!("the child of pit {} has a malformed entry {:?}", child.pit, child.entry),
                );
                continue;
            }
            let child_entry =
                |child: &Position| sample.children.iter().find(|c| c.position == *child).map(|c| c.entry);
            check_one_ply(n, position, (&sample.entry.pack(), EntryWidth::Full), child_entry, &mut report);
        }
        report
    }
}

fn pits_text(position: &Position) -> String {
    position.pits().iter().map(|p| p.to_string()).collect::<Vec<_>>().join("-")
}

fn parse_pits(text: &str) -> Option<Position> {
    let mut pits = [0u8; PITS];
    let mut words = text.split('-');
    for pit in pits.iter_mut() {
        *pit = words.next()?.parse().ok().filter(|&s: &u8| s <= 48)?;
    }
    let position = Position::new(pits);
    (words.next().is_none() && position.seeds() <= 48).then_some(position)
}

const PROOF_NAMES: [(Proof, &str); 4] = [
    (Proof::Retrograde, "retrograde"),
    (Proof::Bounds, "bounds"),
    (Proof::Search, "search"),
    (Proof::Open, "open"),
];

/// `lower value upper proof cycle|no-cycle`.
fn entry_text(entry: &Entry) -> String {
    let proof = PROOF_NAMES.iter().find(|(p, _)| *p == entry.proof).map_or("open", |(_, name)| name);
    let cycle = if entry.on_cycle { "cycle" } else { "no-cycle" };
    format!("{} {} {} {proof} {cycle}", entry.lower, entry.value, entry.upper)
}

fn parse_entry(words: &[&str]) -> Option<Entry> {
    let [lower, value, upper, proof, cycle] = words else {
        return None;
    };
    let number = |w: &str| w.parse::<u8>().ok().filter(|&v| v <= 48);
    let proof = PROOF_NAMES.iter().find(|(_, name)| name == proof)?.0;
    let on_cycle = match *cycle {
        "cycle" => true,
        "no-cycle" => false,
        _ => return None,
    };
    Some(Entry { value: number(value)?, lower: number(lower)?, upper: number(upper)?, on_cycle, proof })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_distinct_sorted_and_fixed_by_the_seed() {
        for (size, count) in [(10, 1), (10, 4), (10, 7), (10, 10), (1_000_003, 500)] {
            let a = sample_indexes(size, count, 9);
            assert_eq!(a.len() as u64, count);
            assert!(a.iter().all(|&i| i < size));
            assert_eq!(a, sample_indexes(size, count, 9));
        }
        assert_ne!(sample_indexes(1_000_003, 500, 1), sample_indexes(1_000_003, 500, 2));
    }

    #[test]
    fn entries_and_pits_read_back() {
        for proof in [Proof::Retrograde, Proof::Bounds, Proof::Search, Proof::Open] {
            for on_cycle in [false, true] {
                let entry = Entry { value: 17, lower: 3, upper: 48, on_cycle, proof };
                let text = entry_text(&entry);
                assert_eq!(parse_entry(&text.split(' ').collect::<Vec<_>>()), Some(entry), "{text}");
            }
        }
        assert_eq!(parse_entry(&["1", "2", "49", "open", "cycle"]), None);
        assert_eq!(parse_entry(&["1", "2", "3", "open", "maybe"]), None);
        let position = Position::new([0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 2]);
        assert_eq!(parse_pits(&pits_text(&position)), Some(position));
        for bad in [
            "0-1",
            "0-0-0-0-0-0-0-0-0-0-0-0-0",
            "49-0-0-0-0-0-0-0-0-0-0-0",
            "9-9-9-9-9-9-0-0-0-0-0-0",
            "a-0-0-0-0-0-0-0-0-0-0-0",
        ] {
            assert_eq!(parse_pits(bad), None, "{bad}");
        }
    }
}
