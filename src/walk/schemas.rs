//! `validate`'s schema check: every `resource`, `data` and `provider` block
//! of every module decoded against its driver's schema, offline, as
//! `terraform validate` does, so a misspelled or missing argument is found
//! before anything is planned. Values are what `validate` knows of them
//! (variables and resources unknown); the only driver call is a provider
//! plugin's own check of the block (`Driver::validate`), which needs no
//! cloud, as `terraform validate` makes it.

use super::decode::decode;
use crate::builtin::Drivers;
use crate::config::check::static_scope;
use crate::config::provisioner::connection_schema;
use crate::config::{ConfigScope, Mode, Module, Resource, Run};
use crate::diag::{Diag, Diags, Sources, Span};
use crate::lang::types::Type;
use crate::lang::value::Value;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A resource's provisioners and connections decoded against their
/// schemas, `self` unknown (as `validate` knows it), and each held to its
/// kind's rules.
fn provisioners(r: &Resource, scope: &mut ConfigScope, diags: &mut Diags) {
    scope.self_value = Some(Value::unknown());
    let mut ev = scope.evaluator();
    for p in &r.provisioners {
        let config = decode(&p.body, &p.kind.schema(), &mut ev, p.span, diags);
        if let Err(d) = crate::provision::settings(p, &config, None) {
            diags.push(d);
        }
        if let Some(c) = &p.connection {
            decode(c, &connection_schema(), &mut ev, p.span, diags);
        }
    }
    if let Some(c) = &r.connection {
        decode(c, &connection_schema(), &mut ev, r.span, diags);
    }
    drop(ev);
    scope.self_value = None;
}

/// Why a type no driver serves is refused: which provider it belongs to
/// (as `module` declares it, else as Terraform implies it), to declare
/// and install, as Terraform says a required provider is missing.
pub fn unserved_detail(r: &Resource, module: Option<&Module>) -> String {
    let what = crate::builtin::mode_noun(r.mode);
    let prefix = r.provider_local_name();
    let declared = module.and_then(|m| m.declared_source(prefix));
    let source = declared
        .clone()
        .unwrap_or_else(|| format!("registry.terraform.io/hashicorp/{prefix}"));
    let advice = match declared {
        Some(_) => "Run strata init to install it.".to_string(),
        None => format!("Declare it in this module's required_providers ({prefix} = {{ source = \"{}\" }}) if that is not the provider meant, and run strata init to install it.", source.trim_start_matches("registry.terraform.io/")),
    };
    format!(
        "No driver of this strata build serves the {what} {:?}, and no provider plugin installed here does: it belongs to the provider {source}. {advice}",
        r.type_name
    )
}

/// Where a type no driver serves is used, and why it is refused (said
/// for its first use).
#[derive(Default)]
struct Unserved {
    places: Vec<Span>,
    detail: String,
}

/// Whether the argument at `path` (its nested blocks' names, then its
/// own) of resource `r` is write-only in its provider's schema.
pub fn write_only(drivers: &Drivers, r: &Resource, path: &[String]) -> bool {
    let found = drivers.of_mode(r.mode, &r.type_name);
    let (Some((_, mut schema)), Some((last, blocks))) = (found, path.split_last()) else {
        return false;
    };
    for b in blocks {
        match schema.blocks.get(b) {
            Some(inner) => schema = &inner.schema,
            None => return false,
        }
    }
    schema.attributes.get(last).is_some_and(|a| a.write_only)
}

/// Problems of every module's blocks against their schemas; a type no
/// driver serves is reported once, with every place it is used.
pub fn check(root: &Module, run: &Rc<Run>, drivers: &Drivers, sources: &Sources) -> Diags {
    let mut diags = Diags::default();
    let mut unserved: BTreeMap<(Mode, String), Unserved> = BTreeMap::new();
    module(root, run, drivers, &mut unserved, &mut diags);
    for ((mode, type_name), Unserved { places, detail }) in unserved {
        let what = crate::builtin::mode_noun(mode);
        let elsewhere: Vec<String> = places[1..]
            .iter()
            .map(|s| {
                let (line, _) = sources.line_col(s.file, s.start);
                format!("{}:{line}", sources.name(s.file))
            })
            .collect();
        let also = match elsewhere.len() {
            0 => String::new(),
            _ => format!(" It is also used at {}.", elsewhere.join(", ")),
        };
        let d = match drivers.unusable(&type_name, mode) {
            Some(why) => Diag::new(
                "strata::validate::unserved_type",
                format!("Unsupported {what} {type_name:?}"),
                format!("{why}{also}"),
            ),
            None => Diag::new(
                "strata::validate::unserved_type",
                format!("Invalid {what}"),
                format!("{detail}{also}"),
            ),
        };
        diags.push(d.at(sources.first_line(places[0])));
    }
    diags
}

fn module(
    m: &Module,
    run: &Rc<Run>,
    drivers: &Drivers,
    unserved: &mut BTreeMap<(Mode, String), Unserved>,
    diags: &mut Diags,
) {
    let mut scope = static_scope(m, run);
    for r in &m.resources {
        let Some((driver, schema)) = drivers.of_mode(r.mode, &r.type_name) else {
            let u = unserved.entry((r.mode, r.type_name.clone())).or_default();
            if u.places.is_empty() {
                u.detail = unserved_detail(r, Some(m));
            }
            u.places.push(r.span);
            continue;
        };
        scope.count_index = r.count.as_ref().map(|_| Value::Unknown(Type::Number));
        scope.each = r
            .for_each
            .as_ref()
            .map(|_| (Value::Unknown(Type::String), Value::unknown()));
        let mut ev = scope.evaluator();
        let mut found = Diags::default();
        let config = decode(&r.body, schema, &mut ev, r.span, &mut found);
        if found.is_empty() {
            match driver.validate(&r.type_name, crate::builtin::type_mode(r.mode), &config) {
                Ok(problems) => {
                    for d in super::provider_problems(&problems, r) {
                        diags.push(d);
                    }
                }
                Err(e) => diags.push(super::validate_failed(r, &e)),
            }
        }
        provisioners(r, &mut scope, &mut found);
        diags.0.extend(found.0);
    }
    scope.count_index = None;
    scope.each = None;
    for p in &m.providers {
        if let Some(driver) = super::block_driver(m, drivers, &p.name) {
            let schema = driver.provider_schema();
            scope.each = p
                .for_each
                .as_ref()
                .map(|_| (Value::Unknown(Type::String), Value::unknown()));
            let mut ev = scope.evaluator();
            decode(&p.body, &schema, &mut ev, p.span, diags);
        }
    }
    for c in &m.module_calls {
        module(&c.module, run, drivers, unserved, diags);
    }
}
