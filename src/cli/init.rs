//! `strata init`, where CI scripts call `terraform init`: the backend
//! reached, the modules found (local ones recorded in Terraform's module
//! manifest, remote ones read where `terraform init` put them), and every
//! provider the configuration needs checked against the drivers built in,
//! naming what is not. Nothing is downloaded; nothing a user commits is
//! written (only `.terraform/modules/modules.json`).

use crate::builtin::Drivers;
use crate::config::installed::{manifest_path, Manifest, Record, SavedBackend};
use crate::config::{self, Module};
use crate::diag::{Diag, Diags, Sources, Span};
use std::collections::BTreeMap;
use std::path::Path;

/// What `init` was asked.
pub struct Init<'a> {
    pub path: &'a Path,
    /// `-backend=false`: leave the backend alone.
    pub backend: bool,
    /// `-backend-config`: `key=value`, or a file of settings.
    pub backend_config: &'a [String],
}

/// Runs `init`; what it prints on success.
pub fn run(req: Init<'_>, sources: &mut Sources, drivers: &Drivers) -> Result<String, Diags> {
    let mut module = config::load(req.path, sources)?;
    if !req.backend_config.is_empty() {
        keep_backend_settings(req.path, &mut module, req.backend_config, sources)?;
    }
    let mut out = String::from("Initializing the backend...\n");
    if let (true, Some(b)) = (req.backend, &module.settings.backend) {
        let store = crate::backends::open(None, &module, &config::workspace()?)?;
        store.load().map_err(crate::statecmd::state_err)?;
        if b.kind != "local" {
            out.push_str(&format!("\nSuccessfully configured the backend {:?}! strata will automatically\nuse this backend unless the backend configuration changes.\n", b.kind));
        }
    }
    out.push_str("Initializing modules...\n");
    out.push_str(&modules(req.path, &module)?);
    out.push_str("Initializing provider plugins...\n");
    out.push_str(&providers(&module, drivers)?);
    out.push_str("\nstrata has been successfully initialized!\n");
    // As Terraform: a script (TF_IN_AUTOMATION set) is not told what to
    // type next.
    if !crate::ui::in_automation() {
        out.push_str(NEXT);
    }
    Ok(out)
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
/// the commands that follow (with what an earlier init kept).
fn keep_backend_settings(
    root: &Path,
    module: &mut Module,
    given: &[String],
    sources: &mut Sources,
) -> Result<(), Diags> {
    let refused = |summary: &str, detail: String| {
        Diags::from(Diag::new("strata::init::backend_config", summary, detail))
    };
    let Some(kind) = module.settings.backend.as_ref().map(|b| b.kind.clone()) else {
        return Err(refused("Missing backend configuration", "-backend-config was given, but the configuration has no backend block to give the settings to. Add one, e.g. terraform { backend \"s3\" {} }.".into()));
    };
    let mut saved = SavedBackend::read(root)
        .map_err(|why| refused("Cannot read the backend settings init kept", why))?
        .filter(|s| s.kind == kind)
        .unwrap_or(SavedBackend {
            kind,
            settings: Default::default(),
        });
    for item in given {
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
        .write(root)
        .map_err(|e| refused("Cannot keep the backend settings", e.to_string()))?;
    config::with_saved_backend(module, &saved)
}

/// Records the local module calls in the manifest beside what an earlier
/// init installed, saying each one new to it.
fn modules(root: &Path, module: &Module) -> Result<String, Diags> {
    let manifest = Manifest::read(root).map_err(|why| {
        Diags::from(Diag::new(
            "strata::init::modules",
            "Cannot read the module manifest",
            why,
        ))
    })?;
    let mut calls = Vec::new();
    local_calls(module, "", root, &mut calls);
    let mut said = String::new();
    let mut records = manifest.modules.clone();
    let root_record = Record {
        key: String::new(),
        source: String::new(),
        version: None,
        dir: ".".into(),
    };
    for record in std::iter::once(root_record).chain(calls) {
        if records.iter().any(|r| r.key == record.key) {
            continue;
        }
        if !record.key.is_empty() {
            said.push_str(&format!("- {} in {}\n", record.key, record.dir));
        }
        records.push(record);
    }
    if records != manifest.modules {
        let path = manifest_path(root);
        let text = serde_json::to_string(&Manifest { modules: records }).unwrap_or_default();
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text));
        written.map_err(|e| {
            Diags::from(Diag::new(
                "strata::init::modules",
                "Cannot write the module manifest",
                format!("{}: {e}", path.display()),
            ))
        })?;
    }
    Ok(said)
}

/// Every call of a local module path under `m` (whose key is `key`), with
/// its directory relative to the root.
fn local_calls(m: &Module, key: &str, root: &Path, out: &mut Vec<Record>) {
    for c in &m.module_calls {
        let child = match key.is_empty() {
            true => c.name.clone(),
            false => format!("{key}.{}", c.name),
        };
        // strata's own modules (`strata:modules/…`) are in the binary, and
        // remote ones in the manifest already.
        if c.source.starts_with("./") || c.source.starts_with("../") {
            let dir = c.module.dir.strip_prefix(root).unwrap_or(&c.module.dir);
            let dir = match dir.as_os_str().is_empty() {
                true => ".".to_string(),
                false => dir.display().to_string(),
            };
            out.push(Record {
                key: child.clone(),
                source: c.source.clone(),
                version: None,
                dir,
            });
        }
        local_calls(&c.module, &child, root, out);
    }
}

/// The source address of the provider a driver is:
/// `provider["registry.terraform.io/hashicorp/aws"]` → the inner part.
fn source_of(driver: &dyn strata_provider::Driver) -> String {
    let address = driver.provider_address();
    let inner = address.trim_start_matches("provider[\"");
    inner.trim_end_matches("\"]").to_string()
}

/// The providers the configuration needs, each built in or an error.
fn providers(root: &Module, drivers: &Drivers) -> Result<String, Diags> {
    let built_in: Vec<String> = drivers.all().map(|d| source_of(d.as_ref())).collect();
    // Source → where the configuration first asks for it.
    let mut wanted: BTreeMap<String, Option<Span>> = BTreeMap::new();
    let mut diags = Diags::default();
    needed(root, drivers, &mut wanted);
    let mut said = String::new();
    for (source, span) in wanted {
        if built_in.contains(&source) {
            said.push_str(&format!("- {source} is built in to strata\n"));
            continue;
        }
        let mut d = Diag::new(
            "strata::init::provider",
            "Provider not built in",
            format!("This configuration needs the provider {source}, and strata has no driver for it built in. The built-in drivers are: {}. strata does not run Terraform's provider plugins yet: use resource types these drivers serve, or keep this configuration on Terraform for now.", built_in.join(", ")),
        );
        if let Some(span) = span {
            d = d.at(span);
        }
        diags.push(d);
    }
    diags.into_result(said)
}

/// What `m` and the modules it calls need (see [`module_needs`]).
fn needed(m: &Module, drivers: &Drivers, wanted: &mut BTreeMap<String, Option<Span>>) {
    for need in module_needs(m, drivers) {
        wanted.entry(need.source).or_insert(Some(need.span));
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
/// for each resource type, the provider of the driver that serves it or
/// (none does) its implied one (`hashicorp/<prefix>`, or the source its
/// prefix is declared with); each source once, in that order.
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
        let driver = match r.mode {
            config::Mode::Managed => drivers.resource(&r.type_name),
            config::Mode::Data => drivers.data(&r.type_name),
        };
        let source = match driver {
            Some((d, _)) => source_of(d.as_ref()),
            None => {
                let prefix = r.type_name.split('_').next().unwrap_or(&r.type_name);
                let declared = m
                    .settings
                    .provider_sources
                    .iter()
                    .find(|p| p.name == prefix);
                match declared {
                    Some(p) => strata_state::provider_source(&p.source),
                    None => format!("registry.terraform.io/hashicorp/{prefix}"),
                }
            }
        };
        add(Need {
            source,
            version: None,
            span: r.span,
        });
    }
    out
}
