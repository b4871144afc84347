//! `remote-exec` and `file`, over a [`Connection`]: scripts uploaded to
//! the machine and run there (`inline` lines as one script, `script`,
//! `scripts`), files, text and folders copied to it, as Terraform's
//! built-in provisioners do.

use super::ssh::{shell_quoted, Connection, Ended, Session};
use super::{streamed, Failure, Output, Say};
use std::path::Path;
use std::process::{Command, Stdio};

/// A script `remote-exec` runs.
#[derive(Debug, Clone)]
pub enum Script {
    /// The `inline` lines, as one script.
    Inline(String),
    /// A file here (`script`, `scripts`).
    File(String),
}

#[derive(Debug, Clone)]
pub struct RemoteExec {
    pub scripts: Vec<Script>,
    pub connection: Option<Connection>,
}

/// What `file` copies.
#[derive(Debug, Clone)]
pub enum Source {
    /// `content`: this text.
    Content(String),
    /// `source`: a file, or a folder (its contents only when the path
    /// ends in `/`).
    Path(String),
}

#[derive(Debug, Clone)]
pub struct FileCopy {
    pub source: Source,
    pub destination: String,
    pub connection: Option<Connection>,
}

fn missing() -> String {
    "Missing connection configuration for provisioner.".into()
}

/// Where the next script goes: `%RAND%` a number, as Terraform's.
fn script_path(template: &str) -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = nanos ^ N.fetch_add(7919, std::sync::atomic::Ordering::Relaxed) ^ std::process::id();
    template.replace("%RAND%", &(n & 0x7fff_ffff).to_string())
}

impl RemoteExec {
    pub(super) async fn run(&self, out: &mut dyn Output) -> Result<(), Failure> {
        let Some(connection) = self.connection.clone() else {
            return Err(Failure { detail: missing() });
        };
        // Scripts are read before anything connects, as Terraform does.
        let mut texts = Vec::new();
        for s in &self.scripts {
            texts.push(match s {
                Script::Inline(text) => text.clone(),
                Script::File(path) => std::fs::read_to_string(path).map_err(|e| Failure {
                    detail: format!("Failed to open script '{path}': {e}"),
                })?,
            });
        }
        let done = streamed(out, move |say| {
            let session = connection.session()?;
            session.connect(Some(say))?;
            say("Connected!".to_string());
            for text in texts {
                run_script(&session, &text, say)?;
            }
            Ok(())
        });
        done.await.map_err(|detail| Failure { detail })
    }
}

/// Uploads one script, runs it, then leaves an empty file in its place
/// (so what it held does not stay there), as Terraform does.
fn run_script(session: &Session<'_>, text: &str, say: &Say) -> Result<(), String> {
    let path = script_path(&session.connection.script_path);
    let text = match text.starts_with("#!") {
        true => text.to_string(),
        false => format!("#!/bin/sh\n{text}"),
    };
    session
        .upload(&path, text.as_bytes(), Some("0777"))
        .map_err(|e| format!("Failed to upload script: {e}"))?;
    let ended = session.run(&shell_quoted(&path), say);
    let _ = session.upload(&path, b"", None);
    match ended {
        Ended::Status(0) => Ok(()),
        Ended::Status(code) => Err(format!(
            "error executing {path:?}: Process exited with status {code}"
        )),
        Ended::Unreachable(why) => Err(format!("error executing {path:?}: {why}")),
    }
}

impl FileCopy {
    pub(super) async fn run(&self, out: &mut dyn Output) -> Result<(), Failure> {
        let Some(connection) = self.connection.clone() else {
            return Err(Failure { detail: missing() });
        };
        let copy = self.clone();
        let done = streamed(out, move |_| {
            let session = connection.session()?;
            session.connect(None)?;
            copy.upload(&session)
                .map_err(|e| format!("Upload failed: {e}"))
        });
        done.await.map_err(|detail| Failure { detail })
    }

    fn upload(&self, session: &Session<'_>) -> Result<(), String> {
        let source = match &self.source {
            Source::Content(text) => {
                return session.upload(&self.destination, text.as_bytes(), None)
            }
            Source::Path(p) => p,
        };
        let path = Path::new(source);
        if !path.is_dir() {
            let bytes = std::fs::read(path).map_err(|e| format!("{source}: {e}"))?;
            return session.upload(&self.destination, &bytes, None);
        }
        // A folder: its contents into the destination when the source ends
        // in `/`, else the folder itself inside it.
        let into = match source.ends_with('/') {
            true => self.destination.clone(),
            false => {
                let name = path.file_name().map(|n| n.to_string_lossy().to_string());
                format!(
                    "{}/{}",
                    self.destination.trim_end_matches('/'),
                    name.unwrap_or_default()
                )
            }
        };
        let tar = Command::new("tar")
            .arg("-C")
            .arg(path)
            .args(["-cf", "-", "."])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run tar: {e}"))?;
        let q = shell_quoted(&into);
        let remote = format!("mkdir -p {q} && tar -C {q} -xf -");
        let mut tar = tar;
        let mut bytes = Vec::new();
        if let Some(mut o) = tar.stdout.take() {
            use std::io::Read;
            o.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        }
        tar.wait().map_err(|e| e.to_string())?;
        session.feed(&remote, &bytes)
    }
}
