//! The plan most resources need, from their schema alone: the configured
//! values, with each computed attribute the configuration leaves null kept
//! from the prior object (or unknown for a new one), nested blocks alike.
//! Drivers start from it and adjust what their API decides.

use crate::{BlockNesting, Kept, Planned, ResourceSchema};
use strata_value::value::{Attrs, Value};

/// Plans `config` against `prior` by `schema`. `requires_replace` is left
/// empty: the engine compares forces-replacement attributes itself.
pub fn plan_by_schema(schema: &ResourceSchema, prior: Option<&Value>, config: &Value) -> Planned {
    Planned {
        planned: object(schema, prior, config),
        requires_replace: Vec::new(),
        kept: Kept::default(),
    }
}

fn field<'v>(v: Option<&'v Value>, name: &str) -> Option<&'v Value> {
    v?.unmarked().entries()?.get(name)
}

fn object(schema: &ResourceSchema, prior: Option<&Value>, config: &Value) -> Value {
    if !config.is_known() {
        return Value::Unknown(schema.object_type());
    }
    let mut out = Attrs::new();
    for (name, a) in &schema.attributes {
        let want = field(Some(config), name).cloned();
        let had = field(prior, name);
        // As the SDKv2 providers Terraform runs these types with read it,
        // an empty collection is the same as none: `{}` written where the
        // API keeps nothing (or the other way round) is no change.
        let empty_vs_none = |x: &Value, y: &Value| x.unmarked().is_empty() && y.is_null();
        let same = |w: &Value| had.is_some_and(|h| empty_vs_none(w, h) || empty_vs_none(h, w));
        let v = match (want, had) {
            (Some(w), Some(h)) if same(&w) => h.clone(),
            (Some(w), _) if !w.is_null() => w,
            (_, Some(h)) if a.computed => h.clone(),
            (_, None) if a.computed => Value::Unknown(a.ty.clone()),
            (Some(w), _) => w,
            (None, _) => Value::Null(a.ty.clone()),
        };
        out.insert(name.clone(), v);
    }
    for (name, b) in &schema.blocks {
        let want = field(Some(config), name);
        let had = field(prior, name);
        let left_out = want.is_none_or(|w| w.is_null() || w.unmarked().len() == Some(0));
        let kept = had.filter(|h| !h.is_null() && h.unmarked().len() != Some(0));
        let v = match (b.nesting, want.map(Value::unmarked)) {
            (_, _) if b.computed && left_out && kept.is_some() => {
                kept.cloned().unwrap_or_else(Value::null)
            }
            (BlockNesting::Single, Some(w)) if !w.is_null() => {
                object(&b.schema, had.filter(|h| !h.is_null()), w)
            }
            (BlockNesting::List, Some(Value::List(t, items))) => {
                let prior_items = had.and_then(|h| h.unmarked().elements());
                Value::List(
                    t.clone(),
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, w)| object(&b.schema, prior_items.and_then(|p| p.get(i)), w))
                        .collect(),
                )
            }
            (BlockNesting::Map, Some(Value::Map(t, items))) => {
                let prior_items = had.and_then(|h| h.unmarked().entries());
                let paired = items.iter().map(|(k, w)| {
                    let p = prior_items.and_then(|p| p.get(k));
                    (k.clone(), object(&b.schema, p, w))
                });
                Value::Map(t.clone(), paired.collect())
            }
            // Set elements have no position to pair them with a prior one.
            (BlockNesting::Set, Some(Value::Set(t, items))) => Value::new_set(
                t.clone(),
                items.iter().map(|w| object(&b.schema, None, w)).collect(),
            ),
            (_, Some(w)) => w.clone(),
            (_, None) => Value::Null(b.schema.object_type()),
        };
        out.insert(name.clone(), v);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AttributeSchema;
    use strata_value::types::Type;

    fn schema() -> ResourceSchema {
        ResourceSchema {
            version: 0,
            attributes: std::collections::BTreeMap::from([
                (
                    "id".to_string(),
                    AttributeSchema::computed(Type::String, ""),
                ),
                (
                    "cidr_block".to_string(),
                    AttributeSchema::required(Type::String, ""),
                ),
                (
                    "name".to_string(),
                    AttributeSchema {
                        computed: true,
                        ..AttributeSchema::optional(Type::String, "")
                    },
                ),
                (
                    "note".to_string(),
                    AttributeSchema::optional(Type::String, ""),
                ),
            ]),
            blocks: std::collections::BTreeMap::new(),
        }
    }

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn new_objects_get_unknown_computed_values() {
        let config = obj(&[
            ("id", Value::Null(Type::String)),
            ("cidr_block", Value::string("10.0.0.0/16")),
            ("name", Value::Null(Type::String)),
            ("note", Value::Null(Type::String)),
        ]);
        let p = plan_by_schema(&schema(), None, &config).planned;
        let e = p.entries().expect("object");
        assert!(!e["id"].is_known());
        assert!(!e["name"].is_known(), "optional+computed left unset");
        assert!(e["note"].is_null());
        assert_eq!(e["cidr_block"].as_str(), Some("10.0.0.0/16"));
    }

    #[test]
    fn existing_objects_keep_what_the_cloud_chose() {
        let prior = obj(&[
            ("id", Value::string("vpc-1")),
            ("cidr_block", Value::string("10.0.0.0/16")),
            ("name", Value::string("chosen")),
            ("note", Value::Null(Type::String)),
        ]);
        let config = obj(&[
            ("id", Value::Null(Type::String)),
            ("cidr_block", Value::string("10.0.0.0/16")),
            ("name", Value::Null(Type::String)),
            ("note", Value::string("set")),
        ]);
        let p = plan_by_schema(&schema(), Some(&prior), &config).planned;
        let e = p.entries().expect("object");
        assert_eq!(e["id"].as_str(), Some("vpc-1"));
        assert_eq!(e["name"].as_str(), Some("chosen"));
        assert_eq!(e["note"].as_str(), Some("set"));
    }

    #[test]
    fn a_computed_block_left_out_is_kept_and_an_optional_one_goes() {
        let block = crate::values::list_block_max1(vec![(
            "channel",
            AttributeSchema::required(Type::String, ""),
        )]);
        let ty = block.schema.object_type();
        let mut s = schema();
        s.blocks
            .insert("release_channel".into(), block.clone().and_computed());
        s.blocks.insert("logging".into(), block);
        let chosen = Value::List(
            ty.clone(),
            vec![obj(&[("channel", Value::string("REGULAR"))])],
        );
        let prior = obj(&[
            ("id", Value::string("c-1")),
            ("cidr_block", Value::string("10.0.0.0/16")),
            ("release_channel", chosen.clone()),
            ("logging", chosen.clone()),
        ]);
        let config = obj(&[
            ("cidr_block", Value::string("10.0.0.0/16")),
            ("release_channel", Value::List(ty.clone(), vec![])),
            ("logging", Value::List(ty.clone(), vec![])),
        ]);
        let p = plan_by_schema(&s, Some(&prior), &config).planned;
        let e = p.entries().expect("object");
        assert!(e["release_channel"].raw_equal(&chosen), "the API's, kept");
        assert_eq!(
            e["logging"].len(),
            Some(0),
            "an optional block left out goes"
        );
        let stable = Value::List(
            ty.clone(),
            vec![obj(&[("channel", Value::string("STABLE"))])],
        );
        let config = obj(&[
            ("cidr_block", Value::string("10.0.0.0/16")),
            ("release_channel", stable),
        ]);
        let p = plan_by_schema(&s, Some(&prior), &config).planned;
        let channel = &p.entries().expect("object")["release_channel"];
        let first = channel
            .elements()
            .and_then(|l| l.first())
            .and_then(Value::entries);
        assert_eq!(
            first.and_then(|b| b["channel"].as_str()),
            Some("STABLE"),
            "a given block wins"
        );
    }
}
