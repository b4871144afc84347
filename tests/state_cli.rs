//! `strata state list|show|rm|mv`, `strata output` and `strata force-unlock`
//! on a state written through the state crate.

use std::path::{Path, PathBuf};
use std::process::Command;
use strata_state::{
    Entry, InstanceKey, InstanceState, Mode, ModulePath, OutputState, ResourceAddr, Store,
};

/// The state's lock, taken by this test process. The lock belongs to the
/// open file, and another test's child forked in the instant before its
/// exec still refers to the file this process just closed: a moment
/// later, that reference is gone.
fn lock_soon(store: &Store, operation: &str) -> strata_state::Lock {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match store.lock(operation) {
            Ok(lock) => return lock,
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => panic!("lock: {e:?}"),
        }
    }
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-state-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

fn put(name: &str, key: Option<InstanceKey>, input: &str) -> Entry {
    Entry::Put {
        resource: ResourceAddr {
            module: ModulePath::root(),
            mode: Mode::Managed,
            type_name: "terraform_data".into(),
            name: name.into(),
        },
        provider: "provider[\"terraform.io/builtin/terraform\"]".into(),
        instance: InstanceState {
            index_key: key,
            provider: None,
            status: None,
            deposed: None,
            schema_version: 0,
            // `input` and `output` are dynamic: state keeps their type beside the value.
            attributes: serde_json::json!({
                "id": format!("{name}-id"),
                "input": {"value": input, "type": "string"},
                "output": {"value": input, "type": "string"},
                "triggers_replace": null,
            })
            .into(),
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

/// A state with terraform_data.a, terraform_data.pool["h100"], ["a100"] and two outputs.
fn fixture(dir: &Path) -> PathBuf {
    let path = dir.join("terraform.tfstate");
    let store = Store::local(&path);
    let lock = lock_soon(&store, "test");
    let mut state = store.load().expect("load").state;
    for e in [
        put("a", None, "x"),
        put("pool", Some(InstanceKey::Str("h100".into())), "8"),
        put("pool", Some(InstanceKey::Str("a100".into())), "4"),
        Entry::Output {
            name: "cidr".into(),
            output: Some(OutputState {
                value: serde_json::json!("10.40.0.0/16"),
                ty: serde_json::json!("string"),
                sensitive: false,
            }),
        },
        Entry::Output {
            name: "token".into(),
            output: Some(OutputState {
                value: serde_json::json!("s3cr3t"),
                ty: serde_json::json!("string"),
                sensitive: true,
            }),
        },
    ] {
        state.apply_entry(&e);
    }
    store.persist(&lock, &mut state).expect("persist");
    path
}

fn strata(args: &[&str], state: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .arg("--state")
        .arg(state)
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn list_show_and_filters() {
    let dir = scratch("list");
    let state = fixture(&dir);
    let (code, out, _) = strata(&["state", "list"], &state);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "terraform_data.a\nterraform_data.pool[\"a100\"]\nterraform_data.pool[\"h100\"]\n"
    );
    let (_, out, _) = strata(&["state", "list", "terraform_data.pool"], &state);
    assert_eq!(out.lines().count(), 2);
    let (code, out, _) = strata(&["state", "show", "terraform_data.pool[\"h100\"]"], &state);
    assert_eq!(code, 0);
    insta::assert_snapshot!("state_show", out);
    let (code, _, err) = strata(&["state", "show", "terraform_data.nope"], &state);
    assert_eq!(code, 1);
    assert!(err.contains("No instance found"), "{err}");
}

#[test]
fn rm_and_mv_change_state_and_keep_a_backup() {
    let dir = scratch("surgery");
    let state = fixture(&dir);
    let (code, out, err) = strata(
        &["state", "mv", "terraform_data.a", "terraform_data.b"],
        &state,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Successfully moved 1 object(s)."));
    let (code, out, _) = strata(&["state", "rm", "terraform_data.pool[\"a100\"]"], &state);
    assert_eq!(code, 0);
    assert!(out.contains("Removed terraform_data.pool[\"a100\"]"));
    let (_, out, _) = strata(&["state", "list"], &state);
    // Listed in Terraform's order, not the file's.
    assert_eq!(out, "terraform_data.b\nterraform_data.pool[\"h100\"]\n");
    assert!(dir.join("terraform.tfstate.backup").exists());
    let (code, _, err) = strata(
        &[
            "state",
            "mv",
            "terraform_data.pool[\"h100\"]",
            "terraform_data.b",
        ],
        &state,
    );
    assert_eq!(code, 1, "moving onto an existing address is refused");
    assert!(err.contains("already"), "{err}");
    let (code, _, _) = strata(&["state", "rm", "terraform_data.nope"], &state);
    assert_eq!(code, 1);
}

#[test]
fn outputs_as_terraform_prints_them() {
    let dir = scratch("output");
    let state = fixture(&dir);
    let (_, out, _) = strata(&["output"], &state);
    assert_eq!(out, "cidr = \"10.40.0.0/16\"\ntoken = <sensitive>\n");
    let (_, out, _) = strata(&["output", "--json"], &state);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        v["cidr"],
        serde_json::json!({ "sensitive": false, "type": "string", "value": "10.40.0.0/16" })
    );
    assert_eq!(v["token"]["sensitive"], serde_json::json!(true));
    let (_, out, _) = strata(&["output", "token"], &state);
    assert_eq!(out, "\"s3cr3t\"\n");
    let (code, _, err) = strata(&["output", "nope"], &state);
    assert_eq!(code, 1);
    assert!(err.contains("not found"), "{err}");
}

#[test]
fn a_held_lock_names_its_holder_and_force_unlock_releases_it() {
    let dir = scratch("lock");
    let state = fixture(&dir);
    // A live run's lock: named, and not to be forced from it.
    let store = Store::local(&state);
    let lock = lock_soon(&store, "apply");
    let id = lock.info.id.clone();
    let (code, _, err) = strata(&["state", "rm", "terraform_data.a"], &state);
    assert_eq!(code, 1);
    assert!(err.contains("locked by") && err.contains(&id), "{err}");
    let (code, _, err) = strata(&["force-unlock", &id], &state);
    assert_eq!(code, 1, "a live run's lock was forced");
    assert!(err.contains("still running"), "{err}");
    drop(lock);
    // A run that died holding it leaves only its info: force-unlock
    // clears it, and the next command would have taken it over anyway.
    let info = dir.join(".terraform.tfstate.lock.info");
    std::fs::write(&info, r#"{"ID":"dead-run","Operation":"apply","Who":"ci@runner","Version":"0.1.0","Created":"2026-12-03T10:00:00Z","Path":"terraform.tfstate"}"#).expect("info");
    let (code, out, err) = strata(&["force-unlock", "dead-run"], &state);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("unlocked"));
    assert!(!info.exists());
    let (code, _, _) = strata(&["state", "rm", "terraform_data.a"], &state);
    assert_eq!(code, 0);
}

/// `output` where the state has none: Terraform's warning on stdout and
/// exit 0, where strata printed nothing; `-json` an empty object.
#[test]
fn output_of_a_state_without_outputs_warns_as_terraform_does() {
    let dir = scratch("no-outputs");
    let state = dir.join("terraform.tfstate");
    let (code, out, _) = strata(&["output"], &state);
    assert_eq!(code, 0);
    assert!(out.starts_with("\nWarning: No outputs found\n"), "{out:?}");
    let (code, out, _) = strata(&["output", "-json"], &state);
    assert_eq!((code, out.as_str()), (0, "{}\n"));
}
