//! A tool backend for in-process runs: answers each call by a function of the tool's name and records every
//! call that reaches it (so a test can assert that a denied call never ran).
#![allow(
    dead_code,
    reason = "each test crate uses its own part of the shared helpers"
)]

use serde_json::{Map, Value};
use zamburak::runtime::run::Backend;

pub struct Canned<F: Fn(&str) -> Value> {
    answer: F,
    /// The tools invoked, in order.
    pub calls: Vec<String>,
}

impl<F: Fn(&str) -> Value> Canned<F> {
    pub fn new(answer: F) -> Canned<F> {
        Canned {
            answer,
            calls: Vec::new(),
        }
    }
}

/// `get()` returns `value`; every other tool returns `None`.
pub fn get_returns(value: Value) -> Canned<impl Fn(&str) -> Value> {
    Canned::new(move |tool| {
        if tool == "get" {
            value.clone()
        } else {
            Value::Null
        }
    })
}

impl<F: Fn(&str) -> Value> Backend for Canned<F> {
    fn invoke(
        &mut self,
        tool: &str,
        _: Option<&zamburak::policy::servers::ToolSource>,
        _: &Map<String, Value>,
        _: Option<&str>,
    ) -> Result<Value, zamburak::runtime::backend::Failure> {
        self.calls.push(tool.to_string());
        Ok((self.answer)(tool))
    }
}
