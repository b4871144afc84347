//! Running provisioners, as Terraform 1.11's built-in ones run: a
//! provisioner's decoded arguments become its [`Settings`] (held to its
//! kind's rules, which `validate` checks too), and [`run`] carries them out,
//! each line of output handed to the caller as it comes (the apply prints
//! it as `ADDR (local-exec): LINE`).
//!
//! `local-exec` runs a command here; `remote-exec` and `file` reach a
//! machine through its `connection` (SSH, by this machine's OpenSSH
//! client: `ssh.rs`).

mod connection;
mod local;
mod remote;
mod ssh;

use crate::config::{Provisioner, ProvisionerKind};
use crate::diag::Diag;
use crate::lang::value::Value;
use std::collections::BTreeMap;

pub use local::LocalExec;
pub use remote::{FileCopy, RemoteExec, Script, Source};
pub use ssh::{answer_askpass, Connection, Endpoint};

/// Where a provisioner's lines go as they come, from the thread it runs on.
pub type Say = dyn Fn(String) + Sync;

/// Runs `job` on a thread of its own (it waits on processes), each line
/// it says handed to `out` as it comes.
async fn streamed(
    out: &mut dyn Output,
    job: impl FnOnce(&Say) -> Result<(), String> + Send + 'static,
) -> Result<(), String> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let running = tokio::task::spawn_blocking(move || {
        let say = move |line: String| {
            let _ = tx.send(line);
        };
        job(&say)
    });
    while let Some(line) = rx.recv().await {
        out.line(&line);
    }
    running
        .await
        .unwrap_or_else(|e| Err(format!("the provisioner stopped: {e}")))
}

/// A provisioner's arguments, decoded and checked.
#[derive(Debug, Clone)]
pub struct Settings {
    pub what: What,
    /// Why every line it says is replaced, as Terraform replaces them:
    /// its configuration holds a value not to be shown.
    pub hidden: Option<Hidden>,
}

/// What a provisioner does, with its arguments.
#[derive(Debug, Clone)]
pub enum What {
    LocalExec(LocalExec),
    RemoteExec(RemoteExec),
    File(FileCopy),
}

/// What a provisioner run says: its lines as they come, then how it ended.
pub trait Output: Send {
    fn line(&mut self, line: &str);
}

/// Why a provisioner failed, in Terraform's words (its summary is
/// "KIND provisioner error").
#[derive(Debug, Clone)]
pub struct Failure {
    pub detail: String,
}

fn invalid(p: &Provisioner, detail: &str) -> Diag {
    let summary = format!("Invalid {} provisioner configuration", p.kind.name());
    Diag::new("strata::provision::invalid", summary, detail).at(p.span)
}

fn text(config: &Value, name: &str) -> Option<String> {
    let v = config.unmarked().entries()?.get(name)?.unmarked();
    v.as_str().map(str::to_string)
}

fn set(config: &Value, name: &str) -> bool {
    config
        .unmarked()
        .entries()
        .and_then(|m| m.get(name))
        .is_some_and(|v| !v.is_null())
}

fn strings(config: &Value, name: &str) -> Option<Vec<String>> {
    let v = config.unmarked().entries()?.get(name)?.unmarked();
    let items = v.elements()?;
    Some(
        items
            .iter()
            .filter_map(|x| x.unmarked().as_str().map(str::to_string))
            .collect(),
    )
}

/// `p`'s decoded arguments as its settings, with the connection it uses
/// (its own, else its resource's; none at `validate`, where its values
/// are not known); unknown values pass. The rules are Terraform's
/// built-in provisioners' own.
pub fn settings(
    p: &Provisioner,
    config: &Value,
    connection: Option<&Value>,
) -> Result<Settings, Diag> {
    let connection = match connection.filter(|c| c.is_wholly_known() && !c.is_null()) {
        Some(c) => Some(connection::reached(p, c)?),
        None => None,
    };
    let what = what(p, config, connection)?;
    Ok(Settings {
        what,
        hidden: config.contains_sensitive().then_some(Hidden::Sensitive),
    })
}

/// What in a provisioner's configuration hides its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    Sensitive,
    Ephemeral,
}

impl Settings {
    /// The same settings, its output hidden when its configuration is
    /// derived from an ephemeral value (which Terraform says before a
    /// sensitive one).
    pub fn hiding_ephemeral(self, ephemeral: bool) -> Settings {
        match ephemeral {
            true => Settings {
                hidden: Some(Hidden::Ephemeral),
                ..self
            },
            false => self,
        }
    }
}

fn what(p: &Provisioner, config: &Value, connection: Option<Connection>) -> Result<What, Diag> {
    match p.kind {
        ProvisionerKind::LocalExec => Ok(What::LocalExec(local_exec(config))),
        ProvisionerKind::RemoteExec => Ok(What::RemoteExec(RemoteExec {
            scripts: scripts(p, config)?,
            connection,
        })),
        ProvisionerKind::File => Ok(What::File(FileCopy {
            source: source(p, config)?,
            destination: text(config, "destination").unwrap_or_default(),
            connection,
        })),
    }
}

fn local_exec(config: &Value) -> LocalExec {
    let entries = config.unmarked().entries();
    let environment = entries
        .and_then(|m| m.get("environment"))
        .and_then(|v| v.unmarked().entries())
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.unmarked().as_str()?.to_string())))
                .collect::<BTreeMap<_, _>>()
        })
        .unwrap_or_default();
    let quiet = entries
        .and_then(|m| m.get("quiet"))
        .and_then(|v| v.unmarked().as_bool());
    LocalExec {
        command: text(config, "command").unwrap_or_default(),
        interpreter: strings(config, "interpreter").unwrap_or_default(),
        working_dir: text(config, "working_dir").filter(|d| !d.is_empty()),
        environment,
        quiet: quiet.unwrap_or(false),
    }
}

/// `remote-exec`'s one of `inline`, `script` or `scripts`.
fn scripts(p: &Provisioner, config: &Value) -> Result<Vec<Script>, Diag> {
    let given = ["inline", "script", "scripts"]
        .iter()
        .filter(|n| set(config, n))
        .count();
    if given != 1 {
        return Err(invalid(
            p,
            "Only one of \"inline\", \"script\", or \"scripts\" must be set",
        ));
    }
    Ok(match (strings(config, "inline"), text(config, "script")) {
        (Some(lines), _) => {
            if lines.iter().any(String::is_empty) {
                return Err(invalid(p, "invalid empty string in 'scripts'"));
            }
            vec![Script::Inline(lines.join("\n") + "\n")]
        }
        (None, Some(path)) => vec![Script::File(path)],
        (None, None) => strings(config, "scripts")
            .unwrap_or_default()
            .into_iter()
            .map(Script::File)
            .collect(),
    })
}

/// `file`'s one of `source` or `content`.
fn source(p: &Provisioner, config: &Value) -> Result<Source, Diag> {
    match (text(config, "source"), text(config, "content")) {
        (Some(_), Some(_)) => Err(invalid(p, "Cannot set both 'source' and 'content'")),
        (Some(path), None) => Ok(Source::Path(path)),
        (None, Some(text)) => Ok(Source::Content(text)),
        // Unknown at validate, or neither given.
        (None, None) if set(config, "source") || set(config, "content") => {
            Ok(Source::Content(String::new()))
        }
        (None, None) => Err(invalid(p, "Must provide one of 'source' or 'content'")),
    }
}

/// Says every line as the same words: a sensitive or ephemeral value in
/// the configuration may be in any of them.
struct Suppressed<'o>(&'o mut dyn Output, Hidden);

impl Output for Suppressed<'_> {
    fn line(&mut self, _: &str) {
        self.0.line(match self.1 {
            Hidden::Sensitive => "(output suppressed due to sensitive value in config)",
            Hidden::Ephemeral => "(output suppressed due to ephemeral value in config)",
        });
    }
}

/// Runs one provisioner; its output goes to `out` line by line.
pub async fn run(settings: &Settings, out: &mut dyn Output) -> Result<(), Failure> {
    let mut suppressed;
    let out: &mut dyn Output = match settings.hidden {
        Some(why) => {
            suppressed = Suppressed(out, why);
            &mut suppressed
        }
        None => out,
    };
    match &settings.what {
        What::LocalExec(l) => l.run(out).await,
        What::RemoteExec(r) => r.run(out).await,
        What::File(f) => f.run(out).await,
    }
}
