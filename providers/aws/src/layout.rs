//! Objects strata wrote before its native types took the AWS provider's
//! schemas, read as the provider's: blocks once kept as one object are a
//! list of one, and a launch template's volume flags are text. Only these
//! types are looked at; every other object is read as stored.

use serde_json::Value as Json;
use strata_provider::{DriverError, ResourceSchema};
use strata_value::value::Value;

/// The blocks each type kept as one object, which the provider keeps as a
/// list of one.
const LISTS_OF_ONE: &[(&str, &[&str])] = &[
    (
        "aws_eks_cluster",
        &["vpc_config", "access_config", "upgrade_policy"],
    ),
    ("aws_eks_node_group", &["scaling_config"]),
    ("aws_s3_bucket_versioning", &["versioning_configuration"]),
];

/// `attributes` (the stored JSON, written under schema `version`) in the
/// current layout, or `None` when it already is (or is not JSON, which the
/// ordinary read then reports). An object of an older version whose
/// layout did not change is read as it is, and so takes today's version:
/// the provider would otherwise run its own upgrade of that version on it.
pub fn upgrade(
    type_name: &str,
    schema: &ResourceSchema,
    version: u64,
    attributes: &str,
) -> Option<Result<Value, DriverError>> {
    let blocks = LISTS_OF_ONE
        .iter()
        .find(|(t, _)| *t == type_name)
        .map(|(_, b)| *b);
    let relayout = blocks.is_some() || type_name == "aws_launch_template";
    if !relayout && version >= schema.version {
        return None;
    }
    let mut doc: Json = serde_json::from_str(attributes).ok()?;
    let mut changed = false;
    for name in blocks.unwrap_or_default() {
        if let Some(v) = doc.get_mut(*name) {
            changed |= as_list_of_one(v);
        }
    }
    if type_name == "aws_launch_template" {
        changed |= volume_flags_as_text(&mut doc);
    }
    if !changed && version >= schema.version {
        return None;
    }
    Some(
        strata_value::json::value_from_json(&doc, &schema.object_type()).map_err(|detail| {
            DriverError::InvalidConfig {
                type_name: type_name.to_string(),
                detail: format!("a stored object of an older layout: {detail}"),
            }
        }),
    )
}

fn as_list_of_one(v: &mut Json) -> bool {
    match v {
        Json::Object(_) => {
            *v = Json::Array(vec![v.take()]);
            true
        }
        Json::Null => {
            *v = Json::Array(Vec::new());
            true
        }
        _ => false,
    }
}

/// `block_device_mappings[*].ebs[*].{delete_on_termination, encrypted}`,
/// once booleans, as the provider's "true" and "false".
fn volume_flags_as_text(doc: &mut Json) -> bool {
    let mut changed = false;
    let mappings = doc
        .get_mut("block_device_mappings")
        .and_then(Json::as_array_mut);
    for m in mappings.into_iter().flatten() {
        let volumes = m.get_mut("ebs").and_then(Json::as_array_mut);
        for e in volumes.into_iter().flatten() {
            for flag in ["delete_on_termination", "encrypted"] {
                if let Some(slot) = e.get_mut(flag) {
                    if let Json::Bool(b) = slot {
                        *slot = Json::String(b.to_string());
                        changed = true;
                    }
                }
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Aws;
    use strata_provider::Driver;

    fn schema(t: &str) -> ResourceSchema {
        Aws::new().resource_schemas()[t].clone()
    }

    #[test]
    fn an_older_node_group_reads_with_a_list_of_one() {
        let old = r#"{"scaling_config":{"desired_size":1,"min_size":0,"max_size":2}}"#;
        let v = upgrade("aws_eks_node_group", &schema("aws_eks_node_group"), 0, old)
            .expect("upgraded")
            .expect("valid");
        let sc = strata_provider::values::one_block(&v, "scaling_config").expect("one");
        assert_eq!(strata_provider::values::number(&sc, "max_size"), Some(2));
        let new = r#"{"scaling_config":[{"desired_size":1,"min_size":0,"max_size":2}]}"#;
        assert!(upgrade("aws_eks_node_group", &schema("aws_eks_node_group"), 0, new).is_none());
        assert!(upgrade("aws_vpc", &schema("aws_vpc"), 1, old).is_none());
    }

    #[test]
    fn an_older_launch_template_reads_its_volume_flags_as_text() {
        let old = r#"{"block_device_mappings":[{"device_name":"/dev/xvda","ebs":[{"encrypted":true,"delete_on_termination":false}]}]}"#;
        let v = upgrade(
            "aws_launch_template",
            &schema("aws_launch_template"),
            0,
            old,
        )
        .expect("upgraded")
        .expect("valid");
        let m = strata_provider::values::one_block(&v, "block_device_mappings").expect("mapping");
        let e = strata_provider::values::one_block(&m, "ebs").expect("ebs");
        assert_eq!(
            strata_provider::values::string(&e, "encrypted").as_deref(),
            Some("true")
        );
        assert_eq!(
            strata_provider::values::string(&e, "delete_on_termination").as_deref(),
            Some("false")
        );
    }
}
