//! Terraform's machine-readable UI (`plan -json`, `apply -json`): one JSON
//! object per line, each with `@level`, `@message`, `@module`
//! ("terraform.ui"), `@timestamp` and a `type`, and what that type
//! carries. The envelope and the resource identity every hook and change
//! names are built here, once, for the plan's messages (render), the
//! apply's progress (apply) and the diagnostics (cli).

use serde_json::{json, Map, Value as Json};
use strata_state::model::{Address, InstanceKey};

/// The `id` attribute of an object, which every message about it shows.
pub fn id_of(v: &crate::lang::value::Value) -> Option<String> {
    v.unmarked()
        .entries()?
        .get("id")?
        .as_str()
        .map(str::to_string)
}

/// The UI's version, as Terraform 1.11 writes it.
pub const VERSION: &str = "1.2";

/// One message as a line: `fields` (an object) joined to the envelope.
pub fn line(level: &str, message: &str, kind: &str, fields: Json) -> String {
    let timestamp = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let mut m = Map::new();
    m.insert("@level".into(), json!(level));
    m.insert("@message".into(), json!(message));
    m.insert("@module".into(), json!("terraform.ui"));
    m.insert("@timestamp".into(), json!(timestamp));
    if let Json::Object(extra) = fields {
        m.extend(extra);
    }
    m.insert("type".into(), json!(kind));
    Json::Object(m).to_string()
}

/// The message that opens every stream: which tool and UI version.
pub fn version(language: &str) -> String {
    line(
        "info",
        &format!(
            "strata {} (Terraform language {language})",
            env!("CARGO_PKG_VERSION")
        ),
        "version",
        json!({"terraform": language, "ui": VERSION}),
    )
}

/// The `resource` object of a hook or a change.
pub fn resource(addr: &Address) -> Json {
    let id = &addr.id;
    let module = match id.module.is_root() {
        true => String::new(),
        false => id.module.to_string(),
    };
    let key = match &addr.key {
        Some(InstanceKey::Int(i)) => json!(i),
        Some(InstanceKey::Str(s)) => json!(s),
        None => Json::Null,
    };
    let local = id.instance_address(addr.key.as_ref());
    let resource = match module.is_empty() {
        true => local.clone(),
        false => local
            .strip_prefix(&format!("{module}."))
            .unwrap_or(&local)
            .to_string(),
    };
    json!({
        "addr": addr.to_string(),
        "module": module,
        "resource": resource,
        "implied_provider": id.type_name.split('_').next().unwrap_or(&id.type_name),
        "resource_type": id.type_name,
        "resource_name": id.name,
        "resource_key": key,
    })
}

/// A diagnostic as a message (`diagnostic` is its JSON, `Diag::to_json`).
pub fn diagnostic(warning: bool, summary: &str, diagnostic: Json) -> String {
    let (level, word) = match warning {
        true => ("warn", "Warning"),
        false => ("error", "Error"),
    };
    line(
        level,
        &format!("{word}: {summary}"),
        "diagnostic",
        json!({"diagnostic": diagnostic}),
    )
}

/// `TF_IN_AUTOMATION` set: a script is reading, so the advice a person
/// would act on next (what to type, the `-out` note) is left out, as
/// Terraform leaves it out.
pub fn in_automation() -> bool {
    std::env::var_os("TF_IN_AUTOMATION").is_some_and(|v| !v.is_empty())
}

/// What happened to an ephemeral resource instance, as both UIs say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EphemeralStep {
    Opening,
    Opened {
        secs: u64,
    },
    /// Its configuration is not known yet: the apply opens it.
    Deferred,
    Closing,
    Closed {
        secs: u64,
    },
}

impl EphemeralStep {
    /// The line Terraform prints for it.
    pub fn line(&self, addr: &Address) -> String {
        match self {
            EphemeralStep::Opening => format!("{addr}: Opening..."),
            EphemeralStep::Opened { secs } => format!("{addr}: Opening complete after {secs}s"),
            EphemeralStep::Deferred => format!("{addr}: Configuration unknown, deferring..."),
            EphemeralStep::Closing => format!("{addr}: Closing..."),
            EphemeralStep::Closed { secs } => format!("{addr}: Closing complete after {secs}s"),
        }
    }

    /// The machine-readable UI's message for it (`ephemeral_op_start`,
    /// `ephemeral_op_complete`); `None` for a deferral, of which it says
    /// nothing.
    pub fn json(&self, addr: &Address) -> Option<String> {
        let (kind, action, secs) = match self {
            EphemeralStep::Opening => ("ephemeral_op_start", "open", None),
            EphemeralStep::Opened { secs } => ("ephemeral_op_complete", "open", Some(secs)),
            EphemeralStep::Closing => ("ephemeral_op_start", "close", None),
            EphemeralStep::Closed { secs } => ("ephemeral_op_complete", "close", Some(secs)),
            EphemeralStep::Deferred => return None,
        };
        let mut hook = json!({"resource": resource(addr), "action": action});
        if let Some(secs) = secs {
            hook["elapsed_seconds"] = json!(secs);
        }
        Some(line("info", &self.line(addr), kind, json!({"hook": hook})))
    }
}

/// What an action invocation has come to, as the machine-readable UI
/// says it.
pub enum ActionStep<'a> {
    Started,
    Progress(&'a str),
    Complete,
    Errored(&'a str),
}

/// An action invocation as its hook messages name it.
pub struct ActionHook<'a> {
    /// `action.TYPE.NAME`, with its key.
    pub addr: &'a str,
    pub type_name: &'a str,
    pub name: &'a str,
    /// The resource change that triggers it; none from the command line.
    pub lifecycle: Option<LifecycleHook<'a>>,
}

/// Which `action_trigger` of which resource, in Terraform's words.
pub struct LifecycleHook<'a> {
    pub resource: &'a Address,
    pub block: usize,
    pub index: usize,
    pub event: &'a str,
    pub on_failure: &'a str,
}

/// An action instance as Terraform's machine-readable UI names it: the
/// module instance it is in, its address there, its key.
pub fn action_addr(addr: &str, type_name: &str, name: &str) -> Json {
    let local = format!("action.{type_name}.{name}");
    let at = addr.rfind(&local).unwrap_or(0);
    let module = addr[..at].trim_end_matches('.');
    let keyed = &addr[at + local.len().min(addr.len() - at)..];
    let key = match keyed.strip_prefix('[').and_then(|k| k.strip_suffix(']')) {
        Some(k) => serde_json::from_str::<Json>(k).unwrap_or(Json::Null),
        None => Json::Null,
    };
    json!({
        "addr": addr,
        "module": module,
        "action": &addr[at..],
        "implied_provider": type_name.split('_').next().unwrap_or_default(),
        "action_type": type_name,
        "action_name": name,
        "action_key": key,
    })
}

/// One of an action's messages (Terraform 1.14's `action_start`,
/// `action_progress`, `action_complete`, `action_errored`).
pub fn action_said(a: &ActionHook<'_>, step: ActionStep<'_>) -> String {
    let addr = a.addr;
    let mut hook = json!({ "action": action_addr(addr, a.type_name, a.name) });
    // Terraform's lines name a triggered action by its resource and block.
    let (start, at) = match &a.lifecycle {
        None => {
            hook["invoke"] = json!({});
            (String::new(), String::new())
        }
        Some(l) => {
            hook["lifecycle"] = json!({
                "resource": resource(l.resource),
                "trigger_index": l.block,
                "actions_index": l.index,
                "trigger_event": l.event,
                "on_failure": l.on_failure,
            });
            (
                format!("{}.trigger[{}]: ", l.resource, l.block),
                format!("{} ({}): ", l.resource, l.block),
            )
        }
    };
    let (kind, said) = match step {
        ActionStep::Started => ("action_start", format!("{start}Action started: {addr}")),
        ActionStep::Progress(m) => {
            hook["message"] = json!(m);
            ("action_progress", format!("{at}{addr} - {m}"))
        }
        ActionStep::Complete => ("action_complete", format!("{at}Action complete: {addr}")),
        ActionStep::Errored(e) => {
            hook["error"] = json!(e);
            (
                "action_errored",
                format!("{at}Action errored: {addr} - {e}"),
            )
        }
    };
    line("info", &said, kind, json!({ "hook": hook }))
}

#[cfg(test)]
mod tests {
    use super::action_addr;
    use serde_json::json;

    #[test]
    fn an_action_address_is_split_as_terraforms_ui_splits_it() {
        let a = action_addr("action.aws_lambda_invoke.a", "aws_lambda_invoke", "a");
        assert_eq!(
            (&a["module"], &a["action"], &a["action_key"]),
            (
                &json!(""),
                &json!("action.aws_lambda_invoke.a"),
                &json!(null)
            )
        );
        let a = action_addr(
            "module.action[\"x\"].action.t_n.action[\"1\"]",
            "t_n",
            "action",
        );
        assert_eq!(a["module"], "module.action[\"x\"]");
        assert_eq!(a["action"], "action.t_n.action[\"1\"]");
        assert_eq!(a["action_key"], "1");
        assert_eq!(action_addr("action.t_n.c[2]", "t_n", "c")["action_key"], 2);
    }
}
