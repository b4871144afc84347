//! A directory Terraform initialised and applied, taken over by strata as a
//! team switching tools takes it over (`alias terraform=strata`): the same
//! state files, the same workspaces, the same lock. Each test starts from
//! what Terraform itself left, never from an empty directory.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

#[path = "common/oracle.rs"]
mod oracle;
use oracle::{ok, require_terraform, run};

const CONFIG: &str = r#"
variable "n" {
  type = number
}

resource "terraform_data" "a" {
  input = var.n
}

resource "terraform_data" "b" {
  count = 2
  input = "${terraform_data.a.output}-${count.index}"
}

output "n" {
  value = terraform_data.a.output
}
"#;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-shared-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    std::fs::write(d.join("main.tf"), CONFIG).expect("config");
    d
}

/// A directory Terraform initialised and applied: `default` with n = 1,
/// `prod` with n = 2, `prod` selected.
fn terraform_applied(tag: &str) -> PathBuf {
    let d = scratch(tag);
    ok("terraform", &d, &["init", "-input=false", "-no-color"]);
    ok(
        "terraform",
        &d,
        &["apply", "-auto-approve", "-no-color", "-var", "n=1"],
    );
    ok("terraform", &d, &["workspace", "new", "-no-color", "prod"]);
    ok(
        "terraform",
        &d,
        &["apply", "-auto-approve", "-no-color", "-var", "n=2"],
    );
    d
}

/// Everything in `dir` but `.terraform`, path and contents.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("list").flatten() {
            let p = e.path();
            if e.file_name() == ".terraform" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("inside").display().to_string();
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

fn names(list: &[(String, Vec<u8>)]) -> Vec<&str> {
    list.iter().map(|(n, _)| n.as_str()).collect()
}

#[test]
fn a_directory_terraform_applied_is_the_same_state_for_strata() {
    if !require_terraform("a_directory_terraform_applied_is_the_same_state_for_strata") {
        return;
    }
    let d = terraform_applied("same");
    // prod is selected (Terraform's .terraform/environment): no changes.
    let plan = ["plan", "-no-color", "-detailed-exitcode", "-var", "n=2"];
    let (code, out, err) = run("strata", &d, &plan);
    assert_eq!(
        code, 0,
        "strata plans prod from Terraform's state:\n{out}\n{err}"
    );
    assert!(out.contains("No changes."), "{out}");
    ok("strata", &d, &["workspace", "select", "default"]);
    let plan = ["plan", "-no-color", "-detailed-exitcode", "-var", "n=1"];
    let (code, out, err) = run("strata", &d, &plan);
    assert_eq!(
        code, 0,
        "strata plans default from Terraform's state:\n{out}\n{err}"
    );
    assert_eq!(
        ok("strata", &d, &["state", "list"]),
        ok("terraform", &d, &["state", "list"])
    );
    // A change made by strata is the state Terraform reads next.
    ok(
        "strata",
        &d,
        &["apply", "-auto-approve", "-no-color", "-var", "n=3"],
    );
    let plan = ["plan", "-no-color", "-detailed-exitcode", "-var", "n=3"];
    let (code, out, err) = run("terraform", &d, &plan);
    assert_eq!(code, 0, "Terraform after strata's apply:\n{out}\n{err}");
    assert!(
        d.join("terraform.tfstate.backup").exists(),
        "strata kept Terraform's previous state as Terraform's backup"
    );
    let (code, out, _) = run("strata", &d, &["workspace", "list"]);
    assert_eq!((code, out.as_str()), (0, "* default\n  prod\n\n"));
    let left = files(&d);
    let unexpected: Vec<&str> = names(&left)
        .into_iter()
        .filter(|n| n.contains("strata") || n.contains(".lock.info") || n.ends_with(".next"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "files only strata would read: {unexpected:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Starts `tool apply` (no -auto-approve) and reads until it asks for
/// confirmation, by which time it holds the state's lock.
fn holding_the_lock(tool: &str, dir: &Path) -> Child {
    let program = match tool {
        "strata" => env!("CARGO_BIN_EXE_strata"),
        other => other,
    };
    let mut child = Command::new(program)
        .args(["apply", "-no-color", "-var", "n=9"])
        .current_dir(dir)
        .env("CHECKPOINT_DISABLE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the holder starts");
    oracle::until_asked(&mut child);
    child
}

fn let_go(mut holder: Child) {
    if let Some(mut stdin) = holder.stdin.take() {
        let _ = stdin.write_all(b"no\n");
    }
    let _ = holder.wait();
}

#[test]
fn each_tool_is_kept_out_by_the_others_lock_and_named() {
    if !require_terraform("each_tool_is_kept_out_by_the_others_lock_and_named") {
        return;
    }
    let d = terraform_applied("lock");
    let before = std::fs::read(d.join("terraform.tfstate.d/prod/terraform.tfstate")).expect("prod");

    let terraform = holding_the_lock("terraform", &d);
    let (code, out, err) = run("strata", &d, &["plan", "-no-color", "-var", "n=2"]);
    let_go(terraform);
    assert_eq!(code, 1, "strata ran under Terraform's lock:\n{out}\n{err}");
    assert!(
        err.contains("locked by") && err.contains("OperationTypeApply"),
        "Terraform's run is named: {err}"
    );

    let strata = holding_the_lock("strata", &d);
    let plan = ["plan", "-no-color", "-lock-timeout=0s", "-var", "n=2"];
    let (code, out, err) = run("terraform", &d, &plan);
    let info =
        std::fs::read_to_string(d.join("terraform.tfstate.d/prod/.terraform.tfstate.lock.info"))
            .unwrap_or_default();
    let_go(strata);
    assert_eq!(code, 1, "Terraform ran under strata's lock:\n{out}\n{err}");
    assert!(err.contains("Error acquiring the state lock"), "{err}");
    let id = serde_json::from_str::<serde_json::Value>(&info).expect("strata's lock info")["ID"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        !id.is_empty() && err.contains(&id),
        "strata's lock is named to Terraform: {err}"
    );

    // Both let go: nothing changed, no lock left, each plans again.
    assert_eq!(
        std::fs::read(d.join("terraform.tfstate.d/prod/terraform.tfstate")).expect("prod"),
        before
    );
    assert!(!d
        .join("terraform.tfstate.d/prod/.terraform.tfstate.lock.info")
        .exists());
    let plan = ["plan", "-no-color", "-detailed-exitcode", "-var", "n=2"];
    assert_eq!(run("terraform", &d, &plan).0, 0);
    assert_eq!(run("strata", &d, &plan).0, 0);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_older_strata_state_moves_to_terraforms_name_once() {
    if !require_terraform("an_older_strata_state_moves_to_terraforms_name_once") {
        return;
    }
    let d = terraform_applied("legacy");
    // What strata before 0.1 left: the same states under its own names.
    std::fs::rename(d.join("terraform.tfstate"), d.join("strata.tfstate")).expect("default");
    std::fs::create_dir_all(d.join("strata.tfstate.d/prod")).expect("dir");
    std::fs::rename(
        d.join("terraform.tfstate.d/prod/terraform.tfstate"),
        d.join("strata.tfstate.d/prod/strata.tfstate"),
    )
    .expect("prod");
    std::fs::remove_dir_all(d.join("terraform.tfstate.d")).expect("rm");
    let old_default = std::fs::read(d.join("strata.tfstate")).expect("old");

    let plan = ["plan", "-no-color", "-detailed-exitcode", "-var", "n=2"];
    let (code, out, err) = run("strata", &d, &plan);
    assert_eq!(code, 0, "prod planned from its moved state:\n{out}\n{err}");
    assert!(
        err.contains("strata.tfstate (workspace \"default\") moved to terraform.tfstate")
            && err.contains(
                "(workspace \"prod\") moved to terraform.tfstate.d/prod/terraform.tfstate"
            ),
        "the move is said: {err}"
    );
    assert_eq!(
        std::fs::read(d.join("terraform.tfstate")).expect("moved"),
        old_default
    );
    assert!(!d.join("strata.tfstate").exists() && !d.join("strata.tfstate.d").exists());
    let (_, _, err) = run("strata", &d, &plan);
    assert!(!err.contains("moved"), "said once: {err}");
    assert_eq!(
        run("terraform", &d, &plan).0,
        0,
        "Terraform reads the moved state"
    );

    // Both names holding objects: nothing moves, nothing is planned.
    std::fs::copy(d.join("terraform.tfstate"), d.join("strata.tfstate")).expect("copy");
    let before = files(&d);
    let (code, out, err) = run("strata", &d, &["plan", "-no-color", "-var", "n=2"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("two states of one workspace"), "{err}");
    assert!(!out.contains("will be created"), "{out}");
    assert_eq!(files(&d), before, "nothing moved or written");
    let _ = std::fs::remove_dir_all(&d);
}

/// A copy of `from` at `to`, `.terraform` included.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("list").flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

const KEPT_ELSEWHERE: &str = r#"
terraform {
  backend "local" {
    path          = "kept/terraform.tfstate"
    workspace_dir = "kept/ws"
  }
}
"#;

#[test]
fn a_new_backend_gets_every_workspace_even_when_default_is_empty() {
    if !require_terraform("a_new_backend_gets_every_workspace_even_when_default_is_empty") {
        return;
    }
    let d = terraform_applied("migrate");
    ok(
        "terraform",
        &d,
        &["workspace", "select", "-no-color", "default"],
    );
    ok(
        "terraform",
        &d,
        &["destroy", "-auto-approve", "-no-color", "-var", "n=1"],
    );
    ok(
        "terraform",
        &d,
        &["workspace", "select", "-no-color", "prod"],
    );
    std::fs::write(d.join("backend.tf"), KEPT_ELSEWHERE).expect("backend");
    let plan = ["plan", "-no-color", "-detailed-exitcode", "-var", "n=2"];
    for tool in ["terraform", "strata"] {
        let here = d.with_file_name(format!(
            "{}-{tool}",
            d.file_name().and_then(|n| n.to_str()).unwrap_or("d")
        ));
        let _ = std::fs::remove_dir_all(&here);
        copy_tree(&d, &here);
        if tool == "strata" {
            // Asked and not answered "yes": no workspace is copied.
            let (code, _, err) = run(tool, &here, &["init", "-migrate-state", "-no-color"]);
            assert_eq!(code, 1, "{err}");
            assert!(
                err.contains("migrate all workspaces") || err.contains("no workspace was copied"),
                "{err}"
            );
            assert!(
                !here.join("kept").exists(),
                "nothing copied: {:?}",
                names(&files(&here))
            );
        }
        let (code, out, err) = run(tool, &here, &["init", "-force-copy", "-no-color"]);
        assert_eq!(code, 0, "{tool} init:\n{out}\n{err}");
        assert!(
            here.join("kept/ws/prod/terraform.tfstate").is_file(),
            "{tool} copied prod"
        );
        let (code, out, err) = run(tool, &here, &plan);
        assert_eq!(
            code, 0,
            "{tool} plans prod in its new backend:\n{out}\n{err}"
        );
        let _ = std::fs::remove_dir_all(&here);
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_workspace_with_an_unfinished_create_is_not_deleted() {
    if !require_terraform("a_workspace_with_an_unfinished_create_is_not_deleted") {
        return;
    }
    let d = terraform_applied("delete");
    ok("strata", &d, &["workspace", "new", "stage"]);
    // A killed apply's journal: a create asked for, never answered.
    let state = d.join("terraform.tfstate.d/stage/terraform.tfstate");
    {
        let store = strata_state::Store::local(&state);
        let lock = store.lock("apply").expect("lock");
        store.load().expect("load");
        let mut journal = store.journal(&lock).expect("journal");
        journal
            .append(strata_state::Entry::Intent {
                address: "terraform_data.a".into(),
                action: "create".into(),
                provider: None,
                trace: None,
            })
            .expect("intent");
    }
    ok("strata", &d, &["workspace", "select", "default"]);
    let before = files(&d);
    let (code, out, err) = run("strata", &d, &["workspace", "delete", "stage"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("terraform_data.a (a create an interrupted run left unfinished)"),
        "{err}"
    );
    assert_eq!(files(&d), before, "nothing deleted");
    let (code, out, err) = run("strata", &d, &["workspace", "delete", "-force", "stage"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!d.join("terraform.tfstate.d/stage").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// b's provisioner outlasts Terraform's twenty seconds between state
/// writes; c's holds the apply open for as long as `hold` says.
const SLOW: &str = r#"
variable "hold" {
  type    = number
  default = 0
}

resource "terraform_data" "a" {
  input = 1
}

resource "terraform_data" "b" {
  input = terraform_data.a.output
  provisioner "local-exec" {
    command = "sleep 21"
  }
}

resource "terraform_data" "c" {
  input = terraform_data.b.output
  provisioner "local-exec" {
    command = "sleep ${var.hold}"
  }
}
"#;

/// `tool apply`, killed with SIGKILL (with its provisioner's shell) once
/// c's provisioner has begun: b finished more than twenty seconds in.
fn killed_while_c_provisions(tool: &str, dir: &Path) {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(oracle::program(tool))
        .args(["apply", "-auto-approve", "-no-color", "-var", "hold=300"])
        .current_dir(dir)
        .env("CHECKPOINT_DISABLE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("the apply starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut said = String::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.expect("a line");
        said.push_str(&line);
        said.push('\n');
        if line.starts_with("terraform_data.c: Provisioning with 'local-exec'") {
            break;
        }
    }
    assert!(
        said.contains("terraform_data.c: Provisioning"),
        "{tool} reached c's provisioner:\n{said}"
    );
    unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
    let _ = child.wait();
}

fn plan_line(out: &str) -> &str {
    out.lines().find(|l| l.starts_with("Plan:")).unwrap_or("")
}

#[test]
fn a_killed_apply_leaves_terraform_what_it_finished() {
    if !require_terraform("a_killed_apply_leaves_terraform_what_it_finished") {
        return;
    }
    let plan = ["plan", "-no-color", "-detailed-exitcode"];
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let d = scratch(&format!("killed-{tool}"));
        std::fs::write(d.join("main.tf"), SLOW).expect("config");
        ok("terraform", &d, &["init", "-input=false", "-no-color"]);
        killed_while_c_provisions(tool, &d);
        // Terraform reads only the state file: what the killed run wrote
        // there is all it knows.
        let (code, out, err) = run("terraform", &d, &plan);
        assert_eq!(code, 2, "Terraform after {tool} was killed:\n{out}\n{err}");
        seen.push(plan_line(&out).to_string());
        if tool == "strata" {
            // strata's next command, a plan, writes in the state what only
            // the journal held: c, created, its provisioner unfinished.
            let (code, out, err) = run("strata", &d, &plan);
            assert_eq!(code, 2, "{out}\n{err}");
            assert!(
                err.contains(
                    "the last apply was interrupted; what it finished is now written in the state"
                ),
                "{err}"
            );
            assert!(
                !d.join("terraform.tfstate.journal").exists(),
                "nothing was left in question, so no journal is left"
            );
            let (code, out, err) = run("terraform", &d, &plan);
            assert_eq!(code, 2, "{out}\n{err}");
            assert!(
                out.contains("terraform_data.c is tainted, so must be replaced"),
                "Terraform reads the state strata's plan wrote:\n{out}"
            );
            ok("strata", &d, &["apply", "-auto-approve", "-no-color"]);
            let (code, out, err) = run("terraform", &d, &plan);
            assert_eq!(code, 0, "Terraform after strata finished:\n{out}\n{err}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
    assert_eq!(
        seen[0], seen[1],
        "Terraform plans the same after either tool was killed at the same point"
    );
    assert_eq!(seen[0], "Plan: 1 to add, 0 to change, 0 to destroy.");
}

/// A workspace Terraform made and nobody has written is an empty folder;
/// strata's runs in it leave the folder (it removed it, so the workspace
/// vanished from Terraform's list), and a state command there is refused
/// as Terraform refuses it.
#[test]
fn an_unwritten_workspace_stays_a_workspace() {
    if !require_terraform("an_unwritten_workspace_stays_a_workspace") {
        return;
    }
    let d = terraform_applied("unwritten");
    ok("terraform", &d, &["workspace", "new", "-no-color", "blue"]);
    let folder = d.join("terraform.tfstate.d/blue");
    let (code, out, err) = run("strata", &d, &["plan", "-no-color", "-var", "n=1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(folder.is_dir(), "strata's plan removed the workspace");
    for tool in ["terraform", "strata"] {
        let (code, out, err) = run(tool, &d, &["state", "list"]);
        assert_eq!(code, 1, "{tool}:\n{out}\n{err}");
        assert!(err.contains("No state file was found!"), "{tool}: {err}");
    }
    ok("strata", &d, &["workspace", "select", "default"]);
    assert!(ok("terraform", &d, &["workspace", "list"]).contains("  blue\n"));
    let _ = std::fs::remove_dir_all(&d);
}
