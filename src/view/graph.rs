//! The lineage graph: tool calls and verifier uses as nodes; a data edge from A to B when a value from A
//! reaches an argument of B, a control edge when it reaches B's control context. Laid out on the server in
//! layers (a node's layer is the longest path to it), sources on the left, sinks on the right.
//!
//! ```
//! use zamburak::view::graph::{layout, Node};
//! let nodes = vec![
//!     Node { id: 1, call: Some(1), title: "read".into(), kind: "call", decision: "allow".into(), integrity: "untrusted".into(), tags: String::new(), data_from: vec![], control_from: vec![] },
//!     Node { id: 2, call: Some(2), title: "send".into(), kind: "call", decision: "deny".into(), integrity: "trusted".into(), tags: String::new(), data_from: vec![1], control_from: vec![] },
//! ];
//! let g = layout(&nodes);
//! assert_eq!(g.nodes[1].layer, 1);
//! assert_eq!(g.edges.len(), 1);
//! ```

use std::collections::BTreeMap;

use petgraph::graph::{DiGraph, NodeIndex};
use serde::Serialize;

use super::model::TraceView;

const COL: u32 = 250;
const ROW: u32 = 64;
const W: u32 = 200;
const H: u32 = 46;
const MARGIN: u32 = 30;
/// Most predicted call sites drawn for one call denied before the run.
const MAX_PREDICTED: usize = 32;

/// A node before layout.
#[derive(Clone, Debug)]
pub struct Node {
    /// The node's place in the graph; edges go from lower to higher ids.
    pub id: u32,
    /// The call or verifier id the node shows and links to; `None` for a predicted call site.
    pub call: Option<u32>,
    pub title: String,
    /// `call` or `verifier`.
    pub kind: &'static str,
    pub decision: String,
    pub integrity: String,
    pub tags: String,
    pub data_from: Vec<u32>,
    pub control_from: Vec<u32>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlacedNode {
    pub id: u32,
    pub call: Option<u32>,
    pub title: String,
    pub kind: &'static str,
    pub decision: String,
    pub integrity: String,
    pub tags: String,
    pub layer: u32,
    pub x: u32,
    pub y: u32,
    pub w: u32,
    pub h: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlacedEdge {
    pub from: u32,
    pub to: u32,
    /// `data` or `control`.
    pub kind: &'static str,
    /// SVG path.
    pub d: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Graph {
    pub width: u32,
    pub height: u32,
    pub nodes: Vec<PlacedNode>,
    pub edges: Vec<PlacedEdge>,
}

/// Nodes of a trace: calls and verifier uses, in id order, then the predicted sources of calls denied
/// before the run (see [`with_predicted`]).
pub fn nodes(view: &TraceView) -> Vec<Node> {
    with_predicted(view, call_nodes(view))
}

/// Calls denied before the run have no runtime sources; lint's predicted call sites become nodes of kind
/// `predicted` with a data edge into the call. Edges must go from a lower id to a higher one, so the
/// predicted nodes take the ids just below their call and every later node moves up; `call` keeps the id
/// each node is shown and linked with.
fn with_predicted(view: &TraceView, nodes: Vec<Node>) -> Vec<Node> {
    // The trace is untrusted: a forged record may list any number of predicted sites; a few are drawn.
    let predicted: BTreeMap<u32, &[String]> = view
        .calls
        .iter()
        .filter(|c| !c.predicted_from.is_empty())
        .map(|c| {
            (
                c.id,
                &c.predicted_from[..c.predicted_from.len().min(MAX_PREDICTED)],
            )
        })
        .collect();
    if predicted.is_empty() {
        return nodes;
    }
    let mut renumber: BTreeMap<u32, u32> = BTreeMap::new();
    let mut next = 0u32;
    for n in &nodes {
        // At most MAX_RECORDS nodes, each with at most MAX_PREDICTED sites: far below u32::MAX.
        next = next.saturating_add(predicted.get(&n.id).map_or(0, |p| p.len() as u32) + 1);
        renumber.insert(n.id, next);
    }
    let moved = |ids: &[u32]| -> Vec<u32> {
        ids.iter()
            .filter_map(|i| renumber.get(i).copied())
            .collect()
    };
    let mut out = Vec::with_capacity(nodes.len() + predicted.len());
    for n in nodes {
        let id = renumber[&n.id];
        let mut data_from = moved(&n.data_from);
        if let Some(sites) = predicted.get(&n.id) {
            let first = id.saturating_sub(sites.len() as u32);
            for (k, site) in sites.iter().enumerate() {
                let pid = first + k as u32;
                data_from.push(pid);
                out.push(Node {
                    id: pid,
                    call: None,
                    title: site.clone(),
                    kind: "predicted",
                    decision: "predicted".into(),
                    integrity: "none".into(),
                    tags: String::new(),
                    data_from: Vec::new(),
                    control_from: Vec::new(),
                });
            }
        }
        out.push(Node {
            id,
            data_from,
            control_from: moved(&n.control_from),
            ..n
        });
    }
    out
}

fn call_nodes(view: &TraceView) -> Vec<Node> {
    let mut out: Vec<Node> = view
        .calls
        .iter()
        .map(|c| Node {
            id: c.id,
            call: Some(c.id),
            title: c.tool.clone(),
            kind: "call",
            decision: c.decision.clone(),
            integrity: c.result.as_ref().map_or_else(
                || "none".to_string(),
                |r| integrity_class(&r.label.integrity),
            ),
            tags: c
                .result
                .as_ref()
                .map(|r| r.label.tags.join("+"))
                .unwrap_or_default(),
            data_from: c.data_from.clone(),
            control_from: c.control_from.clone(),
        })
        .collect();
    out.extend(view.verifiers.iter().map(|v| Node {
        id: v.id,
        call: Some(v.id),
        title: v.verifier.clone(),
        kind: "verifier",
        decision: if v.ok { "allow".into() } else { "deny".into() },
        integrity: integrity_class(&v.label.integrity),
        tags: v.label.tags.join("+"),
        data_from: v.data_from.clone(),
        control_from: Vec::new(),
    }));
    out.sort_by_key(|n| n.id);
    out.dedup_by_key(|n| n.id);
    out
}

fn integrity_class(s: &str) -> String {
    match s {
        "trusted" | "untrusted" | "unknown" => s.to_string(),
        _ => "unknown".to_string(),
    }
}

/// Builds the graph and places it. Edges only go from a lower id to a higher one (a value can only come
/// from an earlier call), so the graph is acyclic whatever the trace says, and one pass in id order gives
/// every node its layer.
pub fn layout(nodes: &[Node]) -> Graph {
    let mut g: DiGraph<u32, &'static str> = DiGraph::new();
    let mut index: BTreeMap<u32, NodeIndex> = BTreeMap::new();
    for n in nodes {
        index.insert(n.id, g.add_node(n.id));
    }
    for n in nodes {
        let to = index[&n.id];
        for (srcs, kind) in [(&n.data_from, "data"), (&n.control_from, "control")] {
            for s in srcs {
                if let Some(&from) = index.get(s)
                    && *s < n.id
                {
                    g.add_edge(from, to, kind);
                }
            }
        }
    }
    let mut layer: BTreeMap<u32, u32> = BTreeMap::new();
    for n in nodes {
        let idx = index[&n.id];
        let l = g
            .neighbors_directed(idx, petgraph::Direction::Incoming)
            .filter_map(|p| layer.get(&g[p]))
            .map(|l| l + 1)
            .max()
            .unwrap_or(0);
        layer.insert(n.id, l);
    }
    let mut rows: BTreeMap<u32, u32> = BTreeMap::new();
    let mut placed = Vec::with_capacity(nodes.len());
    let mut pos: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    for n in nodes {
        let l = layer[&n.id];
        let row = rows.entry(l).or_insert(0);
        let (x, y) = (MARGIN + l * COL, MARGIN + *row * ROW);
        *row += 1;
        pos.insert(n.id, (x, y));
        placed.push(PlacedNode {
            id: n.id,
            call: n.call,
            title: n
                .title
                .chars()
                .take(if n.call.is_some() { 28 } else { 40 })
                .collect(),
            kind: n.kind,
            decision: n.decision.clone(),
            integrity: n.integrity.clone(),
            tags: n.tags.chars().take(40).collect(),
            layer: l,
            x,
            y,
            w: W,
            h: H,
        });
    }
    let edges = g
        .edge_indices()
        .filter_map(|e| {
            let (a, b) = g.edge_endpoints(e)?;
            let (from, to) = (g[a], g[b]);
            let (x1, y1) = pos[&from];
            let (x2, y2) = pos[&to];
            let (sx, sy, tx, ty) = (x1 + W, y1 + H / 2, x2, y2 + H / 2);
            let mid = (sx + tx) / 2;
            Some(PlacedEdge {
                from,
                to,
                kind: g[e],
                d: format!("M{sx},{sy} C{mid},{sy} {mid},{ty} {tx},{ty}"),
            })
        })
        .collect();
    let layers = rows.keys().max().map_or(0, |l| l + 1);
    let tallest = rows.values().max().copied().unwrap_or(0);
    Graph {
        width: 2 * MARGIN + layers * COL,
        height: 2 * MARGIN + tallest * ROW,
        nodes: placed,
        edges,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: u32, data: &[u32], control: &[u32]) -> Node {
        Node {
            id,
            call: Some(id),
            title: format!("t{id}"),
            kind: "call",
            decision: "allow".into(),
            integrity: "trusted".into(),
            tags: String::new(),
            data_from: data.to_vec(),
            control_from: control.to_vec(),
        }
    }

    #[test]
    fn layers_are_longest_paths_and_edges_keep_their_kind() {
        // 1 → 2 → 4, 1 → 3 (control), 3 → 4: node 4 sits after the longest chain, layer 2.
        let g = layout(&[
            node(1, &[], &[]),
            node(2, &[1], &[]),
            node(3, &[], &[1]),
            node(4, &[2, 3], &[]),
        ]);
        let layers: Vec<(u32, u32)> = g.nodes.iter().map(|n| (n.id, n.layer)).collect();
        assert_eq!(layers, [(1, 0), (2, 1), (3, 1), (4, 2)]);
        let mut edges: Vec<(u32, u32, &str)> =
            g.edges.iter().map(|e| (e.from, e.to, e.kind)).collect();
        edges.sort();
        assert_eq!(
            edges,
            [
                (1, 2, "data"),
                (1, 3, "control"),
                (2, 4, "data"),
                (3, 4, "data")
            ]
        );
        // Two nodes share layer 1: they get different rows.
        assert_ne!(g.nodes[1].y, g.nodes[2].y);
    }

    #[test]
    fn forged_edges_to_later_or_missing_calls_are_ignored() {
        let g = layout(&[node(1, &[2, 9], &[1]), node(2, &[], &[])]);
        assert!(g.edges.is_empty());
        assert!(g.nodes.iter().all(|n| n.layer == 0));
    }
}
