//! The parameters of a tablebase build, and every limit on them, in one
//! place: the library validates them here, once ([`BuildParams::new`]),
//! and every phase, file and report reads them from here. Their names and
//! values as the files record them are one list too ([`BuildParams::fields`]
//! and [`Param::name`]): the build directory's manifest, `stats.json` and
//! the `.owtb` header all write and read that list.

use std::fmt;

/// The most seeds a build takes: layer 30 holds 3,159,461,968 positions,
/// whose indexes fit the solver's 32-bit position numbers (member lists,
/// frontiers, the threshold games' states, which refuse a larger one),
/// with `u32::MAX` left free as "none"; layers up to 30 are the ones the
/// solver's 32-bit numbers were checked for. The component search's 32-bit part labels are no limit:
/// it runs out of them only after 2³⁰ − 1 splits of parts larger than
/// Pearce's share, and says so (`split::LabelsExhausted`) rather than
/// going on. Memory is the user's to judge: about 17.5 bytes a position
/// of the layer being built today (layer 27, 1,203,322,288 positions:
/// about 21 GB).
pub const MAX_BUILD_SEEDS: u32 = 30;

/// The largest N a file of ours may declare (positions up to 48 seeds
/// exist, but a table of every layer beyond this would not fit any disk).
pub const MAX_FILE_SEEDS: u32 = 32;

/// The most seeds the engine's endgame index covers (`OwareLeaves.MAX_SEEDS`
/// in its source: its hash ranks positions of up to 15 seeds), so the most
/// layers an export to its files holds.
pub const ENGINE_MAX_SEEDS: u32 = 15;

/// One build parameter, as the files name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    /// The largest layer built: layers `0..=` it.
    LargestLayer,
    /// [`SearchBudget::nodes_per_search`].
    SearchNodesPerQuestion,
    /// [`SearchBudget::max_path`].
    SearchMaxPath,
    /// [`SearchBudget::min_seeds`].
    SearchMinSeeds,
    /// [`SearchBudget::threshold_max_seeds`].
    ThresholdMaxSeeds,
    /// [`SearchBudget::cut_nodes`].
    CutNodesPerQuestion,
    /// [`SearchBudget::cut_max_seeds`].
    CutMaxSeeds,
}

impl Param {
    /// Every parameter, in the order the files list them.
    pub const ALL: [Param; 7] = [
        Param::LargestLayer,
        Param::SearchNodesPerQuestion,
        Param::SearchMaxPath,
        Param::SearchMinSeeds,
        Param::ThresholdMaxSeeds,
        Param::CutNodesPerQuestion,
        Param::CutMaxSeeds,
    ];

    /// Its name in the manifest and in `stats.json` (distinct from every
    /// per-layer figure of `stats.json`: a budget is not nodes spent).
    pub fn name(self) -> &'static str {
        match self {
            Param::LargestLayer => "largest_layer",
            Param::SearchNodesPerQuestion => "search_nodes_per_question",
            Param::SearchMaxPath => "search_max_path",
            Param::SearchMinSeeds => "search_min_seeds",
            Param::ThresholdMaxSeeds => "threshold_max_seeds",
            Param::CutNodesPerQuestion => "cut_nodes_per_question",
            Param::CutMaxSeeds => "cut_max_seeds",
        }
    }

    /// The parameter of this name, if any.
    pub fn named(name: &str) -> Option<Param> {
        Param::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The largest value a build accepts: a layer bound beyond the largest
    /// layer a build makes says nothing more, a longer path does not fit a
    /// worker's stack, and a node budget is any count.
    pub fn limit(self) -> u64 {
        match self {
            Param::LargestLayer | Param::SearchMinSeeds | Param::ThresholdMaxSeeds | Param::CutMaxSeeds => {
                MAX_BUILD_SEEDS as u64
            }
            Param::SearchMaxPath => SearchBudget::MAX_PATH as u64,
            Param::SearchNodesPerQuestion | Param::CutNodesPerQuestion => u64::MAX,
        }
    }

    /// `value` if a build accepts it for this parameter.
    pub fn check(self, value: u64) -> Result<u64, ParamError> {
        match value <= self.limit() {
            true => Ok(value),
            false => Err(ParamError::TooLarge { param: self, value, limit: self.limit() }),
        }
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Budget of the searches inside cycle components.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchBudget {
    /// Most nodes a threshold question may use (questions start at
    /// 4,096 nodes and get eight times more each round until they are
    /// answered or reach this); 0 turns the threshold search off.
    pub nodes_per_search: u64,
    /// Longest line (plies from the root) a threshold search explores
    /// (at most [`SearchBudget::MAX_PATH`]).
    pub max_path: usize,
    /// Layers above this many seeds get no threshold search.
    pub threshold_max_seeds: u32,
    /// Nodes per question of the path-cut search (each node solves two
    /// threshold games on its component), for what the threshold search
    /// leaves open; 0 turns it off.
    pub cut_nodes: u64,
    /// Layers above this many seeds get no path-cut search.
    pub cut_max_seeds: u32,
    /// Layers below this many seeds get no search of either kind (an
    /// improvement pass that re-proves chosen layers only).
    pub min_seeds: u32,
}

impl SearchBudget {
    /// The longest line either cycle search explores: both recurse once a
    /// ply, and a line this long fits a worker thread's stack
    /// (`cpu::use_threads` gives them 32 MiB). A search that would go
    /// deeper answers "unknown", which never becomes a proof.
    pub const MAX_PATH: usize = 4_096;

    /// No search at all: the history-free bounds only.
    pub const NONE: SearchBudget = SearchBudget {
        nodes_per_search: 0,
        max_path: 1_000,
        threshold_max_seeds: 0,
        cut_nodes: 0,
        cut_max_seeds: 0,
        min_seeds: 0,
    };

    /// Refuses what no build does: a path longer than
    /// [`SearchBudget::MAX_PATH`], a layer bound beyond
    /// [`MAX_BUILD_SEEDS`] (each with [`Param::limit`]).
    pub fn check(&self) -> Result<(), ParamError> {
        self.fields().into_iter().try_for_each(|(param, value)| param.check(value).map(|_| ()))
    }

    /// Whether layer `n` gets the threshold search.
    pub fn threshold_search_at(&self, n: u32) -> bool {
        self.nodes_per_search > 0 && (self.min_seeds..=self.threshold_max_seeds).contains(&n)
    }

    /// Whether layer `n` gets the path-cut search.
    pub fn cut_search_at(&self, n: u32) -> bool {
        self.cut_nodes > 0 && (self.min_seeds..=self.cut_max_seeds).contains(&n)
    }

    /// Every field with its name, in the files' order.
    pub fn fields(&self) -> [(Param, u64); 6] {
        [
            (Param::SearchNodesPerQuestion, self.nodes_per_search),
            (Param::SearchMaxPath, self.max_path as u64),
            (Param::SearchMinSeeds, self.min_seeds as u64),
            (Param::ThresholdMaxSeeds, self.threshold_max_seeds as u64),
            (Param::CutNodesPerQuestion, self.cut_nodes),
            (Param::CutMaxSeeds, self.cut_max_seeds as u64),
        ]
    }

    /// The budget whose fields `value_of` gives, as a file records it
    /// (not checked against the limits: [`SearchBudget::check`] does);
    /// refuses only a value wider than its field.
    pub fn from_fields(mut value_of: impl FnMut(Param) -> u64) -> Result<SearchBudget, ParamError> {
        let nodes_per_search = value_of(Param::SearchNodesPerQuestion);
        let cut_nodes = value_of(Param::CutNodesPerQuestion);
        let mut narrow = |param: Param| {
            let value = value_of(param);
            u32::try_from(value).map_err(|_| ParamError::TooLarge { param, value, limit: u32::MAX as u64 })
        };
        Ok(SearchBudget {
            nodes_per_search,
            max_path: narrow(Param::SearchMaxPath)? as usize,
            min_seeds: narrow(Param::SearchMinSeeds)?,
            threshold_max_seeds: narrow(Param::ThresholdMaxSeeds)?,
            cut_nodes,
            cut_max_seeds: narrow(Param::CutMaxSeeds)?,
        })
    }
}

impl Default for SearchBudget {
    /// What a default build affords (≤ 12 seeds in well under a minute on
    /// two cores): the threshold search to layer 7, which closes every gap
    /// there; the path-cut search off (it has nothing left to close).
    fn default() -> SearchBudget {
        SearchBudget {
            nodes_per_search: 1_000_000,
            max_path: 1_000,
            threshold_max_seeds: 7,
            cut_nodes: 0,
            cut_max_seeds: 0,
            min_seeds: 0,
        }
    }
}

/// What a build computes: its layers and how hard it searches them,
/// checked against every limit when made (so a value held here is one a
/// build accepts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildParams {
    largest_layer: u32,
    budget: SearchBudget,
}

impl BuildParams {
    /// Layers `0..=largest_layer`, searched with `budget`; refuses any
    /// value beyond its [`Param::limit`].
    pub fn new(largest_layer: u32, budget: SearchBudget) -> Result<BuildParams, ParamError> {
        Param::LargestLayer.check(largest_layer as u64)?;
        budget.check()?;
        Ok(BuildParams { largest_layer, budget })
    }

    /// The largest layer built: the build makes layers `0..=` this.
    pub fn largest_layer(&self) -> u32 {
        self.largest_layer
    }

    /// The budget of the cycle searches.
    pub fn budget(&self) -> SearchBudget {
        self.budget
    }

    /// Every parameter with its value, in the files' order.
    pub fn fields(&self) -> [(Param, u64); 7] {
        param_fields(self.largest_layer, &self.budget)
    }

    /// The parameters whose values `value_of` gives (as [`BuildParams::new`]
    /// checks them).
    pub fn from_fields(mut value_of: impl FnMut(Param) -> u64) -> Result<BuildParams, ParamError> {
        let largest_layer = Param::LargestLayer.check(value_of(Param::LargestLayer))? as u32;
        BuildParams::new(largest_layer, SearchBudget::from_fields(value_of)?)
    }

    /// The fields as `name value` pairs joined by ", " (for messages).
    pub fn describe(&self) -> String {
        let fields: Vec<String> = self.fields().iter().map(|(p, v)| format!("{p} {v}")).collect();
        fields.join(", ")
    }
}

/// Every parameter with its value, in the files' order, of a table of
/// layers `0..=largest_layer` searched with `budget` (as a file records
/// them: a file may hold more layers than a build makes).
pub fn param_fields(largest_layer: u32, budget: &SearchBudget) -> [(Param, u64); 7] {
    let b = budget.fields();
    [(Param::LargestLayer, largest_layer as u64), b[0], b[1], b[2], b[3], b[4], b[5]]
}

/// A build parameter out of its range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// A value above its parameter's limit.
    TooLarge {
        /// The parameter.
        param: Param,
        /// The value asked for.
        value: u64,
        /// The largest value accepted ([`Param::limit`], or the width of
        /// its field).
        limit: u64,
    },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::TooLarge { param, value, limit } => {
                let why = match param {
                    Param::SearchMaxPath => " plies (a longer line does not fit a search thread's stack)",
                    Param::LargestLayer
                    | Param::SearchMinSeeds
                    | Param::ThresholdMaxSeeds
                    | Param::CutMaxSeeds
                        if *limit == MAX_BUILD_SEEDS as u64 =>
                    {
                        " seeds (the largest layer this builder makes)"
                    }
                    _ => "",
                };
                write!(f, "{param} {value} is out of range: at most {limit}{why}")
            }
        }
    }
}

impl std::error::Error for ParamError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_is_refused_by_name_beyond_it() {
        let default = SearchBudget::default();
        assert!(BuildParams::new(MAX_BUILD_SEEDS, default).is_ok());
        let error = BuildParams::new(MAX_BUILD_SEEDS + 1, default).unwrap_err();
        let wanted = ParamError::TooLarge { param: Param::LargestLayer, value: 31, limit: 30 };
        assert_eq!(error, wanted);
        assert!(error.to_string().starts_with("largest_layer 31 is out of range: at most 30"), "{error}");
        let long = SearchBudget { max_path: SearchBudget::MAX_PATH + 1, ..default };
        let error = BuildParams::new(12, long).unwrap_err();
        assert!(error.to_string().contains("search_max_path 4097 is out of range: at most 4096"), "{error}");
        for (field, budget) in [
            (Param::SearchMinSeeds, SearchBudget { min_seeds: 31, ..default }),
            (Param::ThresholdMaxSeeds, SearchBudget { threshold_max_seeds: 31, ..default }),
            (Param::CutMaxSeeds, SearchBudget { cut_max_seeds: 31, ..default }),
        ] {
            let error = BuildParams::new(12, budget).unwrap_err();
            assert_eq!(error, ParamError::TooLarge { param: field, value: 31, limit: 30 });
        }
    }

    #[test]
    fn the_fields_read_back_to_the_same_parameters() {
        let budget = SearchBudget {
            nodes_per_search: 30_000_000,
            max_path: 2_000,
            threshold_max_seeds: 20,
            cut_nodes: 600,
            cut_max_seeds: 9,
            min_seeds: 13,
        };
        let params = BuildParams::new(24, budget).unwrap();
        let fields = params.fields();
        let names: Vec<&str> = fields.iter().map(|(p, _)| p.name()).collect();
        assert_eq!(names, Param::ALL.map(Param::name));
        let value_of = |param| fields.iter().find(|(p, _)| *p == param).unwrap().1;
        assert_eq!(BuildParams::from_fields(value_of), Ok(params));
        assert!(Param::ALL.iter().all(|&p| Param::named(p.name()) == Some(p)));
        assert_eq!(
            params.describe(),
            "largest_layer 24, search_nodes_per_question 30000000, search_max_path 2000, search_min_seeds 13, \
             threshold_max_seeds 20, cut_nodes_per_question 600, cut_max_seeds 9"
        );
        // A value wider than its field is refused, not cut.
        let wide = SearchBudget::from_fields(|p| if p == Param::CutMaxSeeds { 1 << 32 } else { 0 });
        assert_eq!(
            wide,
            Err(ParamError::TooLarge { param: Param::CutMaxSeeds, value: 1 << 32, limit: 0xFFFF_FFFF })
        );
    }
}
