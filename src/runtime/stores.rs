//! The host's side of stores that keep labels (docs/semantics.md, "Stores keep labels"): before the files
//! sandbox writes, the label of what it writes is kept ([`crate::tools::stored_labels`]); after it reads, the
//! kept label joins the policy's.

use serde_json::{Map, Value};

use super::host::RunHost;
use crate::label::{Label, Packed, Readers};
use crate::policy::servers::{Source, ToolSource};
use crate::tools::stored_labels::{self, Kept, Recalled};
use crate::tools::{ToolError, files};
use crate::value::LValue;

impl RunHost<'_, '_> {
    /// The files root when `name` is the files sandbox's `source` (`read`, `write`), else `None`.
    fn files_source(&self, name: &str) -> Option<(Source, std::path::PathBuf)> {
        let source = match self.policy.tool(name)?.source.as_ref()? {
            ToolSource::Builtin(s @ (Source::FilesRead | Source::FilesWrite)) => *s,
            _ => return None,
        };
        let root = self.policy.builtins().files.as_ref()?.root.clone();
        Some((source, root))
    }

    /// Before a write of the files sandbox: keeps the label of what it writes (its content, its path and
    /// the control context it is written under). `Err`: the write must not happen, with the reason.
    pub(super) fn keep_written_label(
        &self,
        name: &str,
        args: &[(String, LValue)],
        raw: &Map<String, Value>,
        pc: &Packed,
    ) -> Result<(), ToolError> {
        let Some((Source::FilesWrite, root)) = self.files_source(name) else {
            return Ok(());
        };
        let (Some(Value::String(path)), Some(Value::String(content))) =
            (raw.get("path"), raw.get("content"))
        else {
            // The adapter refuses the call for its arguments; nothing is written to keep a label for.
            return Ok(());
        };
        let (root, item) = files::item(&root, path)?;
        let label = args
            .iter()
            .filter(|(n, _)| n == "content" || n == "path")
            .fold(self.space.decode(pc), |acc, (_, v)| {
                acc.join(&self.space.decode(&v.deep_label()))
            });
        if label.unknown {
            return Err(ToolError::Refused(
                "the label of what would be written could not be computed",
            ));
        }
        let view = self.space.describe(&label);
        let kept = Kept {
            item,
            content: crate::digest::sha256_bytes(content.as_bytes()),
            untrusted: label.is_untrusted(),
            tags: label
                .tags
                .iter()
                .filter_map(|t| self.space.tag_name(t).map(str::to_string))
                .collect(),
            readers: match &label.readers {
                Readers::Public => None,
                Readers::Only(set) => Some(
                    set.iter()
                        .filter_map(|p| self.space.principal_name(*p).map(str::to_string))
                        .collect(),
                ),
            },
            sources: view.sources,
            run: None,
        };
        stored_labels::keep(&root, &kept)
    }

    /// After a read of the files sandbox: the label kept for the item read, in this run's label space, as
    /// a source of call `call_id` (literal when nothing is kept; unknown when a record cannot be read).
    pub(super) fn recalled_label(
        &mut self,
        name: &str,
        call_id: u32,
        raw: &Map<String, Value>,
        value: &Value,
    ) -> Packed {
        let Some((Source::FilesRead, root)) = self.files_source(name) else {
            return Packed::LITERAL;
        };
        let (Some(Value::String(path)), Value::String(content)) = (raw.get("path"), value) else {
            return Packed::LITERAL;
        };
        let Ok((root, item)) = files::item(&root, path) else {
            // The read itself succeeded, so the item exists; not finding it again fails closed.
            return Packed::UNKNOWN;
        };
        let kept = match stored_labels::recall(&root, &item, content) {
            Recalled::Nothing => return Packed::LITERAL,
            Recalled::Broken => return Packed::UNKNOWN,
            Recalled::Kept(kept) => kept,
        };
        let tags: Vec<&str> = kept.tags.iter().map(String::as_str).collect();
        let readers: Option<Vec<&str>> = kept
            .readers
            .as_ref()
            .map(|r| r.iter().map(String::as_str).collect());
        match self
            .space
            .tool_result(call_id, kept.untrusted, &tags, readers.as_deref())
        {
            Ok(label) => self.space.encode(&label),
            // A tag this policy no longer declares: what it meant cannot be honoured.
            Err(_) => self.space.encode(&Label::unknown()),
        }
    }
}
