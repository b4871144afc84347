//! The crash harness against moto: a stack of 60 AWS objects applied and
//! destroyed by a `strata` killed with SIGKILL at a random moment, then run
//! again. After each recovery the state loads, the next run converges, and
//! the cloud — listed through the AWS SDK straight from moto — holds
//! exactly the objects in the state: no duplicates, no orphans. After the
//! destroy it holds nothing.
//!
//! Trials: STRATA_CRASH_TRIALS (20 here; `bench/crash.sh 100` by hand);
//! the seed is printed and STRATA_CRASH_SEED repeats a run.

#[path = "common/aws_stack.rs"]
mod aws_stack;
mod common;

use common::moto::{self, Moto};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn command(dir: &Path, m: &Moto, args: &[&str]) -> Command {
    let mut c = common::run::strata(dir);
    c.args(args);
    moto::env_for(&mut c, m);
    c
}

fn strata(dir: &Path, m: &Moto, args: &[&str]) -> (i32, String) {
    common::output(command(dir, m, args))
}

/// Runs `args` and kills it with SIGKILL after `after`; whether it was
/// still running then.
fn killed(dir: &Path, m: &Moto, args: &[&str], after: Duration) -> bool {
    let mut child = command(dir, m, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("strata starts");
    let started = Instant::now();
    while started.elapsed() < after {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let running = matches!(child.try_wait(), Ok(None));
    let _ = child.kill();
    let _ = child.wait();
    running
}

#[test]
fn kill_9_during_aws_apply_and_destroy_leaves_no_duplicate_and_no_orphan() {
    let trials: u32 = std::env::var("STRATA_CRASH_TRIALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let seed: u64 = std::env::var("STRATA_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(11, |d| d.as_nanos() as u64)
        });
    eprintln!("AWS crash harness: {trials} trials, seed {seed} (STRATA_CRASH_SEED repeats)");
    let mut next = strata_state::conformance::rng(seed);
    let m = moto::moto();

    // How long a whole apply and destroy take here, uninterrupted (the
    // second time: moto's first answers are slow), so that the kills land
    // anywhere within them.
    let d = common::scratch("crash-aws", "baseline");
    std::fs::write(d.join("main.tf"), aws_stack::STACK).expect("config");
    let (mut apply_took, mut destroy_took) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..2 {
        let started = Instant::now();
        let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
        apply_took = started.elapsed();
        assert_eq!(code, 0, "{out}");
        let started = Instant::now();
        let (code, out) = strata(&d, &m, &["destroy", "--auto-approve"]);
        destroy_took = started.elapsed();
        assert_eq!(code, 0, "{out}");
        assert_eq!(aws_stack::count(&aws_stack::inventory(&m)), 0);
    }
    eprintln!(
        "uninterrupted: apply {:.1} s, destroy {:.1} s",
        apply_took.as_secs_f64(),
        destroy_took.as_secs_f64()
    );

    let (mut applies_cut, mut destroys_cut) = (0, 0);
    for trial in 0..trials {
        let what = format!("trial {trial} (seed {seed})");
        let d = common::scratch("crash-aws", &format!("t{trial}"));
        std::fs::write(d.join("main.tf"), aws_stack::STACK).expect("config");

        // Within the first four fifths of a run: an apply here is often
        // quicker than the baseline on a loaded machine, and a kill that
        // lands after the end tests nothing.
        let at = apply_took.mul_f64((next() % 800) as f64 / 1000.0);
        if killed(&d, &m, &["apply", "--auto-approve"], at) {
            applies_cut += 1;
        }
        let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
        assert_eq!(code, 0, "{what}: the apply after the kill:\n{out}");
        let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
        assert_eq!(code, 0, "{what}: the plan after recovery:\n{out}");
        let cloud = aws_stack::inventory(&m);
        assert_eq!(
            cloud,
            aws_stack::in_state(&aws_stack::pulled(&d)),
            "{what}: the cloud and the state differ after the apply"
        );
        assert_eq!(aws_stack::count(&cloud), aws_stack::OBJECTS, "{what}");

        let at = destroy_took.mul_f64((next() % 800) as f64 / 1000.0);
        if killed(&d, &m, &["destroy", "--auto-approve"], at) {
            destroys_cut += 1;
        }
        let (code, out) = strata(&d, &m, &["destroy", "--auto-approve"]);
        assert_eq!(code, 0, "{what}: the destroy after the kill:\n{out}");
        let left = aws_stack::inventory(&m);
        assert_eq!(aws_stack::count(&left), 0, "{what}: left behind {left:?}");
        assert_eq!(
            aws_stack::count(&aws_stack::in_state(&aws_stack::pulled(&d))),
            0,
            "{what}: the state still holds objects"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
    eprintln!(
        "AWS crash harness: {trials} trials, {applies_cut} applies and {destroys_cut} destroys killed mid-run, 0 failures"
    );
    // The kills must have landed mid-run, or nothing was tested.
    assert!(
        applies_cut * 2 >= trials,
        "only {applies_cut} applies were cut"
    );
    assert!(
        destroys_cut * 2 >= trials,
        "only {destroys_cut} destroys were cut"
    );
}
