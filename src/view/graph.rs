//! The lineage graph: tool calls and verifier uses as nodes; a data edge from A to B when a value from A
//! reaches an argument of B, a control edge when it reaches B's control context, each labelled with what it
//! reaches (the argument's name, or `control`). [`layout`] places it with [`super::layout`]: layered, sources
//! on the left, sinks on the right, no edge through a node that is not one of its ends.
//!
//! [`focus`] keeps one call and everything it derives from (its ancestors through data and control): the
//! lineage of one decision, small enough to read whatever the size of the run. [`grouped`] draws a long run
//! (or a long lineage) one node per call site.
//!
//! ```
//! use zamburak::view::graph::{layout, Node};
//! let nodes = vec![
//!     Node { id: 1, call: Some(1), title: "read".into(), kind: "call", decision: "allow".into(), integrity: "untrusted".into(), ..Node::default() },
//!     Node { id: 2, call: Some(2), title: "send".into(), kind: "call", decision: "deny".into(), integrity: "trusted".into(), data_from: vec![1], data_args: vec![(1, "to".into())], ..Node::default() },
//! ];
//! let g = layout(&nodes);
//! assert!(g.nodes[0].x < g.nodes[1].x, "the source is left of the call it reaches");
//! assert_eq!((g.edges.len(), g.edges[0].label.as_str()), (1, "to"));
//! ```

use std::collections::BTreeMap;

use serde::Serialize;

use super::model::TraceView;

/// Most predicted call sites drawn for one call denied before the run.
const MAX_PREDICTED: usize = 32;

/// A node before layout.
#[derive(Clone, Debug, Default)]
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
    /// Which argument each data source reaches: `(source node id, argument name)`.
    pub data_args: Vec<(u32, String)>,
    /// The plan line of the call or verifier use; 0 for a predicted call site.
    pub line: u32,
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
    /// What the edge carries: the arguments it reaches (`to, subject`), or `control`.
    pub label: String,
    /// A sentence for the edge's tooltip: `to: #1 read_inbox → #3 draft_reply`.
    pub title: String,
    /// Where to draw the label: its centre, on the edge, in room the layout kept for it.
    pub lx: u32,
    pub ly: u32,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Graph {
    /// One node per call site ([`grouped`]) rather than per call.
    pub grouped: bool,
    /// Why the graph is not drawn (too large to lay out); then it has no nodes.
    pub too_large: Option<String>,
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
        let mut data_args: Vec<(u32, String)> = n
            .data_args
            .iter()
            .filter_map(|(from, arg)| renumber.get(from).map(|f| (*f, arg.clone())))
            .collect();
        if let Some(sites) = predicted.get(&n.id) {
            let first = id.saturating_sub(sites.len() as u32);
            for (k, site) in sites.iter().enumerate() {
                let pid = first + k as u32;
                data_from.push(pid);
                data_args.push((pid, "predicted".into()));
                out.push(Node {
                    id: pid,
                    call: None,
                    title: site.clone(),
                    kind: "predicted",
                    decision: "predicted".into(),
                    integrity: "none".into(),
                    tags: String::new(),
                    ..Node::default()
                });
            }
        }
        out.push(Node {
            id,
            data_from,
            data_args,
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
            line: c.line,
            data_from: c.data_from.clone(),
            control_from: c.control_from.clone(),
            data_args: c
                .args
                .iter()
                .flat_map(|a| {
                    super::model::source_ids(&a.label)
                        .into_iter()
                        .filter(|s| *s < c.id)
                        .map(|s| (s, a.name.clone()))
                })
                .collect(),
        })
        .collect();
    out.extend(view.verifiers.iter().map(|v| Node {
        id: v.id,
        call: Some(v.id),
        title: v.verifier.clone(),
        kind: "verifier",
        // A failed verifier is not a denial (`or_none` gives the plan `None`, and a raising one stops it with
        // an error): it has a colour of its own, and red stays the policy's.
        decision: if v.ok {
            "verified".into()
        } else {
            "failed".into()
        },
        integrity: integrity_class(&v.label.integrity),
        tags: v.label.tags.join("+"),
        line: v.line,
        data_from: v.data_from.clone(),
        data_args: v.data_from.iter().map(|s| (*s, "value".into())).collect(),
        ..Node::default()
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

/// Above this many nodes the run's graph is drawn one node per call site ([`grouped`]).
pub const GROUP_ABOVE: usize = 100;

/// One node per call site (plan line and tool; verifier uses and predicted sites stay as they are), so a
/// loop of 500 calls is one node `read_file ×500`. Edges join sites when a call of one feeds a call of
/// the other; edges within a site, and edges back to a site that started earlier, are left out (the
/// layout draws sources left of sinks). A site is shown by its first call and its most severe decision.
///
/// ```
/// use zamburak::view::graph::{grouped, Node};
/// let n = |id: u32, title: &str, data: Vec<u32>| Node { id, call: Some(id), kind: "call",
///     title: title.into(), decision: "allow".into(), data_from: data, ..Node::default() };
/// let lines = [(1, 2), (2, 2), (3, 2), (4, 5)];
/// let nodes = vec![n(1, "read", vec![]), n(2, "read", vec![1]), n(3, "read", vec![]), n(4, "send", vec![2, 3])];
/// let g = grouped(&nodes, &lines.into_iter().collect());
/// assert_eq!(g.len(), 2);
/// assert_eq!((g[0].title.as_str(), g[1].data_from.clone()), ("read ×3", vec![g[0].id]));
/// ```
pub fn grouped(nodes: &[Node], lines: &BTreeMap<u32, u32>) -> Vec<Node> {
    let severity = |d: &str| {
        ["allow", "draft", "confirm", "deny"]
            .iter()
            .position(|x| *x == d)
    };
    // Site of each node: (line, title) for calls, the node itself otherwise.
    let mut site_of: BTreeMap<u32, usize> = BTreeMap::new();
    let mut sites: Vec<(Node, usize)> = Vec::new();
    let mut index: BTreeMap<(u32, String), usize> = BTreeMap::new();
    for n in nodes {
        let key = match (n.kind, n.call.and_then(|c| lines.get(&c))) {
            ("call", Some(line)) => Some((*line, n.title.clone())),
            _ => None,
        };
        let existing = key.as_ref().and_then(|k| index.get(k).copied());
        let at = match existing {
            Some(i) => {
                let (site, count) = &mut sites[i];
                *count += 1;
                if severity(&n.decision) > severity(&site.decision) {
                    site.decision.clone_from(&n.decision);
                }
                i
            }
            None => {
                sites.push((n.clone(), 1));
                if let Some(k) = key {
                    index.insert(k, sites.len() - 1);
                }
                sites.len() - 1
            }
        };
        site_of.insert(n.id, at);
    }
    let ids: Vec<u32> = sites.iter().map(|(n, _)| n.id).collect();
    // Per site: its data sources, its control sources, and which argument each data source reaches.
    type SiteEdges = (Vec<u32>, Vec<u32>, Vec<(u32, String)>);
    let mut edges: Vec<SiteEdges> = vec![Default::default(); sites.len()];
    for n in nodes {
        let to = site_of[&n.id];
        let mut link = |from: &u32, kind: usize, arg: Option<&str>| {
            let Some(&f) = site_of.get(from) else { return };
            if f >= to {
                return;
            }
            let (data, control, args) = &mut edges[to];
            let list = if kind == 0 { data } else { control };
            if !list.contains(&ids[f]) {
                list.push(ids[f]);
            }
            if let Some(a) = arg
                && !args.iter().any(|(s, x)| *s == ids[f] && x == a)
            {
                args.push((ids[f], a.to_string()));
            }
        };
        for (from, arg) in &n.data_args {
            link(from, 0, Some(arg));
        }
        for from in &n.data_from {
            link(from, 0, None);
        }
        for from in &n.control_from {
            link(from, 1, None);
        }
    }
    sites
        .into_iter()
        .zip(edges)
        .map(
            |((node, count), (data_from, control_from, data_args))| Node {
                title: if count > 1 {
                    format!("{} ×{count}", node.title)
                } else {
                    node.title.clone()
                },
                data_from,
                control_from,
                data_args,
                ..node
            },
        )
        .collect()
}

/// The call `call` and every node it derives from, through data and control edges: what decided it,
/// however long the run. `None` when the trace has no such call.
///
/// ```
/// use zamburak::view::graph::{focus, Node};
/// let n = |id: u32, data: Vec<u32>| Node { id, call: Some(id), kind: "call", data_from: data, ..Node::default() };
/// let nodes = vec![n(1, vec![]), n(2, vec![]), n(3, vec![1]), n(4, vec![3])];
/// let ids: Vec<u32> = focus(&nodes, 4).unwrap().iter().map(|n| n.id).collect();
/// assert_eq!(ids, [1, 3, 4]); // 2 does not reach 4
/// ```
pub fn focus(nodes: &[Node], call: u32) -> Option<Vec<Node>> {
    let by_id: BTreeMap<u32, &Node> = nodes.iter().map(|n| (n.id, n)).collect();
    let target = nodes
        .iter()
        .find(|n| n.call == Some(call) && n.kind != "predicted")?;
    let mut keep: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
    let mut todo = vec![target.id];
    while let Some(id) = todo.pop() {
        if !keep.insert(id) {
            continue;
        }
        if let Some(n) = by_id.get(&id) {
            // Only earlier nodes: a forged record cannot make the walk loop.
            todo.extend(
                n.data_from
                    .iter()
                    .chain(&n.control_from)
                    .filter(|s| **s < id && !keep.contains(s)),
            );
        }
    }
    Some(
        nodes
            .iter()
            .filter(|n| keep.contains(&n.id))
            .cloned()
            .collect(),
    )
}

/// Builds the graph and places it ([`super::layout`]): layered, sources on the left, sinks on the right, no
/// edge through a node that is not one of its ends. Edges only go from a lower id to a higher one (a value
/// can only come from an earlier call), so the graph is acyclic whatever the trace says. A graph too large to
/// draw comes back without nodes, saying why ([`Graph::too_large`]).
pub fn layout(nodes: &[Node]) -> Graph {
    let by_id: BTreeMap<u32, &Node> = nodes.iter().map(|n| (n.id, n)).collect();
    let mut edges: Vec<(u32, u32, &'static str, String)> = Vec::new();
    let mut feeds: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
    for n in nodes {
        for (srcs, kind) in [(&n.data_from, "data"), (&n.control_from, "control")] {
            let mut seen: Vec<u32> = Vec::new();
            for s in srcs {
                if *s >= n.id || !by_id.contains_key(s) || seen.contains(s) {
                    continue;
                }
                seen.push(*s);
                feeds.insert(*s);
                let label = if kind == "control" {
                    "control".to_string()
                } else {
                    let mut names: Vec<&str> = n
                        .data_args
                        .iter()
                        .filter(|(f, _)| f == s)
                        .map(|(_, a)| a.as_str())
                        .collect();
                    names.dedup();
                    names.join(", ")
                };
                edges.push((*s, n.id, kind, label));
            }
        }
    }
    let input: Vec<super::layout::Input> = nodes
        .iter()
        .map(|n| super::layout::Input { id: n.id })
        .collect();
    let placed = match super::layout::place(&input, &edges) {
        Ok(p) => p,
        Err(e) => {
            return Graph {
                too_large: Some(format!(
                    "This graph is not drawn: {e}. The call sites above list every call, and each call's page its own lineage."
                )),
                ..Graph::default()
            };
        }
    };
    let name = |id: u32| {
        by_id.get(&id).map_or_else(String::new, |n| match n.call {
            Some(c) => format!("#{c} {}", n.title),
            None => n.title.clone(),
        })
    };
    let px = |v: f64| v.round().max(0.0) as u32;
    let mut out_nodes = Vec::with_capacity(nodes.len());
    for (n, p) in nodes.iter().zip(&placed.nodes) {
        out_nodes.push(PlacedNode {
            id: n.id,
            call: n.call,
            title: n
                .title
                .chars()
                .take(if n.call.is_some() { 28 } else { 40 })
                .collect(),
            kind: n.kind,
            decision: n.decision.clone(),
            // A call whose result reaches no other call is a sink: its fill would only repeat its inputs'
            // integrity, so it is drawn plain.
            integrity: if n.kind == "call" && !feeds.contains(&n.id) {
                "sink".to_string()
            } else {
                n.integrity.clone()
            },
            tags: n.tags.chars().take(40).collect(),
            x: px(p.x),
            y: px(p.y),
            w: px(p.w),
            h: px(p.h),
        });
    }
    let out_edges = placed
        .edges
        .into_iter()
        .map(|e| PlacedEdge {
            title: format!("{}: {} → {}", e.label, name(e.from), name(e.to)),
            from: e.from,
            to: e.to,
            kind: e.kind,
            d: e.d,
            label: e.label,
            lx: px(e.lx),
            ly: px(e.ly),
        })
        .collect();
    Graph {
        grouped: false,
        too_large: None,
        width: px(placed.width),
        height: px(placed.height),
        nodes: out_nodes,
        edges: out_edges,
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
            data_args: data.iter().map(|d| (*d, "x".into())).collect(),
            line: id,
        }
    }

    #[test]
    fn layers_are_longest_paths_and_edges_keep_their_kind() {
        // 1 → 2 → 4, 1 → 3 (control), 3 → 4: node 4 sits after the longest chain, right of 2 and 3.
        let g = layout(&[
            node(1, &[], &[]),
            node(2, &[1], &[]),
            node(3, &[], &[1]),
            node(4, &[2, 3], &[]),
        ]);
        let x: Vec<u32> = g.nodes.iter().map(|n| n.x).collect();
        assert!(x[0] < x[1] && x[1] == x[2] && x[2] < x[3], "{x:?}");
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
        // Two nodes share a column: they get different rows.
        assert_ne!(g.nodes[1].y, g.nodes[2].y);
    }

    #[test]
    fn sinks_are_not_filled_as_untrusted_results() {
        let mut a = node(1, &[], &[]);
        a.integrity = "untrusted".into();
        let mut b = node(2, &[1], &[]);
        b.integrity = "untrusted".into();
        let g = layout(&[a, b]);
        let fills: Vec<&str> = g.nodes.iter().map(|n| n.integrity.as_str()).collect();
        assert_eq!(fills, ["untrusted", "sink"]);
    }

    #[test]
    fn forged_edges_to_later_or_missing_calls_are_ignored() {
        let g = layout(&[node(1, &[2, 9], &[1]), node(2, &[], &[])]);
        assert!(g.edges.is_empty());
        assert_eq!(g.nodes[0].x, g.nodes[1].x, "one column: nothing links them");
    }
}
