//! What EKS objects are billed for: a node group's EC2 instances (priced
//! by the engine from the catalog) and a cluster's control-plane fee.

use strata_provider::billing::{
    count, fact, Billed, Capacity, Count, Fee, Known, Lookup, NodePool, Nodes,
};
use strata_value::value::Value;

/// The EKS control-plane fee per cluster-hour, by support period.
/// Source: AWS's announcement of extended-support pricing (aws.amazon.com/
/// blogs/containers, "Amazon EKS extended support for Kubernetes versions
/// pricing": $0.10 in standard support, $0.60 in total in extended
/// support, from April 2024), read 2026-12-02.
const STANDARD_FEE_CENTS: i64 = 10;
const EXTENDED_FEE_CENTS: i64 = 60;
const FEE_SOURCE: &str = "AWS EKS pricing, read 2026-12-02";

/// When each Kubernetes minor version of 1.x leaves standard support on
/// EKS (its release calendar: docs.aws.amazon.com/eks, "Understand the
/// Kubernetes version lifecycle on EKS", and endoflife.date/amazon-eks,
/// read 2026-12-02): 14 months after EKS releases it, then 12 months of
/// extended support. Older minors left earlier; newer ones are in
/// standard support.
const STANDARD_SUPPORT_ENDS: &[(u32, &str)] = &[
    (28, "2024-11-26"),
    (29, "2025-03-23"),
    (30, "2025-07-23"),
    (31, "2025-11-26"),
    (32, "2026-03-23"),
    (33, "2026-07-29"),
    (34, "2026-12-02"),
    (35, "2027-03-27"),
];

/// Whether Kubernetes `version` (`1.31`, `1.31.2`) has left standard
/// support on `today`, and when.
fn left_standard_support(version: &str, today: &str) -> Option<String> {
    let minor: u32 = version
        .strip_prefix("1.")?
        .split('.')
        .next()?
        .parse()
        .ok()?;
    let (first, _) = STANDARD_SUPPORT_ENDS.first()?;
    if minor < *first {
        return Some(format!("1.{minor} left standard support before 2024-11-26"));
    }
    let (_, ends) = STANDARD_SUPPORT_ENDS.iter().find(|(m, _)| *m == minor)?;
    (*ends <= today).then(|| format!("1.{minor} left standard support {ends}"))
}

/// What `object` of `type_name` bills; `region` is the provider
/// configuration's, for objects whose ARN is not known yet.
pub(crate) fn billing(
    type_name: &str,
    object: &Value,
    today: &str,
    region: Option<String>,
) -> Vec<Billed> {
    let region = match fact(object, &["arn"]) {
        Some(Known::Is(arn)) => Known::Is(arn.split(':').nth(3).unwrap_or_default().to_string()),
        _ => match region {
            Some(r) => Known::Is(r),
            None => Known::Unknown(
                "the aws provider's configuration names no region (and AWS_REGION is not set)"
                    .into(),
            ),
        },
    };
    match type_name {
        "aws_eks_node_group" => vec![Billed::Nodes(node_group(object, region))],
        "aws_eks_cluster" => vec![Billed::Fee(cluster_fee(object, today, region))],
        _ => Vec::new(),
    }
}

fn node_group(object: &Value, region: Known<String>) -> NodePool {
    NodePool {
        cloud: "aws",
        part: None,
        region,
        instance_type: instance_type(object),
        capacity: match fact(object, &["capacity_type"]) {
            Some(Known::Is(c)) if c == "SPOT" => Capacity::Spot,
            _ => Capacity::OnDemand,
        },
        max_price: None,
        nodes: scaling(object),
        zones: None,
    }
}

/// The first of `instance_types` (the one EKS prefers); without them the
/// launch template's; without either, EKS's default.
fn instance_type(object: &Value) -> Known<String> {
    let listed = match strata_provider::billing::at(object, &["instance_types"]) {
        Some(Ok(v)) => v
            .elements()
            .and_then(|l| l.first())
            .and_then(|t| t.as_str())
            .map(|t| Known::Is(t.to_string())),
        Some(Err(why)) => Some(Known::Unknown(why)),
        None => None,
    };
    if let Some(Known::Is(t)) = listed {
        return Known::Is(t);
    }
    let by = |key: &'static str| match fact(object, &["launch_template", key]) {
        Some(Known::Is(k)) => Some((key, Some(k))),
        Some(_) => Some((key, None)),
        None => None,
    };
    match (by("id").or_else(|| by("name")), listed) {
        (Some((key, value)), _) => Known::Elsewhere(Lookup {
            type_name: "aws_launch_template",
            key,
            value,
            attribute: "instance_type",
        }),
        (None, Some(unknown)) => unknown,
        (None, None) => Known::Is("t3.medium".into()),
    }
}

fn scaling(object: &Value) -> Nodes {
    let size = |k: &str| {
        count(object, &["scaling_config", k])
            .unwrap_or_else(|| Count::Unknown(format!("scaling_config.{k} is not set")))
    };
    Nodes {
        min: size("min_size"),
        desired: size("desired_size"),
        max: size("max_size"),
    }
}

/// Standard support's fee, or extended support's once the cluster's
/// version has left standard support on `today` and its upgrade policy
/// keeps it there (`EXTENDED`, the API's default) rather than upgrading it.
fn cluster_fee(object: &Value, today: &str, region: Known<String>) -> Fee {
    let version = match fact(object, &["version"]) {
        Some(Known::Is(v)) => Some(v),
        _ => None,
    };
    let support = match fact(object, &["upgrade_policy", "support_type"]) {
        Some(Known::Is(s)) => s,
        _ => "EXTENDED".to_string(),
    };
    let left_standard = version
        .as_deref()
        .and_then(|v| left_standard_support(v, today));
    let (cents, what) = match (left_standard, support.as_str()) {
        (Some(why), "EXTENDED") => (
            EXTENDED_FEE_CENTS,
            format!("EKS control plane, extended support ({why})"),
        ),
        _ => (
            STANDARD_FEE_CENTS,
            "EKS control plane, standard support".into(),
        ),
    };
    Fee {
        cloud: "aws",
        what,
        region,
        hourly: strata_provider::money::Usd::cents(cents),
        source: FEE_SOURCE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_value::types::Type;

    fn obj(pairs: &[(&str, Value)]) -> Value {
        strata_provider::values::object(pairs.iter().map(|(k, v)| (*k, v.clone())).collect())
    }

    #[test]
    fn a_node_group_is_its_first_instance_type_and_scaling_counts() {
        let scaling = obj(&[
            ("min_size", Value::int(1)),
            ("desired_size", Value::Unknown(Type::Number)),
            ("max_size", Value::int(16)),
        ]);
        let ng = obj(&[
            (
                "instance_types",
                Value::List(Type::String, vec![Value::string("p5.48xlarge")]),
            ),
            ("capacity_type", Value::string("SPOT")),
            ("scaling_config", Value::List(scaling.ty(), vec![scaling])),
            ("arn", Value::Unknown(Type::String)),
        ]);
        let [Billed::Nodes(p)] = &billing(
            "aws_eks_node_group",
            &ng,
            "2026-12-02",
            Some("us-east-1".into()),
        )[..] else {
            panic!("one pool");
        };
        assert_eq!(p.instance_type, Known::Is("p5.48xlarge".into()));
        assert_eq!(p.region, Known::Is("us-east-1".into()));
        assert_eq!(p.capacity, Capacity::Spot);
        assert_eq!(
            (p.nodes.min.known(), p.nodes.max.known()),
            (Some(1), Some(16))
        );
        assert_eq!(
            p.nodes.desired,
            Count::Unknown("scaling_config.desired_size is known only after apply".into())
        );
    }

    #[test]
    fn without_instance_types_the_launch_template_says() {
        let lt = obj(&[
            ("id", Value::string("lt-0abc")),
            ("version", Value::string("1")),
        ]);
        let ng = obj(&[
            ("instance_types", Value::Null(Type::list(Type::String))),
            ("launch_template", Value::List(lt.ty(), vec![lt])),
            (
                "arn",
                Value::string("arn:aws:eks:eu-west-1:123456789012:nodegroup/c/n/x"),
            ),
        ]);
        let [Billed::Nodes(p)] = &billing("aws_eks_node_group", &ng, "2026-12-02", None)[..] else {
            panic!("one pool");
        };
        assert_eq!(p.region, Known::Is("eu-west-1".into()), "the ARN's region");
        assert_eq!(
            p.instance_type,
            Known::Elsewhere(Lookup {
                type_name: "aws_launch_template",
                key: "id",
                value: Some("lt-0abc".into()),
                attribute: "instance_type"
            })
        );
    }

    #[test]
    fn the_fee_follows_the_support_period() {
        let fee = |version: &str, support: Option<&str>, today: &str| {
            let mut pairs = vec![("version", Value::string(version))];
            if let Some(s) = support {
                let p = obj(&[("support_type", Value::string(s))]);
                pairs.push(("upgrade_policy", Value::List(p.ty(), vec![p])));
            }
            match &billing(
                "aws_eks_cluster",
                &obj(&pairs),
                today,
                Some("us-east-1".into()),
            )[..]
            {
                [Billed::Fee(f)] => (f.hourly.decimal(), f.what.clone()),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(fee("1.35", None, "2026-12-02").0, "0.10");
        assert_eq!(fee("1.31", None, "2025-11-25").0, "0.10");
        let (price, what) = fee("1.31", None, "2025-11-26");
        assert_eq!(price, "0.60");
        assert!(
            what.contains("1.31 left standard support 2025-11-26"),
            "{what}"
        );
        assert_eq!(fee("1.31", Some("STANDARD"), "2026-01-01").0, "0.10");
        assert_eq!(
            fee("1.99", None, "2030-01-01").0,
            "0.10",
            "newer than the table"
        );
        assert_eq!(
            fee("1.27", None, "2024-01-01").0,
            "0.60",
            "older than the table"
        );
    }
}
