//! A loopback OpenAI-compatible chat server (axum on 127.0.0.1) that plays a scripted model: per step
//! (the request's `response_format.json_schema.name`) a list of replies given in turn, the last one
//! repeated. It records every request, so a test can check what was sent.
#![allow(
    dead_code,
    reason = "each test crate uses its own part of the shared helpers"
)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// What the server answers with.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A completion whose message content is this text.
    Content(String),
    Status(u16),
    /// A body of this many bytes (not JSON).
    Huge(usize),
}

/// Per step: the index of the next reply, and the replies.
type Script = HashMap<String, (usize, Vec<Reply>)>;

#[derive(Clone, Default)]
pub struct ChatServer {
    pub port: u16,
    requests: Arc<Mutex<Vec<Value>>>,
    script: Arc<Mutex<Script>>,
}

/// The step a request is for.
pub fn step(body: &Value) -> String {
    body["response_format"]["json_schema"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The user message of a request.
pub fn user_message(body: &Value) -> String {
    body["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn completions(State(s): State<ChatServer>, Json(body): Json<Value>) -> Response {
    let step = step(&body);
    s.requests.lock().unwrap().push(body);
    let reply = {
        let mut script = s.script.lock().unwrap();
        match script.get_mut(&step) {
            Some((next, replies)) if !replies.is_empty() => {
                let r = replies[(*next).min(replies.len() - 1)].clone();
                *next += 1;
                r
            }
            _ => Reply::Status(404),
        }
    };
    match reply {
        Reply::Content(text) => Json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})).into_response(),
        Reply::Status(code) => StatusCode::from_u16(code).unwrap().into_response(),
        Reply::Huge(n) => "x".repeat(n).into_response(),
    }
}

impl ChatServer {
    /// Starts the server on a free loopback port.
    pub fn start() -> ChatServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let state = ChatServer {
            port: listener.local_addr().unwrap().port(),
            ..ChatServer::default()
        };
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(completions))
            .with_state(state.clone());
        serve(listener, app);
        state
    }

    /// The replies to `step`, in turn; the last one repeats.
    pub fn script(&self, step: &str, replies: Vec<Reply>) {
        self.script
            .lock()
            .unwrap()
            .insert(step.to_string(), (0, replies));
    }

    /// A JSON answer to `step`, always.
    pub fn answer(&self, step: &str, answer: Value) {
        self.script(step, vec![Reply::Content(answer.to_string())]);
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// The requests for `step`, in order.
    pub fn requests_for(&self, step_name: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|b| step(b) == step_name)
            .collect()
    }
}

/// Serves `app` on `listener` (a loopback port the caller bound) from a thread of its own, for the test's
/// lifetime.
pub fn serve(listener: std::net::TcpListener, app: axum::Router) {
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
}
