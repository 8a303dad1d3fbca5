//! Finished layers, held in memory or memory-mapped read-only, as packed
//! records (full, or value records when every entry is exact: see
//! [`crate::tablebase::entry`]) indexed by the position's rank inside its
//! layer.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use memmap2::Mmap;

use crate::rank::{layer_index, layer_size};
use crate::rules::Position;
use crate::tablebase::entry::{Entry, EntryWidth};
use crate::tablebase::table::{EndgameTable, Probe};

/// The bytes of one layer: one record per position, of either width.
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

/// Entries converted at a time when a layer is streamed in another width
/// (a few MB of buffer, whatever the layer's size).
pub(crate) const PIECE: usize = 1 << 20;

/// One layer's records as stored: `width` bytes per position.
#[derive(Clone, Copy)]
pub struct PackedLayer<'a> {
    bytes: &'a [u8],
    width: EntryWidth,
}

impl<'a> PackedLayer<'a> {
    /// The layer of `positions` entries held in `bytes`, if their length
    /// fits one of the widths.
    pub fn new(bytes: &'a [u8], positions: u64) -> Option<PackedLayer<'a>> {
        EntryWidth::of_length(bytes.len() as u64, positions).map(|width| PackedLayer { bytes, width })
    }

    /// Records of a width the caller knows (`bytes.len()` a multiple of it).
    #[inline]
    pub(crate) fn with_width(bytes: &'a [u8], width: EntryWidth) -> PackedLayer<'a> {
        debug_assert_eq!(bytes.len() % width.bytes(), 0);
        PackedLayer { bytes, width }
    }

    /// Full records, three bytes each (`bytes.len()` a multiple of 3).
    pub fn full(bytes: &'a [u8]) -> PackedLayer<'a> {
        PackedLayer::with_width(bytes, EntryWidth::Full)
    }

    /// The bytes as stored.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Bytes per entry.
    pub fn width(&self) -> EntryWidth {
        self.width
    }

    /// Number of entries.
    pub fn len(&self) -> u64 {
        (self.bytes.len() / self.width.bytes()) as u64
    }

    /// Whether the layer holds no entry (no layer of a table does).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The entry at local index `local`; panics past the end.
    #[inline]
    pub fn entry(&self, local: u64) -> Entry {
        let w = self.width.bytes();
        let at = local as usize * w;
        Entry::from_record(&self.bytes[at..at + w], self.width)
    }

    /// Every entry, in index order.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + 'a {
        let width = self.width;
        self.bytes.chunks_exact(width.bytes()).map(move |record| Entry::from_record(record, width))
    }

    /// The index of the first record of this `n`-seed layer that no writer
    /// makes ([`Entry::is_well_formed_record`]), if any.
    pub fn first_malformed(&self, n: u32) -> Option<u64> {
        use rayon::prelude::*;
        let width = self.width;
        let found = self
            .bytes
            .par_chunks_exact(width.bytes())
            .position_first(|record| !Entry::is_well_formed_record(record, width, n));
        found.map(|index| index as u64)
    }

    /// The layer's value records, if every entry has one (in parallel; a
    /// layer of value records is returned as it is).
    pub fn value_records(&self) -> Option<Vec<u8>> {
        match self.width {
            EntryWidth::Value => Some(self.bytes.to_vec()),
            EntryWidth::Full => {
                let full = EntryWidth::Full.bytes();
                let all = AtomicBool::new(true);
                let values =
                    crate::parallel::fill_chunks(self.bytes.len() / full, PIECE, &|start, values| {
                        if !all.load(Relaxed) {
                            return;
                        }
                        let records = self.bytes[full * start..].chunks_exact(full);
                        for (value, record) in values.iter_mut().zip(records) {
                            match value_record_of_full(record) {
                                Some(v) => *value = v,
                                None => return all.store(false, Relaxed),
                            }
                        }
                    });
                all.into_inner().then_some(values)
            }
        }
    }

    /// The layer in full records (a copy).
    pub fn to_full_records(&self) -> Vec<u8> {
        match self.width {
            EntryWidth::Full => self.bytes.to_vec(),
            EntryWidth::Value => self.entries().flat_map(|e| e.pack()).collect(),
        }
    }

    /// The width the layer is written with: value records when every entry
    /// has one, else full records. A function of the entries alone, so the
    /// files do not depend on how a layer was held.
    pub fn canonical_width(&self) -> EntryWidth {
        match self.width {
            EntryWidth::Value => EntryWidth::Value,
            EntryWidth::Full => {
                let full = EntryWidth::Full.bytes();
                let lacking = crate::parallel::any_chunk(self.bytes.len() / full, PIECE, &|range| {
                    let records = self.bytes[full * range.start..full * range.end].chunks_exact(full);
                    records.map(value_record_of_full).any(|v| v.is_none())
                });
                if !lacking {
                    EntryWidth::Value
                } else {
                    EntryWidth::Full
                }
            }
        }
    }

    /// The checksum of the layer as a file holds it: in its
    /// [`Self::canonical_width`].
    pub fn canonical_checksum(&self) -> u64 {
        let width = self.canonical_width();
        let mut sum = crate::checksum::Checksum::new();
        self.for_each_piece_in(width, PIECE, |piece| {
            sum.update(piece);
            Ok(())
        })
        .expect("every entry has a record of its layer's canonical width");
        sum.finish()
    }

    /// The layer's records in `width` (full, or [`Self::canonical_width`]),
    /// piece by piece in index order, each piece at most `piece` entries:
    /// what a writer streams without a second copy of the layer.
    pub fn for_each_piece_in(
        &self,
        width: EntryWidth,
        piece: usize,
        mut f: impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if width == self.width {
            for chunk in self.bytes.chunks(piece * width.bytes()) {
                f(chunk)?;
            }
            return Ok(());
        }
        let mut buffer = Vec::with_capacity(piece * width.bytes());
        for records in self.bytes.chunks(piece * self.width.bytes()) {
            buffer.clear();
            for record in records.chunks_exact(self.width.bytes()) {
                let entry = Entry::from_record(record, self.width);
                match (width, self.width) {
                    (EntryWidth::Full, _) => buffer.extend_from_slice(&entry.pack()),
                    (EntryWidth::Value, EntryWidth::Full) => buffer.push(
                        value_record_of_full(record)
                            .ok_or_else(|| std::io::Error::other("an entry has no value record"))?,
                    ),
                    (EntryWidth::Value, EntryWidth::Value) => buffer.push(record[0]),
                }
            }
            f(&buffer)?;
        }
        Ok(())
    }
}

/// The value record of a full record, if it has one and the full record is
/// exactly its entry's (no reserved bit set): a malformed record keeps its
/// layer in full records, where the readers' checks find it.
fn value_record_of_full(record: &[u8]) -> Option<u8> {
    let entry = Entry::from_record(record, EntryWidth::Full);
    entry.value_record().filter(|_| entry.pack() == record)
}

/// Layers `0..=max_seeds`, complete.
#[derive(Default)]
pub struct SolvedLayers {
    layers: Vec<LayerBytes>,
    widths: Vec<EntryWidth>,
}

impl SolvedLayers {
    /// No layer yet.
    pub fn new() -> SolvedLayers {
        SolvedLayers::default()
    }

    /// Appends the next layer (`n = self.len()`), of full records or of
    /// value records (told apart by its length). Panics if the length fits
    /// neither: the caller checks the size.
    pub fn push(&mut self, layer: LayerBytes) {
        let n = self.layers.len() as u32;
        let width = EntryWidth::of_length(layer.bytes().len() as u64, layer_size(n))
            .unwrap_or_else(|| panic!("{} bytes do not hold layer {n}", layer.bytes().len()));
        self.layers.push(layer);
        self.widths.push(width);
    }

    /// Whether every layer held is stored in value records, so that every
    /// entry is exact.
    pub(crate) fn every_layer_exact(&self) -> bool {
        self.widths.iter().all(|&w| w == EntryWidth::Value)
    }

    /// Number of layers held (the next layer to solve).
    pub fn len(&self) -> u32 {
        self.layers.len() as u32
    }

    /// Whether no layer is held.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// The layers' bytes, layer 0 first.
    pub fn into_layers(self) -> Vec<LayerBytes> {
        self.layers
    }

    /// Layer `n` (`n` seeds); panics unless `n < self.len()`.
    #[inline]
    pub fn layer(&self, n: u32) -> PackedLayer<'_> {
        PackedLayer { bytes: self.layers[n as usize].bytes(), width: self.widths[n as usize] }
    }

    /// The bytes of layer `n` as held (see [`Self::layer`] for their
    /// width); panics unless `n < self.len()`.
    pub fn layer_bytes(&self, n: u32) -> &[u8] {
        self.layers[n as usize].bytes()
    }

    /// The entry at local index `local` of layer `n`.
    #[inline]
    pub fn entry_at(&self, n: u32, local: u64) -> Entry {
        self.layer(n).entry(local)
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
