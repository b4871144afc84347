//! The proxy's reservations held to EC2's rules.

use super::*;

fn ask(r: &Reservations, form: &str) -> String {
    let req = Req {
        method: hyper::Method::POST,
        path: "/".into(),
        query: String::new(),
        headers: hyper::HeaderMap::new(),
        body: bytes::Bytes::from(format!("{form}&Version=2016-11-15")),
    };
    let resp = r.answer(&req, "us-east-1").expect("an answer");
    let body = resp.into_body();
    let bytes = collected(body);
    String::from_utf8_lossy(&bytes).into_owned()
}

fn collected(body: Body) -> bytes::Bytes {
    use http_body_util::BodyExt;
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(body.collect())
        .map(|c| c.to_bytes())
        .unwrap_or_default()
}

fn field(xml: &str, tag: &str) -> String {
    let open = format!("<{tag}>");
    xml.split(&open)
        .nth(1)
        .and_then(|r| r.split('<').next())
        .unwrap_or_default()
        .to_string()
}

fn launch<'a>(group: &str, ty: &'a str, zones: &'a [String], nodes: u64) -> Launch<'a> {
    Launch {
        group: group.into(),
        region: "us-east-1",
        instance_type: ty,
        zones,
        nodes,
    }
}

const ON_DEMAND: Market<'static> = Market {
    template: None,
    capacity_type: Some("ON_DEMAND"),
};

/// EC2's rules for launching into a reservation: the active state,
/// matching type and zone, the market a block needs, and no more
/// instances than it holds across every node group using it (which
/// its available count shows).
#[test]
fn launches_into_a_reservation_keep_ec2s_rules() {
    let clock = Clock::default();
    let r = Reservations::new(clock.clone());
    let created = ask(&r, "Action=CreateCapacityReservation&InstanceType=p5.48xlarge&InstancePlatform=Linux%2FUNIX&AvailabilityZone=us-east-1b&InstanceCount=3");
    let id = field(&created, "capacityReservationId");
    let b = ["us-east-1b".to_string()];
    let a = ["us-east-1a".to_string()];
    assert!(r
        .launch(&id, &ON_DEMAND, &launch("c/one", "p5.48xlarge", &b, 2))
        .is_ok());
    let over = r.launch(&id, &ON_DEMAND, &launch("c/two", "p5.48xlarge", &b, 2));
    assert!(
        over.as_ref()
            .is_err_and(|e| e.starts_with("ReservationCapacityExceeded")),
        "{over:?}"
    );
    let described = ask(
        &r,
        &format!("Action=DescribeCapacityReservations&CapacityReservationId.1={id}"),
    );
    assert_eq!(field(&described, "availableInstanceCount"), "1");
    assert!(
        r.launch(&id, &ON_DEMAND, &launch("c/one", "p5.48xlarge", &b, 3))
            .is_ok(),
        "a group resizes within what it holds"
    );
    r.release("c/one");
    assert!(r
        .launch(&id, &ON_DEMAND, &launch("c/two", "p5.48xlarge", &b, 3))
        .is_ok());
    let zone = r.launch(&id, &ON_DEMAND, &launch("c/three", "p5.48xlarge", &a, 0));
    assert!(zone.is_err_and(|e| e.starts_with("InvalidParameterValue")));
    let block_market = Market {
        template: Some("capacity-block"),
        capacity_type: Some("CAPACITY_BLOCK"),
    };
    let market = r.launch(&id, &block_market, &launch("c/two", "p5.48xlarge", &b, 3));
    assert!(market.is_err_and(|e| e.contains("is not a Capacity Block")));
    let missing = r.launch(
        "cr-0000",
        &ON_DEMAND,
        &launch("c/four", "p5.48xlarge", &b, 1),
    );
    assert!(missing.is_err_and(|e| e.starts_with("InvalidCapacityReservationId.NotFound")));

    let offers = ask(&r, "Action=DescribeCapacityBlockOfferings&InstanceType=p5.48xlarge&InstanceCount=1&CapacityDurationHours=24");
    let bought = ask(
        &r,
        &format!(
            "Action=PurchaseCapacityBlock&CapacityBlockOfferingId={}&InstancePlatform=Linux%2FUNIX",
            field(&offers, "capacityBlockOfferingId")
        ),
    );
    let block = field(&bought, "capacityReservationId");
    assert_eq!(field(&bought, "state"), "scheduled");
    let zone = [field(&bought, "availabilityZone")];
    let early = r.launch(
        &block,
        &block_market,
        &launch("c/five", "p5.48xlarge", &zone, 1),
    );
    assert!(early.is_err_and(|e| e.contains("is scheduled")));
    let start = OffsetDateTime::parse(&field(&bought, "startDate"), &Rfc3339).expect("a start");
    clock.set(Some(start + Duration::hours(1)));
    assert!(r
        .launch(
            &block,
            &ON_DEMAND,
            &launch("c/five", "p5.48xlarge", &zone, 1)
        )
        .is_err_and(|e| e.contains("is a Capacity Block")));
    assert!(r
        .launch(
            &block,
            &block_market,
            &launch("c/five", "p5.48xlarge", &zone, 1)
        )
        .is_ok());
    let cancel = ask(
        &r,
        &format!("Action=CancelCapacityReservation&CapacityReservationId={block}"),
    );
    assert!(cancel.contains("cannot be cancelled"), "{cancel}");
    clock.set(Some(start + Duration::hours(25)));
    let ended = ask(
        &r,
        &format!("Action=DescribeCapacityReservations&CapacityReservationId.1={block}"),
    );
    assert_eq!(field(&ended, "state"), "expired");
}

/// Tags as EC2 keeps them on reservations: set at purchase from the
/// capacity-reservation tag specification, matched by `tag:` and
/// `tag-key` filters (how strata finds what a killed run bought),
/// changed by CreateTags and DeleteTags; other resources' tags are
/// left to moto.
#[test]
fn reservations_keep_and_filter_their_tags() {
    let r = Reservations::new(Clock::default());
    let offers = ask(&r, "Action=DescribeCapacityBlockOfferings&InstanceType=p5.48xlarge&InstanceCount=1&CapacityDurationHours=24");
    let bought = ask(&r, &format!("Action=PurchaseCapacityBlock&CapacityBlockOfferingId={}&InstancePlatform=Linux%2FUNIX&TagSpecification.1.ResourceType=capacity-reservation&TagSpecification.1.Tag.1.Key=strata%3Alineage&TagSpecification.1.Tag.1.Value=L1&TagSpecification.1.Tag.2.Key=team&TagSpecification.1.Tag.2.Value=ml", field(&offers, "capacityBlockOfferingId")));
    let id = field(&bought, "capacityReservationId");
    let other = ask(&r, "Action=CreateCapacityReservation&InstanceType=p5.48xlarge&InstancePlatform=Linux%2FUNIX&AvailabilityZone=us-east-1b&InstanceCount=1");
    let other = field(&other, "capacityReservationId");
    let found = |filters: &str| {
        ask(
            &r,
            &format!("Action=DescribeCapacityReservations&{filters}"),
        )
        .matches("<capacityReservationId>")
        .count()
    };
    assert_eq!(
        found("Filter.1.Name=tag%3Astrata%3Alineage&Filter.1.Value.1=L1"),
        1
    );
    assert_eq!(
        found("Filter.1.Name=tag%3Astrata%3Alineage&Filter.1.Value.1=L2"),
        0
    );
    assert_eq!(found("Filter.1.Name=tag-key&Filter.1.Value.1=team"), 1);
    assert_eq!(found("Filter.1.Name=state&Filter.1.Value.1=active"), 2);
    ask(
        &r,
        &format!("Action=CreateTags&ResourceId.1={id}&Tag.1.Key=team&Tag.1.Value=research"),
    );
    ask(
        &r,
        &format!("Action=DeleteTags&ResourceId.1={id}&Tag.1.Key=strata%3Alineage"),
    );
    let tags = ask(
        &r,
        &format!("Action=DescribeCapacityReservations&CapacityReservationId.1={id}"),
    );
    assert!(
        tags.contains("<key>team</key><value>research</value>"),
        "{tags}"
    );
    assert!(!tags.contains("strata:lineage"), "{tags}");
    assert!(!other.is_empty());
    let req = Req {
        method: hyper::Method::POST,
        path: "/".into(),
        query: String::new(),
        headers: hyper::HeaderMap::new(),
        body: bytes::Bytes::from("Action=CreateTags&ResourceId.1=vpc-1&Tag.1.Key=a&Tag.1.Value=b"),
    };
    assert!(
        r.answer(&req, "us-east-1").is_none(),
        "a VPC's tags are moto's"
    );
}
