//! `expect_failures`: the checkable objects (`var.NAME`, `output.NAME`,
//! `check.NAME`, a resource or data source) whose custom conditions a run
//! expects to fail. A condition's failure belongs to an object when it
//! points into the object's block (its condition, or its validation
//! rule); any other error there (a provider's) is the run's; expected
//! failures are taken out of the run's diagnostics, and an expected
//! object that reported nothing is an error, as in Terraform. A failed
//! `check` the run did not expect is an error in a test, where outside
//! one it is a warning.

use crate::config::testfile::{Command, RunBlock};
use crate::config::Module;
use crate::diag::{Diag, Diags, Sources, Span};
use crate::syntax::{Expr, ExprKind};

/// The run's diagnostics less what it expected, with what it expected
/// and did not get, and (an apply whose plan failed as expected) why the
/// run still fails.
pub(super) fn sorted(
    r: &RunBlock,
    module: &Module,
    (diags, stopped_at_plan): (Diags, bool),
    sources: &Sources,
) -> Diags {
    let expected: Vec<(String, Span, Option<Span>)> = r
        .expect_failures
        .iter()
        .map(|e| {
            let name = reference(e).unwrap_or_default();
            let block = declared(module, &name);
            (name, e.span, block)
        })
        .collect();
    let mut met = vec![false; expected.len()];
    let mut kept = Diags::default();
    let mut met_while_planning = Vec::new();
    for d in diags {
        let owner = expected.iter().position(|(_, _, block)| {
            a_condition_failed(&d) && block.is_some_and(|b| points_into(&d, b, sources))
        });
        match owner {
            Some(i) => {
                met[i] = true;
                if stopped_at_plan && r.command == Command::Apply && !d.warning {
                    met_while_planning.push(expected[i].0.clone());
                    kept.push(d);
                }
            }
            None if d.warning && d.code == "strata::check::failed" => kept.push(Diag {
                warning: false,
                ..d
            }),
            None => kept.push(d),
        }
    }
    for name in met_while_planning {
        kept.push(
            Diag::new(
                "strata::test::expected_while_planning",
                "Expected failure while planning",
                format!("A custom condition within {name} failed during the planning stage and prevented the requested apply operation. While this was an expected failure, the apply operation could not be executed and so the overall test case will be marked as a failure and the original diagnostic included in the test report."),
            )
            .warning(),
        );
    }
    for ((name, span, block), met) in expected.iter().zip(met) {
        if met {
            continue;
        }
        let detail = match block {
            Some(_) => format!("The checkable object, {name}, was expected to report an error but did not."),
            None => format!("{name} is not a checkable object of the configuration under test (a variable, output, check block, resource or data source it declares)."),
        };
        kept.push(
            Diag::new(
                "strata::test::missing_failure",
                "Missing expected failure",
                detail,
            )
            .at(*span),
        );
    }
    kept
}

/// Whether `d` is a custom condition's failure (a validation rule, a
/// precondition or postcondition, a check's assertion or its scoped data
/// source, which Terraform reports as the check failing): what
/// `expect_failures` expects. A provider's error about the same block (a
/// value out of its range) is not one, and fails the run, as in
/// Terraform.
fn a_condition_failed(d: &Diag) -> bool {
    matches!(
        d.code,
        "strata::config::condition_failed"
            | "strata::config::validation_failed"
            | "strata::check::failed"
            | "strata::check::data"
    )
}

/// Whether `d` points (its place, or a place it names) into `block`: in
/// the same file (by name: each load of a configuration reads its files
/// anew), within the block's bytes.
fn points_into(d: &Diag, block: Span, sources: &Sources) -> bool {
    let file = sources.name(block.file);
    let inside =
        |s: &Span| sources.name(s.file) == file && s.start >= block.start && s.end <= block.end;
    d.span.as_ref().is_some_and(inside)
        || d.labels
            .as_ref()
            .is_some_and(|l| l.related.iter().any(|(_, s)| inside(s)))
}

/// `var.name`, `check.health`, `aws_vpc.main`, `data.x.y` as written.
fn reference(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Variable(root) => Some(root.clone()),
        ExprKind::GetAttr(inner, attr) => Some(format!("{}.{attr}", reference(inner)?)),
        _ => None,
    }
}

/// The block that declares `name` in `module`.
fn declared(module: &Module, name: &str) -> Option<Span> {
    let parts: Vec<&str> = name.split('.').collect();
    match parts.as_slice() {
        ["var", n] => module.variable(n).map(|v| v.span),
        ["output", n] => module.outputs.iter().find(|o| o.name == *n).map(|o| o.span),
        ["check", n] => module.checks.iter().find(|c| c.name == *n).map(|c| c.span),
        ["data", t, n] => resource(module, crate::config::Mode::Data, t, n),
        [t, n] => resource(module, crate::config::Mode::Managed, t, n),
        _ => None,
    }
}

fn resource(module: &Module, mode: crate::config::Mode, t: &str, n: &str) -> Option<Span> {
    module
        .resources
        .iter()
        .find(|r| r.mode == mode && r.type_name == t && r.name == n)
        .map(|r| r.span)
}
