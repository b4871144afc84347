//! EC2: networking, security groups and launch templates.
//!
//! Every EC2 type is read with one Describe call per page of ids, and with
//! *filters* where the API has them: unlike the `VpcIds`-style parameters,
//! which fail the whole call on one missing id, a filter leaves missing
//! objects out, which is exactly "deleted outside strata". Refresh, crash
//! recovery (the ownership-tag filters) and import are then the same call,
//! so a type only says how to describe, create, change and delete; the
//! rest is [`Ec2`]'s.

mod capacity_block;
mod launch_template;
mod nat;
mod routes;
mod security;
mod vpc;

pub use capacity_block::{CapacityBlockOffering, CapacityBlockReservation};
pub use launch_template::LaunchTemplate;
pub use nat::{Eip, NatGateway};
pub use routes::{RouteTable, RouteTableAssociation};
pub use security::{SecurityGroup, SecurityGroupRule};
pub use vpc::{InternetGateway, Subnet, Vpc};

use crate::error::api;
use crate::tags::{self, with_ownership};
use crate::values::{object, required, string, string_map};
use crate::{Clients, Kind};
use async_trait::async_trait;
use aws_sdk_ec2::types::{Filter, ResourceType, Tag, TagSpecification};
use std::collections::{BTreeMap, HashMap};
use strata_provider::{
    AttributeSchema as A, DriverError, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::types::Type;
use strata_value::value::Value;

/// Ids per Describe call; EC2 accepts up to 200 filter values.
const PAGE: usize = 200;

/// Which objects a Describe call is for.
pub(crate) enum Select<'a> {
    /// These ids (a refresh page, or one id to import or re-read).
    Ids(&'a [String]),
    /// Whatever carries these ownership tags (crash recovery).
    Owned(&'a Tags),
}

impl Select<'_> {
    /// The described objects this selection takes, with their ids.
    fn keep<'o, O>(
        &self,
        objects: &'o [O],
        id: impl Fn(&'o O) -> Option<&'o str>,
        tags: impl Fn(&'o O) -> &'o [Tag],
    ) -> Vec<(&'o str, &'o O)> {
        objects
            .iter()
            .filter_map(|o| Some((id(o)?, o)))
            .filter(|(_, o)| self.admits(tags(o)))
            .collect()
    }

    /// Whether an object with these tags belongs in the answer: the
    /// ownership filters are applied again here, because an API (or an
    /// emulator) that ignores a filter must not make strata adopt what is
    /// not its own.
    fn admits(&self, aws_tags: &[Tag]) -> bool {
        match self {
            Select::Ids(_) => true,
            Select::Owned(t) => tags::owned_by(
                aws_tags.iter().filter_map(|x| Some((x.key()?, x.value()?))),
                t,
            ),
        }
    }

    /// The filters for a type whose objects are filtered by `id_filter`.
    fn filters(&self, id_filter: &str) -> Vec<Filter> {
        match self {
            Select::Ids(ids) => vec![Filter::builder()
                .name(id_filter)
                .set_values(Some(ids.to_vec()))
                .build()],
            // The address is matched here, not by EC2: filter values are
            // patterns (`*`, `?`; moto's also `[...]`), and addresses hold
            // brackets and quoted keys (`aws_vpc.cell[0]`). The lineage, a
            // UUID, narrows the answer safely.
            Select::Owned(t) => vec![
                Filter::builder()
                    .name("tag-key")
                    .values(tags::ADDRESS)
                    .build(),
                Filter::builder()
                    .name(format!("tag:{}", tags::LINEAGE))
                    .values(&t.lineage)
                    .build(),
            ],
        }
    }
}

/// What a create made: the object's id, and the object when the
/// create's answer says all of it.
pub(crate) struct Created {
    pub id: String,
    pub object: Option<Value>,
}

/// One EC2 resource type.
#[async_trait]
pub(crate) trait Ec2Type: Send + Sync {
    /// The Terraform type name, for messages.
    const TYPE: &'static str;

    /// Arguments that say how strata acts rather than what AWS holds
    /// (`revoke_rules_on_delete`); a read keeps them as they were.
    const CONFIG_ONLY: &'static [&'static str] = &[];

    /// The AWS provider's schema version of the type, which state records:
    /// the same number, so each reads the other's objects as its own.
    const VERSION: u64 = 0;

    fn schema(&self) -> ResourceSchema;

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        tags::plan_taggable(schema, req, &[])
    }

    /// See `strata_provider::kind::Kind::validate`.
    fn validate(&self, config: &Value) -> Vec<strata_provider::Problem> {
        let _ = config;
        Vec::new()
    }

    /// The selected objects by id.
    async fn describe(
        &self,
        c: &Clients,
        select: Select<'_>,
    ) -> Result<HashMap<String, Value>, DriverError>;

    /// Creates the object (tagged with `t`) and returns its id.
    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<String, DriverError>;

    /// Creates the object, and says all of it when the create's answer
    /// (with the plan) does: a type that can spares the read back, one
    /// request per object of an apply (issue 46). By default the object is
    /// read back.
    async fn create_object(
        &self,
        c: &Clients,
        planned: &Value,
        t: &Tags,
    ) -> Result<Created, DriverError> {
        Ok(Created {
            id: self.create(c, planned, t).await?,
            object: None,
        })
    }

    /// Makes the in-place changes other than tags, which [`Ec2`] handles;
    /// returns the new id when the change gave the object one.
    async fn update(
        &self,
        c: &Clients,
        id: &str,
        prior: &Value,
        planned: &Value,
    ) -> Result<Option<String>, DriverError> {
        let _ = (c, id, prior, planned);
        Ok(None)
    }

    async fn delete(&self, c: &Clients, id: &str, prior: &Value) -> Result<(), DriverError>;

    /// See `strata_provider::Driver::lasting`.
    fn lasting(&self, prior: &Value) -> Option<String> {
        let _ = prior;
        None
    }
}

/// An [`Ec2Type`] as the driver's [`Kind`].
pub(crate) struct Ec2<T> {
    kind: T,
    /// What a read keeps of the schema, worked out on the first read (as
    /// [`strata_provider::Kinds`] builds its schemas on first use).
    fit: std::sync::OnceLock<Fit>,
}

/// The parts of a type's schema that shape what a read returns.
struct Fit {
    /// The schema's attributes and blocks: what a described object keeps
    /// (the shared describing adds `arn` and `owner_id`, which not every
    /// type of the AWS provider has).
    names: std::collections::BTreeSet<String>,
    /// The configuration-only arguments and the `timeouts` block, with
    /// their types: what a read carries over from the object it refreshes.
    kept: Vec<(&'static str, Type)>,
}

impl<T: Ec2Type> Ec2<T> {
    pub fn new(kind: T) -> Ec2<T> {
        Ec2 {
            kind,
            fit: std::sync::OnceLock::new(),
        }
    }

    fn fit(&self) -> &Fit {
        self.fit.get_or_init(|| {
            let schema = self.kind.schema();
            let kept = T::CONFIG_ONLY
                .iter()
                .filter_map(|k| Some((*k, schema.attributes.get(*k)?.ty.clone())))
                .chain(
                    schema
                        .blocks
                        .get("timeouts")
                        .map(|b| ("timeouts", b.schema.object_type())),
                )
                .collect();
            let names = schema
                .attributes
                .keys()
                .chain(schema.blocks.keys())
                .cloned()
                .collect();
            Fit { names, kept }
        })
    }

    /// `found` with only what the schema has.
    fn fitted(&self, mut found: Value) -> Value {
        if let Value::Object(m) = &mut found {
            let names = &self.fit().names;
            m.retain(|k, _| names.contains(k));
        }
        found
    }
}

impl<T: Ec2Type> Ec2<T> {
    /// Reads one object back after a change, which must find it.
    async fn reread(&self, c: &Clients, id: &str, planned: &Value) -> Result<Value, DriverError> {
        self.kind
            .describe(c, Select::Ids(&[id.to_string()]))
            .await?
            .remove(id)
            .map(|found| self.with_config_only(planned, found))
            .ok_or_else(|| DriverError::Api {
                operation: format!("reading {} {id}", T::TYPE),
                detail: "it is not there right after being written".into(),
                retryable: true,
            })
    }
}

impl<T: Ec2Type> Ec2<T> {
    /// `found` with `from`'s configuration-only arguments and `timeouts`
    /// block, which AWS does not hold, so a read keeps what they were.
    fn with_config_only(&self, from: &Value, found: Value) -> Value {
        let mut found = self.fitted(found);
        if let Value::Object(m) = &mut found {
            for (k, ty) in &self.fit().kept {
                let v = crate::values::get(from, k)
                    .cloned()
                    .unwrap_or_else(|| Value::Null(ty.clone()));
                m.insert(k.to_string(), v);
            }
        }
        found
    }
}

#[async_trait]
impl<T: Ec2Type + 'static> Kind<Clients> for Ec2<T> {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema {
            version: T::VERSION,
            ..self.kind.schema()
        }
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        self.kind.plan(schema, req)
    }

    fn validate(&self, config: &Value) -> Vec<strata_provider::Problem> {
        self.kind.validate(config)
    }

    fn lasting(&self, prior: &Value) -> Option<String> {
        self.kind.lasting(prior)
    }

    async fn read(&self, c: &Clients, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let ids: Vec<String> = objs.iter().filter_map(|o| string(o, "id")).collect();
        let mut found = HashMap::new();
        for page in ids.chunks(PAGE) {
            found.extend(self.kind.describe(c, Select::Ids(page)).await?);
        }
        Ok(objs
            .iter()
            .map(|o| {
                let id = string(o, "id")?;
                found.remove(&id).map(|f| self.with_config_only(o, f))
            })
            .collect())
    }

    async fn create(&self, c: &Clients, planned: &Value, t: &Tags) -> Result<Value, DriverError> {
        match self.kind.create_object(c, planned, t).await? {
            Created {
                object: Some(found),
                ..
            } => Ok(self.with_config_only(planned, found)),
            Created { id, object: None } => self.reread(c, &id, planned).await,
        }
    }

    async fn update(
        &self,
        c: &Clients,
        prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let id = required(prior, T::TYPE, "id")?;
        let id = self
            .kind
            .update(c, &id, prior, planned)
            .await?
            .unwrap_or(id);
        retag(c, &id, prior, planned).await?;
        self.reread(c, &id, planned).await
    }

    async fn delete(&self, c: &Clients, prior: &Value) -> Result<(), DriverError> {
        let id = required(prior, T::TYPE, "id")?;
        self.kind.delete(c, &id, prior).await
    }

    async fn find_tagged(&self, c: &Clients, t: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(self
            .kind
            .describe(c, Select::Owned(t))
            .await?
            .into_values()
            .map(|v| self.fitted(v))
            .collect())
    }

    async fn import(&self, c: &Clients, id: &str) -> Result<Option<Value>, DriverError> {
        Ok(self
            .kind
            .describe(c, Select::Ids(&[id.to_string()]))
            .await?
            .remove(id)
            .map(|v| self.fitted(v)))
    }
}

/// EC2 objects also say which account owns them.
fn schema(attributes: Vec<(&str, A)>) -> ResourceSchema {
    let mut s = tags::taggable_schema(attributes);
    s.attributes.insert(
        "owner_id".into(),
        A::computed(Type::String, "The owning account."),
    );
    s
}

fn ec2_tags(m: &BTreeMap<String, String>) -> Vec<Tag> {
    m.iter()
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect()
}

/// The tags to create an object with: the user's and the ownership tags.
fn tag_spec(kind: ResourceType, planned: &Value, t: &Tags) -> TagSpecification {
    let all = with_ownership(&string_map(planned, "tags"), t);
    TagSpecification::builder()
        .resource_type(kind)
        .set_tags(Some(ec2_tags(&all)))
        .build()
}

/// `tags` and `tags_all` from what EC2 holds.
fn tag_values(aws: &[Tag]) -> (Value, Value) {
    tags::values(
        aws.iter()
            .filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or("").to_string()))),
    )
}

/// Brings the user's tags on `id` from `prior`'s to `planned`'s.
async fn retag(c: &Clients, id: &str, prior: &Value, planned: &Value) -> Result<(), DriverError> {
    let (remove, set) = tags::changes(&string_map(prior, "tags"), &string_map(planned, "tags"));
    if !remove.is_empty() {
        let keys = remove
            .iter()
            .map(|k| Tag::builder().key(k).build())
            .collect();
        c.ec2
            .delete_tags()
            .resources(id)
            .set_tags(Some(keys))
            .send()
            .await
            .map_err(|e| api("DeleteTags", e))?;
    }
    if !set.is_empty() {
        c.ec2
            .create_tags()
            .resources(id)
            .set_tags(Some(ec2_tags(&set)))
            .send()
            .await
            .map_err(|e| api("CreateTags", e))?;
    }
    Ok(())
}

/// An EC2 ARN; `owner` is the account when the API says it, else the
/// caller's.
async fn arn(c: &Clients, owner: Option<&str>, what: &str, id: &str) -> Result<Value, DriverError> {
    let region = c
        .ec2
        .config()
        .region()
        .map(|r| r.to_string())
        .unwrap_or_default();
    let account = match owner {
        Some(o) => o,
        None => c.account().await?,
    };
    Ok(Value::string(format!(
        "arn:aws:ec2:{region}:{account}:{what}/{id}"
    )))
}

/// The id a Create call returned, which it always should.
fn created(operation: &str, id: Option<&str>) -> Result<String, DriverError> {
    id.map(str::to_string).ok_or_else(|| DriverError::Api {
        operation: operation.into(),
        detail: "the response carries no id".into(),
        retryable: false,
    })
}

/// The standard id-keyed object for a described EC2 object: `id`, `arn`,
/// `owner_id`, tags, and the type's own attributes.
fn described(
    id: &str,
    arn: Value,
    owner: Option<&str>,
    aws_tags: &[Tag],
    mut attributes: Vec<(&str, Value)>,
) -> Value {
    let (tags, tags_all) = tag_values(aws_tags);
    attributes.extend([
        ("id", Value::string(id)),
        ("arn", arn),
        ("owner_id", crate::values::str_value(owner)),
        ("tags", tags),
        ("tags_all", tags_all),
    ]);
    object(attributes)
}

/// The object type of a block's elements.
fn block_element(schema: &ResourceSchema, name: &str) -> Type {
    schema
        .blocks
        .get(name)
        .map_or(Type::Dynamic, |b| b.schema.object_type())
}

/// Terraform's "attributes as blocks": rules the configuration leaves out
/// entirely (a route table's `route`, a security group's `ingress`) are
/// not managed here, so the plan keeps what the object has (rules may come
/// from separate resources), or leaves it to apply for a new object. Left
/// out is null for an attribute (`route = []` manages "none") and empty
/// for blocks.
fn unmanaged_when_empty(
    schema: &ResourceSchema,
    planned: &mut Value,
    prior: Option<&Value>,
    name: &str,
) {
    let Value::Object(m) = planned else { return };
    let (left_out, element) = match schema.attributes.get(name) {
        Some(a) => {
            let element = match &a.ty {
                Type::Set(e) | Type::List(e) => (**e).clone(),
                other => other.clone(),
            };
            (m.get(name).is_none_or(Value::is_null), element)
        }
        None => (
            m.get(name)
                .is_some_and(|v| v.is_known() && v.elements().is_none_or(<[Value]>::is_empty)),
            block_element(schema, name),
        ),
    };
    if left_out {
        let keep = match prior.and_then(|p| crate::values::get(p, name)) {
            Some(had) => had.clone(),
            None => Value::Unknown(Type::set(element)),
        };
        m.insert(name.into(), keep);
    }
}
