//! What the integration tests share: scratch directories, the options of a
//! small tablebase build, the shipped table, a reproducible pseudo-random
//! sequence, running a binary, and strongly connected components (of
//! positions linked by moves, of modules linked by imports).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use oware::rank::{layer_index, layer_positions};
use oware::tablebase::BuildOptions;
use oware::tablebase::BuildParams;
use oware::tablebase::SearchBudget;

/// The shipped 12-seed tablebase.
pub const SHIPPED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/endgames-12.owtb.zst");

/// A fresh empty directory for one test: `oware-<test>-<name>-<pid>` in
/// the system's temporary directory, emptied of whatever an earlier run
/// left there. The tests run on threads of one process, each thread named
/// after its test's path (`tablebase_build::killed_builds_…`): the test's
/// name and `name` keep them apart, the process id keeps apart two runs.
pub fn scratch(name: &str) -> PathBuf {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("unnamed").replace("::", "-");
    let dir = std::env::temp_dir().join(format!("oware-{test}-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// A [`scratch`] directory removed when dropped, for tests that may stop
/// early (a failed `prop_assert!` returns before any clean-up line).
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        Scratch(scratch(name))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A one-process build of layers `0..=max_seeds` into `dir`: the default
/// search budget, no checkpoint inside a layer (a small layer takes well
/// under the hour), uncompressed, from scratch.
pub fn build_options(dir: &Path, max_seeds: u32) -> BuildOptions {
    BuildOptions {
        dir: dir.to_path_buf(),
        params: BuildParams::new(max_seeds, SearchBudget::default()).unwrap(),
        checkpoint_every: Duration::from_secs(3600),
        plain_table: true,
        compress: false,
        start_from: None,
        keep_layers_spread: false,
    }
}

/// The next number of a xorshift64 sequence (Marsaglia's 13, 7, 17): the
/// same times and choices on every run. `state` must not be 0.
pub fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Runs `binary` with `args` to the end: whether it succeeded, its
/// standard output and its standard error.
pub fn run(binary: &str, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(binary).args(args).output().expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The strongly connected components of the graph whose vertex `v` has
/// the edges `successors[v]`, each in the order Tarjan's algorithm closes
/// it; single vertices included. Iterative: deep graphs do not overflow
/// the stack.
pub fn strongly_connected_components(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let size = successors.len();
    let mut index = vec![UNSEEN; size];
    let mut low = vec![0; size];
    let mut on_stack = vec![false; size];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut components = Vec::new();
    for root in 0..size {
        if index[root] != UNSEEN {
            continue;
        }
        // The depth-first path: each vertex with its next edge to follow.
        let mut path = vec![(root, 0)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (vertex, ref mut edge)) = path.last_mut() {
            if let Some(&next) = successors[vertex].get(*edge) {
                *edge += 1;
                if index[next] == UNSEEN {
                    index[next] = next_index;
                    low[next] = next_index;
                    next_index += 1;
                    stack.push(next);
                    on_stack[next] = true;
                    path.push((next, 0));
                } else if on_stack[next] {
                    low[vertex] = low[vertex].min(index[next]);
                }
                continue;
            }
            path.pop();
            if let Some(&(parent, _)) = path.last() {
                low[parent] = low[parent].min(low[vertex]);
            }
            if low[vertex] == index[vertex] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == vertex {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

/// Which positions of layer `n`, by layer index, lie on a cycle of moves
/// without capture: in a strongly connected component of two or more, or
/// alone with a move back to themselves.
pub fn on_quiet_cycles(n: u32) -> Vec<bool> {
    let successors: Vec<Vec<usize>> = layer_positions(n)
        .map(|p| {
            p.legal_moves()
                .map(|pit| p.play(pit))
                .filter(|played| played.captured == 0)
                .map(|played| layer_index(&played.child) as usize)
                .collect()
        })
        .collect();
    let mut cyclic = vec![false; successors.len()];
    for component in strongly_connected_components(&successors) {
        let on_cycle = component.len() > 1 || successors[component[0]].contains(&component[0]);
        for member in component {
            cyclic[member] = on_cycle;
        }
    }
    cyclic
}
