//! `strata providers`: the providers the configuration needs, module by
//! module, and those the state's objects were made with — Terraform's
//! tree, with what serves each provider here being the built-in drivers.

use super::init::module_needs;
use crate::builtin::Drivers;
use crate::config::{self, Module};
use crate::diag::{Diags, Sources};
use std::collections::BTreeSet;
use std::path::Path;

pub fn run(
    path: &Path,
    workspace: &str,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<String, Diags> {
    let module = config::load(path, sources)?;
    let mut out = String::from("\nProviders required by configuration:\n.\n");
    tree(&module, "", drivers, &mut out);
    let store = crate::backends::open(None, &module, workspace)?;
    let loaded = store.load().map_err(crate::statecmd::state_err)?;
    let used: BTreeSet<String> = loaded
        .state
        .resources
        .iter()
        .map(|r| r.provider.replace('"', ""))
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

/// `m`'s providers, then the modules it calls, each a branch of the tree
/// drawn under `indent`.
fn tree(m: &Module, indent: &str, drivers: &Drivers, out: &mut String) {
    let providers: Vec<String> = module_needs(m, drivers)
        .into_iter()
        .map(|n| match n.version {
            Some(v) => format!("provider[{}] {v}", n.source),
            None => format!("provider[{}]", n.source),
        })
        .collect();
    let count = providers.len() + m.module_calls.len();
    let mut i = 0;
    let mut branch = |label: &str, out: &mut String| -> String {
        i += 1;
        let last = i == count;
        out.push_str(&format!(
            "{indent}{}{label}\n",
            if last { "└── " } else { "├── " }
        ));
        format!("{indent}{}", if last { "    " } else { "│   " })
    };
    for p in &providers {
        branch(p, out);
    }
    for c in &m.module_calls {
        let below = branch(&format!("module.{}", c.name), out);
        tree(&c.module, &below, drivers, out);
    }
}
