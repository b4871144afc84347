//! Module sources made of const variables (Terraform 1.15's dynamic module
//! sources, hashicorp/terraform#38217 and #38276; issue 45). Terraform 1.11,
//! the oracle here, refuses any variable in a source, so these hold strata
//! to the cases of Terraform 1.15's own command tests
//! (`internal/command/init2_test.go`): a const variable given by default,
//! by `-var`, by a variables file and by the calling module, through a
//! local; and, refused at `init` with exit 1, a variable that is not
//! const, a resource, `count`, `terraform.workspace`, a required const
//! variable left unset, and a const variable its validation refuses.

#[path = "common/run.rs"]
mod run;

#[path = "common/oracle.rs"]
mod oracle;

use std::path::{Path, PathBuf};

fn scratch(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    run::tree(&format!("dynsrc-{tag}"), files)
}

fn strata(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let r = run::ran(run::strata(dir).args(args));
    (r.code, r.out, r.err)
}

const MODULES: &[(&str, &str)] = &[
    ("modules/example/main.tf", "output \"which\" {\n  value = \"example\"\n}\n"),
    ("modules/alternate/main.tf", "output \"which\" {\n  value = \"alternate\"\n}\n"),
    (
        "modules/child/main.tf",
        "variable \"grand_name\" {\n  const = true\n}\n\nmodule \"grand\" {\n  source = \"./${var.grand_name}\"\n}\n\noutput \"which\" {\n  value = module.grand.which\n}\n",
    ),
    ("modules/child/grand/main.tf", "output \"which\" {\n  value = \"grand\"\n}\n"),
];

const ROOT: &str = r#"variable "module_name" {
  const   = true
  default = "example"
}

locals {
  dir = "./modules/${var.module_name}"
}

module "picked" {
  source = local.dir
}

module "child" {
  source     = "./modules/child"
  grand_name = "grand"
}

output "which" {
  value = "${module.picked.which}+${module.child.which}"
}
"#;

#[test]
fn a_source_made_of_const_variables_loads_the_module_they_name() {
    let mut files = MODULES.to_vec();
    files.push(("main.tf", ROOT));
    files.push(("other.tfvars", "module_name = \"alternate\"\n"));
    let dir = scratch("loads", &files);
    let (code, out, err) = strata(&dir, &["init", "-no-color"]);
    assert_eq!(code, 0, "{out}{err}");
    let manifest = std::fs::read_to_string(dir.join(".terraform/modules/modules.json")).unwrap();
    assert!(
        manifest.contains(r#""Key":"child.grand","Source":"./grand""#),
        "{manifest}"
    );
    let given: [&[&str]; 3] = [
        &[],
        &["-var", "module_name=alternate"],
        &["-var-file", "other.tfvars"],
    ];
    let wanted = ["example+grand", "alternate+grand", "alternate+grand"];
    for (extra, want) in given.iter().zip(wanted) {
        let mut args = vec!["apply", "-auto-approve", "-no-color"];
        args.extend_from_slice(extra);
        let (code, out, err) = strata(&dir, &args);
        assert_eq!(code, 0, "{args:?}: {out}{err}");
        assert!(
            out.contains(&format!("which = \"{want}\"")),
            "{args:?}: {out}"
        );
    }
    // The console loads the module the same --var names.
    let args = ["console", "-var", "module_name=example"];
    let (code, out, err) = oracle::run_piped("strata", &dir, &args, "module.picked.which\n");
    assert_eq!((code, out.trim()), (0, "\"example\""), "{err}");
}

/// Each case's `main.tf`, the arguments init is given, and the error.
const REFUSED: &[(&str, &[&str], &str)] = &[
    (
        "variable \"module_name\" {}\n\nmodule \"m\" {\n  source = \"./modules/${var.module_name}\"\n}\n",
        &["-var", "module_name=example"],
        "Unknown module source",
    ),
    (
        "resource \"terraform_data\" \"x\" {}\n\nmodule \"m\" {\n  source = \"./modules/${terraform_data.x.id}\"\n}\n",
        &[],
        "Invalid module source",
    ),
    (
        "module \"m\" {\n  count  = 1\n  source = \"./modules/${count.index}\"\n}\n",
        &[],
        "Invalid module source",
    ),
    (
        "module \"m\" {\n  source = \"./modules/${terraform.workspace}\"\n}\n",
        &[],
        "Invalid module source",
    ),
    (
        "variable \"module_name\" {\n  const = true\n}\n\nmodule \"m\" {\n  source = \"./modules/${var.module_name}\"\n}\n",
        &[],
        "No value for required variable",
    ),
    (
        "variable \"module_name\" {\n  const = true\n\n  validation {\n    condition     = var.module_name == \"example\"\n    error_message = \"The module_name variable must be set to \\\"example\\\".\"\n  }\n}\n\nmodule \"m\" {\n  source = \"./modules/${var.module_name}\"\n}\n",
        &["-var", "module_name=nonexistent"],
        "The module_name variable must be set to \"example\".",
    ),
];

#[test]
fn what_cannot_be_known_at_init_is_refused_there() {
    for (i, (main, args, wanted)) in REFUSED.iter().enumerate() {
        let mut files = MODULES.to_vec();
        files.push(("main.tf", main));
        let dir = scratch(&format!("refused-{i}"), &files);
        let mut all = vec!["init", "-no-color"];
        all.extend_from_slice(args);
        let (code, out, err) = strata(&dir, &all);
        assert_eq!(code, 1, "case {i}: {out}{err}");
        let said = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(said.contains(wanted), "case {i}: {err}");
        assert!(
            !dir.join(".terraform/modules/modules.json").exists(),
            "case {i}: something was installed"
        );
    }
}

/// A `required_providers` source and version made of const variables
/// (Terraform 1.15's dynamic provider sources, the same tests'
/// `TestInit2_dynamicProviderSource*` cases): the provider it names is
/// the one the configuration needs; a variable that is not const, or a
/// resource, is "Unknown provider source" at init.
#[test]
fn a_provider_source_made_of_const_variables_names_the_provider() {
    let provider = |decl: &str, source: &str| {
        format!("variable \"src\" {{\n  {decl}\n  default = \"hashicorp/random\"\n}}\n\nresource \"terraform_data\" \"t\" {{}}\n\nterraform {{\n  required_providers {{\n    random = {{\n      source  = {source}\n      version = \"~> 3.0\"\n    }}\n  }}\n}}\n\nresource \"random_id\" \"x\" {{\n  byte_length = 2\n}}\n")
    };
    let good = provider("const = true", "var.src");
    let dir = scratch("provider", &[("main.tf", &good)]);
    let (code, out, err) = strata(&dir, &["init", "-no-color"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("hashicorp/random is built in"), "{out}");
    let (code, out, _) = strata(&dir, &["providers", "-no-color"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("provider[registry.terraform.io/hashicorp/random] ~> 3.0"),
        "{out}"
    );
    for (i, (decl, source)) in [
        ("type = string", "var.src"),
        ("const = true", "terraform_data.t.id"),
    ]
    .into_iter()
    .enumerate()
    {
        let bad = provider(decl, source);
        let dir = scratch(&format!("provider-{i}"), &[("main.tf", &bad)]);
        let (code, out, err) = strata(&dir, &["init", "-no-color"]);
        assert_eq!(code, 1, "case {i}: {out}{err}");
        assert!(err.contains("Unknown provider source"), "case {i}: {err}");
    }
}
