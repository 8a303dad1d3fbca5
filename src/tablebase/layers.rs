//! Finished layers, held in memory or memory-mapped read-only, as packed
//! entries indexed by the position's rank inside its layer.

use memmap2::Mmap;

use crate::rank::{layer_index, layer_size};
use crate::rules::Position;
use crate::tablebase::entry::{Entry, ENTRY_BYTES};
use crate::tablebase::table::{EndgameTable, Probe};

/// The bytes of one layer: `ENTRY_BYTES` per position.
pub enum LayerBytes {
    /// Held in memory.
    Owned(Vec<u8>),
    /// A byte range of a read-only file mapping.
    Mapped {
        /// The mapped file.
        map: Mmap,
        /// Where the layer starts in the mapping, in bytes.
        offset: usize,
        /// The layer's length in bytes.
        len: usize,
    },
}

impl LayerBytes {
    /// The layer's packed entries, wherever they are held.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        match self {
            LayerBytes::Owned(v) => v,
            LayerBytes::Mapped { map, offset, len } => &map[*offset..*offset + *len],
        }
    }
}

/// Layers `0..=max_seeds`, complete.
#[derive(Default)]
pub struct SolvedLayers {
    layers: Vec<LayerBytes>,
}

impl SolvedLayers {
    /// No layer yet.
    pub fn new() -> SolvedLayers {
        SolvedLayers::default()
    }

    /// Appends the next layer (`n = self.len()`). The caller checks the size.
    pub fn push(&mut self, layer: LayerBytes) {
        debug_assert_eq!(
            layer.bytes().len() as u64,
            layer_size(self.layers.len() as u32) * ENTRY_BYTES as u64
        );
        self.layers.push(layer);
    }

    /// Number of layers held (the next layer to solve).
    pub fn len(&self) -> u32 {
        self.layers.len() as u32
    }

    /// Whether no layer is held.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// The packed entries of layer `n` (`n` seeds); panics unless
    /// `n < self.len()`.
    pub fn layer_bytes(&self, n: u32) -> &[u8] {
        self.layers[n as usize].bytes()
    }

    /// The entry at local index `local` of layer `n`.
    #[inline]
    pub fn entry_at(&self, n: u32, local: u64) -> Entry {
        let bytes = self.layers[n as usize].bytes();
        let at = local as usize * ENTRY_BYTES;
        Entry::unpack([bytes[at], bytes[at + 1], bytes[at + 2]])
    }

    /// The entry of a position whose layer is held.
    #[inline]
    pub fn entry(&self, position: &Position) -> Entry {
        self.entry_at(position.seeds(), layer_index(position))
    }
}

impl EndgameTable for SolvedLayers {
    fn max_seeds(&self) -> u32 {
        self.len().saturating_sub(1)
    }

    fn probe(&self, position: &Position) -> Option<Probe> {
        (position.seeds() < self.len()).then(|| self.entry(position).probe())
    }

    /// The layers a build proved.
    fn proves(&self) -> bool {
        true
    }
}
