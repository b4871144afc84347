//! The `aws_iam_policy_document` data source: IAM policy JSON from HCL
//! blocks, byte for byte as the Terraform AWS provider writes it (Go's
//! two-space indent and HTML escaping, one-element lists as strings, other
//! lists in reverse order, principals and conditions grouped), so a policy
//! compared with Terraform's is the same text.

use crate::data::DataKind;
use crate::values::{blocks, string, strings};
use crate::Clients;
use async_trait::async_trait;
use serde_json::{Map, Value as Json};
use strata_provider::{
    AttributeSchema as A, BlockNesting, BlockSchema, DriverError, ResourceSchema,
};
use strata_value::types::Type;
use strata_value::value::Value;

pub struct PolicyDocument;

const TYPE: &str = "aws_iam_policy_document";

fn set_block(attributes: Vec<(&str, A)>) -> BlockSchema {
    crate::values::block(BlockNesting::Set, 0, attributes)
}

fn strings_attr(description: &'static str) -> A {
    A::optional(Type::set(Type::String), description)
}

/// One string, or many in reverse order, as the provider encodes lists.
fn list_json(mut items: Vec<String>) -> Option<Json> {
    match items.len() {
        0 => None,
        1 => items.pop().map(Json::String),
        _ => {
            items.sort();
            items.dedup();
            items.reverse();
            Some(Json::Array(items.into_iter().map(Json::String).collect()))
        }
    }
}

/// `principals` blocks as IAM's Principal: grouped by type; the lone
/// `* / *` principal is the string "*".
/// [`list_json`], an empty list kept as `[]` (a principal's identifiers,
/// a condition's values), as the provider keeps it.
fn kept_list_json(items: Vec<String>) -> Json {
    list_json(items).unwrap_or_else(|| Json::Array(Vec::new()))
}

fn principals_json(blocks: &[Value]) -> Option<Json> {
    if blocks.is_empty() {
        return None;
    }
    let mut by: Map<String, Json> = Map::new();
    let mut grouped: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for b in blocks {
        let ty = string(b, "type").unwrap_or_default();
        grouped
            .entry(ty)
            .or_default()
            .extend(strings(b, "identifiers"));
    }
    if grouped.len() == 1
        && grouped
            .get("*")
            .is_some_and(|ids| ids == &["*".to_string()])
    {
        return Some(Json::String("*".into()));
    }
    for (ty, ids) in grouped {
        by.insert(ty, kept_list_json(ids));
    }
    Some(Json::Object(by))
}

fn conditions_json(blocks: &[Value]) -> Option<Json> {
    if blocks.is_empty() {
        return None;
    }
    let mut by: std::collections::BTreeMap<String, Map<String, Json>> = Default::default();
    for b in blocks {
        let (Some(test), Some(var)) = (string(b, "test"), string(b, "variable")) else {
            continue;
        };
        // An empty list stays, as the provider writes it: dropping the
        // condition would widen who the policy lets in.
        by.entry(test)
            .or_default()
            .insert(var, kept_list_json(strings(b, "values")));
    }
    Some(Json::Object(
        by.into_iter().map(|(k, v)| (k, Json::Object(v))).collect(),
    ))
}

fn statement_json(s: &Value) -> Json {
    let mut m = Map::new();
    if let Some(sid) = string(s, "sid").filter(|s| !s.is_empty()) {
        m.insert("Sid".into(), Json::String(sid));
    }
    m.insert(
        "Effect".into(),
        Json::String(string(s, "effect").unwrap_or_else(|| "Allow".into())),
    );
    let fields = [
        ("Action", list_json(strings(s, "actions"))),
        ("NotAction", list_json(strings(s, "not_actions"))),
        ("Resource", list_json(strings(s, "resources"))),
        ("NotResource", list_json(strings(s, "not_resources"))),
        ("Principal", principals_json(&blocks(s, "principals"))),
        (
            "NotPrincipal",
            principals_json(&blocks(s, "not_principals")),
        ),
        ("Condition", conditions_json(&blocks(s, "condition"))),
    ];
    for (k, v) in fields {
        if let Some(v) = v {
            m.insert(k.into(), v);
        }
    }
    Json::Object(m)
}

/// The statements of a JSON policy document (one statement may be written
/// as an object rather than a list).
fn statements_of(doc: &str) -> Result<Vec<Json>, DriverError> {
    let v: Json = serde_json::from_str(doc).map_err(|e| DriverError::InvalidConfig {
        type_name: TYPE.into(),
        detail: format!("a source or override document is not JSON: {e}"),
    })?;
    Ok(match v.get("Statement") {
        Some(Json::Array(a)) => a.clone(),
        Some(one @ Json::Object(_)) => vec![one.clone()],
        _ => Vec::new(),
    })
}

/// Adds `s`, replacing a statement with the same Sid.
fn merge(into: &mut Vec<Json>, s: Json) {
    let sid = s
        .get("Sid")
        .and_then(Json::as_str)
        .filter(|x| !x.is_empty());
    if let Some(sid) = sid {
        if let Some(slot) = into
            .iter_mut()
            .find(|x| x.get("Sid").and_then(Json::as_str) == Some(sid))
        {
            *slot = s;
            return;
        }
    }
    into.push(s);
}

/// Go's encoder escapes `<`, `>` and `&`; they can only occur inside
/// strings, so escaping the text is exact.
fn go_escape(s: String) -> String {
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

pub fn render(config: &Value) -> Result<(String, String), DriverError> {
    let mut statements = Vec::new();
    for doc in strings(config, "source_policy_documents") {
        statements.extend(statements_of(&doc)?);
    }
    for s in blocks(config, "statement") {
        merge(&mut statements, statement_json(&s));
    }
    for doc in strings(config, "override_policy_documents") {
        for s in statements_of(&doc)? {
            merge(&mut statements, s);
        }
    }
    let mut doc = Map::new();
    doc.insert(
        "Version".into(),
        Json::String(string(config, "version").unwrap_or_else(|| "2012-10-17".into())),
    );
    if let Some(id) = string(config, "policy_id") {
        doc.insert("Id".into(), Json::String(id));
    }
    doc.insert("Statement".into(), Json::Array(statements));
    let doc = Json::Object(doc);
    let pretty = serde_json::to_string_pretty(&doc).unwrap_or_default();
    let minified = serde_json::to_string(&doc).unwrap_or_default();
    Ok((go_escape(pretty), go_escape(minified)))
}

#[async_trait]
impl DataKind for PolicyDocument {
    fn schema(&self) -> ResourceSchema {
        let mut statement = crate::values::block(
            BlockNesting::List,
            0,
            vec![
                ("sid", A::optional(Type::String, "The statement's id.")),
                (
                    "effect",
                    A::optional(Type::String, "Allow (default) or Deny."),
                ),
                ("actions", strings_attr("Actions allowed or denied.")),
                ("not_actions", strings_attr("Actions not covered.")),
                ("resources", strings_attr("Resources covered.")),
                ("not_resources", strings_attr("Resources not covered.")),
            ],
        );
        let principal = || {
            set_block(vec![
                (
                    "type",
                    A::required(Type::String, "AWS, Service, Federated or *."),
                ),
                ("identifiers", A::required(Type::set(Type::String), "Who.")),
            ])
        };
        statement
            .schema
            .blocks
            .insert("principals".into(), principal());
        statement
            .schema
            .blocks
            .insert("not_principals".into(), principal());
        statement.schema.blocks.insert(
            "condition".into(),
            set_block(vec![
                ("test", A::required(Type::String, "StringEquals, ...")),
                ("variable", A::required(Type::String, "The context key.")),
                (
                    "values",
                    A::required(Type::list(Type::String), "The values."),
                ),
            ]),
        );
        let mut s = ResourceSchema::of_attributes(vec![
            (
                "version",
                A::optional(Type::String, "2012-10-17 (default)."),
            ),
            ("policy_id", A::optional(Type::String, "The policy's Id.")),
            (
                "source_policy_documents",
                A::optional(Type::list(Type::String), "Documents to start from."),
            ),
            (
                "override_policy_documents",
                A::optional(
                    Type::list(Type::String),
                    "Documents whose statements replace those with the same Sid.",
                ),
            ),
            ("id", A::computed(Type::String, "A hash of the document.")),
            ("json", A::computed(Type::String, "The policy, indented.")),
            (
                "minified_json",
                A::computed(Type::String, "The policy on one line."),
            ),
        ]);
        s.blocks.insert("statement".into(), statement);
        s
    }

    async fn read(&self, _c: &Clients, config: &Value) -> Result<Value, DriverError> {
        let (json, minified) = render(config)?;
        let mut out = config.unmarked().entries().cloned().unwrap_or_default();
        // The provider's id: the CRC-32 of the document.
        out.insert(
            "id".into(),
            Value::string(crc32fast::hash(json.as_bytes()).to_string()),
        );
        out.insert("json".into(), Value::string(json));
        out.insert("minified_json".into(), Value::string(minified));
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::object;

    fn list(items: &[&str]) -> Value {
        Value::List(
            Type::String,
            items.iter().map(|s| Value::string(*s)).collect(),
        )
    }

    #[test]
    fn renders_as_the_terraform_provider_does() {
        let principal = object(vec![
            ("type", Value::string("Service")),
            ("identifiers", list(&["eks.amazonaws.com"])),
        ]);
        let cond = object(vec![
            ("test", Value::string("StringEquals")),
            (
                "variable",
                Value::string("oidc.eks.us-east-1.amazonaws.com/id/X:sub"),
            ),
            ("values", list(&["system:serviceaccount:gpu-operator:<sa>"])),
        ]);
        let statement = object(vec![
            ("sid", Value::string("Assume")),
            ("actions", list(&["sts:AssumeRole", "sts:TagSession"])),
            ("principals", Value::List(Type::Dynamic, vec![principal])),
            ("condition", Value::List(Type::Dynamic, vec![cond])),
        ]);
        let config = object(vec![(
            "statement",
            Value::List(Type::Dynamic, vec![statement]),
        )]);
        let (json, minified) = render(&config).expect("renders");
        assert_eq!(
            json,
            r#"{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Sid": "Assume",
      "Effect": "Allow",
      "Action": [
        "sts:TagSession",
        "sts:AssumeRole"
      ],
      "Principal": {
        "Service": "eks.amazonaws.com"
      },
      "Condition": {
        "StringEquals": {
          "oidc.eks.us-east-1.amazonaws.com/id/X:sub": "system:serviceaccount:gpu-operator:\u003csa\u003e"
        }
      }
    }
  ]
}"#
        );
        assert!(minified.starts_with(r#"{"Version":"2012-10-17","Statement":[{"Sid":"Assume""#));
    }

    /// The AWS provider 5.100.0's answer for the same blocks (read with
    /// Terraform): empty values and identifiers are kept, never dropped.
    #[test]
    fn an_empty_condition_or_principal_list_is_kept() {
        let cond = |test: &str, values: &[&str]| {
            object(vec![
                ("test", Value::string(test)),
                (
                    "variable",
                    Value::string("token.actions.githubusercontent.com:sub"),
                ),
                ("values", list(values)),
            ])
        };
        let principal = object(vec![
            ("type", Value::string("AWS")),
            ("identifiers", list(&[])),
        ]);
        let statement = object(vec![
            ("actions", list(&["sts:AssumeRoleWithWebIdentity"])),
            ("principals", Value::List(Type::Dynamic, vec![principal])),
            (
                "condition",
                Value::List(Type::Dynamic, vec![cond("StringLike", &[])]),
            ),
        ]);
        let config = object(vec![(
            "statement",
            Value::List(Type::Dynamic, vec![statement]),
        )]);
        let (_, minified) = render(&config).expect("renders");
        assert_eq!(
            minified,
            r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sts:AssumeRoleWithWebIdentity","Principal":{"AWS":[]},"Condition":{"StringLike":{"token.actions.githubusercontent.com:sub":[]}}}]}"#
        );
    }

    #[test]
    fn overrides_replace_statements_by_sid() {
        let statement = |sid: &str, action: &str| {
            object(vec![
                ("sid", Value::string(sid)),
                ("actions", list(&[action])),
            ])
        };
        let config = object(vec![
            (
                "statement",
                Value::List(
                    Type::Dynamic,
                    vec![
                        statement("A", "s3:GetObject"),
                        statement("B", "s3:PutObject"),
                    ],
                ),
            ),
            (
                "override_policy_documents",
                list(&[r#"{"Statement":{"Sid":"B","Effect":"Deny","Action":"s3:*"}}"#]),
            ),
        ]);
        let (_, minified) = render(&config).expect("renders");
        assert_eq!(
            minified,
            r#"{"Version":"2012-10-17","Statement":[{"Sid":"A","Effect":"Allow","Action":"s3:GetObject"},{"Sid":"B","Effect":"Deny","Action":"s3:*"}]}"#
        );
    }
}
