//! The proposed new object a client hands a provider's plan: the
//! configuration, with what the provider decides (computed attributes the
//! configuration leaves null) taken from the prior object, element by
//! element through nested blocks and nested attributes. Terraform's rules
//! (its `objchange.ProposedNew`), so a provider sees from strata exactly
//! what it sees from Terraform.

use crate::proto::tfplugin6::schema::{
    nested_block, object, Attribute, Block, NestedBlock, Object,
};
use strata_value::value::{Attrs, Value};

/// The proposal for one object of `block` (a resource's whole object).
pub fn proposed_new(block: &Block, prior: &Value, config: &Value) -> Value {
    if config.is_null() || !config.is_known() {
        return config.clone();
    }
    let prior_attrs = entries(prior);
    let config_attrs = entries(config);
    let mut out = attributes(&block.attributes, &prior_attrs, &config_attrs);
    for nested in &block.block_types {
        let name = &nested.type_name;
        let p = prior_attrs.get(name).cloned().unwrap_or(Value::null());
        let c = config_attrs.get(name).cloned().unwrap_or(Value::null());
        out.insert(name.clone(), nested_block(nested, &p, &c));
    }
    Value::Object(out)
}

fn entries(v: &Value) -> Attrs {
    v.unmarked().entries().cloned().unwrap_or_default()
}

fn attributes(attrs: &[Attribute], prior: &Attrs, config: &Attrs) -> Attrs {
    let mut out = Attrs::with_capacity(attrs.len());
    for a in attrs {
        let p = prior.get(&a.name).cloned().unwrap_or(Value::null());
        let c = config.get(&a.name).cloned().unwrap_or(Value::null());
        let v = if a.computed && (!a.optional || c.is_null()) {
            // The provider's to decide: what it decided before stands
            // until it says otherwise.
            p
        } else {
            match &a.nested_type {
                Some(nested) => nested_attribute(nested, &p, &c),
                None => c,
            }
        };
        out.insert(a.name.clone(), v);
    }
    out
}

/// One proposed element: its attributes (and blocks) merged with the
/// matching prior element, or with nothing.
type Merge<'s> = &'s dyn Fn(&Value, &Value) -> Value;

fn nested_block(nested: &NestedBlock, prior: &Value, config: &Value) -> Value {
    let empty = Block::default();
    let block = nested.block.as_ref().unwrap_or(&empty);
    let merge = |p: &Value, c: &Value| proposed_new(block, p, c);
    match nested_block::NestingMode::try_from(nested.nesting) {
        Ok(nested_block::NestingMode::List) => by_index(prior, config, &merge),
        Ok(nested_block::NestingMode::Map) => by_key(prior, config, &merge),
        Ok(nested_block::NestingMode::Set) => {
            let computed = |a: &Attribute| a.computed && !a.optional;
            by_match(prior, config, &merge, &|v| {
                compare_value(v, &block.attributes, &computed)
            })
        }
        _ => merge(prior, config),
    }
}

fn nested_attribute(nested: &Object, prior: &Value, config: &Value) -> Value {
    let merge = |p: &Value, c: &Value| {
        if c.is_null() || !c.is_known() {
            return c.clone();
        }
        Value::Object(attributes(&nested.attributes, &entries(p), &entries(c)))
    };
    match object::NestingMode::try_from(nested.nesting) {
        Ok(object::NestingMode::List) => by_index(prior, config, &merge),
        Ok(object::NestingMode::Map) => by_key(prior, config, &merge),
        Ok(object::NestingMode::Set) => {
            let computed = |a: &Attribute| a.computed;
            by_match(prior, config, &merge, &|v| {
                compare_value(v, &nested.attributes, &computed)
            })
        }
        _ => merge(prior, config),
    }
}

/// List elements paired by position (blocks whose attributes may be of
/// any type are a tuple, and stay one).
fn by_index(prior: &Value, config: &Value, merge: Merge<'_>) -> Value {
    let (Value::List(_, items) | Value::Tuple(items)) = config.unmarked() else {
        return config.clone();
    };
    let priors = prior.unmarked().elements().unwrap_or_default();
    let merged = items
        .iter()
        .enumerate()
        .map(|(i, c)| merge(priors.get(i).unwrap_or(&Value::null()), c))
        .collect();
    match config.unmarked() {
        Value::List(ty, _) => Value::List(ty.clone(), merged),
        _ => Value::Tuple(merged),
    }
}

/// Map elements paired by key (blocks whose attributes may be of any type
/// are an object keyed by label, and stay one).
fn by_key(prior: &Value, config: &Value, merge: Merge<'_>) -> Value {
    let (Value::Map(_, items) | Value::Object(items)) = config.unmarked() else {
        return config.clone();
    };
    let priors = entries(prior);
    let merged = items
        .iter()
        .map(|(k, c)| (k.clone(), merge(priors.get(k).unwrap_or(&Value::null()), c)))
        .collect();
    match config.unmarked() {
        Value::Map(ty, _) => Value::Map(ty.clone(), merged),
        _ => Value::Object(merged),
    }
}

/// Set elements paired with the prior element that agrees on everything
/// the configuration decides (the provider's computed attributes left out
/// of the comparison).
fn by_match(
    prior: &Value,
    config: &Value,
    merge: Merge<'_>,
    key: &dyn Fn(&Value) -> Value,
) -> Value {
    let Value::Set(ty, items) = config.unmarked() else {
        return config.clone();
    };
    let mut unused: Vec<&Value> = prior
        .unmarked()
        .elements()
        .unwrap_or_default()
        .iter()
        .collect();
    let merged = items
        .iter()
        .map(|c| {
            let want = key(c);
            let found = unused.iter().position(|p| key(p).raw_equal(&want));
            let p = found.map(|i| unused.remove(i).clone());
            merge(p.as_ref().unwrap_or(&Value::null()), c)
        })
        .collect();
    Value::new_set(ty.clone(), merged)
}

/// An element with its computed attributes nulled, for matching.
fn compare_value(v: &Value, attrs: &[Attribute], computed: &dyn Fn(&Attribute) -> bool) -> Value {
    let mut e = entries(v);
    for a in attrs.iter().filter(|a| computed(a)) {
        e.insert(a.name.clone(), Value::null());
    }
    Value::Object(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tfplugin6::schema::NestedBlock;
    use strata_value::types::Type;

    fn attr(name: &str, required: bool, optional: bool, computed: bool) -> Attribute {
        Attribute {
            name: name.into(),
            r#type: b"\"string\"".to_vec(),
            required,
            optional,
            computed,
            ..Attribute::default()
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

    fn s(x: &str) -> Value {
        Value::string(x)
    }

    fn null() -> Value {
        Value::Null(Type::String)
    }

    #[test]
    fn computed_values_come_from_the_prior_object() {
        let block = Block {
            attributes: vec![
                attr("name", true, false, false),
                attr("id", false, false, true),
                attr("zone", false, true, true),
            ],
            ..Block::default()
        };
        let prior = obj(&[("name", s("a")), ("id", s("i-1")), ("zone", s("z-1"))]);
        // zone left out: the provider's choice stays; set: the config's.
        let config = obj(&[("name", s("b")), ("id", null()), ("zone", null())]);
        let got = proposed_new(&block, &prior, &config);
        assert!(got.raw_equal(&obj(&[
            ("name", s("b")),
            ("id", s("i-1")),
            ("zone", s("z-1"))
        ])));
        let config = obj(&[("name", s("b")), ("id", null()), ("zone", s("z-2"))]);
        let got = proposed_new(&block, &prior, &config);
        assert_eq!(got.entries().unwrap()["zone"].as_str(), Some("z-2"));
        // A new object: computed attributes stay null for the provider.
        let got = proposed_new(&block, &Value::null(), &config);
        assert!(got.entries().unwrap()["id"].is_null());
    }

    #[test]
    fn nested_block_elements_meet_their_prior_elements() {
        let inner = Block {
            attributes: vec![
                attr("port", true, false, false),
                attr("rule_id", false, false, true),
            ],
            ..Block::default()
        };
        let rule_ty = Type::object(
            [
                ("port".to_string(), Type::String),
                ("rule_id".to_string(), Type::String),
            ]
            .into(),
        );
        for nesting in [
            nested_block::NestingMode::List,
            nested_block::NestingMode::Set,
        ] {
            let block = Block {
                block_types: vec![NestedBlock {
                    type_name: "rule".into(),
                    block: Some(inner.clone()),
                    nesting: nesting as i32,
                    ..NestedBlock::default()
                }],
                ..Block::default()
            };
            let elems = |vs: Vec<Value>| match nesting {
                nested_block::NestingMode::Set => Value::new_set(rule_ty.clone(), vs),
                _ => Value::List(rule_ty.clone(), vs),
            };
            let prior = obj(&[(
                "rule",
                elems(vec![
                    obj(&[("port", s("80")), ("rule_id", s("r-80"))]),
                    obj(&[("port", s("443")), ("rule_id", s("r-443"))]),
                ]),
            )]);
            let config = obj(&[(
                "rule",
                elems(vec![
                    obj(&[("port", s("80")), ("rule_id", null())]),
                    obj(&[("port", s("443")), ("rule_id", null())]),
                    obj(&[("port", s("22")), ("rule_id", null())]),
                ]),
            )]);
            let got = proposed_new(&block, &prior, &config);
            let rules = got.entries().unwrap()["rule"].elements().unwrap().to_vec();
            let ids: Vec<Option<&str>> = rules
                .iter()
                .map(|r| r.entries().unwrap()["rule_id"].as_str())
                .collect();
            let mut ids: Vec<_> = ids.into_iter().flatten().collect();
            ids.sort();
            assert_eq!(ids, ["r-443", "r-80"], "{nesting:?}");
            assert_eq!(rules.len(), 3);
        }
    }
}
