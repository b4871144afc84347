//! Objects the cloud cannot delete (a purchase that is final, such as an
//! AWS Capacity Block): a destroy forgets them, and the plan says so
//! instead of counting them as destroyed.
//!
//! Terraform's AWS provider deletes such a block by doing nothing, so its
//! plan says "will be destroyed" and its apply "Destruction complete" for
//! capacity that stays reserved and billed. strata's plan shows a forget,
//! and a warning names each object with its driver's reason; a
//! replacement (a new purchase) warns that the old one stays, and a
//! tainted one is kept rather than bought again.

use super::{Action, ResourceChange};
use crate::builtin::Drivers;
use crate::diag::Diag;
use crate::lang::value::Value;

/// Why `type_name`'s driver cannot delete `prior`, when it cannot.
pub(super) fn lasting(drivers: &Drivers, type_name: &str, prior: &Value) -> Option<String> {
    let (driver, _) = drivers.resource(type_name)?;
    driver.lasting(type_name, prior)
}

/// One warning for the objects the plan forgets or replaces although the
/// cloud keeps them.
pub(super) fn warning(changes: &[ResourceChange], drivers: &Drivers) -> Option<Diag> {
    let lines: Vec<String> = changes
        .iter()
        .filter_map(|c| {
            let what = match c.action {
                Action::Forget => "forgotten, not destroyed",
                a if a.is_replace() => "replaced by a new one; the old one stays",
                _ if c.tainted => "tainted, and kept rather than replaced by another (`strata untaint` clears the mark; `-replace` replaces it all the same)",
                _ => return None,
            };
            let before = c.before.as_ref()?;
            let why = lasting(drivers, &c.addr.id.type_name, before)?;
            Some(format!("  - {} is {what}: {why}", c.addr))
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(
        Diag::new(
            "strata::plan::lasting",
            "Objects the cloud cannot delete",
            format!(
                "Their cloud cannot delete these objects, so strata neither destroys nor replaces them unasked:\n{}\nWhat strata stops managing stays in the cloud; `strata import` takes it back.",
                lines.join("\n")
            ),
        )
        .warning(),
    )
}
