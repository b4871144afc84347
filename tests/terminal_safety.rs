//! Values reach the terminal escaped: a string holding ESC or BEL (from the
//! configuration here; from the cloud on refresh in life) is shown as
//! Terraform shows it on one line (Go's `\x1b`, `\a`), and never raw in any
//! rendering, multi-line ones included (where Terraform writes them raw).

use std::path::Path;

#[path = "common/oracle.rs"]
mod oracle;
use oracle::{ok, require_terraform, run};

const CONFIG: &str = r#"
resource "terraform_data" "one" {
  input = "x\u001b[31mred\u0007bel\ttab"
}

resource "terraform_data" "many" {
  input = "first\u001b[2J\nsecond\u0007\n"
}

output "one" {
  value = terraform_data.one.input
}

output "many" {
  value = terraform_data.many.input
}
"#;

/// The lines of `text` that mention `what`.
fn lines_with<'t>(text: &'t str, what: &str) -> Vec<&'t str> {
    text.lines().filter(|l| l.contains(what)).collect()
}

fn setup(tool: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("strata-terminal-{tool}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    std::fs::write(d.join("main.tf"), CONFIG).expect("config");
    ok(tool, &d, &["init", "-no-color"]);
    d
}

fn no_raw_controls(what: &str, text: &str) {
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{what} wrote a control character raw:\n{text:?}"
    );
}

#[test]
fn control_characters_are_shown_escaped_as_terraform_shows_them() {
    if !require_terraform("control_characters_are_shown_escaped_as_terraform_shows_them") {
        return;
    }
    let dirs: Vec<(&str, std::path::PathBuf)> = ["terraform", "strata"]
        .iter()
        .map(|t| (*t, setup(t)))
        .collect();
    let steps: &[&[&str]] = &[
        &["plan", "-no-color"],
        &["apply", "-auto-approve", "-no-color"],
        &["show", "-no-color"],
        &["output", "-no-color"],
    ];
    for step in steps {
        let said: Vec<String> = dirs
            .iter()
            .map(|(tool, d)| {
                let (code, out, err) = run(tool, d, step);
                assert_eq!(code, 0, "{tool} {step:?}: {err}");
                if *tool == "strata" {
                    no_raw_controls(&format!("strata {step:?}"), &format!("{out}{err}"));
                }
                out
            })
            .collect();
        // On one line both escape alike.
        assert_eq!(
            lines_with(&said[0], "red"),
            lines_with(&said[1], "red"),
            "{step:?}: Terraform (left) and strata (right)"
        );
    }
    let console = |tool: &str, d: &Path| {
        let mut child = std::process::Command::new(match tool {
            "strata" => env!("CARGO_BIN_EXE_strata"),
            other => other,
        })
        .arg("console")
        .current_dir(d)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("console");
        use std::io::Write;
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(b"terraform_data.one.output\n");
        }
        let out = child.wait_with_output().expect("console ends");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let (theirs, ours) = (
        console("terraform", &dirs[0].1),
        console("strata", &dirs[1].1),
    );
    no_raw_controls("strata console", &ours);
    assert_eq!(theirs.trim(), ours.trim(), "console");
    for (_, d) in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}
