//! Drivers built into the engine: `terraform_data`, with Terraform's own
//! semantics, so the same `.tf` files run under Terraform and strata; the
//! offline utility providers (`random`, `null`, `time`, `local`, crate
//! `strata-utility`), which need no cloud and no download; and the
//! registry that finds the driver of a resource type.

pub mod doubles;
mod held;
pub mod offline;
pub mod remote_state;
pub mod terraform_data;

pub use held::refused;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};
use strata_provider::{Driver, FunctionParam, FunctionSig, ResourceSchema, TypeMode};
use strata_state::model::{Address, Mode};

/// The drivers a run may use: the [`Registry`] of which serves what
/// (its lookups are this type's, through `Deref`), and what the run
/// configures as it walks (aliased `provider` blocks, found by their
/// provider address, `provider["…/kubernetes"].east`; configurations
/// still waiting for values).
#[derive(Clone)]
pub struct Drivers {
    registry: Registry,
    configured: Configured,
}

/// Which driver serves each type: set up once, before a command runs
/// (built-in drivers, then the plugins the CLI starts), never changed by
/// a walk.
#[derive(Clone)]
pub struct Registry {
    list: Vec<Arc<dyn Driver>>,
    /// Provider plugins that serve, over a native driver of the same
    /// provider, the types named here (data sources as `data.TYPE`).
    routes: Vec<(Arc<dyn Driver>, BTreeSet<String>)>,
    /// Plugins serving every type of a provider that has a native driver.
    whole: BTreeSet<usize>,
    /// A test's stand-ins for single objects and module calls.
    doubles: Option<Arc<dyn doubles::Doubles>>,
    /// Where `terraform_remote_state` reads states (none: it cannot).
    remote_states: Option<Arc<dyn remote_state::StateSource>>,
}

/// What one run configures as its walk goes, shared by its clones (the
/// walk's tasks).
#[derive(Clone, Default)]
struct Configured {
    /// Aliased configurations by the address of the driver they were
    /// made from (a native driver and a plugin share a provider address)
    /// and their own address.
    aliases: Arc<RwLock<Aliases>>,
    /// Provider configurations not known yet (they use resources'
    /// attributes), by address.
    deferred: Arc<RwLock<BTreeMap<String, Deferred>>>,
    /// Configurations waiting for their first use ([`held`]).
    held: Arc<held::Holding>,
}

/// A provider configuration waiting for values known later in the walk.
#[derive(Clone, Debug)]
pub struct Deferred {
    /// The index of its root `provider` block.
    pub block: usize,
    /// For an instance of a block with `for_each`, its `each.key` and
    /// `each.value`.
    pub each: Option<(crate::lang::value::Value, crate::lang::value::Value)>,
}

impl std::ops::Deref for Drivers {
    type Target = Registry;

    fn deref(&self) -> &Registry {
        &self.registry
    }
}

/// Aliased driver instances by the identity of the driver they were made
/// from and their provider address.
type Aliases = BTreeMap<(usize, String), Arc<dyn Driver>>;

/// A driver's identity, for telling two drivers of one provider apart
/// (a native driver and a plugin share a default configuration's address).
pub fn identity(driver: &Arc<dyn Driver>) -> usize {
    Arc::as_ptr(driver) as *const () as usize
}

/// A new instance of `d`, once per driver (`made` holds those made so
/// far), or `d` itself when it cannot make one.
fn renewed(d: &Arc<dyn Driver>, made: &mut Vec<(usize, Arc<dyn Driver>)>) -> Arc<dyn Driver> {
    if let Some((_, new)) = made.iter().find(|(old, _)| *old == identity(d)) {
        return new.clone();
    }
    let new = match d.another() {
        Some(Ok(new)) => new,
        _ => d.clone(),
    };
    made.push((identity(d), new.clone()));
    new
}

/// The source address of the provider a driver is:
/// `provider["registry.terraform.io/hashicorp/aws"]` → the inner part.
pub fn source_of(driver: &dyn Driver) -> String {
    let address = driver.provider_address();
    strata_state::provider_of_config(&address).to_string()
}

/// The builtin provider's source address.
pub const TERRAFORM: &str = "terraform.io/builtin/terraform";

/// The builtin provider's functions (`provider::terraform::…`, by their
/// short names), which the language evaluates itself: their signatures,
/// as `providers schema -json` lists them.
pub fn terraform_functions() -> BTreeMap<String, FunctionSig> {
    const PREFIX: &str = "provider::terraform::";
    let param = |p: &crate::funcs::Param| FunctionParam {
        name: p.name.to_string(),
        ty: p.ty.clone(),
        allow_null: p.allow_null,
        allow_unknown: p.allow_unknown,
    };
    crate::funcs::names()
        .into_iter()
        .filter_map(|name| {
            let def = crate::funcs::lookup(name)?;
            let sig = FunctionSig {
                params: def.params.iter().map(param).collect(),
                variadic: def.variadic.as_ref().map(param),
                returns: def.ret.clone(),
            };
            Some((name.strip_prefix(PREFIX)?.to_string(), sig))
        })
        .collect()
}

/// What a provider plugin serves beside a native driver of the same
/// provider.
pub enum Route {
    /// Every type: the native driver is left out of the run.
    Whole,
    /// These types (data sources as `data.TYPE`); the native driver
    /// serves the rest.
    Types(BTreeSet<String>),
}

/// The provider address of `driver`'s configuration `alias` (the default
/// one when `None`), as state files record it.
pub fn provider_address(driver: &dyn Driver, alias: Option<&str>) -> String {
    match alias {
        Some(a) => format!("{}.{a}", driver.provider_address()),
        None => driver.provider_address(),
    }
}

impl Registry {
    /// The plugin routed to serve `key` (`TYPE` or `data.TYPE`).
    fn routed(&self, key: &str) -> Option<&Arc<dyn Driver>> {
        self.routes
            .iter()
            .find(|(_, types)| types.contains(key))
            .map(|(d, _)| d)
    }

    /// The driver of a managed resource type and its schema.
    /// The driver configured by `provider "NAME"` blocks.
    pub fn named(&self, name: &str) -> Option<&Arc<dyn Driver>> {
        self.list.iter().find(|d| d.name() == name)
    }

    /// A driver's provider that declares `type_name` but whose schema for
    /// it strata cannot use, with why: "the provider P declares it, but…".
    pub fn unusable(&self, type_name: &str, mode: Mode) -> Option<String> {
        self.list.iter().find_map(|d| {
            let why = d.unusable(type_name, type_mode(mode))?;
            Some(format!(
                "The provider {} declares it, but strata cannot use it: {why}.",
                source_of(d.as_ref())
            ))
        })
    }

    /// Every driver serving the provider at `address`: its own, then a
    /// plugin routed the types that one lacks.
    pub fn serving(&self, address: &str) -> Vec<&Arc<dyn Driver>> {
        let routed = self.routes.iter().map(|(d, _)| d);
        self.list
            .iter()
            .chain(routed)
            .filter(|d| d.provider_address() == address)
            .collect()
    }

    /// The plugins routed types of the provider at `address`, each with
    /// the types it serves over the native driver (data sources as
    /// `data.TYPE`).
    pub fn routes_of<'s>(
        &'s self,
        address: &'s str,
    ) -> impl Iterator<Item = (&'s Arc<dyn Driver>, &'s BTreeSet<String>)> {
        self.routes
            .iter()
            .filter(move |(d, _)| d.provider_address() == address)
            .map(|(d, types)| (d, types))
    }

    /// Every driver.
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn Driver>> {
        self.list.iter()
    }

    pub fn resource(&self, type_name: &str) -> Option<(&Arc<dyn Driver>, &ResourceSchema)> {
        let routed = self.routed(type_name).into_iter();
        routed
            .chain(&self.list)
            .find_map(|d| d.schema(TypeMode::Managed, type_name).map(|s| (d, s)))
    }

    /// The driver of a data source type and its schema.
    pub fn data(&self, type_name: &str) -> Option<(&Arc<dyn Driver>, &ResourceSchema)> {
        let routed = self.routed(&format!("data.{type_name}")).into_iter();
        routed
            .chain(&self.list)
            .find_map(|d| d.schema(TypeMode::Data, type_name).map(|s| (d, s)))
    }

    /// The driver of an ephemeral resource type and its schema.
    pub fn ephemeral(&self, type_name: &str) -> Option<(&Arc<dyn Driver>, &ResourceSchema)> {
        let routed = self.routed(&format!("ephemeral.{type_name}")).into_iter();
        routed
            .chain(&self.list)
            .find_map(|d| d.schema(TypeMode::Ephemeral, type_name).map(|s| (d, s)))
    }

    /// The driver and schema of a type of `mode`.
    pub fn of_mode(
        &self,
        mode: Mode,
        type_name: &str,
    ) -> Option<(&Arc<dyn Driver>, &ResourceSchema)> {
        match mode {
            Mode::Managed => self.resource(type_name),
            Mode::Data => self.data(type_name),
            Mode::Ephemeral => self.ephemeral(type_name),
        }
    }

    /// What provider plugins serve in place of native drivers, for the
    /// plan to say: each provider's plugin, with the types it serves
    /// (`None`: every type).
    pub fn plugin_served(&self) -> Vec<(String, Option<Vec<String>>)> {
        let whole = self
            .list
            .iter()
            .filter(|d| self.whole.contains(&identity(d)))
            .map(|d| (source_of(d.as_ref()), None));
        let routed = self
            .routes
            .iter()
            .map(|(d, types)| (source_of(d.as_ref()), Some(types.iter().cloned().collect())));
        whole.chain(routed).collect()
    }
}

impl Drivers {
    /// The driver that serves action type `type_name`, configured, and
    /// its provider configuration's address: the `provider` (local name,
    /// alias) its block names, else the one its type's prefix implies;
    /// `None` when no driver has that name.
    pub fn for_action(
        &self,
        type_name: &str,
        provider: Option<(&str, Option<&str>)>,
    ) -> Option<(Arc<dyn Driver>, String)> {
        let (local, alias) =
            provider.unwrap_or((type_name.split('_').next().unwrap_or_default(), None));
        let base = self.named(local)?;
        let address = provider_address(&**base, alias);
        let driver = self.by_address(&address).unwrap_or_else(|| base.clone());
        Some((driver, address))
    }

    /// The drivers every build has.
    pub fn builtin() -> Drivers {
        let terraform = Arc::new(terraform_data::TerraformData::default()) as Arc<dyn Driver>;
        Drivers::of(Registry {
            list: std::iter::once(terraform)
                .chain(strata_utility::providers())
                .collect(),
            routes: Vec::new(),
            whole: BTreeSet::new(),
            doubles: None,
            remote_states: None,
        })
    }

    /// A fresh run over `registry`: nothing configured yet.
    fn of(registry: Registry) -> Drivers {
        Drivers {
            registry,
            configured: Configured::default(),
        }
    }

    /// The same drivers, offline (see [`offline`]).
    pub fn offline(&self) -> Drivers {
        Drivers::of(Registry {
            list: self
                .list
                .iter()
                .map(|d| Arc::new(offline::Offline(d.clone())) as Arc<dyn Driver>)
                .collect(),
            routes: self
                .routes
                .iter()
                .map(|(d, types)| {
                    let d = Arc::new(offline::Offline(d.clone())) as Arc<dyn Driver>;
                    (d, types.clone())
                })
                .collect(),
            // Offline copies serve no plan a note is shown for.
            whole: BTreeSet::new(),
            doubles: self.doubles.clone(),
            // Offline copies read no state.
            remote_states: None,
        })
    }

    /// The builtin driver reading `terraform_remote_state` through
    /// `states` (the command gives the backends; see [`remote_state`]).
    pub fn with_remote_states(mut self, states: Arc<dyn remote_state::StateSource>) -> Drivers {
        self.registry.remote_states = Some(states);
        self
    }

    /// Adds a driver; tests use this to plug in drivers of their own.
    pub fn with(mut self, driver: Arc<dyn Driver>) -> Drivers {
        self.registry.list.push(driver);
        self
    }

    /// Adds a provider plugin for a provider strata also has a native
    /// driver for, serving what `route` says.
    pub fn with_plugin(mut self, plugin: Arc<dyn Driver>, route: Route) -> Drivers {
        let r = &mut self.registry;
        match route {
            Route::Whole => {
                let address = plugin.provider_address();
                r.list.retain(|d| d.provider_address() != address);
                // A plugin routed some of the provider's types (those the
                // native driver lacks) goes too: a mock stands in for all.
                r.routes.retain(|(d, _)| d.provider_address() != address);
                r.whole.insert(identity(&plugin));
                r.list.push(plugin);
            }
            Route::Types(types) => {
                r.list.push(plugin.clone());
                r.routes.push((plugin, types));
            }
        }
        self
    }

    /// The same drivers as new, unconfigured instances (each driver that
    /// can make one; the others as they are): what a test run configures
    /// for itself, as Terraform starts its providers anew for each run —
    /// a driver keeps what its first configuration made (clients for a
    /// region), so a run with other provider settings needs its own.
    pub fn fresh(&self) -> Drivers {
        let mut made: Vec<(usize, Arc<dyn Driver>)> = Vec::new();
        let list = self.list.iter().map(|d| renewed(d, &mut made)).collect();
        let routes = self
            .routes
            .iter()
            .map(|(d, types)| (renewed(d, &mut made), types.clone()))
            .collect();
        let whole = self
            .whole
            .iter()
            .filter_map(|i| made.iter().find(|(old, _)| old == i))
            .map(|(_, new)| identity(new))
            .collect();
        Drivers::of(Registry {
            list,
            routes,
            whole,
            doubles: self.doubles.clone(),
            remote_states: self.remote_states.clone(),
        })
    }

    /// The same drivers with a test's stand-ins (see [`doubles`]).
    pub fn with_doubles(mut self, doubles: Arc<dyn doubles::Doubles>) -> Drivers {
        self.registry.doubles = Some(doubles);
        self
    }

    /// The driver serving instance `addr`: a test's stand-in when it has
    /// one; for a `terraform_remote_state` data source, the builtin driver
    /// reading states as that data source (its encryption target is found
    /// by its address); else `real`.
    pub fn at(&self, addr: &Address, real: &Arc<dyn Driver>) -> Arc<dyn Driver> {
        if let Some(d) = self.doubles.as_ref().and_then(|d| d.driver_at(addr, real)) {
            return d;
        }
        match &self.remote_states {
            Some(states) if remote_state::reads(addr) && real.name() == "terraform" => Arc::new(
                terraform_data::TerraformData::reading(states.clone(), remote_state::name(addr)),
            ),
            _ => real.clone(),
        }
    }

    /// Whether instance `addr` has a test's stand-in.
    pub fn stood_in(&self, addr: &Address) -> bool {
        self.doubles.as_ref().is_some_and(|d| d.stands_in(addr))
    }

    /// A test's stand-ins, for the walk's module calls.
    pub fn doubles(&self) -> Option<Arc<dyn doubles::Doubles>> {
        self.doubles.clone()
    }

    /// Marks the configuration at `address` as waiting for values known
    /// later in the walk.
    pub fn defer(&self, address: String, waiting: Deferred) {
        if let Ok(mut d) = self.configured.deferred.write() {
            d.insert(address, waiting);
        }
    }

    /// A configuration still waiting: its block (and instance).
    pub fn deferred(&self, address: &str) -> Option<Deferred> {
        self.configured.deferred.read().ok()?.get(address).cloned()
    }

    /// The configuration at `address` is configured now.
    pub fn undefer(&self, address: &str) {
        if let Ok(mut d) = self.configured.deferred.write() {
            d.remove(address);
        }
    }

    /// Holds the configuration at `address`, given to `driver` with
    /// `configure_on_use`, for its first use; `block` is where a refusal
    /// is told.
    pub fn hold(
        &self,
        driver: &Arc<dyn Driver>,
        address: String,
        block: Option<crate::diag::Span>,
    ) {
        self.configured
            .held
            .hold((identity(driver), address), block);
    }

    /// Configures `driver`'s configuration at `address` now, if it was
    /// held: called before its first call, so a refusal is told once, at
    /// its block (`Err(Some)`); `Err(None)` for the calls after it.
    pub fn ready(
        &self,
        driver: &Arc<dyn Driver>,
        address: &str,
    ) -> Result<(), Option<crate::diag::Diag>> {
        // Asked before every instance's call: a driver configured at once
        // holds nothing, and is not looked up.
        if !driver.holds_a_process() {
            return Ok(());
        }
        let key = (identity(driver), address.to_string());
        self.configured.held.ready(key, driver)
    }

    /// The driver instance of a provider configuration, by its address.
    pub fn by_address(&self, address: &str) -> Option<Arc<dyn Driver>> {
        let aliases = self.configured.aliases.read().ok()?;
        if let Some(d) = aliases
            .iter()
            .find(|((_, a), _)| a == address)
            .map(|(_, d)| d)
        {
            return Some(d.clone());
        }
        self.registry
            .list
            .iter()
            .find(|d| d.provider_address() == address)
            .cloned()
    }

    /// Records the driver instance of an aliased provider configuration,
    /// made from `base`.
    pub fn add_alias(&self, base: &Arc<dyn Driver>, address: String, driver: Arc<dyn Driver>) {
        if let Ok(mut all) = self.configured.aliases.write() {
            all.insert((identity(base), address), driver);
        }
    }

    /// The driver instance for a managed (or, with `data`, data source)
    /// type under the provider configuration `provider` (an address as
    /// state records it): the aliased instance when there is one, else
    /// the type's driver; `None` for an instance of a configuration with
    /// `for_each` that this run does not have (its element is gone).
    pub fn configured(
        &self,
        type_name: &str,
        provider: &str,
        mode: Mode,
    ) -> Option<(Arc<dyn Driver>, &ResourceSchema)> {
        let (base, schema) = self.of_mode(mode, type_name)?;
        let key = (identity(base), provider.to_string());
        let aliased = self
            .configured
            .aliases
            .read()
            .ok()
            .and_then(|all| all.get(&key).cloned());
        let keyed = strata_state::split_provider_instance(provider).1.is_some();
        match aliased {
            Some(d) => Some((d, schema)),
            None if keyed => None,
            None => Some((base.clone(), schema)),
        }
    }
}

/// The drivers' name for a configuration's resource mode.
pub fn type_mode(mode: Mode) -> strata_provider::TypeMode {
    match mode {
        Mode::Managed => TypeMode::Managed,
        Mode::Data => TypeMode::Data,
        Mode::Ephemeral => TypeMode::Ephemeral,
    }
}

/// What a message calls a type of `mode`.
pub fn mode_noun(mode: Mode) -> &'static str {
    match mode {
        Mode::Managed => "resource type",
        Mode::Data => "data source",
        Mode::Ephemeral => "ephemeral resource type",
    }
}
