//! A build that starts from a proven table (`BuildOptions::start_from`):
//! each layer the table covers is intersected with its intervals
//! (`docs/cycle-bounds.md` §6).

use crate::tablebase::directory::finished::{open_finished, table_at, TableAt};
use std::path::Path;

use crate::tablebase::directory::options::BuildError;
use crate::tablebase::layers::PackedLayer;
use crate::tablebase::owtb::{Provenance, Tablebase};

/// Layer `n` of the table the build starts from, if it covers it.
pub(super) fn seed_layer(
    start_from: &Option<StartFrom>,
    n: u32,
) -> Result<Option<PackedLayer<'_>>, BuildError> {
    match start_from {
        Some(source) if n < source.provenance.layers => source.layer(n).map(Some),
        _ => Ok(None),
    }
}

/// The proven table a build starts from.
pub(super) struct StartFrom {
    table: Tablebase,
    /// Which table, and the layers of it the build intersects.
    pub(super) provenance: Provenance,
}

impl StartFrom {
    /// Opens the table (header checked: format, rules, header checksum)
    /// for a build of layers `0..=largest_layer`.
    pub(super) fn open(path: &Path, largest_layer: u32) -> Result<StartFrom, BuildError> {
        let table = match table_at(path) {
            TableAt::File(file) => Tablebase::open(&file).map_err(BuildError::StartFrom)?,
            TableAt::Layers(dir) => open_finished(&dir)?,
        };
        let header = table.header();
        // The layers both tables have: a larger table's layers above the
        // build are not read, a smaller one's end where it ends; the
        // manifest and the header record which (`Provenance::layers`).
        let shared = header.max_seeds.min(largest_layer);
        let provenance = Provenance { body_checksum: header.body_checksum, layers: shared + 1 };
        Ok(StartFrom { table, provenance })
    }

    /// Layer `n`'s entries, after checking them (checksum and form).
    fn layer(&self, n: u32) -> Result<PackedLayer<'_>, BuildError> {
        self.table.checked_layer(n).map_err(BuildError::StartFrom)
    }
}
