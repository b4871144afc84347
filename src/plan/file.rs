//! Saved plans (`strata plan --out FILE`): the plan with the state lineage
//! and serial it was made against, the variables, and a digest of every
//! configuration file, so `strata apply FILE` applies exactly this plan or
//! refuses.

use super::{Action, ActionInvocation, Mode, OutputChange, Plan, Reason, ResourceChange, Schemas};
use crate::cost::Cost;
use crate::graph::{Scope, Target};
use crate::lang::json::{mask, plain_json, type_from_json, type_to_json, unmask, value_from_json};
use crate::lang::value::Value;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use strata_provider::{Identity, ImportBy, Kept, UsedSchemas};
use strata_state::model::{Address, ResourceAddr};

/// Bumped when the layout changes; older files are refused, not misread.
pub const FORMAT: u64 = 1;

fn encode_value(v: &Value) -> Json {
    json!({
        "type": type_to_json(&v.ty()),
        "value": plain_json(v),
        "unknown": mask(v, &|x| !x.is_known()),
        "sensitive": mask(v, &Value::is_sensitive),
    })
}

fn decode_value(j: &Json) -> Result<Value, String> {
    let ty = type_from_json(j.get("type").ok_or("a value without a type")?)?;
    let v = value_from_json(j.get("value").unwrap_or(&Json::Null), &ty)?;
    let v = unmask(v, j.get("unknown").unwrap_or(&Json::Bool(false)), &|x| {
        Value::Unknown(x.ty())
    });
    Ok(unmask(
        v,
        j.get("sensitive").unwrap_or(&Json::Bool(false)),
        &Value::mark,
    ))
}

fn action_name(a: Action) -> &'static str {
    match a {
        Action::NoOp => "no-op",
        Action::Create => "create",
        Action::Read => "read",
        Action::Update => "update",
        Action::DeleteThenCreate => "delete-then-create",
        Action::CreateThenDelete => "create-then-delete",
        Action::Delete => "delete",
        Action::Forget => "forget",
        Action::CreateThenForget => "create-then-forget",
    }
}

fn action_from(s: &str) -> Option<Action> {
    [
        Action::NoOp,
        Action::Create,
        Action::Read,
        Action::Update,
        Action::DeleteThenCreate,
        Action::CreateThenDelete,
        Action::Delete,
        Action::Forget,
        Action::CreateThenForget,
    ]
    .into_iter()
    .find(|a| action_name(*a) == s)
}

const REASONS: [Reason; 14] = [
    Reason::WrongRepetition,
    Reason::ReadConfigUnknown,
    Reason::ReadDependencyPending,
    Reason::NoResourceConfig,
    Reason::CountIndex,
    Reason::EachKey,
    Reason::EnabledFalse,
    Reason::NoModule,
    Reason::ReplaceTriggered,
    Reason::Tainted,
    Reason::ReplaceByRequest,
    Reason::CannotUpdate,
    Reason::Destroy,
    Reason::Lasting,
];

fn change_json(c: &ResourceChange) -> Json {
    json!({
        "address": c.addr.to_string(),
        "deposed": c.deposed,
        "tainted": c.tainted,
        "previous_address": c.previous_addr.as_ref().map(ToString::to_string),
        "provider": c.provider,
        "action": action_name(c.action),
        "reason": c.reason.map(Reason::json),
        "before": c.before.as_ref().map(encode_value),
        "after": c.after.as_ref().map(encode_value),
        "replace_paths": c.replace_paths,
        "schema_version": c.schema_version,
        "private_before": crate::plan::refresh::private_text(&c.kept_before.private),
        "private_after": crate::plan::refresh::private_text(&c.kept_after.private),
        "identity_before": identity_json(&c.kept_before),
        "identity_after": identity_json(&c.kept_after),
        "dependencies": c.dependencies.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "create_before_destroy": c.create_before_destroy,
        "skip_destroy": c.skip_destroy,
        "importing": c.importing.as_ref().map(importing_json),
    })
}

/// An action invocation as the plan file holds it.
fn action_json(a: &ActionInvocation) -> Json {
    json!({
        "address": a.addr,
        "type": a.type_name,
        "name": a.name,
        "provider": a.provider,
        "config": encode_value(&a.config),
        "trigger": match a.lifecycle() {
            None => json!("cli"),
            Some(l) => json!({
                "resource": l.resource.to_string(),
                "event": super::action::event_name(l.event),
                "block": l.block,
                "index": l.index,
                "on_failure": super::action::on_failure_name(l.on_failure),
            }),
        },
    })
}

/// What triggered an invocation, as `action_json` wrote it.
fn trigger_of(j: Option<&Json>) -> Result<super::ActionTrigger, String> {
    let Some(l) = j.filter(|t| t.is_object()) else {
        return Ok(super::ActionTrigger::Cli);
    };
    let text = |k: &str| l.get(k).and_then(Json::as_str).unwrap_or_default();
    let index = |k: &str| {
        let n = l.get(k).and_then(Json::as_u64).unwrap_or_default();
        usize::try_from(n).unwrap_or_default()
    };
    let resource = strata_state::model::Address::parse(text("resource"))
        .ok_or("an action trigger without its resource")?;
    Ok(super::ActionTrigger::Lifecycle(super::LifecycleTrigger {
        resource,
        event: super::action::event_from(text("event"))
            .ok_or("an action trigger without its event")?,
        block: index("block"),
        index: index("index"),
        on_failure: super::action::on_failure_from(text("on_failure"))
            .ok_or("an action trigger without its on_failure")?,
    }))
}

fn actions_of(j: &Json) -> Result<Vec<ActionInvocation>, String> {
    let Some(all) = j.get("actions").and_then(Json::as_array) else {
        return Ok(Vec::new());
    };
    all.iter()
        .map(|a| {
            let s = |k: &str| {
                a.get(k)
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            Ok(ActionInvocation {
                addr: s("address"),
                type_name: s("type"),
                name: s("name"),
                provider: s("provider"),
                config: decode_value(a.get("config").ok_or("an action without its config")?)?,
                trigger: trigger_of(a.get("trigger"))?,
            })
        })
        .collect()
}

/// What an import finds its object by, as the plan file holds it: the id
/// as a string (as before identities), an identity as `{"identity": …}`.
fn importing_json(by: &ImportBy) -> Json {
    match by {
        ImportBy::Id(id) => json!(id),
        ImportBy::Identity(identity) => json!({ "identity": identity }),
    }
}

fn importing_from(j: Option<&Json>) -> Option<ImportBy> {
    match j? {
        Json::String(id) => Some(ImportBy::Id(id.clone())),
        Json::Object(o) => o
            .get("identity")
            .cloned()
            .map(|i| ImportBy::Identity(Box::new(i))),
        _ => None,
    }
}

/// An identity kept beside an object, as the plan file holds it.
fn identity_json(kept: &Kept) -> Json {
    match &kept.identity {
        Some(i) => json!({ "version": i.version, "value": i.value }),
        None => Json::Null,
    }
}

/// What a change keeps beside its object `side` (`before`, `after`).
fn kept_from(j: &Json, side: &str) -> Kept {
    let private = j.get(format!("private_{side}")).and_then(Json::as_str);
    let identity = j.get(format!("identity_{side}")).and_then(|i| {
        Some(Box::new(Identity {
            version: i.get("version")?.as_u64()?,
            value: i.get("value")?.clone(),
        }))
    });
    Kept {
        private: crate::plan::refresh::private_bytes(private),
        identity,
    }
}

fn change_from(j: &Json) -> Result<ResourceChange, String> {
    let s = |k: &str| j.get(k).and_then(Json::as_str);
    let addr = |k: &str| -> Result<Option<Address>, String> {
        match s(k) {
            None => Ok(None),
            Some(a) => Address::parse(a)
                .map(Some)
                .ok_or_else(|| format!("invalid address {a:?}")),
        }
    };
    let value = |k: &str| -> Result<Option<Value>, String> {
        match j.get(k) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => decode_value(v).map(Some),
        }
    };
    let addrs = |k: &str| -> Result<Vec<ResourceAddr>, String> {
        j.get(k)
            .and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .map(|x| {
                        x.as_str()
                            .and_then(ResourceAddr::parse)
                            .ok_or_else(|| format!("invalid dependency {x}"))
                    })
                    .collect()
            })
            .unwrap_or(Ok(Vec::new()))
    };
    Ok(ResourceChange {
        addr: addr("address")?.ok_or("a change without an address")?,
        deposed: s("deposed").map(str::to_string),
        tainted: j.get("tainted").and_then(Json::as_bool).unwrap_or(false),
        previous_addr: addr("previous_address")?.map(Box::new),
        provider: s("provider").unwrap_or_default().to_string(),
        action: s("action")
            .and_then(action_from)
            .ok_or("a change without a valid action")?,
        reason: s("reason").and_then(|r| REASONS.into_iter().find(|x| x.json() == r)),
        before: value("before")?,
        after: value("after")?,
        replace_paths: serde_json::from_value(j.get("replace_paths").cloned().unwrap_or(json!([])))
            .map_err(|e| e.to_string())?,
        schema_version: j.get("schema_version").and_then(Json::as_u64).unwrap_or(0),
        kept_before: kept_from(j, "before"),
        kept_after: kept_from(j, "after"),
        dependencies: addrs("dependencies")?,
        create_before_destroy: j
            .get("create_before_destroy")
            .and_then(Json::as_bool)
            .unwrap_or(false),
        skip_destroy: j
            .get("skip_destroy")
            .and_then(Json::as_bool)
            .unwrap_or(false),
        importing: importing_from(j.get("importing")),
    })
}

/// What a plan file holds besides the plan.
#[derive(Debug, Clone)]
pub struct Saved {
    pub plan: Plan,
    /// The configuration directory the plan was made from.
    pub config_dir: String,
    /// File name → SHA-256 of its bytes.
    pub files: BTreeMap<String, String>,
    /// `--replace-placement` as planned: applying the file places those
    /// pools as its plan did.
    pub replace_placement: Vec<String>,
    /// Each plugin's schemas of the types the plan used, by provider
    /// source: showing or applying the file asks no provider for them.
    pub provider_schemas: BTreeMap<String, UsedSchemas>,
}

impl Saved {
    /// The plan file's text.
    pub fn encode(&self) -> String {
        let s = self;
        let p = &s.plan;
        let j = json!({
            "strata_plan_format": FORMAT,
            "strata_version": env!("CARGO_PKG_VERSION"),
            "lineage": p.lineage,
            "serial": p.serial,
            "destroy": p.mode.is_destroy(),
            "timestamp": p.timestamp,
            "config_dir": s.config_dir,
            "files": s.files,
            "replace_placement": s.replace_placement,
            "provider_schemas": schemas_json(&s.provider_schemas),
            "configuration": p.configuration,
            "variables": p.variables.iter().map(|(k, v)| (k.clone(), encode_value(v))).collect::<serde_json::Map<_, _>>(),
            "changes": p.changes.iter().map(change_json).collect::<Vec<_>>(),
            "untouched": p.untouched.iter().map(change_json).collect::<Vec<_>>(),
            "targets": p.scope.targets.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "excludes": p.scope.excludes.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "refresh_only": p.mode.is_refresh_only(),
            "errored": p.errored,
            "relevant_attributes": p.relevant_attributes,
            "drift": p.drift.iter().map(change_json).collect::<Vec<_>>(),
            "actions": p.actions.iter().map(action_json).collect::<Vec<_>>(),
            "cost": p.cost.to_json(),
            "outputs": p.outputs.iter().map(|o| json!({
                "name": o.name,
                "before": o.before.as_ref().map(encode_value),
                "after": o.after.as_ref().map(encode_value),
                "sensitive": o.sensitive,
            })).collect::<Vec<_>>(),
        });
        let mut text = serde_json::to_string_pretty(&j).unwrap_or_default();
        text.push('\n');
        text
    }

    /// A plan file read back, without its schemas (the drivers that apply
    /// or show it give them); an error says why it is not one this strata
    /// reads.
    pub fn decode(text: &str) -> Result<Saved, String> {
        let j: Json =
            serde_json::from_str(text).map_err(|e| format!("not a strata plan file: {e}"))?;
        format_of(&j)?;
        let list = |k: &str| -> Result<Vec<ResourceChange>, String> {
            j.get(k)
                .and_then(Json::as_array)
                .map(|a| a.iter().map(change_from).collect())
                .unwrap_or(Ok(Vec::new()))
        };
        let targets = |k: &str| -> Result<Vec<Target>, String> {
            j.get(k)
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .map(|t| Target::parse(t.as_str().unwrap_or_default()))
                .collect()
        };
        let flag = |k: &str| j.get(k).and_then(Json::as_bool).unwrap_or(false);
        let outputs = outputs_of(&j)?;
        let vars = variables_of(&j)?;
        Ok(Saved {
            plan: Plan {
                lineage: j
                    .get("lineage")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string(),
                serial: j.get("serial").and_then(Json::as_u64).ok_or("no serial")?,
                mode: Mode::from_flags(flag("destroy"), flag("refresh_only"))
                    .map_err(|d| d.detail)?,
                changes: list("changes")?,
                drift: list("drift")?,
                outputs,
                actions: actions_of(&j)?,
                variables: vars,
                configuration: j.get("configuration").cloned().unwrap_or(Json::Null),
                warnings: Vec::new(),
                timestamp: j
                    .get("timestamp")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string(),
                schemas: Schemas::default(),
                cost: match j.get("cost") {
                    Some(c) => Cost::from_json(c)?,
                    None => Cost::default(),
                },
                placements: Vec::new(),
                dispatch: Vec::new(),
                plugin_served: Vec::new(),
                scope: Scope {
                    targets: targets("targets")?,
                    excludes: targets("excludes")?,
                },
                read_only: None,
                untouched: list("untouched")?,
                relevant_attributes: j
                    .get("relevant_attributes")
                    .and_then(|r| serde_json::from_value(r.clone()).ok())
                    .unwrap_or_default(),
                generated_config: Default::default(),
                ephemeral: Vec::new(),
                errored: j.get("errored").and_then(Json::as_bool).unwrap_or(false),
            },
            config_dir: j
                .get("config_dir")
                .and_then(Json::as_str)
                .unwrap_or(".")
                .to_string(),
            files: serde_json::from_value(j.get("files").cloned().unwrap_or(json!({})))
                .map_err(|e| e.to_string())?,
            replace_placement: serde_json::from_value(
                j.get("replace_placement").cloned().unwrap_or(json!([])),
            )
            .map_err(|e| e.to_string())?,
            provider_schemas: schemas_from(&j),
        })
    }
}

/// The schemas a plan file carries, by provider source, as its text has
/// them; none when it is not a plan file or carries none (an older one).
pub fn provider_schemas(text: &str) -> BTreeMap<String, UsedSchemas> {
    serde_json::from_str::<Json>(text)
        .map(|j| schemas_from(&j))
        .unwrap_or_default()
}

fn schemas_json(schemas: &BTreeMap<String, UsedSchemas>) -> Json {
    let each =
        |u: &UsedSchemas| json!({ "package": u.package, "packed": BASE64.encode(&u.packed) });
    Json::Object(schemas.iter().map(|(k, u)| (k.clone(), each(u))).collect())
}

/// A schema that does not read is left out: its provider is then asked.
fn schemas_from(j: &Json) -> BTreeMap<String, UsedSchemas> {
    let each = |u: &Json| {
        Some(UsedSchemas {
            package: u.get("package")?.as_str()?.to_string(),
            packed: BASE64.decode(u.get("packed")?.as_str()?).ok()?,
        })
    };
    j.get("provider_schemas")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, u)| Some((k.clone(), each(u)?)))
        .collect()
}

/// Whether the file says it is a plan in the format this strata reads.
fn format_of(j: &Json) -> Result<(), String> {
    match j.get("strata_plan_format").and_then(Json::as_u64) {
        Some(FORMAT) => Ok(()),
        Some(n) => Err(format!(
            "plan file format {n} is not the format {FORMAT} this strata reads; \
             make the plan again with this strata"
        )),
        None => Err("not a strata plan file (no \"strata_plan_format\")".into()),
    }
}

fn outputs_of(j: &Json) -> Result<Vec<OutputChange>, String> {
    let opt = |o: &Json, k: &str| -> Result<Option<Value>, String> {
        match o.get(k) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => decode_value(v).map(Some),
        }
    };
    j.get("outputs")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|o| {
            Ok(OutputChange {
                name: o
                    .get("name")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string(),
                before: opt(o, "before")?,
                after: opt(o, "after")?,
                sensitive: o.get("sensitive").and_then(Json::as_bool).unwrap_or(false),
            })
        })
        .collect()
}

fn variables_of(j: &Json) -> Result<BTreeMap<String, Value>, String> {
    j.get("variables")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| Ok((k.clone(), decode_value(v)?)))
        .collect()
}
