//! `strata query` and list resources (protocol 6.10, Terraform 1.14;
//! issue 45) through the test provider, whose `stratatest_object` lists
//! the objects in its store (filtered by a `name_prefix`) when
//! `STRATATEST_IDENTITY` is set. Terraform 1.11 has no `query`: strata is
//! held to the protocol's definition and Terraform's source for its lines,
//! messages and generated configuration (recorded in docs/testing.md).

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;

#[path = "common/lab.rs"]
mod lab;
use lab::{errors_said, identity_env, Lab, HEADER};

use serde_json::Value as Json;
use std::path::Path;

const LISTS: &str = r#"
list "stratatest_object" "all" {
  provider = stratatest
}

list "stratatest_object" "betas" {
  provider         = stratatest
  include_resource = true
  config {
    name_prefix = "be"
  }
}

list "stratatest_object" "none" {
  provider = stratatest
  config {
    name_prefix = "zzz"
  }
}
"#;

/// A directory with the provider configured, objects `alpha` and `beta`
/// made by hand, and `query` as its query file.
fn with_objects(lab: &Lab, tool_dir: &str, query: &str) -> std::path::PathBuf {
    let dir = lab.work_with(tool_dir, HEADER);
    lab.made_elsewhere(&dir, "alpha");
    lab.made_elsewhere(&dir, "beta");
    std::fs::write(dir.join("found.tfquery.hcl"), query).unwrap();
    lab.identified(&dir, &["init", "-no-color"]);
    dir
}

#[test]
fn query_lists_what_the_provider_finds_as_terraform_shows_it() {
    let lab = Lab::new("query-lists");
    let dir = with_objects(&lab, "lists", LISTS);
    let out = lab.identified(&dir, &["query", "-no-color"]);
    assert_eq!(
        out,
        "list.stratatest_object.all   id=alpha-1,name=alpha   alpha\n\
         list.stratatest_object.all   id=beta-1,name=beta     beta\n\
         \n\
         list.stratatest_object.betas   id=beta-1,name=beta   beta\n\
         \n\
         Warning: list block(s) [list.stratatest_object.none] returned 0 results.\n\n"
    );
    // Terraform's messages under -json: each block started, each result
    // with its identity (and the object where asked), each completed.
    let json = lab.identified(&dir, &["query", "-json"]);
    let (messages, kinds) = lab::json_messages(&json);
    assert_eq!(
        kinds,
        [
            "version",
            "list_start",
            "list_resource_found",
            "list_resource_found",
            "list_complete",
            "list_start",
            "list_resource_found",
            "list_complete",
            "list_start",
            "list_complete"
        ]
    );
    let beta = &messages[6]["list_resource_found"];
    assert_eq!(beta["identity"]["id"], "beta-1", "{beta}");
    assert_eq!(beta["identity_version"], 1, "{beta}");
    assert_eq!(beta["resource_object"]["name"], "beta", "{beta}");
    assert!(messages[2]["list_resource_found"]
        .get("resource_object")
        .is_none());
    assert_eq!(messages[9]["list_complete"]["total"], 0);
    // A query file (and a test file) beside the configuration are not
    // configuration: plan reads neither, as Terraform's does not.
    std::fs::write(
        dir.join("check.tftest.hcl"),
        "run \"r\" {\n  command = plan\n}\n",
    )
    .unwrap();
    let (code, out, err) = lab.run_with(
        "strata",
        &dir,
        &["plan", "-no-color", "-detailed-exitcode"],
        &identity_env(),
    );
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn repeated_and_limited_lists_and_their_addresses() {
    let lab = Lab::new("query-repeated");
    let query = r#"
variable "prefixes" {
  type    = list(string)
  default = ["al", "be"]
}

list "stratatest_object" "by" {
  for_each = toset(var.prefixes)
  provider = stratatest
  config {
    name_prefix = each.key
  }
}

list "stratatest_object" "first" {
  count    = 1
  provider = stratatest
  limit    = 1
}
"#;
    let dir = with_objects(&lab, "repeated", query);
    let out = lab.identified(&dir, &["query", "-no-color"]);
    assert!(
        out.contains("list.stratatest_object.by[\"al\"]   id=alpha-1,name=alpha   alpha\n"),
        "{out}"
    );
    assert!(
        out.contains("list.stratatest_object.by[\"be\"]   id=beta-1,name=beta   beta\n"),
        "{out}"
    );
    assert!(
        out.contains("list.stratatest_object.first[0]   id=alpha-1,name=alpha   alpha\n"),
        "{out}"
    );
    assert!(
        !out.contains("first[0]   id=beta"),
        "limit 1 gave more: {out}"
    );
    // A variable of the query file takes -var like any other.
    let out = lab.identified(&dir, &["query", "-no-color", "-var=prefixes=[\"be\"]"]);
    assert!(!out.contains("by[\"al\"]"), "{out}");
}

#[test]
fn what_a_query_finds_is_adopted_by_the_configuration_it_writes() {
    let lab = Lab::new("query-adopt");
    let dir = with_objects(&lab, "adopt", LISTS);
    lab.identified(
        &dir,
        &["query", "-no-color", "-generate-config-out=found.tf"],
    );
    let written = std::fs::read_to_string(dir.join("found.tf")).unwrap();
    // Terraform's blocks: the resource through its provider, and an
    // import by the identity the list gave.
    assert!(
        written.contains("resource \"stratatest_object\" \"all_0\" {\n  provider = stratatest\n"),
        "{written}"
    );
    assert!(
        written.contains("import {\n  to       = stratatest_object.all_0\n  provider = stratatest\n  identity = {\n    id   = \"alpha-1\"\n    name = \"alpha\"\n  }\n}\n"),
        "{written}"
    );
    // Two lists found beta: keep one block of it, as a user would.
    let kept: String = written
        .split("\nresource \"stratatest_object\" \"betas_0\"")
        .next()
        .unwrap()
        .to_string();
    std::fs::write(dir.join("found.tf"), kept).unwrap();
    let plan = lab.identified(&dir, &["plan", "-no-color"]);
    assert!(
        plan.contains("Plan: 2 to import, 0 to add, 0 to change, 0 to destroy."),
        "{plan}"
    );
    lab.identified(&dir, &["apply", "-no-color", "-auto-approve"]);
    let state: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap())
            .unwrap();
    let names: Vec<&str> = state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["all_0", "all_1"]);
    // A file that exists already is refused, as Terraform refuses it.
    let (code, _, err) = lab.run_with(
        "strata",
        &dir,
        &["query", "-generate-config-out=found.tf"],
        &identity_env(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("Target generated file already exists"),
        "{err}"
    );
}

fn refused(lab: &Lab, dir: &Path) -> (Vec<(String, String)>, String) {
    let (code, out, err) = lab.run_with("strata", dir, &["query", "-no-color"], &identity_env());
    assert_eq!(code, 1, "{out}{err}");
    (errors_said(&err), err)
}

#[test]
fn bad_query_files_and_refused_lists_are_errors_at_their_blocks() {
    let lab = Lab::new("query-refused");
    let cases: [(&str, &str); 7] = [
        ("list \"stratatest_object\" \"a\" {\n}\n", "Missing \"provider\" attribute"),
        ("list \"stratatest_object\" \"a\" {\n  provider = stratatest\n  count = 1\n  for_each = {}\n}\n", "Invalid combination of \"count\" and \"for_each\""),
        ("list \"stratatest_object\" \"a\" {\n  provider = stratatest\n}\nlist \"stratatest_object\" \"a\" {\n  provider = stratatest\n}\n", "Duplicate \"list\" block names"),
        ("resource \"stratatest_object\" \"a\" {\n  name = \"x\"\n}\n", "Invalid block type"),
        ("list \"stratatest_nothing\" \"a\" {\n  provider = stratatest\n}\n", "Invalid list resource type"),
        ("list \"stratatest_object\" \"a\" {\n  provider = stratatest\n  limit = -1\n}\n", "Invalid limit argument"),
        ("list \"stratatest_object\" \"a\" {\n  provider = stratatest\n  config {\n    name_prefix = \"has space\"\n  }\n}\n", "Invalid name_prefix"),
    ];
    for (n, (query, want)) in cases.iter().enumerate() {
        let dir = with_objects(&lab, &format!("case{n}"), query);
        let (said, err) = refused(&lab, &dir);
        assert!(
            said.iter().any(|(s, _)| s.contains(want)) || err.contains(want),
            "case {n}: want {want:?}\n{err}"
        );
        assert!(
            err.contains(".tfquery.hcl:"),
            "case {n}: no source location\n{err}"
        );
    }
    // The provider's own error while listing, at the block.
    let dir = with_objects(&lab, "provider", "list \"stratatest_object\" \"a\" {\n  provider = stratatest\n  config {\n    name_prefix = \"refuse\"\n  }\n}\n");
    let (_, err) = refused(&lab, &dir);
    assert!(
        err.contains("Cannot list") && err.contains("found.tfquery.hcl:1"),
        "{err}"
    );
    // `validate -query` reads the query files too; plain `validate` not.
    let bad = "list \"stratatest_object\" \"a\" {\n  provider = stratatest\n  config {\n    nope = 1\n  }\n}\n";
    let dir = with_objects(&lab, "validate", bad);
    lab.identified(&dir, &["validate", "-no-color"]);
    let (code, _, err) = lab.run_with(
        "strata",
        &dir,
        &["validate", "-query", "-no-color"],
        &identity_env(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("Unsupported argument") && err.contains("found.tfquery.hcl:4"),
        "{err}"
    );
    // No query file: Terraform's words.
    let dir = lab.work_with("nofile", HEADER);
    lab.identified(&dir, &["init", "-no-color"]);
    let (_, err) = refused(&lab, &dir);
    assert!(
        err.contains("Query requires a query configuration to be present"),
        "{err}"
    );
}

/// A list filtering by what another found (Terraform 1.14+:
/// `list.T.N.data[0].state.ATTR`, `.identity.ATTR`, an instance key where
/// the other repeats): listed after it whatever the order of the blocks,
/// and Terraform's errors for an undeclared list, a traversal of the
/// wrong shape and a cycle, from `query` and `validate -query`, at the
/// reference.
#[test]
fn a_list_filters_by_what_another_list_found() {
    let lab = Lab::new("query-refs");
    let query = r#"
list "stratatest_object" "second" {
  provider = stratatest
  config {
    name_prefix = substr(list.stratatest_object.first.data[0].state.name, 0, 2)
  }
}

list "stratatest_object" "first" {
  provider         = stratatest
  include_resource = true
  config {
    name_prefix = "be"
  }
}

list "stratatest_object" "each" {
  for_each = toset(["al"])
  provider = stratatest
  config {
    name_prefix = each.key
  }
}

list "stratatest_object" "from_each" {
  provider = stratatest
  config {
    name_prefix = list.stratatest_object.each["al"].data[0].identity.name
  }
}
"#;
    let dir = with_objects(&lab, "refs", query);
    lab.identified(&dir, &["validate", "-query", "-no-color"]);
    let out = lab.identified(&dir, &["query", "-no-color"]);
    let first = out.find("list.stratatest_object.first   id=beta-1");
    let second = out.find("list.stratatest_object.second   id=beta-1,name=beta   beta\n");
    assert!(first.is_some() && second.is_some(), "{out}");
    assert!(first < second, "listed before the list using it: {out}");
    assert!(!out.contains("second   id=alpha"), "{out}");
    assert!(
        out.contains("list.stratatest_object.from_each   id=alpha-1,name=alpha   alpha\n"),
        "{out}"
    );
    let list = |name: &str, prefix: &str| {
        format!("list \"stratatest_object\" \"{name}\" {{\n  provider = stratatest\n  config {{\n    name_prefix = {prefix}\n  }}\n}}\n")
    };
    let cases = [
        (
            list("a", "list.stratatest_object.nope.data[0].state.name"),
            "Reference to undeclared resource",
        ),
        (
            list("a", "list.stratatest_object.b.data[0].state.name")
                + &list("b", "list.stratatest_object.a.data[0].state.name"),
            "Cycle: list.stratatest_object.a, list.stratatest_object.b",
        ),
        (
            list("a", "list.stratatest_object.a.data[0].state.name"),
            "Cycle: list.stratatest_object.a",
        ),
        (
            list("a", "\"x\"") + &list("b", "list.stratatest_object.a.state.name"),
            "Invalid list resource traversal",
        ),
        (
            list("a", "\"x\"") + &list("b", "list.stratatest_object.a.data.name"),
            "Invalid list resource traversal",
        ),
        (
            list("a", "\"x\"") + &list("b", "list.stratatest_object.a.data[0].name"),
            "Invalid list resource traversal",
        ),
    ];
    for (n, (query, want)) in cases.iter().enumerate() {
        let dir = with_objects(&lab, &format!("bad{n}"), query);
        for args in [
            &["query", "-no-color"][..],
            &["validate", "-query", "-no-color"],
        ] {
            let (code, out, err) = lab.run_with("strata", &dir, args, &identity_env());
            assert_eq!(code, 1, "case {n} {args:?}: {out}{err}");
            assert!(
                err.contains(want),
                "case {n} {args:?}: want {want:?}\n{err}"
            );
            assert!(
                err.contains("found.tfquery.hcl:"),
                "case {n}: no location\n{err}"
            );
        }
    }
}

/// The query steps a CI script gains (issue 45), written as a Terraform
/// 1.14 team writes them to adopt what was made by hand, run from the
/// directory above with `-chdir`: each step's exit code the one
/// Terraform's documentation gives (`plan -detailed-exitcode`: 2 with the
/// imports to make, 0 after the apply).
#[test]
fn a_ci_scripts_query_steps_adopt_what_was_made_by_hand() {
    let lab = Lab::new("query-ci");
    let all = "list \"stratatest_object\" \"all\" {\n  provider = stratatest\n}\n";
    let dir = with_objects(&lab, "infra", all);
    let above = dir.parent().expect("a parent").to_path_buf();
    let steps: &[(&[&str], i32)] = &[
        (&["-chdir=infra", "init", "-input=false", "-no-color"], 0),
        (&["-chdir=infra", "validate", "-query", "-no-color"], 0),
        (&["-chdir=infra", "query", "-json"], 0),
        (
            &[
                "-chdir=infra",
                "query",
                "-no-color",
                "-generate-config-out=adopted.tf",
            ],
            0,
        ),
        (
            &[
                "-chdir=infra",
                "plan",
                "-input=false",
                "-no-color",
                "-out=tfplan",
                "-detailed-exitcode",
            ],
            2,
        ),
        (
            &[
                "-chdir=infra",
                "apply",
                "-input=false",
                "-no-color",
                "tfplan",
            ],
            0,
        ),
        (
            &[
                "-chdir=infra",
                "plan",
                "-input=false",
                "-no-color",
                "-detailed-exitcode",
            ],
            0,
        ),
    ];
    for (args, want) in steps {
        let (code, out, err) = lab.run_with("strata", &above, args, &identity_env());
        assert_eq!(code, *want, "{args:?}:\n{out}\n{err}");
        if args.contains(&"-json") {
            let (_, kinds) = lab::json_messages(&out);
            let found = kinds.iter().filter(|k| *k == "list_resource_found").count();
            assert_eq!(found, 2, "{out}");
        }
    }
    let state: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap())
            .unwrap();
    assert_eq!(
        state["resources"].as_array().map(Vec::len),
        Some(2),
        "{state}"
    );
}
