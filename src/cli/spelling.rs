//! Terraform's spellings of the command line, read beside strata's own, so
//! a script written for `terraform` runs unchanged: single-dash flags
//! (`-out=F`, `-out F`, `-var 'k=v'`, `-auto-approve`, `-refresh=false`),
//! the global `-chdir=DIR`, `-help` and `-version`, and the arguments
//! `TF_CLI_ARGS` and `TF_CLI_ARGS_<command>` add after the command name.
//!
//! Each Terraform flag becomes the flag strata's parser knows, is taken
//! with nothing left to do (strata never asks for variables, so `-input`
//! changes nothing), or is refused by name when strata does not do it yet:
//! a script either runs as it did or stops at the flag that differs, with
//! exit code 1. Arguments after `--` are never read as flags.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// The command line once read.
#[derive(Debug, Default)]
pub struct Respelled {
    /// What strata's parser reads: the program, the command, its flags.
    pub args: Vec<OsString>,
    /// `-chdir=DIR`: the directory to run in.
    pub chdir: Option<PathBuf>,
    /// `-no-color`.
    pub no_color: bool,
    /// `-lock-timeout=D`: how long to wait for a held state lock.
    pub lock_timeout: Option<Duration>,
    /// Said on stderr before the command runs (a flag taken that changes
    /// nothing a user would expect it to).
    pub notes: Vec<String>,
}

/// Terraform's flags that take a value (`-out=F` or `-out F`); the rest
/// are switches (`-destroy`, or `-destroy=false`).
const VALUED: &[&str] = &[
    "var",
    "var-file",
    "out",
    "state",
    "state-out",
    "backup",
    "parallelism",
    "lock-timeout",
    "target",
    "replace",
    "exclude",
    "generate-config-out",
    "backend-config",
    "plan",
    "type",
    "module-depth",
    "test-directory",
    "filter",
    "from-module",
    "plugin-dir",
    "lockfile",
    "config",
    "id",
];

/// Terraform's flags strata has under the same name (`--out`).
const SAME: &[&str] = &[
    "var",
    "var-file",
    "out",
    "state",
    "parallelism",
    "detailed-exitcode",
    "auto-approve",
    "destroy",
    "check",
    "recursive",
    "force",
    "target",
    "exclude",
    "replace",
    "refresh-only",
    "allow-missing",
    "config",
    "or-create",
    "backend-config",
    "dry-run",
    "test-directory",
    "filter",
    "minimal-refresh",
];

/// Terraform's flags strata does not do yet, and what each asks for.
const NOT_YET: &[(&str, &str)] = &[
    ("state-out", "writing the state to another file"),
    ("backup", "a backup file of your choosing"),
    ("plan", "a graph of a saved plan"),
    ("draw-cycles", "graph's cycle colouring"),
    ("type", "graphs of other operations"),
    ("module-depth", "graph's module depth"),
    ("plugin-dir", "plugin providers"),
    ("cloud-run", "running tests remotely in HCP Terraform"),
    ("lockfile", "the dependency lock file"),
];

/// A flag as written: `-name`, `-name=value`, `--name=value`.
struct Flag<'a> {
    name: &'a str,
    value: Option<&'a str>,
}

/// `arg` as a Terraform-style flag, when it is one: one or two dashes, a
/// lowercase name of two or more characters (so `-h` stays clap's).
fn flag(arg: &str) -> Option<Flag<'_>> {
    let body = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    let well_formed = name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c == '-');
    well_formed.then_some(Flag { name, value })
}

/// A switch's value as Terraform's flag package reads it.
fn switch(f: &Flag<'_>) -> Result<bool, String> {
    match f.value {
        None => Ok(true),
        Some("true" | "1" | "t" | "T" | "TRUE" | "True") => Ok(true),
        Some("false" | "0" | "f" | "F" | "FALSE" | "False") => Ok(false),
        Some(v) => Err(format!("invalid boolean value {v:?} for -{}", f.name)),
    }
}

/// Reads `args` (the program first) and the `TF_CLI_ARGS` variables `env`
/// gives.
pub fn respell(
    args: Vec<OsString>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Respelled, String> {
    let mut out = Respelled::default();
    let mut rest = args.into_iter();
    out.args.extend(rest.next());
    let mut rest: Vec<OsString> = rest.collect();
    // Global options, before the command.
    let mut i = 0;
    while let Some(f) = rest.get(i).and_then(|a| a.to_str()).and_then(flag) {
        match f.name {
            "chdir" => {
                let dir = match f.value {
                    Some(v) => v.to_string(),
                    None => {
                        i += 1;
                        let v = rest.get(i).and_then(|a| a.to_str());
                        v.ok_or("-chdir needs a directory: -chdir=DIR")?.to_string()
                    }
                };
                out.chdir = Some(PathBuf::from(dir));
            }
            "help" => out.args.push("--help".into()),
            "version" => out.args.push("version".into()),
            _ => break,
        }
        i += 1;
    }
    let mut rest = rest.split_off(i.min(rest.len())).into_iter();
    let Some(command) = rest.next() else {
        return Ok(out);
    };
    let name = command.to_string_lossy().to_string();
    out.args.push(command);
    let mut tail: Vec<OsString> = Vec::new();
    for var in [
        format!("TF_CLI_ARGS_{}", name.replace('-', "_")),
        "TF_CLI_ARGS".into(),
    ] {
        if let Some(text) = env(&var).filter(|t| !t.trim().is_empty()) {
            let words = shell_words(&text).map_err(|e| format!("{var}: {e}"))?;
            tail.extend(words.into_iter().map(OsString::from));
        }
    }
    tail.extend(rest);
    read_flags(&name, tail, &mut out)?;
    Ok(out)
}

/// The command's arguments, each Terraform flag made strata's.
fn read_flags(command: &str, args: Vec<OsString>, out: &mut Respelled) -> Result<(), String> {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg.to_str() == Some("--") {
            out.args.push(arg);
            out.args.extend(args.by_ref());
            break;
        }
        let text = arg.to_string_lossy();
        let Some(f) = flag(&text) else {
            out.args.push(arg);
            continue;
        };
        // A switch of one command may take a value in another (console's
        // -plan, graph's -plan=FILE).
        let valued = VALUED.contains(&f.name) && !SWITCHES.contains(&(command, f.name));
        let value = match (f.value, valued) {
            (Some(v), _) => Some(flag_text(f.name, arg.to_str().is_some(), v)?),
            (None, true) => {
                let v = args
                    .next()
                    .ok_or_else(|| format!("flag needs an argument: -{}", f.name))?;
                let lossless = v.to_str().is_some();
                Some(flag_text(f.name, lossless, &v.to_string_lossy())?)
            }
            (None, false) => None,
        };
        let f = Flag {
            name: f.name,
            value: value.as_deref(),
        };
        translate(command, &f, out)?;
    }
    Ok(())
}

/// A flag's value as text. A `-var` keeps a byte that is not UTF-8 as
/// U+FFFD, as Terraform does; any other value (a path) is refused rather
/// than changed.
fn flag_text(name: &str, lossless: bool, value: &str) -> Result<String, String> {
    match lossless || name == "var" {
        true => Ok(value.to_string()),
        false => Err(format!("the value of -{name} is not UTF-8 text: {value}")),
    }
}

/// Terraform's switches (command, name) that strata has as `--NAME`.
const SWITCHES: &[(&str, &str)] = &[
    ("init", "reconfigure"),
    ("init", "upgrade"),
    ("init", "migrate-state"),
    ("init", "force-copy"),
    ("fmt", "diff"),
    ("output", "raw"),
    ("get", "update"),
    ("console", "plan"),
    ("test", "verbose"),
    ("validate", "no-tests"),
];

/// Terraform's switches strata has turned off as `--no-NAME`.
const NEGATED: &[(&str, &str)] = &[
    ("init", "backend"),
    ("init", "get"),
    ("fmt", "list"),
    ("fmt", "write"),
];

/// The refusal of Terraform's flag `-name`, saying what it asks for.
fn not_yet(name: &str, what: &str) -> String {
    format!("-{name} is Terraform's flag for {what}, which strata does not do yet")
}

/// One flag of `command`, as strata takes it.
fn translate(command: &str, f: &Flag<'_>, out: &mut Respelled) -> Result<(), String> {
    let long = |name: &str, value: Option<&str>| match value {
        Some(v) => vec![OsString::from(format!("--{name}")), OsString::from(v)],
        None => vec![OsString::from(format!("--{name}"))],
    };
    // Terraform's switches strata has as `--NAME`, or (off) as `--no-NAME`.
    if SWITCHES.contains(&(command, f.name)) {
        if switch(f)? {
            out.args.push(format!("--{}", f.name).into());
        }
        return Ok(());
    }
    if NEGATED.contains(&(command, f.name)) {
        if !switch(f)? {
            out.args.push(format!("--no-{}", f.name).into());
        }
        return Ok(());
    }
    if let Some((name, what)) = NOT_YET.iter().find(|(n, _)| *n == f.name) {
        return Err(not_yet(name, what));
    }
    match f.name {
        "json" if command == "init" => {
            Err(format!(
                "-json on {command} is Terraform's machine-readable output, which strata does not write yet (strata plan --format json writes the plan JSON)"
            ))
        }
        "destroy" if command == "apply" && switch(f)? => {
            // `terraform apply -destroy` is `terraform destroy`.
            if let Some(c) = out.args.iter_mut().rev().find(|a| *a == "apply") {
                *c = OsString::from("destroy");
            }
            Ok(())
        }
        // strata's force-unlock asks nothing to begin with.
        "force" if command == "force-unlock" => switch(f).map(|_| ()),
        "refresh" => {
            if !switch(f)? {
                out.args.push("--no-refresh".into());
            }
            Ok(())
        }
        "no-color" => {
            out.no_color = switch(f)?;
            Ok(())
        }
        // strata never asks for a variable (one without a value is an
        // error at its declaration), and says each warning once.
        "input" | "compact-warnings" => switch(f).map(|_| ()),
        // providers': the providers test files name are not listed yet.
        "test-directory" if command == "providers" => Ok(()),
        // Terraform Cloud's check that its workspace runs this version:
        // strata keeps state in backends that have none.
        "ignore-remote-version" => switch(f).map(|_| ()),
        "lock" => {
            if !switch(f)? {
                out.notes.push(
                    "Note: -lock=false is taken, but strata holds the state lock anyway: a plan or apply never runs beside another over the same state.".into(),
                );
            }
            Ok(())
        }
        "lock-timeout" => {
            let text = f.value.unwrap_or_default();
            let d = strata_provider::wait::parse_duration(text)
                .ok_or_else(|| format!("-lock-timeout={text} is not a duration such as 0s, 30s or 5m"))?;
            out.lock_timeout = Some(d);
            Ok(())
        }
        "help" => {
            out.args.push("--help".into());
            Ok(())
        }
        name if SAME.contains(&name) => {
            match (f.value, VALUED.contains(&name)) {
                (v, true) => out.args.extend(long(name, v)),
                (_, false) if switch(f)? => out.args.extend(long(name, None)),
                _ => {}
            }
            Ok(())
        }
        "json" => {
            if switch(f)? {
                out.args.extend(long("json", None));
            }
            Ok(())
        }
        // strata's own long flags and anything else: the parser's business.
        name => {
            out.args.extend(long(name, f.value));
            Ok(())
        }
    }
}

/// Words as a POSIX shell splits them: blanks separate, quotes group,
/// a backslash escapes (what Terraform reads `TF_CLI_ARGS` with).
fn shell_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => w.push(x),
                        None => return Err("a ' is not closed".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => w.extend(chars.next()),
                        Some(x) => w.push(x),
                        None => return Err("a \" is not closed".into()),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests;
