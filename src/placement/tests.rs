use super::*;
use time::Duration as Span;

fn at(cloud: &str, capacity: &str) -> Location {
    Location {
        cloud: cloud.into(),
        region: format!("{cloud}-r1"),
        capacity: capacity.into(),
        reservation: None,
    }
}

fn candidate(cloud: &str, capacity: &str) -> Candidate {
    Candidate {
        at: at(cloud, capacity),
        call: format!("train_{cloud}"),
        instance_type: "gpu8".into(),
        gpu_hour: Usd::parse("2.5"),
        zones: vec!["z1".into(), "z2".into()],
        node_label: "pool".into(),
        score: None,
        held: None,
    }
}

fn spec() -> Spec {
    Spec {
        pool: "train.h100".into(),
        nodes: 2,
        gpu: "H100".into(),
        gpus_per_node: 8,
        cool_down: COOL_DOWN,
        wait_for_gpus: None,
        min_score: None,
        unscored: Vec::new(),
    }
}

fn order() -> Vec<Candidate> {
    vec![
        candidate("aws", "spot"),
        candidate("aws", "on_demand"),
        candidate("gcp", "spot"),
    ]
}

fn now() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000).expect("a time")
}

fn failure(c: &Candidate, zone: Option<&str>, ago: Span) -> PlacementFailure {
    PlacementFailure {
        at: c.at.clone(),
        zone: zone.map(str::to_string),
        cloud_wide: false,
        instance_type: c.instance_type.clone(),
        reason: "no capacity".into(),
        at_time: timestamp(now() - ago),
    }
}

fn placed_at(c: &Candidate) -> Placed {
    Placed {
        at: c.at.clone(),
        instance_type: c.instance_type.clone(),
        without_zones: Vec::new(),
        since: timestamp(now()),
        first_gpu_after: None,
        pool_created_after: None,
        node_joined_after: None,
        ready_gpus: None,
    }
}

fn decide(record: Option<&PoolPlacement>, replace: bool) -> Decision {
    choose(spec(), order(), Vec::new(), record, now(), replace)
}

#[test]
fn the_first_candidate_gets_the_nodes_and_then_they_stay() {
    let d = decide(None, false);
    assert_eq!((d.chosen, d.why), (Some(0), Why::First));
    assert!(d.moves());
    // Recorded on the third (an order edited since): sticky, no move.
    let record = PoolPlacement {
        chosen: Some(placed_at(&order()[2])),
        failed: Vec::new(),
    };
    let d = decide(Some(&record), false);
    assert_eq!((d.chosen, d.why), (Some(2), Why::Recorded));
    assert!(!d.moves());
    // Unless asked to place it again.
    let d = decide(Some(&record), true);
    assert_eq!((d.chosen, d.why), (Some(0), Why::Replaced));
    assert!(d.moves());
}

#[test]
fn a_failed_place_is_skipped_until_its_cool_down_ends() {
    let first = &order()[0];
    let record = PoolPlacement {
        chosen: Some(placed_at(&order()[1])),
        failed: vec![failure(first, None, Span::minutes(10))],
    };
    let d = decide(Some(&record), false);
    assert_eq!(d.chosen().map(|c| &c.at), Some(&order()[1].at));
    assert_eq!(d.why, Why::Recorded);
    assert!(d.skipped.iter().any(|s| s.candidate.at == first.at
        && s.why.contains("no capacity")
        && s.why.contains("skipped until")));
    // An hour and more later the first is back, and the nodes move there.
    let record = PoolPlacement {
        failed: vec![failure(first, None, Span::minutes(61))],
        ..record
    };
    let d = decide(Some(&record), false);
    assert_eq!((d.chosen, d.why), (Some(0), Why::CoolDownEnded));
    assert!(d.moves());
}

#[test]
fn a_zone_short_is_left_out_and_all_zones_short_rule_the_place_out() {
    let first = &order()[0];
    let one = PoolPlacement {
        chosen: None,
        failed: vec![failure(first, Some("z1"), Span::minutes(1))],
    };
    let d = decide(Some(&one), false);
    assert_eq!(d.chosen, Some(0));
    assert_eq!(d.without_zones, vec!["z1".to_string()]);
    let both = PoolPlacement {
        chosen: None,
        failed: vec![
            failure(first, Some("z1"), Span::minutes(2)),
            failure(first, Some("z2"), Span::minutes(1)),
        ],
    };
    let d = decide(Some(&both), false);
    assert_eq!(d.chosen().map(|c| &c.at), Some(&order()[1].at));
    assert!(d.skipped[0].why.contains("any of its zones"));
    // Where the nodes already are, a zone that fails since is left out
    // too: the recorded place stays, without it (it was tried again every
    // round, meeting the same shortage).
    let placed_then_short = PoolPlacement {
        chosen: Some(placed_at(first)),
        failed: vec![failure(first, Some("z2"), Span::minutes(1))],
    };
    let d = decide(Some(&placed_then_short), false);
    assert_eq!((d.chosen, d.why), (Some(0), Why::Recorded));
    assert_eq!(d.without_zones, vec!["z2".to_string()]);
}

#[test]
fn a_shortage_is_recorded_by_its_reach() {
    let d = decide(None, false);
    let zone = failed_at(&d, &Shortage::Zone(Some("z2".into())), "short", now()).expect("failed");
    assert_eq!((zone.zone.as_deref(), zone.cloud_wide), (Some("z2"), false));
    // A zone the pool does not use, or a region: the whole place.
    let other = failed_at(&d, &Shortage::Zone(Some("z9".into())), "short", now()).expect("failed");
    assert_eq!(other.zone, None);
    let region = failed_at(&d, &Shortage::Region(None), "short", now()).expect("failed");
    assert_eq!((region.zone, region.cloud_wide), (None, false));
    let cloud = failed_at(&d, &Shortage::Cloud, "quota", now()).expect("failed");
    assert!(cloud.cloud_wide);
    // A cloud-wide failure rules out every place on that cloud.
    let record = with_failure(&d, cloud, now());
    let d = decide(Some(&record), false);
    assert_eq!(d.chosen().map(|c| c.at.cloud.as_str()), Some("gcp"));
    // A zone already left out failing again fails the place.
    let record = PoolPlacement {
        chosen: None,
        failed: vec![failure(&order()[2], Some("z1"), Span::minutes(1))],
    };
    let d = choose(
        spec(),
        vec![candidate("gcp", "spot")],
        Vec::new(),
        Some(&record),
        now(),
        false,
    );
    let again = failed_at(&d, &Shortage::Zone(Some("z1".into())), "short", now()).expect("failed");
    assert_eq!(again.zone, None);
}

#[test]
fn an_apply_round_records_failures_and_placements() {
    let d = decide(None, false);
    let shortage = Shortage::Zone(Some("z1".into()));
    let failed = [Failed {
        addr: "module.train_aws.aws_eks_node_group.pool[\"h100\"]".into(),
        shortage: Some(&shortage),
        why: "InsufficientInstanceCapacity in z1",
    }];
    let out = outcome(std::slice::from_ref(&d), &failed, now(), now());
    assert_eq!(out.attempts.len(), 1, "{:?}", out.attempts);
    assert_eq!(out.explained, vec![failed[0].addr.clone()]);
    let Some(Entry::Placement {
        placement: Some(p), ..
    }) = out.entries.first()
    else {
        panic!("{:?}", out.entries)
    };
    assert_eq!(p.failed[0].zone.as_deref(), Some("z1"));
    // Another pool's address is not this pool's failure.
    let elsewhere = [Failed {
        addr: "module.train_aws.aws_eks_node_group.pool[\"a100\"]".into(),
        ..failed[0]
    }];
    let out = outcome(std::slice::from_ref(&d), &elsewhere, now(), now());
    assert!(out.attempts.is_empty());
    // Nothing of the pool failed: placed, once.
    let out = outcome(std::slice::from_ref(&d), &[], now(), now());
    let Some(Entry::Placement {
        placement: Some(p), ..
    }) = out.entries.first()
    else {
        panic!("{:?}", out.entries)
    };
    assert_eq!(p.chosen.as_ref().map(|c| &c.at), Some(&order()[0].at));
    let settled = decide(Some(p), false);
    assert!(outcome(&[settled], &[], now(), now()).entries.is_empty());
}

/// Scores order equal prices (within a cloud when the spec orders the
/// clouds) and send a place scored under `min_score` after every other;
/// none is dropped.
#[test]
fn scores_order_ties_and_send_low_scores_last() {
    let scored = |cloud: &str, region: &str, price: &str, score: Option<u8>| Candidate {
        at: Location {
            region: region.into(),
            ..at(cloud, "spot")
        },
        gpu_hour: Usd::parse(price),
        score,
        ..candidate(cloud, "spot")
    };
    let places = |v: &[Candidate]| -> Vec<String> {
        v.iter()
            .map(|c| format!("{} {}", c.at.cloud, c.at.region))
            .collect()
    };
    let ordered = vec![
        scored("aws", "east", "2.0", Some(4)),
        scored("aws", "west", "2.0", Some(9)),
        scored("gcp", "central", "2.0", None),
        scored("aws", "south", "3.0", Some(2)),
        scored("azure", "eastus", "4.0", Some(6)),
    ];
    // Cheapest first: the three at $2.00 are one tie, best score first,
    // unscored last; aws east (4) and south (2) are under 5, so they go
    // after every other, in that order.
    assert_eq!(
        places(&rank(ordered.clone(), 5, false)),
        [
            "aws west",
            "gcp central",
            "azure eastus",
            "aws east",
            "aws south"
        ]
    );
    // The spec's order of clouds stands: gcp is not a tie of aws's.
    assert_eq!(
        places(&rank(ordered.clone(), 0, true)),
        [
            "aws west",
            "aws east",
            "gcp central",
            "aws south",
            "azure eastus"
        ]
    );
    assert_eq!(rank(ordered.clone(), 10, false).len(), ordered.len());
}
