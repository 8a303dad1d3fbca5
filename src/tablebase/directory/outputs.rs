//! A finished build's products: `tablebase.owtb`, its compressed copy
//! (each when asked), the engine's file and `stats.json`.

use std::io;

use crate::formats::endgames::EndgamesVersion;
use crate::progress::Observer;
use crate::resumable::atomic::write_atomically;
use crate::tablebase::directory::names::{COMPRESSED_FILE, ENGINE_FILE, STATS_FILE, TABLEBASE_FILE};
use crate::tablebase::directory::options::{io_at, BuildError, BuildOptions, BuildReport};
use crate::tablebase::layers::SolvedLayers;
use crate::tablebase::owtb::{
    read_header, table_header, write_compressed_table, write_table_file, Provenance, Tablebase,
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
    let layers = |n| solved.layer(n);
    // The header of the table these layers make: one pass over them. A
    // finished build run again keeps a file whose header is this one (a
    // large table takes minutes to write and compress again).
    let header = table_header(&options.params, provenance, layers).map_err(io_at(dir))?;
    let table_current =
        || Tablebase::open(&table).is_ok_and(|t| *t.header() == header && t.verify_checksums().is_ok());
    if options.plain_table && table_current() {
        observer.line(&format!("{} already holds these layers: kept", table.display()));
    } else if options.plain_table {
        write_table_file(&table, &header, layers).map_err(io_at(&table))?;
        observer.line(&format!("wrote {}", table.display()));
    } else if table.exists() && !table_current() {
        // (Ours: a build directory holds only the files a build makes.)
        std::fs::remove_file(&table).map_err(io_at(&table))?;
        observer.line(&format!("removed {}, which held other layers", table.display()));
    }
    let copy_current = read_header(&compressed).is_ok_and(|h| h == header);
    if options.compress && copy_current {
        observer.line(&format!("{} already holds these layers: kept", compressed.display()));
    } else if options.compress {
        // Minutes for the largest tables: said in the log, not only on a
        // bar. Streamed from the layers: no second full copy on disk.
        observer.line(&format!("compressing the layers into {}", compressed.display()));
        let clock = std::time::Instant::now();
        write_compressed_table(&compressed, &header, layers, observer).map_err(io_at(&compressed))?;
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
