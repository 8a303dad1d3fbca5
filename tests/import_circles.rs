//! The crate's modules form a hierarchy without import circles.
//!
//! Every `src/**/*.rs` file is read and every reference to another module
//! of the crate is turned into an edge between files: `use` declarations
//! (grouped, renamed, globbed, `pub use` re-exports included) and paths
//! written in code (`crate::a::f(..)`, `super::x::Y`, `child::g()`, or a
//! name bound by a `use`). A path goes to the file that declares the
//! longest module prefix of it: `crate::a::b::Item` is `src/a/b.rs` (or
//! `src/a/b/mod.rs`) when that file exists, else `src/a.rs` (or
//! `src/a/mod.rs`). Comments, doc comments and string literals are not
//! code and are skipped; a `mod x;` declaration is not an import.
//!
//! Two rules, both checked on the real tree:
//! * no two files import each other, directly or through others;
//! * at every level of the module tree, no two sibling modules import each
//!   other, directly or through other siblings, where a folder counts as
//!   one module holding everything beneath it.
//!
//! A parent's `pub use child::X` is an edge parent → child, so a child that
//! imports its parent's `mod.rs` closes a circle: what siblings share
//! belongs in a sibling file.
//!
//! The checker is tested on small in-memory trees first, so that the
//! real-tree test cannot pass because the checker saw nothing.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::Path;

use common::strongly_connected_components;

/// A module path from the crate root, without `crate`: `["book", "graph"]`.
type ModulePath = Vec<String>;

// ---------------------------------------------------------------------------
// Lexing: Rust source to the few tokens paths are made of.

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    PathSep,
    Open(char),
    Close(char),
    Punct(char),
}

#[derive(Clone, Debug)]
struct Lexed {
    token: Token,
    line: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_continue(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The tokens of `source`, comments (doc comments included), string and
/// character literals, lifetimes and numbers dropped.
fn lex(source: &str) -> Vec<Lexed> {
    let chars: Vec<char> = source.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Moves `i` past the string body whose opening quote is at `i`.
    let skip_string = |i: &mut usize, line: &mut usize| {
        *i += 1;
        while *i < chars.len() {
            match chars[*i] {
                '\\' => {
                    if at(*i + 1) == '\n' {
                        *line += 1;
                    }
                    *i += 2;
                }
                '"' => {
                    *i += 1;
                    return;
                }
                c => {
                    if c == '\n' {
                        *line += 1;
                    }
                    *i += 1;
                }
            }
        }
    };
    // Moves `i` past a raw string whose first `#` or quote is at `i`.
    let skip_raw_string = |i: &mut usize, line: &mut usize| {
        let mut hashes = 0;
        while at(*i) == '#' {
            hashes += 1;
            *i += 1;
        }
        *i += 1; // the opening quote
        while *i < chars.len() {
            if chars[*i] == '"' && (1..=hashes).all(|k| at(*i + k) == '#') {
                *i += 1 + hashes;
                return;
            }
            if chars[*i] == '\n' {
                *line += 1;
            }
            *i += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            // Block comments nest in Rust.
            let mut depth = 1;
            i += 2;
            while i < chars.len() && depth > 0 {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if c == '"' {
            skip_string(&mut i, &mut line);
        } else if c == '\'' {
            if at(i + 1) == '\\' {
                // An escaped character: '\n', '\'', '\u{..}'.
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                // A lifetime or a label: its name is no path.
                i += 1;
                while is_ident_continue(at(i)) {
                    i += 1;
                }
            }
        } else if is_ident_start(c) {
            let start = i;
            while is_ident_continue(at(i)) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let next = at(i);
            let raw_string_prefix = matches!(word.as_str(), "r" | "br" | "cr");
            if raw_string_prefix && (next == '"' || (next == '#' && matches!(at(i + 1), '#' | '"'))) {
                skip_raw_string(&mut i, &mut line);
            } else if matches!(word.as_str(), "b" | "c") && next == '"' {
                skip_string(&mut i, &mut line);
            } else if word == "b" && next == '\'' {
                // A byte literal: b'x' or b'\n'; the quote is lexed next.
                continue;
            } else if word == "r" && next == '#' && is_ident_start(at(i + 1)) {
                let start = i + 1;
                i += 1;
                while is_ident_continue(at(i)) {
                    i += 1;
                }
                tokens.push(Lexed { token: Token::Ident(chars[start..i].iter().collect()), line });
            } else {
                tokens.push(Lexed { token: Token::Ident(word), line });
            }
        } else if c.is_ascii_digit() {
            while is_ident_continue(at(i)) {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            tokens.push(Lexed { token: Token::PathSep, line });
            i += 2;
        } else {
            let token = match c {
                '{' | '(' | '[' => Token::Open(c),
                '}' | ')' | ']' => Token::Close(c),
                _ => Token::Punct(c),
            };
            tokens.push(Lexed { token, line });
            i += 1;
        }
    }
    tokens
}

// ---------------------------------------------------------------------------
// Parsing: the module references of one file, and the names its scopes bind.

#[derive(Clone, Debug)]
enum ReferenceKind {
    /// A `use` leaf (its binding, if any, is in the scope's names).
    Use,
    /// `use path::*`.
    Glob,
    /// A path written in code.
    Inline,
}

#[derive(Clone, Debug)]
struct Reference {
    line: usize,
    /// Inline modules (`mod tests { .. }`) around the reference.
    scope: Vec<String>,
    /// As written: `["super", "graph", "Node"]`; `["::", ..]` for a path
    /// from the extern prelude.
    path: Vec<String>,
    kind: ReferenceKind,
}

/// The names one module scope of a file declares or imports.
#[derive(Default, Debug)]
struct ScopeNames {
    /// `mod x;` and `mod x { .. }`.
    children: BTreeSet<String>,
    /// `use` leaves: the bound name and the path as written.
    bindings: Vec<(String, Vec<String>)>,
    /// `use path::*`: the paths as written.
    globs: Vec<Vec<String>>,
}

#[derive(Default, Debug)]
struct ParsedFile {
    references: Vec<Reference>,
    scopes: BTreeMap<Vec<String>, ScopeNames>,
}

impl ParsedFile {
    fn scope_mut(&mut self, scope: &[String]) -> &mut ScopeNames {
        self.scopes.entry(scope.to_vec()).or_default()
    }
}

fn ident(tokens: &[Lexed], i: usize) -> Option<&str> {
    match tokens.get(i).map(|t| &t.token) {
        Some(Token::Ident(name)) => Some(name),
        _ => None,
    }
}

fn is(tokens: &[Lexed], i: usize, token: &Token) -> bool {
    tokens.get(i).map(|t| &t.token) == Some(token)
}

/// Parses one use tree at `*i` under `prefix`, pushing a reference per
/// leaf; leaves `*i` after the tree.
fn parse_use_tree(
    tokens: &[Lexed],
    i: &mut usize,
    prefix: Vec<String>,
    line: usize,
    scope: &[String],
    parsed: &mut ParsedFile,
) {
    let mut path = prefix;
    if is(tokens, *i, &Token::PathSep) {
        // `use ::name` reaches only extern crates.
        *i += 1;
        if path.is_empty() {
            path.push("::".to_string());
        }
    }
    loop {
        match tokens.get(*i).map(|t| &t.token) {
            Some(Token::Ident(name)) => {
                path.push(name.clone());
                *i += 1;
                if is(tokens, *i, &Token::PathSep) {
                    *i += 1;
                } else {
                    break;
                }
            }
            Some(Token::Punct('*')) => {
                *i += 1;
                parsed.scope_mut(scope).globs.push(path.clone());
                parsed.references.push(Reference {
                    line,
                    scope: scope.to_vec(),
                    path,
                    kind: ReferenceKind::Glob,
                });
                return;
            }
            Some(Token::Open('{')) => {
                *i += 1;
                while *i < tokens.len() && !is(tokens, *i, &Token::Close('}')) {
                    parse_use_tree(tokens, i, path.clone(), line, scope, parsed);
                    if is(tokens, *i, &Token::Punct(',')) {
                        *i += 1;
                    } else if !is(tokens, *i, &Token::Close('}')) {
                        // Not a use tree after all: leave it to the caller.
                        return;
                    }
                }
                *i += 1;
                return;
            }
            _ => break,
        }
    }
    if path.last().map(String::as_str) == Some("self") {
        path.pop();
    }
    let mut binding = path.last().cloned();
    if ident(tokens, *i) == Some("as") {
        binding = ident(tokens, *i + 1).filter(|name| *name != "_").map(str::to_string);
        *i += 2;
    }
    if path.is_empty() || path == ["::"] {
        return;
    }
    if let Some(name) = &binding {
        parsed.scope_mut(scope).bindings.push((name.clone(), path.clone()));
    }
    parsed.references.push(Reference { line, scope: scope.to_vec(), path, kind: ReferenceKind::Use });
}

fn parse(source: &str) -> ParsedFile {
    let tokens = lex(source);
    let mut parsed = ParsedFile::default();
    parsed.scope_mut(&[]);
    // Inline modules open around the current token, with the brace depth
    // their body opened at.
    let mut inline_modules: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        let scope: Vec<String> = inline_modules.iter().map(|(name, _)| name.clone()).collect();
        let line = tokens[i].line;
        match &tokens[i].token {
            Token::Ident(word) if word == "use" => {
                i += 1;
                parse_use_tree(&tokens, &mut i, Vec::new(), line, &scope, &mut parsed);
                while i < tokens.len() && !is(&tokens, i, &Token::Punct(';')) {
                    i += 1;
                }
            }
            Token::Ident(word) if word == "mod" && ident(&tokens, i + 1).is_some() => {
                let name = ident(&tokens, i + 1).unwrap_or_default().to_string();
                parsed.scope_mut(&scope).children.insert(name.clone());
                if is(&tokens, i + 2, &Token::Open('{')) {
                    depth += 1;
                    inline_modules.push((name.clone(), depth));
                    parsed.scope_mut(&[scope, vec![name]].concat());
                    i += 3;
                } else {
                    i += 2;
                }
            }
            Token::Ident(word) if word == "pub" && is(&tokens, i + 1, &Token::Open('(')) => {
                // `pub(in crate::a)` names where an item is visible, not
                // what it uses.
                while i < tokens.len() && !is(&tokens, i, &Token::Close(')')) {
                    i += 1;
                }
                i += 1;
            }
            Token::Ident(first)
                if is(&tokens, i + 1, &Token::PathSep)
                    && (i == 0 || !is(&tokens, i - 1, &Token::PathSep)) =>
            {
                let mut path = vec![first.clone()];
                i += 1;
                while is(&tokens, i, &Token::PathSep) {
                    match ident(&tokens, i + 1) {
                        Some(name) => {
                            path.push(name.to_string());
                            i += 2;
                        }
                        None => break,
                    }
                }
                if path.len() >= 2 {
                    parsed.references.push(Reference { line, scope, path, kind: ReferenceKind::Inline });
                }
            }
            Token::Open('{') => {
                depth += 1;
                i += 1;
            }
            Token::Close('}') => {
                if inline_modules.last().is_some_and(|&(_, opened)| opened == depth) {
                    inline_modules.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    parsed
}

// ---------------------------------------------------------------------------
// Resolving paths to files, and the edges between files.

/// The module a source file declares, from its path under the crate:
/// `src/lib.rs` is the root, `src/a/mod.rs` and `src/a.rs` are `a`.
fn module_of(file: &str) -> ModulePath {
    let inner = file.strip_prefix("src/").unwrap_or(file);
    let inner = inner.strip_suffix(".rs").unwrap_or(inner);
    let mut parts: ModulePath = inner.split('/').map(str::to_string).collect();
    if parts.last().map(String::as_str) == Some("mod") || parts == ["lib"] {
        parts.pop();
    }
    parts
}

struct Crate {
    /// File name and parsed contents, in name order.
    files: Vec<(String, ParsedFile)>,
    /// The file declaring each module that has a file.
    by_module: BTreeMap<ModulePath, usize>,
}

/// Resolution follows `use` bindings and globs, which may chain; a chain
/// this long is a loop (such as `use rayon;`, whose path names itself).
const MAX_RESOLUTION_DEPTH: usize = 16;

impl Crate {
    fn new(sources: &[(String, String)]) -> Crate {
        let mut files: Vec<(String, ParsedFile)> =
            sources.iter().map(|(name, text)| (name.clone(), parse(text))).collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let by_module = files.iter().enumerate().map(|(index, (name, _))| (module_of(name), index)).collect();
        Crate { files, by_module }
    }

    /// The file holding module `module`: the one declaring its longest
    /// prefix, with the inline modules left over.
    fn file_of(&self, module: &[String]) -> (usize, Vec<String>) {
        for length in (0..=module.len()).rev() {
            if let Some(&file) = self.by_module.get(&module[..length]) {
                return (file, module[length..].to_vec());
            }
        }
        panic!("the crate has no root file (src/lib.rs)")
    }

    /// The absolute path of `path` as written in `file`'s `scope`, or
    /// `None` if it leaves the crate (std, extern crates, local items).
    fn resolve(&self, file: usize, scope: &[String], path: &[String], depth: usize) -> Option<ModulePath> {
        if depth > MAX_RESOLUTION_DEPTH {
            return None;
        }
        let here: ModulePath = [module_of(&self.files[file].0), scope.to_vec()].concat();
        let (first, rest) = path.split_first()?;
        let mut rest = rest;
        let base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => here,
            "super" => {
                let mut base = here;
                base.pop()?;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                base
            }
            _ => self.lookup(&here, first, depth + 1)?,
        };
        Some([base, rest.to_vec()].concat())
    }

    /// What `name` means inside module `module`: a child module, a `use`
    /// binding, or a name a glob brings in.
    fn lookup(&self, module: &[String], name: &str, depth: usize) -> Option<ModulePath> {
        if depth > MAX_RESOLUTION_DEPTH {
            return None;
        }
        let (file, scope) = self.file_of(module);
        let names = self.files[file].1.scopes.get(&scope)?;
        if names.children.contains(name) {
            return Some([module.to_vec(), vec![name.to_string()]].concat());
        }
        if let Some((_, path)) = names.bindings.iter().find(|(bound, _)| bound == name) {
            return self.resolve(file, &scope, path, depth + 1);
        }
        names.globs.iter().find_map(|glob| {
            let source = self.resolve(file, &scope, glob, depth + 1)?;
            self.lookup(&source, name, depth + 1)
        })
    }

    /// Every edge between two different files, with the references that
    /// make it ("`crate::error::MoveError` (line 5)").
    fn edges(&self) -> BTreeMap<(usize, usize), Vec<String>> {
        let mut edges: BTreeMap<(usize, usize), Vec<String>> = BTreeMap::new();
        for (from, (_, parsed)) in self.files.iter().enumerate() {
            for reference in &parsed.references {
                let Some(target) = self.resolve(from, &reference.scope, &reference.path, 0) else {
                    continue;
                };
                let (to, _) = self.file_of(&target);
                if to != from {
                    let written = reference.path.join("::");
                    let glob = if matches!(reference.kind, ReferenceKind::Glob) { "::*" } else { "" };
                    let name = format!("`{written}{glob}`");
                    // One mention per name, at its first line: a type
                    // named fifty times ties the files no tighter.
                    let names = edges.entry((from, to)).or_default();
                    if !names.iter().any(|known| known.starts_with(&format!("{name} "))) {
                        names.push(format!("{name} (line {})", reference.line));
                    }
                }
            }
        }
        edges
    }
}

// ---------------------------------------------------------------------------
// Circles: strongly connected components of a directed graph.

/// The strongly connected components with more than one node, each sorted,
/// of the graph on `0..nodes`.
fn circles(nodes: usize, edges: &BTreeSet<(usize, usize)>) -> Vec<Vec<usize>> {
    let mut successors = vec![Vec::new(); nodes];
    for &(from, to) in edges {
        successors[from].push(to);
    }
    let mut found: Vec<Vec<usize>> = strongly_connected_components(&successors)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|mut component| {
            component.sort_unstable();
            component
        })
        .collect();
    found.sort();
    found
}

/// A shortest circle through the first node of `component`, as nodes with
/// the first repeated at the end.
fn shortest_circle(component: &[usize], edges: &BTreeSet<(usize, usize)>) -> Vec<usize> {
    let start = component[0];
    let inside: BTreeSet<usize> = component.iter().copied().collect();
    let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &(_, next) in edges.range((node, 0)..=(node, usize::MAX)) {
            if !inside.contains(&next) {
                continue;
            }
            if next == start {
                let mut circle = vec![start, node];
                let mut back = node;
                while back != start {
                    back = came_from[&back];
                    circle.push(back);
                }
                circle.reverse();
                return circle;
            }
            if let std::collections::btree_map::Entry::Vacant(entry) = came_from.entry(next) {
                entry.insert(node);
                queue.push_back(next);
            }
        }
    }
    unreachable!("a strongly connected component has a circle through each node")
}

// ---------------------------------------------------------------------------
// The analysis of a whole crate.

/// One circle: the names of its members, a shortest loop through them,
/// and every edge between two members with the references that make it.
#[derive(Debug)]
struct Circle {
    /// For sibling circles, the parent module (`crate`, `crate::book`).
    level: Option<String>,
    members: Vec<String>,
    loop_through: Vec<String>,
    ties: Vec<(String, String, Vec<String>)>,
}

impl Circle {
    fn describe(&self, out: &mut String) {
        let level = self.level.as_ref().map(|level| format!(" in {level}")).unwrap_or_default();
        let _ = writeln!(out, "circle{level}: {}", self.members.join(", "));
        let _ = writeln!(out, "  shortest loop: {}", self.loop_through.join(" -> "));
        for (from, to, names) in &self.ties {
            let _ = writeln!(out, "  {from} -> {to}: {}", names.join(", "));
        }
    }
}

#[derive(Debug)]
struct Analysis {
    files: usize,
    /// Distinct ordered pairs of files, one importing the other.
    edges: usize,
    /// Which files each file imports, by name: for the tests.
    imports: BTreeMap<String, BTreeSet<String>>,
    file_circles: Vec<Circle>,
    sibling_circles: Vec<Circle>,
}

impl Analysis {
    fn report(&self) -> String {
        let mut out = String::new();
        if !self.file_circles.is_empty() {
            let _ = writeln!(out, "{} import circle(s) between files:", self.file_circles.len());
            for circle in &self.file_circles {
                circle.describe(&mut out);
            }
        }
        if !self.sibling_circles.is_empty() {
            let _ = writeln!(out, "{} import circle(s) between sibling modules:", self.sibling_circles.len());
            for circle in &self.sibling_circles {
                circle.describe(&mut out);
            }
        }
        out
    }
}

fn circle_of(
    level: Option<String>,
    component: &[usize],
    names: &[String],
    edges: &BTreeMap<(usize, usize), Vec<String>>,
) -> Circle {
    let pairs: BTreeSet<(usize, usize)> = edges.keys().copied().collect();
    let members: BTreeSet<usize> = component.iter().copied().collect();
    let ties = edges
        .iter()
        .filter(|((from, to), _)| members.contains(from) && members.contains(to))
        .map(|(&(from, to), why)| (names[from].clone(), names[to].clone(), why.clone()))
        .collect();
    Circle {
        level,
        members: component.iter().map(|&node| names[node].clone()).collect(),
        loop_through: shortest_circle(component, &pairs)
            .into_iter()
            .map(|node| names[node].clone())
            .collect(),
        ties,
    }
}

fn analyse(sources: &[(String, String)]) -> Analysis {
    let krate = Crate::new(sources);
    let names: Vec<String> = krate.files.iter().map(|(name, _)| name.clone()).collect();
    let edges = krate.edges();

    let pairs: BTreeSet<(usize, usize)> = edges.keys().copied().collect();
    let file_circles = circles(names.len(), &pairs)
        .iter()
        .map(|component| circle_of(None, component, &names, &edges))
        .collect();

    // Sibling edges: an edge between files under two different children of
    // their deepest common module is an edge between those children.
    // level -> child names, and (level, from child, to child) -> references.
    let mut children: BTreeMap<ModulePath, BTreeSet<String>> = BTreeMap::new();
    let mut sibling_edges: BTreeMap<ModulePath, BTreeMap<(String, String), Vec<String>>> = BTreeMap::new();
    for (&(from, to), why) in &edges {
        let (from_module, to_module) = (module_of(&names[from]), module_of(&names[to]));
        let common = from_module.iter().zip(&to_module).take_while(|(a, b)| a == b).count();
        if common < from_module.len() && common < to_module.len() {
            let level = from_module[..common].to_vec();
            let (a, b) = (from_module[common].clone(), to_module[common].clone());
            children.entry(level.clone()).or_default().extend([a.clone(), b.clone()]);
            sibling_edges
                .entry(level)
                .or_default()
                .entry((a, b))
                .or_default()
                .extend(why.iter().map(|reference| format!("{} {reference}", names[from])));
        }
    }
    let mut sibling_circles = Vec::new();
    for (level, by_pair) in &sibling_edges {
        let child_names: Vec<String> = children[level].iter().cloned().collect();
        let index_of = |name: &String| child_names.iter().position(|child| child == name).unwrap_or_default();
        let indexed: BTreeMap<(usize, usize), Vec<String>> =
            by_pair.iter().map(|((a, b), why)| ((index_of(a), index_of(b)), why.clone())).collect();
        let pairs: BTreeSet<(usize, usize)> = indexed.keys().copied().collect();
        let level_name = ["crate".to_string()].iter().chain(level).cloned().collect::<Vec<_>>().join("::");
        for component in circles(child_names.len(), &pairs) {
            sibling_circles.push(circle_of(Some(level_name.clone()), &component, &child_names, &indexed));
        }
    }

    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for &(from, to) in edges.keys() {
        imports.entry(names[from].clone()).or_default().insert(names[to].clone());
    }
    Analysis { files: names.len(), edges: edges.len(), imports, file_circles, sibling_circles }
}

// ---------------------------------------------------------------------------
// The real tree.

fn read_sources(directory: &Path, under_crate: &str, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(directory)
        .unwrap_or_else(|error| panic!("reading {}: {error}", directory.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|name| name.to_str()).expect("a UTF-8 file name").to_string();
        let relative = format!("{under_crate}/{name}");
        if path.is_dir() {
            read_sources(&path, &relative, out);
        } else if name.ends_with(".rs") {
            let text =
                std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("reading {relative}: {error}"));
            out.push((relative, text));
        }
    }
}

fn real_tree() -> Analysis {
    let mut sources = Vec::new();
    read_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), "src", &mut sources);
    analyse(&sources)
}

#[test]
fn the_checker_sees_the_whole_crate() {
    let analysis = real_tree();
    assert!(analysis.files > 50, "only {} source files found", analysis.files);
    assert!(analysis.edges > 150, "only {} edges between files found", analysis.edges);
    // Known edges of each kind: a `use crate::..`, a `pub use` of a child,
    // a path in code.
    let imports = |file: &str| analysis.imports.get(file).cloned().unwrap_or_default();
    assert!(imports("src/lib.rs").contains("src/game.rs"), "lib.rs re-exports game::GameState");
    assert!(imports("src/book/mod.rs").contains("src/book/store.rs"), "book re-exports the store");
    assert!(imports("src/notation.rs").contains("src/game.rs"));
}

#[test]
fn the_crate_has_no_import_circles() {
    let analysis = real_tree();
    let report = analysis.report();
    assert!(report.is_empty(), "\n{report}");
}

// ---------------------------------------------------------------------------
// The checker on small trees.

fn tree(files: &[(&str, &str)]) -> Analysis {
    let sources: Vec<(String, String)> =
        files.iter().map(|(name, text)| (name.to_string(), text.to_string())).collect();
    analyse(&sources)
}

fn imported_by(analysis: &Analysis, file: &str) -> Vec<String> {
    analysis.imports.get(file).map(|to| to.iter().cloned().collect()).unwrap_or_default()
}

#[test]
fn a_circle_between_two_files_is_found_with_its_names() {
    let analysis = tree(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", "use crate::b::Bee;\npub struct Ant;\n"),
        ("src/b.rs", "pub struct Bee;\npub fn make() -> crate::a::Ant { crate::a::Ant }\n"),
    ]);
    assert_eq!(analysis.edges, 2);
    assert_eq!(analysis.file_circles.len(), 1, "{}", analysis.report());
    let circle = &analysis.file_circles[0];
    assert_eq!(circle.members, ["src/a.rs", "src/b.rs"]);
    assert_eq!(circle.loop_through, ["src/a.rs", "src/b.rs", "src/a.rs"]);
    let report = analysis.report();
    assert!(report.contains("src/a.rs -> src/b.rs: `crate::b::Bee` (line 1)\n"), "{report}");
    assert!(report.contains("src/b.rs -> src/a.rs: `crate::a::Ant` (line 2)\n"), "{report}");
    // The same two modules are siblings under the root.
    assert_eq!(analysis.sibling_circles.len(), 1);
    assert_eq!(analysis.sibling_circles[0].level.as_deref(), Some("crate"));
    assert_eq!(analysis.sibling_circles[0].members, ["a", "b"]);
}

#[test]
fn a_circle_through_a_third_file_is_found() {
    let analysis = tree(&[
        ("src/lib.rs", "mod a; mod b; mod c;"),
        ("src/a.rs", "use crate::b::B;"),
        ("src/b.rs", "fn f() { super::c::g() }"),
        ("src/c.rs", "pub fn g() { let _ = crate::a::A::new(); }"),
    ]);
    assert_eq!(analysis.file_circles.len(), 1, "{}", analysis.report());
    assert_eq!(analysis.file_circles[0].members, ["src/a.rs", "src/b.rs", "src/c.rs"]);
    assert_eq!(analysis.file_circles[0].loop_through.len(), 4);
}

#[test]
fn a_chain_is_not_a_circle() {
    let analysis = tree(&[
        ("src/lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub use a::Top;\n"),
        ("src/a.rs", "use crate::b::Middle;\npub struct Top(Middle);\n"),
        ("src/b.rs", "pub struct Middle(pub crate::c::Bottom);\n"),
        ("src/c.rs", "pub struct Bottom;\n"),
    ]);
    assert_eq!(analysis.edges, 3);
    assert_eq!(imported_by(&analysis, "src/lib.rs"), ["src/a.rs"]);
    assert_eq!(imported_by(&analysis, "src/a.rs"), ["src/b.rs"]);
    assert_eq!(imported_by(&analysis, "src/b.rs"), ["src/c.rs"]);
    assert!(analysis.file_circles.is_empty() && analysis.sibling_circles.is_empty(), "{}", analysis.report());
}

#[test]
fn grouped_and_renamed_uses_reach_the_deepest_module_file() {
    let analysis = tree(&[
        ("src/lib.rs", "mod a; mod d; mod e; mod g;"),
        ("src/a.rs", "pub struct X;"),
        ("src/d/mod.rs", "mod f; pub struct Y;"),
        ("src/d/f.rs", "pub struct Z;"),
        ("src/e.rs", "use crate::{a::X, d::{f::{Z as Zed}, Y}};"),
        ("src/g.rs", "use crate::d::{self as dee};\nfn g() { dee::f::Z; }"),
    ]);
    assert_eq!(imported_by(&analysis, "src/e.rs"), ["src/a.rs", "src/d/f.rs", "src/d/mod.rs"]);
    // `dee` is `crate::d`, so `dee::f::Z` is in d/f.rs.
    assert_eq!(imported_by(&analysis, "src/g.rs"), ["src/d/f.rs", "src/d/mod.rs"]);
}

#[test]
fn comments_doc_comments_and_strings_are_not_imports() {
    let analysis = tree(&[
        ("src/lib.rs", "mod a; mod b;"),
        ("src/a.rs", "pub struct A;"),
        (
            "src/b.rs",
            concat!(
                "//! See [`crate::a::A`].\n",
                "// use crate::a::A;\n",
                "/* crate::a::A /* nested */ crate::a::A */\n",
                "/// Unlike [`crate::a::A`].\n",
                "pub fn f() -> &'static str { \"crate::a::A\" }\n",
                "pub fn g() -> &'static str { r#\"use crate::a::A;\"# }\n",
                "pub fn h() -> char { '\\'' }\n",
                "pub fn i() -> u8 { b'\"' }\n",
                "pub struct B;\n",
            ),
        ),
    ]);
    assert_eq!(analysis.edges, 0, "{:?}", analysis.imports);
    // The same code importing for real is seen, after all those literals.
    let analysis = tree(&[
        ("src/lib.rs", "mod a; mod b;"),
        ("src/a.rs", "pub struct A;"),
        ("src/b.rs", "pub fn h() -> char { '\\'' }\nfn i() -> u8 { b'\"' }\nuse crate::a::A;"),
    ]);
    assert_eq!(imported_by(&analysis, "src/b.rs"), ["src/a.rs"]);
}

#[test]
fn a_module_declaration_is_not_an_import_but_a_re_export_is() {
    let declared_only = tree(&[("src/lib.rs", "pub mod a;"), ("src/a.rs", "pub struct A;")]);
    assert_eq!(declared_only.edges, 0);
    // A child importing its parent's mod.rs while the parent re-exports
    // the child is a circle.
    let analysis = tree(&[
        ("src/lib.rs", "pub mod p;"),
        ("src/p/mod.rs", "mod child;\npub use child::C;\npub struct Shared;\n"),
        ("src/p/child.rs", "use super::Shared;\npub struct C(Shared);\n"),
    ]);
    assert_eq!(analysis.file_circles.len(), 1, "{}", analysis.report());
    assert_eq!(analysis.file_circles[0].members, ["src/p/child.rs", "src/p/mod.rs"]);
    // A parent is not a sibling of its children.
    assert!(analysis.sibling_circles.is_empty());
}

#[test]
fn tests_modules_globbing_their_own_file_are_not_edges() {
    let analysis = tree(&[
        ("src/lib.rs", "pub mod p;"),
        ("src/p/mod.rs", "pub mod q;\npub mod r;\n"),
        (
            "src/p/q.rs",
            "pub struct Q;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    fn f() -> Q { Q }\n}\n",
        ),
        ("src/p/r.rs", "fn g() { super::super::p::q::Q; }\nmod tests { use super::super::q::Q; }\n"),
    ]);
    assert_eq!(imported_by(&analysis, "src/p/q.rs"), Vec::<String>::new());
    assert_eq!(imported_by(&analysis, "src/p/r.rs"), ["src/p/q.rs"]);
}

#[test]
fn names_bound_by_use_and_globs_are_followed_in_code() {
    let analysis = tree(&[
        ("src/lib.rs", "mod a; mod b; mod c;"),
        ("src/a/mod.rs", "pub mod deep;"),
        ("src/a/deep.rs", "pub fn f() {}"),
        ("src/b.rs", "use crate::a;\nfn g() { a::deep::f() }\n"),
        ("src/c.rs", "mod inner { use crate::a::*; fn h() { deep::f() } }"),
    ]);
    assert_eq!(imported_by(&analysis, "src/b.rs"), ["src/a/deep.rs", "src/a/mod.rs"]);
    assert_eq!(imported_by(&analysis, "src/c.rs"), ["src/a/deep.rs", "src/a/mod.rs"]);
}

#[test]
fn folders_are_one_module_among_their_siblings() {
    // No two files import each other, but the folder x imports y (from
    // x/p.rs) and y imports the folder x (x/q.rs).
    let analysis = tree(&[
        ("src/lib.rs", "mod x; mod y;"),
        ("src/x/mod.rs", "mod p; mod q;"),
        ("src/x/p.rs", "use crate::y::Why;"),
        ("src/x/q.rs", "pub struct Queue;"),
        ("src/y.rs", "pub struct Why(crate::x::q::Queue);"),
    ]);
    assert!(analysis.file_circles.is_empty(), "{}", analysis.report());
    assert_eq!(analysis.sibling_circles.len(), 1, "{}", analysis.report());
    let circle = &analysis.sibling_circles[0];
    assert_eq!(circle.level.as_deref(), Some("crate"));
    assert_eq!(circle.members, ["x", "y"]);
    let report = analysis.report();
    assert!(report.contains("x -> y: src/x/p.rs `crate::y::Why` (line 1)\n"), "{report}");
    assert!(report.contains("y -> x: src/y.rs `crate::x::q::Queue` (line 1)\n"), "{report}");
}

#[test]
fn extern_crates_and_std_are_not_crate_modules() {
    let analysis = tree(&[
        ("src/lib.rs", "mod a; mod fmt;"),
        ("src/fmt.rs", "pub struct F;"),
        ("src/a.rs", "use std::fmt;\nuse ::rayon::prelude::*;\nfn f() { fmt::Display; Vec::<u8>::new(); }"),
    ]);
    assert_eq!(analysis.edges, 0, "{:?}", analysis.imports);
}
