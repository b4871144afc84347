//! Which backend keeps the state: `--state FILE`, the configuration's
//! `terraform { backend "TYPE" { … } }` block, or the default file; and
//! which workspace of it, as the command decided (`config::workspace`).
//! Settings are named as Terraform's backends name them,
//! so a Terraform user's block works unchanged where strata supports it.

use crate::builtin::remote_state::{RemoteBackend, SourceError, StateSource};
use crate::config::{self, Backend, Module};
use crate::diag::{Diag, Diags, Sources, Span};
use crate::eval::did_you_mean;
use crate::lang::value::Value;
use std::path::{Path, PathBuf};
use strata_state::{Layout, State, Store};
#[cfg(feature = "remote-state")]
use strata_state_pg::{PgBackend, PgConfig};
#[cfg(feature = "remote-state")]
use strata_state_s3::{S3Backend, S3Config};

/// The default state file: Terraform's, so that a directory is one state
/// for both tools.
pub const DEFAULT_STATE: &str = "terraform.tfstate";

/// Where strata before 0.1 kept its default state; moved to
/// [`DEFAULT_STATE`] by the first run that opens it ([`default_layout`]).
pub const LEGACY_STATE: &str = "strata.tfstate";

/// Where the default backend keeps `workspace`'s state (a configuration
/// may name another backend; see [`open`]).
pub fn default_path(workspace: &str) -> PathBuf {
    local_layout(DEFAULT_STATE, None).path(workspace)
}

/// Opens the state for a configuration whose root module is loaded, once
/// it is the backend init set up ([`initialized`]).
pub fn open(explicit: Option<&Path>, module: &Module, workspace: &str) -> Result<Store, Diags> {
    if explicit.is_none() {
        initialized(module)?;
    }
    let store = open_backend(
        explicit,
        module.settings.backend.as_ref(),
        workspace.to_string(),
    )?;
    sealed(store, &module.settings.sealings)
}

/// `store` with its documents sealed and opened by the configuration's
/// `encryption { state { … } }`, when it has one.
pub fn sealed(store: Store, sealings: &config::encryption::Sealings) -> Result<Store, Diags> {
    let chain = sealings.state()?;
    Ok(match chain.is_empty() {
        true => store,
        false => store.sealed(sealing(
            strata_state::encryption::Payload::State,
            chain.to_vec(),
        )),
    })
}

/// What seals and opens `payload` with `chain`, AWS KMS at hand for an
/// `aws_kms` key provider.
pub fn sealing(
    payload: strata_state::encryption::Payload,
    chain: Vec<strata_state::encryption::Method>,
) -> strata_state::encryption::Sealing {
    let sealing = strata_state::encryption::Sealing::new(payload, chain);
    #[cfg(feature = "remote-state")]
    let sealing = sealing.with_data_keys(std::sync::Arc::new(strata_state_s3::KmsDataKeys));
    #[cfg(feature = "drivers")]
    let sealing = sealing.with_cloud_tokens(std::sync::Arc::new(DriverTokens));
    sealing
}

/// The clouds' credentials for key providers, through the drivers'
/// libraries.
#[cfg(feature = "drivers")]
#[derive(Debug)]
struct DriverTokens;

#[cfg(feature = "drivers")]
impl strata_state::encryption::CloudTokens for DriverTokens {
    fn google(&self, credentials: Option<&str>) -> Result<String, String> {
        strata_state::encryption::blocking(strata_gcp::kms_token(credentials))
    }

    fn azure(&self, id: &strata_state::encryption::AzureIdentity) -> Result<String, String> {
        let id = strata_azure::Identity {
            tenant_id: id.tenant_id.clone(),
            client_id: id.client_id.clone(),
            client_secret: id.client_secret.clone(),
            token_file: id.token_file.clone(),
            use_cli: id.use_cli,
        };
        strata_state::encryption::blocking(strata_azure::vault_token(&id))
    }
}

/// Whether the backend `module` names may be used: the one init last set
/// up (or any, when init never ran here). Terraform's rule: a changed
/// backend is set up by init, which moves the state or leaves it.
pub fn initialized(module: &Module) -> Result<(), Diags> {
    let current = config::installed::InitializedBackend::of(module);
    let recorded = config::installed::InitializedBackend::read(&module.dir).map_err(|why| {
        Diags::from(Diag::new(
            "strata::config::init_files",
            "Cannot read the backend init set up",
            why,
        ))
    })?;
    match recorded {
        Some(r) if r.kind != current.kind => Err(init_required(
            module,
            &format!(
                "Backend type changed from {:?} to {:?}",
                r.kind, current.kind
            ),
        )),
        Some(r) if r != current => Err(init_required(
            module,
            "Backend configuration block has changed",
        )),
        _ => Ok(()),
    }
}

/// For a plan or an apply whose backend has no state yet (`existed`
/// false): stops it when init never ran here and the default state file
/// holds objects — a backend block added over a local state, whose plan
/// would start from nothing and make everything again.
pub fn unmoved(module: &Module, workspace: &str, existed: bool) -> Result<(), Diags> {
    let never_initialized = !config::installed::initialized_path(&module.dir).exists();
    match (existed, never_initialized, left_behind(module, workspace)) {
        (false, true, Some(n)) => {
            let kind = module
                .settings
                .backend
                .as_ref()
                .map_or("local", |b| b.kind.as_str());
            Err(init_required(module, &format!("Initial configuration of the requested backend {kind:?}: {DEFAULT_STATE} holds {n} resource(s), and the backend has no state yet")))
        }
        _ => Ok(()),
    }
}

fn init_required(module: &Module, reason: &str) -> Diags {
    let mut d = Diag::new(
        "strata::state::backend_init",
        "Backend initialization required, please run \"strata init\"",
        format!("Reason: {reason}\n\nChanges to backend configurations require reinitialization, which moves the existing state or leaves it: run \"strata init\" with either the \"-migrate-state\" or the \"-reconfigure\" flag. No changes to your existing configuration or state have been made."),
    );
    if let Some(b) = &module.settings.backend {
        d = d.at(b.span);
    }
    Diags::from(d)
}

/// How many resources the default local state of `workspace` holds when
/// the configuration names a backend that keeps its state elsewhere.
pub fn left_behind(module: &Module, workspace: &str) -> Option<usize> {
    let b = module.settings.backend.as_ref()?;
    let path = b
        .settings
        .get("path")
        .and_then(|(v, _)| v.as_str().map(str::to_string));
    if b.kind == "local" && path.as_deref().is_none_or(|p| p == DEFAULT_STATE) {
        return None;
    }
    // With its journal: a run that died mid-create left objects there too.
    // Through the configuration's encryption: a sealed local state read
    // without it would look empty, and its objects be planned anew.
    let local = Store::local_workspace(default_layout().ok()?, workspace);
    let loaded = sealed(local, &module.settings.sealings).ok()?.load().ok()?;
    Some(loaded.state.resources.len() + loaded.replay.pending.len()).filter(|n| *n > 0)
}

/// [`left_behind`] over every workspace of the default local state: what
/// init must move when a backend block is added, even when `default` is
/// empty and only another workspace holds objects.
pub fn left_behind_in_any(module: &Module) -> Option<usize> {
    let names = Store::local_workspace(default_layout().ok()?, "default")
        .workspaces()
        .ok()?;
    let total: usize = names.iter().filter_map(|w| left_behind(module, w)).sum();
    Some(total).filter(|n| *n > 0)
}

/// Opens the state for a command that takes no configuration path (`state`,
/// `output`, `show`, `force-unlock`): the backend named by the
/// configuration in the working directory, if there is one.
pub fn open_here(
    explicit: Option<&Path>,
    workspace: &str,
    sources: &mut Sources,
) -> Result<Store, Diags> {
    let here = Path::new(".");
    if !config::config_files(here).is_ok_and(|f| !f.is_empty()) {
        return open_backend(explicit, None, workspace.to_string());
    }
    if explicit.is_some() {
        // A state named on the command line is still this configuration's
        // to encrypt; a configuration that does not load leaves it plain
        // (an encrypted one then says so when read).
        let store = open_backend(explicit, None, workspace.to_string())?;
        return Ok(match config::load(here, sources) {
            Ok(module) => sealed(store, &module.settings.sealings)?,
            Err(_) => store,
        });
    }
    let module = config::load(here, sources)?;
    open(None, &module, workspace)
}

/// Opens the state `backend` names in `workspace` (the default file
/// without one; `explicit` overrides a local one): for the commands, and
/// for `terraform_remote_state`, which names another configuration's.
pub fn open_backend(
    explicit: Option<&Path>,
    backend: Option<&Backend>,
    workspace: String,
) -> Result<Store, Diags> {
    match (explicit, backend) {
        (Some(_), Some(b)) if b.kind != "local" => Err(Diags::from(
            Diag::new(
                "strata::state::backend_conflict",
                "--state with a remote backend",
                format!("--state names a local state file, but this configuration keeps its state in the {:?} backend; using both would split the state in two. Drop --state, or move the state with `strata state pull` and `strata state push`.", b.kind),
            )
            .at(b.span),
        )),
        (Some(path), _) => Ok(Store::local(path)),
        (None, None) => Ok(Store::local_workspace(default_layout()?, &workspace)),
        (None, Some(b)) => {
            let s = Settings { backend: b };
            match b.kind.as_str() {
                "local" => {
                    s.only(&["path", "workspace_dir"])?;
                    let layout = match (s.string("path")?, s.string("workspace_dir")?) {
                        (None, None) => default_layout()?,
                        (path, dir) => local_layout(
                            path.as_deref().unwrap_or(DEFAULT_STATE),
                            dir.as_deref(),
                        ),
                    };
                    Ok(Store::local_workspace(layout, &workspace))
                }
                #[cfg(feature = "remote-state")]
                "s3" => s3(&s, workspace),
                #[cfg(feature = "remote-state")]
                "pg" => pg(&s, workspace),
                #[cfg(not(feature = "remote-state"))]
                "s3" | "pg" => Err(s.invalid(
                    b.span,
                    "This strata was built without the \"remote-state\" feature, so it has no s3 or pg backend.".into(),
                )),
                other => Err(Diags::from(
                    Diag::new(
                        "strata::state::backend",
                        "Unsupported backend",
                        format!(
                            "strata keeps state in the \"local\", \"s3\" and \"pg\" backends, not {other:?}.{}",
                            did_you_mean(other, &["local", "s3", "pg"])
                        ),
                    )
                    .at(b.span),
                )),
            }
        }
    }
}

/// The default local state's layout, once an older strata's state here
/// has moved to it (every workspace, or none: [`strata_state::adopt`]).
/// The move is said once, on stderr, when it happens.
// Its notice of an adoption is written here (see below).
#[allow(clippy::print_stderr)]
fn default_layout() -> Result<Layout, Diags> {
    let layout = local_layout(DEFAULT_STATE, None);
    let legacy = Layout {
        default: PathBuf::from(LEGACY_STATE),
        dir: PathBuf::from(format!("{LEGACY_STATE}.d")),
    };
    if !legacy.default.exists() && !legacy.dir.exists() {
        return Ok(layout);
    }
    let adopted = strata_state::adopt(&legacy, &layout).map_err(|e| {
        let help = miette::Diagnostic::help(&e).map_or(String::new(), |h| h.to_string());
        Diags::from(Diag::new("strata::state::adopt", e.to_string(), help))
    })?;
    for a in adopted {
        let said = match a.how {
            strata_state::Adoption::Moved => "moved to",
            strata_state::Adoption::SetAside => "held no objects and was set aside as",
        };
        // The one notice strata gives outside a command's own output: it
        // happens once, whatever the command, before it reads the state.
        eprintln!(
            "strata keeps its state in Terraform's files now: {} (workspace {:?}) {said} {}.",
            a.from.display(),
            a.workspace,
            a.to.display()
        );
    }
    Ok(layout)
}

/// Terraform's layout: the default workspace in the file itself, others
/// in `<workspace_dir>/<name>/<file>` (`terraform.tfstate.d` unless set).
fn local_layout(path: &str, dir: Option<&str>) -> Layout {
    Layout {
        default: PathBuf::from(path),
        dir: PathBuf::from(dir.map_or_else(|| format!("{DEFAULT_STATE}.d"), str::to_string)),
    }
}

/// Settings of the backend block with errors pointing into it.
struct Settings<'b> {
    backend: &'b Backend,
}

// Most of these read the remote backends' settings.
#[cfg_attr(not(feature = "remote-state"), allow(dead_code))]
impl Settings<'_> {
    fn invalid(&self, span: Span, detail: String) -> Diags {
        Diags::from(Diag::new("strata::state::backend", "Invalid backend setting", detail).at(span))
    }

    /// Refuses settings this backend does not know.
    fn only(&self, known: &[&str]) -> Result<(), Diags> {
        let mut diags = Diags::default();
        for (name, (_, span)) in &self.backend.settings {
            if !known.contains(&name.as_str()) {
                diags.push(
                    Diag::new(
                        "strata::state::backend",
                        "Unsupported backend setting",
                        format!(
                            "The {:?} backend has no setting {name:?}.{}",
                            self.backend.kind,
                            did_you_mean(name, known)
                        ),
                    )
                    .at(*span),
                );
            }
        }
        diags.into_result(())
    }

    fn get(&self, name: &str) -> Option<&(Value, Span)> {
        self.backend
            .settings
            .get(name)
            .filter(|(v, _)| !v.is_null())
    }

    fn string(&self, name: &str) -> Result<Option<String>, Diags> {
        match self.get(name) {
            None => Ok(None),
            Some((v, span)) => match v.unmarked().as_str() {
                Some(s) => Ok(Some(s.to_string())),
                None => Err(self.invalid(*span, format!("{name:?} must be a string."))),
            },
        }
    }

    fn required(&self, name: &str) -> Result<String, Diags> {
        self.string(name)?.ok_or_else(|| {
            Diags::from(
                Diag::new(
                    "strata::state::backend",
                    "Missing backend setting",
                    format!("The {:?} backend needs {name:?}.", self.backend.kind),
                )
                .at(self.backend.span),
            )
        })
    }

    fn bool(&self, name: &str) -> Result<Option<bool>, Diags> {
        match self.get(name) {
            None => Ok(None),
            Some((v, span)) => match v.unmarked().as_bool() {
                Some(b) => Ok(Some(b)),
                None => Err(self.invalid(*span, format!("{name:?} must be true or false."))),
            },
        }
    }

    /// `endpoints = { s3 = "…" }`.
    fn endpoint(&self, service: &str) -> Result<Option<String>, Diags> {
        let Some((v, span)) = self.get("endpoints") else {
            return Ok(None);
        };
        let Some(entries) = v.unmarked().entries() else {
            return Err(self.invalid(
                *span,
                "\"endpoints\" must be an object such as { s3 = \"https://…\" }.".into(),
            ));
        };
        match entries.get(service).map(|e| e.unmarked()) {
            None => Ok(None),
            Some(e) if e.is_null() => Ok(None),
            Some(e) => e.as_str().map(|s| Some(s.to_string())).ok_or_else(|| {
                self.invalid(*span, format!("endpoints.{service} must be a URL string."))
            }),
        }
    }
}

#[cfg(feature = "remote-state")]
fn s3(s: &Settings, workspace: String) -> Result<Store, Diags> {
    s.only(&[
        "bucket",
        "key",
        "region",
        "endpoint",
        "endpoints",
        "profile",
        "access_key",
        "secret_key",
        "use_path_style",
        "force_path_style",
        "encrypt",
        "kms_key_id",
        "workspace_key_prefix",
        "use_lockfile",
        "dynamodb_table",
        // Accepted for S3-compatible stores, as Terraform's s3 backend
        // accepts them; the SDK validates nothing up front anyway.
        "skip_credentials_validation",
        "skip_region_validation",
        "skip_requesting_account_id",
        "skip_metadata_api_check",
        "skip_s3_checksum",
    ])?;
    if let Some((_, span)) = s.get("dynamodb_table") {
        return Err(s.invalid(*span, "strata locks S3 state with a lock object written conditionally (If-None-Match), so no DynamoDB table is needed; remove \"dynamodb_table\".".into()));
    }
    if let (Some(false), Some((_, span))) = (s.bool("use_lockfile")?, s.get("use_lockfile")) {
        return Err(s.invalid(*span, "strata always locks S3 state with a lock object; \"use_lockfile = false\" would leave it unlocked.".into()));
    }
    let endpoint = match s.endpoint("s3")? {
        Some(e) => Some(e),
        None => s.string("endpoint")?,
    };
    let config = S3Config {
        bucket: s.required("bucket")?,
        key: s.required("key")?,
        region: s.string("region")?,
        endpoint,
        profile: s.string("profile")?,
        access_key: s.string("access_key")?,
        secret_key: s.string("secret_key")?,
        use_path_style: s
            .bool("use_path_style")?
            .or(s.bool("force_path_style")?)
            .unwrap_or(false),
        encrypt: s.bool("encrypt")?.unwrap_or(false),
        kms_key_id: s.string("kms_key_id")?,
        workspace_key_prefix: s
            .string("workspace_key_prefix")?
            .unwrap_or_else(|| strata_state_s3::DEFAULT_WORKSPACE_PREFIX.into()),
        workspace,
    };
    S3Backend::new(config)
        .map(Store::new)
        .map_err(|e| s.invalid(s.backend.span, e.to_string()))
}

#[cfg(feature = "remote-state")]
fn pg(s: &Settings, workspace: String) -> Result<Store, Diags> {
    s.only(&["conn_str", "schema_name"])?;
    // Terraform's pg backend reads these variables too; the connection
    // string often holds a password, better kept out of the file.
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let conn_str = match s.string("conn_str")? {
        Some(c) => c,
        None => env("PG_CONN_STR").ok_or_else(|| {
            Diags::from(
                Diag::new(
                    "strata::state::backend",
                    "Missing backend setting",
                    "The \"pg\" backend needs a connection string: conn_str, or the PG_CONN_STR environment variable (postgres://user@host/db).",
                )
                .at(s.backend.span),
            )
        })?,
    };
    let schema_name = match s.string("schema_name")? {
        Some(n) => n,
        None => env("PG_SCHEMA_NAME").unwrap_or_else(|| strata_state_pg::DEFAULT_SCHEMA.into()),
    };
    PgBackend::new(PgConfig {
        conn_str,
        schema_name,
        workspace,
    })
    .map(Store::new)
    .map_err(|e| s.invalid(s.backend.span, e.to_string()))
}

/// `terraform_remote_state`'s way to the backends: the settings as a
/// `backend` block would hold them, opened as one, the state read.
pub struct RemoteStates;

impl StateSource for RemoteStates {
    fn read(&self, b: &RemoteBackend, reader: &str) -> Result<(State, String), SourceError> {
        let backend = Backend {
            kind: b.kind.clone(),
            span: Span::default(),
            settings: b
                .settings
                .iter()
                .map(|(k, v)| (k.clone(), (v.clone(), Span::default())))
                .collect(),
        };
        let words = |d: Diags| {
            d.0.iter()
                .map(|d| format!("{}: {}", d.summary, d.detail))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let open = || {
            open_backend(None, Some(&backend), b.workspace.clone())
                .map_err(|d| SourceError::Settings(words(d)))
        };
        let store = open()?;
        let location = store.location();
        let unreadable = |e: strata_state::StateError| SourceError::Unreadable {
            location: location.clone(),
            detail: e.to_string(),
        };
        let loaded = match store.load() {
            Err(strata_state::StateError::Encrypted { .. }) => {
                let store = open()?.sealed(sealing(
                    strata_state::encryption::Payload::State,
                    remote_chain(&location, reader)?,
                ));
                store.load().map_err(unreadable)?
            }
            other => other.map_err(unreadable)?,
        };
        if !loaded.existed {
            return Err(SourceError::Missing { location });
        }
        Ok((loaded.state, location))
    }
}

/// What opens an encrypted state the `terraform_remote_state` data source
/// `reader` reads: the working directory's `encryption {
/// remote_state_data_sources { … } }` target for it, else its `default`;
/// read only when such a state is met.
fn remote_chain(
    location: &str,
    reader: &str,
) -> Result<Vec<strata_state::encryption::Method>, SourceError> {
    let mut sources = crate::diag::Sources::default();
    let module = config::load(Path::new("."), &mut sources).map_err(|d| {
        SourceError::Settings(format!(
            "the state at {location} is encrypted, and the configuration that would say how to open it does not load ({} errors)",
            d.0.len()
        ))
    })?;
    let chain = module
        .settings
        .sealings
        .remote(reader)
        .map_err(|d| {
            SourceError::Settings(
                d.0.iter()
                    .map(|d| d.summary.clone())
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?
        .to_vec();
    match chain.is_empty() {
        true => Err(SourceError::Unreadable {
            location: location.to_string(),
            detail: format!("it is encrypted, and this configuration's encryption has no remote_state_data_sources {{ default {{ method = … }} }} nor remote_state_data_source {reader:?} to open it"),
        }),
        false => Ok(chain),
    }
}
