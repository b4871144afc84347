//! Moving objects between addresses, beside Terraform: `state mv` of
//! resources, instances and module instances on the state Terraform wrote
//! (the same exit code, the same addresses after, and a state both tools
//! read, whatever the move), `moved` blocks whose source the configuration
//! still declares, `moved` blocks that give a call or resource count, and
//! `removed` blocks naming an instance.

use std::path::PathBuf;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::{ok, require_terraform, run};

fn scratch(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-refactor-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    for (name, text) in files {
        let path = d.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    d
}

const MODULE: &str = r#"resource "terraform_data" "r" { input = 1 }"#;

const ESTATE: &str = r#"
resource "terraform_data" "c" {
  count = 2
  input = count.index
}

resource "terraform_data" "s" {
  input = 1
}

module "m" {
  source = "./m"
}

module "c" {
  source = "./m"
  count  = 2
}
"#;

/// Every `state mv` Terraform 1.11 was seen to take or refuse on this
/// estate; each run on a fresh copy of the state Terraform applied.
const MOVES: &[(&str, &str)] = &[
    ("terraform_data.c", "terraform_data.d[0]"),
    ("terraform_data.c", "terraform_data.c[5]"),
    ("terraform_data.s", "terraform_data.d[0]"),
    ("terraform_data.c[0]", "terraform_data.e"),
    ("terraform_data.c[1]", "terraform_data.s"),
    ("terraform_data.c", "terraform_data.s"),
    ("module.m", "module.k[0]"),
    ("module.c", "module.k[0]"),
    ("module.c[1]", "module.k"),
    ("module.m", "module.c[0]"),
    ("module.m", "module.c[5]"),
    ("module.nope", "module.k"),
    ("module.m.terraform_data.r", "terraform_data.from_module"),
];

#[test]
fn state_mv_moves_or_refuses_as_terraform_and_never_writes_a_broken_state() {
    if !require_terraform("state_mv_moves_or_refuses_as_terraform_and_never_writes_a_broken_state")
    {
        return;
    }
    let d = scratch("mv", &[("main.tf", ESTATE), ("m/main.tf", MODULE)]);
    ok("terraform", &d, &["init", "-input=false", "-no-color"]);
    ok("terraform", &d, &["apply", "-auto-approve", "-no-color"]);
    let applied = std::fs::read(d.join("terraform.tfstate")).expect("applied");
    for (from, to) in MOVES {
        let mut seen = Vec::new();
        for tool in ["terraform", "strata"] {
            std::fs::write(d.join("terraform.tfstate"), &applied).expect("reset");
            let (code, out, err) = run(tool, &d, &["state", "mv", from, to]);
            // Whatever it did, both tools read what is there now.
            let lists: Vec<String> = ["terraform", "strata"]
                .iter()
                .map(|reader| {
                    let (c, listed, e) = run(reader, &d, &["state", "list"]);
                    assert_eq!(
                        c, 0,
                        "{reader} cannot read the state {tool} left after mv {from} {to}:\n{e}"
                    );
                    listed
                })
                .collect();
            assert_eq!(lists[0], lists[1], "mv {from} {to} by {tool}");
            seen.push((code, lists[0].clone(), format!("{out}{err}")));
        }
        assert_eq!(
            (seen[0].0, &seen[0].1),
            (seen[1].0, &seen[1].1),
            "state mv {from} {to}: Terraform (left) and strata (right)\n{}\n---\n{}",
            seen[0].2,
            seen[1].2
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_backup_is_pushed_back_over_a_state_that_no_longer_reads() {
    let d = scratch(
        "push",
        &[(
            "main.tf",
            "resource \"terraform_data\" \"a\" {\n  count = 2\n  input = 1\n}\n",
        )],
    );
    ok("strata", &d, &["apply", "-auto-approve", "-no-color"]);
    ok("strata", &d, &["apply", "-auto-approve", "-no-color"]);
    let good = std::fs::read_to_string(d.join("terraform.tfstate")).expect("state");
    std::fs::write(d.join("kept.tfstate"), &good).expect("kept");
    std::fs::write(d.join("terraform.tfstate"), &good[..good.len() / 2]).expect("damaged");
    let (code, _, err) = run("strata", &d, &["state", "push", "kept.tfstate"]);
    assert_eq!(
        code, 1,
        "without -force a damaged state is not replaced: {err}"
    );
    let (code, out, err) = run("strata", &d, &["state", "push", "-force", "kept.tfstate"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        ok("strata", &d, &["state", "list"]),
        "terraform_data.a[0]\nterraform_data.a[1]\n"
    );
    let (code, _, _) = run("strata", &d, &["plan", "-detailed-exitcode", "-no-color"]);
    assert_eq!(code, 0);
    let _ = std::fs::remove_dir_all(&d);
}

/// Each `moved` or `removed` block Terraform refuses at plan, with the
/// configuration that was applied before it.
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "resource \"terraform_data\" \"a\" {\n  input = 1\n}\n",
        "resource \"terraform_data\" \"a\" {\n  input = 1\n}\nresource \"terraform_data\" \"b\" {\n  input = 1\n}\nmoved {\n  from = terraform_data.a\n  to   = terraform_data.b\n}\n",
        "Moved object still exists",
    ),
    (
        "resource \"terraform_data\" \"c\" {\n  count = 2\n  input = 1\n}\n",
        "resource \"terraform_data\" \"c\" {\n  count = 2\n  input = 1\n}\nresource \"terraform_data\" \"b\" {\n  input = 1\n}\nmoved {\n  from = terraform_data.c[1]\n  to   = terraform_data.b\n}\n",
        "Moved object still exists",
    ),
    (
        "module \"m\" {\n  source = \"./m\"\n}\n",
        "module \"m\" {\n  source = \"./m\"\n}\nmodule \"n\" {\n  source = \"./m\"\n}\nmoved {\n  from = module.m\n  to   = module.n\n}\n",
        "Moved object still exists",
    ),
    (
        "resource \"terraform_data\" \"x\" {\n  count = 1\n  input = 1\n}\n",
        "removed {\n  from = terraform_data.x[0]\n  lifecycle {\n    destroy = false\n  }\n}\n",
        "Resource instance keys not allowed",
    ),
];

#[test]
fn moves_from_what_is_still_declared_are_refused_as_terraform_refuses_them() {
    if !require_terraform("moves_from_what_is_still_declared_are_refused_as_terraform_refuses_them")
    {
        return;
    }
    for (i, (before, after, summary)) in REFUSED.iter().enumerate() {
        for tool in ["terraform", "strata"] {
            let d = scratch(
                &format!("moved{i}-{tool}"),
                &[("main.tf", before), ("m/main.tf", MODULE)],
            );
            ok(tool, &d, &["init", "-input=false", "-no-color"]);
            ok(tool, &d, &["apply", "-auto-approve", "-no-color"]);
            let state = std::fs::read(d.join("terraform.tfstate")).expect("state");
            std::fs::write(d.join("main.tf"), after).expect("refactored");
            // A new module call needs init (Terraform's rule); an invalid
            // block may already fail it, which the plan then says again.
            run(tool, &d, &["init", "-input=false", "-no-color"]);
            let (code, out, err) = run(tool, &d, &["plan", "-no-color"]);
            assert_eq!(code, 1, "{tool} planned case {i}:\n{out}\n{err}");
            assert!(err.contains(summary), "{tool} case {i}: {err}");
            let (code, out, err) = run(tool, &d, &["apply", "-auto-approve", "-no-color"]);
            assert_eq!(code, 1, "{tool} applied case {i}:\n{out}\n{err}");
            assert_eq!(
                std::fs::read(d.join("terraform.tfstate")).expect("state"),
                state,
                "{tool} case {i}: nothing applied"
            );
            let _ = std::fs::remove_dir_all(&d);
        }
    }
}

/// A call or a resource given `count` with a `moved` block from its one
/// keyless instance to `[0]` (how Terraform documents adding count): the
/// keyless address is no longer declared, so the move is taken, and with
/// `count = 0` the moved object is planned away — as Terraform plans it.
#[test]
fn moves_that_give_count_are_taken_as_terraform_takes_them() {
    if !require_terraform("moves_that_give_count_are_taken_as_terraform_takes_them") {
        return;
    }
    let before = "module \"a\" {\n  source = \"./m\"\n}\nresource \"terraform_data\" \"s\" {\n  input = 1\n}\n";
    let after = |n: u32| {
        format!(
            "moved {{\n  from = module.a\n  to   = module.a[0]\n}}\nmodule \"a\" {{\n  source = \"./m\"\n  count  = {n}\n}}\nmoved {{\n  from = terraform_data.s\n  to   = terraform_data.s[0]\n}}\nresource \"terraform_data\" \"s\" {{\n  count = {n}\n  input = 1\n}}\n"
        )
    };
    let lines = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| {
                l.contains("has moved to")
                    || l.starts_with("Plan:")
                    || l.contains("will be destroyed")
            })
            .map(str::to_string)
            .collect()
    };
    for n in [1, 0] {
        let mut seen = Vec::new();
        for tool in ["terraform", "strata"] {
            let d = scratch(
                &format!("count{n}-{tool}"),
                &[("main.tf", before), ("m/main.tf", MODULE)],
            );
            ok(tool, &d, &["init", "-input=false", "-no-color"]);
            ok(tool, &d, &["apply", "-auto-approve", "-no-color"]);
            std::fs::write(d.join("main.tf"), after(n)).expect("refactored");
            let (code, out, err) = run(tool, &d, &["plan", "-no-color"]);
            assert_eq!(code, 0, "{tool} count = {n}:\n{out}\n{err}");
            seen.push(lines(&out));
            let _ = std::fs::remove_dir_all(&d);
        }
        assert_eq!(seen[0], seen[1], "count = {n}: Terraform, then strata");
        assert!(!seen[0].is_empty(), "count = {n}: {seen:?}");
    }
}
