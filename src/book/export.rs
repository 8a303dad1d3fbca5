//! Export to the engine's two book layouts, through the readers and
//! writers of [`crate::formats`] (formats.md, sections 3 and 4).
//!
//! **"Oware Opening Book 1.0" (2014)**: one entry per *expanded* node (a
//! leaf has no scored moves, and the engine expects every legal move of an
//! entry scored). The score of a move is the backed-up value of its child
//! from the mover's point of view (the negated child value; a repetition
//! edge's exact value), in engine units; illegal moves get −32768. The
//! engine plays a move within 10 of the best score.
//!
//! **"DOE Opening Book 1.0" (2022)**: one entry per edge of an expanded
//! node: parent key, child key, the absolute pit (North's moves 6..11), the
//! backed-up value of the child **from the child's side to move** (as in
//! the engine's file: the parent's best move has the lowest score), and a
//! count: [`DOE_COUNT_PER_EXPANSION`] times 1 (the child's own evaluation)
//! plus the expansions whose selection went through this edge. The engine
//! adds `1000 / √count` to a score as the doubt of a mean of `count`
//! noisy samples; our score is a minimax value backed up from searches, not
//! such a mean, so the count is scaled until that term stays below one
//! unit: the engine then plays the moves within 13.5 units of our best,
//! weighted by how much of the book lies beneath them, and leaves the book
//! where it would leave its own (`docs/engine-formats.md`).
//!
//! Headers carry no date, so the same book always exports to the same
//! bytes; `Positions` / `Entries` are filled in by the writers.

use std::path::Path;

use super::error::BookError;
use super::graph::{BookGraph, NodeKind};
use super::store::Parameters;
use crate::formats::doe::{DoeBook, DoeEntry};
use crate::formats::opening_book::{BookEntry, OpeningBook, NO_SCORE};
use crate::formats::FormatError;
use crate::rank::SOUTH_TO_MOVE_BIT;
use crate::rules::ROW;

/// The DOE count of one expansion (see the module documentation): with it
/// the engine's confidence term `1000 / √count` is at most 1 unit.
pub const DOE_COUNT_PER_EXPANSION: u64 = 1_000_000;

/// The header fields our exports carry (after the count field).
pub fn header_fields(graph: &BookGraph, parameters: &Parameters) -> Vec<(String, String)> {
    vec![
        ("Name".into(), "oware drop-out opening book".into()),
        ("Author".into(), "oware toolchain".into()),
        ("Expansions".into(), graph.expansions().to_string()),
        ("Omega".into(), parameters.omega.to_string()),
        ("Evaluator".into(), parameters.evaluator.clone()),
    ]
}

fn borrowed(fields: &[(String, String)]) -> Vec<(&str, &str)> {
    fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect()
}

/// The 2014 layout of a book.
pub fn to_opening_book(graph: &BookGraph, fields: &[(String, String)]) -> Result<OpeningBook, FormatError> {
    let entries = graph
        .nodes()
        .iter()
        .filter(|n| n.kind == NodeKind::Expanded)
        .map(|node| {
            let mut scores = [NO_SCORE; ROW];
            for edge in &node.edges {
                let value = graph.move_value(edge).clamp(-32767, 32767);
                scores[edge.pit as usize % ROW] = value as i16;
            }
            BookEntry { key: node.key, scores }
        })
        .collect();
    OpeningBook::from_entries(entries, &borrowed(fields))
}

/// The DOE layout of a book.
pub fn to_doe(graph: &BookGraph, fields: &[(String, String)]) -> Result<DoeBook, FormatError> {
    let mut entries = Vec::new();
    for node in graph.nodes().iter().filter(|n| n.kind == NodeKind::Expanded) {
        let north = node.key & SOUTH_TO_MOVE_BIT == 0;
        for edge in &node.edges {
            entries.push(DoeEntry {
                parent: node.key,
                child: graph.node(edge.child).key,
                pit: edge.pit + if north { ROW as u8 } else { 0 },
                score: graph.edge_value(edge) as f64,
                count: (edge.visits + 1) * DOE_COUNT_PER_EXPANSION,
            });
        }
    }
    DoeBook::from_entries(entries, &borrowed(fields))
}

/// What [`export`] wrote.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ExportReport {
    /// Entries written in the "Oware Opening Book 1.0" layout (0 when that
    /// file was not asked for).
    pub entries_2014: usize,
    /// Entries written in the "DOE Opening Book 1.0" layout (0 when that
    /// file was not asked for).
    pub entries_doe: usize,
}

/// Writes the book of directory `dir` in the layouts asked for (each file
/// atomically); one path for both layouts is refused.
pub fn export(
    dir: &Path,
    out_2014: Option<&Path>,
    out_doe: Option<&Path>,
) -> Result<ExportReport, BookError> {
    // Checked before anything is written: an export writes over nothing it
    // reads and over no file of a book or build directory.
    for path in [out_2014, out_doe].into_iter().flatten() {
        if let Some(reason) = crate::resumable::names::refuse_output(path, &[dir]) {
            return Err(BookError::WouldOverwrite { path: path.to_path_buf(), reason });
        }
    }
    if let (Some(a), Some(b)) = (out_2014, out_doe) {
        if crate::resumable::names::same_output(a, b) {
            let reason = "it is also where the 2014 layout goes".to_string();
            return Err(BookError::WouldOverwrite { path: b.to_path_buf(), reason });
        }
    }
    let stored = super::store::load(dir)?;
    let graph = stored.graph.ok_or_else(|| BookError::Empty { dir: dir.to_path_buf() })?;
    let fields = header_fields(&graph, &stored.manifest.parameters);
    let mut report = ExportReport::default();
    let format = |path: &Path| {
        let path = path.to_path_buf();
        move |error| BookError::Format { path: Some(path), error }
    };
    if let Some(path) = out_2014 {
        let book = to_opening_book(&graph, &fields).map_err(format(path))?;
        book.save(path).map_err(format(path))?;
        report.entries_2014 = book.len();
    }
    if let Some(path) = out_doe {
        let book = to_doe(&graph, &fields).map_err(format(path))?;
        book.save(path).map_err(format(path))?;
        report.entries_doe = book.len();
    }
    Ok(report)
}
