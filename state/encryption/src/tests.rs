//! The chain of methods as a run meets it: sealing, opening, rotation
//! through a fallback, plain text moved to encryption, wrong keys.

use super::*;

const PASS: &str = "correct-horse-battery-staple";

/// A quick key provider: the floor of iterations keeps tests fast.
fn provider(name: &str, passphrase: &str) -> KeyProvider {
    let mut p = Pbkdf2::new(passphrase.into());
    p.iterations = pbkdf2::MINIMUM_ITERATIONS;
    p.hash = Hash::Sha256;
    KeyProvider {
        addr: format!("key_provider.pbkdf2.{name}"),
        kind: KeyKind::Pbkdf2(p),
    }
}

fn aes(name: &str, keys: KeyProvider) -> Method {
    Method::AesGcm {
        addr: format!("method.aes_gcm.{name}"),
        keys,
        aad: Vec::new(),
    }
}

fn plain() -> Method {
    Method::Unencrypted {
        addr: "method.unencrypted.migrate".into(),
    }
}

const STATE: &str = r#"{"version":4,"terraform_version":"1.11.0","serial":7,"lineage":"abc","resources":[{"secret":"hunter2hunter2"}]}"#;

#[test]
fn a_sealed_state_keeps_serial_and_lineage_in_clear_and_nothing_else() {
    let s = Sealing::new(Payload::State, vec![aes("a", provider("k", PASS))]);
    let sealed = s.seal(STATE).unwrap();
    assert!(!sealed.contains("hunter2"), "{sealed}");
    let doc: serde_json::Value = serde_json::from_str(&sealed).unwrap();
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "serial",
            "lineage",
            "meta",
            "encrypted_data",
            "encryption_version"
        ]
    );
    assert_eq!(doc["serial"], 7);
    assert_eq!(doc["lineage"], "abc");
    assert_eq!(doc["encryption_version"], "v0");
    assert!(doc["meta"]["key_provider.pbkdf2.k"].is_string());
    assert_eq!(
        s.open(&sealed).unwrap(),
        (STATE.to_string(), Status::Current)
    );
    // A second run (a new Sealing) derives the key again from the metadata.
    let again = Sealing::new(Payload::State, vec![aes("a", provider("k", PASS))]);
    assert_eq!(again.open(&sealed).unwrap().0, STATE);
}

#[test]
fn a_wrong_passphrase_is_an_error_that_names_the_method() {
    let sealed = Sealing::new(Payload::State, vec![aes("a", provider("k", PASS))])
        .seal(STATE)
        .unwrap();
    let wrong = Sealing::new(
        Payload::State,
        vec![aes("a", provider("k", "another-long-passphrase"))],
    );
    let e = wrong.open(&sealed).unwrap_err().to_string();
    assert!(e.contains("could not be decrypted"), "{e}");
    assert!(e.contains("method.aes_gcm.a"), "{e}");
    assert!(e.contains("authentication failed"), "{e}");
}

#[test]
fn a_fallback_opens_what_the_old_key_sealed_and_writes_use_the_new() {
    let old = Sealing::new(Payload::State, vec![aes("old", provider("old", PASS))]);
    let sealed = old.seal(STATE).unwrap();
    let rotating = Sealing::new(
        Payload::State,
        vec![
            aes("new", provider("new", "a-brand-new-passphrase")),
            aes("old", provider("old", PASS)),
        ],
    );
    assert_eq!(
        rotating.open(&sealed).unwrap(),
        (STATE.to_string(), Status::Migrating)
    );
    let resealed = rotating.seal(STATE).unwrap();
    assert!(resealed.contains("key_provider.pbkdf2.new"));
    assert!(!resealed.contains("key_provider.pbkdf2.old"));
    assert!(old.open(&resealed).is_err());
    assert_eq!(rotating.open(&resealed).unwrap().1, Status::Current);
}

#[test]
fn plain_text_is_read_only_when_an_unencrypted_method_is_in_the_chain() {
    let strict = Sealing::new(Payload::State, vec![aes("a", provider("k", PASS))]);
    let e = strict.open(STATE).unwrap_err();
    assert!(matches!(e, EncryptionError::Plain { .. }), "{e}");
    let moving = Sealing::new(Payload::State, vec![aes("a", provider("k", PASS)), plain()]);
    assert_eq!(moving.open(STATE).unwrap().1, Status::Migrating);
    let off = Sealing::new(Payload::State, vec![plain()]);
    assert_eq!(off.seal(STATE).unwrap(), STATE);
    assert_eq!(off.open(STATE).unwrap().1, Status::Current);
    // Decrypting back out of encryption: unencrypted first, aes as fallback.
    let sealed = strict.seal(STATE).unwrap();
    let leaving = Sealing::new(Payload::State, vec![plain(), aes("a", provider("k", PASS))]);
    assert_eq!(
        leaving.open(&sealed).unwrap(),
        (STATE.to_string(), Status::Migrating)
    );
    assert_eq!(leaving.seal(STATE).unwrap(), STATE);
}

#[test]
fn a_spliced_or_damaged_document_is_refused() {
    let s = Sealing::new(Payload::State, vec![aes("a", provider("k", PASS))]);
    let sealed = s.seal(STATE).unwrap();
    let spliced = sealed.replace("\"serial\":7", "\"serial\":8");
    assert!(matches!(
        s.open(&spliced).unwrap_err(),
        EncryptionError::Damaged { .. }
    ));
    let future = sealed.replace("\"v0\"", "\"v9\"");
    assert!(matches!(
        s.open(&future).unwrap_err(),
        EncryptionError::Version { .. }
    ));
    let garbled = sealed.replace("\"encrypted_data\":\"", "\"encrypted_data\":\"!");
    assert!(matches!(
        s.open(&garbled).unwrap_err(),
        EncryptionError::Damaged { .. }
    ));
}

#[test]
fn a_plan_has_no_clear_fields_and_many_lines_cost_one_derivation() {
    let s = Sealing::new(Payload::Plan, vec![aes("a", provider("k", PASS))]);
    let sealed = s.seal("{\"plan\":1}").unwrap();
    assert!(sealed.starts_with("{\"meta\":"), "{sealed}");
    let start = std::time::Instant::now();
    for i in 0..50 {
        let line = s.seal(&format!("{{\"seq\":{i}}}")).unwrap();
        assert_eq!(s.open(&line).unwrap().0, format!("{{\"seq\":{i}}}"));
    }
    // Fifty derivations of 200 000 rounds would take seconds even optimised.
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
}
