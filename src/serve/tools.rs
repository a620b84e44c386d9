//! The server's four tools, declared through rmcp's tool router: each `#[tool]` method's description is
//! what the model reads, and its input schema is made from the arguments' struct (its fields' doc
//! comments are the properties' descriptions). [`Server::call`] is what `tools/call` does before the
//! router: the few things the router cannot say in Zamburak's words.

use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use serde_json::Value;

use super::{Server, tool_error};
use crate::runtime::setup::MAX_PLAN_BYTES;

/// The tool a 2026-07-28 client retries with the person's answer to a form ([`Server::call`]).
const RUN: &str = "run_plan";

/// What a call of a tool this server does not have is answered.
const NO_SUCH_TOOL: &str =
    "no such tool: the tools are describe_tools, lint_plan, run_plan and run_status";

/// The arguments of `lint_plan` and `run_plan`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PlanArgs {
    /// The plan: Python in Zamburak's subset.
    plan: String,
}

/// The arguments of `run_status`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct RunArgs {
    /// The run id run_plan returned, e.g. run-1.
    run: String,
}

/// A plan over the size limit `zamburak run` has for plan files: what to answer instead of reading it.
fn too_large(plan: &str) -> Option<CallToolResult> {
    (plan.len() as u64 > MAX_PLAN_BYTES)
        .then(|| tool_error(&format!("the plan is larger than {MAX_PLAN_BYTES} bytes")))
}

#[tool_router(vis = "pub(super)")]
impl Server {
    #[tool(
        description = "What a plan may call under this server's policy: typed stubs of its tools and \
                       verifiers, what each argument requires, the Python subset and example plans. Read it \
                       before writing a plan."
    )]
    fn describe_tools(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(self.stubs.clone())])
    }

    #[tool(
        description = "Check a plan without running it: lint's JSON diagnostics (codes, lines, messages, \
                       fixes) and the predicted decision of each tool call."
    )]
    async fn lint_plan(&self, Parameters(args): Parameters<PlanArgs>) -> CallToolResult {
        match too_large(&args.plan) {
            Some(refused) => refused,
            None => self.lint(args.plan).await,
        }
    }

    #[tool(
        description = "Run a plan under the policy. Returns the status, each tool call's decision, where the \
                       plan stopped, and what it printed when you may read it; data you may not read is shown \
                       to the person instead and named by its label. A call that needs the person's approval \
                       waits for them: you cannot approve it."
    )]
    async fn run_plan(
        &self,
        Parameters(args): Parameters<PlanArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        if let Some(refused) = too_large(&args.plan) {
            return refused.into();
        }
        // rmcp does not drop the handler of a request the client cancelled, it cancels the request's
        // token: the run's future is dropped here, which stops the run ([`super::runs::Runs::run`]). The
        // answer is never sent (rmcp drops it).
        let run = tokio::select! {
            run = self.run(args.plan) => run,
            () = context.ct.cancelled() => {
                Err(tool_error("the client cancelled the run; it was stopped"))
            }
        };
        match run {
            Ok(doc) => self.run_answer(doc, &context).await,
            Err(e) => e.into(),
        }
    }

    #[tool(
        description = "The state of an earlier run (pending, completed, denied, error…), e.g. after the person \
                       decided on a waiting call."
    )]
    async fn run_status(&self, Parameters(args): Parameters<RunArgs>) -> CallToolResult {
        self.status(args.run).await
    }
}

impl Server {
    /// A `tools/call`. Three answers are given here rather than by the router, each in Zamburak's words
    /// where the router's would differ; the rest is the router's.
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // A 2026-07-28 retry of `run_plan` (the person's answer to the form an input-required result
        // gave) is answered from its request state alone: its arguments are not read, so a client need
        // not send the plan again. The router's `run_plan` takes a required plan, and a typed
        // `Parameters` cannot make an argument required on one round and not on the other.
        if request.name == RUN
            && let Some(state) = request.request_state.as_deref()
        {
            return Ok(self.answered(&request, state).await.into());
        }
        // The router answers an unknown tool with a JSON-RPC error (invalid params, "tool not found"); a
        // client's model reads a tool error result, and is told which tools there are.
        let Some(tool) = self.tools.get(&request.name) else {
            return Ok(tool_error(NO_SUCH_TOOL).into());
        };
        // The router answers arguments that do not deserialize with a tool error result in serde's words
        // ("failed to deserialize parameters: missing field `plan`"); the listed schema says the same in
        // ours.
        if let Some(why) = refused(&tool.input_schema, request.arguments.as_ref()) {
            return Ok(tool_error(&why).into());
        }
        self.tools
            .call(ToolCallContext::new(self, request, context))
            .await
    }
}

/// Whether a value is of one JSON type.
type Fits = fn(&Value) -> bool;

/// The JSON type a schema's `type` names, as a noun with its article, and the test of a value for it.
fn json_type(name: &str) -> Option<(&'static str, Fits)> {
    Some(match name {
        "string" => ("a string", Value::is_string),
        "boolean" => ("a boolean", Value::is_boolean),
        "number" => ("a number", Value::is_number),
        "integer" => ("an integer", |v| v.is_i64() || v.is_u64()),
        "object" => ("an object", Value::is_object),
        "array" => ("an array", Value::is_array),
        _ => return None,
    })
}

/// Why `arguments` do not fit a tool's listed input `schema` (a required property missing, or one of
/// another JSON type), in Zamburak's words; `None` when they fit as far as these two rules go (the
/// arguments' deserialization says the rest).
fn refused(schema: &JsonObject, arguments: Option<&JsonObject>) -> Option<String> {
    let properties = schema.get("properties").and_then(Value::as_object)?;
    let required = |name: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)))
    };
    properties.iter().find_map(|(name, property)| {
        let (noun, fits) = json_type(property.get("type")?.as_str()?)?;
        match arguments.and_then(|a| a.get(name)) {
            Some(value) if !fits(value) => Some(format!("argument `{name}` must be {noun}")),
            None if required(name) => Some(format!("missing argument `{name}` ({noun})")),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listed() -> Vec<rmcp::model::Tool> {
        Server::tool_router().list_all()
    }

    fn args(doc: Value) -> JsonObject {
        doc.as_object().cloned().unwrap_or_default()
    }

    /// The tools, their descriptions and their input schemas as they were written by hand before the
    /// router: the schemas differ only by the `$schema` key schemars writes (and `describe_tools`'s empty
    /// `required`, which rmcp's schema of no arguments leaves out).
    #[test]
    fn the_listed_tools_are_those_written_by_hand_before() {
        let plan = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": { "plan": { "type": "string", "description": "The plan: Python in Zamburak's subset." } },
            "required": ["plan"]
        });
        let expected = [
            (
                "describe_tools",
                "What a plan may call under this server's policy: typed stubs of its tools and verifiers, what \
                 each argument requires, the Python subset and example plans. Read it before writing a plan.",
                json!({ "type": "object", "properties": {} }),
            ),
            (
                "lint_plan",
                "Check a plan without running it: lint's JSON diagnostics (codes, lines, messages, fixes) and \
                 the predicted decision of each tool call.",
                plan.clone(),
            ),
            (
                "run_plan",
                "Run a plan under the policy. Returns the status, each tool call's decision, where the plan \
                 stopped, and what it printed when you may read it; data you may not read is shown to the \
                 person instead and named by its label. A call that needs the person's approval waits for \
                 them: you cannot approve it.",
                plan,
            ),
            (
                "run_status",
                "The state of an earlier run (pending, completed, denied, error…), e.g. after the person \
                 decided on a waiting call.",
                json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": { "run": { "type": "string", "description": "The run id run_plan returned, e.g. run-1." } },
                    "required": ["run"]
                }),
            ),
        ];
        let tools = listed();
        assert_eq!(tools.len(), expected.len());
        for (tool, (name, description, schema)) in tools.iter().zip(expected) {
            assert_eq!(tool.name, name);
            assert_eq!(tool.description.as_deref(), Some(description), "{name}");
            assert_eq!(
                Value::Object((*tool.input_schema).clone()),
                schema,
                "{name}"
            );
        }
        let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
        assert_eq!(
            NO_SUCH_TOOL,
            format!(
                "no such tool: the tools are {}, {}, {} and {}",
                names[0], names[1], names[2], names[3]
            )
        );
        assert!(names.iter().any(|n| n == RUN));
    }

    #[test]
    fn arguments_the_schema_refuses_are_said_in_zamburaks_words() {
        let tools = listed();
        let schema = |name: &str| {
            tools
                .iter()
                .find(|t| t.name == name)
                .map(|t| (*t.input_schema).clone())
                .unwrap()
        };
        let run = schema("run_plan");
        for (given, said) in [
            (None, Some("missing argument `plan` (a string)")),
            (Some(json!({})), Some("missing argument `plan` (a string)")),
            (
                Some(json!({"plan": 123})),
                Some("argument `plan` must be a string"),
            ),
            (
                Some(json!({"plan": null})),
                Some("argument `plan` must be a string"),
            ),
            (
                Some(json!({"plan": ["x"]})),
                Some("argument `plan` must be a string"),
            ),
            (Some(json!({"plan": "print(1)\n"})), None),
            (Some(json!({"plan": "", "other": 1})), None),
        ] {
            let given = given.map(args);
            assert_eq!(refused(&run, given.as_ref()).as_deref(), said, "{given:?}");
        }
        assert_eq!(
            refused(&schema("run_status"), Some(&args(json!({"run": 1})))).as_deref(),
            Some("argument `run` must be a string")
        );
        assert_eq!(
            refused(&schema("describe_tools"), Some(&args(json!({"x": 1})))),
            None
        );
        assert_eq!(refused(&schema("describe_tools"), None), None);
        // A type the words do not know, or a union of types, is left to deserialization.
        let other =
            args(json!({"properties": {"n": {"type": ["string", "null"]}}, "required": ["n"]}));
        assert_eq!(refused(&other, None), None);
        let counted = args(json!({"properties": {"n": {"type": "integer"}}, "required": ["n"]}));
        assert_eq!(
            refused(&counted, Some(&args(json!({"n": 1.5})))).as_deref(),
            Some("argument `n` must be an integer")
        );
    }

    #[test]
    fn a_plan_over_the_limit_is_a_tool_error() {
        let limit = usize::try_from(MAX_PLAN_BYTES).unwrap();
        let refused = too_large(&"x".repeat(limit + 1)).unwrap();
        assert_eq!(refused.is_error, Some(true));
        assert!(too_large(&"x".repeat(limit)).is_none());
    }
}
