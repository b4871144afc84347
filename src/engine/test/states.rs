//! The scratch states a test file's runs use: local state files in a
//! folder of their own under the configuration's `.terraform/strata-test/`
//! (never the configuration's backend), removed when the file is done.
//! What a teardown could not destroy is kept where Terraform keeps it,
//! `errored_test.tfstate` in the configuration's directory, and said; a
//! run killed before its teardown leaves its folder, which the next test
//! names.

use crate::config::variables::CliInput;
use crate::diag::{Diag, Diags};
use std::path::{Path, PathBuf};

const PARENT: &str = ".terraform/strata-test";

/// The last run that applied a configuration, and what it applied with:
/// its variables, its drivers (mocks and overrides) and its provider
/// blocks — what its teardown destroys with.
#[derive(Default, Clone)]
pub(super) struct Applied {
    pub run: String,
    pub inputs: Vec<CliInput>,
    /// `None` before any apply.
    pub drivers: Option<crate::builtin::Drivers>,
    pub providers: Vec<crate::config::Provider>,
    /// A run's `module`: where init installed what it calls.
    pub installed_under: Option<crate::config::InstalledUnder>,
}

/// One test file's scratch states.
pub(super) struct States {
    /// The configuration under test's directory.
    root: PathBuf,
    dir: PathBuf,
    /// Whether `.terraform` was made here (removed again when empty).
    made_terraform: bool,
    /// Each configuration, and its last finished apply: what its teardown
    /// destroys with.
    used: Vec<(PathBuf, Applied)>,
}

impl States {
    pub(super) fn new(root: &Path) -> Result<States, Diags> {
        let made_terraform = !root.join(".terraform").exists();
        let dir = root.join(PARENT).join(format!(
            "{}-{}",
            std::process::id(),
            strata_provider::clock::now().unix_timestamp_nanos()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| {
            Diags::from(Diag::new(
                "strata::test::state",
                "Cannot make a scratch state",
                format!("{}: {e}", dir.display()),
            ))
        })?;
        Ok(States {
            root: root.to_path_buf(),
            dir,
            made_terraform,
            used: Vec::new(),
        })
    }

    /// The state file of the configuration at `config`.
    pub(super) fn of(&mut self, config: &Path) -> PathBuf {
        let i = match self.used.iter().position(|(c, _)| c == config) {
            Some(i) => i,
            None => {
                self.used.push((config.to_path_buf(), Applied::default()));
                self.used.len() - 1
            }
        };
        self.file(i)
    }

    /// Notes that a run's apply of `config` finished: what its teardown
    /// destroys with (a later plan's variables may not be valid).
    pub(super) fn applied(&mut self, config: &Path, applied: Applied) {
        if let Some(u) = self.used.iter_mut().find(|(c, _)| c == config) {
            u.1 = applied;
        }
    }

    fn file(&self, i: usize) -> PathBuf {
        self.dir.join(format!("state-{i}.tfstate"))
    }

    /// Each state, newest first, with its configuration and last apply.
    pub(super) fn newest_first(&self) -> impl Iterator<Item = (&Path, &Applied, PathBuf)> {
        self.used
            .iter()
            .enumerate()
            .rev()
            .map(|(i, (c, applied))| (c.as_path(), applied, self.file(i)))
    }

    /// Each state that still holds objects after the teardown, moved to
    /// `errored_test.tfstate` (`errored_test.N.tfstate` beside one already
    /// there), and the error that says so.
    pub(super) fn keep_leftovers(&self, file: &str) -> Diags {
        let mut diags = Diags::default();
        for (_, _, state) in self.newest_first() {
            if !holds_objects(&state) {
                continue;
            }
            let kept = free_name(&self.root);
            let moved = std::fs::rename(&state, &kept)
                .or_else(|_| std::fs::copy(&state, &kept).map(|_| ()));
            let detail = match moved {
                Ok(()) => format!("strata could not destroy everything the runs of {file} made; their state is in {}: destroy them with `strata destroy -state={}` and the variables the configuration needs.", kept.display(), kept.display()),
                Err(e) => format!("strata could not destroy everything the runs of {file} made, nor keep their state in {} ({e}); it stays in {}.", kept.display(), state.display()),
            };
            diags.push(Diag::new(
                "strata::test::left_behind",
                "Objects left after the test",
                detail,
            ));
        }
        diags
    }
}

impl Drop for States {
    fn drop(&mut self) {
        // What must be kept was moved out by `keep_leftovers`.
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::remove_dir(self.root.join(PARENT));
        if self.made_terraform {
            let _ = std::fs::remove_dir(self.root.join(".terraform"));
        }
    }
}

/// Whether the state file at `path` records any object.
fn holds_objects(path: &Path) -> bool {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .is_some_and(|s| s["resources"].as_array().is_some_and(|r| !r.is_empty()))
}

fn free_name(root: &Path) -> PathBuf {
    let first = root.join("errored_test.tfstate");
    if !first.exists() {
        return first;
    }
    (1..)
        .map(|n| root.join(format!("errored_test.{n}.tfstate")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

/// A warning for each scratch folder a test killed before its teardown
/// left under `root` (its process gone) that still holds objects.
pub(super) fn killed_before(root: &Path) -> Diags {
    let mut diags = Diags::default();
    let Ok(entries) = std::fs::read_dir(root.join(PARENT)) else {
        return diags;
    };
    for dir in entries.flatten().map(|e| e.path()) {
        let pid = dir
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(alive) {
            continue;
        }
        // A state that records objects, or one an apply killed midway
        // left in its journal (the next command over it recovers them).
        let mut states: Vec<PathBuf> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter_map(|p| {
                let name = p.to_str()?;
                match name.strip_suffix(".journal") {
                    Some(state) => Some(PathBuf::from(state)),
                    None => (name.ends_with(".tfstate") && holds_objects(&p)).then_some(p),
                }
            })
            .collect();
        states.sort();
        states.dedup();
        for s in states {
            diags.push(
                Diag::new(
                    "strata::test::killed_before",
                    "A killed test left objects behind",
                    format!("A test run that was killed before its teardown left objects recorded in {}: destroy them with `strata destroy -state={}`, then remove {}.", s.display(), s.display(), dir.display()),
                )
                .warning(),
            );
        }
    }
    diags
}

/// Whether process `pid` is running.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}
