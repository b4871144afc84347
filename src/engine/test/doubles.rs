//! A run's test doubles and providers: the file's `mock_provider`s in
//! place of real providers and its `provider` blocks over the
//! configuration's (those the run's `providers` names, else every block
//! and every mock without an alias), and the `override_resource`,
//! `override_data` and
//! `override_module` blocks of the run, the file and the mocks in place
//! of single objects and module calls — the run's over the file's over
//! a mock's, and of each, one instance's over its resource's, as in
//! Terraform.

use super::mock::{self, MockDriver};
use crate::builtin::doubles::Doubles;
use crate::builtin::Drivers;
use crate::config::testfile::{During, MockProvider, Override, OverrideKind, RunBlock, TestFile};
use crate::config::Module;
use crate::config::Provider;
use crate::diag::{Diag, Diags};
use crate::eval::{EmptyScope, Evaluator};
use crate::lang::value::{Attrs, Value};
use crate::syntax::Expr;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use strata_provider::Driver;
use strata_state::model::{Address, ModulePath, ResourceAddr};

/// What one run plans and applies with: its drivers (mocks and
/// overrides over the real ones) and the `provider` blocks over the
/// configuration's own.
pub(super) struct Setup {
    pub drivers: Drivers,
    pub providers: Vec<Provider>,
    /// Overrides of what the configuration does not declare.
    pub warnings: Diags,
}

/// A run's mocks (each under the provider name it serves) and provider
/// blocks.
#[derive(Default)]
struct Chosen<'f> {
    mocks: Vec<(String, &'f MockProvider)>,
    blocks: Vec<Provider>,
}

/// The providers run `r` uses, as Terraform chooses them: with
/// `providers = { … }`, only those it names (a `provider` block or a
/// `mock_provider` of the file, by name and alias, under the name the
/// key gives); without, every `provider` block and every mock without an
/// alias.
fn chosen<'f>(file: &'f TestFile, r: &RunBlock) -> Result<Chosen<'f>, Diags> {
    if r.providers.is_empty() {
        let unaliased = file.mocks.iter().filter(|m| m.alias.is_none());
        return Ok(Chosen {
            mocks: unaliased.map(|m| (m.name.clone(), m)).collect(),
            blocks: file.providers.clone(),
        });
    }
    let mut chosen = Chosen::default();
    let mut diags = Diags::default();
    for (child, parent) in &r.providers {
        let same =
            |name: &str, alias: &Option<String>| name == parent.name && *alias == parent.alias;
        if let Some(m) = file.mocks.iter().find(|m| same(&m.name, &m.alias)) {
            chosen.mocks.push((child.name.clone(), m));
        } else if let Some(p) = file.providers.iter().find(|p| same(&p.name, &p.alias)) {
            chosen.blocks.push(Provider {
                name: child.name.clone(),
                alias: child.alias.clone(),
                ..p.clone()
            });
        } else {
            let shown = match &parent.alias {
                Some(a) => format!("{}.{a}", parent.name),
                None => parent.name.clone(),
            };
            diags.push(
                Diag::new(
                    "strata::test::providers",
                    format!("Missing provider definition for {shown}"),
                    "This provider block references a provider definition that does not exist.",
                )
                .at(parent.span),
            );
        }
    }
    diags.into_result(chosen)
}

/// A `mock_provider` block as the mock of provider `name`.
fn mock_of(m: &MockProvider, name: &str, diags: &mut Diags) -> mock::Mock {
    let mut defaults = mock::Defaults::default();
    for (into, given) in [
        (&mut defaults.resources, &m.resources),
        (&mut defaults.data, &m.data),
        (&mut defaults.ephemeral, &m.ephemeral),
    ] {
        for (t, e) in given {
            let attrs = e.as_ref().map(|e| object(e, diags)).unwrap_or_default();
            into.insert(t.clone(), attrs);
        }
    }
    mock::Mock {
        name: name.to_string(),
        defaults,
        during: m.during,
    }
}

/// Run `r`'s setup over `drivers` (the real ones): the mocks it uses, its
/// overrides, the file's and those mocks', and the provider blocks it
/// uses; with a warning for each of the run's overrides whose target
/// `module` (the configuration the run plans) does not declare.
pub(super) fn for_run(
    file: &TestFile,
    r: &RunBlock,
    module: &Module,
    drivers: &Drivers,
) -> Result<Setup, Diags> {
    let chosen = chosen(file, r)?;
    let mut diags = Diags::default();
    let mocks: Vec<mock::Mock> = chosen
        .mocks
        .iter()
        .map(|(name, m)| mock_of(m, name, &mut diags))
        .collect();
    let mut objects = Vec::new();
    let mut modules = Vec::new();
    // The run's first: the first that names an address wins.
    for o in r.overrides.iter().chain(&file.overrides) {
        match o.kind {
            OverrideKind::Module => {
                if let Some(path) = ModulePath::parse(&o.target) {
                    modules.push((path, object_of(o, &mut diags)));
                }
            }
            _ => objects.extend(given(o, None, During::Apply, &mut diags)),
        }
    }
    for (name, m) in &chosen.mocks {
        for o in &m.overrides {
            objects.extend(given(o, Some(name), m.during, &mut diags));
        }
    }
    if diags.has_errors() {
        return Err(diags);
    }
    // Each run configures providers of its own (its provider blocks may
    // differ from the last run's).
    let mocked = mock::mocked(&drivers.fresh(), mocks).map_err(|(name, why)| {
        let at = chosen.mocks.iter().find(|(n, _)| *n == name);
        let d = Diag::new(
            "strata::test::mock_provider",
            "Cannot mock this provider",
            why,
        );
        Diags::from(match at {
            Some((_, m)) => d.at(m.span),
            None => d,
        })
    })?;
    let doubles = TestDoubles {
        objects,
        modules,
        schemas: Mutex::default(),
    };
    Ok(Setup {
        drivers: mocked.with_doubles(Arc::new(doubles)),
        providers: chosen.blocks,
        warnings: unknown_targets(&r.overrides, module),
    })
}

/// A warning for each override whose target `module` does not declare,
/// in Terraform's words.
pub(super) fn unknown_targets<'o>(
    overrides: impl IntoIterator<Item = &'o Override>,
    module: &Module,
) -> Diags {
    let mut diags = Diags::default();
    for o in overrides {
        if declares(module, o) {
            continue;
        }
        diags.push(
            Diag::new(
                "strata::test::override_target",
                "Invalid override target",
                format!("The override target {} does not exist within the configuration under test. This could indicate a typo in the target address or an unnecessary override.", o.target),
            )
            .at(o.target_span)
            .warning(),
        );
    }
    diags
}

/// Whether `module` declares what `o` targets (instance keys aside).
fn declares(module: &Module, o: &Override) -> bool {
    let (path, resource) = match o.kind {
        OverrideKind::Module => (ModulePath::parse(&o.target), None),
        _ => match resource_of(&o.target) {
            Some(r) => (Some(r.module.clone()), Some(r)),
            None => (None, None),
        },
    };
    let Some(path) = path else {
        return false;
    };
    let mut m = module;
    for step in path.steps() {
        match m.module_calls.iter().find(|c| c.name == step.call) {
            Some(c) => m = &c.module,
            None => return false,
        }
    }
    resource.is_none_or(|r| {
        m.resources
            .iter()
            .any(|d| d.mode == r.mode && d.type_name == r.type_name && d.name == r.name)
    })
}

/// The resource an override's target names (its instance key dropped).
fn resource_of(target: &str) -> Option<ResourceAddr> {
    ResourceAddr::parse(target).or_else(|| Address::parse(target).map(|a| a.id))
}

/// What an object override gives: its target, values and when.
struct Given {
    target: Target,
    /// `Some`: a mock's, for that provider's objects only.
    provider: Option<String>,
    values: Attrs,
    during: During,
}

enum Target {
    Instance(Address),
    Resource(ResourceAddr),
}

fn given(
    o: &Override,
    provider: Option<&str>,
    default: During,
    diags: &mut Diags,
) -> Option<Given> {
    let target = match o.instance {
        true => Target::Instance(Address::parse(&o.target)?),
        false => Target::Resource(ResourceAddr::parse(&o.target)?),
    };
    Some(Given {
        target,
        provider: provider.map(str::to_string),
        values: object_of(o, diags),
        during: o.during.unwrap_or(default),
    })
}

/// An override's `values` (`outputs`); none: an empty object.
fn object_of(o: &Override, diags: &mut Diags) -> Attrs {
    o.values
        .as_ref()
        .map(|e| object(e, diags))
        .unwrap_or_default()
}

/// A constant object expression (a mock's `defaults`, an override's
/// `values`) as attributes.
fn object(e: &Expr, diags: &mut Diags) -> Attrs {
    let v = Evaluator::new(&EmptyScope, PathBuf::from(".")).eval(e);
    match v.map(|v| v.unmark_deep().0) {
        Ok(Value::Object(attrs)) => attrs,
        Ok(_) => {
            diags.push(
                Diag::new(
                    "strata::test::values",
                    "Invalid values",
                    "A mock's defaults and an override's values or outputs are an object of attribute values.",
                )
                .at(e.span),
            );
            Attrs::new()
        }
        Err(d) => {
            diags.push(d);
            Attrs::new()
        }
    }
}

/// One run's stand-ins.
struct TestDoubles {
    /// Object overrides, the run's, the file's, then the mocks'.
    objects: Vec<Given>,
    modules: Vec<(ModulePath, Attrs)>,
    /// The stand-ins' schemas, made once per provider.
    schemas: Mutex<HashMap<String, mock::Schemas>>,
}

impl TestDoubles {
    /// The override for instance `addr` served by `provider` (a
    /// provider's name; `None`: any): of the first level that has one,
    /// the instance's over the resource's.
    fn find(&self, addr: &Address, provider: Option<&str>) -> Option<&Given> {
        let levels = [false, true];
        levels.into_iter().find_map(|mocks| {
            let level = self
                .objects
                .iter()
                .filter(|g| g.provider.is_some() == mocks);
            let level: Vec<&Given> = level
                .filter(|g| {
                    g.provider.is_none() || provider.is_none() || g.provider.as_deref() == provider
                })
                .collect();
            let instance = level
                .iter()
                .find(|g| matches!(&g.target, Target::Instance(a) if a == addr));
            let resource = || {
                level
                    .iter()
                    .find(|g| matches!(&g.target, Target::Resource(r) if *r == addr.id))
            };
            instance.or_else(resource).copied()
        })
    }
}

impl Doubles for TestDoubles {
    fn driver_at(&self, addr: &Address, real: &Arc<dyn Driver>) -> Option<Arc<dyn Driver>> {
        let g = self.find(addr, Some(real.name()))?;
        let schemas = match self.schemas.lock() {
            Ok(mut made) => made
                .entry(real.provider_address())
                .or_insert_with(|| mock::Schemas::of(real))
                .clone(),
            Err(_) => mock::Schemas::of(real),
        };
        let mock = MockDriver::standing_in((real.clone(), schemas), g.values.clone(), g.during);
        Some(Arc::new(mock))
    }

    fn stands_in(&self, addr: &Address) -> bool {
        self.find(addr, None).is_some()
    }

    fn module_outputs(&self, path: &ModulePath) -> Option<Attrs> {
        self.modules
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, outputs)| outputs.clone())
    }
}
