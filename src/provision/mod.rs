//! Running provisioners, as Terraform 1.11's built-in ones run: a
//! provisioner's decoded arguments become its [`Settings`] (held to its
//! kind's rules, which `validate` checks too), and [`run`] carries them out,
//! each line of output handed to the caller as it comes (the apply prints
//! it as `ADDR (local-exec): LINE`).
//!
//! `local-exec` runs here. `remote-exec` and `file` need a connection to
//! another machine, which strata does not make yet: a plan that would run
//! one is refused by name before anything changes.

mod local;

use crate::config::{Provisioner, ProvisionerKind};
use crate::diag::Diag;
use crate::lang::value::Value;
use std::collections::BTreeMap;

pub use local::LocalExec;

/// A provisioner's arguments, decoded and checked.
#[derive(Debug, Clone)]
pub struct Settings {
    pub what: What,
    /// Its configuration holds a sensitive value: every line it says is
    /// replaced, as Terraform replaces them.
    pub sensitive: bool,
}

/// What a provisioner does, with its arguments.
#[derive(Debug, Clone)]
pub enum What {
    LocalExec(LocalExec),
    /// Read and checked; not run yet.
    RemoteExec,
    /// Read and checked; not run yet.
    File,
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

/// `p`'s decoded arguments as its settings; unknown values (at `validate`)
/// pass. The rules are Terraform's built-in provisioners' own.
pub fn settings(p: &Provisioner, config: &Value) -> Result<Settings, Diag> {
    let what = what(p, config)?;
    Ok(Settings {
        what,
        sensitive: config.contains_sensitive(),
    })
}

fn what(p: &Provisioner, config: &Value) -> Result<What, Diag> {
    match p.kind {
        ProvisionerKind::LocalExec => {
            let environment = config
                .unmarked()
                .entries()
                .and_then(|m| m.get("environment"))
                .and_then(|v| v.unmarked().entries())
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.unmarked().as_str()?.to_string())))
                        .collect::<BTreeMap<_, _>>()
                })
                .unwrap_or_default();
            Ok(What::LocalExec(LocalExec {
                command: text(config, "command").unwrap_or_default(),
                interpreter: strings(config, "interpreter").unwrap_or_default(),
                working_dir: text(config, "working_dir").filter(|d| !d.is_empty()),
                environment,
                quiet: config
                    .unmarked()
                    .entries()
                    .and_then(|m| m.get("quiet"))
                    .and_then(|v| v.unmarked().as_bool())
                    .unwrap_or(false),
            }))
        }
        ProvisionerKind::RemoteExec => {
            let given = ["inline", "script", "scripts"]
                .iter()
                .filter(|n| set(config, n))
                .count();
            match given {
                1 => Ok(What::RemoteExec),
                _ => Err(invalid(
                    p,
                    "Only one of \"inline\", \"script\", or \"scripts\" must be set",
                )),
            }
        }
        ProvisionerKind::File => match (set(config, "source"), set(config, "content")) {
            (true, true) => Err(invalid(p, "Cannot set both 'source' and 'content'")),
            (false, false) => Err(invalid(p, "Must provide one of 'source' or 'content'")),
            _ => Ok(What::File),
        },
    }
}

/// Says every line as the same words: a sensitive value in the
/// configuration may be in any of them.
struct Suppressed<'o>(&'o mut dyn Output);

impl Output for Suppressed<'_> {
    fn line(&mut self, _: &str) {
        self.0
            .line("(output suppressed due to sensitive value in config)");
    }
}

/// Runs one provisioner; its output goes to `out` line by line.
pub async fn run(settings: &Settings, out: &mut dyn Output) -> Result<(), Failure> {
    let mut suppressed;
    let out: &mut dyn Output = match settings.sensitive {
        true => {
            suppressed = Suppressed(out);
            &mut suppressed
        }
        false => out,
    };
    match &settings.what {
        What::LocalExec(l) => l.run(out).await,
        What::RemoteExec | What::File => Err(Failure {
            detail: "strata does not connect to machines yet: remote-exec and file provisioners are not run".into(),
        }),
    }
}
