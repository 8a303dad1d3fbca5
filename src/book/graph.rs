//! The book graph: every position reached from the root, transpositions
//! merged by the engine's 44-bit state key.
//!
//! A node holds its state key, what the evaluator said of it (the search
//! value for its side to move, the depth and nodes that produced it, the
//! best move), its kind (leaf, expanded, terminal), its children (one edge
//! per legal move, once expanded) and two derived numbers: the backed-up
//! negamax value and the drop-out expansion priority (`dropout`).
//!
//! Values are engine units from the node's own side to move:
//! * a **terminal** node (the game is over) has the exact value: +1000 won,
//!   −1000 lost, 0 drawn (not the score difference: the engine's units say
//!   ±1000 for a decided game);
//! * a **leaf** (evaluated, not expanded) has its search value;
//! * an **expanded** node has `max over children of −value(child)`.
//!
//! The graph stays acyclic. Stores are part of the state key and only
//! grow, so a cycle can only consist of moves without captures; that is a
//! repetition, which ends the game. An expansion whose move leads (without
//! a capture) to a state from which the expanded node can already be
//! reached therefore gets a **repetition edge**: it points at the existing
//! node but carries its own exact value (each player takes their own
//! side), and takes no part in the child's value or priority. This is
//! exact for games that come through the child, an approximation for those
//! that reach the parent another way (rare in openings, counted by
//! `stats`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;

use super::eval::{repetition_value, terminal_value};
use super::priority::{child_term, Omega, INFINITE};
use crate::game::GameState;
use crate::rank::{state_from_key, state_key};
use crate::rules::ROW;

/// Index of a node; the root is 0.
pub type NodeId = u32;

/// Where a node stands in the growth.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum NodeKind {
    /// Evaluated, children not generated yet.
    Leaf,
    /// Every legal move has an edge.
    Expanded,
    /// The game is over: exact value, never expanded.
    Terminal,
}

/// One move of an expanded node.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Edge {
    /// The mover's pit, 0..6 (A..F or a..f).
    pub pit: u8,
    /// The node the move leads to (for a repetition edge, the existing node
    /// it points back at).
    pub child: NodeId,
    /// Set on a repetition edge: its exact value for the child's side to
    /// move.
    pub repetition: Option<i16>,
    /// Expansions whose selection went through this edge.
    pub visits: u64,
}

/// What the evaluator said of a node (or the exact value of a finished
/// game, with depth and nodes 0).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct NodeEval {
    /// Side-to-move view, engine units, within ±1000.
    pub score: i16,
    /// The search depth that produced it.
    pub depth: u16,
    /// The nodes that search used.
    pub nodes: u64,
    /// The search's best move (pit 0..6).
    pub best: Option<u8>,
}

/// One game state of the book (transpositions share a node).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Node {
    /// The engine's 44-bit key of the state (pits, stores, side to move;
    /// no history).
    pub key: u64,
    /// Leaf, expanded or terminal.
    pub kind: NodeKind,
    /// What the evaluator said of the state when it was added.
    pub eval: NodeEval,
    /// Expansions whose selection reached this node (its own included).
    pub visits: u64,
    /// Backed-up negamax value (side-to-move view).
    pub value: i32,
    /// Drop-out expansion priority in micro-plies ([`INFINITE`]: never).
    pub priority: i64,
    /// Children, in pit order (expanded nodes only).
    pub edges: Vec<Edge>,
    /// Nodes with a (non-repetition) edge to this one.
    pub(crate) parents: Vec<NodeId>,
    /// Seeds in both stores.
    pub(crate) captured: u8,
    pub(crate) in_flight: bool,
}

/// Why a graph refused an expansion ([`BookGraph::expand_with`]) or the
/// nodes of a checkpoint (`store`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GraphError {
    /// No node has this id.
    NoSuchNode(NodeId),
    /// The node to expand is not a leaf.
    NotALeaf(NodeId),
    /// The node's key is no state.
    BadKey(NodeId),
    /// An edge points past the last node.
    EdgeOutside {
        /// The node the edge leaves.
        node: usize,
        /// Where it points.
        child: NodeId,
        /// How many nodes there are.
        count: usize,
    },
    /// The node's (non-repetition) edges lead back to it.
    Cycle {
        /// A node on the cycle.
        node: usize,
    },
    /// Two nodes have the same state key.
    DuplicateKey {
        /// The second node with the key.
        node: usize,
        /// The key.
        key: u64,
    },
    /// A pending selection's path is not a descent along the graph's
    /// edges from the root.
    PendingPathLeavesGraph {
        /// The selection's place among the pending ones.
        pending: usize,
        /// Where the path leaves the graph.
        node: NodeId,
    },
    /// A pending selection does not end at a leaf no other selection
    /// holds.
    PendingNotADistinctLeaf {
        /// The selection's place among the pending ones.
        pending: usize,
        /// The leaf it names.
        leaf: NodeId,
    },
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::NoSuchNode(id) => write!(f, "no node {id}"),
            GraphError::NotALeaf(id) => write!(f, "node {id} is not a leaf"),
            GraphError::BadKey(id) => write!(f, "node {id}: bad key"),
            GraphError::EdgeOutside { node, child, count } => {
                write!(f, "node {node}: edge to node {child} of {count}")
            }
            GraphError::Cycle { node } => write!(f, "node {node}: its edges form a cycle"),
            GraphError::DuplicateKey { node, key } => write!(f, "node {node}: key 0x{key:X} appears twice"),
            GraphError::PendingPathLeavesGraph { pending, node } => {
                write!(f, "pending leaf {pending}: its path leaves the graph at node {node}")
            }
            GraphError::PendingNotADistinctLeaf { pending, leaf } => {
                write!(f, "pending leaf {pending}: node {leaf} is not a distinct leaf at its path's end")
            }
        }
    }
}

impl std::error::Error for GraphError {}

/// A leaf chosen for expansion and the way the descent took to it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Selection {
    /// The leaf to expand.
    pub leaf: NodeId,
    /// `(node, edge index)` from the root down to the leaf's parent.
    pub path: Vec<(NodeId, usize)>,
}

/// The book: nodes, the key index, ω, the expansions done, and the rest
/// of a batch a growth stopped in the middle of.
#[derive(Clone, Debug)]
pub struct BookGraph {
    omega: Omega,
    nodes: Vec<Node>,
    index: HashMap<u64, NodeId>,
    expansions: u64,
    /// Leaves selected with the current batch and not yet expanded, in
    /// selection order, each in flight: a growth whose budget ended inside
    /// a batch leaves them for the next one, which expands them before it
    /// selects anything (`grow`).
    pending: Vec<Selection>,
}

impl PartialEq for BookGraph {
    fn eq(&self, other: &BookGraph) -> bool {
        self.omega == other.omega
            && self.nodes == other.nodes
            && self.expansions == other.expansions
            && self.pending == other.pending
    }
}

impl BookGraph {
    /// A book holding only its root.
    pub fn new(omega: Omega, root_key: u64, captured: u8, kind: NodeKind, eval: NodeEval) -> BookGraph {
        let mut graph =
            BookGraph { omega, nodes: Vec::new(), index: HashMap::new(), expansions: 0, pending: Vec::new() };
        graph.add_node(root_key, captured, kind, eval);
        graph
    }

    /// ω, the weight of a deviation in the priorities.
    pub fn omega(&self) -> Omega {
        self.omega
    }

    /// The root's id (always 0).
    pub fn root(&self) -> NodeId {
        0
    }

    /// The node `id`; panics if there is no such node.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// Every node, indexed by [`NodeId`].
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no node; one made by [`BookGraph::new`] always
    /// holds its root.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node of a state key.
    pub fn get(&self, key: u64) -> Option<NodeId> {
        self.index.get(&key).copied()
    }

    /// Leaves expanded so far.
    pub fn expansions(&self) -> u64 {
        self.expansions
    }

    /// The value of an edge's child for the child's side to move.
    pub fn edge_value(&self, edge: &Edge) -> i32 {
        match edge.repetition {
            Some(value) => value as i32,
            None => self.node(edge.child).value,
        }
    }

    /// The value of an edge's move for the player who plays it.
    pub fn move_value(&self, edge: &Edge) -> i32 {
        -self.edge_value(edge)
    }

    /// The priority an edge's child brings (∞ for a repetition edge).
    pub fn edge_priority(&self, edge: &Edge) -> i64 {
        match edge.repetition {
            Some(_) => INFINITE,
            None => self.node(edge.child).priority,
        }
    }

    /// The edge of the best move of an expanded node (highest move value,
    /// the first pit on a tie).
    pub fn best_edge(&self, id: NodeId) -> Option<&Edge> {
        let mut best: Option<&Edge> = None;
        for edge in &self.node(id).edges {
            if best.is_none_or(|b| self.move_value(edge) > self.move_value(b)) {
                best = Some(edge);
            }
        }
        best
    }

    /// The principal line from `from`: best moves while the node is
    /// expanded, as `(node, edge)` pairs; it stops after a repetition edge.
    pub fn principal_line(&self, from: NodeId) -> Vec<(NodeId, Edge)> {
        let mut line = Vec::new();
        let mut id = from;
        while let Some(edge) = self.best_edge(id) {
            line.push((id, *edge));
            if edge.repetition.is_some() || line.len() > self.nodes.len() {
                break;
            }
            id = edge.child;
        }
        line
    }

    /// Plies of book along the principal line from `edge`'s move on, the
    /// move included; `u32::MAX` when its value is exact (a repetition, or
    /// a finished game).
    pub fn move_depth(&self, edge: &Edge) -> u32 {
        if edge.repetition.is_some() || self.node(edge.child).kind == NodeKind::Terminal {
            return u32::MAX;
        }
        1 + self.principal_line(edge.child).len() as u32
    }

    /// Whether the value of `edge`'s move is not what the rules give,
    /// along the move's principal line, to a game whose states since the
    /// last capture have the keys `seen` (the node's own included,
    /// [`crate::rank::keys_since_capture`]): the line ends with a
    /// repetition edge whose repeated state that game has not seen (the
    /// book counts a repetition that does not happen), or it comes back to
    /// a state the game has seen (a repetition the book does not count).
    /// The principal line only: the value of a refuted alternative on it
    /// can rest on a repetition too.
    pub fn repetition_caveat(&self, edge: &Edge, seen: &[u64]) -> bool {
        let mut seen = seen.to_vec();
        let mut edge = *edge;
        // The edges other than repetition edges form no cycle: the line
        // ends within as many moves as there are nodes.
        for _ in 0..=self.nodes.len() {
            let child = self.node(edge.child).key;
            if edge.repetition.is_some() {
                return !seen.contains(&child);
            }
            if seen.contains(&child) {
                return true;
            }
            seen.push(child);
            match self.best_edge(edge.child) {
                Some(next) => edge = *next,
                None => return false,
            }
        }
        true
    }

    /// Shortest distance in plies from the root to every node
    /// (`u32::MAX` if unreachable), over non-repetition edges.
    pub fn depths(&self) -> Vec<u32> {
        let mut depth = vec![u32::MAX; self.nodes.len()];
        let mut queue = VecDeque::from([self.root()]);
        depth[0] = 0;
        while let Some(id) = queue.pop_front() {
            let d = depth[id as usize];
            for edge in &self.node(id).edges {
                if edge.repetition.is_none() && depth[edge.child as usize] == u32::MAX {
                    depth[edge.child as usize] = d + 1;
                    queue.push_back(edge.child);
                }
            }
        }
        depth
    }

    /// A book holding the start of the game, valued `eval`.
    pub fn start(omega: Omega, eval: NodeEval) -> BookGraph {
        let start = GameState::start();
        BookGraph::new(omega, state_key(&start), 0, NodeKind::Leaf, eval)
    }

    /// Expands one leaf on its own (the growth does it in batches): every
    /// legal move gets an edge; a child already in the book is linked, a new
    /// one is added, valued by `evaluate` (a finished game gets its exact
    /// value instead). Values and priorities are updated. For tools and
    /// tests that build books by hand.
    pub fn expand_with(
        &mut self,
        leaf: NodeId,
        mut evaluate: impl FnMut(&GameState) -> NodeEval,
    ) -> Result<(), GraphError> {
        let node = self.nodes.get(leaf as usize).ok_or(GraphError::NoSuchNode(leaf))?;
        if node.kind != NodeKind::Leaf {
            return Err(GraphError::NotALeaf(leaf));
        }
        let state = state_from_key(node.key).ok_or(GraphError::BadKey(leaf))?;
        let mut children = Vec::new();
        for pit in state.legal_moves() {
            let mut next = state.clone();
            next.play_unchecked(pit);
            let child = GameState::from_parts(next.pits(), next.stores(), next.to_move());
            let key = state_key(&child);
            let id = match self.get(key) {
                Some(id) => id,
                None => {
                    let (kind, eval) = match terminal_value(&child) {
                        Some(value) => (
                            NodeKind::Terminal,
                            NodeEval { score: value as i16, depth: 0, nodes: 0, best: None },
                        ),
                        None => {
                            let mut eval = evaluate(&child);
                            eval.score = eval.score.clamp(-1000, 1000);
                            eval.best = eval.best.filter(|&p| (p as usize) < ROW);
                            (NodeKind::Leaf, eval)
                        }
                    };
                    let stores = child.stores();
                    self.add_node(key, stores[0] + stores[1], kind, eval)
                }
            };
            children.push((pit as u8, id));
        }
        self.expand(leaf, &children);
        self.refresh(&[leaf]);
        Ok(())
    }

    // ------------------------------------------------------------ growth

    /// Adds a leaf or terminal node (no edges) and returns its id.
    pub(crate) fn add_node(&mut self, key: u64, captured: u8, kind: NodeKind, eval: NodeEval) -> NodeId {
        let id = self.nodes.len() as NodeId;
        let priority = if kind == NodeKind::Terminal { INFINITE } else { 0 };
        self.nodes.push(Node {
            key,
            kind,
            eval,
            visits: 0,
            value: eval.score as i32,
            priority,
            edges: Vec::new(),
            parents: Vec::new(),
            captured,
            in_flight: false,
        });
        self.index.insert(key, id);
        id
    }

    /// Gives leaf `leaf` its children `(pit, child)` in pit order: a move
    /// without capture to a node from which `leaf` is reachable becomes a
    /// repetition edge. Values and priorities are refreshed by the caller
    /// ([`BookGraph::refresh`]).
    pub(crate) fn expand(&mut self, leaf: NodeId, children: &[(u8, NodeId)]) {
        let mut edges = Vec::with_capacity(children.len());
        for &(pit, child) in children {
            let quiet = self.node(child).captured == self.node(leaf).captured;
            let repetition = if quiet && self.reaches(child, leaf) {
                let value =
                    state_from_key(self.node(child).key).map(|state| repetition_value(&state)).unwrap_or(0);
                Some(value as i16)
            } else {
                let parents = &mut self.nodes[child as usize].parents;
                if !parents.contains(&leaf) {
                    parents.push(leaf);
                }
                None
            };
            edges.push(Edge { pit, child, repetition, visits: 0 });
        }
        let node = &mut self.nodes[leaf as usize];
        node.edges = edges;
        node.kind = NodeKind::Expanded;
        node.in_flight = false;
        self.expansions += 1;
    }

    /// Counts a selection's descent in the visits of its nodes and edges.
    pub(crate) fn record_visits(&mut self, selection: &Selection) {
        for &(id, edge) in &selection.path {
            let node = &mut self.nodes[id as usize];
            node.visits += 1;
            if let Some(edge) = node.edges.get_mut(edge) {
                edge.visits += 1;
            }
        }
        self.nodes[selection.leaf as usize].visits += 1;
    }

    /// Whether `target` can be reached from `from` by moves without
    /// captures (only such paths can close a cycle).
    fn reaches(&self, from: NodeId, target: NodeId) -> bool {
        let captured = self.node(target).captured;
        let mut seen = HashSet::from([from]);
        let mut stack = vec![from];
        while let Some(id) = stack.pop() {
            if id == target {
                return true;
            }
            for edge in &self.node(id).edges {
                let child = edge.child;
                if edge.repetition.is_none() && self.node(child).captured == captured && seen.insert(child) {
                    stack.push(child);
                }
            }
        }
        false
    }

    /// Marks a leaf in flight (priority ∞) and updates the priorities
    /// above it.
    pub(crate) fn set_in_flight(&mut self, leaf: NodeId) {
        self.nodes[leaf as usize].in_flight = true;
        self.refresh(&[leaf]);
    }

    /// The leaves of the current batch not yet expanded (see the field).
    pub fn pending(&self) -> &[Selection] {
        &self.pending
    }

    /// Takes the pending leaves (they stay in flight until expanded).
    pub(crate) fn take_pending(&mut self) -> Vec<Selection> {
        std::mem::take(&mut self.pending)
    }

    /// Keeps `selections` (in flight) for the next growth.
    pub(crate) fn set_pending(&mut self, selections: Vec<Selection>) {
        self.pending = selections;
    }

    /// Clears every in-flight mark left by a batch that was not applied.
    pub fn release(&mut self, leaves: &[NodeId]) {
        for &leaf in leaves {
            self.nodes[leaf as usize].in_flight = false;
        }
        self.refresh(leaves);
    }

    /// Value and priority of a node from its children (or its own eval).
    fn compute(&self, id: NodeId) -> (i32, i64) {
        let node = self.node(id);
        match node.kind {
            NodeKind::Terminal => (node.eval.score as i32, INFINITE),
            NodeKind::Leaf => {
                let priority = if node.in_flight { INFINITE } else { 0 };
                (node.eval.score as i32, priority)
            }
            NodeKind::Expanded => {
                let best =
                    node.edges.iter().map(|e| self.move_value(e)).max().unwrap_or(node.eval.score as i32);
                let priority = node
                    .edges
                    .iter()
                    .map(|e| child_term(self.edge_priority(e), best, self.move_value(e), self.omega))
                    .min()
                    .unwrap_or(INFINITE);
                (best, priority)
            }
        }
    }

    /// Recomputes value and priority of `starts`, then of every ancestor
    /// whose inputs changed. The result is the unique fixed point of the
    /// acyclic graph, whatever the order of `starts`.
    pub(crate) fn refresh(&mut self, starts: &[NodeId]) {
        let mut queue: VecDeque<NodeId> = starts.iter().copied().collect();
        while let Some(id) = queue.pop_front() {
            let computed = self.compute(id);
            let node = &mut self.nodes[id as usize];
            if computed != (node.value, node.priority) {
                (node.value, node.priority) = computed;
                queue.extend(node.parents.iter().copied());
            }
        }
    }

    /// Rebuilds parents, values and priorities of the whole graph (after
    /// loading). Fails, naming a node, if the non-repetition edges form a
    /// cycle or point outside the graph.
    pub(crate) fn rebuild(&mut self) -> Result<(), GraphError> {
        let count = self.nodes.len();
        for node in &mut self.nodes {
            node.parents.clear();
            node.in_flight = false;
        }
        for id in 0..count {
            for e in 0..self.nodes[id].edges.len() {
                let edge = self.nodes[id].edges[e];
                if edge.child as usize >= count {
                    return Err(GraphError::EdgeOutside { node: id, child: edge.child, count });
                }
                if edge.repetition.is_none() {
                    self.nodes[edge.child as usize].parents.push(id as NodeId);
                }
            }
        }
        // Post-order by an iterative depth-first search; grey nodes are on
        // the stack, so meeting one again means a cycle.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            White,
            Grey,
            Black,
        }
        let mut mark = vec![Mark::White; count];
        for start in 0..count {
            if mark[start] != Mark::White {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            mark[start] = Mark::Grey;
            while let Some(top) = stack.last_mut() {
                let (id, next) = *top;
                if let Some(edge) = self.nodes[id].edges.get(next).copied() {
                    top.1 += 1;
                    if edge.repetition.is_some() {
                        continue;
                    }
                    let child = edge.child as usize;
                    match mark[child] {
                        Mark::White => {
                            mark[child] = Mark::Grey;
                            stack.push((child, 0));
                        }
                        Mark::Grey => return Err(GraphError::Cycle { node: id }),
                        Mark::Black => {}
                    }
                } else {
                    stack.pop();
                    mark[id] = Mark::Black;
                    let (value, priority) = self.compute(id as NodeId);
                    let node = &mut self.nodes[id];
                    node.value = value;
                    node.priority = priority;
                }
            }
        }
        Ok(())
    }

    /// Assembles a graph from decoded parts (`store`), then
    /// [`Self::rebuild`]s it and puts the pending leaves back in flight.
    /// Fails, naming the problem, if a pending selection is not a descent
    /// from the root along the graph's edges to a distinct leaf.
    pub(crate) fn from_parts(
        omega: Omega,
        nodes: Vec<Node>,
        expansions: u64,
        pending: Vec<Selection>,
    ) -> Result<BookGraph, GraphError> {
        let mut index = HashMap::with_capacity(nodes.len());
        for (id, node) in nodes.iter().enumerate() {
            if index.insert(node.key, id as NodeId).is_some() {
                return Err(GraphError::DuplicateKey { node: id, key: node.key });
            }
        }
        let mut graph = BookGraph { omega, nodes, index, expansions, pending: Vec::new() };
        graph.rebuild()?;
        let mut leaves = HashSet::new();
        for (i, selection) in pending.iter().enumerate() {
            let mut at = graph.root();
            for &(id, e) in &selection.path {
                let edge = graph.nodes.get(id as usize).and_then(|n| n.edges.get(e)).filter(|_| id == at);
                match edge {
                    Some(edge) if edge.repetition.is_none() => at = edge.child,
                    _ => return Err(GraphError::PendingPathLeavesGraph { pending: i, node: id }),
                }
            }
            let is_leaf = graph.nodes.get(at as usize).is_some_and(|n| n.kind == NodeKind::Leaf);
            if at != selection.leaf || !is_leaf || !leaves.insert(at) {
                return Err(GraphError::PendingNotADistinctLeaf { pending: i, leaf: selection.leaf });
            }
        }
        for selection in &pending {
            graph.set_in_flight(selection.leaf);
        }
        graph.pending = pending;
        Ok(graph)
    }
}
