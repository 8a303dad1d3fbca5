//! The frontier of a breadth-first pass, kept as the pieces the threads
//! produced: a frontier can hold a fifth of a layer, and joining the pieces
//! into one vector would hold it twice.

use crate::parallel;

/// Items to expand, in pieces.
pub(crate) struct Frontier<T> {
    pieces: Vec<Vec<T>>,
}

impl<T: Send + Sync> Frontier<T> {
    pub(crate) fn new(items: Vec<T>) -> Frontier<T> {
        Frontier { pieces: vec![items] }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pieces.iter().all(Vec::is_empty)
    }

    /// The next frontier: `step` over runs of at most `chunk` items, on
    /// every thread unless the frontier is one run (sharing it out would
    /// cost more). The pieces come in item order, whatever the threads.
    pub(crate) fn expand<U: Send>(
        &self,
        chunk: usize,
        step: impl Fn(&[T], &mut Vec<U>) + Sync,
    ) -> Frontier<U> {
        let run = |items: &[T]| {
            let mut out = Vec::new();
            step(items, &mut out);
            out
        };
        let pieces = if self.pieces.iter().map(Vec::len).sum::<usize>() <= chunk {
            self.pieces.iter().map(|piece| run(piece)).filter(|p| !p.is_empty()).collect()
        } else {
            let runs: Vec<&[T]> = self.pieces.iter().flat_map(|piece| piece.chunks(chunk)).collect();
            let pieces: Vec<Vec<U>> = parallel::map_indexes(runs.len(), &|r| run(runs[r]));
            pieces.into_iter().filter(|p| !p.is_empty()).collect()
        };
        Frontier { pieces }
    }
}
