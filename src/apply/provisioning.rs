//! A resource's provisioners in an apply: which run, and their arguments
//! evaluated with `self` the object they act on (see `provision` for
//! running them, `runner` for when).

use super::runner::Provision;
use crate::config::provisioner::connection_schema;
use crate::config::{Resource, When};
use crate::diag::{Diag, Diags};
use crate::eval::Evaluator;
use crate::lang::value::Value;

/// Whether `r` has provisioners to run after a create.
pub(super) fn on_create(r: &Resource) -> bool {
    r.provisioners.iter().any(|p| p.when == When::Create)
}

/// `r`'s provisioners that run `when`, their arguments evaluated by `ev`
/// (which gives `self`); the first problem when one cannot be.
pub(super) fn evaluated(
    r: &Resource,
    when: When,
    ev: &mut Evaluator,
) -> Result<Vec<Provision>, Diag> {
    let mut out = Vec::new();
    for p in r.provisioners.iter().filter(|p| p.when == when) {
        let mut diags = Diags::default();
        let config = crate::walk::decode(&p.body, &p.kind.schema(), ev, p.span, &mut diags);
        // Its own connection, else its resource's.
        let connection =
            p.connection.as_ref().or(r.connection.as_ref()).map(|body| {
                crate::walk::decode(body, &connection_schema(), ev, p.span, &mut diags)
            });
        if let Some(d) = diags.0.into_iter().next() {
            return Err(d);
        }
        if !config.is_wholly_known() || connection.as_ref().is_some_and(|c| !c.is_wholly_known()) {
            let summary = format!("{} provisioner error", p.kind.name());
            let detail = "Its arguments use values that are not known even now the object is made.";
            return Err(Diag::new("strata::provision::unknown", summary, detail).at(p.span));
        }
        out.push(Provision {
            kind: p.kind,
            settings: crate::provision::settings(p, &config, connection.as_ref())?
                .hiding_ephemeral(ev.derives_ephemeral(&p.body)),
            on_failure: p.on_failure,
            span: p.span,
        });
    }
    Ok(out)
}

/// What a destroy-time provisioner may see of its object: `self`, and
/// the instance's key.
pub(super) fn destroying(
    r: &Resource,
    module: &crate::config::Module,
    run: &std::rc::Rc<crate::config::Run>,
    object: &Value,
    key: Option<&strata_state::model::InstanceKey>,
) -> Result<Vec<Provision>, Diag> {
    use strata_state::model::InstanceKey;
    // Most resources have none: no scope is built for each of their
    // deletes.
    if !r.provisioners.iter().any(|p| p.when == When::Destroy) {
        return Ok(Vec::new());
    }
    let mut scope = crate::config::check::static_scope(module, run);
    scope.self_value = Some(object.clone());
    match key {
        Some(InstanceKey::Int(i)) => {
            let i = i64::try_from(*i).unwrap_or(i64::MAX);
            scope.count_index = Some(Value::Number(crate::lang::number::Number::from_i64(i)));
        }
        Some(InstanceKey::Str(k)) => {
            scope.each = Some((Value::String(k.clone()), Value::unknown()));
        }
        None => {}
    }
    let mut ev = scope.evaluator();
    evaluated(r, When::Destroy, &mut ev)
}
