//! The prior state as values, and refresh: reading every managed object
//! back through its driver, one batched `read` per resource type.

use super::{Action, ResourceChange};
use crate::builtin::Drivers;
use crate::diag::{Diag, Diags};
use crate::lang::typed_json::value_from_json_text;
use crate::lang::value::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use strata_provider::Stored;
use strata_state::model::{Address, Mode, ResourceAddr, State};

/// One object of the prior state, decoded with its driver's schema.
#[derive(Debug, Clone)]
pub struct PriorInstance {
    pub addr: Address,
    pub deposed: Option<String>,
    pub provider: String,
    pub value: Value,
    pub schema_version: u64,
    /// What its driver keeps beside it (a plugin provider's private data).
    pub private: Vec<u8>,
    pub dependencies: Vec<ResourceAddr>,
    pub create_before_destroy: bool,
    /// Left by a failed create: the plan replaces it.
    pub tainted: bool,
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

fn state_diag(summary: &str, detail: String) -> Diag {
    Diag::new("strata::state::decode", summary, detail)
}

/// Every managed object in `state`, decoded. An object whose driver this
/// build lacks, or whose attributes do not fit the schema, is an error:
/// planning around it could delete or duplicate it.
/// The state's objects of mode `mode` decoded by their schemas (a plan
/// reads managed ones; `show` data sources too).
pub fn decode_state(
    state: &State,
    drivers: &Drivers,
    mode: Mode,
) -> Result<Vec<PriorInstance>, Diags> {
    let mut jobs = Vec::new();
    let mut diags = Diags::default();
    for r in &state.resources {
        if r.id.mode != mode {
            continue;
        }
        let found = match mode {
            Mode::Managed => drivers.resource(&r.id.type_name),
            Mode::Data => drivers.data(&r.id.type_name),
        };
        let Some((driver, schema)) = found else {
            diags.push(state_diag(
                "Resource type not supported",
                format!(
                    "The state holds {} of type {:?}, which no driver of this strata build provides.",
                    r.id.instance_address(None),
                    r.id.type_name
                ),
            ));
            continue;
        };
        let ty = Arc::new(schema.object_type());
        jobs.extend(
            r.instances
                .iter()
                .map(|i| (r, i, (&**driver, schema), ty.clone())),
        );
    }
    // Objects decode independently, and a large state is most of a
    // no-change plan's work: spread over the cores.
    let decoded = crate::par::map(&jobs, |(r, i, (driver, schema), ty)| {
        let addr = Address {
            id: r.id.clone(),
            key: i.index_key.clone(),
        };
        // A plugin provider brings what older versions of it stored up
        // to its current schema; other drivers' objects are read as stored.
        let upgraded = driver.upgrade(&r.id.type_name, i.schema_version, i.attributes.text());
        let (decoded, schema_version) = match upgraded {
            Some(Ok(v)) => (Ok(v), schema.version),
            Some(Err(e)) => (Err(e.to_string()), i.schema_version),
            None => (
                value_from_json_text(i.attributes.text(), ty).map_err(|e| e.to_string()),
                i.schema_version,
            ),
        };
        match decoded {
            Ok(value) => Ok(PriorInstance {
                value: super::diff::with_marks(
                    crate::lang::json::apply_mark_paths(value, &i.sensitive_attributes),
                    None,
                    schema,
                ),
                addr,
                deposed: i.deposed.clone(),
                provider: r.provider.clone(),
                schema_version,
                private: private_bytes(i.private.as_deref()),
                dependencies: i.dependencies.clone(),
                create_before_destroy: i.create_before_destroy,
                tainted: i.status.as_deref() == Some("tainted"),
            }),
            Err(e) => Err(state_diag(
                "Invalid object in state",
                format!("The attributes of {addr} in the state do not fit its schema: {e}."),
            )),
        }
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
    let mut by_type: BTreeMap<(String, String), Vec<PriorInstance>> = BTreeMap::new();
    let mut out = Vec::new();
    for p in prior {
        if skip(&p.addr) {
            out.push(p);
            continue;
        }
        by_type
            .entry((p.addr.id.type_name.clone(), p.provider.clone()))
            .or_default()
            .push(p);
    }
    let mut drift = Vec::new();
    let mut diags = Diags::default();
    for ((type_name, provider), group) in by_type {
        // A configuration that waits for resources' attributes is read
        // when the plan's walk configures it.
        if drivers.deferred(&provider).is_some() {
            out.extend(group);
            continue;
        }
        let Some((driver, schema)) = drivers.configured(&type_name, &provider, false) else {
            continue;
        };
        let stored: Vec<Stored> = group
            .iter()
            .map(|p| Stored {
                value: p.value.clone(),
                private: p.private.clone(),
            })
            .collect();
        let read = match driver.read_stored(&type_name, &stored, parallelism).await {
            Ok(r) if r.len() == group.len() => r,
            Ok(r) => {
                diags.push(Diag::new(
                    "strata::driver::read",
                    "Driver returned the wrong number of objects",
                    format!(
                        "Reading {} objects of type {type_name:?} returned {}.",
                        group.len(),
                        r.len()
                    ),
                ));
                continue;
            }
            Err(e) => {
                diags.push(Diag::new(
                    "strata::driver::read",
                    format!("Refreshing {type_name} failed"),
                    e.to_string(),
                ));
                continue;
            }
        };
        for (p, now) in group.into_iter().zip(read) {
            // A driver answers plain values: what was sensitive in the
            // state (and what the schema calls sensitive) is marked again
            // before anything compares or shows it.
            let now = now.map(|s| Stored {
                value: super::diff::with_marks(s.value, Some(&p.value), schema),
                private: s.private,
            });
            match now {
                Some(s) if s.value.raw_equal(&p.value) => out.push(PriorInstance {
                    private: s.private,
                    ..p
                }),
                Some(s) => {
                    let p = PriorInstance {
                        private: s.private,
                        ..p
                    };
                    drift.push(change_of(&p, Action::Update, Some(s.value.clone())));
                    out.push(PriorInstance {
                        value: s.value,
                        ..p
                    });
                }
                None => drift.push(change_of(&p, Action::Delete, None)),
            }
        }
    }
    diags.into_result((out, drift))
}

/// A change of the prior object `p`: drift, or (no-op) one left alone.
pub(super) fn change_of(p: &PriorInstance, action: Action, after: Option<Value>) -> ResourceChange {
    let private_after = if after.is_some() {
        p.private.clone()
    } else {
        Vec::new()
    };
    ResourceChange {
        addr: p.addr.clone(),
        deposed: p.deposed.clone(),
        previous_addr: None,
        provider: p.provider.clone(),
        action,
        reason: None,
        before: Some(p.value.clone()),
        after,
        replace_paths: Vec::new(),
        schema_version: p.schema_version,
        private_before: p.private.clone(),
        private_after,
        dependencies: p.dependencies.clone(),
        create_before_destroy: p.create_before_destroy,
        importing: None,
    }
}
