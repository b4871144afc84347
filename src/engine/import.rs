//! `strata import ADDR ID`: one existing object read through its driver
//! and recorded at ADDR, as Terraform's `import` command does. Nothing is
//! planned or changed in the cloud; the next plan shows what the
//! configuration would change on the object.

use super::{open_state, placements, prepare, require_configuration, Options, Wants};
use crate::builtin::Drivers;
use crate::diag::{Diag, Diags, Sources};
use crate::statecmd::state_err;
use std::path::Path;
use strata_state::model::{Address, Mode};
use time::OffsetDateTime;

fn refused(summary: &str, detail: String) -> Diags {
    Diags::from(Diag::new("strata::import", summary, detail))
}

pub fn import(
    path: &Path,
    opts: &Options,
    (addr, id): (&str, &str),
    sources: &mut Sources,
    drivers: &Drivers,
) -> Result<(), Diags> {
    let to = match Address::parse(addr) {
        Some(a) if a.id.mode == Mode::Managed => a,
        _ => return Err(refused("Invalid address", format!("{addr:?} is not a managed resource instance address; expected e.g. aws_vpc.main or module.net.aws_subnet.a[0]."))),
    };
    require_configuration(path, Wants::Apply, crate::plan::Mode::Normal)?;
    let none = placements(None, &opts.replace_placement, OffsetDateTime::now_utc());
    let p = prepare(path, None, opts, &none, sources, drivers)?;
    let config = to.id.config();
    let Some(r) = p.module.resource_at(&config) else {
        return Err(refused(
            &format!("resource address {:?} does not exist in the configuration.", to.id.to_string()),
            format!("Before importing this resource, please create its configuration in the root module. For example:\n\nresource {:?} {:?} {{\n  # (resource arguments)\n}}", to.id.type_name, to.id.name),
        ));
    };
    let Some((base, schema)) = drivers.resource(&to.id.type_name) else {
        return Err(refused(
            "Invalid resource type",
            crate::walk::unserved_detail(r, false, Some(&p.module)),
        ));
    };
    let provider = crate::walk::resolve(&p.module, &config.module, r, base.as_ref())?;
    let driver = drivers
        .configured(&to.id.type_name, &provider, false)
        .map_or_else(|| base.clone(), |(d, _)| d);
    let rt = crate::runtime::start(opts.parallelism)?;
    let store = crate::backends::open(opts.state.as_deref(), &p.module, &opts.workspace)?;
    // From the lock on, Ctrl-C stops the run gracefully (interrupt.rs).
    let _graceful = crate::interrupt::Graceful::new();
    let (lock, mut state, _) = open_state(&store, "import", opts, drivers, &rt, true)?;
    println!("{to}: Importing from ID {id:?}...");
    let found = rt.block_on(driver.import(&to.id.type_name, id));
    let value = match found {
        Ok(Some(v)) => v,
        Ok(None) => return Err(refused("Cannot import non-existent remote object", format!("While attempting to import an existing object to {to:?}, the driver found no object with the id {id:?}. Only pre-existing objects can be imported; check that the id is correct and that it is associated with the provider's configured region or endpoint, or use \"strata apply\" to create a new remote object for this resource.", to = to.to_string()))),
        Err(e) => return Err(refused(&format!("Importing {to} failed"), e.to_string())),
    };
    println!(
        "{to}: Import prepared!\n  Prepared {} for import",
        to.id.type_name
    );
    let managed = state.resources.iter().filter(|r| r.id == to.id).any(|r| {
        r.instances
            .iter()
            .any(|i| i.index_key == to.key && i.deposed.is_none())
    });
    if managed {
        return Err(refused("Resource already managed by strata", format!("strata is already managing a remote object for {to}. To import to this address you must first remove the existing object from the state.")));
    }
    let attributes = crate::lang::json::value_to_json(&value, &schema.object_type())
        .map_err(|e| refused(&format!("Cannot record {to}"), e))?;
    let shown_id = crate::ui::id_of(&value).unwrap_or_else(|| id.to_string());
    println!("{to}: Refreshing state... [id={shown_id}]");
    state.apply_entry(&super::adopted(&to, provider, schema.version, attributes));
    store.persist(&lock, &mut state).map_err(state_err)?;
    println!("\nImport successful!\n\nThe resources that were imported are shown above. These resources are now in\nyour strata state and will henceforth be managed by strata.\n");
    Ok(())
}
