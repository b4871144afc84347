//! This build's `strata`, run as the tests run it: in a folder, with no
//! terminal input and no colour, its exit code and what it printed. Each
//! test file adds only what is its own (a cloud's endpoints, a PATH).
//! Included by `common` and, in the files that need nothing else of it,
//! with `#[path = "common/run.rs"] mod run;`.

#![allow(dead_code)] // each test file uses its own part

use std::path::Path;
use std::process::{Command, Stdio};

/// The binary under test.
pub const STRATA: &str = env!("CARGO_BIN_EXE_strata");

/// `strata` to be run in `dir`: stdin empty (a question is answered "no"),
/// `NO_COLOR` set; the caller adds arguments and environment.
pub fn strata(dir: impl AsRef<Path>) -> Command {
    let mut c = Command::new(STRATA);
    c.current_dir(dir).stdin(Stdio::null()).env("NO_COLOR", "1");
    c
}

/// What a run said and how it ended.
pub struct Ran {
    pub code: i32,
    pub out: String,
    pub err: String,
}

impl Ran {
    /// stdout then stderr.
    pub fn both(&self) -> String {
        format!("{}{}", self.out, self.err)
    }
}

/// Runs `c` to its end.
pub fn ran(c: &mut Command) -> Ran {
    let out = c.output().expect("strata runs");
    Ran {
        code: out.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `strata ARGS` in `dir`: its exit code and all it printed.
pub fn strata_in(dir: &Path, args: &[&str]) -> (i32, String) {
    let r = ran(strata(dir).args(args));
    (r.code, r.both())
}

/// A new scratch folder `strata-TAG-PID` under the temporary directory
/// holding `files` (path, text), their folders made.
pub fn tree(tag: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}
