//! What each built-in adapter takes and gives back, as JSON Schema: the arguments it reads (by the names of
//! [`Source::args`]) and the value a plan receives (the e-mail record, a written file's record, a fetched
//! page). An MCP tool's are its server's `inputSchema` and `outputSchema`; these are the built-ins' own, in
//! the same language, so `zamburak stubs` renders both one way. The tests below run the real adapters and
//! check what they return against these schemas, so a change to an adapter's result that is not made here
//! too fails there.
//!
//! ```
//! use zamburak::policy::model::Source;
//! use zamburak::tools::records::{input_schema, output_schema};
//! let input = input_schema(Source::MailList);
//! assert_eq!(input["properties"]["limit"]["type"], "integer");
//! assert_eq!(output_schema(Source::MailList)["items"]["title"], "Email");
//! ```

use serde_json::{Map, Value, json};

use crate::policy::servers::Source;

fn string(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

fn strings(description: &str) -> Value {
    json!({ "type": "array", "items": { "type": "string" }, "description": description })
}

/// An object schema whose every property is required and nothing else is present.
fn record(title: &str, properties: &[(&str, Value)]) -> Value {
    let props: Map<String, Value> = properties
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let required: Vec<&str> = properties.iter().map(|(k, _)| *k).collect();
    json!({
        "title": title,
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}

/// One e-mail, as `builtin.mail.list`, `get` and `search` give it (`mail::record`).
pub fn email() -> Value {
    record(
        "Email",
        &[
            ("id", string("the message's id in the Maildir")),
            ("from", string("the sender's address ('' when none)")),
            ("to", strings("the recipients' addresses")),
            ("cc", strings("the copied addresses")),
            ("subject", string("the subject ('' when none)")),
            (
                "date",
                string("the date the sender wrote, RFC 3339 ('' when none or invalid)"),
            ),
            ("received", string("when it was delivered, RFC 3339 UTC")),
            ("body", string("the text body")),
        ],
    )
}

/// What `builtin.mail.send` and `builtin.mail.commit` give back.
fn sent_mail() -> Value {
    let mut r = record(
        "SentMail",
        &[
            (
                "id",
                string("the message's id in the outbox or drafts folder"),
            ),
            (
                "status",
                json!({ "enum": ["sent", "drafted"], "description": "`drafted` when the decision was `draft`" }),
            ),
            (
                "sha256",
                string("a draft's digest, which committing it names (only when drafted)"),
            ),
        ],
    );
    r["required"] = json!(["id", "status"]);
    r
}

/// The arguments `source` reads, as an object schema whose properties are [`Source::args`].
pub fn input_schema(source: Source) -> Value {
    let props: Vec<(&str, Value)> = source
        .args()
        .iter()
        .map(|&arg| {
            let schema = match (source, arg) {
                (Source::MailList, "limit") => {
                    json!({ "type": "integer", "minimum": 0, "description": "how many messages, newest delivered first" })
                }
                (Source::MailSend, "to") => json!({
                    "anyOf": [{ "type": "string" }, { "type": "array", "items": { "type": "string" } }],
                    "description": "one address, or a list of addresses",
                }),
                (Source::MailCommit, "sha256") => {
                    string("the draft's digest, as `send` gave it when drafting")
                }
                (Source::FilesList | Source::FilesRead | Source::FilesWrite, "path") => {
                    string("a path relative to the files root")
                }
                (Source::WebGet, "url") => string("an absolute URL the policy's builtins.web.allow lists"),
                _ => json!({ "type": "string" }),
            };
            (arg, schema)
        })
        .collect();
    let mut schema = record("", &props);
    if let Some(o) = schema.as_object_mut() {
        o.remove("title");
    }
    schema
}

/// The value a plan receives from `source`.
pub fn output_schema(source: Source) -> Value {
    match source {
        Source::MailList | Source::MailSearch => json!({ "type": "array", "items": email() }),
        Source::MailGet => email(),
        Source::MailSend | Source::MailCommit => sent_mail(),
        Source::FilesList => strings("names in the directory, sorted; directories end with `/`"),
        Source::FilesRead => string("the file's text"),
        Source::FilesWrite => record(
            "WrittenFile",
            &[
                (
                    "path",
                    string("the path written, relative to the files root"),
                ),
                (
                    "bytes",
                    json!({ "type": "integer", "description": "how many bytes were written" }),
                ),
            ],
        ),
        Source::WebGet => record(
            "Page",
            &[
                ("url", string("the URL fetched, normalised")),
                (
                    "status",
                    json!({ "type": "integer", "description": "the HTTP status code" }),
                ),
                (
                    "body",
                    string("the response body as text (invalid UTF-8 replaced)"),
                ),
            ],
        ),
    }
}

/// The shape language of a `builtin.llm.PROVIDER` tool's `schema` argument (`tools::llm`): `"str"`,
/// `"int"`, `"float"`, `"bool"`, a one-element list of one of those, or a dict of shapes.
pub fn llm_shape_schema() -> Value {
    let scalar = json!({ "enum": ["str", "int", "float", "bool"] });
    json!({
        "title": "Shape",
        "anyOf": [
            scalar,
            { "type": "array", "items": scalar, "minItems": 1, "maxItems": 1 },
            { "type": "object", "additionalProperties": { "$ref": "#/$defs/Shape" }, "minProperties": 1 },
        ],
    })
}

/// The arguments of a `builtin.llm.PROVIDER` tool (`policy::validate::sources`'s `LLM_ARGS`, in that order).
pub fn llm_input_schema() -> Value {
    json!({
        "type": "object",
        "$defs": { "Shape": llm_shape_schema() },
        "properties": {
            "prompt": string("the question, written in the plan"),
            "data": { "description": "the text or values to read the answer from: any value" },
            "schema": { "$ref": "#/$defs/Shape" },
        },
        "required": ["prompt", "data", "schema"],
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::schema::check;
    use crate::policy::builtins::{BuiltinsConfig, FilesConfig, MailConfig};
    use crate::tools::Builtins;

    fn conforms(source: Source, value: &Value) {
        if let Err(e) = check(&output_schema(source), value, "") {
            panic!("{} gave {value} outside its schema: {e}", source.name());
        }
    }

    #[test]
    fn every_source_has_schemas_for_exactly_its_arguments() {
        for source in Source::ALL {
            let input = input_schema(source);
            let props: Vec<&str> = input["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(props, source.args(), "{}", source.name());
            assert!(output_schema(source).is_object());
        }
        let llm = llm_input_schema();
        let props: Vec<&str> = llm["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(props, ["prompt", "data", "schema"]);
    }

    #[test]
    fn the_adapters_give_what_their_schemas_say() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("files");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.txt"), "inside").unwrap();
        let maildir = dir.path().join("inbox");
        for sub in ["cur", "new", "tmp"] {
            std::fs::create_dir_all(maildir.join(sub)).unwrap();
        }
        std::fs::write(
            maildir.join("cur/1.M1P1.host:2,S"),
            "From: a@example.com\r\nTo: me@example.com, b@example.com\r\nCc: c@example.com\r\n\
             Subject: hi\r\nDate: Tue, 4 Nov 2025 10:00:00 +0000\r\n\r\nbody\r\n",
        )
        .unwrap();
        std::fs::write(maildir.join("cur/2.M2P1.host:2,S"), "no headers at all").unwrap();
        let cfg = BuiltinsConfig {
            mail: Some(MailConfig {
                maildir: maildir.clone(),
                outbox: dir.path().join("outbox"),
                drafts: dir.path().join("drafts"),
            }),
            files: Some(FilesConfig { root }),
            web: None,
        };
        let b = Builtins::new(&cfg, "me@example.com");
        let args = |pairs: &[(&str, Value)]| -> Map<String, Value> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect()
        };
        let call = |source: Source, a: &Map<String, Value>, draft: Option<&str>| {
            // Each argument is refused with a value of another type (a number for a string or a list of strings,
            // a string for a number):
            // the adapter reads what its schema says.
            for (name, schema) in input_schema(source)["properties"].as_object().unwrap() {
                let wrong = if schema["type"] == "integer" {
                    json!("5")
                } else {
                    json!(5)
                };
                let mut bad = a.clone();
                bad.insert(name.clone(), wrong);
                let err = b.call(source.name(), &bad, draft).unwrap_err();
                assert!(
                    matches!(err, crate::tools::ToolError::BadArgument(n) if n == name),
                    "{} {name}: {err}",
                    source.name()
                );
            }
            let v = b.call(source.name(), a, draft).unwrap();
            conforms(source, &v);
            v
        };
        let listed = call(Source::MailList, &args(&[("limit", json!(10))]), None);
        assert_eq!(listed.as_array().unwrap().len(), 2);
        call(Source::MailSearch, &args(&[("query", json!("hi"))]), None);
        // The check can fail: a record without its body, or with a key the schema does not name, is out.
        let mut partial = listed[0].clone();
        partial.as_object_mut().unwrap().remove("body");
        assert!(check(&email(), &partial, "").is_err());
        let mut extra = listed[0].clone();
        extra["x"] = json!(1);
        assert!(check(&email(), &extra, "").is_err());
        let id = listed[0]["id"].clone();
        call(Source::MailGet, &args(&[("id", id)]), None);
        let send = |to: Value, draft| {
            call(
                Source::MailSend,
                &args(&[("to", to), ("subject", json!("s")), ("body", json!("b"))]),
                draft,
            )
        };
        send(json!("a@example.com"), None);
        let drafted = send(
            json!(["a@example.com", "b@example.com"]),
            Some("a test draft"),
        );
        assert_eq!(drafted["status"], "drafted");
        call(
            Source::MailCommit,
            &args(&[
                ("id", drafted["id"].clone()),
                ("sha256", drafted["sha256"].clone()),
            ]),
            None,
        );
        call(Source::FilesList, &args(&[("path", json!("."))]), None);
        call(Source::FilesRead, &args(&[("path", json!("a.txt"))]), None);
        call(
            Source::FilesWrite,
            &args(&[("path", json!("sub/b.txt")), ("content", json!("hi"))]),
            None,
        );
        // The web adapter against a real HTTP server on loopback.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            use std::io::{Read, Write};
            let (mut stream, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno",
            );
        });
        let web = crate::policy::builtins::WebConfig {
            allow: vec![format!("http://127.0.0.1:{port}/")],
            timeout_ms: Some(3000),
            max_bytes: None,
        };
        let page = crate::tools::web::get(&web, &format!("http://127.0.0.1:{port}/x")).unwrap();
        conforms(Source::WebGet, &page);
        assert_eq!(page["status"], 404);
        server.join().unwrap();
    }
}

/// An argument whose JSON type is not one its schema allows: the argument, the types allowed as Python
/// writes them (`str | list[str]`), and the type it had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub arg: String,
    pub expected: String,
    pub got: &'static str,
}

/// The Python name of a JSON value's type, as a plan would write it.
pub fn python_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "None",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int",
        Value::Number(_) => "float",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The Python types one schema allows (`str`, `list[str]`, `int`), or `None` when it does not say (any).
fn allowed(schema: &Value) -> Option<Vec<String>> {
    if let Some(alts) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        let mut out = Vec::new();
        for a in alts {
            out.extend(allowed(a)?);
        }
        return Some(out);
    }
    let ty = schema.get("type")?.as_str()?;
    Some(vec![match ty {
        "string" => "str".into(),
        "integer" => "int".into(),
        "number" => "float".into(),
        "boolean" => "bool".into(),
        "null" => "None".into(),
        "object" => "dict".into(),
        "array" => match schema.get("items").and_then(allowed).as_deref() {
            Some([one]) => format!("list[{one}]"),
            _ => "list".into(),
        },
        _ => return None,
    }])
}

/// Whether `v` is of the Python type `ty` (as [`allowed`] names them; an `int` is a `float` too).
fn is_of(v: &Value, ty: &str) -> bool {
    match (ty, v) {
        ("float", Value::Number(_)) => true,
        (t, Value::Array(items)) if t.starts_with("list[") => {
            let inner = &t["list[".len()..t.len() - 1];
            items.iter().all(|i| is_of(i, inner))
        }
        (t, v) => python_type(v) == t,
    }
}

/// The first argument of `args` whose type the built-in `source`'s [`input_schema`] does not allow, in the
/// order of [`Source::args`]. Missing arguments are not mismatches (the plan checks refuse those).
///
/// ```
/// use zamburak::policy::model::Source;
/// use zamburak::tools::records::argument_mismatch;
/// let args = serde_json::json!({ "to": "a@b.c", "subject": "s", "body": 42 });
/// let m = argument_mismatch(Source::MailSend, args.as_object().unwrap()).unwrap();
/// assert_eq!((m.arg.as_str(), m.expected.as_str(), m.got), ("body", "str", "int"));
/// let args = serde_json::json!({ "to": ["a@b.c", 1], "subject": "s", "body": "b" });
/// let m = argument_mismatch(Source::MailSend, args.as_object().unwrap()).unwrap();
/// assert_eq!(m.expected, "str | list[str]");
/// ```
pub fn argument_mismatch(source: Source, args: &Map<String, Value>) -> Option<Mismatch> {
    let schema = input_schema(source);
    let props = schema.get("properties")?.as_object()?;
    for &name in source.args() {
        let (Some(v), Some(s)) = (args.get(name), props.get(name)) else {
            continue;
        };
        let Some(types) = allowed(s) else { continue };
        if !types.iter().any(|t| is_of(v, t)) {
            return Some(Mismatch {
                arg: name.to_string(),
                expected: types.join(" | "),
                got: python_type(v),
            });
        }
    }
    None
}
