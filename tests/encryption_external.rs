//! OpenTofu 1.10's `external` key provider and `external` encryption
//! method (issue 45): programs the configuration names make the key or do
//! the sealing, spoken to in OpenTofu's protocol (a header line, then
//! JSON; `keyprovider/external/protocol/*.schema.json` and
//! `method/external/protocol.go` in OpenTofu's source). The programs here
//! are small Python scripts written by the test; each logs its calls, so
//! the test sees what strata asked of them.

#[path = "common/run.rs"]
mod run;

use run::{ran, strata, Ran};
use std::path::{Path, PathBuf};

const SECRET: &str = "hunter2-the-secret-value";

/// A key provider whose key is SHA-256 of a fixed secret and a salt it
/// keeps in `external_data`; it logs "make" or "recover SALT".
const KEY_PROGRAM: &str = r#"
import base64, hashlib, json, os, sys
print(json.dumps({"magic": os.environ.get("MAGIC", "OpenTofu-External-Key-Provider"), "version": 1}), flush=True)
given = json.load(sys.stdin)
log = open(os.path.join(os.path.dirname(__file__), "keys.log"), "a")
def key(salt):
    return base64.b64encode(hashlib.sha256(b"program-secret" + salt.encode()).digest()).decode()
salt = os.urandom(8).hex()
out = {"keys": {"encryption_key": key(salt)}, "meta": {"external_data": {"salt": salt}}}
if given is None:
    log.write("make\n")
else:
    old = given["external_data"]["salt"]
    log.write("recover " + old + "\n")
    out["keys"]["decryption_key"] = key(old)
if os.environ.get("FAIL"):
    sys.stderr.write("the vault is sealed\n")
    sys.exit(3)
print(json.dumps(out))
"#;

/// A method that XORs the payload with the key (repeated) and reverses
/// it; it logs "encrypt" or "decrypt".
const METHOD_PROGRAM: &str = r#"
import base64, json, os, sys
print(json.dumps({"magic": "OpenTofu-External-Encryption-Method", "version": 1}), flush=True)
given = json.load(sys.stdin)
mode = sys.argv[1]
open(os.path.join(os.path.dirname(__file__), "method.log"), "a").write(mode + "\n")
key = base64.b64decode(given["key"])
data = base64.b64decode(given["payload"])
if mode == "decrypt":
    data = data[::-1]
out = bytes(b ^ key[i % len(key)] for i, b in enumerate(data))
if mode == "encrypt":
    out = out[::-1]
print(json.dumps({"payload": base64.b64encode(out).decode()}))
"#;

const RESOURCES: &str = r#"
variable "secret" {
  type      = string
  sensitive = true
}

resource "terraform_data" "a" {
  input = var.secret
}
"#;

fn workdir(tag: &str, encryption: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-encx-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    std::fs::write(dir.join("keys.py"), KEY_PROGRAM).unwrap();
    std::fs::write(dir.join("method.py"), METHOD_PROGRAM).unwrap();
    let config = format!("terraform {{\n  encryption {{\n{encryption}\n  }}\n}}\n{RESOURCES}");
    std::fs::write(dir.join("main.tf"), config).unwrap();
    dir
}

fn run_with(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Ran {
    let mut c = strata(dir);
    c.args(args).env("TF_VAR_secret", SECRET);
    for (k, v) in env {
        c.env(k, v);
    }
    ran(&mut c)
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let r = run_with(dir, &[], args);
    assert_eq!(r.code, 0, "strata {args:?}:\n{}", r.both());
    r.out
}

fn log(dir: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// No file under `dir` holds the secret.
fn nowhere_in_clear(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
            "{} holds the secret in clear",
            entry.path().display()
        );
    }
}

fn state(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap()).unwrap()
}

#[test]
fn an_external_key_provider_gives_the_key_and_gets_its_metadata_back() {
    let dir = workdir(
        "keys",
        r#"    key_provider "external" "vault" {
      command = ["python3", "./keys.py"]
    }
    method "aes_gcm" "main" {
      keys = key_provider.external.vault
    }
    state {
      method = method.aes_gcm.main
    }"#,
    );
    ok(&dir, &["apply", "-auto-approve"]);
    nowhere_in_clear(&dir);
    // Asked once for a key to write with.
    assert_eq!(log(&dir, "keys.log"), ["make"]);
    // Its metadata is kept as OpenTofu keeps it: the program's
    // external_data, under the key provider's address.
    use base64::Engine;
    let doc = state(&dir);
    let meta = doc["meta"]["key_provider.external.vault"]
        .as_str()
        .expect("meta");
    let meta: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(meta)
            .unwrap(),
    )
    .unwrap();
    let salt = meta["external_data"]["salt"]
        .as_str()
        .expect("salt")
        .to_string();
    assert_eq!(doc["encryption_version"], "v0");
    // Read back: the program is given the metadata and gives the key.
    let plan = ok(&dir, &["plan", "-detailed-exitcode"]);
    assert!(plan.contains("No changes."), "{plan}");
    assert_eq!(log(&dir, "keys.log")[1], format!("recover {salt}"));
    // A program that fails, or speaks another protocol, is an error that
    // changes nothing.
    let before = std::fs::read(dir.join("terraform.tfstate")).unwrap();
    let failing = run_with(
        &dir,
        &[("FAIL", "1")],
        &["apply", "-auto-approve", "-replace=terraform_data.a"],
    );
    assert_eq!(failing.code, 1, "{}", failing.both());
    assert!(
        failing.err.contains("the vault is sealed"),
        "{}",
        failing.err
    );
    let other = run_with(&dir, &[("MAGIC", "Something-Else")], &["plan"]);
    assert_eq!(other.code, 1, "{}", other.both());
    assert!(other.err.contains("invalid magic"), "{}", other.err);
    assert_eq!(
        std::fs::read(dir.join("terraform.tfstate")).unwrap(),
        before
    );
}

#[test]
fn an_external_method_seals_and_opens_with_a_key_providers_key() {
    let dir = workdir(
        "method",
        r#"    key_provider "pbkdf2" "main" {
      passphrase = "correct-horse-battery-staple"
    }
    method "external" "xor" {
      keys            = key_provider.pbkdf2.main
      encrypt_command = ["python3", "./method.py", "encrypt"]
      decrypt_command = ["python3", "./method.py", "decrypt"]
    }
    state {
      method = method.external.xor
    }"#,
    );
    ok(&dir, &["apply", "-auto-approve"]);
    nowhere_in_clear(&dir);
    let calls = log(&dir, "method.log");
    assert!(
        !calls.is_empty() && calls.iter().all(|c| c == "encrypt"),
        "{calls:?}"
    );
    let doc = state(&dir);
    assert!(doc["meta"]["key_provider.pbkdf2.main"].is_string(), "{doc}");
    // What the program wrote is the document's data; the state is read
    // back only through its decrypt command.
    use base64::Engine;
    let sealed = base64::engine::general_purpose::STANDARD
        .decode(doc["encrypted_data"].as_str().unwrap())
        .unwrap();
    assert!(!sealed.is_empty());
    let listed = ok(&dir, &["state", "list"]);
    assert_eq!(listed, "terraform_data.a\n");
    assert!(log(&dir, "method.log").contains(&"decrypt".to_string()));
    let plan = ok(&dir, &["plan", "-detailed-exitcode"]);
    assert!(plan.contains("No changes."), "{plan}");
}

#[test]
fn external_blocks_that_cannot_work_are_errors_at_their_place() {
    let cases = [
        (
            r#"    key_provider "external" "k" {}
    method "aes_gcm" "m" {
      keys = key_provider.external.k
    }
    state {
      method = method.aes_gcm.m
    }"#,
            "the command option is required",
        ),
        (
            r#"    method "external" "m" {
      decrypt_command = ["python3"]
    }
    state {
      method = method.external.m
    }"#,
            "the encrypt_command option is required",
        ),
        (
            r#"    method "external" "m" {
      encrypt_command = [""]
      decrypt_command = ["python3"]
    }
    state {
      method = method.external.m
    }"#,
            "the first entry of encrypt_command must not be empty",
        ),
    ];
    for (n, (encryption, want)) in cases.iter().enumerate() {
        let dir = workdir(&format!("bad{n}"), encryption);
        let r = run_with(&dir, &[], &["plan"]);
        assert_eq!(r.code, 1, "case {n}: {}", r.both());
        assert!(r.err.contains(want), "case {n}: want {want:?}\n{}", r.err);
        assert!(r.err.contains("main.tf:"), "case {n}: no place\n{}", r.err);
        assert!(!dir.join("terraform.tfstate").exists(), "case {n}");
    }
}

#[test]
fn a_pbkdf2_key_provider_takes_its_passphrase_from_a_chained_one() {
    let dir = workdir(
        "chain",
        r#"    key_provider "external" "vault" {
      command = ["python3", "./keys.py"]
    }
    key_provider "pbkdf2" "chained" {
      chain = key_provider.external.vault
    }
    method "aes_gcm" "main" {
      keys = key_provider.pbkdf2.chained
    }
    state {
      method = method.aes_gcm.main
    }"#,
    );
    ok(&dir, &["apply", "-auto-approve"]);
    nowhere_in_clear(&dir);
    // Both providers' metadata are kept, as OpenTofu keeps a chain's.
    let doc = state(&dir);
    for addr in ["key_provider.external.vault", "key_provider.pbkdf2.chained"] {
        assert!(doc["meta"][addr].is_string(), "{addr}: {doc}");
    }
    let plan = ok(&dir, &["plan", "-detailed-exitcode"]);
    assert!(plan.contains("No changes."), "{plan}");
    assert!(log(&dir, "keys.log")
        .iter()
        .any(|l| l.starts_with("recover ")));
    // A passphrase beside the chain is OpenTofu's error.
    let both = std::fs::read_to_string(dir.join("main.tf"))
        .unwrap()
        .replace(
        "chain = key_provider.external.vault",
        "chain = key_provider.external.vault\n      passphrase = \"correct-horse-battery-staple\"",
    );
    std::fs::write(dir.join("main.tf"), both).unwrap();
    let r = run_with(&dir, &[], &["plan"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.err
            .contains("passphrase and chain are mutually exclusive"),
        "{}",
        r.err
    );
}
