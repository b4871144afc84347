//! Module installation, what `init` does before anything is planned:
//! every module call is followed from the root (in name order, depth
//! first, as Terraform), local ones recorded where they are, registry and
//! remote ones fetched into `.terraform/modules/<key>`; the module
//! manifest then says where each is, and `config::load` reads them there.
//!
//! Nothing here runs outside `init`, `get` and `providers lock`/`mirror`:
//! plans never download.

mod fetch;
mod http;
pub mod lock;
pub mod mirror;
mod network_mirror;
mod provider_registry;
pub mod providers;
mod registry;

use crate::config::cli_config::CliConfig;
use crate::config::installed::{data_dir, Manifest, Record};
use crate::config::source::{ModuleSource, RegistryAddr, RemoteAddr};
use crate::config::{self, Module, ModuleCall, ModuleVersion, VersionConstraint};
use crate::diag::{Diag, Diags, Sources, Span};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What was asked of installation.
pub struct Options {
    /// `-upgrade`: fetch every remote module again, at the newest version
    /// its constraint allows, whatever is installed.
    pub upgrade: bool,
}

/// A test run's `module` block, installed as Terraform's init installs
/// it: under the run's own key (`test.tests.main.setup`, see
/// [`config::testfile::module_key`]), its calls under that.
pub struct TestModule {
    pub key: String,
    pub run: String,
    pub module: config::testfile::RunModule,
}

/// Installs the modules `root` (loaded shallow, from `root_dir`) and its
/// test runs call, writes the manifest, and says what it did in
/// Terraform's words.
pub fn modules(
    root_dir: &Path,
    (root, consts): (&Module, &config::dynamic::Consts),
    tests: &[TestModule],
    options: &Options,
    sources: &mut Sources,
) -> Result<String, Diags> {
    let previous = Manifest::read(root_dir).map_err(|why| {
        Diags::from(Diag::new(
            "strata::init::modules",
            "Cannot read the module manifest",
            why,
        ))
    })?;
    let cli = CliConfig::read(sources)?;
    let http = client(&cli)?;
    let mut run = Run::new(root_dir, &previous, options, &http, &cli);
    run.calls((root, consts), "", sources);
    run.test_modules(tests, sources);
    let Run {
        mut records,
        said,
        diags,
        ..
    } = run;
    if !diags.is_empty() {
        return Err(diags);
    }
    records.sort_by(|a, b| a.key.cmp(&b.key));
    if records != previous.modules {
        write_manifest(root_dir, records)?;
    }
    Ok(said)
}

fn write_manifest(root_dir: &Path, records: Vec<Record>) -> Result<(), Diags> {
    let path = config::installed::manifest_path(root_dir);
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
    })
}

/// What is installed: a module call, or `init -from-module`'s source.
struct Call<'c> {
    name: &'c str,
    source: &'c str,
    version: Option<&'c ModuleVersion>,
    span: Span,
    source_span: Span,
}

impl<'c> Call<'c> {
    fn of(c: &'c ModuleCall) -> Call<'c> {
        Call {
            name: &c.name,
            source: &c.source,
            version: c.version.as_ref(),
            span: c.span,
            source_span: c.source_span,
        }
    }
}

fn client(cli: &CliConfig) -> Result<http::Http<'_>, Diags> {
    http::Http::new(cli).map_err(|why| {
        Diags::from(Diag::new(
            "strata::init::modules",
            "Cannot install modules",
            why,
        ))
    })
}

/// `init -from-module=SOURCE`: the module at SOURCE (any source a module
/// call takes) copied into `root_dir`, which must hold no configuration
/// yet; what init says about it.
pub fn from_module(root_dir: &Path, source: &str, sources: &mut Sources) -> Result<String, Diags> {
    if config::config_files(root_dir).is_ok_and(|f| !f.is_empty()) {
        return Err(Diags::from(Diag::new(
            "strata::init::from_module",
            "The working directory already contains files",
            "The -from-module option requires an empty directory into which a copy of the referenced module will be placed.\n\nTo initialize the configuration already in this working directory, omit the -from-module option.",
        )));
    }
    let cli = CliConfig::read(sources)?;
    let http = client(&cli)?;
    let none = Manifest::default();
    let options = Options { upgrade: true };
    let mut run = Run::new(root_dir, &none, &options, &http, &cli);
    let call = Call {
        name: "root",
        source,
        version: None,
        span: Span::default(),
        source_span: Span::default(),
    };
    let placed = run.place(root_dir, &call, FROM_MODULE);
    if !run.diags.is_empty() {
        return Err(run.diags);
    }
    let copied = placed.map_or(Ok(()), |p| fetch::copy_dir(&p.dir, root_dir));
    let _ = clear(&data_dir(root_dir).join("modules").join(FROM_MODULE));
    copied.map_err(|e| {
        Diags::from(Diag::new(
            "strata::init::from_module",
            "Cannot copy the module",
            format!("{}: {e}", root_dir.display()),
        ))
    })?;
    Ok(format!("Copying configuration from {source:?}...\n\n"))
}

/// Where `-from-module`'s package is fetched before it is copied.
const FROM_MODULE: &str = "-from-module";

/// One run of installation.
struct Run<'r, 'c> {
    root_dir: &'r Path,
    previous: &'r Manifest,
    options: &'r Options,
    http: &'r http::Http<'c>,
    registry: registry::Registry<'r, 'c>,
    /// Packages fetched in this run (package and version → where), copied
    /// for a second call of the same one instead of fetched again.
    fetched: BTreeMap<String, PathBuf>,
    records: Vec<Record>,
    said: String,
    diags: Diags,
}

/// Where one call's module ended up.
struct Placed {
    dir: PathBuf,
    source: String,
    version: Option<String>,
    /// Kept from an earlier init: nothing to say.
    kept: bool,
}

impl<'r, 'c> Run<'r, 'c> {
    fn new(
        root_dir: &'r Path,
        previous: &'r Manifest,
        options: &'r Options,
        http: &'r http::Http<'c>,
        cli: &'c CliConfig,
    ) -> Run<'r, 'c> {
        Run {
            root_dir,
            previous,
            options,
            http,
            registry: registry::Registry::new(http, &cli.hosts, "modules.v1"),
            fetched: BTreeMap::new(),
            records: vec![Record {
                key: String::new(),
                source: String::new(),
                version: None,
                dir: ".".into(),
            }],
            said: String::new(),
            diags: Diags::default(),
        }
    }

    /// Installs the calls of `module` (whose key is `key`; `consts` its
    /// const variables, its dynamic sources already evaluated), then theirs.
    fn calls(
        &mut self,
        (module, consts): (&Module, &config::dynamic::Consts),
        key: &str,
        sources: &mut Sources,
    ) {
        let mut calls: Vec<&ModuleCall> = module.module_calls.iter().collect();
        calls.sort_by(|a, b| a.name.cmp(&b.name));
        // A source that could not be evaluated has been said already.
        let calls = calls
            .into_iter()
            .filter(|c| !(c.source.is_empty() && c.source_expr.is_some()));
        for call in calls {
            let child = match key.is_empty() {
                true => call.name.clone(),
                false => format!("{key}.{}", call.name),
            };
            let Some(mut m) = self.follow(&module.dir, &Call::of(call), &child, sources) else {
                continue;
            };
            let child_consts = config::dynamic::child_consts(module, consts, call, &m);
            config::dynamic::resolve_calls(&mut m, &child_consts, &mut self.diags);
            self.calls((&m, &child_consts), &child, sources)
        }
    }

    /// Installs each test run's `module` (a root of its own: no const
    /// variables reach it), then what it calls.
    fn test_modules(&mut self, tests: &[TestModule], sources: &mut Sources) {
        for t in tests {
            let call = Call {
                name: &t.run,
                source: &t.module.source,
                version: t.module.version.as_ref(),
                span: t.module.span,
                source_span: t.module.span,
            };
            let Some(mut m) = self.follow(self.root_dir, &call, &t.key, sources) else {
                continue;
            };
            let consts = config::dynamic::Consts::new();
            config::dynamic::resolve_calls(&mut m, &consts, &mut self.diags);
            self.calls((&m, &consts), &t.key, sources)
        }
    }

    /// Places `call` (from a module in `caller_dir`) under `key`, records
    /// it and says so: its module, read shallow, to follow its own calls.
    fn follow(
        &mut self,
        caller_dir: &Path,
        call: &Call<'_>,
        key: &str,
        sources: &mut Sources,
    ) -> Option<Module> {
        let placed = self.place(caller_dir, call, key)?;
        if !placed.kept {
            self.said
                .push_str(&format!("- {key} in {}\n", self.shown(&placed.dir)));
        }
        self.records.push(Record {
            key: key.to_string(),
            source: placed.source,
            version: placed.version,
            dir: self.shown(&placed.dir),
        });
        match config::load_shallow(&placed.dir, sources) {
            Ok(m) => Some(m),
            Err(d) => {
                self.diags.0.extend(d.0);
                None
            }
        }
    }

    /// `dir` as the manifest writes it: relative to the root module.
    fn shown(&self, dir: &Path) -> String {
        let rel = dir.strip_prefix(self.root_dir).unwrap_or(dir);
        match rel.as_os_str().is_empty() {
            true => ".".into(),
            false => rel.display().to_string(),
        }
    }

    fn place(&mut self, caller_dir: &Path, call: &Call<'_>, key: &str) -> Option<Placed> {
        let source = match ModuleSource::parse(call.source, call.version.is_some()) {
            Ok(s) => s,
            Err((summary, detail)) => {
                self.fail(summary, detail, call.source_span);
                return None;
            }
        };
        match &source {
            // strata's own modules are in the binary: nothing to record.
            ModuleSource::Embedded(_) => None,
            ModuleSource::Local(p) => Some(Placed {
                dir: config::normalize(&caller_dir.join(p)),
                source: p.clone(),
                version: None,
                kept: !self.options.upgrade && self.previous.record(key, p).is_some(),
            }),
            ModuleSource::Registry(addr) => self.registry_module(call, key, addr),
            ModuleSource::Remote(addr) => {
                let shown = addr.to_string();
                if let Some(kept) = self.kept(key, &shown, None) {
                    return Some(kept);
                }
                let dir = self.fetched_into(call, key, addr, &addr.package(), &addr.package())?;
                self.subdir(call, dir, addr.subdir.as_deref(), shown, None)
            }
        }
    }

    /// What an earlier init installed for `key` from `source`, when it
    /// still does (and `-upgrade` was not given).
    fn kept(
        &self,
        key: &str,
        source: &str,
        constraint: Option<&VersionConstraint>,
    ) -> Option<Placed> {
        if self.options.upgrade {
            return None;
        }
        let record = self.previous.record(key, source)?;
        let version_ok = match constraint {
            Some(c) => record.version.as_deref().is_some_and(|v| c.allows(v)),
            None => true,
        };
        let dir = self.root_dir.join(&record.dir);
        (version_ok && dir.is_dir()).then(|| Placed {
            dir,
            source: record.source.clone(),
            version: record.version.clone(),
            kept: true,
        })
    }

    fn registry_module(
        &mut self,
        call: &Call<'_>,
        key: &str,
        addr: &RegistryAddr,
    ) -> Option<Placed> {
        let constraint = match call.version {
            Some(v) => match VersionConstraint::parse(&v.constraint) {
                Ok(c) => Some(c),
                Err(why) => {
                    self.fail("Invalid version constraint", why, v.span);
                    return None;
                }
            },
            None => None,
        };
        let shown = addr.to_string();
        if let Some(kept) = self.kept(key, &shown, constraint.as_ref()) {
            return Some(kept);
        }
        let versions = match self.registry.versions(addr) {
            Ok(v) => v,
            Err(r) => {
                self.fail(r.summary, r.detail, call.source_span);
                return None;
            }
        };
        let listed = versions.iter().map(String::as_str);
        let chosen = match &constraint {
            Some(c) => c.newest(listed),
            None => config::newest_release(listed),
        };
        let Some(version) = chosen.map(str::to_string) else {
            let newest = config::newest_release(versions.iter().map(String::as_str));
            let detail = match newest {
                Some(n) => format!("There is no available version of module {:?} ({}) which matches the given version constraint. The newest available version is {n}.", addr.package(), call.name),
                None => format!("Module {:?} ({}) has no available versions.", addr.package(), call.name),
            };
            self.fail("Unresolvable module version constraint", detail, call.span);
            return None;
        };
        let location = match self.registry.location(addr, &version) {
            Ok(l) => l,
            Err(r) => {
                self.fail(r.summary, r.detail, call.source_span);
                return None;
            }
        };
        let remote = match ModuleSource::parse(&location, false) {
            Ok(ModuleSource::Remote(r)) => r,
            _ => {
                self.fail("Invalid package location from module registry", format!("Module registry {} returned {location:?} as the package of {} {version}, which is not a remote module package address.", addr.host, addr.package()), call.source_span);
                return None;
            }
        };
        let said = format!("{} {version}", addr.package());
        let package_key = format!("{} {version}", addr.package());
        let dir = self.fetched_into(call, key, &remote, &said, &package_key)?;
        // The location's own subdirectory (`//*` for a GitHub tarball),
        // then the one the source names.
        let dir = self
            .subdir(call, dir, remote.subdir.as_deref(), shown.clone(), None)?
            .dir;
        self.subdir(call, dir, addr.subdir.as_deref(), shown, Some(version))
    }

    /// Fetches `addr`'s package into `.terraform/modules/<key>` (copying
    /// it when this run fetched it already), saying so.
    fn fetched_into(
        &mut self,
        call: &Call<'_>,
        key: &str,
        addr: &RemoteAddr,
        said: &str,
        package_key: &str,
    ) -> Option<PathBuf> {
        self.said
            .push_str(&format!("Downloading {said} for {key}...\n"));
        let dest = data_dir(self.root_dir).join("modules").join(key);
        if let Err(e) = clear(&dest) {
            self.fail(
                "Failed to download module",
                format!("Cannot clear {}: {e}", dest.display()),
                call.span,
            );
            return None;
        }
        let result = match self.fetched.get(package_key) {
            Some(first) => fetch::copy_dir(first, &dest).map_err(|e| e.to_string()),
            None => fetch::package(self.http, addr, &dest),
        };
        match result {
            Ok(()) => {
                self.fetched.insert(package_key.to_string(), dest.clone());
                Some(dest)
            }
            Err(why) => {
                let _ = clear(&dest);
                self.fail(
                    "Failed to download module",
                    format!(
                        "Could not download module {:?} source code from {:?}: {why}",
                        call.name,
                        addr.package()
                    ),
                    call.span,
                );
                None
            }
        }
    }

    /// The directory `subdir` names inside a fetched package (`*` parts
    /// match the one directory there, as in a GitHub tarball).
    fn subdir(
        &mut self,
        call: &Call<'_>,
        package: PathBuf,
        subdir: Option<&str>,
        source: String,
        version: Option<String>,
    ) -> Option<Placed> {
        let placed = |dir| Placed {
            dir,
            source,
            version,
            kept: false,
        };
        let Some(sub) = subdir else {
            return Some(placed(package));
        };
        let wanted = package.join(sub);
        let found = match sub.contains('*') {
            false => Some(wanted.clone()).filter(|d| d.is_dir()),
            true => {
                let pattern = wanted.display().to_string();
                let matches: Vec<PathBuf> = glob::glob(&pattern)
                    .map(|g| g.filter_map(Result::ok).filter(|p| p.is_dir()).collect())
                    .unwrap_or_default();
                match matches.as_slice() {
                    [one] => Some(one.clone()),
                    _ => None,
                }
            }
        };
        match found {
            Some(dir) => Some(placed(dir)),
            None => {
                self.fail("Unreadable module subdirectory", format!("The directory {} does not exist. The target submodule {sub} does not exist within the target module.", self.shown(&wanted)), call.span);
                None
            }
        }
    }

    fn fail(&mut self, summary: &str, detail: String, span: Span) {
        self.diags
            .push(Diag::new("strata::init::modules", summary, detail).at(span));
    }
}

/// Removes what an earlier install left at `dir`.
fn clear(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}
