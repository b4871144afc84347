//! Configuration written from objects, for `plan -generate-config-out`: an
//! imported object's arguments as a `resource` block, laid out as
//! Terraform writes generated configuration (its arguments in name order,
//! the `=` aligned, what the driver alone sets left out, nested blocks
//! after the arguments).

use crate::funcs::{hcl_expr, hcl_lines, Templates};
use crate::lang::value::Value;
use strata_provider::{AttributeSchema, BlockNesting, ResourceSchema};

/// The file's opening comment.
pub const HEADER: &str = "# __generated__ by strata\n# Please review these resources and move them into your main configuration files.\n";

/// One imported object's block: `resource "TYPE" "NAME" { … }` after the
/// comment naming the id it came from (none for an import by identity,
/// as Terraform writes it).
pub fn resource_block(
    type_name: &str,
    name: &str,
    id: Option<&str>,
    object: &Value,
    schema: &ResourceSchema,
) -> String {
    let mut out = match id {
        Some(id) => format!("{OPENING}{}\n", quoted(id)),
        None => format!("{}\n", OPENING.trim_end_matches(" from ")),
    };
    out.push_str(&format!(
        "resource {} {} {{\n",
        quoted(type_name),
        quoted(name)
    ));
    body(object, schema, 1, &mut out);
    out.push_str("}\n");
    out
}

/// The block of an object a `list` found (`query -generate-config-out`),
/// naming the provider it came through first, as Terraform writes it.
pub fn listed_resource(
    type_name: &str,
    name: &str,
    provider: &str,
    object: &Value,
    schema: &ResourceSchema,
) -> String {
    let mut out = format!("resource {} {} {{\n", quoted(type_name), quoted(name));
    let lead = vec![("provider".to_string(), provider.to_string())];
    body_after(lead, object, schema, 1, &mut out);
    out.push_str("}\n");
    out
}

/// The `import` block that adopts an object a `list` found, by its
/// identity, as Terraform writes it.
pub fn identity_import(to: &str, provider: &str, identity: &serde_json::Value) -> String {
    let value = crate::funcs::json_value(identity).unwrap_or_else(|_| Value::null());
    let lines = vec![
        ("to".to_string(), to.to_string()),
        ("provider".to_string(), provider.to_string()),
        (
            "identity".to_string(),
            hcl_expr(&value, 1, Templates::Escaped),
        ),
    ];
    format!("import {{\n{}}}\n", hcl_lines(&lines, 1))
}

/// A block written by [`resource_block`], its comment naming no id.
pub fn without_id(block: &str) -> String {
    let Some(rest) = block.strip_prefix(OPENING).and_then(|r| r.split_once('\n')) else {
        return block.to_string();
    };
    format!("{}\n{}", OPENING.trim_end_matches(" from "), rest.1)
}

/// What each block's comment opens with, before the id it came from.
const OPENING: &str = "\n# __generated__ by strata from ";

/// The arguments and blocks of `object` by `schema`, `depth` levels in,
/// as Terraform 1.11 writes them: what only the provider sets, what it
/// deprecates and the legacy SDK's `id` left out; an optional `""` as
/// null (the legacy SDK's way of saying unset); a JSON document in a
/// string as `jsonencode(…)` of its value.
fn body(object: &Value, schema: &ResourceSchema, depth: usize, out: &mut String) {
    body_after(Vec::new(), object, schema, depth, out)
}

/// [`body`], its arguments after `lead` (aligned with them).
fn body_after(
    lead: Vec<(String, String)>,
    object: &Value,
    schema: &ResourceSchema,
    depth: usize,
    out: &mut String,
) {
    let pad = "  ".repeat(depth);
    let field = |name: &str| match object.unmarked() {
        Value::Object(m) => m.get(name).cloned().unwrap_or_else(Value::null),
        _ => Value::null(),
    };
    let mut lines = lead;
    lines.extend(
        schema
            .attributes
            .iter()
            .filter(|(name, a)| written(name, a, depth))
            .map(|(name, a)| (name.clone(), argument(&field(name), a, depth))),
    );
    out.push_str(&hcl_lines(&lines, depth));
    for (name, block) in schema.blocks.iter().filter(|(_, b)| !b.deprecated) {
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

/// Whether an attribute is written: one the configuration may set, not
/// deprecated, and not the `id` the legacy SDK adds to every resource
/// (optional and computed at the top; written, it fails validation where
/// the real schema has none).
fn written(name: &str, a: &AttributeSchema, depth: usize) -> bool {
    let legacy_id = depth == 1 && name == "id" && a.optional && a.computed;
    (a.required || a.optional) && !a.deprecated && !legacy_id
}

/// An argument's value as written.
fn argument(value: &Value, a: &AttributeSchema, depth: usize) -> String {
    // A secret is not written into a file someone commits; Terraform
    // marks the place, set or not.
    if a.sensitive || matches!(value, Value::Sensitive(_)) {
        return "null # sensitive".to_string();
    }
    match value.unmarked() {
        Value::String(s) if s.is_empty() && a.optional => "null".to_string(),
        Value::String(s) => match json_document(s) {
            Some(doc) => format!("jsonencode({})", hcl_expr(&doc, depth, Templates::Escaped)),
            None => hcl_expr(value, depth, Templates::Escaped),
        },
        _ => hcl_expr(value, depth, Templates::Escaped),
    }
}

/// The value of a string that holds a JSON object or array (a policy);
/// a lone number or string in JSON stays the string it is.
fn json_document(s: &str) -> Option<Value> {
    let json: serde_json::Value = serde_json::from_str(s).ok()?;
    if !(json.is_object() || json.is_array()) {
        return None;
    }
    crate::funcs::json_value(&json).ok()
}

/// A string as generated configuration writes it: quoted, `${` doubled.
fn quoted(s: &str) -> String {
    hcl_expr(&Value::String(s.to_string()), 0, Templates::Escaped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::types::Type;
    use strata_provider::BlockSchema;

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
                deprecated: false,
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
        let text = resource_block("x_thing", "web", Some("i-1"), &object, &schema);
        // What the provider may choose and has not is written null, as
        // Terraform 1.11 writes it.
        assert_eq!(
            text,
            "\n# __generated__ by strata from \"i-1\"\nresource \"x_thing\" \"web\" {\n  api_key  = null # sensitive\n  cidrs    = [\"10.0.0.0/8\"]\n  name     = \"web $${x}\"\n  password = null # sensitive\n  tags = {\n    \"cost center\" = \"7\"\n    team          = \"gpu\"\n  }\n  zone = null\n  rule {\n    port = 443\n  }\n}\n"
        );
        assert_eq!(
            without_id(&text).lines().nth(1),
            Some("# __generated__ by strata")
        );
    }

    /// What Terraform leaves out of or rewrites in generated configuration
    /// from a legacy-SDK provider (the AWS provider): the `id` the SDK adds,
    /// deprecated arguments and blocks, an optional `""` (the SDK's null);
    /// a JSON document in a string is written as `jsonencode` of its value.
    #[test]
    fn legacy_sdk_objects_are_written_as_terraform_writes_them() {
        let deprecated = |a: AttributeSchema| AttributeSchema {
            deprecated: true,
            ..a
        };
        let mut schema = ResourceSchema::of_attributes(vec![
            (
                "id",
                AttributeSchema::optional(Type::String, "").and_computed(),
            ),
            ("name", AttributeSchema::required(Type::String, "")),
            ("prefix", AttributeSchema::optional(Type::String, "")),
            (
                "acl",
                deprecated(AttributeSchema::optional(Type::String, "")),
            ),
            ("policy", AttributeSchema::optional(Type::String, "")),
            ("note", AttributeSchema::optional(Type::String, "")),
        ]);
        schema.blocks.insert(
            "website".into(),
            BlockSchema {
                nesting: BlockNesting::List,
                min_items: 0,
                max_items: None,
                schema: ResourceSchema::of_attributes(Vec::new()),
                computed: false,
                deprecated: true,
            },
        );
        let s = |t: &str| Value::String(t.into());
        let object = Value::Object(
            [
                ("id", s("b-1")),
                ("name", s("b-1")),
                ("prefix", s("")),
                ("acl", s("private")),
                ("policy", s(r#"{"Version":"2012-10-17","Statement":[]}"#)),
                ("note", s("42")),
                (
                    "website",
                    Value::List(
                        Type::Dynamic,
                        vec![Value::Object(Default::default())].into(),
                    ),
                ),
            ]
            .into(),
        );
        let text = resource_block("x_bucket", "b", Some("b-1"), &object, &schema);
        assert_eq!(
            text,
            "\n# __generated__ by strata from \"b-1\"\nresource \"x_bucket\" \"b\" {\n  name = \"b-1\"\n  note = \"42\"\n  policy = jsonencode({\n    Statement = []\n    Version   = \"2012-10-17\"\n  })\n  prefix = null\n}\n"
        );
    }
}
