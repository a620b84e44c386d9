//! The starting policy `zamburak policy init` writes for the built-in tools: the built-in default
//! (`policies/default.yaml`, one source) with its data paths made relative to the written file, so the
//! policy works from the directory it is written to. What the tools may do is the default's, word for word.

use super::BUNDLED_DEFAULT;

/// The directories the starting policy names, relative to it: the Maildir the mail tools read and the
/// folder the file tools are confined to. `policy init` creates them when missing, empty.
pub const READ_DIRS: [&str; 2] = ["mail/inbox", "files"];

const BUILTINS: &str = "\
builtins:                           # where the built-in tools find data; relative to this file
  mail:
    maildir: mail/inbox             # a Maildir (cur/ new/ tmp/) read by read_inbox, get_email, search_email
    outbox: out/outbox              # send_email delivers here (created on the first send)
    drafts: out/drafts              # draft_reply and `draft` decisions write here
  files:
    root: files                     # list_files, read_file, write_file cannot leave this directory
  web:
    allow: [\"http://127.0.0.1\"]     # URL prefixes fetch_url may reach: add the sites your plans may read
    timeout_ms: 5000                # per request
    max_bytes: 1048576              # largest page returned
";

/// The text of the starting policy.
///
/// ```
/// let text = zamburak::policy::starter::builtin_policy();
/// let p = zamburak::policy::Policy::from_yaml_str(&text, "zamburak.yaml", std::path::Path::new("/home/me")).unwrap();
/// let files = p.file().builtins.as_ref().unwrap().files.as_ref().unwrap();
/// assert_eq!(files.root, std::path::Path::new("/home/me/files"));
/// ```
pub fn builtin_policy() -> String {
    // The default ends with its `builtins:` section; everything before it is kept.
    let rules = BUNDLED_DEFAULT
        .find("\nbuiltins:")
        .map_or(BUNDLED_DEFAULT, |at| &BUNDLED_DEFAULT[..at + 1]);
    let rules = rules.replacen(
        "# Zamburak default policy:",
        "# Your Zamburak policy, written by `zamburak policy init` from the built-in default:",
        1,
    );
    let rules = rules.replacen(
        "user: me@example.com                # the person the assistant works for: a reader of every value",
        "user: me@example.com                # YOUR address: the person the assistant works for, a reader of every value",
        1,
    );
    format!("{rules}{BUILTINS}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;

    #[test]
    fn the_starter_is_the_default_but_for_where_the_data_is() {
        let dir = std::path::Path::new("/srv/me");
        let starter = Policy::from_yaml_str(&builtin_policy(), "zamburak.yaml", dir).unwrap();
        let default = Policy::from_yaml_str(BUNDLED_DEFAULT, "zamburak.yaml", dir).unwrap();
        assert_eq!(starter.file().tools, default.file().tools);
        assert_eq!(starter.file().verifiers, default.file().verifiers);
        assert_eq!(starter.file().limits, default.file().limits);
        assert_eq!(starter.file().tags, default.file().tags);
        let b = starter.file().builtins.clone().unwrap();
        let mail = b.mail.unwrap();
        assert_eq!(mail.maildir, dir.join("mail/inbox"));
        assert_eq!(mail.outbox, dir.join("out/outbox"));
        assert_eq!(b.files.unwrap().root, dir.join("files"));
        assert_eq!(b.web, default.file().builtins.clone().unwrap().web);
        assert!(builtin_policy().starts_with("# Your Zamburak policy"));
        assert!(builtin_policy().contains("user: me@example.com                # YOUR address"));
    }
}
