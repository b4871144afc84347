//! `init`'s module installation, beside Terraform's on the same tree: a
//! stand-in module registry on 127.0.0.1 (with a token, as a private
//! registry), local git repositories, zip and tar.gz archives over HTTP, a
//! page naming a git source, and local modules calling remote ones. Both
//! tools read the registry's address and token from the same CLI
//! configuration (`TF_CLI_CONFIG_FILE`). Compared: exit codes, what init
//! says about each module, the module manifest, the installed files, and
//! the outputs an apply gives; then a second init, a changed version
//! constraint, `-upgrade`, and the errors.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use strata_standin::registry::{self, Published, Registry};

#[path = "common/oracle.rs"]
mod oracle;

const TOKEN: &str = "s3cret-registry-token";

/// terraform and git, which must be here under CI=true.
fn tools_here(test: &str) -> bool {
    oracle::require_terraform(test) && require_git(test)
}

/// git must be here under CI=true, as terraform must.
fn require_git(test: &str) -> bool {
    let found = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found || std::env::var("CI").as_deref() != Ok("true"),
        "git is not on PATH; under CI=true {test} must run, not skip"
    );
    found
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("strata-modinst-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

fn write_tree(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=t@strata.test", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository with a module calling a local one, tagged v1.0.0, then
/// changed and tagged v2.0.0.
fn repository(at: &Path) {
    write_tree(
        at,
        &[
            ("main.tf", "variable \"n\" {\n  default = \"x\"\n}\n\nmodule \"inner\" {\n  source = \"./modules/inner\"\n}\n\noutput \"o\" {\n  value = \"git v1 ${var.n} ${module.inner.v}\"\n}\n"),
            ("modules/inner/main.tf", "output \"v\" {\n  value = \"inner v1\"\n}\n"),
        ],
    );
    git(at, &["init", "-q", "-b", "main"]);
    git(at, &["add", "-A"]);
    git(at, &["commit", "-qm", "one"]);
    git(at, &["tag", "v1.0.0"]);
    for file in ["main.tf", "modules/inner/main.tf"] {
        let text = std::fs::read_to_string(at.join(file)).expect("read");
        std::fs::write(at.join(file), text.replace("v1", "v2")).expect("write");
    }
    git(at, &["commit", "-qam", "two"]);
    git(at, &["tag", "v2.0.0"]);
}

/// A `.tar.gz` of `files`.
fn tar_gz(files: &[(&str, &str)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for (name, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, name, text.as_bytes())
            .expect("tar entry");
    }
    builder.into_inner().expect("tar").finish().expect("gzip")
}

/// A `.zip` of `files` (raw names, so a test can write a hostile one).
fn zip_of(files: &[(&str, &str)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, text) in files {
        w.start_file(*name, options).expect("zip entry");
        w.write_all(text.as_bytes()).expect("zip write");
    }
    w.finish().expect("zip").into_inner()
}

fn greeting(version: &str) -> Vec<u8> {
    let main = format!("variable \"n\" {{\n  default = \"x\"\n}}\n\noutput \"o\" {{\n  value = \"hello ${{var.n}} from {version}\"\n}}\n");
    tar_gz(&[
        ("main.tf", &main),
        (
            "modules/sub/main.tf",
            "output \"v\" {\n  value = \"sub\"\n}\n",
        ),
    ])
}

/// The registry, the repository and the CLI configuration of one test.
struct Scene {
    dir: PathBuf,
    registry: Registry,
    cli_config: PathBuf,
}

fn scene(tag: &str) -> Scene {
    let dir = scratch(tag);
    repository(&dir.join("repo"));
    let registry = registry::start(Some(TOKEN)).expect("registry");
    for version in ["1.0.0", "1.2.0", "2.0.0", "2.1.0-beta1"] {
        registry.publish(Published {
            module: "strata/greet/any".into(),
            version: version.into(),
            package: greeting(version),
        });
    }
    let zipped = "output \"o\" {\n  value = \"zipped\"\n}\n";
    registry.file("/files/pkg.zip", zip_of(&[("main.tf", zipped)]));
    let repo = format!("git::file://{}?ref=v1.0.0", dir.join("repo").display());
    registry.page("/pages/mod", &repo);
    // A module at an absolute path, holding a link to a directory (as a
    // module's examples hold what an earlier init left them).
    write_tree(
        &dir,
        &[
            (
                "shared/main.tf",
                "output \"o\" {\n  value = \"shared\"\n}\n",
            ),
            ("vendored/notes.txt", "kept\n"),
        ],
    );
    std::os::unix::fs::symlink(dir.join("vendored"), dir.join("shared/vendor")).expect("link");
    let cli_config = dir.join("cli.tfrc");
    let text = format!(
        "host \"registry.strata.test\" {{\n  services = {{\n    \"modules.v1\" = \"{}\"\n  }}\n}}\n\ncredentials \"registry.strata.test\" {{\n  token = \"{TOKEN}\"\n}}\n",
        registry.modules_url()
    );
    std::fs::write(&cli_config, text).expect("cli config");
    Scene {
        dir,
        registry,
        cli_config,
    }
}

impl Scene {
    /// The root configuration: every kind of source once.
    fn root(&self, version: &str) -> Vec<(String, String)> {
        let repo = self.dir.join("repo").display().to_string();
        let shared = self.dir.join("shared").display().to_string();
        let url = &self.registry.server.url;
        let main = format!(
            r#"module "reg" {{
  source  = "registry.strata.test/strata/greet/any"
  version = "{version}"
  n       = "reg"
}}

module "git" {{
  source = "git::file://{repo}?ref=v1.0.0"
  n      = "git"
}}

module "sub" {{
  source = "git::file://{repo}//modules/inner?ref=v2.0.0"
}}

module "regsub" {{
  source  = "registry.strata.test/strata/greet/any//modules/sub"
  version = "1.0.0"
}}

module "zip" {{
  source = "{url}/files/pkg.zip"
}}

module "page" {{
  source = "{url}/pages/mod"
}}

module "local" {{
  source = "./local"
}}

module "abs" {{
  source = "{shared}"
}}

output "all" {{
  value = [module.reg.o, module.git.o, module.sub.v, module.regsub.v, module.zip.o, module.page.o, module.local.o, module.abs.o]
}}
"#
        );
        let local = "module \"deep\" {\n  source  = \"registry.strata.test/strata/greet/any\"\n  version = \"1.0.0\"\n}\n\noutput \"o\" {\n  value = module.deep.o\n}\n";
        vec![
            ("main.tf".into(), main),
            ("local/main.tf".into(), local.into()),
        ]
    }

    /// A tree for `tool` with `files`.
    fn tree(&self, tool: &str, files: &[(String, String)]) -> PathBuf {
        let at = self.dir.join(tool);
        let _ = std::fs::remove_dir_all(&at);
        std::fs::create_dir_all(&at).expect("tree");
        let borrowed: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        write_tree(&at, &borrowed);
        at
    }

    fn run(&self, tool: &str, dir: &Path, args: &[&str]) -> (i32, String, String) {
        self.run_with(tool, dir, args, &self.cli_config)
    }

    fn run_with(&self, tool: &str, dir: &Path, args: &[&str], cli: &Path) -> (i32, String, String) {
        oracle::run_tool(tool, dir, args, &[("TF_CLI_CONFIG_FILE", cli.as_os_str())])
    }
}

/// What init said about the modules: the lines between its module and
/// provider headings.
fn module_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .skip_while(|l| !l.ends_with("modules..."))
        .skip(1)
        .take_while(|l| !l.starts_with("Initializing provider"))
        .map(str::to_string)
        .collect()
}

/// The manifest, keyed by call.
fn manifest(dir: &Path) -> BTreeMap<String, serde_json::Value> {
    let text =
        std::fs::read_to_string(dir.join(".terraform/modules/modules.json")).expect("manifest");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("manifest JSON");
    doc["Modules"]
        .as_array()
        .expect("Modules")
        .iter()
        .map(|r| (r["Key"].as_str().expect("Key").to_string(), r.clone()))
        .collect()
}

/// The installed files (git metadata aside) and their text.
fn installed(dir: &Path) -> BTreeMap<String, String> {
    fn walk(base: &Path, at: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(at).expect("read dir") {
            let path = entry.expect("entry").path();
            if path
                .file_name()
                .is_some_and(|n| n == ".git" || n == "modules.json")
            {
                continue;
            }
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path
                    .strip_prefix(base)
                    .expect("under base")
                    .display()
                    .to_string();
                out.insert(rel, std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    let base = dir.join(".terraform/modules");
    walk(&base, &base, &mut out);
    out
}

/// Text with its runs of white space made one space: diagnostics wrap.
fn squashed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn both_succeed(
    s: &Scene,
    dirs: &BTreeMap<&str, PathBuf>,
    args: &[&str],
) -> BTreeMap<String, String> {
    dirs.iter()
        .map(|(tool, dir)| {
            let (code, out, err) = s.run(tool, dir, args);
            assert_eq!(code, 0, "{tool} {args:?}:\n{out}\n{err}");
            (tool.to_string(), out)
        })
        .collect()
}

#[test]
fn init_installs_every_kind_of_module_source_as_terraform_does() {
    if !tools_here("init_installs_every_kind_of_module_source_as_terraform_does") {
        return;
    }
    let s = scene("kinds");
    let files = s.root("~> 1.0");
    let dirs: BTreeMap<&str, PathBuf> = ["terraform", "strata"]
        .into_iter()
        .map(|t| (t, s.tree(t, &files)))
        .collect();

    let said = both_succeed(&s, &dirs, &["init", "-input=false", "-no-color"]);
    let lines = module_lines(&said["terraform"]);
    assert!(
        lines
            .iter()
            .any(|l| l == "Downloading registry.strata.test/strata/greet/any 1.2.0 for reg..."),
        "{lines:?}"
    );
    assert_eq!(
        module_lines(&said["strata"]),
        lines,
        "what init says about the modules"
    );
    assert_eq!(
        manifest(&dirs["strata"]),
        manifest(&dirs["terraform"]),
        "the module manifest"
    );
    assert_eq!(
        installed(&dirs["strata"]),
        installed(&dirs["terraform"]),
        "the installed files"
    );

    both_succeed(
        &s,
        &dirs,
        &["apply", "-auto-approve", "-input=false", "-no-color"],
    );
    let outputs = both_succeed(&s, &dirs, &["output", "-json"]);
    let value = |t: &str| {
        serde_json::from_str::<serde_json::Value>(&outputs[t]).expect("output JSON")["all"]["value"]
            .clone()
    };
    assert_eq!(value("strata"), value("terraform"));
    assert_eq!(value("strata")[0], "hello reg from 1.2.0");
    // `modules` (Terraform 1.10): the same tree, the registry module with
    // its version and constraint, and the same records in the document
    // (Terraform's JSON follows a map's order; strata's the tree's).
    let listed = both_succeed(&s, &dirs, &["modules", "-no-color"]);
    assert_eq!(listed["strata"], listed["terraform"]);
    let listed = both_succeed(&s, &dirs, &["modules", "-json"]);
    let records = |t: &str| {
        let doc: serde_json::Value = serde_json::from_str(&listed[t]).expect("modules JSON");
        let mut all: Vec<String> = doc["modules"]
            .as_array()
            .expect("a list")
            .iter()
            .map(|m| m.to_string())
            .collect();
        all.sort();
        (doc["format_version"].clone(), all)
    };
    assert_eq!(records("strata"), records("terraform"));
    let listed = both_succeed(&s, &dirs, &["modules", "-no-color"]);
    assert!(
        listed["strata"].contains("[registry.strata.test/strata/greet/any] 1.2.0 (~> 1.0)"),
        "{}",
        listed["strata"]
    );

    // Again: nothing to install, nothing fetched again.
    let fetched = s.registry.hits("/archives/strata/greet/any/1.2.0.tar.gz");
    let said = both_succeed(&s, &dirs, &["init", "-input=false", "-no-color"]);
    assert_eq!(
        module_lines(&said["strata"]),
        module_lines(&said["terraform"])
    );
    assert!(
        module_lines(&said["strata"]).is_empty(),
        "{}",
        said["strata"]
    );
    assert_eq!(
        s.registry.hits("/archives/strata/greet/any/1.2.0.tar.gz"),
        fetched,
        "a second init fetched a package again"
    );

    // A constraint the installed version no longer meets: plan refuses,
    // init installs the newest that does.
    let changed = s.root(">= 2.0");
    for dir in dirs.values() {
        std::fs::write(dir.join("main.tf"), &changed[0].1).expect("edit");
    }
    for (tool, dir) in &dirs {
        let (code, out, err) = s.run(tool, dir, &["plan", "-input=false", "-no-color"]);
        assert_eq!(code, 1, "{tool} plan:\n{out}\n{err}");
        assert!(
            err.contains("Module version requirements have changed"),
            "{tool}: {err}"
        );
    }
    let said = both_succeed(&s, &dirs, &["init", "-input=false", "-no-color"]);
    assert_eq!(
        module_lines(&said["strata"]),
        module_lines(&said["terraform"])
    );
    assert_eq!(
        module_lines(&said["strata"]),
        [
            "Downloading registry.strata.test/strata/greet/any 2.0.0 for reg...",
            "- reg in .terraform/modules/reg"
        ]
    );

    let said = both_succeed(
        &s,
        &dirs,
        &["init", "-upgrade", "-input=false", "-no-color"],
    );
    assert!(said["strata"].contains("Upgrading modules..."));
    assert_eq!(
        module_lines(&said["strata"]),
        module_lines(&said["terraform"])
    );
    assert_eq!(manifest(&dirs["strata"]), manifest(&dirs["terraform"]));
}

#[test]
fn module_installation_errors_are_terraforms() {
    if !tools_here("module_installation_errors_are_terraforms") {
        return;
    }
    let s = scene("errors");
    let repo = s.dir.join("repo").display().to_string();
    let cases = [
        (
            "source = \"./local\"\n  version = \"1.0\"",
            "Invalid registry module source address",
        ),
        (
            "source = \"registry.strata.test/strata/none/any\"",
            "Module not found",
        ),
        (
            "source = \"registry.strata.test/strata/greet/any\"\n  version = \">= 3.0\"",
            "Unresolvable module version constraint",
        ),
        (
            &format!("source = \"git::file://{repo}?ref=v9\""),
            "Failed to download module",
        ),
        (
            &format!("source = \"git::file://{repo}.missing\""),
            "Failed to download module",
        ),
        (
            "source = \"registry.strata.test/strata/greet/any//nowhere\"",
            "Unreadable module subdirectory",
        ),
        ("source = \"no-such-kind\"", "Invalid module source address"),
    ];
    for (call, summary) in cases {
        let files = vec![
            (
                "main.tf".to_string(),
                format!("module \"m\" {{\n  {call}\n}}\n"),
            ),
            ("local/main.tf".to_string(), String::new()),
        ];
        both_refuse(&s, &files, &s.cli_config, summary);
    }
    // Without the token, the private registry refuses both.
    let none = s.dir.join("none.tfrc");
    let host = format!(
        "host \"registry.strata.test\" {{\n  services = {{\n    \"modules.v1\" = \"{}\"\n  }}\n}}\n",
        s.registry.modules_url()
    );
    std::fs::write(&none, host).expect("cli config");
    let files = vec![(
        "main.tf".to_string(),
        "module \"m\" {\n  source = \"registry.strata.test/strata/greet/any\"\n}\n".to_string(),
    )];
    both_refuse(&s, &files, &none, "Error accessing remote module registry");
}

/// `init` of `files` with the CLI configuration `cli` fails in both tools
/// (exit 1), each saying `summary`.
fn both_refuse(s: &Scene, files: &[(String, String)], cli: &Path, summary: &str) {
    for tool in ["terraform", "strata"] {
        let dir = s.tree(tool, files);
        let (code, out, err) = s.run_with(tool, &dir, &["init", "-input=false", "-no-color"], cli);
        assert_eq!(code, 1, "{tool} on {files:?}:\n{out}\n{err}");
        assert!(
            squashed(&err).contains(summary),
            "{tool} on {files:?} does not say {summary:?}:\n{err}"
        );
    }
}

#[test]
fn an_archive_entry_outside_the_module_directory_is_refused() {
    let s = scene("hostile");
    s.registry.file(
        "/files/evil.zip",
        zip_of(&[("main.tf", ""), ("../../escaped.tf", "x")]),
    );
    let url = format!("{}/files/evil.zip", s.registry.server.url);
    let files = vec![(
        "main.tf".to_string(),
        format!("module \"m\" {{\n  source = \"{url}\"\n}}\n"),
    )];
    let dir = s.tree("strata", &files);
    let (code, _, err) = s.run("strata", &dir, &["init", "-input=false", "-no-color"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        squashed(&err).contains("would land outside the module directory"),
        "{err}"
    );
    assert!(!dir.join(".terraform/escaped.tf").exists() && !dir.join("escaped.tf").exists());
    assert!(
        !dir.join(".terraform/modules/m").exists(),
        "a half-unpacked module was left"
    );
}

/// A module archive whose entries are links (one to a file outside the
/// module holding configuration, one hard link, one device): each is an
/// empty file in the installed module, as Terraform writes it, so nothing
/// outside the module is ever read as configuration; and an archive that
/// unpacks to more than a module may be is refused, nothing left.
#[test]
fn archive_links_stay_inside_the_module_and_a_bomb_is_refused() {
    let s = scene("links");
    let outside = s.dir.join("outside.tf");
    std::fs::write(
        &outside,
        "output \"leaked\" {\n  value = \"SECRET-LINE\"\n}\n",
    )
    .expect("outside");
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    let mut main = tar::Header::new_gnu();
    let text = "output \"o\" {\n  value = \"inside\"\n}\n";
    main.set_size(text.len() as u64);
    main.set_mode(0o644);
    main.set_cksum();
    builder
        .append_data(&mut main, "main.tf", text.as_bytes())
        .expect("main");
    for (name, kind, target) in [
        (
            "secrets.tf",
            tar::EntryType::Symlink,
            outside.display().to_string(),
        ),
        (
            "hard.tf",
            tar::EntryType::Link,
            outside.display().to_string(),
        ),
        ("tty.tf", tar::EntryType::Char, String::new()),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(0);
        h.set_mode(0o644);
        if !target.is_empty() {
            h.set_link_name(&target).expect("link name");
        }
        h.set_cksum();
        builder
            .append_data(&mut h, name, std::io::empty())
            .expect("link entry");
    }
    let archive = builder.into_inner().expect("tar").finish().expect("gzip");
    s.registry.file("/files/links.tar.gz", archive);
    let url = format!("{}/files/links.tar.gz", s.registry.server.url);
    let files = vec![(
        "main.tf".to_string(),
        format!("module \"m\" {{\n  source = \"{url}\"\n}}\noutput \"o\" {{\n  value = module.m.o\n}}\n"),
    )];
    let dir = s.tree("strata", &files);
    let (code, _, err) = s.run("strata", &dir, &["init", "-input=false", "-no-color"]);
    assert_eq!(code, 0, "{err}");
    let m = dir.join(".terraform/modules/m");
    for name in ["secrets.tf", "hard.tf"] {
        let meta = std::fs::symlink_metadata(m.join(name)).expect("written");
        assert!(
            meta.is_file() && meta.len() == 0,
            "{name} is not an empty file: {meta:?}"
        );
    }
    let (code, out, err) = s.run("strata", &dir, &["plan", "-no-color"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!format!("{out}{err}").contains("SECRET-LINE"), "{out}{err}");

    // 300 MiB of zeros, a few hundred KiB zipped.
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    w.start_file("main.tf", deflated).expect("entry");
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..300 {
        w.write_all(&zeros).expect("write");
    }
    s.registry
        .file("/files/bomb.zip", w.finish().expect("zip").into_inner());
    let url = format!("{}/files/bomb.zip", s.registry.server.url);
    let files = vec![(
        "main.tf".to_string(),
        format!("module \"b\" {{\n  source = \"{url}\"\n}}\n"),
    )];
    let dir = s.tree("strata-bomb", &files);
    let (code, _, err) = s.run("strata", &dir, &["init", "-input=false", "-no-color"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        squashed(&err).contains("unpacks to more than 256 MiB"),
        "{err}"
    );
    assert!(
        !dir.join(".terraform/modules/b").exists(),
        "a half-unpacked module was left"
    );
}

/// `init -from-module` beside Terraform: a git module (calling a local
/// one) copied into an empty directory, initialised, and applied with the
/// same outputs; a directory with configuration refused in both.
#[test]
fn init_from_module_copies_a_module_in_as_terraform_does() {
    if !tools_here("init_from_module_copies_a_module_in_as_terraform_does") {
        return;
    }
    let s = scene("from-module");
    let repo = format!("git::file://{}?ref=v1.0.0", s.dir.join("repo").display());
    let flag = format!("-from-module={repo}");
    let mut seen = Vec::new();
    for tool in ["terraform", "strata"] {
        let dir = s.tree(tool, &[]);
        let (code, out, err) = s.run(tool, &dir, &["init", "-input=false", "-no-color", &flag]);
        assert_eq!(code, 0, "{tool}:\n{out}\n{err}");
        assert!(
            out.starts_with(&format!("Copying configuration from {repo:?}...")),
            "{tool}: {out}"
        );
        let (code, out, err) = s.run(
            tool,
            &dir,
            &["apply", "-auto-approve", "-input=false", "-no-color"],
        );
        assert_eq!(code, 0, "{tool}:\n{out}\n{err}");
        let outputs = s.run(tool, &dir, &["output", "-json"]).1;
        let copied = std::fs::read_to_string(dir.join("main.tf")).expect("copied main.tf");
        seen.push((manifest(&dir), copied, outputs));
        let (code, out, err) = s.run(tool, &dir, &["init", "-input=false", "-no-color", &flag]);
        assert_eq!(code, 1, "{tool} into a full directory:\n{out}\n{err}");
        assert!(
            squashed(&err).contains("already contains files"),
            "{tool}: {err}"
        );
    }
    assert_eq!(seen[1], seen[0], "strata (left) against terraform (right)");
}

/// A registry module whose source and version are const variables
/// (Terraform 1.15, after the 1.11 here, so strata alone): init installs
/// the version `-var` gives, and a plan given another version than the
/// one installed is refused until init runs again, as Terraform 1.15
/// refuses it ("Module version requirements have changed").
#[test]
fn a_registry_module_named_by_const_variables_is_installed_at_their_version() {
    let s = scene("dynamic-registry");
    let main = r#"variable "src" {
  const   = true
  default = "registry.strata.test/strata/greet/any"
}

variable "v" {
  const = true
  type  = string
}

module "reg" {
  source  = var.src
  version = var.v
  n       = "reg"
}

output "o" {
  value = module.reg.o
}
"#;
    let dir = s.tree("strata", &[("main.tf".to_string(), main.to_string())]);
    let (code, out, err) = s.run("strata", &dir, &["init", "-no-color", "-var", "v=1.2.0"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(manifest(&dir)["reg"]["Version"], "1.2.0");
    let args = ["apply", "-auto-approve", "-no-color", "-var", "v=1.2.0"];
    let (code, out, err) = s.run("strata", &dir, &args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1.2.0"), "{out}");
    let (code, out, err) = s.run("strata", &dir, &["plan", "-no-color", "-var", "v=2.0.0"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        squashed(&err).contains("Module version requirements have changed"),
        "{err}"
    );
    // Without a value for the required const variable, init cannot know
    // which version to install.
    let (code, _, err) = s.run("strata", &dir, &["init", "-no-color"]);
    assert_eq!(code, 1);
    assert!(
        squashed(&err).contains("No value for required variable"),
        "{err}"
    );
}

/// A test run's `module` from a registry, and a local one calling a
/// registry module: init installs each under Terraform's key
/// (`test.tests.reg.greets`, `test.tests.reg.deep_local.deep`), the same
/// manifest records and lines as Terraform 1.11, and `test` plans and
/// applies them with the same verdicts; before init, both refuse every
/// run's module not installed before any run. (strata refused registry
/// modules in a run as "not yet".)
#[test]
fn a_test_runs_registry_module_is_installed_and_run_as_terraform_does() {
    if !tools_here("a_test_runs_registry_module_is_installed_and_run") {
        return;
    }
    let s = scene("test-module");
    let tests = r#"run "greets" {
  command = plan
  module {
    source  = "registry.strata.test/strata/greet/any"
    version = "~> 1.0"
  }
  variables {
    n = "t"
  }
  assert {
    condition     = output.o == "hello t from 1.2.0"
    error_message = "greeted ${output.o}"
  }
}

run "deep_local" {
  module {
    source = "./local"
  }
  assert {
    condition     = output.o == "hello x from 1.0.0"
    error_message = "greeted ${output.o}"
  }
}

run "wrong" {
  command = plan
  module {
    source  = "registry.strata.test/strata/greet/any"
    version = "2.0.0"
  }
  assert {
    condition     = output.o == "hello x from 1.0.0"
    error_message = "greeted ${output.o}"
  }
}
"#;
    let local = "module \"deep\" {\n  source  = \"registry.strata.test/strata/greet/any\"\n  version = \"1.0.0\"\n}\n\noutput \"o\" {\n  value = module.deep.o\n}\n";
    let files = vec![
        (
            "main.tf".to_string(),
            "output \"here\" {\n  value = 1\n}\n".to_string(),
        ),
        ("local/main.tf".to_string(), local.to_string()),
        ("tests/reg.tftest.hcl".to_string(), tests.to_string()),
    ];
    let dirs: BTreeMap<&str, PathBuf> = ["terraform", "strata"]
        .into_iter()
        .map(|t| (t, s.tree(t, &files)))
        .collect();
    // Before init: the registry modules are not installed.
    for (tool, dir) in &dirs {
        let (code, out, err) = s.run(tool, dir, &["test", "-no-color"]);
        assert_eq!(code, 1, "{tool}:\n{out}{err}");
        assert!(
            squashed(&format!("{out}{err}")).contains("Module not installed"),
            "{tool}:\n{out}{err}"
        );
        // Found as the files are read: no run starts.
        assert!(!out.contains("run \"greets\""), "{tool}:\n{out}{err}");
    }
    let said = both_succeed(&s, &dirs, &["init", "-no-color"]);
    let lines: BTreeMap<_, _> = said
        .iter()
        .map(|(tool, out)| {
            (
                tool.clone(),
                module_lines(&out.replace("Terraform", "strata")),
            )
        })
        .collect();
    assert_eq!(lines["strata"], lines["terraform"]);
    let records: Vec<_> = dirs.values().map(|d| manifest(d)).collect();
    assert_eq!(records[0], records[1]);
    for key in [
        "test.tests.reg.greets",
        "test.tests.reg.deep_local.deep",
        "test.tests.reg.wrong",
    ] {
        assert!(
            records[0].contains_key(key),
            "{key}: {:?}",
            records[0].keys()
        );
    }
    let verdicts: Vec<_> = dirs
        .iter()
        .map(|(tool, dir)| {
            let (code, out, err) = s.run(tool, dir, &["test", "-no-color"]);
            let lines: Vec<String> = out
                .lines()
                .filter(|l| l.contains("... "))
                .map(str::to_string)
                .collect();
            (code, lines, format!("{out}{err}"))
        })
        .collect();
    assert_eq!(
        verdicts[0].0, verdicts[1].0,
        "{}\n{}",
        verdicts[0].2, verdicts[1].2
    );
    assert_eq!(
        verdicts[0].1, verdicts[1].1,
        "{}\n{}",
        verdicts[0].2, verdicts[1].2
    );
    let strata = &verdicts[1];
    assert!(
        strata.2.contains("greeted hello x from 2.0.0"),
        "{}",
        strata.2
    );
}
