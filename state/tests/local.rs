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
            status: None,
            deposed: None,
            schema_version: 0,
            attributes: serde_json::json!({ "id": format!("id-{i}"), "input": i }).into(),
            private: None,
            sensitive_attributes: vec![],
            dependencies: vec![],
            create_before_destroy: false,
        },
    }
}

#[test]
fn a_missing_state_is_new_and_unwritten() {
    let dir = scratch("new");
    let store = Store::local(dir.join("strata.tfstate"));
    let loaded = store.load().expect("loads");
    assert!(!loaded.existed);
    assert_eq!(loaded.state.serial, 0);
    assert_eq!(loaded.state.lineage.len(), 36, "a fresh UUID lineage");
    assert!(
        !dir.join("strata.tfstate").exists(),
        "loading writes nothing"
    );
}

#[test]
fn one_lock_at_a_time_and_the_holder_is_named() {
    let dir = scratch("lock");
    let store = Store::local(dir.join("strata.tfstate"));
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
    drop(lock);
    let again = store.lock("plan").expect("released on drop");
    assert!(matches!(
        store.force_unlock("wrong-id"),
        Err(StateError::LockMismatch { .. })
    ));
    store
        .force_unlock(&again.info.id)
        .expect("force-unlock with the right ID");
    assert!(store.lock("apply").is_ok(), "free after force-unlock");
    assert!(matches!(
        Store::local(dir.join("other.tfstate")).force_unlock("x"),
        Err(StateError::NotLocked)
    ));
}

#[test]
fn persist_is_whole_private_and_keeps_a_backup() {
    let dir = scratch("persist");
    let store = Store::local(dir.join("strata.tfstate"));
    let lock = store.lock("apply").expect("lock");
    let mut state = store.load().expect("load").state;
    state.apply_entry(&put(0));
    store.persist(&lock, &mut state).expect("first write");
    let first = std::fs::read_to_string(dir.join("strata.tfstate")).expect("written");
    assert_eq!(state.serial, 1);
    state.apply_entry(&put(1));
    store.persist(&lock, &mut state).expect("second write");
    assert_eq!(state.serial, 2);
    assert_eq!(
        std::fs::read_to_string(dir.join("strata.tfstate.backup")).expect("backup"),
        first,
        "backup is the previous version"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for p in [
            dir.join("strata.tfstate"),
            dir.join("strata.tfstate.backup"),
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

#[test]
fn writing_without_the_lock_is_refused() {
    let dir = scratch("nolock");
    let store = Store::local(dir.join("strata.tfstate"));
    let lock = store.lock("apply").expect("lock");
    store
        .force_unlock(&lock.info.id)
        .expect("someone forces it");
    let mut state = store.load().expect("load").state;
    assert!(matches!(
        store.persist(&lock, &mut state),
        Err(StateError::NotLocked)
    ));
    assert!(!dir.join("strata.tfstate").exists());
}

#[test]
fn the_journal_survives_a_run_that_never_finished() {
    let dir = scratch("journal");
    let store = Store::local(dir.join("strata.tfstate"));
    {
        let lock = store.lock("apply").expect("lock");
        let mut j = store.journal(&lock).expect("journal");
        j.append(Entry::Intent {
            address: "terraform_data.node[0]".into(),
            action: "create".into(),
            provider: None,
        })
        .expect("intent");
        j.append(put(0)).expect("put");
        j.append(Entry::Intent {
            address: "terraform_data.node[1]".into(),
            action: "create".into(),
            provider: Some("provider[\"terraform.io/builtin/terraform\"]".into()),
        })
        .expect("intent");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("strata.tfstate.journal"))
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
fn a_torn_last_journal_line_is_ignored_but_a_damaged_one_is_an_error() {
    let dir = scratch("torn");
    let store = Store::local(dir.join("strata.tfstate"));
    {
        let lock = store.lock("apply").expect("lock");
        let mut j = store.journal(&lock).expect("journal");
        j.append(put(0)).expect("put");
    }
    let jpath = dir.join("strata.tfstate.journal");
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
    let path = dir.join("strata.tfstate");
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
    let store = Store::local(dir.join("strata.tfstate"));
    for name in ["strata.tfstate.tmp-4242", "strata.tfstate.backup.tmp-4242"] {
        std::fs::write(dir.join(name), "half a state").expect("litter");
    }
    std::fs::write(dir.join("other.tfstate.tmp-1"), "not ours").expect("other");
    let _lock = store.lock("apply").expect("lock");
    assert!(!dir.join("strata.tfstate.tmp-4242").exists());
    assert!(!dir.join("strata.tfstate.backup.tmp-4242").exists());
    assert!(
        dir.join("other.tfstate.tmp-1").exists(),
        "another state's files stay"
    );
}
