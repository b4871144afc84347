//! The contract between the engine and a driver (aws, gcp, azure,
//! kubernetes, and the builtin `terraform_data`).
//!
//! A driver declares a schema per resource type, plans changes to its
//! resources (filling computed attributes with unknowns and saying which
//! changes force replacement), and performs them. `read` takes many
//! instances at once, so a refresh of N resources of one type costs a few
//! API calls rather than N. Everything a driver creates carries [`Tags`]
//! (its strata address and the state lineage), so resources created by a
//! run that crashed can be found and adopted.
//!
//! Drivers depend on this crate and on `strata-value`, never on the engine.

mod action;
pub mod billing;
pub mod budget;
pub mod catalog;
mod change;
pub mod clock;
mod ephemeral;
mod function;
mod kind;
pub mod lasting;
mod list;
pub mod listing;
pub mod money;
mod plan;
pub mod records;
pub mod resend;
pub mod reservation;
mod schema;
pub mod score;
pub mod values;
pub mod wait;

pub use action::{ActionRequest, Invoked, Progress};
pub use change::{
    path_text, problems_text, ApplyFailed, ApplyRequest, Identity, Kept, MoveRequest, PathStep,
    Problem, Stored,
};
pub use ephemeral::{Ephemerals, Opened, Renewed};
pub use function::{FunctionFailure, FunctionParam, FunctionSig};
pub use kind::{Cloud, Kind, Kinds};
pub use list::{ListRequest, Listed};
pub use plan::plan_by_schema;
pub use schema::{
    AttributeSchema, BlockNesting, BlockSchema, IdentityAttribute, IdentitySchema, ResourceSchema,
};

use async_trait::async_trait;
use std::collections::BTreeMap;
use strata_value::value::Value;

/// The calls a refresh may have in flight at once, across all the types
/// it reads side by side (Terraform's `-parallelism`).
pub struct Slots(tokio::sync::Semaphore);

impl Slots {
    pub fn new(parallelism: usize) -> Slots {
        Slots(tokio::sync::Semaphore::new(parallelism.max(1)))
    }

    /// Waits for a free slot; it is given back when the guard drops.
    pub async fn take(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        // The semaphore is never closed, so this is always `Some`.
        self.0.acquire().await.ok()
    }
}

/// What a driver's reads answer from (see [`Driver::reads`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// The cloud as it is now: a later read may differ.
    Live,
    /// Fixed answers (a test's mock): a later read gives the same.
    Fixed,
}

/// Which of a provider's families of types a type name is of: managed
/// resources, data sources and ephemeral resources each have their own
/// schemas, and one name may be in more than one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeMode {
    Managed,
    Data,
    Ephemeral,
    /// A list resource's `config` block (protocol 6.10).
    List,
    /// An action's `config` block (protocol 6.11).
    Action,
}

/// The schemas a plugin driver's run used, packed, with the checksum of
/// the package they are of: a saved plan carries them, so that showing or
/// applying it needs no provider to be asked for its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct UsedSchemas {
    /// The package's `h1:` checksum.
    pub package: String,
    pub packed: Vec<u8>,
}

/// What an `import` block names the object it adopts by.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportBy {
    /// The provider's import id.
    Id(String),
    /// An identity object (protocol 6.9), of the type's identity schema.
    /// Boxed: a change holds an `Option<ImportBy>`, and imports are rare.
    Identity(Box<serde_json::Value>),
}

/// Where an attribute lives inside a resource: attribute names and, for
/// nested blocks, element indexes.
pub type AttrPath = Vec<String>;

/// What the engine asks a driver to plan for one resource instance.
#[derive(Debug, Clone)]
pub struct PlanRequest<'a> {
    pub type_name: &'a str,
    /// The instance's current object, `None` when it does not exist yet.
    pub prior: Option<&'a Value>,
    /// The object the configuration asks for; values not known until apply
    /// are unknown.
    pub config: &'a Value,
    /// What the driver kept beside the prior object (see [`Stored`]);
    /// nothing for a new one.
    pub prior_kept: &'a Kept,
}

/// A driver's plan for one instance.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The object after apply, with unknowns where only apply can tell.
    pub planned: Value,
    /// Attributes whose change cannot be made in place.
    pub requires_replace: Vec<AttrPath>,
    /// What to keep beside the planned object until its apply (see
    /// [`Stored`]): private bytes and the planned identity; native
    /// drivers keep nothing.
    pub kept: Kept,
}

/// Labels a driver puts on everything it creates, so a crashed run's
/// resources can be found again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tags {
    /// The resource instance address, `module.net.aws_vpc.main`.
    pub address: String,
    /// The state lineage the resource belongs to.
    pub lineage: String,
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum DriverError {
    #[error("{type_name} is not a resource type of the {driver} driver")]
    #[diagnostic(code(strata::driver::unknown_type))]
    UnknownType { driver: String, type_name: String },

    #[error("invalid configuration for {type_name}: {detail}")]
    #[diagnostic(code(strata::driver::invalid_config))]
    InvalidConfig { type_name: String, detail: String },

    /// A provider plugin's own diagnostics (errors, with the warnings
    /// that came with them), each pointing where it can inside the object.
    #[error("{operation}: {}", problems_text(.problems))]
    #[diagnostic(code(strata::driver::provider))]
    Provider {
        operation: String,
        problems: Vec<Problem>,
    },

    /// The cloud has no capacity for what was asked (an instance type in
    /// a zone, now): another zone, type or time may work. One kind for
    /// every cloud, so the engine can act on it.
    #[error("{operation} failed for lack of capacity {shortage}: {detail}. {}", shortage.advice())]
    #[diagnostic(code(strata::driver::capacity))]
    Capacity {
        operation: String,
        detail: String,
        /// How far the shortage reaches: what trying elsewhere must avoid.
        shortage: Shortage,
    },

    /// A create refused because its object is there already: someone
    /// else's, or (when it carries the create's ownership tags) made by an
    /// earlier attempt of the same call whose answer was lost, which the
    /// engine then adopts.
    #[error("{operation} failed: {detail}")]
    #[diagnostic(code(strata::driver::exists))]
    AlreadyExists { operation: String, detail: String },

    /// The cloud refused or failed; `retryable` says whether trying again
    /// may help (throttling, 5xx).
    #[error("{operation} failed: {detail}")]
    #[diagnostic(code(strata::driver::api))]
    Api {
        operation: String,
        detail: String,
        retryable: bool,
    },
}

/// How far a shortage reaches, as SkyPilot scopes its failovers: a zone
/// out of a machine leaves the region's other zones worth trying; a
/// region's quota or a size the region lacks, the region; a quota over all
/// regions, the cloud. A place is named when the cloud's message names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shortage {
    Zone(Option<String>),
    Region(Option<String>),
    Cloud,
}

impl Shortage {
    /// What to try instead, for the error's text.
    fn advice(&self) -> &'static str {
        match self {
            Shortage::Zone(_) => "The cloud cannot place this instance type in that zone now: try other zones, another instance type, on-demand instead of spot, or a capacity reservation",
            Shortage::Region(_) => "The region cannot give this now (capacity or quota): try another region or instance type, or ask for more quota",
            Shortage::Cloud => "The account's quota over all regions is used up: try another cloud, or ask for more quota",
        }
    }
}

impl std::fmt::Display for Shortage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shortage::Zone(Some(z)) => write!(f, "in zone {z}"),
            Shortage::Zone(None) => f.write_str("in a zone"),
            Shortage::Region(Some(r)) => write!(f, "in region {r}"),
            Shortage::Region(None) => f.write_str("in the region"),
            Shortage::Cloud => f.write_str("in every region"),
        }
    }
}

/// How far a capacity code reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    Zone,
    Region,
    Cloud,
}

/// Where a message says a failure happened.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    pub zone: Option<String>,
    pub region: Option<String>,
}

/// A cloud's capacity codes (operation codes, health-issue codes, error
/// reasons), each with its reach, in the order they are looked for (a
/// narrower code before a broader one it contains), and how its messages
/// name zones and regions.
pub struct CapacityCodes {
    pub codes: &'static [(&'static str, Reach)],
    pub locate: fn(&str) -> Place,
}

impl CapacityCodes {
    /// The shortage a failure reports, when its code or a whole word of
    /// its message is one of the codes.
    pub fn shortage(&self, code: &str, message: &str) -> Option<Shortage> {
        let words: Vec<&str> = message
            .split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_')
            .collect();
        let (_, reach) = self
            .codes
            .iter()
            .find(|(c, _)| *c == code || words.contains(c))?;
        let place = (self.locate)(message);
        Some(match reach {
            Reach::Zone => Shortage::Zone(place.zone),
            Reach::Region => Shortage::Region(place.region),
            Reach::Cloud => Shortage::Cloud,
        })
    }
}

/// A failure whose text names one of the cloud's capacity codes (as a
/// whole word) is a capacity failure, with its reach; anything else is an
/// API failure.
pub fn classify(
    operation: &str,
    detail: String,
    retryable: bool,
    capacity: &CapacityCodes,
) -> DriverError {
    match capacity.shortage("", &detail) {
        Some(shortage) => DriverError::Capacity {
            operation: operation.to_string(),
            detail,
            shortage,
        },
        None => DriverError::Api {
            operation: operation.to_string(),
            detail,
            retryable,
        },
    }
}

/// Recovery: what a crashed run created but never recorded, found by the
/// ownership tags every create carries. Apart from the resource protocol
/// because only the engine's recovery and a resent create's check ask it.
#[async_trait]
pub trait Recovery: Send + Sync {
    /// The objects of `type_name` carrying `tags`.
    async fn find_tagged(&self, type_name: &str, tags: &Tags) -> Result<Vec<Value>, DriverError>;

    /// For a type whose objects carry no tags: what the driver needs,
    /// written to the journal before the create, to find later what the
    /// create may have made (for a GCS HMAC key, its service account and
    /// the time). `None` for a type found by its tags.
    fn trace(&self, type_name: &str, planned: &Value) -> Option<serde_json::Value> {
        let _ = (type_name, planned);
        None
    }

    /// The objects a create that left `trace` may have made, whatever
    /// state records them: the caller keeps the recorded ones. They cannot
    /// be adopted (an HMAC key's secret is given once), so the caller
    /// deletes the rest.
    async fn find_traced(
        &self,
        type_name: &str,
        trace: &serde_json::Value,
    ) -> Result<Vec<Value>, DriverError> {
        let _ = (type_name, trace);
        Ok(Vec::new())
    }

    /// Whether objects of `type_name` exist in the state alone
    /// (`terraform_data`): a crash that loses the record of one loses
    /// nothing outside, since the next plan makes it again, so its journal
    /// lines need not wait for the disk. `false` by default: a cloud's
    /// object, once made, must be on record before anything else starts.
    fn only_in_state(&self, type_name: &str) -> bool {
        let _ = type_name;
        false
    }
}

/// Billing: what a driver's cloud charges, for the plan's cost and the
/// cluster spec's instance types. Nothing, by default.
pub trait Billing: Send + Sync {
    /// The GPU catalog of this driver's cloud, if it has one.
    fn gpu_catalog(&self) -> Option<&catalog::Catalog> {
        None
    }

    /// What an object of `type_name` is billed for by the hour (nodes, a
    /// control plane's fee), read from the object, which may hold
    /// unknowns. `today` (`YYYY-MM-DD`, the plan's date) decides fees that
    /// change with time (EKS's extended support).
    fn billing(&self, type_name: &str, object: &Value, today: &str) -> Vec<billing::Billed> {
        let _ = (type_name, object, today);
        Vec::new()
    }
}

/// The resource protocol a provider speaks (schemas, configure, plan,
/// read, create, update, delete, import, data sources, functions), with
/// recovery, billing and ephemeral resources as the traits it builds on.
#[async_trait]
pub trait Driver: Recovery + Billing + Ephemerals + Send + Sync {
    /// The driver's name as configurations and state know it (`aws`, `terraform`).
    fn name(&self) -> &str;

    /// The provider address recorded in state,
    /// `provider["registry.terraform.io/hashicorp/aws"]`.
    fn provider_address(&self) -> String;

    /// The schema of the type `type_name` of `mode`, when the driver
    /// serves it: what the engine asks. By default it is looked up in the
    /// driver's schema maps below; a driver with thousands of types (a
    /// plugin) answers it without making the maps, converting a type when
    /// it is first asked for.
    fn schema(&self, mode: TypeMode, type_name: &str) -> Option<&ResourceSchema> {
        self.schemas_of(mode).get(type_name)
    }

    /// The names of the driver's types of `mode`, in order.
    fn type_names(&self, mode: TypeMode) -> Vec<String> {
        self.schemas_of(mode).keys().cloned().collect()
    }

    /// The schemas of the types this run asked for, when the driver's
    /// schemas are a package's that a later run would otherwise ask its
    /// provider for (a plugin's); `None` for the drivers whose schemas are
    /// compiled in.
    fn used_schemas(&self) -> Option<UsedSchemas> {
        None
    }

    /// The map of `mode`'s schemas a driver keeps (below); the engine
    /// asks [`Driver::schema`] and [`Driver::type_names`].
    fn schemas_of(&self, mode: TypeMode) -> &BTreeMap<String, ResourceSchema> {
        match mode {
            TypeMode::Managed => self.resource_schemas(),
            TypeMode::Data => self.data_schemas(),
            TypeMode::Ephemeral => self.ephemeral_schemas(),
            TypeMode::List => self.list_schemas(),
            TypeMode::Action => self.action_schemas(),
        }
    }

    /// Schemas of the managed resource types, for a driver that keeps
    /// them as a map (the native drivers).
    fn resource_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        static NONE: BTreeMap<String, ResourceSchema> = BTreeMap::new();
        &NONE
    }

    /// The schema of the driver's `provider` block (none by default).
    fn provider_schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(Vec::new())
    }

    /// Takes the evaluated `provider` block (wholly known; every attribute
    /// null when the configuration has none) before any other call.
    fn configure(&self, config: &Value) -> Result<(), DriverError> {
        let _ = config;
        Ok(())
    }

    /// Takes a configuration to apply before the first call that needs a
    /// configured provider, if one ever comes: Terraform configures a
    /// provider only when something uses it, and a configuration the run
    /// uses is applied when the walk first needs it ([`Driver::ready`]),
    /// so that twenty aliases are not twenty processes at once. A driver
    /// that costs something to configure (a plugin's process, a provider
    /// that requires an argument) waits; the rest are configured now.
    fn configure_on_use(&self, config: &Value) -> Result<(), DriverError> {
        self.configure(config)
    }

    /// Applies the configuration [`Driver::configure_on_use`] holds, now:
    /// the engine asks before a configuration's first call, so that its
    /// error is told once, at its block.
    fn ready(&self) -> Result<(), DriverError> {
        Ok(())
    }

    /// Nothing in this walk calls this configuration again: a driver that
    /// holds a process for it stops it (Terraform's close-provider step),
    /// and a later call, if one comes, starts another configured as this
    /// one was.
    fn release(&self) {}

    /// Whether a configuration of this driver is a process while it is
    /// open (a plugin's, a quarter gigabyte for the AWS provider): the
    /// walk then opens it a little before it is needed, reads its objects
    /// back then, and releases it after.
    fn holds_a_process(&self) -> bool {
        false
    }

    /// Plans one instance: the planned object and what forces replacement.
    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError>;

    /// Reads current objects for many instances of one type at once; `None`
    /// for an instance that no longer exists.
    async fn read(
        &self,
        type_name: &str,
        instances: &[Value],
    ) -> Result<Vec<Option<Value>>, DriverError>;

    async fn create(
        &self,
        type_name: &str,
        planned: &Value,
        tags: &Tags,
    ) -> Result<Value, DriverError>;

    async fn update(
        &self,
        type_name: &str,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError>;

    async fn delete(&self, type_name: &str, prior: &Value) -> Result<(), DriverError>;

    /// The cloud's placement score for each of `asks` (`None` where it
    /// gives none: a capacity type or cloud without a score API, the
    /// default), in their order.
    async fn placement_scores(
        &self,
        asks: &[score::ScoreAsk],
    ) -> Result<Vec<Option<u8>>, DriverError> {
        Ok(vec![None; asks.len()])
    }

    /// The reservation or capacity block `ask` names, as the cloud
    /// describes it; a cloud without held capacity refuses the ask.
    async fn reservation(
        &self,
        ask: &reservation::HeldAsk,
    ) -> Result<reservation::Held, DriverError> {
        Err(reservation::none_here(self.name(), ask))
    }

    /// What the cloud recorded of the node pool `ask` names over its span
    /// (preempted and stopped nodes); `None` where strata does not read
    /// this cloud's record (the default).
    async fn pool_records(
        &self,
        ask: &records::RecordsAsk,
    ) -> Result<Option<records::Records>, DriverError> {
        let _ = ask;
        Ok(None)
    }

    /// The Capacity Blocks the cloud would sell for `ask`, earliest first;
    /// a cloud that sells none refuses the ask.
    async fn block_offers(
        &self,
        ask: &reservation::OfferAsk,
    ) -> Result<Vec<reservation::Offer>, DriverError> {
        let _ = ask;
        Err(reservation::no_offers(self.name()))
    }

    /// Reads an existing object by its cloud id, for an `import` block;
    /// `None` when there is no such object.
    async fn import(&self, type_name: &str, id: &str) -> Result<Option<Value>, DriverError> {
        let _ = id;
        Err(DriverError::InvalidConfig {
            type_name: type_name.to_string(),
            detail: format!(
                "the {} driver cannot import {type_name} objects",
                self.name()
            ),
        })
    }

    /// Reads an existing object for an `import` block by what the block
    /// names, with what the driver keeps beside it; `None` when there is
    /// no such object. By default an id goes through [`Driver::import`]
    /// and an identity is refused: only plugins declare identities.
    async fn import_object(
        &self,
        type_name: &str,
        by: &ImportBy,
    ) -> Result<Option<Stored>, DriverError> {
        match by {
            ImportBy::Id(id) => Ok(self.import(type_name, id).await?.map(|value| Stored {
                value,
                kept: Kept::default(),
            })),
            ImportBy::Identity(_) => Err(DriverError::InvalidConfig {
                type_name: type_name.to_string(),
                detail: format!("the {} driver cannot import by identity", self.name()),
            }),
        }
    }

    /// The identity schema of a managed resource type, when it declares
    /// one (plugins on protocol 6.9 and later).
    fn identity_schema(&self, type_name: &str) -> Option<&IdentitySchema> {
        let _ = type_name;
        None
    }

    /// The schemas of the `config` block of each list resource type
    /// (protocol 6.10), none by default.
    fn list_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        static NONE: BTreeMap<String, ResourceSchema> = BTreeMap::new();
        &NONE
    }

    /// The schemas of the `config` block of each action type (protocol
    /// 6.11), none by default.
    fn action_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        static NONE: BTreeMap<String, ResourceSchema> = BTreeMap::new();
        &NONE
    }

    /// Checks an action before it is invoked (`PlanAction`): its
    /// problems, none when it may go ahead.
    fn plan_action(&self, req: ActionRequest<'_>) -> Result<Vec<Problem>, DriverError> {
        Err(DriverError::UnknownType {
            driver: self.name().to_string(),
            type_name: req.type_name.to_string(),
        })
    }

    /// Invokes an action, saying its progress to `progress` as it comes.
    async fn invoke_action(&self, req: ActionRequest<'_>, progress: Progress) -> Invoked {
        let _ = progress;
        Err(DriverError::UnknownType {
            driver: self.name().to_string(),
            type_name: req.type_name.to_string(),
        })
    }

    /// The objects of `req.type_name` the provider finds, at most
    /// `req.limit`, in the order it gives them.
    async fn list(&self, req: ListRequest<'_>) -> Result<Vec<Listed>, DriverError> {
        Err(DriverError::InvalidConfig {
            type_name: req.type_name.to_string(),
            detail: format!("the {} driver lists no objects of this type", self.name()),
        })
    }

    /// Schemas of the data source types (none unless the driver has some).
    fn data_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        static NONE: BTreeMap<String, ResourceSchema> = BTreeMap::new();
        &NONE
    }

    /// A new, unconfigured instance of this driver, for a second
    /// configuration of its provider (a `provider` block with an `alias`):
    /// `None` when it takes one configuration only; an error when it could
    /// not be made (a plugin's process that did not start).
    fn another(&self) -> Option<Result<std::sync::Arc<dyn Driver>, DriverError>> {
        None
    }

    /// The functions the provider offers (`provider::NAME::FUNCTION`), by
    /// name.
    fn functions(&self) -> &std::collections::BTreeMap<String, FunctionSig> {
        static NONE: std::collections::BTreeMap<String, FunctionSig> =
            std::collections::BTreeMap::new();
        &NONE
    }

    /// Calls the function `name` with `args`, already converted to its
    /// parameters' types and wholly known where they must be.
    fn call_function(
        &self,
        name: &str,
        _args: Vec<strata_value::value::Value>,
    ) -> Result<strata_value::value::Value, FunctionFailure> {
        Err(FunctionFailure::new(format!(
            "the provider offers no function named {name:?}"
        )))
    }

    /// Why this driver cannot serve a type its provider declares (`data`:
    /// a data source), when it cannot (a plugin's schema strata cannot
    /// read); the driver's schemas leave such a type out.
    fn unusable(&self, _type_name: &str, _mode: TypeMode) -> Option<String> {
        None
    }

    /// The provider's schemas in its own words, as Terraform's `providers
    /// schema -json` shows them (descriptions, deprecations, nested
    /// attributes as declared), when the driver has them: a plugin's.
    /// `None` for the drivers whose schemas are only strata's.
    fn describe(&self) -> Option<Result<serde_json::Value, DriverError>> {
        None
    }

    async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, DriverError> {
        let _ = config;
        Err(DriverError::UnknownType {
            driver: self.name().to_string(),
            type_name: type_name.to_string(),
        })
    }

    /// Whether a read can answer differently later: a cloud's objects
    /// change under it; a test's mock gives the same answer every time,
    /// so a wait for something to appear ends after one look.
    fn reads(&self) -> Reads {
        Reads::Live
    }

    /// Why the cloud cannot delete `prior`, when it cannot (a purchase that
    /// is final, such as an AWS Capacity Block): a destroy then forgets the
    /// object, and the plan says this instead of "destroyed". `None` (the
    /// default) for objects a delete removes.
    fn lasting(&self, type_name: &str, prior: &Value) -> Option<String> {
        let _ = (type_name, prior);
        None
    }

    /// The queues a write of this object waits in where the cloud runs
    /// such writes one at a time (GKE: one node-pool operation per
    /// cluster; AKS: one per cluster, one pool at a time in a subnet), so
    /// the apply starts them one after another instead of meeting the
    /// cloud's refusal; writes sharing no queue (by default none has one)
    /// run side by side.
    fn queues(&self, type_name: &str, object: &Value) -> Vec<String> {
        let _ = (type_name, object);
        Vec::new()
    }

    /// Checks a resource's (`data`: a data source's) configuration as the
    /// provider itself does, which may hold unknown values: the problems,
    /// each with where it is. Native drivers' checks are their schemas,
    /// which the engine applies, so none by default.
    fn validate(
        &self,
        type_name: &str,
        mode: TypeMode,
        config: &Value,
    ) -> Result<Vec<Problem>, DriverError> {
        let _ = (type_name, mode, config);
        Ok(Vec::new())
    }

    /// Reads objects with the private bytes kept beside them; where each
    /// object is a call of its own, each call takes one of `slots`, which
    /// the reads of every type refreshed at once share. By default through
    /// [`Driver::read`] (which batches), the bytes kept as they were.
    async fn read_stored(
        &self,
        type_name: &str,
        objects: &[Stored],
        slots: &Slots,
    ) -> Result<Vec<Option<Stored>>, DriverError> {
        let _ = slots;
        let values: Vec<Value> = objects.iter().map(|o| o.value.clone()).collect();
        let read = self.read(type_name, &values).await?;
        Ok(read
            .into_iter()
            .zip(objects)
            .map(|(now, was)| {
                now.map(|value| Stored {
                    value,
                    kept: was.kept.clone(),
                })
            })
            .collect())
    }

    /// Carries out a whole change in one call, as Terraform's provider
    /// plugins do: the result is the object now (`None` once deleted) with
    /// its private bytes, or the failure with what it left. `None`, the
    /// default, for drivers that work through `create`, `update` and
    /// `delete`.
    async fn apply_change(
        &self,
        req: ApplyRequest<'_>,
    ) -> Option<Result<Option<Stored>, ApplyFailed>> {
        let _ = req;
        None
    }

    /// A stored identity written under another version of its type's
    /// identity schema, as the current one has it. `None`, the default,
    /// when it needs no upgrading.
    fn upgrade_identity(
        &self,
        type_name: &str,
        stored: &Identity,
    ) -> Option<Result<Identity, DriverError>> {
        let _ = (type_name, stored);
        None
    }

    /// The object a `moved` block takes from another resource type or
    /// provider to `req.target_type`, as this driver stores it. `None`,
    /// the default, when the driver takes no such moves.
    fn move_state(&self, req: MoveRequest<'_>) -> Option<Result<Stored, DriverError>> {
        let _ = req;
        None
    }

    /// A stored object written under schema version `version` (its
    /// attributes as the state's JSON text), as the current schema has
    /// it. `None`, the default, when the driver's stored layout needs no
    /// upgrading and the text is read as it is.
    fn upgrade(
        &self,
        type_name: &str,
        version: u64,
        attributes: &str,
    ) -> Option<Result<Value, DriverError>> {
        let _ = (type_name, version, attributes);
        None
    }
}

/// An error with every cause it keeps in `source()`: an HTTP client's own
/// message alone says only "error sending request".
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}
