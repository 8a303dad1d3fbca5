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

use std::path::Path;

use super::entry::{Entry, ENTRY_BYTES};
use super::verify::LayerSource;
use crate::formats::endgames::{save_table, EndgamesVersion};
use crate::formats::FormatError;

/// The engine's byte for one of our entries.
#[inline]
pub fn engine_byte(entry: &Entry) -> u8 {
    let trusted_anywhere = entry.is_exact() && !entry.on_cycle;
    (entry.value << 2) | if trusted_anywhere { 3 } else { 1 }
}

/// The engine's bytes for every index of `source`, in index order.
pub fn engine_bytes(source: &dyn LayerSource) -> Vec<u8> {
    let mut out = Vec::new();
    for n in 0..=source.max_seeds() {
        out.extend(
            source
                .layer(n)
                .chunks_exact(ENTRY_BYTES)
                .map(|c| engine_byte(&Entry::unpack([c[0], c[1], c[2]]))),
        );
    }
    out
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
) -> Result<(), FormatError> {
    if let Some(reason) = crate::resumable::names::refuse_output(path, &[read_from]) {
        return Err(FormatError::WouldOverwrite { path: path.to_path_buf(), reason });
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
) -> Result<(), FormatError> {
    let name = format!("Oware toolchain endgames, up to {} seeds", source.max_seeds());
    let mut fields: Vec<(&str, &str)> = Vec::new();
    if let Some(date) = date {
        fields.push(("Date", date));
    }
    fields.push(("Name", &name));
    fields.push(("Author", "oware toolchain (retrograde analysis with proven cycle bounds)"));
    fields.push(("License", "MIT"));
    save_table(path, version, &fields, &engine_bytes(source))
}
