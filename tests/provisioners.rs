//! Provisioners that reach a machine (`remote-exec`, `file`) beside
//! Terraform 1.11, both against OpenSSH's server on 127.0.0.1: the same
//! lines said, the same files left, the same errors and state.

#[path = "common/oracle.rs"]
mod oracle;
#[path = "common/sshd.rs"]
mod sshd;

use oracle::require_terraform;
use std::path::{Path, PathBuf};

fn scratch(test: &str, tool: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-{test}-{}/{tool}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

fn run(tool: &str, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let null = std::ffi::OsStr::new("/dev/null");
    oracle::run_tool(tool, dir, args, &[("TF_CLI_CONFIG_FILE", null)])
}

/// A provisioner's lines, each resource's in its order (resources run
/// at once), with what differs between the runs (a folder, a script's
/// random name) written alike.
fn provisioned(out: &str, dir: &Path) -> Vec<String> {
    let mut lines: Vec<String> = out
        .lines()
        .filter(|l| l.contains("-exec)") || l.contains("(file)") || l.contains("Provisioning with"))
        .map(|l| l.replace(&dir.display().to_string(), "DIR"))
        .collect();
    lines.sort_by_key(|l| l.split([' ', ':']).next().unwrap_or_default().to_string());
    lines
}

#[test]
fn remote_exec_and_file_over_ssh_are_terraforms() {
    let test = "remote_exec_and_file_over_ssh_are_terraforms";
    if !require_terraform(test) {
        return;
    }
    let Some(server) = sshd::start(test) else {
        return;
    };
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = scratch(test, tool);
        std::fs::write(dir.join("local.txt"), "from here\n").expect("source");
        let out = dir.join("out");
        std::fs::create_dir_all(&out).expect("out");
        let config = format!(
            r#"
resource "terraform_data" "r" {{
  input = "v1"
  connection {{
    type        = "ssh"
    host        = "127.0.0.1"
    port        = {port}
    user        = "{user}"
    private_key = file("{key}")
  }}
  provisioner "file" {{
    content     = "hello ${{self.input}}\n"
    destination = "{out}/content.txt"
  }}
  provisioner "file" {{
    source      = "local.txt"
    destination = "{out}/copy.txt"
  }}
  provisioner "remote-exec" {{
    inline = [
      "echo remote ${{self.input}}",
      "cat {out}/content.txt {out}/copy.txt",
    ]
  }}
  provisioner "remote-exec" {{
    when   = destroy
    inline = ["echo bye ${{self.input}}", "exit 7"]
  }}
}}
"#,
            port = server.port,
            user = server.user,
            key = server.key.display(),
            out = out.display(),
        );
        std::fs::write(dir.join("main.tf"), config).expect("config");
        if tool == "terraform" {
            let (code, _, err) = run(tool, &dir, &["init", "-input=false"]);
            assert_eq!(code, 0, "terraform init: {err}");
        }
        let (code, applied, err) = run(tool, &dir, &["apply", "-auto-approve", "-no-color"]);
        assert_eq!(code, 0, "{tool}:\n{applied}\n{err}");
        let files: Vec<String> = ["content.txt", "copy.txt"]
            .iter()
            .map(|f| std::fs::read_to_string(out.join(f)).unwrap_or_default())
            .collect();
        let (code, destroyed, err) = run(tool, &dir, &["destroy", "-auto-approve", "-no-color"]);
        assert_eq!(code, 1, "{tool}:\n{destroyed}\n{err}");
        let words = err.split_whitespace().collect::<Vec<_>>().join(" ");
        for says in [
            "remote-exec provisioner error",
            "Process exited with status 7",
        ] {
            assert!(words.contains(says), "{tool} does not say {says:?}: {err}");
        }
        let left = run(tool, &dir, &["state", "list"]).1;
        seen.push((
            provisioned(&applied, &dir),
            files,
            provisioned(&destroyed, &dir),
            left,
        ));
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
}
