//! The engine's step lists with a view of the test's own: what each
//! command shows, asks and says, and what it leaves in the state, with
//! the built-in `terraform_data` driver and no terminal.

use super::{
    apply, cost, drift, import, plan, Applied, Format, Mode, Notice, Options, Outcome, Shown, View,
};
use crate::builtin::Drivers;
use crate::diag::{Diag, Diags, Sources};
use std::path::{Path, PathBuf};

/// What a command told its view.
#[derive(Default)]
struct Seen {
    plans: Vec<&'static str>,
    notices: Vec<String>,
    asked: Vec<Mode>,
    /// The answer to every approval.
    yes: bool,
}

impl View for Seen {
    fn notice(&mut self, notice: Notice) {
        let said = match notice {
            Notice::DestroyWithoutConfiguration { .. } => "destroy without configuration",
            Notice::LockTakenOver { .. } => "lock taken over",
            Notice::UnlockFailed { .. } => "unlock failed",
            Notice::Interrupted { .. } => "interrupted",
            Notice::Recovered { .. } => "recovered",
            Notice::Import(_) => "import",
            _ => "other",
        };
        self.notices.push(said.to_string());
    }

    fn plan(&mut self, shown: Shown<'_>, _: &[Diag], _: &Sources) {
        self.plans.push(match shown {
            Shown::Made { .. } => "made",
            Shown::Partial(_) => "partial",
            Shown::Saved(_) => "saved",
            Shown::Round(_) => "round",
        });
    }

    fn approve(&mut self, mode: Mode) -> bool {
        self.asked.push(mode);
        self.yes
    }

    fn confirm(&mut self, _: &str) -> bool {
        self.notices.push("confirm".to_string());
        self.yes
    }

    fn progress(&self) -> fn(&str) {
        |_| {}
    }
}

/// A fresh folder holding `config` as main.tf.
fn folder(tag: &str, config: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-engine-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    if !config.is_empty() {
        std::fs::write(dir.join("main.tf"), config).expect("main.tf");
    }
    dir
}

const ONE: &str = "resource \"terraform_data\" \"a\" {\n  input = \"x\"\n}\n";

/// The options of a run whose state is `state.tfstate` in `dir`.
fn options(dir: &Path, mode: Mode) -> Options {
    Options {
        state: Some(dir.join("state.tfstate")),
        mode,
        ..Options::default()
    }
}

fn summaries(d: Diags) -> Vec<String> {
    d.0.into_iter().map(|d| d.summary).collect()
}

/// `plan` in `dir`: what it returned, errors by their summaries.
fn planned(dir: &Path, mode: Mode, seen: &mut Seen) -> Result<Outcome, Vec<String>> {
    let (how, opts) = ((None, Format::Human), options(dir, mode));
    let done = plan(
        dir,
        &opts,
        how,
        seen,
        &mut Sources::default(),
        &Drivers::builtin(),
    );
    done.map(|d| d.outcome).map_err(summaries)
}

/// `apply` (or `destroy`, by `mode`) in `dir`, approved ahead when
/// `auto_approve`; `(added, destroyed)`, `None` when there was nothing to
/// do, errors by their summaries.
fn applied(
    dir: &Path,
    (mode, auto_approve): (Mode, bool),
    seen: &mut Seen,
) -> Result<Option<(usize, usize)>, Vec<String>> {
    let opts = options(dir, mode);
    let done = apply(
        dir,
        &opts,
        auto_approve,
        seen,
        &mut Sources::default(),
        &Drivers::builtin(),
    );
    match done.map_err(summaries)? {
        Applied::Done(r) => {
            assert!(r.failed.is_empty(), "{:?}", summaries(r.failed));
            Ok(Some((r.report.added, r.report.destroyed)))
        }
        Applied::Nothing(_) => Ok(None),
    }
}

fn yes() -> Seen {
    Seen {
        yes: true,
        ..Seen::default()
    }
}

#[test]
fn a_plan_is_shown_once_and_has_changes() {
    let dir = folder("plan", ONE);
    let mut seen = Seen::default();
    assert_eq!(planned(&dir, Mode::Normal, &mut seen), Ok(Outcome::Changes));
    assert_eq!(seen.plans, ["made"]);
    assert!(seen.asked.is_empty() && seen.notices.is_empty());
    assert!(
        !dir.join("state.tfstate").exists(),
        "a plan writes no state"
    );
}

#[test]
fn an_apply_asks_and_a_no_changes_nothing() {
    let dir = folder("apply", ONE);
    let mut no = Seen::default();
    let refused = applied(&dir, (Mode::Normal, false), &mut no);
    assert_eq!(refused, Err(vec!["Apply cancelled".to_string()]));
    assert_eq!(no.asked, [Mode::Normal]);
    assert!(!dir.join("state.tfstate").exists(), "nothing applied");

    let done = applied(&dir, (Mode::Normal, false), &mut yes());
    assert_eq!(done, Ok(Some((1, 0))));
    assert!(dir.join("state.tfstate").exists());

    let mut again = Seen::default();
    assert_eq!(applied(&dir, (Mode::Normal, false), &mut again), Ok(None));
    assert!(again.asked.is_empty(), "nothing to approve");
    assert_eq!(again.plans, ["made"]);
}

#[test]
fn a_destroy_without_configuration_says_so_and_a_plan_refuses() {
    let dir = folder("empty", ONE);
    assert_eq!(
        applied(&dir, (Mode::Normal, true), &mut yes()),
        Ok(Some((1, 0)))
    );
    std::fs::remove_file(dir.join("main.tf")).expect("configuration removed");
    let refused = planned(&dir, Mode::Normal, &mut Seen::default());
    assert_eq!(refused, Err(vec!["No configuration files".to_string()]));
    let mut seen = Seen::default();
    assert_eq!(
        applied(&dir, (Mode::Destroy, true), &mut seen),
        Ok(Some((0, 1)))
    );
    assert_eq!(seen.notices, ["destroy without configuration"]);
}

#[test]
fn a_lock_another_run_holds_stops_the_command_before_it_plans() {
    let dir = folder("locked", ONE);
    let store = strata_state::Store::local(dir.join("state.tfstate"));
    let _held = store.lock("apply").expect("the other run's lock");
    let mut seen = Seen::default();
    let refused = planned(&dir, Mode::Normal, &mut seen)
        .err()
        .unwrap_or_default();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(seen.plans.is_empty(), "no plan was made: {:?}", seen.plans);
}

/// The state file of `dir`, as text ("" when there is none).
fn state_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("state.tfstate")).unwrap_or_default()
}

/// Whether another run could take the state's lock now (the command
/// before let it go).
fn unlocked(dir: &Path) -> bool {
    let store = strata_state::Store::local(dir.join("state.tfstate"));
    let free = store.lock("test").is_ok();
    free
}

#[test]
fn an_import_records_the_object_says_each_step_and_refuses_it_twice() {
    let dir = folder("import", ONE);
    let (opts, drivers) = (options(&dir, Mode::Normal), Drivers::builtin());
    let mut seen = Seen::default();
    let run = |seen: &mut Seen| {
        let to = ("terraform_data.a", "an-id");
        let done = import(&dir, &opts, to, seen, &mut Sources::default(), &drivers);
        done.map_err(summaries)
    };
    assert_eq!(run(&mut seen), Ok(()));
    assert_eq!(
        seen.notices, ["import"; 4],
        "importing, prepared, refreshing, done"
    );
    assert!(
        seen.plans.is_empty() && seen.asked.is_empty(),
        "nothing planned or asked"
    );
    assert!(state_text(&dir).contains("\"terraform_data\""));
    assert!(unlocked(&dir));

    let before = state_text(&dir);
    let again = run(&mut Seen::default());
    assert_eq!(
        again,
        Err(vec!["Resource already managed by strata".to_string()])
    );
    assert_eq!(state_text(&dir), before, "a refused import writes nothing");
    assert!(unlocked(&dir), "the lock is let go on the error path too");
}

#[test]
fn cost_and_drift_plan_without_showing_and_write_nothing() {
    let dir = folder("readers", ONE);
    assert_eq!(
        applied(&dir, (Mode::Normal, true), &mut yes()),
        Ok(Some((1, 0)))
    );
    let before = state_text(&dir);
    let (opts, drivers) = (options(&dir, Mode::Normal), Drivers::builtin());

    let mut seen = Seen::default();
    let costed = cost(&dir, &opts, &mut seen, &mut Sources::default(), &drivers);
    let costed = costed.map_err(summaries).expect("cost");
    assert!(costed.cost.pools.is_empty() && costed.cost.unpriced.is_empty());
    let mut seen_drift = Seen::default();
    let drifted = drift(
        &dir,
        &opts,
        &[],
        &mut seen_drift,
        &mut Sources::default(),
        &drivers,
    );
    let drifted = drifted.map_err(summaries).expect("drift");
    assert_eq!(drifted.outcome(), Outcome::NoChanges);
    for seen in [seen, seen_drift] {
        assert!(seen.plans.is_empty() && seen.asked.is_empty() && seen.notices.is_empty());
    }
    assert_eq!(state_text(&dir), before, "neither writes the state");
    assert!(unlocked(&dir));
}

#[test]
fn a_bad_ignore_pattern_stops_drift_before_the_state_is_opened() {
    let dir = folder("ignore", ONE);
    let store = strata_state::Store::local(dir.join("state.tfstate"));
    // Held by another run: had drift opened the state it would say so.
    let _held = store.lock("apply").expect("the other run's lock");
    let (opts, drivers) = (options(&dir, Mode::Normal), Drivers::builtin());
    let ignore = ["[".to_string()];
    let mut seen = Seen::default();
    let refused = drift(
        &dir,
        &opts,
        &ignore,
        &mut seen,
        &mut Sources::default(),
        &drivers,
    );
    let refused = refused.err().map(summaries).unwrap_or_default();
    assert_eq!(refused, ["Invalid --ignore pattern \"[\""]);
    assert!(seen.plans.is_empty());
}
