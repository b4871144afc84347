//! The typed configuration: what a directory of `*.tf` / `*.hcl` files
//! declares, with spans, before anything is evaluated.

pub mod action;
mod blocks;
pub mod check;
pub mod cli_config;
pub mod condition;
mod decode;
pub mod deprecation;
pub mod dynamic;
pub mod encryption;
mod ephemeral;
mod index;
pub mod installed;
pub mod json;
mod overrides;
pub mod provider_each;
pub mod provisioner;
pub mod query;
pub mod repeat;
pub mod source;
pub mod testfile;
mod version;
pub use source::ModuleSource;
pub use version::{
    newest_release, Constraint as VersionConstraint, LANGUAGE as TERRAFORM_LANGUAGE,
};
pub mod digests;
pub mod lockfile;
mod scope;
mod typeexpr;
pub mod variables;

pub use action::{Action, ActionEvent, ActionTrigger, OnFailure as ActionOnFailure};
pub use index::ResourceIndex;
pub use provisioner::{OnFailure, Provisioner, ProvisionerKind, When};
pub use query::{read_query_files, ListBlock};
pub use scope::{ConfigScope, Declared, Known, ProviderFunctions, Run};
pub use typeexpr::{Constraint, Defaults};

use crate::diag::{Diag, Diags, Sources, Span};
use crate::lang::value::Value;
use crate::syntax::{Body, Expr};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use strata_state::model::{ModulePath, ResourceAddr};

#[derive(Debug, Clone)]
pub struct Variable {
    pub name: String,
    pub span: Span,
    pub constraint: Constraint,
    /// Whether a `type` was given: without one, values from the command
    /// line and environment are taken as strings, as Terraform takes them.
    pub typed: bool,
    pub default: Option<Expr>,
    pub description: Option<String>,
    pub sensitive: bool,
    /// `ephemeral = true`: its value may reach providers and other
    /// ephemeral places, never a resource or the state.
    pub ephemeral: bool,
    pub nullable: bool,
    pub validations: Vec<Condition>,
    /// `deprecated = "…"` (Terraform 1.15, OpenTofu 1.10): why, said to
    /// whoever sets the variable.
    pub deprecated: Option<String>,
    /// `const = true` (Terraform 1.15): known while the configuration is
    /// loaded, so module sources and versions may be made of it.
    pub constant: bool,
}

/// A `validation`, `precondition` or `postcondition` block: a condition
/// that must hold, and what to say when it does not.
#[derive(Debug, Clone)]
pub struct Condition {
    pub condition: Expr,
    pub error_message: Expr,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Local {
    pub name: String,
    pub expr: Expr,
    pub span: Span,
}

/// Managed resource or data source: the state's own notion, so a
/// configuration's resources and the state's records name them alike.
pub use strata_state::model::Mode;

#[derive(Debug, Clone, Default)]
pub struct Lifecycle {
    /// `enabled = EXPR` (OpenTofu 1.11): whether the single instance
    /// exists; when false the resource is null.
    pub enabled: Option<Expr>,
    pub create_before_destroy: bool,
    /// `destroy = false`: whatever would destroy an instance forgets it
    /// instead (Terraform 1.16, OpenTofu 1.12); recorded in the state so
    /// that a block removed from the configuration is still forgotten.
    pub skip_destroy: bool,
    pub prevent_destroy: bool,
    /// Attribute paths, or `all`.
    pub ignore_changes: Vec<Expr>,
    pub ignore_all_changes: bool,
    pub replace_triggered_by: Vec<Expr>,
    /// Checked before the instance is planned (data sources: read).
    pub preconditions: Vec<Condition>,
    /// Checked on the planned object, and on the object the apply made
    /// when the plan could not tell; `self` is that object.
    pub postconditions: Vec<Condition>,
    /// `action_trigger` blocks (Terraform 1.14): actions invoked around
    /// the instance's change.
    pub action_triggers: Vec<ActionTrigger>,
}

#[derive(Debug, Clone)]
pub struct ProviderRef {
    pub name: String,
    pub alias: Option<String>,
    /// `aws.by_region[each.key]` (OpenTofu 1.9): which instance of a
    /// configuration with `for_each`, evaluated for each instance of the
    /// block that names it.
    pub key: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Resource {
    pub mode: Mode,
    pub type_name: String,
    pub name: String,
    pub span: Span,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub depends_on: Vec<Expr>,
    pub provider: Option<ProviderRef>,
    pub lifecycle: Lifecycle,
    /// The `check` block a data source is scoped to: read for its
    /// assertions only, its failures warnings.
    pub check: Option<String>,
    /// The resource's own arguments and nested blocks (meta-arguments removed).
    pub body: Body,
    /// Its `provisioner` blocks, in order.
    pub provisioners: Vec<Provisioner>,
    /// Its `connection` block: how its provisioners reach the machine.
    pub connection: Option<Body>,
}

impl Resource {
    /// The local name of the provider it uses: its `provider` argument's,
    /// else its type's prefix (`aws` of `aws_vpc`).
    pub fn provider_local_name(&self) -> &str {
        match &self.provider {
            Some(p) => &p.name,
            None => self.type_name.split('_').next().unwrap_or(&self.type_name),
        }
    }

    /// `aws_vpc.main`, `data.aws_ami.gpu` or `ephemeral.aws_eks_cluster_auth.x`.
    pub fn address(&self) -> String {
        format!("{}{}.{}", self.mode.prefix(), self.type_name, self.name)
    }

    /// Its address as a resource of the configuration's module `module`.
    pub fn addr_in(&self, module: &ModulePath) -> ResourceAddr {
        ResourceAddr {
            module: module.clone(),
            mode: self.mode,
            type_name: self.type_name.clone(),
            name: self.name.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Output {
    pub name: String,
    pub expr: Expr,
    pub span: Span,
    /// `output "NAME"`: where Terraform points at the output as a whole.
    pub decl: Span,
    pub description: Option<String>,
    pub sensitive: bool,
    /// `ephemeral = true`: a child module's output that may carry an
    /// ephemeral value to its caller.
    pub ephemeral: bool,
    pub depends_on: Vec<Expr>,
    pub preconditions: Vec<Condition>,
    /// `deprecated = "…"`: why, said to the callers that use the output.
    pub deprecated: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ModuleCall {
    pub name: String,
    pub span: Span,
    pub source: String,
    pub source_span: Span,
    /// A `source` written as an expression (Terraform 1.15), evaluated
    /// into `source` while the configuration loads (`dynamic`).
    pub source_expr: Option<Expr>,
    /// `version = "~> 5.0"`: which versions of a registry module will do.
    pub version: Option<ModuleVersion>,
    /// A `version` written as an expression, evaluated as `source_expr` is.
    pub version_expr: Option<Expr>,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub depends_on: Vec<Expr>,
    /// Input values, by the child's variable names.
    pub inputs: Vec<crate::syntax::Attribute>,
    /// `providers = { kubernetes = kubernetes.east }`: the child's
    /// provider configuration (left) is the caller's (right).
    pub providers: Vec<(ProviderRef, ProviderRef)>,
    /// The loaded child module.
    pub module: Box<Module>,
    /// `ignore_nested_deprecations = true`: what the child itself uses of
    /// deprecated variables and outputs is not said.
    pub ignore_nested_deprecations: bool,
    /// `lifecycle { enabled = EXPR }` (OpenTofu 1.11): whether the single
    /// instance exists; when false `module.NAME` is null.
    pub enabled: Option<Expr>,
}

/// A module call's `version` argument, as written.
#[derive(Debug, Clone)]
pub struct ModuleVersion {
    pub constraint: String,
    pub span: Span,
}

/// `check "name" { data … {}  assert { condition, error_message } }`:
/// assertions about the infrastructure, reported as warnings after a plan
/// and after an apply (its data sources are in `Module::resources`).
#[derive(Debug, Clone)]
pub struct Check {
    pub name: String,
    pub span: Span,
    pub asserts: Vec<Assert>,
}

#[derive(Debug, Clone)]
pub struct Assert {
    pub condition: Expr,
    pub error_message: Expr,
}

#[derive(Debug, Clone)]
pub struct Provider {
    pub name: String,
    pub alias: Option<String>,
    /// `for_each` (OpenTofu 1.9): one instance of the configuration per
    /// element, `each.key` and `each.value` set in its body; only beside
    /// an `alias`, and known before the plan (variables and locals).
    pub for_each: Option<Expr>,
    pub span: Span,
    pub body: Body,
}

/// `import { to = ADDR  id = "…" }`: adopt an existing object; with
/// `for_each`, one per element (`each.key` and `each.value` in `to`'s
/// keys and in `id`). In a child module (Terraform 1.16) `to` is inside
/// it, once per instance of the module.
#[derive(Debug, Clone)]
pub struct Import {
    pub to: Expr,
    /// What the object is found by.
    pub by: ImportExpr,
    pub for_each: Option<Expr>,
    /// Only where the plan writes the target's configuration.
    pub provider: Option<ProviderRef>,
    pub span: Span,
}

/// How an `import` block names its object: the provider's import id, or
/// (Terraform 1.12) an identity object of the type's identity schema.
#[derive(Debug, Clone)]
pub enum ImportExpr {
    Id(Expr),
    Identity(Expr),
}

impl ImportExpr {
    pub fn expr(&self) -> &Expr {
        match self {
            ImportExpr::Id(e) | ImportExpr::Identity(e) => e,
        }
    }
}

impl Import {
    /// Whether `to` names `r`, a resource of the block's own module (keys
    /// aside).
    pub fn names(&self, r: &Resource) -> bool {
        let (names, _) = self.to.address_names().unwrap_or_default();
        r.mode == Mode::Managed && names == [r.type_name.as_str(), r.name.as_str()]
    }
}

/// `removed { from = ADDR  lifecycle { destroy = false } }`: stop managing
/// an object, deleting it only when `destroy` is true (the default).
#[derive(Debug, Clone)]
pub struct Removed {
    pub from: Expr,
    pub destroy: bool,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Moved {
    pub from: Expr,
    pub to: Expr,
    pub span: Span,
}

/// A `backend "TYPE" { … }` block: where the state is kept. Its settings
/// are constants (Terraform refuses variables there too), evaluated when
/// the configuration is loaded.
#[derive(Debug, Clone)]
pub struct Backend {
    pub kind: String,
    pub span: Span,
    /// Setting name → value and where it was written.
    pub settings: BTreeMap<String, (Value, Span)>,
}

/// The `terraform` / `strata` settings block.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Every `required_version` constraint, where it was written.
    pub required_versions: Vec<(String, Span)>,
    /// The local names `required_providers` declares.
    pub required_providers: Vec<String>,
    /// Each `required_providers` entry's source address as written
    /// (`hashicorp/aws`), where one is given: what `init` checks against
    /// the built-in drivers.
    pub provider_sources: Vec<ProviderSource>,
    /// `required_providers` entries made of const variables (Terraform
    /// 1.15), until loading evaluates them into `provider_sources`.
    pub pending_providers: Vec<crate::syntax::Attribute>,
    pub backend: Option<Backend>,
    /// `encryption { … }` as written (OpenTofu 1.7+).
    pub encryption: Option<encryption::Encryption>,
    /// The root module's encryption evaluated while loading: the chains
    /// its state and saved plans are sealed and opened with.
    pub sealings: encryption::Sealings,
    pub blocks: Vec<Span>,
}

/// A `required_providers` entry's `source`.
#[derive(Debug, Clone)]
pub struct ProviderSource {
    pub name: String,
    pub source: String,
    /// The version constraint, as written.
    pub version: Option<String>,
    /// `strata = "plugin"` or `"native"`: which serves the provider's
    /// types when strata has a driver of its own for it.
    pub serve: Option<Serve>,
    pub span: Span,
}

/// Who serves a provider that strata has a native driver for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serve {
    /// The provider's Terraform plugin, for every type.
    Plugin,
    /// strata's driver; a type it cannot serve as configured is an error
    /// rather than the plugin's.
    Native,
}

/// One module: the root configuration or a child loaded from `source`.
#[derive(Debug, Clone, Default)]
pub struct Module {
    pub dir: PathBuf,
    pub settings: Settings,
    pub variables: Vec<Variable>,
    pub locals: Vec<Local>,
    pub resources: Vec<Resource>,
    pub outputs: Vec<Output>,
    pub module_calls: Vec<ModuleCall>,
    pub providers: Vec<Provider>,
    pub moved: Vec<Moved>,
    pub imports: Vec<Import>,
    pub removed: Vec<Removed>,
    pub checks: Vec<Check>,
    /// `action` blocks (Terraform 1.14).
    pub actions: Vec<Action>,
    /// `cluster` blocks, as written: the cluster stage expands them into
    /// module calls and provider configurations before the graph is built.
    pub clusters: Vec<crate::syntax::Block>,
}

impl Module {
    /// The source `required_providers` gives the local name `name`.
    pub fn declared_source(&self, name: &str) -> Option<String> {
        let declared = self
            .settings
            .provider_sources
            .iter()
            .find(|p| p.name == name)?;
        Some(strata_state::provider_source(&declared.source))
    }

    /// The provider the local name `name` stands for here: as declared,
    /// else Terraform's implied `registry.terraform.io/hashicorp/NAME`.
    pub fn provider_source(&self, name: &str) -> String {
        self.declared_source(name)
            .unwrap_or_else(|| format!("registry.terraform.io/hashicorp/{name}"))
    }

    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }
    pub fn local(&self, name: &str) -> Option<&Local> {
        self.locals.iter().find(|l| l.name == name)
    }

    /// The module at `path` (its keys not looked at: every instance of a
    /// module has the same blocks).
    pub fn module_at(&self, path: &ModulePath) -> Option<&Module> {
        let mut m = self;
        for step in path.steps() {
            m = &m.module_calls.iter().find(|c| c.name == step.call)?.module;
        }
        Some(m)
    }

    /// The resource block at an address (its module keys, if any, are
    /// not looked at: every instance of a module has the same blocks).
    pub fn resource_at(&self, addr: &ResourceAddr) -> Option<&Resource> {
        self.module_at(&addr.module)?
            .resources
            .iter()
            .find(|r| r.mode == addr.mode && r.type_name == addr.type_name && r.name == addr.name)
    }
}

/// The workspace this run works in: `STRATA_WORKSPACE`, as Terraform's
/// `TF_WORKSPACE`, else the one `workspace select` recorded
/// ([`selected_workspace_file`]), else "default". It picks the state
/// within a backend and is `terraform.workspace` in expressions ([`Run`]).
/// Read once, by the command (`cli/`), and passed to what needs it.
pub fn workspace() -> Result<String, Diags> {
    let (from, name) = match workspace_override() {
        Some(set) => set,
        None => match std::fs::read_to_string(selected_workspace_file()) {
            Ok(text) if !text.trim().is_empty() => {
                let file = selected_workspace_file().display().to_string();
                (file, text.trim().to_string())
            }
            _ => return Ok("default".into()),
        },
    };
    if !valid_workspace_name(&name) {
        return Err(Diags::from(Diag::new(
            "strata::workspace",
            "Invalid workspace name",
            format!(
                "{from}: {name:?}: a workspace name is letters, digits, '-' and '_' (at most 90)."
            ),
        )));
    }
    Ok(name)
}

/// The environment variable that sets the workspace, and its value, when
/// one does (`workspace select` may not change it then).
pub fn workspace_override() -> Option<(String, String)> {
    // Terraform's `TF_WORKSPACE` too; strata's own name wins.
    ["STRATA_WORKSPACE", "TF_WORKSPACE"].iter().find_map(|v| {
        std::env::var(v)
            .ok()
            .filter(|n| !n.is_empty())
            .map(|n| (v.to_string(), n))
    })
}

/// Letters, digits, '-' and '_', at most 90: what fits a file name, an
/// object key and a row alike.
pub fn valid_workspace_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 90
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Where `workspace select` records the workspace chosen, as Terraform
/// does: `environment` in the data directory (`.terraform`, or
/// `TF_DATA_DIR`). Nothing a user commits.
pub fn selected_workspace_file() -> PathBuf {
    let dir = std::env::var("TF_DATA_DIR")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| ".terraform".into());
    Path::new(&dir).join("environment")
}

/// Whether a file of this name is configuration: `*.tf`, `*.tf.json`
/// (Terraform's JSON syntax) or strata's `*.hcl`, not hidden — and not
/// one of Terraform's other files that end so (test files, mock data,
/// query files), which only `test` and `query` read.
pub fn is_config_file(name: &str) -> bool {
    !name.starts_with('.')
        && [".tf", ".tf.json", ".hcl"]
            .iter()
            .any(|s| name.ends_with(s))
        && ![".tftest.hcl", ".tfmock.hcl", ".tfquery.hcl"]
            .iter()
            .any(|s| name.ends_with(s))
}

/// The name without its configuration suffix: `main` for `main.tf.json`.
fn config_stem(name: &str) -> &str {
    let base = Path::new(name)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(name);
    [".tf.json", ".tf", ".hcl"]
        .iter()
        .find_map(|s| base.strip_suffix(s))
        .unwrap_or(base)
}

/// The configuration files of `path`: the file itself, or every
/// configuration file directly inside the directory, in name order.
pub fn config_files(path: &Path) -> Result<Vec<PathBuf>, Diag> {
    let meta = std::fs::metadata(path).map_err(|e| {
        Diag::new(
            "strata::config::path",
            "Cannot read configuration",
            format!("{}: {e}", path.display()),
        )
    })?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| {
            Diag::new(
                "strata::config::path",
                "Cannot read configuration directory",
                format!("{}: {e}", path.display()),
            )
        })?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(is_config_file)
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Loads the module at `path` (a file or a directory) and, recursively, the
/// modules it calls. All problems found are reported together. Module
/// sources made of const variables take them from the environment and
/// their defaults ([`load_given`] for a command's `-var`s).
pub fn load(path: &Path, sources: &mut Sources) -> Result<Module, Diags> {
    load_given(path, sources, &dynamic::Given::with_environment(Vec::new()))
}

/// [`load`], const variables given what a command was given.
pub fn load_given(
    path: &Path,
    sources: &mut Sources,
    given: &dynamic::Given,
) -> Result<Module, Diags> {
    let root = match path.is_file() {
        true => path.parent().map(Path::to_path_buf).unwrap_or_default(),
        false => path.to_path_buf(),
    };
    // What init left in .terraform, unreadable: an error saying to run it again.
    let damaged = |what: &str| {
        let summary = format!("Cannot read the {what} init kept");
        move |why: String| Diags::from(Diag::new("strata::config::init_files", summary, why))
    };
    let manifest = installed::Manifest::read(&root).map_err(damaged("module manifest"))?;
    let at = Site {
        depth: 0,
        key: String::new(),
        root: &root,
        manifest: &manifest,
    };
    let mut module = load_as_root(path, &at, sources, given)?;
    let saved = installed::SavedBackend::read(&root).map_err(damaged("backend settings"))?;
    if let Some(saved) = saved {
        with_saved_backend(&mut module, &saved)?;
    }
    Ok(module)
}

/// The module in `path` as a root module (its own const variables, its
/// encryption), the modules it calls found from `at`.
fn load_as_root(
    path: &Path,
    at: &Site<'_>,
    sources: &mut Sources,
    given: &dynamic::Given,
) -> Result<Module, Diags> {
    let mut diags = Diags::default();
    let mut module = read_module(path, sources, &mut diags)?;
    let consts = match dynamic::root_consts(&module, given, sources) {
        Ok(c) => c,
        Err(d) => {
            diags.0.extend(d.0);
            return Err(diags);
        }
    };
    load_calls(&mut module, sources, (at, &consts), &mut diags);
    match encryption::resolve(&module, given, sources) {
        Ok(sealings) => module.settings.sealings = sealings,
        Err(d) => diags.0.extend(d.0),
    }
    diags.into_result(module)
}

/// Where `init` installed what a test run's `module` calls: in the
/// manifest of the configuration at `root`, under `key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledUnder {
    pub root: PathBuf,
    pub key: String,
}

/// A test run's `module` (in `path`), which the run plans as its root:
/// the modules it calls are where `init` of the configuration at `root`
/// installed them, under the run's key (`test.tests.main.setup`, as
/// Terraform keys them).
pub fn load_for_test(
    path: &Path,
    under: &InstalledUnder,
    sources: &mut Sources,
    given: &dynamic::Given,
) -> Result<Module, Diags> {
    let (root, key) = (under.root.as_path(), under.key.as_str());
    let manifest = installed::Manifest::read(root).map_err(|why| {
        Diags::from(Diag::new(
            "strata::config::init_files",
            "Cannot read the module manifest init kept",
            why,
        ))
    })?;
    let at = Site {
        depth: 0,
        key: key.to_string(),
        root,
        manifest: &manifest,
    };
    load_as_root(path, &at, sources, given)
}

/// The root module's backend block with what `init -backend-config` gave
/// laid over it, when it is still that type of backend.
pub fn with_saved_backend(
    module: &mut Module,
    saved: &installed::SavedBackend,
) -> Result<(), Diags> {
    let Some(b) = module
        .settings
        .backend
        .as_mut()
        .filter(|b| b.kind == saved.kind)
    else {
        return Ok(());
    };
    for (k, v) in &saved.settings {
        let value = crate::funcs::json_value(v).map_err(|e| {
            Diags::from(Diag::new(
                "strata::config::backend_saved",
                format!("Invalid backend setting {k:?} kept by init"),
                e,
            ))
        })?;
        b.settings.insert(k.clone(), (value, b.span));
    }
    Ok(())
}

/// Where a module being loaded sits: how deep, its key in the module
/// manifest (`net.subnets`), and the root's manifest, which says where
/// remote sources were installed.
pub struct Site<'m> {
    pub depth: usize,
    pub key: String,
    pub root: &'m Path,
    pub manifest: &'m installed::Manifest,
}

impl Site<'_> {
    /// The site of the call `name` inside this module.
    fn child(&self, name: &str) -> Site<'_> {
        Site {
            depth: self.depth + 1,
            key: match self.key.is_empty() {
                true => name.to_string(),
                false => format!("{}.{name}", self.key),
            },
            root: self.root,
            manifest: self.manifest,
        }
    }
}

/// The body of a resource block whose inside is `text`, for tests of
/// what reads bodies (the engine's too, through the `testing` feature its
/// tests turn on).
#[cfg(any(test, feature = "testing"))]
#[allow(clippy::panic)]
pub fn resource_body(text: &str) -> crate::syntax::Body {
    let mut sources = Sources::default();
    let wrapped = format!("resource \"x\" \"y\" {{\n{text}\n}}\n");
    match load_text("t.tf", &wrapped, &mut sources) {
        Ok(m) if !m.resources.is_empty() => m.resources[0].body.clone(),
        other => panic!("{text:?} is not a resource body: {other:?}"),
    }
}

/// Decodes one file's text as a module (JSON when `name` ends in `.json`),
/// without loading the modules it calls: for tools and fuzzing that have
/// text but no directory.
pub fn load_text(name: &str, text: &str, sources: &mut Sources) -> Result<Module, Diags> {
    let id = sources.add(name, text.to_string());
    let body = if name.ends_with(".json") {
        crate::syntax::json::parse_body(id, text)
    } else {
        crate::syntax::parse_body(id, text)
    }
    .map_err(Diags::from)?;
    let mut module = Module {
        dir: PathBuf::from("."),
        ..Module::default()
    };
    let mut diags = Diags::default();
    decode::module_body(body, &mut module, &mut diags);
    decode::check_duplicates(&module, &mut diags);
    diags.into_result(module)
}

/// strata's own modules (`modules/` in this repository), built into the
/// binary so a cluster spec plans without a checkout. They load like any
/// local module, from paths under [`EMBEDDED`].
static MODULES: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../modules");

/// The directory the embedded modules appear under: `strata:modules/aws`.
pub const EMBEDDED: &str = "strata:modules";

/// `path` with `.` and `..` resolved lexically (embedded paths have no
/// file system to ask).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if matches!(
                    out.components().next_back(),
                    Some(std::path::Component::Normal(_))
                ) {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The embedded directory `path` names, if it names one.
fn embedded(path: &Path) -> Option<&'static include_dir::Dir<'static>> {
    let rel = normalize(path);
    let rel = rel.strip_prefix(EMBEDDED).ok()?;
    if rel.as_os_str().is_empty() {
        return Some(&MODULES);
    }
    MODULES.get_dir(rel)
}

/// Whether `path` is a module directory, on disk or embedded.
fn module_dir_exists(path: &Path) -> bool {
    embedded(path).is_some() || path.is_dir()
}

/// The configuration files of a module directory (or one file) as
/// `(name, text)`, in name order.
fn module_files(
    path: &Path,
    sources: &mut Sources,
    diags: &mut Diags,
) -> Result<Vec<(String, String)>, Diags> {
    if let Some(dir) = embedded(path) {
        let mut files: Vec<(String, String)> = dir
            .files()
            .filter(|f| {
                matches!(
                    f.path().extension().and_then(|e| e.to_str()),
                    Some("tf" | "hcl")
                )
            })
            .map(|f| {
                (
                    Path::new(EMBEDDED).join(f.path()).display().to_string(),
                    f.contents_utf8().unwrap_or_default().to_string(),
                )
            })
            .collect();
        files.sort();
        return Ok(files);
    }
    let mut out = Vec::new();
    for f in config_files(path).map_err(Diags::from)? {
        match std::fs::read(&f).map(String::from_utf8) {
            Ok(Ok(t)) => out.push((f.display().to_string(), t)),
            Ok(Err(e)) => diags.push(not_utf8(&f.display().to_string(), e, sources)),
            Err(e) => diags.push(Diag::new(
                "strata::config::read",
                "Cannot read file",
                format!("{}: {e}", f.display()),
            )),
        }
    }
    Ok(out)
}

/// A file that is not UTF-8 (configuration, variables), pointed at its
/// first bad byte (quoted as the replacement character), in Terraform's
/// words.
pub(crate) fn not_utf8(name: &str, e: std::string::FromUtf8Error, sources: &mut Sources) -> Diag {
    let at = e.utf8_error().valid_up_to();
    let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
    let id = sources.add(name, text);
    Diag::new(
        "strata::config::encoding",
        "Invalid character encoding",
        "All input files must be UTF-8 encoded. Ensure that UTF-8 encoding is selected in your editor.",
    )
    .at(Span::new(id, at, at + '\u{fffd}'.len_utf8()))
}

/// Loads the module a call names (relative to `dir`, the caller's
/// directory) into the call, or reports why it cannot.
pub fn load_call(
    (caller_module, consts): (&Module, &dynamic::Consts),
    call: &mut ModuleCall,
    sources: &mut Sources,
    caller: &Site<'_>,
    diags: &mut Diags,
) {
    let dir = caller_module.dir.as_path();
    let at = caller.child(&call.name);
    if at.depth > 33 {
        diags.push(
            Diag::new(
                "strata::config::module",
                "Module nesting too deep",
                "Modules call each other more than 32 levels deep; is there a cycle of module sources?",
            )
            .at(call.source_span),
        );
        return;
    }
    let Some(child_dir) = call_dir(dir, call, &at, diags) else {
        return;
    };
    let child_dir = if child_dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        child_dir
    };
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => normalize(a) == normalize(b),
    };
    if same(&child_dir, dir) {
        diags.push(
            Diag::new(
                "strata::config::module_cycle",
                "Module calls itself",
                format!(
                    "Module {:?} has source {:?}, the directory of the module that calls it, so it would call itself without end. A module's source is another directory.",
                    call.name, call.source
                ),
            )
            .at(call.source_span),
        );
        return;
    }
    if !module_dir_exists(&child_dir) {
        diags.push(
            Diag::new(
                "strata::config::module_not_found",
                "Module not found",
                format!(
                    "The module directory {} does not exist.",
                    child_dir.display()
                ),
            )
            .at(call.source_span),
        );
        return;
    }
    let mut found = Diags::default();
    let Ok(mut m) = read_module(&child_dir, sources, &mut found) else {
        diags.0.extend(found.0);
        return;
    };
    let child_consts = dynamic::child_consts(caller_module, consts, call, &m);
    load_calls(&mut m, sources, (&at, &child_consts), &mut found);
    diags.0.extend(found.0);
    decode::check_module_inputs(call, &m, diags);
    *call.module = m;
}

/// Loads the modules `m` calls (their dynamic sources evaluated first
/// with `consts`, `m`'s const variables).
fn load_calls(
    m: &mut Module,
    sources: &mut Sources,
    (at, consts): (&Site<'_>, &dynamic::Consts),
    diags: &mut Diags,
) {
    dynamic::resolve_calls(m, consts, diags);
    // Loaded now so that references into them can be checked; taken out
    // while they load, so what the calls are given can be evaluated in `m`.
    let mut calls = std::mem::take(&mut m.module_calls);
    for call in &mut calls {
        if call.source.is_empty() && call.source_expr.is_some() {
            continue;
        }
        load_call((m, consts), call, sources, at, diags);
    }
    m.module_calls = calls;
}

/// The directory a call's module is in: a local path beside the caller,
/// strata's own, or where init installed it (when it is still the version
/// the call asks for).
fn call_dir(dir: &Path, call: &ModuleCall, at: &Site<'_>, diags: &mut Diags) -> Option<PathBuf> {
    let fail = |summary: &str, detail: String, diags: &mut Diags| {
        diags
            .push(Diag::new("strata::config::module_source", summary, detail).at(call.source_span));
        None
    };
    let source = match ModuleSource::parse(&call.source, call.version.is_some()) {
        Ok(s) => s,
        Err((summary, detail)) => return fail(summary, detail, diags),
    };
    let (registry, remote) = match &source {
        ModuleSource::Embedded(p) => return Some(normalize(Path::new(p))),
        ModuleSource::Local(p) => return Some(normalize(&dir.join(p))),
        ModuleSource::Registry(r) => (Some(r), source.to_string()),
        ModuleSource::Remote(_) => (None, source.to_string()),
    };
    let constraint = call.version.as_ref().filter(|_| registry.is_some());
    let installed = at.manifest.installed(
        at.root,
        (&at.key, &remote),
        constraint.map(|v| v.constraint.as_str()),
    );
    match installed {
        Ok(dir) => Some(dir),
        Err(installed::NotInstalled::Missing) => fail("Module not installed", format!("Module {:?} comes from {remote:?}, which is not installed. Run \"strata init\" to install all modules required by this configuration.", at.key), diags),
        Err(installed::NotInstalled::BadConstraint(why)) => {
            diags.push(
                Diag::new(
                    "strata::config::module_version",
                    "Invalid version constraint",
                    why,
                )
                .at(constraint.map_or(call.source_span, |v| v.span)),
            );
            None
        }
        Err(installed::NotInstalled::Outdated(detail)) => {
            fail("Module version requirements have changed", detail, diags)
        }
    }
}

/// One module's own configuration, the modules it calls not loaded: what
/// init reads to learn which modules to install.
pub fn load_shallow(path: &Path, sources: &mut Sources) -> Result<Module, Diags> {
    let mut diags = Diags::default();
    let module = read_module(path, sources, &mut diags)?;
    diags.into_result(module)
}

/// The module in `path` (a directory, or one file), its calls not loaded;
/// what is wrong in it goes to `diags`.
fn read_module(path: &Path, sources: &mut Sources, diags: &mut Diags) -> Result<Module, Diags> {
    let files = module_files(path, sources, diags)?;
    let dir = if path.is_file() {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        path.to_path_buf()
    };
    let mut bodies = Vec::new();
    let mut overrides = Vec::new();
    let files: Vec<_> = files
        .into_iter()
        .map(|(name, text)| {
            let stem = config_stem(&name);
            let is_override = stem == "override" || stem.ends_with("_override");
            let json = name.ends_with(".json");
            (sources.add(name, text), is_override, json)
        })
        .collect();
    let sources_now: &Sources = sources;
    let parsed = crate::par::map(&files, |&(id, _, json)| {
        if json {
            crate::syntax::json::parse_body(id, sources_now.text(id))
        } else {
            crate::syntax::parse_body(id, sources_now.text(id))
        }
    });
    for (parsed, &(_, is_override, _)) in parsed.into_iter().zip(&files) {
        match parsed {
            Ok(b) if is_override => overrides.push(b),
            Ok(b) => bodies.push(b),
            Err(d) => diags.push(d),
        }
    }
    // Override files (override.tf, *_override.tf) merge into the blocks
    // they name, after every other file, as in Terraform.
    for o in overrides {
        overrides::apply(&mut bodies, o, diags);
    }
    let mut module = Module {
        dir: dir.clone(),
        ..Module::default()
    };
    for body in bodies {
        decode::module_body(body, &mut module, diags);
    }
    decode::check_duplicates(&module, diags);
    for (constraint, span) in &module.settings.required_versions {
        if let Err(d) = version::check(constraint, *span) {
            diags.push(d);
        }
    }
    Ok(module)
}
