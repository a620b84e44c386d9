//! A value on the host side of the Monty boundary, with its labels: what tools receive and return.
//!
//! Inside Monty every value is boxed with a packed label (see `lower`); the host converts strictly between
//! that form and this one (`runtime::boxing`). Tool adapters and fixtures produce plain JSON, which the
//! runtime labels per the policy into an [`LValue`] tree.

use crate::label::Packed;

/// The raw part of a labelled value. Containers hold labelled elements.
#[derive(Clone, Debug, PartialEq)]
pub enum Raw {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<LValue>),
    Tuple(Vec<LValue>),
    /// Keys keep their own labels; order is insertion order.
    Dict(Vec<(LValue, LValue)>),
}

/// A labelled value. For a scalar, `label` is its label; for a container, it is the structure label (what
/// its length, key set, order and membership reveal), already joined with the label of the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct LValue {
    pub raw: Raw,
    pub label: Packed,
}

impl LValue {
    pub fn new(raw: Raw, label: Packed) -> LValue {
        LValue { raw, label }
    }

    /// The join of this value's label and every label inside it (what a builtin taking the whole value sees).
    ///
    /// ```
    /// use zamburak::label::Packed;
    /// use zamburak::value::{LValue, Raw};
    /// let secret = LValue::new(Raw::Str("s".into()), Packed::from_bits(Packed::LITERAL.bits() | 1));
    /// let list = LValue::new(Raw::List(vec![secret]), Packed::LITERAL);
    /// assert_eq!(list.deep_label().bits() & 1, 1);
    /// ```
    pub fn deep_label(&self) -> Packed {
        match &self.raw {
            Raw::List(items) | Raw::Tuple(items) => items
                .iter()
                .fold(self.label.clone(), |acc, v| acc.join(&v.deep_label())),
            Raw::Dict(entries) => entries.iter().fold(self.label.clone(), |acc, (k, v)| {
                acc.join(&k.deep_label()).join(&v.deep_label())
            }),
            _ => self.label.clone(),
        }
    }

    /// The raw value as JSON (what an adapter receives). Dict keys are rendered as strings; floats that JSON
    /// cannot hold (NaN, infinities) become `null`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.raw {
            Raw::None => Value::Null,
            Raw::Bool(b) => Value::Bool(*b),
            Raw::Int(i) => Value::from(*i),
            Raw::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Raw::Str(s) => Value::String(s.clone()),
            Raw::List(items) | Raw::Tuple(items) => {
                Value::Array(items.iter().map(LValue::to_json).collect())
            }
            Raw::Dict(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let key = match &k.raw {
                            Raw::Str(s) => s.clone(),
                            _ => k.to_json().to_string(),
                        };
                        (key, v.to_json())
                    })
                    .collect(),
            ),
        }
    }
}
