//! `plan -generate-config-out=FILE`: for each `import` block whose target
//! has no `resource` block, the object is read by its id and a block
//! written from it into FILE (a new file), before the plan; the plan then
//! reads FILE as part of the configuration, as Terraform's does.

use super::prepare::{placements, prepare};
use super::Options;
use crate::builtin::Drivers;
use crate::diag::{Diag, Diags, Sources};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use strata_provider::ImportBy;
use strata_state::model::Address;

/// Configuration written for import targets: where, and each block by
/// its target's address.
#[derive(Default)]
pub(super) struct Generated {
    target: PathBuf,
    pub blocks: BTreeMap<String, String>,
}

impl Generated {
    /// After a plan that failed: a block whose import the plan did not
    /// reach says no id, as Terraform writes it (its header names the id
    /// of an import it planned).
    pub fn settle(&self, planned: &dyn Fn(&str) -> bool) -> Result<(), Diags> {
        let unplanned = |addr: &String| !planned(addr);
        if !self.blocks.keys().any(unplanned) {
            return Ok(());
        }
        let blocks: BTreeMap<String, String> = self
            .blocks
            .iter()
            .map(|(addr, text)| match planned(addr) {
                true => (addr.clone(), text.clone()),
                false => (addr.clone(), crate::render::config::without_id(text)),
            })
            .collect();
        std::fs::remove_file(&self.target).map_err(|e| unwritable(&self.target, e))?;
        write(&self.target, &blocks)
    }
}

/// Writes the configuration; what it wrote, by the target's address.
pub(super) fn config(
    path: &Path,
    opts: &Options,
    file: &Path,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<Generated, Diags> {
    let target = match path.is_file() {
        true => path.parent().unwrap_or(Path::new(".")).join(file),
        false => path.join(file),
    };
    // Refused before anything is read, as Terraform refuses it.
    if target.exists() {
        return Err(Diags::from(Diag::new("strata::plan::generate_config", "Target generated file already exists", "strata can only write generated config into a new file. Either choose a different target location or move all existing configuration out of the target file, delete it and try again.")));
    }
    let none = placements(None, &opts.replace_placement, strata_provider::clock::now());
    let p = prepare(path, None, opts, &none, sources, drivers)?;
    let scope = crate::config::ConfigScope::new(&p.module, p.vars.clone(), p.run.clone());
    let rt = crate::runtime::start(opts.parallelism)?;
    let mut diags = Diags::default();
    let mut blocks = BTreeMap::new();
    for im in &p.module.imports {
        let unfit = |detail: &str| {
            Diag::new(
                "strata::plan::import_target",
                "Configuration for import target does not exist",
                detail,
            )
            .at(im.to.span)
        };
        const REPEATED: &str = "The given import block is not compatible with config generation. The -generate-config-out option cannot be used with import blocks which use for_each, or resources which use for_each or count.";
        if im.for_each.is_some() {
            if !p.module.resources.iter().any(|r| im.names(r)) {
                diags.push(unfit(REPEATED));
            }
            continue;
        }
        // What is no instance address, the plan reports.
        let Some(to) = crate::plan::import_address(&im.to) else {
            continue;
        };
        if p.module.resource_at(&to.id.config()).is_some() {
            continue;
        }
        if !to.id.module.is_root() {
            diags.push(unfit(&format!("Resource {to} not found. Only resources within the root module are eligible for config generation.")));
            continue;
        }
        if to.key.is_some() {
            diags.push(unfit(REPEATED));
            continue;
        }
        let by = match crate::plan::import_target(im, &scope, drivers, &to.id.type_name) {
            Ok(by) => by,
            Err(d) => {
                diags.0.extend(d.0);
                continue;
            }
        };
        match generated(&to, &by, drivers, &rt) {
            Ok(text) => {
                blocks.insert(to.to_string(), text);
            }
            Err(d) => diags.push(d.at(im.span)),
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    if !blocks.is_empty() {
        write(&target, &blocks)?;
    }
    Ok(Generated { target, blocks })
}

/// The block of the object `to` imports by `by`, through the default
/// configuration of its provider.
fn generated(
    to: &Address,
    by: &ImportBy,
    drivers: &Drivers,
    rt: &tokio::runtime::Runtime,
) -> Result<String, Diag> {
    let type_name = &to.id.type_name;
    let Some((base, schema)) = drivers.resource(type_name) else {
        return Err(Diag::new(
            "strata::plan::import",
            "Invalid resource type",
            format!("No driver of this strata build provides the resource type {type_name:?}."),
        ));
    };
    let driver = drivers
        .configured(
            type_name,
            &base.provider_address(),
            crate::config::Mode::Managed,
        )
        .map_or_else(|| base.clone(), |(d, _)| d);
    let id = match by {
        ImportBy::Id(id) => Some(id.as_str()),
        ImportBy::Identity(_) => None,
    };
    match rt.block_on(driver.import_object(type_name, by)) {
        Ok(Some(found)) => Ok(crate::render::config::resource_block(type_name, &to.id.name, id, &found.value, schema)),
        Ok(None) => Err(Diag::new("strata::plan::import", "Cannot import non-existent remote object", format!("While attempting to import an existing object to {:?}, the driver found no object with the {}.", to.to_string(), crate::plan::import_by_text(by)))),
        Err(e) => Err(Diag::new("strata::plan::import", format!("Importing {to} failed"), e.to_string())),
    }
}

/// FILE, checked to be new before anything was read.
fn write(target: &Path, blocks: &BTreeMap<String, String>) -> Result<(), Diags> {
    let text: String = std::iter::once(crate::render::config::HEADER.to_string())
        .chain(blocks.values().cloned())
        .collect();
    std::fs::write(target, text).map_err(|e| unwritable(target, e))
}

fn unwritable(target: &Path, e: std::io::Error) -> Diags {
    Diags::from(Diag::new(
        "strata::plan::generate_config",
        "Cannot write the generated configuration",
        format!("{}: {e}", target.display()),
    ))
}
