//! The plan's interpreter in a child process: `zamburak run` re-executes itself as a worker
//! (`zamburak __worker`), which holds the Monty session and nothing else: no policy, no tools, no trace, no
//! environment, no descriptors beyond its pipes. Every external call the plan makes crosses the pipe as a
//! typed message ([`Request`], [`Reply`]); the parent decides it exactly as in process
//! ([`super::machine::Machine`] is the one interface both sides implement).
//!
//! A worker lives under limits set before it reads its first message: an allocator that counts every byte
//! against `limits.max_memory_mb` (Monty raises `MemoryError` at the soft limit; a burst past the hard
//! limit ends the process with [`monty_types::OOM_EXIT_CODE`]), an address-space and a CPU-time limit, and
//! no core dumps. However it ends, the parent reads why from its exit status ([`client`]) and ends the run
//! as an error with an `end` record: a plan can end its worker, never the process holding the trace.
//!
//! `limits.timeout_ms` holds in wall-clock time even for one long operation Monty's clock never interrupts
//! (a big-integer power): before the plan's code runs, the worker tells the parent how much of the budget
//! is left ([`Reply::Running`]), and the parent kills the worker when that much time and a grace period
//! ([`client::DEADLINE_GRACE`]) have passed without a step.
//!
//! Messages are frames: a little-endian `u32` length, then JSON. A frame larger than [`MAX_FRAME`] from the
//! worker ends the run (a plan handing one call more than 64 MiB).

pub mod client;
pub mod pool;
pub mod process;
pub mod serve;
pub mod stop;

use std::io::{self, Read, Write};

use monty_types::MontyObject;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::machine::{MachineError, MachineLimits, RawCall, Step};

/// The hidden subcommand that runs a worker.
pub const SUBCOMMAND: &str = "__worker";

/// Largest message the parent reads from a worker.
pub const MAX_FRAME: usize = 64 << 20;

/// What the parent asks of a worker.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    Start {
        snippet: String,
        limits: MachineLimits,
    },
    Restore {
        paused: Value,
        limits: MachineLimits,
    },
    Resume {
        value: MontyObject,
    },
    Park,
}

/// What a worker answers, one reply per request; before the [`Reply::Step`] of a `Start` or `Resume`, a
/// [`Reply::Running`].
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// The plan's code starts running now, with this many milliseconds of its time budget left (`None`: no
    /// budget).
    Running {
        budget_ms: Option<u64>,
    },
    Step(Step),
    Restored(Result<RawCall, MachineError>),
    Parked(Result<Value, MachineError>),
}

/// Deepest JSON nesting a message may have. A plan value may nest [`crate::runtime::boxing::MAX_DEPTH`]
/// levels, and each boxed level is about nine JSON levels; deeper input is refused before it is parsed, so
/// a message can never exhaust the reader's stack.
pub const MAX_JSON_DEPTH: usize = 2000;

/// Stack of the threads that parse messages (and, in the worker, run the plan): parsing recurses once per
/// nesting level, and an unoptimised build needs several KiB per level. Reserved, not committed: only what
/// is used is memory.
pub const PARSE_STACK: usize = 256 << 20;

/// Parses a message: its nesting is measured first (without recursion), then it is parsed with
/// serde_json's own recursion limit (128) lifted.
pub fn parse<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let depth = json_depth(bytes);
    if depth > MAX_JSON_DEPTH {
        return Err(format!(
            "a value nested {depth} levels deep is deeper than {MAX_JSON_DEPTH}"
        ));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let value = T::deserialize(&mut de).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// The deepest nesting of arrays and objects in `bytes`, read as JSON text (brackets inside strings do not
/// count). Malformed text gets some number; the parser refuses it afterwards.
fn json_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Writes one frame.
pub fn write_frame(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let len = u32::try_from(bytes.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "message too large"))?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(bytes)?;
    out.flush()
}

/// Reads one frame of at most `max` bytes; `None` at a clean end of input.
pub fn read_frame(input: &mut impl Read, max: usize) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    // A clean end is one before any byte of a frame; a cut inside the length is an error like any other.
    let first = loop {
        match input.read(&mut len[..1]) {
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
    if first == 0 {
        return Ok(None);
    }
    input.read_exact(&mut len[1..])?;
    let len = u32::from_le_bytes(len) as usize;
    if len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message of {len} bytes is larger than {max}"),
        ));
    }
    let mut bytes = vec![0u8; len];
    input.read_exact(&mut bytes)?;
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_refuse_oversized_or_cut_input() {
        let mut buf = Vec::new();
        write_frame(&mut buf, b"{\"Park\":null}").unwrap();
        write_frame(&mut buf, b"").unwrap();
        let mut r = &buf[..];
        assert_eq!(
            read_frame(&mut r, 100).unwrap().unwrap(),
            b"{\"Park\":null}"
        );
        assert_eq!(read_frame(&mut r, 100).unwrap().unwrap(), b"");
        assert!(read_frame(&mut r, 100).unwrap().is_none(), "clean end");
        let mut big = &buf[..];
        assert!(read_frame(&mut big, 3).is_err(), "larger than the bound");
        let mut cut = &buf[..6];
        assert!(read_frame(&mut cut, 100).is_err(), "cut inside a frame");
        let mut cut_length = &b"hi\n"[..];
        assert!(
            read_frame(&mut cut_length, 100).is_err(),
            "cut inside the length"
        );
    }

    #[test]
    fn nesting_is_measured_outside_strings_and_bounded() {
        // Parsed on a thread with the stack the real readers get.
        std::thread::Builder::new()
            .stack_size(PARSE_STACK)
            .spawn(nesting_checks)
            .unwrap()
            .join()
            .unwrap();
    }

    fn nesting_checks() {
        assert_eq!(json_depth(br#"{"a":[1,{"b":"[[[\"]]"}]}"#), 3);
        let deep = format!(
            "{}{}",
            "[".repeat(MAX_JSON_DEPTH + 1),
            "]".repeat(MAX_JSON_DEPTH + 1)
        );
        assert!(
            parse::<Value>(deep.as_bytes())
                .unwrap_err()
                .contains("deeper than")
        );
        let ok = format!(
            "{}{}",
            "[".repeat(MAX_JSON_DEPTH),
            "]".repeat(MAX_JSON_DEPTH)
        );
        assert!(
            parse::<Value>(ok.as_bytes()).is_ok(),
            "past serde_json's own 128"
        );
        assert!(parse::<Value>(b"[1] x").is_err(), "trailing bytes");
    }
}
