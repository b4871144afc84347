//! `strata providers`: the providers the configuration needs, module by
//! module, and those the state's objects were made with — Terraform's
//! tree, with what serves each provider here being the built-in drivers;
//! and `providers schema -json`, their schemas as Terraform prints them.

use super::init::module_needs;
use crate::builtin::{self, source_of, Drivers};
use crate::config::{self, Module};
use crate::diag::{Diag, Diags, Sources};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeSet;
use std::path::Path;
use strata_provider::{BlockNesting, Driver, FunctionParam, FunctionSig, ResourceSchema, TypeMode};

/// `strata providers`: the tree of what the configuration and the state
/// need.
pub fn providers(
    path: &Path,
    workspace: &str,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<String, Diags> {
    let module = config::load(path, sources)?;
    let mut out = String::from("\nProviders required by configuration:\n.\n");
    // The test files hang from the root, as Terraform shows them.
    let mut tests: Vec<String> = super::test::found_files(&module.dir, Path::new("tests"))
        .iter()
        .map(|f| {
            let name = f.to_string_lossy();
            let name = name.strip_suffix(".tftest.hcl").unwrap_or(&name);
            format!("test.{}", name.replace('/', "."))
        })
        .collect();
    tests.sort();
    tree(&module, (&tests, ""), drivers, &mut out);
    let used: BTreeSet<String> = state_providers(&module, workspace)?
        .iter()
        .map(|p| p.replace('"', ""))
        .collect();
    if !used.is_empty() {
        out.push_str("\nProviders required by state:\n\n");
        for p in used {
            out.push_str(&format!("    {p}\n"));
        }
    }
    out.push('\n');
    Ok(out)
}

/// `m`'s providers, its test files (the root's), then the modules it
/// calls, each a branch of the tree drawn under `indent`.
fn tree(m: &Module, (tests, indent): (&[String], &str), drivers: &Drivers, out: &mut String) {
    let providers: Vec<String> = module_needs(m, drivers)
        .into_iter()
        .map(|n| match n.version {
            Some(v) => format!("provider[{}] {v}", n.source),
            None => format!("provider[{}]", n.source),
        })
        .collect();
    let count = providers.len() + tests.len() + m.module_calls.len();
    let mut i = 0;
    let mut branch = |label: &str, out: &mut String| -> String {
        i += 1;
        let last = i == count;
        let (here, below) = tree_edges(last);
        out.push_str(&format!("{indent}{here}{label}\n"));
        format!("{indent}{below}")
    };
    for p in providers.iter().chain(tests) {
        branch(p, out);
    }
    for c in &m.module_calls {
        let below = branch(&format!("module.{}", c.name), out);
        tree(&c.module, (&[], &below), drivers, out);
    }
}

/// A tree branch's edge and what goes beneath it, as Terraform's trees
/// (`providers`, `modules`) draw them: a link down is followed by two
/// no-break spaces, as the library Terraform uses writes it.
pub(super) fn tree_edges(last: bool) -> (&'static str, &'static str) {
    match last {
        true => ("└── ", "    "),
        false => ("├── ", "│\u{a0}\u{a0} "),
    }
}

/// `strata providers schema -json`: the schema of every provider the
/// configuration, its modules and the state need, in Terraform's format
/// 1.0. A plugin's in its own words; a native driver's as strata has it.
pub fn schema(
    path: &Path,
    workspace: &str,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<String, Diags> {
    let module = config::load(path, sources)?;
    let mut wanted = BTreeSet::new();
    needs(&module, drivers, &mut wanted);
    // And those the state's objects were made with, as Terraform adds.
    let made_with = state_providers(&module, workspace)?;
    wanted.extend(
        made_with
            .iter()
            .map(|p| strata_state::provider_of_config(p).to_string()),
    );
    let mut schemas = Map::new();
    for source in wanted {
        let serving: Vec<&std::sync::Arc<dyn Driver>> = drivers
            .all()
            .filter(|d| source_of(d.as_ref()) == source)
            .collect();
        if serving.is_empty() {
            return Err(missing(&source).into());
        }
        let own = serving.iter().find_map(|d| d.describe());
        let described = match own {
            Some(r) => r.map_err(|e| {
                Diags::from(Diag::new(
                    "strata::providers::schema",
                    "Failed to read the provider's schema",
                    e.to_string(),
                ))
            })?,
            None => native(&serving, &source),
        };
        schemas.insert(source, described);
    }
    let out = json!({ "format_version": "1.0", "provider_schemas": schemas });
    Ok(format!("{out}\n"))
}

/// The provider configuration each of the state's resources was made
/// with (`provider["…"]`, as stored).
fn state_providers(module: &Module, workspace: &str) -> Result<Vec<String>, Diags> {
    let store = crate::backends::open(None, module, workspace)?;
    let loaded = store.load().map_err(crate::statecmd::state_err)?;
    Ok(loaded
        .state
        .resources
        .iter()
        .map(|r| r.provider.clone())
        .collect())
}

/// Every provider source `m` and the modules it calls need.
fn needs(m: &Module, drivers: &Drivers, out: &mut BTreeSet<String>) {
    out.extend(module_needs(m, drivers).into_iter().map(|n| n.source));
    for c in &m.module_calls {
        needs(&c.module, drivers, out);
    }
}

fn missing(source: &str) -> Diag {
    Diag::new(
        "strata::providers::missing",
        "Missing required provider",
        format!("This configuration requires provider {source}, but neither strata nor an installed plugin serves it. Run strata init to install it."),
    )
}

/// What strata's own drivers of one provider (`source`) know of its
/// schemas; for the builtin provider, the functions the language has of
/// it too.
fn native(serving: &[&std::sync::Arc<dyn Driver>], source: &str) -> Json {
    let mut resources = Map::new();
    let mut data = Map::new();
    let mut ephemeral = Map::new();
    for d in serving {
        let families = [
            (&mut resources, TypeMode::Managed),
            (&mut data, TypeMode::Data),
            (&mut ephemeral, TypeMode::Ephemeral),
        ];
        for (into, mode) in families {
            for name in d.type_names(mode) {
                if let Some(s) = d.schema(mode, &name) {
                    into.insert(name, schema_json(s));
                }
            }
        }
    }
    let mut out = Map::new();
    let provider = serving.first().map(|d| d.provider_schema());
    out.insert(
        "provider".into(),
        provider.as_ref().map_or(json!({"version": 0}), schema_json),
    );
    let functions = match source {
        builtin::TERRAFORM => builtin::terraform_functions()
            .iter()
            .map(|(name, sig)| (name.clone(), function_json(sig)))
            .collect(),
        _ => Map::new(),
    };
    for (key, m) in [
        ("resource_schemas", resources),
        ("data_source_schemas", data),
        ("ephemeral_resource_schemas", ephemeral),
        ("functions", functions),
    ] {
        if !m.is_empty() {
            out.insert(key.into(), Json::Object(m));
        }
    }
    Json::Object(out)
}

/// A schema; one that describes nothing has no block, as Terraform
/// prints its own provider's.
fn schema_json(s: &ResourceSchema) -> Json {
    if s.attributes.is_empty() && s.blocks.is_empty() {
        return json!({ "version": s.version });
    }
    json!({ "version": s.version, "block": block_json(s) })
}

fn block_json(s: &ResourceSchema) -> Json {
    let mut out = Map::new();
    let attributes: Map<String, Json> = s
        .attributes
        .iter()
        .map(|(k, a)| {
            let mut e = Map::new();
            e.insert("type".into(), strata_value::json::type_to_json(&a.ty));
            if !a.description.is_empty() {
                e.insert("description".into(), json!(a.description));
            }
            e.insert("description_kind".into(), json!("plain"));
            for (flag, on) in [
                ("required", a.required),
                ("optional", a.optional),
                ("computed", a.computed),
                ("sensitive", a.sensitive),
            ] {
                if on {
                    e.insert(flag.into(), json!(true));
                }
            }
            (k.clone(), Json::Object(e))
        })
        .collect();
    if !attributes.is_empty() {
        out.insert("attributes".into(), Json::Object(attributes));
    }
    let blocks: Map<String, Json> = s
        .blocks
        .iter()
        .map(|(k, b)| {
            let nesting = match b.nesting {
                BlockNesting::Single => "single",
                BlockNesting::List => "list",
                BlockNesting::Set => "set",
                BlockNesting::Map => "map",
            };
            let mut e = Map::new();
            e.insert("nesting_mode".into(), json!(nesting));
            e.insert("block".into(), block_json(&b.schema));
            // Terraform counts a single block only when it is required
            // (one and one); its at-most-one is the nesting itself.
            let (min, max) = match b.nesting {
                BlockNesting::Single if b.min_items > 0 => (1, Some(1)),
                BlockNesting::Single => (0, None),
                _ => (b.min_items, b.max_items),
            };
            if min > 0 {
                e.insert("min_items".into(), json!(min));
            }
            if let Some(m) = max {
                e.insert("max_items".into(), json!(m));
            }
            (k.clone(), Json::Object(e))
        })
        .collect();
    if !blocks.is_empty() {
        out.insert("block_types".into(), Json::Object(blocks));
    }
    out.insert("description_kind".into(), json!("plain"));
    Json::Object(out)
}

/// A function's signature as Terraform's schema JSON gives it.
pub(super) fn function_json(sig: &FunctionSig) -> Json {
    let type_json = strata_value::json::type_to_json;
    let param = |p: &FunctionParam| {
        let mut e = Map::new();
        e.insert("name".into(), json!(p.name));
        if p.allow_null {
            e.insert("is_nullable".into(), json!(true));
        }
        e.insert("type".into(), type_json(&p.ty));
        Json::Object(e)
    };
    let mut e = Map::new();
    e.insert("return_type".into(), type_json(&sig.returns));
    if !sig.params.is_empty() {
        e.insert("parameters".into(), sig.params.iter().map(param).collect());
    }
    if let Some(v) = &sig.variadic {
        e.insert("variadic_parameter".into(), param(v));
    }
    Json::Object(e)
}
