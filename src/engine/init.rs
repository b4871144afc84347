//! `strata init`, where CI scripts call `terraform init`: the backend
//! reached, the modules installed (registry, git and archive sources
//! fetched into `.terraform/modules`, local ones recorded, all in
//! Terraform's module manifest), and every provider the configuration
//! needs either built in or installed as a plugin with the lock file.
//! Nothing is written that a user commits.

use super::view::{Notice, View};
use crate::builtin::Drivers;
use crate::config::installed::SavedBackend;
use crate::config::{self, Module};
use crate::diag::{Diag, Diags, Sources, Span};
use crate::install::providers::Wanted;
use std::collections::BTreeMap;
use std::path::Path;

/// What `init` was asked.
pub struct Init<'a> {
    pub path: &'a Path,
    /// `-backend=false`: leave the backend alone.
    pub backend: bool,
    /// `-get=false`: leave the modules as they are.
    pub get: bool,
    /// `-upgrade`: every remote module fetched again, at its newest
    /// allowed version.
    pub upgrade: bool,
    /// `-reconfigure`: the backend settings an earlier init kept forgotten,
    /// and a changed backend set up without moving any state.
    pub reconfigure: bool,
    /// `-migrate-state`: the state moved from the backend init set up
    /// before to the one the configuration names now.
    pub migrate_state: bool,
    /// `-force-copy`: that move made without asking (implies
    /// `-migrate-state`).
    pub force_copy: bool,
    /// `-backend-config`: `key=value`, or a file of settings.
    pub backend_config: &'a [String],
    /// `-from-module=SOURCE`: a module copied into the (empty) directory
    /// first.
    pub from_module: Option<&'a str>,
    /// `--var` and `--var-file`: what const variables are given (module
    /// sources made of them).
    pub inputs: Vec<config::variables::CliInput>,
    /// `-test-directory`: where the test files are whose runs' modules
    /// are installed too.
    pub test_directory: &'a Path,
}

/// How `get` installs.
pub struct Getting<'a> {
    /// `-update`: every remote module fetched again.
    pub update: bool,
    /// `-test-directory`.
    pub tests: &'a Path,
}

/// Runs `init`; what it prints on success.
pub fn init(
    req: Init<'_>,
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<String, Diags> {
    let copied = match req.from_module {
        Some(source) => crate::install::from_module(req.path, source, sources)?,
        None => String::new(),
    };
    // The root module alone first: the modules it calls may not be
    // installed yet.
    let given = config::dynamic::Given::with_environment(req.inputs.clone());
    let root = config::load_shallow(req.path, sources)?;
    if !req.backend_config.is_empty() || req.reconfigure {
        keep_backend_settings(&req, &root, sources)?;
    }
    let installed = match req.get {
        true => Some(install(
            req.path,
            (root.clone(), &given),
            (req.upgrade, req.test_directory),
            sources,
        )?),
        false => None,
    };
    let module = config::load_given(req.path, sources, &given)?;
    let mut out = copied + "Initializing the backend...\n";
    if req.backend {
        // Said before the backend step's question or error, as Terraform
        // says it.
        view.notice(Notice::Steps(std::mem::take(&mut out)));
        let asked = super::migrate::Asked {
            path: req.path,
            reconfigure: req.reconfigure,
            migrate_state: req.migrate_state,
            force_copy: req.force_copy,
        };
        out = super::migrate::backend(&asked, &module, view)?;
    }
    // Said only when there are modules (the root's, or its test runs'),
    // as Terraform says it.
    if let Some(installed) = installed.filter(|i| i.any) {
        out.push_str(match req.upgrade {
            true => "Upgrading modules...\n",
            false => "Initializing modules...\n",
        });
        out.push_str(&installed.said);
    }
    out.push_str("Initializing provider plugins...\n");
    // The modules test runs plan need their providers too, as in
    // Terraform's init.
    let runs = match req.path.is_dir() {
        true => super::test::run_module_configs(req.path, req.test_directory, sources),
        false => Vec::new(),
    };
    let roots: Vec<&Module> = std::iter::once(&module).chain(&runs).collect();
    if let Err(d) = providers(&roots, (req.path, req.upgrade), drivers, sources, &mut out) {
        // What was done comes before what stopped it, as Terraform says it.
        view.notice(Notice::Steps(out));
        return Err(d);
    }
    out.push_str("\nstrata has been successfully initialized!\n");
    // As Terraform: a script (TF_IN_AUTOMATION set) is not told what to
    // type next.
    if !crate::ui::in_automation() {
        out.push_str(NEXT);
    }
    Ok(out)
}

/// `get`: the modules installed, nothing else; what it did.
pub fn get(
    path: &Path,
    how: Getting<'_>,
    inputs: &[config::variables::CliInput],
    sources: &mut Sources,
) -> Result<String, Diags> {
    let root = config::load_shallow(path, sources)?;
    let given = config::dynamic::Given::with_environment(inputs.to_vec());
    install(path, (root, &given), (how.update, how.tests), sources).map(|i| i.said)
}

/// What installing did: what it says, and whether there was any module
/// call (the root's or a test run's) to install.
struct Installed {
    said: String,
    any: bool,
}

/// Installs what `root` calls, its module sources made of const
/// variables evaluated with what `given` gives them.
fn install(
    path: &Path,
    (mut root, given): (Module, &config::dynamic::Given),
    (upgrade, test_directory): (bool, &Path),
    sources: &mut Sources,
) -> Result<Installed, Diags> {
    let consts = config::dynamic::root_consts(&root, given, sources)?;
    let mut diags = Diags::default();
    config::dynamic::resolve_calls(&mut root, &consts, &mut diags);
    if !diags.is_empty() {
        return Err(diags);
    }
    // A directory (not a file) is a configuration with test files.
    let tests = match path.is_dir() {
        true => super::test::run_modules(path, test_directory, sources)?,
        false => Vec::new(),
    };
    let options = crate::install::Options { upgrade };
    let said = crate::install::modules(path, (&root, &consts), &tests, &options, sources)?;
    Ok(Installed {
        said,
        any: !root.module_calls.is_empty() || !tests.is_empty(),
    })
}

const NEXT: &str = "
You may now begin working with strata. Try running \"strata plan\" to see
any changes that are required for your infrastructure. All strata commands
should now work.

If you ever set or change modules or backend configuration for strata,
rerun this command to reinitialize your working directory. If you forget, other
commands will detect it and remind you to do so if necessary.
";

/// `-backend-config`'s settings laid over the backend block and kept for
/// the commands that follow (with what an earlier init kept, unless
/// `-reconfigure`).
fn keep_backend_settings(
    req: &Init<'_>,
    root: &Module,
    sources: &mut Sources,
) -> Result<(), Diags> {
    let refused = |summary: &str, detail: String| {
        Diags::from(Diag::new("strata::init::backend_config", summary, detail))
    };
    let Some(kind) = root.settings.backend.as_ref().map(|b| b.kind.clone()) else {
        if req.backend_config.is_empty() {
            return Ok(());
        }
        return Err(refused("Missing backend configuration", "-backend-config was given, but the configuration has no backend block to give the settings to. Add one, e.g. terraform { backend \"s3\" {} }.".into()));
    };
    let earlier = match req.reconfigure {
        true => None,
        false => SavedBackend::read(req.path)
            .map_err(|why| refused("Cannot read the backend settings init kept", why))?,
    };
    let mut saved = earlier.filter(|s| s.kind == kind).unwrap_or(SavedBackend {
        kind,
        settings: Default::default(),
    });
    for item in req.backend_config {
        let path = Path::new(item);
        if path.is_file() {
            saved
                .settings
                .extend(config::installed::settings_file(path, sources)?);
            continue;
        }
        let Some((key, value)) = item.split_once('=') else {
            return Err(refused(
                "Invalid backend configuration argument",
                format!("{item:?} is neither a file nor key=value."),
            ));
        };
        // A literal as Terraform reads one: a boolean or a number, else text.
        let value = match value {
            "true" => serde_json::Value::Bool(true),
            "false" => serde_json::Value::Bool(false),
            v => v
                .parse::<serde_json::Number>()
                .map(serde_json::Value::Number)
                .unwrap_or_else(|_| serde_json::Value::String(v.to_string())),
        };
        saved.settings.insert(key.trim().to_string(), value);
    }
    saved
        .write(req.path)
        .map_err(|e| refused("Cannot keep the backend settings", e.to_string()))
}

/// The providers the configuration needs: each served by a driver built
/// in, or installed as a plugin (`install::providers`); what is done is
/// said in `said` as it goes.
fn providers(
    roots: &[&Module],
    (root_dir, upgrade): (&Path, bool),
    drivers: &Drivers,
    sources: &mut Sources,
    said: &mut String,
) -> Result<(), Diags> {
    let built_in: Vec<String> = drivers
        .all()
        .map(|d| crate::builtin::source_of(d.as_ref()))
        .collect();
    let mut wanted: BTreeMap<String, Wanted> = BTreeMap::new();
    for root in roots {
        needed(root, drivers, &mut wanted);
    }
    let serving = super::serving::Serving::decide(roots, drivers);
    let mut plugins = Vec::new();
    let mut served = Vec::new();
    for (source, w) in wanted {
        if !built_in.contains(&source) {
            plugins.push(w);
            continue;
        }
        if !serving.needs(&source) {
            let shown = crate::install::providers::shown(&source);
            said.push_str(&format!("- {shown} is built in to strata\n"));
            served.push(source);
            continue;
        }
        let what = match serving.types_of(&source) {
            None => "every type".to_string(),
            Some(types) => types.join(", "),
        };
        let shown = crate::install::providers::shown(&source);
        said.push_str(&format!(
            "- {shown} is built in to strata; its plugin serves {what}\n"
        ));
        plugins.push(w);
    }
    crate::install::providers::install(root_dir, &plugins, &served, upgrade, sources, said)
}

/// What `m` and the modules it calls need (see [`module_needs`]), with
/// every version constraint written for each.
pub(super) fn needed(m: &Module, drivers: &Drivers, wanted: &mut BTreeMap<String, Wanted>) {
    for need in module_needs(m, drivers) {
        let w = wanted.entry(need.source.clone()).or_insert(Wanted {
            source: need.source,
            constraints: Vec::new(),
            span: Some(need.span),
        });
        w.constraints.extend(need.version);
    }
    for c in &m.module_calls {
        needed(&c.module, drivers, wanted);
    }
}

/// A provider one module needs: its full source address, the version
/// constraint written for it, and where it is first asked for.
pub(super) struct Need {
    pub source: String,
    pub version: Option<String>,
    pub span: Span,
}

/// What module `m` itself needs: each `required_providers` source, and
/// for each resource, the source declared for the local name it gives in
/// `provider` (or its type's prefix), else the provider of the driver that
/// serves its type, else the implied `hashicorp/<name>`; each source once,
/// in that order.
pub(super) fn module_needs(m: &Module, drivers: &Drivers) -> Vec<Need> {
    let mut out: Vec<Need> = Vec::new();
    let mut add = |need: Need| {
        if !out.iter().any(|n| n.source == need.source) {
            out.push(need);
        }
    };
    for p in &m.settings.provider_sources {
        add(Need {
            source: strata_state::provider_source(&p.source),
            version: p.version.clone(),
            span: p.span,
        });
    }
    for r in &m.resources {
        let driver = drivers.of_mode(r.mode, &r.type_name);
        // `provider = NAME` names the provider by its local name, which
        // need not be the type's prefix.
        let local = r.provider_local_name();
        let source = match (m.declared_source(local), driver) {
            (Some(declared), _) => declared,
            (None, Some((d, _))) if r.provider.is_none() => crate::builtin::source_of(d.as_ref()),
            (None, _) => m.provider_source(local),
        };
        add(Need {
            source,
            version: None,
            span: r.span,
        });
    }
    out
}
