//! A scratch folder in which strata and Terraform run the test provider
//! (`terraform-provider-stratatest`, `testing/provider`): a filesystem
//! mirror holding it and a CLI configuration naming the mirror, shared by
//! the test files that hold strata to Terraform through a real plugin.
#![allow(dead_code)] // each test file uses its own part

use crate::oracle::run_tool;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

pub const SOURCE: &str = "registry.strata.test/strata/stratatest";

/// The test provider's binary, built beside strata's.
pub fn provider_binary() -> PathBuf {
    let bin =
        Path::new(env!("CARGO_BIN_EXE_strata")).with_file_name("terraform-provider-stratatest");
    assert!(
        bin.exists(),
        "{} is not built: run the suite as .ci/run does, or cargo build -p strata-test-provider",
        bin.display()
    );
    bin
}

/// The provider, zipped as a release is (executable kept executable).
pub fn provider_zip() -> Vec<u8> {
    provider_zip_with(&[])
}

/// The provider zipped with more `files` (name, content) beside it: a
/// package whose checksum differs, as another platform's would.
pub fn provider_zip_with(files: &[(&str, &str)]) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o755);
    w.start_file("terraform-provider-stratatest_v0.1.0", options)
        .unwrap();
    w.write_all(&std::fs::read(provider_binary()).unwrap())
        .unwrap();
    for (name, content) in files {
        w.start_file(*name, options).unwrap();
        w.write_all(content.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A scratch folder with a filesystem mirror holding the provider and a
/// CLI configuration naming it.
pub struct Lab {
    pub root: PathBuf,
    pub cli: PathBuf,
    /// The protocol version the provider is to speak (`STRATATEST_PROTOCOL`).
    pub protocol: &'static str,
    /// A CA both tools are to trust (`SSL_CERT_FILE`), for a stand-in
    /// served over HTTPS.
    pub ca: Option<PathBuf>,
}

impl Lab {
    pub fn new(tag: &str) -> Lab {
        let root = std::env::temp_dir().join(format!("strata-plugin-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let package = root.join(format!("mirror/{SOURCE}/0.1.0/linux_amd64"));
        std::fs::create_dir_all(&package).unwrap();
        // Linked, not copied: a debug build of the provider is large, and
        // every test has a mirror.
        std::os::unix::fs::symlink(
            provider_binary(),
            package.join("terraform-provider-stratatest_v0.1.0"),
        )
        .unwrap();
        // Each tool's temporary files (a provider's socket among them)
        // land in the lab, where a test can see what is left.
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        let cli = root.join("cli.tfrc");
        let mirror = root.join("mirror");
        std::fs::write(
            &cli,
            format!(
                "provider_installation {{\n  filesystem_mirror {{\n    path    = {:?}\n    include = [\"registry.strata.test/*/*\"]\n  }}\n}}\n",
                mirror.display().to_string()
            ),
        )
        .unwrap();
        Lab {
            root,
            cli,
            protocol: "6",
            ca: None,
        }
    }

    /// Both tools find `registry.strata.test`'s providers at the registry
    /// stand-in's `providers_url` (the CLI configuration's only setting).
    pub fn provider_registry(&self, providers_url: &str) {
        std::fs::write(
            &self.cli,
            format!("host \"registry.strata.test\" {{\n  services = {{\n    \"providers.v1\" = \"{providers_url}\"\n  }}\n}}\n"),
        )
        .unwrap();
    }

    /// A working directory for `tool` with `tests/plugin`'s configuration.
    pub fn work(&self, tool: &str) -> PathBuf {
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plugin/main.tf");
        self.work_with(tool, &std::fs::read_to_string(config).unwrap())
    }

    /// A working directory for `tool` with `config` as its `main.tf`.
    pub fn work_with(&self, tool: &str, config: &str) -> PathBuf {
        let dir = self.root.join(tool);
        std::fs::create_dir_all(dir.join("store")).unwrap();
        std::fs::write(dir.join("main.tf"), config).unwrap();
        dir
    }

    /// The mirror's copy of the provider binary.
    pub fn mirrored_binary(&self) -> PathBuf {
        self.root.join(format!(
            "mirror/{SOURCE}/0.1.0/linux_amd64/terraform-provider-stratatest_v0.1.0"
        ))
    }

    /// The temporary directory both tools are given (`TMPDIR`).
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    pub fn run(&self, tool: &str, dir: &Path, args: &[&str]) -> (i32, String, String) {
        self.run_with(tool, dir, args, &[])
    }

    /// Runs with `extra` settings in the environment too.
    pub fn run_with(
        &self,
        tool: &str,
        dir: &Path,
        args: &[&str],
        extra: &[(&str, &std::ffi::OsStr)],
    ) -> (i32, String, String) {
        let tmp = self.tmp();
        let mut env = vec![
            ("TMPDIR", tmp.as_os_str()),
            ("TF_CLI_CONFIG_FILE", self.cli.as_os_str()),
            ("STRATATEST_PROTOCOL", std::ffi::OsStr::new(self.protocol)),
        ];
        if let Some(ca) = &self.ca {
            env.push(("SSL_CERT_FILE", ca.as_os_str()));
        }
        env.extend(extra);
        run_tool(tool, dir, args, &env)
    }

    /// Runs and insists on success.
    pub fn ok(&self, tool: &str, dir: &Path, args: &[&str]) -> String {
        let (code, out, err) = self.run(tool, dir, args);
        assert_eq!(code, 0, "{tool} {args:?} failed:\n{out}\n{err}");
        out
    }

    /// A saved plan (`-var` settings given) and its JSON.
    pub fn plan(&self, tool: &str, dir: &Path, vars: &[&str]) -> Json {
        let mut args = vec!["plan", "-no-color", "-out=saved.plan"];
        args.extend(vars);
        self.ok(tool, dir, &args);
        let shown = self.ok(tool, dir, &["show", "-json", "saved.plan"]);
        serde_json::from_str(&shown).unwrap()
    }
}

/// The environment in which the test provider declares resource
/// identities and lists objects (`STRATATEST_IDENTITY`).
pub fn identity_env() -> [(&'static str, &'static std::ffi::OsStr); 1] {
    [("STRATATEST_IDENTITY", std::ffi::OsStr::new("1"))]
}

impl Lab {
    /// strata with the provider declaring identities; success insisted on.
    pub fn identified(&self, dir: &Path, args: &[&str]) -> String {
        let (code, out, err) = self.run_with("strata", dir, args, &identity_env());
        assert_eq!(code, 0, "strata {args:?} failed:\n{out}\n{err}");
        out
    }

    /// An object named `name` made in `dir`'s store by another
    /// configuration (`dir/seed`), as objects made by hand are.
    pub fn made_elsewhere(&self, dir: &Path, name: &str) {
        let seed = dir.join(format!("seed-{name}"));
        std::fs::create_dir_all(&seed).unwrap();
        let body = format!("resource \"stratatest_object\" \"x\" {{\n  name = \"{name}\"\n}}\n");
        let text = format!("{HEADER}\n{body}").replace("./store", "../store");
        std::fs::write(seed.join("main.tf"), text).unwrap();
        self.identified(&seed, &["init", "-no-color"]);
        self.identified(&seed, &["apply", "-no-color", "-auto-approve"]);
    }
}

/// A `-json` stream's messages, each parsed, and their types in order.
pub fn json_messages(text: &str) -> (Vec<Json>, Vec<String>) {
    let messages: Vec<Json> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds = messages
        .iter()
        .map(|m| m["type"].as_str().unwrap_or_default().to_string())
        .collect();
    (messages, kinds)
}

/// A lab is removed once its test passes (kept to look at when it fails).
impl Drop for Lab {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// The provider block every lab configuration starts with: the provider
/// keeps its objects in `./store`.
pub const HEADER: &str = r#"terraform {
  required_providers {
    stratatest = {
      source  = "registry.strata.test/strata/stratatest"
      version = "0.1.0"
    }
  }
}

provider "stratatest" {
  store = "./store"
}
"#;

/// The line of main.tf a diagnostic names: Terraform says "on main.tf
/// line N", strata "main.tf:N:C".
pub fn line_of(said: &str) -> Option<String> {
    said.split("main.tf line ")
        .nth(1)
        .or_else(|| said.split("main.tf:").nth(1))
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .map(str::to_string)
}

/// Each error's summary and the line of main.tf it names, in order:
/// Terraform's "Error: SUMMARY" then "on main.tf line N", strata's
/// "× SUMMARY (at ./main.tf:N:C)".
pub fn errors_said(said: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut summary = None;
    for line in said.lines() {
        let line = line.trim();
        if let Some(s) = line.strip_prefix("Error: ") {
            summary = Some(s.to_string());
        } else if let Some(rest) = line.strip_prefix("× ") {
            let (s, at) = rest.rsplit_once(" (at ").unwrap_or((rest, ""));
            out.push((s.to_string(), line_of(at).unwrap_or_default()));
        } else if let (Some(s), true) = (&summary, line.starts_with("on main.tf line ")) {
            out.push((s.clone(), line_of(line).unwrap_or_default()));
            summary = None;
        }
    }
    out
}
