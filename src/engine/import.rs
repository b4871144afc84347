//! `strata import ADDR ID`: one existing object read through its driver
//! and recorded at ADDR, as Terraform's `import` command does. Nothing is
//! planned or changed in the cloud; the next plan shows what the
//! configuration would change on the object.

use super::session::{require_configuration, Opening, Operation, Session, Source};
use super::view::{ImportStep, Notice, View};
use super::Options;
use crate::builtin::Drivers;
use crate::diag::{Diag, Diags, Sources};
use std::path::Path;
use strata_state::model::{Address, Mode};

fn refused(summary: &str, detail: String) -> Diags {
    Diags::from(Diag::new("strata::import", summary, detail))
}

pub fn import(
    path: &Path,
    opts: &Options,
    (addr, id): (&str, &str),
    view: &mut dyn View,
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let to = match Address::parse(addr) {
        Some(a) if a.id.mode == Mode::Managed => a,
        _ => return Err(refused("Invalid address", format!("{addr:?} is not a managed resource instance address; expected e.g. aws_vpc.main or module.net.aws_subnet.a[0]."))),
    };
    require_configuration(path, Operation::Import, crate::plan::Mode::Normal, view)?;
    let from = Source {
        dir: path,
        vars: None,
        now: strata_provider::clock::now(),
    };
    let p = from.prepare(opts, sources, drivers)?;
    let Importer {
        driver,
        provider,
        schema,
    } = importer(&to, &p, drivers)?;
    let opening = Opening {
        op: Operation::Import,
        from: &from,
        opts,
        view,
        early: strata_state::Early::none(),
    };
    let mut session = Session::open(p, opening, sources, drivers)?;
    let said = |step: ImportStep| Notice::Import(step);
    view.notice(said(ImportStep::Importing {
        to: to.to_string(),
        id: id.to_string(),
    }));
    let found = session.rt.block_on(driver.import(&to.id.type_name, id));
    let value = match found {
        Ok(Some(v)) => v,
        Ok(None) => return Err(refused("Cannot import non-existent remote object", format!("While attempting to import an existing object to {to:?}, the driver found no object with the id {id:?}. Only pre-existing objects can be imported; check that the id is correct and that it is associated with the provider's configured region or endpoint, or use \"strata apply\" to create a new remote object for this resource.", to = to.to_string()))),
        Err(e) => return Err(refused(&format!("Importing {to} failed"), e.to_string())),
    };
    view.notice(said(ImportStep::Prepared {
        to: to.to_string(),
        type_name: to.id.type_name.clone(),
    }));
    if managed(&session.state, &to) {
        return Err(refused("Resource already managed by strata", format!("strata is already managing a remote object for {to}. To import to this address you must first remove the existing object from the state.")));
    }
    let attributes = crate::lang::json::value_to_json(&value, &schema.object_type())
        .map_err(|e| refused(&format!("Cannot record {to}"), e))?;
    let shown_id = crate::ui::id_of(&value).unwrap_or_else(|| id.to_string());
    view.notice(said(ImportStep::Refreshing {
        to: to.to_string(),
        id: shown_id,
    }));
    let entry = super::session::adopted(&to, provider, schema.version, attributes);
    session.state.apply_entry(&entry);
    session.persist()?;
    session.close(view);
    view.notice(said(ImportStep::Done));
    Ok(())
}

/// What imports an object at `to`: the driver of its provider's
/// configuration, and the schema its state is written by.
struct Importer<'d> {
    driver: std::sync::Arc<dyn strata_provider::Driver>,
    provider: String,
    schema: &'d strata_provider::ResourceSchema,
}

/// `to`'s resource block must exist in the configuration, and its type be
/// served; its driver is the one its provider configuration resolves to.
fn importer<'d>(
    to: &Address,
    p: &super::prepare::Prepared,
    drivers: &'d Drivers,
) -> Result<Importer<'d>, Diags> {
    let module = &p.module;
    let config = to.id.config();
    let Some(r) = module.resource_at(&config) else {
        return Err(refused(
            &format!("resource address {:?} does not exist in the configuration.", to.id.to_string()),
            format!("Before importing this resource, please create its configuration in the root module. For example:\n\nresource {:?} {:?} {{\n  # (resource arguments)\n}}", to.id.type_name, to.id.name),
        ));
    };
    let Some((base, schema)) = drivers.resource(&to.id.type_name) else {
        return Err(refused(
            "Invalid resource type",
            crate::walk::unserved_detail(r, Some(module)),
        ));
    };
    let provider = crate::walk::resolve(module, &config.module, r, base.as_ref())?
        .instance_in_root(module, (&p.vars, &p.run), to, drivers)?;
    let driver = drivers
        .configured(
            &to.id.type_name,
            &provider,
            strata_state::model::Mode::Managed,
        )
        .map_or_else(|| base.clone(), |(d, _)| d);
    Ok(Importer {
        driver,
        provider,
        schema,
    })
}

/// Whether the state already holds a current object at `to`.
fn managed(state: &strata_state::State, to: &Address) -> bool {
    let instances = state.resources.iter().filter(|r| r.id == to.id);
    instances
        .flat_map(|r| &r.instances)
        .any(|i| i.index_key == to.key && i.deposed.is_none())
}
