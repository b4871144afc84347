//! A store with encryption configured: the state, each journal line and
//! the drift history are sealed on disk, read back through the key (the
//! journal of a run that died replayed), and refused by a store with no
//! key as encrypted rather than damaged.

use std::path::{Path, PathBuf};
use strata_state::encryption::{Hash, KeyKind, KeyProvider, Method, Payload, Pbkdf2, Sealing};
use strata_state::history::Observation;
use strata_state::{Entry, StateError, Store};

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-sealed-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn sealing() -> Sealing {
    let mut p = Pbkdf2::new("correct-horse-battery-staple".into());
    p.iterations = 200_000;
    p.hash = Hash::Sha256;
    Sealing::new(
        Payload::State,
        vec![Method::AesGcm {
            addr: "method.aes_gcm.m".into(),
            keys: KeyProvider {
                addr: "key_provider.pbkdf2.k".into(),
                kind: KeyKind::Pbkdf2(p),
            },
            aad: Vec::new(),
        }],
    )
}

fn store(dir: &Path) -> Store {
    Store::local(dir.join("terraform.tfstate")).sealed(sealing())
}

/// What every file in `dir` holds, concatenated.
fn on_disk(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        all.push_str(&String::from_utf8_lossy(
            &std::fs::read(entry.path()).unwrap(),
        ));
    }
    all
}

const MARK: &str = "marker-only-inside";

#[test]
fn state_journal_and_history_are_sealed_and_read_back() {
    let dir = scratch("all");
    let s = store(&dir);
    let lock = s.lock("apply").unwrap();
    let mut state = s.load().unwrap().state;
    s.persist(&lock, &mut state).unwrap();
    let mut journal = s.journal(&lock).unwrap();
    journal
        .append(Entry::Intent {
            address: format!("terraform_data.{MARK}"),
            action: "create".into(),
            provider: None,
            trace: None,
        })
        .unwrap();
    s.observe(
        &lock,
        &Observation {
            at: format!("2026-12-05T00:00:00Z-{MARK}"),
            pools: Vec::new(),
        },
    )
    .unwrap();
    drop(lock);
    let disk = on_disk(&dir);
    assert!(!disk.contains(MARK), "{disk}");
    assert!(dir.join("terraform.tfstate.journal").exists());
    assert!(dir.join("terraform.tfstate.history").exists());
    // A new run (a new store and key derivation) reads all three.
    let again = store(&dir);
    let loaded = again.load().unwrap();
    assert_eq!(loaded.replay.pending.len(), 1, "{:?}", loaded.replay);
    assert!(
        matches!(&loaded.replay.pending[0], Entry::Intent { address, .. } if address.contains(MARK))
    );
    let history = again.history().unwrap();
    assert_eq!(history.observations.len(), 1);
    assert!(history.observations[0].at.ends_with(MARK));
    // Without the key: named as encrypted, not as damage.
    let plain = Store::local(dir.join("terraform.tfstate"));
    assert!(matches!(
        plain.load().unwrap_err(),
        StateError::Encrypted { .. }
    ));
}
