//! Export to the engine's "Oware Endgames" layouts (formats.md, section 2):
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

use std::path::Path;

use std::fmt;

use super::entry::{Entry, ENTRY_BYTES};
use super::verify::LayerSource;
use super::FileError;
use crate::formats::endgames::{save_table, EndgamesVersion};
use crate::formats::FormatError;

/// The most seeds the engine's endgame index covers (`OwareLeaves.MAX_SEEDS`
/// in its source: its hash ranks positions of up to 15 seeds).
pub const ENGINE_MAX_SEEDS: u32 = 15;

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
        out.extend(
            source
                .checked_layer(n)?
                .chunks_exact(ENTRY_BYTES)
                .map(|c| engine_byte(&Entry::unpack([c[0], c[1], c[2]]))),
        );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::layer_size;

    /// A table of 17 seeds whose layers above 15 must not be read.
    struct Seventeen {
        zeros: Vec<u8>,
    }

    impl LayerSource for Seventeen {
        fn max_seeds(&self) -> u32 {
            17
        }
        fn layer(&self, n: u32) -> &[u8] {
            assert!(n <= ENGINE_MAX_SEEDS, "layer {n} read for the engine");
            &self.zeros[..ENTRY_BYTES * layer_size(n) as usize]
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
}
