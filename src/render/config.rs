//! Configuration written from objects, for `plan -generate-config-out`: an
//! imported object's arguments as a `resource` block, laid out as
//! Terraform writes generated configuration (its arguments in name order,
//! the `=` aligned, what the driver alone sets left out, nested blocks
//! after the arguments).

use crate::funcs::{hcl_expr, hcl_lines, Templates};
use crate::lang::value::Value;
use strata_provider::{BlockNesting, ResourceSchema};

/// The file's opening comment.
pub const HEADER: &str = "# __generated__ by strata\n# Please review these resources and move them into your main configuration files.\n";

/// One imported object's block: `resource "TYPE" "NAME" { … }` after the
/// comment naming the id it came from.
pub fn resource_block(
    type_name: &str,
    name: &str,
    id: &str,
    object: &Value,
    schema: &ResourceSchema,
) -> String {
    let mut out = format!("\n# __generated__ by strata from {}\n", quoted(id));
    out.push_str(&format!(
        "resource {} {} {{\n",
        quoted(type_name),
        quoted(name)
    ));
    body(object, schema, 1, &mut out);
    out.push_str("}\n");
    out
}

/// The arguments and blocks of `object` by `schema`, `depth` levels in.
fn body(object: &Value, schema: &ResourceSchema, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let field = |name: &str| match object.unmarked() {
        Value::Object(m) => m.get(name).cloned().unwrap_or_else(Value::null),
        _ => Value::null(),
    };
    let written: Vec<(&String, bool)> = schema
        .attributes
        .iter()
        .filter(|(_, a)| a.required || a.optional)
        // What the provider chose and the object lacks is not written,
        // as Terraform leaves it out.
        .filter(|(name, a)| !(a.computed && field(name).is_null()))
        .map(|(name, a)| (name, a.sensitive))
        .collect();
    let lines: Vec<(String, String)> = written
        .into_iter()
        .map(|(name, sensitive)| {
            let value = field(name);
            let shown = match sensitive {
                // A secret is not written into a file someone commits;
                // Terraform marks the place, set or not.
                true => "null # sensitive".to_string(),
                false => hcl_expr(&value, depth, Templates::Escaped),
            };
            (name.clone(), shown)
        })
        .collect();
    out.push_str(&hcl_lines(&lines, depth));
    for (name, block) in &schema.blocks {
        let value = field(name);
        // Each block with its header: the type, and a label when nested
        // as a map.
        let items: Vec<(String, Value)> = match (block.nesting, &value) {
            (_, v) if v.is_null() => Vec::new(),
            (BlockNesting::Single, v) => vec![(name.clone(), v.clone())],
            (BlockNesting::Map, Value::Map(_, m) | Value::Object(m)) => m
                .iter()
                .map(|(k, v)| (format!("{name} {}", quoted(k)), v.clone()))
                .collect(),
            (_, Value::List(_, xs) | Value::Set(_, xs) | Value::Tuple(xs)) => {
                xs.iter().map(|x| (name.clone(), x.clone())).collect()
            }
            _ => Vec::new(),
        };
        for (header, item) in items {
            out.push_str(&format!("{pad}{header} {{\n"));
            body(&item, &block.schema, depth + 1, out);
            out.push_str(&format!("{pad}}}\n"));
        }
    }
}

/// A string as generated configuration writes it: quoted, `${` doubled.
fn quoted(s: &str) -> String {
    hcl_expr(&Value::String(s.to_string()), 0, Templates::Escaped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::types::Type;
    use strata_provider::{AttributeSchema, BlockSchema};

    #[test]
    fn an_object_is_written_as_the_arguments_a_user_sets() {
        let mut schema = ResourceSchema::of_attributes(vec![
            ("name", AttributeSchema::required(Type::String, "")),
            (
                "tags",
                AttributeSchema::optional(Type::map(Type::String), ""),
            ),
            (
                "cidrs",
                AttributeSchema::optional(Type::list(Type::String), ""),
            ),
            (
                "password",
                AttributeSchema::optional(Type::String, "").sensitive(),
            ),
            ("arn", AttributeSchema::computed(Type::String, "")),
            (
                "api_key",
                AttributeSchema::optional(Type::String, "").sensitive(),
            ),
            (
                "zone",
                AttributeSchema::optional(Type::String, "").and_computed(),
            ),
        ]);
        let inner = ResourceSchema::of_attributes(vec![(
            "port",
            AttributeSchema::optional(Type::Number, ""),
        )]);
        schema.blocks.insert(
            "rule".into(),
            BlockSchema {
                nesting: BlockNesting::List,
                min_items: 0,
                max_items: None,
                schema: inner,
                computed: false,
            },
        );
        let s = |t: &str| Value::String(t.into());
        let object = Value::Object(
            [
                ("name", s("web ${x}")),
                (
                    "tags",
                    Value::Map(
                        Type::String,
                        [("team", s("gpu")), ("cost center", s("7"))].into(),
                    ),
                ),
                (
                    "cidrs",
                    Value::List(Type::String, vec![s("10.0.0.0/8")].into()),
                ),
                ("password", s("hunter2")),
                ("arn", s("arn:x")),
                (
                    "rule",
                    Value::List(
                        Type::Dynamic,
                        vec![Value::Object(
                            [(
                                "port",
                                Value::Number(crate::lang::number::Number::from_i64(443)),
                            )]
                            .into(),
                        )]
                        .into(),
                    ),
                ),
            ]
            .into(),
        );
        let text = resource_block("x_thing", "web", "i-1", &object, &schema);
        assert_eq!(
            text,
            "\n# __generated__ by strata from \"i-1\"\nresource \"x_thing\" \"web\" {\n  api_key  = null # sensitive\n  cidrs    = [\"10.0.0.0/8\"]\n  name     = \"web $${x}\"\n  password = null # sensitive\n  tags = {\n    \"cost center\" = \"7\"\n    team          = \"gpu\"\n  }\n  rule {\n    port = 443\n  }\n}\n"
        );
    }
}
