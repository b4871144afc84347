//! The built-in utility providers (random, null, time, local) through the
//! binary, as a user meets them: a state the real providers wrote plans no
//! changes (an old schema version upgraded on the way), a fresh apply
//! stores what the providers store, keepers and triggers replace, a file
//! removed outside strata is written again, imports read ids as the
//! providers do, and bad arguments are errors at their line in both
//! `validate` and `plan`.

#[path = "common/run.rs"]
mod run;

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-utility-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

/// Runs strata in `dir`: exit code and everything printed.
fn strata(dir: &Path, args: &[&str]) -> (i32, String) {
    run::strata_in(dir, args)
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let (code, out) = strata(dir, args);
    assert_eq!(code, 0, "strata {args:?}:\n{out}");
    out
}

fn json(text: &str) -> Json {
    serde_json::from_str(text).expect("JSON")
}

/// The attributes of `type_name.name` in the state file in `dir`.
fn stored(dir: &Path, address: &str) -> Json {
    let state = json(&std::fs::read_to_string(dir.join("terraform.tfstate")).expect("state"));
    let (t, n) = address.split_once('.').expect("address");
    let r = state["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["type"] == t && r["name"] == n)
        .unwrap_or_else(|| panic!("{address} not in state"));
    r["instances"][0].clone()
}

/// Each resource's planned actions, from `plan -out` and `show -json`.
fn planned_actions(dir: &Path) -> Vec<(String, Vec<String>)> {
    ok(dir, &["plan", "-out=p.plan"]);
    let plan = json(&ok(dir, &["show", "-json", "p.plan"]));
    plan["resource_changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            let actions = c["change"]["actions"].as_array().expect("actions");
            (
                c["address"].as_str().expect("address").to_string(),
                actions
                    .iter()
                    .map(|a| a.as_str().expect("action").to_string())
                    .collect(),
            )
        })
        .filter(|(_, a)| a != &["no-op"])
        .collect()
}

fn fixture(dir: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/utility");
    std::fs::copy(from.join("main.tf"), dir.join("main.tf")).expect("config");
    std::fs::copy(
        from.join("terraform.tfstate"),
        dir.join("terraform.tfstate"),
    )
    .expect("state");
    std::fs::create_dir_all(dir.join("out")).expect("out");
    std::fs::copy(from.join("kubeconfig"), dir.join("out/kubeconfig")).expect("file");
}

#[test]
fn a_state_the_real_providers_wrote_plans_no_changes() {
    let dir = scratch("real-state");
    fixture(&dir);
    // Terraform's lock file for the same directory keeps its entry: strata
    // neither needs nor drops it.
    let lock = "# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n\nprovider \"registry.terraform.io/hashicorp/random\" {\n  version     = \"3.6.3\"\n  constraints = \"~> 3.6\"\n  hashes = [\n    \"h1:zG9uFP8l9u+yGZZvi5Te7PV62j50azpgwPunq2vTm1E=\",\n  ]\n}\n";
    std::fs::write(dir.join(".terraform.lock.hcl"), lock).expect("lock file");
    let out = ok(&dir, &["init"]);
    let kept = std::fs::read_to_string(dir.join(".terraform.lock.hcl")).expect("lock file");
    assert_eq!(kept, lock, "Terraform's lock file untouched");
    for p in ["random", "null", "time", "local", "tls"] {
        assert!(
            out.contains(&format!("hashicorp/{p} is built in")),
            "{p} needs no download:\n{out}"
        );
    }
    assert_eq!(planned_actions(&dir), vec![], "no changes");
    let (code, out) = strata(&dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 0, "{out}");

    // The key openssl and ssh-keygen made reads back to the public key
    // and fingerprints they gave.
    let out = json(&ok(&dir, &["output", "-json"]));
    assert_eq!(out["same_public_key"]["value"], true, "{out}");
    assert_eq!(out["same_fingerprints"]["value"], true, "{out}");

    // The object random 3.1 stored at schema version 1 is brought up to
    // version 2 (`numeric` from `number`) by a refresh, value kept.
    ok(&dir, &["apply", "-refresh-only", "-auto-approve"]);
    let old = stored(&dir, "random_string.old");
    assert_eq!(old["schema_version"], 2);
    assert_eq!(old["attributes"]["numeric"], true);
    assert_eq!(old["attributes"]["result"], "k3Vq!z");
    let db = stored(&dir, "random_password.db");
    assert_eq!(db["attributes"]["result"], "Xr_9%kq@2LmZp7Tw", "kept");

    // The file changed outside: written again, nothing else.
    std::fs::write(dir.join("out/kubeconfig"), "edited\n").expect("edit");
    assert_eq!(
        planned_actions(&dir),
        vec![(
            "local_file.kubeconfig".to_string(),
            vec!["create".to_string()]
        )]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn apply_stores_what_the_providers_store_and_keepers_replace() {
    let dir = scratch("apply");
    std::fs::write(
        dir.join("main.tf"),
        r#"
resource "random_string" "s" {
  length      = 24
  special     = false
  min_numeric = 20
  keepers     = { v = var.v }
}
resource "random_password" "p" {
  length = 12
}
resource "random_id" "i" {
  byte_length = 6
}
resource "random_integer" "n" {
  min  = 1
  max  = 1000000
  seed = "gpu"
}
resource "random_shuffle" "z" {
  input        = ["a", "b", "c"]
  result_count = 5
}
resource "null_resource" "t" {
  triggers = { s = random_string.s.result }
}
resource "time_static" "fixed" {
  rfc3339 = "2025-02-03T04:05:06Z"
}
resource "local_sensitive_file" "f" {
  filename = "${path.module}/deep/dir/secret"
  content  = random_password.p.result
}
variable "v" {
  default = "1"
}
"#,
    )
    .expect("config");
    ok(&dir, &["init"]);
    let plan = ok(&dir, &["plan"]);
    assert!(
        plan.contains("year    = 2025"),
        "parts of a given time are planned:\n{plan}"
    );
    ok(&dir, &["apply", "-auto-approve"]);

    let s = stored(&dir, "random_string.s");
    let result = s["attributes"]["result"].as_str().expect("result");
    assert_eq!(s["schema_version"], 2);
    assert_eq!(result.len(), 24);
    assert!(
        result.chars().filter(char::is_ascii_digit).count() >= 20,
        "{result}"
    );
    assert_eq!(s["attributes"]["id"], result);
    assert_eq!(s["attributes"]["numeric"], true);

    let p = stored(&dir, "random_password.p");
    assert_eq!(p["schema_version"], 3);
    assert_eq!(p["attributes"]["id"], "none");
    let password = p["attributes"]["result"].as_str().expect("result");
    let hash = p["attributes"]["bcrypt_hash"].as_str().expect("hash");
    assert!(
        hash.starts_with("$2a$10$"),
        "Go's bcrypt version and cost: {hash}"
    );
    assert!(
        bcrypt::verify(password, hash).expect("hash"),
        "the hash is of the result"
    );
    let marked = p["sensitive_attributes"].to_string();
    assert!(
        marked.contains("result") && marked.contains("bcrypt_hash"),
        "{marked}"
    );

    let written = std::fs::read_to_string(dir.join("deep/dir/secret")).expect("file");
    assert_eq!(written, password);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("deep/dir/secret"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "local_sensitive_file's default mode");
    }

    let i = &stored(&dir, "random_id.i")["attributes"];
    assert_eq!(i["hex"].as_str().map(str::len), Some(12));
    assert_eq!(i["b64_url"], i["id"]);

    let n = &stored(&dir, "random_integer.n")["attributes"];
    let z = &stored(&dir, "random_shuffle.z")["attributes"];
    assert_eq!(z["result"].as_array().map(Vec::len), Some(5));
    assert_eq!(z["id"], "-");
    let t = &stored(&dir, "time_static.fixed")["attributes"];
    assert_eq!(
        (t["year"].clone(), t["unix"].clone()),
        (Json::from(2025), Json::from(1738555506))
    );

    assert_eq!(planned_actions(&dir), vec![], "nothing to do after apply");

    // A new keeper replaces the string and, through its trigger, the null
    // resource; the seeded integer is the same number when made again.
    std::fs::write(dir.join("terraform.tfvars"), "v = \"2\"\n").expect("vars");
    let replaced = |a: &str| {
        (
            a.to_string(),
            vec!["delete".to_string(), "create".to_string()],
        )
    };
    assert_eq!(
        planned_actions(&dir),
        vec![replaced("null_resource.t"), replaced("random_string.s")]
    );
    ok(&dir, &["apply", "-auto-approve"]);
    assert_ne!(
        stored(&dir, "random_string.s")["attributes"]["result"],
        result
    );
    ok(&dir, &["destroy", "-auto-approve"]);
    assert!(
        !dir.join("deep/dir/secret").exists(),
        "destroy removes the file"
    );
    ok(&dir, &["apply", "-auto-approve"]);
    assert_eq!(
        &stored(&dir, "random_integer.n")["attributes"]["result"],
        &n["result"],
        "a seed repeats"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn imports_read_ids_as_the_providers_do() {
    let dir = scratch("import");
    std::fs::write(
        dir.join("main.tf"),
        r#"
import {
  to = random_string.s
  id = "hello-world"
}
resource "random_string" "s" {
  length = 11
}
import {
  to = random_id.i
  id = "3q2-7w"
}
resource "random_id" "i" {
  byte_length = 4
}
import {
  to = random_integer.n
  id = "15,1,20"
}
resource "random_integer" "n" {
  min = 1
  max = 20
}
"#,
    )
    .expect("config");
    ok(&dir, &["init"]);
    ok(&dir, &["apply", "-auto-approve"]);
    assert_eq!(
        stored(&dir, "random_string.s")["attributes"]["result"],
        "hello-world"
    );
    assert_eq!(stored(&dir, "random_id.i")["attributes"]["hex"], "deadbeef");
    assert_eq!(stored(&dir, "random_integer.n")["attributes"]["result"], 15);
    assert_eq!(planned_actions(&dir), vec![], "imported as configured");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_arguments_are_errors_at_their_line() {
    let dir = scratch("invalid");
    std::fs::write(
        dir.join("main.tf"),
        r#"resource "random_string" "s" {
  length    = 3
  min_upper = 2
  min_lower = 2
}

resource "random_integer" "n" {
  min = 10
  max = 1
}

resource "local_file" "f" {
  filename = "x"
  content  = "a"
  source   = "b"
}

resource "time_sleep" "w" {
  create_duration = "1d"
}
"#,
    )
    .expect("config");
    ok(&dir, &["init"]);
    for command in ["validate", "plan"] {
        let (code, out) = strata(&dir, &[command]);
        assert_eq!(code, 1, "{command}:\n{out}");
        for (line, text) in [
            (2, "at least sum of min_upper + min_lower"),
            (9, "smaller than or equal to maximum"),
            (15, "Exactly one of these attributes"),
            (19, "must be a number immediately followed by ms"),
        ] {
            assert!(
                out.contains(&format!("main.tf:{line}:")) && out.contains(text),
                "{command}: {text:?} at line {line}:\n{out}"
            );
        }
    }
    assert!(!dir.join("terraform.tfstate").exists(), "nothing applied");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A one-request HTTP server on 127.0.0.1: the port, and the request it
/// got once it answered.
fn serve_once(answer: &'static str) -> (u16, std::thread::JoinHandle<String>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let handle = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&got).contains("\r\n\r\n") {
            let n = s.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        s.write_all(answer.as_bytes()).expect("answer");
        String::from_utf8_lossy(&got).into_owned()
    });
    (port, handle)
}

#[test]
fn data_sources_read_as_the_providers_read() {
    let dir = scratch("data");
    let (port, request) = serve_once(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Twice: a\r\nX-Twice: b\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
    );
    std::fs::create_dir_all(dir.join("app/lib")).expect("dirs");
    std::fs::write(dir.join("app/main.py"), "print(1)\n").expect("file");
    std::fs::write(dir.join("app/lib/cache.pyc"), "x").expect("file");
    std::fs::write(
        dir.join("main.tf"),
        format!(
            r#"
data "http" "h" {{
  url             = "http://127.0.0.1:{port}/x"
  request_headers = {{ Accept = "text/plain" }}
}}
data "external" "e" {{
  program = ["sh", "-c", "read q; echo \"{{\\\"got\\\": $(echo $q | sed 's/.*\"n\":\\(\"[^\"]*\"\\).*/\\1/')}}\""]
  query   = {{ n = "gpu" }}
}}
data "cloudinit_config" "c" {{
  gzip          = false
  base64_encode = false
  part {{
    content_type = "text/cloud-config"
    content      = "a: 1\n"
  }}
}}
data "archive_file" "a" {{
  type        = "zip"
  source_dir  = "${{path.module}}/app"
  excludes    = ["**/*.pyc"]
  output_path = "${{path.module}}/out/app.zip"
}}
output "status" {{ value = data.http.h.status_code }}
output "body" {{ value = data.http.h.response_body }}
output "twice" {{ value = data.http.h.response_headers["X-Twice"] }}
output "got" {{ value = data.external.e.result.got }}
output "rendered" {{ value = data.cloudinit_config.c.rendered }}
output "part_type" {{ value = data.cloudinit_config.c.part[0].content_type }}
output "zip_sha" {{ value = data.archive_file.a.output_sha }}
output "zip_size" {{ value = data.archive_file.a.output_size }}
"#
        ),
    )
    .expect("config");
    ok(&dir, &["init"]);
    ok(&dir, &["apply", "-auto-approve"]);
    let out = json(&ok(&dir, &["output", "-json"]));
    let value = |k: &str| out[k]["value"].clone();
    assert_eq!(value("status"), 200);
    assert_eq!(value("body"), "hello");
    assert_eq!(
        value("twice"),
        "a, b",
        "repeated headers joined, the name as Go spells it"
    );
    assert!(request
        .join()
        .expect("server")
        .to_lowercase()
        .contains("accept: text/plain"));
    assert_eq!(value("got"), "gpu", "the query reached the program");
    assert_eq!(
        value("rendered"),
        "Content-Type: multipart/mixed; boundary=\"MIMEBOUNDARY\"\nMIME-Version: 1.0\r\n\r\n--MIMEBOUNDARY\r\nContent-Transfer-Encoding: 7bit\r\nContent-Type: text/cloud-config\r\nMime-Version: 1.0\r\n\r\na: 1\n\r\n--MIMEBOUNDARY--\r\n"
    );
    assert_eq!(value("part_type"), "text/cloud-config");
    let zip = std::fs::read(dir.join("out/app.zip")).expect("zip written");
    assert_eq!(value("zip_size"), zip.len());
    let sha1: String = {
        use sha1::Digest;
        sha1::Sha1::digest(&zip)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    assert_eq!(value("zip_sha"), sha1.as_str());
    let names = String::from_utf8_lossy(&zip).into_owned();
    assert!(
        names.contains("main.py") && !names.contains("cache.pyc"),
        "excludes apply"
    );

    // A failing program is an error with what it said.
    std::fs::write(
        dir.join("main.tf"),
        "data \"external\" \"e\" {\n  program = [\"sh\", \"-c\", \"echo broken >&2; exit 3\"]\n}\n",
    )
    .expect("config");
    let (code, out) = strata(&dir, &["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("broken"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A TLS server on 127.0.0.1 presenting `cert_pem` for one handshake.
fn tls_once(cert_pem: &str, key_pem: &str) -> (u16, std::thread::JoinHandle<()>) {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = vec![CertificateDer::from_pem_slice(cert_pem.as_bytes()).expect("cert")];
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).expect("key");
    let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server config");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let handle = std::thread::spawn(move || {
        let (mut sock, _) = listener.accept().expect("accept");
        let mut conn = rustls::ServerConnection::new(std::sync::Arc::new(config)).expect("conn");
        while conn.is_handshaking() {
            if conn.complete_io(&mut sock).is_err() {
                break;
            }
        }
    });
    (port, handle)
}

/// `tool args…` with `input` on its standard input: exit code and output.
fn tool(program: &str, args: &[&str], input: &str) -> (i32, String) {
    use std::io::Write;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} is needed (.ci/run installs it): {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("input");
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn tls_keys_and_certificates_are_what_openssl_and_openssh_read() {
    let dir = scratch("tls");
    std::fs::write(
        dir.join("main.tf"),
        r#"
resource "tls_private_key" "rsa" {
  algorithm = "RSA"
}
resource "tls_private_key" "ec" {
  algorithm   = "ECDSA"
  ecdsa_curve = "P384"
}
resource "tls_private_key" "ed" {
  algorithm = "ED25519"
}
resource "tls_self_signed_cert" "c" {
  private_key_pem       = tls_private_key.rsa.private_key_pem
  validity_period_hours = 24
  early_renewal_hours   = 1
  allowed_uses          = ["key_encipherment", "digital_signature", "server_auth"]
  dns_names             = ["localhost"]
  ip_addresses          = ["127.0.0.1"]
  subject {
    common_name  = "strata test"
    organization = "Strata, Inc"
  }
}
resource "tls_self_signed_cert" "ca" {
  private_key_pem       = tls_private_key.ec.private_key_pem
  is_ca_certificate     = true
  validity_period_hours = 48
  allowed_uses          = ["cert_signing", "crl_signing"]
  subject {
    common_name = "strata CA"
  }
}
resource "tls_cert_request" "leaf" {
  private_key_pem = tls_private_key.ed.private_key_pem
  dns_names       = ["leaf.local"]
  subject {
    common_name = "leaf"
  }
}
resource "tls_locally_signed_cert" "leaf" {
  cert_request_pem      = tls_cert_request.leaf.cert_request_pem
  ca_private_key_pem    = tls_private_key.ec.private_key_pem
  ca_cert_pem           = tls_self_signed_cert.ca.cert_pem
  validity_period_hours = 12
  allowed_uses          = ["digital_signature", "client_auth"]
}
data "tls_public_key" "from_openssh" {
  private_key_openssh = tls_private_key.ed.private_key_openssh
}
data "tls_certificate" "c" {
  content = tls_self_signed_cert.c.cert_pem
}
output "ed_public" { value = data.tls_public_key.from_openssh.public_key_openssh }
output "cert" { value = data.tls_certificate.c.certificates[0] }
"#,
    )
    .expect("config");
    ok(&dir, &["init"]);
    ok(&dir, &["apply", "-auto-approve"]);
    let attr = |a: &str, k: &str| {
        stored(&dir, a)["attributes"][k]
            .as_str()
            .expect(k)
            .to_string()
    };

    for (address, preamble, check) in [
        (
            "tls_private_key.rsa",
            "RSA PRIVATE KEY",
            &["rsa", "-check", "-noout"][..],
        ),
        (
            "tls_private_key.ec",
            "EC PRIVATE KEY",
            &["ec", "-check", "-noout"][..],
        ),
        ("tls_private_key.ed", "PRIVATE KEY", &["pkey", "-noout"][..]),
    ] {
        let pem = attr(address, "private_key_pem");
        assert!(
            pem.starts_with(&format!("-----BEGIN {preamble}-----\n")),
            "{address}: {pem}"
        );
        let (code, out) = tool("openssl", check, &pem);
        assert_eq!(code, 0, "openssl reads {address}: {out}");
        // The public key openssl derives is the one stored.
        let (_, public) = tool(
            "openssl",
            &["pkey", "-pubout"],
            &attr(address, "private_key_pem_pkcs8"),
        );
        assert_eq!(public, attr(address, "public_key_pem"), "{address}");
        // ssh-keygen reads the OpenSSH private key back to the stored
        // public key.
        let key_file = dir.join(format!("{address}.key"));
        std::fs::write(&key_file, attr(address, "private_key_openssh")).expect("key");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600))
                .expect("mode");
        }
        let (code, derived) = tool(
            "ssh-keygen",
            &["-y", "-f", key_file.to_str().expect("path")],
            "",
        );
        assert_eq!(code, 0, "ssh-keygen reads {address}: {derived}");
        assert_eq!(
            derived.trim(),
            attr(address, "public_key_openssh").trim(),
            "{address}"
        );
        let (_, fingerprint) = tool(
            "ssh-keygen",
            &["-l", "-f", "/dev/stdin"],
            &attr(address, "public_key_openssh"),
        );
        assert!(
            fingerprint.contains(&attr(address, "public_key_fingerprint_sha256")),
            "{fingerprint}"
        );
    }
    assert_eq!(stored(&dir, "tls_private_key.rsa")["schema_version"], 1);

    let out = json(&ok(&dir, &["output", "-json"]));
    assert_eq!(
        out["ed_public"]["value"],
        attr("tls_private_key.ed", "public_key_openssh")
    );
    let cert = &out["cert"]["value"];
    assert_eq!(cert["subject"], "CN=strata test,O=Strata\\, Inc");
    assert_eq!(cert["issuer"], cert["subject"], "self-signed");
    assert_eq!(
        (
            cert["signature_algorithm"].clone(),
            cert["public_key_algorithm"].clone()
        ),
        (Json::from("SHA256-RSA"), Json::from("RSA"))
    );
    assert_eq!(
        (cert["is_ca"].clone(), cert["version"].clone()),
        (Json::from(false), Json::from(3))
    );
    assert_eq!(
        cert["serial_number"].as_str(),
        Some(attr("tls_self_signed_cert.c", "id").as_str())
    );
    let pem = attr("tls_self_signed_cert.c", "cert_pem");
    let (code, text) = tool("openssl", &["x509", "-noout", "-text"], &pem);
    assert_eq!(code, 0, "{text}");
    for want in [
        "DNS:localhost",
        "IP Address:127.0.0.1",
        "TLS Web Server Authentication",
        "Digital Signature, Key Encipherment",
    ] {
        assert!(text.contains(want), "{want} in:\n{text}");
    }
    assert_eq!(planned_actions(&dir), vec![], "nothing to do after apply");

    // A local CA: the request verifies, and the certificate it signed
    // verifies against the CA's and carries the request's names.
    let (code, out) = tool(
        "openssl",
        &["req", "-verify", "-noout"],
        &attr("tls_cert_request.leaf", "cert_request_pem"),
    );
    assert_eq!(code, 0, "{out}");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, attr("tls_self_signed_cert.ca", "cert_pem")).expect("ca");
    let leaf = attr("tls_locally_signed_cert.leaf", "cert_pem");
    let (code, out) = tool(
        "openssl",
        &["verify", "-CAfile", ca_file.to_str().expect("path")],
        &leaf,
    );
    assert_eq!(code, 0, "the leaf verifies against the CA: {out}");
    let (_, text) = tool("openssl", &["x509", "-noout", "-text"], &leaf);
    for want in [
        "Issuer: CN = strata CA",
        "Subject: CN = leaf",
        "DNS:leaf.local",
        "TLS Web Client Authentication",
        "ED25519",
    ] {
        assert!(text.contains(want), "{want} in:\n{text}");
    }
    assert_eq!(
        attr("tls_locally_signed_cert.leaf", "ca_key_algorithm"),
        "ECDSA"
    );

    // The same certificate read from a server's handshake.
    let (port, server) = tls_once(&pem, &attr("tls_private_key.rsa", "private_key_pem_pkcs8"));
    std::fs::write(
        dir.join("served.tf"),
        format!("data \"tls_certificate\" \"served\" {{\n  url          = \"tls://127.0.0.1:{port}\"\n  verify_chain = false\n}}\noutput \"served\" {{ value = data.tls_certificate.served.certificates[0].sha1_fingerprint }}\n"),
    )
    .expect("config");
    ok(&dir, &["apply", "-auto-approve"]);
    server.join().expect("server");
    let out = json(&ok(&dir, &["output", "-json"]));
    assert_eq!(
        out["served"]["value"],
        out["cert"]["value"]["sha1_fingerprint"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn time_rotating_is_made_again_once_its_rotation_has_passed() {
    let dir = scratch("rotating");
    let config = |days: i64| {
        format!(
            "resource \"time_rotating\" \"old\" {{\n  rfc3339       = \"2020-01-01T00:00:00Z\"\n  rotation_days = 30\n}}\nresource \"time_rotating\" \"key\" {{\n  rotation_days = {days}\n}}\n"
        )
    };
    std::fs::write(dir.join("main.tf"), config(30)).expect("config");
    ok(&dir, &["init"]);
    ok(&dir, &["apply", "-auto-approve"]);
    let old = &stored(&dir, "time_rotating.old")["attributes"];
    assert_eq!(old["rotation_rfc3339"], "2020-01-31T00:00:00Z");
    assert_eq!(
        (
            old["year"].clone(),
            old["month"].clone(),
            old["day"].clone()
        ),
        (Json::from(2020), Json::from(1), Json::from(31))
    );
    // Its rotation time has passed: the next plan makes it again; the
    // other rotates in 30 days and stays.
    assert_eq!(
        planned_actions(&dir),
        vec![("time_rotating.old".to_string(), vec!["create".to_string()])]
    );
    // A new rotation period moves the rotation time in place.
    let key = stored(&dir, "time_rotating.key")["attributes"].clone();
    std::fs::write(dir.join("main.tf"), config(60)).expect("config");
    let plan = ok(&dir, &["plan"]);
    assert!(
        plan.contains("time_rotating.key will be updated in-place"),
        "{plan}"
    );
    ok(&dir, &["apply", "-auto-approve"]);
    let moved = &stored(&dir, "time_rotating.key")["attributes"];
    assert_eq!(moved["id"], key["id"], "same base");
    let at = |v: &Json| v["unix"].as_i64().expect("unix");
    assert_eq!(at(moved) - at(&key), 30 * 86_400, "30 more days");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_null_resource_moves_to_terraform_data_as_terraform_moves_it() {
    let dir = scratch("moved");
    std::fs::write(
        dir.join("main.tf"),
        "resource \"null_resource\" \"x\" {\n  triggers = { a = \"1\" }\n}\n",
    )
    .expect("config");
    ok(&dir, &["init"]);
    ok(&dir, &["apply", "-auto-approve"]);
    let id = stored(&dir, "null_resource.x")["attributes"]["id"].clone();
    std::fs::write(
        dir.join("main.tf"),
        "resource \"terraform_data\" \"x\" {\n  triggers_replace = { a = \"1\" }\n}\n\nmoved {\n  from = null_resource.x\n  to   = terraform_data.x\n}\n",
    )
    .expect("config");
    let plan = ok(&dir, &["plan"]);
    assert!(
        plan.contains("# null_resource.x has moved to terraform_data.x"),
        "{plan}"
    );
    assert!(
        plan.contains("Plan: 0 to add, 0 to change, 0 to destroy."),
        "{plan}"
    );
    ok(&dir, &["apply", "-auto-approve"]);
    let moved = stored(&dir, "terraform_data.x");
    assert_eq!(moved["attributes"]["id"], id, "the same id");
    assert_eq!(
        moved["attributes"]["triggers_replace"]["value"],
        serde_json::json!({ "a": "1" })
    );
    let state = json(&std::fs::read_to_string(dir.join("terraform.tfstate")).expect("state"));
    assert_eq!(
        state["resources"][0]["provider"],
        "provider[\"terraform.io/builtin/terraform\"]"
    );
    assert_eq!(planned_actions(&dir), vec![], "nothing more to do");

    // A type whose driver takes no such moves is refused at the block.
    std::fs::write(
        dir.join("main.tf"),
        "resource \"random_uuid\" \"x\" {}\n\nmoved {\n  from = terraform_data.x\n  to   = random_uuid.x\n}\n",
    )
    .expect("config");
    let (code, out) = strata(&dir, &["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Unsupported `moved` across resource types") && out.contains("main.tf:3"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
