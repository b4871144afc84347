//! Which serves a type when strata has a native driver for its provider
//! and the provider's plugin is to be had (issue 25): the native driver,
//! unless a block of the type sets what the native schema lacks (then the
//! plugin serves that type), or `required_providers` says `strata =
//! "plugin"` (then it serves every type); `strata = "native"` keeps the
//! native driver and its schema's errors.
//!
//! The released binary has no native driver for a provider that also has
//! a plugin here, so this test runs strata's command line with one of its
//! own: a native `stratatest` driver that knows only `name` and `size`
//! and logs what it creates, beside the test provider's plugin. Each
//! command runs in a child process (this binary again, `harness = false`),
//! so its output can be read and its working directory is its own.

use async_trait::async_trait;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use strata_provider::{
    plan_by_schema, AttributeSchema, Driver, DriverError, PlanRequest, Planned, ResourceSchema,
    Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

const SOURCE: &str = "registry.strata.test/strata/stratatest";
const CHILD: &str = "STRATA_SERVING_CHILD";

/// A native driver for the test provider's `stratatest_object`, knowing
/// fewer arguments than the plugin; each create is a line of
/// `native.log` in the working directory.
struct Native {
    schemas: std::collections::BTreeMap<String, ResourceSchema>,
}

impl Native {
    fn new() -> Native {
        let schema = ResourceSchema::of_attributes(vec![
            ("name", AttributeSchema::required(Type::String, "")),
            (
                "size",
                AttributeSchema::optional(Type::Number, "").force_new(),
            ),
            ("id", AttributeSchema::computed(Type::String, "")),
        ]);
        Native {
            schemas: [("stratatest_object".to_string(), schema)].into(),
        }
    }
}

#[async_trait]
impl Driver for Native {
    fn name(&self) -> &str {
        "stratatest"
    }
    fn provider_address(&self) -> String {
        format!("provider[\"{SOURCE}\"]")
    }
    fn resource_schemas(&self) -> &std::collections::BTreeMap<String, ResourceSchema> {
        &self.schemas
    }
    fn provider_schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![("store", AttributeSchema::optional(Type::String, ""))])
    }
    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        Ok(plan_by_schema(
            &self.schemas[req.type_name],
            req.prior,
            req.config,
        ))
    }
    async fn read(&self, _: &str, instances: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        Ok(instances.iter().cloned().map(Some).collect())
    }
    async fn create(&self, _: &str, planned: &Value, _: &Tags) -> Result<Value, DriverError> {
        let name = strata_provider::values::string(planned, "name").unwrap_or_default();
        let mut log = std::fs::read_to_string("native.log").unwrap_or_default();
        log.push_str(&format!("{name}\n"));
        std::fs::write("native.log", log).map_err(|e| DriverError::Api {
            operation: "create".into(),
            detail: e.to_string(),
            retryable: false,
        })?;
        let mut attrs = planned.entries().cloned().unwrap_or_default();
        attrs.insert("id".into(), Value::string(format!("native-{name}")));
        Ok(Value::Object(attrs))
    }
    async fn update(&self, _: &str, _: &Value, planned: &Value) -> Result<Value, DriverError> {
        Ok(planned.clone())
    }
    async fn delete(&self, _: &str, _: &Value) -> Result<(), DriverError> {
        Ok(())
    }
}

#[async_trait]
impl strata_provider::Recovery for Native {
    async fn find_tagged(&self, _: &str, _: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }
}

impl strata_provider::Billing for Native {}
impl strata_provider::Ephemerals for Native {}

/// The child: strata's command line with the native driver added.
fn child(args: &str) -> ExitCode {
    let drivers = strata::builtin::Drivers::builtin().with(Arc::new(Native::new()));
    let args = std::iter::once("strata".into())
        .chain(args.split('\u{1f}').map(std::ffi::OsString::from))
        .collect();
    strata::cli::main_with(drivers, args)
}

/// A scratch folder with the test provider in a filesystem mirror.
struct Lab {
    root: PathBuf,
    cli: PathBuf,
}

impl Lab {
    fn new() -> Lab {
        let root = std::env::temp_dir().join(format!("strata-serving-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let package = root.join(format!("mirror/{SOURCE}/0.1.0/linux_amd64"));
        std::fs::create_dir_all(&package).expect("mirror");
        let provider =
            Path::new(env!("CARGO_BIN_EXE_strata")).with_file_name("terraform-provider-stratatest");
        assert!(
            provider.exists(),
            "{} is not built: run the suite as .ci/run does",
            provider.display()
        );
        std::os::unix::fs::symlink(
            &provider,
            package.join("terraform-provider-stratatest_v0.1.0"),
        )
        .expect("link");
        let cli = root.join("cli.tfrc");
        std::fs::write(
            &cli,
            format!(
                "provider_installation {{\n  filesystem_mirror {{\n    path    = {:?}\n    include = [\"registry.strata.test/*/*\"]\n  }}\n}}\n",
                root.join("mirror").display().to_string()
            ),
        )
        .expect("cli config");
        Lab { root, cli }
    }

    /// A working directory with `config` under the provider settings.
    fn dir(&self, name: &str, settings: &str, config: &str) -> PathBuf {
        let dir = self.root.join(name);
        std::fs::create_dir_all(dir.join("store")).expect("dir");
        let text = format!(
            "terraform {{\n  required_providers {{\n    stratatest = {{\n      source  = \"{SOURCE}\"\n      version = \"0.1.0\"\n{settings}    }}\n  }}\n}}\n\nprovider \"stratatest\" {{\n  store = \"./store\"\n}}\n\n{config}"
        );
        std::fs::write(dir.join("main.tf"), text).expect("config");
        dir
    }

    /// strata `args` in `dir`: exit code and all it printed.
    fn run(&self, dir: &Path, args: &[&str]) -> (i32, String) {
        let exe = std::env::current_exe().expect("this test's binary");
        let out = Command::new(exe)
            .current_dir(dir)
            .env(CHILD, args.join("\u{1f}"))
            .env("TF_CLI_CONFIG_FILE", &self.cli)
            .env("NO_COLOR", "1")
            .output()
            .expect("child");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    }

    fn ok(&self, dir: &Path, args: &[&str]) -> String {
        let (code, out) = self.run(dir, args);
        assert_eq!(code, 0, "strata {args:?} in {}:\n{out}", dir.display());
        out
    }
}

/// What the plugin's store holds, and what the native driver made.
fn made(dir: &Path) -> (usize, String) {
    let stored = std::fs::read_dir(dir.join("store"))
        .map(|d| d.count())
        .unwrap_or(0);
    let native = std::fs::read_to_string(dir.join("native.log")).unwrap_or_default();
    (stored, native)
}

fn scenario() {
    let lab = Lab::new();

    // Only what the native driver knows: it serves, nothing is installed.
    let plain = lab.dir(
        "plain",
        "",
        "resource \"stratatest_object\" \"a\" {\n  name = \"a\"\n  size = 1\n}\n",
    );
    let out = lab.ok(&plain, &["init"]);
    assert!(
        out.contains(&format!("- {SOURCE} is built in to strata\n")),
        "{out}"
    );
    let out = lab.ok(&plain, &["apply", "-auto-approve"]);
    assert!(!out.contains("Provider plugins serve"), "{out}");
    assert_eq!(
        made(&plain),
        (0, "a\n".to_string()),
        "the native driver made it"
    );

    // A block sets `labels`, which the native schema lacks: the plugin
    // serves the type, installed by init, and the plan says so.
    let labelled = lab.dir(
        "labelled",
        "",
        "resource \"stratatest_object\" \"a\" {\n  name = \"a\"\n}\n\nresource \"stratatest_object\" \"b\" {\n  name   = \"b\"\n  labels = { team = \"gpu\" }\n}\n",
    );
    let out = lab.ok(&labelled, &["init"]);
    assert!(
        out.contains("is built in to strata; its plugin serves stratatest_object"),
        "{out}"
    );
    assert!(
        labelled.join(".terraform.lock.hcl").exists(),
        "the plugin is locked"
    );
    let out = lab.ok(&labelled, &["plan", "-out=saved.plan"]);
    assert!(
        out.contains(&format!("Provider plugins serve, in place of strata's own drivers:\n  - stratatest_object ({SOURCE})\n")),
        "{out}"
    );
    // The plan JSON says it too, for what reads plans.
    let shown: serde_json::Value =
        serde_json::from_str(&lab.ok(&labelled, &["show", "-json", "saved.plan"])).unwrap();
    assert_eq!(
        shown["plugin_served"],
        serde_json::json!([{"provider": SOURCE, "types": ["stratatest_object"]}]),
        "{shown}"
    );
    lab.ok(&labelled, &["apply", "-auto-approve"]);
    assert_eq!(made(&labelled), (2, String::new()), "the plugin made both");
    let (code, out) = lab.run(&labelled, &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 0, "nothing more to do:\n{out}");

    // Pinned to the plugin: it serves every type, even one the native
    // driver could.
    let pinned = lab.dir(
        "pinned",
        "      strata  = \"plugin\"\n",
        "resource \"stratatest_object\" \"a\" {\n  name = \"a\"\n}\n",
    );
    let out = lab.ok(&pinned, &["init"]);
    assert!(out.contains("its plugin serves every type"), "{out}");
    let out = lab.ok(&pinned, &["apply", "-auto-approve"]);
    assert!(
        out.contains(&format!("  - every type of {SOURCE}\n")),
        "{out}"
    );
    assert_eq!(made(&pinned), (1, String::new()));

    // Pinned to the native driver: what it lacks is an error at its line.
    let native = lab.dir(
        "native",
        "      strata  = \"native\"\n",
        "resource \"stratatest_object\" \"a\" {\n  name   = \"a\"\n  labels = { team = \"gpu\" }\n}\n",
    );
    lab.ok(&native, &["init"]);
    let (code, out) = lab.run(&native, &["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("labels") && out.contains("main.tf:17"),
        "{out}"
    );

    // Anything else is refused where it is written.
    let wrong = lab.dir("wrong", "      strata  = \"both\"\n", "");
    let (code, out) = lab.run(&wrong, &["validate"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Invalid strata setting") && out.contains("main.tf:3"),
        "{out}"
    );

    let _ = std::fs::remove_dir_all(&lab.root);
}

fn main() -> ExitCode {
    if let Ok(args) = std::env::var(CHILD) {
        return child(&args);
    }
    // Only the one scenario: `cargo test` passes filters and flags, which
    // a harness-less test takes no notice of.
    scenario();
    println!("plugin_serving: 1 passed, 0 failed");
    ExitCode::SUCCESS
}
