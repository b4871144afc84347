//! The plan stage: from a configuration, its graph and the refreshed prior
//! state to a [`Plan`] — the action for every resource instance and output.
//!
//! The planner walks the graph (the walk stage), and for each instance
//! [`plan_instance`] applies `ignore_changes`, asks the driver and decides
//! the action (`diff.rs`); `refresh.rs` reads prior objects back through
//! the drivers, `moved.rs` renames them, `file.rs` is the saved plan. The
//! stage exports its types and those entry points, not its modules.

mod action;
mod diff;
mod file;
mod import;
mod index;
mod instance;
mod lasting;
mod moved;
mod order;
mod planner;
mod query;
mod refresh;
mod relevant;
mod triggers;
mod window;

pub use crate::walk::{EphemeralSaid, EphemeralStep};
pub use action::{
    event_name as action_event_name, is_before as action_is_before,
    on_failure_name as action_on_failure_name,
};
pub use action::{ActionInvocation, Lifecycle as LifecycleTrigger, Trigger as ActionTrigger};
pub use diff::{same, with_marks, Decision};
pub use file::{provider_schemas, Saved};
pub use instance::{plan_instance, InstanceRequest, PlannedInstance, Prior};
pub use planner::{plan, Purpose, Refresh, Request};
pub use query::{Generated, ListFound, Queried};
pub use refresh::{kept_of, private_text};
pub use relevant::RelevantAttr;
pub use triggers::{again as action_again, planned as action_planned, Triggering};

/// What an `import` block of the root module finds its object of type
/// `type_name` by: an id known before apply, or an identity of the
/// type's identity schema.
pub fn import_target(
    im: &crate::config::Import,
    scope: &crate::config::ConfigScope,
    drivers: &Drivers,
    type_name: &str,
) -> Result<strata_provider::ImportBy, crate::diag::Diags> {
    let expr = im.by.expr();
    let v = scope.evaluator().eval(expr);
    let wanted = match &im.by {
        crate::config::ImportExpr::Id(_) => import::Wanted::Id(import::id_of(v, expr.span)?),
        crate::config::ImportExpr::Identity(_) => import::Wanted::Identity(v?, expr.span),
    };
    let Some((driver, _)) = drivers.resource(type_name) else {
        return Ok(match wanted {
            import::Wanted::Id(id) => strata_provider::ImportBy::Id(id),
            import::Wanted::Identity(..) => {
                return Err(import::no_identity(type_name, expr.span).into())
            }
        });
    };
    Ok(import::import_by(driver.as_ref(), type_name, &wanted)?)
}

pub use import::{by_text as import_by_text, identity_text};

/// The elements of a `for_each` (key and value each), as an import block
/// or a list block takes them: a map's or object's by key, a list's or
/// tuple's by index, a set's by value.
pub fn for_each_elements(
    v: &Value,
    span: crate::diag::Span,
) -> Result<Vec<(Value, Value)>, crate::diag::Diag> {
    import::elements(v, span)
}

/// The instance an `import` block's `to` names, when it names one.
pub fn import_address(to: &crate::syntax::Expr) -> Option<Address> {
    moved::text(to).and_then(|t| Address::parse(&t))
}

use crate::builtin::Drivers;
use crate::cost::Cost;
use crate::diag::Diags;
use crate::graph::Scope;
use crate::lang::value::Value;
use std::collections::BTreeMap;
use strata_provider::{AttrPath, Kept, ResourceSchema};
use strata_state::model::{Address, Mode as ObjectMode, ResourceAddr};

/// What apply will do to one resource instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    NoOp,
    Create,
    Read,
    Update,
    /// Replace: the old object goes first (the default).
    DeleteThenCreate,
    /// Replace under `create_before_destroy`: the new object comes first.
    CreateThenDelete,
    Delete,
    /// Leave the object alone and drop it from the state (a `removed`
    /// block with `destroy = false`).
    Forget,
    /// Replace under `lifecycle { destroy = false }`: the new object is
    /// made and the old one dropped from the state, left in the cloud.
    CreateThenForget,
}

impl Action {
    /// `change.actions` in Terraform's plan JSON.
    pub fn json_actions(self) -> &'static [&'static str] {
        match self {
            Action::NoOp => &["no-op"],
            Action::Create => &["create"],
            Action::Read => &["read"],
            Action::Update => &["update"],
            Action::DeleteThenCreate => &["delete", "create"],
            Action::CreateThenDelete => &["create", "delete"],
            Action::CreateThenForget => &["create", "forget"],
            Action::Delete => &["delete"],
            Action::Forget => &["forget"],
        }
    }

    pub fn is_replace(self) -> bool {
        matches!(
            self,
            Action::DeleteThenCreate | Action::CreateThenDelete | Action::CreateThenForget
        )
    }

    /// Whether the action deletes an object (a replacement does).
    pub fn deletes(self) -> bool {
        matches!(
            self,
            Action::DeleteThenCreate | Action::CreateThenDelete | Action::Delete
        )
    }
}

/// Why an instance is replaced or deleted, when the attributes alone do not
/// say (Terraform's `action_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The resource block is gone from the configuration.
    NoResourceConfig,
    /// `count` no longer reaches this index.
    CountIndex,
    /// The instance has a key of a kind the resource no longer repeats by
    /// (a string key without `for_each`, a number without `count`).
    WrongRepetition,
    /// `for_each` no longer has this key.
    EachKey,
    /// `lifecycle { enabled }` is false now (OpenTofu 1.11).
    EnabledFalse,
    /// The module instance that held it is gone.
    NoModule,
    /// `lifecycle.replace_triggered_by` fired.
    ReplaceTriggered,
    /// A failed create left the object behind, tainted.
    Tainted,
    /// `-replace` named it.
    ReplaceByRequest,
    /// A forces-replacement attribute changed.
    CannotUpdate,
    /// `strata destroy`.
    Destroy,
    /// A data source read at apply: its configuration is not known yet.
    ReadConfigUnknown,
    /// A data source read at apply: something it depends on changes first.
    ReadDependencyPending,
    /// Forgotten, not deleted: the cloud cannot delete it (its driver's
    /// `lasting`).
    Lasting,
}

impl Reason {
    pub fn json(self) -> &'static str {
        match self {
            Reason::NoResourceConfig => "delete_because_no_resource_config",
            Reason::CountIndex => "delete_because_count_index",
            Reason::WrongRepetition => "delete_because_wrong_repetition",
            Reason::EachKey => "delete_because_each_key",
            Reason::EnabledFalse => "delete_because_enabled_false",
            Reason::NoModule => "delete_because_no_module",
            Reason::ReplaceTriggered => "replace_by_triggers",
            Reason::Tainted => "replace_because_tainted",
            Reason::ReplaceByRequest => "replace_by_request",
            Reason::CannotUpdate => "replace_because_cannot_update",
            Reason::Destroy => "delete",
            Reason::ReadConfigUnknown => "read_because_config_unknown",
            Reason::ReadDependencyPending => "read_because_dependency_pending",
            Reason::Lasting => "forget_because_cannot_delete",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ResourceChange {
    pub addr: Address,
    /// Set for an object superseded by a create-before-destroy replacement.
    pub deposed: Option<String>,
    /// The prior object is tainted (a failed create or `taint` left it).
    pub tainted: bool,
    /// The address the instance had before a `moved` block renamed it.
    /// Boxed: a change is kept per instance, a move is rare.
    pub previous_addr: Option<Box<Address>>,
    pub provider: String,
    pub action: Action,
    pub reason: Option<Reason>,
    /// The prior (refreshed) object; `None` when creating.
    pub before: Option<Value>,
    /// The planned object, unknown where only apply can tell; `None` when
    /// deleting.
    pub after: Option<Value>,
    /// Attributes whose change forces the replacement.
    pub replace_paths: Vec<AttrPath>,
    pub schema_version: u64,
    /// What the driver keeps beside `before` and beside `after` (a plugin
    /// provider's private data and identity), handed back to it with that object: the
    /// prior's to its delete, the plan's to its create or update.
    pub kept_before: Kept,
    pub kept_after: Kept,
    /// Resources (module path without instance keys, `module.m.t.n`) this
    /// one depends on, as state records them for ordering deletes.
    pub dependencies: Vec<ResourceAddr>,
    pub create_before_destroy: bool,
    /// `lifecycle { destroy = false }`, from the configuration or the state.
    pub skip_destroy: bool,
    /// The cloud id this instance is imported from (an `import` block).
    pub importing: Option<strata_provider::ImportBy>,
}

impl ResourceChange {
    /// `module.m.t.n` without instance keys: what `dependencies` name.
    pub fn config_addr(&self) -> ResourceAddr {
        self.addr.id.config()
    }
}

#[derive(Debug, Clone)]
pub struct OutputChange {
    pub name: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub sensitive: bool,
}

/// Whether an output's value is unchanged: the same value, sensitive
/// or not alike. State keeps one mark for a whole output, where evaluation
/// marks the parts that came from secrets, so the marks' places differ.
fn same_output(before: &Value, after: &Value) -> bool {
    let (b, b_marked) = before.clone().unmark_deep();
    let (a, a_marked) = after.clone().unmark_deep();
    b_marked == a_marked && b.raw_equal(&a)
}

impl OutputChange {
    pub fn action(&self) -> Action {
        match (&self.before, &self.after) {
            // Null before (or none) and null after: nothing to show or
            // save, as Terraform has it.
            (b, Some(a)) if a.is_null() && b.as_ref().is_none_or(Value::is_null) => Action::NoOp,
            (None, Some(_)) => Action::Create,
            (Some(_), None) => Action::Delete,
            (Some(b), Some(a)) if !same_output(b, a) => Action::Update,
            _ => Action::NoOp,
        }
    }
}

/// A provider's plugin serving types strata has drivers of its own for.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginServed {
    pub provider: String,
    /// The types it serves (`data.TYPE` for data sources); `None`: every
    /// type of the provider.
    pub types: Option<Vec<String>>,
}

impl PluginServed {
    /// `aws_kms_key, aws_eks_cluster (registry.terraform.io/hashicorp/aws)`.
    pub fn line(&self) -> String {
        match &self.types {
            None => format!("every type of {}", self.provider),
            Some(types) => format!("{} ({})", types.join(", "), self.provider),
        }
    }
}

/// What a plan is for, as Terraform's plan modes: the configuration made
/// real, everything destroyed (`-destroy`), or the state brought up to
/// date with what refresh found and nothing else changed
/// (`-refresh-only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Normal,
    Destroy,
    RefreshOnly,
}

impl Mode {
    /// The mode the flags ask for; both at once refused, in Terraform's
    /// words. The one place the combination is judged.
    pub fn from_flags(destroy: bool, refresh_only: bool) -> Result<Mode, crate::diag::Diag> {
        match (destroy, refresh_only) {
            (false, false) => Ok(Mode::Normal),
            (true, false) => Ok(Mode::Destroy),
            (false, true) => Ok(Mode::RefreshOnly),
            (true, true) => Err(crate::diag::Diag::new(
                "strata::cli::usage",
                "Incompatible plan mode options",
                "The -destroy and -refresh-only options are mutually-exclusive.",
            )),
        }
    }

    pub fn is_destroy(self) -> bool {
        self == Mode::Destroy
    }

    pub fn is_refresh_only(self) -> bool {
        self == Mode::RefreshOnly
    }
}

/// Everything apply needs, and what every rendering shows.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The state the plan was made against: apply refuses a plan whose
    /// state has moved on.
    pub lineage: String,
    pub serial: u64,
    /// `-destroy`, `-refresh-only`, or neither.
    pub mode: Mode,
    /// Every resource instance in configuration or state, in address order.
    pub changes: Vec<ResourceChange>,
    /// Objects that changed outside strata since the last apply.
    pub drift: Vec<ResourceChange>,
    pub outputs: Vec<OutputChange>,
    /// Actions the apply invokes (`-invoke`).
    pub actions: Vec<ActionInvocation>,
    /// The root module's variables as planned with.
    pub variables: BTreeMap<String, Value>,
    /// The configuration as plan JSON describes it.
    pub configuration: serde_json::Value,
    /// Failed `check` assertions: shown, never saved in a plan file.
    pub warnings: Vec<crate::diag::Diag>,
    /// When the plan was made (RFC 3339): `plantimestamp()`, and the
    /// plan JSON's `timestamp`.
    pub timestamp: String,
    pub schemas: Schemas,
    /// What the planned objects cost by the hour, against the prior ones.
    pub cost: Cost,
    /// Where each cluster node pool with `nodes` puts them (the engine
    /// fills this from the expansion).
    pub placements: Vec<crate::placement::Decision>,
    /// Each MultiKueue manager's workers in dispatch order (the engine
    /// fills this from the expansion).
    pub dispatch: Vec<crate::placement::Dispatch>,
    /// Which types provider plugins serve in place of strata's own
    /// drivers (the engine fills this from the drivers).
    pub plugin_served: Vec<PluginServed>,
    /// What `-target` or `-exclude` narrowed the plan to: the apply walks
    /// the same part of the graph.
    pub scope: Scope,
    /// `-minimal-refresh`: the only objects read back (the others were
    /// planned as stored); `None` when every one was or none.
    pub read_only: Option<Vec<Address>>,
    /// Objects the plan leaves alone (outside its scope, or every object
    /// of a refresh-only plan), as state holds them: what the apply reads
    /// where what it evaluates refers to them. No rendering shows them.
    pub untouched: Vec<ResourceChange>,
    /// The resource attributes what the plan changes refers to (plan
    /// JSON's `relevant_attributes`).
    pub relevant_attributes: Vec<RelevantAttr>,
    /// `-generate-config-out`: the configuration written for an import
    /// target that had none, by its address (the engine fills it, the
    /// human plan says so). Not saved in a plan file.
    pub generated_config: BTreeMap<String, String>,
    /// The walk met errors: this is what it had planned by then, shown
    /// as Terraform shows a partial plan, never applied or saved.
    pub errored: bool,
    /// What the walk did with ephemeral resources (opened, deferred,
    /// closed), in order: shown before the plan, never saved.
    pub ephemeral: Vec<EphemeralSaid>,
}

/// A plan that could not be made: its errors, and the part the walk had
/// planned when they came (Terraform shows it above them).
pub struct Failed {
    pub diags: Diags,
    pub partial: Option<Box<Plan>>,
}

impl Failed {
    /// The same failure with its diagnostics rewritten (explained where
    /// the cluster spec made what failed).
    pub fn map_diags(self, f: impl FnOnce(Diags) -> Diags) -> Failed {
        Failed {
            diags: f(self.diags),
            partial: self.partial,
        }
    }
}

impl From<Diags> for Failed {
    fn from(diags: Diags) -> Failed {
        Failed {
            diags,
            partial: None,
        }
    }
}

impl From<Failed> for Diags {
    fn from(f: Failed) -> Diags {
        f.diags
    }
}

/// The schemas of the types a plan's changes are of: what a rendering
/// needs to lay an object out (its blocks, its dynamic attributes), so
/// renderings need no drivers. Not saved in a plan file: the drivers that
/// read one give them again.
#[derive(Debug, Clone, Default)]
pub struct Schemas {
    managed: BTreeMap<String, ResourceSchema>,
    data: BTreeMap<String, ResourceSchema>,
}

impl Schemas {
    /// The schema of `c`'s type, when a driver had it.
    pub fn of(&self, c: &ResourceChange) -> Option<&ResourceSchema> {
        let by_mode = match c.addr.id.mode {
            ObjectMode::Data => &self.data,
            ObjectMode::Managed => &self.managed,
            // No change is ever of an ephemeral resource.
            ObjectMode::Ephemeral => return None,
        };
        by_mode.get(&c.addr.id.type_name)
    }

    /// The schemas of every type `changes` are of, as `drivers` have them.
    pub fn gather<'c>(
        changes: impl IntoIterator<Item = &'c ResourceChange>,
        drivers: &Drivers,
    ) -> Schemas {
        let mut out = Schemas::default();
        for c in changes {
            let name = &c.addr.id.type_name;
            let (by_mode, found) = match c.addr.id.mode {
                ObjectMode::Data => (&mut out.data, drivers.data(name)),
                ObjectMode::Managed => (&mut out.managed, drivers.resource(name)),
                ObjectMode::Ephemeral => continue,
            };
            if let (false, Some((_, schema))) = (by_mode.contains_key(name), found) {
                by_mode.insert(name.clone(), schema.clone());
            }
        }
        out
    }
}

/// Every managed object of `state`, decoded by its driver's schema, as
/// a change that changes nothing (`before` and `after` the object): what
/// `show` of a state renders.
pub fn state_objects(
    state: &strata_state::model::State,
    drivers: &Drivers,
) -> Result<Vec<ResourceChange>, crate::diag::Diags> {
    // Read as Terraform's `show` reads them: by the schema, upgraded only
    // from an older version.
    let upgrade = refresh::Upgrade::WhenOlder;
    let mut objects = refresh::decode_state(state, drivers, (ObjectMode::Managed, upgrade), &[])?;
    objects.extend(refresh::decode_state(
        state,
        drivers,
        (ObjectMode::Data, upgrade),
        &[],
    )?);
    Ok(objects
        .iter()
        .map(|p| refresh::change_of(p, Action::NoOp, Some(p.value.clone())))
        .collect())
}

/// The warning a plan narrowed by `-target` or `-exclude` carries, in
/// Terraform's (and OpenTofu's) words.
pub fn scope_warning(scope: &Scope) -> Option<crate::diag::Diag> {
    let (flag, what) = match (scope.targets.is_empty(), scope.excludes.is_empty()) {
        (false, _) => ("-target", "targeting"),
        (true, false) => ("-exclude", "exclusion"),
        (true, true) => return None,
    };
    Some(crate::diag::Diag::new(
        "strata::plan::scope",
        format!("Resource {what} is in effect"),
        format!("You are creating a plan with the {flag} option, which means that the result of this plan may not represent all of the changes requested by the current configuration.\n\nThe {flag} option is not for routine use, and is provided only for exceptional situations such as recovering from errors or mistakes, or when strata specifically suggests to use it as part of an error message."),
    ).warning())
}

/// The warning after applying a plan `-target` or `-exclude` narrowed.
pub fn applied_scope_warning(scope: &Scope) -> Option<crate::diag::Diag> {
    let flag = match (scope.targets.is_empty(), scope.excludes.is_empty()) {
        (false, _) => "-target",
        (true, false) => "-exclude",
        (true, true) => return None,
    };
    Some(crate::diag::Diag::new(
        "strata::apply::scope",
        "Applied changes may be incomplete",
        format!("The plan was created with the {flag} option in effect, so some changes requested in the configuration may have been ignored and the output values may not be fully updated. Run the following command to verify that no other changes are pending:\n    strata plan\n\nNote that the {flag} option is not suitable for routine use, and is provided only for exceptional situations such as recovering from errors or mistakes, or when strata specifically suggests to use it as part of an error message."),
    ).warning())
}

/// Counts for the summary line.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub import: usize,
    pub add: usize,
    pub change: usize,
    pub destroy: usize,
}

impl Plan {
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for ch in &self.changes {
            if ch.importing.is_some() {
                c.import += 1;
            }
            match ch.action {
                Action::Create => c.add += 1,
                Action::Update => c.change += 1,
                Action::Delete => c.destroy += 1,
                Action::DeleteThenCreate | Action::CreateThenDelete => {
                    c.add += 1;
                    c.destroy += 1
                }
                Action::CreateThenForget => c.add += 1,
                Action::Read | Action::Forget | Action::NoOp => {}
            }
        }
        c
    }

    /// The objects the plan read back from the state: managed, there
    /// before it, neither deposed nor adopted by an import.
    pub fn read_back(&self) -> impl Iterator<Item = &ResourceChange> {
        // A refresh-only plan reads every object back and changes none, so
        // they are all among the untouched.
        let refreshed = self
            .untouched
            .iter()
            .filter(|_| self.mode.is_refresh_only());
        let read =
            |c: &&ResourceChange| self.read_only.as_ref().is_none_or(|r| r.contains(&c.addr));
        // A plan that invokes an action (`-invoke`) reads nothing back.
        let invoking = !self.actions.is_empty();
        self.changes
            .iter()
            .chain(refreshed)
            .filter(read)
            .filter(move |_| !invoking)
            .filter(|c| {
                // What a `removed` block forgets is not read back.
                c.action != Action::Forget
                    && c.addr.id.mode == ObjectMode::Managed
                    && c.before.is_some()
                    && c.deposed.is_none()
                    && c.importing.is_none()
            })
    }

    /// Whether applying it does anything: changes, or for a refresh-only
    /// plan, what refresh found (`applyable` in plan JSON, exit code 2).
    pub fn applyable(&self) -> bool {
        self.has_changes() || (self.mode.is_refresh_only() && !self.drift.is_empty())
    }

    /// Whether applying would change anything, outputs included.
    /// A move is a change: the state must learn the new address (as in
    /// Terraform, whose moved-only plans exit 2 and apply).
    /// Node pools that want nodes and have no place with capacity are one
    /// too: the configuration is not met, whatever the objects say.
    pub fn has_changes(&self) -> bool {
        self.changes
            .iter()
            .any(|c| c.action != Action::NoOp || c.importing.is_some() || c.previous_addr.is_some())
            || self.outputs.iter().any(|o| o.action() != Action::NoOp)
            || self.unplaced().next().is_some()
            || !self.actions.is_empty()
    }

    /// The pools whose wanted nodes run nowhere (every candidate cooling
    /// down or over the cap).
    pub fn unplaced(&self) -> impl Iterator<Item = &crate::placement::Decision> {
        self.placements
            .iter()
            .filter(|d| d.chosen.is_none() && d.nodes > 0)
    }
}

#[cfg(test)]
mod mode_tests {
    use super::Mode;

    #[test]
    fn the_flags_make_one_mode_and_both_are_refused() {
        let cases = [
            ((false, false), Some(Mode::Normal)),
            ((true, false), Some(Mode::Destroy)),
            ((false, true), Some(Mode::RefreshOnly)),
            ((true, true), None),
        ];
        for ((destroy, refresh_only), want) in cases {
            let got = Mode::from_flags(destroy, refresh_only);
            assert_eq!(got.as_ref().ok().copied(), want, "{destroy} {refresh_only}");
            if let Err(d) = got {
                assert_eq!(d.summary, "Incompatible plan mode options");
            }
        }
    }
}
