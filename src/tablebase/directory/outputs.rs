//! A finished build's products: `tablebase.owtb`, its compressed copy,
//! the engine's file and `stats.json`.

use std::io;

use crate::formats::endgames::EndgamesVersion;
use crate::progress::Observer;
use crate::resumable::atomic::write_atomically;
use crate::tablebase::directory::names::{COMPRESSED_FILE, ENGINE_FILE, STATS_FILE, TABLEBASE_FILE};
use crate::tablebase::directory::options::{io_at, BuildError, BuildOptions, BuildReport};
use crate::tablebase::layers::SolvedLayers;
use crate::tablebase::owtb::{
    read_header, write_compressed, write_tablebase, Header, Provenance, Tablebase, VERSION,
};
use crate::tablebase::params::{BuildParams, ENGINE_MAX_SEEDS};
use crate::tablebase::stats::LayerStats;

/// The finished products: our file, its compressed copy, the statistics.
pub(super) fn write_outputs(
    options: &BuildOptions,
    provenance: Option<Provenance>,
    solved: &SolvedLayers,
    report: &BuildReport,
    observer: &dyn Observer,
) -> Result<(), BuildError> {
    let dir = &options.dir;
    let table = dir.join(TABLEBASE_FILE);
    let compressed = dir.join(COMPRESSED_FILE);
    // A finished build run again keeps the table and its compressed copy
    // when they already hold these layers with these parameters (the copy
    // of a large table takes minutes to compress again).
    // The layers' checksums are read only once a header matches in every
    // other field: a fresh build (no table yet) does not read its layers
    // again for them.
    let layer_sums = std::cell::OnceCell::new();
    let holds_these_layers = |header: &Header| {
        header.version == VERSION
            && header.max_seeds == options.params.largest_layer()
            && header.budget == options.params.budget()
            && header.provenance == provenance
            && header.layers.iter().map(|l| l.checksum).eq(layer_sums
                .get_or_init(|| {
                    (0..solved.len()).map(|n| solved.layer(n).canonical_checksum()).collect::<Vec<u64>>()
                })
                .iter()
                .copied())
    };
    let table_current =
        Tablebase::open(&table).is_ok_and(|t| holds_these_layers(t.header()) && t.verify_checksums().is_ok());
    if table_current {
        observer.line(&format!("{} already holds these layers: kept", table.display()));
    } else {
        write_tablebase(&table, &options.params, provenance, |n| solved.layer(n)).map_err(io_at(&table))?;
        observer.line(&format!("wrote {}", table.display()));
    }
    let body = read_header(&table)
        .map_err(|e| BuildError::Io { path: table.clone(), error: io::Error::other(e.to_string()) })?
        .body_checksum;
    let copy_current = table_current
        && read_header(&compressed).is_ok_and(|h| holds_these_layers(&h) && h.body_checksum == body);
    if options.compress && copy_current {
        observer.line(&format!("{} already holds these layers: kept", compressed.display()));
    } else if options.compress {
        // Minutes for the largest tables: said in the log, not only on a bar.
        observer.line(&format!("compressing {} into {}", table.display(), compressed.display()));
        let clock = std::time::Instant::now();
        write_compressed(&table, &compressed, observer).map_err(io_at(&compressed))?;
        let bytes = std::fs::metadata(&compressed).map(|m| m.len()).unwrap_or(0);
        observer.line(&format!(
            "wrote {} ({} bytes) in {:.1} s",
            compressed.display(),
            crate::text::thousands(bytes),
            clock.elapsed().as_secs_f64()
        ));
    }
    let engine = dir.join(ENGINE_FILE);
    crate::tablebase::engine::write_engine_file(solved, EndgamesVersion::V2_0, None, &engine)
        .map_err(|e| BuildError::Io { path: engine.clone(), error: io::Error::other(e.to_string()) })?;
    let exported = crate::tablebase::engine::engine_layers(solved);
    if exported < options.params.largest_layer() {
        observer.line(&format!(
            "wrote {} with layers 0 to {exported}: the engine's index covers at most {ENGINE_MAX_SEEDS} seeds",
            engine.display()
        ));
    }
    let stats = dir.join(STATS_FILE);
    let json = stats_json(&options.params, &report.layers);
    write_atomically(&stats, |w| io::Write::write_all(w, json.as_bytes())).map_err(io_at(&stats))?;
    Ok(())
}

/// The statistics of every layer as one JSON document, after every build
/// parameter under its name in the manifest ([`crate::tablebase::params::Param::name`]: a budget's
/// names differ from the per-layer figures', such as the nodes a layer's
/// searches spent, `search_nodes`).
pub fn stats_json(params: &BuildParams, layers: &[LayerStats]) -> String {
    let mut json = String::from("{\n");
    for (param, value) in params.fields() {
        json += &format!("  \"{param}\": {value},\n");
    }
    let rows: Vec<String> = layers.iter().map(|l| format!("    {}", l.to_json())).collect();
    let positions: u64 = layers.iter().map(|l| l.positions).sum();
    let exact: u64 = layers.iter().map(|l| l.exact).sum();
    let seconds: f64 = layers.iter().map(|l| l.seconds.total).sum();
    json += &format!(
        "  \"positions\": {positions},\n  \"exact\": {exact},\n  \"seconds\": {seconds:.3},\n  \"layers\": [\n{}\n  ]\n}}\n",
        rows.join(",\n")
    );
    json
}
