//! A `connection` over SSH, through this machine's OpenSSH client (`ssh`):
//! what `remote-exec` and `file` use to reach a machine. Each step is one
//! `ssh` run with the connection's options: no prompt (`BatchMode`), the
//! private key and certificate given written to a private temporary
//! folder, the host key checked only when `host_key` is given (as
//! Terraform checks it), and the first connection retried until the
//! connection's `timeout`, as Terraform retries it.

use super::{Output, Say};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How to reach a machine.
#[derive(Debug, Clone)]
pub struct Connection {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub private_key: Option<String>,
    pub certificate: Option<String>,
    /// Use the SSH agent (`SSH_AUTH_SOCK`).
    pub agent: bool,
    pub host_key: Option<String>,
    pub timeout: Duration,
    /// Where a `remote-exec` script goes; `%RAND%` becomes a number.
    pub script_path: String,
}

/// The files one connection's runs use, removed with it.
pub struct Session<'c> {
    pub connection: &'c Connection,
    dir: PathBuf,
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A command's end, in the words of Terraform's SSH communicator.
pub enum Ended {
    Status(i32),
    /// `ssh` itself could not run or reach the machine.
    Unreachable(String),
}

/// `s` as one word of a POSIX shell command line.
pub fn shell_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Connection {
    /// What Terraform says as it connects for `remote-exec`.
    pub fn announce(&self, out: &mut dyn Output) {
        out.line("Connecting to remote host via SSH...");
        out.line(&format!("  Host: {}", self.host));
        out.line(&format!("  User: {}", self.user));
        out.line("  Password: false");
        out.line(&format!("  Private key: {}", self.private_key.is_some()));
        out.line(&format!("  Certificate: {}", self.certificate.is_some()));
        out.line(&format!("  SSH Agent: {}", self.agent));
        out.line(&format!("  Checking Host Key: {}", self.host_key.is_some()));
        out.line("  Target Platform: unix");
    }

    /// A session: its key, certificate and known host written where only
    /// this user can read them.
    pub fn session(&self) -> Result<Session<'_>, String> {
        static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("strata-ssh-{}-{n}", std::process::id()));
        let mut b = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        b.recursive(true).create(&dir).map_err(|e| e.to_string())?;
        let session = Session {
            connection: self,
            dir,
        };
        let write = |name: &str, text: &str| -> Result<(), String> {
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            let mut f = opts
                .open(session.dir.join(name))
                .map_err(|e| e.to_string())?;
            f.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
            // OpenSSH refuses a key file without a final newline.
            f.write_all(b"\n").map_err(|e| e.to_string())
        };
        if let Some(k) = &self.private_key {
            write("key", k.trim_end())?;
        }
        if let Some(c) = &self.certificate {
            write("key-cert.pub", c.trim_end())?;
        }
        if let Some(h) = &self.host_key {
            let name = match self.port {
                22 => self.host.clone(),
                p => format!("[{}]:{p}", self.host),
            };
            write("known_hosts", &format!("{name} {}", h.trim()))?;
        }
        Ok(session)
    }
}

impl Session<'_> {
    /// `ssh` with the connection's options, to run `remote` there.
    fn ssh(&self, remote: &str) -> Command {
        let c = self.connection;
        let mut cmd = Command::new("ssh");
        let secs = c.timeout.as_secs().clamp(1, 3600);
        cmd.args(["-p", &c.port.to_string()])
            .args(["-o", "BatchMode=yes", "-o", "LogLevel=ERROR"])
            .args(["-o", &format!("ConnectTimeout={secs}")]);
        match &c.host_key {
            Some(_) => {
                let known = self.dir.join("known_hosts");
                cmd.args(["-o", "StrictHostKeyChecking=yes", "-o"])
                    .arg(format!("UserKnownHostsFile={}", known.display()));
            }
            None => {
                cmd.args(["-o", "StrictHostKeyChecking=no"])
                    .args(["-o", "UserKnownHostsFile=/dev/null"]);
            }
        }
        if c.private_key.is_some() {
            cmd.args(["-o", "IdentitiesOnly=yes", "-i"])
                .arg(self.dir.join("key"));
        }
        if c.certificate.is_some() {
            cmd.arg("-o").arg(format!(
                "CertificateFile={}",
                self.dir.join("key-cert.pub").display()
            ));
        }
        if !c.agent {
            cmd.args(["-o", "IdentityAgent=none"]);
        }
        cmd.arg(format!("{}@{}", c.user, c.host)).arg(remote);
        cmd
    }

    /// Waits until the machine answers, as Terraform retries its first
    /// connection until the timeout.
    pub fn connect(&self) -> Result<(), String> {
        let started = Instant::now();
        let mut wait = Duration::from_millis(250);
        loop {
            let out = self
                .ssh("true")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .output()
                .map_err(|e| format!("cannot run ssh: {e}"))?;
            if out.status.success() {
                return Ok(());
            }
            if started.elapsed() + wait > self.connection.timeout {
                let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
                return Err(format!("timeout - last error: {why}"));
            }
            std::thread::sleep(wait);
            wait = (wait * 2).min(Duration::from_secs(5));
        }
    }

    /// Writes `bytes` to `path` there, with `mode` when given.
    pub fn upload(&self, path: &str, bytes: &[u8], mode: Option<&str>) -> Result<(), String> {
        let q = shell_quoted(path);
        let remote = match mode {
            Some(m) => format!("cat > {q} && chmod {m} {q}"),
            None => format!("cat > {q}"),
        };
        self.feed(&remote, bytes)
    }

    /// Runs `remote` there with `input` on its standard input.
    pub fn feed(&self, remote: &str, input: &[u8]) -> Result<(), String> {
        let mut child = self
            .ssh(remote)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run ssh: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(input).map_err(|e| e.to_string())?;
        }
        let mut why = String::new();
        if let Some(mut err) = child.stderr.take() {
            let _ = err.read_to_string(&mut why);
        }
        let status = child.wait().map_err(|e| e.to_string())?;
        match status.code() {
            Some(0) => Ok(()),
            Some(code) => Err(format!("Process exited with status {code}{}", detail(&why))),
            None => Err(format!("ssh ended: {status}")),
        }
    }

    /// Runs `remote` there, each line of its output and errors to `lines`.
    pub fn run(&self, remote: &str, lines: &Say) -> Ended {
        let spawned = self
            .ssh(remote)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => return Ended::Unreachable(format!("cannot run ssh: {e}")),
        };
        let (out, err) = (child.stdout.take(), child.stderr.take());
        std::thread::scope(|s| {
            if let Some(err) = err {
                s.spawn(move || each_line(err, lines));
            }
            if let Some(out) = out {
                each_line(out, lines);
            }
        });
        match child.wait().map(|s| s.code()) {
            Ok(Some(255)) => Ended::Unreachable("the connection was lost".into()),
            Ok(Some(code)) => Ended::Status(code),
            Ok(None) => Ended::Unreachable("ssh was ended by a signal".into()),
            Err(e) => Ended::Unreachable(e.to_string()),
        }
    }
}

fn each_line(from: impl Read, lines: &Say) {
    for line in BufReader::new(from).split(b'\n') {
        let Ok(line) = line else { break };
        lines(
            String::from_utf8_lossy(&line)
                .trim_end_matches('\r')
                .to_string(),
        );
    }
}

fn detail(stderr: &str) -> String {
    match stderr.trim() {
        "" => String::new(),
        t => format!(": {t}"),
    }
}

/// A Go duration as `connection.timeout` takes it (`5m`, `30s`, `1m30s`).
pub fn duration(text: &str) -> Option<Duration> {
    let mut total = 0f64;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += n * scale;
        rest = &rest[unit_len..];
    }
    Some(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_read_as_go_durations() {
        assert_eq!(duration("5m"), Some(Duration::from_secs(300)));
        assert_eq!(duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(duration("soon"), None);
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
    }
}
