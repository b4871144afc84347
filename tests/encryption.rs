//! State and plan encryption at rest (OpenTofu's `terraform { encryption
//! { … } }`, issue 45): with a `pbkdf2` key provider and the `aes_gcm`
//! method, nothing strata writes — state, backup, journal, saved plan —
//! holds a sensitive value in clear; a wrong key changes nothing; a key is
//! rotated through `fallback`, and a plain state moved to encryption
//! through an `unencrypted` fallback; a killed apply's journal replays
//! under the key. OpenTofu is not on this machine: its format is held to
//! by decrypting strata's state with Python's `cryptography` (PBKDF2 and
//! AES-GCM as OpenTofu's source lays them out).

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;

use run::{ran, strata, Ran};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SECRET: &str = "hunter2-the-secret-value";
const PASS: &str = "correct-horse-battery-staple";

/// The key provider, method and targets; `chain` is the `state` block's
/// body (its method and fallbacks).
fn encryption(chain: &str) -> String {
    format!(
        r#"
terraform {{
  encryption {{
    key_provider "pbkdf2" "main" {{
      passphrase = var.passphrase
    }}
    key_provider "pbkdf2" "next" {{
      passphrase = "a-brand-new-long-passphrase"
    }}
    method "aes_gcm" "main" {{
      keys = key_provider.pbkdf2.main
    }}
    method "aes_gcm" "next" {{
      keys = key_provider.pbkdf2.next
    }}
    method "unencrypted" "migrate" {{}}
    state {{
      {chain}
    }}
    plan {{
      method = method.aes_gcm.main
    }}
  }}
}}
"#
    )
}

const RESOURCES: &str = r#"
variable "passphrase" {
  type      = string
  sensitive = true
  default   = null
}

variable "secret" {
  type      = string
  sensitive = true
}

resource "terraform_data" "a" {
  input = var.secret
}
"#;

/// A fresh directory whose configuration is `body`.
fn workdir(tag: &str, body: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-enc-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    std::fs::write(dir.join("main.tf"), body).expect("config");
    dir
}

fn run_with(dir: &Path, pass: &str, args: &[&str]) -> Ran {
    ran(strata(dir)
        .args(args)
        .env("TF_VAR_passphrase", pass)
        .env("TF_VAR_secret", SECRET))
}

fn ok(dir: &Path, pass: &str, args: &[&str]) -> String {
    let r = run_with(dir, pass, args);
    assert_eq!(r.code, 0, "strata {args:?}:\n{}", r.both());
    r.out
}

/// Every file under `dir` and its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).expect("readable dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.insert(path, bytes);
            }
        }
    }
    out
}

/// The files under `dir` whose bytes hold `needle`.
fn holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    files(dir)
        .into_iter()
        .filter(|(_, b)| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        .map(|(p, _)| p)
        .collect()
}

fn state_doc(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("terraform.tfstate")).expect("state");
    serde_json::from_str(&text).expect("the state is JSON")
}

/// The metadata the key provider `addr` (`key_provider.T.N`) wrote into
/// the state, and its `ciphertext` decoded.
fn key_meta(dir: &Path, addr: &str) -> (serde_json::Value, Vec<u8>) {
    use base64::Engine;
    let b64 = &base64::engine::general_purpose::STANDARD;
    let doc = state_doc(dir);
    let meta = doc["meta"][addr].as_str().expect("meta");
    let meta: serde_json::Value = serde_json::from_slice(&b64.decode(meta).unwrap()).unwrap();
    let ciphertext = b64
        .decode(meta["ciphertext"].as_str().expect("ciphertext"))
        .unwrap();
    (meta, ciphertext)
}

/// Every file strata keeps in `dir` but the configuration.
fn kept(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files(dir)
        .into_iter()
        .filter(|(p, _)| !p.ends_with("main.tf"))
        .collect()
}

/// `state list` read the one object through the key.
fn listed(r: &Ran) {
    assert_eq!(
        (r.code, r.out.as_str()),
        (0, "terraform_data.a\n"),
        "{}",
        r.err
    );
}

#[test]
fn an_encrypted_apply_leaves_no_sensitive_value_on_disk() {
    let dir = workdir(
        "clear",
        &format!("{}{RESOURCES}", encryption("method = method.aes_gcm.main")),
    );
    ok(&dir, PASS, &["init", "-no-color"]);
    ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
    ok(&dir, PASS, &["plan", "-out=saved.plan", "-no-color"]);
    ok(&dir, PASS, &["apply", "-no-color", "saved.plan"]);
    // Sealed as OpenTofu seals it: serial and lineage in clear, the rest
    // in encrypted_data, the key provider's metadata beside it.
    let doc = state_doc(&dir);
    let fields: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        fields,
        [
            "serial",
            "lineage",
            "meta",
            "encrypted_data",
            "encryption_version"
        ]
    );
    assert!(doc["meta"]["key_provider.pbkdf2.main"].is_string());
    let plan = std::fs::read_to_string(dir.join("saved.plan")).unwrap();
    assert!(plan.starts_with("{\"meta\":"), "{plan}");
    assert!(dir.join("terraform.tfstate.backup").exists());
    assert_eq!(holding(&dir, SECRET), Vec::<PathBuf>::new());
    // Read back through the key by every reader of the state.
    assert_eq!(ok(&dir, PASS, &["state", "list"]), "terraform_data.a\n");
    let shown = ok(&dir, PASS, &["show", "-json"]);
    assert!(shown.contains("terraform_data.a"), "{shown}");
    let pulled = ok(&dir, PASS, &["state", "pull"]);
    assert!(
        pulled.contains(SECRET),
        "state pull gives the state in clear"
    );
    let plan = ok(&dir, PASS, &["plan", "-no-color", "-detailed-exitcode"]);
    assert!(plan.contains("No changes."), "{plan}");
    python_opens(&dir);
}

/// Python's `cryptography`, from the moto virtualenv `.ci/run` makes,
/// opens the state with PBKDF2-HMAC-SHA512 and AES-GCM (nonce first): the
/// layout OpenTofu reads.
fn python_opens(dir: &Path) {
    let server = std::env::var("STRATA_MOTO_SERVER").unwrap_or_else(|_| {
        panic!("the encryption format check needs the moto virtualenv's Python (cryptography): run ./.ci/run, or set STRATA_MOTO_SERVER")
    });
    let python = Path::new(&server).with_file_name("python3");
    let script = r#"
import base64, json, sys
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
doc = json.load(open("terraform.tfstate"))
meta = json.loads(base64.b64decode(doc["meta"]["key_provider.pbkdf2.main"]))
algo = {"sha512": hashes.SHA512(), "sha256": hashes.SHA256()}[meta["hash_function"]]
key = PBKDF2HMAC(algorithm=algo, length=meta["key_length"], salt=base64.b64decode(meta["salt"]), iterations=meta["iterations"]).derive(sys.argv[1].encode())
data = base64.b64decode(doc["encrypted_data"])
state = json.loads(AESGCM(key).decrypt(data[:12], data[12:], None))
assert state["serial"] == doc["serial"] and state["lineage"] == doc["lineage"]
print(meta["iterations"], meta["hash_function"], len(base64.b64decode(meta["salt"])), state["resources"][0]["instances"][0]["attributes"]["input"]["value"])
"#;
    let out = std::process::Command::new(&python)
        .args(["-c", script, PASS])
        .current_dir(dir)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("600000 sha512 32 {SECRET}\n")
    );
}

#[test]
fn a_wrong_key_is_an_error_that_changes_nothing() {
    let dir = workdir(
        "wrong",
        &format!("{}{RESOURCES}", encryption("method = method.aes_gcm.main")),
    );
    ok(&dir, PASS, &["init", "-no-color"]);
    ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
    let before = files(&dir);
    for args in [
        &["plan", "-no-color"][..],
        &["apply", "-auto-approve", "-no-color"],
        &["state", "rm", "terraform_data.a"],
        &["destroy", "-auto-approve", "-no-color"],
    ] {
        let r = run_with(&dir, "not-the-right-passphrase", args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.both());
        assert!(
            r.err
                .contains("could not be decrypted by any configured method"),
            "{args:?}: {}",
            r.err
        );
        assert!(r.err.contains("method.aes_gcm.main"), "{}", r.err);
    }
    assert_eq!(files(&dir), before, "a wrong key changed a file");
    // A passphrase OpenTofu would refuse is refused at its block.
    let r = run_with(&dir, "short", &["plan", "-no-color"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("passphrase is too short"), "{}", r.err);
    assert!(r.err.contains("main.tf:"), "{}", r.err);
}

#[test]
fn a_key_rotated_through_a_fallback_is_replaced_on_the_next_write() {
    let first = format!("{}{RESOURCES}", encryption("method = method.aes_gcm.main"));
    let dir = workdir("rotate", &first);
    ok(&dir, PASS, &["init", "-no-color"]);
    ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
    let rotating = encryption("method = method.aes_gcm.next\n      fallback {\n        method = method.aes_gcm.main\n      }");
    let second = format!("{rotating}{RESOURCES}\nresource \"terraform_data\" \"b\" {{}}\n");
    std::fs::write(dir.join("main.tf"), &second).unwrap();
    ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
    let doc = state_doc(&dir);
    let meta: Vec<&String> = doc["meta"].as_object().unwrap().keys().collect();
    assert_eq!(meta, ["key_provider.pbkdf2.next"]);
    // The old key alone no longer opens it; the new one alone does.
    let old_only = format!("{first}\nresource \"terraform_data\" \"b\" {{}}\n");
    std::fs::write(dir.join("main.tf"), old_only).unwrap();
    let r = run_with(&dir, PASS, &["state", "list"]);
    assert_eq!(r.code, 1, "{}", r.both());
    let new_only = format!(
        "{}{RESOURCES}\nresource \"terraform_data\" \"b\" {{}}\n",
        encryption("method = method.aes_gcm.next")
    );
    std::fs::write(dir.join("main.tf"), new_only).unwrap();
    assert_eq!(
        ok(&dir, PASS, &["state", "list"]),
        "terraform_data.a\nterraform_data.b\n"
    );
    assert_eq!(holding(&dir, SECRET), Vec::<PathBuf>::new());
}

#[test]
fn a_plain_state_moves_to_encryption_only_through_an_unencrypted_fallback() {
    let dir = workdir("migrate", RESOURCES);
    ok(&dir, PASS, &["init", "-no-color"]);
    ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
    assert!(!holding(&dir, SECRET).is_empty(), "plain to begin with");
    let strict = format!("{}{RESOURCES}", encryption("method = method.aes_gcm.main"));
    std::fs::write(dir.join("main.tf"), &strict).unwrap();
    let before = files(&dir);
    let r = run_with(&dir, PASS, &["plan", "-no-color"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.err.contains("is not encrypted"), "{}", r.err);
    assert_eq!(files(&dir), before);
    let moving = format!(
        "{}{RESOURCES}\nresource \"terraform_data\" \"b\" {{}}\n",
        encryption("method = method.aes_gcm.main\n      fallback {\n        method = method.unencrypted.migrate\n      }")
    );
    std::fs::write(dir.join("main.tf"), moving).unwrap();
    ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(state_doc(&dir)["encryption_version"], "v0");
    // The backup is the plain state it replaced, as the previous version
    // always is; the state itself holds nothing in clear.
    let state = std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap();
    assert!(!state.contains(SECRET));
    // Without a key, strata says the state is encrypted.
    std::fs::write(
        dir.join("main.tf"),
        format!("{RESOURCES}\nresource \"terraform_data\" \"b\" {{}}\n"),
    )
    .unwrap();
    let r = run_with(&dir, PASS, &["state", "list"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.err.contains("is encrypted"), "{}", r.err);
}

#[test]
fn a_killed_encrypted_apply_leaves_a_sealed_journal_that_replays_under_the_key() {
    let body = format!(
        r#"{}{RESOURCES}
resource "terraform_data" "slow" {{
  depends_on = [terraform_data.a]
  provisioner "local-exec" {{
    command = "sleep 30"
  }}
}}
"#,
        encryption("method = method.aes_gcm.main")
    );
    let dir = workdir("kill", &body);
    ok(&dir, PASS, &["init", "-no-color"]);
    let mut c = strata(&dir);
    c.args(["apply", "-auto-approve", "-no-color"])
        .env("TF_VAR_passphrase", PASS)
        .env("TF_VAR_secret", SECRET)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let mut child = c.spawn().expect("strata starts");
    let journal = dir.join("terraform.tfstate.journal");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    // terraform_data.a's intent and its completion.
    while !std::fs::read_to_string(&journal).is_ok_and(|j| j.lines().count() >= 2) {
        assert!(std::time::Instant::now() < deadline, "no journal appeared");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The whole group: strata and the provisioner's sleep.
    unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
    let _ = child.wait();
    let lines = std::fs::read_to_string(&journal).unwrap();
    for line in lines.lines() {
        let sealed: serde_json::Value = serde_json::from_str(line).expect("a whole line");
        assert_eq!(sealed["encryption_version"], "v0", "{line}");
    }
    assert_eq!(holding(&dir, SECRET), Vec::<PathBuf>::new());
    // The next run folds the journal in: terraform_data.a was made.
    let listed = ok(&dir, PASS, &["state", "list"]);
    assert!(listed.contains("terraform_data.a\n"), "{listed}");
    let plan = ok(&dir, PASS, &["plan", "-no-color"]);
    assert!(
        !plan.contains("terraform_data.a will be created"),
        "the journal's object was lost:\n{plan}"
    );
}

#[test]
fn encryption_blocks_that_cannot_work_are_errors_at_their_place() {
    let cases = [
        (
            r#"key_provider "pbkdf2" "k" { passphrase = "long-enough-passphrase" }
    method "aes_gcm" "m" { keys = key_provider.pbkdf2.other }
    state { method = method.aes_gcm.m }"#,
            "Key provider pbkdf2.other is missing from the encryption configuration.",
        ),
        (
            r#"key_provider "pbkdf2" "a" { chain = key_provider.pbkdf2.b }
    key_provider "pbkdf2" "b" { chain = key_provider.pbkdf2.a }
    method "aes_gcm" "m" { keys = key_provider.pbkdf2.a }
    state { method = method.aes_gcm.m }"#,
            "its chain of key providers loops",
        ),
        (
            r#"key_provider "azure_vault" "k" {
      vault_uri      = "https://v.vault.azure.net"
      vault_key_name = "state"
      key_length     = 32
    }
    method "aes_gcm" "m" { keys = key_provider.azure_vault.k }
    state { method = method.aes_gcm.m }"#,
            "misconfigured key vault name or key name: invalid key vault name",
        ),
        (
            r#"key_provider "azure_vault" "k" {
      vault_uri      = "https://vault.vault.azure.net"
      vault_key_name = "state"
      key_length     = 32
      symmetric      = true
    }
    method "aes_gcm" "m" { keys = key_provider.azure_vault.k }
    state { method = method.aes_gcm.m }"#,
            "symmetric_key_size must be given a value of 128, 192, or 256",
        ),
        (
            r#"key_provider "azure_vault" "k" {
      vault_uri      = "https://vault.vault.azure.net"
      vault_key_name = "state"
      key_length     = 32
      use_msi        = true
    }
    method "aes_gcm" "m" { keys = key_provider.azure_vault.k }
    state { method = method.aes_gcm.m }"#,
            "strata does not sign in to Azure by use_msi yet",
        ),
        (
            r#"key_provider "gcp_kms" "k" { kms_encryption_key = "x" }
    method "aes_gcm" "m" { keys = key_provider.gcp_kms.k }
    state { method = method.aes_gcm.m }"#,
            "The argument \"key_length\" is required, but no definition was found.",
        ),
        (
            r#"key_provider "gcp_kms" "k" {
      kms_encryption_key = "x"
      key_length         = 2048
    }
    method "aes_gcm" "m" { keys = key_provider.gcp_kms.k }
    state { method = method.aes_gcm.m }"#,
            "key_length must be less than the GCP limit of 1024",
        ),
        (
            r#"key_provider "gcp_kms" "k" {
      kms_encryption_key            = "x"
      key_length                    = 32
      additional_authenticated_data = "not base64!"
    }
    method "aes_gcm" "m" { keys = key_provider.gcp_kms.k }
    state { method = method.aes_gcm.m }"#,
            "additional_authenticated_data must be valid standard base64",
        ),
        (
            r#"key_provider "aws_kms" "k" { kms_key_id = "alias/state" }
    method "aes_gcm" "m" { keys = key_provider.aws_kms.k }
    state { method = method.aes_gcm.m }"#,
            "key_provider.aws_kms.k failed with error: no key_spec provided",
        ),
        (
            r#"key_provider "aws_kms" "k" {
      kms_key_id = "alias/state"
      key_spec   = "AES_512"
    }
    method "aes_gcm" "m" { keys = key_provider.aws_kms.k }
    state { method = method.aes_gcm.m }"#,
            "invalid key_spec AES_512, expected one of [AES_256 AES_128]",
        ),
        (
            r#"key_provider "openbao" "k" { key_length = 20 }
    method "aes_gcm" "m" { keys = key_provider.openbao.k }
    state { method = method.aes_gcm.m }"#,
            "data key length should one of 16, 32 or 64 bytes: got 20",
        ),
        (
            r#"key_provider "openbao" "k" { address = "http://127.0.0.1:1" }
    method "aes_gcm" "m" { keys = key_provider.openbao.k }
    state { method = method.aes_gcm.m }"#,
            "key_provider.openbao.k failed with error: no key name found",
        ),
        (
            r#"key_provider "vault9" "k" {}
    method "aes_gcm" "m" { keys = key_provider.vault9.k }
    state { method = method.aes_gcm.m }"#,
            "Unknown key_provider type",
        ),
        (
            r#"method "unencrypted" "u" {}
    state {
      method   = method.unencrypted.u
      enforced = true
    }"#,
            "Unencrypted method is forbidden",
        ),
        (r#"state {}"#, "Missing method"),
        (
            r#"state { method = method.aes_gcm.nowhere }"#,
            "Can not find \"method.aes_gcm.nowhere\".",
        ),
        (
            r#"key_provider "pbkdf2" "k" {
      passphrase = "long-enough-passphrase"
      key_length = 20
    }
    method "aes_gcm" "m" { keys = key_provider.pbkdf2.k }
    plan { method = method.aes_gcm.m }"#,
            "AES-GCM requires a key length of 16, 24, or 32 bytes, got 20",
        ),
    ];
    for (i, (body, said)) in cases.iter().enumerate() {
        let dir = workdir(
            &format!("bad{i}"),
            &format!("terraform {{\n  encryption {{\n    {body}\n  }}\n}}\n"),
        );
        let r = run_with(&dir, PASS, &["validate", "-no-color"]);
        assert_eq!(r.code, 1, "{body}: {}", r.both());
        let flat = r.err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(said), "{body}:\n{}", r.err);
        assert!(r.err.contains("main.tf:"), "{body}: no place:\n{}", r.err);
    }
}

/// The same encryption written in `.tf.json`, and given whole or in part
/// by OpenTofu's `TF_ENCRYPTION` (HCL, or JSON when it starts with `{`),
/// which is laid over the configuration's: a key provider's arguments
/// replaced by name, a target's method taken from it.
#[test]
fn encryption_is_read_from_json_and_from_tf_encryption() {
    let json = r#"{
  "terraform": {
    "encryption": {
      "key_provider": { "pbkdf2": { "main": { "passphrase": "${var.passphrase}" } } },
      "method": { "aes_gcm": { "main": { "keys": "key_provider.pbkdf2.main" } } },
      "state": { "method": "method.aes_gcm.main" }
    }
  }
}"#;
    let dir = workdir("json", RESOURCES);
    std::fs::write(dir.join("encryption.tf.json"), json).unwrap();
    ok(&dir, PASS, &["init", "-no-color"]);
    ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(state_doc(&dir)["encryption_version"], "v0");
    assert_eq!(holding(&dir, SECRET), Vec::<PathBuf>::new());

    let env_only = workdir("env", RESOURCES);
    let hcl = r#"
key_provider "pbkdf2" "ci" {
  passphrase = "a-passphrase-from-the-ci-secret"
}
method "aes_gcm" "ci" {
  keys = key_provider.pbkdf2.ci
}
state {
  method = method.aes_gcm.ci
}
"#;
    let with_env = |dir: &Path, value: &str, args: &[&str]| {
        ran(strata(dir)
            .args(args)
            .env("TF_VAR_secret", SECRET)
            .env("TF_ENCRYPTION", value))
    };
    let r = with_env(&env_only, hcl, &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let doc = state_doc(&env_only);
    assert!(doc["meta"]["key_provider.pbkdf2.ci"].is_string(), "{doc}");
    // Without TF_ENCRYPTION the state is named as encrypted; with a JSON
    // one that replaces the passphrase, the key is wrong.
    let r = run_with(&env_only, PASS, &["state", "list"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("is encrypted"), "{}", r.err);
    let wrong = format!(
        "{{\"key_provider\": {{\"pbkdf2\": {{\"ci\": {{\"passphrase\": \"another-wrong-passphrase\"}}}}}}, {}",
        &serde_json::json!({
            "method": {"aes_gcm": {"ci": {"keys": "key_provider.pbkdf2.ci"}}},
            "state": {"method": "method.aes_gcm.ci"}
        })
        .to_string()[1..]
    );
    let r = with_env(&env_only, &wrong, &["state", "list"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.err.contains("could not be decrypted"), "{}", r.err);
    // Laid over the configuration's: its passphrase replaced by name.
    let over = r#"key_provider "pbkdf2" "main" {
  passphrase = "a-passphrase-from-the-ci-secret"
}"#;
    let r = with_env(&dir, over, &["state", "list"]);
    assert_eq!(
        r.code, 1,
        "the override's passphrase is not the one that sealed it"
    );
    assert!(r.err.contains("could not be decrypted"), "{}", r.err);
    let r = with_env(
        &dir,
        &format!("key_provider \"pbkdf2\" \"main\" {{\n  passphrase = \"{PASS}\"\n}}"),
        &["state", "list"],
    );
    assert_eq!(r.code, 0, "{}", r.both());
    assert_eq!(r.out, "terraform_data.a\n");
}

/// `terraform_remote_state` of an encrypted state: refused, saying so,
/// by a configuration with no way to open it; read through
/// `remote_state_data_sources { default { … } }` by one that has it.
#[test]
fn a_remote_state_data_source_opens_an_encrypted_state_through_the_default_target() {
    let producer = workdir(
        "producer",
        &format!(
            "{}{RESOURCES}\noutput \"out\" {{\n  value = \"made-by-the-producer\"\n}}\n",
            encryption("method = method.aes_gcm.main")
        ),
    );
    ok(&producer, PASS, &["init", "-no-color"]);
    ok(&producer, PASS, &["apply", "-auto-approve", "-no-color"]);
    let reading = format!(
        r#"
data "terraform_remote_state" "p" {{
  backend = "local"
  config = {{
    path = "{}"
  }}
}}

output "got" {{
  value = data.terraform_remote_state.p.outputs.out
}}
"#,
        producer.join("terraform.tfstate").display()
    );
    let consumer = workdir("consumer", &reading);
    ok(&consumer, PASS, &["init", "-no-color"]);
    let r = run_with(&consumer, PASS, &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.err.contains("remote_state_data_sources"), "{}", r.err);
    let with_key = format!(
        r#"
variable "passphrase" {{
  type = string
}}

terraform {{
  encryption {{
    key_provider "pbkdf2" "main" {{
      passphrase = var.passphrase
    }}
    method "aes_gcm" "main" {{
      keys = key_provider.pbkdf2.main
    }}
    remote_state_data_sources {{
      default {{
        method = method.aes_gcm.main
      }}
    }}
  }}
}}
{reading}"#
    );
    std::fs::write(consumer.join("main.tf"), with_key).unwrap();
    let out = ok(&consumer, PASS, &["apply", "-auto-approve", "-no-color"]);
    assert!(out.contains("got = \"made-by-the-producer\""), "{out}");
    // Its own state is not encrypted: only remote states were asked for.
    let own = std::fs::read_to_string(consumer.join("terraform.tfstate")).unwrap();
    assert!(own.contains("made-by-the-producer"), "{own}");
}

/// `remote_state_data_source "NAME"` targets one data source by the name
/// OpenTofu derives from its address (`each["b"]`, `sub[0].q` for
/// `module.sub[0]`'s `q`); the others are opened by `default`. Without the
/// named target the state sealed under another key is not opened.
#[test]
fn a_remote_state_data_source_target_opens_the_state_of_the_data_source_it_names() {
    // The second producer seals with its key provider `next` (the
    // metadata names the provider, so the consumer's has that name).
    let producer = |tag: &str, method: &str| {
        let dir = workdir(
            tag,
            &format!(
                "{}{RESOURCES}\noutput \"out\" {{\n  value = \"made-by-{tag}\"\n}}\n",
                encryption(&format!("method = method.aes_gcm.{method}"))
            ),
        );
        ok(&dir, PASS, &["init", "-no-color"]);
        ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
        dir.join("terraform.tfstate").display().to_string()
    };
    let (p1, p2) = (producer("rs-p1", "main"), producer("rs-p2", "next"));
    let consumer = |targets: &str| {
        format!(
            r#"
variable "passphrase" {{
  type = string
}}

terraform {{
  encryption {{
    key_provider "pbkdf2" "main" {{
      passphrase = var.passphrase
    }}
    key_provider "pbkdf2" "next" {{
      passphrase = "a-brand-new-long-passphrase"
    }}
    method "aes_gcm" "main" {{
      keys = key_provider.pbkdf2.main
    }}
    method "aes_gcm" "other" {{
      keys = key_provider.pbkdf2.next
    }}
    remote_state_data_sources {{
      default {{
        method = method.aes_gcm.main
      }}
      remote_state_data_source "each[\"b\"]" {{
        method = method.aes_gcm.other
      }}
      {targets}
    }}
  }}
}}

data "terraform_remote_state" "each" {{
  for_each = {{ a = "{p1}", b = "{p2}" }}
  backend  = "local"
  config = {{
    path = each.value
  }}
}}

module "sub" {{
  count  = 1
  source = "./sub"
  path   = "{p2}"
}}

output "got" {{
  value = [for k, v in data.terraform_remote_state.each : v.outputs.out]
}}

output "sub" {{
  value = module.sub[0].out
}}
"#
        )
    };
    let dir = workdir("rs-consumer", &consumer(""));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/main.tf"),
        r#"
variable "path" {
  type = string
}

data "terraform_remote_state" "q" {
  backend = "local"
  config = {
    path = var.path
  }
}

output "out" {
  value = data.terraform_remote_state.q.outputs.out
}
"#,
    )
    .unwrap();
    ok(&dir, PASS, &["init", "-no-color"]);
    let r = run_with(&dir, PASS, &["plan", "-no-color"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(
        r.err
            .contains("module.sub[0].data.terraform_remote_state.q"),
        "{}",
        r.err
    );
    assert!(!r.err.contains("terraform_remote_state.each"), "{}", r.err);
    let named =
        "remote_state_data_source \"sub[0].q\" {\n        method = method.aes_gcm.other\n      }";
    std::fs::write(dir.join("main.tf"), consumer(named)).unwrap();
    let out = ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
    assert!(
        out.contains("\"made-by-rs-p1\",\n  \"made-by-rs-p2\","),
        "{out}"
    );
    assert!(out.contains("sub = \"made-by-rs-p2\""), "{out}");
}

/// OpenTofu's `openbao` key provider against a stand-in of OpenBao's
/// transit engine (none can be had here; the stand-in speaks its HTTP
/// API): a data key asked for once per writing run, its wrapped form the
/// metadata, unwrapped to read; a wrong token or another key's name is an
/// error that changes nothing.
#[test]
fn an_openbao_key_provider_seals_with_a_data_key_from_the_transit_engine() {
    let transit = strata_standin::openbao::start("s.test-token", &["state", "other"])
        .expect("the transit stand-in starts");
    let config = |key: &str| {
        format!(
            r#"
terraform {{
  encryption {{
    key_provider "openbao" "b" {{
      address  = "{}"
      key_name = "{key}"
    }}
    method "aes_gcm" "m" {{
      keys = key_provider.openbao.b
    }}
    state {{
      method = method.aes_gcm.m
    }}
  }}
}}
{RESOURCES}"#,
            transit.server.url
        )
    };
    let dir = workdir("openbao", &config("state"));
    let bao = |token: &str, args: &[&str]| {
        ran(strata(&dir)
            .args(args)
            .env("TF_VAR_secret", SECRET)
            .env("BAO_TOKEN", token))
    };
    let r = bao("s.test-token", &["init", "-no-color"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let r = bao("s.test-token", &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert_eq!(transit.generated(), 1, "one data key for the run");
    let (meta, ciphertext) = key_meta(&dir, "key_provider.openbao.b");
    assert!(ciphertext.starts_with(b"vault:v1:"), "{meta}");
    assert_eq!(holding(&dir, SECRET), Vec::<PathBuf>::new());
    listed(&bao("s.test-token", &["state", "list"]));
    assert_eq!(transit.generated(), 1, "a read asks for no new key");
    let before = kept(&dir);
    let r = bao("s.wrong", &["state", "list"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.err.contains("permission denied"), "{}", r.err);
    std::fs::write(dir.join("main.tf"), config("other")).unwrap();
    let r = bao("s.test-token", &["plan", "-no-color"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.err.contains("unable to decrypt"), "{}", r.err);
    std::fs::write(dir.join("main.tf"), config("state")).unwrap();
    assert_eq!(kept(&dir), before);
}

/// OpenTofu's `gcp_kms` key provider against a stand-in of Cloud KMS
/// (none can be had here; the stand-in speaks its REST API, reached by
/// `GOOGLE_KMS_CUSTOM_ENDPOINT`): a key encrypted once per writing run,
/// its ciphertext the metadata, decrypted to read with the same additional
/// authenticated data; a wrong token, another key or other data is an
/// error that changes nothing.
#[test]
fn a_gcp_kms_key_provider_seals_with_a_key_cloud_kms_encrypts() {
    const KEY: &str = "projects/p/locations/global/keyRings/r/cryptoKeys/state";
    let kms = strata_standin::cloudkms::start(
        "ya29.test",
        &[
            KEY,
            "projects/p/locations/global/keyRings/r/cryptoKeys/other",
        ],
    )
    .expect("the Cloud KMS stand-in starts");
    let config = |key: &str, aad: &str| {
        format!(
            r#"
terraform {{
  encryption {{
    key_provider "gcp_kms" "g" {{
      kms_encryption_key            = "projects/p/locations/global/keyRings/r/cryptoKeys/{key}"
      key_length                    = 32
      additional_authenticated_data = "{aad}"
    }}
    method "aes_gcm" "m" {{
      keys = key_provider.gcp_kms.g
    }}
    state {{
      method = method.aes_gcm.m
    }}
  }}
}}
{RESOURCES}"#
        )
    };
    let dir = workdir("gcp-kms", &config("state", "c3RyYXRh"));
    let gcp = |token: &str, args: &[&str]| {
        ran(strata(&dir)
            .args(args)
            .env("TF_VAR_secret", SECRET)
            .env(
                "GOOGLE_KMS_CUSTOM_ENDPOINT",
                format!("{}/v1/", kms.server.url),
            )
            .env("GOOGLE_OAUTH_ACCESS_TOKEN", token))
    };
    let r = gcp("ya29.test", &["init", "-no-color"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let r = gcp("ya29.test", &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(r.code, 0, "{}", r.both());
    assert_eq!(kms.encrypted(), 1, "one key for the run");
    let (meta, ciphertext) = key_meta(&dir, "key_provider.gcp_kms.g");
    assert!(ciphertext.starts_with(b"cloudkms-standin:"), "{meta}");
    assert_eq!(holding(&dir, SECRET), Vec::<PathBuf>::new());
    listed(&gcp("ya29.test", &["state", "list"]));
    assert_eq!(kms.encrypted(), 1, "a read encrypts no new key");
    let before = kept(&dir);
    let r = gcp("ya29.wrong", &["state", "list"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.err.contains("UNAUTHENTICATED"), "{}", r.err);
    for (key, aad) in [("other", "c3RyYXRh"), ("state", "b3RoZXI=")] {
        std::fs::write(dir.join("main.tf"), config(key, aad)).unwrap();
        let r = gcp("ya29.test", &["plan", "-no-color"]);
        assert_eq!(r.code, 1, "{}", r.both());
        assert!(r.err.contains("Decryption failed"), "{}", r.err);
    }
    std::fs::write(dir.join("main.tf"), config("state", "c3RyYXRh")).unwrap();
    assert_eq!(kept(&dir), before);
}

/// OpenTofu's `azure_vault` key provider against a stand-in of Key Vault
/// (none can be had here; the stand-in speaks its REST API over HTTPS,
/// and Microsoft's token endpoint): a key encrypted by the vault's RSA key
/// once per writing run, the key's version kept in the metadata and used
/// to decrypt; a wrong client secret is an error that changes nothing.
#[test]
fn an_azure_vault_key_provider_seals_with_a_key_key_vault_encrypts() {
    use strata_standin::azure;
    let vault = azure::start().expect("the Azure stand-in starts");
    let uri = vault.server.url.replace("127.0.0.1", "localhost");
    let config = format!(
        r#"
terraform {{
  encryption {{
    key_provider "azure_vault" "v" {{
      vault_uri      = "{uri}"
      vault_key_name = "{}"
      key_length     = 32
      use_cli        = false
    }}
    method "aes_gcm" "m" {{
      keys = key_provider.azure_vault.v
    }}
    state {{
      method = method.aes_gcm.m
    }}
  }}
}}
{RESOURCES}"#,
        azure::keyvault::KEY
    );
    let dir = workdir("azure-vault", &config);
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &vault.ca_pem).unwrap();
    let az = |secret: &str, args: &[&str]| {
        ran(strata(&dir)
            .args(args)
            .env("TF_VAR_secret", SECRET)
            .env("SSL_CERT_FILE", &ca)
            .env("AZURE_AUTHORITY_HOST", &vault.server.url)
            .env("ARM_TENANT_ID", azure::TENANT)
            .env("ARM_CLIENT_ID", azure::CLIENT_ID)
            .env("ARM_CLIENT_SECRET", secret))
    };
    let r = az(azure::CLIENT_SECRET, &["init", "-no-color"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let r = az(
        azure::CLIENT_SECRET,
        &["apply", "-auto-approve", "-no-color"],
    );
    assert_eq!(r.code, 0, "{}", r.both());
    let (meta, ciphertext) = key_meta(&dir, "key_provider.azure_vault.v");
    // OpenTofu's fields: the ciphertext, the key's version, the algorithm;
    // an RSA key gives no iv, tag or aad (null, as Go writes them).
    assert_eq!(meta["algo"], "RSA-OAEP-256", "{meta}");
    assert_eq!(
        meta["key_version"].as_str().map(str::len),
        Some(32),
        "{meta}"
    );
    assert!(
        meta["iv"].is_null() && meta["authentication_tag"].is_null(),
        "{meta}"
    );
    assert!(ciphertext.starts_with(b"akv-standin:"), "{meta}");
    assert_eq!(holding(&dir, SECRET), Vec::<PathBuf>::new());
    listed(&az(azure::CLIENT_SECRET, &["state", "list"]));
    let before = files(&dir);
    let r = az("wrong-secret", &["state", "list"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.err.contains("AADSTS7000215"), "{}", r.err);
    assert_eq!(files(&dir), before);
}

/// The key provider's variables are asked for by the commands that open
/// the state, not by `validate` (Terraform's needs no values).
#[test]
fn validate_needs_no_passphrase_and_the_state_commands_name_it() {
    let body = format!(
        "{}{}",
        encryption("method = method.aes_gcm.main"),
        RESOURCES.replace(
            "  sensitive = true\n  default   = null\n",
            "  sensitive = true\n"
        )
    );
    let dir = workdir("novalue", &body);
    let bare = |args: &[&str]| ran(strata(&dir).args(args).env("TF_VAR_secret", SECRET));
    let r = bare(&["validate", "-no-color"]);
    assert_eq!(r.code, 0, "{}", r.both());
    let r = bare(&["state", "list"]);
    assert_eq!(r.code, 1, "{}", r.both());
    assert!(r.err.contains("\"passphrase\" is not set"), "{}", r.err);
    assert!(!dir.join("terraform.tfstate").exists());
}

/// The way into encryption and back out, in a directory Terraform made:
/// with an `unencrypted` fallback a no-change `apply` rewrites Terraform's
/// plain state sealed (OpenTofu writes it too; a no-change apply would
/// otherwise never move it), and with `unencrypted` first and the key as
/// fallback a no-change `apply` writes it plain again — which Terraform
/// then reads, planning no changes.
#[test]
fn a_terraform_state_goes_into_encryption_and_back_out_by_no_change_applies() {
    if !oracle::require_terraform("a_terraform_state_goes_into_encryption_and_back_out") {
        return;
    }
    let dir = workdir("tfround", RESOURCES);
    let tf = |args: &[&str]| {
        let out = oracle::terraform(&dir, args);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "terraform {args:?}:\n{said}");
        said
    };
    std::fs::write(
        dir.join("terraform.tfvars"),
        format!("secret = \"{SECRET}\"\n"),
    )
    .unwrap();
    tf(&["init", "-no-color"]);
    tf(&["apply", "-auto-approve", "-no-color"]);
    let chain = |first: &str, second: &str| {
        format!("method = method.{first}\n      fallback {{\n        method = method.{second}\n      }}")
    };
    let config = |body: &str| format!("{}{RESOURCES}", encryption(body));
    std::fs::write(
        dir.join("main.tf"),
        config(&chain("aes_gcm.main", "unencrypted.migrate")),
    )
    .unwrap();
    let out = ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
    assert!(out.contains("0 added, 0 changed, 0 destroyed"), "{out}");
    assert_eq!(state_doc(&dir)["encryption_version"], "v0");
    let state = std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap();
    assert!(!state.contains(SECRET));
    std::fs::write(
        dir.join("main.tf"),
        config(&chain("unencrypted.migrate", "aes_gcm.main")),
    )
    .unwrap();
    ok(&dir, PASS, &["apply", "-auto-approve", "-no-color"]);
    assert!(state_doc(&dir).get("encryption_version").is_none());
    std::fs::write(dir.join("main.tf"), RESOURCES).unwrap();
    let plan = tf(&["plan", "-no-color", "-detailed-exitcode"]);
    assert!(plan.contains("No changes."), "{plan}");
}
