//! Placing a lineage graph: a layered (Sugiyama) layout by the `dagre` crate, a port of dagre.js, then edge
//! routing that keeps every edge clear of every node that is not one of its ends.
//!
//! `dagre` assigns each node a rank (a column: sources left, sinks right), orders each column to cut
//! crossings, places the nodes, and gives every edge one dummy point per column it passes (the label's
//! place among them). Those points are where the layout reserved room for the edge. The route then runs
//! *horizontally* through every column it passes, at its reserved point, and curves only in the gaps between
//! columns, where no node stands: a straight segment from one dummy point to the next could cut the corner
//! of a node beside the dummy, a route drawn this way cannot.
//!
//! The layout is bounded ([`MAX_NODES`], [`MAX_SPAN`]): a larger graph is not drawn (the pages say so and
//! list its call sites), because `dagre`'s time grows much faster than the graph.
//!
//! ```
//! use zamburak::view::layout::{place, Input};
//! let nodes = [Input { id: 1, ..Input::default() }, Input { id: 2, ..Input::default() }];
//! let g = place(&nodes, &[(1, 2, "data", "to".into())]).unwrap();
//! assert!(g.nodes[0].x + g.nodes[0].w < g.nodes[1].x, "the source is left of its sink");
//! assert!(g.edges[0].d.starts_with('M'));
//! ```

use std::collections::BTreeMap;

use dagre::graph::{Graph as Dagre, GraphOptions};
use dagre::layout::types::LabelPos;
use dagre::{EdgeLabel, LayoutOptions, NodeLabel, RankDir};

/// A node's box.
pub const W: f64 = 200.0;
pub const H: f64 = 46.0;
const MARGIN: f64 = 30.0;
/// Room between columns, for the curves and the edge labels.
const RANKSEP: f64 = 70.0;
const NODESEP: f64 = 24.0;
const EDGESEP: f64 = 12.0;
/// Edge labels: a rough width per character of the 11px label font, and the label's height.
const LABEL_CHAR: f64 = 6.6;
const LABEL_H: f64 = 16.0;

/// Most nodes laid out in one graph.
pub const MAX_NODES: usize = 250;
/// Most columns all edges may cross together (each is a dummy node for the layout): bounds the layout's
/// time whatever the edges.
pub const MAX_SPAN: usize = 3_000;

/// A node to place: its id, and whatever the caller carries along.
#[derive(Clone, Debug, Default)]
pub struct Input {
    pub id: u32,
}

/// A placed node: its id and its box.
#[derive(Clone, Debug)]
pub struct Placed {
    pub id: u32,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// A routed edge: `d` is an SVG path; the label is centred at (`lx`, `ly`), on the edge.
#[derive(Clone, Debug)]
pub struct Routed {
    pub from: u32,
    pub to: u32,
    pub kind: &'static str,
    pub label: String,
    pub d: String,
    pub lx: f64,
    pub ly: f64,
}

/// A laid-out graph.
#[derive(Clone, Debug)]
pub struct Placement {
    pub width: f64,
    pub height: f64,
    pub nodes: Vec<Placed>,
    pub edges: Vec<Routed>,
}

/// Why a graph was not laid out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TooLarge {
    #[error("{0} nodes, more than {max} to draw", max = MAX_NODES)]
    Nodes(usize),
    #[error("its edges cross {0} columns, more than {max} to draw", max = MAX_SPAN)]
    Span(usize),
    #[error("the layout failed")]
    Failed,
}

/// Places `nodes` and routes `edges` (`(from, to, kind, label)`, from an earlier node to a later one; others
/// are left out). `Err` when the graph is too large to lay out ([`MAX_NODES`], [`MAX_SPAN`]).
pub fn place(
    nodes: &[Input],
    edges: &[(u32, u32, &'static str, String)],
) -> Result<Placement, TooLarge> {
    if nodes.len() > MAX_NODES {
        return Err(TooLarge::Nodes(nodes.len()));
    }
    let known: BTreeMap<u32, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    // Only edges between known nodes, forward in id order: the graph is acyclic whatever a trace says.
    let edges: Vec<&(u32, u32, &'static str, String)> = edges
        .iter()
        .filter(|(f, t, ..)| f < t && known.contains_key(f) && known.contains_key(t))
        .collect();
    let span = longest_path_span(nodes, &edges);
    if span > MAX_SPAN {
        return Err(TooLarge::Span(span));
    }
    // The graph is ours and well formed; should the layout still panic, the page says it failed rather than
    // the viewer going down.
    let laid = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_dagre(nodes, &edges)))
        .map_err(|_| TooLarge::Failed)?;
    Ok(route(nodes, &edges, &laid))
}

/// How many columns the edges cross in all, by longest-path ranks (the layout's own ranks are no longer):
/// what the layout's dummy nodes cost, known before it runs.
fn longest_path_span(nodes: &[Input], edges: &[&(u32, u32, &'static str, String)]) -> usize {
    let mut rank: BTreeMap<u32, usize> = nodes.iter().map(|n| (n.id, 0)).collect();
    let mut sorted: Vec<&&(u32, u32, &'static str, String)> = edges.iter().collect();
    sorted.sort_by_key(|(f, t, ..)| (*t, *f));
    // Edges go from lower to higher ids: in order of their target, every source's rank is final.
    for (f, t, ..) in &sorted {
        let r = rank.get(f).copied().unwrap_or(0) + 1;
        if let Some(x) = rank.get_mut(t) {
            *x = (*x).max(r);
        }
    }
    sorted
        .iter()
        .map(|(f, t, ..)| {
            // Two columns per rank: the layout puts edge labels in columns of their own.
            2 * rank
                .get(t)
                .copied()
                .unwrap_or(0)
                .saturating_sub(rank.get(f).copied().unwrap_or(0))
        })
        .sum()
}

/// A point of the drawing.
type Point = (f64, f64);

/// What `dagre` gave: node centres, each edge's points and label centre.
struct Laid {
    centres: BTreeMap<u32, Point>,
    /// Per edge (in input order): the points between its ends, and its label's centre.
    points: Vec<(Vec<Point>, Option<Point>)>,
}

fn run_dagre(nodes: &[Input], edges: &[&(u32, u32, &'static str, String)]) -> Laid {
    let mut g: Dagre<NodeLabel, EdgeLabel> = Dagre::with_options(GraphOptions {
        directed: true,
        multigraph: true,
        compound: false,
    });
    for n in nodes {
        g.set_node(
            n.id.to_string(),
            Some(NodeLabel {
                width: W,
                height: H,
                ..NodeLabel::default()
            }),
        );
    }
    for (k, (f, t, _, label)) in edges.iter().enumerate() {
        let e = EdgeLabel {
            width: label_width(label),
            height: LABEL_H,
            labelpos: LabelPos::Center,
            ..EdgeLabel::default()
        };
        g.set_edge(
            f.to_string(),
            t.to_string(),
            Some(e),
            Some(k.to_string().as_str()),
        );
    }
    dagre::layout(
        &mut g,
        Some(LayoutOptions {
            rankdir: RankDir::LR,
            nodesep: NODESEP,
            edgesep: EDGESEP,
            ranksep: RANKSEP,
            ..LayoutOptions::default()
        }),
    );
    let centres = nodes
        .iter()
        .filter_map(|n| {
            let l = g.node(&n.id.to_string())?;
            Some((n.id, (l.x?, l.y?)))
        })
        .collect();
    let points = edges
        .iter()
        .enumerate()
        .map(|(k, (f, t, ..))| {
            let Some(e) = g.edge(&f.to_string(), &t.to_string(), Some(k.to_string().as_str()))
            else {
                return (Vec::new(), None);
            };
            // The first and last points are where dagre meets the node boxes; the route makes its own ends.
            let inner = match e.points.as_slice() {
                [_, inner @ .., _] => inner.iter().map(|p| (p.x, p.y)).collect(),
                _ => Vec::new(),
            };
            (inner, e.x.zip(e.y))
        })
        .collect();
    Laid { centres, points }
}

fn label_width(label: &str) -> f64 {
    label.chars().count() as f64 * LABEL_CHAR + 8.0
}

/// Rounds a column's x so the points of one column compare equal.
fn key(x: f64) -> i64 {
    (x * 2.0).round() as i64
}

/// Routes every edge through its reserved points, horizontally inside each column, and shifts the drawing
/// into the positive quadrant.
fn route(nodes: &[Input], edges: &[&(u32, u32, &'static str, String)], laid: &Laid) -> Placement {
    let centre = |id: u32| laid.centres.get(&id).copied().unwrap_or((0.0, 0.0));
    // Each column's half width: the widest thing standing in it (a node, a label; a bare dummy has none).
    let mut half: BTreeMap<i64, f64> = BTreeMap::new();
    for n in nodes {
        let e = half.entry(key(centre(n.id).0)).or_insert(0.0);
        *e = e.max(W / 2.0);
    }
    for ((inner, lab), (.., label)) in laid.points.iter().zip(edges) {
        for p in inner {
            half.entry(key(p.0)).or_insert(0.0);
        }
        if let Some((lx, _)) = lab {
            let e = half.entry(key(*lx)).or_insert(0.0);
            *e = e.max(label_width(label) / 2.0);
        }
    }
    let half_at = |x: f64| half.get(&key(x)).copied().unwrap_or(0.0);

    // Ends spread along a node's side, in the order of where their edges go, so edges leave and arrive side
    // by side rather than in one point.
    let mut exits: BTreeMap<u32, Vec<(f64, usize)>> = BTreeMap::new();
    let mut entries: BTreeMap<u32, Vec<(f64, usize)>> = BTreeMap::new();
    for (k, ((inner, _), (f, t, ..))) in laid.points.iter().zip(edges).enumerate() {
        let next = inner.first().map_or(centre(*t).1, |p| p.1);
        let prev = inner.last().map_or(centre(*f).1, |p| p.1);
        exits.entry(*f).or_default().push((next, k));
        entries.entry(*t).or_default().push((prev, k));
    }
    let spread = |sides: &mut BTreeMap<u32, Vec<(f64, usize)>>| -> BTreeMap<usize, f64> {
        let mut at = BTreeMap::new();
        for (id, list) in sides.iter_mut() {
            list.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let (_, cy) = centre(*id);
            let n = list.len() as f64;
            for (i, (_, k)) in list.iter().enumerate() {
                // Inside the node's height, clear of its corners.
                let y = cy - H / 2.0 + 6.0 + (H - 12.0) * (i as f64 + 1.0) / (n + 1.0);
                at.insert(*k, y);
            }
        }
        at
    };
    let exit_y = spread(&mut exits);
    let entry_y = spread(&mut entries);

    let mut routed = Vec::with_capacity(edges.len());
    for (k, ((inner, lab), (f, t, kind, label))) in laid.points.iter().zip(edges).enumerate() {
        let (fx, fy) = centre(*f);
        let (tx, ty) = centre(*t);
        let sy = exit_y.get(&k).copied().unwrap_or(fy);
        let ey = entry_y.get(&k).copied().unwrap_or(ty);
        // Pairs of (enter, leave) x for each column passed, at one y.
        let mut runs: Vec<(f64, f64, f64)> = vec![(fx + W / 2.0, fx + half_at(fx), sy)];
        for (px, py) in inner {
            let h = half_at(*px);
            runs.push((px - h, px + h, *py));
        }
        runs.push((tx - half_at(tx), tx - W / 2.0, ey));
        let mut d = format!("M{:.1},{:.1}", runs[0].0, runs[0].2);
        for (i, (enter, leave, y)) in runs.iter().enumerate() {
            if i > 0 {
                let (_, px, py) = runs[i - 1];
                let mid = (px + enter) / 2.0;
                d.push_str(&format!(
                    " C{mid:.1},{py:.1} {mid:.1},{y:.1} {enter:.1},{y:.1}"
                ));
            }
            if leave > enter {
                d.push_str(&format!(" L{leave:.1},{y:.1}"));
            }
        }
        let (lx, ly) = lab.unwrap_or(((fx + tx) / 2.0, (fy + ty) / 2.0));
        routed.push(Routed {
            from: *f,
            to: *t,
            kind,
            label: label.clone(),
            d,
            lx,
            ly,
        });
    }
    let placed: Vec<Placed> = nodes
        .iter()
        .map(|n| {
            let (x, y) = centre(n.id);
            Placed {
                id: n.id,
                x: x - W / 2.0,
                y: y - H / 2.0,
                w: W,
                h: H,
            }
        })
        .collect();
    shift(placed, routed, laid)
}

/// Moves the drawing so its top left corner is at the margin, and sizes it.
fn shift(mut nodes: Vec<Placed>, mut edges: Vec<Routed>, laid: &Laid) -> Placement {
    let (mut minx, mut miny, mut maxx, mut maxy) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    let mut see = |x: f64, y: f64| {
        minx = minx.min(x);
        miny = miny.min(y);
        maxx = maxx.max(x);
        maxy = maxy.max(y);
    };
    for n in &nodes {
        see(n.x, n.y);
        see(n.x + n.w, n.y + n.h);
    }
    for (inner, lab) in &laid.points {
        for (x, y) in inner {
            see(*x, *y);
        }
        if let Some((x, y)) = lab {
            see(*x, y - LABEL_H);
            see(*x, y + LABEL_H);
        }
    }
    if nodes.is_empty() {
        (minx, miny, maxx, maxy) = (0.0, 0.0, 0.0, 0.0);
    }
    let (dx, dy) = (MARGIN - minx, MARGIN - miny);
    for n in &mut nodes {
        n.x += dx;
        n.y += dy;
    }
    for e in &mut edges {
        e.d = shift_path(&e.d, dx, dy);
        e.lx += dx;
        e.ly += dy;
    }
    Placement {
        width: (maxx - minx + 2.0 * MARGIN).ceil(),
        height: (maxy - miny + 2.0 * MARGIN).ceil(),
        nodes,
        edges,
    }
}

/// A path of ours (`M`, `L`, `C` with absolute `x,y` pairs) moved by (`dx`, `dy`).
fn shift_path(d: &str, dx: f64, dy: f64) -> String {
    d.split(' ')
        .map(|part| {
            let (cmd, xy) = part.split_at(
                part.chars()
                    .next()
                    .map_or(0, |c| usize::from(c.is_ascii_alphabetic())),
            );
            match xy.split_once(',') {
                Some((x, y)) => match (x.parse::<f64>(), y.parse::<f64>()) {
                    (Ok(x), Ok(y)) => format!("{cmd}{:.1},{:.1}", x + dx, y + dy),
                    _ => part.to_string(),
                },
                None => part.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Points along a path of ours, `per` samples per segment: what a test checks against the node boxes.
pub fn samples(d: &str, per: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut cmd = ' ';
    let mut pts: Vec<(f64, f64)> = Vec::new();
    let mut cur = (0.0, 0.0);
    let mut flush = |cmd: char, pts: &mut Vec<(f64, f64)>, cur: &mut (f64, f64)| {
        match (cmd, pts.as_slice()) {
            ('M', [p]) => {
                *cur = *p;
                out.push(*p);
            }
            ('L', [p]) => {
                for i in 1..=per {
                    let t = i as f64 / per as f64;
                    out.push((cur.0 + (p.0 - cur.0) * t, cur.1 + (p.1 - cur.1) * t));
                }
                *cur = *p;
            }
            ('C', [a, b, p]) => {
                for i in 1..=per {
                    let t = i as f64 / per as f64;
                    let u = 1.0 - t;
                    let x = u * u * u * cur.0
                        + 3.0 * u * u * t * a.0
                        + 3.0 * u * t * t * b.0
                        + t * t * t * p.0;
                    let y = u * u * u * cur.1
                        + 3.0 * u * u * t * a.1
                        + 3.0 * u * t * t * b.1
                        + t * t * t * p.1;
                    out.push((x, y));
                }
                *cur = *p;
            }
            _ => {}
        }
        pts.clear();
    };
    for part in d.split_whitespace() {
        let xy = match part.chars().next() {
            Some(c) if c.is_ascii_alphabetic() => {
                flush(cmd, &mut pts, &mut cur);
                cmd = c;
                &part[1..]
            }
            _ => part,
        };
        if let Some((x, y)) = xy.split_once(',')
            && let (Ok(x), Ok(y)) = (x.parse::<f64>(), y.parse::<f64>())
        {
            pts.push((x, y));
        }
    }
    flush(cmd, &mut pts, &mut cur);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every edge of `g` against every node that is not one of its ends: no sample inside a box.
    fn crossings(g: &Placement) -> Vec<(u32, u32, u32)> {
        let mut bad = Vec::new();
        for e in &g.edges {
            for (x, y) in samples(&e.d, 40) {
                for n in &g.nodes {
                    if n.id == e.from || n.id == e.to {
                        continue;
                    }
                    if x > n.x + 0.5 && x < n.x + n.w - 0.5 && y > n.y + 0.5 && y < n.y + n.h - 0.5
                    {
                        bad.push((e.from, e.to, n.id));
                        break;
                    }
                }
            }
        }
        bad.dedup();
        bad
    }

    fn graph(n: u32, edges: &[(u32, u32)]) -> Placement {
        let nodes: Vec<Input> = (1..=n).map(|id| Input { id }).collect();
        let edges: Vec<(u32, u32, &'static str, String)> = edges
            .iter()
            .map(|(f, t)| (*f, *t, "data", format!("a{f}")))
            .collect();
        place(&nodes, &edges).unwrap()
    }

    #[test]
    fn a_long_edge_goes_around_the_nodes_between() {
        // 1 → 2 → 3 → 4 and 1 → 4: the long edge must not run through 2 or 3.
        let g = graph(4, &[(1, 2), (2, 3), (3, 4), (1, 4)]);
        assert_eq!(crossings(&g), []);
        let x: Vec<f64> = g.nodes.iter().map(|n| n.x).collect();
        assert!(x[0] < x[1] && x[1] < x[2] && x[2] < x[3], "{x:?}");
    }

    #[test]
    fn too_large_graphs_are_refused_before_the_layout() {
        let nodes: Vec<Input> = (1..=(MAX_NODES as u32 + 1))
            .map(|id| Input { id })
            .collect();
        assert_eq!(
            place(&nodes, &[]).unwrap_err(),
            TooLarge::Nodes(MAX_NODES + 1)
        );
        // A dense graph: every node from every earlier one.
        let nodes: Vec<Input> = (1..=120).map(|id| Input { id }).collect();
        let edges: Vec<(u32, u32, &'static str, String)> = (1..=120)
            .flat_map(|t| (1..t).map(move |f| (f, t, "data", String::new())))
            .collect();
        assert!(matches!(place(&nodes, &edges), Err(TooLarge::Span(_))));
    }

    #[test]
    fn paths_survive_the_shift_and_sample_on_their_ends() {
        assert_eq!(
            shift_path("M1.0,2.0 C3,4 5,6 7.0,8.0 L9,10", 1.0, -1.0),
            "M2.0,1.0 C4.0,3.0 6.0,5.0 8.0,7.0 L10.0,9.0"
        );
        let s = samples("M0,0 L10,0 C10,0 20,10 20,10", 2);
        assert_eq!(s.first(), Some(&(0.0, 0.0)));
        assert_eq!(s.last(), Some(&(20.0, 10.0)));
        assert_eq!(s.len(), 5);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Random lineages (each call from a few earlier ones): no edge through a node not its own.
        #[test]
        fn no_edge_passes_through_a_node_not_its_own(
            n in 2u32..40,
            raw in proptest::collection::vec((0u32..1000, 0u32..1000), 0..80),
        ) {
            let edges: Vec<(u32, u32)> = raw
                .iter()
                .map(|(a, b)| {
                    let t = 2 + b % (n - 1);
                    (1 + a % (t - 1), t)
                })
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let g = graph(n, &edges);
            prop_assert_eq!(crossings(&g), vec![]);
        }
    }
}
