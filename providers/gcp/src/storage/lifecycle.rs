//! A bucket's `lifecycle_rule` blocks and the JSON API's `lifecycle.rule`
//! array: what deletes old checkpoints, old versions and abandoned
//! uploads. strata holds the conditions a retention policy needs (age,
//! the object's state, days since it stopped being current, newer
//! versions, a prefix); a bucket carrying other conditions reads back
//! without them.

use serde_json::{json, Map, Value as Json};
use strata_provider::values::block;
use strata_provider::{AttributeSchema as A, BlockNesting, BlockSchema};
use strata_value::types::Type;

/// `lifecycle_rule { action { … } condition { … } }`, as the Terraform
/// provider nests it (a list of rules; one action and one condition each,
/// as sets).
pub fn rule_block() -> BlockSchema {
    let s = Type::String;
    let mut rule = block(BlockNesting::List, 0, vec![]);
    let mut action = block(
        BlockNesting::Set,
        1,
        vec![
            (
                "type",
                A::required(
                    s.clone(),
                    "Delete, SetStorageClass or AbortIncompleteMultipartUpload.",
                ),
            ),
            (
                "storage_class",
                A::optional(s.clone(), "The class SetStorageClass moves objects to."),
            ),
        ],
    );
    action.max_items = Some(1);
    let mut condition = block(
        BlockNesting::Set,
        1,
        vec![
            (
                "age",
                A::optional(Type::Number, "Days since the object was written."),
            ),
            (
                "with_state",
                A::optional(s.clone(), "LIVE, ARCHIVED (noncurrent) or ANY.").and_computed(),
            ),
            (
                "days_since_noncurrent_time",
                A::optional(Type::Number, "Days since the object stopped being current."),
            ),
            (
                "num_newer_versions",
                A::optional(Type::Number, "Versions newer than this one."),
            ),
            (
                "matches_prefix",
                A::optional(Type::list(s), "Name prefixes the rule applies to."),
            ),
        ],
    );
    condition.max_items = Some(1);
    rule.schema.blocks.insert("action".into(), action);
    rule.schema.blocks.insert("condition".into(), condition);
    rule
}

/// The JSON API's `lifecycle` for the configuration's rules (none clears
/// them).
pub fn to_api(rules: &Json) -> Json {
    let rules: Vec<Json> = rules
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let action = &r["action"][0];
            let when = &r["condition"][0];
            let mut a = Map::new();
            a.insert("type".into(), action["type"].clone());
            if action["storage_class"].is_string() {
                a.insert("storageClass".into(), action["storage_class"].clone());
            }
            let mut c = Map::new();
            for (tf, api) in [
                ("age", "age"),
                ("days_since_noncurrent_time", "daysSinceNoncurrentTime"),
                ("num_newer_versions", "numNewerVersions"),
                ("matches_prefix", "matchesPrefix"),
            ] {
                if !when[tf].is_null() {
                    c.insert(api.into(), when[tf].clone());
                }
            }
            match when["with_state"].as_str() {
                Some("LIVE") => {
                    c.insert("isLive".into(), json!(true));
                }
                Some("ARCHIVED") => {
                    c.insert("isLive".into(), json!(false));
                }
                _ => {}
            }
            json!({ "action": a, "condition": c })
        })
        .collect();
    json!({ "rule": rules })
}

/// The configuration's rules for the JSON API's `lifecycle`.
pub fn from_api(lifecycle: &Json) -> Json {
    let rules: Vec<Json> = lifecycle["rule"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let (a, c) = (&r["action"], &r["condition"]);
            let state = match c["isLive"].as_bool() {
                Some(true) => "LIVE",
                Some(false) => "ARCHIVED",
                None => "ANY",
            };
            json!({
                "action": [{ "type": a["type"], "storage_class": a["storageClass"] }],
                "condition": [{
                    "age": c["age"],
                    "with_state": state,
                    "days_since_noncurrent_time": c["daysSinceNoncurrentTime"],
                    "num_newer_versions": c["numNewerVersions"],
                    "matches_prefix": c["matchesPrefix"],
                }],
            })
        })
        .collect();
    json!(rules)
}
