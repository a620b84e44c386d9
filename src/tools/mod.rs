//! Built-in tool adapters over real local formats (a Maildir, a sandboxed directory, HTTP GET of allow-listed
//! URLs) and the verifiers. The runtime calls [`Builtins::call`] only for calls the policy allowed.
//!
//! ```
//! use zamburak::{policy::builtins::BuiltinsConfig, tools::Builtins};
//! let b = Builtins::new(&BuiltinsConfig::default(), "me@example.com");
//! let err = b.call("builtin.mail.list", &serde_json::Map::new(), None).unwrap_err();
//! assert!(err.to_string().contains("builtins.mail"));
//! ```

pub mod answer;
pub mod files;
pub mod llm;
pub mod mail;
pub mod records;
pub mod stored_labels;
pub mod verify;
pub mod web;

use serde_json::{Map, Value};

use crate::policy::builtins::{BuiltinsConfig, FilesConfig, MailConfig, WebConfig};

/// Why a built-in tool failed. The message is short and never repeats file contents or argument values
/// (plan arguments may be attacker data).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ToolError {
    #[error("the policy has no builtins.{0} section, so this tool has no data to work on")]
    NotConfigured(&'static str),
    #[error("unknown built-in tool source `{0}`")]
    UnknownSource(String),
    #[error("argument `{0}` is missing or has the wrong type")]
    BadArgument(&'static str),
    #[error("{0}")]
    Refused(&'static str),
    #[error("not found")]
    NotFound,
    #[error("input/output error")]
    Io,
    /// A directory the policy's `builtins` section names does not exist (a policy mistake, not data).
    #[error("`builtins.{key}` is {}, which does not exist", path.display())]
    MissingPath {
        key: &'static str,
        path: std::path::PathBuf,
    },
}

/// The configured directory at `key`, or the error naming it when it does not exist.
fn existing<'a>(
    key: &'static str,
    path: &'a std::path::Path,
) -> Result<&'a std::path::Path, ToolError> {
    if path.is_dir() {
        Ok(path)
    } else {
        Err(ToolError::MissingPath {
            key,
            path: path.to_path_buf(),
        })
    }
}

/// The built-in adapters, configured by a policy's `builtins:` section.
pub struct Builtins {
    config: BuiltinsConfig,
    user: String,
}

fn str_arg<'a>(args: &'a Map<String, Value>, name: &'static str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or(ToolError::BadArgument(name))
}

impl Builtins {
    pub fn new(config: &BuiltinsConfig, user: &str) -> Builtins {
        Builtins {
            config: config.clone(),
            user: user.to_string(),
        }
    }

    /// The `builtins.mail` section, or the error that says it is missing.
    fn mail(&self) -> Result<&MailConfig, ToolError> {
        self.config
            .mail
            .as_ref()
            .ok_or(ToolError::NotConfigured("mail"))
    }
    fn files(&self) -> Result<&FilesConfig, ToolError> {
        self.config
            .files
            .as_ref()
            .ok_or(ToolError::NotConfigured("files"))
    }
    fn web(&self) -> Result<&WebConfig, ToolError> {
        self.config
            .web
            .as_ref()
            .ok_or(ToolError::NotConfigured("web"))
    }

    /// Whether `source` can work on this machine before any call: its `builtins` section is there, and the
    /// directories it reads exist. Outbox and drafts folders are not checked: sending creates them. What a run
    /// checks before its first tool call, so a wrong path is a configuration error (exit 2), not a failed call.
    ///
    /// ```
    /// use zamburak::{policy::builtins::BuiltinsConfig, tools::Builtins};
    /// let b = Builtins::new(&BuiltinsConfig::default(), "me@example.com");
    /// assert!(b.ready("builtin.files.read").is_err()); // no `builtins.files` section
    /// assert!(b.ready("builtin.mail.nope").is_err());
    /// ```
    pub fn ready(&self, source: &str) -> Result<(), ToolError> {
        match source {
            "builtin.mail.list" | "builtin.mail.get" | "builtin.mail.search" => {
                existing("mail.maildir", &self.mail()?.maildir).map(|_| ())
            }
            "builtin.mail.send" | "builtin.mail.commit" => self.mail().map(|_| ()),
            "builtin.files.list" | "builtin.files.read" | "builtin.files.write" => {
                existing("files.root", &self.files()?.root).map(|_| ())
            }
            "builtin.web.get" => self.web().map(|_| ()),
            other => Err(ToolError::UnknownSource(other.to_string())),
        }
    }

    /// What a call to `source` would act on, for the person deciding its claim when the arguments alone do
    /// not show it: the draft a `builtin.mail.commit` would send. `None`: the arguments are the effect.
    pub fn preview(
        &self,
        source: &str,
        args: &Map<String, Value>,
    ) -> Option<Result<Value, ToolError>> {
        if source != "builtin.mail.commit" {
            return None;
        }
        let view = (|| {
            let cfg = self.mail()?;
            mail::draft_view(&cfg.drafts, str_arg(args, "id")?, str_arg(args, "sha256")?)
        })();
        Some(view)
    }

    /// Runs the built-in `source` with `args`. `draft`: the decision was `draft` (mail goes to drafts,
    /// carrying why).
    pub fn call(
        &self,
        source: &str,
        args: &Map<String, Value>,
        draft: Option<&str>,
    ) -> Result<Value, ToolError> {
        match source {
            "builtin.mail.list"
            | "builtin.mail.get"
            | "builtin.mail.search"
            | "builtin.mail.send"
            | "builtin.mail.commit" => {
                let cfg = self.mail()?;
                match source {
                    "builtin.mail.list" => {
                        let limit = args
                            .get("limit")
                            .and_then(Value::as_u64)
                            .ok_or(ToolError::BadArgument("limit"))?;
                        mail::list(
                            existing("mail.maildir", &cfg.maildir)?,
                            usize::try_from(limit).unwrap_or(usize::MAX),
                        )
                    }
                    "builtin.mail.get" => mail::get(
                        existing("mail.maildir", &cfg.maildir)?,
                        str_arg(args, "id")?,
                    ),
                    "builtin.mail.search" => mail::search(
                        existing("mail.maildir", &cfg.maildir)?,
                        str_arg(args, "query")?,
                    ),
                    "builtin.mail.commit" => mail::commit(
                        &cfg.drafts,
                        &cfg.outbox,
                        str_arg(args, "id")?,
                        str_arg(args, "sha256")?,
                    ),
                    _ => {
                        let to: Vec<String> = match args.get("to") {
                            Some(Value::String(s)) => vec![s.clone()],
                            Some(Value::Array(xs)) => xs
                                .iter()
                                .map(|x| x.as_str().map(str::to_string))
                                .collect::<Option<_>>()
                                .ok_or(ToolError::BadArgument("to"))?,
                            _ => return Err(ToolError::BadArgument("to")),
                        };
                        let folder = if draft.is_some() {
                            &cfg.drafts
                        } else {
                            &cfg.outbox
                        };
                        mail::send(
                            folder,
                            &self.user,
                            &to,
                            str_arg(args, "subject")?,
                            str_arg(args, "body")?,
                            draft,
                        )
                    }
                }
            }
            "builtin.files.list" | "builtin.files.read" | "builtin.files.write" => {
                let cfg = self.files()?;
                let path = str_arg(args, "path")?;
                let root = existing("files.root", &cfg.root)?;
                match source {
                    "builtin.files.list" => files::list(root, path),
                    "builtin.files.read" => files::read(root, path),
                    _ => files::write(root, path, str_arg(args, "content")?),
                }
            }
            "builtin.web.get" => {
                let cfg = self.web()?;
                web::get(cfg, str_arg(args, "url")?)
            }
            other => Err(ToolError::UnknownSource(other.to_string())),
        }
    }
}
