//! The manifest of a build directory: its parameters, the finished layers
//! and the latest checkpoint, with their sizes and checksums, as text. It
//! is written last, atomically, so it only ever names files that are
//! complete and durable; this is its one writer ([`Manifest::render`]) and
//! reader ([`Manifest::parse`]).

use std::path::Path;

use crate::rank::layer_size;
use crate::tablebase::directory::names::{layer_path, stats_path};
use crate::tablebase::directory::options::BuildError;
use crate::tablebase::entry::EntryWidth;
use crate::tablebase::owtb::Provenance;
use crate::tablebase::params::{BuildParams, Param};

/// The manifest's first line. Version 5 names the parameters as
/// `stats.json` does ([`Param::name`]).
const MANIFEST_SIGNATURE: &str = "oware-tablebase-build 5";

/// Manifests of version 4 (the same records, the parameters under other
/// names) are still read, and written again as version 5.
const V4_SIGNATURE: &str = "oware-tablebase-build 4";

/// The names of the parameters in a version 4 manifest, in
/// [`Param::ALL`]'s order.
const V4_NAMES: [&str; 7] = [
    "max-seeds",
    "search-nodes",
    "search-max-path",
    "search-min-seeds",
    "search-max-seeds",
    "cut-nodes",
    "cut-max-seeds",
];

/// Manifests of builds made by older builders: before the path-cut search
/// (1), before the threshold search with history-proof leaves (2), before
/// builds could start from a proven table (3).
const OLD_SIGNATURES: [&str; 3] =
    ["oware-tablebase-build 1", "oware-tablebase-build 2", "oware-tablebase-build 3"];

/// The manifest's content.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Manifest {
    /// What the build computes (checked against every limit when read).
    pub params: BuildParams,
    /// The proven table the layers it covers were intersected with.
    pub seed: Option<Provenance>,
    /// How many improvement passes replaced the layers (it names the layer
    /// files: `layer-NN.bin` in generation 0, `layer-NN-gG.bin` after).
    pub generation: u32,
    /// Finished layers: (entries bytes, checksum, stats bytes, stats checksum).
    pub layers: Vec<(u64, u64, u64, u64)>,
    /// Latest snapshot of the next layer: (sequence, bytes, checksum).
    pub checkpoint: Option<(u64, u64, u64)>,
}

impl Manifest {
    /// Whether every layer is finished.
    pub fn complete(&self) -> bool {
        self.layers.len() == self.params.largest_layer() as usize + 1
    }

    /// The parameters and the table started from, in words (for the
    /// error that refuses other parameters).
    pub fn parameters(&self) -> String {
        let seed = match self.seed {
            Some(p) => format!(", starting from table {:016x} (layers 0..{})", p.body_checksum, p.layers),
            None => String::new(),
        };
        format!("{}{seed}", self.params.describe())
    }

    /// Same parameters (what the build computes), whatever its progress.
    pub fn same_build(&self, other: &Manifest) -> bool {
        (self.params, self.seed) == (other.params, other.seed)
    }

    /// The manifest's text (always the current version).
    pub fn render(&self) -> String {
        let mut text = format!("{MANIFEST_SIGNATURE}\n");
        for (param, value) in self.params.fields() {
            text += &format!("{param} {value}\n");
        }
        if let Some(p) = self.seed {
            text += &format!("start-from {:016x} {}\n", p.body_checksum, p.layers);
        }
        if self.generation > 0 {
            text += &format!("generation {}\n", self.generation);
        }
        for (n, (bytes, sum, stats_bytes, stats_sum)) in self.layers.iter().enumerate() {
            text += &format!("layer {n} {bytes} {sum:016x} {stats_bytes} {stats_sum:016x}\n");
        }
        if let Some((sequence, bytes, sum)) = self.checkpoint {
            text += &format!("checkpoint {} {sequence} {bytes} {sum:016x}\n", self.layers.len());
        }
        text
    }

    /// Reads a manifest of version 5 or 4, refusing older ones and any
    /// value a build does not write (naming its line).
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, BuildError> {
        let corrupt = |line: usize, what: &str| BuildError::Corrupt {
            path: path.to_path_buf(),
            problem: format!("manifest line {line}: {what}"),
        };
        let mut lines = text.lines().enumerate();
        let signature = lines.next().map(|(_, l)| l);
        if signature.is_some_and(|s| OLD_SIGNATURES.contains(&s)) {
            return Err(corrupt(
                1,
                "made by an older builder (other searches, other statistics); build into a new directory",
            ));
        }
        let version_4 = signature == Some(V4_SIGNATURE);
        if signature != Some(MANIFEST_SIGNATURE) && !version_4 {
            return Err(corrupt(1, "not a tablebase build manifest"));
        }
        // Every parameter on its line, in order, each checked against its
        // limit there (so that the error names the line).
        let mut values = [0u64; 7];
        for (k, param) in Param::ALL.into_iter().enumerate() {
            let key = if version_4 { V4_NAMES[k] } else { param.name() };
            let (i, line) = lines.next().ok_or_else(|| corrupt(0, "truncated"))?;
            let rest = line.strip_prefix(key).and_then(|r| r.strip_prefix(' '));
            let number = rest
                .and_then(|r| r.parse().ok())
                .ok_or_else(|| corrupt(i + 1, &format!("expected '{key} <number>'")))?;
            values[k] = param.check(number).map_err(|e| corrupt(i + 1, &e.to_string()))?;
        }
        let value_of = |param| values[Param::ALL.iter().position(|&p| p == param).expect("every parameter")];
        let params = BuildParams::from_fields(value_of).map_err(|e| corrupt(0, &e.to_string()))?;
        let largest_layer = params.largest_layer();
        let mut manifest =
            Manifest { params, seed: None, generation: 0, layers: Vec::new(), checkpoint: None };
        for (i, line) in lines {
            let fields: Vec<&str> = line.split(' ').collect();
            let number = |k: usize| fields.get(k).and_then(|f| f.parse::<u64>().ok());
            let hex = |k: usize| fields.get(k).and_then(|f| u64::from_str_radix(f, 16).ok());
            match fields.first() {
                Some(&"start-from") if fields.len() == 3 && manifest.layers.is_empty() => {
                    match (hex(1), number(2)) {
                        (Some(sum), Some(layers)) if layers > 0 && layers <= u32::MAX as u64 => {
                            manifest.seed = Some(Provenance { body_checksum: sum, layers: layers as u32 })
                        }
                        _ => return Err(corrupt(i + 1, "bad start-from record")),
                    }
                }
                Some(&"generation") if fields.len() == 2 && manifest.layers.is_empty() => match number(1) {
                    Some(g) if g > 0 && g <= u32::MAX as u64 => manifest.generation = g as u32,
                    _ => return Err(corrupt(i + 1, "bad generation record")),
                },
                Some(&"layer") if manifest.layers.len() > largest_layer as usize => {
                    return Err(corrupt(i + 1, "more layers than the build asks for"));
                }
                Some(&"layer") if fields.len() == 6 && number(1) == Some(manifest.layers.len() as u64) => {
                    let record = (number(2), hex(3), number(4), hex(5));
                    // A layer file holds every entry of its layer, in full
                    // or value records: a size that does not would be read
                    // past its end.
                    let positions = layer_size(manifest.layers.len() as u32);
                    let whole = |a: u64| EntryWidth::of_length(a, positions).is_some();
                    match record {
                        (Some(a), Some(b), Some(c), Some(d)) if whole(a) => {
                            manifest.layers.push((a, b, c, d))
                        }
                        _ => return Err(corrupt(i + 1, "bad layer record")),
                    }
                }
                Some(&"checkpoint")
                    if fields.len() == 5 && number(1) == Some(manifest.layers.len() as u64) =>
                {
                    match (number(2), number(3), hex(4)) {
                        (Some(a), Some(b), Some(c)) => manifest.checkpoint = Some((a, b, c)),
                        _ => return Err(corrupt(i + 1, "bad checkpoint record")),
                    }
                }
                _ => return Err(corrupt(i + 1, "unexpected line")),
            }
        }
        Ok(manifest)
    }
}

/// Checks every finished layer file of the build in `dir`, and its
/// statistics, against the size and checksum the manifest records;
/// returns how many layers were checked. (`endgames verify` on a build
/// directory: the finished table is one file, and the layers a resumed,
/// extended or improved build reads are these.)
pub fn check_layer_files(dir: &Path) -> Result<usize, BuildError> {
    let path = dir.join("manifest");
    let text = std::fs::read_to_string(&path).map_err(crate::tablebase::directory::options::io_at(&path))?;
    let manifest = Manifest::parse(&text, &path)?;
    for (n, &(bytes, sum, stats_bytes, stats_sum)) in manifest.layers.iter().enumerate() {
        crate::resumable::map_checked(&layer_path(dir, manifest.generation, n), bytes, sum)?;
        crate::resumable::map_checked(&stats_path(dir, manifest.generation, n), stats_bytes, stats_sum)?;
    }
    Ok(manifest.layers.len())
}

#[cfg(test)]
mod tests {
    //! `Manifest::parse` of arbitrary and damaged text (the type is private
    //! to the tablebase module, so these are unit tests): it never panics,
    //! reads every number as written or refuses it, and what it accepts
    //! renders to text that parses back to the same manifest.

    use super::*;
    use crate::tablebase::params::SearchBudget;
    use proptest::prelude::*;

    fn parse(text: &str) -> Result<Manifest, BuildError> {
        Manifest::parse(text, Path::new("manifest"))
    }

    /// Small numbers, numbers just past `u32::MAX`, and any.
    fn number() -> impl Strategy<Value = u64> {
        prop_oneof![0u64..40, (u32::MAX as u64 - 1)..=(u32::MAX as u64 + 2), any::<u64>()]
    }

    /// Manifest text in `render`'s layout with any numbers in its fields,
    /// and the same manifest in version 4's layout.
    fn canonical_text() -> impl Strategy<Value = (String, String)> {
        let records = proptest::collection::vec((number(), any::<u64>(), number(), any::<u64>()), 0..4);
        let optional = proptest::option::of((number(), number(), any::<u64>()));
        // (Mostly parameters a build accepts, so that most texts are read.)
        let parameter = prop_oneof![4 => 0u64..25, 1 => number()];
        (
            proptest::array::uniform7(parameter),
            proptest::option::of((any::<u64>(), number())),
            proptest::option::of(number()),
            records,
            optional,
        )
            .prop_map(|(fields, start_from, generation, layers, checkpoint)| {
                let mut text = String::new();
                for (param, value) in Param::ALL.iter().zip(fields) {
                    text += &format!("{param} {value}\n");
                }
                if let Some((sum, layers)) = start_from {
                    text += &format!("start-from {sum:016x} {layers}\n");
                }
                if let Some(g) = generation {
                    text += &format!("generation {g}\n");
                }
                for (n, (a, b, c, d)) in layers.iter().enumerate() {
                    text += &format!("layer {n} {a} {b:016x} {c} {d:016x}\n");
                }
                if let Some((sequence, bytes, sum)) = checkpoint {
                    text += &format!("checkpoint {} {sequence} {bytes} {sum:016x}\n", layers.len());
                }
                let mut version_4 = text.clone();
                for (param, old) in Param::ALL.iter().zip(V4_NAMES) {
                    version_4 = version_4.replacen(&format!("{param} "), &format!("{old} "), 1);
                }
                (format!("{MANIFEST_SIGNATURE}\n{text}"), format!("{V4_SIGNATURE}\n{version_4}"))
            })
    }

    /// A manifest of a build with two finished layers and a checkpoint.
    fn good_text() -> String {
        let manifest = Manifest {
            params: BuildParams::new(6, SearchBudget::default()).unwrap(),
            seed: Some(Provenance { body_checksum: 0x1234_5678_9ABC_DEF0, layers: 3 }),
            generation: 2,
            // (Layers 0 and 1: 1 and 12 positions of 3 bytes.)
            layers: vec![(3, 0xAB, 40, 0xCD), (36, 0xEF01, 44, 0x2345)],
            checkpoint: Some((7, 1_000, 0xFEDC_BA98_7654_3210)),
        };
        manifest.render()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn a_manifest_is_read_as_written_or_refused((text, version_4) in canonical_text()) {
            let read = parse(&text);
            if let Ok(manifest) = &read {
                prop_assert_eq!(manifest.render(), text);
            }
            // Version 4 is read alike (and written again as version 5).
            prop_assert_eq!(parse(&version_4).ok(), read.ok());
        }

        #[test]
        fn a_damaged_manifest_parses_to_what_renders_back_to_it(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            cut in proptest::option::of(any::<prop::sample::Index>()),
        ) {
            let mut bytes = good_text().into_bytes();
            for (at, byte) in edits {
                let at = at.index(bytes.len());
                bytes[at] = byte;
            }
            if let Some(cut) = cut {
                bytes.truncate(cut.index(bytes.len()));
            }
            if let Ok(manifest) = parse(&String::from_utf8_lossy(&bytes)) {
                prop_assert_eq!(parse(&manifest.render()).ok(), Some(manifest));
            }
        }
    }

    #[test]
    fn a_good_manifest_round_trips() {
        let text = good_text();
        assert_eq!(parse(&text).unwrap().render(), text);
    }

    /// Values a build never writes: layer files of another size (they
    /// would be read past their end), more seeds than a build supports,
    /// layers out of order.
    #[test]
    fn values_no_build_writes_are_refused() {
        let good = good_text();
        assert!(parse(&good).is_ok());
        for (from, to) in [
            ("layer 1 36 ", "layer 1 35 "),
            ("layer 0 3 ", "layer 0 4 "),
            ("largest_layer 6\n", "largest_layer 31\n"),
            ("layer 1 36 000000000000ef01", "layer 2 36 000000000000ef01"),
            ("largest_layer 6\n", "largest_layer 0\n"),
            ("search_max_path 1000\n", "search_max_path 4097\n"),
            ("threshold_max_seeds 7\n", "threshold_max_seeds 31\n"),
            ("cut_max_seeds 0\n", "cut_max_seeds 4294967296\n"),
            // (Version 5's names under version 4's signature.)
            (MANIFEST_SIGNATURE, V4_SIGNATURE),
        ] {
            assert!(good.contains(from), "{from}");
            let text = good.replace(from, to);
            let error = parse(&text).err().unwrap_or_else(|| panic!("{to} accepted"));
            assert!(error.to_string().contains("manifest line"), "{error}");
        }
        assert!(parse(&good.replace("largest_layer 6\n", "largest_layer 30\n")).is_ok());
        // A limit is named with the value refused.
        let error = parse(&good.replace("largest_layer 6\n", "largest_layer 31\n")).err().unwrap();
        assert!(
            error.to_string().contains("manifest line 2: largest_layer 31 is out of range: at most 30"),
            "{error}"
        );
    }

    /// A manifest written by the builder before version 5 (its parameters
    /// under their old names) is read as the same manifest; older ones are
    /// refused as before.
    #[test]
    fn a_version_4_manifest_is_read() {
        let version_4 = "oware-tablebase-build 4\nmax-seeds 6\nsearch-nodes 1000000\nsearch-max-path 1000\n\
                         search-min-seeds 0\nsearch-max-seeds 7\ncut-nodes 0\ncut-max-seeds 0\n\
                         start-from 123456789abcdef0 3\ngeneration 2\n\
                         layer 0 3 00000000000000ab 40 00000000000000cd\n\
                         layer 1 36 000000000000ef01 44 0000000000002345\n\
                         checkpoint 2 7 1000 fedcba9876543210\n";
        assert_eq!(parse(version_4).unwrap().render(), good_text());
        let version_3 = version_4.replace("build 4", "build 3");
        assert!(parse(&version_3).unwrap_err().to_string().contains("made by an older builder"));
    }
}
