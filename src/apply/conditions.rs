//! A resource's conditions judged again during the apply, where the
//! values they read are known at last.

use crate::config::condition::{judge_all, Kind};
use crate::config::Resource;
use crate::graph::Node;
use crate::lang::value::Value;
use crate::walk::{InstanceCtx, Walk};
use strata_state::model::ModulePath;

/// Why an instance may not go on: the first of its preconditions (or,
/// given the object made, postconditions) that fails, as "summary: message".
pub(super) fn unmet(
    w: &Walk,
    (node, module, ctx): (&Node, &ModulePath, &InstanceCtx),
    made: Option<&Value>,
    r: &Resource,
) -> Option<String> {
    let (conds, kind) = match made {
        Some(_) => (&r.lifecycle.postconditions, Kind::Postcondition),
        None => (&r.lifecycle.preconditions, Kind::Precondition),
    };
    if conds.is_empty() {
        return None;
    }
    let judge = |ev: &mut crate::eval::Evaluator| judge_all(ev, conds, kind);
    let judged = match made {
        Some(v) => w.eval_self(node, module, Some(ctx), v.clone(), judge),
        None => w.eval_with(node, module, Some(ctx), judge),
    };
    let (errors, _) = judged?;
    errors
        .first()
        .map(|e| format!("{}: {}", e.summary, e.detail))
}
