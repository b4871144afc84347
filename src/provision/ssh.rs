//! A `connection` over SSH, through this machine's OpenSSH client (`ssh`):
//! what `remote-exec` and `file` use to reach a machine. Each step is one
//! `ssh` run with the connection's options and no configuration file (as
//! Terraform reads none): the private keys, certificates and passwords
//! given written to a private temporary folder, a password handed to `ssh`
//! by strata itself as its askpass program (OpenSSH 8.4's
//! `SSH_ASKPASS_REQUIRE`), a bastion host reached by a second `ssh` as the
//! first one's `ProxyCommand`, a host key checked only when given (as
//! Terraform checks it), and the first connection retried until the
//! connection's `timeout`, as Terraform retries it.

use super::Say;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A machine an SSH connection logs in to: the target, or the bastion
/// host it goes through.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub private_key: Option<String>,
    pub certificate: Option<String>,
    pub host_key: Option<String>,
}

/// How to reach a machine.
#[derive(Debug, Clone)]
pub struct Connection {
    pub target: Endpoint,
    /// The host the connection goes through (`bastion_host`).
    pub bastion: Option<Endpoint>,
    /// Offer the SSH agent's keys (`SSH_AUTH_SOCK`) and forward the agent
    /// to the target, as Terraform does.
    pub agent: bool,
    pub timeout: Duration,
    /// Where a `remote-exec` script goes; `%RAND%` becomes a number.
    pub script_path: String,
}

/// Which of a connection's machines a session's files are for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hop {
    Target,
    Bastion,
}

impl Hop {
    fn file(self, name: &str) -> String {
        match self {
            Hop::Target => format!("target-{name}"),
            Hop::Bastion => format!("bastion-{name}"),
        }
    }
}

/// The environment variable that makes strata its own askpass program:
/// it names the file whose password `ssh` asked for.
const ASKPASS_FILE: &str = "STRATA_SSH_ASKPASS";

/// When this process was started by `ssh` as its askpass program, prints
/// the password it asked for and says how the process ends.
pub fn answer_askpass() -> Option<std::process::ExitCode> {
    let file = std::env::var_os(ASKPASS_FILE)?;
    let answered = std::fs::read(file).and_then(|password| {
        let mut out = std::io::stdout().lock();
        out.write_all(&password)?;
        out.write_all(b"\n")
    });
    Some(match answered {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(_) => std::process::ExitCode::from(1),
    })
}

/// The files one connection's runs use, removed with it.
pub struct Session<'c> {
    pub connection: &'c Connection,
    dir: PathBuf,
    /// This program, `ssh`'s askpass when a password is given.
    askpass: Option<PathBuf>,
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
    /// What Terraform says as it tries to connect for `remote-exec`.
    fn announce(&self, say: &Say) {
        say("Connecting to remote host via SSH...".into());
        self.describe(&self.target, say);
        say("  Target Platform: unix".into());
        if let Some(b) = &self.bastion {
            say("Using configured bastion host...".into());
            self.describe(b, say);
        }
    }

    fn describe(&self, e: &Endpoint, say: &Say) {
        say(format!("  Host: {}", e.host));
        say(format!("  User: {}", e.user));
        say(format!("  Password: {}", e.password.is_some()));
        say(format!("  Private key: {}", e.private_key.is_some()));
        say(format!("  Certificate: {}", e.certificate.is_some()));
        say(format!("  SSH Agent: {}", self.agent));
        say(format!("  Checking Host Key: {}", e.host_key.is_some()));
    }

    fn endpoint(&self, hop: Hop) -> &Endpoint {
        match (hop, &self.bastion) {
            (Hop::Bastion, Some(b)) => b,
            _ => &self.target,
        }
    }

    fn hops(&self) -> Vec<Hop> {
        match self.bastion {
            Some(_) => vec![Hop::Target, Hop::Bastion],
            None => vec![Hop::Target],
        }
    }

    /// A session: its keys, certificates, passwords and known hosts
    /// written where only this user can read them.
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
        let passwords = self
            .hops()
            .iter()
            .any(|h| self.endpoint(*h).password.is_some());
        let askpass = match passwords {
            true => Some(std::env::current_exe().map_err(|e| {
                format!("cannot find strata's own program to hand ssh the password: {e}")
            })?),
            false => None,
        };
        let session = Session {
            connection: self,
            dir,
            askpass,
        };
        for hop in self.hops() {
            session.write_files(hop)?;
        }
        Ok(session)
    }
}

impl Session<'_> {
    fn path(&self, hop: Hop, name: &str) -> PathBuf {
        self.dir.join(hop.file(name))
    }

    fn write(&self, hop: Hop, name: &str, text: &str) -> Result<(), String> {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(self.path(hop, name)).map_err(|e| e.to_string())?;
        f.write_all(text.as_bytes()).map_err(|e| e.to_string())
    }

    /// One machine's key, certificate, password and known host.
    fn write_files(&self, hop: Hop) -> Result<(), String> {
        let e = self.connection.endpoint(hop);
        // OpenSSH refuses a key file without a final newline.
        if let Some(k) = &e.private_key {
            self.write(hop, "key", &format!("{}\n", k.trim_end()))?;
        }
        if let Some(c) = &e.certificate {
            self.write(hop, "key-cert.pub", &format!("{}\n", c.trim_end()))?;
        }
        if let Some(p) = &e.password {
            self.write(hop, "password", p)?;
        }
        if let Some(h) = &e.host_key {
            let name = match e.port {
                22 => e.host.clone(),
                p => format!("[{}]:{p}", e.host),
            };
            // The key, or the authority that signs the host's certificate,
            // as Terraform takes `host_key` for either.
            let key = h.trim();
            let lines = format!("{name} {key}\n@cert-authority {name} {key}\n");
            self.write(hop, "known_hosts", &lines)?;
        }
        Ok(())
    }

    /// The `ssh` options and environment that log in to one machine,
    /// up to its `user@host`.
    fn login(&self, hop: Hop) -> Login {
        let c = self.connection;
        let e = c.endpoint(hop);
        let mut l = Login::default();
        let secs = c.timeout.as_secs().clamp(1, 3600);
        l.args(["-F", "/dev/null", "-p", &e.port.to_string()]);
        l.option("LogLevel=ERROR");
        l.option(&format!("ConnectTimeout={secs}"));
        match &e.host_key {
            Some(_) => {
                l.option("StrictHostKeyChecking=yes");
                l.option(&format!(
                    "UserKnownHostsFile={}",
                    self.path(hop, "known_hosts").display()
                ));
            }
            None => {
                l.option("StrictHostKeyChecking=no");
                l.option("UserKnownHostsFile=/dev/null");
            }
        }
        match &e.private_key {
            Some(_) => l.option(&format!("IdentityFile={}", self.path(hop, "key").display())),
            // Terraform offers no key of its own: no ~/.ssh/id_* either.
            None => l.option("IdentityFile=none"),
        }
        if e.certificate.is_some() {
            let cert = self.path(hop, "key-cert.pub");
            l.option(&format!("CertificateFile={}", cert.display()));
        }
        match (c.agent, hop) {
            (false, _) => l.option("IdentityAgent=none"),
            (true, Hop::Target) => l.option("ForwardAgent=yes"),
            (true, Hop::Bastion) => {}
        }
        match (&e.password, &self.askpass) {
            (Some(_), Some(program)) => {
                l.option("BatchMode=no");
                l.option("NumberOfPasswordPrompts=1");
                l.env("SSH_ASKPASS", &program.display().to_string());
                l.env("SSH_ASKPASS_REQUIRE", "force");
                l.env(
                    ASKPASS_FILE,
                    &self.path(hop, "password").display().to_string(),
                );
            }
            _ => l.option("BatchMode=yes"),
        }
        if hop == Hop::Target {
            if let Some(through) = self.through_bastion() {
                l.option(&format!("ProxyCommand={through}"));
            }
        }
        l.args([format!("{}@{}", e.user, e.host)]);
        l
    }

    /// The bastion's `ssh`, as a `ProxyCommand` that carries the
    /// connection to the target (`%h:%p`).
    fn through_bastion(&self) -> Option<String> {
        self.connection.bastion.as_ref()?;
        let login = self.login(Hop::Bastion);
        let words = login
            .env
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .chain(["ssh".to_string(), "-W".to_string(), "%h:%p".to_string()])
            .chain(login.args.iter().cloned());
        // `ssh` reads `%` in a ProxyCommand as its own tokens.
        let quoted: Vec<String> = words
            .map(|w| match w.as_str() {
                "%h:%p" => w,
                _ => shell_quoted(&w).replace('%', "%%"),
            })
            .collect();
        Some(format!("env {}", quoted.join(" ")))
    }

    /// `ssh` with the connection's options, to run `remote` there.
    fn ssh(&self, remote: &str) -> Command {
        let login = self.login(Hop::Target);
        let mut cmd = Command::new("ssh");
        cmd.envs(login.env).args(login.args).arg(remote);
        cmd
    }

    /// Waits until the machine answers, as Terraform retries its first
    /// connection until the timeout.
    /// Each try is announced to `announce` when given (Terraform's
    /// `remote-exec` announces each; its `file` none), and the tries are
    /// spaced as Terraform spaces them: at once, then after 1 s, doubling
    /// up to 20 s.
    pub fn connect(&self, announce: Option<&Say>) -> Result<(), String> {
        let started = Instant::now();
        let mut wait = Duration::from_secs(1);
        loop {
            if let Some(say) = announce {
                self.connection.announce(say);
            }
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
                let why = refused(&String::from_utf8_lossy(&out.stderr));
                return Err(format!("timeout - last error: {why}"));
            }
            std::thread::sleep(wait);
            wait = (wait * 2).min(Duration::from_secs(20));
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

/// What one `ssh` run is given to log in to one machine.
#[derive(Default)]
struct Login {
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
}

impl Login {
    fn args<S: Into<String>>(&mut self, words: impl IntoIterator<Item = S>) {
        self.args.extend(words.into_iter().map(Into::into));
    }

    fn option(&mut self, setting: &str) {
        self.args(["-o", setting]);
    }

    fn env(&mut self, name: &'static str, value: &str) {
        self.env.push((name, value.to_string()));
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

/// Why `ssh` could not log in, as Terraform words a refused login
/// (`ssh` names who refused: the target, or the bastion host).
fn refused(stderr: &str) -> String {
    let why = stderr.trim();
    match why.rsplit_once(": Permission denied") {
        Some((who, rest)) => {
            let who = who.rsplit('\n').next().unwrap_or(who).trim();
            format!("SSH authentication failed ({who}): Permission denied{rest}")
        }
        None => why.to_string(),
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
