//! The shape every cloud driver takes: one [`Kind`] per resource type,
//! found by name in a [`Kinds`] table, each given the driver's clients `C`.
//! The table does the dispatch and the "no such type" errors once for all
//! drivers.

use crate::{Driver, DriverError, PlanRequest, Planned, ResourceSchema, Tags};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use strata_value::value::Value;

/// One resource type of a driver whose clients are `C`.
#[async_trait]
pub trait Kind<C: Sync>: Send + Sync {
    fn schema(&self) -> ResourceSchema;

    /// The plan: by default the schema's (configured values, computed ones
    /// kept or unknown); a type adjusts what its API decides.
    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        crate::plan_by_schema(schema, req.prior, req.config)
    }

    /// What the schema cannot say of a configuration (an argument required
    /// inside an attribute written as blocks), in the provider's words.
    fn validate(&self, config: &Value) -> Vec<crate::Problem> {
        let _ = config;
        Vec::new()
    }

    /// Current objects for `objs` (in order; `None` when gone).
    async fn read(&self, c: &C, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError>;
    async fn create(&self, c: &C, planned: &Value, tags: &Tags) -> Result<Value, DriverError>;
    async fn update(&self, c: &C, prior: &Value, planned: &Value) -> Result<Value, DriverError>;
    async fn delete(&self, c: &C, prior: &Value) -> Result<(), DriverError>;
    async fn find_tagged(&self, c: &C, tags: &Tags) -> Result<Vec<Value>, DriverError>;
    async fn import(&self, c: &C, id: &str) -> Result<Option<Value>, DriverError>;

    /// See [`crate::Driver::queues`]: none for a type the cloud writes
    /// side by side.
    fn queues(&self, object: &Value) -> Vec<String> {
        let _ = object;
        Vec::new()
    }

    /// See [`crate::Driver::lasting`]: none for a type the cloud deletes.
    fn lasting(&self, prior: &Value) -> Option<String> {
        let _ = prior;
        None
    }

    /// See [`crate::Recovery::trace`]: none for a type found by its tags.
    fn trace(&self, planned: &Value) -> Option<serde_json::Value> {
        let _ = planned;
        None
    }

    /// See [`crate::Recovery::find_traced`].
    async fn find_traced(
        &self,
        c: &C,
        trace: &serde_json::Value,
    ) -> Result<Vec<Value>, DriverError> {
        let _ = (c, trace);
        Ok(Vec::new())
    }
}

/// A driver's resource types by name, with their schemas.
pub struct Kinds<C> {
    driver: &'static str,
    kinds: BTreeMap<String, Arc<dyn Kind<C>>>,
    /// Built when first asked for: every command constructs every driver
    /// (and a provider alias another), and most use one or none of them;
    /// building all four clouds' schemas up front was half a millisecond
    /// of each run (`strata version` 3.14 → 2.59 ms without it).
    schemas: OnceLock<BTreeMap<String, ResourceSchema>>,
}

impl<C: Sync> Kinds<C> {
    pub fn new(driver: &'static str, kinds: Vec<(&str, Arc<dyn Kind<C>>)>) -> Kinds<C> {
        Kinds {
            driver,
            kinds: kinds.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            schemas: OnceLock::new(),
        }
    }

    pub fn schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        self.schemas.get_or_init(|| {
            self.kinds
                .iter()
                .map(|(k, v)| (k.clone(), v.schema()))
                .collect()
        })
    }

    pub fn get(&self, type_name: &str) -> Result<&Arc<dyn Kind<C>>, DriverError> {
        self.kinds
            .get(type_name)
            .ok_or_else(|| DriverError::UnknownType {
                driver: self.driver.into(),
                type_name: type_name.into(),
            })
    }

    pub fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        let kind = self.get(req.type_name)?;
        Ok(kind.plan(&self.schemas()[req.type_name], &req))
    }

    pub fn validate(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<Vec<crate::Problem>, DriverError> {
        Ok(self.get(type_name)?.validate(config))
    }
}

/// A driver made of [`Kinds`] over clients `Ctx`: implementing this gives
/// the whole [`Driver`] (dispatch by type name, clients made on first use,
/// failed writes explained) without writing it again per cloud.
#[async_trait]
pub trait Cloud: Send + Sync {
    type Ctx: Sync;

    fn name(&self) -> &str;
    fn provider_address(&self) -> String;
    fn kinds(&self) -> &Kinds<Self::Ctx>;

    /// The clients, made on first use (so a plan with nothing of this
    /// cloud's never looks for credentials).
    async fn ctx(&self) -> &Self::Ctx;

    fn provider_schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(Vec::new())
    }

    /// Told after every create, update and delete, done or failed: a
    /// driver whose reads share account-wide listings
    /// ([`crate::listing::Listing`]) counts the write here.
    fn wrote(&self, ctx: &Self::Ctx) {
        let _ = ctx;
    }

    fn configure(&self, config: &Value) -> Result<(), DriverError> {
        let _ = config;
        Ok(())
    }

    /// A new, unconfigured driver of this cloud, for another provider
    /// configuration (an alias: another cluster, region or account).
    fn another(&self) -> Self
    where
        Self: Sized;

    /// A chance to say more about a failed create, update or delete (AWS
    /// decodes its encoded authorization messages).
    async fn explain(&self, e: DriverError) -> DriverError {
        e
    }

    fn data_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        static NONE: BTreeMap<String, ResourceSchema> = BTreeMap::new();
        &NONE
    }

    /// The cloud's ephemeral resource types (a short-lived token, say).
    fn ephemeral_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        static NONE: BTreeMap<String, ResourceSchema> = BTreeMap::new();
        &NONE
    }

    /// Opens an instance of one of them.
    async fn open_ephemeral(
        &self,
        type_name: &str,
        config: &Value,
    ) -> Result<crate::Opened, DriverError> {
        let _ = config;
        Err(DriverError::UnknownType {
            driver: self.name().to_string(),
            type_name: type_name.to_string(),
        })
    }

    /// The cloud's GPU catalog (`providers/<cloud>/catalog.csv`).
    fn gpu_catalog(&self) -> Option<&crate::catalog::Catalog> {
        None
    }

    /// See [`Driver::upgrade`].
    fn upgrade(
        &self,
        type_name: &str,
        version: u64,
        attributes: &str,
    ) -> Option<Result<Value, DriverError>> {
        let _ = (type_name, version, attributes);
        None
    }

    /// See [`crate::Billing::billing`].
    fn billing(&self, type_name: &str, object: &Value, today: &str) -> Vec<crate::billing::Billed> {
        let _ = (type_name, object, today);
        Vec::new()
    }

    /// See [`Driver::placement_scores`].
    async fn placement_scores(
        &self,
        asks: &[crate::score::ScoreAsk],
    ) -> Result<Vec<Option<u8>>, DriverError> {
        Ok(vec![None; asks.len()])
    }

    /// See [`Driver::reservation`].
    async fn reservation(
        &self,
        ask: &crate::reservation::HeldAsk,
    ) -> Result<crate::reservation::Held, DriverError> {
        Err(crate::reservation::none_here(self.name(), ask))
    }

    /// See [`Driver::pool_records`].
    async fn pool_records(
        &self,
        ask: &crate::records::RecordsAsk,
    ) -> Result<Option<crate::records::Records>, DriverError> {
        let _ = ask;
        Ok(None)
    }

    /// See [`Driver::block_offers`].
    async fn block_offers(
        &self,
        ask: &crate::reservation::OfferAsk,
    ) -> Result<Vec<crate::reservation::Offer>, DriverError> {
        let _ = ask;
        Err(crate::reservation::no_offers(self.name()))
    }

    async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, DriverError> {
        let _ = config;
        Err(DriverError::UnknownType {
            driver: self.name().to_string(),
            type_name: type_name.to_string(),
        })
    }
}

#[async_trait]
impl<T: Cloud + 'static> crate::Recovery for T {
    async fn find_tagged(&self, type_name: &str, tags: &Tags) -> Result<Vec<Value>, DriverError> {
        let kind = self.kinds().get(type_name)?;
        kind.find_tagged(self.ctx().await, tags).await
    }

    fn trace(&self, type_name: &str, planned: &Value) -> Option<serde_json::Value> {
        self.kinds().get(type_name).ok()?.trace(planned)
    }

    async fn find_traced(
        &self,
        type_name: &str,
        trace: &serde_json::Value,
    ) -> Result<Vec<Value>, DriverError> {
        let kind = self.kinds().get(type_name)?;
        kind.find_traced(self.ctx().await, trace).await
    }
}

#[async_trait]
impl<T: Cloud + 'static> crate::Ephemerals for T {
    fn ephemeral_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        Cloud::ephemeral_schemas(self)
    }

    async fn open(&self, type_name: &str, config: &Value) -> Result<crate::Opened, DriverError> {
        self.open_ephemeral(type_name, config).await
    }
}

impl<T: Cloud + 'static> crate::Billing for T {
    fn gpu_catalog(&self) -> Option<&crate::catalog::Catalog> {
        Cloud::gpu_catalog(self)
    }

    fn billing(&self, type_name: &str, object: &Value, today: &str) -> Vec<crate::billing::Billed> {
        Cloud::billing(self, type_name, object, today)
    }
}

#[async_trait]
impl<T: Cloud + 'static> Driver for T {
    fn name(&self) -> &str {
        Cloud::name(self)
    }

    fn provider_address(&self) -> String {
        Cloud::provider_address(self)
    }

    fn resource_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        self.kinds().schemas()
    }

    fn provider_schema(&self) -> ResourceSchema {
        Cloud::provider_schema(self)
    }

    fn configure(&self, config: &Value) -> Result<(), DriverError> {
        Cloud::configure(self, config)
    }

    fn validate(
        &self,
        type_name: &str,
        mode: crate::TypeMode,
        config: &Value,
    ) -> Result<Vec<crate::Problem>, DriverError> {
        match mode {
            crate::TypeMode::Managed => self.kinds().validate(type_name, config),
            crate::TypeMode::Data
            | crate::TypeMode::Ephemeral
            | crate::TypeMode::List
            | crate::TypeMode::Action => Ok(Vec::new()),
        }
    }

    async fn placement_scores(
        &self,
        asks: &[crate::score::ScoreAsk],
    ) -> Result<Vec<Option<u8>>, DriverError> {
        Cloud::placement_scores(self, asks).await
    }

    async fn reservation(
        &self,
        ask: &crate::reservation::HeldAsk,
    ) -> Result<crate::reservation::Held, DriverError> {
        Cloud::reservation(self, ask).await
    }

    async fn block_offers(
        &self,
        ask: &crate::reservation::OfferAsk,
    ) -> Result<Vec<crate::reservation::Offer>, DriverError> {
        Cloud::block_offers(self, ask).await
    }

    async fn pool_records(
        &self,
        ask: &crate::records::RecordsAsk,
    ) -> Result<Option<crate::records::Records>, DriverError> {
        Cloud::pool_records(self, ask).await
    }

    fn queues(&self, type_name: &str, object: &Value) -> Vec<String> {
        match self.kinds().get(type_name) {
            Ok(kind) => kind.queues(object),
            Err(_) => Vec::new(),
        }
    }

    fn lasting(&self, type_name: &str, prior: &Value) -> Option<String> {
        self.kinds().get(type_name).ok()?.lasting(prior)
    }

    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        self.kinds().plan(req)
    }

    async fn read(
        &self,
        type_name: &str,
        objs: &[Value],
    ) -> Result<Vec<Option<Value>>, DriverError> {
        let kind = self.kinds().get(type_name)?;
        kind.read(self.ctx().await, objs).await
    }

    async fn create(
        &self,
        type_name: &str,
        planned: &Value,
        tags: &Tags,
    ) -> Result<Value, DriverError> {
        let kind = self.kinds().get(type_name)?;
        let ctx = self.ctx().await;
        let made = kind.create(ctx, planned, tags).await;
        self.wrote(ctx);
        match made {
            Ok(v) => Ok(v),
            Err(e) => Err(self.explain(e).await),
        }
    }

    async fn update(
        &self,
        type_name: &str,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let kind = self.kinds().get(type_name)?;
        let ctx = self.ctx().await;
        let changed = kind.update(ctx, prior, planned).await;
        self.wrote(ctx);
        match changed {
            Ok(v) => Ok(v),
            Err(e) => Err(self.explain(e).await),
        }
    }

    async fn delete(&self, type_name: &str, prior: &Value) -> Result<(), DriverError> {
        let kind = self.kinds().get(type_name)?;
        let ctx = self.ctx().await;
        let deleted = kind.delete(ctx, prior).await;
        self.wrote(ctx);
        match deleted {
            Ok(()) => Ok(()),
            Err(e) => Err(self.explain(e).await),
        }
    }

    async fn import(&self, type_name: &str, id: &str) -> Result<Option<Value>, DriverError> {
        let kind = self.kinds().get(type_name)?;
        kind.import(self.ctx().await, id).await
    }

    fn data_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        Cloud::data_schemas(self)
    }

    fn another(&self) -> Option<Result<Arc<dyn Driver>, DriverError>> {
        Some(Ok(Arc::new(Cloud::another(self))))
    }

    fn upgrade(
        &self,
        type_name: &str,
        version: u64,
        attributes: &str,
    ) -> Option<Result<Value, DriverError>> {
        Cloud::upgrade(self, type_name, version, attributes)
    }

    async fn read_data(&self, type_name: &str, config: &Value) -> Result<Value, DriverError> {
        Cloud::read_data(self, type_name, config).await
    }
}
