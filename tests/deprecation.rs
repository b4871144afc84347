//! `deprecated` on variables and outputs (Terraform 1.15, OpenTofu 1.10):
//! a plan warns, with the author's reason and at the place, where a
//! deprecated variable is given a value (the root's by `-var`, a child's
//! by its module call) and where a caller uses a child's deprecated
//! output; the module that declares them says nothing of its own use, and
//! `ignore_nested_deprecations = true` on a call silences its subtree.

#[path = "common/run.rs"]
mod run;

use run::strata_in;
use std::path::{Path, PathBuf};

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-deprecation-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn write(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

#[test]
fn deprecated_variables_and_outputs_warn_where_they_are_used() {
    let dir = scratch();
    write(
        &dir,
        "main.tf",
        r#"variable "legacy" {
  type       = string
  default    = "d"
  deprecated = "Use var.modern."
}

variable "untouched" {
  type       = string
  default    = "d"
  deprecated = "Never given, never said."
}

module "child" {
  source = "./child"
  old    = "x"
}

module "quiet" {
  source                     = "./quiet"
  ignore_nested_deprecations = true
}

output "o" {
  value = module.child.old_out
}
"#,
    );
    write(
        &dir,
        "child/main.tf",
        r#"variable "old" {
  type       = string
  default    = null
  deprecated = "Use new instead."
}

output "old_out" {
  value      = "v"
  deprecated = "Use new_out."
}

# The module's own use of its deprecated output's value says nothing.
output "new_out" {
  value = var.old
}
"#,
    );
    write(
        &dir,
        "quiet/main.tf",
        "module \"inner\" {\n  source = \"../child\"\n  old    = \"y\"\n}\n",
    );
    let (code, out) = strata_in(&dir, &["plan", "-var", "legacy=given"]);
    assert_eq!(code, 0, "{out}");
    let said = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for (what, why, at) in [
        (
            "Deprecated variable got a value",
            "Use var.modern.",
            "main.tf line 1:",
        ),
        (
            "Deprecated variable got a value",
            "Use new instead.",
            "main.tf line 15:",
        ),
        ("Deprecated output used", "Use new_out.", "main.tf line 24:"),
    ] {
        assert!(
            said.contains(what) && said.contains(why) && said.contains(at),
            "{what} ({why}) at {at}:\n{out}"
        );
    }
    assert!(!said.contains("Never given"), "{out}");
    // Once each: the quiet call's own child is silenced.
    assert_eq!(said.matches("Use new instead.").count(), 1, "{out}");
    // Not given on the command line: the root's variable says nothing.
    let (code, out) = strata_in(&dir, &["plan"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("Use var.modern."), "{out}");
}
