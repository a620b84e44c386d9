//! Limits: the run's `limits:` section (time, depth, memory, tool calls) and the bounds of servers and
//! providers that must be positive when given.

use super::{Ctx, Kind, PolicyError, Seg};
use crate::policy::model::{Limits, PolicyFile};

pub(super) fn check_limits(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    let Some(limits) = &file.limits else {
        return Ok(());
    };
    if limits.timeout_ms == Some(0) {
        return Err(cx
            .at_value(
                Kind::InvalidValue,
                &[Seg::Key("limits"), Seg::Key("timeout_ms")],
                "`timeout_ms` is 0",
            )
            .expected("a positive number of milliseconds"));
    }
    if limits.max_recursion == Some(0) {
        return Err(cx
            .at_value(
                Kind::InvalidValue,
                &[Seg::Key("limits"), Seg::Key("max_recursion")],
                "`max_recursion` is 0",
            )
            .expected("a positive depth"));
    }
    if let Some(mb) = limits.max_memory_mb
        && !(1..=Limits::MAX_MAX_MEMORY_MB).contains(&mb)
    {
        return Err(cx
            .at_value(
                Kind::InvalidValue,
                &[Seg::Key("limits"), Seg::Key("max_memory_mb")],
                format!("`max_memory_mb` is {mb}"),
            )
            .expected(format!(
                "a positive number of MiB, at most {}",
                Limits::MAX_MAX_MEMORY_MB
            )));
    }
    // Lineage is exact for this many calls (docs/semantics.md, packed labels); a run past it would name
    // fewer sources than its values derive from.
    if limits
        .max_tool_calls
        .is_some_and(|n| n > crate::label::MAX_SOURCE_CALLS)
    {
        return Err(cx
            .at_value(
                Kind::InvalidValue,
                &[Seg::Key("limits"), Seg::Key("max_tool_calls")],
                "`max_tool_calls` is larger than lineage can track",
            )
            .expected(format!(
                "at most {} calls per run",
                crate::label::MAX_SOURCE_CALLS
            )));
    }
    Ok(())
}

/// Limits under `path` that must be positive when given (0 would let nothing through).
pub(super) fn check_positive(
    cx: &Ctx<'_>,
    path: &[Seg<'_>],
    limits: &[(&'static str, Option<u64>)],
) -> Result<(), PolicyError> {
    for (key, value) in limits {
        if *value == Some(0) {
            let mut at = path.to_vec();
            at.push(Seg::Key(key));
            return Err(cx
                .at_value(Kind::InvalidValue, &at, "0 lets nothing through")
                .expected("a positive number"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Case, each_points_at_its_mistake};
    use crate::policy::PolicyErrorKind as Kind;

    const CASES: &[Case] = &[
        (
            "version: 1\nlimits: { timeout_ms: 0 }\n",
            2,
            23,
            "`timeout_ms` is 0",
            Kind::InvalidValue,
        ),
        (
            "version: 1\nlimits: { max_recursion: 0 }\n",
            2,
            26,
            "`max_recursion` is 0",
            Kind::InvalidValue,
        ),
        (
            "version: 1\nlimits: { max_tool_calls: 2000000 }\n",
            2,
            27,
            "larger than lineage can track",
            Kind::InvalidValue,
        ),
    ];

    #[test]
    fn each_check_points_at_its_mistake() {
        each_points_at_its_mistake(CASES);
    }
}
