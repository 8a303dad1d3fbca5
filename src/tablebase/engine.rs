//! Export to the engine's "Oware Endgames" layouts (`docs/engine-formats.md`):
//! one byte per tablebase index, `(captures << 2) | flag`.
//!
//! * EXACT (3) only for a proven value on no cycle: the engine trusts such
//!   an entry at any node, and only those values hold whatever the history.
//! * 1 for every other entry: positions on a cycle of game states (the
//!   engine uses them only right after a capture, which is exactly when our
//!   as-root value holds, proven or not) and positions whose value is not
//!   proven. `captures` is then our value: exact when proven, else our
//!   estimate inside the proven bounds.
//!
//! The `Date` header field is left out unless given, so the same tablebase
//! always exports to the same bytes.
//!
//! The engine's index covers positions of at most
//! [`ENGINE_MAX_SEEDS`] = 15 seeds (its hash is a rank among those), so a
//! bigger table exports its layers 0 to 15: the file the engine reads
//! whole. Every layer exported from a file is checked against its
//! checksum first.
//!
//! # Reading the engine's files as a table
//! An [`EndgameFile`] answers [`EndgameTable::probe`] by this mapping of
//! its bytes:
//!
//! | flag | lower | upper | estimate | on_cycle |
//! |---|---|---|---|---|
//! | 3 EXACT | c | c | c | false (true with n ≤ 2 seeds) |
//! | 1 LOWER (engine: on a cycle, value an estimate) | 0 | n | c | true |
//! | 2 UPPER | 0 | n | c | true |
//! | 0 EMPTY | 0 | n | n / 2 | true |
//!
//! with `c` the captures and `n` the seeds on the board. Nothing in these
//! files is a proof ([`EndgameTable::proves`] is false: the cycle values
//! are estimates and the EXACT values above rest on them), and the search
//! uses EXACT entries as estimates only. The engine itself uses a non-EXACT
//! entry only right after a capture, as an estimate, whatever its flag, so
//! flags 1 and 2 map alike. An EMPTY entry carries no value, so its
//! estimate is the neutral half of the board. An entry claiming more
//! captures than `n` is corrupt: [`EndgameFile::verify`] reports the first
//! one with its index (opt-in, one pass over the body), and a probe of
//! such an entry returns `None` rather than a value outside `0..=n`.

use std::path::Path;

use std::fmt;

use crate::formats::endgames::{self, save_table, EndgameFile, EndgamesVersion, Flag};
use crate::formats::FormatError;
use crate::rules::Position;
use crate::tablebase::entry::Entry;
use crate::tablebase::owtb::FileError;
use crate::tablebase::params::ENGINE_MAX_SEEDS;
use crate::tablebase::table::EndgameTable;
use crate::tablebase::table::Probe;
use crate::tablebase::verify::LayerSource;

/// Why an export failed.
#[derive(Debug)]
pub enum ExportError {
    /// A layer of the table read failed its checksum: nothing was written.
    Source(FileError),
    /// The engine file could not be written (or would overwrite a file it
    /// must not).
    Format(FormatError),
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Source(e) => write!(f, "{e}; nothing was written"),
            ExportError::Format(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ExportError {}

/// The layers an engine file of `source` holds: `0..=` this.
pub fn engine_layers(source: &dyn LayerSource) -> u32 {
    source.max_seeds().min(ENGINE_MAX_SEEDS)
}

/// The engine's byte for one of our entries.
#[inline]
pub fn engine_byte(entry: &Entry) -> u8 {
    let trusted_anywhere = entry.is_exact() && !entry.on_cycle;
    (entry.value << 2) | if trusted_anywhere { 3 } else { 1 }
}

/// The engine's bytes for every index of `source` the engine covers
/// ([`engine_layers`]), in index order, from checked layers.
pub fn engine_bytes(source: &dyn LayerSource) -> Result<Vec<u8>, FileError> {
    let mut out = Vec::new();
    for n in 0..=engine_layers(source) {
        out.extend(source.checked_layer(n)?.entries().map(|e| engine_byte(&e)));
    }
    Ok(out)
}

/// Writes `source` as an engine tablebase file, atomically. `read_from` is
/// the file `source` was read from: the export refuses to write over it, or
/// over any file a build or book directory owns.
pub fn export_engine(
    source: &dyn LayerSource,
    read_from: &Path,
    version: EndgamesVersion,
    date: Option<&str>,
    path: &Path,
) -> Result<(), ExportError> {
    if let Some(reason) = crate::resumable::names::refuse_output(path, &[read_from]) {
        return Err(ExportError::Format(FormatError::WouldOverwrite { path: path.to_path_buf(), reason }));
    }
    write_engine_file(source, version, date, path)
}

/// Writes the engine file unchecked: for a build, writing its own
/// directory's copy.
pub(crate) fn write_engine_file(
    source: &dyn LayerSource,
    version: EndgamesVersion,
    date: Option<&str>,
    path: &Path,
) -> Result<(), ExportError> {
    let bytes = engine_bytes(source).map_err(ExportError::Source)?;
    let name = format!("Oware toolchain endgames, up to {} seeds", engine_layers(source));
    let mut fields: Vec<(&str, &str)> = Vec::new();
    if let Some(date) = date {
        fields.push(("Date", date));
    }
    fields.push(("Name", &name));
    fields.push(("Author", "oware toolchain (retrograde analysis with proven cycle bounds)"));
    fields.push(("License", "MIT"));
    save_table(path, version, &fields, &bytes).map_err(ExportError::Format)
}

/// What an engine byte says of a position with `seeds` seeds on the board
/// (the mapping in the module documentation); `None` when it claims more
/// captures than `seeds`, or `seeds` exceeds 48.
pub fn engine_probe(entry: endgames::Entry, seeds: u32) -> Option<Probe> {
    let captures = entry.captures();
    if seeds > crate::rank::MAX_SEEDS || captures as u32 > seeds {
        return None;
    }
    let n = seeds as u8;
    Some(match entry.flag() {
        // With at most 2 seeds the files call every entry EXACT, even the
        // positions that shuttle round the board on a cycle.
        Flag::Exact => Probe { lower: captures, upper: captures, estimate: captures, on_cycle: n <= 2 },
        Flag::Lower | Flag::Upper => Probe { lower: 0, upper: n, estimate: captures, on_cycle: true },
        Flag::Empty => Probe { lower: 0, upper: n, estimate: n / 2, on_cycle: true },
    })
}

impl EndgameTable for EndgameFile {
    fn max_seeds(&self) -> u32 {
        EndgameFile::max_seeds(self)
    }

    /// `None` above `max_seeds` seeds, and for a corrupt entry (captures
    /// above the seeds on the board).
    fn probe(&self, position: &Position) -> Option<Probe> {
        let (seeds, entry) = self.seeds_and_entry(position)?;
        engine_probe(entry, seeds)
    }

    /// The engine's values on cycles are estimates, and the EXACT values
    /// above them rest on those (its two files disagree on 97,660 of
    /// them): nothing here is a proof.
    fn proves(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::layer_size;
    use crate::tablebase::entry::ENTRY_BYTES;
    use crate::tablebase::layers::PackedLayer;

    /// A table of 17 seeds whose layers above 15 must not be read.
    struct Seventeen {
        zeros: Vec<u8>,
    }

    impl LayerSource for Seventeen {
        fn max_seeds(&self) -> u32 {
            17
        }
        fn layer(&self, n: u32) -> PackedLayer<'_> {
            assert!(n <= ENGINE_MAX_SEEDS, "layer {n} read for the engine");
            PackedLayer::full(&self.zeros[..ENTRY_BYTES * layer_size(n) as usize])
        }
    }

    #[test]
    fn a_bigger_table_exports_the_layers_the_engine_indexes() {
        let source = Seventeen { zeros: vec![0; ENTRY_BYTES * layer_size(ENGINE_MAX_SEEDS) as usize] };
        assert_eq!(engine_layers(&source), 15);
        let bytes = engine_bytes(&source).unwrap();
        // OwareLeaves.OFFSETS[15]: the positions of at most 15 seeds.
        assert_eq!(bytes.len(), 17_383_860);
        assert!(bytes.iter().all(|&b| b == 3), "an exact 0 everywhere");
    }

    #[test]
    fn engine_bytes_map_to_probes() {
        use crate::formats::endgames::Entry as Byte;
        let exact = Byte::new(5, Flag::Exact).unwrap();
        assert_eq!(exact.byte(), 0x17);
        assert_eq!(engine_probe(exact, 9), Some(Probe { lower: 5, upper: 5, estimate: 5, on_cycle: false }));
        let cycle = Byte::from_byte(5 << 2 | 1);
        assert_eq!(cycle.flag(), Flag::Lower);
        assert_eq!(engine_probe(cycle, 9), Some(Probe { lower: 0, upper: 9, estimate: 5, on_cycle: true }));
        assert_eq!(engine_probe(Byte::from_byte(5 << 2 | 2), 9), engine_probe(cycle, 9));
        assert_eq!(engine_probe(Byte::from_byte(5 << 2), 9).unwrap().estimate, 4);
        assert_eq!(engine_probe(exact, 4), None);
        assert_eq!(engine_probe(exact, 49), None);
        assert_eq!(Byte::new(64, Flag::Exact), None);
    }

    #[test]
    fn engine_files_read_as_tables() {
        // Two seeds: EXACT in the engine's file, but such a position may
        // shuttle on a cycle, so its value is used only where reached by a
        // capture; three seeds lie beyond a table of two.
        // (Captures 1 wherever a seed is on the board: layer 0 holds none.)
        let bytes: Vec<u8> = (0..crate::rank::layer_offset(3)).map(|i| ((i > 0) as u8) << 2 | 3).collect();
        let mut file = Vec::new();
        endgames::write_table(&mut file, EndgamesVersion::V2_0, &[], &bytes).unwrap();
        let file = EndgameFile::from_bytes(file).unwrap();
        let mut pits = [0u8; 12];
        pits[3] = 1;
        pits[9] = 1;
        let probe = EndgameTable::probe(&file, &Position::new(pits)).unwrap();
        assert_eq!((probe.lower, probe.upper, probe.on_cycle), (1, 1, true));
        assert!(!file.proves());
        assert_eq!(EndgameTable::max_seeds(&file), 2);
        pits[0] = 1;
        assert_eq!(EndgameTable::probe(&file, &Position::new(pits)), None);
        // An entry claiming more captures than seeds is no probe.
        pits = [0u8; 12];
        pits[0] = 1;
        let index = crate::rank::index(&Position::new(pits)) as usize;
        let mut file = Vec::new();
        endgames::write_table(&mut file, EndgamesVersion::V2_0, &[], &bytes).unwrap();
        // (The writer refuses such an entry: the byte is changed in place.)
        let header = file.len() - bytes.len() - 1;
        file[header + index] = 2 << 2 | 3;
        let file = EndgameFile::from_bytes(file).unwrap();
        assert_eq!(EndgameTable::probe(&file, &Position::new(pits)), None);
    }
}
