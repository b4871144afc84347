//! The state backends against real stores: the conformance suite (state
//! crate, `conformance`) on a directory, on moto's S3 and on a PostgreSQL
//! server from Debian's packages (`.ci/postgres`, started by `.ci/run`,
//! which sets STRATA_PG_CONN); then the binary with `backend` blocks:
//! apply, lock, workspaces, and a state moved local → S3 → PostgreSQL →
//! local with `state pull` / `state push`.

mod common;

use common::moto::{self, Moto};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use strata_state::{conformance, Store};
use strata_state_pg::{PgBackend, PgConfig};
use strata_state_s3::{S3Backend, S3Config};

/// Where the conformance children find the parent's store.
const DIR: &str = "STRATA_TEST_STATE_DIR";
const S3_URL: &str = "STRATA_TEST_S3_URL";
const BUCKET: &str = "strata-state";

fn pg_conn() -> String {
    std::env::var("STRATA_PG_CONN").unwrap_or_else(|_| {
        panic!("the PostgreSQL backend tests need a server: run ./.ci/run, or start one with `.ci/postgres start DIR` and set STRATA_PG_CONN to the connection string it prints")
    })
}

fn s3_config(url: &str, key: &str) -> S3Config {
    S3Config {
        bucket: BUCKET.into(),
        key: key.into(),
        region: Some("us-east-1".into()),
        endpoint: Some(url.into()),
        access_key: Some("testing".into()),
        secret_key: Some("testing".into()),
        use_path_style: true,
        encrypt: true,
        workspace_key_prefix: strata_state_s3::DEFAULT_WORKSPACE_PREFIX.into(),
        workspace: "default".into(),
        ..S3Config::default()
    }
}

fn pg_store(workspace: &str) -> Store {
    Store::new(
        PgBackend::new(PgConfig {
            conn_str: pg_conn(),
            schema_name: "strata_conformance".into(),
            workspace: workspace.into(),
        })
        .expect("pg backend"),
    )
}

/// An SDK client on the same moto, for looking behind the backend's back.
fn s3_client(url: &str) -> (tokio::runtime::Runtime, aws_sdk_s3::Client) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let conf = rt.block_on(
        aws_config::defaults(aws_config::BehaviorVersion::latest())
            .endpoint_url(url)
            .region(aws_config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_s3::config::Credentials::new(
                "testing", "testing", None, None, "test",
            ))
            .load(),
    );
    let client = aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(&conf)
            .force_path_style(true)
            .build(),
    );
    (rt, client)
}

/// A fresh bucket on moto.
fn bucket(url: &str) {
    let (rt, s3) = s3_client(url);
    rt.block_on(s3.create_bucket().bucket(BUCKET).send())
        .expect("bucket");
}

/// The object keys in the test bucket.
fn objects(url: &str) -> Vec<String> {
    let (rt, s3) = s3_client(url);
    let out = rt
        .block_on(s3.list_objects_v2().bucket(BUCKET).send())
        .expect("list");
    let mut keys: Vec<String> = out
        .contents()
        .iter()
        .filter_map(|o| o.key().map(str::to_string))
        .collect();
    keys.sort();
    keys
}

#[test]
fn conformance_local() {
    let dir = match std::env::var(DIR) {
        Ok(d) => PathBuf::from(d),
        Err(_) => common::scratch("state", "conformance"),
    };
    let open = |name: &str| Store::local(dir.join(format!("{name}.tfstate")));
    conformance::run(
        "conformance_local",
        "",
        &[(DIR, dir.display().to_string())],
        &open,
    );
}

#[test]
fn conformance_s3_on_moto() {
    // The crash trials' children reuse the parent's moto.
    let (_moto, url) = match std::env::var(S3_URL) {
        Ok(url) => (None, url),
        Err(_) => {
            let m = moto::moto();
            bucket(&m.url);
            let url = m.url.clone();
            (Some(m), url)
        }
    };
    let open = |name: &str| {
        Store::new(
            S3Backend::new(s3_config(&url, &format!("{name}/strata.tfstate"))).expect("s3 backend"),
        )
    };
    conformance::run(
        "conformance_s3_on_moto",
        "",
        &[(S3_URL, url.clone())],
        &open,
    );
    // Nothing is left behind but states, their backups and the history
    // the crash trials wrote: no lock objects, no journal chunks.
    let kept = ["strata.tfstate", ".backup", ".history"];
    let left: Vec<String> = objects(&url)
        .into_iter()
        .filter(|k| !kept.iter().any(|end| k.ends_with(end)))
        .collect();
    assert_eq!(left, Vec::<String>::new(), "objects left in the bucket");
}

#[test]
fn conformance_pg() {
    // Workspaces of a schema kept between runs: a prefix per run.
    let prefix = match std::env::var("STRATA_TEST_PG_PREFIX") {
        Ok(p) => p,
        Err(_) => format!("run{}-{}-", std::process::id(), nanos()),
    };
    conformance::run(
        "conformance_pg",
        &prefix,
        &[("STRATA_TEST_PG_PREFIX", prefix.clone())],
        &pg_store,
    );
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

fn strata(dir: &Path, m: &Moto, env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let mut c = common::run::strata(dir);
    c.args(args);
    moto::env_for(&mut c, m);
    c.env("PG_CONN_STR", pg_conn());
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("strata runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const RESOURCES: &str = r#"
resource "terraform_data" "pool" {
  for_each = toset(["h100", "a100"])
  input    = "${each.key}-${terraform.workspace}"
}
output "pools" { value = { for k, v in terraform_data.pool : k => v.output } }
"#;

fn configure(dir: &Path, backend: &str) {
    std::fs::write(
        dir.join("main.tf"),
        format!("terraform {{\n{backend}\n}}\n{RESOURCES}"),
    )
    .expect("config");
}

fn s3_block(m: &Moto) -> String {
    format!(
        r#"  backend "s3" {{
    bucket         = "{BUCKET}"
    key            = "gpu/strata.tfstate"
    region         = "us-east-1"
    endpoints      = {{ s3 = "{}" }}
    use_path_style = true
    encrypt        = true
  }}"#,
        m.url
    )
}

fn lineage_serial(json: &str) -> (String, u64) {
    let v: serde_json::Value = serde_json::from_str(json).expect("state JSON");
    (
        v["lineage"].as_str().unwrap_or_default().to_string(),
        v["serial"].as_u64().unwrap_or_default(),
    )
}

#[test]
fn a_state_moves_from_local_to_s3_to_postgres_and_back_with_pull_and_push() {
    let m = moto::moto();
    bucket(&m.url);
    let d = common::scratch("state", "migrate");
    let schema = format!("strata_migrate_{}", std::process::id());

    // Local first.
    configure(&d, "");
    let (code, out, err) = strata(&d, &m, &[], &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, local, err) = strata(&d, &m, &[], &["state", "pull"]);
    assert_eq!(code, 0, "{err}");
    let (lineage, serial) = lineage_serial(&local);
    std::fs::write(d.join("pulled.json"), &local).expect("pulled");

    // To S3: the same lineage, a newer serial, and a plan with nothing to do.
    configure(&d, &s3_block(&m));
    let (code, out, err) = strata(&d, &m, &[], &["state", "push", "pulled.json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("s3://strata-state/gpu/strata.tfstate"),
        "{out}"
    );
    let (code, out, err) = strata(&d, &m, &[], &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "the state in S3 describes everything:\n{out}{err}");
    let (_, on_s3, _) = strata(&d, &m, &[], &["state", "pull"]);
    let (l, s) = lineage_serial(&on_s3);
    assert_eq!(l, lineage);
    assert!(s >= serial, "serial went back from {serial} to {s}");
    assert_eq!(
        objects(&m.url),
        vec!["gpu/strata.tfstate".to_string()],
        "a push leaves only the state (no lock, no journal)"
    );

    // An apply through S3 journals and writes there, and unlocks.
    std::fs::write(
        d.join("more.tf"),
        "resource \"terraform_data\" \"extra\" { input = 1 }\n",
    )
    .expect("more");
    let (code, out, err) = strata(&d, &m, &[], &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 added"), "{out}");
    let keys = objects(&m.url);
    assert_eq!(
        keys,
        vec![
            "gpu/strata.tfstate".to_string(),
            "gpu/strata.tfstate.backup".to_string()
        ]
    );

    // A second push of the same file is refused: S3 has moved on.
    let (code, _, err) = strata(&d, &m, &[], &["state", "push", "pulled.json"]);
    assert_eq!(code, 1);
    assert!(err.contains("newer than the state given"), "{err}");

    // To PostgreSQL.
    let (_, on_s3, _) = strata(&d, &m, &[], &["state", "pull"]);
    std::fs::write(d.join("pulled.json"), &on_s3).expect("pulled");
    configure(
        &d,
        &format!("  backend \"pg\" {{\n    schema_name = \"{schema}\"\n  }}"),
    );
    let (code, out, err) = strata(&d, &m, &[], &["state", "push", "pulled.json"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = strata(&d, &m, &[], &["plan", "--detailed-exitcode"]);
    assert_eq!(
        code, 0,
        "the state in PostgreSQL describes everything:\n{out}{err}"
    );
    let (code, out, _) = strata(&d, &m, &[], &["state", "list"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "terraform_data.extra\nterraform_data.pool[\"a100\"]\nterraform_data.pool[\"h100\"]\n"
    );

    // A workspace is a row of its own, and terraform.workspace says which.
    let staging = [("STRATA_WORKSPACE", "staging")];
    let (code, out, err) = strata(&d, &m, &staging, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("3 added"), "staging starts empty:\n{out}");
    let (_, out, _) = strata(&d, &m, &staging, &["output", "pools"]);
    assert!(out.contains("h100-staging"), "{out}");
    let (_, out, _) = strata(&d, &m, &[], &["output", "pools"]);
    assert!(out.contains("h100-default"), "{out}");

    // Another configuration reads these outputs through
    // terraform_remote_state, from PostgreSQL and from S3.
    let reader = d.join("reader");
    std::fs::create_dir_all(&reader).expect("reader dir");
    std::fs::write(
        reader.join("main.tf"),
        format!(
            r#"
data "terraform_remote_state" "pg" {{
  backend   = "pg"
  workspace = "staging"
  config    = {{ schema_name = "{schema}" }}
}}
data "terraform_remote_state" "s3" {{
  backend = "s3"
  config = {{
    bucket         = "{BUCKET}"
    key            = "gpu/strata.tfstate"
    region         = "us-east-1"
    endpoints      = {{ s3 = "{}" }}
    use_path_style = true
  }}
}}
output "staging" {{ value = data.terraform_remote_state.pg.outputs.pools["h100"] }}
output "from_s3" {{ value = data.terraform_remote_state.s3.outputs.pools["a100"] }}
"#,
            m.url
        ),
    )
    .expect("reader config");
    let (code, out, err) = strata(&reader, &m, &[], &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    let (_, out, _) = strata(&reader, &m, &[], &["output", "staging"]);
    assert_eq!(out, "\"h100-staging\"\n");
    let (_, out, _) = strata(&reader, &m, &[], &["output", "from_s3"]);
    assert_eq!(out, "\"a100-default\"\n");

    // Back to a local file, which must not exist yet.
    let (_, on_pg, _) = strata(&d, &m, &[], &["state", "pull"]);
    assert_eq!(lineage_serial(&on_pg).0, lineage);
    std::fs::write(d.join("pulled.json"), &on_pg).expect("pulled");
    std::fs::remove_file(d.join("terraform.tfstate")).expect("old local state");
    configure(&d, "");
    let (code, out, err) = strata(&d, &m, &[], &["state", "push", "pulled.json"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = strata(&d, &m, &[], &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn backend_mistakes_are_errors_that_point_at_the_block() {
    let m = moto::moto();
    let d = common::scratch("state", "mistakes");
    let cases: [(&str, &str); 5] = [
        (
            "  backend \"s3\" {\n    bucket = \"b\"\n    key = \"k\"\n    dynamodb_tabel = \"locks\"\n  }",
            "Did you mean \"dynamodb_table\"?",
        ),
        (
            "  backend \"s3\" {\n    bucket = \"b\"\n    key = \"k\"\n    dynamodb_table = \"locks\"\n  }",
            "no DynamoDB table is needed",
        ),
        (
            "  backend \"s3\" {\n    key = \"k\"\n  }",
            "needs \"bucket\"",
        ),
        (
            "  backend \"consul\" {\n  }",
            "not \"consul\"",
        ),
        (
            "  backend \"s3\" {\n    bucket = var.bucket\n    key = \"k\"\n  }",
            "must be a constant",
        ),
    ];
    for (block, says) in cases {
        configure(&d, block);
        let (code, out, err) = strata(&d, &m, &[], &["plan"]);
        assert_eq!(code, 1, "{block}\n{out}{err}");
        // miette wraps long lines.
        let flat = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(says), "{block}: {err}");
        assert!(err.contains("main.tf:"), "no source location: {err}");
    }
    configure(&d, &s3_block(&m));
    let (code, _, err) = strata(&d, &m, &[], &["plan", "--state", "x.tfstate"]);
    assert_eq!(code, 1);
    let flat = err.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("would split the state in two"), "{err}");
}

#[test]
fn a_remote_lock_names_its_holder_until_force_unlock() {
    let m = moto::moto();
    bucket(&m.url);
    let d = common::scratch("state", "remote-lock");
    configure(&d, &s3_block(&m));
    let store = Store::new(S3Backend::new(s3_config(&m.url, "gpu/strata.tfstate")).expect("s3"));
    let lock = store.lock("apply").expect("lock");
    let id = lock.info.id.clone();
    std::mem::forget(lock); // a run that died holding it
    let (code, _, err) = strata(&d, &m, &[], &["apply", "--auto-approve"]);
    assert_eq!(code, 1);
    assert!(err.contains("locked by") && err.contains(&id), "{err}");
    let (code, out, err) = strata(&d, &m, &[], &["force-unlock", &id]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("unlocked"));
    let (code, out, err) = strata(&d, &m, &[], &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
}

/// `workspace new|list|select|delete` over S3 and PostgreSQL as over a
/// directory: a new workspace is listed at once, is where the next apply
/// goes (the choice kept in `.terraform/environment`), cannot be deleted
/// while it tracks objects unless forced, and leaves nothing behind.
#[test]
fn workspace_commands_work_over_s3_and_postgres() {
    let m = moto::moto();
    bucket(&m.url);
    let schema = format!("strata_ws_{}", std::process::id());
    let pg_block = format!("  backend \"pg\" {{\n    schema_name = \"{schema}\"\n  }}");
    for (name, block) in [("s3", s3_block(&m)), ("pg", pg_block)] {
        let d = common::scratch("state", &format!("workspaces-{name}"));
        configure(&d, &block);
        let run = |args: &[&str]| strata(&d, &m, &[], args);
        let (code, out, err) = run(&["apply", "--auto-approve"]);
        assert_eq!(code, 0, "{name}: {out}{err}");
        let (code, out, err) = run(&["workspace", "new", "staging"]);
        assert_eq!(code, 0, "{name}: {out}{err}");
        assert!(
            out.contains("Created and switched to workspace \"staging\"!"),
            "{out}"
        );
        let (_, out, _) = run(&["workspace", "list"]);
        assert_eq!(out, "  default\n* staging\n\n", "{name}");
        let (code, out, err) = run(&["apply", "--auto-approve"]);
        assert_eq!(code, 0, "{name}: {out}{err}");
        assert!(
            out.contains("2 added"),
            "{name}: staging starts empty:\n{out}"
        );
        let (_, out, _) = run(&["output", "pools"]);
        assert!(out.contains("h100-staging"), "{name}: {out}");
        let (code, out, _) = run(&["workspace", "select", "default"]);
        assert_eq!(code, 0, "{name}: {out}");
        let (_, out, _) = run(&["output", "pools"]);
        assert!(out.contains("h100-default"), "{name}: {out}");
        let (code, _, err) = run(&["workspace", "delete", "staging"]);
        assert_eq!(code, 1, "{name}: a workspace tracking objects stays");
        assert!(err.contains("Workspace is not empty"), "{name}: {err}");
        let (code, out, err) = run(&["workspace", "delete", "-force", "staging"]);
        assert_eq!(code, 0, "{name}: {out}{err}");
        assert!(out.contains("was non-empty"), "{name}: {out}");
        let (_, out, _) = run(&["workspace", "list"]);
        assert_eq!(out, "* default\n\n", "{name}");
        let (code, _, err) = run(&["workspace", "select", "staging"]);
        assert_eq!(code, 1, "{name}: {err}");
        let (code, out, err) = run(&["destroy", "--auto-approve"]);
        assert_eq!(code, 0, "{name}: {out}{err}");
    }
    // Nothing of the deleted workspace is left in the bucket.
    let left: Vec<String> = objects(&m.url)
        .into_iter()
        .filter(|k| k.contains("staging"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}

/// A partial `backend "s3" {}` completed by `init -backend-config`, with
/// `key=value` arguments and a file, kept for the commands after init: the
/// apply writes its state where the settings say, and a plan reads it.
#[test]
fn init_backend_config_completes_a_partial_backend() {
    let m = moto::moto();
    bucket(&m.url);
    let d = common::scratch("state", "backend-config");
    configure(&d, "  backend \"s3\" {}");
    std::fs::write(
        d.join("s3.tfbackend"),
        format!(
            "endpoints      = {{ s3 = \"{}\" }}\nuse_path_style = true\n",
            m.url
        ),
    )
    .expect("settings file");
    let (code, out, err) = strata(&d, &m, &[], &["plan"]);
    assert_eq!(code, 1, "no bucket before init:\n{out}{err}");
    let (code, out, err) = strata(
        &d,
        &m,
        &[],
        &[
            "init",
            "-backend-config=bucket=strata-state",
            "-backend-config",
            "key=partial/strata.tfstate",
            "-backend-config=region=us-east-1",
            "-backend-config=s3.tfbackend",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("Successfully configured the backend \"s3\""),
        "{out}"
    );
    let (code, out, err) = strata(&d, &m, &[], &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        objects(&m.url).contains(&"partial/strata.tfstate".to_string()),
        "{:?}",
        objects(&m.url)
    );
    assert!(
        !d.join("terraform.tfstate").exists(),
        "nothing written locally"
    );
    let (code, out, err) = strata(&d, &m, &[], &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 0, "the state in S3 describes everything:\n{out}{err}");
    let (code, out, err) = strata(&d, &m, &[], &["destroy", "-auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
}

/// `init -migrate-state` moves a state between real backends: a local
/// state (two workspaces) to S3 on moto, then S3 to PostgreSQL; each move
/// keeps the lineage, and a plan afterwards has nothing to do.
#[test]
fn init_migrate_state_moves_states_from_local_to_s3_to_postgres() {
    let m = moto::moto();
    bucket(&m.url);
    let d = common::scratch("state", "init-migrate");
    let schema = format!("strata_initmig_{}", std::process::id());
    configure(&d, "");
    let staging = [("STRATA_WORKSPACE", "staging")];
    for env in [&[][..], &staging[..]] {
        let (code, out, err) = strata(&d, &m, env, &["apply", "--auto-approve"]);
        assert_eq!(code, 0, "{out}{err}");
    }
    let (_, local, _) = strata(&d, &m, &[], &["state", "pull"]);
    let (lineage, _) = lineage_serial(&local);

    configure(&d, &s3_block(&m));
    let (code, out, err) = strata(&d, &m, &[], &["plan"]);
    assert_eq!(code, 1, "a plan over the unmoved state:\n{out}{err}");
    assert!(err.contains("Backend initialization required"), "{err}");
    let (code, out, err) = strata(&d, &m, &[], &["init", "-input=false", "-force-copy"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        objects(&m.url),
        vec![
            "env:/staging/gpu/strata.tfstate".to_string(),
            "gpu/strata.tfstate".to_string()
        ],
        "both workspaces moved"
    );
    let (_, on_s3, _) = strata(&d, &m, &[], &["state", "pull"]);
    assert_eq!(lineage_serial(&on_s3).0, lineage);
    for env in [&[][..], &staging[..]] {
        let (code, out, err) = strata(&d, &m, env, &["plan", "--detailed-exitcode"]);
        assert_eq!(code, 0, "the moved state describes everything:\n{out}{err}");
    }

    configure(
        &d,
        &format!("  backend \"pg\" {{\n    schema_name = \"{schema}\"\n  }}"),
    );
    let (code, _, err) = strata(&d, &m, &[], &["init", "-input=false"]);
    assert_eq!(code, 1);
    assert!(err.contains("Backend configuration changed"), "{err}");
    let (code, out, err) = strata(&d, &m, &[], &["init", "-migrate-state", "-force-copy"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Backend configuration changed!"), "{out}");
    let (code, out, _) = strata(&d, &m, &staging, &["state", "list"]);
    assert_eq!(code, 0);
    assert!(out.contains("terraform_data.pool"), "{out}");
    let (code, out, err) = strata(&d, &m, &[], &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
}

/// Ctrl-C (and SIGTERM) in an apply through S3 and PostgreSQL, while an
/// operation is in flight: "Interrupt received", the operation finishes,
/// the state is written and the lock released (before, the S3 lock stayed
/// until force-unlock and blocked every later run), and the next apply
/// finishes the job with no force-unlock.
#[test]
fn an_interrupted_remote_apply_writes_its_state_and_lets_go() {
    let m = moto::moto();
    bucket(&m.url);
    let schema = format!("interrupt_{}", nanos() % 1_000_000_000);
    let slow = r#"
resource "terraform_data" "first" {
  input = 1
  provisioner "local-exec" {
    command = "sleep 2"
  }
}
resource "terraform_data" "after" {
  input = terraform_data.first.output
}
"#;
    let backends = [
        (s3_block(&m), libc::SIGINT),
        (
            format!("  backend \"pg\" {{\n    schema_name = \"{schema}\"\n  }}"),
            libc::SIGTERM,
        ),
    ];
    for (backend, signal) in backends {
        let d = common::scratch("state", &format!("interrupt-{signal}"));
        std::fs::write(
            d.join("main.tf"),
            format!("terraform {{\n{backend}\n}}\n{slow}"),
        )
        .expect("config");
        let mut c = common::run::strata(&d);
        c.args(["apply", "-auto-approve", "-no-color"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        moto::env_for(&mut c, &m);
        c.env("PG_CONN_STR", pg_conn());
        let mut child = c.spawn().expect("strata starts");
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut said = String::new();
        while !said.contains("Provisioning with 'local-exec'") {
            let mut line = String::new();
            let n = std::io::BufRead::read_line(&mut stdout, &mut line).expect("a line");
            assert!(n > 0, "the apply ended before provisioning: {said}");
            said.push_str(&line);
        }
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut rest).expect("the rest");
        let out = child.wait_with_output().expect("strata ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{said}{rest}\n{err}");
        assert!(
            rest.contains("Interrupt received") || err.contains("Interrupt received"),
            "{rest}\n{err}"
        );
        assert!(
            rest.contains("terraform_data.first: Creation complete"),
            "the operation in flight finished: {rest}"
        );
        let (code, out, err) = strata(&d, &m, &[], &["state", "list"]);
        assert_eq!(
            (code, out.as_str()),
            (0, "terraform_data.first\n"),
            "what finished was written, and the lock let go: {err}"
        );
        let (code, out, err) = strata(&d, &m, &[], &["apply", "-auto-approve"]);
        assert_eq!(
            code, 0,
            "the next apply needs no force-unlock:\n{out}\n{err}"
        );
        assert!(out.contains("1 added"), "{out}");
    }
    assert_eq!(
        objects(&m.url),
        ["gpu/strata.tfstate", "gpu/strata.tfstate.backup"],
        "no lock and no journal left in the bucket"
    );
}

/// A lock the backend would not let go of is said as Terraform says it,
/// with what to do, and the apply that held it still succeeds: what it did
/// is in the state. The lock then stops the next run until force-unlock.
#[test]
fn a_lock_that_cannot_be_released_is_said_and_force_unlock_clears_it() {
    let m = moto::moto();
    bucket(&m.url);
    let d = common::scratch("state", "unreleased-lock");
    configure(&d, &s3_block(&m));
    m.proxy.inject(strata_standin::Injection {
        matching: vec!["DELETE ".into(), "strata.tfstate.tflock".into()],
        times: 1,
        status: 403,
        headers: vec![("content-type".into(), "application/xml".into())],
        body: "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>".into(),
    });
    let (code, out, err) = strata(&d, &m, &[], &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Apply complete!"), "{out}");
    for said in [
        "Warning: Error releasing the state lock",
        "Error message: ",
        "AccessDenied",
        "please call the \"force-unlock\" command",
    ] {
        assert!(err.contains(said), "{said:?} not in:\n{err}");
    }
    assert!(objects(&m.url).contains(&"gpu/strata.tfstate.tflock".to_string()));
    let (rt, s3) = s3_client(&m.url);
    let held = rt
        .block_on(
            s3.get_object()
                .bucket(BUCKET)
                .key("gpu/strata.tfstate.tflock")
                .send(),
        )
        .expect("the lock object");
    let held = rt.block_on(held.body.collect()).expect("its body");
    let info: serde_json::Value = serde_json::from_slice(&held.into_bytes()).expect("lock info");
    let id = info["ID"].as_str().expect("its ID").to_string();
    let (code, _, err) = strata(&d, &m, &[], &["plan"]);
    assert_eq!(code, 1);
    assert!(err.contains(&id), "{err}");
    let (code, _, err) = strata(&d, &m, &[], &["force-unlock", &id]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = strata(&d, &m, &[], &["plan"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("No changes."), "{out}");
}

/// OpenTofu's `encryption` over remote backends: what S3 and PostgreSQL
/// hold is only the sealed document (read behind strata's back, no
/// sensitive value in it; a store without the key calls it encrypted),
/// `init -migrate-state` carries it from S3 to PostgreSQL under the key,
/// and strata with the key plans over it.
#[test]
fn remote_backends_hold_only_ciphertext_of_an_encrypted_state() {
    use strata_state::Backend;
    const SECRET: &str = "remote-secret-never-in-clear";
    let m = moto::moto();
    bucket(&m.url);
    let d = common::scratch("state", "encrypted");
    let schema = format!("strata_enc_{}", std::process::id());
    let encryption = r#"
  encryption {
    key_provider "pbkdf2" "k" {
      passphrase = "correct-horse-battery-staple"
    }
    method "aes_gcm" "m" {
      keys = key_provider.pbkdf2.k
    }
    state {
      method = method.aes_gcm.m
    }
  }"#;
    let resources = "variable \"secret\" {\n  sensitive = true\n}\nresource \"terraform_data\" \"s\" {\n  input = var.secret\n}\n";
    let write = |backend: &str| {
        std::fs::write(
            d.join("main.tf"),
            format!("terraform {{\n{backend}\n{encryption}\n}}\n{resources}"),
        )
        .expect("config");
    };
    let env = [("TF_VAR_secret", SECRET)];
    write(&s3_block(&m));
    let (code, out, err) = strata(&d, &m, &env, &["init", "-input=false"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = strata(&d, &m, &env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    let sealed_alone = |text: Option<String>| {
        let text = text.expect("a stored state");
        assert!(!text.contains(SECRET), "{text}");
        assert!(text.contains("\"encryption_version\":\"v0\""), "{text}");
    };
    let s3 = || S3Backend::new(s3_config(&m.url, "gpu/strata.tfstate")).expect("s3 backend");
    sealed_alone(s3().read().expect("read").state);
    assert!(matches!(
        Store::new(s3()).load(),
        Err(strata_state::StateError::Encrypted { .. })
    ));
    write(&format!(
        "  backend \"pg\" {{\n    schema_name = \"{schema}\"\n  }}"
    ));
    let (code, out, err) = strata(&d, &m, &env, &["init", "-migrate-state", "-force-copy"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Backend configuration changed!"), "{out}");
    let pg = PgBackend::new(PgConfig {
        conn_str: pg_conn(),
        schema_name: schema.clone(),
        workspace: "default".into(),
    })
    .expect("pg backend");
    sealed_alone(pg.read().expect("read").state);
    let (code, out, err) = strata(&d, &m, &env, &["plan", "--detailed-exitcode"]);
    assert_eq!(
        code, 0,
        "the sealed state describes everything:\n{out}{err}"
    );
    let (code, pulled, err) = strata(&d, &m, &env, &["state", "pull"]);
    assert_eq!(code, 0, "{err}");
    assert!(pulled.contains(SECRET), "state pull opens it");
}

/// OpenTofu's `aws_kms` key provider against moto's KMS: the state is
/// sealed with a data key KMS made (its encrypted form is the metadata,
/// and KMS opens it to a 32-byte key), nothing sensitive is on disk, and
/// with KMS out of reach the state cannot be opened — the key is KMS's,
/// not strata's.
#[test]
fn an_aws_kms_key_provider_seals_with_a_data_key_from_kms() {
    use base64::Engine;
    const SECRET: &str = "kms-sealed-secret-value";
    let m = moto::moto();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let kms = rt.block_on(async {
        let conf = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .endpoint_url(&m.url)
            .region(aws_config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_kms::config::Credentials::new(
                "testing", "testing", None, None, "test",
            ))
            .load()
            .await;
        aws_sdk_kms::Client::new(&conf)
    });
    let key_id = rt
        .block_on(kms.create_key().send())
        .expect("a KMS key")
        .key_metadata
        .expect("its metadata")
        .key_id;
    let d = common::scratch("state", "kms");
    std::fs::write(
        d.join("main.tf"),
        format!(
            r#"terraform {{
  encryption {{
    key_provider "aws_kms" "k" {{
      kms_key_id = "{key_id}"
      key_spec   = "AES_256"
    }}
    method "aes_gcm" "m" {{
      keys = key_provider.aws_kms.k
    }}
    state {{
      method = method.aes_gcm.m
    }}
  }}
}}
variable "secret" {{
  sensitive = true
}}
resource "terraform_data" "s" {{
  input = var.secret
}}
"#
        ),
    )
    .expect("config");
    let env = [("TF_VAR_secret", SECRET)];
    let (code, out, err) = strata(&d, &m, &env, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(d.join("terraform.tfstate")).expect("state");
    assert!(!text.contains(SECRET), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let b64 = base64::engine::general_purpose::STANDARD;
    let meta = b64
        .decode(
            doc["meta"]["key_provider.aws_kms.k"]
                .as_str()
                .expect("meta"),
        )
        .expect("base64");
    let meta: serde_json::Value = serde_json::from_slice(&meta).expect("meta JSON");
    let blob = b64
        .decode(meta["ciphertext_blob"].as_str().expect("ciphertext_blob"))
        .expect("blob");
    let plain = rt
        .block_on(
            kms.decrypt()
                .ciphertext_blob(aws_sdk_kms::primitives::Blob::new(blob))
                .send(),
        )
        .expect("KMS opens the data key")
        .plaintext
        .expect("plaintext");
    assert_eq!(plain.as_ref().len(), 32, "AES_256");
    let (code, out, err) = strata(&d, &m, &env, &["state", "list"]);
    assert_eq!((code, out.as_str()), (0, "terraform_data.s\n"), "{err}");
    let closed = [
        ("TF_VAR_secret", SECRET),
        ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
    ];
    let before = std::fs::read(d.join("terraform.tfstate")).expect("state");
    let (code, _, err) = strata(&d, &m, &closed, &["state", "list"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("method.aes_gcm.m"), "{err}");
    assert_eq!(
        std::fs::read(d.join("terraform.tfstate")).expect("state"),
        before
    );
}
