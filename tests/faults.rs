//! Fault injection: the AWS driver through a proxy in front of moto that
//! throttles 20 % of requests, fails 5 % with 500/503, resets 3 % of
//! connections, slows 5 % and loses 3 % of the answers after moto acted
//! (`testing/standin/src/faults.rs`). Applies,
//! plans and destroys must converge through the retries (the SDK's, and
//! strata's own for long-running operations) and leave the cloud holding
//! exactly what the state says. And answers lost after moto acted: the
//! SDK's retry makes the object again, and strata deletes the first.

#[path = "common/aws_stack.rs"]
mod aws_stack;
mod common;

use common::moto::{self, Moto};
use std::path::Path;

fn strata(dir: &Path, m: &Moto, args: &[&str]) -> (i32, String) {
    let mut c = common::run::strata(dir);
    c.args(args);
    moto::env_for(&mut c, m);
    common::output(c)
}

#[test]
fn aws_apply_plan_and_destroy_converge_through_faults() {
    let m = moto::moto();
    let d = common::scratch("faults", "aws");
    std::fs::write(d.join("main.tf"), aws_stack::STACK).expect("config");
    m.proxy.faults(Some(common::faults()));

    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("Resources: {} added", aws_stack::OBJECTS)),
        "{out}"
    );
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "the plan after apply has nothing to do:\n{out}");
    let state = aws_stack::pulled(&d);
    let cloud = aws_stack::inventory(&m);
    assert_eq!(
        cloud,
        aws_stack::in_state(&state),
        "the cloud holds exactly what the state says"
    );
    assert_eq!(aws_stack::count(&cloud), aws_stack::OBJECTS);

    let (code, out) = strata(&d, &m, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let left = aws_stack::inventory(&m);
    assert_eq!(aws_stack::count(&left), 0, "left behind: {left:?}");
    common::assert_faults_struck(&m.proxy.counts);
}

/// A fifth of moto's answers are lost after it acted (CreateVpc and
/// CreateInternetGateway take no idempotency token, so the SDK's retry
/// makes a second object): the apply still succeeds, and the objects the
/// lost answers made are found by their ownership tags and deleted, so the
/// cloud holds exactly what the state says.
#[test]
fn a_create_whose_answer_was_lost_leaves_no_duplicate() {
    let m = moto::moto();
    let d = common::scratch("faults", "lost");
    std::fs::write(
        d.join("main.tf"),
        r#"
resource "aws_vpc" "v" {
  count      = 6
  cidr_block = "10.${count.index}.0.0/16"
}

resource "aws_internet_gateway" "g" {
  count  = 6
  vpc_id = aws_vpc.v[count.index].id
}
"#,
    )
    .expect("config");
    let seed = common::faults().seed;
    m.proxy.faults(Some(strata_standin::faults::Faults {
        lost: 0.2,
        seed,
        ..Default::default()
    }));
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    m.proxy.faults(None);
    assert_eq!(code, 0, "{out}");
    let cloud = aws_stack::inventory(&m);
    assert_eq!(cloud, aws_stack::in_state(&aws_stack::pulled(&d)));
    assert_eq!(aws_stack::count(&cloud), 12, "{cloud:?}");
    let lost = m
        .proxy
        .counts
        .lost
        .load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("faults: {}", m.proxy.counts.summary());
    assert!(lost > 0);
}

/// Without a resend, a create is not followed by a listing by ownership
/// tags: the 60-object stack applied with nothing going wrong makes no
/// ListRoles, ListInstanceProfiles or EC2 Describe by tags (before, every
/// create was followed by one, and IAM's read every role's tags). The
/// calls it makes are printed, for the record.
#[test]
fn an_apply_without_resends_lists_nothing_by_tags() {
    let m = moto::moto();
    let d = common::scratch("faults", "quiet");
    std::fs::write(d.join("main.tf"), aws_stack::STACK).expect("config");
    // No fault at any rate: the proxy only counts.
    m.proxy
        .faults(Some(strata_standin::faults::Faults::default()));
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    m.proxy.faults(None);
    assert_eq!(code, 0, "{out}");
    let calls = m.proxy.counts.calls();
    let total: u64 = calls.values().sum();
    eprintln!(
        "{total} requests for {} objects: {calls:#?}",
        aws_stack::OBJECTS
    );
    let listings: Vec<_> = calls
        .iter()
        .filter(|(call, _)| {
            call.ends_with(" by tags")
                || call.as_str() == "ListRoles"
                || call.as_str() == "ListInstanceProfiles"
        })
        .collect();
    assert!(listings.is_empty(), "listings by tags: {listings:?}");
    assert!(
        total >= aws_stack::OBJECTS as u64,
        "every object costs a call at least: {calls:?}"
    );
    let cloud = aws_stack::inventory(&m);
    assert_eq!(aws_stack::count(&cloud), aws_stack::OBJECTS);
}
