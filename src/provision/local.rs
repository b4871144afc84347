//! `local-exec`: a command on this machine, through `/bin/sh -c` or the
//! interpreter given, with the environment given added to strata's; its
//! standard output and error read as one stream, line by line, as
//! Terraform reads them.

use super::{streamed, Failure, Output, Say};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[derive(Debug, Clone)]
pub struct LocalExec {
    pub command: String,
    /// The program and its leading arguments; `/bin/sh -c` when empty.
    pub interpreter: Vec<String>,
    pub working_dir: Option<String>,
    pub environment: BTreeMap<String, String>,
    /// `quiet = true`: the command itself is not said.
    pub quiet: bool,
}

impl LocalExec {
    /// The program and arguments that run the command.
    fn argv(&self) -> Vec<String> {
        let mut argv = match self.interpreter.is_empty() {
            true => vec!["/bin/sh".to_string(), "-c".to_string()],
            false => self.interpreter.clone(),
        };
        argv.push(self.command.clone());
        argv
    }

    pub(super) async fn run(&self, out: &mut dyn Output) -> Result<(), Failure> {
        let argv = self.argv();
        match self.quiet {
            true => out.line("local-exec: Executing: Suppressed by quiet=true"),
            false => {
                let quoted: Vec<String> = argv.iter().map(|a| go_quoted(a)).collect();
                out.line(&format!("Executing: [{}]", quoted.join(" ")));
            }
        }
        let mut kept = Kept {
            out,
            said: String::new(),
        };
        let spec = self.clone();
        let ended = streamed(&mut kept, move |say| spec.execute(argv, say)).await;
        ended.map_err(|why| Failure {
            detail: format!(
                "Error running command '{}': {why}. Output: {}",
                self.command,
                kept.said.trim_end()
            ),
        })
    }
    /// Runs the command to its end, each line of its output to `say`;
    /// why it failed, in Go's words (`exit status 3`).
    fn execute(&self, argv: Vec<String>, say: &Say) -> Result<(), String> {
        let (reader, writer) = std::io::pipe().map_err(|e| e.to_string())?;
        let second = writer.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .envs(&self.environment)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(second);
        if let Some(dir) = &self.working_dir {
            cmd.current_dir(dir);
        }
        let spawned = cmd.spawn();
        // Our copies of the pipe's writing end go with `cmd`, so the
        // reading below ends when the command's do.
        drop(cmd);
        let mut child = spawned.map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!(
                    "exec: {}: executable file not found in $PATH",
                    go_quoted(&argv[0])
                )
            }
            _ => format!("fork/exec {}: {e}", argv[0]),
        })?;
        for line in BufReader::new(reader).split(b'\n') {
            let Ok(line) = line else { break };
            let text = String::from_utf8_lossy(&line);
            say(text.trim_end_matches('\r').to_string());
        }
        let status = child.wait().map_err(|e| e.to_string())?;
        match status.code() {
            Some(0) => Ok(()),
            Some(code) => Err(format!("exit status {code}")),
            None => Err(signalled(&status)),
        }
    }
}

/// An output that keeps what it is told, for the error that quotes it.
struct Kept<'o> {
    out: &'o mut dyn Output,
    said: String,
}

impl Output for Kept<'_> {
    fn line(&mut self, line: &str) {
        self.out.line(line);
        self.said.push_str(line);
        self.said.push('\n');
    }
}

/// Go's words for a process a signal ended.
fn signalled(status: &std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("signal: {}", signal_name(sig));
        }
    }
    format!("{status}")
}

#[cfg(unix)]
fn signal_name(sig: i32) -> String {
    match sig {
        1 => "hangup".into(),
        2 => "interrupt".into(),
        9 => "killed".into(),
        13 => "broken pipe".into(),
        15 => "terminated".into(),
        n => format!("signal {n}"),
    }
}

/// `s` quoted as Go's `%q` quotes it, for the `Executing:` line.
fn go_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lines(Vec<String>);

    impl Output for Lines {
        fn line(&mut self, line: &str) {
            self.0.push(line.to_string());
        }
    }

    fn exec(command: &str) -> LocalExec {
        LocalExec {
            command: command.into(),
            interpreter: Vec::new(),
            working_dir: None,
            environment: BTreeMap::from([("GREETING".to_string(), "hi".to_string())]),
            quiet: false,
        }
    }

    fn run(l: &LocalExec) -> (Vec<String>, Result<(), Failure>) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let mut out = Lines(Vec::new());
        let r = rt.block_on(l.run(&mut out));
        (out.0, r)
    }

    #[test]
    fn output_and_errors_come_as_terraform_says_them() {
        let (lines, r) = run(&exec("echo \"$GREETING\"; echo oops >&2"));
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(
            lines,
            [
                r#"Executing: ["/bin/sh" "-c" "echo \"$GREETING\"; echo oops >&2"]"#,
                "hi",
                "oops"
            ]
        );
        let (_, r) = run(&exec("echo half; exit 3"));
        let detail = r.expect_err("exit 3").detail;
        assert_eq!(
            detail,
            "Error running command 'echo half; exit 3': exit status 3. Output: half"
        );
        let missing = LocalExec {
            interpreter: vec!["no-such-interpreter".into()],
            quiet: true,
            ..exec("x")
        };
        let (lines, r) = run(&missing);
        assert_eq!(lines, ["local-exec: Executing: Suppressed by quiet=true"]);
        assert!(r
            .expect_err("missing")
            .detail
            .contains("executable file not found"),);
    }
}
