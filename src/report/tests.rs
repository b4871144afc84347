use super::*;
use strata_state::history::{FirstGpu, Recorded};
use strata_state::Location;

fn at(day: u32, hour: u32) -> String {
    format!("2026-11-{:02}T{hour:02}:00:00Z", day)
}

fn t(s: &str) -> OffsetDateTime {
    OffsetDateTime::parse(s, &Rfc3339).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

fn seen(cloud: &str, capacity: &str, gpus: Option<u64>, price: &str, since: &str) -> PoolSeen {
    PoolSeen {
        pool: "train.h100".into(),
        at: Location {
            cloud: cloud.into(),
            region: "r1".into(),
            capacity: capacity.into(),
            reservation: None,
        },
        instance_type: "x".into(),
        gpus,
        gpus_why: gpus.is_none().then(|| "cluster unreachable".into()),
        gpu_hour: (!price.is_empty()).then(|| price.into()),
        since: since.into(),
        first_gpu: Some(FirstGpu {
            after: 300.0,
            pool_created: Some(120.0),
            node_joined: Some(200.0),
        }),
        records: None,
        records_why: Some("strata does not yet read its record".into()),
    }
}

fn run(when: String, pools: Vec<PoolSeen>) -> Observation {
    Observation { at: when, pools }
}

fn november() -> Period {
    Period {
        from: t("2026-11-01T00:00:00Z"),
        to: t("2026-12-01T00:00:00Z"),
    }
}

/// Spot on one cloud for a day, a failover, on-demand on the other for
/// half a day, then a run that could not count the GPUs.
fn script() -> Vec<Observation> {
    let aws = |g| seen("aws", "spot", g, "4.00", &at(1, 0));
    let gcp = |g| seen("gcp", "on_demand", g, "10.50", &at(2, 0));
    vec![
        run(at(1, 0), vec![aws(Some(16))]),
        run(at(2, 0), vec![gcp(Some(8))]),
        run(at(2, 12), vec![gcp(None)]),
        run(at(3, 0), vec![gcp(Some(8))]),
    ]
}

fn row<'a>(r: &'a Report, cloud: &str) -> &'a Row {
    r.rows
        .iter()
        .find(|row| row.key.cloud == cloud)
        .unwrap_or_else(|| panic!("no {cloud} row in {:?}", r.rows))
}

#[test]
fn gpu_hours_and_cost_are_the_steps_between_runs() {
    let r = report(&script(), 0, november());
    let aws = row(&r, "aws");
    assert_eq!(aws.gpu_hours, Figure::known(16.0 * 24.0));
    assert_eq!(aws.cost.value, Usd::parse("1536.00"));
    let gcp = row(&r, "gcp");
    assert_eq!(gcp.gpu_hours.value, Some(8.0 * 12.0));
    assert!(
        gcp.gpu_hours
            .why
            .as_deref()
            .is_some_and(|w| w.contains("12.0 h") && w.contains("cluster unreachable")),
        "{:?}",
        gcp.gpu_hours
    );
    assert_eq!(gcp.cost.value, Usd::parse("1008.00"));
    assert_eq!((r.observations, r.longest_gap_hours), (4, Some(24.0)));
}

#[test]
fn the_period_cuts_the_steps_at_its_edges() {
    let half = Period {
        from: t(&at(1, 12)),
        to: t(&at(2, 6)),
    };
    let r = report(&script(), 0, half);
    assert_eq!(row(&r, "aws").gpu_hours.value, Some(16.0 * 12.0));
    assert_eq!(row(&r, "gcp").gpu_hours.value, Some(8.0 * 6.0));
    assert!(
        row(&r, "aws").first_gpu.value.is_none(),
        "made before the period"
    );
}

#[test]
fn time_to_first_gpu_is_split_in_three() {
    let r = report(&script(), 0, november());
    let first = row(&r, "gcp").first_gpu.value.clone();
    let want = FirstGpuFigures {
        placements: 1,
        seconds: 300.0,
        pool_creation: Some(120.0),
        node_join: Some(80.0),
        gpu_ready: Some(100.0),
    };
    assert_eq!(first, Some(want));
}

#[test]
fn what_cannot_be_had_says_why_and_is_never_zero() {
    let mut runs = script();
    runs[0].pools[0].gpu_hour = None;
    let r = report(&runs, 0, november());
    let aws = row(&r, "aws");
    assert_eq!(aws.cost.value, None);
    assert!(aws
        .cost
        .why
        .as_deref()
        .is_some_and(|w| w.contains("no price")));
    for figure in [&aws.preemption_rate, &aws.preemptions_per_1000_gpu_hours] {
        assert!(figure.value.is_none() && figure.why.is_some(), "{figure:?}");
    }
    assert!(aws.egress_bytes.value.is_none() && aws.egress_bytes.why.is_some());
    let gcp = row(&r, "gcp");
    assert!(gcp
        .preemption_rate
        .why
        .as_deref()
        .is_some_and(|w| w.contains("no spot")));
}

#[test]
fn preemptions_are_the_clouds_record_summed_over_the_runs_in_the_period() {
    let spot = |preempted, stopped| {
        let mut s = seen("gcp", "spot", Some(8), "3.00", &at(1, 0));
        s.records = Some(Recorded {
            since: at(1, 0),
            preempted,
            stopped,
            short: None,
            egress_bytes: Some(1_000),
            egress_why: None,
        });
        s.records_why = None;
        s
    };
    let runs = vec![
        run(at(1, 0), vec![spot(0, 0)]),
        run(at(2, 0), vec![spot(1, 1)]),
        run(at(3, 0), vec![spot(2, 3)]),
        run(
            at(4, 0),
            vec![seen("gcp", "spot", Some(8), "3.00", &at(1, 0))],
        ),
    ];
    let r = report(&runs, 0, november());
    let gcp = row(&r, "gcp");
    assert_eq!(gcp.preemption_rate.value, Some(3.0 / 4.0));
    // 3 preemptions over 8 GPUs × 72 h.
    assert_eq!(
        gcp.preemptions_per_1000_gpu_hours.value,
        Some(3000.0 / 576.0)
    );
    assert!(
        gcp.preemption_rate
            .why
            .as_deref()
            .is_some_and(|w| w.contains("leaves out")),
        "the run that could not read it is said: {:?}",
        gcp.preemption_rate
    );
    // Egress as the records metered it, the run without them said.
    assert_eq!(gcp.egress_bytes.value, Some(3_000));
    assert!(gcp
        .egress_bytes
        .why
        .as_deref()
        .is_some_and(|w| w.contains("leaves out 1")));
    let quiet = report(&runs[..1], 0, november());
    assert!(row(&quiet, "gcp").preemption_rate.value.is_none());
}
