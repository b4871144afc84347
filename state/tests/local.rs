//! The local backend's promises: locking, whole writes, backups, private
//! files, the journal (including after kill -9), and refusing bad files
//! without touching them.

use std::path::PathBuf;
use strata_state::{
    Entry, InstanceKey, InstanceState, Mode, ModulePath, ResourceAddr, StateError, Store,
};

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-state-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn put(i: u64) -> Entry {
    Entry::Put {
        resource: ResourceAddr {
            module: ModulePath::root(),
            mode: Mode::Managed,
            type_name: "terraform_data".into(),
            name: "node".into(),
        },
        provider: "provider[\"terraform.io/builtin/terraform\"]".into(),
        instance: InstanceState {
            index_key: Some(InstanceKey::Int(i)),
            provider: None,
            status: None,
            deposed: None,
            schema_version: 0,
            attributes: serde_json::json!({ "id": format!("id-{i}"), "input": i }).into(),
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

#[test]
fn a_missing_state_is_new_and_unwritten() {
    let dir = scratch("new");
    let store = Store::local(dir.join("terraform.tfstate"));
    let loaded = store.load().expect("loads");
    assert!(!loaded.existed);
    assert_eq!(loaded.state.serial, 0);
    assert_eq!(loaded.state.lineage.len(), 36, "a fresh UUID lineage");
    assert!(
        !dir.join("terraform.tfstate").exists(),
        "loading writes nothing"
    );
}

#[test]
fn one_lock_at_a_time_and_the_holder_is_named() {
    let dir = scratch("lock");
    let store = Store::local(dir.join("terraform.tfstate"));
    let lock = store.lock("apply").expect("first lock");
    match store.lock("plan") {
        Err(StateError::Locked {
            id, who, operation, ..
        }) => {
            assert_eq!(id, lock.info.id);
            assert_eq!(operation, "apply");
            assert!(who.contains('@'), "user@host: {who}");
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    // A live holder's lock is the OS's: force-unlock cannot take it.
    assert!(matches!(
        store.force_unlock(&lock.info.id),
        Err(StateError::LockAlive { .. })
    ));
    assert!(matches!(
        store.force_unlock("wrong-id"),
        Err(StateError::LockMismatch { .. })
    ));
    drop(lock);
    assert!(
        !dir.join(".terraform.tfstate.lock.info").exists(),
        "the holder's info goes with its lock"
    );
    assert!(
        !dir.join("terraform.tfstate").exists(),
        "the empty file the lock made goes when nothing was written, as Terraform's does"
    );
    let again = store.lock("plan").expect("released on drop");
    drop(again);
    assert!(matches!(
        Store::local(dir.join("other.tfstate")).force_unlock("x"),
        Err(StateError::NotLocked)
    ));
}

/// The info a killed Terraform run leaves (its own fields, no PID): the
/// next run takes the lock over and names it; force-unlock clears it.
#[test]
fn info_left_by_a_dead_terraform_run_is_named_and_cleared() {
    let dir = scratch("deadinfo");
    let info = r#"{"ID":"d7f5c59b-362e-32f8-4a15-721ba967c844","Operation":"OperationTypeApply","Info":"","Who":"ci@runner","Version":"1.11.4","Created":"2026-12-03T15:33:46.137126848Z","Path":"terraform.tfstate"}"#;
    let info_path = dir.join(".terraform.tfstate.lock.info");
    std::fs::write(&info_path, info).expect("info");
    let store = Store::local(dir.join("terraform.tfstate"));
    assert!(matches!(
        store.force_unlock("another"),
        Err(StateError::LockMismatch { .. })
    ));
    store
        .force_unlock("d7f5c59b-362e-32f8-4a15-721ba967c844")
        .expect("a dead run's lock is cleared");
    assert!(!info_path.exists());
    std::fs::write(&info_path, info).expect("info again");
    let lock = store.lock("apply").expect("taken over");
    let old = lock.took_over.clone().expect("whose it was");
    assert_eq!(
        (old.who.as_str(), old.operation.as_str()),
        ("ci@runner", "OperationTypeApply")
    );
}

#[test]
fn persist_is_whole_private_and_keeps_a_backup() {
    let dir = scratch("persist");
    let store = Store::local(dir.join("terraform.tfstate"));
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("load").state;
    state.apply_entry(&put(0));
    store.persist(&lock, &mut state).expect("first write");
    let first = std::fs::read_to_string(dir.join("terraform.tfstate")).expect("written");
    assert_eq!(state.serial, 1);
    state.apply_entry(&put(1));
    store.persist(&lock, &mut state).expect("second write");
    assert_eq!(state.serial, 2);
    assert_eq!(
        std::fs::read_to_string(dir.join("terraform.tfstate.backup")).expect("backup"),
        first,
        "backup is the previous version"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for p in [
            dir.join("terraform.tfstate"),
            dir.join("terraform.tfstate.backup"),
        ] {
            let mode = std::fs::metadata(&p).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{} is private", p.display());
        }
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("list")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "no temp files left behind");
    let reloaded = store.load().expect("reload").state;
    assert_eq!(reloaded, state);
}

/// A state that would not read back is not written. The check reads it
/// back while the local backend writes its whole copy beside the state;
/// refused, the stored state and its backup are as they were and the
/// copy is gone.
#[test]
fn a_state_that_would_not_read_back_is_not_written() {
    let dir = scratch("unreadable");
    let store = Store::local(dir.join("terraform.tfstate"));
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("load").state;
    for i in 0..2 {
        state.apply_entry(&put(i));
        store.persist(&lock, &mut state).expect("a write");
    }
    let before = snapshot(&dir);
    // The same instance twice: what the reader refuses.
    let again = state.resources[0].instances[0].clone();
    state.resources[0].instances.push(again);
    let refused = store.persist(&lock, &mut state).expect_err("refused");
    assert!(
        matches!(refused, StateError::Unreadable { .. }),
        "{refused}"
    );
    assert_eq!(snapshot(&dir), before, "nothing written, nothing left");
}

#[test]
fn writing_without_the_lock_is_refused() {
    let dir = scratch("nolock");
    let path = dir.join("terraform.tfstate");
    let store = Store::local(&path);
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("load").state;
    // Someone removes the locked file: the lock is on a file nobody reads.
    std::fs::remove_file(&path).expect("removed under the run");
    assert!(matches!(
        store.persist(&lock, &mut state),
        Err(StateError::NotLocked)
    ));
    assert!(!path.exists());
}

/// A crash while the state file was being overwritten in place leaves it
/// torn; `.next` holds the whole version, and the next holder finishes
/// the write. A `.next` beside a whole state is stale and goes.
#[test]
fn a_write_torn_by_a_crash_is_finished_by_the_next_holder() {
    let dir = scratch("torn-write");
    let path = dir.join("terraform.tfstate");
    let store = Store::local(&path);
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("load").state;
    state.apply_entry(&put(0));
    store.persist(&lock, &mut state).expect("first write");
    let whole = std::fs::read_to_string(&path).expect("whole");
    drop(lock);
    assert!(
        !dir.join("terraform.tfstate.next").exists(),
        "no .next after a write"
    );

    std::fs::write(dir.join("terraform.tfstate.next"), &whole).expect("next");
    std::fs::write(&path, &whole[..whole.len() / 2]).expect("torn");
    // A reader without the lock sees the version the write was becoming.
    let read = store.load().expect("read through .next");
    assert_eq!(read.state.resources.len(), 1, "the torn write's version");
    let lock = store.lock("apply").expect("lock");
    assert_eq!(std::fs::read_to_string(&path).expect("finished"), whole);
    assert!(!dir.join("terraform.tfstate.next").exists());
    drop(lock);

    std::fs::write(dir.join("terraform.tfstate.next"), "{\"stale\": true}").expect("stale");
    let _lock = store.lock("apply").expect("lock");
    assert_eq!(std::fs::read_to_string(&path).expect("kept"), whole);
    assert!(!dir.join("terraform.tfstate.next").exists());
}

#[test]
fn the_journal_survives_a_run_that_never_finished() {
    let dir = scratch("journal");
    let store = Store::local(dir.join("terraform.tfstate"));
    {
        let lock = store.lock("apply").expect("lock");
        let mut j = store.journal(&lock).expect("journal");
        j.append(Entry::Intent {
            address: "terraform_data.node[0]".into(),
            action: "create".into(),
            provider: None,
            trace: None,
        })
        .expect("intent");
        j.append(put(0)).expect("put");
        j.append(Entry::Intent {
            address: "terraform_data.node[1]".into(),
            action: "create".into(),
            provider: Some("provider[\"terraform.io/builtin/terraform\"]".into()),
            trace: None,
        })
        .expect("intent");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("terraform.tfstate.journal"))
                .expect("journal")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "the journal is private");
        }
        // The run dies here: no put for [1], no persist.
    }
    let loaded = store.load().expect("replays");
    assert_eq!(
        loaded.state.addresses(),
        vec!["terraform_data.node[0]".to_string()]
    );
    assert_eq!(loaded.replay.applied, 3);
    assert_eq!(
        loaded.replay.pending,
        vec![Entry::Intent {
            address: "terraform_data.node[1]".into(),
            action: "create".into(),
            provider: Some("provider[\"terraform.io/builtin/terraform\"]".into()),
            trace: None,
        }],
        "the create that may have happened is reported for recovery"
    );
    // Folding the journal into the state retires it.
    let lock = store.lock("apply").expect("lock");
    let mut state = loaded.state;
    store.persist(&lock, &mut state).expect("persist");
    let again = store.load().expect("load");
    assert_eq!(again.replay.applied, 0, "journal retired");
    assert_eq!(
        again.state.addresses(),
        vec!["terraform_data.node[0]".to_string()]
    );
}

#[test]
fn unsynced_journal_lines_are_kept_in_order_with_the_synced_ones() {
    let dir = scratch("unsynced");
    let store = Store::local(dir.join("terraform.tfstate"));
    {
        let lock = store.lock("apply").expect("lock");
        let mut j = store.journal(&lock).expect("journal");
        j.append_unsynced(&[put(0)]).expect("unsynced");
        j.append_all(&[put(1)]).expect("synced");
        j.append_unsynced(&[put(2), put(3)]).expect("unsynced");
        // The run dies here. A kill loses no page the kernel holds: the
        // lines not yet synced are in the file all the same.
    }
    let text = std::fs::read_to_string(dir.join("terraform.tfstate.journal")).expect("journal");
    let seqs: Vec<u64> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("line")["seq"]
                .as_u64()
                .expect("seq")
        })
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4], "one sequence, synced or not");
    let loaded = store.load().expect("replays");
    assert_eq!(loaded.replay.applied, 4);
    assert_eq!(loaded.state.resources[0].instances.len(), 4);
}

#[test]
fn a_torn_last_journal_line_is_ignored_but_a_damaged_one_is_an_error() {
    let dir = scratch("torn");
    let store = Store::local(dir.join("terraform.tfstate"));
    {
        let lock = store.lock("apply").expect("lock");
        let mut j = store.journal(&lock).expect("journal");
        j.append(put(0)).expect("put");
    }
    let jpath = dir.join("terraform.tfstate.journal");
    let mut text = std::fs::read_to_string(&jpath).expect("journal");
    text.push_str("{\"seq\":2,\"kind\":\"put\",\"reso");
    std::fs::write(&jpath, &text).expect("tear");
    let loaded = store.load().expect("a torn tail is a crash mid-write");
    assert!(loaded.replay.torn_tail);
    assert_eq!(loaded.state.addresses().len(), 1);

    std::fs::write(&jpath, "garbage\n{\"seq\":1}\n").expect("damage");
    match store.load() {
        Err(StateError::Journal { line, .. }) => assert_eq!(line, 1),
        other => panic!("expected a journal error, got {other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(&jpath).expect("kept"),
        "garbage\n{\"seq\":1}\n",
        "nothing overwritten"
    );
}

#[test]
fn bad_state_files_are_refused_untouched() {
    let dir = scratch("bad");
    let path = dir.join("terraform.tfstate");
    let store = Store::local(&path);
    for (text, want) in [
        ("{\"version\": 4, \"serial\": 1, \"lin", "corrupt"),
        ("not json", "corrupt"),
        ("{\"serial\": 1}", "corrupt"),
        (
            "{\"version\": 99, \"serial\": 1, \"lineage\": \"x\"}",
            "too_new",
        ),
    ] {
        std::fs::write(&path, text).expect("write");
        let err = store.load().expect_err(text);
        let kind = match err {
            StateError::Corrupt { .. } => "corrupt",
            StateError::TooNew { .. } => "too_new",
            _ => "other",
        };
        assert_eq!(kind, want, "{text}");
        assert_eq!(
            std::fs::read_to_string(&path).expect("kept"),
            text,
            "untouched"
        );
    }
}

#[test]
fn addresses_parse_and_print_back() {
    use strata_state::Address;
    for a in [
        "terraform_data.a",
        "terraform_data.pool[3]",
        "terraform_data.pool[\"h100\"]",
        "data.aws_ami.gpu",
        "module.net.aws_subnet.a[0]",
        "module.net.module.inner.data.t.n[\"k\"]",
    ] {
        let parsed = Address::parse(a).unwrap_or_else(|| panic!("{a} parses"));
        assert_eq!(parsed.to_string(), a);
    }
    for bad in ["", "x", "a.b.c", "a.b[", "module.x", "a.b[nope]"] {
        assert!(Address::parse(bad).is_none(), "{bad:?} is not an address");
    }
}

#[test]
fn the_next_lock_holder_removes_temp_files_of_a_write_cut_short() {
    let dir = scratch("litter");
    let store = Store::local(dir.join("terraform.tfstate"));
    for name in [
        "terraform.tfstate.tmp-4242",
        "terraform.tfstate.backup.tmp-4242",
    ] {
        std::fs::write(dir.join(name), "half a state").expect("litter");
    }
    std::fs::write(dir.join("other.tfstate.tmp-1"), "not ours").expect("other");
    let _lock = store.lock("apply").expect("lock");
    assert!(!dir.join("terraform.tfstate.tmp-4242").exists());
    assert!(!dir.join("terraform.tfstate.backup.tmp-4242").exists());
    assert!(
        dir.join("other.tfstate.tmp-1").exists(),
        "another state's files stay"
    );
}

/// A state with `n` objects written at `path` through the store.
fn written(path: &std::path::Path, n: u64) -> String {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("dir");
    }
    let store = Store::local(path);
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("load").state;
    for i in 0..n {
        state.apply_entry(&put(i));
    }
    store.persist(&lock, &mut state).expect("persist");
    std::fs::read_to_string(path).expect("written")
}

fn layouts(dir: &std::path::Path) -> (strata_state::Layout, strata_state::Layout) {
    let at = |name: &str| strata_state::Layout {
        default: dir.join(name),
        dir: dir.join(format!("{name}.d")),
    };
    (at("strata.tfstate"), at("terraform.tfstate"))
}

/// Everything under `dir`, path and contents, to show nothing changed.
fn snapshot(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("list").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                out.push((p.display().to_string(), text));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn an_older_strata_state_moves_to_terraforms_names_with_its_workspaces() {
    let dir = scratch("adopt");
    let (old, new) = layouts(&dir);
    let default = written(&old.default, 2);
    let prod = written(&old.path("prod"), 3);
    // prod's last run died with a create in flight: its journal goes too.
    {
        let store = Store::local(old.path("prod"));
        let lock = store.lock("apply").expect("lock");
        store.load().expect("load");
        let mut j = store.journal(&lock).expect("journal");
        j.append(Entry::Intent {
            address: "terraform_data.node[9]".into(),
            action: "create".into(),
            provider: None,
            trace: None,
        })
        .expect("intent");
    }
    let moved = strata_state::adopt(&old, &new).expect("adopts");
    assert_eq!(moved.len(), 2, "{moved:?}");
    assert!(moved.iter().all(|m| m.how == strata_state::Adoption::Moved));
    assert_eq!(
        std::fs::read_to_string(&new.default).expect("default"),
        default
    );
    assert_eq!(
        std::fs::read_to_string(new.path("prod")).expect("prod"),
        prod
    );
    let pending = Store::local(new.path("prod")).load().expect("load").replay;
    assert_eq!(pending.pending.len(), 1, "the journal moved with its state");
    assert!(
        !old.default.exists() && !old.dir.exists(),
        "{:?}",
        snapshot(&dir)
    );
    assert!(
        strata_state::adopt(&old, &new).expect("again").is_empty(),
        "once"
    );
}

#[test]
fn two_states_with_objects_are_refused_and_nothing_moves() {
    let dir = scratch("adopt-two");
    let (old, new) = layouts(&dir);
    written(&old.default, 1);
    written(&old.path("prod"), 1);
    written(&new.path("prod"), 2);
    let before = snapshot(&dir);
    match strata_state::adopt(&old, &new) {
        Err(StateError::TwoStates {
            old_objects,
            new_objects,
            ..
        }) => assert_eq!((old_objects, new_objects), (1, 2)),
        other => panic!("expected TwoStates, got {other:?}"),
    }
    assert_eq!(snapshot(&dir), before, "not even the default moved");
}

#[test]
fn an_empty_older_state_is_set_aside_for_terraforms() {
    let dir = scratch("adopt-aside");
    let (old, new) = layouts(&dir);
    written(&old.default, 0);
    let theirs = written(&new.default, 2);
    let moved = strata_state::adopt(&old, &new).expect("adopts");
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].how, strata_state::Adoption::SetAside);
    assert_eq!(std::fs::read_to_string(&new.default).expect("kept"), theirs);
    assert!(dir.join("strata.tfstate.superseded").exists());
    assert!(!old.default.exists());
}

#[test]
fn a_state_an_older_strata_still_holds_is_not_moved() {
    let dir = scratch("adopt-held");
    let (old, new) = layouts(&dir);
    written(&old.default, 1);
    let lock_path = dir.join("strata.tfstate.lock");
    let held = std::fs::File::create(&lock_path).expect("lock file");
    held.try_lock().expect("an older strata's lock");
    let before = snapshot(&dir);
    assert!(matches!(
        strata_state::adopt(&old, &new),
        Err(StateError::Locked { .. })
    ));
    assert_eq!(snapshot(&dir), before);
    drop(held);
    assert_eq!(strata_state::adopt(&old, &new).expect("adopts").len(), 1);
    assert!(!lock_path.exists());
}

/// A state read early (before the lock, while a command loads its
/// configuration) is taken only when the text read under the lock is the
/// same: one written between the two reads is the one loaded.
#[test]
fn an_early_read_is_used_only_for_the_same_text() {
    let dir = scratch("early");
    let path = dir.join("terraform.tfstate");
    let store = Store::local(&path);
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("loads").state;
    // Large enough to be read early (a megabyte and more).
    for i in 0..8000 {
        state.apply_entry(&put(i));
    }
    store.persist(&lock, &mut state).expect("persist");
    drop(lock);
    assert!(std::fs::metadata(&path).expect("state").len() >= 1 << 20);

    let same = store
        .load_with(strata_state::Early::read(path.clone()))
        .expect("loads");
    assert_eq!(same.state, store.load().expect("loads").state);

    // What the early read saw, kept aside (so the test does not depend on
    // when its thread reads): the state another run then writes differs.
    let seen = dir.join("seen.tfstate");
    std::fs::copy(&path, &seen).expect("copy");
    let early = strata_state::Early::read(seen);
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("loads").state;
    state.apply_entry(&put(9000));
    store.persist(&lock, &mut state).expect("persist");
    let loaded = store.load_with(early).expect("loads");
    assert_eq!(loaded.state.serial, state.serial);
    assert_eq!(
        loaded.state, state,
        "the state written after the early read"
    );
}
