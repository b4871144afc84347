//! The module manifest `terraform init` writes (and `strata init` keeps):
//! `.terraform/modules/modules.json`, which says where each module call's
//! source was put, keyed by the call's path (`net`, `eks.kms`). strata
//! reads a module from a registry, git or archive source where the
//! manifest puts it, so a tree `terraform init` prepared loads as it is.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Manifest {
    #[serde(rename = "Modules", default)]
    pub modules: Vec<Record>,
}

/// One installed module call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The call's path, names joined by dots; "" for the root module.
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "Source")]
    pub source: String,
    #[serde(rename = "Version", default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Where it is, relative to the root module's directory.
    #[serde(rename = "Dir")]
    pub dir: String,
}

/// The data directory: `.terraform`, or `TF_DATA_DIR`.
pub fn data_dir(root: &Path) -> PathBuf {
    match std::env::var("TF_DATA_DIR").ok().filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => root.join(".terraform"),
    }
}

/// Where the manifest of the root module in `root` is.
pub fn manifest_path(root: &Path) -> PathBuf {
    data_dir(root).join("modules").join("modules.json")
}

impl Manifest {
    /// The manifest of the root module in `root`: empty when there is
    /// none; an error saying why when it cannot be read.
    pub fn read(root: &Path) -> Result<Manifest, String> {
        let path = manifest_path(root);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not a module manifest ({e}); run init again",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// The record of the call at `key`, if it was installed from
    /// `source` (a changed source needs init again).
    pub fn record(&self, key: &str, source: &str) -> Option<&Record> {
        self.modules
            .iter()
            .find(|r| r.key == key && same_source(&r.source, source))
    }

    /// Where init installed `source` for the call at `key` (a directory
    /// from `root`), when it still satisfies `constraint` (a registry
    /// module's `version`): what a module call and a test run's `module`
    /// both load.
    pub fn installed(
        &self,
        root: &Path,
        (key, source): (&str, &str),
        constraint: Option<&str>,
    ) -> Result<PathBuf, NotInstalled> {
        let record = self.record(key, source).ok_or(NotInstalled::Missing)?;
        if let Some(c) = constraint {
            let allowed =
                super::version::Constraint::parse(c).map_err(NotInstalled::BadConstraint)?;
            if !record.version.as_deref().is_some_and(|v| allowed.allows(v)) {
                return Err(NotInstalled::Outdated(format!("The version requirements have changed since this module was installed and the installed version ({}) is no longer acceptable. Run \"strata init\" to install all modules required by this configuration.", record.version.as_deref().unwrap_or("none"))));
            }
        }
        Ok(root.join(&record.dir))
    }
}

/// Why a module is not there to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotInstalled {
    /// No record of it from this source: init has not installed it.
    Missing,
    /// The `version` given cannot be read (why).
    BadConstraint(String),
    /// The version installed no longer satisfies it (what to say).
    Outdated(String),
}

/// Whether a recorded source is `wanted` (normalised, as
/// [`super::ModuleSource`] shows it): the manifest may have been written
/// by Terraform, which writes them normalised too, or by hand.
fn same_source(recorded: &str, wanted: &str) -> bool {
    match super::ModuleSource::parse(recorded, false) {
        Ok(s) => s.to_string() == wanted,
        Err(_) => recorded == wanted,
    }
}

/// Backend settings given to `init` (`-backend-config`), kept for the
/// commands after it in `.terraform/strata-backend.json`, as Terraform
/// keeps its own in `.terraform/terraform.tfstate` (which strata reads
/// when it has no file of its own: a tree `terraform init` prepared).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedBackend {
    #[serde(rename = "type")]
    pub kind: String,
    pub settings: serde_json::Map<String, serde_json::Value>,
}

fn saved_backend_path(root: &Path) -> PathBuf {
    data_dir(root).join("strata-backend.json")
}

impl SavedBackend {
    /// What an earlier init kept, if anything.
    pub fn read(root: &Path) -> Result<Option<SavedBackend>, String> {
        let unreadable =
            |path: &Path, e: String| format!("{}: {e}; run init again", path.display());
        let ours = saved_backend_path(root);
        match std::fs::read_to_string(&ours) {
            Ok(text) => {
                return serde_json::from_str(&text)
                    .map(Some)
                    .map_err(|e| unreadable(&ours, e.to_string()))
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(unreadable(&ours, e.to_string()))
            }
            Err(_) => {}
        }
        let terraforms = data_dir(root).join("terraform.tfstate");
        let Ok(text) = std::fs::read_to_string(&terraforms) else {
            return Ok(None);
        };
        let doc: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| unreadable(&terraforms, e.to_string()))?;
        let backend = &doc["backend"];
        let Some(kind) = backend["type"].as_str() else {
            return Ok(None);
        };
        let settings = backend["config"]
            .as_object()
            .map(|c| {
                c.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Some(SavedBackend {
            kind: kind.to_string(),
            settings,
        }))
    }

    pub fn write(&self, root: &Path) -> std::io::Result<()> {
        let path = saved_backend_path(root);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_string_pretty(self).unwrap_or_default())
    }
}

/// A `-backend-config` file (`s3.tfbackend`): attributes whose values are
/// constants, as JSON.
pub fn settings_file(
    path: &Path,
    sources: &mut crate::diag::Sources,
) -> Result<serde_json::Map<String, serde_json::Value>, crate::diag::Diags> {
    use crate::diag::{Diag, Diags};
    let text = std::fs::read_to_string(path).map_err(|e| {
        Diags::from(Diag::new(
            "strata::init::backend_config",
            format!("Cannot read {}", path.display()),
            e.to_string(),
        ))
    })?;
    let id = sources.add(path.display().to_string(), text);
    let body = crate::syntax::parse_body(id, sources.text(id)).map_err(Diags::from)?;
    let mut ev = crate::eval::Evaluator::new(&crate::eval::EmptyScope, PathBuf::new());
    let mut out = serde_json::Map::new();
    for a in &body.attrs {
        let v = ev.eval(&a.expr).map_err(Diags::from)?;
        out.insert(a.name.clone(), crate::lang::json::plain_json(&v));
    }
    Ok(out)
}

/// The backend `init` last set up, with every setting it had (the block's
/// and `-backend-config`'s), kept in `.terraform/strata-initialized.json`
/// as Terraform keeps its own in `.terraform/terraform.tfstate`: a
/// command whose configuration names another backend stops until init
/// has moved the state or been told to leave it (`-migrate-state`,
/// `-reconfigure`), so no plan starts from an empty state by mistake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializedBackend {
    #[serde(rename = "type")]
    pub kind: String,
    pub settings: serde_json::Map<String, serde_json::Value>,
}

/// Where init records the backend it set up.
pub fn initialized_path(root: &Path) -> PathBuf {
    data_dir(root).join("strata-initialized.json")
}

impl InitializedBackend {
    /// The backend the loaded root module names (the default local file
    /// when it names none).
    pub fn of(module: &super::Module) -> InitializedBackend {
        match &module.settings.backend {
            Some(b) => InitializedBackend {
                kind: b.kind.clone(),
                settings: b
                    .settings
                    .iter()
                    .map(|(k, (v, _))| (k.clone(), crate::lang::json::plain_json(v)))
                    .collect(),
            },
            None => InitializedBackend {
                kind: "local".into(),
                settings: Default::default(),
            },
        }
    }

    /// The default local file, which no `backend` block names.
    pub fn is_default(&self) -> bool {
        self.kind == "local" && self.settings.is_empty()
    }

    /// What init recorded for the configuration in `root`, if it has.
    pub fn read(root: &Path) -> Result<Option<InitializedBackend>, String> {
        let path = initialized_path(root);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| format!("{}: {e}; run init again", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    pub fn write(&self, root: &Path) -> std::io::Result<()> {
        let path = initialized_path(root);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_string_pretty(self).unwrap_or_default())
    }

    /// Its settings as a backend block, to open the state it keeps.
    pub fn block(&self, span: crate::diag::Span) -> Result<super::Backend, String> {
        let mut settings = std::collections::BTreeMap::new();
        for (k, v) in &self.settings {
            settings.insert(k.clone(), (crate::funcs::json_value(v)?, span));
        }
        Ok(super::Backend {
            kind: self.kind.clone(),
            span,
            settings,
        })
    }
}
