//! `strata state list|show|rm|mv`, `strata output` and `strata force-unlock`:
//! reading and surgery on the state, through the state crate's backend.

use crate::diag::{Diag, Diags};
use std::fmt::Write as _;
use std::path::Path;
use strata_state::{Address, InstanceState, ModulePath, ResourceState, State, StateError, Store};

pub(crate) fn state_err(e: StateError) -> Diags {
    let code = match &e {
        StateError::Locked { .. } => "strata::state::locked",
        StateError::Corrupt { .. } => "strata::state::corrupt",
        StateError::TooNew { .. } => "strata::state::too_new",
        StateError::LineageMismatch { .. } => "strata::state::lineage",
        StateError::SerialBehind { .. } => "strata::state::serial",
        StateError::Conflict { .. } => "strata::state::conflict",
        StateError::Backend { .. } => "strata::state::backend",
        StateError::TwoStates { .. } => "strata::state::two_states",
        StateError::LockAlive { .. } => "strata::state::lock_alive",
        StateError::Unreadable { .. } => "strata::state::unreadable",
        _ => "strata::state::error",
    };
    let help = miette::Diagnostic::help(&e)
        .map(|h| h.to_string())
        .unwrap_or_default();
    Diags::from(Diag::new(code, e.to_string(), help))
}

fn bad_address(s: &str) -> Diags {
    Diags::from(Diag::new(
        "strata::state::address",
        "Invalid resource address",
        format!("{s:?} is not a resource address; expected e.g. aws_vpc.main, module.net.aws_subnet.a[0] or data.aws_ami.gpu."),
    ))
}

fn load(store: &Store) -> Result<State, Diags> {
    store.load().map(|l| l.state).map_err(state_err)
}

/// The stored state, for a command that works on one: none at all (no
/// file, nothing journaled) is Terraform's "No state file was found!",
/// where an empty state is not.
fn existing(store: &Store) -> Result<State, Diags> {
    let loaded = store.load().map_err(state_err)?;
    if !loaded.existed && loaded.replay.applied == 0 {
        return Err(no_state());
    }
    Ok(loaded.state)
}

/// Terraform's refusal of a state command where there is no state.
pub(crate) fn no_state() -> Diags {
    Diags::from(Diag::new(
        "strata::state::none",
        "No state file was found!",
        "State management commands require a state file. Run this command in a directory where strata or Terraform has been run or use the -state flag to point the command to a specific state location.",
    ))
}

fn instance_addr(r: &ResourceState, i: &InstanceState) -> String {
    r.id.instance_address(i.index_key.as_ref())
}

pub fn list(store: &Store, filters: &[String], id: Option<&str>) -> Result<String, Diags> {
    let state = existing(store)?;
    let listed = selected(&state, filters, id)?;
    Ok(listed.into_iter().map(|(a, _)| a + "\n").collect())
}

/// `state identities -json` (Terraform 1.12): the identity of each
/// instance `filters` and `id` select that has one, by address.
pub fn identities(store: &Store, filters: &[String], id: Option<&str>) -> Result<String, Diags> {
    let state = existing(store)?;
    let found: std::collections::BTreeMap<String, serde_json::Value> =
        selected(&state, filters, id)?
            .into_iter()
            .filter_map(|(addr, i)| Some((addr, *i.identity.clone()?)))
            .collect();
    let text = serde_json::to_string_pretty(&found).unwrap_or_else(|_| "{}".into());
    Ok(text + "\n")
}

/// The instances `filters` name (all when none) whose `id` attribute is
/// `id` (when given), by address in Terraform's order: module by module
/// (the root first), then by address, keys by value, whatever order the
/// file keeps.
fn selected<'s>(
    state: &'s State,
    filters: &[String],
    id: Option<&str>,
) -> Result<Vec<(String, &'s InstanceState)>, Diags> {
    let filters: Vec<Address> = filters
        .iter()
        .map(|f| Address::parse(f).ok_or_else(|| bad_address(f)))
        .collect::<Result<_, _>>()?;
    let mut listed = Vec::new();
    for r in &state.resources {
        for i in &r.instances {
            let named = filters.is_empty()
                || filters
                    .iter()
                    .any(|f| f.id == r.id && (f.key.is_none() || f.key == i.index_key));
            // `-id`: the objects whose `id` attribute is that one.
            let keep = named && id.is_none_or(|want| has_id(i, want));
            if keep {
                listed.push((listing_order(r, i), instance_addr(r, i), i));
            }
        }
    }
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(listed.into_iter().map(|(_, a, i)| (a, i)).collect())
}

fn listing_order(
    r: &ResourceState,
    i: &InstanceState,
) -> (String, String, Option<strata_state::InstanceKey>) {
    let module = r.id.module.to_string();
    let full = r.id.to_string();
    let local = full
        .strip_prefix(&format!("{module}."))
        .unwrap_or(&full)
        .to_string();
    (module, local, i.index_key.clone())
}

fn has_id(i: &InstanceState, want: &str) -> bool {
    i.attributes
        .json()
        .is_ok_and(|a| a.get("id").and_then(|v| v.as_str()) == Some(want))
}

/// `state rm`: forgets the instances `addrs` name; with `dry_run` only
/// says which it would.
pub fn rm(store: &Store, addrs: &[String], dry_run: bool) -> Result<String, Diags> {
    let lock = store.lock("state rm").map_err(state_err)?;
    let mut state = existing(store)?;
    let mut out = String::new();
    let mut removed = 0;
    for addr in addrs {
        let a = Address::parse(addr).ok_or_else(|| bad_address(addr))?;
        for r in state.resources.iter_mut().filter(|r| a.id == r.id) {
            let before = r.instances.len();
            let gone: Vec<String> = r
                .instances
                .iter()
                .filter(|i| a.key.is_none() || a.key == i.index_key)
                .map(|i| instance_addr(r, i))
                .collect();
            r.instances
                .retain(|i| !(a.key.is_none() || a.key == i.index_key));
            removed += before - r.instances.len();
            let said = if dry_run { "Would remove" } else { "Removed" };
            for g in gone {
                let _ = writeln!(out, "{said} {g}");
            }
        }
    }
    if dry_run {
        // Nothing is written; the lock goes with `lock`.
        return Ok(match removed {
            0 => "Would have removed nothing.\n".into(),
            _ => out,
        });
    }
    if removed == 0 {
        return Err(Diags::from(Diag::new(
            "strata::state::no_instance",
            "Invalid target address",
            "No matching objects found. To view the available instances, use `strata state list`.",
        )));
    }
    state.resources.retain(|r| !r.instances.is_empty());
    store.persist(&lock, &mut state).map_err(state_err)?;
    let _ = writeln!(out, "Successfully removed {removed} resource instance(s).");
    Ok(out)
}

/// `taint` (`tainted`) and `untaint`: marks one instance to be replaced by
/// the next plan, or takes the mark away. What it says on success, and
/// the warnings: with `allow_missing`, an instance not in the state is a
/// warning, not an error.
pub fn taint(
    store: &Store,
    addr: &str,
    tainted: bool,
    allow_missing: bool,
) -> Result<(String, Vec<Diag>), Diags> {
    let a = instance_to_taint(addr)?;
    let verb = if tainted { "taint" } else { "untaint" };
    let lock = store.lock(verb).map_err(state_err)?;
    let mut state = store.load().map_err(state_err)?.state;
    let found = state
        .resources
        .iter_mut()
        .filter(|r| r.id == a.id)
        .flat_map(|r| r.instances.iter_mut())
        .find(|i| i.index_key == a.key && i.deposed.is_none());
    let Some(instance) = found else {
        let missing = Diag::new(
            "strata::state::no_instance",
            "No such resource instance",
            match allow_missing {
                true => format!("Resource instance {a} was not found, but this is not an error because -allow-missing was set."),
                false => format!("There is no resource instance in the state with the address {a}. If the resource configuration has just been added, you must run \"strata apply\" once to create the corresponding instance(s) before they can be {verb}ed."),
            },
        );
        return match allow_missing {
            true => Ok((String::new(), vec![missing.warning()])),
            false => Err(Diags::from(missing)),
        };
    };
    let is_tainted = instance.status.as_deref() == Some("tainted");
    if !tainted && !is_tainted {
        return Err(Diags::from(Diag::new(
            "strata::state::not_tainted",
            "Resource instance is not tainted",
            format!(
                "Resource instance {a} is not currently tainted, and so it cannot be untainted."
            ),
        )));
    }
    instance.status = tainted.then(|| "tainted".to_string());
    store.persist(&lock, &mut state).map_err(state_err)?;
    let said = match tainted {
        true => format!("Resource instance {a} has been marked as tainted.\n"),
        false => format!("Resource instance {a} has been successfully untainted.\n"),
    };
    Ok((said, Vec::new()))
}

/// The one managed resource instance `taint` and `untaint` take.
fn instance_to_taint(addr: &str) -> Result<Address, Diags> {
    let invalid = |why: &str| {
        Diags::from(Diag::new(
            "strata::state::address",
            "Invalid address",
            why.to_string(),
        ))
    };
    match Address::parse(addr) {
        Some(a) if a.id.mode == strata_state::model::Mode::Data => {
            Err(invalid("A managed resource address is required here, not a data resource."))
        }
        Some(a) => Ok(a),
        None if strata_state::model::ModulePath::parse(addr).is_some() => Err(invalid(
            "A resource instance address is required here. The module path must be followed by a resource instance specification.",
        )),
        None => Err(bad_address(addr)),
    }
}

/// `state replace-provider FROM TO`: every resource made with provider
/// FROM recorded as made with TO (a provider moved to another registry or
/// namespace), after `approve` says yes to the list of them.
pub fn replace_provider(
    store: &Store,
    (from, to): (&str, &str),
    approve: &dyn Fn(&str) -> bool,
) -> Result<String, Diags> {
    let full = strata_state::provider_source;
    let (from, to) = (full(from), full(to));
    let (was, will) = (format!("[\"{from}\"]"), format!("[\"{to}\"]"));
    let lock = store.lock("state replace-provider").map_err(state_err)?;
    let mut state = existing(store)?;
    let names: Vec<String> = state
        .resources
        .iter()
        .filter(|r| r.provider.contains(&was))
        .map(|r| r.id.to_string())
        .collect();
    if names.is_empty() {
        return Ok("No matching resources found.\n".into());
    }
    let listed: String = names.iter().map(|n| format!("  {n}\n")).collect();
    let shown = format!("strata will perform the following actions:\n\n  ~ Updating provider:\n    - {from}\n    + {to}\n\nChanging {} resources:\n\n{listed}", names.len());
    if !approve(&shown) {
        return Err(Diags::from(Diag::new(
            "strata::state::cancelled",
            "Replace provider cancelled",
            "Only 'yes' approves. Nothing was changed.",
        )));
    }
    for r in state
        .resources
        .iter_mut()
        .filter(|r| r.provider.contains(&was))
    {
        r.provider = r.provider.replace(&was, &will);
        for i in &mut r.instances {
            i.provider = i.provider.as_ref().map(|p| p.replace(&was, &will));
        }
    }
    store.persist(&lock, &mut state).map_err(state_err)?;
    Ok(format!(
        "\nSuccessfully replaced provider for {} resources.\n",
        names.len()
    ))
}

/// `state mv`: moves an instance or resource to another address; with
/// `dry_run` only says what it would move.
pub fn mv(store: &Store, (from, to): (&str, &str), dry_run: bool) -> Result<String, Diags> {
    let lock = store.lock("state mv").map_err(state_err)?;
    let mut state = existing(store)?;
    if let (Some(f), Some(t)) = (module_instance(from), module_instance(to)) {
        if !move_module(&mut state, &f, &t)? {
            return Err(Diags::from(Diag::new(
                "strata::state::no_instance",
                "Invalid source address",
                format!("Cannot move {from}: does not match anything in the current state."),
            )));
        }
        if dry_run {
            return Ok(format!("Would move \"{from}\" to \"{to}\"\n"));
        }
        store.persist(&lock, &mut state).map_err(state_err)?;
        return Ok(format!(
            "Move \"{from}\" to \"{to}\"\nSuccessfully moved 1 object(s).\n"
        ));
    }
    let f = Address::parse(from).ok_or_else(|| bad_address(from))?;
    let t = Address::parse(to).ok_or_else(|| bad_address(to))?;
    if f.id.type_name != t.id.type_name || f.id.mode != t.id.mode {
        return Err(Diags::from(Diag::new(
            "strata::state::mv",
            "Invalid state move request",
            format!("Cannot move {from} to {to}: the resource type must stay the same."),
        )));
    }
    if state.addresses().iter().any(|a| a == to)
        || (t.key.is_none() && state.resources.iter().any(|r| t.id == r.id))
    {
        return Err(Diags::from(Diag::new(
            "strata::state::mv",
            "Invalid state move request",
            format!("Cannot move {from} to {to}: {to} already exists in the state."),
        )));
    }
    let no_source = || {
        Diags::from(Diag::new(
            "strata::state::no_instance",
            "Invalid source address",
            format!("No instance {from} in the state."),
        ))
    };
    let Some(ri) = state.resources.iter().position(|r| f.id == r.id) else {
        return Err(no_source());
    };
    // A whole resource lands on one instance only if it is one object
    // without a key, as Terraform has it; its instances would all take
    // the one key.
    let single = matches!(&state.resources[ri].instances[..], [only] if only.index_key.is_none());
    if f.key.is_none() && t.key.is_some() && !single {
        return Err(Diags::from(Diag::new(
            "strata::state::mv",
            "Invalid target address",
            format!("Cannot move {from} to {to}: the source is a whole resource (not a resource instance) so the target must also be a whole resource."),
        )));
    }
    let instances: Vec<InstanceState> = {
        let r = &mut state.resources[ri];
        let (moved, kept): (Vec<_>, Vec<_>) = r
            .instances
            .drain(..)
            .partition(|i| f.key.is_none() || f.key == i.index_key);
        r.instances = kept;
        moved
    };
    if instances.is_empty() {
        return Err(no_source());
    }
    if dry_run {
        return Ok(format!("Would move \"{from}\" to \"{to}\"\n"));
    }
    let n = instances.len();
    let provider = state.resources[ri].provider.clone();
    let mut moved: Vec<InstanceState> = instances;
    if t.key.is_some() || f.key.is_some() {
        for i in &mut moved {
            i.index_key = t.key.clone();
        }
    }
    match state.resources.iter_mut().find(|r| t.id == r.id) {
        Some(r) => r.instances.extend(moved),
        None => state.resources.push(ResourceState {
            id: t.id.clone(),
            provider,
            instances: moved,
        }),
    }
    state.resources.retain(|r| !r.instances.is_empty());
    store.persist(&lock, &mut state).map_err(state_err)?;
    Ok(format!(
        "Move \"{from}\" to \"{to}\"\nSuccessfully moved {n} object(s).\n"
    ))
}

/// `module.a`, `module.a[0].module.b`: one module instance, keys exact (as
/// Terraform's `state mv` reads one: `module.a` is not `module.a[0]`).
fn module_instance(text: &str) -> Option<ModulePath> {
    ModulePath::parse(text).filter(|p| !p.is_root())
}

/// Moves everything in module instance `from` (nested modules too) into
/// `to`; false when nothing is there. Refused when `to` holds anything.
fn move_module(state: &mut State, from: &ModulePath, to: &ModulePath) -> Result<bool, Diags> {
    let within = |path: &ModulePath, m: &ModulePath| path.steps().starts_with(m.steps());
    if state.resources.iter().any(|r| within(&r.id.module, to)) {
        return Err(Diags::from(Diag::new(
            "strata::state::mv",
            "Error moving state: destination module already exists",
            "Please ensure your addresses and state paths are valid. No state was persisted. Your existing states are untouched.",
        )));
    }
    let mut found = false;
    for r in state
        .resources
        .iter_mut()
        .filter(|r| within(&r.id.module, from))
    {
        let rest = &r.id.module.steps()[from.steps().len()..];
        let mut steps = to.steps().to_vec();
        steps.extend_from_slice(rest);
        r.id.module = steps.into();
        found = true;
    }
    Ok(found)
}

/// What `output` says of a state with no outputs, as Terraform says it.
const NO_OUTPUTS: &str = "\nWarning: No outputs found\n\nThe state file either has no outputs defined, or all the defined outputs are\nempty. Please define an output in your configuration with the `output`\nkeyword and run `strata refresh` for it to become available. If you are\nusing interpolation, please verify the interpolated value is not empty. You\ncan use the `strata console` command to assist.\n";

/// How `output` writes values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// As Terraform's console writes a value (`tolist([...])`, heredocs).
    Human,
    Json,
    /// A string, number or bool as it is, without a newline (`-raw`).
    Raw,
}

/// `strata output`: all outputs, or one, in `format`. A null output is
/// not there, as Terraform keeps none in its state.
pub fn output(store: &Store, name: Option<&str>, format: OutputFormat) -> Result<String, Diags> {
    let state = load(store)?;
    let present = state.outputs.iter().filter(|(_, o)| !o.value.is_null());
    let Some(n) = name else {
        return match format {
            OutputFormat::Json => {
                let m: serde_json::Map<String, serde_json::Value> = present
                    .map(|(k, o)| {
                        let v = serde_json::json!({ "sensitive": o.sensitive, "type": o.ty, "value": o.value });
                        (k.clone(), v)
                    })
                    .collect();
                let text =
                    serde_json::to_string_pretty(&serde_json::Value::Object(m)).unwrap_or_default();
                Ok(format!("{text}\n"))
            }
            OutputFormat::Raw => Err(Diags::from(Diag::new(
                "strata::state::raw_output",
                "Output name required",
                "You must give the name of a single output value when using the -raw option.",
            ))),
            OutputFormat::Human => {
                let mut out = String::new();
                let mut present = present.peekable();
                if present.peek().is_none() {
                    // Terraform's warning, on stdout where it writes it.
                    return Ok(NO_OUTPUTS.to_string());
                }
                for (k, o) in present {
                    let shown = match o.sensitive {
                        true => "<sensitive>".to_string(),
                        false => shown_output(&o.value, &o.ty),
                    };
                    let _ = writeln!(out, "{k} = {shown}");
                }
                Ok(out)
            }
        };
    };
    let Some((_, o)) = present.into_iter().find(|(k, _)| k.as_str() == n) else {
        return Err(Diags::from(Diag::new(
            "strata::state::no_output",
            format!("Output {n:?} not found"),
            "The output variable requested could not be found in the state. If you recently added it to the configuration, apply first.",
        )));
    };
    // Asked for by name, a sensitive output is shown: that is the way to
    // see it.
    match format {
        OutputFormat::Json => Ok(format!("{}\n", o.value)),
        OutputFormat::Human => Ok(format!("{}\n", shown_output(&o.value, &o.ty))),
        OutputFormat::Raw => match &o.value {
            serde_json::Value::String(s) => Ok(s.clone()),
            serde_json::Value::Number(x) => Ok(x.to_string()),
            serde_json::Value::Bool(b) => Ok(b.to_string()),
            _ => Err(Diags::from(Diag::new(
                "strata::state::raw_output",
                "Unsupported value for raw output",
                format!("The -raw option only supports strings, numbers, and boolean values, but output value {n:?} is {}.\n\nUse the -json option for machine-readable representations of output values that have complex types.", type_word(&o.ty)),
            ))),
        },
    }
}

/// An output's value as Terraform's console writes it (its JSON, when
/// the state's type and value do not agree).
fn shown_output(value: &serde_json::Value, ty: &serde_json::Value) -> String {
    crate::lang::json::type_from_json(ty)
        .and_then(|t| crate::lang::typed_json::value_from_json_text(&value.to_string(), &t))
        .map(|v| crate::lang::display::show(&v))
        .unwrap_or_else(|_| value.to_string())
}

/// A type's kind in Terraform's words (`tuple`, `list of string`, …).
fn type_word(ty: &serde_json::Value) -> String {
    match ty {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => {
            match (parts.first().and_then(|p| p.as_str()), parts.get(1)) {
                (Some(kind @ ("list" | "set" | "map")), Some(elem)) => {
                    format!("{kind} of {}", type_word(elem))
                }
                (Some(kind), _) => kind.to_string(),
                _ => "a complex value".into(),
            }
        }
        _ => "a complex value".into(),
    }
}

pub fn force_unlock(store: &Store, id: &str) -> Result<String, Diags> {
    store.force_unlock(id).map_err(state_err)?;
    Ok("strata state has been successfully unlocked!\n".to_string())
}

/// `strata state pull`: the state document as stored, journal of an
/// interrupted run included, for a backup or a move to another backend.
pub fn pull(store: &Store) -> Result<String, Diags> {
    let state = load(store)?;
    let mut text = serde_json::to_string_pretty(&state).map_err(|e| {
        Diags::from(Diag::new(
            "strata::state::encode",
            "Cannot encode the state",
            e.to_string(),
        ))
    })?;
    text.push('\n');
    Ok(text)
}

/// `strata state push FILE`: replaces the stored state with the file's
/// (`-` for stdin), under the lock. Refused if the file is another lineage
/// or older than what is stored, unless `force`: how state moves between
/// backends, with `state pull`.
pub fn push(store: &Store, file: &Path, force: bool) -> Result<String, Diags> {
    let text = if file == Path::new("-") {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(file)
    }
    .map_err(|e| {
        Diags::from(Diag::new(
            "strata::io",
            format!("Cannot read {}", file.display()),
            e.to_string(),
        ))
    })?;
    let state = strata_state::parse(&file.display().to_string(), &text).map_err(state_err)?;
    let lock = store.lock("state push").map_err(state_err)?;
    let written = store.push(&lock, state, force).map_err(state_err)?;
    Ok(format!(
        "Pushed the state to {} (lineage {}, serial {}).\n",
        store.location(),
        written.lineage,
        written.serial
    ))
}
