//! kill -9 during apply and destroy, with a driver whose "cloud" is a
//! directory of objects (one file each, tagged with address and lineage)
//! and whose every call sleeps, so the kill lands mid-operation. After each
//! kill, strata runs again to completion; then the state must load, a plan
//! must show no changes, and the cloud must hold exactly the objects the
//! state records — nothing created twice, nothing orphaned. Also: a second
//! apply while one runs fails naming the holder of the lock.
//!
//! The child processes are this test binary running `crash_apply_child`,
//! which runs the real command line with the sleeping driver added.

use async_trait::async_trait;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata::builtin::terraform_data::TerraformData;
use strata::builtin::Drivers;
use strata::lang::value::Value;
use strata_provider::{Driver, DriverError, PlanRequest, Planned, ResourceSchema, Tags};

const TYPE: &str = "sleepy_object";

/// `terraform_data`'s semantics under another name, with objects kept as
/// files in `dir` and a delay on every call.
struct Sleepy {
    dir: PathBuf,
    delay: Duration,
    schemas: BTreeMap<String, ResourceSchema>,
    /// Calls in flight now, and the most there have been (written to
    /// `max_in_flight` in the cloud directory for the test to read).
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

/// Counts a call in flight for as long as it lives.
struct Flight<'a>(&'a Sleepy);

impl<'a> Flight<'a> {
    fn start(s: &'a Sleepy) -> Flight<'a> {
        let now = s.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        s.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Flight(s)
    }
}

/// Appends `event addr` to the cloud's operation log.
fn log(dir: &Path, event: &str, addr: &str) {
    use std::io::Write as _;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("ops.log"))
    {
        // One write per line: concurrent operations' lines must not
        // interleave (writeln! writes each piece on its own).
        let _ = f.write_all(format!("{event} {addr}\n").as_bytes());
    }
}

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        // Written when calls end, not start: by the last one the maximum is
        // final, whatever order concurrent writes land in.
        let max = self.0.max_in_flight.load(Ordering::SeqCst);
        let _ = std::fs::write(self.0.dir.join("max_in_flight"), max.to_string());
    }
}

impl Sleepy {
    fn new(dir: PathBuf, delay: Duration) -> Sleepy {
        let s = TerraformData::default().resource_schemas()["terraform_data"].clone();
        Sleepy {
            dir,
            delay,
            schemas: BTreeMap::from([(TYPE.to_string(), s)]),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        }
    }

    fn id(v: &Value) -> String {
        v.entries()
            .and_then(|m| m.get("id"))
            .and_then(|i| i.as_str())
            .unwrap_or_default()
            .to_string()
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.obj"))
    }

    /// Writes the object into the "cloud", tagged with whose it is.
    fn store(&self, v: &Value, address: &str, lineage: &str) -> Result<(), DriverError> {
        let body = serde_json::json!({
            "address": address,
            "lineage": lineage,
            "object": strata::lang::json::value_to_json(v, &strata::lang::types::Type::Dynamic).map_err(api)?,
        });
        // Whole or not at all, as a cloud's write is: a kill between
        // truncating and writing would leave an object nobody can read.
        let path = self.path(&Self::id(v));
        let tmp = path.with_extension("obj.tmp");
        std::fs::write(&tmp, body.to_string())
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(api)
    }
}

fn object_of(body: &serde_json::Value) -> Result<Value, DriverError> {
    strata::lang::json::value_from_json(&body["object"], &strata::lang::types::Type::Dynamic)
        .map_err(api)
}

fn api(e: impl std::fmt::Display) -> DriverError {
    DriverError::Api {
        operation: "sleepy".into(),
        detail: e.to_string(),
        retryable: false,
    }
}

#[async_trait]
impl Driver for Sleepy {
    fn name(&self) -> &str {
        "sleepy"
    }
    fn provider_address(&self) -> String {
        "provider[\"example.com/test/sleepy\"]".into()
    }
    fn resource_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        &self.schemas
    }
    /// Objects whose input starts with "final" are purchases the cloud
    /// cannot undo.
    fn lasting(&self, _t: &str, prior: &Value) -> Option<String> {
        let input = prior.entries()?.get("input")?.as_str()?;
        input
            .starts_with("final")
            .then(|| "a purchase is final".to_string())
    }
    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        TerraformData::default().plan(PlanRequest {
            type_name: "terraform_data",
            ..req
        })
    }
    async fn read(&self, _t: &str, instances: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        log(&self.dir, "read", &instances.len().to_string());
        tokio::time::sleep(self.delay).await;
        // What the "cloud" holds, so a file edited by hand is drift.
        instances
            .iter()
            .map(|v| match std::fs::read_to_string(self.path(&Self::id(v))) {
                Ok(text) => {
                    let body: serde_json::Value = serde_json::from_str(&text).map_err(api)?;
                    object_of(&body).map(Some)
                }
                Err(_) => Ok(None),
            })
            .collect()
    }
    async fn create(&self, _t: &str, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        let _flight = Flight::start(self);
        let input = planned.entries().and_then(|m| m.get("input")).cloned();
        if input
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|s| s.starts_with("fail"))
        {
            tokio::time::sleep(self.delay).await;
            return Err(api("the cloud refused: quota exceeded"));
        }
        log(&self.dir, "start-create", &tags.address);
        let input = input.as_ref().and_then(Value::as_str).unwrap_or_default();
        if input.starts_with("final-twice") {
            // A first attempt made it and its answer was lost; the client
            // sent the call again.
            let first = TerraformData::default()
                .create("terraform_data", planned, tags)
                .await?;
            self.store(&first, &tags.address, &tags.lineage)?;
            strata_provider::resend::note();
        }
        let v = TerraformData::default()
            .create("terraform_data", planned, tags)
            .await?;
        tokio::time::sleep(self.delay).await;
        // The object exists in the "cloud" from here; the engine records
        // it only after this returns.
        self.store(&v, &tags.address, &tags.lineage)?;
        if input.starts_with("final-lost") {
            return Err(api("connection reset: the answer was lost"));
        }
        tokio::time::sleep(self.delay).await;
        log(&self.dir, "end-create", &tags.address);
        Ok(v)
    }
    async fn update(&self, _t: &str, prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        tokio::time::sleep(self.delay).await;
        let v = TerraformData::default()
            .update("terraform_data", prior, planned)
            .await?;
        let body: serde_json::Value = std::fs::read_to_string(self.path(&Self::id(prior)))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        self.store(
            &v,
            body["address"].as_str().unwrap_or_default(),
            body["lineage"].as_str().unwrap_or_default(),
        )?;
        Ok(v)
    }
    async fn delete(&self, _t: &str, prior: &Value) -> Result<(), DriverError> {
        // The object's file says whose it is.
        let addr = std::fs::read_to_string(self.path(&Self::id(prior)))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|b| b["address"].as_str().map(str::to_string))
            .unwrap_or_default();
        log(&self.dir, "start-delete", &addr);
        tokio::time::sleep(self.delay).await;
        log(&self.dir, "end-delete", &addr);
        match std::fs::remove_file(self.path(&Self::id(prior))) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(api(e)),
        }
    }
    async fn import(&self, _t: &str, id: &str) -> Result<Option<Value>, DriverError> {
        for (found, body) in cloud(&self.dir) {
            if found == id {
                return object_of(&body).map(Some);
            }
        }
        Ok(None)
    }
}

#[async_trait]
impl strata_provider::Recovery for Sleepy {
    async fn find_tagged(&self, _t: &str, tags: &Tags) -> Result<Vec<Value>, DriverError> {
        let mut out = Vec::new();
        for (_, body) in cloud(&self.dir) {
            if body["address"] == tags.address.as_str() && body["lineage"] == tags.lineage.as_str()
            {
                out.push(object_of(&body)?);
            }
        }
        Ok(out)
    }
}

impl strata_provider::Billing for Sleepy {}
impl strata_provider::Ephemerals for Sleepy {}

/// Every object in the cloud directory: (id, body).
fn cloud(dir: &Path) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "obj") {
            if let Ok(text) = std::fs::read_to_string(&p) {
                if let Ok(body) = serde_json::from_str(&text) {
                    let id = p
                        .file_stem()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned();
                    out.push((id, body));
                }
            }
        }
    }
    out
}

#[test]
#[ignore = "run by the crash tests as a child process"]
fn crash_apply_child() {
    let args: Vec<std::ffi::OsString> = serde_json::from_str::<Vec<String>>(
        &std::env::var("STRATA_CHILD_ARGS").expect("run by the crash tests"),
    )
    .expect("args")
    .into_iter()
    .map(Into::into)
    .collect();
    let cloud = PathBuf::from(std::env::var("STRATA_CHILD_CLOUD").expect("cloud dir"));
    let delay = std::env::var("STRATA_CHILD_DELAY_MS")
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(20);
    let drivers =
        Drivers::builtin().with(Arc::new(Sleepy::new(cloud, Duration::from_millis(delay))));
    let code = strata::cli::main_with(drivers, args);
    // The exit code is the process's, as the real binary's would be.
    let code = [0u8, 2]
        .into_iter()
        .find(|c| code == std::process::ExitCode::from(*c))
        .unwrap_or(1);
    std::process::exit(code.into());
}

/// A configuration of `n` objects: ten roots, the rest each depending on
/// an earlier one, so applies run in dependency order with parallelism.
fn config(n: usize, generation: &str) -> String {
    let mut s = String::new();
    for i in 0..n {
        let input = if i < 10 {
            format!("\"{generation}-{i}\"")
        } else {
            format!("\"${{sleepy_object.o{}.output}}/{i}\"", i / 10 - 1)
        };
        s.push_str(&format!(
            "resource \"sleepy_object\" \"o{i}\" {{\n  input = {input}\n}}\n"
        ));
    }
    s
}

struct Env {
    dir: PathBuf,
    cloud: PathBuf,
}

fn child(env: &Env, args: &[&str], delay_ms: u64) -> Command {
    let mut all = vec!["strata".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    let mut c = Command::new(std::env::current_exe().expect("test binary"));
    c.args([
        "--exact",
        "crash_apply_child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .current_dir(&env.dir)
    .env(
        "STRATA_CHILD_ARGS",
        serde_json::to_string(&all).expect("json"),
    )
    .env("STRATA_CHILD_CLOUD", &env.cloud)
    .env("STRATA_CHILD_DELAY_MS", delay_ms.to_string())
    .env("NO_COLOR", "1")
    .stdin(Stdio::null());
    c
}

fn finish(env: &Env, args: &[&str]) -> (i32, String) {
    let out = child(env, args, 1).output().expect("child runs");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// What strata printed, without the child's test-harness lines around it.
fn strata_output(out: &str) -> String {
    const LEAD: &str = "test crash_apply_child ... ";
    let start = out.find(LEAD).map_or(0, |i| i + LEAD.len());
    let end = out.rfind("\ntest result").unwrap_or(out.len());
    out[start..end]
        .trim_end()
        .trim_end_matches("ok")
        .trim_end()
        .to_string()
}

/// The ids the state records, and every address in it.
fn state_ids(env: &Env) -> (BTreeSet<String>, Vec<String>) {
    let store = strata_state::Store::local(env.dir.join("terraform.tfstate"));
    let loaded = store.load().expect("the state loads after a crash");
    let mut ids = BTreeSet::new();
    let mut addrs = Vec::new();
    for r in &loaded.state.resources {
        for i in &r.instances {
            ids.insert(
                i.attributes.json().expect("attributes")["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
            addrs.push(r.id.instance_address(i.index_key.as_ref()));
        }
    }
    (ids, addrs)
}

/// The invariant after recovery: the cloud holds exactly what the state
/// records, one object per address.
fn check_converged(env: &Env, what: &str) {
    let (ids, addrs) = state_ids(env);
    let objects = cloud(&env.cloud);
    let in_cloud: BTreeSet<String> = objects.iter().map(|(id, _)| id.clone()).collect();
    let orphans: Vec<_> = in_cloud.difference(&ids).collect();
    let missing: Vec<_> = ids.difference(&in_cloud).collect();
    assert!(
        orphans.is_empty(),
        "{what}: objects in the cloud the state does not know: {orphans:?}"
    );
    assert!(
        missing.is_empty(),
        "{what}: state records objects the cloud lacks: {missing:?}"
    );
    let mut per_addr: BTreeMap<String, usize> = BTreeMap::new();
    for (_, body) in &objects {
        *per_addr
            .entry(body["address"].as_str().unwrap_or_default().to_string())
            .or_default() += 1;
    }
    let dup: Vec<_> = per_addr.iter().filter(|(_, n)| **n > 1).collect();
    assert!(dup.is_empty(), "{what}: created twice: {dup:?}");
    assert_eq!(addrs.len(), objects.len(), "{what}");
}

fn setup(tag: &str) -> Env {
    let dir = std::env::temp_dir().join(format!("strata-crash-apply-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cloud = dir.join("cloud");
    std::fs::create_dir_all(&cloud).expect("dirs");
    Env { dir, cloud }
}

#[test]
fn kill_9_during_apply_and_destroy_loses_and_leaks_nothing() {
    let seed: u64 = std::env::var("STRATA_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xa991);
    eprintln!("apply crash test seed: {seed} (set STRATA_CRASH_SEED to repeat)");
    let mut next = strata_state::conformance::rng(seed);
    let trials = 8;
    for trial in 0..trials {
        let env = setup(&format!("t{trial}"));
        // Generation 1, then a change near the roots (updates everywhere
        // below), then destroy: each killed at a random moment first.
        for (step, args, generation) in [
            ("apply", &["apply", "--auto-approve"][..], "g1"),
            ("update", &["apply", "--auto-approve"][..], "g2"),
            ("destroy", &["destroy", "--auto-approve"][..], "g2"),
        ] {
            std::fs::write(env.dir.join("main.tf"), config(200, generation)).expect("config");
            let mut c = child(&env, args, 15)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("child");
            std::thread::sleep(Duration::from_millis(30 + next() % 700));
            c.kill().expect("kill -9");
            let _ = c.wait();
            let what = format!("trial {trial} (seed {seed}) {step}");
            let stale_lock = env.dir.join(".terraform.tfstate.lock.info").exists();
            let (code, out) = finish(&env, args);
            assert_eq!(
                code, 0,
                "{what}: the run after the crash must succeed:\n{out}"
            );
            if stale_lock {
                assert!(
                    out.contains("which is no longer running; this run took the lock over"),
                    "{what}: the killed run's lock is taken over, saying so:\n{out}"
                );
            }
            check_converged(&env, &what);
            let plan: &[&str] = if step == "destroy" {
                &["plan", "--destroy", "--detailed-exitcode"]
            } else {
                &["plan", "--detailed-exitcode"]
            };
            let (code, out) = finish(&env, plan);
            assert_eq!(
                code, 0,
                "{what}: after convergence a plan must show no changes:\n{out}"
            );
            if step == "destroy" {
                assert!(cloud(&env.cloud).is_empty(), "{what}: destroy left objects");
            } else {
                assert_eq!(state_ids(&env).1.len(), 200, "{what}");
            }
        }
        let _ = std::fs::remove_dir_all(&env.dir);
    }
    eprintln!("apply crash test: {trials} trials × 3 kills, no loss, no duplicates, no orphans");
}

/// Ctrl-C (SIGINT) or SIGTERM at a random moment of an apply, an update
/// and a destroy: the run stops starting operations, lets those in flight
/// finish, writes the state and lets go of the lock, as Terraform does.
/// Right after it, with no recovery run, the state is whole (no journal
/// left), holds exactly what the cloud does, and no lock is left; the next
/// run then finishes the job.
#[test]
fn an_interrupt_stops_the_run_with_the_state_written_and_the_lock_released() {
    let seed: u64 = std::env::var("STRATA_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5161);
    eprintln!("interrupt test seed: {seed} (set STRATA_CRASH_SEED to repeat)");
    let mut next = strata_state::conformance::rng(seed);
    let mut graceful = 0;
    for trial in 0..6 {
        let env = setup(&format!("int{trial}"));
        for (step, args, generation) in [
            ("apply", &["apply", "--auto-approve"][..], "g1"),
            ("update", &["apply", "--auto-approve"][..], "g2"),
            ("destroy", &["destroy", "--auto-approve"][..], "g2"),
        ] {
            std::fs::write(env.dir.join("main.tf"), config(120, generation)).expect("config");
            let signal = if next() % 2 == 0 {
                libc::SIGINT
            } else {
                libc::SIGTERM
            };
            // Calls slow enough (60 ms) that most signals land mid-apply.
            let c = child(&env, args, 60)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("child");
            std::thread::sleep(Duration::from_millis(300 + next() % 1500));
            // SAFETY: a signal to our own child, which is still ours to wait for.
            unsafe { libc::kill(c.id() as libc::pid_t, signal) };
            let out = c.wait_with_output().expect("the child ends");
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let what = format!("trial {trial} (seed {seed}) {step}, signal {signal}");
            match out.status.code() {
                Some(0) => {}
                Some(1) => {
                    assert!(said.contains("Interrupt received."), "{what}:\n{said}");
                    // Said once, however many changes had not started
                    // (each was "failed" before, with its own error).
                    let halted = said.matches("execution halted").count();
                    assert_eq!(halted, 1, "{what}:\n{said}");
                    assert!(!said.contains(" failed"), "{what}:\n{said}");
                    graceful += 1;
                }
                // Before the state was locked a signal ends strata as it
                // ends any tool; after, never.
                None => assert!(
                    !said.contains("will perform the following actions"),
                    "{what}: killed after it held the state:\n{said}"
                ),
                Some(other) => panic!("{what}: exit {other}:\n{said}"),
            }
            assert!(
                !env.dir.join(".terraform.tfstate.lock.info").exists(),
                "{what}: the lock is left"
            );
            assert!(
                !env.dir.join("terraform.tfstate.journal").exists(),
                "{what}: the state was not written (a journal is left):\n{said}"
            );
            check_converged(&env, &what);
            let (code, out) = finish(&env, args);
            assert_eq!(code, 0, "{what}: the next run finishes:\n{out}");
            check_converged(&env, &what);
        }
        let _ = std::fs::remove_dir_all(&env.dir);
    }
    assert!(
        graceful > 0,
        "no trial was interrupted mid-run: the timing needs a look"
    );
    eprintln!(
        "interrupt test: {graceful} graceful stops in 18 signals, nothing lost or left locked"
    );
}

#[test]
fn a_second_apply_while_one_runs_names_the_holder() {
    let env = setup("concurrent");
    std::fs::write(env.dir.join("main.tf"), config(40, "g1")).expect("config");
    let mut first = child(&env, &["apply", "--auto-approve"], 50)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("first apply");
    let lock = env.dir.join(".terraform.tfstate.lock.info");
    for _ in 0..200 {
        if lock.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(lock.exists(), "the first apply holds the lock");
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("locked by"), "{out}");
    assert!(out.contains("operation apply"), "{out}");
    let status = first.wait().expect("first finishes");
    assert!(status.success());
    check_converged(&env, "concurrent");
    assert_eq!(state_ids(&env).1.len(), 40);
    let _ = std::fs::remove_dir_all(&env.dir);
}

/// What the cloud cannot delete (a purchase) is never "deleted" to hide a
/// duplicate, nor tainted to be bought again: a create that failed after
/// the cloud acted adopts what it made, and a duplicate a resend made
/// stays and is named in a warning.
#[test]
fn a_final_purchase_is_neither_hidden_nor_bought_again() {
    let env = setup("final");
    let config = r#"
resource "sleepy_object" "lost" { input = "final-lost" }
resource "sleepy_object" "twice" { input = "final-twice" }
"#;
    std::fs::write(env.dir.join("main.tf"), config).expect("config");
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("2 added, 0 changed, 0 destroyed"), "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("which cannot be deleted: it is the object now"),
        "{out}"
    );
    assert!(
        flat.contains("that cannot be deleted (a purchase is final); it is not in the state: `strata import` takes it"),
        "{out}"
    );
    let (ids, addrs) = state_ids(&env);
    assert_eq!(addrs, ["sleepy_object.lost", "sleepy_object.twice"]);
    let in_cloud: BTreeSet<String> = cloud(&env.cloud).into_iter().map(|(id, _)| id).collect();
    assert_eq!(in_cloud.len(), 3, "the duplicate stays: {in_cloud:?}");
    assert!(ids.is_subset(&in_cloud));
    let (code, out) = finish(&env, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "nothing tainted, nothing to buy again: {out}");
    // Tainted all the same (as Terraform leaves a create it saw fail): kept,
    // and said so, unless the user asks for the replacement.
    let (code, out) = finish(&env, &["taint", "sleepy_object.lost"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = finish(&env, &["plan", "--detailed-exitcode"]);
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(code, 0, "{out}");
    assert!(
        flat.contains("sleepy_object.lost is tainted, and kept rather than replaced by another"),
        "{out}"
    );
    let (code, out) = finish(&env, &["plan", "-replace=sleepy_object.lost"]);
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(code, 0, "{out}");
    assert!(
        flat.contains("is replaced by a new one; the old one stays: a purchase is final"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&env.dir);
}

#[test]
fn a_failure_stops_its_dependents_and_nothing_else() {
    let env = setup("failure");
    let config = r#"
resource "sleepy_object" "root" { input = "fail-quota" }
resource "sleepy_object" "child" { input = sleepy_object.root.output }
resource "sleepy_object" "grandchild" { input = sleepy_object.child.output }
resource "sleepy_object" "independent" { input = "fine" }
resource "sleepy_object" "also" { input = "${sleepy_object.independent.output}-too" }
"#;
    std::fs::write(env.dir.join("main.tf"), config).expect("config");
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("sleepy_object.root failed"), "{out}");
    assert!(out.contains("quota exceeded"), "{out}");
    assert!(
        out.contains("2 added, 0 changed, 0 destroyed; 1 failed, 2 skipped"),
        "{out}"
    );
    assert!(out.contains("skipped: sleepy_object.child"), "{out}");
    assert!(out.contains("skipped: sleepy_object.grandchild"), "{out}");
    let (_, addrs) = state_ids(&env);
    assert_eq!(addrs, ["sleepy_object.also", "sleepy_object.independent"]);
    check_converged(&env, "after a failure");
    // Fixed, the next apply creates exactly what is missing.
    std::fs::write(env.dir.join("main.tf"), config.replace("fail-quota", "ok")).expect("config");
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("3 added, 0 changed, 0 destroyed"), "{out}");
    check_converged(&env, "after the fix");
    // A replacement whose create fails after its delete: the summary says
    // what was destroyed.
    let replaced = config.replace("fail-quota", "ok").replace(
        r#"resource "sleepy_object" "independent" { input = "fine" }"#,
        "resource \"sleepy_object\" \"independent\" {\n  input = \"fail-again\"\n  triggers_replace = 2\n}",
    );
    std::fs::write(env.dir.join("main.tf"), replaced).expect("config");
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("0 added, 0 changed, 1 destroyed; 1 failed, 1 skipped"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&env.dir);
}

#[test]
fn parallelism_bounds_the_calls_in_flight() {
    let env = setup("parallelism");
    let config: String = (0..48)
        .map(|i| format!("resource \"sleepy_object\" \"p{i}\" {{\n  input = \"{i}\"\n}}\n"))
        .collect();
    std::fs::write(env.dir.join("main.tf"), config).expect("config");
    let started = std::time::Instant::now();
    let out = child(&env, &["apply", "--auto-approve", "--parallelism", "4"], 60)
        .output()
        .expect("child");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let max: usize = std::fs::read_to_string(env.cloud.join("max_in_flight"))
        .expect("the driver recorded its calls")
        .parse()
        .expect("a number");
    assert_eq!(
        max, 4,
        "at most --parallelism creates at once, and that many"
    );
    // 48 creates of 2 × 60 ms each, 4 at a time: at least 12 rounds.
    assert!(took >= Duration::from_millis(12 * 120), "{took:?}");
    let _ = std::fs::remove_dir_all(&env.dir);
}

/// Complexity, not time: an apply must not rewrite the state per
/// resource (Terraform does, and its applies grow quadratic), and a
/// refresh must not read per resource.
#[test]
fn an_apply_writes_the_state_twice_and_a_refresh_reads_once_per_type() {
    let env = setup("writes");
    std::fs::write(env.dir.join("main.tf"), config(48, "g1")).expect("config");
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.dir.join("terraform.tfstate")).expect("state"),
    )
    .expect("state JSON");
    // Once before the first create (the lineage must be on disk), once at
    // the end; each of the 48 results went to the journal instead.
    assert_eq!(state["serial"], 2, "{state}");
    assert!(!env.dir.join("terraform.tfstate.journal").exists());
    let _ = std::fs::remove_file(env.cloud.join("ops.log"));
    let (code, out) = finish(&env, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");
    let log = std::fs::read_to_string(env.cloud.join("ops.log")).expect("the driver logged");
    let reads: Vec<&str> = log.lines().filter(|l| l.starts_with("read ")).collect();
    assert_eq!(reads, ["read 48"], "{log}");
    let _ = std::fs::remove_dir_all(&env.dir);
}

/// Objects made outside are tagged with the state's lineage, so the
/// state is on disk before the first of them is made, even when objects
/// kept in the state alone came first; an apply that makes nothing outside
/// writes its state once, at the end, and (as Terraform's first apply) no
/// backup of a state that was not there.
#[test]
fn the_lineage_is_on_disk_before_the_first_object_outside() {
    let env = setup("lineage-first");
    std::fs::write(
        env.dir.join("main.tf"),
        "resource \"terraform_data\" \"t\" {\n  count = 3\n  input = \"t${count.index}\"\n}\n",
    )
    .expect("config");
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let state = |env: &Env| -> serde_json::Value {
        let text = std::fs::read_to_string(env.dir.join("terraform.tfstate")).expect("state");
        serde_json::from_str(&text).expect("state JSON")
    };
    assert_eq!(state(&env)["serial"], 1, "written once");
    assert!(!env.dir.join("terraform.tfstate.backup").exists());

    let env = setup("lineage-first-outside");
    std::fs::write(
        env.dir.join("main.tf"),
        "resource \"terraform_data\" \"t\" {\n  count = 3\n  input = \"t${count.index}\"\n}\n\
         resource \"sleepy_object\" \"s\" {\n  input = terraform_data.t[2].output\n}\n",
    )
    .expect("config");
    let mut c = child(&env, &["apply", "--auto-approve"], 1500)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("child");
    // Killed once the object is in the cloud, before its create returns.
    let made = std::time::Instant::now();
    while cloud(&env.cloud).is_empty() {
        assert!(made.elapsed() < Duration::from_secs(60), "never created");
        std::thread::sleep(Duration::from_millis(10));
    }
    c.kill().expect("kill -9");
    let _ = c.wait();
    let objects = cloud(&env.cloud);
    let stored = state(&env);
    assert_eq!(
        objects[0].1["lineage"], stored["lineage"],
        "the object's lineage is the stored state's"
    );
    // The objects made before it are in the state or the journal beside it.
    let loaded = strata_state::Store::local(env.dir.join("terraform.tfstate"))
        .load()
        .expect("the state loads after the kill");
    let kept: Vec<String> = loaded.state.resources[0]
        .instances
        .iter()
        .map(|i| i.attributes.json().expect("attributes")["input"]["value"].to_string())
        .collect();
    assert_eq!(kept, ["\"t0\"", "\"t1\"", "\"t2\""], "{stored}");
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    // Recovery found the object by its lineage: adopted, not made twice.
    let objects = cloud(&env.cloud);
    assert_eq!(objects.len(), 1, "{objects:?}");
    let (_, addrs) = state_ids(&env);
    assert!(addrs.contains(&"sleepy_object.s".to_string()), "{addrs:?}");
    assert_eq!(objects[0].1["lineage"], state(&env)["lineage"]);
    let _ = std::fs::remove_dir_all(&env.dir);
}

/// `strata drift` in its three renderings, against a "cloud" whose
/// objects are edited and deleted by hand.
#[test]
fn drift_reports_objects_changed_outside_strata() {
    let env = setup("drift-report");
    std::fs::write(env.dir.join("main.tf"), config(3, "g1")).expect("config");
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = finish(&env, &["drift"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("No drift. The real infrastructure matches the state."),
        "{out}"
    );
    let mut ids = BTreeMap::new();
    for (id, body) in cloud(&env.cloud) {
        ids.insert(body["address"].as_str().unwrap_or_default().to_string(), id);
    }
    let edited = env.cloud.join(format!("{}.obj", ids["sleepy_object.o1"]));
    let text = std::fs::read_to_string(&edited).expect("object");
    std::fs::write(&edited, text.replace("\"g1-1\"", "\"edited\"")).expect("edit by hand");
    std::fs::remove_file(env.cloud.join(format!("{}.obj", ids["sleepy_object.o2"])))
        .expect("delete by hand");
    let state = std::fs::read(env.dir.join("terraform.tfstate")).expect("state");
    // Ids are made at random: the snapshots name them by address.
    let stable = |out: String| {
        ids.iter().fold(strata_output(&out), |o, (addr, id)| {
            o.replace(id.as_str(), &format!("<id of {addr}>"))
        })
    };
    let (code, out) = finish(&env, &["drift"]);
    assert_eq!(code, 2, "{out}");
    insta::assert_snapshot!("drift_human", stable(out));
    let (code, out) = finish(&env, &["drift", "--format", "markdown"]);
    assert_eq!(code, 2, "{out}");
    insta::assert_snapshot!("drift_markdown", stable(out));
    let (code, out) = finish(&env, &["drift", "--format", "json"]);
    assert_eq!(code, 2, "{out}");
    let report: serde_json::Value = serde_json::from_str(&strata_output(&out)).expect("JSON");
    assert_eq!(
        report["drift"][0]["address"], "sleepy_object.o1",
        "{report}"
    );
    assert_eq!(report["drift"][0]["action"], "update");
    let paths: Vec<&str> = report["drift"][0]["changed_attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["path"].as_str())
        .collect();
    assert_eq!(paths, ["input", "output"], "{report}");
    assert_eq!(
        report["drift"][0]["changed_attributes"][0]["after"],
        "edited"
    );
    assert_eq!(report["drift"][1]["address"], "sleepy_object.o2");
    assert_eq!(report["drift"][1]["action"], "delete");
    assert_eq!(
        report["resource_drift"][1]["change"]["actions"][0],
        "delete"
    );
    let (code, out) = finish(&env, &["drift", "--ignore", "sleepy_object.o?"]);
    assert_eq!(code, 0, "everything ignored:\n{out}");
    let (code, out) = finish(&env, &["drift", "--ignore", "[", "--format", "json"]);
    assert_eq!(code, 1, "a bad pattern is an error:\n{out}");
    assert!(out.contains("Invalid --ignore pattern"), "{out}");
    assert_eq!(
        std::fs::read(env.dir.join("terraform.tfstate")).expect("state"),
        state,
        "drift never writes the state"
    );
    let _ = std::fs::remove_dir_all(&env.dir);
}

#[test]
fn an_object_deleted_outside_strata_is_reported_and_recreated() {
    let env = setup("drift");
    std::fs::write(env.dir.join("main.tf"), config(3, "g1")).expect("config");
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let (ids, _) = state_ids(&env);
    let gone = ids.iter().next().expect("an object").clone();
    std::fs::remove_file(env.cloud.join(format!("{gone}.obj"))).expect("delete out of band");
    let (code, out) = finish(&env, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("Note: Objects have changed outside of strata"),
        "{out}"
    );
    assert!(out.contains("has been deleted"), "{out}");
    assert!(
        out.contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
    let (code, out) = finish(&env, &["plan", "--format", "json"]);
    assert_eq!(code, 0);
    let json = out.find('{').map(|i| &out[i..]).unwrap_or("");
    let plan: serde_json::Value =
        serde_json::from_str(json.lines().next().unwrap_or("")).expect("plan JSON");
    assert_eq!(
        plan["resource_drift"][0]["change"]["actions"][0], "delete",
        "{plan}"
    );
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    check_converged(&env, "after drift");
    assert!(
        !state_ids(&env).0.contains(&gone),
        "the vanished object left the state"
    );
    let _ = std::fs::remove_dir_all(&env.dir);
}

#[test]
fn an_import_block_adopts_an_existing_object() {
    let env = setup("import");
    // An object made elsewhere (another tool, another state).
    std::fs::write(env.dir.join("main.tf"), config(1, "legacy")).expect("config");
    let other = env.dir.join("other");
    std::fs::create_dir_all(&other).expect("dir");
    std::fs::copy(env.dir.join("main.tf"), other.join("main.tf")).expect("copy");
    let elsewhere = Env {
        dir: other,
        cloud: env.cloud.clone(),
    };
    assert_eq!(finish(&elsewhere, &["apply", "--auto-approve"]).0, 0);
    let (ids, _) = state_ids(&elsewhere);
    let id = ids.into_iter().next().expect("made");
    let with_import = |n: usize, to: &str, id: &str| {
        let text = format!(
            "{}\nimport {{\n  to = {to}\n  id = \"{id}\"\n}}\n",
            config(n, "legacy")
        );
        std::fs::write(env.dir.join("main.tf"), text).expect("config");
    };
    with_import(1, "sleepy_object.o0", &id);
    let (code, out) = finish(&env, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("# sleepy_object.o0 will be imported"), "{out}");
    assert!(
        out.contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
    let (code, out) = finish(&env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Resources: 1 imported, 0 added"), "{out}");
    assert_eq!(
        state_ids(&env).0.into_iter().collect::<Vec<_>>(),
        std::slice::from_ref(&id)
    );
    // Imported: the block has done its work and the plan is empty.
    assert_eq!(finish(&env, &["plan", "--detailed-exitcode"]).0, 0);
    // An id nothing has is an error naming it.
    with_import(2, "sleepy_object.o1", "nope");
    let (code, out) = finish(&env, &["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Cannot import non-existent remote object"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&env.dir);
}

#[test]
fn operations_follow_dependencies_including_module_depends_on() {
    let env = setup("order");
    std::fs::create_dir_all(env.dir.join("modules/m")).expect("dir");
    std::fs::write(
        env.dir.join("main.tf"),
        r#"
resource "sleepy_object" "first" { input = "1" }
module "m" {
  source     = "./modules/m"
  depends_on = [sleepy_object.first]
}
resource "sleepy_object" "after" {
  input      = "2"
  depends_on = [module.m]
}
resource "sleepy_object" "free" { input = "3" }
"#,
    )
    .expect("config");
    std::fs::write(
        env.dir.join("modules/m/main.tf"),
        "resource \"sleepy_object\" \"inner\" { input = \"4\" }\n",
    )
    .expect("module");
    let position = |event: &str, addr: &str| -> usize {
        let log = std::fs::read_to_string(env.cloud.join("ops.log")).unwrap_or_default();
        log.lines()
            .position(|l| l == format!("{event} {addr}"))
            .unwrap_or_else(|| panic!("no {event} {addr} in:\n{log}"))
    };
    let (code, out) = child(&env, &["apply", "--auto-approve"], 30)
        .output()
        .map(|o| {
            (
                o.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        })
        .expect("apply");
    assert_eq!(code, 0, "{out}");
    let inner = "module.m.sleepy_object.inner";
    assert!(position("end-create", "sleepy_object.first") < position("start-create", inner));
    assert!(position("end-create", inner) < position("start-create", "sleepy_object.after"));
    std::fs::remove_file(env.cloud.join("ops.log")).expect("reset log");
    let (code, out) = finish(&env, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    // Destroy runs the other way round.
    assert!(position("end-delete", "sleepy_object.after") < position("start-delete", inner));
    assert!(position("end-delete", inner) < position("start-delete", "sleepy_object.first"));
    let _ = std::fs::remove_dir_all(&env.dir);
}

/// Every rendering of a configuration holding secrets, grepped for them:
/// plans (human, JSON, markdown, saved and shown), apply and destroy
/// output, drift in three formats (the secret changed outside strata),
/// `show`, `state list/show`, `output` and an error about the secret
/// itself. Only `output NAME` (asked for by name, as in
/// Terraform) and the state document itself carry it. State, its backup
/// and the journal are private to their owner.
#[test]
fn secrets_never_show_in_any_rendering() {
    const OLD: &str = "hunter2-zq9-old";
    const NEW: &str = "hunter2-zq9-new";
    const CLOUD: &str = "hunter2-zq9-cloud";
    let env = setup("secrets");
    let config = |extra: &str| {
        format!(
            r#"
variable "token" {{
  type      = string
  default   = "{OLD}"
  sensitive = true
}}
resource "sleepy_object" "api" {{
  input = var.token
}}
resource "sleepy_object" "header" {{
  input = "Bearer ${{var.token}}"
}}
output "token" {{
  value     = sleepy_object.api.output
  sensitive = true
}}
{extra}
"#
        )
    };
    std::fs::write(env.dir.join("main.tf"), config("")).expect("config");
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut run = |what: &str, args: &[&str], ok: &[i32]| -> String {
        let (code, out) = finish(&env, args);
        assert!(ok.contains(&code), "{what}: exit {code}\n{out}");
        seen.push((what.to_string(), out.clone()));
        out
    };
    run("apply", &["apply", "--auto-approve"], &[0]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in ["terraform.tfstate", "terraform.tfstate.backup"] {
            let mode = std::fs::metadata(env.dir.join(f))
                .expect(f)
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{f} is private");
        }
    }
    let new = format!("token={NEW}");
    for format in ["human", "json", "markdown"] {
        run(
            &format!("plan {format}"),
            &["plan", "--var", &new, "--format", format],
            &[0],
        );
    }
    run(
        "plan --out",
        &["plan", "--var", &new, "--out", "p.plan"],
        &[0],
    );
    run("show plan", &["show", "p.plan"], &[0]);
    run("show plan --json", &["show", "--json", "p.plan"], &[0]);
    run("show", &["show"], &[0]);
    run("state list", &["state", "list"], &[0]);
    run("state show", &["state", "show", "sleepy_object.api"], &[0]);
    run(
        "state show",
        &["state", "show", "sleepy_object.header"],
        &[0],
    );
    run("output", &["output"], &[0]);
    let by_name = run("output token", &["output", "token"], &[0]);
    assert!(
        by_name.contains(OLD),
        "an output asked for by name is shown"
    );
    // The secret changed in the "cloud" behind strata's back.
    for (id, _) in cloud(&env.cloud) {
        let path = env.cloud.join(format!("{id}.obj"));
        let text = std::fs::read_to_string(&path).expect("object");
        std::fs::write(&path, text.replace(OLD, CLOUD)).expect("edit by hand");
    }
    for format in ["human", "json", "markdown"] {
        run(
            &format!("drift {format}"),
            &["drift", "--format", format],
            &[2],
        );
    }
    run(
        "apply with a new secret",
        &["apply", "--auto-approve", "--var", &new],
        &[0],
    );
    // An error about the secret itself.
    std::fs::write(
        env.dir.join("main.tf"),
        config("resource \"sleepy_object\" \"n\" { input = tonumber(var.token) }"),
    )
    .expect("config");
    run("plan error", &["plan", "--var", &new], &[1]);
    std::fs::write(env.dir.join("main.tf"), config("")).expect("config");
    run(
        "destroy",
        &["destroy", "--auto-approve", "--var", &new],
        &[0],
    );
    for (what, out) in &seen {
        if what == "output token" {
            continue;
        }
        for secret in [OLD, NEW, CLOUD] {
            assert!(
                !out.contains(secret),
                "{what} shows the secret {secret}:\n{out}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&env.dir);
}
