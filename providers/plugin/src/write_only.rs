//! A provider may not hand back a value for a write-only attribute: such
//! values come from the configuration (often an ephemeral one, a
//! password) and must never reach a plan or the state. Terraform refuses
//! a plan, an object or a read that holds one, and so does strata.

use strata_provider::{path_text, DriverError, PathStep, Problem, ResourceSchema};
use strata_value::value::Value;

/// When the provider answered, for the words of the refusal.
#[derive(Clone, Copy)]
pub enum Moment {
    Planning,
    Apply,
    Refresh,
    Import,
}

impl Moment {
    fn summary(self) -> &'static str {
        match self {
            Moment::Planning => "Provider produced invalid plan",
            Moment::Import => "Import returned a non-null value for a write-only attribute",
            Moment::Apply | Moment::Refresh => "Provider produced invalid object",
        }
    }

    fn when(self) -> &'static str {
        match self {
            Moment::Planning => "during planning",
            Moment::Apply => "after apply",
            Moment::Refresh => "during refresh",
            Moment::Import => "during import",
        }
    }
}

/// An error naming the first write-only attribute `v` holds a value for,
/// in Terraform's words (`provider`: the provider's address).
pub fn refuse_values(
    schema: &ResourceSchema,
    v: &Value,
    (provider, moment): (&str, Moment),
    operation: &str,
) -> Result<(), DriverError> {
    let Some(path) = first_set(schema, v) else {
        return Ok(());
    };
    let detail = format!(
        "Provider {provider:?} returned a value for the write-only attribute \"{}\" {}. Write-only attributes cannot be read back from the provider. This is a bug in the provider, which should be reported in the provider's own issue tracker.",
        path_text(&path),
        moment.when()
    );
    Err(DriverError::Provider {
        operation: operation.to_string(),
        problems: vec![Problem {
            error: true,
            summary: moment.summary().into(),
            detail,
            path,
        }],
    })
}

/// `v` with every write-only attribute null: what may be kept of an object
/// a provider wrongly answered with values in them.
pub fn without_values(schema: &ResourceSchema, v: &Value) -> Value {
    let Some(attrs) = v.unmarked().entries() else {
        return v.clone();
    };
    let mut out = attrs.clone();
    for (name, a) in schema.attributes.iter().filter(|(_, a)| a.write_only) {
        out.insert(name.clone(), Value::Null(a.ty.clone()));
    }
    for (name, block) in &schema.blocks {
        let Some(x) = attrs.get(name) else { continue };
        let inner = |x: &Value| without_values(&block.schema, x);
        let cleaned = match x.unmarked() {
            Value::List(t, xs) => Value::List(t.clone(), xs.iter().map(inner).collect()),
            Value::Set(t, xs) => Value::new_set(t.clone(), xs.iter().map(inner).collect()),
            Value::Tuple(xs) => Value::Tuple(xs.iter().map(inner).collect()),
            Value::Map(t, m) => Value::Map(
                t.clone(),
                m.iter().map(|(k, x)| (k.clone(), inner(x))).collect(),
            ),
            Value::Object(m) if block.nesting == strata_provider::BlockNesting::Map => {
                Value::Object(m.iter().map(|(k, x)| (k.clone(), inner(x))).collect())
            }
            single => inner(single),
        };
        out.insert(name.clone(), cleaned);
    }
    Value::Object(out)
}

/// The path to the first write-only attribute of `schema` that `v`, an
/// object of it, sets (through its nested blocks).
fn first_set(schema: &ResourceSchema, v: &Value) -> Option<Vec<PathStep>> {
    let attrs = v.unmarked().entries()?;
    for (name, a) in &schema.attributes {
        if a.write_only && attrs.get(name).is_some_and(|x| !x.unmarked().is_null()) {
            return Some(vec![PathStep::Attribute(name.clone())]);
        }
    }
    for (name, block) in &schema.blocks {
        let Some(blocks) = attrs.get(name).map(Value::unmarked) else {
            continue;
        };
        let inner: Vec<(Option<PathStep>, &Value)> = match blocks {
            Value::List(..) | Value::Set(..) | Value::Tuple(_) => (0..)
                .zip(blocks.elements().unwrap_or_default())
                .map(|(i, x)| (Some(PathStep::Index(i)), x))
                .collect(),
            Value::Map(..) => blocks
                .entries()
                .into_iter()
                .flatten()
                .map(|(k, x)| (Some(PathStep::Key(k.clone())), x))
                .collect(),
            // One block, or blocks keyed by label as an object.
            Value::Object(m) if block.nesting == strata_provider::BlockNesting::Map => m
                .iter()
                .map(|(k, x)| (Some(PathStep::Key(k.clone())), x))
                .collect(),
            single => vec![(None, single)],
        };
        for (step, x) in inner {
            if let Some(rest) = first_set(&block.schema, x) {
                let mut path = vec![PathStep::Attribute(name.clone())];
                path.extend(step);
                path.extend(rest);
                return Some(path);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_provider::{AttributeSchema, BlockNesting, BlockSchema};
    use strata_value::types::Type;

    fn schema() -> ResourceSchema {
        let token = AttributeSchema {
            write_only: true,
            ..AttributeSchema::optional(Type::String, "")
        };
        let mut s = ResourceSchema::of_attributes(vec![
            ("name", AttributeSchema::required(Type::String, "")),
            ("token_wo", token.clone()),
        ]);
        s.blocks.insert(
            "step".into(),
            BlockSchema {
                nesting: BlockNesting::List,
                min_items: 0,
                max_items: None,
                schema: ResourceSchema::of_attributes(vec![("secret_wo", token)]),
                computed: false,
                deprecated: false,
            },
        );
        s
    }

    fn object(token: Value, step_secret: Value) -> Value {
        let step = Value::Object(
            [("secret_wo".to_string(), step_secret)]
                .into_iter()
                .collect(),
        );
        let step_ty = step.ty();
        Value::Object(
            [
                ("name".to_string(), Value::string("a")),
                ("token_wo".to_string(), token),
                ("step".to_string(), Value::List(step_ty, vec![step])),
            ]
            .into_iter()
            .collect(),
        )
    }

    #[test]
    fn write_only_values_are_refused_where_they_are() {
        let null = || Value::Null(Type::String);
        let ok = object(null(), null());
        let at = ("registry.strata.test/strata/stratatest", Moment::Apply);
        assert!(refuse_values(&schema(), &ok, at, "applying").is_ok());
        for (v, want) in [
            (
                object(Value::string("s"), null()),
                vec![PathStep::Attribute("token_wo".into())],
            ),
            (
                object(null(), Value::Unknown(Type::String)),
                vec![
                    PathStep::Attribute("step".into()),
                    PathStep::Index(0),
                    PathStep::Attribute("secret_wo".into()),
                ],
            ),
        ] {
            match refuse_values(&schema(), &v, at, "applying") {
                Err(DriverError::Provider { problems, .. }) => {
                    assert_eq!(problems[0].path, want);
                    assert_eq!(problems[0].summary, "Provider produced invalid object");
                }
                other => panic!("not refused: {other:?}"),
            }
            let kept = without_values(&schema(), &v);
            assert!(refuse_values(&schema(), &kept, at, "applying").is_ok());
            assert!(kept.raw_equal(&ok), "{kept:?}");
        }
    }
}
