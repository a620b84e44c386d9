//! The hash-chained audit trace (`.zjson`): JSON Lines where every record carries `seq`, `prev` (the previous
//! record's hash) and `hash` (blake3 over its canonical JSON without `hash`). See `docs/trace.md`.
//!
//! * [`record`]: the typed records; [`writer`]: appending them; [`reader`] and [`verify`]: reading and
//!   checking; [`redact`]: digests, previews and redacted messages; [`canonical`]: the byte-exact forms;
//!   [`values`]: the owner's store of the values the trace names only by digest.

pub mod canonical;
pub mod error;
pub mod reader;
pub mod record;
pub mod redact;
pub mod values;
pub mod verify;
pub mod writer;

pub use error::TraceError;
pub use record::Record;
pub use verify::{Broken, VerifyReport, read, verify};
pub use writer::TraceWriter;
