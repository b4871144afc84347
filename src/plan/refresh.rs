//! The prior state as values, and refresh: reading every managed object
//! back through its driver, one batched `read` per resource type.

use super::{Action, ResourceChange};
use crate::builtin::Drivers;
use crate::diag::{Diag, Diags};
use crate::lang::convert::strip_optional;
use crate::lang::typed_json::value_from_json_text;
use crate::lang::types::Type;
use crate::lang::value::Value;
use futures::StreamExt;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use strata_provider::{Driver, Identity, Kept, ResourceSchema, Slots, Stored};
use strata_state::model::{Address, InstanceState, Mode, ResourceAddr, ResourceState, State};

/// One object of the prior state, decoded with its driver's schema.
#[derive(Debug, Clone)]
pub struct PriorInstance {
    pub addr: Address,
    pub deposed: Option<String>,
    pub provider: String,
    pub value: Value,
    pub schema_version: u64,
    /// What its driver keeps beside it (a plugin provider's private data
    /// and the object's identity).
    pub kept: Kept,
    pub dependencies: Vec<ResourceAddr>,
    pub create_before_destroy: bool,
    pub skip_destroy: bool,
    /// Left by a failed create: the plan replaces it.
    pub tainted: bool,
    /// The object as the state holds it, when a `moved` block takes it to
    /// another type: the new type's driver converts it unread, as
    /// Terraform's `MoveResourceState` does, so its old type needs no
    /// driver here (`value` is then a placeholder).
    pub as_stored: Option<AsStored>,
    /// The object as the state holds it, when it was read by the schema
    /// for now ([`Upgrade::AlwaysBut`]): its provider upgrades it when
    /// the plan's walk opens its configuration ([`upgrade_held`]).
    pub held: Option<AsStored>,
}

/// An object as the state holds it, not yet decoded.
#[derive(Debug, Clone)]
pub struct AsStored {
    pub json: String,
    /// The state's `sensitive_attributes` paths.
    pub sensitive: Vec<serde_json::Value>,
}

/// The driver that decodes a type's objects, its schema and object type.
type Served<'d> = (&'d dyn Driver, &'d ResourceSchema, Arc<Type>);

/// A stored object decoded by its type's driver: a managed object brought
/// up to its current schema by a plugin provider (other drivers' objects
/// are read as stored), marked sensitive where the state and the schema
/// say. Returns the value and the schema version it now has.
///
/// A data source's object is read as stored: the protocol upgrades only
/// managed resources (`UpgradeResourceState` names a resource type, and
/// a data source may share its name with one of another shape), and the
/// next plan reads the data source again anyway.
fn decode_object(
    id: &ResourceAddr,
    (json, sensitive): (&str, &[serde_json::Value]),
    (version, upgrade): (u64, Upgrading),
    (driver, schema, ty): &Served,
) -> Result<(Value, u64, Decoded), String> {
    let managed = id.mode == Mode::Managed;
    let older = version < schema.version;
    let upgrade_now = managed && (upgrade == Upgrading::Always || older);
    let read = match (upgrade_now, upgrade) {
        (true, _) => None,
        // Typed as the provider's answers are, without the optional
        // markers a schema's nested attributes carry for configuration:
        // a null list of them would otherwise differ from the plan's.
        (false, Upgrading::UnlessFitting) if managed => {
            value_from_json_text(json, &strip_optional(ty)).ok()
        }
        (false, _) => Some(value_from_json_text(json, ty)?),
    };
    let (value, version, how) = match read {
        Some(value) => (value, version, Decoded::BySchema),
        None => match driver.upgrade(&id.type_name, version, json) {
            Some(upgraded) => {
                let value = upgraded.map_err(|e| e.to_string())?;
                (value, schema.version, Decoded::ByProvider)
            }
            None => (value_from_json_text(json, ty)?, version, Decoded::BySchema),
        },
    };
    let marked = crate::lang::json::apply_mark_paths(value, sensitive);
    Ok((super::diff::with_marks(marked, None, schema), version, how))
}

/// Who made a stored object's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decoded {
    BySchema,
    ByProvider,
}

/// When stored objects go through their driver's upgrade.
#[derive(Debug, Clone, Copy)]
pub enum Upgrade<'p> {
    /// Only an object stored at an older schema version: what `show` and
    /// the console read, as Terraform's `show` reads a state by the schema
    /// alone — so a plugin whose schema is kept starts no process.
    WhenOlder,
    /// Every managed object, as a plan does (a provider may rewrite an
    /// object at its own schema version) — but an object of these
    /// provider configurations (which the plan's walk opens as it reaches
    /// them) stored at its schema's version is read by the schema, the
    /// provider asked only when it does not fit: decoding the state starts
    /// none of their processes, and the provider reads each object back
    /// in the walk anyway.
    AlwaysBut(&'p HashSet<String>),
}

/// How one object goes through its driver's upgrade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Upgrading {
    Always,
    WhenOlder,
    /// At its version and fitting the schema, read as stored.
    UnlessFitting,
}

impl Upgrade<'_> {
    fn of(self, provider: &str) -> Upgrading {
        match self {
            Upgrade::AlwaysBut(later) if later.contains(provider) => Upgrading::UnlessFitting,
            Upgrade::AlwaysBut(_) => Upgrading::Always,
            Upgrade::WhenOlder => Upgrading::WhenOlder,
        }
    }
}

/// Decodes `p` when it is still as stored (a `moved` block named it, but
/// it stayed where it was); an error when its type has no driver.
pub fn decode_left(p: &mut PriorInstance, drivers: &Drivers) -> Result<(), Diag> {
    let Some(stored) = p.as_stored.take() else {
        return Ok(());
    };
    let Some((driver, schema)) = drivers.resource(&p.addr.id.type_name) else {
        return Err(unsupported(&p.addr.id));
    };
    upgrade_stored(p, &stored, (&**driver, schema))
}

/// Brings `p`, read by the schema for now, up through its own
/// configuration's provider, as Terraform's walk does each object before
/// it reads it back.
pub fn upgrade_held(p: &mut PriorInstance, drivers: &Drivers) -> Result<(), Diag> {
    let Some(stored) = p.held.take() else {
        return Ok(());
    };
    let type_name = &p.addr.id.type_name;
    let Some((driver, schema)) = drivers.configured(type_name, &p.provider, Mode::Managed) else {
        return Err(unsupported(&p.addr.id));
    };
    upgrade_stored(p, &stored, (&*driver, schema))
}

/// `p`'s value made from `stored` through `driver`'s upgrade.
fn upgrade_stored(
    p: &mut PriorInstance,
    stored: &AsStored,
    (driver, schema): (&dyn Driver, &ResourceSchema),
) -> Result<(), Diag> {
    let served = (driver, schema, Arc::new(schema.object_type()));
    let decoded = decode_object(
        &p.addr.id,
        (&stored.json, &stored.sensitive),
        (p.schema_version, Upgrading::Always),
        &served,
    );
    (p.value, p.schema_version, _) = decoded.map_err(|e| not_fitting(&p.addr, e))?;
    Ok(())
}

fn not_fitting(addr: &Address, e: String) -> Diag {
    state_diag(
        "Invalid object in state",
        format!("The attributes of {addr} in the state do not fit its schema: {e}."),
    )
}

/// The private bytes a state records as base64 (Terraform's form); text
/// that is not base64 is kept as its bytes, so nothing is lost.
pub fn private_bytes(text: Option<&str>) -> Vec<u8> {
    use base64::Engine;
    let Some(text) = text else {
        return Vec::new();
    };
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_else(|_| text.as_bytes().to_vec())
}

/// The private bytes as the state records them.
pub fn private_text(bytes: &[u8]) -> Option<String> {
    use base64::Engine;
    (!bytes.is_empty()).then(|| base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// What the state records beside an object for its driver: private bytes
/// and identity.
pub fn kept_of(i: &InstanceState) -> Kept {
    Kept {
        private: private_bytes(i.private.as_deref()),
        identity: i.identity.clone().map(|value| {
            Box::new(Identity {
                version: i.identity_schema_version.unwrap_or(0),
                value: *value,
            })
        }),
    }
}

/// `kept` with its identity brought up to its type's current identity
/// schema, as Terraform upgrades it before the object's first use.
fn upgraded(driver: &dyn Driver, type_name: &str, mut kept: Kept) -> Result<Kept, String> {
    if let Some(stored) = &kept.identity {
        if let Some(now) = driver.upgrade_identity(type_name, stored) {
            kept.identity = Some(Box::new(now.map_err(|e| e.to_string())?));
        }
    }
    Ok(kept)
}

fn state_diag(summary: &str, detail: String) -> Diag {
    Diag::new("strata::state::decode", summary, detail)
}

/// The state holds objects of `r`'s type, which nothing here serves.
pub fn unsupported(r: &ResourceAddr) -> Diag {
    state_diag(
        "Resource type not supported",
        format!(
            "The state holds {} of type {:?}, which no driver of this strata build provides.",
            r.instance_address(None),
            r.type_name
        ),
    )
}

/// The state's objects of mode `mode` decoded by their schemas (a plan
/// reads managed ones; `show` data sources too). An object whose driver
/// this build lacks, or whose attributes do not fit the schema, is an
/// error: planning around it could delete or duplicate it. Objects of the
/// resources `as_stored` names (those `moved` to another type) are kept
/// as stored instead, for their new type's driver to convert.
pub fn decode_state(
    state: &State,
    drivers: &Drivers,
    (mode, upgrade): (Mode, Upgrade),
    as_stored: &[ResourceAddr],
) -> Result<Vec<PriorInstance>, Diags> {
    let mut jobs = Vec::new();
    let mut diags = Diags::default();
    for r in &state.resources {
        if r.id.mode != mode {
            continue;
        }
        if as_stored.contains(&r.id) {
            jobs.extend(r.instances.iter().map(|i| (r, i, None)));
            continue;
        }
        let found = drivers.of_mode(mode, &r.id.type_name);
        let Some((base, schema)) = found else {
            diags.push(unsupported(&r.id));
            continue;
        };
        let ty = Arc::new(schema.object_type());
        // Upgraded by its own configuration's instance: with only aliased
        // blocks, the default instance is never started.
        let of = |provider: &str| {
            drivers
                .configured(&r.id.type_name, provider, mode)
                .map_or_else(|| base.clone(), |(d, _)| d)
        };
        let shared = of(&r.provider);
        for i in &r.instances {
            let driver = match &i.provider {
                Some(p) => of(p),
                None => shared.clone(),
            };
            jobs.push((r, i, Some((driver, schema, ty.clone()))));
        }
    }
    // Objects decode independently, and a large state is most of a
    // no-change plan's work: spread over the cores.
    let decoded = crate::par::map(&jobs, |(r, i, served)| {
        decode_instance((r, i), served.as_ref(), upgrade)
    });
    let mut out = Vec::with_capacity(decoded.len());
    for d in decoded {
        match d {
            Ok(p) => out.push(p),
            Err(d) => diags.push(d),
        }
    }
    diags.into_result(out)
}

/// The driver that decodes a type's objects, owned, and its schema and
/// object type.
type Decoder<'d> = (Arc<dyn Driver>, &'d ResourceSchema, Arc<Type>);

/// One stored object decoded (left as stored when `served` is none: a
/// `moved` block takes it to another type).
fn decode_instance(
    (r, i): (&ResourceState, &InstanceState),
    served: Option<&Decoder<'_>>,
    upgrade: Upgrade<'_>,
) -> Result<PriorInstance, Diag> {
    let addr = Address {
        id: r.id.clone(),
        key: i.index_key.clone(),
    };
    let text = i.attributes.text();
    let stored = || AsStored {
        json: text.to_string(),
        sensitive: i.sensitive_attributes.clone(),
    };
    let ((value, schema_version), as_stored, held) = match served {
        None => ((Value::null(), i.schema_version), Some(stored()), None),
        Some((driver, schema, ty)) => {
            let upgrading = upgrade.of(r.provider_of(i));
            let decoded = decode_object(
                &r.id,
                (text, &i.sensitive_attributes),
                (i.schema_version, upgrading),
                &(&**driver, *schema, ty.clone()),
            );
            match decoded {
                Ok((v, version, Decoded::BySchema)) if upgrading == Upgrading::UnlessFitting => {
                    ((v, version), None, Some(stored()))
                }
                Ok((v, version, _)) => ((v, version), None, None),
                Err(e) => return Err(not_fitting(&addr, e)),
            }
        }
    };
    let kept = match served {
        Some((driver, ..)) if r.id.mode == Mode::Managed => {
            upgraded(&**driver, &r.id.type_name, kept_of(i)).map_err(|e| not_fitting(&addr, e))?
        }
        _ => kept_of(i),
    };
    Ok(PriorInstance {
        value,
        addr,
        deposed: i.deposed.clone(),
        provider: r.provider_of(i).to_string(),
        schema_version,
        kept,
        dependencies: i.dependencies.clone(),
        create_before_destroy: i.create_before_destroy,
        skip_destroy: i.skip_destroy,
        tainted: i.status.as_deref() == Some("tainted"),
        as_stored,
        held,
    })
}

/// Reads every object back. Returns the objects that still exist, as they
/// are now, and what changed outside strata (an update for a changed object,
/// a delete for a vanished one).
pub async fn refresh(
    prior: Vec<PriorInstance>,
    drivers: &Drivers,
    parallelism: usize,
    skip: &(dyn Fn(&Address) -> bool + Sync),
) -> Result<(Vec<PriorInstance>, Vec<ResourceChange>), Diags> {
    // One read per resource type and provider configuration: the driver
    // batches the API calls.
    let mut by_type: BTreeMap<TypeRead, Vec<PriorInstance>> = BTreeMap::new();
    let mut out = Vec::with_capacity(prior.len());
    for p in prior {
        if skip(&p.addr) {
            out.push(p);
            continue;
        }
        by_type
            .entry(TypeRead {
                type_name: p.addr.id.type_name.clone(),
                provider: p.provider.clone(),
            })
            .or_default()
            .push(p);
    }
    // The types are read side by side, as many at once as the
    // parallelism, and their one-call-per-object reads share its slots:
    // a refresh takes about as long as its slowest type, not their sum.
    // Answers are taken in the types' order, so what is printed is too.
    let slots = Slots::new(parallelism);
    let reads = by_type
        .into_iter()
        .map(|(t, group)| read_group(t, group, drivers, &slots));
    let mut answers = futures::stream::iter(reads).buffered(parallelism.max(1));
    let mut drift = Vec::new();
    let mut diags = Diags::default();
    let mut interrupted = false;
    while let Some(answer) = answers.next().await {
        match answer {
            GroupRead::Kept(group) => out.extend(group),
            GroupRead::Read(group, read, schema) => {
                for (p, now) in group.into_iter().zip(read) {
                    compared(p, now, schema, (&mut out, &mut drift));
                }
            }
            GroupRead::Failed(d) => diags.push(d),
            GroupRead::Unread => {}
            GroupRead::Interrupted => interrupted = true,
        }
    }
    if interrupted {
        diags.push(Diag::new(
            "strata::interrupted",
            crate::interrupt::HALTED,
            "Interrupted before every object was read: nothing was planned.",
        ));
    }
    diags.into_result((out, drift))
}

/// The objects one driver call reads: a type under one provider
/// configuration.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct TypeRead {
    type_name: String,
    provider: String,
}

/// What became of one type's objects in a refresh.
enum GroupRead<'d> {
    /// Not read now: kept as stored.
    Kept(Vec<PriorInstance>),
    /// Read: each object as it is now (`None`: gone), beside its prior.
    Read(Vec<PriorInstance>, Vec<Option<Stored>>, &'d ResourceSchema),
    Failed(Diag),
    /// No driver serves the type (said where the drivers are configured).
    Unread,
    /// Not started: the run was interrupted.
    Interrupted,
}

/// Reads one type's objects through its driver.
async fn read_group<'d>(
    t: TypeRead,
    group: Vec<PriorInstance>,
    drivers: &'d Drivers,
    slots: &Slots,
) -> GroupRead<'d> {
    if crate::interrupt::requested() {
        return GroupRead::Interrupted;
    }
    // A configuration that waits for resources' attributes is read when
    // the plan's walk configures it.
    if drivers.deferred(&t.provider).is_some() {
        return GroupRead::Kept(group);
    }
    let Some((driver, schema)) = drivers.configured(&t.type_name, &t.provider, Mode::Managed)
    else {
        return GroupRead::Unread;
    };
    match drivers.ready(&driver, &t.provider) {
        Ok(()) => {}
        Err(Some(refused)) => return GroupRead::Failed(refused),
        // Told by the group that asked first; the plan fails on it.
        Err(None) => return GroupRead::Kept(group),
    }
    let stored: Vec<Stored> = group
        .iter()
        .map(|p| Stored {
            value: p.value.clone(),
            kept: p.kept.clone(),
        })
        .collect();
    match driver.read_stored(&t.type_name, &stored, slots).await {
        Ok(r) if r.len() == group.len() => GroupRead::Read(group, r, schema),
        Ok(r) => GroupRead::Failed(Diag::new(
            "strata::driver::read",
            "Driver returned the wrong number of objects",
            format!(
                "Reading {} objects of type {:?} returned {}.",
                group.len(),
                t.type_name,
                r.len()
            ),
        )),
        Err(e) => GroupRead::Failed(Diag::new(
            "strata::driver::read",
            format!("Refreshing {} failed", t.type_name),
            e.to_string(),
        )),
    }
}

/// The prior object `p` against what the driver read of it now: kept,
/// changed outside strata (drift, and kept as it is now), or gone (drift).
fn compared(
    p: PriorInstance,
    now: Option<Stored>,
    schema: &strata_provider::ResourceSchema,
    (out, drift): (&mut Vec<PriorInstance>, &mut Vec<ResourceChange>),
) {
    // A read that answered with the stored object itself (a type kept in
    // the state alone) has nothing to mark again or compare.
    let now = match now {
        Some(s) if s.value.is_shared_with(&p.value) => {
            return out.push(PriorInstance { kept: s.kept, ..p });
        }
        now => now,
    };
    // A driver answers plain values: what was sensitive in the state (and
    // what the schema calls sensitive) is marked again before anything
    // compares or shows it.
    let now = now.map(|s| Stored {
        value: super::diff::with_marks(s.value, Some(&p.value), schema),
        kept: s.kept,
    });
    match now {
        Some(s) if s.value.raw_equal(&p.value) => out.push(PriorInstance { kept: s.kept, ..p }),
        Some(s) => {
            let p = PriorInstance { kept: s.kept, ..p };
            drift.push(change_of(&p, Action::Update, Some(s.value.clone())));
            out.push(PriorInstance {
                value: s.value,
                ..p
            });
        }
        None => drift.push(change_of(&p, Action::Delete, None)),
    }
}

/// A change of the prior object `p`: drift, or (no-op) one left alone.
pub(super) fn change_of(p: &PriorInstance, action: Action, after: Option<Value>) -> ResourceChange {
    let kept_after = if after.is_some() {
        p.kept.clone()
    } else {
        Kept::default()
    };
    ResourceChange {
        addr: p.addr.clone(),
        deposed: p.deposed.clone(),
        tainted: p.tainted,
        previous_addr: None,
        provider: p.provider.clone(),
        action,
        reason: None,
        before: Some(p.value.clone()),
        after,
        replace_paths: Vec::new(),
        schema_version: p.schema_version,
        kept_before: p.kept.clone(),
        kept_after,
        dependencies: p.dependencies.clone(),
        create_before_destroy: p.create_before_destroy,
        skip_destroy: p.skip_destroy,
        importing: None,
    }
}
