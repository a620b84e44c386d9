//! The pages, from the minijinja templates in `templates/` (embedded). Autoescaping is on for every
//! template (their names end in `.html`), and no template marks trace data `safe`: every string from the
//! trace reaches the page escaped.

use minijinja::value::Serde;
use std::collections::BTreeMap;

use minijinja::{Environment, context};

use super::graph::{self, Graph};
use super::model::TraceView;
use super::sites::{self, SiteView};

/// The stylesheet, served as a file by the server and inlined by the export.
pub const CSS: &str = include_str!("../../static/view.css");

const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("../../templates/base.html")),
    ("summary.html", include_str!("../../templates/summary.html")),
    ("plan.html", include_str!("../../templates/plan.html")),
    ("graph.html", include_str!("../../templates/graph.html")),
    ("call.html", include_str!("../../templates/call.html")),
    ("export.html", include_str!("../../templates/export.html")),
    ("missing.html", include_str!("../../templates/missing.html")),
    (
        "_summary.html",
        include_str!("../../templates/_summary.html"),
    ),
    ("_plan.html", include_str!("../../templates/_plan.html")),
    ("_graph.html", include_str!("../../templates/_graph.html")),
    ("_call.html", include_str!("../../templates/_call.html")),
    ("_label.html", include_str!("../../templates/_label.html")),
    (
        "_lineage.html",
        include_str!("../../templates/_lineage.html"),
    ),
    (
        "_revealed.html",
        include_str!("../../templates/_revealed.html"),
    ),
];

/// Most nodes of one call's lineage drawn in an export.
pub const FOCUS_MAX_NODES: usize = 200;

/// Most nodes of all the lineages an export draws together.
pub const EXPORT_FOCUS_BUDGET: usize = 5_000;

/// A trace ready to render: the view and its laid-out graph.
pub struct Pages {
    env: Environment<'static>,
    pub view: TraceView,
    pub graph: Graph,
    /// The graph's nodes before layout, for the lineage of one call ([`graph::focus`]).
    nodes: Vec<graph::Node>,
    /// Each call's plan line, for drawing a long lineage by call site.
    lines: BTreeMap<u32, u32>,
    /// The calls by call site, failures first, and the sentence for the most severe decision.
    pub sites: Vec<SiteView>,
    pub headline: Option<String>,
}

/// Which page.
pub enum Page {
    Summary,
    Plan,
    /// The whole graph, or (`graph?focus=N`) the lineage of call N alone.
    Graph(Option<u32>),
    Call(u32),
}

impl Pages {
    pub fn new(view: TraceView) -> Result<Pages, String> {
        let mut env = Environment::new();
        for (name, text) in TEMPLATES {
            env.add_template(name, text)
                .map_err(|e| format!("template {name}: {e}"))?;
        }
        let nodes = graph::nodes(&view);
        let lines: BTreeMap<u32, u32> = view.calls.iter().map(|c| (c.id, c.line)).collect();
        let graph = laid_out(&nodes, &lines);
        Ok(Pages {
            sites: sites::group(&view.calls),
            headline: sites::headline(&view.calls),
            env,
            view,
            graph,
            nodes,
            lines,
        })
    }

    /// The lineage of one call, laid out; `None` when the trace has no such call.
    pub fn focus(&self, call: u32) -> Option<Graph> {
        graph::focus(&self.nodes, call).map(|n| laid_out(&n, &self.lines))
    }

    /// One page of the server, whose links start with `root` (`/TOKEN/`). `None`: no such call.
    pub fn page(&self, page: &Page, root: &str) -> Option<Result<String, String>> {
        let call_href = format!("{root}call/");
        let mut focus: BTreeMap<String, Graph> = BTreeMap::new();
        let mut shown = None;
        let (name, call) = match page {
            Page::Summary => ("summary.html", None),
            Page::Plan => ("plan.html", None),
            Page::Graph(None) => ("graph.html", None),
            Page::Graph(Some(id)) => {
                shown = Some((*id, self.focus(*id)?));
                ("graph.html", None)
            }
            Page::Call(id) => {
                let c = self.view.calls.iter().find(|c| c.id == *id)?;
                if let Some(g) = self.focus(*id) {
                    focus.insert(id.to_string(), g);
                }
                ("call.html", Some(c))
            }
        };
        let (graph, focused) = match &shown {
            Some((id, g)) => (g, Some(*id)),
            None => (&self.graph, None),
        };
        Some(self.render(
            name,
            context! {
                view => Serde(&self.view),
                sites => Serde(&self.sites),
                headline => &self.headline,
                graph => Serde(graph),
                focused => focused,
                focus => Serde(&focus),
                root => root,
                call_href => call_href,
                plan_href => format!("{root}plan#line-"),
                graph_href => format!("{root}graph?focus="),
                c => Serde(call),
            },
        ))
    }

    /// The page for a call id the trace does not have: what ids it does have, and the way back.
    pub fn missing_call(&self, id: u32, root: &str) -> Result<String, String> {
        self.render(
            "missing.html",
            context! {
                view => Serde(&self.view),
                root => root,
                call_href => format!("{root}call/"),
                id => id,
            },
        )
    }

    /// The whole trace as one self-contained page: inline style, inline SVG, no script.
    pub fn export(&self) -> Result<String, String> {
        // The lineage of every call that was not simply allowed, drawn in its section: what a reader of a
        // shared export needs to see why, without a server.
        // Bounded: each drawn lineage has at most FOCUS_MAX_NODES nodes and all of them together at most
        // EXPORT_FOCUS_BUDGET, so a long run whose denials each derive from most of the run cannot make the
        // export quadratic. A call left without one says so and keeps its links.
        let mut focus: BTreeMap<String, Graph> = BTreeMap::new();
        let mut budget = EXPORT_FOCUS_BUDGET;
        for c in self.view.calls.iter().filter(|c| c.decision != "allow") {
            let Some(nodes) = graph::focus(&self.nodes, c.id) else {
                continue;
            };
            if nodes.len() > FOCUS_MAX_NODES || nodes.len() > budget {
                continue;
            }
            budget -= nodes.len();
            focus.insert(c.id.to_string(), laid_out(&nodes, &self.lines));
        }
        self.render(
            "export.html",
            context! {
                view => Serde(&self.view),
                sites => Serde(&self.sites),
                headline => &self.headline,
                graph => Serde(&self.graph),
                focus => Serde(&focus),
                focused => None::<u32>,
                graph_href => "#call-",
                root => "#",
                call_href => "#call-",
                plan_href => "#line-",
                // Our own constant, not trace data: inlined as is. Autoescaping it turned `/` into `&#x2f;`
                // inside <style>, where entities are not decoded, and the export lost its fonts.
                css => minijinja::Value::from_safe_string(CSS.to_string()),
            },
        )
    }

    fn render(&self, name: &str, ctx: minijinja::Value) -> Result<String, String> {
        self.env
            .get_template(name)
            .and_then(|t| t.render(ctx))
            .map_err(|e| format!("cannot render {name}: {e}"))
    }
}

/// `nodes` laid out: one node per call, or per call site above [`graph::GROUP_ABOVE`] nodes (a loop of
/// 500 calls is one node).
fn laid_out(nodes: &[graph::Node], lines: &BTreeMap<u32, u32>) -> Graph {
    if nodes.len() > graph::GROUP_ABOVE {
        let mut g = graph::layout(&graph::grouped(nodes, lines));
        g.grouped = true;
        g
    } else {
        graph::layout(nodes)
    }
}

#[cfg(test)]
mod tests {
    /// The export inlines the stylesheet unescaped; a `<` in it could end the `<style>` element early.
    #[test]
    fn the_stylesheet_cannot_leave_its_style_element() {
        assert!(!super::CSS.contains('<'));
    }
}
