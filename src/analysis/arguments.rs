//! What lint checks about a tool call's arguments against the tool itself, not against the labels: a literal
//! of a type the tool does not take (Z110), a literal URL that no `builtins.web.allow` entry reaches (Z111),
//! and a key read from a tool's record that the record does not have (Z112). Each is a call that would fail
//! at run time whatever the data says, so lint reports it as an error, with a fix where the plan alone says
//! what was meant.
//!
//! The types and record shapes are the built-in adapters' own ([`crate::tools::records`]), the same the
//! runtime checks and `zamburak stubs` prints. MCP tools are checked by their servers.

use std::collections::BTreeMap;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, ExprCall, ModModule, Number, Stmt};
use ruff_text_size::{Ranged, TextRange};
use serde_json::Value;

use crate::plan::diagnostic::{Edit, Fix};
use crate::plan::structure::edit_distance;
use crate::plan::{Audience, Code, Diagnostic};
use crate::policy::Policy;
use crate::policy::model::Source;
use crate::tools::records;

fn span(r: TextRange) -> (usize, usize) {
    (r.start().into(), r.end().into())
}

/// A literal as the JSON value the tool would receive; `None` for anything that is not one.
fn literal(e: &Expr) -> Option<Value> {
    Some(match e {
        Expr::StringLiteral(s) => Value::String(s.value.to_str().to_string()),
        Expr::BooleanLiteral(b) => Value::Bool(b.value),
        Expr::NoneLiteral(_) => Value::Null,
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(i) => Value::from(i.as_i64()?),
            Number::Float(f) => serde_json::Number::from_f64(*f).map(Value::Number)?,
            Number::Complex { .. } => return None,
        },
        Expr::List(l) => Value::Array(l.elts.iter().map(literal).collect::<Option<_>>()?),
        _ => return None,
    })
}

/// The built-in source of `tool`, when the policy serves it by one.
fn builtin(policy: &Policy, tool: &str) -> Option<Source> {
    policy.tool(tool)?.source.as_ref()?.builtin()
}

/// The keys of the record a value of `schema` is (an object with a closed set of properties), or of its
/// elements when it is a list of such records.
fn record_keys(schema: &Value) -> Option<Shape> {
    let (object, list) = match schema.get("type").and_then(Value::as_str) {
        Some("array") => (schema.get("items")?, true),
        Some("object") => (schema, false),
        _ => return None,
    };
    if object.get("additionalProperties") != Some(&Value::Bool(false)) {
        return None;
    }
    let props = object.get("properties")?.as_object()?;
    let keys = props.keys().cloned().collect();
    let described = props
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.get("description")?.as_str()?.to_string())))
        .collect();
    Some(Shape {
        tool: String::new(),
        keys,
        described,
        list,
    })
}

/// What a plan name holds, when lint can be sure: a record of a tool, or a list of them.
#[derive(Clone, Debug)]
struct Shape {
    tool: String,
    keys: Vec<String>,
    /// Each key's description in the record's schema (`from`: "the sender's address").
    described: Vec<(String, String)>,
    list: bool,
}

/// The one key whose description names `wrong` in its first words (`sender` → `from`, "the sender's
/// address"): the record's own documentation says which key holds it. Only the head of a description
/// counts ("the date the sender wrote" is about the date). `None` when no key, or more than one, does.
fn described_as(wrong: &str, described: &[(String, String)]) -> Option<String> {
    let wrong = wrong.to_lowercase().replace(['_', '-'], " ");
    let wanted: Vec<&str> = wrong.split_whitespace().collect();
    if wrong.len() < 3 || wanted.is_empty() {
        return None;
    }
    let mut found = described.iter().filter(|(_, d)| {
        let head: Vec<String> = d
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .take(3)
            .map(str::to_string)
            .collect();
        head.windows(wanted.len()).any(|w| {
            w.iter().zip(&wanted).all(|(a, b)| {
                a == b || a.strip_suffix('s') == Some(b) || b.strip_suffix('s') == Some(a.as_str())
            })
        })
    });
    let (key, _) = found.next()?;
    found.next().is_none().then(|| key.clone())
}

/// Runs the three checks over a plan that passed the front end.
pub fn check(module: &ModModule, policy: &Policy, audience: Audience) -> Vec<Diagnostic> {
    // A name assigned more than once (or bound by more than one loop) could hold anything: no shape.
    let mut counts = Assignments(BTreeMap::new());
    for s in &module.body {
        counts.visit_stmt(s);
    }
    let mut c = Checker {
        policy,
        audience,
        once: counts
            .0
            .into_iter()
            .filter(|(_, n)| *n == 1)
            .map(|(k, _)| k)
            .collect(),
        shapes: BTreeMap::new(),
        diags: Vec::new(),
    };
    for s in &module.body {
        c.visit_stmt(s);
    }
    c.diags
}

struct Assignments(BTreeMap<String, usize>);

impl<'a> Visitor<'a> for Assignments {
    fn visit_expr(&mut self, e: &'a Expr) {
        if let Expr::Name(n) = e
            && n.ctx == ruff_python_ast::ExprContext::Store
        {
            *self.0.entry(n.id.to_string()).or_default() += 1;
        }
        visitor::walk_expr(self, e);
    }
}

struct Checker<'p> {
    policy: &'p Policy,
    audience: Audience,
    once: std::collections::BTreeSet<String>,
    shapes: BTreeMap<String, Shape>,
    diags: Vec<Diagnostic>,
}

impl Checker<'_> {
    /// The shape of `e`: a call of a built-in tool, a name bound to one, or an element of a list of them.
    fn shape(&self, e: &Expr) -> Option<Shape> {
        match e {
            Expr::Call(c) => {
                let Expr::Name(f) = &*c.func else { return None };
                let source = builtin(self.policy, f.id.as_str())?;
                let shape = record_keys(&records::output_schema(source))?;
                Some(Shape {
                    tool: f.id.to_string(),
                    ..shape
                })
            }
            Expr::Name(n) => self.shapes.get(n.id.as_str()).cloned(),
            Expr::Subscript(s)
                if matches!(&*s.slice, Expr::NumberLiteral(_) | Expr::UnaryOp(_)) =>
            {
                let outer = self.shape(&s.value)?;
                outer.list.then_some(Shape {
                    list: false,
                    ..outer
                })
            }
            _ => None,
        }
    }

    fn bind(&mut self, target: &Expr, shape: Option<Shape>) {
        if let (Expr::Name(n), Some(shape)) = (target, shape)
            && self.once.contains(n.id.as_str())
        {
            self.shapes.insert(n.id.to_string(), shape);
        }
    }

    fn call(&mut self, c: &ExprCall) {
        let Expr::Name(f) = &*c.func else { return };
        let tool = f.id.as_str();
        let Some(source) = builtin(self.policy, tool) else {
            return;
        };
        let names = self
            .policy
            .tool(tool)
            .map(|t| t.arg_names())
            .unwrap_or_default();
        let bound = c
            .arguments
            .args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| Some((names.get(i)?.clone(), a)))
            .chain(
                c.arguments
                    .keywords
                    .iter()
                    .filter_map(|k| Some((k.arg.as_ref()?.to_string(), &k.value))),
            );
        for (name, value) in bound {
            let Some(json) = literal(value) else { continue };
            let one: serde_json::Map<String, Value> =
                [(name.clone(), json.clone())].into_iter().collect();
            if let Some(m) = records::argument_mismatch(source, &one) {
                let (start, end) = span(value.range());
                self.diags.push(
                    Diagnostic::new(
                        Code::ArgumentType,
                        start,
                        end,
                        format!(
                            "argument `{name}` of `{tool}` must be {}; got {}",
                            m.expected, m.got
                        ),
                    )
                    .with_hint(format!("pass a value of type {}", m.expected))
                    .with_fix(retype(&json, &m.expected, start, end)),
                );
                continue;
            }
            if source == Source::WebGet
                && name == "url"
                && let Value::String(url) = &json
            {
                self.url(tool, url, value.range());
            }
        }
    }

    fn url(&mut self, tool: &str, url: &str, range: TextRange) {
        let cfg = self
            .policy
            .file()
            .builtins
            .as_ref()
            .and_then(|b| b.web.as_ref());
        let entries = cfg.map(|w| w.allow.clone()).unwrap_or_default();
        if cfg.is_some_and(|w| crate::tools::web::allowed(w, url).is_some()) {
            return;
        }
        let (start, end) = span(range);
        let listed = if entries.is_empty() {
            "the policy lists no entry".to_string()
        } else {
            format!("its entries: {}", entries.join(", "))
        };
        self.diags.push(
            Diagnostic::new(
                Code::UrlNotAllowed,
                start,
                end,
                format!("`{tool}` cannot reach this URL: no entry of `builtins.web.allow` allows it ({listed})"),
            )
            .with_hint(match (self.audience, entries.is_empty()) {
                (Audience::Person, _) => {
                    "use a URL under one of the entries (scheme, host, port and path prefix must match), or add \
                     one to `builtins.web.allow` in the policy"
                }
                (Audience::Planner, false) => {
                    "use a URL under one of the entries (scheme, host, port and path prefix must match)"
                }
                (Audience::Planner, true) => "no URL can be fetched here: leave this call out",
            }),
        );
    }

    fn key(&mut self, value: &Expr, slice: &Expr) {
        let Expr::StringLiteral(k) = slice else {
            return;
        };
        let Some(shape) = self.shape(value) else {
            return;
        };
        if shape.list {
            return;
        }
        let key = k.value.to_str();
        if shape.keys.iter().any(|x| x == key) {
            return;
        }
        let nearest = shape
            .keys
            .iter()
            .map(|c| (edit_distance(key, c), c))
            .filter(|(d, c)| *d <= 2 + c.len() / 4)
            .min()
            .map(|(_, c)| c.clone());
        let (start, end) = span(k.range);
        let keys = shape
            .keys
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        // A near miss is a misspelling; a key the record's own descriptions name is a synonym.
        let (suggestion, safe) = match nearest {
            Some(n) => (Some(n), true),
            None => (described_as(key, &shape.described), false),
        };
        let hint = match &suggestion {
            Some(n) if safe => format!("did you mean `{n}`? its keys: {keys}"),
            Some(n) => {
                let said = shape
                    .described
                    .iter()
                    .find(|(k, _)| k == n)
                    .map_or("", |(_, d)| d.as_str());
                format!("did you mean `{n}` ({said})? its keys: {keys}")
            }
            None => format!("its keys: {keys}"),
        };
        let fix = suggestion.map(|n| {
            let edits = vec![Edit::replace(start, end, format!("\"{n}\""))];
            if safe {
                Fix::safe(format!("read `{n}`"), edits)
            } else {
                Fix::unsafe_(format!("read `{n}`"), edits)
            }
        });
        self.diags.push(
            Diagnostic::new(
                Code::UnknownRecordKey,
                start,
                end,
                format!("what `{}()` returns has no key `{key}`", shape.tool),
            )
            .with_hint(hint)
            .with_fix(fix),
        );
    }
}

/// A literal written in the type the tool takes, when the plan's literal says it unambiguously: `"5"` for an
/// `int` is `5`; `5` for a `str` is `"5"`.
fn retype(v: &Value, expected: &str, start: usize, end: usize) -> Option<Fix> {
    let text = match (v, expected) {
        (Value::String(s), "int") => s.trim().parse::<i64>().ok()?.to_string(),
        (Value::String(s), "float") => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())?
            .to_string(),
        (Value::Number(n), t) if t.split(" | ").any(|x| x == "str") => format!("\"{n}\""),
        _ => return None,
    };
    Some(Fix::safe(
        format!("write it as {expected}: `{text}`"),
        vec![Edit::replace(start, end, text)],
    ))
}

impl<'a> Visitor<'a> for Checker<'_> {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        match s {
            Stmt::Assign(a) => {
                self.visit_expr(&a.value);
                if let [target] = a.targets.as_slice() {
                    let shape = self.shape(&a.value);
                    self.bind(target, shape);
                }
                for t in &a.targets {
                    self.visit_expr(t);
                }
            }
            Stmt::For(f) => {
                self.visit_expr(&f.iter);
                let element = self
                    .shape(&f.iter)
                    .filter(|s| s.list)
                    .map(|s| Shape { list: false, ..s });
                self.bind(&f.target, element);
                self.visit_expr(&f.target);
                for s in &f.body {
                    self.visit_stmt(s);
                }
                for s in &f.orelse {
                    self.visit_stmt(s);
                }
            }
            _ => visitor::walk_stmt(self, s),
        }
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        let generators = match e {
            Expr::ListComp(c) => Some(&c.generators),
            Expr::SetComp(c) => Some(&c.generators),
            Expr::Generator(c) => Some(&c.generators),
            Expr::DictComp(c) => Some(&c.generators),
            _ => None,
        };
        // `[e["from"] for e in emails]`: the target holds one record of the list.
        for g in generators.into_iter().flatten() {
            let element = self
                .shape(&g.iter)
                .filter(|s| s.list)
                .map(|s| Shape { list: false, ..s });
            self.bind(&g.target, element);
        }
        match e {
            Expr::Call(c) => self.call(c),
            Expr::Subscript(s) if s.ctx == ruff_python_ast::ExprContext::Load => {
                self.key(&s.value, &s.slice)
            }
            _ => {}
        }
        visitor::walk_expr(self, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(plan: &str) -> Vec<(String, Option<String>)> {
        let policy = Policy::bundled_default().unwrap();
        let p = crate::plan::parse(plan).unwrap();
        check(&p.module, &policy, Audience::Person)
            .into_iter()
            .map(|d| {
                (
                    d.code.as_str().to_string(),
                    d.fix.and_then(|f| f.apply(plan)),
                )
            })
            .collect()
    }

    #[test]
    fn literal_types_urls_and_record_keys() {
        assert_eq!(
            codes("m = read_inbox(limit=\"5\")\n"),
            [("Z110".into(), Some("m = read_inbox(limit=5)\n".into()))]
        );
        assert!(codes("m = read_inbox(limit=5)\nsend_email(to=[\"a@example.com\"], subject=\"s\", body=\"b\")\n").is_empty());
        assert!(codes("p = fetch_url(url=\"http://127.0.0.1/help/x\")\n").is_empty());
        // The entry is `http://127.0.0.1`: port 80. Another port is another server.
        assert_eq!(
            codes("p = fetch_url(url=\"http://127.0.0.1:8080/x\")\n")[0].0,
            "Z111"
        );
        assert_eq!(
            codes("p = fetch_url(url=\"https://evil.test/x\")\n")[0].0,
            "Z111"
        );
        assert_eq!(
            codes("for m in read_inbox(limit=5):\n    print(m[\"subjet\"])\n"),
            [(
                "Z112".into(),
                Some("for m in read_inbox(limit=5):\n    print(m[\"subject\"])\n".into())
            )]
        );
        // `sender` is no key, but the record's description of `from` says it holds the sender.
        assert_eq!(
            codes("e = get_email(id=\"1\")\nprint(e[\"sender\"])\n"),
            [(
                "Z112".into(),
                Some("e = get_email(id=\"1\")\nprint(e[\"from\"])\n".into())
            )]
        );
        assert_eq!(
            codes("e = get_email(id=\"1\")\nprint(e[\"colour\"])\n"),
            [("Z112".into(), None)]
        );
        // A name assigned twice may hold anything else by then: not checked.
        assert!(
            codes("e = get_email(id=\"1\")\ne = {\"sender\": 1}\nprint(e[\"sender\"])\n")
                .is_empty()
        );
        assert!(codes("xs = read_inbox(limit=5)\nprint(xs[0][\"from\"])\n").is_empty());
        assert_eq!(
            codes("xs = read_inbox(limit=5)\nys = [x[\"sender\"] for x in xs]\n")[0].0,
            "Z112"
        );
    }
}
