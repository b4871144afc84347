//! Fault injection: the AWS driver through a proxy in front of moto that
//! throttles 20 % of requests, fails 5 % with 500/503, resets 3 % of
//! connections, slows 5 % and loses 3 % of the answers after moto acted
//! (`testing/standin/src/faults.rs`). Applies,
//! plans and destroys must converge through the retries (the SDK's, and
//! strata's own for long-running operations) and leave the cloud holding
//! exactly what the state says. And answers lost after moto acted: the
//! SDK's retry makes the object again, and strata deletes the first.
//! With no fault, the proxy counts the driver's requests per object
//! (issue 46): refreshing the stack reads many objects per call, applying
//! it asks at most two requests per object, and reads its types side by
//! side; and the request budget makes requests past a bucket's burst wait
//! for its refill.

#[path = "common/aws_stack.rs"]
mod aws_stack;
mod common;

use common::moto::{self, Moto};
use std::collections::BTreeMap;
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

/// Throttling that goes on for the whole apply (seven requests in ten
/// refused): every call gets through in the end. The SDK's standard retry
/// keeps a quota per service and process (500 tokens, five spent on each
/// throttled retry and given back one per first-time success) and stops
/// retrying when it is spent, so a long throttled run failed part way
/// ("RequestLimitExceeded" after the SDK gave up: seen once in the test
/// above under its milder rates). strata spaces its requests by its own
/// budget, so it retries without that quota, as Terraform's AWS provider
/// does.
#[test]
fn a_throttled_apply_is_not_cut_short_by_a_retry_quota() {
    let m = moto::moto();
    let d = common::scratch("faults", "quota");
    std::fs::write(d.join("main.tf"), aws_stack::STACK).expect("config");
    let seed = common::faults().seed;
    m.proxy.faults(Some(strata_standin::faults::Faults {
        throttle: 0.7,
        seed,
        ..Default::default()
    }));
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    let throttled = m
        .proxy
        .counts
        .throttled
        .load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("faults: {}", m.proxy.counts.summary());
    m.proxy.faults(None);
    assert_eq!(code, 0, "{out}");
    // More throttled retries than a quota of 500 tokens pays for.
    assert!(throttled > 100, "only {throttled} requests throttled");
    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "the plan after apply has nothing to do:\n{out}");
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

fn total(calls: &BTreeMap<String, u64>) -> u64 {
    calls.values().sum()
}

#[test]
fn refresh_and_apply_ask_little_per_object() {
    let m = moto::moto();
    let d = common::scratch("call-counts", "stack");
    std::fs::write(d.join("main.tf"), aws_stack::STACK).expect("config");
    // No fault at any rate: the proxy only counts.
    m.proxy
        .faults(Some(strata_standin::faults::Faults::default()));
    let objects = aws_stack::OBJECTS as u64;

    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    let applied = m.proxy.counts.take_calls();
    eprintln!(
        "apply: {} requests for {objects} objects: {applied:#?}",
        total(&applied)
    );
    assert!(
        total(&applied) <= 2 * objects,
        "at most two requests per object: {applied:#?}"
    );

    let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "nothing to do after the apply:\n{out}");
    let refreshed = m.proxy.counts.take_calls();
    eprintln!(
        "refresh: {} requests for {objects} objects: {refreshed:#?}",
        total(&refreshed)
    );
    // Each type is read in one call for all its objects; what is read per
    // object is what AWS has no list for (a VPC's DNS attributes).
    assert!(
        total(&refreshed) * 3 <= objects,
        "at most one request per three objects: {refreshed:#?}"
    );
    assert_eq!(refreshed.get("DescribeSubnets"), Some(&1), "{refreshed:#?}");
    // The four inline policies and the four roles come from the account's
    // listings; the two launch templates' latest versions from one.
    for one_each in ["GetRolePolicy", "GetRole"] {
        assert_eq!(refreshed.get(one_each), None, "{refreshed:#?}");
    }
    let versions = refreshed.get("DescribeLaunchTemplateVersions");
    assert_eq!(versions, Some(&1), "{refreshed:#?}");
    m.proxy.faults(None);
}

/// A refresh reads its types side by side, as many at once as the
/// parallelism: with every answer slowed (up to 300 ms, as a far region),
/// the plan of the 60-object stack has many different calls in flight at
/// once, where one type at a time would have its own few (a VPC's read
/// asks for its main route table, default group and DNS settings
/// together: three kinds); with `-parallelism=1` it has no more than that.
#[test]
fn a_refresh_reads_its_types_side_by_side() {
    let m = moto::moto();
    let d = common::scratch("call-counts", "side-by-side");
    std::fs::write(d.join("main.tf"), aws_stack::STACK).expect("config");
    let (code, out) = strata(&d, &m, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    m.proxy.faults(Some(strata_standin::faults::Faults {
        slow: 1.0,
        slow_by: std::time::Duration::from_millis(300),
        seed: 46,
        ..Default::default()
    }));
    let mut peaks = Vec::new();
    for parallelism in ["-parallelism=10", "-parallelism=1"] {
        m.proxy.counts.take_peak_kinds();
        let (code, out) = strata(&d, &m, &["plan", "--detailed-exitcode", parallelism]);
        assert_eq!(code, 0, "nothing to do after the apply:\n{out}");
        peaks.push(m.proxy.counts.take_peak_kinds());
    }
    m.proxy.faults(None);
    eprintln!("most different calls at once, parallelism 10 and 1: {peaks:?}");
    let [side_by_side, one_at_a_time] = peaks[..] else {
        unreachable!("two plans")
    };
    assert!(side_by_side >= 6, "different calls at once: {peaks:?}");
    assert!(one_at_a_time <= 3, "different calls at once: {peaks:?}");
}

/// With EC2's mutating calls held to one at once and five a second, ten
/// subnets' creates are spread over at least 1.8 s, as the budget says.
#[test]
fn requests_past_the_burst_wait_for_the_refill() {
    let m = moto::moto();
    let d = common::scratch("call-counts", "budget");
    std::fs::write(
        d.join("main.tf"),
        r#"
resource "aws_vpc" "v" {
  cidr_block = "10.40.0.0/16"
}

resource "aws_subnet" "s" {
  count      = 10
  vpc_id     = aws_vpc.v.id
  cidr_block = "10.40.${count.index}.0/24"
}
"#,
    )
    .expect("config");
    m.proxy
        .faults(Some(strata_standin::faults::Faults::default()));
    let mut c = common::run::strata(&d);
    c.args(["apply", "--auto-approve"]);
    c.env("STRATA_BUDGET_AWS_EC2", "1/5");
    moto::env_for(&mut c, &m);
    let (code, out) = common::output(c);
    assert_eq!(code, 0, "{out}");
    let at = m.proxy.counts.arrivals_of("CreateSubnet");
    assert_eq!(at.len(), 10, "{at:?}");
    let spread = at[9].duration_since(at[0]).as_secs_f64();
    assert!(spread >= 1.75, "ten creates in {spread} s");
    // A budget that does not read would quietly keep the default: it is
    // refused by name before anything is asked.
    for (name, value) in [
        ("STRATA_BUDGET_AWS_EC2", "5 per s"),
        ("STRATA_BUDGET_AWS_EC", "1/5"),
    ] {
        let mut c = common::run::strata(&d);
        c.args(["destroy", "--auto-approve"]);
        c.env(name, value);
        moto::env_for(&mut c, &m);
        m.proxy.counts.take_calls();
        let (code, out) = common::output(c);
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("Invalid request budget") && out.contains(name),
            "{out}"
        );
        assert_eq!(total(&m.proxy.counts.take_calls()), 0, "nothing asked");
    }
    m.proxy.faults(None);
}
