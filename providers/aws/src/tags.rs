//! Ownership tags: everything the driver creates carries `strata:address`
//! and `strata:lineage`, so a run that died between "AWS made it" and "the
//! state has it" can be found again. They are added on create and kept out
//! of `tags` / `tags_all` when reading, so they never show in a diff.

use crate::values::map_value;
use std::collections::BTreeMap;
use strata_provider::{AttributeSchema as A, PlanRequest, Planned, ResourceSchema, Tags};
use strata_value::types::Type;
use strata_value::value::{Attrs, Value};

pub const ADDRESS: &str = "strata:address";
pub const LINEAGE: &str = "strata:lineage";

/// Whether an object's tags (as each API spells its pairs) carry `t`'s
/// ownership tags: the one test crash recovery adopts by.
pub fn owned_by<'a>(aws: impl IntoIterator<Item = (&'a str, &'a str)>, t: &Tags) -> bool {
    let (mut address, mut lineage) = (false, false);
    for (k, v) in aws {
        address |= k == ADDRESS && v == t.address;
        lineage |= k == LINEAGE && v == t.lineage;
    }
    address && lineage
}

/// The user's tags plus the ownership tags.
pub fn with_ownership(user: &BTreeMap<String, String>, t: &Tags) -> BTreeMap<String, String> {
    let mut all = user.clone();
    all.insert(ADDRESS.into(), t.address.clone());
    all.insert(LINEAGE.into(), t.lineage.clone());
    all
}

/// What the user sees: everything but the ownership tags.
pub fn visible(all: impl IntoIterator<Item = (String, String)>) -> BTreeMap<String, String> {
    all.into_iter()
        .filter(|(k, _)| k != ADDRESS && k != LINEAGE)
        .collect()
}

/// The keys to remove and the pairs to set to go from `had` to `want`
/// (ownership tags are never touched).
pub fn changes(
    had: &BTreeMap<String, String>,
    want: &BTreeMap<String, String>,
) -> (Vec<String>, BTreeMap<String, String>) {
    let remove = had
        .keys()
        .filter(|k| !want.contains_key(*k))
        .cloned()
        .collect();
    let set = want
        .iter()
        .filter(|(k, v)| had.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (remove, set)
}

/// `tags` (null when there are none, as an unset argument is) and
/// `tags_all` from the tags AWS holds.
pub fn values(all: impl IntoIterator<Item = (String, String)>) -> (Value, Value) {
    let shown = visible(all);
    let all = map_value(&shown);
    let tags = if shown.is_empty() {
        Value::Null(Type::map(Type::String))
    } else {
        all.clone()
    };
    (tags, all)
}

/// The schema of a taggable resource: its own attributes plus `id`, `arn`,
/// `tags` and `tags_all`.
pub fn taggable_schema(attributes: Vec<(&str, A)>) -> ResourceSchema {
    let mut s = ResourceSchema::of_attributes(attributes);
    for (k, a) in [
        ("id", A::computed(Type::String, "The object's id.")),
        ("arn", A::computed(Type::String, "The object's ARN.")),
        ("tags", A::optional(Type::map(Type::String), "Tags to set.")),
        (
            "tags_all",
            A::computed(Type::map(Type::String), "All tags, as AWS holds them."),
        ),
    ] {
        s.attributes.insert(k.to_string(), a);
    }
    s
}

/// The schema's plan with Terraform's defaults for unset optional values,
/// and `tags_all` following `tags`.
pub fn plan_taggable(
    schema: &ResourceSchema,
    req: &PlanRequest<'_>,
    defaults: &[(&str, Value)],
) -> Planned {
    let mut p = strata_provider::plan_by_schema(schema, req.prior, req.config);
    if let Value::Object(m) = &mut p.planned {
        for (k, d) in defaults {
            if m.get(*k).is_none_or(Value::is_null) {
                m.insert(k.to_string(), d.clone());
            }
        }
        let tags_all = match m.get("tags") {
            Some(t) if !t.is_known() => Value::Unknown(Type::map(Type::String)),
            Some(t) if !t.is_null() => t.clone(),
            _ => Value::Map(Type::String, Attrs::new()),
        };
        m.insert("tags_all".into(), tags_all);
    }
    p
}
