//! `validate` and `graph`: the configuration loaded and its cluster specs
//! expanded as a plan would, then checked or drawn, without a state.

use super::prepare::{check_portability, expand, placements};
use crate::builtin::Drivers;
use crate::config::{
    self,
    variables::{self, CliInput},
};
use crate::diag::{Diag, Diags, Sources};
use std::path::Path;
use std::rc::Rc;
use strata_provider::catalog::PriceList;

/// A configuration loaded, its `cluster` blocks expanded as plan sees
/// them; variables without values leave `clouds` to the cloud blocks.
struct Loaded {
    module: config::Module,
    run: Rc<config::Run>,
    clusters: Option<(crate::cluster::Expansion, ValueMap)>,
}

fn load_expanded(
    path: &Path,
    inputs: &[CliInput],
    workspace: &str,
    prices: &PriceList,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Loaded, Diags> {
    let given = config::dynamic::Given::with_environment(inputs.to_vec());
    let mut module = config::load_given(path, sources, &given)?;
    let functions = Rc::new(crate::walk::Functions(drivers.clone()));
    let run = config::Run::with_functions(module.dir.clone(), workspace, functions);
    if module.clusters.is_empty() {
        return Ok(Loaded {
            module,
            run,
            clusters: None,
        });
    }
    let vars =
        variables::resolve(&module, inputs, variables::environment(), sources).unwrap_or_default();
    let none = placements(None, &[], strata_provider::clock::now());
    let expansion = expand(
        &mut module,
        vars.clone(),
        &run,
        drivers,
        prices,
        &none,
        sources,
    )?;
    Ok(Loaded {
        module,
        run,
        clusters: Some((expansion, vars)),
    })
}

type ValueMap = std::collections::BTreeMap<String, crate::lang::value::Value>;

/// `strata graph`: the configuration's resource graph as DOT or Mermaid.
pub fn graph(
    path: &Path,
    (workspace, format): (&str, GraphFormat),
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<String, Diags> {
    let loaded = load_expanded(path, &[], workspace, &Default::default(), sources, drivers)?;
    let g = crate::graph::build(&loaded.module, sources)?;
    Ok(match format {
        GraphFormat::Dot => crate::graph::to_dot(&g),
        GraphFormat::Mermaid => crate::graph::to_mermaid(&g),
    })
}

/// How `graph` draws the resource graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    Dot,
    Mermaid,
}

/// `strata validate`: the configuration checked for any values, the
/// values given held to their types and validation rules; what it warns
/// of when it is valid.
pub fn validate(
    path: &Path,
    inputs: &[CliInput],
    workspace: &str,
    prices: &PriceList,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Vec<Diag>, Diags> {
    let Loaded {
        module,
        run,
        clusters,
    } = load_expanded(path, inputs, workspace, prices, sources, drivers)?;
    // The values given are held to their types and validations, as a plan
    // holds them; a variable left unset is no error here (validate checks
    // the configuration for any values).
    if !inputs.is_empty() {
        let given = variables::resolve(&module, inputs, Vec::new(), sources).err();
        let refused: Vec<Diag> = given
            .map(|d| d.0)
            .unwrap_or_default()
            .into_iter()
            .filter(|d| d.code != "strata::config::missing_variable")
            .collect();
        Diags(refused).into_result(())?;
    }
    let checked = (|| {
        // Cycles first: they name every member, where evaluation would only
        // see the point it came back to.
        let graph = crate::graph::build(&module, sources)?;
        // References and schemas are checked apart, and reported together.
        let write_only = |r: &crate::config::Resource, path: &[String]| {
            crate::walk::write_only(drivers, r, path)
        };
        let mut found = crate::config::check::check_module(&module, &run, &write_only)
            .err()
            .unwrap_or_default();
        // The same expression may fail in both: said once.
        for d in crate::walk::check_schemas(&module, &run, drivers, sources).0 {
            found.push(d);
        }
        found.into_result(())?;
        if let Some((expansion, vars)) = &clusters {
            let vars = vars.clone();
            check_portability(&module, &graph, vars, &run, expansion, drivers)?;
        }
        let mut warnings = crate::config::provider_each::warnings(&module, sources);
        warnings.extend(crate::config::action::warnings(&module));
        Ok(warnings)
    })();
    // An error inside strata's own modules names the cluster spec too.
    checked.map_err(|d| match &clusters {
        Some((expansion, _)) => expansion.explain(d, sources),
        None => d,
    })
}
