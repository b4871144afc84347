//! A provider plugin as a strata driver: the engine plans and applies a
//! type served by a plugin exactly as it does a native driver's, and this
//! turns each call into the RPCs Terraform makes for it.
//!
//! The provider process, its gRPC channel and every call live on a small
//! runtime of the driver's own: the engine calls some driver methods from
//! plain threads and others from its own runtime, and a call from either
//! is handed to this one.

use crate::client::{Provider, RpcError};
use crate::identity;
use crate::kinds::{Kind, Schemas};
use crate::launch::{Launch, LaunchError};
use crate::packed::{self, Asked, Packed};
use crate::proposed::proposed_new;
use crate::proto::tfplugin6::{self as v6, attribute_path::step::Selector};
use crate::runtime::Runtime;
use crate::schema::SchemaError;
use crate::schema_cache::SchemaCache;
use crate::wire::{dynamic, value};
use crate::write_only::{refuse_values, without_values, Moment};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use strata_provider::{
    ActionRequest, ApplyFailed, ApplyRequest, AttrPath, Driver, DriverError, FunctionFailure,
    FunctionSig, Identity, IdentitySchema, ImportBy, Invoked, Kept, ListRequest, Listed,
    MoveRequest, PathStep, PlanRequest, Planned, Problem, Progress, ResourceSchema, Stored, Tags,
    TypeMode, UsedSchemas,
};
use strata_value::types::Type;
use strata_value::value::Value;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error(transparent)]
    Rpc(#[from] RpcError),
    #[error(transparent)]
    Schema(#[from] SchemaError),
    #[error("the provider's schema: {0}")]
    Diagnostics(String),
    #[error("cannot start a runtime for the provider: {0}")]
    Runtime(std::io::Error),
    #[error("the provider's schema could not be packed")]
    Unpacked,
}

/// A running provider plugin serving the resource types it declares.
pub struct PluginDriver {
    name: String,
    address: String,
    /// The package's checksum, when it is known (the schemas kept by it).
    package: Option<String>,
    launch: Launch,
    runtime: Arc<Runtime>,
    /// The process, started when a call first needs it: with its schema
    /// kept on disk, a run that only reads schemas starts none. Taken and
    /// stopped when the walk is done with the configuration
    /// ([`Driver::release`]); a call after that starts another.
    process: Arc<tokio::sync::Mutex<Option<Arc<Provider>>>>,
    /// Processes released and being stopped in the background, waited
    /// for when the driver is dropped.
    stopping: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The process asked for the schema when none was kept: the first call
    /// of any configuration of the provider (the default's or an alias's)
    /// takes it rather than starting another, a quarter second of the AWS
    /// provider's; one no call took is stopped with the driver.
    spare: Arc<std::sync::Mutex<Option<Provider>>>,
    schemas: Arc<Schemas>,
    /// Whether `schemas` are all the provider's types or a saved plan's.
    part: Part,
    /// The whole schemas, asked for when a saved plan's lack a type.
    whole: OnceLock<Option<Schemas>>,
    /// The provider takes objects from other types (`MoveResourceState`).
    moves: bool,
    /// The provider serves calls without being asked for its schema first
    /// (`GetProviderSchemaOptional`).
    schema_optional: bool,
    /// The configuration this process was given, encoded, and as given
    /// (for the process started after a release). Terraform configures a
    /// provider process once, and providers count on it: the AWS
    /// provider's second ConfigureProvider fails when `AWS_CA_BUNDLE` is
    /// set (its HTTP client is no longer one it can add roots to).
    configured: std::sync::Mutex<Option<(Vec<u8>, Value)>>,
    /// A configuration nothing in the configuration uses (`configure_on_use`):
    /// sent before the first call that needs a configured provider, so an
    /// instance nothing uses starts no process (with only aliased blocks,
    /// the default instance) and an implied default whose provider
    /// requires an argument is not refused for lacking it.
    on_use: std::sync::Mutex<Option<Value>>,
}

/// Where a package's schemas may be had without asking its provider.
pub struct Known<'c> {
    /// The schemas kept on disk by the package's checksum.
    pub cache: Option<&'c SchemaCache>,
    /// The schemas a saved plan carries (the types its run used), for a
    /// run that has none kept.
    pub saved: Option<Vec<u8>>,
}

/// What the schemas a driver starts with hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Whole,
    /// A saved plan's: the types its run used.
    Used,
}

/// Stopped as go-plugin's client stops it (Terraform closes its providers
/// at the end of every run): asked to exit, killed only when it will not.
impl Drop for PluginDriver {
    fn drop(&mut self) {
        self.stop_spare();
        let process = self.process.clone();
        let stopping =
            std::mem::take(&mut *self.stopping.lock().unwrap_or_else(|p| p.into_inner()));
        self.runtime.block(async move {
            if let Some(provider) = process.lock().await.take() {
                provider.stop().await;
            }
            for stop in stopping {
                let _ = stop.await;
            }
        });
    }
}

fn stopped(operation: &str) -> DriverError {
    DriverError::Api {
        operation: operation.to_string(),
        detail: "the provider plugin's runtime has stopped".into(),
        retryable: false,
    }
}

pub(crate) fn problems(diagnostics: &[v6::Diagnostic]) -> Vec<Problem> {
    diagnostics
        .iter()
        .map(|d| Problem {
            error: d.severity == v6::diagnostic::Severity::Error as i32,
            summary: d.summary.clone(),
            detail: d.detail.clone(),
            path: d
                .attribute
                .iter()
                .flat_map(|p| &p.steps)
                .filter_map(|s| match s.selector.as_ref()? {
                    Selector::AttributeName(a) => Some(PathStep::Attribute(a.clone())),
                    Selector::ElementKeyString(k) => Some(PathStep::Key(k.clone())),
                    Selector::ElementKeyInt(i) => Some(PathStep::Index(*i)),
                })
                .collect(),
        })
        .collect()
}

/// The call's errors as a driver error (its warnings ride along); `Ok`
/// when there are none.
pub(crate) fn check(operation: &str, diagnostics: &[v6::Diagnostic]) -> Result<(), DriverError> {
    let all = problems(diagnostics);
    if all.iter().any(|p| p.error) {
        return Err(DriverError::Provider {
            operation: operation.to_string(),
            problems: all,
        });
    }
    Ok(())
}

/// A provider's answer packed, as it is kept; its errors, when it
/// reported any.
fn packed_answer(asked: Asked) -> Result<Packed, StartError> {
    let packed = Packed::read(packed::pack(asked)).ok_or(StartError::Unpacked)?;
    refused(&packed)?;
    Ok(packed)
}

/// The schema's errors, when the provider reported any.
fn refused(packed: &Packed) -> Result<(), StartError> {
    let errors: Vec<String> = problems(&packed.head.diagnostics)
        .into_iter()
        .chain(problems(&packed.identity.diagnostics))
        .filter(|p| p.error)
        .map(|p| p.to_string())
        .collect();
    match errors.is_empty() {
        true => Ok(()),
        false => Err(StartError::Diagnostics(errors.join("; "))),
    }
}

/// A process that could not be started for a call.
fn start_failed(operation: &str, e: StartError) -> DriverError {
    DriverError::Api {
        operation: operation.to_string(),
        detail: format!("the provider plugin could not be started: {e}"),
        retryable: false,
    }
}

fn rpc_failed(operation: &str, e: RpcError) -> DriverError {
    DriverError::Api {
        operation: operation.to_string(),
        detail: e.to_string(),
        retryable: false,
    }
}

pub(crate) fn capabilities() -> Option<v6::ClientCapabilities> {
    Some(v6::ClientCapabilities {
        deferral_allowed: false,
        write_only_attributes_allowed: true,
    })
}

impl PluginDriver {
    /// The provider at `launch` for the configuration's local name `name`
    /// and provider address `address` (`registry.../ns/type`), its schemas
    /// read from what is `known` of them (no process started until a call
    /// needs one), else asked of a process started and stopped now.
    pub fn start(
        name: &str,
        address: &str,
        launch: Launch,
        known: Known<'_>,
    ) -> Result<PluginDriver, StartError> {
        let runtime = Arc::new(Runtime::new().map_err(StartError::Runtime)?);
        let kept = known
            .cache
            .and_then(SchemaCache::read)
            .and_then(Packed::read);
        let saved = || known.saved.and_then(Packed::read);
        let mut spare = None;
        let (packed, part) = match kept.map(|k| (k, Part::Whole)) {
            Some(kept) => kept,
            None => match saved() {
                Some(saved) => (saved, Part::Used),
                None => {
                    let (asked, asking) = Self::ask(&runtime, &launch)?;
                    spare = Some(asking);
                    let packed = packed_answer(asked)?;
                    if let Some(c) = known.cache {
                        c.write(packed.bytes());
                    }
                    (packed, Part::Whole)
                }
            },
        };
        refused(&packed)?;
        let capabilities = packed.head.server_capabilities.unwrap_or_default();
        Ok(PluginDriver {
            name: name.to_string(),
            address: address.to_string(),
            package: known.cache.map(|c| c.package().to_string()),
            launch,
            runtime,
            process: Default::default(),
            stopping: Default::default(),
            spare: Arc::new(std::sync::Mutex::new(spare)),
            moves: capabilities.move_resource_state,
            schema_optional: capabilities.get_provider_schema_optional,
            schemas: Arc::new(Schemas::of(packed)?),
            part,
            whole: Default::default(),
            configured: Default::default(),
            on_use: Default::default(),
        })
    }

    /// The type `name` of `mode`; when the schemas are a saved plan's
    /// (the schemas of the types it used, the others' names) and the
    /// provider has the type but the plan did not carry it, the provider
    /// is asked for the whole of them. A type the provider does not have
    /// asks nothing: every driver is asked for a type in turn until one
    /// has it, and another plugin's types would start this one's process.
    fn lookup(&self, mode: TypeMode, name: &str) -> Option<Result<&Kind, &SchemaError>> {
        match (self.schemas.kind(mode, name), self.part) {
            (Some(kind), _) => Some(kind),
            (None, Part::Used) if self.schemas.declares(mode, name) => {
                self.whole()?.kind(mode, name)
            }
            (None, _) => None,
        }
    }

    fn whole(&self) -> Option<&Schemas> {
        let asked = || {
            let schema = self.call("reading the provider's schema", |p| {
                Box::pin(async move { p.get_provider_schema().await })
            });
            let identity = self.call("reading the provider's identity schemas", |p| {
                Box::pin(async move { p.get_resource_identity_schemas().await })
            });
            let asked = Asked {
                schema: schema.ok()?,
                identity: identity.ok()?,
            };
            Schemas::of(packed_answer(asked).ok()?).ok()
        };
        self.whole.get_or_init(asked).as_ref()
    }

    /// The running process, started now if none is: asked for its schema
    /// first when the provider needs that call before any other (it is
    /// known, and not read again), as Terraform does.
    fn running(&self) -> impl Future<Output = Result<Arc<Provider>, StartError>> + Send + 'static {
        let (cell, launch, ask) = (
            self.process.clone(),
            self.launch.clone(),
            !self.schema_optional,
        );
        let spare = self.spare.clone();
        async move {
            let mut process = cell.lock().await;
            if let Some(running) = process.as_ref() {
                return Ok(running.clone());
            }
            let spare = spare.lock().ok().and_then(|mut s| s.take());
            let provider = match spare {
                Some(asked) => asked,
                None => {
                    let provider = Provider::start(&launch).await?;
                    if ask {
                        provider.get_provider_schema().await?;
                    }
                    provider
                }
            };
            Ok(process.insert(Arc::new(provider)).clone())
        }
    }

    /// The schemas, asked of a process started for it, which is returned
    /// to serve the calls that follow: Terraform stops the process it asks
    /// and starts another for its calls, a quarter second of the AWS
    /// provider's more on every run with no schema kept (a fresh
    /// checkout's). It holds more memory than a process that only served
    /// calls (340 MB of the AWS provider's, against 250 MB), still far
    /// under Terraform's two.
    fn ask(runtime: &Runtime, launch: &Launch) -> Result<(Asked, Provider), StartError> {
        let launch = launch.clone();
        runtime
            .block(async move {
                let provider = Provider::start(&launch).await?;
                let asked = async {
                    Ok::<_, StartError>(Asked {
                        schema: provider.get_provider_schema().await?,
                        identity: provider.get_resource_identity_schemas().await?,
                    })
                }
                .await;
                match asked {
                    Ok(asked) => Ok((asked, provider)),
                    Err(e) => {
                        provider.stop().await;
                        Err(e)
                    }
                }
            })
            .unwrap_or_else(|| Err(StartError::Runtime(std::io::Error::other("stopped"))))
    }

    /// Stops the process that was asked for the schema, if no call took it.
    fn stop_spare(&self) {
        let spare = self.spare.lock().ok().and_then(|mut s| s.take());
        if let Some(asked) = spare {
            self.runtime.block(async move { asked.stop().await });
        }
    }

    /// Another process of this provider, for another configuration of it.
    /// The schema is known: as in Terraform, it is asked for again only
    /// when the provider needs the call before any other, and not read
    /// again either way.
    fn again(&self) -> Result<PluginDriver, StartError> {
        let runtime = Arc::new(Runtime::new().map_err(StartError::Runtime)?);
        Ok(PluginDriver {
            name: self.name.clone(),
            address: self.address.clone(),
            launch: self.launch.clone(),
            runtime,
            process: Default::default(),
            stopping: Default::default(),
            spare: self.spare.clone(),
            package: self.package.clone(),
            schemas: self.schemas.clone(),
            part: self.part,
            whole: Default::default(),
            moves: self.moves,
            schema_optional: self.schema_optional,
            configured: Default::default(),
            on_use: Default::default(),
        })
    }

    /// Configured, if its configuration waits for the first call that
    /// needs one (`configure_on_use`). Held while configuring, so calls
    /// made at once wait for it; a refused configuration stays waiting
    /// and is refused to each call.
    pub(crate) fn ready(&self) -> Result<(), DriverError> {
        let mut waiting = self.on_use.lock().unwrap_or_else(|p| p.into_inner());
        let Some(config) = waiting.take() else {
            return Ok(());
        };
        self.configure(&config)
            .inspect_err(|_| *waiting = Some(config))
    }

    /// The provider's address, `registry.terraform.io/hashicorp/aws`.
    pub(crate) fn address(&self) -> &str {
        &self.address
    }

    pub(crate) fn kind(&self, type_name: &str, mode: TypeMode) -> Result<&Kind, DriverError> {
        match self.lookup(mode, type_name) {
            Some(Ok(kind)) => Ok(kind),
            Some(Err(e)) => Err(DriverError::InvalidConfig {
                type_name: type_name.to_string(),
                detail: e.to_string(),
            }),
            None => Err(DriverError::UnknownType {
                driver: self.name.clone(),
                type_name: type_name.to_string(),
            }),
        }
    }

    /// One call to the provider from a plain thread.
    pub(crate) fn call<T: Send + 'static>(
        &self,
        operation: &str,
        f: impl FnOnce(
                Arc<Provider>,
            )
                -> std::pin::Pin<Box<dyn Future<Output = Result<T, RpcError>> + Send>>
            + Send
            + 'static,
    ) -> Result<T, DriverError> {
        let (running, op) = (self.running(), operation.to_string());
        self.runtime
            .block(async move {
                let provider = running.await.map_err(|e| start_failed(&op, e))?;
                f(provider).await.map_err(|e| rpc_failed(&op, e))
            })
            .ok_or_else(|| stopped(operation))?
    }

    /// One call to the provider from the engine's runtime.
    pub(crate) async fn call_async<T: Send + 'static>(
        &self,
        operation: &str,
        f: impl FnOnce(
                Arc<Provider>,
            )
                -> std::pin::Pin<Box<dyn Future<Output = Result<T, RpcError>> + Send>>
            + Send
            + 'static,
    ) -> Result<T, DriverError> {
        let (running, op) = (self.running(), operation.to_string());
        self.runtime
            .run(async move {
                let provider = running.await.map_err(|e| start_failed(&op, e))?;
                f(provider).await.map_err(|e| rpc_failed(&op, e))
            })
            .await
            .ok_or_else(|| stopped(operation))?
    }

    pub(crate) async fn read_one(
        &self,
        type_name: &str,
        object: &Stored,
    ) -> Result<Option<Stored>, DriverError> {
        self.ready()?;
        let kind = self.kind(type_name, TypeMode::Managed)?;
        let operation = format!("reading {type_name}");
        let request = v6::read_resource::Request {
            type_name: type_name.to_string(),
            current_state: dynamic(&object.value, &kind.ty)?,
            private: object.kept.private.clone(),
            provider_meta: None,
            client_capabilities: capabilities(),
            current_identity: identity::to_wire(&object.kept, kind.identity.as_ref())?,
        };
        let r = self
            .call_async(&operation, |p| {
                Box::pin(async move { p.read_resource(request).await })
            })
            .await?;
        check(&operation, &r.diagnostics)?;
        let now = value(r.new_state.as_ref(), &kind.ty, &operation)?;
        let at = (self.address.as_str(), Moment::Refresh);
        refuse_values(&kind.schema, &now, at, &operation)?;
        let identity = self.identity_of(r.new_identity.as_ref(), kind, type_name, &operation)?;
        Ok((!now.is_null()).then_some(Stored {
            value: now,
            kept: identity::kept(r.private, identity),
        }))
    }

    async fn apply(&self, req: ApplyRequest<'_>) -> Result<Option<Stored>, ApplyFailed> {
        self.ready()?;
        let kind = self.kind(req.type_name, TypeMode::Managed)?;
        let null = Value::Null(kind.ty.clone());
        let operation = match (req.prior, req.planned) {
            (None, _) => format!("creating {}", req.type_name),
            (Some(_), Some(_)) => format!("updating {}", req.type_name),
            (Some(_), None) => format!("deleting {}", req.type_name),
        };
        let request = v6::apply_resource_change::Request {
            type_name: req.type_name.to_string(),
            prior_state: dynamic(req.prior.unwrap_or(&null), &kind.ty)?,
            planned_state: dynamic(req.planned.unwrap_or(&null), &kind.ty)?,
            config: dynamic(
                if req.planned.is_some() {
                    req.config
                } else {
                    &null
                },
                &kind.ty,
            )?,
            planned_private: req.kept.private.clone(),
            provider_meta: None,
            planned_identity: identity::to_wire(req.kept, kind.identity.as_ref())?,
        };
        let r = self
            .call_async(&operation, |p| {
                Box::pin(async move { p.apply_resource_change(request).await })
            })
            .await?;
        let now = value(r.new_state.as_ref(), &kind.ty, &operation)?;
        // An object made or changed with a value where none may be is
        // kept without it, tainted, rather than lost (Terraform loses it).
        let leaked = refuse_values(
            &kind.schema,
            &now,
            (self.address.as_str(), Moment::Apply),
            &operation,
        );
        let identity = self.identity_of(r.new_identity.as_ref(), kind, req.type_name, &operation);
        let (identity, leaked) = match identity {
            Ok(identity) => (identity, leaked),
            Err(e) => (None, leaked.and(Err(e))),
        };
        let now = (!now.is_null()).then_some(Stored {
            value: without_values(&kind.schema, &now),
            kept: identity::kept(r.private, identity),
        });
        match leaked.and_then(|()| check(&operation, &r.diagnostics)) {
            Ok(()) => Ok(now),
            Err(error) => Err(ApplyFailed { error, left: now }),
        }
    }
}

impl PluginDriver {
    /// A create or update asked for without its configuration or private
    /// data (the engine's paths for native drivers; plugin changes come
    /// through `apply_change`): the planned object stands in for both.
    async fn apply_plainly(
        &self,
        type_name: &str,
        prior: Option<&Value>,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let req = ApplyRequest {
            type_name,
            prior,
            planned: Some(planned),
            config: planned,
            kept: &Kept::default(),
        };
        self.apply(req)
            .await
            .map_err(|f| f.error)?
            .map(|s| s.value)
            .ok_or_else(|| DriverError::Api {
                operation: format!("applying {type_name}"),
                detail: "the provider returned no object".into(),
                retryable: false,
            })
    }
}

fn attr_path(p: &v6::AttributePath) -> AttrPath {
    p.steps
        .iter()
        .filter_map(|s| match s.selector.as_ref()? {
            Selector::AttributeName(a) => Some(a.clone()),
            Selector::ElementKeyString(k) => Some(k.clone()),
            Selector::ElementKeyInt(i) => Some(i.to_string()),
        })
        .collect()
}

#[async_trait]
impl Driver for PluginDriver {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider_address(&self) -> String {
        format!("provider[\"{}\"]", self.address)
    }

    /// A type's schema, converted when first asked for.
    fn schema(&self, mode: TypeMode, type_name: &str) -> Option<&ResourceSchema> {
        Some(&self.lookup(mode, type_name)?.ok()?.schema)
    }

    fn type_names(&self, mode: TypeMode) -> Vec<String> {
        // A saved plan's pack names every type, its schema or not.
        self.schemas.names(mode)
    }

    fn used_schemas(&self) -> Option<UsedSchemas> {
        Some(UsedSchemas {
            package: self.package.clone()?,
            packed: self.schemas.used(),
        })
    }

    fn functions(&self) -> &BTreeMap<String, FunctionSig> {
        &self.schemas.functions
    }

    /// What the provider's delete only pretends to remove, known by type.
    fn lasting(&self, type_name: &str, prior: &Value) -> Option<String> {
        strata_provider::lasting::known(&self.address, type_name, prior)
    }

    /// `CallFunction`: each argument encoded by its parameter's type, the
    /// result read by the return type.
    fn call_function(&self, name: &str, args: Vec<Value>) -> Result<Value, FunctionFailure> {
        let sig = self.schemas.functions.get(name).ok_or_else(|| {
            FunctionFailure::new(format!("the provider offers no function named {name:?}"))
        })?;
        let broken = |e: DriverError| FunctionFailure::new(e.to_string());
        let mut arguments = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let ty = sig.param(i).map_or(Type::Dynamic, |p| p.ty.clone());
            arguments.extend(dynamic(a, &ty).map_err(broken)?);
        }
        let operation = format!("calling the function {name}");
        let request = v6::call_function::Request {
            name: name.to_string(),
            arguments,
        };
        let r = self
            .call(&operation, |p| {
                Box::pin(async move { p.call_function(request).await })
            })
            .map_err(broken)?;
        if let Some(e) = r.error {
            return Err(FunctionFailure {
                text: e.text,
                argument: e.function_argument.and_then(|i| usize::try_from(i).ok()),
            });
        }
        value(r.result.as_ref(), &sig.returns, &operation).map_err(broken)
    }

    fn describe(&self) -> Option<Result<serde_json::Value, DriverError>> {
        // Asked again rather than kept: only `providers schema` wants the
        // provider's own words, and a large provider's schema is large.
        let described = self
            .call("reading the provider's schema", |p| {
                Box::pin(async move { p.get_provider_schema().await })
            })
            .map(|r| crate::describe::provider_json(&r));
        let identities = self.schemas.identities();
        Some(described.map(|d| crate::describe::with_identities(d, identities)))
    }

    fn unusable(&self, type_name: &str, mode: TypeMode) -> Option<String> {
        let e = self.lookup(mode, type_name)?.err()?;
        Some(e.to_string())
    }

    fn provider_schema(&self) -> ResourceSchema {
        self.schemas.provider.schema.clone()
    }

    fn configure_on_use(&self, config: &Value) -> Result<(), DriverError> {
        *self.on_use.lock().unwrap_or_else(|p| p.into_inner()) = Some(config.clone());
        Ok(())
    }

    fn configure(&self, config: &Value) -> Result<(), DriverError> {
        let ty = &self.schemas.provider.ty;
        let given = dynamic(config, ty)?;
        let encoded = given
            .as_ref()
            .map(|d| d.msgpack.clone())
            .unwrap_or_default();
        let mut configured = self.configured.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((c, _)) = configured.as_ref() {
            if *c == encoded {
                return Ok(());
            }
        }
        let operation = format!("configuring provider {}", self.name);
        let validate = v6::validate_provider_config::Request {
            config: given.clone(),
        };
        let r = self.call(&operation, |p| {
            Box::pin(async move { p.validate_provider_config(validate).await })
        })?;
        check(&operation, &r.diagnostics)?;
        let configure = v6::configure_provider::Request {
            terraform_version: crate::TERRAFORM_VERSION.to_string(),
            config: given,
            client_capabilities: capabilities(),
        };
        let r = self.call(&operation, |p| {
            Box::pin(async move { p.configure_provider(configure).await })
        })?;
        check(&operation, &r.diagnostics)?;
        *configured = Some((encoded, config.clone()));
        Ok(())
    }

    fn ready(&self) -> Result<(), DriverError> {
        PluginDriver::ready(self)
    }

    fn holds_a_process(&self) -> bool {
        true
    }

    /// The process stopped in the background; its configuration waits,
    /// as one nothing used yet, for a call after this one, which starts
    /// and configures another process.
    fn release(&self) {
        let cell = self.process.clone();
        let Some(Some(provider)) = self.runtime.block(async move { cell.lock().await.take() })
        else {
            return;
        };
        let configured = self
            .configured
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((_, config)) = configured {
            let mut waiting = self.on_use.lock().unwrap_or_else(|p| p.into_inner());
            waiting.get_or_insert(config);
        }
        if let Some(stop) = self.runtime.spawn(async move { provider.stop().await }) {
            self.stopping
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(stop);
        }
    }

    fn validate(
        &self,
        type_name: &str,
        mode: TypeMode,
        config: &Value,
    ) -> Result<Vec<Problem>, DriverError> {
        let kind = self.kind(type_name, mode)?;
        let operation = format!("validating {type_name}");
        let config = dynamic(config, &kind.ty)?;
        let type_name = type_name.to_string();
        let diagnostics = match mode {
            TypeMode::Data => {
                let request = v6::validate_data_resource_config::Request { type_name, config };
                self.call(&operation, |p| {
                    Box::pin(async move { p.validate_data_resource_config(request).await })
                })?
                .diagnostics
            }
            TypeMode::Ephemeral => {
                let request = v6::validate_ephemeral_resource_config::Request { type_name, config };
                self.call(&operation, |p| {
                    Box::pin(async move { p.validate_ephemeral_resource_config(request).await })
                })?
                .diagnostics
            }
            TypeMode::Action => {
                let request = v6::validate_action_config::Request { type_name, config };
                self.call(&operation, |p| {
                    Box::pin(async move { p.validate_action_config(request).await })
                })?
                .diagnostics
            }
            TypeMode::List => {
                let request = v6::validate_list_resource_config::Request {
                    type_name,
                    config,
                    include_resource_object: None,
                    limit: None,
                };
                self.call(&operation, |p| {
                    Box::pin(async move { p.validate_list_resource_config(request).await })
                })?
                .diagnostics
            }
            TypeMode::Managed => {
                let request = v6::validate_resource_config::Request {
                    type_name,
                    config,
                    client_capabilities: capabilities(),
                };
                self.call(&operation, |p| {
                    Box::pin(async move { p.validate_resource_config(request).await })
                })?
                .diagnostics
            }
        };
        Ok(problems(&diagnostics))
    }

    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        self.ready()?;
        let kind = self.kind(req.type_name, TypeMode::Managed)?;
        let operation = format!("planning {}", req.type_name);
        let null = Value::Null(kind.ty.clone());
        let prior = req.prior.unwrap_or(&null);
        let (prior_plain, _) = prior.clone().unmark_deep();
        let (config_plain, _) = req.config.clone().unmark_deep();
        let proposed = proposed_new(&kind.block, &prior_plain, &config_plain);
        let request = v6::plan_resource_change::Request {
            type_name: req.type_name.to_string(),
            prior_state: dynamic(prior, &kind.ty)?,
            proposed_new_state: dynamic(&proposed, &kind.ty)?,
            config: dynamic(req.config, &kind.ty)?,
            prior_private: req.prior_kept.private.clone(),
            provider_meta: None,
            client_capabilities: capabilities(),
            prior_identity: identity::to_wire(req.prior_kept, kind.identity.as_ref())?,
        };
        let r = self.call(&operation, |p| {
            Box::pin(async move { p.plan_resource_change(request).await })
        })?;
        check(&operation, &r.diagnostics)?;
        let planned = value(r.planned_state.as_ref(), &kind.ty, &operation)?;
        let at = (self.address.as_str(), Moment::Planning);
        refuse_values(&kind.schema, &planned, at, &operation)?;
        let identity = self.planned_identity(&r, kind, req.type_name, &operation)?;
        Ok(Planned {
            planned,
            requires_replace: r.requires_replace.iter().map(attr_path).collect(),
            kept: identity::kept(r.planned_private, identity),
        })
    }

    async fn read(
        &self,
        type_name: &str,
        instances: &[Value],
    ) -> Result<Vec<Option<Value>>, DriverError> {
        let stored: Vec<Stored> = instances
            .iter()
            .map(|v| Stored {
                value: v.clone(),
                kept: Kept::default(),
            })
            .collect();
        // Terraform's default parallelism, where no command says.
        let read = self
            .read_stored(type_name, &stored, &strata_provider::Slots::new(10))
            .await?;
        Ok(read.into_iter().map(|s| s.map(|s| s.value)).collect())
    }

    async fn read_stored(
        &self,
        type_name: &str,
        objects: &[Stored],
        slots: &strata_provider::Slots,
    ) -> Result<Vec<Option<Stored>>, DriverError> {
        let reads = objects.iter().map(|o| async move {
            let _slot = slots.take().await;
            self.read_one(type_name, o).await
        });
        futures::future::try_join_all(reads).await
    }

    async fn apply_change(
        &self,
        req: ApplyRequest<'_>,
    ) -> Option<Result<Option<Stored>, ApplyFailed>> {
        Some(self.apply(req).await)
    }

    async fn create(
        &self,
        type_name: &str,
        planned: &Value,
        _tags: &Tags,
    ) -> Result<Value, DriverError> {
        self.apply_plainly(type_name, None, planned).await
    }

    async fn update(
        &self,
        type_name: &str,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        self.apply_plainly(type_name, Some(prior), planned).await
    }

    async fn delete(&self, type_name: &str, prior: &Value) -> Result<(), DriverError> {
        let null = Value::null();
        let req = ApplyRequest {
            type_name,
            prior: Some(prior),
            planned: None,
            config: &null,
            kept: &Kept::default(),
        };
        self.apply(req).await.map(|_| ()).map_err(|f| f.error)
    }

    async fn import(&self, type_name: &str, id: &str) -> Result<Option<Value>, DriverError> {
        let by = ImportBy::Id(id.to_string());
        Ok(self.import_by(type_name, &by).await?.map(|s| s.value))
    }

    async fn import_object(
        &self,
        type_name: &str,
        by: &ImportBy,
    ) -> Result<Option<Stored>, DriverError> {
        self.import_by(type_name, by).await
    }

    async fn list(&self, req: ListRequest<'_>) -> Result<Vec<Listed>, DriverError> {
        self.list_objects(req).await
    }

    fn plan_action(&self, req: ActionRequest<'_>) -> Result<Vec<Problem>, DriverError> {
        self.plan_action_call(req)
    }

    async fn invoke_action(&self, req: ActionRequest<'_>, progress: Progress) -> Invoked {
        self.invoke_action_call(req, progress).await
    }

    fn identity_schema(&self, type_name: &str) -> Option<&IdentitySchema> {
        self.kind(type_name, TypeMode::Managed)
            .ok()?
            .identity
            .as_ref()
    }

    async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, DriverError> {
        self.ready()?;
        let kind = self.kind(type_name, TypeMode::Data)?;
        let operation = format!("reading data source {type_name}");
        let request = v6::read_data_source::Request {
            type_name: type_name.to_string(),
            config: dynamic(config, &kind.ty)?,
            provider_meta: None,
            client_capabilities: capabilities(),
        };
        let r = self
            .call_async(&operation, |p| {
                Box::pin(async move { p.read_data_source(request).await })
            })
            .await?;
        check(&operation, &r.diagnostics)?;
        value(r.state.as_ref(), &kind.ty, &operation)
    }

    fn upgrade(
        &self,
        type_name: &str,
        version: u64,
        attributes: &str,
    ) -> Option<Result<Value, DriverError>> {
        let kind = match self.kind(type_name, TypeMode::Managed) {
            Ok(k) => k,
            Err(e) => return Some(Err(e)),
        };
        let operation = format!("upgrading a stored {type_name}");
        let request = v6::upgrade_resource_state::Request {
            type_name: type_name.to_string(),
            version: i64::try_from(version).unwrap_or(i64::MAX),
            raw_state: Some(v6::RawState {
                json: attributes.as_bytes().to_vec(),
                flatmap: Default::default(),
            }),
        };
        let upgraded = self
            .call(&operation, |p| {
                Box::pin(async move { p.upgrade_resource_state(request).await })
            })
            .and_then(|r| {
                check(&operation, &r.diagnostics)?;
                value(r.upgraded_state.as_ref(), &kind.ty, &operation)
            });
        Some(upgraded)
    }

    fn upgrade_identity(
        &self,
        type_name: &str,
        stored: &Identity,
    ) -> Option<Result<Identity, DriverError>> {
        self.upgrade_identity_of(type_name, stored)
    }

    /// `MoveResourceState`, for providers that say they take moves.
    fn move_state(&self, req: MoveRequest<'_>) -> Option<Result<Stored, DriverError>> {
        if !self.moves {
            return None;
        }
        let kind = match self.kind(req.target_type, TypeMode::Managed) {
            Ok(k) => k,
            Err(e) => return Some(Err(e)),
        };
        let operation = format!("moving a {} to {}", req.source_type, req.target_type);
        let request = v6::move_resource_state::Request {
            source_provider_address: req.source_provider.to_string(),
            source_type_name: req.source_type.to_string(),
            source_schema_version: i64::try_from(req.source_schema_version).unwrap_or(i64::MAX),
            source_state: Some(v6::RawState {
                json: req.source_json.as_bytes().to_vec(),
                flatmap: Default::default(),
            }),
            target_type_name: req.target_type.to_string(),
            source_private: req.source_kept.private.clone(),
            source_identity: req.source_kept.identity.as_ref().map(|i| v6::RawState {
                json: i.value.to_string().into_bytes(),
                flatmap: Default::default(),
            }),
            source_identity_schema_version: req
                .source_kept
                .identity
                .as_ref()
                .map_or(0, |i| i64::try_from(i.version).unwrap_or(i64::MAX)),
        };
        let moved = self
            .call(&operation, |p| {
                Box::pin(async move { p.move_resource_state(request).await })
            })
            .and_then(|r| {
                check(&operation, &r.diagnostics)?;
                let value = value(r.target_state.as_ref(), &kind.ty, &operation)?;
                let identity = self.identity_of(
                    r.target_identity.as_ref(),
                    kind,
                    req.target_type,
                    &operation,
                )?;
                Ok(Stored {
                    value,
                    kept: identity::kept(r.target_private, identity),
                })
            });
        Some(moved)
    }

    /// A second configuration of the provider (an aliased `provider`
    /// block) is a second process, as in Terraform.
    fn another(&self) -> Option<Result<Arc<dyn Driver>, DriverError>> {
        Some(match self.again() {
            Ok(d) => Ok(Arc::new(d)),
            Err(e) => Err(DriverError::Api {
                operation: format!("starting another process of {}", self.address),
                detail: e.to_string(),
                retryable: false,
            }),
        })
    }
}

#[async_trait]
impl strata_provider::Recovery for PluginDriver {
    /// Plugin providers put no strata tags on what they make.
    async fn find_tagged(&self, _type_name: &str, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }
}

impl strata_provider::Billing for PluginDriver {}

#[cfg(test)]
mod tests;
