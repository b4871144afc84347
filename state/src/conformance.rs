//! The suite every backend passes, run by each backend's test against the
//! real store (a directory, moto's S3, a PostgreSQL server).
//!
//! `open(name)` returns a new handle on the store called `name`: two calls
//! with one name are two processes sharing a state; each check uses names
//! of its own, so it starts from nothing. The crash trials re-run the
//! calling test binary as a child that takes the lock and writes until it
//! is killed with SIGKILL at a random moment (seeded; the seed is printed,
//! and `STRATA_CONFORMANCE_SEED` repeats a run).
//!
//! Test code: it panics, saying what broke, at the first rule broken.

use crate::history::Observation;
use crate::journal::{Entry, Replay};
use crate::model::{InstanceState, Mode, ModulePath, ResourceAddr, State};
use crate::{LockKind, StateError, Store};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD: &str = "STRATA_CONFORMANCE_CHILD";

/// Runs every check. `test` is the name of the calling test function, so
/// that the crash trials can run it again as their child, with `env` set
/// so that it finds the parent's store; `prefix` keeps this run's stores
/// apart from earlier runs' (a database kept between runs).
pub fn run(test: &str, prefix: &str, env: &[(&str, String)], open: &dyn Fn(&str) -> Store) {
    if let Ok(name) = std::env::var(CHILD) {
        child(&open(&name));
    }
    let name = |check: &str| format!("{prefix}{check}");
    fresh_store_is_empty(&open(&name("empty")));
    writes_are_whole_and_the_serial_grows(&name("serial"), open);
    one_locker_wins(&name("race"), open);
    a_lock_taken_away_is_noticed(&name("taken"), open);
    another_lineage_is_refused(&name("lineage"), open);
    the_serial_never_goes_back(&name("back"), open);
    a_lost_race_is_detected(&name("cas"), open);
    the_journal_is_replayed_once(&name("journal"), open);
    a_checkpoint_keeps_the_creates_in_flight(&name("checkpoint"), open);
    the_history_is_kept_in_order_and_goes_with_the_workspace(&name("history"), open);
    let trials = std::env::var("STRATA_CONFORMANCE_TRIALS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(8);
    crash_trials(test, env, &name("crash"), open, trials);
}

fn resource(name: &str) -> ResourceAddr {
    ResourceAddr {
        module: ModulePath::root(),
        mode: Mode::Managed,
        type_name: "terraform_data".into(),
        name: name.into(),
    }
}

/// An instance whose attributes are `size` bytes, so that writing many
/// takes long enough for a kill to land in the middle.
fn put(name: &str, size: usize) -> Entry {
    let filler = "x".repeat(size);
    Entry::Put {
        resource: resource(name),
        provider: "provider[\"terraform.io/builtin/terraform\"]".into(),
        instance: InstanceState {
            index_key: None,
            provider: None,
            deposed: None,
            status: None,
            schema_version: 0,
            attributes: crate::Attributes::from_json(&serde_json::json!({
                "id": name,
                "input": filler,
            })),
            private: None,
            identity_schema_version: None,
            identity: None,
            sensitive_attributes: vec![],
            dependencies: vec![],
            create_before_destroy: false,
            skip_destroy: false,
        },
    }
}

fn names(state: &State) -> BTreeSet<String> {
    state.resources.iter().map(|r| r.id.name.clone()).collect()
}

fn with_resources(state: &mut State, names: &[&str]) {
    state.apply_all(&names.iter().map(|n| put(n, 16)).collect::<Vec<_>>());
}

fn fresh_store_is_empty(store: &Store) {
    let loaded = store.load().expect("a store never written loads");
    assert!(!loaded.existed, "a new store says it has a state");
    assert_eq!(loaded.state.serial, 0);
    assert!(loaded.state.resources.is_empty());
    assert_eq!(loaded.replay.applied, 0);
}

fn writes_are_whole_and_the_serial_grows(name: &str, open: &dyn Fn(&str) -> Store) {
    let store = open(name);
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("load").state;
    let lineage = state.lineage.clone();
    for (i, r) in ["a", "b", "c"].iter().enumerate() {
        with_resources(&mut state, &[r]);
        store.persist(&lock, &mut state).expect("persist");
        // Read back through another handle, as another process would.
        let back = open(name).load().expect("load after write");
        assert!(back.existed);
        assert_eq!(back.state.serial, i as u64 + 1, "serial after write {i}");
        assert_eq!(back.state.lineage, lineage);
        assert_eq!(
            back.state.resources, state.resources,
            "contents after write {i}"
        );
        assert_eq!(back.replay.applied, 0, "a write leaves no journal behind");
    }
}

fn one_locker_wins(name: &str, open: &dyn Fn(&str) -> Store) {
    let stores: Vec<Store> = (0..8).map(|_| open(name)).collect();
    let barrier = std::sync::Barrier::new(stores.len());
    let results: Vec<Result<crate::Lock, StateError>> = std::thread::scope(|s| {
        let handles: Vec<_> = stores
            .iter()
            .map(|store| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    store.lock("apply")
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a locker panicked"))
            .collect()
    });
    let winners: Vec<&crate::Lock> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(
        winners.len(),
        1,
        "concurrent lockers: {} won",
        winners.len()
    );
    let id = winners[0].info.id.clone();
    for r in &results {
        match r {
            Ok(_) => {}
            Err(StateError::Locked { id: held, .. }) => {
                assert_eq!(*held, id, "a refused locker names the holder")
            }
            Err(e) => panic!("a refused locker got {e} rather than `locked`"),
        }
    }
    drop(results);
    stores[1]
        .lock("apply")
        .expect("the lock is free once its holder lets go");
}

fn a_lock_taken_away_is_noticed(name: &str, open: &dyn Fn(&str) -> Store) {
    let store = open(name);
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("load").state;
    store.persist(&lock, &mut state).expect("persist");
    let other = open(name);
    match other.force_unlock("not-the-id") {
        Err(StateError::LockMismatch { held, .. }) => assert_eq!(held, lock.info.id),
        other => panic!("force-unlock with a wrong ID gave {other:?}"),
    }
    if store.lock_kind() == LockKind::Process {
        // The OS's lock: a live holder keeps it, and keeps writing.
        match other.force_unlock(&lock.info.id) {
            Err(StateError::LockAlive { id, .. }) => assert_eq!(id, lock.info.id),
            other => panic!("force-unlock of a live process's lock gave {other:?}"),
        }
        assert!(other.lock("apply").is_err(), "a live lock was taken");
        with_resources(&mut state, &["late"]);
        store
            .persist(&lock, &mut state)
            .expect("the holder still writes");
        drop(lock);
        assert!(matches!(
            open(name).force_unlock("any"),
            Err(StateError::NotLocked)
        ));
        return;
    }
    other.force_unlock(&lock.info.id).expect("force-unlock");
    let theirs = other.lock("apply").expect("the lock after force-unlock");
    let before = other.load().expect("load").state;
    with_resources(&mut state, &["late"]);
    assert!(
        store.persist(&lock, &mut state).is_err(),
        "a run whose lock was taken away still wrote"
    );
    assert!(
        store.journal(&lock).is_err(),
        "a run whose lock was taken away can still journal"
    );
    let after = open(name).load().expect("load").state;
    assert_eq!(after.serial, before.serial);
    drop(theirs);
    assert!(matches!(
        open(name).force_unlock("any"),
        Err(StateError::NotLocked)
    ));
}

fn another_lineage_is_refused(name: &str, open: &dyn Fn(&str) -> Store) {
    let store = open(name);
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("load").state;
    with_resources(&mut state, &["kept"]);
    store.persist(&lock, &mut state).expect("persist");
    let mut stranger = State::new();
    stranger.serial = 40;
    with_resources(&mut stranger, &["stranger"]);
    assert!(matches!(
        store.persist(&lock, &mut stranger.clone()),
        Err(StateError::LineageMismatch { .. })
    ));
    assert!(matches!(
        store.push(&lock, stranger.clone(), false),
        Err(StateError::LineageMismatch { .. })
    ));
    let kept = open(name).load().expect("load").state;
    assert_eq!(
        kept.lineage, state.lineage,
        "a refused write changed the state"
    );
    assert_eq!(names(&kept), BTreeSet::from(["kept".to_string()]));
    let pushed = store
        .push(&lock, stranger.clone(), true)
        .expect("push --force");
    let now = open(name).load().expect("load").state;
    assert_eq!(now.lineage, stranger.lineage);
    assert_eq!(now.serial, pushed.serial);
    assert_eq!(pushed.serial, 40, "a newer pushed serial is kept");
}

fn the_serial_never_goes_back(name: &str, open: &dyn Fn(&str) -> Store) {
    let store = open(name);
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("load").state;
    let old = state.clone();
    for _ in 0..3 {
        store.persist(&lock, &mut state).expect("persist");
    }
    assert!(matches!(
        store.push(&lock, old.clone(), false),
        Err(StateError::SerialBehind {
            stored: 3,
            given: 0,
            ..
        })
    ));
    let mut behind = old.clone();
    assert!(matches!(
        store.persist(&lock, &mut behind),
        Err(StateError::SerialBehind { .. })
    ));
    let pushed = store.push(&lock, old, true).expect("push --force");
    assert_eq!(
        pushed.serial, 4,
        "a forced older state still moves the serial on"
    );
    assert_eq!(open(name).load().expect("load").state.serial, 4);
}

fn a_lost_race_is_detected(name: &str, open: &dyn Fn(&str) -> Store) {
    let first = open(name);
    {
        let lock = first.lock("apply").expect("lock");
        let mut state = first.load().expect("load").state;
        first.persist(&lock, &mut state).expect("persist");
    }
    let (a, b) = (open(name), open(name));
    let mut sa = a.load().expect("load").state;
    let mut sb = b.load().expect("load").state;
    {
        let lock = a.lock("apply").expect("lock a");
        with_resources(&mut sa, &["a"]);
        a.persist(&lock, &mut sa).expect("a writes");
    }
    let lock = b.lock("apply").expect("lock b");
    with_resources(&mut sb, &["b"]);
    match b.persist(&lock, &mut sb) {
        Err(StateError::Conflict { .. }) => {}
        other => panic!("a write over a version it did not read gave {other:?}"),
    }
    let now = open(name).load().expect("load").state;
    assert_eq!(names(&now), BTreeSet::from(["a".to_string()]));
}

fn the_journal_is_replayed_once(name: &str, open: &dyn Fn(&str) -> Store) {
    {
        let store = open(name);
        let lock = store.lock("apply").expect("lock");
        let mut state = store.load().expect("load").state;
        store.persist(&lock, &mut state).expect("persist");
        let mut journal = store.journal(&lock).expect("journal");
        journal.append(put("one", 16)).expect("append");
        journal
            .append_all(&[put("two", 16), put("three", 16)])
            .expect("append");
        // Dropped without persisting, as a run that died.
    }
    let store = open(name);
    let lock = store.lock("apply").expect("lock");
    let loaded = store.load().expect("load");
    assert_eq!(loaded.replay.applied, 3, "journal lines replayed");
    let expected: BTreeSet<String> = ["one", "three", "two"].map(String::from).into();
    assert_eq!(names(&loaded.state), expected);
    let mut state = loaded.state;
    store.persist(&lock, &mut state).expect("persist");
    let again = open(name).load().expect("load");
    assert_eq!(
        again.replay.applied, 0,
        "a journal folded into the state is gone"
    );
    assert_eq!(names(&again.state), expected);
}

fn intent(name: &str) -> Entry {
    Entry::Intent {
        address: format!("terraform_data.{name}"),
        action: "create".into(),
        provider: None,
        trace: None,
    }
}

/// A state written mid-run holds what finished, and the create still in
/// flight stays a pending intent for whoever loads it next; lines written
/// after it extend the new state.
fn a_checkpoint_keeps_the_creates_in_flight(name: &str, open: &dyn Fn(&str) -> Store) {
    {
        let store = open(name);
        let lock = store.lock("apply").expect("lock");
        let mut state = store.load().expect("load").state;
        store.persist(&lock, &mut state).expect("persist");
        let written = state.serial;
        let mut journal = store.journal(&lock).expect("journal");
        let done = [intent("done"), put("done", 16), intent("flying")];
        journal.append_all(&done).expect("append");
        state.apply_all(&done);
        let flying = crate::open_intents(&done);
        assert_eq!(flying, [intent("flying")]);
        store
            .checkpoint(&lock, &mut journal, &mut state, &flying)
            .expect("checkpoint");
        assert_eq!(state.serial, written + 1);
        let mid = open(name).load().expect("a reader mid-run");
        assert_eq!(names(&mid.state), BTreeSet::from(["done".to_string()]));
        assert_eq!(mid.state.serial, written + 1, "the state itself written");
        assert_eq!(mid.replay.pending, [intent("flying")]);
        journal
            .append_all(&[intent("late"), put("late", 16)])
            .expect("append after the checkpoint");
        // Dropped without persisting, as a run that died.
    }
    let store = open(name);
    let lock = store.lock("apply").expect("lock");
    let loaded = store.load().expect("load");
    let expected: BTreeSet<String> = ["done", "late"].map(String::from).into();
    assert_eq!(names(&loaded.state), expected, "nothing lost or doubled");
    assert_eq!(
        loaded.replay.pending,
        [intent("flying")],
        "the create in flight is still looked for"
    );
    let mut state = loaded.state;
    store
        .persist(&lock, &mut state)
        .expect("the next run's write");
    assert_eq!(open(name).load().expect("load").replay, Replay::default());
}

/// A small seeded generator (an LCG): the same seed, the same trials.
pub fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s >> 33
    }
}

/// The child of a crash trial: locks, then journals one resource at a time
/// and writes the whole state every few, saying on stdout what is durable,
/// until it is killed.
/// The observation the crash child writes after resource `i`.
fn observation(i: usize) -> Observation {
    Observation {
        at: format!("2026-11-01T00:00:00.{i:06}Z"),
        pools: Vec::new(),
    }
}

/// When each observation in the history was made, in order; a torn
/// line fails.
fn at_times(store: &Store) -> Vec<String> {
    let history = store.history().expect("the history reads");
    assert_eq!(history.unreadable, 0, "a torn history line");
    history.observations.into_iter().map(|o| o.at).collect()
}

/// Observations read back in the order written; a workspace deleted
/// takes its history with it.
fn the_history_is_kept_in_order_and_goes_with_the_workspace(
    name: &str,
    open: &dyn Fn(&str) -> Store,
) {
    let store = open(name);
    assert!(store
        .history()
        .expect("empty history")
        .observations
        .is_empty());
    let lock = store.lock("drift").expect("lock");
    let mut state = store.load().expect("load").state;
    store.persist(&lock, &mut state).expect("a state to delete");
    for i in 0..3 {
        store.observe(&lock, &observation(i)).expect("observe");
    }
    let read = open(name).history().expect("history");
    let at: Vec<String> = read.observations.iter().map(|o| o.at.clone()).collect();
    let want: Vec<String> = (0..3).map(|i| observation(i).at).collect();
    assert_eq!(at, want, "history of {name}");
    store.delete_workspace(lock).expect("delete");
    assert!(
        open(name)
            .history()
            .expect("history")
            .observations
            .is_empty(),
        "a deleted workspace's history is gone with it"
    );
}

fn child(store: &Store) -> ! {
    let lock = match store.lock("apply") {
        Ok(l) => l,
        Err(e) => {
            println!("conformance: lock failed {e}");
            std::process::exit(3)
        }
    };
    println!("conformance: locked {}", lock.info.id);
    let mut state = store.load().expect("child load").state;
    let start = state.resources.len();
    let mut journal = store.journal(&lock).expect("child journal");
    for i in start..start + 10_000 {
        let entry = put(&format!("r{i:06}"), 4096);
        journal.append(entry.clone()).expect("child append");
        state.apply_entry(&entry);
        println!("conformance: durable {i}");
        if i % 5 == 4 {
            store.persist(&lock, &mut state).expect("child persist");
            journal = store.journal(&lock).expect("child journal");
            println!("conformance: written {}", state.serial);
            store
                .observe(&lock, &observation(i))
                .expect("child observe");
            println!("conformance: observed {i}");
        }
    }
    std::process::exit(0)
}

fn crash_trials(
    test: &str,
    env: &[(&str, String)],
    name: &str,
    open: &dyn Fn(&str) -> Store,
    trials: u32,
) {
    let seed: u64 = std::env::var("STRATA_CONFORMANCE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    eprintln!("conformance crash trials: {trials} (seed {seed}; STRATA_CONFORMANCE_SEED repeats)");
    let mut next = rng(seed);
    let exe = std::env::current_exe().expect("the test binary");
    for trial in 0..trials {
        let what = format!("crash trial {trial} (seed {seed})");
        let history_before = at_times(&open(name));
        let mut child = Command::new(&exe)
            .args([test, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, name)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the child starts");
        let stdout = child.stdout.take().expect("child stdout");
        // Kill after this many durable lines, then a little later still,
        // so the kill lands anywhere: mid-append, mid-write, between.
        let after = 1 + next() % 40;
        let delay = Duration::from_micros(next() % 20_000);
        let mut lines = BufReader::new(stdout).lines();
        let mut holder = None;
        let mut durable: Option<usize> = None;
        let mut observed: Vec<usize> = Vec::new();
        let mut count = 0;
        let started = Instant::now();
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            // The harness prints its own words before the test's first line.
            let Some(at) = line.find("conformance: ") else {
                continue;
            };
            let line = &line[at..];
            if let Some(id) = line.strip_prefix("conformance: locked ") {
                holder = Some(id.to_string());
            } else if let Some(n) = line.strip_prefix("conformance: durable ") {
                durable = n.parse().ok();
                count += 1;
                if count >= after || started.elapsed() > Duration::from_secs(20) {
                    break;
                }
            } else if let Some(n) = line.strip_prefix("conformance: observed ") {
                observed.extend(n.parse::<usize>().ok());
            } else if line.starts_with("conformance: lock failed") {
                panic!("{what}: the child could not lock: {line}");
            }
        }
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        // Whatever the child wrote after the last line read may or may
        // not be there; everything it said was durable must be.
        let store = open(name);
        let loaded = store
            .load()
            .unwrap_or_else(|e| panic!("{what}: the state does not load after the kill: {e}"));
        let have = names(&loaded.state);
        if let Some(d) = durable {
            for i in 0..=d {
                let r = format!("r{i:06}");
                assert!(have.contains(&r), "{what}: {r} was durable and is lost");
            }
        }
        // The history before the trial, then every line the child said
        // it wrote, in order (and perhaps one it wrote unsaid).
        let kept = at_times(&store);
        let said: Vec<String> = observed.iter().map(|i| observation(*i).at).collect();
        assert!(
            kept.starts_with(&history_before) && kept[history_before.len()..].starts_with(&said),
            "{what}: history {kept:?} lost or reordered what was there ({history_before:?}) or said written ({said:?})"
        );
        let expected: BTreeSet<String> = (0..have.len()).map(|i| format!("r{i:06}")).collect();
        assert_eq!(have, expected, "{what}: the state has gaps or strangers");
        let holder = holder.unwrap_or_else(|| panic!("{what}: the child never said it locked"));
        let lock = match store.lock("apply") {
            Ok(lock) => {
                let took = lock.took_over.as_ref().map(|i| i.id.clone());
                assert_eq!(
                    took.as_deref(),
                    Some(holder.as_str()),
                    "{what}: a lock left by a dead run was taken without saying whose"
                );
                lock
            }
            Err(StateError::Locked { id, .. }) => {
                assert_eq!(id, holder, "{what}: the lock names someone else");
                store.force_unlock(&id).expect("force-unlock");
                store.lock("apply").expect("the lock after force-unlock")
            }
            Err(e) => panic!("{what}: locking after the kill: {e}"),
        };
        let mut state = store.load().expect("load").state;
        store
            .persist(&lock, &mut state)
            .unwrap_or_else(|e| panic!("{what}: writing after recovery: {e}"));
        let after = open(name).load().expect("load");
        assert_eq!(
            names(&after.state),
            have,
            "{what}: recovery lost or added something"
        );
        assert_eq!(after.replay.applied, 0);
    }
}
