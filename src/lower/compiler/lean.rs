//! Lean forms of four general helper calls, behind [`super::Options::fused_idioms`] like the fused idioms
//! (docs/lowering.md, "Speed"): each prelude helper makes the checks of the general one in the same order
//! and gives the same value and label, and hands everything off its fast path to the general helper;
//! `tests/properties/fused_idioms.rs` compiles every corpus scenario and random plans with and without them and
//! requires the same labels at every call.
//!
//! * `c[k]` with a literal or flat-name key: `_gif(c, kr, kl)`, the key passed raw (no boxed key built),
//!   for `_gi(c, (kr, kl))`.
//! * `f(a)`, a plan function or function value with one positional argument: `_call1(f, pc, a)`, for
//!   `_call(f, pc, a)` without packing `*args, **kw`.
//! * `d.get(k, [])` with a key that is not flat: `_mgl(d, k, pc, line)`, for `_m_get(d, [k, _mk(_KL, [],
//!   pc)], ...)`, the default list made only where it is returned (a plan's grouping idiom).
//! * An f-string: `_fs([...])` with its literal parts as plain strings and the values of its replacement
//!   fields without conversion or format spec as they are (a str value is its own text), for `_fcat` of
//!   `(literal, _LIT)` tuples and `_fv` calls.

use super::*;

impl Compiler<'_> {
    /// A subscript key evaluated once and given raw: a str or int literal, or a flat name.
    pub(super) fn is_simple_flat_key(&self, e: &Expr) -> bool {
        match e {
            Expr::StringLiteral(_) => true,
            Expr::NumberLiteral(n) => matches!(n.value, Number::Int(_)),
            Expr::Name(n) => self.is_shadow(n.id.as_str()),
            _ => false,
        }
    }

    /// `_fs([...])` for an f-string (`fstring` writes `_fcat([...])` without the fused forms).
    pub(super) fn fstring_fast(&mut self, f: &ruff_python_ast::ExprFString, pc: &str) -> String {
        let mut parts = Vec::new();
        for part in f.value.iter() {
            match part {
                FStringPart::Literal(l) => parts.push(py_str(&l.value)),
                FStringPart::FString(fs) => {
                    for el in fs.elements.iter() {
                        match el {
                            InterpolatedStringElement::Literal(l) => parts.push(py_str(&l.value)),
                            InterpolatedStringElement::Interpolation(i)
                                if i.debug_text.is_none()
                                    && i.conversion == ConversionFlag::None
                                    && i.format_spec.is_none() =>
                            {
                                parts.push(self.expr(&i.expression, pc));
                            }
                            other => match self.fstring_element(other, pc) {
                                Some(p) => parts.push(p),
                                None => return "None".into(),
                            },
                        }
                    }
                }
            }
        }
        format!("_fs([{}])", parts.join(", "))
    }
}
