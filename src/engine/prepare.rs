//! A command's first steps: the configuration loaded, its variables
//! resolved, its `cluster` blocks expanded, its graph built and checked,
//! and the plan of it made against a state.

use super::Options;
use crate::builtin::Drivers;
use crate::cluster::placement::Recorded;
use crate::config::variables::{self, CliInput};
use crate::config::{self, Module, Run};
use crate::diag::{Diag, Diags, Sources};
use crate::graph::Graph;
use crate::lang::value::Value;
use crate::plan::{Failed, Plan, Request};
use sha2::Digest as _;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::rc::Rc;
use strata_provider::catalog::PriceList;
use strata_provider::reservation::{Held, HeldAsk, OfferAsk};
use strata_provider::score::ScoreAsk;
use strata_state::{PoolPlacement, State};
use time::OffsetDateTime;

/// A configuration ready to plan.
pub(super) struct Prepared {
    pub module: Module,
    pub graph: Graph,
    pub vars: BTreeMap<String, Value>,
    pub run: Rc<Run>,
    /// Configuration file name → SHA-256.
    pub files: BTreeMap<String, String>,
    pub expansion: crate::cluster::Expansion,
    /// What the configuration itself warns of (deprecated variables and
    /// outputs in use), said with the plan.
    pub warnings: Vec<crate::diag::Diag>,
    /// The query files' `list` blocks, read for `query` only.
    pub lists: Vec<config::ListBlock>,
}

pub(super) fn digest(text: &str) -> String {
    hex(&sha2::Sha256::digest(text.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Expands the root module's `cluster` blocks, asking the drivers for
/// their GPU catalogs; `prices` are the command's.
pub fn expand(
    module: &mut config::Module,
    vars: BTreeMap<String, Value>,
    run: &Rc<Run>,
    drivers: &Drivers,
    prices: &PriceList,
    recorded: &Recorded<'_>,
    sources: &mut Sources,
) -> Result<crate::cluster::Expansion, Diags> {
    let catalog = |name: &str| drivers.named(name).and_then(|d| d.gpu_catalog());
    let catalogs = crate::cluster::Catalogs {
        by_provider: &catalog,
        prices: prices.clone(),
    };
    crate::cluster::expand(module, vars, run, &catalogs, recorded, sources)
}

/// `module` with its `cluster` blocks expanded as the state in `store`
/// placed them: the module calls (`module.<cluster>_<cloud>`) the console
/// and a test's assertions name, with the arguments plan gave them.
pub(super) fn expanded_as_stored(
    module: &mut config::Module,
    vars: BTreeMap<String, Value>,
    run: &Rc<Run>,
    store: &strata_state::Store,
    drivers: &Drivers,
    sources: &mut Sources,
) -> Result<(), Diags> {
    if module.clusters.is_empty() {
        return Ok(());
    }
    let state = store.load().map_err(crate::statecmd::state_err)?.state;
    let recorded = placements(Some(&state), &[], strata_provider::clock::now());
    let prices = PriceList::default();
    expand(module, vars, run, drivers, &prices, &recorded, sources).map(drop)
}

/// No placements recorded: what expansion sees before the state is read
/// (and all `validate` ever sees).
static NO_PLACEMENTS: BTreeMap<String, PoolPlacement> = BTreeMap::new();

/// What a command's expansion knows of placements: nothing yet, or the
/// state's records; `now` decides which cool-downs are over.
pub fn placements<'s>(
    state: Option<&'s State>,
    replace: &'s [String],
    now: OffsetDateTime,
) -> Recorded<'s> {
    Recorded {
        pools: state.map_or(&NO_PLACEMENTS, |s| &s.placements),
        calls: state.map_or_else(BTreeSet::new, root_calls),
        managers: state.map_or_else(BTreeMap::new, manager_places),
        replace,
        now,
        scores: None,
        held: None,
        offers: None,
        bought: state.map_or_else(BTreeMap::new, bought_blocks),
    }
}

/// What an expansion asks the clouds once the state is read: placement
/// scores, the reservations pools name and the Capacity Blocks they may
/// buy, each through the region's module call's driver.
pub struct CloudAsks<'a> {
    score: Box<crate::cluster::placement::Scorer<'a>>,
    held: Box<crate::cluster::placement::HeldLookup<'a>>,
    offers: Box<crate::cluster::placement::OfferLookup<'a>>,
}

impl<'a> CloudAsks<'a> {
    pub fn new(drivers: &'a Drivers, rt: &'a tokio::runtime::Runtime) -> CloudAsks<'a> {
        CloudAsks {
            score: Box::new(scorer(drivers, rt)),
            held: Box::new(held_lookup(drivers, rt)),
            offers: Box::new(move |provider: &str, call: &str, ask: &OfferAsk| {
                let driver = call_driver(drivers, provider, call)?;
                rt.block_on(driver.block_offers(ask))
                    .map_err(|e| e.to_string())
            }),
        }
    }

    /// `recorded`, asking the clouds through these.
    pub fn lend<'s>(&'s self, recorded: &mut Recorded<'s>) {
        recorded.scores = Some(&*self.score);
        recorded.held = Some(&*self.held);
        recorded.offers = Some(&*self.offers);
    }
}

/// The Capacity Blocks pools bought, as `state` holds them (the cloud
/// module's `aws_ec2_capacity_block_reservation.pool["<pool>"]`), by
/// `call/pool`.
fn bought_blocks(state: &State) -> crate::cluster::placement::BoughtBlocks {
    let mut out = BTreeMap::new();
    for r in &state.resources {
        let Some(call) = r.id.module.steps().first() else {
            continue;
        };
        if r.id.type_name != "aws_ec2_capacity_block_reservation" || r.id.name != "pool" {
            continue;
        }
        for i in r.instances.iter().filter(|i| i.deposed.is_none()) {
            let (Some(strata_state::model::InstanceKey::Str(pool)), Ok(a)) =
                (&i.index_key, i.attributes.json())
            else {
                continue;
            };
            let text = |k: &str| a[k].as_str().map(str::to_string);
            if let (Some(id), Some(offering)) = (text("id"), text("capacity_block_offering_id")) {
                let bought = crate::cluster::placement::Bought { id, offering };
                out.insert(format!("{}/{pool}", call.call), bought);
            }
        }
    }
    out
}

/// The clouds' placement scores for [`Recorded::scores`], asked on `rt`
/// through the driver configured for the region's module call (its
/// account, project or subscription), as the configuration before the
/// state was read set it up; the provider's own driver when there is none.
fn scorer<'a>(
    drivers: &'a Drivers,
    rt: &'a tokio::runtime::Runtime,
) -> impl Fn(&str, &str, &[ScoreAsk]) -> Result<Vec<Option<u8>>, String> + 'a {
    move |provider, call, asks| {
        let driver = call_driver(drivers, provider, call)?;
        rt.block_on(driver.placement_scores(asks))
            .map_err(|e| e.to_string())
    }
}

/// The reservations pools name, for [`Recorded::held`], read as
/// [`scorer`] asks: through the region's module call's driver.
fn held_lookup<'a>(
    drivers: &'a Drivers,
    rt: &'a tokio::runtime::Runtime,
) -> impl Fn(&str, &str, &HeldAsk) -> Result<Held, String> + 'a {
    move |provider, call, ask| {
        let driver = call_driver(drivers, provider, call)?;
        rt.block_on(driver.reservation(ask))
            .map_err(|e| e.to_string())
    }
}

/// The driver configured for module call `call`'s provider, else the
/// provider's own.
pub(super) fn call_driver(
    drivers: &Drivers,
    provider: &str,
    call: &str,
) -> Result<std::sync::Arc<dyn strata_provider::Driver>, String> {
    let base = drivers
        .named(provider)
        .ok_or_else(|| format!("no {provider} driver"))?;
    let configured = drivers.by_address(&crate::builtin::provider_address(&**base, Some(call)));
    Ok(configured.unwrap_or_else(|| base.clone()))
}

/// The root module calls `state` holds objects of.
fn root_calls(state: &State) -> BTreeSet<String> {
    state
        .resources
        .iter()
        .filter_map(|r| r.id.module.steps().first())
        .map(|step| step.call.clone())
        .collect()
}

/// Where the managers' clusters in `state` run: each one's cloud and
/// region, read from its cluster object as the cloud names it (the EKS
/// cluster's ARN, the GKE cluster's and the AKS cluster's location), or
/// `kubernetes` for a manager of nothing but in-cluster objects (a cluster
/// someone else runs). A manager with cloud objects but no cluster object
/// yet (a crash mid-create) has no place said.
fn manager_places(state: &State) -> BTreeMap<String, String> {
    let place = |type_name: &str, a: &serde_json::Value| -> Option<String> {
        let (cloud, region) = match type_name {
            "aws_eks_cluster" => ("aws", a["arn"].as_str()?.split(':').nth(3)?),
            "google_container_cluster" => ("gcp", a["location"].as_str()?),
            "azurerm_kubernetes_cluster" => ("azure", a["location"].as_str()?),
            _ => return None,
        };
        Some(format!("{cloud} {region}"))
    };
    let in_cluster = |t: &str| {
        ["kubernetes_", "helm_", "time_"]
            .iter()
            .any(|p| t.starts_with(p))
    };
    // By call: its cluster's place, and whether it has cloud objects.
    let mut seen: BTreeMap<String, (Option<String>, bool)> = BTreeMap::new();
    for r in &state.resources {
        let Some(first) = r.id.module.steps().first() else {
            continue;
        };
        if !first.call.ends_with("_manager") {
            continue;
        }
        let entry = seen.entry(first.call.clone()).or_default();
        entry.1 |= !in_cluster(&r.id.type_name);
        let found = r
            .instances
            .iter()
            .filter_map(|i| i.attributes.json().ok())
            .find_map(|a| place(&r.id.type_name, &a));
        if found.is_some() {
            entry.0 = found;
        }
    }
    seen.into_iter()
        .filter_map(|(call, (place, cloud))| match (place, cloud) {
            (Some(p), _) => Some((call, p)),
            (None, false) => Some((call, "kubernetes".to_string())),
            (None, true) => None,
        })
        .collect()
}

/// The portability check without a cloud: the configuration planned on
/// empty state through offline drivers, for `validate`.
pub fn check_portability(
    module: &Module,
    graph: &Graph,
    vars: BTreeMap<String, Value>,
    run: &Rc<Run>,
    expansion: &crate::cluster::Expansion,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let offline = drivers.offline();
    crate::walk::configure(module, graph, &vars, run, &offline)?;
    let rt = crate::runtime::start(1)?;
    let state = State::new();
    crate::plan::plan(
        Request {
            root: module,
            graph,
            drivers: &offline,
            vars,
            run: run.clone(),
            state: &state,
            refresh: crate::plan::Refresh::Nothing,
            mode: crate::plan::Mode::Normal,
            inspect: Some(&|read| crate::cluster::portability::check(expansion, read)),
            prices: &PriceList::default(),
            purpose: crate::plan::Purpose::Shown,
            scope: &Default::default(),
            replace: &[],
            parallelism: 1,
        },
        &rt,
    )
    .map(|_| ())
    .map_err(Diags::from)
}

pub(super) fn prepare(
    path: &Path,
    vars: Option<BTreeMap<String, Value>>,
    opts: &Options,
    recorded: &Recorded<'_>,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Prepared, Diags> {
    let inputs = &opts.inputs;
    let given = config::dynamic::Given::with_environment(inputs.clone());
    let mut module = match &opts.installed_under {
        Some(under) => config::load_for_test(path, under, sources, &given)?,
        None => config::load_given(path, sources, &given)?,
    };
    // Query files join the root module (their providers, variables and
    // locals) before its variables are resolved.
    let lists = match opts.query {
        true => config::read_query_files(&mut module, sources)?,
        false => Vec::new(),
    };
    for p in &opts.provider_blocks {
        module
            .providers
            .retain(|q| (&q.name, &q.alias) != (&p.name, &p.alias));
        module.providers.push(p.clone());
    }
    let functions = std::rc::Rc::new(crate::walk::Functions(drivers.clone()));
    let run = Run::with_functions(module.dir.clone(), &opts.workspace, functions);
    // Files by their path inside the configuration, so a saved plan made
    // in its directory is checked the same when applied from elsewhere.
    let base = format!("{}/", module.dir.display());
    let digests = |sources: &Sources| -> BTreeMap<String, String> {
        sources
            .files()
            .map(|(n, t)| {
                // Read from the working directory (the lock file), a
                // name is relative to it rather than to the configuration.
                let inside = n.strip_prefix(&base).unwrap_or(n);
                (inside.trim_start_matches("./").to_string(), digest(t))
            })
            .collect()
    };
    // The configuration a saved plan is checked against: the files loaded,
    // and the modules a cluster expands into (variable files are not
    // configuration; a saved plan carries the values).
    let mut files = digests(sources);
    let env = variables::environment();
    let (vars, given) = match vars {
        Some(saved) => (
            with_ephemeral(&module, saved, inputs, env, sources)?,
            Default::default(),
        ),
        None => variables::resolve_noting(&module, inputs, env, sources)?,
    };
    let mut warnings = config::deprecation::warnings(&module, &given);
    warnings.extend(config::provider_each::warnings(&module, sources));
    warnings.extend(config::action::warnings(&module));
    let before = digests(sources);
    let expansion = expand(
        &mut module,
        vars.clone(),
        &run,
        drivers,
        &opts.prices,
        recorded,
        sources,
    )?;
    unknown_pools(&expansion, recorded.replace)?;
    for (n, d) in digests(sources) {
        if !before.contains_key(&n) {
            files.insert(n, d);
        }
    }
    let explain = |d: Diags, sources: &Sources| expansion.explain(d, sources);
    let write_only =
        |r: &config::Resource, path: &[String]| crate::walk::write_only(drivers, r, path);
    let (graph, checked) = built_and_checked(&module, sources, || {
        config::check::check_module(&module, &run, &write_only)
    });
    let graph = graph.map_err(|d| explain(d, sources))?;
    checked.map_err(|d| explain(d, sources))?;
    crate::walk::configure(&module, &graph, &vars, &run, drivers)
        .map_err(|d| explain(d, sources))?;
    // A destroy works out what its scope deletes over the whole graph.
    let graph = match opts.scope.is_everything() || opts.mode.is_destroy() {
        true => graph,
        false => opts.scope.narrow(&graph),
    };
    Ok(Prepared {
        module,
        graph,
        vars,
        run,
        files,
        expansion,
        warnings,
        lists,
    })
}

/// The module's graph, and `check`'s verdict on it. A large module's graph
/// is built on another core while it is checked here (10 000 resources:
/// 70 ms and 80 ms, one after the other before): the check evaluates with
/// this thread's functions, which cannot leave it. A graph's error is told
/// first, as when they ran in turn.
fn built_and_checked(
    module: &Module,
    sources: &Sources,
    check: impl FnOnce() -> Result<(), Diags>,
) -> (Result<Graph, Diags>, Result<(), Diags>) {
    /// Below this many resources a thread costs more than it saves.
    const ON_ITS_OWN_FROM: usize = 500;
    if module.resources.len() < ON_ITS_OWN_FROM {
        let graph = crate::graph::build(module, sources);
        return (graph, check());
    }
    std::thread::scope(|s| {
        let build = || crate::graph::build(module, sources);
        let spawned = std::thread::Builder::new()
            .name("graph".into())
            .stack_size(crate::par::STACK)
            .spawn_scoped(s, build);
        let checked = check();
        let graph = match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: built here, after the check.
            Err(_) => crate::graph::build(module, sources),
        };
        (graph, checked)
    })
}

/// `--replace-placement` names a pool that has a placement.
fn unknown_pools(expansion: &crate::cluster::Expansion, replace: &[String]) -> Result<(), Diags> {
    let known: Vec<&str> = expansion.placements().map(|d| d.pool.as_str()).collect();
    for r in replace {
        let found = known
            .iter()
            .any(|k| k == r || k.split_once('.').is_some_and(|(_, pool)| pool == r));
        if !found {
            return Err(Diags::from(Diag::new(
                "strata::placement::unknown",
                format!("No placed node pool {r:?}"),
                match known.is_empty() {
                    true => "--replace-placement names a cluster node pool with `nodes`; this configuration has none.".to_string(),
                    false => format!("--replace-placement names a cluster node pool with `nodes`: {}.", known.join(", ")),
                },
            )));
        }
    }
    Ok(())
}

/// A saved plan's variables and, given again now, the ephemeral ones: a
/// plan file never holds those (as in Terraform). Nothing else may be set
/// on the command line: the plan already holds the values it was made with.
fn with_ephemeral(
    module: &Module,
    mut saved: BTreeMap<String, Value>,
    inputs: &[CliInput],
    env: Vec<(String, String)>,
    sources: &mut Sources,
) -> Result<BTreeMap<String, Value>, Diags> {
    let ephemeral = Module {
        dir: module.dir.clone(),
        variables: module
            .variables
            .iter()
            .filter(|v| v.ephemeral)
            .cloned()
            .collect(),
        ..Module::default()
    };
    if ephemeral.variables.is_empty() {
        if !inputs.is_empty() {
            return Err(Diags::from(Diag::new(
                "strata::apply::vars",
                "Variables with a saved plan",
                "A saved plan already holds the variable values it was made with; --var and --var-file cannot change them (only ephemeral variables are given again). Make a new plan instead.",
            )));
        }
        return Ok(saved);
    }
    saved.extend(variables::resolve(&ephemeral, inputs, env, sources)?);
    Ok(saved)
}

/// Which types provider plugins serve in place of strata's own drivers.
pub(super) fn plugin_served(drivers: &Drivers) -> Vec<crate::plan::PluginServed> {
    drivers
        .plugin_served()
        .into_iter()
        .map(|(provider, types)| crate::plan::PluginServed { provider, types })
        .collect()
}

/// The plan of a prepared configuration, made for `purpose`.
///
/// `-minimal-refresh` (Terraform 1.17, hashicorp/terraform#38953) plans
/// first against the state as stored, then reads back only the instances
/// that plan would change and plans again: a large state is not read
/// whole, and what changed outside strata where the configuration did not
/// is not seen.
pub(super) fn make_plan(
    p: &Prepared,
    state: &State,
    opts: &Options,
    drivers: &Drivers,
    rt: &tokio::runtime::Runtime,
    purpose: crate::plan::Purpose,
) -> Result<Plan, Failed> {
    let at = PlanAt {
        p,
        state,
        opts,
        drivers,
        purpose,
    };
    if !(opts.refresh && opts.minimal_refresh) {
        let refresh = match opts.refresh {
            true => crate::plan::Refresh::Everything,
            false => crate::plan::Refresh::Nothing,
        };
        return plan_with(&at, refresh, rt);
    }
    let mut first = plan_with(&at, crate::plan::Refresh::Nothing, rt)?;
    let changing: std::collections::HashSet<strata_state::model::Address> = first
        .changes
        .iter()
        .filter(|c| c.action != crate::plan::Action::NoOp)
        .map(|c| c.addr.clone())
        .collect();
    match changing.is_empty() {
        true => {
            // Nothing would change: nothing was read back.
            first.read_only = Some(Vec::new());
            Ok(first)
        }
        false => plan_with(&at, crate::plan::Refresh::Only(&changing), rt),
    }
}

/// What a plan is made of.
struct PlanAt<'a> {
    p: &'a Prepared,
    state: &'a State,
    opts: &'a Options,
    drivers: &'a Drivers,
    purpose: crate::plan::Purpose,
}

fn plan_with(
    at: &PlanAt<'_>,
    refresh: crate::plan::Refresh<'_>,
    rt: &tokio::runtime::Runtime,
) -> Result<Plan, Failed> {
    let PlanAt {
        p,
        state,
        opts,
        drivers,
        purpose,
    } = *at;
    let mut plan = crate::plan::plan(
        Request {
            root: &p.module,
            graph: &p.graph,
            drivers,
            vars: p.vars.clone(),
            run: p.run.clone(),
            state,
            refresh,
            mode: opts.mode,
            inspect: Some(&|read| crate::cluster::portability::check(&p.expansion, read)),
            prices: &p.expansion.prices.clone().then(opts.prices.clone()),
            purpose,
            scope: &opts.scope,
            replace: &opts.replace,
            parallelism: opts.parallelism,
        },
        rt,
    )?;
    plan.warnings.extend(p.warnings.iter().cloned());
    // An ephemeral value is never written down: not in plan JSON, not in
    // a saved plan (applying one takes it again).
    for v in p.module.variables.iter().filter(|v| v.ephemeral) {
        plan.variables.remove(&v.name);
    }
    plan.placements = p.expansion.placements().cloned().collect();
    plan.cost.commit(held_pools(&plan.placements));
    plan.cost.purchases = purchases(&plan.placements);
    plan.dispatch = p.expansion.dispatch().cloned().collect();
    plan.plugin_served = plugin_served(drivers);
    Ok(plan)
}

/// What this apply buys for placed pools (a Capacity Block, once), as
/// the cost table shows it.
fn purchases(decisions: &[crate::placement::Decision]) -> Vec<crate::cost::PurchaseCost> {
    decisions
        .iter()
        .filter_map(|d| {
            let p = d.purchase.as_ref()?;
            let buying = p.buys.as_ref()?;
            Some(crate::cost::PurchaseCost {
                call: p.call.clone(),
                what: format!("Capacity Block {}: {}", p.offering, buying.terms),
                amount: buying.upfront,
            })
        })
        .collect()
}

/// The pools whose placement puts their nodes on held capacity, as the
/// cost table marks them.
pub fn held_pools(decisions: &[crate::placement::Decision]) -> Vec<crate::cost::HeldPool> {
    decisions
        .iter()
        .filter_map(|d| {
            let c = d.chosen()?;
            let h = c.held.as_ref()?;
            let facts = h.facts.as_ref();
            Some(crate::cost::HeldPool {
                call: c.call.clone(),
                pool: d
                    .pool
                    .split_once('.')
                    .map_or(d.pool.as_str(), |(_, p)| p)
                    .to_string(),
                committed: crate::cost::Committed {
                    kind: c.at.capacity.clone(),
                    id: h.id.clone(),
                    instances: facts.map(|f| f.instances),
                    used: d.nodes,
                    ends: facts.and_then(|f| f.ends.clone()),
                    list_node_hour: Default::default(),
                },
                already: d
                    .recorded
                    .as_ref()
                    .and_then(|r| r.chosen.as_ref())
                    .is_some_and(|p| p.at == c.at),
            })
        })
        .collect()
}
