//! Terraform's command line, spelled as CI scripts spell it, run once with
//! `terraform` and once with `strata` on the same files: the exit codes
//! match step by step, and so do the outputs' values. What strata does not
//! do yet is refused by name with exit 1 (never 2, which a script reads as
//! "changes").

#[path = "common/run.rs"]
mod run;

use std::path::{Path, PathBuf};
use std::process::Stdio;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::require_terraform;

const CONFIG: &str = r#"
variable "n" {
  type = number
}

resource "terraform_data" "a" {
  input = var.n
}

output "n" {
  value = terraform_data.a.output
}
"#;

fn workdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-tfcli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("infra")).expect("scratch");
    std::fs::write(d.join("infra/main.tf"), CONFIG).expect("config");
    // The module's own tests, as a published module keeps them: the CI
    // script runs them with `test`.
    std::fs::create_dir_all(d.join("infra/tests")).expect("tests folder");
    std::fs::write(d.join("infra/tests/n.tftest.hcl"), TESTS).expect("tests");
    d
}

const TESTS: &str = r#"
variables {
  n = 3
}

run "input_is_kept" {
  command = plan

  assert {
    condition     = terraform_data.a.input == 3
    error_message = "the input is not the variable"
  }
}
"#;

/// One tool's run of `args` in `dir` with `env`: exit code, stdout, stderr.
fn run(tool: &str, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let env: Vec<(&str, &std::ffi::OsStr)> = env.iter().map(|(k, v)| (*k, v.as_ref())).collect();
    oracle::run_tool(tool, dir, args, &env)
}

/// The `infra` directory of a new scratch tree for `tool`, initialised
/// when the tool is terraform.
fn ready(tool: &str, tag: &str) -> PathBuf {
    ready_with(tool, tag, &[])
}

/// [`ready`] with `files` written over the tree's configuration first.
fn ready_with(tool: &str, tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = workdir(&format!("{tag}-{tool}")).join("infra");
    if !files.is_empty() {
        let _ = std::fs::remove_file(dir.join("main.tf"));
        write_tree(&dir, files);
    }
    if tool == "terraform" {
        let (code, _, err) = run(tool, &dir, &["init", "-input=false"], &[]);
        assert_eq!(code, 0, "terraform init: {err}");
    }
    dir
}

/// Writes `files` (path under `dir`, text), making their folders.
fn write_tree(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

/// A CI script's steps, as written for terraform: (args, environment,
/// the exit code Terraform gives).
const SCRIPT: &[(&[&str], &[(&str, &str)], i32)] = &[
    (
        &["-chdir=infra", "init", "-input=false", "-no-color"],
        &[],
        0,
    ),
    (&["fmt", "-check", "-recursive"], &[], 0),
    (&["-chdir=infra", "validate", "-no-color"], &[], 0),
    (&["-chdir=infra", "test", "-no-color"], &[], 0),
    (
        &[
            "-chdir=infra",
            "plan",
            "-input=false",
            "-no-color",
            "-lock-timeout=10s",
            "-parallelism=4",
            "-var",
            "n=1",
            "-out=tfplan",
            "-detailed-exitcode",
        ],
        &[],
        2,
    ),
    (&["-chdir=infra", "show", "-json", "tfplan"], &[], 0),
    (
        &[
            "-chdir=infra",
            "apply",
            "-input=false",
            "-no-color",
            "-auto-approve",
            "tfplan",
        ],
        &[],
        0,
    ),
    (&["-chdir=infra", "show", "-json"], &[], 0),
    (
        &[
            "-chdir=infra",
            "plan",
            "-detailed-exitcode",
            "-var=n=1",
            "-refresh=false",
            "-compact-warnings",
        ],
        &[],
        0,
    ),
    (
        &["-chdir=infra", "plan", "-detailed-exitcode"],
        &[
            ("TF_CLI_ARGS_plan", "-var n=2"),
            ("TF_CLI_ARGS", "-no-color"),
        ],
        2,
    ),
    (
        &["-chdir=infra", "plan", "-detailed-exitcode", "-no-color"],
        &[("TF_VAR_n", "1")],
        0,
    ),
    (&["-chdir=infra", "output", "-json"], &[], 0),
    (
        &[
            "-chdir=infra",
            "apply",
            "-destroy",
            "-auto-approve",
            "-input=false",
            "-var",
            "n=1",
        ],
        &[],
        0,
    ),
];

#[test]
fn a_terraform_ci_script_runs_unchanged_and_exits_alike() {
    if !require_terraform("a_terraform_ci_script_runs_unchanged_and_exits_alike") {
        return;
    }
    let tf = workdir("terraform");
    let st = workdir("strata");
    let mut outputs = Vec::new();
    for (args, env, want) in SCRIPT {
        let mut shown = Vec::new();
        for (tool, dir) in [("terraform", &tf), ("strata", &st)] {
            let (code, out, err) = run(tool, dir, args, env);
            assert_eq!(code, *want, "{tool} {args:?} with {env:?}:\n{out}\n{err}");
            if args.contains(&"output") {
                let v: serde_json::Value = serde_json::from_str(&out).expect("output JSON");
                outputs.push(v["n"]["value"].clone());
            }
            if args.contains(&"show") {
                shown.push(shown_json(&out));
            }
        }
        if let [tf, st] = &shown[..] {
            assert_eq!(tf, st, "{args:?}: what CI tools read of show -json");
        }
    }
    assert_eq!(outputs, [serde_json::json!(1), serde_json::json!(1)]);
}

/// What a CI tool reads of `show -json`: for a plan, each resource's
/// actions and the output changes' actions; for a state, each resource's
/// address and the output values.
fn shown_json(text: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(text).expect("show -json");
    let actions: Vec<String> = v["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| format!("{} {}", r["address"], r["change"]["actions"]))
        .collect();
    let outputs: Vec<String> = v["output_changes"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, o)| format!("{k} {}", o["actions"]))
        .collect();
    let resources: Vec<String> = v["values"]["root_module"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["address"].to_string())
        .collect();
    serde_json::json!({
        "format_version": v["format_version"],
        "actions": actions,
        "outputs": outputs,
        "resources": resources,
        "values": v["values"]["outputs"],
    })
}

/// A flag of Terraform's that strata does not do yet stops the run at
/// once, by name, with exit 1; nothing is planned or written.
#[test]
fn a_terraform_flag_strata_lacks_is_refused_by_name() {
    let st = workdir("lacks");
    for (args, says) in [
        (
            vec!["-chdir=infra", "graph", "-draw-cycles"],
            "-draw-cycles is Terraform's flag for graph's cycle colouring, which strata does not do yet",
        ),
        // A target Terraform cannot read is refused in its words.
        (
            vec!["-chdir=infra", "plan", "-var", "n=1", "-target=foo"],
            "Invalid target \"foo\"",
        ),
        (
            vec!["-chdir=infra", "plan", "-var", "n=1", "-destroy", "-replace=a.b"],
            "Unsupported plan mode",
        ),
        (
            vec!["-chdir=infra", "init", "-json"],
            "-json on init is Terraform's machine-readable output",
        ),
        (
            vec!["-chdir=infra", "plan", "-refresh=perhaps"],
            "invalid boolean value \"perhaps\" for -refresh",
        ),
    ] {
        let (code, out, err) = run("strata", &st, &args, &[]);
        assert_eq!(code, 1, "{args:?}:\n{out}\n{err}");
        assert!(err.contains(says), "{args:?}:\n{err}");
    }
    assert!(!st.join("infra/terraform.tfstate").exists());
    // Help, in either spelling, names Terraform's spellings too.
    for args in [["plan", "-help"], ["plan", "--help"]] {
        let (code, out, _) = run("strata", &st, &args, &[]);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("Terraform's spellings work beside these"),
            "{out}"
        );
    }
}

/// `-lock-timeout`: a plan waits for the state lock an apply holds (here
/// one waiting at its confirmation) and runs once it is released; with a
/// shorter wait it gives up naming the holder, exit 1.
#[test]
fn lock_timeout_waits_for_the_holder() {
    use std::io::Write;
    let st = workdir("lock");
    let dir = st.join("infra");
    let mut holder = run::strata(&dir)
        .args(["apply", "-var", "n=1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the holder starts");
    // The holder has the lock once it asks for confirmation.
    oracle::until_asked(&mut holder);
    let plan = ["plan", "-var", "n=1", "-no-color", "-lock-timeout=1s"];
    let started = std::time::Instant::now();
    let (code, out, err) = run("strata", &dir, &plan, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("apply"),
        "the holder's operation is named: {err}"
    );
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    // Released after a second; a plan willing to wait 20 s gets the lock.
    let mut stdin = holder.stdin.take().expect("stdin");
    let answer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(1));
        let _ = stdin.write_all(b"no\n");
    });
    let waiting = [
        "plan",
        "-var",
        "n=1",
        "-lock-timeout=20s",
        "-detailed-exitcode",
    ];
    let (code, out, err) = run("strata", &dir, &waiting, &[]);
    assert_eq!(code, 2, "planned once the lock was free:\n{out}{err}");
    let _ = answer.join();
    let _ = holder.wait();
}

/// `fmt -check -recursive`, as most CI workflows run it: the same exit
/// code and the same files named as Terraform, hidden directories such as
/// `.terraform` left out; then both rewrite alike.
#[test]
fn fmt_check_recursive_matches_terraform() {
    if !require_terraform("fmt_check_recursive_matches_terraform") {
        return;
    }
    let tree = |tag: &str| {
        let d = std::env::temp_dir().join(format!("strata-tfcli-fmt-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for (path, text) in [
            ("main.tf", "a = 1\n"),
            ("sub/x.tf", "b   = 1\n"),
            ("sub/deeper/y.tf", "c   =   2\n"),
            (".terraform/modules/m/z.tf", "d   = 1\n"),
            (".hidden/w.tf", "e   = 1\n"),
        ] {
            let p = d.join(path);
            std::fs::create_dir_all(p.parent().expect("a parent")).expect("dirs");
            std::fs::write(p, text).expect("file");
        }
        d
    };
    let (tf, st) = (tree("terraform"), tree("strata"));
    for args in [
        &["fmt", "-check", "-recursive"][..],
        &["fmt", "-check"],
        &["fmt", "-recursive", "-diff", "-write=false"],
        &["fmt", "-check", "-list=false", "-recursive"],
        &["fmt", "-recursive", "-list=false", "-diff"],
        &["fmt", "-recursive"],
        &["fmt", "-check", "-recursive"],
    ] {
        let (t_code, t_out, _) = run("terraform", &tf, args, &[]);
        let (s_code, s_out, s_err) = run("strata", &st, args, &[]);
        assert_eq!((s_code, &s_out), (t_code, &t_out), "{args:?}: {s_err}");
    }
    for tree in [&tf, &st] {
        let hidden = std::fs::read_to_string(tree.join(".terraform/modules/m/z.tf")).expect("z");
        assert_eq!(hidden, "d   = 1\n", "hidden directories are left alone");
    }
}

/// `taint` and `untaint` beside Terraform: the same exit codes and the same
/// words at each step (what is said on stdout, and the error's summary),
/// and a tainted instance planned as a replacement by both.
#[test]
fn taint_and_untaint_say_what_terraform_says() {
    if !require_terraform("taint_and_untaint_say_what_terraform_says") {
        return;
    }
    let steps: &[(&[&str], i32, &str)] = &[
        (&["apply", "-auto-approve", "-var", "n=1"], 0, ""),
        (
            &["taint", "terraform_data.a"],
            0,
            "Resource instance terraform_data.a has been marked as tainted.",
        ),
        (
            &["plan", "-var", "n=1", "-detailed-exitcode", "-no-color"],
            2,
            "is tainted, so must be replaced",
        ),
        (
            &["taint", "terraform_data.zz"],
            1,
            "No such resource instance",
        ),
        (
            &["taint", "-allow-missing", "terraform_data.zz"],
            0,
            "No such resource instance",
        ),
        (&["taint", "module.m"], 1, "Invalid address"),
        (
            &["untaint", "terraform_data.a"],
            0,
            "Resource instance terraform_data.a has been successfully untainted.",
        ),
        (
            &["untaint", "terraform_data.a"],
            1,
            "Resource instance is not tainted",
        ),
        (&["plan", "-var", "n=1", "-detailed-exitcode"], 0, ""),
    ];
    for tool in ["terraform", "strata"] {
        let dir = ready(tool, "taint");
        for (args, want, says) in steps {
            let (code, out, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, *want, "{tool} {args:?}:\n{out}\n{err}");
            assert!(
                out.contains(says) || err.contains(says),
                "{tool} {args:?} does not say {says:?}:\n{out}\n{err}"
            );
        }
    }
}

/// `import ADDR ID` beside Terraform: the same words and exit codes, the
/// same object recorded (`state show`), and the same plan on top of it.
#[test]
fn import_records_an_object_as_terraform_does() {
    if !require_terraform("import_records_an_object_as_terraform_does") {
        return;
    }
    let steps: &[(&[&str], i32)] = &[
        (
            &[
                "import",
                "-no-color",
                "-var",
                "n=1",
                "terraform_data.a",
                "my-id",
            ],
            0,
        ),
        (
            &[
                "import",
                "-no-color",
                "-var=n=1",
                "terraform_data.a",
                "my-id",
            ],
            1,
        ),
        (
            &[
                "import",
                "-no-color",
                "-var",
                "n=1",
                "terraform_data.b",
                "my-id",
            ],
            1,
        ),
        (&["state", "show", "terraform_data.a"], 0),
        (
            &["plan", "-var", "n=1", "-detailed-exitcode", "-no-color"],
            2,
        ),
    ];
    let mut said: Vec<Vec<String>> = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready(tool, "import");
        let mut outs = Vec::new();
        for (args, want) in steps {
            let (code, out, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, *want, "{tool} {args:?}:\n{out}\n{err}");
            outs.push(
                out.replace("Terraform", "strata")
                    .replace("terraform apply", "strata apply"),
            );
        }
        let (_, _, err) = run(
            tool,
            &dir,
            &["import", "-var", "n=1", "terraform_data.b", "x"],
            &[],
        );
        assert!(
            err.contains(
                "resource address \"terraform_data.b\" does not exist in the configuration"
            ),
            "{tool}: {err}"
        );
        said.push(outs);
    }
    // What the plan says past its first lines (which name the tool) agrees.
    let plan_body = |s: &str| s[s.find("  # ").unwrap_or(0)..].to_string();
    let (tf, st) = (&said[0], &said[1]);
    assert_eq!(tf[..4], st[..4], "import, the refusals and state show");
    assert_eq!(plan_body(&tf[4]), plan_body(&st[4]));
}

/// `workspace` commands beside Terraform on a local state: the same exit
/// codes and, product name aside, the same words at every step, down to
/// the list's markers and which workspace the next apply lands in.
#[test]
fn workspace_commands_say_what_terraform_says() {
    if !require_terraform("workspace_commands_say_what_terraform_says") {
        return;
    }
    let steps: &[(&[&str], i32)] = &[
        (&["workspace", "list"], 0),
        (&["workspace", "show"], 0),
        (&["workspace", "new", "dev"], 0),
        (&["workspace", "new", "dev"], 1),
        (&["workspace", "list"], 0),
        (&["apply", "-auto-approve", "-var", "n=7"], 0),
        (&["output", "-json"], 0),
        (&["workspace", "select", "default"], 0),
        (&["output", "-json"], 0),
        (&["workspace", "select", "nope"], 1),
        (&["workspace", "select", "-or-create", "other"], 0),
        (&["workspace", "delete", "other"], 1),
        (&["workspace", "select", "default"], 0),
        (&["workspace", "delete", "default"], 1),
        (&["workspace", "delete", "dev"], 1),
        (&["workspace", "delete", "-force", "dev"], 0),
        (&["workspace", "delete", "other"], 0),
        (&["workspace", "list"], 0),
    ];
    // The words each tool prints on success, with its own name made one.
    let mut said: Vec<Vec<String>> = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready(tool, "workspace");
        let mut outs = Vec::new();
        for (args, want) in steps {
            let mut args = args.to_vec();
            args.push("-no-color");
            let (code, out, err) = run(tool, &dir, &args, &[]);
            assert_eq!(code, *want, "{tool} {args:?}:\n{out}\n{err}");
            let words = |s: &str| {
                s.replace("Terraform", "strata")
                    .replace("terraform", "strata")
            };
            let shown = match (*want, args[0]) {
                // Apply's own lines differ in ways the engine comparison
                // checks; here, only that it ran.
                (0, "apply") => String::new(),
                (0, _) => words(&out),
                _ => String::new(),
            };
            outs.push(shown);
        }
        said.push(outs);
    }
    for (i, (tf, st)) in said[0].iter().zip(&said[1]).enumerate() {
        assert_eq!(tf, st, "step {i}: {:?}", steps[i].0);
    }
}

/// `show` of a state, human and `-json`, beside Terraform's: nothing
/// there, objects with nested values and outputs, an emptied state. Ids
/// (random) aside, the same text and the same JSON.
#[test]
fn show_of_a_state_is_terraforms() {
    if !require_terraform("show_of_a_state_is_terraforms") {
        return;
    }
    const NESTED: &str = r#"
resource "terraform_data" "a" {
  input = { sizes = [1, 2], name = "x", on = true }
}
resource "terraform_data" "b" {
  input = "plain"
}
output "a" { value = terraform_data.a.output }
output "n" { value = 3 }
"#;
    let steps: &[&[&str]] = &[
        &["show", "-no-color"],
        &["show", "-json"],
        &["apply", "-auto-approve"],
        &["show", "-no-color"],
        &["show", "-json"],
        &["state", "show", "terraform_data.a"],
        &["destroy", "-auto-approve"],
        &["show", "-no-color"],
        &["show", "-json"],
    ];
    let ids = regex::Regex::new("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        .expect("regex");
    let mut said: Vec<Vec<String>> = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready(tool, "show");
        std::fs::write(dir.join("main.tf"), NESTED).expect("config");
        let mut outs = Vec::new();
        for args in steps {
            let (code, out, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, 0, "{tool} {args:?}:\n{out}\n{err}");
            let out = ids.replace_all(&out, "ID").to_string();
            outs.push(match (args[0], args.get(1)) {
                ("show", Some(&"-json")) => {
                    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
                    serde_json::to_string_pretty(&v).expect("JSON")
                }
                ("show" | "state", _) => out,
                _ => String::new(),
            });
        }
        said.push(outs);
    }
    for (i, (tf, st)) in said[0].iter().zip(&said[1]).enumerate() {
        assert_eq!(tf, st, "{:?}", steps[i]);
    }
}

/// A tainted object and a deposed one (a create-before-destroy
/// replacement whose old object would not go) as `show`, `show -json` and
/// `state show` print them beside Terraform: "(tainted)", "(deposed
/// object KEY)", `tainted` and `deposed_key`.
#[test]
fn show_of_tainted_and_deposed_objects_is_terraforms() {
    let test = "show_of_tainted_and_deposed_objects_is_terraforms";
    if !require_terraform(test) {
        return;
    }
    const CONFIG: &str = r#"
variable "v" {
  default = "one"
}
resource "terraform_data" "t" {
  provisioner "local-exec" {
    command = "exit 3"
  }
}
resource "terraform_data" "d" {
  triggers_replace = var.v
  lifecycle {
    create_before_destroy = true
  }
  provisioner "local-exec" {
    when    = destroy
    command = "exit 4"
  }
}
"#;
    let steps: &[&[&str]] = &[
        &["apply", "-auto-approve", "-no-color"],
        &["apply", "-auto-approve", "-no-color", "-var", "v=two"],
        &["show", "-no-color"],
        &["show", "-json"],
        &["state", "show", "terraform_data.t"],
    ];
    let normal = [
        (
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "ID",
        ),
        (r"deposed object [0-9a-f]{8}", "deposed object KEY"),
        (r#""deposed_key":"[0-9a-f]{8}""#, r#""deposed_key":"KEY""#),
    ]
    .map(|(re, to)| (regex::Regex::new(re).expect("regex"), to));
    let mut said: Vec<Vec<(i32, String)>> = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready(tool, "tainted-shown");
        std::fs::write(dir.join("main.tf"), CONFIG).expect("config");
        let mut outs = Vec::new();
        for args in steps {
            // After the applies, before the first show.
            if outs.len() == 2 {
                with_deposed_object(&dir);
            }
            let (code, out, err) = run(tool, &dir, args, &[]);
            let out = match args[0] {
                "apply" => String::new(),
                "show" if args[1] == "-json" => {
                    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
                    let mut v = v["values"].clone();
                    v.as_object_mut().map(|o| o.remove("outputs"));
                    v.to_string()
                }
                _ => out,
            };
            let out = normal
                .iter()
                .fold(out, |o, (re, to)| re.replace_all(&o, *to).to_string());
            outs.push((code, out));
            let _ = err;
        }
        said.push(outs);
    }
    for (i, (tf, st)) in said[0].iter().zip(&said[1]).enumerate() {
        assert_eq!(
            st, tf,
            "{:?}: strata (left) against terraform (right)",
            steps[i]
        );
    }
    assert!(said[1][2].1.contains("(tainted)") && said[1][2].1.contains("(deposed object KEY)"));
}

/// Adds to the state in `dir` a deposed object of `terraform_data.d`, as a
/// replacement whose old object could not be destroyed leaves one (each
/// tool destroys a deposed object without its destroy-time provisioners,
/// so a failing one cannot keep it).
fn with_deposed_object(dir: &Path) {
    let path = dir.join("terraform.tfstate");
    let text = std::fs::read_to_string(&path).expect("state");
    let mut state: serde_json::Value = serde_json::from_str(&text).expect("state JSON");
    let resources = state["resources"].as_array_mut().expect("resources");
    let d = resources
        .iter_mut()
        .find(|r| r["name"] == "d")
        .expect("terraform_data.d");
    let instances = d["instances"].as_array_mut().expect("instances");
    let mut old = instances[0].clone();
    old["deposed"] = serde_json::json!("0badf00d");
    old["attributes"]["triggers_replace"]["value"] = serde_json::json!("zero");
    old["attributes"]["id"] = serde_json::json!("00000000-0000-0000-0000-000000000000");
    instances.push(old);
    std::fs::write(&path, state.to_string()).expect("state written");
}

/// `init` beside Terraform's: the same words (product name aside) and the
/// same module manifest for local modules; a tree whose registry module
/// `terraform init` already put in `.terraform/modules` initialises,
/// applies and gives the same outputs with both; a provider no driver
/// serves is named, with its place, and exit 1.
#[test]
fn init_prepares_a_directory_as_terraform_does() {
    if !require_terraform("init_prepares_a_directory_as_terraform_does") {
        return;
    }
    let local: &[(&str, &str)] = &[
        (
            "main.tf",
            "module \"m\" {\n  source = \"./mod\"\n}\n\nresource \"terraform_data\" \"x\" {}\n",
        ),
        (
            "mod/main.tf",
            "module \"inner\" {\n  source = \"./inner\"\n}\n",
        ),
        ("mod/inner/main.tf", "output \"x\" {\n  value = 1\n}\n"),
    ];
    let remote: &[(&str, &str)] = &[
        ("main.tf", "module \"vpc\" {\n  source  = \"terraform-aws-modules/vpc/aws\"\n  version = \"5.1.0\"\n}\n\noutput \"v\" {\n  value = module.vpc.id\n}\n"),
        (".terraform/modules/vpc/main.tf", "module \"sub\" {\n  source = \"./modules/sub\"\n}\n\noutput \"id\" {\n  value = module.sub.x\n}\n"),
        (".terraform/modules/vpc/modules/sub/main.tf", "output \"x\" {\n  value = \"vpc-1\"\n}\n"),
        (".terraform/modules/modules.json", r#"{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"vpc","Source":"registry.terraform.io/terraform-aws-modules/vpc/aws","Version":"5.1.0","Dir":".terraform/modules/vpc"},{"Key":"vpc.sub","Source":"./modules/sub","Dir":".terraform/modules/vpc/modules/sub"}]}"#),
    ];
    let words = |s: &str| {
        s.replace("Terraform", "strata")
            .replace("terraform", "strata")
    };
    let mut said: Vec<Vec<String>> = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = workdir(&format!("init-{tool}")).join("infra");
        let _ = std::fs::remove_file(dir.join("main.tf"));
        write_tree(&dir, local);
        let mut outs = Vec::new();
        for _ in 0..2 {
            let (code, out, err) = run(tool, &dir, &["init", "-input=false", "-no-color"], &[]);
            assert_eq!(code, 0, "{tool} init:\n{out}\n{err}");
            outs.push(words(&out));
        }
        let manifest = std::fs::read_to_string(dir.join(".terraform/modules/modules.json"))
            .expect("a module manifest");
        let manifest: serde_json::Value = serde_json::from_str(&manifest).expect("JSON");
        outs.push(manifest.to_string());
        let prepared = workdir(&format!("init-remote-{tool}")).join("infra");
        let _ = std::fs::remove_file(prepared.join("main.tf"));
        write_tree(&prepared, remote);
        for args in [&["init", "-input=false"][..], &["apply", "-auto-approve"]] {
            let (code, out, err) = run(tool, &prepared, args, &[]);
            assert_eq!(code, 0, "{tool} {args:?} on a prepared tree:\n{out}\n{err}");
        }
        let (_, out, _) = run(tool, &prepared, &["output", "-json"], &[]);
        outs.push(out);
        said.push(outs);
    }
    assert_eq!(said[0], said[1]);

    let dir = workdir("init-lacking").join("infra");
    std::fs::write(
        dir.join("more.tf"),
        "resource \"vault_generic_secret\" \"r\" {\n  path = \"secret/x\"\n}\n",
    )
    .expect("more");
    let (code, _, err) = run("strata", &dir, &["init", "-input=false"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("Failed to query available provider packages"),
        "{err}"
    );
    assert!(
        err.contains("registry.terraform.io/hashicorp/vault"),
        "{err}"
    );
    assert!(err.contains("more.tf:1:1"), "{err}");
}

/// `validate -json` beside Terraform's: the verdict, the counts, and for
/// each problem its severity, summary, range and quoted lines agree, on a
/// configuration with a reference and a schema mistake, one that does not
/// parse, and a valid one; and the exit codes.
#[test]
fn validate_json_is_terraforms_diagnostics_json() {
    if !require_terraform("validate_json_is_terraforms_diagnostics_json") {
        return;
    }
    let cases = [
        "resource \"terraform_data\" \"x\" {\n  inptu = 1\n}\n\noutput \"o\" {\n  value = var.nope\n}\n",
        "resource \"terraform_data\" \"x\" {\n",
        "resource \"terraform_data\" \"x\" {}\n",
    ];
    // What tools that annotate pull requests read of each diagnostic.
    let read = |text: &str| -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_str(text).expect("validate -json");
        // In order of place: Terraform's walk is parallel, and its order
        // changes from run to run.
        let mut diags: Vec<serde_json::Value> = v["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| {
                let s = &d["snippet"];
                serde_json::json!([
                    d["severity"],
                    d["summary"],
                    d["range"],
                    s["code"],
                    s["start_line"],
                    s["highlight_start_offset"],
                    s["highlight_end_offset"]
                ])
            })
            .collect();
        diags.sort_by_key(|d| d[2]["start"]["byte"].as_u64());
        serde_json::json!([
            v["format_version"],
            v["valid"],
            v["error_count"],
            v["warning_count"],
            diags
        ])
    };
    for config in cases {
        let mut seen = Vec::new();
        for tool in ["terraform", "strata"] {
            let dir = ready(tool, "validate-json");
            std::fs::write(dir.join("main.tf"), config).expect("config");
            let (code, out, err) = run(tool, &dir, &["validate", "-json"], &[]);
            seen.push((code, read(&out)));
            assert!(
                err.trim().is_empty() || tool == "terraform",
                "{tool}: {err}"
            );
        }
        assert_eq!(seen[0], seen[1], "{config}");
    }
}

/// `plan -json` and `apply -json` beside Terraform's machine-readable UI:
/// after the version message, the same messages in the same order — type,
/// level, words (ids aside), the resource and action each names, the
/// summary's counts and the outputs — for a first plan saved and applied,
/// a change planned and applied with `-auto-approve`, and the refusal
/// without it.
#[test]
fn the_json_ui_is_terraforms() {
    if !require_terraform("the_json_ui_is_terraforms") {
        return;
    }
    const CONFIG: &str = "resource \"terraform_data\" \"x\" {\n  input = var.v\n}\nresource \"terraform_data\" \"y\" {\n  count = 2\n  input = terraform_data.x.output\n}\nvariable \"v\" {}\noutput \"o\" {\n  value = terraform_data.y[0].output\n}\n";
    let steps: &[(&[&str], i32)] = &[
        (&["plan", "-json", "-var", "v=a", "-out=p.plan"], 0),
        (&["apply", "-json", "p.plan"], 0),
        (&["plan", "-json", "-var", "v=b"], 0),
        (&["apply", "-json", "-var", "v=b"], 1),
        (&["apply", "-json", "-auto-approve", "-var", "v=b"], 0),
        (&["destroy", "-json", "-auto-approve", "-var", "v=b"], 0),
    ];
    let ids = regex::Regex::new("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        .expect("regex");
    let took = regex::Regex::new(r"after \d+s").expect("regex");
    // A message as a reader of the stream takes it in, the envelope's
    // time and the version message's words aside.
    let read = |line: &str| -> serde_json::Value {
        let m: serde_json::Value = serde_json::from_str(line).expect("one JSON message a line");
        let mut m = m.as_object().expect("an object").clone();
        m.shift_remove("@timestamp");
        if m.get("type").and_then(|t| t.as_str()) == Some("version") {
            m.shift_remove("@message");
        }
        if let Some(hook) = m.get_mut("hook").and_then(|h| h.as_object_mut()) {
            // How long an operation took depends on the machine's load.
            if hook.contains_key("elapsed_seconds") {
                hook.insert("elapsed_seconds".into(), 0.into());
            }
        }
        let text = serde_json::Value::Object(m).to_string();
        let text = ids.replace_all(&text, "ID").replace("Terraform", "strata");
        let text = took.replace_all(&text, "after 0s");
        serde_json::from_str(&text).expect("JSON")
    };
    let mut said: Vec<Vec<Vec<serde_json::Value>>> = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready(tool, "json-ui");
        std::fs::write(dir.join("main.tf"), CONFIG).expect("config");
        let mut runs = Vec::new();
        for (args, want) in steps {
            let (code, out, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, *want, "{tool} {args:?}:\n{out}\n{err}");
            let mut messages: Vec<serde_json::Value> = out.lines().map(read).collect();
            assert_eq!(
                messages.first().map(|m| m["type"].clone()),
                Some("version".into())
            );
            // Operations run side by side, in either tool in any order:
            // compared as a set, each resource's start before its end.
            for (i, m) in messages.iter().enumerate() {
                if m["type"] == "apply_complete" {
                    let started = messages[..i].iter().any(|s| {
                        s["type"] == "apply_start" && s["hook"]["resource"] == m["hook"]["resource"]
                    });
                    assert!(started, "{tool}: {m} before its start");
                }
            }
            messages.sort_by_key(|m| m.to_string());
            runs.push(messages);
        }
        said.push(runs);
    }
    for (i, (tf, st)) in said[0].iter().zip(&said[1]).enumerate() {
        assert_eq!(tf, st, "{:?}", steps[i].0);
    }
}

/// `providers` and `state replace-provider` beside Terraform: the same
/// tree of what the configuration and the state need, the same list of
/// resources moved to another provider address, the same words when
/// nothing matches.
#[test]
fn providers_and_replace_provider_say_what_terraform_says() {
    if !require_terraform("providers_and_replace_provider_say_what_terraform_says") {
        return;
    }
    let files: &[(&str, &str)] = &[
        ("main.tf", "terraform {\n  required_providers {\n    terraform = { source = \"terraform.io/builtin/terraform\" }\n  }\n}\n\nmodule \"m\" {\n  source = \"./mod\"\n  count  = 2\n}\n\nresource \"terraform_data\" \"a\" {}\n"),
        ("mod/main.tf", "resource \"terraform_data\" \"x\" {}\n"),
    ];
    let steps: &[&[&str]] = &[
        &["apply", "-auto-approve"],
        &["providers", "-no-color"],
        &[
            "state",
            "replace-provider",
            "-no-color",
            "-auto-approve",
            "terraform.io/builtin/terraform",
            "example.com/acme/terraform",
        ],
        &[
            "state",
            "replace-provider",
            "-no-color",
            "-auto-approve",
            "hashicorp/nothing",
            "example.com/acme/x",
        ],
    ];
    let mut said: Vec<Vec<String>> = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "providers", files);
        let mut outs = Vec::new();
        for args in steps {
            let (code, out, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, 0, "{tool} {args:?}:\n{out}\n{err}");
            if args[0] != "apply" {
                // Terraform lists the resources in its state's order, which
                // follows the order its creates finished: as a set.
                let mut lines: Vec<String> = out
                    .replace("Terraform", "strata")
                    .lines()
                    .map(str::to_string)
                    .collect();
                lines.sort();
                outs.push(lines.join("\n"));
            }
        }
        said.push(outs);
    }
    assert_eq!(said[0], said[1]);
}

/// Every flag Terraform 1.11's `-help` lists for the commands strata has
/// is taken (strata's parser reads it: `-help` after it prints help, exit
/// 0) or refused by name saying what it asks for (exit 1) — never an
/// unknown argument. The flags are read from the live `terraform -help`.
#[test]
fn every_flag_of_terraforms_help_is_taken_or_refused_by_name() {
    if !require_terraform("every_flag_of_terraforms_help_is_taken_or_refused_by_name") {
        return;
    }
    let commands: &[&[&str]] = &[
        &["init"],
        &["validate"],
        &["plan"],
        &["apply"],
        &["destroy"],
        &["show"],
        &["output"],
        &["graph"],
        &["fmt"],
        &["console"],
        &["state", "list"],
        &["state", "show"],
        &["state", "rm"],
        &["state", "mv"],
        &["state", "pull"],
        &["state", "push"],
        &["state", "replace-provider"],
        &["force-unlock"],
        &["import"],
        &["get"],
        &["taint"],
        &["untaint"],
        &["refresh"],
        &["providers"],
        &["workspace", "new"],
        &["workspace", "select"],
        &["workspace", "delete"],
        &["workspace", "list"],
        &["version"],
        &["test"],
        &["modules"],
        &["providers", "lock"],
        &["providers", "mirror"],
        &["metadata", "functions"],
        &["logout"],
        &["login"],
    ];
    let flag = regex::Regex::new(r"(?m)^\s+(-[a-z][a-z-]*)(=(\S+))?").expect("regex");
    let dir = workdir("flags").join("infra");
    let mut wrong = Vec::new();
    for command in commands {
        let mut args: Vec<&str> = command.to_vec();
        args.push("-help");
        let (_, out, err) = run("terraform", &dir, &args, &[]);
        let help = out + &err;
        for cap in flag.captures_iter(&help) {
            let name = &cap[1];
            let given = match cap.get(3).map(|m| m.as_str()) {
                // Written with their value after a space in the help.
                None if name == "-var" => "-var=a=b".to_string(),
                None if name == "-var-file" => "-var-file=x.tfvars".to_string(),
                None if name == "-state" => "-state=x.tfstate".to_string(),
                None => name.to_string(),
                // A sample value strata's parser accepts where it checks.
                Some(_) if name == "-parallelism" => format!("{name}=4"),
                Some(_) if name == "-lock-timeout" => format!("{name}=1s"),
                Some(v) => format!("{name}={v}"),
            };
            let mut line: Vec<&str> = command.to_vec();
            line.push(&given);
            line.push("-help");
            let (code, out, err) = run("strata", &dir, &line, &[]);
            let refused = code == 1
                && (err.contains("which strata does not do yet")
                    || err.contains("which strata does not write yet"));
            if code != 0 && !refused {
                wrong.push(format!("{line:?}: exit {code}\n{out}{err}"));
            }
        }
    }
    // Flags newer than 1.11, from Terraform's changelog (1.12-1.17): each
    // taken.
    let newer: &[&[&str]] = &[
        &["plan", "-minimal-refresh"],
        &["apply", "-minimal-refresh"],
        &["graph", "-format=mermaid"],
        &["state", "show", "-json"],
        &["workspace", "list", "-json"],
        &["init", "-var=a=b"],
        &["init", "-var-file=x.tfvars"],
        &["get", "-var=a=b"],
        &["console", "-scope=module.a"],
        &["query"],
        &["query", "-json"],
        &["query", "-generate-config-out=found.tf"],
        &["query", "-var=a=b"],
        &["query", "-var-file=x.tfvars"],
        &["query", "-no-color"],
        &["validate", "-query"],
        &["state", "identities", "-json"],
        &["state", "identities", "-json", "-id=x"],
        &["state", "identities", "-json", "-state=x.tfstate"],
        &["test", "-junit-xml=report.xml"],
        &["test", "-parallelism=2"],
        &["test", "-run-parallelism=2"],
        &["plan", "-invoke=action.a.b"],
        &["apply", "-invoke=action.a.b"],
    ];
    for line in newer {
        let mut line = line.to_vec();
        line.push("-help");
        let (code, out, err) = run("strata", &dir, &line, &[]);
        if code != 0 {
            wrong.push(format!("{line:?}: exit {code}\n{out}{err}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `init -backend-config` on a partial `backend "local" {}`, beside
/// Terraform: the state goes to the path given, for every command after.
#[test]
fn init_backend_config_is_kept_as_terraform_keeps_it() {
    if !require_terraform("init_backend_config_is_kept_as_terraform_keeps_it") {
        return;
    }
    for tool in ["terraform", "strata"] {
        let dir = workdir(&format!("backend-config-{tool}")).join("infra");
        std::fs::write(
            dir.join("backend.tf"),
            "terraform {\n  backend \"local\" {}\n}\n",
        )
        .expect("backend block");
        let steps: &[&[&str]] = &[
            &[
                "init",
                "-input=false",
                "-backend-config=path=custom.tfstate",
            ],
            &["apply", "-auto-approve", "-var", "n=3"],
            &["plan", "-detailed-exitcode", "-var", "n=3"],
        ];
        for args in steps {
            let (code, out, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, 0, "{tool} {args:?}:\n{out}\n{err}");
        }
        assert!(
            dir.join("custom.tfstate").exists(),
            "{tool}: the state where the setting says"
        );
        let (_, out, _) = run(tool, &dir, &["output", "-json"], &[]);
        let v: serde_json::Value = serde_json::from_str(&out).expect("outputs");
        assert_eq!(v["n"]["value"], 3, "{tool}");
    }
}

/// `state rm -dry-run` and `state mv -dry-run` beside Terraform: the same
/// words, and the state left as it was.
#[test]
fn state_dry_runs_say_what_terraform_says_and_change_nothing() {
    if !require_terraform("state_dry_runs_say_what_terraform_says_and_change_nothing") {
        return;
    }
    let steps: &[&[&str]] = &[
        &["state", "rm", "-dry-run", "terraform_data.a"],
        &[
            "state",
            "mv",
            "-dry-run",
            "terraform_data.a",
            "terraform_data.z",
        ],
        &["state", "rm", "-dry-run", "terraform_data.nope"],
        &["state", "list"],
    ];
    let mut said: Vec<Vec<String>> = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready(tool, "dry-run");
        let (code, out, err) = run(tool, &dir, &["apply", "-auto-approve", "-var", "n=1"], &[]);
        assert_eq!(code, 0, "{tool}: {out}{err}");
        let mut outs = Vec::new();
        for args in steps {
            let (code, out, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, 0, "{tool} {args:?}:\n{out}\n{err}");
            outs.push(out);
        }
        said.push(outs);
    }
    assert_eq!(said[0], said[1]);
}

/// `output` in each of its forms beside Terraform on outputs of every
/// kind: all of them, each by name, `-json`, and `-raw` (which scripts
/// use to read one value): the same bytes on stdout and the same exit
/// codes, a null output absent in both.
#[test]
fn output_forms_are_terraforms() {
    if !require_terraform("output_forms_are_terraforms") {
        return;
    }
    let config = r#"
resource "terraform_data" "a" {
  input = { a = 1, "b c" = ["x", "y"] }
}
output "s" { value = "hello" }
output "multi" { value = "one\ntwo\n" }
output "n" { value = 1.5 }
output "b" { value = true }
output "tuple" { value = ["a", 1] }
output "list" { value = tolist(["a", "b"]) }
output "obj" { value = terraform_data.a.output }
output "nothing" { value = null }
output "secret" {
  value     = "hidden"
  sensitive = true
}
"#;
    let names = [
        "s", "multi", "n", "b", "tuple", "list", "obj", "nothing", "secret",
    ];
    let mut asks: Vec<Vec<&str>> = vec![vec!["output"], vec!["output", "-json"]];
    for n in names {
        asks.push(vec!["output", n]);
        asks.push(vec!["output", "-json", n]);
        asks.push(vec!["output", "-raw", n]);
    }
    let mut seen: Vec<Vec<(i32, String)>> = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "output", &[("main.tf", config)]);
        let (code, out, err) = run(tool, &dir, &["apply", "-auto-approve"], &[]);
        assert_eq!(code, 0, "{tool} apply:\n{out}\n{err}");
        seen.push(
            asks.iter()
                .map(|args| {
                    let (code, out, _) =
                        run(tool, &dir, &[&args[..], &["-no-color"]].concat(), &[]);
                    (code, out)
                })
                .collect(),
        );
    }
    for (i, args) in asks.iter().enumerate() {
        assert_eq!(
            seen[1][i], seen[0][i],
            "strata {args:?} (left) against terraform (right)"
        );
    }
}

/// `state list -id` and `workspace new -state` beside Terraform: the
/// instance found by its id (and none by another), and a new workspace
/// started from a state file holding what the file holds.
#[test]
fn state_list_id_and_workspace_new_state_are_terraforms() {
    if !require_terraform("state_list_id_and_workspace_new_state_are_terraforms") {
        return;
    }
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready(tool, "listid");
        let ok = |args: &[&str]| {
            let (code, out, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, 0, "{tool} {args:?}:\n{out}\n{err}");
            out
        };
        ok(&["apply", "-auto-approve", "-var", "n=3"]);
        let shown: serde_json::Value = serde_json::from_str(&ok(&["show", "-json"])).expect("JSON");
        let id = shown["values"]["root_module"]["resources"][0]["values"]["id"]
            .as_str()
            .expect("an id")
            .to_string();
        let by_id = ok(&["state", "list", &format!("-id={id}")]);
        let by_other = ok(&["state", "list", "-id", "no-such-id"]);
        std::fs::write(dir.join("copy.tfstate"), ok(&["state", "pull"])).expect("copy");
        let created = ok(&["workspace", "new", "-state=copy.tfstate", "dev"]);
        let outputs = ok(&["output", "-json"]);
        let listed = ok(&["state", "list"]);
        seen.push((
            by_id,
            by_other,
            created.contains("Created and switched"),
            outputs,
            listed,
        ));
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
    assert_eq!(seen[0].0, "terraform_data.a\n");
}

/// Bytes that are not UTF-8, beside Terraform: in a variables file they
/// are an error at their line ("Invalid character encoding"; strata named
/// no line), in a `-var` they are read as U+FFFD (strata said "flag needs
/// an argument").
#[cfg(unix)]
#[test]
fn input_that_is_not_utf8_is_read_as_terraform_reads_it() {
    use std::os::unix::ffi::OsStrExt;
    if !require_terraform("input_that_is_not_utf8_is_read_as_terraform_reads_it") {
        return;
    }
    let config = "variable \"v\" {\n  type = string\n}\n\noutput \"o\" {\n  value = var.v\n}\n";
    let var = std::ffi::OsStr::from_bytes(b"v=a\xffb");
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "not-utf8", &[("main.tf", config)]);
        std::fs::write(
            dir.join("bad.tfvars"),
            b"v = \"ok\"\n# a comment\nv = \"a\xffb\"\n",
        )
        .expect("var file");
        let (code, out, err) = run(
            tool,
            &dir,
            &["plan", "-no-color", "-var-file=bad.tfvars"],
            &[],
        );
        assert_eq!(code, 1, "{tool}:\n{out}\n{err}");
        assert!(err.contains("Invalid character encoding"), "{tool}: {err}");
        let line = match tool {
            "terraform" => "on bad.tfvars line 3",
            _ => "bad.tfvars:3:",
        };
        assert!(err.contains(line), "{tool} names no line: {err}");
        let args = [
            std::ffi::OsStr::new("plan"),
            "-no-color".as_ref(),
            "-var".as_ref(),
            var,
        ];
        let out = std::process::Command::new(oracle::program(tool))
            .args(args)
            .current_dir(&dir)
            .env("TF_IN_AUTOMATION", "1")
            .output()
            .expect("runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{tool}: {text}");
        assert!(text.contains("+ o = \"a\u{fffd}b\""), "{tool}: {text}");
    }
}

/// A plan saved in one directory and applied in another without a
/// state, beside Terraform: refused in Terraform's words; strata named
/// the lineage of a state that is not there.
#[test]
fn a_saved_plan_for_another_state_is_refused_as_terraform_refuses_it() {
    if !require_terraform("a_saved_plan_for_another_state_is_refused_as_terraform_refuses_it") {
        return;
    }
    for tool in ["terraform", "strata"] {
        let config = "resource \"terraform_data\" \"x\" {\n  input = 1\n}\n";
        let here = ready_with(tool, "saved-here", &[("main.tf", config)]);
        let there = ready_with(tool, "saved-there", &[("main.tf", config)]);
        let (code, _, err) = run(tool, &here, &["apply", "-auto-approve"], &[]);
        assert_eq!(code, 0, "{tool}: {err}");
        std::fs::write(here.join("main.tf"), config.replace('1', "2")).expect("config");
        let (code, _, err) = run(tool, &here, &["plan", "-out=p"], &[]);
        assert_eq!(code, 0, "{tool}: {err}");
        std::fs::copy(here.join("p"), there.join("p")).expect("copy");
        let (code, out, err) = run(tool, &there, &["apply", "-no-color", "p"], &[]);
        assert_eq!(code, 1, "{tool}:\n{out}\n{err}");
        assert!(
            err.contains("Saved plan does not match the given state"),
            "{tool}: {err}"
        );
        let words = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            tool == "terraform" || words.contains("there is no state at"),
            "{tool}: {err}"
        );
        assert!(
            !there.join("terraform.tfstate").exists(),
            "{tool} wrote a state"
        );
    }
}

/// A backend block added over local workspaces, beside Terraform: init
/// says "Initializing the backend..." and then asks once (strata asked
/// before saying it, refused without -migrate-state as if a backend had
/// changed, and then waited on its own lock: a local backend's `path`
/// leaves the named workspaces where they were); answered yes, every
/// workspace plans with no changes and the same workspaces are listed.
#[test]
fn a_backend_added_over_workspaces_asks_once_as_terraform_asks() {
    if !require_terraform("a_backend_added_over_workspaces_asks_once_as_terraform_asks") {
        return;
    }
    let config = "resource \"terraform_data\" \"x\" {\n  input = 1\n}\n";
    let backend =
        "terraform {\n  backend \"local\" {\n    path = \"b/terraform.tfstate\"\n  }\n}\n";
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "backend-added", &[("main.tf", config)]);
        for args in [
            &["apply", "-auto-approve"][..],
            &["workspace", "new", "prod"],
            &["apply", "-auto-approve"],
        ] {
            let (code, _, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, 0, "{tool} {args:?}: {err}");
        }
        std::fs::write(dir.join("backend.tf"), backend).expect("backend");
        let mut child = std::process::Command::new(oracle::program(tool))
            .args(["init", "-no-color"])
            .current_dir(&dir)
            .env("CHECKPOINT_DISABLE", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("init starts");
        let asked = oracle::until_asked(&mut child);
        let at = |what: &str| {
            asked
                .find(what)
                .unwrap_or_else(|| panic!("{tool}: {what:?} in {asked}"))
        };
        assert!(
            at("Initializing the backend...") < at("Do you want to migrate all workspaces"),
            "{tool}: {asked}"
        );
        use std::io::Write as _;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"yes\n")
            .expect("answer");
        let out = child.wait_with_output().expect("init ends");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{tool}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for workspace in ["default", "prod"] {
            run(tool, &dir, &["workspace", "select", workspace], &[]);
            let (code, out, err) = run(tool, &dir, &["plan", "-detailed-exitcode"], &[]);
            assert_eq!(code, 0, "{tool} {workspace}:\n{out}\n{err}");
        }
        seen.push(run(tool, &dir, &["workspace", "list"], &[]).1);
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
}

/// `local-exec` provisioners beside Terraform: run after a create with
/// `self` the new object (and `count.index`, an interpreter, a working
/// directory, an environment, `quiet`), their output streamed line by
/// line as Terraform streams it, a sensitive value's output suppressed, a
/// failure an error at the block with the object kept tainted (the next
/// plan replaces it), `on_failure = continue` going on; destroy-time ones
/// run before the delete (not a tainted object's), and one that fails
/// keeps its object. strata refused every `provisioner` block.
#[test]
fn local_exec_provisioners_run_as_terraform_runs_them() {
    if !require_terraform("local_exec_provisioners_run_as_terraform_runs_them") {
        return;
    }
    let config = r#"
variable "secret" {
  default   = "hunter2"
  sensitive = true
}

resource "terraform_data" "x" {
  input = "v1"
  provisioner "local-exec" {
    command     = "echo hello ${self.input} $FOO; echo err >&2"
    environment = { FOO = "bar" }
  }
  provisioner "local-exec" {
    command = "echo ${var.secret}"
  }
  provisioner "local-exec" {
    command    = "exit 4"
    on_failure = continue
  }
  provisioner "local-exec" {
    command     = "import os; print('py', os.getcwd())"
    interpreter = ["python3", "-c"]
    working_dir = "/"
    quiet       = true
  }
  provisioner "local-exec" {
    when    = destroy
    command = "echo bye ${self.input}"
  }
}

resource "terraform_data" "f" {
  count = 1
  provisioner "local-exec" {
    command = "echo failing ${count.index}; exit 3"
  }
}

resource "terraform_data" "d" {
  provisioner "local-exec" {
    when    = destroy
    command = "echo no; exit 5"
  }
}

resource "terraform_data" "t" {
  provisioner "local-exec" {
    when    = destroy
    command = "echo undoing what a tainted object never did"
  }
}
"#;
    // Lines of provisioners, in order per resource (resources run at once).
    let provisioned = |out: &str| {
        let mut lines: Vec<String> = out
            .lines()
            .filter(|l| l.contains("(local-exec)") || l.contains("Provisioning with"))
            .map(str::to_string)
            .collect();
        lines.sort_by_key(|l| l.split([' ', ':']).next().unwrap_or_default().to_string());
        lines
    };
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "local-exec", &[("main.tf", config)]);
        let (code, out, err) = run(tool, &dir, &["apply", "-auto-approve", "-no-color"], &[]);
        assert_eq!(code, 1, "{tool}:\n{out}\n{err}");
        let words = err.split_whitespace().collect::<Vec<_>>().join(" ");
        for says in [
            "local-exec provisioner error",
            "Error running command 'echo failing 0; exit 3': exit status 3. Output: failing 0",
        ] {
            assert!(words.contains(says), "{tool} does not say {says:?}: {err}");
        }
        let applied = provisioned(&out);
        let (code, plan, _) = run(
            tool,
            &dir,
            &["plan", "-no-color", "-detailed-exitcode"],
            &[],
        );
        assert_eq!(code, 2, "{tool}: {plan}");
        assert!(
            plan.contains("terraform_data.f[0] is tainted, so must be replaced"),
            "{tool}: {plan}"
        );
        // A tainted object's destroy-time provisioner does not run.
        let (code, _, err) = run(tool, &dir, &["taint", "terraform_data.t"], &[]);
        assert_eq!(code, 0, "{tool}: {err}");
        let (code, out, err) = run(tool, &dir, &["destroy", "-auto-approve", "-no-color"], &[]);
        assert_eq!(code, 1, "{tool}:\n{out}\n{err}");
        let words = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains("exit status 5. Output: no"), "{tool}: {err}");
        let destroyed = provisioned(&out);
        let left = run(tool, &dir, &["state", "list"], &[]).1;
        seen.push((applied, destroyed, left));
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
}

/// Provisioner blocks that cannot be, beside Terraform: `validate` says
/// so in Terraform's words, exit 1.
#[test]
fn provisioner_mistakes_are_terraforms() {
    if !require_terraform("provisioner_mistakes_are_terraforms") {
        return;
    }
    let cases = [
        ("provisioner \"local-exec\" {\n    when    = later\n    command = \"x\"\n  }", "Invalid \"when\" keyword"),
        ("provisioner \"local-exec\" {\n    command    = \"x\"\n    on_failure = maybe\n  }", "Invalid \"on_failure\" keyword"),
        ("provisioner \"local-exec\" {\n    comand = \"x\"\n  }", "Missing required argument"),
        ("provisioner \"file\" {\n    destination = \"/x\"\n  }", "Must provide one of 'source' or 'content'"),
        ("provisioner \"foo\" {}", "Missing required provisioner plugin"),
        ("provisioner \"chef\" {}", "The \"chef\" provisioner has been removed"),
        ("provisioner \"local-exec\" {\n    when    = destroy\n    command = \"echo ${var.v}\"\n  }", "Invalid reference from destroy provisioner"),
    ];
    for (i, (block, says)) in cases.iter().enumerate() {
        let config = format!("variable \"v\" {{\n  default = 1\n}}\n\nresource \"terraform_data\" \"x\" {{\n  {block}\n}}\n");
        for tool in ["terraform", "strata"] {
            // Terraform's init itself refuses a provisioner it has no
            // plugin for; validate says it again.
            let dir = workdir(&format!("provisioner-mistake-{i}-{tool}")).join("infra");
            let _ = std::fs::remove_file(dir.join("main.tf"));
            write_tree(&dir, &[("main.tf", &config)]);
            run(tool, &dir, &["init", "-input=false"], &[]);
            let (code, out, err) = run(tool, &dir, &["validate", "-no-color"], &[]);
            assert_eq!(code, 1, "{tool} {block}:\n{out}\n{err}");
            assert!(err.contains(says), "{tool} {block}: {err}");
        }
    }
}

/// A plan whose walk meets an error, beside Terraform: what it planned
/// before the error is shown above it ("planned the following actions,
/// but then encountered a problem"), and a plan that planned nothing says
/// "Planning failed."; an apply shows the part only when it holds
/// changes. strata showed the error alone.
#[test]
fn a_failed_plan_shows_what_it_planned_as_terraform() {
    if !require_terraform("a_failed_plan_shows_what_it_planned_as_terraform") {
        return;
    }
    let guarded = r#"
variable "want" {
  default = 2
}

resource "terraform_data" "b" {
  input = 2
  lifecycle {
    precondition {
      condition     = terraform_data.a.input == var.want
      error_message = "Nope."
    }
  }
}
"#;
    let with_a = format!("{guarded}\nresource \"terraform_data\" \"a\" {{\n  input = 1\n}}\n");
    let cases: [(&str, &str, &[&str]); 3] = [
        ("partial-plan", &with_a, &["plan", "-no-color"]),
        (
            "partial-apply",
            &with_a,
            &["apply", "-no-color", "-auto-approve"],
        ),
        (
            "nothing-planned",
            guarded,
            &["plan", "-no-color", "-var", "want=3"],
        ),
    ];
    for (tag, config, args) in cases {
        // In the third, `a` is not declared: the precondition cannot be
        // judged, and the plan fails having planned nothing.
        let config = match tag {
            "nothing-planned" => config.replace("terraform_data.a.input", "var.want - 1"),
            _ => config.to_string(),
        };
        let mut seen = Vec::new();
        for tool in ["terraform", "strata"] {
            let dir = ready_with(tool, tag, &[("main.tf", config.as_str())]);
            let (code, out, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, 1, "{tool} {tag}:\n{out}\n{err}");
            assert!(
                err.contains("Resource precondition failed"),
                "{tool} {tag}: {err}"
            );
            seen.push(out.replace("Terraform", "strata"));
        }
        assert_eq!(
            seen[1], seen[0],
            "{tag}: strata (left) against terraform (right)"
        );
    }
    // Saved with -out all the same, marked errored: show reads it, apply
    // refuses it.
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "partial-out", &[("main.tf", with_a.as_str())]);
        let (code, out, err) = run(tool, &dir, &["plan", "-out=failed.tfplan"], &[]);
        assert_eq!(code, 1, "{tool}:\n{out}\n{err}");
        let (code, shown, err) = run(tool, &dir, &["show", "-json", "failed.tfplan"], &[]);
        assert_eq!(code, 0, "{tool} show:\n{err}");
        let shown: serde_json::Value = serde_json::from_str(&shown).expect("plan JSON");
        let planned: Vec<String> = shown["resource_changes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("{} {}", c["address"], c["change"]["actions"]))
            .collect();
        let (code, out, err) = run(tool, &dir, &["apply", "-no-color", "failed.tfplan"], &[]);
        assert_eq!(code, 1, "{tool} apply:\n{out}\n{err}");
        assert!(
            err.contains("Cannot apply incomplete plan"),
            "{tool}: {err}"
        );
        seen.push((shown["errored"].clone(), planned));
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
    assert_eq!(seen[0].0, serde_json::json!(true));
    // Under -json the part planned is its messages, then the error.
    for args in [&["plan", "-json"][..], &["apply", "-json", "-auto-approve"]] {
        let mut seen = Vec::new();
        for tool in ["terraform", "strata"] {
            let dir = ready_with(tool, "partial-json", &[("main.tf", with_a.as_str())]);
            let (code, out, err) = run(tool, &dir, args, &[]);
            assert_eq!(code, 1, "{tool} {args:?}:\n{out}\n{err}");
            let said: Vec<(String, String)> = out
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|m| m["type"] != "version")
                .map(|m| (m["type"].to_string(), m["@message"].to_string()))
                .collect();
            seen.push(said);
        }
        assert_eq!(
            seen[1], seen[0],
            "{args:?}: strata (left) against terraform (right)"
        );
    }
}

/// `plan -generate-config-out` beside Terraform: configuration written
/// for the import blocks whose targets have none (the same blocks), the
/// plan saying so, the file then part of the configuration (an apply
/// imports both objects, the next plan is empty), and an existing file
/// refused.
#[test]
fn generate_config_out_is_terraforms() {
    if !require_terraform("generate_config_out_is_terraforms") {
        return;
    }
    let config = r#"
import {
  to = terraform_data.b
  id = "abc-123"
}

import {
  to = terraform_data.d
  id = "dd"
}

resource "terraform_data" "a" {
  input = 1
}
"#;
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "genconf", &[("main.tf", config)]);
        let plan = ["plan", "-no-color", "-generate-config-out=gen.tf"];
        let (code, out, err) = run(tool, &dir, &plan, &[]);
        assert_eq!(code, 0, "{tool}:\n{out}\n{err}");
        let out = out
            .replace("Terraform", "strata")
            .replace("terraform apply", "strata apply");
        for says in [
            "terraform_data.b: Preparing import... [id=abc-123]",
            "  # terraform_data.d will be imported\n  # (config will be generated)\n",
            "Plan: 2 to import, 1 to add, 0 to change, 0 to destroy.",
        ] {
            assert!(out.contains(says), "{tool} does not say {says:?}:\n{out}");
        }
        // Advice, which a script (TF_IN_AUTOMATION) is not given.
        assert!(
            !out.contains("has generated configuration and written it"),
            "{tool}: {out}"
        );
        let text = std::fs::read_to_string(dir.join("gen.tf"))
            .expect("gen.tf")
            .replace("Terraform", "strata");
        // Terraform writes the blocks in the order its imports finished.
        let mut blocks: Vec<String> = text.split("\n\n").map(|b| b.trim().to_string()).collect();
        blocks.sort();
        let (code, out, err) = run(tool, &dir, &plan, &[]);
        assert_eq!(code, 1, "{tool} over an existing file:\n{out}\n{err}");
        assert!(
            err.contains("Target generated file already exists"),
            "{tool}: {err}"
        );
        let (code, out, err) = run(tool, &dir, &["apply", "-auto-approve"], &[]);
        assert_eq!(code, 0, "{tool} apply:\n{out}\n{err}");
        let (code, out, _) = run(tool, &dir, &["plan", "-detailed-exitcode"], &[]);
        assert_eq!(code, 0, "{tool} plans again:\n{out}");
        let listed = run(tool, &dir, &["state", "list"], &[]).1;
        seen.push((blocks, listed));
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
}

/// A backend changed under a state, beside Terraform: a backend block
/// added over a local state stops the plan until init moves it
/// (`-force-copy`), a changed block stops init itself without
/// `-migrate-state` or `-reconfigure`, `-migrate-state -force-copy` moves
/// the state again, and `-reconfigure` starts from the new backend's
/// (empty) state. The same exit codes and words at every step.
#[test]
fn init_migrate_state_is_terraforms() {
    if !require_terraform("init_migrate_state_is_terraforms") {
        return;
    }
    let backend = |path: &str| {
        format!("terraform {{\n  backend \"local\" {{\n    path = \"{path}\"\n  }}\n}}\n")
    };
    let steps: &[(Option<&str>, &[&str], i32, &str)] = &[
        (None, &["apply", "-auto-approve", "-var", "n=1"], 0, ""),
        (
            Some("b.tfstate"),
            &["plan", "-var", "n=1"],
            1,
            "Backend initialization required",
        ),
        (
            None,
            &["init", "-input=false", "-force-copy"],
            0,
            "Successfully configured the backend \"local\"!",
        ),
        (None, &["plan", "-var", "n=1", "-detailed-exitcode"], 0, ""),
        (
            Some("c.tfstate"),
            &["init", "-input=false"],
            1,
            "Backend configuration changed",
        ),
        (
            None,
            &["plan", "-var", "n=1"],
            1,
            "Backend initialization required",
        ),
        (
            None,
            &["init", "-input=false", "-migrate-state", "-force-copy"],
            0,
            "Backend configuration changed!",
        ),
        (None, &["plan", "-var", "n=1", "-detailed-exitcode"], 0, ""),
        (None, &["state", "list"], 0, "terraform_data.a"),
        (
            Some("d.tfstate"),
            &["init", "-input=false", "-reconfigure"],
            0,
            "",
        ),
        (None, &["plan", "-var", "n=1", "-detailed-exitcode"], 2, ""),
    ];
    for tool in ["terraform", "strata"] {
        let dir = ready(tool, "migrate");
        for (path, args, want, says) in steps {
            if let Some(p) = path {
                std::fs::write(dir.join("backend.tf"), backend(p)).expect("backend");
            }
            let mut args = args.to_vec();
            args.push("-no-color");
            let (code, out, err) = run(tool, &dir, &args, &[]);
            assert_eq!(code, *want, "{tool} {args:?}:\n{out}\n{err}");
            assert!(
                out.contains(says) || err.contains(says),
                "{tool} {args:?} does not say {says:?}:\n{out}\n{err}"
            );
        }
    }
}

/// `console` over a state beside Terraform's: resources (one, counted,
/// for_each), locals computed from them and variables, from the
/// working directory's configuration and state; `-state=FILE` reads
/// another state; `-plan` what a plan would leave (unknown where only the
/// apply can know). The same answers, byte for byte.
#[test]
fn console_reads_the_state_as_terraforms_does() {
    if !require_terraform("console_reads_the_state_as_terraforms_does") {
        return;
    }
    let config = r#"
variable "n" {
  default = 2
}
resource "terraform_data" "a" {
  input = { k = var.n, s = "x" }
}
resource "terraform_data" "c" {
  count = 2
  input = count.index
}
resource "terraform_data" "e" {
  for_each = toset(["p", "q"])
  input    = each.key
}
locals {
  twice = terraform_data.a.output.k * 2
}
"#;
    let asks = [
        "terraform_data.a.output",
        "local.twice",
        "terraform_data.c[1].output",
        "terraform_data.e[\"q\"].input",
        "length(terraform_data.c)",
        "[for k, v in terraform_data.e : v.output]",
    ];
    let answer = |tool: &str, dir: &Path, args: &[&str], ask: &str| {
        let (code, out, err) = oracle::run_piped(tool, dir, args, &format!("{ask}\n"));
        assert_eq!(code, 0, "{tool} console: {err}");
        out
    };
    // One expression a run: Terraform's console, reading a pipe, prints
    // only the last answer.
    let console = |tool: &str, dir: &Path, args: &[&str]| -> Vec<String> {
        asks.iter()
            .map(|ask| answer(tool, dir, args, ask))
            .collect()
    };

    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "console", &[("main.tf", config)]);
        assert_eq!(run(tool, &dir, &["apply", "-auto-approve"], &[]).0, 0);
        let state = run(tool, &dir, &["state", "pull"], &[]).1;
        std::fs::write(dir.join("before.tfstate"), state).expect("copy");
        assert_eq!(
            run(tool, &dir, &["apply", "-auto-approve", "-var", "n=5"], &[]).0,
            0
        );
        seen.push((
            console(tool, &dir, &["console"]),
            console(tool, &dir, &["console", "-state=before.tfstate"]),
            console(tool, &dir, &["console", "-plan", "-var", "n=7"]),
        ));
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
    assert!(
        seen[0].0[0].contains("\"k\" = \"5\"") && seen[0].1[0].contains("\"k\" = 2"),
        "{seen:?}"
    );
}

/// `console -scope` (Terraform 1.16, after the 1.11 here): in a module
/// instance, its locals and resources read as Terraform 1.11 reads the
/// same values through the module's outputs from the root; a scope the
/// configuration does not make, or that is no module address, is an error.
#[test]
fn console_scope_reads_a_module_instance_as_its_outputs_say() {
    if !require_terraform("console_scope_reads_a_module_instance_as_its_outputs_say") {
        return;
    }
    let child = r#"
variable "name" {}
variable "size" {
  default = 3
}
locals {
  label = "${var.name}-${var.size}"
}
resource "terraform_data" "r" {
  input = local.label
}
output "label" {
  value = terraform_data.r.output
}
"#;
    let root = r#"
module "net" {
  count  = 2
  source = "./net"
  name   = "net${count.index}"
}
module "pool" {
  for_each = { a = 1, b = 2 }
  source   = "./net"
  name     = each.key
  size     = each.value
}
"#;
    let files = [("main.tf", root), ("net/main.tf", child)];
    let mut dirs = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "console-scope", &files);
        if tool == "strata" {
            assert_eq!(run(tool, &dir, &["init"], &[]).0, 0);
        }
        assert_eq!(run(tool, &dir, &["apply", "-auto-approve"], &[]).0, 0);
        dirs.push(dir);
    }
    let ask = |tool: &str, dir: &Path, args: &[&str], line: &str| {
        oracle::run_piped(tool, dir, args, &format!("{line}\n"))
    };
    for (scope, instance) in [
        ("module.net[1]", "module.net[1]"),
        ("module.pool[\"b\"]", "module.pool[\"b\"]"),
    ] {
        let (_, want, _) = ask(
            "terraform",
            &dirs[0],
            &["console"],
            &format!("{instance}.label"),
        );
        let args = ["console", &format!("-scope={scope}")];
        for line in ["local.label", "terraform_data.r.output"] {
            let (code, got, err) = ask("strata", &dirs[1], &args, line);
            assert_eq!(code, 0, "{scope} {line}: {err}");
            assert_eq!(got, want, "{scope} {line}");
        }
    }
    // From the root, module calls' outputs as Terraform computes them
    // over the state (strata's console had them unknown).
    for line in [
        "module.net",
        "length(module.pool)",
        "module.pool[\"b\"].label",
    ] {
        let (_, want, _) = ask("terraform", &dirs[0], &["console"], line);
        let (code, got, err) = ask("strata", &dirs[1], &["console"], line);
        assert_eq!(code, 0, "{line}: {err}");
        assert_eq!(got, want, "{line}");
    }
    for bad in ["module.net[5]", "module.nope", "net"] {
        let args = ["console", &format!("-scope={bad}")];
        let (code, _, err) = ask("strata", &dirs[1], &args, "1");
        assert_eq!(code, 1, "{bad}");
        assert!(err.contains("Invalid scope"), "{bad}: {err}");
    }
}

/// Lines piped into the console, as Terraform's console reads them: each
/// evaluated, only the last answer printed; the first error stops it
/// with exit 1 and no answer; `exit` ends it with none.
#[test]
fn the_console_reads_a_pipe_as_terraforms_does() {
    if !require_terraform("the_console_reads_a_pipe_as_terraforms_does") {
        return;
    }
    let inputs = [
        "1 + 1\n2 + 2\n",
        "1 + 1\n\nupper(\"a\")\n",
        "1 + 1\nfoo(\n2\n",
        "1 + 1\nnope.x\n3\n",
        "1 + 1\nexit\n3\n",
        "type(1)\n",
    ];
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "console-pipe", &[("main.tf", "")]);
        let answers: Vec<(i32, String)> = inputs
            .iter()
            .map(|input| {
                let (code, out, _) = oracle::run_piped(tool, &dir, &["console"], input);
                (code, out.trim().to_string())
            })
            .collect();
        seen.push(answers);
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
    assert_eq!(seen[0][0], (0, "4".to_string()), "{seen:?}");
    assert_eq!(seen[0][2].0, 1, "{seen:?}");
}

/// Plan JSON's `relevant_attributes` beside Terraform's: references from
/// changing resources (literal and dynamic indexes, splats, nested
/// attributes), from a changing output through a local, and from a child
/// module's outputs, which Terraform counts in every plan. Terraform lists
/// them in no fixed order, so they are compared as sets.
#[test]
fn relevant_attributes_are_terraforms() {
    if !require_terraform("relevant_attributes_are_terraforms") {
        return;
    }
    let config = r#"
variable "v" {
  default = 1
}
resource "terraform_data" "d" {
  input = "d"
}
resource "terraform_data" "a" {
  input = [var.v, terraform_data.d.output]
}
resource "terraform_data" "b" {
  input = { x = terraform_data.a.output, y = terraform_data.c[0].id, z = var.v }
}
resource "terraform_data" "c" {
  count = 2
  input = "c"
}
resource "terraform_data" "f" {
  input = [terraform_data.c[*].id, terraform_data.c[var.v].output, var.v]
}
locals {
  l = terraform_data.c[1].output
}
output "o" {
  value = [terraform_data.b.output.x, local.l]
}
module "m" {
  source = "./m"
  i      = terraform_data.a.id
}
"#;
    let child = "variable \"i\" {}\nresource \"terraform_data\" \"in\" {\n  input = var.i\n}\noutput \"x\" {\n  value = terraform_data.in.output\n}\n";
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(
            tool,
            "relevant",
            &[("main.tf", config), ("m/main.tf", child)],
        );
        assert_eq!(run(tool, &dir, &["apply", "-auto-approve"], &[]).0, 0);
        let mut sets = Vec::new();
        for v in ["1", "0"] {
            let (code, out, err) = run(
                tool,
                &dir,
                &["plan", "-var", &format!("v={v}"), "-out=p.bin"],
                &[],
            );
            assert_eq!(code, 0, "{tool}:\n{out}\n{err}");
            let shown: serde_json::Value =
                serde_json::from_str(&run(tool, &dir, &["show", "-json", "p.bin"], &[]).1)
                    .expect("plan JSON");
            let mut set: Vec<String> = shown["relevant_attributes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| r.to_string())
                .collect();
            set.sort();
            sets.push(set);
        }
        seen.push(sets);
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
    assert!(seen[0][1].len() > 4, "{:?}", seen[0]);
}

/// A targeted destroy beside Terraform: `plan -destroy -target` plans only
/// the target and what depends on it, `apply -destroy -target` removes
/// just those, and `init` refuses a `required_version` it does not meet.
/// The same exit codes and the same state left.
#[test]
fn targeted_destroy_and_required_version_are_terraforms() {
    if !require_terraform("targeted_destroy_and_required_version_are_terraforms") {
        return;
    }
    let config = r#"
resource "terraform_data" "a" {
  input = 1
}
resource "terraform_data" "b" {
  input = terraform_data.a.output
}
resource "terraform_data" "c" {
  input = 3
}
"#;
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "tdestroy", &[("main.tf", config)]);
        let mut steps = Vec::new();
        for args in [
            &["apply", "-auto-approve"][..],
            &[
                "plan",
                "-destroy",
                "-target=terraform_data.a",
                "-detailed-exitcode",
            ],
            &[
                "apply",
                "-destroy",
                "-target=terraform_data.a",
                "-auto-approve",
            ],
            &["state", "list"],
        ] {
            let (code, out, _) = run(tool, &dir, args, &[]);
            let shown = match args[0] {
                "state" => out,
                _ => String::new(),
            };
            steps.push((code, shown));
        }
        std::fs::write(
            dir.join("version.tf"),
            "terraform {\n  required_version = \"< 0.1.0\"\n}\n",
        )
        .expect("version");
        let (code, _, err) = run(tool, &dir, &["init", "-input=false", "-no-color"], &[]);
        assert!(
            err.contains("Unsupported Terraform Core version"),
            "{tool}: {err}"
        );
        steps.push((code, String::new()));
        seen.push(steps);
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
    assert_eq!(seen[0][3].1, "terraform_data.c\n");
}

/// `TF_WORKSPACE` read as Terraform reads it: it picks the workspace of
/// every command (`workspace show`, where an apply and `output` go), and
/// `workspace select` refuses to change it, exit 1, in both tools.
#[test]
fn tf_workspace_is_read_as_terraform_reads_it() {
    if !require_terraform("tf_workspace_is_read_as_terraform_reads_it") {
        return;
    }
    let dev = [("TF_WORKSPACE", "dev")];
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready(tool, "tfws");
        let mut steps = Vec::new();
        for (args, env) in [
            (&["workspace", "new", "dev"][..], &[][..]),
            (&["workspace", "select", "default"], &[]),
            (&["workspace", "show"], &dev),
            (&["apply", "-auto-approve", "-var", "n=4"], &dev),
            (&["output", "-json"], &dev),
            (&["output", "-json"], &[]),
            (&["workspace", "select", "default"], &dev),
        ] {
            let (code, out, _) = run(tool, &dir, args, env);
            // What names the workspace and the outputs; the other steps'
            // words are compared in `workspace_commands_say_what_terraform_says`.
            let shown = match (args[0], args[1]) {
                ("workspace", "show") | ("output", _) => out,
                _ => String::new(),
            };
            steps.push((code, shown));
        }
        seen.push(steps);
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
    assert_eq!(seen[0][2].1, "dev\n");
    assert_eq!(seen[0][6].0, 1);
}

/// The functions whose value differs on every call (`timestamp`, `uuid`,
/// `bcrypt`) are known after apply in a plan and called by the apply, in
/// both tools: a plan that printed a timestamp would promise a value its
/// apply does not keep.
#[test]
fn impure_functions_are_known_after_apply_in_a_plan() {
    if !require_terraform("impure_functions_are_known_after_apply_in_a_plan") {
        return;
    }
    let config = r#"
resource "terraform_data" "t" {
  input = { at = timestamp(), id = uuid(), hash = bcrypt("x") }
}

output "at" {
  value = timestamp()
}
"#;
    for tool in ["strata", "terraform"] {
        let dir = ready_with(tool, "impure", &[("main.tf", config)]);
        let (code, out, err) = run(tool, &dir, &["plan", "-no-color"], &[]);
        assert_eq!(code, 0, "{tool}: {out}{err}");
        for line in [
            "+ at   = (known after apply)",
            "+ hash = (known after apply)",
        ] {
            assert!(out.contains(line), "{tool} plan lacks {line:?}:\n{out}");
        }
        assert!(
            out.contains("+ at = (known after apply)"),
            "{tool} plan:\n{out}"
        );
        let (code, out, err) = run(tool, &dir, &["apply", "-auto-approve", "-no-color"], &[]);
        assert_eq!(code, 0, "{tool}: {out}{err}");
        let at = out.lines().find(|l| l.starts_with("at = ")).unwrap_or("");
        assert!(
            at.contains("T") && at.ends_with("Z\""),
            "{tool} apply: {out}"
        );
    }
}

/// The console writes a null of a known type as Terraform's does, so it
/// reads back as the same value (`tostring(null)`, `tolist(null) /* of
/// string */`), and an untyped one as `null`.
#[test]
fn the_console_names_a_nulls_type() {
    if !require_terraform("the_console_names_a_nulls_type") {
        return;
    }
    let exprs = [
        "null",
        "tostring(null)",
        "tonumber(null)",
        "tobool(null)",
        "tolist(null)",
        "toset(null)",
        "tomap({ a = null, b = \"x\" })",
        "[null, tostring(null)]",
        "{ a = null }",
    ];
    // Terraform's console reads a piped input whole: one run a line.
    let console = |tool: &str, expr: &str| -> String {
        let dir = workdir(&format!("null-console-{tool}"));
        let (code, out, err) = oracle::run_piped(tool, &dir, &["console"], &format!("{expr}\n"));
        assert_eq!(code, 0, "{tool} console {expr}: {err}");
        out
    };
    for expr in exprs {
        let said = [console("strata", expr), console("terraform", expr)];
        assert_eq!(said[0], said[1], "{expr}: strata (left), terraform (right)");
    }
}

/// `validate` holds a module call's inputs to the child's validation
/// rules where the configuration fixes them, and leaves those that come
/// from the root's variables (unknown to validate), beside Terraform.
#[test]
fn validate_holds_module_inputs_to_the_childs_rules() {
    if !require_terraform("validate_holds_module_inputs_to_the_childs_rules") {
        return;
    }
    let child = r#"
variable "size" {
  type = number
  validation {
    condition     = var.size < 10
    error_message = "size must be under 10."
  }
}
"#;
    let call = |size: &str| {
        format!("variable \"n\" {{\n  default = 1\n}}\n\nmodule \"c\" {{\n  source = \"./child\"\n  size   = {size}\n}}\n")
    };
    for (size, want) in [("12", 1), ("var.n + 20", 0), ("3", 0)] {
        for tool in ["strata", "terraform"] {
            let root = call(size);
            let files = [("main.tf", root.as_str()), ("child/main.tf", child)];
            let dir = ready_with(tool, "child-rules", &files);
            let (code, out, err) = run(tool, &dir, &["validate", "-no-color"], &[]);
            assert_eq!(
                code, want,
                "{tool} validate with size = {size}:\n{out}{err}"
            );
            if want == 1 {
                assert!(err.contains("size must be under 10."), "{tool}: {err}");
            }
        }
    }
    // The error is where the value is given (the call's argument), as
    // Terraform places it, not at the child's condition.
    let mut places = Vec::new();
    for tool in ["strata", "terraform"] {
        let root = call("12");
        let files = [("main.tf", root.as_str()), ("child/main.tf", child)];
        let dir = ready_with(tool, "child-rules-json", &files);
        let (code, out, _) = run(tool, &dir, &["validate", "-json"], &[]);
        assert_eq!(code, 1, "{tool}: {out}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("validate JSON");
        let range = &v["diagnostics"][0]["range"];
        places.push((range["filename"].clone(), range["start"]["line"].clone()));
    }
    assert_eq!(places[0], places[1], "strata (left), terraform (right)");
}

/// An apply or a destroy with nothing to do still ends as Terraform's
/// does: "Apply complete! Resources: 0 added, 0 changed, 0 destroyed."
/// and the outputs (found missing: strata stopped after "No changes").
#[test]
fn an_apply_with_nothing_to_do_sums_up_as_terraforms() {
    if !require_terraform("an_apply_with_nothing_to_do_sums_up_as_terraforms") {
        return;
    }
    let mut tails = Vec::new();
    for tool in ["strata", "terraform"] {
        let dir = ready(tool, "nothing-to-do");
        let args = [
            "apply",
            "-auto-approve",
            "-no-color",
            "-input=false",
            "-var=n=1",
        ];
        let (code, out, err) = run(tool, &dir, &args, &[]);
        assert_eq!(code, 0, "{tool}: {out}{err}");
        let (code, again, _) = run(tool, &dir, &args, &[]);
        assert_eq!(code, 0, "{tool}: {again}");
        let (code, json, _) = run(
            tool,
            &dir,
            &["apply", "-auto-approve", "-json", "-var=n=1"],
            &[],
        );
        assert_eq!(code, 0, "{tool}: {json}");
        let kinds: Vec<String> = json
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|m| m["type"] == "change_summary")
            .map(|m| m["@message"].to_string())
            .collect();
        let args = [
            "destroy",
            "-auto-approve",
            "-no-color",
            "-input=false",
            "-var=n=1",
        ];
        let (code, _, _) = run(tool, &dir, &args, &[]);
        assert_eq!(code, 0, "{tool}");
        let (code, empty, _) = run(tool, &dir, &args, &[]);
        assert_eq!(code, 0, "{tool}: {empty}");
        let after_no_changes =
            |s: &str| s.split("no changes are needed.").nth(1).map(str::to_string);
        tails.push((
            after_no_changes(&again),
            kinds,
            empty.lines().last().map(str::to_string),
        ));
    }
    assert!(
        tails[0]
            .0
            .as_deref()
            .is_some_and(|t| t.contains("Apply complete!")),
        "{tails:?}"
    );
    assert_eq!(tails[0], tails[1]);
}

/// A saved plan applies with `path.module` and `path.root` as the plan saw
/// them ("."), as Terraform's does: strata applied it with the absolute
/// directory the plan file records, so an argument made of them changed
/// between plan and apply ("the final plan differs from the saved plan").
#[test]
fn a_saved_plan_applies_with_the_paths_its_plan_saw() {
    if !oracle::require_terraform("a_saved_plan_applies_with_the_paths_its_plan_saw") {
        return;
    }
    let config = "resource \"terraform_data\" \"p\" {\n  input = \"${path.module}/x ${path.root}\"\n}\n\noutput \"p\" {\n  value = terraform_data.p.output\n}\n";
    let mut outputs = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = ready_with(tool, "saved-paths", &[("main.tf", config)]);
        if tool == "strata" {
            let (code, _, err) = run(tool, &dir, &["init", "-input=false"], &[]);
            assert_eq!(code, 0, "{err}");
        }
        let (code, out, err) = run(tool, &dir, &["plan", "-out=tfplan", "-no-color"], &[]);
        assert_eq!(code, 0, "{tool}: {out}{err}");
        let (code, out, err) = run(tool, &dir, &["apply", "-no-color", "tfplan"], &[]);
        assert_eq!(code, 0, "{tool}: {out}{err}");
        let (_, out, _) = run(tool, &dir, &["output", "-raw", "p"], &[]);
        outputs.push(out);
    }
    assert_eq!(outputs[0], "./x .");
    assert_eq!(outputs[1], outputs[0]);
}

/// `metadata functions -json` beside Terraform 1.11: the same functions
/// (each also as `core::NAME`), and for each the same parameters — names,
/// types, whether they take null — variadic parameter and return type.
/// Terraform's descriptions are its own prose; strata gives none (the
/// format omits them).
#[test]
fn metadata_functions_are_terraforms_signatures() {
    if !require_terraform("metadata_functions_are_terraforms_signatures") {
        return;
    }
    let dir = workdir("metadata");
    let signatures = |tool: &str| {
        let (code, out, err) = run(tool, &dir, &["metadata", "functions", "-json"], &[]);
        assert_eq!(code, 0, "{tool}: {err}");
        let mut doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(doc["format_version"], "1.0");
        strip_descriptions(&mut doc["function_signatures"]);
        doc["function_signatures"]
            .as_object()
            .cloned()
            .expect("signatures")
    };
    let (theirs, ours) = (signatures("terraform"), signatures("strata"));
    let names =
        |m: &serde_json::Map<String, serde_json::Value>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&ours), names(&theirs), "the functions");
    let differ: Vec<String> = theirs
        .iter()
        .filter(|(name, sig)| ours.get(*name) != Some(sig))
        .map(|(name, sig)| format!("{name}: terraform {sig}\n  strata {}", ours[name]))
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    let (code, _, err) = run("strata", &dir, &["metadata", "functions"], &[]);
    assert_eq!(code, 1, "{err}");
}

fn strip_descriptions(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("description");
            m.values_mut().for_each(strip_descriptions);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

/// `logout` beside Terraform 1.11: the token `login` saved for one host
/// forgotten (the other hosts' kept), the same words; again, "No
/// credentials"; a token a CLI file's `credentials` block gives is
/// refused as manually configured. `login` itself is refused by name.
#[test]
fn logout_forgets_a_saved_token_as_terraform_does() {
    if !require_terraform("logout_forgets_a_saved_token_as_terraform_does") {
        return;
    }
    let saved =
        r#"{"credentials":{"example.com":{"token":"one"},"registry.example.org":{"token":"two"}}}"#;
    let mut said = Vec::new();
    for tool in ["terraform", "strata"] {
        let home = workdir(&format!("logout-{tool}"));
        std::fs::create_dir_all(home.join(".terraform.d")).unwrap();
        let file = home.join(".terraform.d/credentials.tfrc.json");
        std::fs::write(&file, saved).unwrap();
        // The CLI configuration is the home's (an empty variable is
        // none): Terraform reads the saved tokens only then.
        let rc = home.join(".terraformrc");
        let env = [("HOME", home.to_str().unwrap()), ("TF_CLI_CONFIG_FILE", "")];
        let mut outs = Vec::new();
        for _ in 0..2 {
            let (code, out, err) = run(tool, &home, &["logout", "-no-color", "Example.com"], &env);
            assert_eq!(code, 0, "{tool}: {err}");
            outs.push(
                out.replace("Terraform", "strata")
                    .replace(home.to_str().unwrap(), "HOME"),
            );
        }
        let left: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            left["credentials"].as_object().map(|m| m.len()),
            Some(1),
            "{tool}: {left}"
        );
        assert_eq!(
            left["credentials"]["registry.example.org"]["token"], "two",
            "{tool}"
        );
        // A token a credentials block gives, and the file not: refused.
        std::fs::write(
            &rc,
            "credentials \"other.example.net\" {\n  token = \"three\"\n}\n",
        )
        .unwrap();
        let (code, _, err) = run(tool, &home, &["logout", "other.example.net"], &env);
        assert_eq!(code, 1, "{tool}");
        assert!(err.contains("are manually configured"), "{tool}: {err}");
        // With TF_CLI_CONFIG_FILE naming a file, the saved tokens are not
        // read at all: nothing to forget.
        let named = [
            ("HOME", home.to_str().unwrap()),
            ("TF_CLI_CONFIG_FILE", rc.to_str().unwrap()),
        ];
        let (code, out, _) = run(tool, &home, &["logout", "registry.example.org"], &named);
        assert_eq!(code, 0, "{tool}");
        assert!(
            out.contains("No credentials for registry.example.org are stored."),
            "{tool}: {out}"
        );
        said.push(outs);
    }
    assert_eq!(said[0], said[1]);
    assert!(
        said[1][0].contains("Success! strata has removed the stored API token for example.com."),
        "{:?}",
        said[1]
    );
    assert!(
        said[1][1].contains("No credentials for example.com are stored."),
        "{:?}",
        said[1]
    );
    let dir = workdir("login");
    let (code, _, err) = run("strata", &dir, &["login", "example.com"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("TF_TOKEN_example_com"), "{err}");
}

/// `rsadecrypt` beside Terraform 1.11's console: a text encrypted to a
/// PKCS #1 and to a PKCS #8 key (`tests/fixtures/rsadecrypt`) opened to
/// the same value, and the same errors for text that is not base64, a
/// key that is not one, and the wrong key.
#[test]
fn rsadecrypt_opens_what_terraform_opens() {
    if !require_terraform("rsadecrypt_opens_what_terraform_opens") {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rsadecrypt");
    let cases = [
        ("rsadecrypt(file(\"pkcs1.b64\"), file(\"pkcs1.pem\"))", None),
        ("rsadecrypt(file(\"pkcs8.b64\"), file(\"pkcs8.pem\"))", None),
        (
            "rsadecrypt(\"not base64!\", file(\"pkcs1.pem\"))",
            Some("cipher text must be base64-encoded"),
        ),
        (
            "rsadecrypt(file(\"pkcs1.b64\"), \"nope\")",
            Some("invalid private key: "),
        ),
        (
            "rsadecrypt(file(\"pkcs1.b64\"), file(\"pkcs8.pem\"))",
            Some("failed to decrypt: "),
        ),
    ];
    for (expr, error) in cases {
        let said = ["terraform", "strata"].map(|tool| {
            let (code, out, err) = oracle::run_piped(tool, &dir, &["console", "-no-color"], expr);
            (
                code,
                out.trim().to_string(),
                err.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        });
        match error {
            None => {
                assert_eq!(said[0].1, said[1].1, "{expr}");
                assert!(
                    said[1].1.starts_with("\"Pa$$w0rd-k"),
                    "{expr}: {:?}",
                    said[1]
                );
            }
            Some(why) => {
                for (tool, s) in ["terraform", "strata"].iter().zip(&said) {
                    assert_eq!(s.0, 1, "{tool} {expr}: {s:?}");
                    assert!(s.2.contains(why), "{tool} {expr}: {}", s.2);
                }
            }
        }
    }
}
