//! Strict conversion between the boxed values inside Monty (see `src/lower/prelude.py`) and [`LValue`].
//!
//! Everything crossing the boundary is checked: a value that is not exactly a well-formed box, or whose
//! label is not a well-formed packed label, is refused; the caller denies the call (fail closed).
//!
//! ```
//! use monty_types::MontyObject;
//! use zamburak::label::Packed;
//! use zamburak::runtime::boxing::{rebox, unbox};
//! use zamburak::value::{LValue, Raw};
//! let v = LValue::new(Raw::List(vec![LValue::new(Raw::Str("a".into()), Packed::from_bits(Packed::LITERAL.bits() | 1))]), Packed::LITERAL);
//! assert_eq!(unbox(&rebox(&v)).unwrap(), v);
//! assert!(unbox(&MontyObject::String("raw".into())).is_err());
//! ```

use monty_types::MontyObject;

use num_bigint::{BigInt, BigUint, Sign};

use crate::label::{MAX_WIDE_WORDS, Packed};
use crate::value::{LValue, Raw};

/// Deepest nesting accepted across the boundary.
pub const MAX_DEPTH: usize = 128;

/// Why a value could not cross the boundary.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BoxError {
    #[error("not a labelled value")]
    NotBoxed,
    #[error("malformed label")]
    BadLabel,
    #[error("a value of this type cannot be passed to a tool")]
    Unsupported,
    #[error("value nested too deeply")]
    TooDeep,
}

fn label(obj: &MontyObject) -> Result<Packed, BoxError> {
    packed_of(obj).ok_or(BoxError::BadLabel)
}

/// A packed label as Monty holds it: a small int while it names no call from `NARROW_CALLS` on, a big
/// int past that. `None` for anything that is not a well-formed label.
pub fn packed_of(obj: &MontyObject) -> Option<Packed> {
    let p = match obj {
        MontyObject::Int(l) => Packed::from_bits(*l),
        MontyObject::BigInt(b) => {
            let (sign, digits) = b.to_u64_digits();
            if sign == Sign::Minus || digits.len() > MAX_WIDE_WORDS + 2 {
                return None;
            }
            let low = digits.first().copied().unwrap_or(0) & (i64::MAX as u64);
            let (_, wide) = (b >> 63u32).to_u64_digits();
            // `low` has its top bit cleared, so it fits an i64.
            Packed::from_parts(low as i64, wide)
        }
        _ => return None,
    };
    p.is_well_formed().then_some(p)
}

/// The Monty form of a packed label (see [`packed_of`]).
pub fn label_object(p: &Packed) -> MontyObject {
    if p.wide().is_empty() {
        return MontyObject::Int(p.bits());
    }
    let bytes: Vec<u8> = p.wide().iter().flat_map(|w| w.to_le_bytes()).collect();
    let wide = BigInt::from(BigUint::from_bytes_le(&bytes)) << 63u32;
    MontyObject::BigInt(wide | BigInt::from(p.bits()))
}

/// Converts a boxed Monty value into a labelled host value.
pub fn unbox(obj: &MontyObject) -> Result<LValue, BoxError> {
    unbox_at(obj, 0)
}

fn unbox_at(obj: &MontyObject, depth: usize) -> Result<LValue, BoxError> {
    if depth > MAX_DEPTH {
        return Err(BoxError::TooDeep);
    }
    let MontyObject::Tuple(pair) = obj else {
        return Err(BoxError::NotBoxed);
    };
    let [raw, lbl] = pair.as_slice() else {
        return Err(BoxError::NotBoxed);
    };
    let reference = label(lbl)?;
    if let MontyObject::List(b) = raw {
        // The kind is bytes, which no plan value can be (docs/lowering.md, "Unforgeable boxes").
        let [MontyObject::Bytes(kind), items, s] = b.as_slice() else {
            return Err(BoxError::NotBoxed);
        };
        let structure = label(s)?.join(&reference);
        let raw = match (kind.as_slice(), items) {
            (b"l", MontyObject::List(xs)) => Raw::List(unbox_all(xs, depth)?),
            (b"t", MontyObject::List(xs)) => Raw::Tuple(unbox_all(xs, depth)?),
            (b"s", MontyObject::Dict(pairs)) => Raw::List(
                pairs
                    .iter()
                    .map(|(_, v)| unbox_at(v, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            (b"d", MontyObject::Dict(pairs)) => {
                let mut entries = Vec::with_capacity(pairs.len());
                for (_, kv) in pairs {
                    let MontyObject::Tuple(kv) = kv else {
                        return Err(BoxError::NotBoxed);
                    };
                    let [k, v] = kv.as_slice() else {
                        return Err(BoxError::NotBoxed);
                    };
                    entries.push((unbox_at(k, depth + 1)?, unbox_at(v, depth + 1)?));
                }
                Raw::Dict(entries)
            }
            _ => return Err(BoxError::NotBoxed),
        };
        return Ok(LValue::new(raw, structure));
    }
    let raw = match raw {
        MontyObject::None => Raw::None,
        MontyObject::Bool(b) => Raw::Bool(*b),
        MontyObject::Int(i) => Raw::Int(*i),
        MontyObject::Float(f) => Raw::Float(*f),
        MontyObject::String(s) => Raw::Str(s.clone()),
        _ => return Err(BoxError::Unsupported),
    };
    Ok(LValue::new(raw, reference))
}

fn unbox_all(xs: &[MontyObject], depth: usize) -> Result<Vec<LValue>, BoxError> {
    xs.iter().map(|x| unbox_at(x, depth + 1)).collect()
}

/// Converts a labelled host value into its boxed Monty form. Containers get `label` as both their
/// structure and reference label.
pub fn rebox(v: &LValue) -> MontyObject {
    let lbl = label_object(&v.label);
    let boxed = |kind: &[u8], items: MontyObject| {
        MontyObject::List(vec![MontyObject::Bytes(kind.to_vec()), items, lbl.clone()])
    };
    let raw = match &v.raw {
        Raw::None => MontyObject::None,
        Raw::Bool(b) => MontyObject::Bool(*b),
        Raw::Int(i) => MontyObject::Int(*i),
        Raw::Float(f) => MontyObject::Float(*f),
        Raw::Str(s) => MontyObject::String(s.clone()),
        Raw::List(xs) => boxed(b"l", MontyObject::List(xs.iter().map(rebox).collect())),
        Raw::Tuple(xs) => boxed(b"t", MontyObject::List(xs.iter().map(rebox).collect())),
        Raw::Dict(entries) => boxed(
            b"d",
            MontyObject::dict(
                entries
                    .iter()
                    .map(|(k, val)| (raw_key(k), MontyObject::Tuple(vec![rebox(k), rebox(val)])))
                    .collect::<Vec<_>>(),
            ),
        ),
    };
    MontyObject::Tuple(vec![raw, lbl])
}

/// The raw hashable key of a dict entry.
fn raw_key(k: &LValue) -> MontyObject {
    match &k.raw {
        Raw::None => MontyObject::None,
        Raw::Bool(b) => MontyObject::Bool(*b),
        Raw::Int(i) => MontyObject::Int(*i),
        Raw::Float(f) => MontyObject::Float(*f),
        Raw::Str(s) => MontyObject::String(s.clone()),
        Raw::Tuple(xs) => MontyObject::Tuple(xs.iter().map(raw_key).collect()),
        // Unhashable keys cannot come from JSON tool results; render them as text so nothing is lost.
        Raw::List(_) | Raw::Dict(_) => MontyObject::String(k.to_json().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_past_the_i64_cross_the_boundary_exactly() {
        for p in [
            Packed::LITERAL,
            Packed::from_bits(i64::MAX),
            Packed::from_parts(5, vec![1]),
            Packed::from_parts(Packed::LITERAL.bits() | 1, vec![0, u64::MAX, 1 << 63]),
        ] {
            let obj = label_object(&p);
            assert_eq!(packed_of(&obj), Some(p.clone()), "{p:?}");
            let v = LValue::new(Raw::Str("x".into()), p);
            assert_eq!(unbox(&rebox(&v)).unwrap(), v);
        }
    }

    #[test]
    fn malformed_labels_are_refused() {
        assert_eq!(packed_of(&MontyObject::Int(-1)), None);
        assert_eq!(
            packed_of(&MontyObject::BigInt(BigInt::from(-1) << 80u32)),
            None
        );
        assert_eq!(
            packed_of(&MontyObject::BigInt(
                BigInt::from(1) << (64 * (MAX_WIDE_WORDS + 4))
            )),
            None
        );
        assert_eq!(packed_of(&MontyObject::String("0".into())), None);
    }
}
