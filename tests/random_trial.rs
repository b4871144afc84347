//! The randomized cross-tool trial (issue 40): strata and Terraform 1.11
//! take turns on one directory that Terraform initialised, with random
//! small configurations, workspaces and state commands, and a random
//! signal at a random moment of the runs that change things (SIGINT,
//! SIGTERM to either tool, SIGKILL to strata: a killed Terraform may tear
//! its own state file, which says nothing about strata). After every step
//! the state must be one both tools accept: each plans it (exit 0 or 2,
//! never an error) and both list the same objects. At the end strata
//! applies and both plan no changes.
//!
//! The seed is printed; `STRATA_TRIAL_SEED` replays one, and
//! `STRATA_TRIAL_STEPS` makes a longer run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/oracle.rs"]
mod oracle;
use oracle::{ok, require_terraform, run};

/// A small seeded generator (an LCG), so a failing trial can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len() as u64) as usize]
    }
}

/// A configuration of up to five `terraform_data` resources: some
/// counted, some fed from an earlier one, some with a short `local-exec`
/// so that a signal can land while an operation is in flight.
fn configuration(rng: &mut Rng) -> String {
    let mut text = String::from("variable \"v\" {\n  default = \"x\"\n}\n");
    let n = 1 + rng.below(5);
    for i in 0..n {
        text.push_str(&format!("\nresource \"terraform_data\" \"r{i}\" {{\n"));
        if rng.chance(40) {
            text.push_str(&format!("  count = {}\n", rng.below(4)));
        }
        let input = match i > 0 && rng.chance(50) {
            true => format!("jsonencode(terraform_data.r{}[*].output)", rng.below(i)),
            false => format!("\"${{var.v}}-{}\"", rng.below(3)),
        };
        text.push_str(&format!("  input = {input}\n"));
        if rng.chance(40) {
            let tenths = 1 + rng.below(6);
            text.push_str(&format!(
                "  provisioner \"local-exec\" {{\n    command = \"sleep 0.{tenths}\"\n  }}\n"
            ));
        }
        text.push_str("}\n");
    }
    text
}

#[derive(Debug, Clone, Copy)]
enum Signal {
    None,
    Int,
    Term,
    Kill,
}

/// Runs `args` with `tool`, sending `signal` to its process group (as a
/// terminal's Ctrl-C reaches the provisioners' shells too) after `after`:
/// how it ended.
fn signalled(tool: &str, dir: &Path, args: &[&str], signal: Signal, after: Duration) -> String {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(oracle::program(tool))
        .args(args)
        .current_dir(dir)
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("the tool starts");
    let number = match signal {
        Signal::None => None,
        Signal::Int => Some(libc::SIGINT),
        Signal::Term => Some(libc::SIGTERM),
        Signal::Kill => Some(libc::SIGKILL),
    };
    if let Some(number) = number {
        std::thread::sleep(after);
        unsafe { libc::kill(-(child.id() as libc::pid_t), number) };
    }
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return format!("{status}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{tool} {args:?} did not end after {signal:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What `tool state list` says: the objects, or that there is no state
/// ("No state file was found!", exit 1, in a workspace never written).
fn listed(tool: &str, dir: &Path) -> String {
    let (code, out, err) = run(tool, dir, &["state", "list"]);
    match code {
        0 => out,
        _ if err.contains("No state file was found!") => "no state".into(),
        _ => panic!("{tool} state list:\n{out}\n{err}"),
    }
}

/// The state of the selected workspace is one both tools accept: Terraform
/// first (it reads only what strata wrote in the state file), then strata
/// (which folds a killed run's journal in); then both list the same.
fn both_accept(dir: &Path, history: &[String]) {
    let plan = [
        "plan",
        "-no-color",
        "-lock-timeout=60s",
        "-detailed-exitcode",
    ];
    for tool in ["terraform", "strata"] {
        let (code, out, err) = run(tool, dir, &plan);
        assert!(
            code == 0 || code == 2,
            "{tool} refuses the state after:\n{}\n{out}\n{err}",
            history.join("\n")
        );
    }
    assert_eq!(
        listed("terraform", dir),
        listed("strata", dir),
        "the tools list different objects after:\n{}",
        history.join("\n")
    );
}

/// One random step; what it was, for the history.
fn step(rng: &mut Rng, dir: &Path) -> String {
    let tool = *rng.pick(&["strata", "terraform"]);
    match rng.below(10) {
        0..=3 => {
            std::fs::write(dir.join("main.tf"), configuration(rng)).expect("config");
            changing(rng, tool, dir, &["apply", "-auto-approve", "-no-color"])
        }
        4 => changing(rng, tool, dir, &["destroy", "-auto-approve", "-no-color"]),
        5 => {
            let v = format!("v={}", rng.below(3));
            let plan = ["plan", "-no-color", "-var", &v, "-out=trial.tfplan"];
            let (code, _, _) = run(tool, dir, &plan);
            match code {
                0 => changing(rng, tool, dir, &["apply", "-no-color", "trial.tfplan"]),
                _ => format!("{tool} plan -out: exit {code}"),
            }
        }
        6 => {
            let name = *rng.pick(&["default", "blue", "green"]);
            let (code, _, _) = run(tool, dir, &["workspace", "select", "-or-create", name]);
            format!("{tool} workspace select -or-create {name}: exit {code}")
        }
        7 => {
            let objects = listed(tool, dir).replace("no state", "");
            let Some(from) = objects.lines().nth(rng.below(4) as usize) else {
                return format!("{tool}: nothing to move");
            };
            let to = format!("terraform_data.moved{}", rng.below(2));
            let (code, _, _) = run(tool, dir, &["state", "mv", from, &to]);
            format!("{tool} state mv {from} {to}: exit {code}")
        }
        8 => {
            let objects = listed(tool, dir).replace("no state", "");
            let Some(addr) = objects.lines().next() else {
                return format!("{tool}: nothing to taint");
            };
            let (code, _, _) = run(tool, dir, &["taint", addr]);
            format!("{tool} taint {addr}: exit {code}")
        }
        _ => {
            let objects = listed(tool, dir).replace("no state", "");
            let Some(addr) = objects.lines().last() else {
                return format!("{tool}: nothing to remove");
            };
            let (code, _, _) = run(tool, dir, &["state", "rm", addr]);
            format!("{tool} state rm {addr}: exit {code}")
        }
    }
}

/// A run that changes things, with a random signal at a random moment.
fn changing(rng: &mut Rng, tool: &str, dir: &Path, args: &[&str]) -> String {
    let signal = match (rng.below(4), tool) {
        (0, _) => Signal::Int,
        (1, _) => Signal::Term,
        (2, "strata") => Signal::Kill,
        _ => Signal::None,
    };
    let after = Duration::from_millis(rng.below(1500));
    let ended = signalled(tool, dir, args, signal, after);
    format!("{tool} {args:?}, {signal:?} after {after:?}: {ended}")
}

fn scratch(seed: u64) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-trial-{seed}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

#[test]
fn strata_and_terraform_take_turns_under_random_signals() {
    if !require_terraform("strata_and_terraform_take_turns_under_random_signals") {
        return;
    }
    let seed = std::env::var("STRATA_TRIAL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let steps: usize = std::env::var("STRATA_TRIAL_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(24);
    eprintln!("random trial: seed {seed}, {steps} steps");
    let mut rng = Rng(seed);
    let dir = scratch(seed);
    std::fs::write(dir.join("main.tf"), configuration(&mut rng)).expect("config");
    ok("terraform", &dir, &["init", "-input=false", "-no-color"]);
    ok("terraform", &dir, &["apply", "-auto-approve", "-no-color"]);
    let mut history = vec![format!("seed {seed}: terraform init, apply")];
    for _ in 0..steps {
        history.push(step(&mut rng, &dir));
        eprintln!("{}", history[history.len() - 1]);
        both_accept(&dir, &history);
    }
    // Whatever the turns left, strata finishes it and both agree.
    ok("strata", &dir, &["apply", "-auto-approve", "-no-color"]);
    for tool in ["terraform", "strata"] {
        let (code, out, err) = run(tool, &dir, &["plan", "-no-color", "-detailed-exitcode"]);
        assert_eq!(
            code,
            0,
            "{tool} after strata's last apply:\n{}\n{out}\n{err}",
            history.join("\n")
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
